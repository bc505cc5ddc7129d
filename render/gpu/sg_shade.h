/* sg_shade.h - the camera's shading normal and shadow ray at a primary hit,
 * shared by render/camera.c (every backend, compiled as C11) and the CUDA
 * camera kernel (sg_kernels.cu), which traces the shadow rays on the
 * device right after the primary hits; so the host, shading a sample once,
 * and the device, deciding whether it is in shadow, use the same normal
 * and the same shadow origin bit for bit (rules in sg_types.h: no libm, no
 * contraction).
 *
 * The normal is sensim_scene_fill_hit_parts's (render/scene.c), operation
 * for operation: the geometric normal, for an instance hit divided by the
 * object's scale and rotated by its orientation at the sample's time
 * (sensim_scene_object_pose_at: keyframes interpolated by slerp, here with
 * acos as atan2(sqrt((1 - d)(1 + d)), d) and sin from sg_math.h instead of
 * libm's), normalized, turned against the ray. */
#ifndef SENSIM_SG_SHADE_H
#define SENSIM_SG_SHADE_H

#include "sg_bvh.h"
#include "sg_raygen.h"

/* A scene object as the normal needs it: its scale and, when static, its
 * orientation; keyframed (nkey > 0), times kt[key .. key + nkey) and
 * orientations kq[4 key ..] of sg_shade. */
typedef struct sg_shade_obj {
    double scale[3];
    double q[4];
    uint32_t nkey, key;
} sg_shade_obj;

/* What the camera's shading needs of the scene: objects indexed by scene
 * object (the geomID of a world triangle, the instID of an instance hit;
 * sensim_scene's geom_object is the identity). Host pointers on the host,
 * device pointers in a kernel. */
typedef struct sg_shade {
    const sg_shade_obj *obj;
    const double *kt, *kq;
    uint32_t nobj, shadows;
    double sun[3]; /* unit, towards the sun */
} sg_shade;

/* sensim_quat_slerp (sensim/linalg.h) without libm. */
SENSIM_HD static inline void sg_quat_slerp(const double *a, const double *b0, double s, double *out)
{
    double b[4] = {b0[0], b0[1], b0[2], b0[3]};
    double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    if (d < 0) {
        for (int k = 0; k < 4; k++)
            b[k] = -b[k];
        d = -d;
    }
    if (d > 0.9995) { /* sensim_quat_nlerp, then sensim_quat_normalize */
        const double sb = d < 0 ? -s : s;
        double q[4];
        for (int k = 0; k < 4; k++)
            q[k] = a[k] * (1 - s) + b[k] * sb;
        const double n = sg_sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        for (int k = 0; k < 4; k++)
            out[k] = q[k] / n;
        return;
    }
    const double th = sg_atan2(sg_sqrt((1.0 - d) * (1.0 + d)), d), st = sg_sin(th);
    const double wa = sg_sin((1 - s) * th) / st, wb = sg_sin(s * th) / st;
    for (int k = 0; k < 4; k++)
        out[k] = wa * a[k] + wb * b[k];
}

/* Object o's orientation at time t (sensim_scene_object_pose_at's q). */
SENSIM_HD static inline void sg_shade_object_q(const sg_shade *sh, const sg_shade_obj *o, double t, double *q)
{
    const double *kt = sh->kt + o->key, *kq = sh->kq + 4 * (size_t)o->key;
    const double *r;
    if (o->nkey == 0)
        r = o->q;
    else if (t <= kt[0])
        r = kq;
    else if (t >= kt[o->nkey - 1])
        r = kq + 4 * (size_t)(o->nkey - 1);
    else {
        uint32_t lo = 0, hi = o->nkey - 1;
        while (hi - lo > 1) {
            const uint32_t mid = (lo + hi) / 2;
            if (kt[mid] <= t)
                lo = mid;
            else
                hi = mid;
        }
        const double u = (t - kt[lo]) / (kt[hi] - kt[lo]);
        sg_quat_slerp(kq + 4 * (size_t)lo, kq + 4 * (size_t)hi, u, q);
        return;
    }
    for (int k = 0; k < 4; k++)
        q[k] = r[k];
}

/* The unit shading normal of a hit (geom, inst, geometric normal ng as
 * traced) of a ray with direction dir (as traced) at time t, facing the
 * ray; returns the scene object. */
SENSIM_HD static inline uint32_t sg_shade_normal(const sg_shade *sh, uint32_t geom, uint32_t inst, const float *ng,
                                                 const float *dir, double t, double *nrm)
{
    double n[3] = {ng[0], ng[1], ng[2]};
    const double d[3] = {dir[0], dir[1], dir[2]};
    uint32_t obj = geom;
    if (inst != SG_INVALID) {
        obj = inst;
        const sg_shade_obj *o = &sh->obj[obj];
        double q[4];
        const double m[3] = {n[0] / o->scale[0], n[1] / o->scale[1], n[2] / o->scale[2]};
        sg_shade_object_q(sh, o, t, q);
        sg_quat_rotate(q, m, n);
    }
    const double l = sg_sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (l > 0) {
        const double il = 1 / l;
        for (int k = 0; k < 3; k++)
            nrm[k] = n[k] * il;
    } else {
        for (int k = 0; k < 3; k++)
            nrm[k] = d[k] * -1;
    }
    if (nrm[0] * d[0] + nrm[1] * d[1] + nrm[2] * d[2] > 0)
        for (int k = 0; k < 3; k++)
            nrm[k] = nrm[k] * -1;
    return obj;
}

/* The cosine of the sun to the normal (lit when > 0). */
SENSIM_HD static inline double sg_shade_ndl(const sg_shade *sh, const double *nrm)
{
    return nrm[0] * sh->sun[0] + nrm[1] * sh->sun[1] + nrm[2] * sh->sun[2];
}

/* The shadow ray of a lit hit at distance dist along org + s dir (the
 * primary ray in double, before rounding to float): from the hit point
 * offset along the normal by 1e-4 max(1, dist), towards the sun. */
SENSIM_HD static inline void sg_shade_shadow_ray(const sg_shade *sh, const double *org, const double *dir, double dist,
                                                 const double *nrm, float time, sg_ray *r)
{
    const double eps = 1e-4 * (dist > 1.0 ? dist : 1.0);
    for (int k = 0; k < 3; k++) {
        const double o = org[k] + dir[k] * dist;
        r->org[k] = (float)(o + nrm[k] * eps);
        r->dir[k] = (float)sh->sun[k];
    }
    r->tnear = 0.0f;
    r->tfar = __builtin_inff();
    r->time = time;
}

/* The CUDA camera's work for sample idx (pixel idx / spp, sample idx %
 * spp) of a frame: its primary ray made (sg_raygen.h) and traced into
 * *hit; with sh->shadows, *occ = 1 when the hit faces the sun and its
 * shadow ray is blocked (any hit), else 0. The host then shades the
 * sample once (render/camera.c) with the same normal. */
SENSIM_HD static inline void sg_camera_trace(const sg_scene *s, const sg_camera *G, const sg_shade *sh, uint64_t idx,
                                             sg_hit *hit, uint8_t *occ)
{
    sg_ray r;
    double org[3], wd[3], cd[3], ts;
    sg_camera_ray_world(G, idx / G->spp, (uint32_t)(idx % G->spp), &r, org, wd, cd, &ts);
    sg_trace(s, &r, hit, 0);
    if (!sh->shadows)
        return;
    *occ = 0;
    if (hit->geom == SG_INVALID)
        return;
    double nrm[3];
    (void)sg_shade_normal(sh, hit->geom, hit->inst, hit->ng, r.dir, ts, nrm);
    if (!(sg_shade_ndl(sh, nrm) > 0))
        return;
    sg_ray sr;
    sg_shade_shadow_ray(sh, org, wd, hit->t, nrm, r.time, &sr);
    *occ = (uint8_t)sg_occluded(s, &sr, 0);
}

#endif
