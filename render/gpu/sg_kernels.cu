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
