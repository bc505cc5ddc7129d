/* Raw Embree for the renderer benches (not installed): what sensim's own
 * tracing is measured against. */
#ifndef SENSIM_BENCH_EMBREE_H
#define SENSIM_BENCH_EMBREE_H

#include <embree3/rtcore.h>

#include "bench.h"

/* n rays traced in coherent packets of 16 on all threads: ray i starts at
 * the 3 floats at org + i org_step bytes, goes along dir + i dir_step, up
 * to the float at tfar + i tfar_step (a step of 0 repeats one value). The
 * hits are counted in *hits; returns the wall seconds. */
static inline double bench_embree16(RTCScene scene, long n, const float *org, size_t org_step, const float *dir,
                                    size_t dir_step, const float *tfar, size_t tfar_step, long *hits)
{
#define BENCH_AT(p, step, i) ((const float *)((const char *)(p) + (size_t)(i) * (step)))
    long h = 0;
    double t0 = bench_now();
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : h)
    for (long base = 0; base < n; base += 16) {
        struct RTCIntersectContext ctx;
        rtcInitIntersectContext(&ctx);
        ctx.flags = RTC_INTERSECT_CONTEXT_FLAG_COHERENT;
        struct RTCRayHit16 rh;
        _Alignas(64) int valid[16]; /* Embree wants the mask 64-byte aligned */
        for (int j = 0; j < 16; j++) {
            long i = base + j < n ? base + j : base;
            const float *o = BENCH_AT(org, org_step, i), *d = BENCH_AT(dir, dir_step, i);
            valid[j] = base + j < n ? -1 : 0;
            rh.ray.org_x[j] = o[0];
            rh.ray.org_y[j] = o[1];
            rh.ray.org_z[j] = o[2];
            rh.ray.dir_x[j] = d[0];
            rh.ray.dir_y[j] = d[1];
            rh.ray.dir_z[j] = d[2];
            rh.ray.tnear[j] = 0;
            rh.ray.tfar[j] = *BENCH_AT(tfar, tfar_step, i);
            rh.ray.time[j] = 0;
            rh.ray.mask[j] = 0xFFFFFFFFu;
            rh.ray.id[j] = (unsigned)j;
            rh.ray.flags[j] = 0;
            rh.hit.geomID[j] = RTC_INVALID_GEOMETRY_ID;
            rh.hit.instID[0][j] = RTC_INVALID_GEOMETRY_ID;
        }
        rtcIntersect16(valid, scene, &ctx, &rh);
        for (int j = 0; j < 16 && base + j < n; j++)
            h += rh.hit.geomID[j] != RTC_INVALID_GEOMETRY_ID;
    }
    *hits = h;
    return bench_now() - t0;
#undef BENCH_AT
}

#endif
