/* The CUDA driver API, loaded at run time (cuda_loader.c). Not installed.
 *
 * libsensim links no CUDA library: the driver's libcuda.so.1 is opened with
 * dlopen when a CUDA backend is asked for, as Blender's cuew does, and the
 * kernels are PTX text embedded at build time (render/gpu/sg_kernels.cu,
 * compiled by clang-16 in CUDA device-only mode), JIT-compiled by the
 * driver for the device found. So the GPU needs only the NVIDIA driver at
 * run time, no CUDA toolkit.
 *
 * One sensim_cuda is one device context with the kernels loaded. Every call
 * makes its context current on the calling thread for the call (push and
 * pop), so any one thread at a time may use it. Failures return a status
 * with the message "cuda: ..." naming the driver call and the driver's own
 * error name and text. */
#ifndef SENSIM_CUDA_LOADER_H
#define SENSIM_CUDA_LOADER_H

#include <stddef.h>
#include <stdio.h>

#include "gpu/sg_scan.h"
#include "gpu/sg_shade.h"

#include "sensim/status.h"

#pragma GCC visibility push(hidden)

typedef struct sensim_cuda sensim_cuda;
typedef unsigned long long sensim_cuda_ptr; /* a device address (CUdeviceptr) */

/* Loads the driver (libcuda.so.1, or the file named by the environment
 * variable SENSIM_LIBCUDA), initialises it, opens device 0 (as numbered by
 * CUDA_VISIBLE_DEVICES) and loads the embedded PTX for its compute
 * capability (sm_90 for 9.0 and later, else the portable sm_60 text). NULL
 * with SENSIM_EUNSUPPORTED when there is no driver, no device, or no PTX in
 * this build ("cuda: libcuda.so.1 not found (...)"), SENSIM_EINTERNAL when
 * the driver fails. */
sensim_cuda *sensim_cuda_create(void);
/* Frees the device memory still allocated, the module and the context. The
 * driver library stays loaded once initialised (it runs threads of its
 * own). NULL is a no-op. */
void sensim_cuda_destroy(sensim_cuda *cu);

/* The thread's last error, kept across a clean-up that may set another
 * (freeing device memory after the failure that made it useless). */
typedef struct sensim_cuda_err {
    sensim_status st;
    char msg[1024];
} sensim_cuda_err;
static inline void sensim_cuda_err_save(sensim_cuda_err *e)
{
    e->st = sensim_last_status();
    snprintf(e->msg, sizeof e->msg, "%s", sensim_last_error());
}
static inline void sensim_cuda_err_restore(const sensim_cuda_err *e) { sensim_error(e->st, "%s", e->msg); }
/* Runs the statement `cleanup` keeping the thread's last error. */
#define SENSIM_CUDA_KEEP_ERROR(cleanup) \
    do { \
        sensim_cuda_err keep_; \
        sensim_cuda_err_save(&keep_); \
        cleanup; \
        sensim_cuda_err_restore(&keep_); \
    } while (0)
/* sensim_cuda_destroy(cu) after a failure, keeping the failure's error;
 * returns NULL. */
sensim_cuda *sensim_cuda_discard(sensim_cuda *cu);

/* The device's name ("NVIDIA H100 80GB HBM3") and "sm_XY" of the PTX loaded. */
const char *sensim_cuda_device_name(const sensim_cuda *cu);
const char *sensim_cuda_ptx_target(const sensim_cuda *cu);

/* Device memory: plain allocations (no managed memory), copied to and from
 * synchronously. sensim_cuda_free(cu, 0) is a no-op. */
sensim_status sensim_cuda_alloc(sensim_cuda *cu, size_t bytes, sensim_cuda_ptr *p);
void sensim_cuda_free(sensim_cuda *cu, sensim_cuda_ptr p);
sensim_status sensim_cuda_upload(sensim_cuda *cu, sensim_cuda_ptr dst, const void *src, size_t bytes);
sensim_status sensim_cuda_download(sensim_cuda *cu, void *dst, sensim_cuda_ptr src, size_t bytes);

/* Runs kernel `name` (an extern "C" entry of sg_kernels.cu) over n threads
 * (blocks of SENSIM_CUDA_BLOCK; threads past n return at once) with the
 * parameters params (pointers to each argument, in order, as
 * cuLaunchKernel takes them), and waits for it to finish. */
#define SENSIM_CUDA_BLOCK 128
sensim_status sensim_cuda_launch(sensim_cuda *cu, const char *name, size_t n, void **params);

/* The embedded PTX for target "sm_90" or "sm_60"; NULL when this build has
 * none (clang-16 was absent). */
const char *sensim_cuda_ptx(const char *target);

/* Runs the arithmetic probe (render/gpu/sg_probe.h) on the device and
 * compares its bits with the CPU's (cuda.c): SENSIM_EUNSUPPORTED, naming
 * the first difference, when they differ. */
sensim_status sensim_cuda_check_arithmetic(sensim_cuda *cu);

/* A flattened scene (render/gpu/sg_types.h, the twin's) on the device:
 * the arrays uploaded once with plain allocations, and buffers for rays
 * and hits reused from batch to batch. */
/* A camera frame's samples traced on the device (sensim_cuda_camera_trace):
 * their hits, replayed into the camera's packets by the packet hook (see
 * sensim_cuda_intersect16; slot i is the sample whose packet lane carries
 * id i), and with shadows whether each sample's shadow ray is blocked. */
typedef enum { SENSIM_CUDA_OFF, SENSIM_CUDA_REPLAY } sensim_cuda_mode;
typedef struct sensim_cuda_batch {
    sensim_cuda_mode mode;
    size_t n, cap;
    sg_hit *hits;
    uint8_t *occ; /* the sample's shadow ray is blocked (shadows only) */
    _Atomic int bad_id; /* a lane's id was >= n (set by the hooks, read after the pass) */
} sensim_cuda_batch;

/* A lidar's constant tables on the device (sg_lidar's dir, toff, ra, rb,
 * rn), uploaded at its first scan and kept while scans of the same lidar
 * follow (serial: the lidar's unique number). */
typedef struct sensim_cuda_lidar_tables {
    unsigned long long serial;
    sensim_cuda_ptr buf[5];
} sensim_cuda_lidar_tables;

/* The hits of a scan, compacted (sensim_cuda_lidar_trace): beam b's hit
 * sub-rays are hit[off[b] .. off[b] + count[b]), in sub-ray order. Owned
 * by the scene, valid until its next scan. */
typedef struct sensim_cuda_lidar_hits {
    const sg_lhit *hit;
    const size_t *off;
    const uint16_t *count;
    size_t nhit;
} sensim_cuda_lidar_hits;

typedef struct sensim_cuda_scene {
    sensim_cuda *cu;
    sensim_cuda_lidar_tables lidar; /* the last lidar's tables */
    sensim_cuda_ptr scan_buf[6];    /* per-ray records, counts, group sums, compacted hits, poses, block sums */
    size_t scan_cap[6];             /* their sizes, bytes */
    sensim_cuda_ptr cam_buf[4];     /* camera: occluded flags, sg_shade's obj, kt, kq */
    size_t cam_cap[4];
    sg_lhit *hit;                   /* host copies of a scan's results */
    size_t *off;
    uint16_t *count;
    size_t cap_hit, cap_beam;
    size_t chunk; /* rays per launch at most (2^24; tests lower it) */
    sensim_cuda_batch batch;    /* a camera frame's hits */
    sg_scene dev;               /* the scene with device addresses */
    sensim_cuda_ptr buf[6];     /* its arrays */
    sensim_cuda_ptr rays, hits; /* batch buffers of cap rays */
    size_t cap;
    size_t bytes;   /* of the scene's arrays */
    char info[320]; /* "DEVICE, sm_XY" */
} sensim_cuda_scene;

/* sensim_cuda_create, then sensim_cuda_check_arithmetic: a device the
 * backend may use, or NULL with the error set. */
sensim_cuda *sensim_cuda_open(void);
/* Uploads host's arrays (host is borrowed for the call) to the device of
 * cu, which the scene takes over (destroyed on failure too). NULL with the
 * error set. */
sensim_cuda_scene *sensim_cuda_scene_create(sensim_cuda *cu, const sg_scene *host);
void sensim_cuda_scene_destroy(sensim_cuda_scene *cs);
/* The closest hits of rays[0..n-1] into hits (sg_bvh.h's sg_trace on the
 * device), in launches of at most 2^24 rays. One batch at a time. */
sensim_status sensim_cuda_scene_trace(sensim_cuda_scene *cs, const sg_ray *rays, sg_hit *hits, size_t n);

/* A lidar scan on the device (render/gpu/sg_scan.h): L describes it with
 * host pointers (its tables, and a pose table of npose poses), serial is
 * the lidar's unique number (its tables are uploaded once). The rays are
 * made, traced and their hits compacted on the device, in launches of at
 * most 2^24 rays; only the hits and a count per beam are downloaded, into
 * *out (owned by cs). */
sensim_status sensim_cuda_lidar_trace(sensim_cuda_scene *cs, const sg_lidar *L, unsigned long long serial,
                                      size_t npose, sensim_cuda_lidar_hits *out);

/* A camera frame's primary rays on the device: made (sg_raygen.h's
 * sg_camera_ray; G with host pointers, its pose knots uploaded here),
 * traced, and their hits downloaded into the batch, which then replays them
 * (slot pix * spp + k), in launches of at most 2^24 rays. With
 * sh->shadows (sh with host pointers, nkey keyframes in all, uploaded
 * here), the lit hits' shadow rays are made and traced there too
 * (sg_shade.h's sg_camera_trace) and the batch's occ[slot] downloaded. */
sensim_status sensim_cuda_camera_trace(sensim_cuda_scene *cs, const sg_camera *G, const sg_shade *sh, size_t nkey);

/* Turns the packet hook off. */
void sensim_cuda_batch_end(sensim_cuda_scene *cs);

/* The packet hook (render/backend.c's dispatch for CUDA): writes the
 * batch's hits of the valid lanes (slot ray.id) back as rtcIntersect16
 * would (the twin's own lane code). */
struct RTCRayHit16;
void sensim_cuda_intersect16(sensim_cuda_scene *cs, const int *valid, struct RTCRayHit16 *rh);

#pragma GCC visibility pop

#endif
