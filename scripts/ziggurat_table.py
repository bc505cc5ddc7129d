#!/usr/bin/python3
"""Writes lib/ziggurat_table.h: the 128-layer ziggurat for N(0,1)
(Marsaglia & Tsang 2000). Run from the repository root."""
import math

N, R, V = 128, 3.442619855899, 9.91256303526217e-3


def f(x):
    return math.exp(-0.5 * x * x)


x = [0.0] * (N + 1)
x[0] = V / f(R)
x[1] = R
for i in range(1, N - 1):
    x[i + 1] = math.sqrt(-2 * math.log(V / x[i] + f(x[i])))
with open("lib/ziggurat_table.h", "w") as fh:
    fh.write("/* Ziggurat layer edges for the standard normal, 128 layers\n"
             " * (Marsaglia & Tsang 2000, r = 3.442619855899, v = 9.91256303526217e-3).\n"
             " * zig_x[0] = v / f(r) is the width of the base strip, zig_x[1] = r,\n"
             " * zig_x[128] = 0; zig_f[i] = exp(-zig_x[i]^2 / 2). Generated once by\n"
             " * scripts/ziggurat_table.py; do not edit. */\n")
    fh.write("static const double zig_x[129] = {\n")
    fh.write(",\n".join("    %.17g" % t for t in x) + "\n};\n")
    fh.write("static const double zig_f[129] = {\n")
    fh.write(",\n".join("    %.17g" % f(t) for t in x) + "\n};\n")
