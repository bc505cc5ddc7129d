#!/usr/bin/python3
"""Independent checks of `sensim stitch` through h5py (Debian's /usr/bin/python3).

  stitch_check.py make-rows FULL.h5 DIR N [DEFECT]
      writes a lidar log FULL.h5 with NumPy and splits it by scans into N
      shards DIR/part-I.h5 tagged as sensim shards of kind "rows" (the
      ground truth whole in each); DEFECT: "overlap" (shard 2 starts one scan
      early), "seed" (shard 1 has another seed)
  stitch_check.py compare-rows STITCHED.h5 FULL.h5
  stitch_check.py compare-seeds STITCHED.h5 SINGLE_PATTERN A B GT.h5
      SINGLE_PATTERN has {seed}: the single-process `inject --seed S` logs
  stitch_check.py compare-log STITCHED.h5 FULL.h5
      any log split by rows (render --shard): every dataset and every group's
      attributes (the root's created_by aside) as in FULL.h5, nothing more;
      every dataset virtual but scan_offset, which is real, and empty ones
Each compare checks every dataset bit for bit (bytes and dtype), that the
sensor datasets are virtual, and that t is their dimension scale."""
import sys

import h5py
import numpy as np


def fail(msg):
    sys.stderr.write("stitch_check: " + msg + "\n")
    sys.exit(1)


def same(a, b, what):
    x, y = a[()], b[()]
    if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
        fail("%s differs (%s %s vs %s %s)" % (what, x.dtype, x.shape, y.dtype, y.shape))


def check_scale(ds, what):
    if ds.name.endswith("/t") or ds.ndim == 0:
        return
    grp = ds.parent
    if "t" in grp and grp["t"].shape[0] == ds.shape[0]:
        dims = ds.dims[0]
        if len(dims) != 1 or dims[0].name != grp["t"].name:
            fail("%s: t is not its dimension scale" % what)


def make_rows(full, outdir, n, defect):
    rng = np.random.default_rng(5)
    S = 23
    counts = rng.integers(0, 40, S).astype(np.uint64)
    off = np.concatenate([[0], np.cumsum(counts)]).astype(np.uint64)
    M = int(off[-1])
    t = 0.1 * np.arange(S)
    with h5py.File(full, "w") as f:
        f.attrs["format"] = "sensim-log"
        f.attrs["format_version"] = np.int64(1)
        f.attrs["seed"] = np.int64(3)
        g = f.create_group("ground_truth")
        g["t"] = np.linspace(0, 3, 31)
        g["position"] = rng.normal(size=(31, 3))
        s = f.create_group("sensors/lidar")
        s.attrs["type"] = "lidar"
        s.attrs["model"] = "range_noise: 0.02\n"
        s["t"] = t
        s["points"] = rng.normal(size=(M, 4)).astype(np.float32)
        s["points"].attrs["units"] = "m"
        s["range"] = rng.random(M).astype(np.float32)
        s["channel"] = rng.integers(0, 16, M).astype(np.uint16)
        s["scan_offset"] = off
    bounds = [S * i // n for i in range(n + 1)]
    for i in range(n):
        a, b = bounds[i], bounds[i + 1]
        if defect == "overlap" and i == 2:
            a -= 1
        p0, p1 = int(off[a]), int(off[b])
        with h5py.File(full, "r") as f, h5py.File("%s/part-%d.h5" % (outdir, i), "w") as o:
            for k, v in f.attrs.items():
                o.attrs[k] = v
            if defect == "seed" and i == 1:
                o.attrs["seed"] = np.int64(4)
            o.attrs["shard_kind"] = "rows"
            o.attrs["shard"] = np.array([i, n], np.int64)
            o.attrs["shard_range"] = np.array([a, b], np.int64)
            o.attrs["shard_total"] = np.int64(S)
            o.attrs["shard_shared"] = "/ground_truth"
            f.copy("ground_truth", o)
            s = o.create_group("sensors/lidar")
            for k, v in f["sensors/lidar"].attrs.items():
                s.attrs[k] = v
            src = f["sensors/lidar"]
            s["t"] = src["t"][a:b]
            s["points"] = src["points"][p0:p1]
            s["points"].attrs["units"] = "m"
            s["range"] = src["range"][p0:p1]
            s["channel"] = src["channel"][p0:p1]
            s["scan_offset"] = (off[a:b + 1] - off[a]).astype(np.uint64)


def compare_rows(stitched, full):
    with h5py.File(stitched, "r") as s, h5py.File(full, "r") as f:
        names = []
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        for n in names:
            if n not in s:
                fail("%s: no %s" % (stitched, n))
            same(s[n], f[n], n)
            check_scale(s[n], n)
        if not s["sensors/lidar/points"].is_virtual or s["sensors/lidar/scan_offset"].is_virtual:
            fail("points should be virtual and scan_offset real")
        if s["sensors/lidar/points"].attrs["units"] != "m" or s["sensors/lidar"].attrs["type"] != "lidar":
            fail("attributes not carried over")
        if "shard" in s.attrs or int(s.attrs["seed"]) != 3:
            fail("root attributes wrong: %s" % dict(s.attrs))


def compare_seeds(stitched, pattern, a, b, gt):
    with h5py.File(stitched, "r") as s, h5py.File(gt, "r") as g:
        for n in g["ground_truth"]:
            same(s["ground_truth"][n], g["ground_truth"][n], "ground_truth/" + n)
        if list(s["seeds"]) != sorted(str(k) for k in range(a, b + 1)) and \
                sorted(int(k) for k in s["seeds"]) != list(range(a, b + 1)):
            fail("seed groups %s, expected %d..%d" % (list(s["seeds"]), a, b))
        if list(s.attrs["seeds"]) != [a, b + 1]:
            fail("seeds attribute %s" % s.attrs["seeds"])
        for k in range(a, b + 1):
            with h5py.File(pattern.replace("{seed}", str(k)), "r") as one:
                names = []
                one["sensors"].visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
                if not names:
                    fail("no sensor datasets in the single run")
                for n in names:
                    d = s["seeds/%d/sensors/%s" % (k, n)]
                    if not d.is_virtual:
                        fail("%s is not virtual" % d.name)
                    same(d, one["sensors"][n], "seed %d: %s" % (k, n))
                    check_scale(d, d.name)
                for grp in one["sensors"]:
                    for key, v in one["sensors"][grp].attrs.items():
                        w = s["seeds/%d/sensors/%s" % (k, grp)].attrs[key]
                        if not np.array_equal(np.asarray(v), np.asarray(w)):
                            fail("seed %d: attribute %s of %s differs" % (k, key, grp))
                if int(s["seeds/%d" % k].attrs["seed"]) != k:
                    fail("seed attribute of /seeds/%d" % k)


def compare_log(stitched, full):
    with h5py.File(stitched, "r") as s, h5py.File(full, "r") as f:
        names, groups, mine = [], ["/"], []
        f.visititems(lambda n, o: (names if isinstance(o, h5py.Dataset) else groups).append(n))
        s.visititems(lambda n, o: mine.append(n) if isinstance(o, h5py.Dataset) else None)
        if sorted(mine) != sorted(names):
            fail("%s holds %s, %s holds %s" % (stitched, sorted(mine), full, sorted(names)))
        for n in names:
            same(s[n], f[n], n)
            check_scale(s[n], n)
            virtual = s[n].size > 0 and not n.endswith("/scan_offset")
            if s[n].is_virtual != virtual:
                fail("%s should %sbe virtual" % (n, "" if virtual else "not "))
            if s[n].ndim and f[n].dims[0].keys() != s[n].dims[0].keys():
                fail("%s: dimension scales %s, expected %s" % (n, s[n].dims[0].keys(), f[n].dims[0].keys()))
        for g in groups:
            a = {k: v for k, v in s[g].attrs.items() if k not in ("created_by", "stitched_shards")}
            b = {k: v for k, v in f[g].attrs.items() if k not in ("created_by", "DIMENSION_LIST", "REFERENCE_LIST")}
            a = {k: v for k, v in a.items() if k not in ("DIMENSION_LIST", "REFERENCE_LIST")}
            if sorted(a) != sorted(b):
                fail("%s: attributes %s, expected %s" % (g, sorted(a), sorted(b)))
            for k in a:
                if not np.array_equal(np.asarray(a[k]), np.asarray(b[k])):
                    fail("%s: attribute %s is %r, expected %r" % (g, k, a[k], b[k]))
        if int(s.attrs["stitched_shards"]) < 2:
            fail("stitched_shards %s" % s.attrs["stitched_shards"])


def main(argv):
    if len(argv) >= 4 and argv[1] == "make-rows":
        make_rows(argv[2], argv[3], int(argv[4]), argv[5] if len(argv) > 5 else "")
    elif len(argv) == 4 and argv[1] == "compare-rows":
        compare_rows(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "compare-log":
        compare_log(argv[2], argv[3])
    elif len(argv) == 7 and argv[1] == "compare-seeds":
        compare_seeds(argv[2], argv[3], int(argv[4]), int(argv[5]), argv[6])
    else:
        fail("usage: see the docstring")
    print("stitch_check: ok")


if __name__ == "__main__":
    main(sys.argv)
