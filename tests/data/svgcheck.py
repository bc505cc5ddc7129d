#!/usr/bin/python3
"""Reads an SVG written by sensim with Python's xml.etree (a parser
independent of the writer) and checks it against expectations.

usage: svgcheck.py FILE [--text S]... [--series R:C:P,...] [--bars I:N1,N2,...]
                        [--collinear I:J] [--size WxH]
  --text S         some <text> element reads exactly S (entities decoded)
  --series ...     the plot's <g class="series"> groups, in order, hold R bar
                   rects, C circles and P polylines each
  --bars I:N...    series I's bars are as high as the counts N (in order,
                   zero counts drawing no bar), to 0.05 px, on a common base
  --collinear I:J  every circle of series I lies within 0.6 px of the line
                   through series J's polyline (a fitted line through its
                   points on log-log axes)
  --size WxH       width, height and viewBox
Every circle and bar lies inside the plot frame (the clip path's rect).
Prints what fails and exits 1; 0 when all holds.
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("svgcheck: %s: %s" % (sys.argv[1], msg))
    sys.exit(1)


def main():
    path, args = sys.argv[1], sys.argv[2:]
    root = ET.parse(path).getroot()
    if root.tag != NS + "svg":
        fail("root is %s, not svg" % root.tag)
    texts = ["".join(t.itertext()) for t in root.iter(NS + "text")]
    clip = root.find(NS + "clipPath/" + NS + "rect")
    if clip is None:
        fail("no clip path (plot frame)")
    fx, fy = float(clip.get("x")), float(clip.get("y"))
    fw, fh = float(clip.get("width")), float(clip.get("height"))
    series = [g for g in root.iter(NS + "g") if g.get("class") == "series"]

    def inside(x, y):
        return fx - 0.05 <= x <= fx + fw + 0.05 and fy - 0.05 <= y <= fy + fh + 0.05

    for g in series:
        for c in g.iter(NS + "circle"):
            if not inside(float(c.get("cx")), float(c.get("cy"))):
                fail("circle at %s,%s outside the frame" % (c.get("cx"), c.get("cy")))
        for r in g.iter(NS + "rect"):
            x, y, w, h = (float(r.get(k)) for k in ("x", "y", "width", "height"))
            if not (inside(x, y) and inside(x + w, y + h)) or w <= 0 or h <= 0:
                fail("bar %s,%s %sx%s outside the frame or empty" % (x, y, w, h))
    i = 0
    while i < len(args):
        opt, val = args[i], args[i + 1]
        i += 2
        if opt == "--text":
            if val not in texts:
                fail("no text %r among %r" % (val, texts))
        elif opt == "--size":
            w, h = val.split("x")
            if root.get("width") != w or root.get("height") != h or root.get("viewBox") != "0 0 %s %s" % (w, h):
                fail("size %s x %s, viewBox %s, expected %s" % (root.get("width"), root.get("height"),
                                                               root.get("viewBox"), val))
        elif opt == "--series":
            want = [tuple(int(n) for n in s.split(":")) for s in val.split(",")]
            got = [(len(g.findall(NS + "rect")), len(g.findall(NS + "circle")), len(g.findall(NS + "polyline")))
                   for g in series]
            if got != want:
                fail("series (rects, circles, polylines) %r, expected %r" % (got, want))
        elif opt == "--bars":
            k, counts = val.split(":")
            counts = [int(n) for n in counts.split(",") if int(n) > 0]
            bars = series[int(k)].findall(NS + "rect")
            if len(bars) != len(counts):
                fail("series %s: %d bars for %d counts" % (k, len(bars), len(counts)))
            bases = [float(b.get("y")) + float(b.get("height")) for b in bars]
            heights = [float(b.get("height")) for b in bars]
            unit = heights[0] / counts[0]
            for b, h, n in zip(bases, heights, counts):
                if abs(b - bases[0]) > 0.05 or abs(h - n * unit) > 0.05:
                    fail("series %s: bar of count %d is %.2f px high on %.2f (%.4f px a count)" % (k, n, h, b, unit))
        elif opt == "--collinear":
            a, b = (int(n) for n in val.split(":"))
            line = series[b].find(NS + "polyline")
            pts = [tuple(float(v) for v in p.split(",")) for p in line.get("points").split()]
            (x0, y0), (x1, y1) = pts[0], pts[-1]
            n = ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5
            circles = series[a].findall(NS + "circle")
            if not circles:
                fail("series %d has no circle" % a)
            for c in circles:
                cx, cy = float(c.get("cx")), float(c.get("cy"))
                d = abs((x1 - x0) * (y0 - cy) - (x0 - cx) * (y1 - y0)) / n
                if d > 0.6:
                    fail("circle at %.1f,%.1f is %.2f px off the line" % (cx, cy, d))
        else:
            fail("unknown option " + opt)
    return 0


if __name__ == "__main__":
    sys.exit(main())
