#!/usr/bin/python3
"""OpenCV's own lens numbers for tests/test_lens.c (Debian's python3-opencv).

    lens_ref.py IN OUT

IN: a first line "radtan fx fy cx cy k1 k2 p1 p2 k3 k4 k5 k6" or
"fisheye fx fy cx cy k1 k2 k3 k4", then lines "P X Y Z" (camera-frame
points) and "Q u v" (OpenCV pixels). OUT: for each P the pixel of
cv2.projectPoints / cv2.fisheye.projectPoints ("u v"), then for each Q the
unit direction ("x y z") of cv2.undistortPointsIter / cv2.fisheye.undistortPoints,
iterated until the change is below 1e-15 (at most 1000 steps).
"""
import sys

import cv2
import numpy as np


def main():
    lines = open(sys.argv[1]).read().split("\n")
    head = lines[0].split()
    kind = head[0]
    fx, fy, cx, cy = (float(v) for v in head[1:5])
    dist = np.array([float(v) for v in head[5:]], dtype=np.float64)
    K = np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1]], dtype=np.float64)
    P = np.array([[float(v) for v in ln.split()[1:]] for ln in lines if ln.startswith("P ")], dtype=np.float64)
    Q = np.array([[float(v) for v in ln.split()[1:]] for ln in lines if ln.startswith("Q ")], dtype=np.float64)
    rvec = np.zeros(3)
    tvec = np.zeros(3)
    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 1000, 1e-15)
    if kind == "fisheye":
        uv, _ = cv2.fisheye.projectPoints(P.reshape(-1, 1, 3), rvec, tvec, K, dist)
        xy = cv2.fisheye.undistortPoints(Q.reshape(-1, 1, 2), K, dist, criteria=crit).reshape(-1, 2)
        # cv::fisheye::undistortPoints returns tan(theta) (x, y) / r; below
        # 90 deg that is the point on the plane z = 1.
    else:
        uv, _ = cv2.projectPoints(P.reshape(-1, 1, 3), rvec, tvec, K, dist)
        xy = cv2.undistortPointsIter(Q.reshape(-1, 1, 2), K, dist, None, None, crit).reshape(-1, 2)
    d = np.hstack([xy, np.ones((len(xy), 1))])
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    with open(sys.argv[2], "w") as f:
        for u, v in uv.reshape(-1, 2):
            f.write("%.17g %.17g\n" % (u, v))
        for x, y, z in d:
            f.write("%.17g %.17g %.17g\n" % (x, y, z))


if __name__ == "__main__":
    main()
