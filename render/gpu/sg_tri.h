/* sg_tri.h - watertight ray/triangle intersection (Woop, Benthin and Wald,
 * "Watertight Ray/Triangle Intersection", JCGT 2(1), 2013), shared by the
 * CPU twin and the CUDA kernels (see sg_types.h for the rules: no libm, no
 * contraction).
 *
 * The ray is sheared so that it runs along +z (kz: the dimension of the
 * largest |dir| component); the 2D edge functions U, V, W of the sheared
 * triangle then decide the hit with no gap on shared edges or vertices.
 * A zero edge function is recomputed in double (sec. 4 of the paper), so
 * that edges through the ray are decided consistently. */
#ifndef SENSIM_SG_TRI_H
#define SENSIM_SG_TRI_H

#include "sg_types.h"

/* A ray prepared for traversal: the shear constants and, for the slab
 * tests, the reciprocal direction. */
typedef struct sg_rayp {
    float org[3], dir[3];
    float idir[3];           /* 1 / dir, +1e30 for a zero component (no NaN in slabs) */
    int nearx, neary, nearz; /* index in a box (lower xyz, upper xyz) of the entry planes */
    int kx, ky, kz;
    float sx, sy, sz;
    float tnear;
} sg_rayp;

SENSIM_HD static inline float sg_absf(float x) { return x < 0 ? -x : x; }
SENSIM_HD static inline float sg_minf(float a, float b) { return a < b ? a : b; }
SENSIM_HD static inline float sg_maxf(float a, float b) { return a > b ? a : b; }

/* Prepares origin o and direction d (not all zero). */
SENSIM_HD static inline void sg_rayp_make(sg_rayp *r, const float o[3], const float d[3], float tnear)
{
    int kz = 0;
    if (sg_absf(d[1]) > sg_absf(d[kz]))
        kz = 1;
    if (sg_absf(d[2]) > sg_absf(d[kz]))
        kz = 2;
    int kx = kz == 2 ? 0 : kz + 1, ky = kx == 2 ? 0 : kx + 1;
    if (d[kz] < 0) { /* keep the triangle's winding in the sheared plane */
        int k = kx;
        kx = ky;
        ky = k;
    }
    for (int a = 0; a < 3; a++) {
        r->org[a] = o[a];
        r->dir[a] = d[a];
        r->idir[a] = d[a] != 0 ? 1.0f / d[a] : 1e30f;
    }
    /* The slab an axis enters by: the lower plane when the direction
     * (its reciprocal as used) is positive. */
    r->nearx = r->idir[0] >= 0 ? 0 : 3;
    r->neary = r->idir[1] >= 0 ? 1 : 4;
    r->nearz = r->idir[2] >= 0 ? 2 : 5;
    r->kx = kx;
    r->ky = ky;
    r->kz = kz;
    r->sx = d[kx] / d[kz];
    r->sy = d[ky] / d[kz];
    r->sz = 1.0f / d[kz];
    r->tnear = tnear;
}

/* A candidate hit: t, and the scaled barycentrics kept until the end
 * (u = V / det, v = W / det are computed once, for the closest hit). */
typedef struct sg_cand {
    float t, V, W, det;
} sg_cand;

/* Tests triangle (v0, v1, v2) against r with tnear < t <= tfar; on a hit
 * fills *c and returns 1. */
SENSIM_HD static inline int sg_tri_intersect(const sg_rayp *r, const float *v0, const float *v1, const float *v2,
                                             float tfar, sg_cand *c)
{
    const int kx = r->kx, ky = r->ky, kz = r->kz;
    const float A[3] = {v0[0] - r->org[0], v0[1] - r->org[1], v0[2] - r->org[2]};
    const float B[3] = {v1[0] - r->org[0], v1[1] - r->org[1], v1[2] - r->org[2]};
    const float C[3] = {v2[0] - r->org[0], v2[1] - r->org[1], v2[2] - r->org[2]};
    const float ax = A[kx] - r->sx * A[kz], ay = A[ky] - r->sy * A[kz];
    const float bx = B[kx] - r->sx * B[kz], by = B[ky] - r->sy * B[kz];
    const float cx = C[kx] - r->sx * C[kz], cy = C[ky] - r->sy * C[kz];
    float U = cx * by - cy * bx, V = ax * cy - ay * cx, W = bx * ay - by * ax;
    if (U == 0.0f || V == 0.0f || W == 0.0f) {
        /* Products of floats are exact in double: the sign is right. */
        double cxby = (double)cx * (double)by, cybx = (double)cy * (double)bx;
        double axcy = (double)ax * (double)cy, aycx = (double)ay * (double)cx;
        double bxay = (double)bx * (double)ay, byax = (double)by * (double)ax;
        U = (float)(cxby - cybx);
        V = (float)(axcy - aycx);
        W = (float)(bxay - byax);
    }
    if ((U < 0.0f || V < 0.0f || W < 0.0f) && (U > 0.0f || V > 0.0f || W > 0.0f))
        return 0;
    float det = U + V + W;
    if (det == 0.0f)
        return 0;
    const float az = r->sz * A[kz], bz = r->sz * B[kz], cz = r->sz * C[kz];
    float T = U * az + V * bz + W * cz;
    if (det < 0.0f) { /* negation is exact */
        det = -det;
        T = -T;
        V = -V;
        W = -W;
    }
    if (!(T > r->tnear * det) || !(T <= tfar * det))
        return 0;
    const float t = T / det;
    if (!(t > r->tnear) || !(t <= tfar))
        return 0;
    c->t = t;
    c->V = V;
    c->W = W;
    c->det = det;
    return 1;
}

/* Embree's geometric normal (v1 - v0) x (v2 - v0), unnormalized. */
SENSIM_HD static inline void sg_tri_normal(const float *v0, const float *v1, const float *v2, float ng[3])
{
    const float e1[3] = {v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]};
    const float e2[3] = {v2[0] - v0[0], v2[1] - v0[1], v2[2] - v0[2]};
    ng[0] = e1[1] * e2[2] - e1[2] * e2[1];
    ng[1] = e1[2] * e2[0] - e1[0] * e2[2];
    ng[2] = e1[0] * e2[1] - e1[1] * e2[0];
}

#endif
