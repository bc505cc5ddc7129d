/* The CPU twin of the CUDA path (issue 18): the scene flattened into the
 * layout of render/gpu/sg_types.h and traced by the shared headers compiled
 * as C11. Internal to the render files (and tests); not installed. */
#ifndef SENSIM_RENDER_TWIN_H
#define SENSIM_RENDER_TWIN_H

#include <embree3/rtcore.h>
#include <math.h>

#include "gpu/sg_types.h"
#include "sensim/render.h"

#pragma GCC visibility push(hidden)

/* Owns the flattened arrays; `view` points into them. */
typedef struct sensim_twin {
    sg_scene view;
    sg_node *node;
    sg_tri *tri;
    sg_blas *blas;
    sg_inst *inst;
    float *xfm, *ixfm;
    size_t bytes; /* of the arrays */
} sensim_twin;

/* Builds the twin of committed scene s with Embree's rtcBuildBVH: the
 * static objects' triangles baked in world space as Embree has them, each
 * mesh of an instance or moving object in its own space, a top level over
 * the instances. threads: the builder's thread count (0: Embree's
 * default). The output does not depend on it: leaf items are sorted, and
 * the tree is flattened depth first from the root. NULL with the error
 * set on failure. */
sensim_twin *sensim_twin_build(const sensim_scene *s, int threads);
void sensim_twin_destroy(sensim_twin *t);

/* Lane j of a packet as the shared code's ray. */
static inline void sensim_twin_lane_ray(const struct RTCRay16 *r, int j, sg_ray *q)
{
    q->org[0] = r->org_x[j];
    q->org[1] = r->org_y[j];
    q->org[2] = r->org_z[j];
    q->dir[0] = r->dir_x[j];
    q->dir[1] = r->dir_y[j];
    q->dir[2] = r->dir_z[j];
    q->tnear = r->tnear[j];
    q->tfar = r->tfar[j];
    q->time = r->time[j];
}

/* Hit h into lane j as rtcIntersect16 reports it (a miss leaves the
 * record alone, as Embree). */
static inline void sensim_twin_lane_hit(struct RTCRayHit16 *rh, int j, const sg_hit *h)
{
    if (h->geom == SG_INVALID)
        return;
    rh->ray.tfar[j] = h->t;
    rh->hit.Ng_x[j] = h->ng[0];
    rh->hit.Ng_y[j] = h->ng[1];
    rh->hit.Ng_z[j] = h->ng[2];
    rh->hit.u[j] = h->u;
    rh->hit.v[j] = h->v;
    rh->hit.primID[j] = h->prim;
    rh->hit.geomID[j] = h->geom;
    rh->hit.instID[0][j] = h->inst;
}


/* Traces the valid lanes of a packet like rtcIntersect16 (closest hit, the
 * hit fields Embree sets: tfar, Ng, u, v, primID, geomID, instID[0]). */
void sensim_twin_intersect16(const sensim_twin *t, const int *valid, struct RTCRayHit16 *rh);

/* Like rtcOccluded16: tfar set to -inf for a valid lane whose ray hits
 * anything in (tnear, tfar]. */
void sensim_twin_occluded16(const sensim_twin *t, const int *valid, struct RTCRay16 *r);

/* Closest hits of rays[0..n) into hits (OpenMP over rays; each ray's hit
 * depends on nothing else). */
void sensim_twin_trace(const sensim_twin *t, const sg_ray *rays, sg_hit *hits, size_t n);

#pragma GCC visibility pop

#endif
