#!/usr/bin/python3
"""Damages one time dataset of a log the way issue 21 found logs damaged.

usage: mutate_t.py IN.h5 OUT.h5 DATASET MUTATION

Mutations: allnan, onenan, inf, big (1e300), reversed, constant,
duplicated (one stamp repeats the one before), swapped (two neighbours
exchanged), shifted (-1e9 s), scaled (x 1e6), gap (1e7 s from the middle
on), int32 (the same seconds stored as int32).
"""
import shutil
import sys

import h5py
import numpy as np

src, dst, name, how = sys.argv[1:5]
shutil.copyfile(src, dst)
with h5py.File(dst, "r+") as f:
    t = f[name][...].astype(np.float64)
    n = len(t)
    k = n // 2
    if how == "allnan":
        t[:] = np.nan
    elif how == "onenan":
        t[k] = np.nan
    elif how == "inf":
        t[k] = np.inf
    elif how == "big":
        t[k] = 1e300
    elif how == "reversed":
        t = t[::-1].copy()
    elif how == "constant":
        t[:] = t[0]
    elif how == "duplicated":
        t[k] = t[k - 1]
    elif how == "swapped":
        t[k], t[k + 1] = t[k + 1], t[k]
    elif how == "shifted":
        t = t - 1e9
    elif how == "scaled":
        t = t * 1e6
    elif how == "gap":
        t[k:] += 1e7
    elif how != "int32":
        sys.exit("unknown mutation " + how)
    if how == "int32":
        attrs = {a: f[name].attrs[a] for a in ("units",) if a in f[name].attrs}
        del f[name]
        d = f.create_dataset(name, data=t.astype(np.int32))
        for a, v in attrs.items():
            d.attrs[a] = v
    else:
        f[name][...] = t
