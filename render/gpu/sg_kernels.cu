/* The renderer's CUDA kernels: thin extern "C" entry points over the shared
 * headers of render/gpu/, which the CPU twin compiles as C11, so that the
 * device computes every ray with the very code the twin tests everywhere.
 *
 * Built to PTX by clang-16 in CUDA device-only mode without CUDA headers or
 * libdevice (Makefile, `make gpu`): -nocudainc -nocudalib, hence the few
 * declarations below that cuda_runtime.h would give. The flags keep the
 * arithmetic IEEE and identical to the host's: -ffp-contract=off (mul.rn
 * and add.rn, which ptxas may not fuse, instead of fma.rn),
 * -fno-gpu-flush-denormals-to-zero (no .ftz) and
 * -fno-cuda-approx-transcendentals, with division and square root correctly
 * rounded (div.rn, sqrt.rn; LLVM's NVPTX defaults). The tests read the PTX
 * for fma, .ftz and .approx (tests/test_cuda.c). */

/* What the CUDA runtime headers would declare: the execution-space
 * attributes and threadIdx/blockIdx/blockDim (clang's own header). */
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#include <__clang_cuda_builtin_vars.h>

#include "sg_bvh.h"
#include "sg_probe.h"
#include "sg_scan.h"
#include "sg_shade.h"

/* This thread's index in a one-dimensional launch. */
static __device__ inline unsigned long long sg_thread_index(void)
{
    return (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
}

/* The arithmetic probe (sg_probe.h): n input triples in, SG_PROBE_OUT
 * result bits per triple out. */
extern "C" __global__ void sg_probe_kernel(const float *in, unsigned *out, unsigned long long n)
{
    unsigned long long i = sg_thread_index();
    if (i < n)
        sg_probe_eval(in + 3 * i, out + SG_PROBE_OUT * i);
}

/* Closest hits of rays[0..n-1] in the flattened scene s (sg_bvh.h's
 * sg_trace; s holds device pointers, passed by value). */
extern "C" __global__ void sg_trace_kernel(sg_scene s, const sg_ray *rays, sg_hit *hits, unsigned long long n)
{
    unsigned long long i = sg_thread_index();
    if (i < n)
        sg_trace(&s, rays, hits, (size_t)i);
}

/* Occlusion of rays[0..n-1] (sg_occluded: any hit, the walk stops at the
 * first): hits[i].geom is 0 for an occluded ray, SG_INVALID otherwise. */
extern "C" __global__ void sg_occluded_kernel(sg_scene s, const sg_ray *rays, sg_hit *hits, unsigned long long n)
{
    unsigned long long i = sg_thread_index();
    if (i < n)
        hits[i].geom = sg_occluded(&s, rays, (size_t)i) ? 0u : SG_INVALID;
}

/* A lidar scan (sg_scan.h): rays first .. first + n - 1 made (sg_raygen.h,
 * L holds device pointers), traced and recorded in rec[0 .. n). */
extern "C" __global__ void sg_scan_trace_kernel(sg_scene s, sg_lidar L, unsigned long long first,
                                                unsigned long long n, sg_lhit *rec)
{
    unsigned long long i = sg_thread_index();
    if (i < n)
        sg_scan_trace(&s, &L, first, i, rec);
}

/* Hits per beam of nbeam beams (nrays records each), ngroup threads. */
extern "C" __global__ void sg_scan_count_kernel(const sg_lhit *rec, unsigned long long nrays, unsigned long long nbeam,
                                                unsigned long long ngroup, uint16_t *count, uint32_t *sum)
{
    unsigned long long g = sg_thread_index();
    if (g < ngroup)
        sg_scan_count(rec, (uint32_t)nrays, nbeam, g, count, sum);
}

/* Offsets within blocks of groups, nblock threads. */
extern "C" __global__ void sg_scan_block_kernel(uint32_t *sum, unsigned long long ngroup, unsigned long long nblock,
                                                uint32_t *block)
{
    unsigned long long k = sg_thread_index();
    if (k < nblock)
        sg_scan_block(sum, ngroup, k, block);
}

/* The blocks' offsets: one thread. */
extern "C" __global__ void sg_scan_offsets_kernel(uint32_t *block, unsigned long long nblock)
{
    if (sg_thread_index() == 0)
        sg_scan_offsets(block, nblock);
}

/* The hits copied to their offsets, ngroup threads. */
extern "C" __global__ void sg_scan_compact_kernel(const sg_lhit *rec, unsigned long long nrays,
                                                  unsigned long long nbeam, unsigned long long ngroup,
                                                  const uint32_t *sum, const uint32_t *block, sg_lhit *out)
{
    unsigned long long g = sg_thread_index();
    if (g < ngroup)
        sg_scan_compact(rec, (uint32_t)nrays, nbeam, g, sum, block, out);
}

/* A camera frame's samples first .. first + n - 1 (sample index pix spp +
 * k): rays made (sg_raygen.h; G's knots a device pointer) and traced into
 * hits[0 .. n); with S.shadows, the shadow rays of the lit hits made and
 * traced too, occ[0 .. n) set when blocked (sg_shade.h). */
extern "C" __global__ void sg_camera_kernel(sg_scene s, sg_camera G, sg_shade S, unsigned long long first,
                                            unsigned long long n, sg_hit *hits, uint8_t *occ)
{
    unsigned long long i = sg_thread_index();
    if (i < n)
        sg_camera_trace(&s, &G, &S, first + i, &hits[i], S.shadows ? &occ[i] : (uint8_t *)0);
}
