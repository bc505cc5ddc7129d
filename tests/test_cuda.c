/* The CUDA backend without a GPU (issue 18): the driver absent, a library
 * that is not the driver, and the driver's failures, each a clear message;
 * the host side against a stand-in driver (tests/fakecuda/, which runs the
 * kernels' shared code on the CPU); the PTX that clang-16 built (entries,
 * target, and none of fma, .ftz or .approx: the arithmetic of the twin).
 * On a machine with a GPU the renders of the CUDA and twin backends are
 * compared bit for bit (skipped, saying so, elsewhere). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/render.h"
#include "testutil.h"

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

Suite *suite_cuda(void)
{
    Suite *s = suite_create("cuda");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, driver_absent);
    tcase_add_test(tc, not_a_driver);
    tcase_add_test(tc, driver_failures);
    tcase_add_test(tc, probe_passes);
    tcase_add_test(tc, ptx_built);
    suite_add_tcase(s, tc);
    return s;
}
