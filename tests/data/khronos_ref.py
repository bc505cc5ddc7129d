#!/usr/bin/python3
"""Reference data for the textured-box render tests (tests/test_texture.c),
made independently of sensim: textures decoded by OpenCV (Debian's
python3-opencv) from the glTF's own data: URIs, geometry read from its
buffers with NumPy, glTF variants written by hand after the glTF 2.0 and
KHR_texture_transform specifications, and a Draco-compressed copy by
Debian's draco_transcoder. The box is either the Khronos sample model
BoxTextured (kept beside the repository, in ../shared/data/khronos/) or
one written here from scratch.

    khronos_ref.py synth DIR
    khronos_ref.py box BoxTextured.gltf DIR
    khronos_ref.py texcoord TextureCoordinateTest.gltf DIR

`synth` writes DIR/box.gltf, a unit cube laid out as BoxTextured is (so
the same camera sees the same face the same way up) but of our own making:
its eight-bit texture (256 x 256, 4 x 4 flat cells of 64 texels, sixteen
distinct colours of levels 40, 120 and 200 in an order no symmetry of
the square maps onto itself) made with NumPy and encoded to PNG by OpenCV,
a base64 data: URI as BoxTextured's; face k's texture coordinates span
[k, k+1] x [0, 1] (a REPEAT sampler; the top face, k = 5, has (u, v) =
(5.5 - x, 0.5 - z) at glTF position (x, 0.5, z)); the positions stored in
the frame of a node matrix (a quarter turn about glTF z) that the loader
must apply; material metallic 0, roughness 1. Then it does what `box`
does for DIR/box.gltf, its regions the sixteen cells less 6 texels a side.

`box` writes into DIR:
  regions.txt        one line per texture region: name, the texel box x0 y0
                     x1 y1 (texels x0..x1-1, y0..y1-1; texel i covers
                     [i, i+1) of u * width), the mean and standard deviation
                     of its texels (R G B, sRGB 0..255) and `flat`, the
                     largest deviation from that mean over the box grown by
                     2 texels (what bilinear sampling inside the box reads)
  box-transform.gltf the model with the KHR_texture_transform of the
                     extension's own example (offset [0, 1], rotation pi/2,
                     scale [0.5, 0.5]: "only the lower left quadrant of the
                     source image, rotated clockwise 90 degrees")
  box-texcoord1.gltf the model with a second set TEXCOORD_1 = (v0, u0) (the
                     first transposed) and a transform (offset [0.1, -0.2],
                     rotation 0.4, scale [0.8, 1.3]) whose texCoord 1
                     overrides the textureInfo's 0; the extension required
  box-draco.gltf     the model compressed by draco_transcoder (-qp 16 -qt 16;
                     its texture as box-draco's tex.png)
  edge.txt           the texture's sharpest edge: the largest difference of
                     two neighbouring texels (wrapping round), in levels

`texcoord` writes into DIR:
  classes.pgm        the texture's texels classed (binary PGM, width x
                     height): 0 where the texel and its 5 x 5 neighbourhood
                     are black (0, 0, 0), 255 where they are white, 128
                     elsewhere (edges, text anti-aliasing)
  quads.txt          per textured primitive (meshes 1-4): its mesh name, its
                     material's baseColorFactor (R G B), metallicFactor and
                     roughnessFactor (1 when absent), its positions' x and
                     y range, and the affine map from position (x, y) to
                     TEXCOORD_0, u = a0 x + a1 y + a2, v = b0 x + b1 y + b2,
                     fitted to its four vertices by least squares (and the
                     largest residual); last, the back plane's factors and z
"""
import base64
import json
import math
import os
import struct
import subprocess
import sys

import cv2
import numpy as np

# Flat regions of BoxTextured's 256 x 256 Cesium logo: the grey corners, the
# sky, the hills and the moon.
REGIONS = [
    ("grey_tl", 4, 4, 26, 26),
    ("grey_bl", 4, 230, 26, 252),
    ("grey_br", 230, 230, 252, 252),
    ("sky", 60, 40, 120, 80),
    ("hill", 60, 180, 150, 215),
    ("moon", 161, 66, 173, 78),
]


def data_uri_bytes(uri):
    head, data = uri.split(",", 1)
    assert head.endswith(";base64"), head
    return base64.b64decode(data)


def regions(gltf, boxes, out_dir):
    png = data_uri_bytes(gltf["images"][0]["uri"])
    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1].astype(float)  # RGB
    edge = max(np.abs(img - np.roll(img, 1, axis=a)).max() for a in (0, 1))
    with open(os.path.join(out_dir, "edge.txt"), "w") as f:
        f.write("%g\n" % edge)
    with open(os.path.join(out_dir, "regions.txt"), "w") as f:
        for name, x0, y0, x1, y1 in boxes:
            box = img[y0:y1, x0:x1].reshape(-1, 3)
            grown = img[y0 - 2:y1 + 2, x0 - 2:x1 + 2].reshape(-1, 3)
            m, sd = box.mean(axis=0), box.std(axis=0)
            flat = np.abs(grown - m).max()
            f.write("%s %d %d %d %d %.4f %.4f %.4f %.4f %.4f %.4f %.4f\n"
                    % ((name, x0, y0, x1, y1) + tuple(m) + tuple(sd) + (flat,)))


def with_transform(gltf, tt, required):
    g = json.loads(json.dumps(gltf))
    info = g["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"]
    info["extensions"] = {"KHR_texture_transform": tt}
    g["extensionsUsed"] = ["KHR_texture_transform"]
    if required:
        g["extensionsRequired"] = ["KHR_texture_transform"]
    return g


def with_texcoord1(gltf):
    """TEXCOORD_1 = (v, u) of TEXCOORD_0, appended to the buffer."""
    g = json.loads(json.dumps(gltf))
    buf = bytearray(data_uri_bytes(g["buffers"][0]["uri"]))
    prim = g["meshes"][0]["primitives"][0]
    acc = g["accessors"][prim["attributes"]["TEXCOORD_0"]]
    view = g["bufferViews"][acc["bufferView"]]
    stride = view.get("byteStride", 8)
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    uv = [struct.unpack_from("<2f", buf, start + i * stride) for i in range(acc["count"])]
    while len(buf) % 4:
        buf.append(0)
    off = len(buf)
    for u, v in uv:
        buf += struct.pack("<2f", v, u)
    g["bufferViews"].append({"buffer": 0, "byteOffset": off, "byteLength": 8 * len(uv)})
    g["accessors"].append({"bufferView": len(g["bufferViews"]) - 1, "componentType": 5126,
                           "count": len(uv), "type": "VEC2"})
    prim["attributes"]["TEXCOORD_1"] = len(g["accessors"]) - 1
    g["buffers"][0] = {"byteLength": len(buf),
                       "uri": "data:application/octet-stream;base64," + base64.b64encode(bytes(buf)).decode()}
    return g


def draco(gltf, out_dir):
    """draco_transcoder reads images from files: the texture goes beside a
    separate-file copy, which is compressed into box-draco.gltf."""
    work = os.path.join(out_dir, "draco-src")
    os.makedirs(work, exist_ok=True)
    g = json.loads(json.dumps(gltf))
    with open(os.path.join(work, "tex.png"), "wb") as f:
        f.write(data_uri_bytes(g["images"][0]["uri"]))
    g["images"][0]["uri"] = "tex.png"
    src = os.path.join(work, "box.gltf")
    with open(src, "w") as f:
        json.dump(g, f)
    dst = os.path.join(out_dir, "box-draco.gltf")
    r = subprocess.run(["draco_transcoder", "-qp", "16", "-qt", "16", "-i", src, "-o", dst],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.exit("draco_transcoder failed: %s" % r.stdout.decode(errors="replace"))
    text = open(dst).read()
    assert "KHR_draco_mesh_compression" in text and "TEXCOORD_0" in text


# The synthetic box's texture: 4 x 4 cells of 64 texels.
CELL = 64


def synth_texture():
    """Sixteen distinct colours of levels 40, 120 and 200 (neighbours at
    most 160 levels apart), in a fixed pseudo-random order."""
    levels = np.array([40, 120, 200], np.uint8)
    combos = np.array([(r, g, b) for r in levels for g in levels for b in levels], np.uint8)
    pick = combos[np.random.default_rng(20).permutation(len(combos))[:16]]
    img = np.zeros((4 * CELL, 4 * CELL, 3), np.uint8)
    for k, (r, g, b) in enumerate(pick):
        y, x = (k // 4) * CELL, (k % 4) * CELL
        img[y:y + CELL, x:x + CELL] = (b, g, r)  # OpenCV is BGR
    # No symmetry of the square (flips, quarter turns) maps the cells onto
    # themselves: a texture read the wrong way round shows other colours.
    cells = pick.reshape(4, 4, 3)
    for t in (lambda c: c[::-1], lambda c: c[:, ::-1], lambda c: c.transpose(1, 0, 2),
              lambda c: np.rot90(c, 1), lambda c: np.rot90(c, 2), lambda c: np.rot90(c, 3)):
        assert (np.abs(t(cells).astype(int) - cells).max(axis=2) > 0).any()
    return img


def synth_box():
    """A unit cube, face k's texture coordinates spanning [k, k+1] x [0, 1]."""
    # (normal, t1, t2): the corner at local (a, b) in {0, 1}^2 is
    # 0.5 n + (0.5 - a) t1 + (0.5 - b) t2, at (u, v) = (k + a, b).
    ex, ey, ez = np.eye(3)
    faces = [(ex, ey, ez), (-ex, ez, ey), (ez, ex, ey), (-ez, ey, ex), (-ey, ez, ex), (ey, ex, ez)]
    pos, uv, idx = [], [], []
    for k, (n, t1, t2) in enumerate(faces):
        base = len(pos)
        for a, b in ((0, 0), (1, 0), (1, 1), (0, 1)):
            pos.append(0.5 * n + (0.5 - a) * t1 + (0.5 - b) * t2)
            uv.append((k + a, b))
        tri = [(0, 1, 2), (0, 2, 3)]
        # counter-clockwise seen from outside
        if np.dot(np.cross(pos[base + 1] - pos[base], pos[base + 2] - pos[base]), n) < 0:
            tri = [(0, 2, 1), (0, 3, 2)]
        idx += [base + i for t in tri for i in t]
    # The node turns the stored positions a quarter about z: stored = M^T p.
    M = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]], float)
    stored = np.array(pos) @ M
    assert np.allclose(stored @ M.T, np.array(pos))
    p32, uv32, i16 = stored.astype(np.float32), np.array(uv, np.float32), np.array(idx, np.uint16)
    blob = i16.tobytes() + p32.tobytes() + uv32.tobytes()
    ok, png = cv2.imencode(".png", synth_texture())
    assert ok
    o1, o2 = i16.nbytes, i16.nbytes + p32.nbytes
    return {
        "asset": {"version": "2.0", "generator": "sensim tests/data/khronos_ref.py"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0, "matrix": [float(x) for x in np.block([[M, np.zeros((3, 1))],
                                                                       [np.zeros((1, 3)), 1]]).T.ravel()]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 1, "TEXCOORD_0": 2}, "indices": 0,
                                    "material": 0}]}],
        "materials": [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}, "metallicFactor": 0.0,
                                                "roughnessFactor": 1.0}}],
        "textures": [{"source": 0, "sampler": 0}],
        "samplers": [{"magFilter": 9729, "minFilter": 9986, "wrapS": 10497, "wrapT": 10497}],
        "images": [{"uri": "data:image/png;base64," + base64.b64encode(png.tobytes()).decode()}],
        "accessors": [
            {"bufferView": 0, "componentType": 5123, "count": len(idx), "type": "SCALAR"},
            {"bufferView": 1, "componentType": 5126, "count": len(pos), "type": "VEC3",
             "min": [float(x) for x in p32.min(axis=0)], "max": [float(x) for x in p32.max(axis=0)]},
            {"bufferView": 2, "componentType": 5126, "count": len(uv), "type": "VEC2"}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": o1, "target": 34963},
            {"buffer": 0, "byteOffset": o1, "byteLength": p32.nbytes, "target": 34962},
            {"buffer": 0, "byteOffset": o2, "byteLength": uv32.nbytes, "target": 34962}],
        "buffers": [{"byteLength": len(blob),
                     "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode()}],
    }


SYNTH_REGIONS = [("cell%d" % k, (k % 4) * CELL + 6, (k // 4) * CELL + 6, (k % 4 + 1) * CELL - 6,
                  (k // 4 + 1) * CELL - 6) for k in range(16)]


ACCESSOR_DTYPE = {5123: "<u2", 5126: "<f4"}
NCOMP = {"SCALAR": 1, "VEC2": 2, "VEC3": 3}


def accessor(gltf, buf, i):
    a = gltf["accessors"][i]
    view = gltf["bufferViews"][a["bufferView"]]
    dt = np.dtype(ACCESSOR_DTYPE[a["componentType"]])
    n = NCOMP[a["type"]]
    stride = view.get("byteStride", dt.itemsize * n)
    start = view.get("byteOffset", 0) + a.get("byteOffset", 0)
    return np.array([np.frombuffer(buf, dt, n, start + k * stride) for k in range(a["count"])], float)


def texcoord(gltf, out):
    png = data_uri_bytes(gltf["images"][0]["uri"])
    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    k = np.ones((5, 5), np.uint8)
    dark = cv2.dilate(img.max(axis=2), k) == 0
    bright = cv2.erode(img.min(axis=2), k) == 255
    cls = np.full(dark.shape, 128, np.uint8)
    cls[dark], cls[bright] = 0, 255
    with open(os.path.join(out, "classes.pgm"), "wb") as f:
        f.write(b"P5 %d %d 255\n" % (cls.shape[1], cls.shape[0]) + cls.tobytes())
    buf = data_uri_bytes(gltf["buffers"][0]["uri"])
    with open(os.path.join(out, "quads.txt"), "w") as f:
        for mi in range(1, 5):
            prim = gltf["meshes"][mi]["primitives"][0]
            pos = accessor(gltf, buf, prim["attributes"]["POSITION"])
            uv = accessor(gltf, buf, prim["attributes"]["TEXCOORD_0"])
            A = np.column_stack([pos[:, 0], pos[:, 1], np.ones(len(pos))])
            coef, _, _, _ = np.linalg.lstsq(A, uv, rcond=None)
            resid = np.abs(A @ coef - uv).max()
            pbr = gltf["materials"][prim["material"]]["pbrMetallicRoughness"]
            factor = pbr["baseColorFactor"]
            # glTF 2.0 sec. 5.22: metallicFactor and roughnessFactor default to 1
            mr = (pbr.get("metallicFactor", 1.0), pbr.get("roughnessFactor", 1.0))
            f.write("%s %g %g %g %g %g %.9g %.9g %.9g %.9g %.12g %.12g %.12g %.12g %.12g %.12g %.3g\n"
                    % ((gltf["meshes"][mi]["name"],) + tuple(factor[:3]) + mr
                       + (pos[:, 0].min(), pos[:, 0].max(), pos[:, 1].min(), pos[:, 1].max())
                       + tuple(coef[:, 0]) + tuple(coef[:, 1]) + (resid,)))
        back = gltf["meshes"][0]["primitives"][0]
        bpos = accessor(gltf, buf, back["attributes"]["POSITION"])
        pbr = gltf["materials"][back["material"]]["pbrMetallicRoughness"]
        mr = (pbr.get("metallicFactor", 1.0), pbr.get("roughnessFactor", 1.0))
        f.write("%s %g %g %g %g %g %.9g\n" % ((gltf["meshes"][0]["name"],) + tuple(pbr["baseColorFactor"][:3]) + mr
                                              + (bpos[:, 2].mean(),)))


def main():
    if sys.argv[1] == "synth":
        mode, out = "synth", sys.argv[2]
        gltf, boxes = synth_box(), SYNTH_REGIONS
        with open(os.path.join(out, "box.gltf"), "w") as f:
            json.dump(gltf, f, indent=1)
    else:
        mode, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
        with open(src) as f:
            gltf = json.load(f)
        boxes = REGIONS
    if mode == "texcoord":
        texcoord(gltf, out)
        return
    regions(gltf, boxes, out)
    variants = {
        "box-transform.gltf": with_transform(gltf, {"offset": [0, 1], "rotation": math.pi / 2,
                                                    "scale": [0.5, 0.5]}, False),
        "box-texcoord1.gltf": with_transform(with_texcoord1(gltf), {"offset": [0.1, -0.2], "rotation": 0.4,
                                                                     "scale": [0.8, 1.3], "texCoord": 1}, True),
    }
    for name, g in variants.items():
        with open(os.path.join(out, name), "w") as f:
            json.dump(g, f)
    draco(gltf, out)


if __name__ == "__main__":
    main()
