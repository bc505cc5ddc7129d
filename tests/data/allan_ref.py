#!/usr/bin/python3
# Independent reference values for tests/test_allan.c: direct textbook double
# loops (NIST SP 1065 eqs. 7-25) with numpy, no shared code with sensim.
import numpy as np
def nbs1000():
    n = 1234567890; y = [n / 2147483647.0]  # n[0] is the first sample
    for _ in range(999):
        n = (16807 * n) % 2147483647; y.append(n / 2147483647.0)
    return np.array(y)
def phase_of(y, tau0=1.0):
    return np.concatenate(([0.0], np.cumsum(y) * tau0))
def adev(x, m, t0=1.0, overlap=False):
    N = len(x); tau = m*t0; step = 1 if overlap else m
    d = [x[i+2*m]-2*x[i+m]+x[i] for i in range(0, N-2*m, step)]
    return np.sqrt(np.sum(np.square(d))/(2*tau*tau*len(d)))
def hdev(x, m, t0=1.0, overlap=False):
    N = len(x); tau = m*t0; step = 1 if overlap else m
    d = [x[i+3*m]-3*x[i+2*m]+3*x[i+m]-x[i] for i in range(0, N-3*m, step)]
    return np.sqrt(np.sum(np.square(d))/(6*tau*tau*len(d)))
def mdev(x, m, t0=1.0):
    N = len(x); tau = m*t0; s = 0.0; c = 0
    for j in range(0, N-3*m+1):
        v = sum(x[i+2*m]-2*x[i+m]+x[i] for i in range(j, j+m)); s += v*v; c += 1
    return np.sqrt(s/(2*m*m*tau*tau*c))
def totdev(x, m, t0=1.0):
    N = len(x); tau = m*t0
    def xs(i):
        if i < 0: return 2*x[0]-x[-i]
        if i >= N: return 2*x[N-1]-x[2*(N-1)-i]
        return x[i]
    s = sum((xs(i-m)-2*x[i]+xs(i+m))**2 for i in range(1, N-1))
    return np.sqrt(s/(2*tau*tau*(N-2)))
if __name__ == "__main__":
    x = phase_of(nbs1000())
    for m in (1, 10, 100):
        print(m, "adev %.7e oadev %.7e mdev %.7e tdev %.7e hdev %.7e ohdev %.7e totdev %.7e" % (
            adev(x, m), adev(x, m, overlap=True), mdev(x, m), m/np.sqrt(3)*mdev(x, m),
            hdev(x, m), hdev(x, m, overlap=True), totdev(x, m)))
