/* The CPU twin of the CUDA path (issue 18): the scene flattened into the
 * layout of render/gpu/sg_types.h and traced by the shared headers compiled
 * as C11. Internal to the render files (and tests); not installed. */
#ifndef SENSIM_RENDER_TWIN_H
#define SENSIM_RENDER_TWIN_H

#include <embree3/rtcore.h>

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
