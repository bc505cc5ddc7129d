#!/bin/sh
# libsensim.so exports only the project's names: every defined dynamic
# symbol starts with sensim_ (functions, objects) or SENSIM_ (constants),
# and the render module's internal helpers are not among them.
#   tests/exports.sh BUILD/libsensim.so
set -eu
so=${1:-build/libsensim.so}
[ -f "$so" ] || { echo "exports: $so: no such library"; exit 1; }
syms=$(nm -D --defined-only "$so" | awk '{ print $NF }')
n=$(printf '%s\n' "$syms" | wc -l)
[ "$n" -gt 100 ] || { echo "exports: only $n symbols in $so"; exit 1; }
bad=$(printf '%s\n' "$syms" | grep -v -e '^sensim_' -e '^SENSIM_' || true)
[ -z "$bad" ] || { printf 'exports: %s exports names outside sensim_/SENSIM_:\n%s\n' "$so" "$bad"; exit 1; }
for internal in sensim_gltf_load sensim_scene_fill_hit_parts sensim_render_grow sensim_log_report_gt_read; do
    if printf '%s\n' "$syms" | grep -qx "$internal"; then
        echo "exports: $so exports the internal $internal"
        exit 1
    fi
done
echo "exports: $n symbols in $so, all sensim_ or SENSIM_"
