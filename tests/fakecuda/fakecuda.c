/* A stand-in for the NVIDIA driver's libcuda.so.1, for the tests of the
 * CUDA backend's host side on machines without a GPU (tests/test_cuda.c
 * loads it through SENSIM_LIBCUDA). It is not a GPU and proves nothing
 * about one: it checks what the host side does with the driver API.
 *
 * Device memory is host memory; a "launch" runs the kernel's body, the same
 * shared header code (render/gpu/) the kernel compiles, on the CPU for
 * every thread index of the grid, reading the arguments from the
 * kernelParams array as cuLaunchKernel would, so that the launcher's
 * argument layout, sizes and copies are checked against the kernels'
 * signatures. Module loading checks that the image is the PTX of
 * sg_kernels.cu (clang's NVPTX header, a .target line) and records the
 * target; a function is found only if the PTX has its .entry. Calls that
 * need a context fail with CUDA_ERROR_INVALID_CONTEXT unless one is
 * current on the calling thread; freeing an unknown pointer fails.
 *
 * FAKECUDA selects a failure: nodevice (cuInit: CUDA_ERROR_NO_DEVICE),
 * zerodevices (no device counted), cc52 (compute capability 5.2), cc70
 * (7.0: the sm_60 PTX is expected), badptx (the JIT refuses the PTX),
 * badarith (the probe kernel's result bits are off by one ulp), oom
 * (allocations over 1 MiB fail), launchfail (sg_trace_kernel,
 * sg_scan_trace_kernel and sg_camera_kernel fail).
 * On exit it prints "fakecuda: N allocations not freed" to stderr when
 * some are left. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sg_bvh.h"
#include "sg_probe.h"
#include "sg_scan.h"
#include "sg_shade.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
    OK = 0,
    E_INVALID_VALUE = 1,
    E_OUT_OF_MEMORY = 2,
    E_NOT_INITIALIZED = 3,
    E_NO_DEVICE = 100,
    E_INVALID_DEVICE = 101,
    E_INVALID_IMAGE = 200,
    E_INVALID_CONTEXT = 201,
    E_INVALID_PTX = 218,
    E_INVALID_HANDLE = 400,
    E_NOT_FOUND = 500,
    E_LAUNCH_FAILED = 719
};

static const struct {
    CUresult e;
    const char *name, *text;
} errors[] = {
    {OK, "CUDA_SUCCESS", "no error"},
    {E_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {E_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {E_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {E_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {E_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {E_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {E_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {E_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {E_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {E_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {E_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};

/* The functions are exported under the driver's names; prototypes here
 * keep -Wmissing-prototypes quiet. */
#define API(name, args) \
    CUresult name args __attribute__((visibility("default"))); \
    CUresult name args

static int initialised;
static _Thread_local void *current; /* the context current on this thread */
static char ctx_token;              /* the one context's address */
static char *ptx;                   /* the module loaded */
static long live;                   /* allocations not freed */

static const char *mode(const char *m)
{
    const char *f = getenv("FAKECUDA");
    return f && !strcmp(f, m) ? f : NULL;
}

__attribute__((destructor)) static void report(void)
{
    if (live)
        fprintf(stderr, "fakecuda: %ld allocations not freed\n", live);
}

API(cuGetErrorName, (CUresult e, const char **s))
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].e == e) {
            *s = errors[i].name;
            return OK;
        }
    *s = NULL;
    return E_INVALID_VALUE;
}

API(cuGetErrorString, (CUresult e, const char **s))
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].e == e) {
            *s = errors[i].text;
            return OK;
        }
    *s = NULL;
    return E_INVALID_VALUE;
}

API(cuInit, (unsigned flags))
{
    if (flags)
        return E_INVALID_VALUE;
    if (mode("nodevice"))
        return E_NO_DEVICE;
    initialised = 1;
    return OK;
}

API(cuDriverGetVersion, (int *v))
{
    *v = 12080;
    return OK;
}

API(cuDeviceGetCount, (int *n))
{
    if (!initialised)
        return E_NOT_INITIALIZED;
    *n = mode("zerodevices") ? 0 : 1;
    return OK;
}

API(cuDeviceGet, (int *d, int ordinal))
{
    if (!initialised)
        return E_NOT_INITIALIZED;
    if (ordinal != 0 || mode("zerodevices"))
        return E_INVALID_DEVICE;
    *d = 0;
    return OK;
}

API(cuDeviceGetName, (char *name, int len, int d))
{
    if (d != 0 || len < 1)
        return E_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", "fakecuda (CPU stand-in, tests only)");
    return OK;
}

API(cuDeviceGetAttribute, (int *v, int attr, int d))
{
    if (d != 0)
        return E_INVALID_DEVICE;
    int major = mode("cc52") ? 5 : mode("cc70") ? 7 : 9, minor = mode("cc52") ? 2 : 0;
    if (attr == 75)
        *v = major;
    else if (attr == 76)
        *v = minor;
    else
        return E_INVALID_VALUE;
    return OK;
}

API(cuCtxCreate_v2, (void **c, unsigned flags, int d))
{
    if (!initialised)
        return E_NOT_INITIALIZED;
    if (d != 0 || flags)
        return E_INVALID_VALUE;
    *c = current = &ctx_token;
    return OK;
}

API(cuCtxDestroy_v2, (void *c))
{
    if (c != &ctx_token)
        return E_INVALID_CONTEXT;
    if (current == c)
        current = NULL;
    return OK;
}

API(cuCtxPushCurrent_v2, (void *c))
{
    if (c != &ctx_token)
        return E_INVALID_CONTEXT;
    current = c;
    return OK;
}

API(cuCtxPopCurrent_v2, (void **c))
{
    if (!current)
        return E_INVALID_CONTEXT;
    *c = current;
    current = NULL;
    return OK;
}

API(cuCtxSynchronize, (void)) { return current ? OK : E_INVALID_CONTEXT; }

API(cuModuleLoadDataEx, (void **m, const void *image, unsigned n, int *opt, void **val))
{
    if (!current)
        return E_INVALID_CONTEXT;
    const char *text = image;
    const char *want = mode("cc70") ? ".target sm_60\n" : ".target sm_90\n";
    if (mode("badptx") || strncmp(text, "//\n// Generated by LLVM NVPTX Back-End", 38) || !strstr(text, want)) {
        for (unsigned i = 0; i + 1 < n; i++)
            if (opt[i] == 5 && opt[i + 1] == 6)
                snprintf(val[i], (size_t)(uintptr_t)val[i + 1], "ptxas fatal   : fakecuda refuses this PTX");
        return E_INVALID_PTX;
    }
    free(ptx);
    ptx = strdup(text);
    *m = ptx;
    return ptx ? OK : E_OUT_OF_MEMORY;
}

API(cuModuleUnload, (void *m))
{
    if (!current)
        return E_INVALID_CONTEXT;
    if (m != ptx)
        return E_INVALID_HANDLE;
    free(ptx);
    ptx = NULL;
    return OK;
}

/* A function is the kernel's name, found as an .entry of the module. */
API(cuModuleGetFunction, (void **f, void *m, const char *name))
{
    if (!current)
        return E_INVALID_CONTEXT;
    if (m != ptx)
        return E_INVALID_HANDLE;
    char entry[128];
    snprintf(entry, sizeof entry, ".entry %s(", name);
    if (!strstr(ptx, entry))
        return E_NOT_FOUND;
    *f = (void *)strstr(ptx, entry);
    return OK;
}

API(cuMemAlloc_v2, (CUdeviceptr * p, size_t bytes))
{
    if (!current)
        return E_INVALID_CONTEXT;
    if (!bytes || (mode("oom") && bytes > (1u << 20)))
        return bytes ? E_OUT_OF_MEMORY : E_INVALID_VALUE;
    void *q = malloc(bytes);
    if (!q)
        return E_OUT_OF_MEMORY;
    memset(q, 0xA5, bytes); /* device memory starts as garbage */
    *p = (CUdeviceptr)(uintptr_t)q;
    live++;
    return OK;
}

API(cuMemFree_v2, (CUdeviceptr p))
{
    if (!current)
        return E_INVALID_CONTEXT;
    if (!live)
        return E_INVALID_VALUE;
    free((void *)(uintptr_t)p);
    live--;
    return OK;
}

API(cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t bytes))
{
    if (!current)
        return E_INVALID_CONTEXT;
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return OK;
}

API(cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t bytes))
{
    if (!current)
        return E_INVALID_CONTEXT;
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return OK;
}

/* The kernels of sg_kernels.cu, run for every thread index of the grid:
 * each reads its arguments from params as the device would. */
static int entry_is(const void *f, const char *name)
{
    size_t n = strlen(name);
    return !strncmp((const char *)f + 7, name, n) && ((const char *)f)[7 + n] == '(';
}

API(cuLaunchKernel, (void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                     unsigned shared, void *stream, void **params, void **extra))
{
    if (!current)
        return E_INVALID_CONTEXT;
    if (!f || !gx || !bx || gy != 1 || gz != 1 || by != 1 || bz != 1 || shared || stream || extra || !params)
        return E_INVALID_VALUE;
    const unsigned long long threads = (unsigned long long)gx * bx;
    if (entry_is(f, "sg_probe_kernel")) {
        const float *in = (const float *)(uintptr_t) * (CUdeviceptr *)params[0];
        unsigned *out = (unsigned *)(uintptr_t) * (CUdeviceptr *)params[1];
        const unsigned long long n = *(unsigned long long *)params[2];
        for (unsigned long long i = 0; i < threads; i++)
            if (i < n) {
                sg_probe_eval(in + 3 * i, out + SG_PROBE_OUT * i);
                if (mode("badarith") && i == n / 2)
                    out[SG_PROBE_OUT * i + 3] ^= 1u;
            }
        return OK;
    }
    const int trace = entry_is(f, "sg_trace_kernel");
    if (trace || entry_is(f, "sg_occluded_kernel")) {
        /* Both kernels take (scene, rays, hits, n). */
        if (trace && mode("launchfail"))
            return E_LAUNCH_FAILED;
        const sg_scene *s = (const sg_scene *)params[0];
        const sg_ray *rays = (const sg_ray *)(uintptr_t) * (CUdeviceptr *)params[1];
        sg_hit *hits = (sg_hit *)(uintptr_t) * (CUdeviceptr *)params[2];
        const unsigned long long n = *(unsigned long long *)params[3];
        for (unsigned long long i = 0; i < threads && i < n; i++) {
            if (trace)
                sg_trace(s, rays, hits, (size_t)i);
            else
                hits[i].geom = sg_occluded(s, rays, (size_t)i) ? 0u : SG_INVALID;
        }
        return OK;
    }
#define DEV(T, k) ((T)(uintptr_t) * (CUdeviceptr *)params[k])
    if (entry_is(f, "sg_camera_kernel")) {
        if (mode("launchfail"))
            return E_LAUNCH_FAILED;
        const sg_scene *s = (const sg_scene *)params[0];
        const sg_camera *G = (const sg_camera *)params[1];
        const sg_shade *S = (const sg_shade *)params[2];
        const unsigned long long first = *(unsigned long long *)params[3], n = *(unsigned long long *)params[4];
        sg_hit *hits = DEV(sg_hit *, 5);
        uint8_t *occ = DEV(uint8_t *, 6);
        for (unsigned long long i = 0; i < threads; i++)
            if (i < n)
                sg_camera_trace(s, G, S, first + i, &hits[i], S->shadows ? &occ[i] : NULL);
        return OK;
    }
#define U64(k) (*(unsigned long long *)params[k])
    if (entry_is(f, "sg_scan_trace_kernel")) {
        if (mode("launchfail"))
            return E_LAUNCH_FAILED;
        const sg_scene *s = (const sg_scene *)params[0];
        const sg_lidar *L = (const sg_lidar *)params[1];
        const unsigned long long first = U64(2), n = U64(3);
        sg_lhit *rec = DEV(sg_lhit *, 4);
        for (unsigned long long i = 0; i < threads; i++)
            if (i < n)
                sg_scan_trace(s, L, first, i, rec);
        return OK;
    }
    if (entry_is(f, "sg_scan_count_kernel") || entry_is(f, "sg_scan_compact_kernel")) {
        const int count = entry_is(f, "sg_scan_count_kernel");
        const sg_lhit *rec = DEV(const sg_lhit *, 0);
        const unsigned long long nrays = U64(1), nbeam = U64(2), ngroup = U64(3);
        for (unsigned long long g = 0; g < threads; g++)
            if (g < ngroup) {
                if (count)
                    sg_scan_count(rec, (uint32_t)nrays, nbeam, g, DEV(uint16_t *, 4), DEV(uint32_t *, 5));
                else
                    sg_scan_compact(rec, (uint32_t)nrays, nbeam, g, DEV(const uint32_t *, 4),
                                    DEV(const uint32_t *, 5), DEV(sg_lhit *, 6));
            }
        return OK;
    }
    if (entry_is(f, "sg_scan_block_kernel")) {
        for (unsigned long long k = 0; k < threads; k++)
            if (k < U64(2))
                sg_scan_block(DEV(uint32_t *, 0), U64(1), k, DEV(uint32_t *, 3));
        return OK;
    }
    if (entry_is(f, "sg_scan_offsets_kernel")) {
        sg_scan_offsets(DEV(uint32_t *, 0), U64(1));
        return OK;
    }
#undef DEV
#undef U64
    return E_INVALID_HANDLE;
}
