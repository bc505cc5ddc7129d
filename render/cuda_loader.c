/* The CUDA driver API through dlopen (see cuda_loader.h).
 *
 * The few types and constants used are declared here from the driver API's
 * documentation (cuda.h is not needed to build): CUresult is an int, devices
 * are ints, contexts, modules, functions and streams opaque pointers, and
 * device addresses 64-bit (the _v2 entry points, the only ones since CUDA
 * 3.2 on 64-bit hosts). The entry points are looked up by their exported
 * names, which the driver keeps for compatibility with older programs. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_loader.h"
#include "../lib/base_internal.h"

/* The PTX of the kernels, one entry per target (scripts/embed_text.sh),
 * empty when clang-16 was absent at build time. */
#include "cuda_ptx.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

enum {
    CUDA_SUCCESS = 0,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
};

/* Every entry point used: name, parameter list. */
#define CUDA_FUNCS(X) \
    X(cuInit, (unsigned flags)) \
    X(cuGetErrorName, (CUresult e, const char **s)) \
    X(cuGetErrorString, (CUresult e, const char **s)) \
    X(cuDriverGetVersion, (int *v)) \
    X(cuDeviceGetCount, (int *n)) \
    X(cuDeviceGet, (CUdevice * d, int ordinal)) \
    X(cuDeviceGetName, (char *name, int len, CUdevice d)) \
    X(cuDeviceGetAttribute, (int *v, int attr, CUdevice d)) \
    X(cuCtxCreate_v2, (CUcontext * c, unsigned flags, CUdevice d)) \
    X(cuCtxDestroy_v2, (CUcontext c)) \
    X(cuCtxPushCurrent_v2, (CUcontext c)) \
    X(cuCtxPopCurrent_v2, (CUcontext * c)) \
    X(cuCtxSynchronize, (void)) \
    X(cuModuleLoadDataEx, (CUmodule * m, const void *image, unsigned n, int *options, void **values)) \
    X(cuModuleUnload, (CUmodule m)) \
    X(cuModuleGetFunction, (CUfunction * f, CUmodule m, const char *name)) \
    X(cuMemAlloc_v2, (CUdeviceptr * p, size_t bytes)) \
    X(cuMemFree_v2, (CUdeviceptr p)) \
    X(cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t bytes)) \
    X(cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t bytes)) \
    X(cuLaunchKernel, (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
                       unsigned shared, CUstream stream, void **params, void **extra))

typedef struct {
#define CUDA_FIELD(name, args) CUresult(*name) args;
    CUDA_FUNCS(CUDA_FIELD)
#undef CUDA_FIELD
} cuda_api;

#define MAX_FUNCS 16  /* kernels looked up (cached by name) */
#define MAX_ALLOCS 64 /* device allocations live at once */

struct sensim_cuda {
    void *lib;
    cuda_api api;
    int initialised; /* cuInit succeeded: the library stays loaded */
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    char name[256];
    char target[8];
    struct {
        char name[64];
        CUfunction f;
    } fn[MAX_FUNCS];
    int nfn;
    CUdeviceptr alloc[MAX_ALLOCS];
};

const char *sensim_cuda_ptx(const char *target)
{
    char want[64];
    snprintf(want, sizeof want, "sg_kernels_%s", target);
    for (int i = 0; sensim_cuda_ptx_text[i].name; i++)
        if (!strcmp(sensim_cuda_ptx_text[i].name, want))
            return sensim_cuda_ptx_text[i].text;
    return NULL;
}

/* "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)" as the message. */
static sensim_status cuda_fail(const sensim_cuda *cu, sensim_status st, const char *call, CUresult e)
{
    const char *name = NULL, *text = NULL;
    if (cu->api.cuGetErrorName(e, &name) != CUDA_SUCCESS)
        name = NULL;
    if (cu->api.cuGetErrorString(e, &text) != CUDA_SUCCESS)
        text = NULL;
    return sensim_error(st, "cuda: %s: %s%s%s%s (error %d)", call, name ? name : "unknown error", text ? " (" : "",
                        text ? text : "", text ? ")" : "", (int)e);
}

/* Opens the driver library and looks up every entry point. */
static sensim_status cuda_load(sensim_cuda *cu)
{
    const char *path = getenv("SENSIM_LIBCUDA");
    if (!path || !*path)
        path = "libcuda.so.1";
    dlerror();
    cu->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!cu->lib) {
        const char *why = dlerror();
        if (why && strstr(why, "No such file"))
            return sensim_error(SENSIM_EUNSUPPORTED,
                                "cuda: %s not found (the NVIDIA driver is needed; no CUDA toolkit)", path);
        return sensim_error(SENSIM_EUNSUPPORTED, "cuda: cannot load %s: %s", path, why ? why : "unknown error");
    }
#define CUDA_SYM(name, args) \
    { \
        void *sym = dlsym(cu->lib, #name); \
        if (!sym) \
            return sensim_error(SENSIM_EUNSUPPORTED, \
                                "cuda: %s has no %s: not the NVIDIA driver's libcuda, or one " \
                                "too old", \
                                path, #name); \
        memcpy(&cu->api.name, &sym, sizeof sym); \
    }
    CUDA_FUNCS(CUDA_SYM)
#undef CUDA_SYM
    return SENSIM_OK;
}

/* Initialises the driver and opens device 0's context. */
static sensim_status cuda_open_device(sensim_cuda *cu, int *major, int *minor)
{
    CUresult e = cu->api.cuInit(0);
    if (e != CUDA_SUCCESS)
        return cuda_fail(cu, SENSIM_EUNSUPPORTED, "cuInit", e);
    cu->initialised = 1;
    int n = 0;
    if ((e = cu->api.cuDeviceGetCount(&n)) != CUDA_SUCCESS)
        return cuda_fail(cu, SENSIM_EUNSUPPORTED, "cuDeviceGetCount", e);
    if (n < 1)
        return sensim_error(SENSIM_EUNSUPPORTED, "cuda: the driver sees no CUDA device");
    if ((e = cu->api.cuDeviceGet(&cu->dev, 0)) != CUDA_SUCCESS)
        return cuda_fail(cu, SENSIM_EUNSUPPORTED, "cuDeviceGet", e);
    if ((e = cu->api.cuDeviceGetName(cu->name, (int)sizeof cu->name, cu->dev)) != CUDA_SUCCESS)
        return cuda_fail(cu, SENSIM_EINTERNAL, "cuDeviceGetName", e);
    cu->name[sizeof cu->name - 1] = 0;
    if ((e = cu->api.cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu->dev)) ||
        (e = cu->api.cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu->dev)))
        return cuda_fail(cu, SENSIM_EINTERNAL, "cuDeviceGetAttribute", e);
    if ((e = cu->api.cuCtxCreate_v2(&cu->ctx, 0, cu->dev)) != CUDA_SUCCESS) {
        cu->ctx = NULL;
        return cuda_fail(cu, SENSIM_EINTERNAL, "cuCtxCreate_v2", e);
    }
    /* cuCtxCreate made it current on this thread: every call pushes it. */
    CUcontext popped;
    cu->api.cuCtxPopCurrent_v2(&popped);
    return SENSIM_OK;
}

/* Picks the PTX for compute capability major.minor and JIT-loads it. */
static sensim_status cuda_load_module(sensim_cuda *cu, int major, int minor)
{
    if (major < 6)
        return sensim_error(SENSIM_EUNSUPPORTED, "cuda: %s is compute capability %d.%d; the kernels need 6.0 or later",
                            cu->name, major, minor);
    const char *target = major >= 9 ? "sm_90" : "sm_60";
    const char *ptx = sensim_cuda_ptx(target);
    if (!ptx)
        return sensim_error(SENSIM_EUNSUPPORTED,
                            "cuda: this build of libsensim has no GPU kernels (PTX for %s): "
                            "clang-16 was absent when it was built; install it and run make gpu",
                            target);
    snprintf(cu->target, sizeof cu->target, "%s", target);
    char log[2048] = "";
    int opt[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *val[2] = {log, (void *)(uintptr_t)sizeof log};
    CUresult e = cu->api.cuCtxPushCurrent_v2(cu->ctx);
    if (e != CUDA_SUCCESS)
        return cuda_fail(cu, SENSIM_EINTERNAL, "cuCtxPushCurrent_v2", e);
    e = cu->api.cuModuleLoadDataEx(&cu->mod, ptx, 2, opt, val);
    CUcontext popped;
    cu->api.cuCtxPopCurrent_v2(&popped);
    if (e != CUDA_SUCCESS) {
        cu->mod = NULL;
        log[sizeof log - 1] = 0;
        cuda_fail(cu, SENSIM_EUNSUPPORTED, "cuModuleLoadDataEx", e);
        char first[512];
        snprintf(first, sizeof first, "%s", sensim_last_error());
        return sensim_error(SENSIM_EUNSUPPORTED, "%s; the driver cannot load the %s PTX%s%s", first, target,
                            *log ? ": " : " (a driver older than the PTX's ISA version?)", log);
    }
    return SENSIM_OK;
}

sensim_cuda *sensim_cuda_create(void)
{
    sensim_cuda *cu = sensim_new_(sizeof *cu, "cuda");
    if (!cu)
        return NULL;
    int major = 0, minor = 0;
    if (cuda_load(cu) || cuda_open_device(cu, &major, &minor) || cuda_load_module(cu, major, minor))
        return sensim_cuda_discard(cu);
    return cu;
}

sensim_cuda *sensim_cuda_discard(sensim_cuda *cu)
{
    SENSIM_CUDA_KEEP_ERROR(sensim_cuda_destroy(cu));
    return NULL;
}

void sensim_cuda_destroy(sensim_cuda *cu)
{
    if (!cu)
        return;
    if (cu->ctx && cu->api.cuCtxPushCurrent_v2(cu->ctx) == CUDA_SUCCESS) {
        for (int i = 0; i < MAX_ALLOCS; i++)
            if (cu->alloc[i])
                cu->api.cuMemFree_v2(cu->alloc[i]);
        if (cu->mod)
            cu->api.cuModuleUnload(cu->mod);
        CUcontext popped;
        cu->api.cuCtxPopCurrent_v2(&popped);
    }
    if (cu->ctx)
        cu->api.cuCtxDestroy_v2(cu->ctx);
    /* An initialised driver runs threads of its own: it stays loaded (a
     * later dlopen gets the same handle). */
    if (cu->lib && !cu->initialised)
        dlclose(cu->lib);
    free(cu);
}

const char *sensim_cuda_device_name(const sensim_cuda *cu) { return cu->name; }
const char *sensim_cuda_ptx_target(const sensim_cuda *cu) { return cu->target; }

/* Pushes the context for one call; a failure sets the message. */
static sensim_status cuda_enter(sensim_cuda *cu)
{
    CUresult e = cu->api.cuCtxPushCurrent_v2(cu->ctx);
    return e == CUDA_SUCCESS ? SENSIM_OK : cuda_fail(cu, SENSIM_EINTERNAL, "cuCtxPushCurrent_v2", e);
}

static void cuda_leave(sensim_cuda *cu)
{
    CUcontext popped;
    cu->api.cuCtxPopCurrent_v2(&popped);
}

sensim_status sensim_cuda_alloc(sensim_cuda *cu, size_t bytes, sensim_cuda_ptr *p)
{
    *p = 0;
    int slot = 0;
    while (slot < MAX_ALLOCS && cu->alloc[slot])
        slot++;
    if (slot == MAX_ALLOCS)
        return sensim_error(SENSIM_EINTERNAL, "cuda: more than %d device allocations at once", MAX_ALLOCS);
    if (cuda_enter(cu))
        return sensim_last_status();
    CUdeviceptr d = 0;
    CUresult e = cu->api.cuMemAlloc_v2(&d, bytes ? bytes : 1);
    cuda_leave(cu);
    if (e != CUDA_SUCCESS) {
        char call[320];
        snprintf(call, sizeof call, "cuMemAlloc_v2 (%zu bytes on %s)", bytes, cu->name);
        return cuda_fail(cu, e == 2 ? SENSIM_ENOMEM : SENSIM_EINTERNAL, call, e);
    }
    cu->alloc[slot] = d;
    *p = d;
    return SENSIM_OK;
}

void sensim_cuda_free(sensim_cuda *cu, sensim_cuda_ptr p)
{
    if (!p)
        return;
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (cu->alloc[i] == p) {
            if (cuda_enter(cu) == SENSIM_OK) {
                cu->api.cuMemFree_v2(p);
                cuda_leave(cu);
            }
            cu->alloc[i] = 0;
            return;
        }
}

/* bytes from host memory up to device address dev (up: from src), or from
 * dev down to host memory (dst). */
static sensim_status cuda_copy(sensim_cuda *cu, int up, sensim_cuda_ptr dev, const void *src, void *dst, size_t bytes)
{
    if (!bytes)
        return SENSIM_OK;
    if (cuda_enter(cu))
        return sensim_last_status();
    CUresult e = up ? cu->api.cuMemcpyHtoD_v2(dev, src, bytes) : cu->api.cuMemcpyDtoH_v2(dst, dev, bytes);
    cuda_leave(cu);
    return e == CUDA_SUCCESS ? SENSIM_OK
                             : cuda_fail(cu, SENSIM_EINTERNAL, up ? "cuMemcpyHtoD_v2" : "cuMemcpyDtoH_v2", e);
}

sensim_status sensim_cuda_upload(sensim_cuda *cu, sensim_cuda_ptr dst, const void *src, size_t bytes)
{
    return cuda_copy(cu, 1, dst, src, NULL, bytes);
}

sensim_status sensim_cuda_download(sensim_cuda *cu, void *dst, sensim_cuda_ptr src, size_t bytes)
{
    return cuda_copy(cu, 0, src, NULL, dst, bytes);
}

/* The kernel `name`, looked up once. */
static CUfunction cuda_function(sensim_cuda *cu, const char *name)
{
    for (int i = 0; i < cu->nfn; i++)
        if (!strcmp(cu->fn[i].name, name))
            return cu->fn[i].f;
    CUfunction f = NULL;
    CUresult e = cu->api.cuModuleGetFunction(&f, cu->mod, name);
    if (e != CUDA_SUCCESS) {
        char call[128];
        snprintf(call, sizeof call, "cuModuleGetFunction (%.64s)", name);
        cuda_fail(cu, SENSIM_EINTERNAL, call, e);
        return NULL;
    }
    if (cu->nfn < MAX_FUNCS && strlen(name) < sizeof cu->fn[0].name) {
        snprintf(cu->fn[cu->nfn].name, sizeof cu->fn[0].name, "%s", name);
        cu->fn[cu->nfn++].f = f;
    }
    return f;
}

sensim_status sensim_cuda_launch(sensim_cuda *cu, const char *name, size_t n, void **params)
{
    if (!n)
        return SENSIM_OK;
    size_t blocks = (n + SENSIM_CUDA_BLOCK - 1) / SENSIM_CUDA_BLOCK;
    if (blocks > 0x7fffffffu)
        return sensim_error(SENSIM_EINVAL, "cuda: %zu threads are too many for one launch of %s", n, name);
    if (cuda_enter(cu))
        return sensim_last_status();
    sensim_status st = SENSIM_OK;
    CUfunction f = cuda_function(cu, name);
    CUresult e;
    char call[160];
    if (!f)
        st = sensim_last_status();
    else if ((e = cu->api.cuLaunchKernel(f, (unsigned)blocks, 1, 1, SENSIM_CUDA_BLOCK, 1, 1, 0, NULL, params, NULL)) !=
             CUDA_SUCCESS) {
        snprintf(call, sizeof call, "cuLaunchKernel (%.64s, %zu threads)", name, n);
        st = cuda_fail(cu, SENSIM_EINTERNAL, call, e);
    } else if ((e = cu->api.cuCtxSynchronize()) != CUDA_SUCCESS) {
        snprintf(call, sizeof call, "cuCtxSynchronize after %.64s (%zu threads)", name, n);
        st = cuda_fail(cu, SENSIM_EINTERNAL, call, e);
    }
    cuda_leave(cu);
    return st;
}
