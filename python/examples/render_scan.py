#!/usr/bin/python3
"""Render one lidar scan of a scene and show it from above.

    python3 render_scan.py SCENE.yaml SENSOR [OUT.png]

Traces scan 0 of the lidar SENSOR of the scene file from the origin, prints
how many returns it has and their range, and, with matplotlib installed
(Debian: python3-matplotlib), draws the points from above coloured by height
to OUT.png (default scan.png). For example, from the checkout:

    python3 python/examples/render_scan.py data/scenes/walls.yaml lidar walls.png
"""
import sys

import numpy as np

import sensim


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    scene = sensim.Scene(argv[1])
    lidar = sensim.RenderLidar.from_scene(argv[1], argv[2])
    scan = lidar.scan(scene, pose=((0, 0, 0), (1, 0, 0, 0)), t_start=0.0)
    xyz = scan["xyzi"][:, :3]
    print("%d returns from %d objects, range %.2f..%.2f m" % (len(xyz), len(np.unique(scan["object"])),
                                                            scan["range"].min(), scan["range"].max()))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot", file=sys.stderr)
        return 0
    out = argv[3] if len(argv) > 3 else "scan.png"
    fig, ax = plt.subplots(figsize=(7, 7))
    sc = ax.scatter(xyz[:, 0], xyz[:, 1], c=xyz[:, 2], s=1, cmap="viridis")
    fig.colorbar(sc, label="z (m)")
    ax.set_aspect("equal")
    ax.set_xlabel("x (m, forward)")
    ax.set_ylabel("y (m, left)")
    ax.set_title("%s: scan 0 of %s" % (argv[2], argv[1]))
    fig.savefig(out, dpi=120)
    print("wrote", out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
