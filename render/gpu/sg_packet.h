/* sg_packet.h - packet traversal of the flattened two-level BVH: up to 16
 * coherent rays (a lidar beam's sub-rays, neighbouring beams or pixels)
 * walk the tree together under an active mask, so one node fetch and one
 * loop over the 16 lanes (vectorized on the CPU) serve all of them, as
 * Embree's 16-wide packets do. Shared code like sg_bvh.h (no libm, no
 * contraction, common subset of C11 and CUDA C++).
 *
 * Every ray keeps its own closest hit: a lane is active in a node only when
 * its own slab test hit the node's box, it tests a leaf's triangles with
 * its own tfar (the closest hit so far) and the same triangle test as
 * sg_trace, and sg_best_take makes the closest hit independent of the
 * order the tree is visited in. So hit for hit and bit for bit the result
 * is sg_trace's (tests/test_twin.c checks it). The box test computes the
 * same slab distances as sg_box_hit (min/max of the two planes instead of
 * the sign-selected plane: the same values, (b - o) * idir being monotonic
 * in b). */
#ifndef SENSIM_SG_PACKET_H
#define SENSIM_SG_PACKET_H

#include "sg_bvh.h"

#define SG_PACKET 16

/* Lane loops the compiler should vectorize (OpenMP simd on the CPU). */
#if defined(_OPENMP) && !defined(__CUDACC__) && !defined(__CUDA__)
#define SG_SIMD _Pragma("omp simd")
#else
#define SG_SIMD
#endif

/* A packet prepared for traversal: per lane the prepared ray (triangle
 * tests) and, lane-major, what the slab tests read. */
typedef struct sg_packet {
    float ox[SG_PACKET], oy[SG_PACKET], oz[SG_PACKET];
    float ix[SG_PACKET], iy[SG_PACKET], iz[SG_PACKET];
    float tnear[SG_PACKET];
    sg_rayp r[SG_PACKET];
} sg_packet;

/* Lane j of p from origin o, direction d (not all zero). */
SENSIM_HD static inline void sg_packet_set(sg_packet *p, int j, const float o[3], const float d[3], float tnear)
{
    sg_rayp_make(&p->r[j], o, d, tnear);
    p->ox[j] = o[0];
    p->oy[j] = o[1];
    p->oz[j] = o[2];
    p->ix[j] = p->r[j].idir[0];
    p->iy[j] = p->r[j].idir[1];
    p->iz[j] = p->r[j].idir[2];
    p->tnear[j] = tnear;
}

/* Lane j inactive: finite values the slab loop may read (masked off). */
SENSIM_HD static inline void sg_packet_clear(sg_packet *p, int j)
{
    p->ox[j] = p->oy[j] = p->oz[j] = 0.0f;
    p->ix[j] = p->iy[j] = p->iz[j] = 1.0f;
    p->tnear[j] = 0.0f;
}

SENSIM_HD static inline int sg_popcount16(uint32_t m)
{
    int n = 0;
    for (; m; m &= m - 1)
        n++;
    return n;
}

/* Slab test of box b for every lane (tfar: each lane's closest hit so far);
 * tmin gets the entry distances; returns the mask of lanes that hit it. */
SENSIM_HD static inline uint32_t sg_box_hit_packet(const float *b, const sg_packet *p, const float *tfar, float *tmin)
{
    int hit[SG_PACKET];
    const float bx0 = b[0], by0 = b[1], bz0 = b[2], bx1 = b[3], by1 = b[4], bz1 = b[5];
    SG_SIMD
    for (int j = 0; j < SG_PACKET; j++) {
        const float x0 = (bx0 - p->ox[j]) * p->ix[j], x1 = (bx1 - p->ox[j]) * p->ix[j];
        const float y0 = (by0 - p->oy[j]) * p->iy[j], y1 = (by1 - p->oy[j]) * p->iy[j];
        const float z0 = (bz0 - p->oz[j]) * p->iz[j], z1 = (bz1 - p->oz[j]) * p->iz[j];
        const float lo = sg_maxf(sg_maxf(sg_minf(x0, x1), sg_minf(y0, y1)), sg_maxf(sg_minf(z0, z1), p->tnear[j]));
        const float hi = sg_minf(sg_minf(sg_maxf(x0, x1), sg_maxf(y0, y1)), sg_maxf(z0, z1)) * SG_SLAB_PAD;
        tmin[j] = lo;
        hit[j] = lo <= sg_minf(hi, tfar[j]);
    }
    uint32_t m = 0;
    for (int j = 0; j < SG_PACKET; j++)
        m |= (uint32_t)(hit[j] != 0) << j;
    return m;
}

/* The traversal stack of a packet: reference, leaf count, lane mask and
 * the lanes' entry distances of each pushed child. */
typedef struct sg_pstack {
    int32_t ref[SG_STACK];
    uint32_t cnt[SG_STACK], mask[SG_STACK];
    float tmin[SG_STACK][SG_PACKET];
    int sp;
} sg_pstack;

/* One step at interior node n for the lanes in *mask: the next reference
 * (the child nearer for most lanes that hit both), the other pushed; 0 when
 * no lane hits either child. */
SENSIM_HD static inline int sg_node_step_packet(const sg_node *n, const sg_packet *p, const float *tfar, int32_t *ref,
                                                uint32_t *cnt, uint32_t *mask, sg_pstack *st)
{
    float t0[SG_PACKET], t1[SG_PACKET];
    const uint32_t m0 = sg_box_hit_packet(n->box[0], p, tfar, t0) & *mask;
    const uint32_t m1 = sg_box_hit_packet(n->box[1], p, tfar, t1) & *mask;
    if (m0 && m1) {
        const uint32_t both = m0 & m1;
        int votes = 0;
        for (int j = 0; j < SG_PACKET; j++)
            votes += (both >> j & 1u) && t1[j] < t0[j];
        const int near = 2 * votes > sg_popcount16(both);
        const float *tf = near ? t0 : t1;
        st->ref[st->sp] = n->child[1 - near];
        st->cnt[st->sp] = n->count[1 - near];
        st->mask[st->sp] = near ? m0 : m1;
        for (int j = 0; j < SG_PACKET; j++)
            st->tmin[st->sp][j] = tf[j];
        st->sp++;
        *ref = n->child[near];
        *cnt = n->count[near];
        *mask = near ? m1 : m0;
        return 1;
    }
    if (m0 || m1) {
        const int c = m1 != 0;
        *ref = n->child[c];
        *cnt = n->count[c];
        *mask = m0 | m1;
        return 1;
    }
    return 0;
}

/* Pops the next entry with a lane that entered its box before that lane's
 * closest hit so far; the others are dropped from its mask. 0 when the
 * stack runs out. */
SENSIM_HD static inline int sg_pop_packet(sg_pstack *st, const float *tfar, int32_t *ref, uint32_t *cnt,
                                          uint32_t *mask)
{
    while (st->sp > 0) {
        st->sp--;
        uint32_t m = 0;
        for (int j = 0; j < SG_PACKET; j++)
            m |= (uint32_t)(st->tmin[st->sp][j] <= tfar[j]) << j;
        m &= st->mask[st->sp];
        if (m) {
            *ref = st->ref[st->sp];
            *cnt = st->cnt[st->sp];
            *mask = m;
            return 1;
        }
    }
    return 0;
}

/* sg_walk for a packet: the lanes still in a leaf are w->mask. */
typedef struct sg_pwalk {
    sg_pstack st;
    int32_t ref;
    uint32_t cnt, mask;
} sg_pwalk;

SENSIM_HD static inline int sg_pwalk_descend(const sg_node *node, sg_pwalk *w, const sg_packet *p, const float *tfar)
{
    while (w->ref >= 0) {
        if (!sg_node_step_packet(&node[w->ref], p, tfar, &w->ref, &w->cnt, &w->mask, &w->st) &&
            !sg_pop_packet(&w->st, tfar, &w->ref, &w->cnt, &w->mask))
            return 0;
    }
    return 1;
}

SENSIM_HD static inline int sg_pwalk_first(const sg_node *node, sg_pwalk *w, int32_t root, uint32_t count,
                                           uint32_t mask, const sg_packet *p, const float *tfar)
{
    w->st.sp = 0;
    w->ref = root;
    w->cnt = count;
    w->mask = mask;
    return sg_pwalk_descend(node, w, p, tfar);
}

SENSIM_HD static inline int sg_pwalk_next(const sg_node *node, sg_pwalk *w, const sg_packet *p, const float *tfar)
{
    return sg_pop_packet(&w->st, tfar, &w->ref, &w->cnt, &w->mask) && sg_pwalk_descend(node, w, p, tfar);
}

/* Closest hits of the lanes in `mask` of p in bottom-level tree `blas`,
 * instance `inst` recorded with them; tfar[j] mirrors best[j].c.t. live:
 * NULL, or for an occlusion test the lanes without a hit yet: a lane's
 * first hit clears its bit and sets its tfar to -1 (so that no box or
 * stack entry passes for it any more), and the walk ends when none is
 * left (returning 1). */
SENSIM_HD static inline int sg_blas_trace_packet_any(const sg_scene *s, uint32_t blas, const sg_packet *p,
                                                     uint32_t mask, uint32_t inst, sg_best *best, float *tfar,
                                                     uint32_t *live)
{
    sg_pwalk w;
    const sg_blas *b = &s->blas[blas];
    for (int more = sg_pwalk_first(s->node, &w, b->root, b->count, mask, p, tfar); more;
         more = sg_pwalk_next(s->node, &w, p, tfar)) {
        const uint32_t first = (uint32_t)~w.ref;
        for (uint32_t i = first; i < first + w.cnt; i++) {
            const sg_tri *tr = &s->tri[i];
            for (uint32_t m = w.mask; m; m &= m - 1) {
                int j = 0;
                while (!(m >> j & 1u))
                    j++;
                sg_cand c;
                if (sg_tri_intersect(&p->r[j], tr->v0, tr->v1, tr->v2, tfar[j], &c)) {
                    sg_best_take(&best[j], &c, i, inst);
                    tfar[j] = best[j].c.t;
                    if (live) {
                        tfar[j] = -1.0f;
                        *live &= ~(1u << j);
                        w.mask &= ~(1u << j);
                        if (!*live)
                            return 1;
                    }
                }
            }
        }
    }
    return 0;
}

SENSIM_HD static inline void sg_blas_trace_packet(const sg_scene *s, uint32_t blas, const sg_packet *p, uint32_t mask,
                                                  uint32_t inst, sg_best *best, float *tfar)
{
    (void)sg_blas_trace_packet_any(s, blas, p, mask, inst, best, tfar, 0);
}

/* Closest hits of the lanes in `mask` (world space, prepared as pw) among
 * the instances; live as sg_blas_trace_packet_any. */
SENSIM_HD static inline int sg_top_trace_packet(const sg_scene *s, const sg_ray *rays, const sg_packet *pw,
                                                uint32_t mask, sg_best *best, float *tfar, uint32_t *live)
{
    sg_packet po;
    for (int j = 0; j < SG_PACKET; j++)
        sg_packet_clear(&po, j);
    sg_pwalk w;
    for (int more = sg_pwalk_first(s->node, &w, s->top, s->top_count, mask, pw, tfar); more;
         more = sg_pwalk_next(s->node, &w, pw, tfar)) {
        const uint32_t first = (uint32_t)~w.ref;
        for (uint32_t i = first; i < first + w.cnt; i++) {
            const sg_inst *in = &s->inst[i];
            float y[12];
            if (in->steps <= 1)
                sg_inst_world_to_object(s, in, 0.0f, y);
            for (uint32_t m = w.mask; m; m &= m - 1) {
                int j = 0;
                while (!(m >> j & 1u))
                    j++;
                if (in->steps > 1)
                    sg_inst_world_to_object(s, in, rays[j].time, y);
                float oo[3], od[3];
                sg_xfm_ray(y, rays[j].org, rays[j].dir, oo, od);
                sg_packet_set(&po, j, oo, od, rays[j].tnear);
            }
            if (live)
                w.mask &= *live;
            if (w.mask && sg_blas_trace_packet_any(s, in->blas, &po, w.mask, i, best, tfar, live))
                return 1;
        }
    }
    return 0;
}

/* Loads the lanes j < *n (*n clipped to 16) of `mask` from rs[j] into the
 * packet, their far distances into tfar and empty closest hits into best;
 * other lanes are cleared (tfar -1). Returns the mask so clipped. */
SENSIM_HD static inline uint32_t sg_packet_load(const sg_ray *rs, int *n, uint32_t mask, sg_packet *pw, sg_best *best,
                                                float *tfar)
{
    if (*n > SG_PACKET)
        *n = SG_PACKET;
    if (*n < SG_PACKET)
        mask &= (1u << *n) - 1u;
    for (int j = 0; j < SG_PACKET; j++) {
        if (mask >> j & 1u) {
            sg_packet_set(pw, j, rs[j].org, rs[j].dir, rs[j].tnear);
            tfar[j] = rs[j].tfar;
        } else {
            sg_packet_clear(pw, j);
            tfar[j] = -1.0f;
        }
        sg_best_init(&best[j], tfar[j]);
    }
    return mask;
}

/* Closest hits of rays[first + j] for the lanes j < n (n <= 16) set in
 * `mask` (bit j: lane j), each into hits[first + j] exactly as sg_trace
 * would write it; hits of other lanes are left alone. Rays of a packet
 * should be coherent (near origins and directions) for speed only. */
SENSIM_HD static inline void sg_trace_packet_mask(const sg_scene *s, const sg_ray *rays, sg_hit *hits, size_t first,
                                                  int n, uint32_t mask)
{
    const sg_ray *rs = rays + first;
    sg_packet pw;
    sg_best best[SG_PACKET];
    float tfar[SG_PACKET];
    mask = sg_packet_load(rs, &n, mask, &pw, best, tfar);
    if (!mask)
        return;
    /* Instances first, as sg_trace. */
    if (s->ninst > 0)
        sg_top_trace_packet(s, rs, &pw, mask, best, tfar, 0);
    if (s->world >= 0)
        sg_blas_trace_packet(s, (uint32_t)s->world, &pw, mask, SG_INVALID, best, tfar);
    for (int j = 0; j < n; j++)
        if (mask >> j & 1u)
            sg_best_hit(s, &best[j], &hits[first + (size_t)j]);
}

/* Closest hits of rays[first .. first + n - 1] (n <= 16), as sg_trace. */
SENSIM_HD static inline void sg_trace_packet(const sg_scene *s, const sg_ray *rays, sg_hit *hits, size_t first, int n)
{
    sg_trace_packet_mask(s, rays, hits, first, n, 0xFFFFu);
}

/* The lanes j < n (n <= 16) in `mask` whose ray rays[first + j] hits
 * anything in (tnear, tfar], as a mask: an any-hit walk of the packet
 * (a lane leaves at its first hit, the walk when no lane is left). */
SENSIM_HD static inline uint32_t sg_occluded_packet_mask(const sg_scene *s, const sg_ray *rays, size_t first, int n,
                                                         uint32_t mask)
{
    const sg_ray *rs = rays + first;
    sg_packet pw;
    sg_best best[SG_PACKET];
    float tfar[SG_PACKET];
    mask = sg_packet_load(rs, &n, mask, &pw, best, tfar);
    uint32_t live = mask;
    if (live && s->ninst > 0)
        sg_top_trace_packet(s, rs, &pw, live, best, tfar, &live);
    if (live && s->world >= 0)
        sg_blas_trace_packet_any(s, (uint32_t)s->world, &pw, live, SG_INVALID, best, tfar, &live);
    return mask & ~live;
}

#endif
