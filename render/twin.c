/* The CPU twin (issue 18): the shared traversal headers of render/gpu/
 * compiled as C11 (with -ffp-contract=off, like the kernels' -fmad=false),
 * called in place of rtcIntersect16 by the lidar and camera loops. */
#include <math.h>

#include "gpu/sg_bvh.h"
#include "twin.h"

void sensim_twin_intersect16(const sensim_twin *t, const int *valid, struct RTCRayHit16 *rh)
{
    for (int j = 0; j < 16; j++) {
        if (!valid[j])
            continue;
        sg_ray r;
        sg_hit h;
        r.org[0] = rh->ray.org_x[j];
        r.org[1] = rh->ray.org_y[j];
        r.org[2] = rh->ray.org_z[j];
        r.dir[0] = rh->ray.dir_x[j];
        r.dir[1] = rh->ray.dir_y[j];
        r.dir[2] = rh->ray.dir_z[j];
        r.tnear = rh->ray.tnear[j];
        r.tfar = rh->ray.tfar[j];
        r.time = rh->ray.time[j];
        sg_trace(&t->view, &r, &h, 0);
        if (h.geom == SG_INVALID)
            continue; /* as Embree: a miss leaves the record alone */
        rh->ray.tfar[j] = h.t;
        rh->hit.Ng_x[j] = h.ng[0];
        rh->hit.Ng_y[j] = h.ng[1];
        rh->hit.Ng_z[j] = h.ng[2];
        rh->hit.u[j] = h.u;
        rh->hit.v[j] = h.v;
        rh->hit.primID[j] = h.prim;
        rh->hit.geomID[j] = h.geom;
        rh->hit.instID[0][j] = h.inst;
    }
}

void sensim_twin_occluded16(const sensim_twin *t, const int *valid, struct RTCRay16 *r)
{
    for (int j = 0; j < 16; j++) {
        if (!valid[j])
            continue;
        sg_ray q = {{r->org_x[j], r->org_y[j], r->org_z[j]},
                    r->tnear[j],
                    {r->dir_x[j], r->dir_y[j], r->dir_z[j]},
                    r->tfar[j],
                    r->time[j]};
        sg_hit h;
        sg_trace(&t->view, &q, &h, 0);
        if (h.geom != SG_INVALID)
            r->tfar[j] = -INFINITY;
    }
}

void sensim_twin_trace(const sensim_twin *t, const sg_ray *rays, sg_hit *hits, size_t n)
{
#pragma omp parallel for schedule(dynamic, 256)
    for (size_t i = 0; i < n; i++)
        sg_trace(&t->view, rays, hits, i);
}
