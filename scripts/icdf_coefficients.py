#!/usr/bin/python3
"""Prints the polynomial tables of lib/rng_icdf.c and checks them.

CENTRAL_C: Giles' single-precision erfinv coefficients for w < 5
(M. Giles, "Approximating the erfinv function", GPU Computing Gems Jade
Edition, 2011), times sqrt(2) so that the result is a standard normal.
TAIL_C: refitted here on sqrt(w) - 3 for w in [5, 21.6] (Giles' tail fit
stops at w = 16.6, the float limit of x = 1 - 2p; from a 32-bit word's
integer bits p reaches 2^-33, w = 21.5). LOG_C: log(1 + f)/f on
[sqrt(1/2) - 1, sqrt(2) - 1]. The fits are least squares on Chebyshev
nodes, reweighted towards equal relative error (Lawson). Needs numpy and
scipy (/usr/bin/python3 has them)."""
import numpy as np
from scipy.special import erfinv

GILES_CENTRAL = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                 -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]


def fit_relative(x, y, deg, iters=50):
    """Highest-degree-first coefficients of p with p(x) ~ y in relative error."""
    a = np.vander(x, deg + 1)
    w = np.ones_like(y)
    for _ in range(iters):
        c = np.linalg.lstsq(a * np.sqrt(w)[:, None] / y[:, None], np.sqrt(w), rcond=None)[0]
        e = np.abs(a @ c / y - 1)
        w *= (e / e.max()) ** 0.5 + 1e-3
        w /= w.sum()
    return c


def horner32(c, x):
    q = np.float32(c[0])
    for a in c[1:]:
        q = np.float32(a) + q * x
    return q


def cheb(lo, hi, n=4000):
    return np.cos(np.pi * (np.arange(n) + 0.5) / n) * (hi - lo) / 2 + (hi + lo) / 2


def show(name, c):
    print("%s = {%s}" % (name, ", ".join("%.9gf" % np.float32(v) for v in c)))


lo, hi = np.sqrt(5.0), np.sqrt(21.6)
s = cheb(lo, hi)
x = np.sqrt(1 - np.exp(-s * s))
tail = fit_relative(s - 3, erfinv(x) / x, 8)

f = cheb(np.sqrt(0.5) - 1, np.sqrt(2) - 1)
log = fit_relative(f, np.log1p(f) / f, 7, iters=60)

show("LOG_C", log)
show("CENTRAL_C", np.sqrt(2) * np.array(GILES_CENTRAL))
# The tail fit was rounded to float before the sqrt(2) scaling.
show("TAIL_C", np.sqrt(2) * tail.astype(np.float32).astype(np.float64))

# Checks in single precision on dense grids.
ss = np.linspace(lo, hi, 200001)
xx = np.sqrt(1 - np.exp(-ss * ss))
err = np.abs(horner32(tail.astype(np.float32), (ss - 3).astype(np.float32)) / (erfinv(xx) / xx) - 1)
print("tail relative error %.2g" % err.max())
ff = np.linspace(np.sqrt(0.5) - 1, np.sqrt(2) - 1, 400001).astype(np.float32)
ff = ff[ff != 0]
err = np.abs(horner32(log.astype(np.float32), ff) * ff / np.log1p(ff.astype(np.float64)) - 1)
print("log relative error %.2g" % err.max())
