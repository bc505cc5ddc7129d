/* The CPU twin (issue 18): the shared traversal headers of render/gpu/
 * compiled as C11 (with -ffp-contract=off, like the kernels' -fmad=false),
 * called in place of rtcIntersect16 by the lidar and camera loops. */
#include "gpu/sg_bvh.h"
#include "twin.h"

void sensim_twin_intersect16(const sensim_twin *t, const int *valid, struct RTCRayHit16 *rh)
{
    for (int j = 0; j < 16; j++) {
        if (!valid[j])
            continue;
        sg_ray r;
        sg_hit h;
        sensim_twin_lane_ray(&rh->ray, j, &r);
        sg_trace(&t->view, &r, &h, 0);
        sensim_twin_lane_hit(rh, j, &h);
    }
}

void sensim_twin_occluded16(const sensim_twin *t, const int *valid, struct RTCRay16 *r)
{
    for (int j = 0; j < 16; j++) {
        if (!valid[j])
            continue;
        sg_ray q;
        sg_hit h;
        sensim_twin_lane_ray(r, j, &q);
        sg_trace(&t->view, &q, &h, 0);
        sensim_twin_lane_occluded(r, j, &h);
    }
}

void sensim_twin_trace(const sensim_twin *t, const sg_ray *rays, sg_hit *hits, size_t n)
{
#pragma omp parallel for schedule(dynamic, 256)
    for (size_t i = 0; i < n; i++)
        sg_trace(&t->view, rays, hits, i);
}
