#!/bin/sh
# Every man page given, rendered two ways; any warning fails:
#   mandoc -T lint -W warning (mdoc structure and style),
#   groff -ww -z -mandoc, as PostScript and as a terminal page (what man(1)
#   shows: escapes roff misreads, undefined registers, lines it cannot fill).
set -u
status=0
for f in "$@"; do
    mandoc -T lint -W warning "$f" || status=1
    for dev in ps utf8; do
        out=$(groff -T"$dev" -ww -z -mandoc "$f" 2>&1)
        if [ -n "$out" ]; then
            printf '%s\n' "$out"
            status=1
        fi
    done
done
[ $status -eq 0 ] && echo "lint-man: $# pages clean (mandoc -T lint, groff -ww)"
exit $status
