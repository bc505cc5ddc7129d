"""Reference for the realmesh suite, sharing no code with sensim's loader:
for each object of a scene file whose mesh is a glTF binary (.glb), the
triangle count of its file and the object's world bounding box.

    plaza_ref.py SCENE.yaml

The scene is read with PyYAML; each .glb's JSON chunk with struct and json.
Triangles: the index (or vertex) count over 3 of every triangle-list
primitive (mode 4) of every mesh a node of the default scene uses, once per
node. Bounds: the POSITION accessor's min and max (the glTF spec requires
them; integer components as stored, divided by 2^bits - 1 or 2^(bits-1) - 1
when normalized: KHR_mesh_quantization), its 8 corners through the node's
world matrix (TRS or matrix, parents first), then sensim's up: y turn
(x, y, z) -> (z, x, y), the object's scale, yaw and position. The box of
the 8 turned corners bounds the object (loosely, once turned by the yaw).

Prints one line per object, in the file's order (0-based index): the index,
then for a .glb mesh its triangle count, min x y z and max x y z of the
world box, and min x y z and max x y z in the mesh's own frame (after the up:
y turn, before scale and pose); for any other mesh the index alone.
"""

import json
import math
import os
import struct
import sys

import yaml

COMPONENTS = {5120: (8, True), 5121: (8, False), 5122: (16, True), 5123: (16, False), 5125: (32, False)}


def glb_json(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, _version, _length = struct.unpack_from("<III", data, 0)
    assert magic == 0x46546C67, path + ": not a glb"
    clen, ctype = struct.unpack_from("<II", data, 12)
    assert ctype == 0x4E4F534A, path + ": first chunk is not JSON"
    return json.loads(data[20:20 + clen])


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(4)) for j in range(4)] for i in range(4)]


def node_matrix(n):
    if "matrix" in n:
        m = n["matrix"]  # column-major
        return [[m[c * 4 + r] for c in range(4)] for r in range(4)]
    tx, ty, tz = n.get("translation", [0, 0, 0])
    qx, qy, qz, qw = n.get("rotation", [0, 0, 0, 1])
    sx, sy, sz = n.get("scale", [1, 1, 1])
    r = [[1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)],
         [2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)],
         [2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)]]
    s = [sx, sy, sz]
    t = [tx, ty, tz]
    return [[r[i][0] * s[0], r[i][1] * s[1], r[i][2] * s[2], t[i]] for i in range(3)] + [[0, 0, 0, 1]]


def accessor_bound(acc, key):
    v = acc[key]
    if acc.get("normalized") and acc["componentType"] in COMPONENTS:
        bits, signed = COMPONENTS[acc["componentType"]]
        d = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        v = [max(x / d, -1.0) for x in v]
    return v


def glb_summary(path):
    """Triangles and the glTF-frame box (corners through node matrices)."""
    g = glb_json(path)
    scene = g["scenes"][g.get("scene", 0)]
    tris = 0
    lo = [math.inf] * 3
    hi = [-math.inf] * 3
    stack = [(i, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]) for i in scene["nodes"]]
    while stack:
        i, parent = stack.pop()
        n = g["nodes"][i]
        m = matmul(parent, node_matrix(n))
        stack.extend((c, m) for c in n.get("children", []))
        if "mesh" not in n:
            continue
        for p in g["meshes"][n["mesh"]]["primitives"]:
            if p.get("mode", 4) != 4:
                continue
            pos = g["accessors"][p["attributes"]["POSITION"]]
            count = g["accessors"][p["indices"]]["count"] if "indices" in p else pos["count"]
            tris += count // 3
            a, b = accessor_bound(pos, "min"), accessor_bound(pos, "max")
            for cx in (a[0], b[0]):
                for cy in (a[1], b[1]):
                    for cz in (a[2], b[2]):
                        w = [m[r][0] * cx + m[r][1] * cy + m[r][2] * cz + m[r][3] for r in range(3)]
                        lo = [min(lo[k], w[k]) for k in range(3)]
                        hi = [max(hi[k], w[k]) for k in range(3)]
    return tris, lo, hi


def angle(v):
    """A yaw as the scene file writes it: radians, or '<x> deg'."""
    if isinstance(v, str):
        x, unit = v.split()
        assert unit == "deg", v
        return math.radians(float(x))
    return float(v)


def main():
    path = sys.argv[1]
    with open(path) as f:
        doc = yaml.safe_load(f)
    base = os.path.dirname(path)
    meshes = {m["name"]: m for m in doc["meshes"]}
    for k, o in enumerate(doc["objects"]):
        assert "repeat" not in o and "orientation" not in o and "keyframes" not in o, "not handled here"
        mesh = meshes[o["mesh"]]
        f = mesh.get("file", "")
        if not f.endswith(".glb"):
            print(k)
            continue
        assert mesh.get("up") == "y", "only up: y here"
        tris, lo, hi = glb_summary(os.path.join(base, f))
        sc = o.get("scale", 1)
        sc = sc if isinstance(sc, list) else [sc] * 3
        yaw = angle(o.get("yaw", 0))
        p = o.get("position", [0, 0, 0])
        llo = [lo[2], lo[0], lo[1]]  # the mesh's own frame: up: y turn only
        lhi = [hi[2], hi[0], hi[1]]
        wlo = [math.inf] * 3
        whi = [-math.inf] * 3
        for cx in (lo[0], hi[0]):
            for cy in (lo[1], hi[1]):
                for cz in (lo[2], hi[2]):
                    v = [cz * sc[0], cx * sc[1], cy * sc[2]]  # up: y, then the scale
                    w = [math.cos(yaw) * v[0] - math.sin(yaw) * v[1] + p[0],
                         math.sin(yaw) * v[0] + math.cos(yaw) * v[1] + p[1], v[2] + p[2]]
                    wlo = [min(wlo[i], w[i]) for i in range(3)]
                    whi = [max(whi[i], w[i]) for i in range(3)]
        print(k, tris, *("%.9g" % x for x in wlo + whi + llo + lhi))


main()
