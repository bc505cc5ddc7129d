"""cffi build script (API mode) for sensim._sensim, the C half of the Python
interface. Its declarations are read at build time from the library's own
headers (include/sensim/*.h): WANT below names what Python uses, and each
name's declaration comes from the header that declares it, so there is no
second copy to drift. Structs end in `...;` so that only the fields used here
are named and cffi takes the layout from the compiler.

Where the library comes from (first found):
  SENSIM_BUILD=<dir>   a build tree of this checkout (libsensim.a, its include/)
  ../build             the build tree beside this python/ folder
  pkg-config sensim    an installed libsensim
The extension links libsensim.a statically (built with -fPIC), so the installed
module does not depend on where the build tree was."""
import os
import re
import shlex
import subprocess

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# What the extension declares, in an order where each type comes before its
# first use: each name's declaration is read from the headers (include/sensim/
# of the checkout or of the installed library, _header_cdef below).
# A bare struct name declares all its fields; name{a b} only those (cffi
# takes the layout and the rest from the compiler); name{} an opaque one
# whose size the compiler knows. Enums come whole, #define constants as `...`.
WANT = """
sensim_status sensim_strerror sensim_last_error sensim_last_status sensim_error_clear
sensim_rng sensim_rng_make sensim_rng_sensor_id sensim_rng_u32 sensim_rng_normal_fill sensim_rng_uniform_fill
    sensim_rng_normal_icdf_fill sensim_rng_poisson_exact_fill
sensim_ynode
sensim_sensor_type{type} sensim_sensor{name type id rate_hz node} sensim_rig{seed nsensors sensors}
    sensim_inject_opts{seed threads block warn warn_ctx} sensim_rig_load sensim_rig_load_string sensim_rig_free
    sensim_rig_find sensim_rig_inject
sensim_instrument sensim_triax sensim_triax_state{k} sensim_triax_params{} SENSIM_TRIAX_SET_MAX
    sensim_imu_sensor_triax sensim_triax_create sensim_triax_destroy sensim_triax_params_of sensim_triax_reset
    sensim_triax_apply_set
sensim_gnss_params{origin_lla} sensim_gnss sensim_gnss_state{k} sensim_gnss_out sensim_gnss_default_params
    sensim_gnss_create sensim_gnss_destroy sensim_gnss_reset sensim_gnss_apply sensim_gnss_params_from_yaml
sensim_encoder_params{} sensim_encoder sensim_encoder_state{k overruns} sensim_encoder_default_params
    sensim_encoder_create sensim_encoder_destroy sensim_encoder_reset sensim_encoder_apply
    sensim_encoder_params_from_yaml
sensim_odometer_params{} sensim_odometer sensim_odometer_state{k} sensim_odometer_default_params
    sensim_odometer_create sensim_odometer_destroy sensim_odometer_reset sensim_odometer_apply_angle
    sensim_odometer_apply_speed sensim_odometer_params_from_yaml
sensim_pixel_type sensim_camera_params{width height channels} sensim_camera sensim_camera_create
    sensim_camera_destroy sensim_camera_apply sensim_camera_sensor_params
sensim_lens_model sensim_lens{model width height hfov} sensim_camera_params_from_yaml sensim_remap
    sensim_remap_create sensim_lens_remap_from_pinhole sensim_remap_destroy sensim_remap_apply
sensim_lidar_params{} sensim_lidar sensim_lidar_block sensim_lidar_create sensim_lidar_destroy sensim_lidar_apply
    sensim_lidar_sensor_params
sensim_allan_dev sensim_allan_data sensim_allan_grid SENSIM_ALLAN_ALPHA_UNKNOWN
    sensim_allan_point{tau dev lo hi edf m n alpha} sensim_allan_opts{dev data tau0 confidence fixed_alpha alpha}
    sensim_allan_default_opts sensim_allan_dev_parse sensim_allan_grid_parse sensim_allan_taus
    sensim_allan_compute sensim_allan_compute_axes
sensim_imu_term sensim_fit_flag sensim_fit_param sensim_imu_fit sensim_imu_fit_opts{confidence terms}
    sensim_imu_fit_default_opts sensim_imu_term_key sensim_imu_term_symbol sensim_imu_fit_allan
    sensim_gm_fit sensim_gm_fit_allan
sensim_gnss_rw_fit sensim_gnss_fit_rw sensim_gnss_gm_fit sensim_gnss_fit_gm sensim_gnss_outlier_fit
    sensim_gnss_find_outliers sensim_gnss_gmw_fit sensim_gnss_fit_gmw sensim_gnss_hdop_fit sensim_gnss_fit_hdop
sensim_lidar_fit_result sensim_lidar_fit_range sensim_lidar_angular_result sensim_lidar_fit_angular
    sensim_lidar_fit_joint sensim_lidar_fit_planes
sensim_ptc_level sensim_ptc_level_compute sensim_ptc_result sensim_ptc_fit
sensim_judge_mode sensim_judge_mode_parse sensim_judge_options{mode rate_hz} sensim_judge_default_options
    sensim_judge_imu sensim_judge_gnss sensim_judge_output sensim_judge_output_free sensim_judge_run
sensim_wasserstein1 sensim_spectral_flatness sensim_vepd_series sensim_vepd_series_free sensim_vepd_test
    sensim_vepd_score sensim_vepd_read_csv sensim_vepd_read_log sensim_vepd_result sensim_vepd_compare
    sensim_vepd_ci sensim_vepd_bootstrap sensim_vepd_perm sensim_vepd_permutation
sensim_vec3 sensim_quat sensim_pose sensim_pose_fn sensim_pose_track sensim_pose_track_create
    sensim_pose_track_destroy sensim_pose_track_eval
sensim_scene sensim_scene_load sensim_scene_destroy sensim_scene_triangle_count sensim_scene_object_count
    sensim_render_backend sensim_render_backend_parse sensim_render_backend_name sensim_scene_prepare_backend
    sensim_scene_backend
sensim_render_lidar_params{channels columns rate_hz seed sensor backend} sensim_render_lidar_preset
    sensim_render_lidar_default_params sensim_render_lidar sensim_render_lidar_create sensim_render_lidar_destroy
    sensim_render_lidar_max_points sensim_render_lidar_points sensim_render_lidar_points_create
    sensim_render_lidar_points_destroy sensim_render_lidar_scan sensim_render_lidar_points_noise
sensim_render_camera_params{width height hfov samples seed sensor backend} sensim_render_camera_default_params
    sensim_render_camera sensim_render_camera_create sensim_render_camera_destroy sensim_render_camera_render
    sensim_image_to_u8
sensim_render_sensor_type sensim_render_sensor{name type rate_hz mount seed lidar camera}
    sensim_render_sensor_load
sensim_dim sensim_units_parse sensim_units_convert sensim_units_unit sensim_units_from_si sensim_dim_format
sensim_datasheet_fig sensim_datasheet_figure_def sensim_datasheet_figures sensim_datasheet_value
    sensim_datasheet sensim_datasheet_default sensim_datasheet_set sensim_datasheet_load_preset
    sensim_datasheet_resolve sensim_datasheet_model_value sensim_datasheet_model_si sensim_datasheet_write_rig
sensim_log SENSIM_LOG_MAX_RANK sensim_log_open sensim_log_close sensim_log_exists sensim_log_shape
    sensim_log_read_f64
sensim_bag_format sensim_msg_encoding sensim_bag sensim_bag_topic sensim_bag_msg sensim_bag_open
    sensim_bag_close sensim_bag_get_format sensim_bag_ntopics sensim_bag_topic_at sensim_bag_find_topic
    sensim_bag_select sensim_bag_next
sensim_msg_header sensim_msg_imu sensim_msg_navsatfix sensim_msg_decode_imu sensim_msg_decode_navsatfix
"""

# The C library's functions the Python layer calls (not sensim's).
LIBC_CDEF = """
void free(void *p);
FILE *tmpfile(void);
int fclose(FILE *f);
size_t fread(void *ptr, size_t size, size_t n, FILE *f);
long ftell(FILE *f);
void rewind(FILE *f);
"""


def _strip_attributes(s):
    """s without its __attribute__((...)) parts."""
    out, i = [], 0
    while True:
        j = s.find("__attribute__", i)
        if j < 0:
            return "".join(out) + s[i:]
        out.append(s[i:j])
        k, depth = s.index("(", j), 0
        while True:
            depth += {"(": 1, ")": -1}.get(s[k], 0)
            if depth == 0:
                break
            k += 1
        i = k + 1


def _split_top(s, sep):
    """s split at sep outside brackets."""
    parts, cur, depth = [], "", 0
    for ch in s:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + ([cur.strip()] if cur.strip() else [])


def _declarator_name(d):
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", d)  # a function pointer
    return m.group(1) if m else re.search(r"(\w+)\s*(\[[^\]]*\]\s*)*$", d).group(1)


def _uncomment(text):
    """text without comments, its continued lines joined."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text).replace("\\\n", " ")


def _declaring_macros(texts):
    """{name: (parameter, body)} of the one-parameter macros that declare
    (SENSIM_MODEL_DECLARE of sensim/model.h) in the uncommented texts."""
    found = re.findall(r"^\s*#\s*define\s+(\w+_DECLARE)\(\s*(\w+)\s*\)(.*)$", "\n".join(texts), flags=re.M)
    return {name: (param, body) for name, param, body in found}


def _expand(text, macros):
    """text with each use NAME(arg) of macros replaced by the body, the
    parameter replaced by arg and ## pasted."""
    for name, (param, body) in macros.items():
        def use(m, param=param, body=body):
            return re.sub(r"\s*##\s*", "", re.sub(r"\b%s\b" % param, m.group(1), body))
        text = re.sub(r"\b%s\s*\(\s*(\w+)\s*\)" % name, use, text)
    return text


def _header_statements(text, macros):
    """(the #define names, the top-level declarations) of an uncommented
    header: preprocessor lines, attributes and inline functions' bodies left
    out, the declaring macros expanded."""
    defines = re.findall(r"^\s*#\s*define\s+(\w+)(?!\()", text, flags=re.M)
    text = "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("#"))
    text = _expand(text, macros)
    text = re.sub(r'extern\s+"C"\s*\{', " ", _strip_attributes(text))
    stmts, cur, depth = [], "", 0
    for ch in text:
        if ch == "}" and depth == 0:  # the brace that closes extern "C"
            continue
        cur += ch
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if (ch == ";" and depth == 0) or (ch == "}" and depth == 0 and re.match(r"[^{]*\)\s*\{", cur)):
            stmts.append(" ".join(cur.split()))
            cur = ""
    return defines, stmts


def _declared_name(stmt):
    if stmt.startswith("struct "):  # `struct tag { ... };` (keyed "struct tag"), or a forward declaration
        m = re.match(r"struct (\w+) \{", stmt)
        return "struct " + m.group(1) if m else None
    if stmt.startswith("typedef") and "{" not in stmt:
        m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", stmt)  # a function pointer type
        if m:
            return m.group(1)
    elif not stmt.startswith(("typedef", "extern")):
        m = re.search(r"(\w+)\s*\(", stmt.split("{")[0])
        if m:
            return m.group(1)
    m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*;$", stmt)
    return m.group(1) if m else None


def _struct_cdef(stmt, fields):
    """A struct's typedef for cffi: the fields named in `fields` (all when
    None), arrays sized by a macro as [...], and `...;` for the rest."""
    head, body, tail = stmt[:stmt.index("{")], stmt[stmt.index("{") + 1:stmt.rindex("}")], stmt[stmt.rindex("}"):]
    kept = []
    for member in _split_top(body, ";"):
        decls = _split_top(member, ",")
        if "(" in decls[0]:  # a function pointer: `void (*warn)(void *ctx, ...)`
            base = decls[0][:decls[0].index("(")]
        else:
            base = re.match(r"(.*?)\**\s*\w+\s*(\[[^\]]*\]\s*)*$", decls[0]).group(1)
        decls[0] = decls[0][len(base):]
        names = [d for d in decls if fields is None or _declarator_name(d) in fields]
        if names:
            kept.append(base.strip() + " " + ", ".join(re.sub(r"\[\s*[A-Za-z_]\w*\s*\]", "[...]", d) for d in names))
    return head + "{ " + "".join(k + "; " for k in kept) + "...; " + tail


def _header_cdef(include_dir):
    """The cdef of WANT, read from include_dir/sensim/*.h."""
    found, macros = {}, set()
    hdir = os.path.join(include_dir, "sensim")
    texts = []
    for name in sorted(os.listdir(hdir)):
        if name.endswith(".h"):
            with open(os.path.join(hdir, name), encoding="utf-8") as f:
                texts.append(_uncomment(f.read()))
    declaring = _declaring_macros(texts)
    for text in texts:
        defines, stmts = _header_statements(text, declaring)
        macros.update(defines)
        for st in stmts:
            key = _declared_name(st)
            if key and ("{" in st or key not in found):  # a definition wins over a forward declaration
                found[key] = st
    out = []
    for name, fields in re.findall(r"(\w+)(\{[\w ]*\})?", WANT):
        if name in macros and name not in found:
            out.append("#define %s ..." % name)
            continue
        if name not in found:
            raise RuntimeError("sensim: %s: not declared in %s/*.h" % (name, hdir))
        st, fields = found[name], set(fields[1:-1].split()) if fields else None
        tag = re.fullmatch(r"typedef struct (\w+) \w+;", st)
        if tag and "struct " + tag.group(1) in found:  # defined apart from its typedef
            st += " " + _struct_cdef(found["struct " + tag.group(1)], fields)
        elif "{" in st and re.match(r"typedef\s+struct\b", st):
            st = _struct_cdef(st, fields)
        else:  # a parameter `size_t dims[SENSIM_LOG_MAX_RANK]` is a pointer
            st = re.sub(r"\[\s*[A-Za-z_]\w*\s*\]", "[]", st)
        out.append(st)
    return "\n".join(out) + "\n" + LIBC_CDEF



def _pkg(args):
    try:
        out = subprocess.run(["pkg-config"] + args, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    return shlex.split(out)


def _version_from_makefile(build=None):
    """The version the build wrote into sensim.pc, else the Makefile's."""
    try:
        with open(os.path.join(build or "", "sensim.pc")) as f:
            for line in f:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        with open(os.path.join(ROOT, "Makefile")) as f:
            for line in f:
                if line.startswith("VERSION"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


DEPS = ["hdf5", "yaml-0.1", "gsl", "libpng", "libjpeg", "liblz4", "libzstd", "sqlite3", "zlib", "draco", "assimp"]


def _locate():
    """(include_dirs, extra_objects, extra_compile_args, link_args, version)."""
    build = os.environ.get("SENSIM_BUILD") or os.path.join(ROOT, "build")
    static = os.path.join(build, "libsensim.a")
    if os.path.exists(static):
        inc = os.path.join(ROOT, "include")
        if not os.path.isdir(inc):  # a copy of python/ elsewhere: the checkout beside the build
            inc = os.path.join(os.path.dirname(os.path.abspath(build)), "include")
        cflags = _pkg(["--cflags"] + DEPS)
        libs = _pkg(["--libs"] + DEPS)
        link = ["-fopenmp"] + libs + ["-lhdf5_hl", "-lembree3", "-lbz2", "-lmeshoptimizer", "-lstdc++", "-lm", "-lpthread"]
        return [inc], [static], cflags, link, _version_from_makefile(build)
    if _pkg(["--modversion", "sensim"]):
        ver = _pkg(["--modversion", "sensim"])[0]
        return ([], [], _pkg(["--cflags", "sensim"]),
                ["-fopenmp"] + _pkg(["--libs", "--static", "sensim"]), ver)
    raise RuntimeError("sensim: libsensim not found: build it first (make, in the checkout; or set "
                       "SENSIM_BUILD to a build folder holding libsensim.a), or install it (pkg-config sensim)")


INCLUDE_DIRS, EXTRA_OBJECTS, EXTRA_CFLAGS, LINK_ARGS, VERSION = _locate()
HEADER_DIR = INCLUDE_DIRS[0] if INCLUDE_DIRS else (_pkg(["--variable=includedir", "sensim"]) or ["/usr/include"])[0]

ffibuilder = FFI()
ffibuilder.cdef(_header_cdef(HEADER_DIR))
ffibuilder.set_source(
    "sensim._sensim",
    '#include <stdlib.h>\n#include "sensim/sensim.h"\n#include "sensim/rosmsg.h"\n'
    '#define SENSIM_PY_VERSION "%s"\nstatic const char *sensim_py_version(void) { return SENSIM_PY_VERSION; }\n'
    % (VERSION or "unknown"),
    include_dirs=INCLUDE_DIRS,
    extra_objects=EXTRA_OBJECTS,
    extra_compile_args=["-std=c11", "-D_DEFAULT_SOURCE"] + EXTRA_CFLAGS,
    extra_link_args=LINK_ARGS,
)
ffibuilder.cdef("static const char *sensim_py_version(void);")

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
