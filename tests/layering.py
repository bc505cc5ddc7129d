#!/usr/bin/python3
"""The library's layers depend only downward (docs/DESIGN.md):

    lib  <  io  <  models  <  calib, metrics, render  <  cli

Checked here, for `make check`:
  1. Each library folder includes public headers of its own folder and of
     layers below only: lib/ none of io/, models/, calib/, metrics/,
     render/; models/ none of calib/, metrics/, render/; calib/, metrics/
     and render/ none of each other's. No library file includes from cli/
     (or the umbrella sensim/sensim.h). A private header of another
     folder may be included only from lib/ (the base layer), by every
     layer above it.
  2. No lib/ file names a sensor type defined above it: a
     `sensim_<type>_type` object or a type's name ("imu", "gnss", ...) as
     a string, as the registry of models/ defines them.

A public header include/sensim/X.h belongs to the folder holding X.c (the
lowest one when two do, as for camera.h and lidar.h), else to the folder
named X (metrics.h, render.h), else to lib/ (linalg.h, header-only).
Prints each violation as FILE:LINE: what, and exits 1 if there is any.
"""
import os
import re
import sys

RANK = {"lib": 0, "io": 1, "models": 2, "calib": 3, "metrics": 3, "render": 3}
LIBRARY = list(RANK)

# Files of lib/ allowed to name a sensor type of models/: none since the
# rig registry moved to models/registry.c (issue 12 item 3).
KNOWN_SENSOR_TYPE_EXCEPTIONS = set()


def sources(root, folder):
    d = os.path.join(root, folder)
    if not os.path.isdir(d):
        return []
    return sorted(os.path.join(folder, f) for f in os.listdir(d) if f.endswith((".c", ".h")))


def header_owner(root, name):
    """The layer folder a public header sensim/NAME.h belongs to (None: the umbrella)."""
    if name == "sensim":
        return None
    owners = [f for f in LIBRARY if os.path.exists(os.path.join(root, f, name + ".c"))]
    if owners:
        return min(owners, key=lambda f: RANK[f])
    if name in RANK:
        return name
    return "lib"


def strip_comments(text):
    """Comments blanked out, line breaks kept (so line numbers stay)."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"/\*.*?\*/|//[^\n]*", blank, text, flags=re.S)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = []
    # Sensor types: the objects models/ defines and the names they register.
    type_objs, type_names = set(), set()
    for path in sources(root, "models"):
        text = strip_comments(open(os.path.join(root, path), encoding="utf-8").read())
        for m in re.finditer(r"const\s+sensim_sensor_type\s+(sensim_\w+_type)\s*=\s*\{\s*\"([^\"]+)\"", text):
            type_objs.add(m.group(1))
            type_names.add(m.group(2))
    if not type_objs:
        bad.append("models/: no sensor type found (const sensim_sensor_type sensim_X_type = {\"x\", ...}): "
                   "update tests/layering.py")
    used_exceptions = set()
    for folder in LIBRARY:
        for path in sources(root, folder):
            text = strip_comments(open(os.path.join(root, path), encoding="utf-8").read())
            for no, line in enumerate(text.split("\n"), 1):
                m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
                if m:
                    inc = m.group(1)
                    hm = re.fullmatch(r"sensim/(\w+)\.h", inc)
                    if inc.startswith("cli/") or "../cli/" in inc:
                        bad.append(f"{path}:{no}: includes {inc} from cli/")
                    elif hm:
                        owner = header_owner(root, hm.group(1))
                        if owner is None:
                            bad.append(f"{path}:{no}: includes the umbrella header {inc}")
                        elif owner != folder and RANK[owner] >= RANK[folder]:
                            bad.append(f"{path}:{no}: includes {inc} of {owner}/ (layer {RANK[owner]}), "
                                       f"above or beside {folder}/ (layer {RANK[folder]})")
                    elif "/" in inc and not os.path.normpath(os.path.join(os.path.dirname(path), inc)).startswith(
                            folder + os.sep):
                        # A subfolder of the file's own folder (render/gpu/) is the same layer; of
                        # other folders' private headers only the base layer's may be included
                        # (lib/base_internal.h), from every layer above it.
                        target = os.path.normpath(os.path.join(os.path.dirname(path), inc)).split(os.sep)[0]
                        if not (target == "lib" and RANK[folder] > RANK["lib"]):
                            bad.append(f"{path}:{no}: includes {inc} across folders")
                if folder == "lib":
                    names = set(re.findall(r"\bsensim_\w+_type\b", line)) & type_objs
                    names |= set(re.findall(r'"([a-z0-9_]+)"', line)) & type_names
                    if names and path in KNOWN_SENSOR_TYPE_EXCEPTIONS:
                        used_exceptions.add(path)
                    elif names:
                        bad.append(f"{path}:{no}: names the sensor type(s) {', '.join(sorted(names))} "
                                   f"defined in models/")
    for path in sorted(KNOWN_SENSOR_TYPE_EXCEPTIONS - used_exceptions):
        print(f"layering: note: {path} no longer names a sensor type: drop it from "
              f"KNOWN_SENSOR_TYPE_EXCEPTIONS", file=sys.stderr)
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        print(f"layering: {len(bad)} violation(s) of the layer order (see tests/layering.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
