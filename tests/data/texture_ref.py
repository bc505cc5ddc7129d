#!/usr/bin/python3
"""Textured glTF assets for tests/test_texture.c, written independently of
sensim: the textures by OpenCV (Debian's python3-opencv), the glTF JSON and
GLB container by hand after the glTF 2.0 specification.

    texture_ref.py DIR

writes DIR/quad.gltf (its texture in DIR/quad tex.png, a file with a space
in its name, referenced percent-encoded), DIR/quad.glb (the same scene, its
texture a JPEG in a bufferView of the BIN chunk) and DIR/quadrants.txt, the
texture's four quadrant colours as OpenCV decodes each file (R G B, 0..255,
the mean of the quadrant's inner half), DIR/quad-mr.gltf (quad.gltf whose
textured material also has a metallic-roughness texture, a PNG in a data:
URI, and factors 0.9 and 0.8) and DIR/mr.txt (the two factors, then that
texture's quadrants: green (roughness) and blue (metalness), 0..255).

The scene (Z-up, loaded with `up: z`): primitive 0 is a 4 m square quad in
the plane z = 0 centred at the origin, its corners (2, 2), (2, -2), (-2, -2),
(-2, 2) at texture coordinates (0, 0), (1, 0), (1, 1), (0, 1), with material
0 (the texture; metallic 0, roughness 1); primitive 1 is the square centred
at (6, 0), without texture coordinates, with material 1 (base colour
factor [0.9, 0.6, 0.2], metallic 1, roughness 0.4).
"""
import base64
import json
import os
import struct
import sys

import cv2
import numpy as np

QUADRANTS = [(200, 40, 30), (40, 180, 60), (30, 60, 210), (230, 220, 50)]  # TL, TR, BL, BR (RGB)
# Metallic-roughness texture quadrants (R unused, G roughness, B metalness)
# and the factors they scale.
MR_QUADRANTS = [(77, 255, 0), (77, 140, 255), (77, 200, 128), (77, 115, 30)]
MR_FACTORS = (0.9, 0.8)  # metallicFactor, roughnessFactor


def texture(quadrants=QUADRANTS):
    img = np.zeros((64, 64, 3), np.uint8)
    for k, (r, g, b) in enumerate(quadrants):
        y, x = (k // 2) * 32, (k % 2) * 32
        img[y:y + 32, x:x + 32] = (b, g, r)  # OpenCV is BGR
    return img


def quadrant_means(img):
    out = []
    for k in range(4):
        y, x = (k // 2) * 32, (k % 2) * 32
        q = img[y + 8:y + 24, x + 8:x + 24].reshape(-1, 3).astype(float).mean(axis=0)
        out.append((q[2], q[1], q[0]))
    return out


def scene(images):
    pos = np.array([[2, 2, 0], [2, -2, 0], [-2, -2, 0], [-2, 2, 0],
                    [8, 2, 0], [8, -2, 0], [4, -2, 0], [4, 2, 0]], np.float32)
    uv = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    idx = np.array([0, 1, 2, 0, 2, 3], np.uint16)
    blob = pos[:4].tobytes() + pos[4:].tobytes() + uv.tobytes() + idx.tobytes()
    gltf = {
        "asset": {"version": "2.0", "generator": "sensim tests/data/texture_ref.py"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [
            {"attributes": {"POSITION": 0, "TEXCOORD_0": 2}, "indices": 3, "material": 0},
            {"attributes": {"POSITION": 1}, "indices": 3, "material": 1}]}],
        "materials": [
            {"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}, "metallicFactor": 0.0,
                                      "roughnessFactor": 1.0}},
            {"pbrMetallicRoughness": {"baseColorFactor": [0.9, 0.6, 0.2, 1.0], "metallicFactor": 1.0,
                                      "roughnessFactor": 0.4}}],
        "textures": [{"source": 0, "sampler": 0}],
        "samplers": [{"magFilter": 9729, "minFilter": 9987, "wrapS": 33071, "wrapT": 33071}],
        "images": images,
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3",
             "min": [-2, -2, 0], "max": [2, 2, 0]},
            {"bufferView": 0, "byteOffset": 48, "componentType": 5126, "count": 4, "type": "VEC3",
             "min": [4, -2, 0], "max": [8, 2, 0]},
            {"bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC2"},
            {"bufferView": 2, "componentType": 5123, "count": 6, "type": "SCALAR"}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 96},
            {"buffer": 0, "byteOffset": 96, "byteLength": 32},
            {"buffer": 0, "byteOffset": 128, "byteLength": 12}],
    }
    return gltf, blob


def main():
    d = sys.argv[1]
    img = texture()
    ok, png = cv2.imencode(".png", img)
    ok2, jpg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok and ok2
    png, jpg = png.tobytes(), jpg.tobytes()
    with open(os.path.join(d, "quad tex.png"), "wb") as f:
        f.write(png)
    gltf, blob = scene([{"uri": "quad%20tex.png"}])
    gltf["buffers"] = [{"byteLength": len(blob),
                        "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode()}]
    with open(os.path.join(d, "quad.gltf"), "w") as f:
        json.dump(gltf, f, indent=1)
    # GLB: the JPEG after the geometry in the BIN chunk, 4-byte aligned.
    gltf, blob = scene([{"bufferView": 3, "mimeType": "image/jpeg"}])
    off = (len(blob) + 3) // 4 * 4
    gltf["bufferViews"].append({"buffer": 0, "byteOffset": off, "byteLength": len(jpg)})
    bin_ = blob + b"\0" * (off - len(blob)) + jpg
    bin_ += b"\0" * (-len(bin_) % 4)
    gltf["buffers"] = [{"byteLength": len(bin_)}]
    js = json.dumps(gltf).encode()
    js += b" " * (-len(js) % 4)
    total = 12 + 8 + len(js) + 8 + len(bin_)
    with open(os.path.join(d, "quad.glb"), "wb") as f:
        f.write(struct.pack("<4sII", b"glTF", 2, total))
        f.write(struct.pack("<I4s", len(js), b"JSON") + js)
        f.write(struct.pack("<I4s", len(bin_), b"BIN\0") + bin_)
    # The metallic-roughness variant: a second texture, linear data.
    ok, mr = cv2.imencode(".png", texture(MR_QUADRANTS))
    assert ok
    mr = mr.tobytes()
    gltf, blob = scene([{"uri": "quad%20tex.png"},
                        {"uri": "data:image/png;base64," + base64.b64encode(mr).decode()}])
    gltf["buffers"] = [{"byteLength": len(blob),
                        "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode()}]
    gltf["textures"].append({"source": 1, "sampler": 0})
    m = gltf["materials"][0]["pbrMetallicRoughness"]
    m["metallicRoughnessTexture"] = {"index": 1}
    m["metallicFactor"], m["roughnessFactor"] = MR_FACTORS
    with open(os.path.join(d, "quad-mr.gltf"), "w") as f:
        json.dump(gltf, f, indent=1)
    with open(os.path.join(d, "mr.txt"), "w") as f:
        f.write("%g %g\n" % MR_FACTORS)
        dec = cv2.imdecode(np.frombuffer(mr, np.uint8), cv2.IMREAD_COLOR)
        for r, g, b in quadrant_means(dec):
            f.write("%.6f %.6f\n" % (g, b))
    with open(os.path.join(d, "quadrants.txt"), "w") as f:
        for name, data in (("png", png), ("jpeg", jpg)):
            dec = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
            for r, g, b in quadrant_means(dec):
                f.write("%s %.6f %.6f %.6f\n" % (name, r, g, b))


if __name__ == "__main__":
    main()
