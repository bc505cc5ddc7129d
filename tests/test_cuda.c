/* The CUDA backend without a GPU (issue 18): the driver absent, a library
 * that is not the driver, and the driver's failures, each a clear message;
 * the host side against a stand-in driver (tests/fakecuda/, which runs the
 * kernels' shared code on the CPU); the PTX that clang-16 built (entries,
 * target, and none of fma, .ftz or .approx: the arithmetic of the twin).
 * On a machine with a GPU the renders of the CUDA and twin backends are
 * compared bit for bit (skipped, saying so, elsewhere). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../render/cuda_loader.h"
#include "../render/gpu/sg_scan.h"
#include "../render/render_internal.h"
#include "sensim/render.h"
#include "sensim/rng.h"
#include "testutil.h"

/* The figures below need a GPU; a stand-in driver is no GPU. */
static int have_gpu(char *why, size_t len)
{
    unsetenv("SENSIM_LIBCUDA");
    unsetenv("FAKECUDA");
    if (sensim_render_cuda_probe(why, len) == SENSIM_OK)
        return 1;
    snprintf(why, len, "%s", sensim_last_error());
    return 0;
}

/* The build directory: the one holding $SENSIM_BIN (malloc'd). */
static char *build_dir(void)
{
    const char *bin = getenv("SENSIM_BIN");
    char *d = strdup(bin && *bin ? bin : "build/sensim");
    char *slash = strrchr(d, '/');
    if (slash)
        *slash = 0;
    else
        strcpy(d, ".");
    return d;
}

/* The stand-in driver of this build (malloc'd). */
static char *fake_driver(void)
{
    char *b = build_dir(), *p = tu_path(b, "tests/libfakecuda.so");
    free(b);
    ck_assert_msg(tu_file_exists(p), "%s missing (the runner's prerequisite)", p);
    return p;
}

/* Runs the probe with SENSIM_LIBCUDA=lib and FAKECUDA=mode (NULL: unset);
 * returns its status, the message or info in out. */
static sensim_status probe_with(const char *lib, const char *mode, char *out, size_t len)
{
    if (lib)
        setenv("SENSIM_LIBCUDA", lib, 1);
    else
        unsetenv("SENSIM_LIBCUDA");
    if (mode)
        setenv("FAKECUDA", mode, 1);
    else
        unsetenv("FAKECUDA");
    out[0] = 0;
    sensim_status st = sensim_render_cuda_probe(out, len);
    if (st)
        snprintf(out, len, "%s", sensim_last_error());
    unsetenv("SENSIM_LIBCUDA");
    unsetenv("FAKECUDA");
    return st;
}

/* A build without clang-16 has no PTX: the stand-in driver then gets as
 * far as the module, and the message says so. Such tests skip, saying so. */
static int skip_without_ptx(const char *test)
{
    char *fake = fake_driver(), msg[1024];
    sensim_status st = probe_with(fake, NULL, msg, sizeof msg);
    free(fake);
    if (st == SENSIM_OK)
        return 0;
    ck_assert_str_eq(msg, "cuda: this build of libsensim has no GPU kernels (PTX for sm_90): clang-16 was absent "
                          "when it was built; install it and run make gpu");
    fprintf(stderr, "SKIP cuda:%s: this build has no PTX (clang-16 absent at build time)\n", test);
    return 1;
}

#define ck_assert_has(text, needle) ck_assert_msg(strstr(text, needle), "'%s' not in '%s'", needle, text)

/* No driver on this machine: the message says what is missing and that no
 * toolkit is needed. Skipped where a driver is installed. */
START_TEST(driver_absent)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        dlclose(h);
        fprintf(stderr, "SKIP cuda:driver_absent: libcuda.so.1 is installed here\n");
        return;
    }
    char msg[1024];
    ck_assert_int_eq(probe_with(NULL, NULL, msg, sizeof msg), SENSIM_EUNSUPPORTED);
    ck_assert_str_eq(msg, "cuda: libcuda.so.1 not found (the NVIDIA driver is needed; no CUDA toolkit)");
}
END_TEST

/* SENSIM_LIBCUDA: a missing file, a file that is no library, a library
 * without the driver's entry points. */
START_TEST(not_a_driver)
{
    char msg[1024];
    ck_assert_int_eq(probe_with("/nonexistent/libcuda.so.1", NULL, msg, sizeof msg), SENSIM_EUNSUPPORTED);
    ck_assert_str_eq(msg, "cuda: /nonexistent/libcuda.so.1 not found (the NVIDIA driver is needed; no CUDA toolkit)");
    char *readme = tu_src("README.md");
    ck_assert_int_eq(probe_with(readme, NULL, msg, sizeof msg), SENSIM_EUNSUPPORTED);
    ck_assert_has(msg, "cuda: cannot load ");
    ck_assert_has(msg, "README.md");
    free(readme);
    /* zlib is a dependency of the library: always there. */
    ck_assert_int_eq(probe_with("libz.so.1", NULL, msg, sizeof msg), SENSIM_EUNSUPPORTED);
    ck_assert_str_eq(msg, "cuda: libz.so.1 has no cuInit: not the NVIDIA driver's libcuda, or one too old");
}
END_TEST

/* The driver's own failures, named with its error names and texts. */
START_TEST(driver_failures)
{
    char *fake = fake_driver(), msg[1024];
    ck_assert_int_eq(probe_with(fake, "nodevice", msg, sizeof msg), SENSIM_EUNSUPPORTED);
    ck_assert_str_eq(msg, "cuda: cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected) (error 100)");
    ck_assert_int_eq(probe_with(fake, "zerodevices", msg, sizeof msg), SENSIM_EUNSUPPORTED);
    ck_assert_str_eq(msg, "cuda: the driver sees no CUDA device");
    ck_assert_int_eq(probe_with(fake, "cc52", msg, sizeof msg), SENSIM_EUNSUPPORTED);
    ck_assert_str_eq(msg, "cuda: fakecuda (CPU stand-in, tests only) is compute capability 5.2; the kernels need "
                          "6.0 or later");
    if (skip_without_ptx("driver_failures (PTX and arithmetic)")) {
        free(fake);
        return;
    }
    ck_assert_int_eq(probe_with(fake, "badptx", msg, sizeof msg), SENSIM_EUNSUPPORTED);
    ck_assert_has(msg, "cuda: cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed) (error 218); "
                       "the driver cannot load the sm_90 PTX: ptxas fatal   : fakecuda refuses this PTX");
    /* A device whose arithmetic differs from the CPU's is refused. */
    ck_assert_int_eq(probe_with(fake, "badarith", msg, sizeof msg), SENSIM_EUNSUPPORTED);
    ck_assert_has(msg, "cuda: fakecuda (CPU stand-in, tests only) does not give the CPU's arithmetic (probe 3 of "
                       "input 256: ");
    free(fake);
}
END_TEST

/* The stand-in driver works: the probe passes, naming the device and the
 * PTX chosen for its compute capability; no device memory is left. */
START_TEST(probe_passes)
{
    if (skip_without_ptx("probe_passes"))
        return;
    char *fake = fake_driver(), msg[1024];
    ck_assert_msg(probe_with(fake, NULL, msg, sizeof msg) == SENSIM_OK, "%s", msg);
    ck_assert_str_eq(msg, "fakecuda (CPU stand-in, tests only), sm_90");
    ck_assert_msg(probe_with(fake, "cc70", msg, sizeof msg) == SENSIM_OK, "%s", msg);
    ck_assert_str_eq(msg, "fakecuda (CPU stand-in, tests only), sm_60");
    free(fake);
}
END_TEST

/* The PTX of this build (when clang-16 made it): clang's NVPTX output for
 * the right target with both entries, and no instruction that would make
 * the device's bits differ from the twin's: no fused multiply-add (fma.rn
 * is what clang emits for a*b+c without -ffp-contract=off), no
 * flush-to-zero, no approximate division, root or transcendental. */
START_TEST(ptx_built)
{
    const char *target[] = {"sm_90", "sm_60"};
    char *b = build_dir();
    for (int a = 0; a < 2; a++) {
        char name[64];
        snprintf(name, sizeof name, "gen/sg_kernels_%s.ptx", target[a]);
        char *path = tu_path(b, name);
        size_t len = 0;
        char *ptx = tu_read_file(path, &len);
        if (!ptx) {
            fprintf(stderr, "SKIP cuda:ptx_built: no %s (clang-16 absent at build time; make gpu)\n", path);
            free(path);
            free(b);
            return;
        }
        char line[64];
        snprintf(line, sizeof line, "\n.target %s\n", target[a]);
        ck_assert_msg(!strncmp(ptx, "//\n// Generated by LLVM NVPTX Back-End", 38), "%s: not clang's PTX", path);
        ck_assert_msg(strstr(ptx, line), "%s: no '.target %s'", path, target[a]);
        ck_assert_msg(strstr(ptx, "\n.address_size 64\n"), "%s: not 64-bit", path);
        ck_assert_msg(strstr(ptx, ".visible .entry sg_trace_kernel("), "%s: no sg_trace_kernel entry", path);
        ck_assert_msg(strstr(ptx, ".visible .entry sg_probe_kernel("), "%s: no sg_probe_kernel entry", path);
        const char *entries[] = {"sg_occluded_kernel",     "sg_scan_trace_kernel",   "sg_scan_count_kernel",
                                 "sg_scan_block_kernel",   "sg_scan_offsets_kernel", "sg_scan_compact_kernel",
                                 "sg_camera_kernel"};
        for (int k = 0; k < 7; k++) {
            char e[96];
            snprintf(e, sizeof e, ".visible .entry %s(", entries[k]);
            ck_assert_msg(strstr(ptx, e), "%s: no %s entry", path, entries[k]);
        }
        ck_assert_msg(strstr(ptx, "mul.rn.f32") && strstr(ptx, "add.rn.f32"), "%s: no rounded mul/add", path);
        const char *banned[] = {"fma.", ".ftz", ".approx", "mad.f32", "mad.rn"};
        for (int k = 0; k < 5; k++)
            ck_assert_msg(!strstr(ptx, banned[k]), "%s: has '%s'", path, banned[k]);
        free(ptx);
        free(path);
    }
    free(b);
}
END_TEST

/* The device's compaction of a scan's hits (render/gpu/sg_scan.h: counts
 * per beam, offsets within blocks of groups, block offsets, copy), run here
 * thread by thread as the stand-in driver runs it, against a plain filter:
 * every hit record, in (beam, sub-ray) order, each beam's count, the
 * total; for 1, 4 and 9 rays a beam, beam counts around the group size and
 * over several blocks, and no, some or every ray hitting. */
START_TEST(scan_compaction)
{
    const sensim_rng r = sensim_rng_make(5, 5, 5);
    const uint32_t nrs[3] = {1, 4, 9};
    const uint64_t nbs[7] = {1, 31, 32, 33, 65, 1000, 20000};
    const double ph[3] = {0.0, 0.3, 1.0};
    uint64_t draw = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 7; b++)
            for (int c = 0; c < 3; c++) {
                const uint32_t nr = nrs[a];
                const uint64_t nb = nbs[b], n = nb * nr, ng = (nb + SG_SCAN_GROUP - 1) / SG_SCAN_GROUP;
                sg_lhit *rec = calloc(n, sizeof *rec), *out = malloc((n + 1) * sizeof *out);
                const uint64_t nk = (ng + SG_SCAN_BLOCK - 1) / SG_SCAN_BLOCK;
                uint16_t *count = malloc(nb * sizeof *count);
                uint32_t *sum = malloc(ng * sizeof *sum), *block = malloc((nk + 1) * sizeof *block);
                for (uint64_t i = 0; i < n; i++) {
                    rec[i].t = (float)i;
                    rec[i].sub = (uint32_t)(i % nr);
                    rec[i].geom = sensim_rng_uniform(&r, draw++) < ph[c] ? (uint32_t)(i % 7) : SG_INVALID;
                }
                for (uint64_t g = 0; g < ng; g++)
                    sg_scan_count(rec, nr, nb, g, count, sum);
                for (uint64_t k = 0; k < nk; k++)
                    sg_scan_block(sum, ng, k, block);
                sg_scan_offsets(block, nk);
                for (uint64_t g = 0; g < ng; g++)
                    sg_scan_compact(rec, nr, nb, g, sum, block, out);
                uint64_t m = 0;
                for (uint64_t bi = 0; bi < nb; bi++) {
                    uint32_t k = 0;
                    for (uint32_t j = 0; j < nr; j++) {
                        const sg_lhit *x = &rec[bi * nr + j];
                        if (x->geom == SG_INVALID)
                            continue;
                        ck_assert_msg(!memcmp(&out[m], x, sizeof *x), "nr %u nb %llu: hit %llu", nr,
                                      (unsigned long long)nb, (unsigned long long)m);
                        m++;
                        k++;
                    }
                    ck_assert_uint_eq(count[bi], k);
                }
                ck_assert_uint_eq(block[nk], m);
                if (c == 0)
                    ck_assert_uint_eq(m, 0);
                if (c == 2)
                    ck_assert_uint_eq(m, n);
                free(rec);
                free(out);
                free(count);
                free(sum);
                free(block);
            }
}
END_TEST

/* ---- the CLI ---- */

/* A 1 s drive at 5 m/s (fig5.yaml's path runs along +x) into dir/gt.h5. */
static char *drive(const char *dir)
{
    char *gt = tu_path(dir, "gt.h5");
    tu_run_result r =
        tu_run("trajectory", "--shape", "line", "--duration", "1", "--speed", "5", "--heading", "90", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    return gt;
}

/* --backend cuda without a usable driver: exit 1, the loader's message as
 * the option's, and no output file. */
static void cli_refuses(const char *lib, const char *expect)
{
    char *dir = tu_mkdtemp(), *gt = drive(dir), *out = tu_path(dir, "out.h5"), *scene = tu_src("data/scenes/fig5.yaml");
    if (lib)
        setenv("SENSIM_LIBCUDA", lib, 1);
    tu_run_result r =
        tu_run("render", scene, "-t", gt, "-s", "hdl32e", "-o", out, "-n", "1", "--backend", "cuda", NULL);
    unsetenv("SENSIM_LIBCUDA");
    ck_assert_msg(r.status == 1, "exit %d: %s", r.status, r.err);
    ck_assert_str_eq(r.err, expect);
    ck_assert(!tu_file_exists(out));
    ck_assert_int_eq(tu_count_entries(dir), 1); /* gt.h5 only */
    tu_run_free(&r);
    tu_rmtree(dir);
    free(dir);
    free(gt);
    free(out);
    free(scene);
}

START_TEST(cli_driver_absent)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        dlclose(h);
        fprintf(stderr, "SKIP cuda:cli_driver_absent: libcuda.so.1 is installed here\n");
    } else
        cli_refuses(NULL, "sensim render: --backend cuda: libcuda.so.1 not found (the NVIDIA driver is needed; no "
                          "CUDA toolkit)\n");
    cli_refuses("/nonexistent/libcuda.so.1", "sensim render: --backend cuda: /nonexistent/libcuda.so.1 not found "
                                             "(the NVIDIA driver is needed; no CUDA toolkit)\n");
    cli_refuses("libz.so.1", "sensim render: --backend cuda: libz.so.1 has no cuInit: not the NVIDIA driver's "
                             "libcuda, or one too old\n");
}
END_TEST

/* Every dataset under /sensors of a and b, byte for byte (h5py). */
static void same_bits(const char *a, const char *b)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import h5py,sys\n"
             "a=h5py.File(sys.argv[1],'r')['sensors']; b=h5py.File(sys.argv[2],'r')['sensors']\n"
             "na=[]; a.visit(na.append); nb=[]; b.visit(nb.append)\n"
             "assert na==nb, (na,nb)\n"
             "bad=[k for k in na if isinstance(a[k],h5py.Dataset) and a[k][()].tobytes()!=b[k][()].tobytes()]\n"
             "assert not bad, bad\n"
             "assert sum(a[k].size for k in na if isinstance(a[k],h5py.Dataset)) > 0\" '%s' '%s'",
             a, b);
    ck_assert_msg(system(cmd) == 0, "%s and %s differ (see above)", a, b);
}

/* Scene files and sensors the CLI renders with --backend cuda and twin:
 * motion distortion, several rays per beam (grid and sunflower), dual
 * returns, a moving car, instances, fog, a rosette, cameras with shadows
 * (FOV, pinhole, radtan and Kannala-Brandt lenses). */
static const struct {
    const char *scene, *sensor;
} renders[] = {{"fig5", "hdl32e_wide"},   {"fig5", "cam"},         {"outdoor", "vlp16"}, {"outdoor", "front"},
               {"forest", "rosette"},     {"forest", "cam"},       {"fog", "vlp16"},     {"vegetation", "beam"},
               {"lenses", "cam_radtan"}, {"lenses", "cam_fisheye"}, {"walls", "lidar"}};

/* Renders each of `renders` (2 scans or frames; the first with a rig's
 * noise too) with --backend cuda through driver lib (NULL: the system's)
 * and with --backend twin: the outputs are bit-identical. */
static void cli_cuda_matches_twin(const char *lib)
{
    char *dir = tu_mkdtemp(), *gt = drive(dir), *rig = tu_path(dir, "rig.yaml");
    char *cu = tu_path(dir, "cuda.h5"), *tw = tu_path(dir, "twin.h5");
    ck_assert_int_eq(tu_write_file(rig, "seed: 7\nsensors:\n  - name: hdl32e_wide\n    type: lidar\n"
                                        "    noise: {range_sigma_base: 0.02, azimuth_sigma: 0.002}\n"
                                        "    dropout: {dropoff_general_rate: 0.1}\n"),
                     0);
    for (size_t i = 0; i < sizeof renders / sizeof renders[0]; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "data/scenes/%s.yaml", renders[i].scene);
        char *scene = tu_src(rel);
        for (int b = 0; b < 2; b++) {
            if (lib && !b)
                setenv("SENSIM_LIBCUDA", lib, 1);
            tu_run_result r = i == 0 ? tu_run("render", scene, "-t", gt, "-s", renders[i].sensor, "-o", b ? tw : cu,
                                              "-n", "2", "--rig", rig, "--backend", b ? "twin" : "cuda", NULL)
                                     : tu_run("render", scene, "-t", gt, "-s", renders[i].sensor, "-o", b ? tw : cu,
                                              "-n", "2", "--backend", b ? "twin" : "cuda", NULL);
            unsetenv("SENSIM_LIBCUDA");
            ck_assert_msg(r.status == 0, "%s %s: %s", rel, renders[i].sensor, r.err);
            if (!b)
                ck_assert_msg(strstr(r.err, "sensim render: --backend cuda: cuda ("), "%s", r.err);
            ck_assert_msg(!strstr(r.err, "fakecuda:"), "%s", r.err); /* device memory all freed */
            tu_run_free(&r);
        }
        same_bits(cu, tw);
        free(scene);
    }
    tu_rmtree(dir);
    free(dir);
    free(gt);
    free(rig);
    free(cu);
    free(tw);
}

/* The host side through the stand-in driver: same bits as the twin. */
START_TEST(fake_cli_matches_twin)
{
    if (skip_without_ptx("fake_cli_matches_twin"))
        return;
    char *fake = fake_driver();
    cli_cuda_matches_twin(fake);
    free(fake);
}
END_TEST

/* auto: the GPU when it works (the stand-in here), else Embree, saying
 * which and why on stderr; the output is that backend's. */
START_TEST(cli_auto)
{
    if (skip_without_ptx("cli_auto"))
        return;
    char *dir = tu_mkdtemp(), *gt = drive(dir), *scene = tu_src("data/scenes/fig5.yaml"), *fake = fake_driver();
    const char *name[4] = {"auto-none.h5", "embree.h5", "auto-fake.h5", "twin.h5"};
    char *out[4];
    for (int i = 0; i < 4; i++)
        out[i] = tu_path(dir, name[i]);
    const char *backend[4] = {"auto", "embree", "auto", "twin"};
    for (int i = 0; i < 4; i++) {
        if (i == 0)
            setenv("SENSIM_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
        if (i == 2)
            setenv("SENSIM_LIBCUDA", fake, 1);
        tu_run_result r =
            tu_run("render", scene, "-t", gt, "-s", "hdl32e", "-o", out[i], "-n", "1", "--backend", backend[i], NULL);
        unsetenv("SENSIM_LIBCUDA");
        ck_assert_msg(r.status == 0, "%s", r.err);
        if (i == 0)
            ck_assert_str_eq(r.err, "sensim render: --backend auto: embree (cuda: /nonexistent/libcuda.so.1 not found "
                                    "(the NVIDIA driver is needed; no CUDA toolkit))\n");
        if (i == 2)
            ck_assert_str_eq(r.err, "sensim render: --backend auto: cuda (fakecuda (CPU stand-in, tests only), "
                                    "sm_90)\n");
        tu_run_free(&r);
    }
    same_bits(out[0], out[1]);
    same_bits(out[2], out[3]);
    /* -q: nothing on stderr. */
    setenv("SENSIM_LIBCUDA", fake, 1);
    tu_run_result r =
        tu_run("render", scene, "-t", gt, "-s", "hdl32e", "-o", out[2], "-n", "1", "--backend", "auto", "-q", NULL);
    unsetenv("SENSIM_LIBCUDA");
    ck_assert_msg(r.status == 0 && !*r.err, "%s", r.err);
    tu_run_free(&r);
    for (int i = 0; i < 4; i++)
        free(out[i]);
    tu_rmtree(dir);
    free(dir);
    free(gt);
    free(scene);
    free(fake);
}
END_TEST

/* A launch that fails, device memory that runs out: exit 1 naming the
 * driver call and error, no output file. */
START_TEST(cli_device_errors)
{
    if (skip_without_ptx("cli_device_errors"))
        return;
    char *dir = tu_mkdtemp(), *gt = drive(dir), *scene = tu_src("data/scenes/fig5.yaml"), *fake = fake_driver();
    char *out = tu_path(dir, "out.h5");
    /* The lidar's and the camera's kernels failing, memory running out. */
    const char *mode[3] = {"launchfail", "launchfail", "oom"}, *sensor[3] = {"hdl32e", "cam", "hdl32e"};
    const char *expect[3] = {"sensim render: cuda: cuLaunchKernel (sg_scan_trace_kernel, ",
                             "sensim render: cuda: cuLaunchKernel (sg_camera_kernel, ",
                             "sensim render: --backend cuda: cuMemAlloc_v2 ("};
    const char *expect2[3] = {" threads): CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure) (error 719)\n",
                              " threads): CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure) (error 719)\n",
                              " bytes on fakecuda (CPU stand-in, tests only)): CUDA_ERROR_OUT_OF_MEMORY (out of "
                              "memory) (error 2)\n"};
    for (int i = 0; i < 3; i++) {
        setenv("SENSIM_LIBCUDA", fake, 1);
        setenv("FAKECUDA", mode[i], 1);
        tu_run_result r =
            tu_run("render", scene, "-t", gt, "-s", sensor[i], "-o", out, "-n", "1", "--backend", "cuda", "-q", NULL);
        unsetenv("SENSIM_LIBCUDA");
        unsetenv("FAKECUDA");
        ck_assert_msg(r.status == 1, "%s: exit %d: %s", mode[i], r.status, r.err);
        ck_assert_msg(strstr(r.err, expect[i]) && strstr(r.err, expect2[i]), "%s: %s", mode[i], r.err);
        ck_assert_msg(!strstr(r.err, "fakecuda:"), "%s", r.err);
        ck_assert(!tu_file_exists(out));
        tu_run_free(&r);
    }
    tu_rmtree(dir);
    free(dir);
    free(gt);
    free(scene);
    free(fake);
    free(out);
}
END_TEST

/* ---- the library, analytic scenes ---- */

typedef struct {
    sensim_vec3 p0, v;
    double yaw0; /* heading at t = 0, rad */
} motion;

static void moving_pose(const void *user, double t, sensim_pose *out)
{
    const motion *m = user;
    out->p = sensim_vec3_add(m->p0, sensim_vec3_scale(m->v, t));
    out->q = sensim_quat_axis_angle(sensim_vec3_make(0, 0, 1), m->yaw0 + 0.3 * t);
}

/* Ground, a sphere, a box whose edge splits beams, an instanced mesh used
 * twice (once scaled) and a moving, turning box (its keyframes far enough
 * apart for slerp proper), in fog: every kind of geometry the twin has. */
static sensim_scene *analytic_scene(void)
{
    sensim_scene *s = sensim_scene_create();
    sensim_material m = sensim_material_default();
    snprintf(m.name, sizeof m.name, "grey");
    m.reflectance = 0.4;
    int mat = sensim_scene_add_material(s, &m);
    int plane = sensim_scene_add_plane(s, "ground", 200, 200, 4, 4), ball = sensim_scene_add_sphere(s, "ball", 1, 48);
    int box = sensim_scene_add_box(s, "box", 2, 2, 2), big = sensim_scene_add_sphere(s, "big", 1.5, 40);
    ck_assert_int_ge(sensim_scene_add_object(s, plane, mat, sensim_pose_identity()), 0);
    sensim_pose p = sensim_pose_identity();
    p.p = sensim_vec3_make(8, 1, 1);
    ck_assert_int_ge(sensim_scene_add_object(s, ball, mat, p), 0);
    p.p = sensim_vec3_make(6, -4, 1);
    ck_assert_int_ge(sensim_scene_add_object(s, box, mat, p), 0);
    for (int i = 0; i < 2; i++) { /* big has >= 1024 triangles: instanced */
        p.p = sensim_vec3_make(-10, 6 * i - 3, 1.5);
        int o = sensim_scene_add_object(s, big, mat, p);
        ck_assert_int_ge(o, 0);
        if (i)
            ck_assert_int_eq(sensim_scene_set_object_scale(s, o, 1.2, 0.8, 1), SENSIM_OK);
    }
    double kt[2] = {0, 1};
    sensim_pose kp[2] = {sensim_pose_identity(), sensim_pose_identity()};
    kp[0].p = sensim_vec3_make(0, 8, 1);
    kp[1].p = sensim_vec3_make(4, 8, 1);
    kp[1].q = sensim_quat_axis_angle(sensim_vec3_make(0, 0, 1), 0.8);
    ck_assert_int_ge(sensim_scene_add_moving_object(s, box, mat, kt, kp, 2, 0), 0);
    ck_assert_int_eq(sensim_scene_set_atmosphere(s, 0.01), SENSIM_OK);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    return s;
}

/* Lidar scans (1, 4 and 9 rays per beam, strongest and dual returns) and a
 * camera frame with shadows, with CUDA through driver lib (NULL: the
 * system's) and with the twin: the same bits. chunk: rays per launch at
 * most (0: the backend's own), so that a scan or frame takes many
 * launches. */
static void lib_cuda_matches_twin(const char *lib, size_t chunk)
{
    if (lib)
        setenv("SENSIM_LIBCUDA", lib, 1);
    sensim_scene *s = analytic_scene();
    sensim_status st = sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_CUDA);
    unsetenv("SENSIM_LIBCUDA");
    ck_assert_msg(st == SENSIM_OK, "%s", sensim_last_error());
    if (chunk)
        s->cuda->chunk = chunk;
    ck_assert_int_eq(sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN), SENSIM_OK);
    motion mo = {{0, 0, 1.8}, {3, 0.5, 0}, 0};
    for (int v = 0; v < 3; v++) {
        sensim_render_lidar_params p = sensim_render_lidar_default_params();
        p.channels = 32;
        p.columns = 720;
        p.vfov_min = -30 * M_PI / 180;
        p.divergence = v ? 4e-3 : 0;
        p.pattern_n = v + 1;
        p.returns = v == 2 ? SENSIM_RETURN_DUAL : SENSIM_RETURN_STRONGEST;
        sensim_render_lidar *l[2];
        sensim_render_lidar_points *pt[2];
        for (int b = 0; b < 2; b++) {
            p.backend = b ? SENSIM_RENDER_BACKEND_TWIN : SENSIM_RENDER_BACKEND_CUDA;
            ck_assert_ptr_nonnull(l[b] = sensim_render_lidar_create(&p));
            ck_assert_ptr_nonnull(pt[b] = sensim_render_lidar_points_create(l[b]));
            ck_assert_msg(sensim_render_lidar_scan(l[b], s, moving_pose, &mo, 0.25, 1, pt[b]) == SENSIM_OK, "%s",
                          sensim_last_error());
        }
        const size_t n = pt[0]->count;
        ck_assert_uint_eq(n, pt[1]->count);
        ck_assert_uint_gt(n, 10000);
        ck_assert(!memcmp(pt[0]->xyzi, pt[1]->xyzi, 4 * n * sizeof(float)));
        ck_assert(!memcmp(pt[0]->range, pt[1]->range, n * sizeof(float)));
        ck_assert(!memcmp(pt[0]->object, pt[1]->object, n * sizeof(uint32_t)));
        ck_assert(!memcmp(pt[0]->channel, pt[1]->channel, n * sizeof(uint16_t)));
        ck_assert(!memcmp(pt[0]->return_index, pt[1]->return_index, n));
        for (int b = 0; b < 2; b++) {
            sensim_render_lidar_points_destroy(pt[b]);
            sensim_render_lidar_destroy(l[b]);
        }
    }
    sensim_render_camera_params cp = sensim_render_camera_default_params();
    cp.width = 160;
    cp.height = 90;
    cp.samples = 3;
    cp.exposure = 0.02;
    cp.shadows = 1;
    /* Looking ahead (the ball, the box), then back (the turning box, an
     * instance, its scaled twin's shadow). */
    const motion view[2] = {mo, {{2, 0, 1.8}, {0.5, 0.5, 0}, 2.4}};
    for (int w = 0; w < 2; w++) {
        float *img[2];
        uint32_t *obj[2];
        for (int b = 0; b < 2; b++) {
            cp.backend = b ? SENSIM_RENDER_BACKEND_TWIN : SENSIM_RENDER_BACKEND_CUDA;
            sensim_render_camera *c = sensim_render_camera_create(&cp);
            ck_assert_ptr_nonnull(c);
            img[b] = malloc(160 * 90 * 3 * sizeof(float));
            obj[b] = malloc(160 * 90 * sizeof(uint32_t));
            ck_assert_msg(sensim_render_camera_render_images(c, s, moving_pose, &view[w], 0.25, 3, img[b], NULL,
                                                             obj[b]) == SENSIM_OK,
                          "%s", sensim_last_error());
            sensim_render_camera_destroy(c);
        }
        ck_assert(!memcmp(img[0], img[1], 160 * 90 * 3 * sizeof(float)));
        ck_assert(!memcmp(obj[0], obj[1], 160 * 90 * sizeof(uint32_t)));
        /* The objects the view is meant to see are in it. */
        int seen[7] = {0};
        for (int i = 0; i < 160 * 90; i++)
            if (obj[0][i] < 7)
                seen[obj[0][i]] = 1;
        if (w)
            ck_assert_msg(seen[5] && (seen[3] || seen[4]), "turning box %d, instances %d %d", seen[5], seen[3],
                          seen[4]);
        else
            ck_assert_msg(seen[1] && seen[2], "ball %d, box %d", seen[1], seen[2]);
        for (int b = 0; b < 2; b++) {
            free(img[b]);
            free(obj[b]);
        }
    }
    sensim_scene_destroy(s);
}

START_TEST(fake_lib_matches_twin)
{
    if (skip_without_ptx("fake_lib_matches_twin"))
        return;
    char *fake = fake_driver();
    lib_cuda_matches_twin(fake, 0);
    /* Launches of at most 5000 rays: a scan in 5 to 43 launches of whole
     * beam groups, a frame in 9. */
    lib_cuda_matches_twin(fake, 5000);
    free(fake);
}
END_TEST

/* On a GPU: the analytic scenes and the bundled scenes, CUDA against the
 * twin, bit for bit. Skipped, saying so, without one. */
START_TEST(gpu_matches_twin)
{
    char why[1024];
    if (!have_gpu(why, sizeof why)) {
        fprintf(stderr, "SKIP cuda:gpu_matches_twin: no GPU here (%s)\n", why);
        return;
    }
    fprintf(stderr, "cuda:gpu_matches_twin: on %s\n", why);
    lib_cuda_matches_twin(NULL, 0);
    lib_cuda_matches_twin(NULL, 5000);
    cli_cuda_matches_twin(NULL);
}
END_TEST

Suite *suite_cuda(void)
{
    Suite *s = suite_create("cuda");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, driver_absent);
    tcase_add_test(tc, not_a_driver);
    tcase_add_test(tc, driver_failures);
    tcase_add_test(tc, probe_passes);
    tcase_add_test(tc, ptx_built);
    tcase_add_test(tc, scan_compaction);
    tcase_add_test(tc, cli_driver_absent);
    tcase_add_test(tc, fake_cli_matches_twin);
    tcase_add_test(tc, cli_auto);
    tcase_add_test(tc, cli_device_errors);
    tcase_add_test(tc, fake_lib_matches_twin);
    tcase_add_test(tc, gpu_matches_twin);
    suite_add_tcase(s, tc);
    return s;
}
