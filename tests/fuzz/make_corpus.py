"""Seed files for the fuzz corpora that sensim does not write itself:
meshes, point clouds, PNGs of every colour type, a GLB, unit strings."""
import base64, json, struct, sys, zlib, os

C = sys.argv[1]

def w(rel, data):
    with open(os.path.join(C, rel), 'wb') as f:
        f.write(data if isinstance(data, bytes) else data.encode())

for i, u in enumerate(["0.66 deg/sqrt(h)", "1.0e-3 rad/s/sqrt(Hz)", "9.81 m/s^2", "2 mg", "10 deg/h",
                       "0.05 m/s", "300 e-/s", "4 mg/sqrt(Hz)", "1.5 ppm", "25 uT", "-3 dBm",
                       "0.1 deg/s/sqrt(Hz)", "100 Hz", "2.5 m", "1e-4 g/sqrt(Hz)", "45 deg"]):
    w("units/u%02d" % i, u)

w("mesh_obj/quad.obj", "# quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\nf 1/1/1 2 3 4\nf -4 -3 -2\n")
w("mesh_ply/tri.ply", "ply\nformat ascii 1.0\ncomment x\nelement vertex 3\nproperty float x\nproperty float y\n"
  "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n")
w("mesh_ply/btri.ply", b"ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
  b"property float z\nelement face 1\nproperty list uchar uint vertex_indices\nend_header\n" +
  struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0) + struct.pack("<B3I", 3, 0, 1, 2))

# a GLB: one triangle, indexed, in the BIN chunk
pos = struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0)
idx = struct.pack("<3H", 0, 1, 2) + b"\0\0"
gj = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
      "nodes": [{"mesh": 0, "translation": [1, 2, 3]}],
      "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
      "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3"},
                    {"bufferView": 1, "componentType": 5123, "count": 3, "type": "SCALAR"}],
      "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 36},
                      {"buffer": 0, "byteOffset": 36, "byteLength": 6}],
      "buffers": [{"byteLength": 44}]}
js = json.dumps(gj).encode()
js += b" " * (-len(js) % 4)
binc = pos + idx
glb = struct.pack("<I", len(js)) + b"JSON" + js + struct.pack("<I", len(binc)) + b"BIN\0" + binc
w("mesh_glb/tri.glb", b"glTF" + struct.pack("<II", 2, 12 + len(glb)) + glb)
gj["buffers"] = [{"byteLength": 44, "uri": "data:application/octet-stream;base64," + base64.b64encode(binc).decode()}]
w("mesh_gltf/tri.gltf", json.dumps(gj))

pts = [(0.5, -1.25, 2.0, 10.0), (3.0, 4.0, -5.5, 0.0), (1e-3, 7.0, 8.0, 255.0)]
def ply(binary):
    h = "ply\nformat %s 1.0\nelement vertex %d\nproperty float x\nproperty float y\nproperty float z\n" \
        "property float intensity\nend_header\n" % ("binary_little_endian" if binary else "ascii", len(pts))
    body = b"".join(struct.pack("<4f", *p) for p in pts) if binary else \
        "".join("%g %g %g %g\n" % p for p in pts).encode()
    return h.encode() + body
def pcd(binary):
    h = "# .PCD v0.7\nVERSION 0.7\nFIELDS x y z intensity\nSIZE 4 4 4 4\nTYPE F F F F\nCOUNT 1 1 1 1\n" \
        "WIDTH %d\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS %d\nDATA %s\n" % (len(pts), len(pts),
                                                                            "binary" if binary else "ascii")
    body = b"".join(struct.pack("<4f", *p) for p in pts) if binary else \
        "".join("%g %g %g %g\n" % p for p in pts).encode()
    return h.encode() + body
w("cloud/a.ply", ply(0)); w("cloud/b.ply", ply(1)); w("cloud/a.pcd", pcd(0)); w("cloud/b.pcd", pcd(1))
w("cloud/mixed.pcd", "VERSION 0.7\nFIELDS rgb x y z\nSIZE 4 8 8 8\nTYPE U F F F\nCOUNT 1 1 1 1\nWIDTH 2\n"
  "HEIGHT 1\nPOINTS 2\nDATA ascii\n7 1 2 3\n9 4 5 6\n")

def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
def png(wd, ht, depth, ctype, rows, interlace=0, extra=b""):
    raw = b"".join(b"\0" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", wd, ht, depth, ctype, 0, 0, interlace))
            + extra + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
w("png/gray8.png", png(4, 3, 8, 0, [bytes([i * 10 + j for j in range(4)]) for i in range(3)]))
w("png/gray16.png", png(2, 2, 16, 0, [b"\x01\x02\x03\x04", b"\xff\xfe\x00\x01"]))
w("png/rgb8.png", png(2, 2, 8, 2, [bytes(range(6)), bytes(range(6, 12))]))
w("png/gray1.png", png(8, 2, 1, 0, [b"\xa5", b"\x5a"]))
w("png/pal.png", png(2, 1, 8, 3, [b"\x00\x01"], extra=chunk(b"PLTE", b"\xff\0\0\0\xff\0")))
w("png/rgba.png", png(1, 2, 8, 6, [b"\1\2\3\4", b"\5\6\7\x08"]))
w("png/interlaced.png", png(3, 3, 8, 0, [b"\1\2\3", b"\4\5\6", b"\7\x08\x09"], interlace=0))

# HDF5 logs: sensim's own are megabytes (64 KiB chunks, preallocated), too
# big to mutate usefully. Each is copied with h5py into the same layout
# (groups, attributes, dataset names, types and shapes) with contiguous
# datasets cut to their first rows: a few kilobytes.
import glob
import h5py
import numpy as np

def shrink(src, dst, rows):
    with h5py.File(src, "r") as fi, h5py.File(dst, "w", libver=("v110", "v110"), track_order=False) as fo:
        def attrs(a, b):
            for k, v in a.attrs.items():
                if isinstance(v, (bytes, str)):
                    b.attrs.create(k, v if isinstance(v, str) else v.decode(), dtype=h5py.string_dtype())
                else:
                    b.attrs[k] = v
        attrs(fi, fo)
        def visit(name, obj):
            if isinstance(obj, h5py.Group):
                attrs(obj, fo.require_group(name))
            elif isinstance(obj, h5py.Dataset):
                data = obj[:rows] if obj.shape else obj[()]
                d = fo.create_dataset(name, data=data)
                attrs(obj, d)
        fi.visititems(visit)

if len(sys.argv) > 2:
    for f in glob.glob(os.path.join(sys.argv[2], "*.h5")):
        shrink(f, os.path.join(C, "log", os.path.basename(f)), 120)
