#!/usr/bin/python3
"""Fit IMU noise from a static log and plot its Allan deviation.

    python3 fit_imu.py LOG.h5 SENSOR [OUT.png]

Reads /sensors/SENSOR/angular_velocity and specific_force through libsensim,
computes the overlapping Allan deviation of each axis with one-sigma
intervals, fits the five IEEE Std 952 terms (as `sensim fit imu` does) and
prints them with their 95 % intervals and status. With matplotlib installed
(Debian: python3-matplotlib) it also draws the curves to OUT.png.
Make a log to try it with:

    sensim trajectory --shape static --duration 600 --rate 200 -o gt.h5
    sensim inject data/rigs/imu-adis16448.yaml gt.h5 -o imu.h5
    python3 fit_imu.py imu.h5 imu adev.png
"""
import sys

import sensim


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, sensor = argv[1], argv[2]
    log = sensim.Log(path)
    t = log.read("/sensors/%s/t" % sensor)
    rate = (len(t) - 1) / (t[-1] - t[0])
    curves = {}
    for inst, dset in (("gyro", "angular_velocity"), ("accel", "specific_force")):
        if "/sensors/%s/%s" % (sensor, dset) not in log:
            continue
        x = log.read("/sensors/%s/%s" % (sensor, dset))
        curves[inst] = sensim.allan(x, rate=rate)
        for axis, fit in zip("xyz", sensim.fit_imu(x, rate=rate)):
            print("%s %s:" % (inst, axis))
            for key, p in fit.params.items():
                print("  %-17s %.4g  [%.4g, %.4g]  %s" % (key, p.value, p.lo, p.hi, p.status))
            if fit.note:
                print("  note:", fit.note)
    if len(argv) > 3:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib not installed: no plot", file=sys.stderr)
            return 0
        fig, axes = plt.subplots(1, len(curves), figsize=(6 * len(curves), 4.5), squeeze=False)
        for ax, (inst, c) in zip(axes[0], curves.items()):
            for a, name in enumerate("xyz"):
                ax.errorbar(c.tau[a], c.dev[a], yerr=[c.dev[a] - c.lo[a], c.hi[a] - c.dev[a]], label=name,
                            capsize=2)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("tau (s)")
            ax.set_ylabel("OADEV (%s)" % ("rad/s" if inst == "gyro" else "m/s^2"))
            ax.set_title("%s %s" % (sensor, inst))
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
        fig.tight_layout()
        fig.savefig(argv[3], dpi=120)
        print("wrote", argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
