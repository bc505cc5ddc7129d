/* sg_bvh.h - stack traversal of the flattened two-level BVH (sg_types.h),
 * shared by the CPU twin and the CUDA kernels: closest hit of a ray.
 *
 * Traversal is Aila and Laine's while-while loop ("Understanding the
 * Efficiency of Ray Traversal on GPUs", HPG 2009): an inner loop descends
 * interior nodes (both child boxes tested, the nearer taken, the farther
 * pushed), a second loop runs the leaf's items, then the stack is popped.
 * Box tests are the slab test with the far distance scaled by 1 + 2 gamma(3)
 * (Ize, "Robust BVH Ray Traversal", JCGT 2(2), 2013), so rounding never
 * culls a box the ray touches: with the watertight triangle test
 * (sg_tri.h) no ray slips through a shared edge.
 *
 * Instances: the ray goes to object space by the inverse of the instance's
 * transform (for a moving instance: the two time steps around the ray's
 * time interpolated linearly, then inverted, as Embree does); its direction
 * is not renormalized, so t is the same in both spaces. */
#ifndef SENSIM_SG_BVH_H
#define SENSIM_SG_BVH_H

#include "sg_tri.h"

/* 1 + 2 gamma(3), gamma(n) = n eps / (1 - n eps), eps = 2^-24. */
#define SG_SLAB_PAD 1.0000003576278687f

/* Slab test of box b (lower xyz, upper xyz) for tnear <= t <= tfar; *tmin
 * gets the entry distance. */
SENSIM_HD static inline int sg_box_hit(const float *b, const sg_rayp *r, float tfar, float *tmin)
{
    /* The entry and exit planes of each slab are known from the
     * direction's signs (sg_rayp), so no min/max per axis: the same values
     * as min/max of the two, (b - o) * idir being monotonic in b. */
    const float x0 = (b[r->nearx] - r->org[0]) * r->idir[0], x1 = (b[3 - r->nearx] - r->org[0]) * r->idir[0];
    const float y0 = (b[r->neary] - r->org[1]) * r->idir[1], y1 = (b[5 - r->neary] - r->org[1]) * r->idir[1];
    const float z0 = (b[r->nearz] - r->org[2]) * r->idir[2], z1 = (b[7 - r->nearz] - r->org[2]) * r->idir[2];
    const float lo = sg_maxf(sg_maxf(x0, y0), sg_maxf(z0, r->tnear));
    const float hi = sg_minf(sg_minf(x1, y1), z1) * SG_SLAB_PAD;
    *tmin = lo;
    return lo <= sg_minf(hi, tfar);
}

/* The closest hit so far: candidate, triangle index, instance index. */
typedef struct sg_best {
    sg_cand c;
    uint32_t tri;  /* SG_INVALID: none yet */
    uint32_t inst; /* index into sg_scene.inst, SG_INVALID: world */
} sg_best;

/* One step of the inner loop at interior node `n`: the next reference to
 * visit (the nearer child hit), the farther one pushed; returns 0 when
 * neither child is hit. */
SENSIM_HD static inline int sg_node_step(const sg_node *n, const sg_rayp *r, float tfar, int32_t *ref, uint32_t *cnt,
                                         int32_t *stack, uint32_t *scnt, float *stmin, int *sp)
{
    float t0, t1;
    const int h0 = sg_box_hit(n->box[0], r, tfar, &t0), h1 = sg_box_hit(n->box[1], r, tfar, &t1);
    if (h0 && h1) {
        const int near = t1 < t0;
        stack[*sp] = n->child[1 - near];
        scnt[*sp] = n->count[1 - near];
        stmin[*sp] = near ? t0 : t1;
        (*sp)++;
        *ref = n->child[near];
        *cnt = n->count[near];
        return 1;
    }
    if (h0 || h1) {
        *ref = n->child[h1];
        *cnt = n->count[h1];
        return 1;
    }
    return 0;
}

/* Pops the next reference whose box the ray entered before tfar (the
 * closest hit so far): entries behind it are dropped unvisited. 0 when the
 * stack runs out. */
SENSIM_HD static inline int sg_pop(const int32_t *stack, const uint32_t *scnt, const float *stmin, int *sp, float tfar,
                                   int32_t *ref, uint32_t *cnt)
{
    while (*sp > 0) {
        (*sp)--;
        if (stmin[*sp] <= tfar) {
            *ref = stack[*sp];
            *cnt = scnt[*sp];
            return 1;
        }
    }
    return 0;
}

/* Takes candidate c (t <= best->c.t, from sg_tri_intersect) of triangle
 * `tri` in instance `inst` when it is closer, or on a tie in t when
 * (inst, tri) is the larger pair (world triangles, inst SG_INVALID, last):
 * the closest hit then does not depend on the order the tree is visited in,
 * so the packet traversal (sg_packet.h) gives the same hit as sg_trace.
 * The tie rule keeps the single-ray order's winner (later leaf items, later
 * instances, world after instances). */
SENSIM_HD static inline void sg_best_take(sg_best *best, const sg_cand *c, uint32_t tri, uint32_t inst)
{
    if (best->tri == SG_INVALID || c->t < best->c.t || inst > best->inst || (inst == best->inst && tri > best->tri)) {
        best->c = *c;
        best->tri = tri;
        best->inst = inst;
    }
}

/* The references a walk of one tree has still to visit, their item counts
 * and entry distances. */
typedef struct sg_stack {
    int32_t ref[SG_STACK];
    uint32_t cnt[SG_STACK];
    float tmin[SG_STACK];
} sg_stack;

/* A walk of one tree by one ray: its stack (sp entries) and the current
 * reference, a leaf (~its first item, and cnt items) between calls. The
 * stack lives apart, so that the rest can stay in registers. */
typedef struct sg_walk {
    sg_stack *st;
    int sp;
    int32_t ref;
    uint32_t cnt;
} sg_walk;

/* Descends interior nodes from w->ref until a leaf: 1, or 0 when the ray
 * reaches none before tfar. */
SENSIM_HD static inline int sg_walk_descend(const sg_node *node, sg_walk *w, const sg_rayp *r, float tfar)
{
    sg_stack *st = w->st;
    while (w->ref >= 0) {
        if (!sg_node_step(&node[w->ref], r, tfar, &w->ref, &w->cnt, st->ref, st->cnt, st->tmin, &w->sp) &&
            !sg_pop(st->ref, st->cnt, st->tmin, &w->sp, tfar, &w->ref, &w->cnt))
            return 0;
    }
    return 1;
}

/* Starts w on stack st at the tree's root (count items when it is a leaf):
 * the first leaf r reaches before tfar, 1, or 0 when none. */
SENSIM_HD static inline int sg_walk_first(const sg_node *node, sg_walk *w, sg_stack *st, int32_t root, uint32_t count,
                                          const sg_rayp *r, float tfar)
{
    w->st = st;
    w->sp = 0;
    w->ref = root;
    w->cnt = count;
    return sg_walk_descend(node, w, r, tfar);
}

/* The next leaf, tfar the closest hit now: 1, or 0 when none is left. */
SENSIM_HD static inline int sg_walk_next(const sg_node *node, sg_walk *w, const sg_rayp *r, float tfar)
{
    return sg_pop(w->st->ref, w->st->cnt, w->st->tmin, &w->sp, tfar, &w->ref, &w->cnt) &&
           sg_walk_descend(node, w, r, tfar);
}

/* Closest hit of r in bottom-level tree `blas` (t <= best->c.t), the
 * instance `inst` recorded with it. any: stop at the first hit (an
 * occlusion test), returning 1; else 0. */
SENSIM_HD static inline int sg_blas_walk(const sg_scene *s, uint32_t blas, const sg_rayp *r, uint32_t inst,
                                         sg_best *best, int any)
{
    sg_stack st;
    sg_walk w;
    const sg_blas *b = &s->blas[blas];
    for (int more = sg_walk_first(s->node, &w, &st, b->root, b->count, r, best->c.t); more;
         more = sg_walk_next(s->node, &w, r, best->c.t)) {
        const uint32_t first = (uint32_t)~w.ref;
        for (uint32_t i = first; i < first + w.cnt; i++) {
            const sg_tri *tr = &s->tri[i];
            sg_cand c;
            if (sg_tri_intersect(r, tr->v0, tr->v1, tr->v2, best->c.t, &c)) {
                sg_best_take(best, &c, i, inst);
                if (any)
                    return 1;
            }
        }
    }
    return 0;
}

SENSIM_HD static inline void sg_blas_trace(const sg_scene *s, uint32_t blas, const sg_rayp *r, uint32_t inst,
                                           sg_best *best)
{
    (void)sg_blas_walk(s, blas, r, inst, best, 0);
}

/* Inverse of the 3x4 transform x (column-major, sg_types.h) into y. */
SENSIM_HD static inline void sg_xfm_invert(const float *x, float *y)
{
    /* Rows of the inverse of the linear part: cross products of its
     * columns over the determinant. */
    const float *c0 = x, *c1 = x + 3, *c2 = x + 6;
    const float r0[3] = {c1[1] * c2[2] - c1[2] * c2[1], c1[2] * c2[0] - c1[0] * c2[2], c1[0] * c2[1] - c1[1] * c2[0]};
    const float r1[3] = {c2[1] * c0[2] - c2[2] * c0[1], c2[2] * c0[0] - c2[0] * c0[2], c2[0] * c0[1] - c2[1] * c0[0]};
    const float r2[3] = {c0[1] * c1[2] - c0[2] * c1[1], c0[2] * c1[0] - c0[0] * c1[2], c0[0] * c1[1] - c0[1] * c1[0]};
    const float id = 1.0f / (c0[0] * r0[0] + c0[1] * r0[1] + c0[2] * r0[2]);
    for (int c = 0; c < 3; c++) {
        y[3 * c] = r0[c] * id;
        y[3 * c + 1] = r1[c] * id;
        y[3 * c + 2] = r2[c] * id;
    }
    for (int row = 0; row < 3; row++)
        y[9 + row] = -(y[row] * x[9] + y[3 + row] * x[10] + y[6 + row] * x[11]);
}

/* The world-to-object transform of instance in at ray time `time`. */
SENSIM_HD static inline void sg_inst_world_to_object(const sg_scene *s, const sg_inst *in, float time, float *y)
{
    if (in->steps <= 1) {
        for (int k = 0; k < 12; k++)
            y[k] = s->ixfm[12 * (size_t)in->xfm + k];
        return;
    }
    const float ft = (time < 0.0f ? 0.0f : time > 1.0f ? 1.0f : time) * (float)(in->steps - 1);
    uint32_t i0 = (uint32_t)ft; /* floor for ft >= 0 */
    if (i0 > in->steps - 2)
        i0 = in->steps - 2;
    const float f = ft - (float)i0;
    const float *a = s->xfm + 12 * ((size_t)in->xfm + i0), *b = a + 12;
    float x[12];
    for (int k = 0; k < 12; k++)
        x[k] = (1.0f - f) * a[k] + f * b[k];
    sg_xfm_invert(x, y);
}

/* Origin o and direction d by the world-to-object transform y: oo, od (the
 * direction is not renormalized, so t is the same in both spaces). */
SENSIM_HD static inline void sg_xfm_ray(const float *y, const float *o, const float *d, float oo[3], float od[3])
{
    for (int row = 0; row < 3; row++) {
        oo[row] = y[row] * o[0] + y[3 + row] * o[1] + y[6 + row] * o[2] + y[9 + row];
        od[row] = y[row] * d[0] + y[3 + row] * d[1] + y[6 + row] * d[2];
    }
}

/* Closest hit of r (world space, prepared as rw) among the instances;
 * any: stop at the first hit, returning 1. */
SENSIM_HD static inline int sg_top_walk(const sg_scene *s, const sg_ray *ray, const sg_rayp *rw, sg_best *best,
                                        int any)
{
    sg_stack st;
    sg_walk w;
    for (int more = sg_walk_first(s->node, &w, &st, s->top, s->top_count, rw, best->c.t); more;
         more = sg_walk_next(s->node, &w, rw, best->c.t)) {
        const uint32_t first = (uint32_t)~w.ref;
        for (uint32_t i = first; i < first + w.cnt; i++) {
            const sg_inst *in = &s->inst[i];
            float y[12];
            sg_inst_world_to_object(s, in, ray->time, y);
            float oo[3], od[3];
            sg_xfm_ray(y, ray->org, ray->dir, oo, od);
            sg_rayp ro;
            sg_rayp_make(&ro, oo, od, ray->tnear);
            if (sg_blas_walk(s, in->blas, &ro, i, best, any))
                return 1;
        }
    }
    return 0;
}

SENSIM_HD static inline void sg_top_trace(const sg_scene *s, const sg_ray *ray, const sg_rayp *rw, sg_best *best)
{
    (void)sg_top_walk(s, ray, rw, best, 0);
}

/* The empty closest hit of a ray with far distance tfar. */
SENSIM_HD static inline void sg_best_init(sg_best *best, float tfar)
{
    best->c.t = tfar;
    best->c.V = best->c.W = 0.0f;
    best->c.det = 1.0f;
    best->tri = SG_INVALID;
    best->inst = SG_INVALID;
}

/* The hit record of closest hit best: on a miss geom = prim = inst =
 * SG_INVALID and t = the ray's tfar. */
SENSIM_HD static inline void sg_best_hit(const sg_scene *s, const sg_best *best, sg_hit *h)
{
    h->t = best->c.t;
    if (best->tri == SG_INVALID) {
        h->u = h->v = 0.0f;
        h->ng[0] = h->ng[1] = h->ng[2] = 0.0f;
        h->geom = h->prim = h->inst = SG_INVALID;
        return;
    }
    const sg_tri *tr = &s->tri[best->tri];
    h->u = best->c.V / best->c.det;
    h->v = best->c.W / best->c.det;
    sg_tri_normal(tr->v0, tr->v1, tr->v2, h->ng);
    h->geom = tr->geom;
    h->prim = tr->prim;
    h->inst = best->inst == SG_INVALID ? SG_INVALID : s->inst[best->inst].id;
}

/* 1 when rays[i] hits anything in (tnear, tfar] (any hit: the traversal
 * stops at the first triangle found, as rtcOccluded). */
SENSIM_HD static inline int sg_occluded(const sg_scene *s, const sg_ray *rays, size_t i)
{
    const sg_ray *ray = &rays[i];
    sg_rayp rw;
    sg_rayp_make(&rw, ray->org, ray->dir, ray->tnear);
    sg_best best;
    sg_best_init(&best, ray->tfar);
    return (s->ninst > 0 && sg_top_walk(s, ray, &rw, &best, 1)) ||
           (s->world >= 0 && sg_blas_walk(s, (uint32_t)s->world, &rw, SG_INVALID, &best, 1));
}

/* Closest hit of rays[i]: what a kernel calls per index. On a miss hits[i]
 * has geom = prim = inst = SG_INVALID and t = the ray's tfar. */
SENSIM_HD static inline void sg_trace(const sg_scene *s, const sg_ray *rays, sg_hit *hits, size_t i)
{
    const sg_ray *ray = &rays[i];
    sg_hit *h = &hits[i];
    sg_rayp rw;
    sg_rayp_make(&rw, ray->org, ray->dir, ray->tnear);
    sg_best best;
    sg_best_init(&best, ray->tfar);
    /* Instances first: they are the foreground of most scenes (vehicles,
     * trees, posts in front of the ground and buildings), and a near hit
     * there cuts the static tree's traversal short (on bench_twin's scene,
     * 2.0 -> 2.5 Mrays/s a core). */
    if (s->ninst > 0)
        sg_top_trace(s, ray, &rw, &best);
    if (s->world >= 0)
        sg_blas_trace(s, (uint32_t)s->world, &rw, SG_INVALID, &best);
    sg_best_hit(s, &best, h);
}

#endif
