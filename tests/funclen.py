#!/usr/bin/python3
"""No function of the program (cli/ and its sub-folders) is over 120 lines
(issue 12): option parsing and printing stay in cli/, pipelines live in the
library, so a verb's function reads in one screen or two.

Lengths come from a real C parser, universal-ctags (`ctags --fields=+ne`
gives each function's first and last line), counted from the line holding
the name to the closing brace. Prints each function over the limit as
FILE:LINE: NAME is N lines, and exits 1 if there is any (2 without ctags).

usage: funclen.py [ROOT] [--limit N] [--list]   (--list: every function, longest first)
"""
import os
import subprocess
import sys

LIMIT = 120
FOLDERS = ["cli"]


def sources(root):
    out = []
    for folder in FOLDERS:
        for d, _, files in os.walk(os.path.join(root, folder)):
            out += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".c")]
    return sorted(out)


def functions(root, files):
    """(length, file, line, name) of every function definition."""
    try:
        p = subprocess.run(["ctags", "--languages=C", "--kinds-C=f", "--fields=+ne", "-o", "-"] + files,
                           cwd=root, capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit("funclen.py: ctags not found: install universal-ctags (scripts/setup.sh)")
    if p.returncode != 0:
        sys.exit("funclen.py: ctags failed: " + p.stderr.strip())
    out = []
    for row in p.stdout.splitlines():
        if row.startswith("!_"):
            continue
        cols = row.split("\t")
        fields = dict(c.split(":", 1) for c in cols[3:] if ":" in c)
        if "line" not in fields or "end" not in fields:
            sys.exit("funclen.py: ctags gave no line/end for %s (needs universal-ctags)" % cols[0])
        start, end = int(fields["line"]), int(fields["end"])
        out.append((end - start + 1, cols[1], start, cols[0]))
    return out


def main():
    args = sys.argv[1:]
    limit, listing = LIMIT, "--list" in args
    if "--limit" in args:
        limit = int(args[args.index("--limit") + 1])
        del args[args.index("--limit"):args.index("--limit") + 2]
    args = [a for a in args if a != "--list"]
    root = args[0] if args else "."
    files = sources(root)
    if not files:
        sys.exit("funclen.py: no C file under %s" % ", ".join(os.path.join(root, f) for f in FOLDERS))
    fns = sorted(functions(root, files), reverse=True)
    if not fns:
        sys.exit("funclen.py: ctags found no function in %d files" % len(files))
    if listing:
        for n, f, line, name in fns:
            print("%5d %s:%d %s" % (n, f, line, name))
        return 0
    bad = [x for x in fns if x[0] > limit]
    for n, f, line, name in bad:
        print("%s:%d: %s is %d lines (at most %d in cli/, issue 12)" % (f, line, name, n, limit))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
