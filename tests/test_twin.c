/* The CPU twin of the CUDA path (issue 18): the flattened BVH's invariants
 * and determinism, the twin against Embree ray by ray on the bundled scenes
 * and on instanced and moving objects, lidar scans and camera frames
 * through --backend twin against Embree's (the analytic plane with
 * Beer-Lambert attenuation, the sphere, a beam straddling an edge),
 * bit-identical at 1 and 2 threads, and `sensim render --backend twin`
 * against `--backend embree` with a rig's noise.
 *
 * Tolerances. The twin's watertight test (Woop et al. 2013) and Embree's
 * intersector round differently, so a distance differs by a few units in
 * the last place of the coordinates involved, over the cosine of the
 * incidence (t = T / det, and det scales with the cosine): measured up to
 * 13 eps (|o|_1 + 2 t) / cos on the bundled scenes with eps = 2^-24; the
 * bound used is 64 of those. A tie is a ray whose two closest surfaces lie
 * at the same distance (overlapping coplanar faces: a cylinder's cap on the
 * ground; two triangles of a surface where the ray crosses their common
 * edge within rounding); there either primitive is right, and the two
 * backends may choose differently. Ties are counted, and must stay rare. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../render/gpu/sg_bvh.h"
#include "../render/gpu/sg_packet.h"
#include "../render/gpu/sg_raygen.h"
#include "../render/render_internal.h"
#include "../render/twin.h"
#include "sensim/camera.h"
#include "sensim/log.h"
#include "sensim/render.h"
#include "sensim/rng.h"
#include "testutil.h"

static const char *const bundled[] = {"fig5", "fog", "forest", "outdoor", "vegetation", "walls"};
#define NBUNDLED (sizeof bundled / sizeof *bundled)

static sensim_scene *load_bundled(const char *name)
{
    char rel[128];
    snprintf(rel, sizeof rel, "data/scenes/%s.yaml", name);
    char *path = tu_src(rel);
    sensim_scene *s = sensim_scene_load(path);
    ck_assert_msg(s != NULL, "%s: %s", path, sensim_last_error());
    free(path);
    return s;
}

static sensim_pose pose_at(double x, double y, double z, double yaw)
{
    sensim_pose p = sensim_pose_identity();
    p.p = sensim_vec3_make(x, y, z);
    p.q = sensim_quat_axis_angle(sensim_vec3_make(0, 0, 1), yaw);
    return p;
}

/* Ground, 30 scaled and turned spheres (instanced: two levels), a static
 * box and two moving boxes (instances with 8 transform steps over 0..1 s):
 * every path of the traversal. */
static sensim_scene *mixed_scene(void)
{
    sensim_scene *s = sensim_scene_create();
    ck_assert_int_eq(sensim_scene_set_instancing(s, SENSIM_INSTANCING_ALWAYS), SENSIM_OK);
    int ground = sensim_scene_add_plane(s, "ground", 120, 120, 4, 4);
    int ball = sensim_scene_add_sphere(s, "ball", 1, 24);
    int box = sensim_scene_add_box(s, "box", 2, 1, 1.5);
    ck_assert_int_ge(sensim_scene_add_object(s, ground, 0, pose_at(0, 0, -1.5, 0)), 0);
    sensim_rng r = sensim_rng_make(11, 1, 0);
    for (int i = 0; i < 30; i++) {
        double u[6];
        sensim_rng_uniform_fill(&r, (uint64_t)(6 * i), 6, u);
        double az = 2 * M_PI * u[0], rho = 5 + 25 * u[1];
        int o = sensim_scene_add_object(s, ball, 0, pose_at(rho * cos(az), rho * sin(az), 2 * u[2] - 0.5, 6 * u[3]));
        ck_assert_int_eq(sensim_scene_set_object_scale(s, o, 0.5 + u[4], 0.5 + u[5], 0.5 + u[4] * u[5]), SENSIM_OK);
    }
    double kt[3] = {0, 0.5, 1};
    sensim_pose kp[3] = {pose_at(8, -6, 0, 0), pose_at(10, 0, 0.5, 0.7), pose_at(8, 6, 0, 1.4)};
    ck_assert_int_ge(sensim_scene_add_moving_object(s, box, 0, kt, kp, 3, 8), 0);
    sensim_pose kq[3] = {pose_at(-9, 4, 0, 0), pose_at(-12, 0, 0, -0.5), pose_at(-9, -4, 0.3, -1)};
    ck_assert_int_ge(sensim_scene_add_moving_object(s, box, 0, kt, kq, 3, 8), 0);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    return s;
}

/* ---- the flattened layout ---- */

typedef struct {
    const sg_scene *v;
    unsigned char *seen; /* per item */
    size_t items;
    int max_depth;
} walk;

static int box_inside(const float *in, const float *out)
{
    return in[0] >= out[0] && in[1] >= out[1] && in[2] >= out[2] && in[3] <= out[3] && in[4] <= out[4] &&
           in[5] <= out[5];
}

/* Walks the subtree at ref (inside box `bound`): every child box inside its
 * parent's, every item in its leaf's box, each item once. tri: items are
 * triangles (else instances, checked against the boxes the builder made). */
static void walk_ref(walk *w, int32_t ref, uint32_t cnt, const float *bound, int depth, int tri)
{
    if (depth > w->max_depth)
        w->max_depth = depth;
    ck_assert_int_le(depth, SG_MAX_DEPTH);
    if (ref < 0) {
        uint32_t first = (uint32_t)~ref;
        for (uint32_t i = first; i < first + cnt; i++) {
            ck_assert_uint_lt(i, w->items);
            ck_assert_msg(!w->seen[i], "item %u referenced twice", i);
            w->seen[i] = 1;
            if (tri) {
                const sg_tri *t = &w->v->tri[i];
                for (int k = 0; k < 3; k++) {
                    const float lo = fminf(fminf(t->v0[k], t->v1[k]), t->v2[k]);
                    const float hi = fmaxf(fmaxf(t->v0[k], t->v1[k]), t->v2[k]);
                    ck_assert(lo >= bound[k] && hi <= bound[3 + k]);
                }
            }
        }
        return;
    }
    ck_assert_uint_lt((uint32_t)ref, w->v->nnode);
    const sg_node *n = &w->v->node[ref];
    for (int c = 0; c < 2; c++) {
        ck_assert_msg(box_inside(n->box[c], bound), "node %d child %d box outside its parent's", ref, c);
        ck_assert(n->child[c] < 0 || n->count[c] == 0);
        walk_ref(w, n->child[c], n->count[c], n->box[c], depth + 1, tri);
    }
}

static void check_layout(const sensim_scene *s, const sensim_twin *t)
{
    const sg_scene *v = &t->view;
    walk w = {v, calloc(v->ntri + 1, 1), v->ntri, 0};
    const float all[6] = {-INFINITY, -INFINITY, -INFINITY, INFINITY, INFINITY, INFINITY};
    size_t nstatic = 0, ninst = 0;
    for (size_t i = 0; i < s->nobj; i++)
        if (!s->obj[i].nkey && !s->obj[i].instanced)
            nstatic += s->mesh[s->obj[i].mesh].nt;
        else
            ninst++;
    ck_assert_uint_eq(v->ninst, ninst);
    for (uint32_t b = 0; b < v->nblas; b++) {
        const sg_blas *bl = &v->blas[b];
        const float box[6] = {bl->lo[0], bl->lo[1], bl->lo[2], bl->hi[0], bl->hi[1], bl->hi[2]};
        walk_ref(&w, bl->root, bl->count, box, 0, 1);
    }
    /* Every triangle in exactly one tree, once. */
    for (size_t i = 0; i < v->ntri; i++)
        ck_assert_msg(w.seen[i], "triangle %zu in no leaf", i);
    /* The world tree holds the static objects' triangles. */
    size_t nworld = 0;
    if (v->world >= 0) {
        walk ww = {v, calloc(v->ntri + 1, 1), v->ntri, 0};
        walk_ref(&ww, v->blas[v->world].root, v->blas[v->world].count, all, 0, 1);
        for (size_t i = 0; i < v->ntri; i++)
            if (ww.seen[i]) {
                nworld++;
                ck_assert_uint_lt(v->tri[i].geom, s->nobj);
                ck_assert(!s->obj[v->tri[i].geom].instanced && !s->obj[v->tri[i].geom].nkey);
                ck_assert_uint_lt(v->tri[i].prim, s->mesh[s->obj[v->tri[i].geom].mesh].nt);
            }
        free(ww.seen);
    }
    ck_assert_uint_eq(nworld, nstatic);
    /* A mesh's tree holds primIDs 0..nt-1. */
    for (uint32_t b = 0; b < v->nblas; b++) {
        if ((int32_t)b == v->world)
            continue;
        walk one = {v, calloc(v->ntri + 1, 1), v->ntri, 0};
        walk_ref(&one, v->blas[b].root, v->blas[b].count, all, 0, 1);
        size_t n = 0;
        uint32_t maxp = 0;
        for (size_t i = 0; i < v->ntri; i++)
            if (one.seen[i]) {
                n++;
                maxp = v->tri[i].prim > maxp ? v->tri[i].prim : maxp;
                ck_assert_uint_eq(v->tri[i].geom, 0);
            }
        ck_assert_uint_eq(maxp + 1, n);
        free(one.seen);
    }
    free(w.seen);
    if (v->ninst) {
        walk wi = {v, calloc(v->ninst, 1), v->ninst, 0};
        walk_ref(&wi, v->top, v->top_count, all, 0, 0);
        for (uint32_t i = 0; i < v->ninst; i++) {
            ck_assert(wi.seen[i]);
            ck_assert_uint_lt(v->inst[i].blas, v->nblas);
            ck_assert_uint_le(v->inst[i].xfm + v->inst[i].steps, v->nxfm);
            ck_assert(s->obj[v->inst[i].id].instanced || s->obj[v->inst[i].id].nkey);
        }
        free(wi.seen);
    }
}

START_TEST(flatten_invariants)
{
    for (size_t k = 0; k <= NBUNDLED; k++) {
        sensim_scene *s = k < NBUNDLED ? load_bundled(bundled[k]) : mixed_scene();
        sensim_twin *t = sensim_twin_build(s, 0);
        ck_assert_msg(t != NULL, "%s", sensim_last_error());
        check_layout(s, t);
        sensim_twin_destroy(t);
        sensim_scene_destroy(s);
    }
}
END_TEST

static int same_twin(const sensim_twin *a, const sensim_twin *b)
{
    const sg_scene *x = &a->view, *y = &b->view;
    return x->nnode == y->nnode && x->ntri == y->ntri && x->nblas == y->nblas && x->ninst == y->ninst &&
           x->nxfm == y->nxfm && x->world == y->world && x->top == y->top && x->top_count == y->top_count &&
           !memcmp(x->node, y->node, x->nnode * sizeof *x->node) && !memcmp(x->tri, y->tri, x->ntri * sizeof *x->tri) &&
           !memcmp(x->blas, y->blas, x->nblas * sizeof *x->blas) &&
           (!x->ninst || !memcmp(x->inst, y->inst, x->ninst * sizeof *x->inst)) &&
           (!x->nxfm || (!memcmp(x->xfm, y->xfm, 12 * x->nxfm * sizeof(float)) &&
                         !memcmp(x->ixfm, y->ixfm, 12 * x->nxfm * sizeof(float))));
}

START_TEST(build_deterministic)
{
    /* Embree's build at 1 and 2 threads, and at its default, flattens to
     * the same bytes. */
    const char *names[] = {"fig5", "forest"};
    for (int k = 0; k < 3; k++) {
        sensim_scene *s = k < 2 ? load_bundled(names[k]) : mixed_scene();
        sensim_twin *a = sensim_twin_build(s, 1), *b = sensim_twin_build(s, 2), *c = sensim_twin_build(s, 0);
        ck_assert_msg(a && b && c, "%s", sensim_last_error());
        ck_assert_msg(same_twin(a, b), "scene %d: the twin differs at 1 and 2 build threads", k);
        ck_assert_msg(same_twin(a, c), "scene %d: the twin differs at 1 and the default build threads", k);
        sensim_twin_destroy(a);
        sensim_twin_destroy(b);
        sensim_twin_destroy(c);
        sensim_scene_destroy(s);
    }
    /* Errors: a scene not committed, a negative thread count. */
    sensim_scene *s = sensim_scene_create();
    ck_assert_ptr_null(sensim_twin_build(s, 0));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "committed"));
    ck_assert_int_eq(sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN), SENSIM_EINVAL);
    sensim_scene_destroy(s);
}
END_TEST

/* ---- ray by ray against Embree ---- */

/* The triangle (geom, prim) in the subtree at ref, or SG_INVALID. */
static uint32_t find_tri(const sg_scene *v, int32_t ref, uint32_t cnt, uint32_t geom, uint32_t prim)
{
    if (ref < 0) {
        for (uint32_t i = (uint32_t)~ref; i < (uint32_t)~ref + cnt; i++)
            if (v->tri[i].geom == geom && v->tri[i].prim == prim)
                return i;
        return SG_INVALID;
    }
    for (int c = 0; c < 2; c++) {
        uint32_t i = find_tri(v, v->node[ref].child[c], v->node[ref].count[c], geom, prim);
        if (i != SG_INVALID)
            return i;
    }
    return SG_INVALID;
}

/* A tie: Embree's primitive (geom, prim, inst), tested by the twin's own
 * triangle test, is hit at distance t within tol. */
static int is_tie(const sensim_scene *s, const sg_ray *r, uint32_t geom, uint32_t prim, uint32_t inst, float t,
                  double tol)
{
    const sg_scene *v = &s->twin->view;
    sg_rayp rp;
    uint32_t b = (uint32_t)v->world;
    if (inst == SG_INVALID) {
        sg_rayp_make(&rp, r->org, r->dir, 0.0f);
    } else {
        uint32_t i = 0;
        while (i < v->ninst && v->inst[i].id != inst)
            i++;
        ck_assert_uint_lt(i, v->ninst);
        float y[12], o[3], d[3];
        sg_inst_world_to_object(v, &v->inst[i], r->time, y);
        for (int k = 0; k < 3; k++) {
            o[k] = y[k] * r->org[0] + y[3 + k] * r->org[1] + y[6 + k] * r->org[2] + y[9 + k];
            d[k] = y[k] * r->dir[0] + y[3 + k] * r->dir[1] + y[6 + k] * r->dir[2];
        }
        sg_rayp_make(&rp, o, d, 0.0f);
        b = v->inst[i].blas;
    }
    uint32_t k = find_tri(v, v->blas[b].root, v->blas[b].count, geom, prim);
    ck_assert_uint_ne(k, SG_INVALID);
    sg_cand c;
    return sg_tri_intersect(&rp, v->tri[k].v0, v->tri[k].v1, v->tri[k].v2, 1e30f, &c) && fabs(c.t - t) <= tol;
}

typedef struct {
    size_t rays, hits, ties;
    int aimed; /* the ray aims at a triangle (ties counted apart) */
    size_t aimed_ties;
    double worst; /* |dt| over the tolerance's scale, same primitive */
} cmp_stats;

/* Traces ray (o, d, time) with Embree and the twin and checks: both hit or
 * both miss; the same (geomID, primID, instID), or a tie; the distance
 * within the tolerance. */
static void cmp_ray(const sensim_scene *s, const float o[3], const float d[3], float tfar, float time, cmp_stats *st)
{
    struct RTCRayHit rh;
    memset(&rh, 0, sizeof rh);
    rh.ray.org_x = o[0];
    rh.ray.org_y = o[1];
    rh.ray.org_z = o[2];
    rh.ray.dir_x = d[0];
    rh.ray.dir_y = d[1];
    rh.ray.dir_z = d[2];
    rh.ray.tfar = tfar;
    rh.ray.time = time;
    rh.ray.mask = 0xFFFFFFFFu;
    rh.hit.geomID = rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
    struct RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    rtcIntersect1(s->top, &ctx, &rh);
    sg_ray r = {{o[0], o[1], o[2]}, 0.0f, {d[0], d[1], d[2]}, tfar, time};
    sg_hit h;
    sg_trace(&s->twin->view, &r, &h, 0);
    st->rays++;
    const int eh = rh.hit.geomID != RTC_INVALID_GEOMETRY_ID, th = h.geom != SG_INVALID;
    ck_assert_msg(eh == th, "ray %zu (%g %g %g)->(%g %g %g): embree %s (t %.9g), twin %s (t %.9g)", st->rays, o[0],
                  o[1], o[2], d[0], d[1], d[2], eh ? "hits" : "misses", rh.ray.tfar, th ? "hits" : "misses", h.t);
    if (!eh)
        return;
    st->hits++;
    const double g = sqrt((double)h.ng[0] * h.ng[0] + (double)h.ng[1] * h.ng[1] + (double)h.ng[2] * h.ng[2]);
    const double dl = sqrt((double)d[0] * d[0] + (double)d[1] * d[1] + (double)d[2] * d[2]);
    double cth = g > 0 ? fabs(h.ng[0] * (double)d[0] + h.ng[1] * (double)d[1] + h.ng[2] * (double)d[2]) / (g * dl) : 1;
    if (h.inst != SG_INVALID)
        cth = 1e-3; /* object-space normal: bound the cosine from below instead */
    const double scale = (fabs(o[0]) + fabs(o[1]) + fabs(o[2]) + 2 * h.t * dl) * 0x1p-24 / fmax(cth, 1e-3);
    const double dt = fabs((double)h.t - rh.ray.tfar);
    ck_assert_msg(dt <= 64 * scale, "ray %zu: twin t %.9g, embree %.9g (%.3g units of eps (|o| + 2t) / cos)", st->rays,
                  h.t, rh.ray.tfar, dt / scale);
    if (rh.hit.geomID == h.geom && rh.hit.primID == h.prim && rh.hit.instID[0] == h.inst) {
        st->worst = fmax(st->worst, dt / scale);
    } else {
        /* Another primitive: only right if it lies at the same distance:
         * another object's face there (the twin's own test hits Embree's
         * primitive at its distance), or a neighbour on the same object
         * where the ray crosses their common edge within rounding. */
        const int same_object = rh.hit.geomID == h.geom && rh.hit.instID[0] == h.inst;
        ck_assert_msg((same_object && dt <= 64 * scale) ||
                          is_tie(s, &r, rh.hit.geomID, rh.hit.primID, rh.hit.instID[0], h.t, 64 * scale),
                      "ray %zu: embree hits (%u %u %u) at %.9g, twin (%u %u %u) at %.9g, not a tie", st->rays,
                      rh.hit.geomID, rh.hit.primID, rh.hit.instID[0], rh.ray.tfar, h.geom, h.prim, h.inst, h.t);
        if (st->aimed)
            st->aimed_ties++;
        else
            st->ties++;
    }
}

static void scene_bounds(const sensim_scene *s, float lo[3], float hi[3])
{
    const sg_scene *v = &s->twin->view;
    for (int k = 0; k < 3; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (uint32_t i = 0; i < v->ntri; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fminf(lo[k], v->tri[i].v0[k]);
            hi[k] = fmaxf(hi[k], v->tri[i].v0[k]);
        }
}

/* n random rays from inside the scene's box (directions uniform on the
 * sphere, random times) and n rays at random triangles' centroids (world
 * triangles; from outside their plane, so most of them hit something). */
static cmp_stats cmp_scene(sensim_scene *s, size_t n, uint64_t seed)
{
    ck_assert_int_eq(sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN), SENSIM_OK);
    cmp_stats st = {0, 0, 0, 0, 0, 0};
    float lo[3], hi[3];
    scene_bounds(s, lo, hi);
    const sensim_rng r = sensim_rng_make(seed, 0, 0);
    const sg_scene *v = &s->twin->view;
    for (size_t i = 0; i < n; i++) {
        double u[8];
        sensim_rng_uniform_fill(&r, 8 * i, 8, u);
        float o[3], d[3];
        double z[3] = {sensim_rng_normal(&r, 3 * i), sensim_rng_normal(&r, 3 * i + 1),
                       sensim_rng_normal(&r, 3 * i + 2)};
        double zn = sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
        for (int k = 0; k < 3; k++) {
            o[k] = (float)(lo[k] + (hi[k] - lo[k]) * u[k]);
            d[k] = (float)(z[k] / zn);
        }
        st.aimed = 0;
        cmp_ray(s, o, d, 1e4f, (float)u[3], &st);
        if (v->world < 0)
            continue;
        /* At a centroid: from a point above the triangle's plane. */
        const sg_tri *t = &v->tri[(size_t)(u[4] * v->ntri) % v->ntri];
        if (t->geom >= s->nobj || s->obj[t->geom].instanced || s->obj[t->geom].nkey)
            continue;
        float c[3], ng[3];
        sg_tri_normal(t->v0, t->v1, t->v2, ng);
        double gl = sqrt((double)ng[0] * ng[0] + (double)ng[1] * ng[1] + (double)ng[2] * ng[2]);
        double w0 = u[5], w1 = u[6] * (1 - w0);
        for (int k = 0; k < 3; k++) {
            c[k] = (float)(w0 * t->v0[k] + w1 * t->v1[k] + (1 - w0 - w1) * t->v2[k]);
            o[k] = (float)(c[k] + (5 * ng[k] / gl + 3 * z[k] / zn) * (0.2 + u[7]));
        }
        double dd[3] = {c[0] - (double)o[0], c[1] - (double)o[1], c[2] - (double)o[2]};
        double dn = sqrt(dd[0] * dd[0] + dd[1] * dd[1] + dd[2] * dd[2]);
        for (int k = 0; k < 3; k++)
            d[k] = (float)(dd[k] / dn);
        st.aimed = 1;
        cmp_ray(s, o, d, 1e4f, (float)u[3], &st);
    }
    return st;
}

/* Packet traversal (sg_packet.h) against sg_trace ray by ray: npk packets of
 * 16 rays, coherent (one origin, directions within a small cone, as a
 * beam's sub-rays and neighbouring beams) or not (origins and directions
 * at random), with random active masks (every lane, a random subset, one
 * lane) and random packet sizes; every active lane's hit bit for bit, the
 * other lanes' records untouched. Returns the hits seen. */
static size_t packet_vs_single(const sensim_scene *s, size_t npk, uint64_t seed)
{
    const sg_scene *v = &s->twin->view;
    float lo[3], hi[3];
    scene_bounds(s, lo, hi);
    const sensim_rng r = sensim_rng_make(seed, 3, 0);
    size_t hits = 0;
    for (size_t p = 0; p < npk; p++) {
        double u[8];
        sensim_rng_uniform_fill(&r, 1000 * p, 8, u);
        const int coherent = p % 2 == 0, n = p % 5 == 4 ? 1 + (int)(u[4] * 16) % 16 : 16;
        uint32_t mask = 0xFFFFu;
        if (p % 3 == 1)
            mask = (uint32_t)(u[5] * 65536.0) & 0xFFFFu;
        else if (p % 3 == 2)
            mask = 1u << ((int)(u[6] * 16) % 16);
        sg_ray rays[16];
        sg_hit one[16], pk[16];
        double c[3] = {sensim_rng_normal(&r, 1000 * p + 10), sensim_rng_normal(&r, 1000 * p + 11),
                       sensim_rng_normal(&r, 1000 * p + 12)};
        for (int j = 0; j < 16; j++) {
            double w[4];
            sensim_rng_uniform_fill(&r, 1000 * p + 20 + 4 * (uint64_t)j, 4, w);
            double z[3];
            for (int k = 0; k < 3; k++) {
                const double e = sensim_rng_normal(&r, 1000 * p + 100 + 3 * (uint64_t)j + (uint64_t)k);
                z[k] = coherent ? c[k] + 0.01 * e : e;
            }
            const double zn = sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
            for (int k = 0; k < 3; k++) {
                rays[j].org[k] = (float)(lo[k] + (hi[k] - lo[k]) * (coherent ? u[k] : w[k]));
                rays[j].dir[k] = (float)(z[k] / zn);
            }
            rays[j].tnear = j % 4 == 3 ? 0.5f : 0.0f;
            rays[j].tfar = j % 5 == 2 ? 3.0f : 1e4f;
            rays[j].time = (float)w[3];
            sg_trace(v, rays, one, (size_t)j);
        }
        memset(pk, 0xA5, sizeof pk);
        sg_trace_packet_mask(v, rays, pk, 0, n, mask);
        for (int j = 0; j < 16; j++) {
            if (j < n && (mask >> j & 1u)) {
                ck_assert_msg(pk[j].geom == one[j].geom && pk[j].prim == one[j].prim && pk[j].inst == one[j].inst,
                              "packet %zu lane %d: packet (%u %u %u), single (%u %u %u)", p, j, pk[j].geom,
                              pk[j].prim, pk[j].inst, one[j].geom, one[j].prim, one[j].inst);
                ck_assert_msg(!memcmp(&pk[j], &one[j], sizeof pk[j]), "packet %zu lane %d: t %.9g vs %.9g", p, j,
                              pk[j].t, one[j].t);
                hits += one[j].geom != SG_INVALID;
            } else {
                unsigned char b[sizeof(sg_hit)];
                memset(b, 0xA5, sizeof b);
                ck_assert_msg(!memcmp(&pk[j], b, sizeof b), "packet %zu lane %d: inactive lane written", p, j);
            }
        }
        /* The whole packet at an offset into longer arrays. */
        if (p % 7 == 0) {
            sg_ray big[20];
            sg_hit bh[20];
            memcpy(big + 4, rays, sizeof rays);
            sg_trace_packet(v, big, bh, 4, 16);
            for (int j = 0; j < 16; j++)
                ck_assert(!memcmp(&bh[4 + j], &one[j], sizeof one[j]));
        }
    }
    return hits;
}

START_TEST(packet_matches_single)
{
    for (size_t k = 0; k <= NBUNDLED; k++) {
        sensim_scene *s = k < NBUNDLED ? load_bundled(bundled[k]) : mixed_scene();
        ck_assert_int_eq(sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN), SENSIM_OK);
        size_t hits = packet_vs_single(s, 1500, 40 + k);
        /* The comparison must see hits, not only misses. */
        ck_assert_msg(hits > 1500, "%s: %zu hits", k < NBUNDLED ? bundled[k] : "mixed", hits);
        sensim_scene_destroy(s);
    }
}
END_TEST

START_TEST(matches_embree_bundled)
{
    for (size_t k = 0; k < NBUNDLED; k++) {
        sensim_scene *s = load_bundled(bundled[k]);
        cmp_stats st = cmp_scene(s, 20000, 100 + k);
        /* Random rays rarely tie. Rays aimed at a random triangle tie
         * often where faces overlap by design (every tie checked above):
         * fig5's posts and fog's cones stand on the ground with their caps
         * in its plane, and a quarter of the triangles are such caps. */
        ck_assert_msg(st.ties * 1000 <= st.hits, "%s: %zu ties in %zu hits", bundled[k], st.ties, st.hits);
        ck_assert_msg(st.aimed_ties * 2 <= st.hits, "%s: %zu ties in %zu hits", bundled[k], st.aimed_ties, st.hits);
        ck_assert_msg(st.hits > st.rays / 10, "%s: %zu hits of %zu rays", bundled[k], st.hits, st.rays);
        sensim_scene_destroy(s);
    }
}
END_TEST

START_TEST(matches_embree_instances_and_motion)
{
    /* Instances under scale and rotation, moving boxes at random ray
     * times (the two time steps around it interpolated, as Embree does). */
    sensim_scene *s = mixed_scene();
    cmp_stats st = cmp_scene(s, 40000, 7);
    ck_assert_msg(st.ties * 1000 <= st.hits, "%zu ties in %zu hits", st.ties, st.hits);
    ck_assert_msg(st.aimed_ties * 100 <= st.hits, "%zu ties in %zu hits", st.aimed_ties, st.hits);
    ck_assert_uint_gt(st.hits, st.rays / 4);
    /* Rays at the moving boxes' centres at several times: each finds its
     * box where the keyframes put it. */
    for (int i = 0; i <= 10; i++) {
        double tt = i / 10.0;
        sensim_pose p;
        ck_assert_int_eq(sensim_scene_object_pose(s, 31, tt, &p), SENSIM_OK);
        float o[3] = {0, 0, 0.25f}, d[3];
        double dx = p.p.x, dy = p.p.y, dz = p.p.z - 0.25, dn = sqrt(dx * dx + dy * dy + dz * dz);
        d[0] = (float)(dx / dn);
        d[1] = (float)(dy / dn);
        d[2] = (float)(dz / dn);
        sg_ray r = {{o[0], o[1], o[2]}, 0.0f, {d[0], d[1], d[2]}, 1e4f, (float)tt};
        sg_hit h;
        sg_trace(&s->twin->view, &r, &h, 0);
        ck_assert_uint_eq(h.inst, 31);
        ck_assert(h.t < dn && h.t > dn - 1.3); /* inside the box's half-diagonal */
        cmp_ray(s, o, d, 1e4f, (float)tt, &st);
    }
    sensim_scene_destroy(s);
}
END_TEST

/* ---- lidar and camera through the backend option ---- */

typedef struct {
    sensim_vec3 p0, v;
    sensim_quat q;
} linear_motion;

static void linear_pose(const void *user, double t, sensim_pose *out)
{
    const linear_motion *m = user;
    out->p = sensim_vec3_add(m->p0, sensim_vec3_scale(m->v, t));
    out->q = m->q;
}

/* Scans with Embree and the twin; the same points in the same order: the
 * hit-independent fields bit for bit, the objects equal (no ties in these
 * scenes), ranges and intensities within float rounding. Returns the twin's
 * points (caller destroys) and its lidar in *lo. */
static sensim_render_lidar_points *scan_both(sensim_scene *s, sensim_render_lidar_params p, const linear_motion *m,
                                             sensim_render_lidar **lo)
{
    ck_assert_int_eq(sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN), SENSIM_OK);
    p.backend = SENSIM_RENDER_BACKEND_EMBREE;
    sensim_render_lidar *le = sensim_render_lidar_create(&p);
    p.backend = SENSIM_RENDER_BACKEND_TWIN;
    sensim_render_lidar *lt = sensim_render_lidar_create(&p);
    ck_assert(le && lt);
    sensim_render_lidar_points *a = sensim_render_lidar_points_create(le), *b = sensim_render_lidar_points_create(lt);
    ck_assert_int_eq(sensim_render_lidar_scan(le, s, linear_pose, m, 0.1, 0, a), SENSIM_OK);
    ck_assert_int_eq(sensim_render_lidar_scan(lt, s, linear_pose, m, 0.1, 0, b), SENSIM_OK);
    ck_assert_uint_eq(a->count, b->count);
    ck_assert_uint_gt(a->count, 0);
    const size_t n = a->count;
    ck_assert(!memcmp(a->channel, b->channel, n * sizeof *a->channel));
    ck_assert(!memcmp(a->return_index, b->return_index, n));
    ck_assert(!memcmp(a->azimuth, b->azimuth, n * sizeof(float)));
    ck_assert(!memcmp(a->elevation, b->elevation, n * sizeof(float)));
    ck_assert(!memcmp(a->time_offset, b->time_offset, n * sizeof(float)));
    ck_assert(!memcmp(a->object, b->object, n * sizeof *a->object));
    for (size_t i = 0; i < n; i++) {
        ck_assert_within(b->range[i], a->range[i], 2e-6 * (a->range[i] + 10));
        ck_assert_within(b->xyzi[4 * i + 3], a->xyzi[4 * i + 3], 1e-4 * fabs(a->xyzi[4 * i + 3]) + 1e-6);
    }
    sensim_render_lidar_points_destroy(a);
    sensim_render_lidar_destroy(le);
    *lo = lt;
    return b;
}

START_TEST(lidar_analytic)
{
    /* The plane: ranges h / sin|el|, Lambert rho sin|el| and two-way
     * Beer-Lambert exp(-2 alpha r) with alpha = 0.02 / m. */
    sensim_scene *s = sensim_scene_create();
    ck_assert_int_eq(sensim_scene_set_atmosphere(s, 0.02), SENSIM_OK);
    sensim_material mat = sensim_material_default();
    mat.reflectance = 0.8;
    snprintf(mat.name, sizeof mat.name, "paint");
    int mi = sensim_scene_add_material(s, &mat);
    ck_assert_int_ge(
        sensim_scene_add_object(s, sensim_scene_add_plane(s, "g", 400, 400, 2, 2), mi, sensim_pose_identity()), 0);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    sensim_render_lidar_params p = sensim_render_lidar_default_params();
    p.channels = 16;
    p.vfov_min = -60 * M_PI / 180;
    p.vfov_max = -5 * M_PI / 180;
    p.columns = 90;
    p.max_range = 300;
    p.falloff = SENSIM_FALLOFF_NONE;
    linear_motion m = {{3, -4, 2}, {0, 0, 0}, {1, 0, 0, 0}};
    sensim_render_lidar *l;
    sensim_render_lidar_points *pt = scan_both(s, p, &m, &l);
    ck_assert_uint_eq(pt->count, 16 * 90);
    for (size_t i = 0; i < pt->count; i++) {
        double el = pt->elevation[i];
        ck_assert_within(pt->range[i], 2 / sin(-el), 1e-5 * pt->range[i]);
        ck_assert_within(pt->xyzi[4 * i + 3], 0.8 * sin(-el) * exp(-2 * 0.02 * 2 / sin(-el)), 1e-5);
    }
    sensim_render_lidar_points_destroy(pt);
    sensim_render_lidar_destroy(l);
    sensim_scene_destroy(s);

    /* The sphere of radius 1 at 10 m: the beam at its centre hits at 9 m. */
    s = sensim_scene_create();
    sensim_pose at = sensim_pose_identity();
    at.p = sensim_vec3_make(10, 0, 1.5);
    ck_assert_int_ge(sensim_scene_add_object(s, sensim_scene_add_sphere(s, "ball", 1.0, 48), 0, at), 0);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    p = sensim_render_lidar_default_params();
    p.channels = 1;
    p.vfov_min = p.vfov_max = 0;
    p.columns = 360;
    linear_motion ms = {{0, 0, 1.5}, {0, 0, 0}, {1, 0, 0, 0}};
    pt = scan_both(s, p, &ms, &l);
    ck_assert_uint_eq(pt->count, 11); /* |az| < asin(0.1) at 1 deg steps */
    int found = 0;
    for (size_t i = 0; i < pt->count; i++)
        if (fabs(pt->azimuth[i]) < 1e-9) {
            ck_assert_within(pt->range[i], 9.0, 1e-5);
            found = 1;
        }
    ck_assert(found);
    sensim_render_lidar_points_destroy(pt);
    sensim_render_lidar_destroy(l);
    sensim_scene_destroy(s);

    /* A beam straddling an edge: a wall at 10 m covering y < 0, another at
     * 20 m behind; a 10 mrad beam of 5 x 5 rays straight at the edge has
     * half its footprint on each: first return 10 m, last 20 m. */
    s = sensim_scene_create();
    int wall = sensim_scene_add_box(s, "wall", 0.2, 20, 20);
    ck_assert_int_ge(sensim_scene_add_object(s, wall, 0, pose_at(10.1, -10, 0, 0)), 0);
    ck_assert_int_ge(sensim_scene_add_object(s, wall, 0, pose_at(20.1, 0, 0, 0)), 0);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    const sensim_return_mode modes[2] = {SENSIM_RETURN_FIRST, SENSIM_RETURN_LAST};
    const double want[2] = {10, 20};
    for (int k = 0; k < 2; k++) {
        p = sensim_render_lidar_default_params();
        p.channels = 1;
        p.vfov_min = p.vfov_max = 0;
        p.columns = 4;
        p.divergence = 0.01;
        p.pattern_n = 5;
        p.returns = modes[k];
        linear_motion me = {{0, 0, 0}, {0, 0, 0}, {1, 0, 0, 0}};
        pt = scan_both(s, p, &me, &l);
        found = 0;
        for (size_t i = 0; i < pt->count; i++)
            if (fabs(pt->azimuth[i]) < 1e-6) {
                ck_assert_within(pt->range[i], want[k], 1e-3);
                found = 1;
            }
        ck_assert(found);
        sensim_render_lidar_points_destroy(pt);
        sensim_render_lidar_destroy(l);
    }
    sensim_scene_destroy(s);
}
END_TEST

START_TEST(threads_bit_identical)
{
    /* A moving VLP-16 with 9 rays per beam and dual returns, and a camera
     * with motion blur and shadows, through the twin at 1 and 2 threads. */
    sensim_scene *s = mixed_scene();
    ck_assert_int_eq(sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN), SENSIM_OK);
    sensim_render_lidar_params p;
    ck_assert_int_eq(sensim_render_lidar_preset("vlp16", &p), SENSIM_OK);
    p.divergence = 0.003;
    p.pattern_n = 3;
    p.returns = SENSIM_RETURN_DUAL;
    p.backend = SENSIM_RENDER_BACKEND_TWIN;
    sensim_render_lidar *l = sensim_render_lidar_create(&p);
    sensim_render_lidar_points *a = sensim_render_lidar_points_create(l), *b = sensim_render_lidar_points_create(l);
    linear_motion mv = {{0, 0, 0.5}, {5, 1, 0}, {1, 0, 0, 0}};
    sensim_render_camera_params cp = sensim_render_camera_default_params();
    cp.width = 64;
    cp.height = 48;
    cp.samples = 2;
    cp.exposure = 0.01;
    cp.backend = SENSIM_RENDER_BACKEND_TWIN;
    sensim_render_camera *c = sensim_render_camera_create(&cp);
    cp.backend = SENSIM_RENDER_BACKEND_EMBREE;
    sensim_render_camera *ce = sensim_render_camera_create(&cp);
    const size_t npx = 64 * 48 * 3;
    float *ia = malloc(npx * sizeof *ia), *ib = malloc(npx * sizeof *ib), *ie = malloc(npx * sizeof *ie);
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    ck_assert_int_eq(sensim_render_lidar_scan(l, s, linear_pose, &mv, 0.2, 0, a), SENSIM_OK);
    ck_assert_int_eq(sensim_render_camera_render(c, s, linear_pose, &mv, 0.2, 3, ia), SENSIM_OK);
    omp_set_num_threads(2);
    ck_assert_int_eq(sensim_render_lidar_scan(l, s, linear_pose, &mv, 0.2, 0, b), SENSIM_OK);
    ck_assert_int_eq(sensim_render_camera_render(c, s, linear_pose, &mv, 0.2, 3, ib), SENSIM_OK);
    ck_assert_int_eq(sensim_render_camera_render(ce, s, linear_pose, &mv, 0.2, 3, ie), SENSIM_OK);
    omp_set_num_threads(saved);
    ck_assert_uint_gt(a->count, 1000);
    ck_assert_uint_eq(a->count, b->count);
    ck_assert(!memcmp(a->xyzi, b->xyzi, a->count * 4 * sizeof(float)));
    ck_assert(!memcmp(a->range, b->range, a->count * sizeof(float)));
    ck_assert(!memcmp(a->object, b->object, a->count * sizeof *a->object));
    ck_assert(!memcmp(a->return_index, b->return_index, a->count));
    ck_assert(!memcmp(ia, ib, npx * sizeof *ia));
    /* The camera through the twin sees what it sees through Embree: the
     * same shading of the same hits; pixels may differ only where a sample
     * lands on a tie or a shadow ray grazes an edge. */
    size_t differ = 0;
    for (size_t i = 0; i < npx; i++)
        if (fabsf(ia[i] - ie[i]) > 1e-4f * (1 + fabsf(ie[i])))
            differ++;
    ck_assert_msg(differ * 200 <= npx, "%zu of %zu channel values differ", differ, npx);
    free(ia);
    free(ib);
    free(ie);
    sensim_render_camera_destroy(c);
    sensim_render_camera_destroy(ce);
    sensim_render_lidar_points_destroy(a);
    sensim_render_lidar_points_destroy(b);
    sensim_render_lidar_destroy(l);
    sensim_scene_destroy(s);
}
END_TEST

START_TEST(backend_names_and_errors)
{
    const char *names[] = {"embree", "twin", "cuda", "auto"};
    for (int i = 0; i < 4; i++) {
        sensim_render_backend b;
        ck_assert_int_eq(sensim_render_backend_parse(names[i], &b), SENSIM_OK);
        ck_assert_int_eq(b, i);
        ck_assert_str_eq(sensim_render_backend_name(b), names[i]);
    }
    sensim_render_backend b;
    ck_assert_int_eq(sensim_render_backend_parse("optix", &b), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "unknown backend 'optix' (known: embree, twin, cuda, auto)"));
    /* AUTO: CUDA where the GPU passes its probe (suite cuda), else Embree. */
    ck_assert_int_eq(sensim_render_backend_resolve(SENSIM_RENDER_BACKEND_AUTO),
                     sensim_render_cuda_probe(NULL, 0) ? SENSIM_RENDER_BACKEND_EMBREE : SENSIM_RENDER_BACKEND_CUDA);
    /* A lidar on the twin needs the scene prepared. */
    sensim_scene *s = load_bundled("walls");
    sensim_render_lidar_params p = sensim_render_lidar_default_params();
    p.backend = SENSIM_RENDER_BACKEND_TWIN;
    sensim_render_lidar *l = sensim_render_lidar_create(&p);
    sensim_render_lidar_points *pt = sensim_render_lidar_points_create(l);
    linear_motion m = {{0, 0, 0}, {0, 0, 0}, {1, 0, 0, 0}};
    ck_assert_int_eq(sensim_render_lidar_scan(l, s, linear_pose, &m, 0, 0, pt), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "not prepared for the twin backend"));
    ck_assert_int_eq(sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN), SENSIM_OK);
    ck_assert_int_eq(sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN), SENSIM_OK); /* kept */
    ck_assert_int_eq(sensim_render_lidar_scan(l, s, linear_pose, &m, 0, 0, pt), SENSIM_OK);
    ck_assert_uint_gt(pt->count, 1000);
    ck_assert_int_eq(sensim_scene_prepare_backend(s, (sensim_render_backend)42), SENSIM_EINVAL);
    p.backend = (sensim_render_backend)42;
    ck_assert_ptr_null(sensim_render_lidar_create(&p));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "unknown backend 42"));
    sensim_render_lidar_points_destroy(pt);
    sensim_render_lidar_destroy(l);
    sensim_scene_destroy(s);
}
END_TEST

/* ---- the program ---- */

static float *read_f32(const char *file, const char *dset, size_t *n)
{
    sensim_log *lg = sensim_log_open(file);
    ck_assert_msg(lg != NULL, "%s", sensim_last_error());
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK], row = 1;
    ck_assert_msg(sensim_log_shape(lg, dset, &rank, dims) == SENSIM_OK, "%s: %s", file, dset);
    for (int d = 1; d < rank; d++)
        row *= dims[d];
    float *buf = malloc((dims[0] * row + 1) * sizeof *buf);
    ck_assert_int_eq(sensim_log_read(lg, dset, SENSIM_F32, 0, dims[0], buf), SENSIM_OK);
    sensim_log_close(lg);
    *n = dims[0] * row;
    return buf;
}

/* Every dataset of /sensors/lidar bit-identical in a and b, except those
 * derived from hit distances (points, range, reflectivity), returned. */
static void same_except_distances(const char *a, const char *b)
{
    sensim_log *lg = sensim_log_open(a);
    ck_assert_msg(lg != NULL, "%s", sensim_last_error());
    char **names;
    size_t count;
    ck_assert_int_eq(sensim_log_list(lg, "/sensors/lidar", &names, &count), SENSIM_OK);
    ck_assert_uint_ge(count, 10);
    for (size_t i = 0; i < count; i++) {
        if (!strcmp(names[i], "points") || !strcmp(names[i], "range") || !strcmp(names[i], "reflectivity"))
            continue;
        char d[256];
        sensim_dtype ty;
        snprintf(d, sizeof d, "/sensors/lidar/%s", names[i]);
        ck_assert_int_eq(sensim_log_dtype(lg, d, &ty), SENSIM_OK);
        sensim_log *la = sensim_log_open(a), *lb = sensim_log_open(b);
        int ra, rb;
        size_t da[SENSIM_LOG_MAX_RANK], db[SENSIM_LOG_MAX_RANK], row = 1;
        ck_assert_int_eq(sensim_log_shape(la, d, &ra, da), SENSIM_OK);
        ck_assert_int_eq(sensim_log_shape(lb, d, &rb, db), SENSIM_OK);
        ck_assert_int_eq(ra, rb);
        ck_assert_msg(da[0] == db[0], "%s: %zu rows against %zu", d, da[0], db[0]);
        for (int k = 1; k < ra; k++)
            row *= da[k];
        size_t bytes = da[0] * row * sensim_dtype_size(ty);
        void *x = malloc(bytes + 1), *y = malloc(bytes + 1);
        ck_assert_int_eq(sensim_log_read(la, d, ty, 0, da[0], x), SENSIM_OK);
        ck_assert_int_eq(sensim_log_read(lb, d, ty, 0, db[0], y), SENSIM_OK);
        ck_assert_msg(!memcmp(x, y, bytes), "%s differs between the backends", d);
        free(x);
        free(y);
        sensim_log_close(la);
        sensim_log_close(lb);
    }
    sensim_log_free_names(names, count);
    sensim_log_close(lg);
}

START_TEST(cli_backend)
{
    /* walls.yaml seen from its static lidar has no ties (no two objects'
     * faces meet where the lidar sees them). With a rig drawing range,
     * angle and dropout noise, --backend twin and --backend embree give:
     * the same points (same count per scan, channels, objects, times), the
     * noisy angles bit for bit (they do not depend on the hit), and in
     * range the same noise draw, point by point: noisy minus clean agrees
     * to float rounding between the backends. */
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5"), *scene = tu_src("data/scenes/walls.yaml");
    char *rig = tu_path(dir, "rig.yaml"), *tw = tu_path(dir, "twin.h5"), *em = tu_path(dir, "embree.h5");
    char *twc = tu_path(dir, "twin-clean.h5"), *emc = tu_path(dir, "embree-clean.h5");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "1", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    ck_assert_int_eq(tu_write_file(rig, "seed: 4\nsensors:\n"
                                        "  - name: lidar\n    type: lidar\n"
                                        "    noise: {range_sigma_base: 0.02, range_sigma_slope: 0.001,\n"
                                        "            azimuth_sigma: 0.002, elevation_sigma: 0.003}\n"
                                        "    dropout: {dropoff_general_rate: 0.1}\n"),
                     0);
    const char *out[4] = {tw, em, twc, emc}, *backend[4] = {"twin", "embree", "twin", "embree"};
    for (int i = 0; i < 4; i++) {
        if (i < 2)
            r = tu_run("render", scene, "-t", gt, "-s", "lidar", "-o", out[i], "-n", "3", "--rig", rig, "--backend",
                       backend[i], NULL);
        else
            r = tu_run("render", scene, "-t", gt, "-s", "lidar", "-o", out[i], "-n", "3", "--backend", backend[i],
                       NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        tu_run_free(&r);
    }
    same_except_distances(tw, em);
    same_except_distances(twc, emc);
    size_t n[4];
    float *rg[4];
    for (int i = 0; i < 4; i++)
        rg[i] = read_f32(out[i], "/sensors/lidar/range", &n[i]);
    ck_assert_uint_eq(n[0], n[1]);
    ck_assert_uint_eq(n[2], n[3]);
    ck_assert_uint_gt(n[2], 10000);
    ck_assert_uint_lt(n[0], n[2]); /* dropouts */
    /* Both logs keep the same rows (the datasets above are equal, noisy
     * angles and dropouts included), so row i is the same point with the
     * same draws: its noisy range and xyz differ between the backends only
     * by the clean distances' rounding (a different draw would move them by
     * the noise's 2 cm). */
    float *pc = read_f32(twc, "/sensors/lidar/points", &n[2]), *pn = read_f32(tw, "/sensors/lidar/points", &n[0]);
    float *ec = read_f32(emc, "/sensors/lidar/points", &n[3]), *en = read_f32(em, "/sensors/lidar/points", &n[1]);
    for (size_t i = 0; i < n[1]; i++)
        ck_assert_within(pn[i], en[i], 2e-6 * (fabs(en[i]) + 10));
    for (size_t i = 0; i < n[3]; i++)
        ck_assert_within(pc[i], ec[i], 2e-6 * (fabs(ec[i]) + 10));
    size_t nr = n[1] / 4;
    for (size_t i = 0; i < nr; i++)
        ck_assert_within(rg[0][i], rg[1][i], 2e-6 * (rg[1][i] + 10));
    free(pc);
    free(pn);
    free(ec);
    free(en);
    for (int i = 0; i < 4; i++)
        free(rg[i]);
    /* Bad values: exit 2 naming the value and the known ones. */
    r = tu_run("render", scene, "-t", gt, "-s", "lidar", "-o", tw, "--backend", "optix", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--backend: unknown backend 'optix' (known: embree, twin, cuda, auto)"), "%s", r.err);
    tu_run_free(&r);
    free(gt);
    free(scene);
    free(rig);
    free(tw);
    free(em);
    free(twc);
    free(emc);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- the shared ray generation (render/gpu/sg_raygen.h, sg_math.h) ---- */

/* Units in the last place of double between a and b. */
static double ulps(double a, double b)
{
    if (a == b)
        return 0;
    return fabs(a - b) / (nextafter(fabs(b), INFINITY) - fabs(b));
}

/* sg_math.h's functions against glibc's libm (an independent, correctly
 * rounded or sub-ulp implementation): within 1 ulp of double for sin, cos
 * and atan2, 3 for tan (a quotient of two), 2 for asin (through atan2 and
 * a square root; as measured), and rounded to float the very same floats, over the
 * arguments ray generation meets (|x| < 1e5 rad for the rosette's prism
 * phases, every quadrant for atan2, [-1, 1] for asin). Philox4x32-10 and
 * the uniform of sg_math.h against lib/rng.c's (Random123), word for word. */
START_TEST(shared_math_matches_libm)
{
    const sensim_rng r = sensim_rng_make(2024, 9, 1);
    double worst[5] = {0};
    size_t fdiff = 0;
    const size_t n = 200000;
    for (size_t i = 0; i < n; i++) {
        double u[4];
        sensim_rng_uniform_fill(&r, 4 * i, 4, u);
        /* Magnitudes spread over 1e-6 .. 1e5 (log-uniform), both signs. */
        const double x = (u[0] < 0.5 ? -1 : 1) * pow(10.0, -6 + 11 * u[1]);
        const double y = (u[2] - 0.5) * pow(10.0, -3 + 6 * u[3]), z = 2 * u[3] - 1;
        const double got[5] = {sg_sin(x), sg_cos(x), sg_tan(fmod(x, 1.5)), sg_atan2(y, x), sg_asin(z)};
        const double want[5] = {sin(x), cos(x), tan(fmod(x, 1.5)), atan2(y, x), asin(z)};
        for (int k = 0; k < 5; k++) {
            const double e = ulps(got[k], want[k]);
            worst[k] = e > worst[k] ? e : worst[k];
            fdiff += (float)got[k] != (float)want[k];
        }
    }
    ck_assert_msg(worst[0] <= 1 && worst[1] <= 1 && worst[2] <= 3 && worst[3] <= 1 && worst[4] <= 2,
                  "ulps: sin %g cos %g tan %g atan2 %g asin %g", worst[0], worst[1], worst[2], worst[3], worst[4]);
    ck_assert_msg(fdiff == 0, "%zu of %zu values round to another float than libm's", fdiff, 5 * n);
    /* Exact values and special cases. */
    ck_assert(sg_sin(0.0) == 0.0 && sg_cos(0.0) == 1.0 && sg_atan2(0.0, 1.0) == 0.0);
    ck_assert(sg_atan2(0.0, -1.0) == M_PI && sg_atan2(1.0, 0.0) == M_PI / 2 && sg_atan2(-1.0, 0.0) == -M_PI / 2);
    ck_assert(sg_asin(1.0) == M_PI / 2 && sg_asin(-1.0) == -M_PI / 2);
    /* Philox: keys, streams, sensors and indices at random. */
    for (uint64_t i = 0; i < 20000; i++) {
        uint32_t w[4];
        sensim_rng_block(&r, i, w);
        const sensim_rng q = sensim_rng_make((uint64_t)w[0] << 32 | w[1], w[2], w[3]);
        const sg_rng g = {{q.key[0], q.key[1]}, q.stream, q.sensor};
        const uint64_t idx = (uint64_t)w[1] << 20 ^ w[3] ^ i;
        ck_assert_uint_eq(sg_rng_u32(&g, idx), sensim_rng_u32(&q, idx));
        ck_assert(sg_rng_uniform(&g, idx) == sensim_rng_uniform(&q, idx));
    }
}
END_TEST

/* The camera's rays of sg_raygen.h against models/lens.c's
 * sensim_lens_pixel_to_dir (libm, and its own arithmetic for pinhole and
 * FOV), mapped from the optical frame (z forward, x right, y down) to the
 * sensor's (x forward, y left, z up): within 1e-13 over the image for each
 * kind of lens of data/scenes/lenses.yaml and fig5's FOV lens. And the
 * rosette's beams against its formula in libm, within float rounding. */
START_TEST(raygen_matches_reference)
{
    sensim_render_camera_params cp = sensim_render_camera_default_params();
    sensim_lens lens[4];
    memset(lens, 0, sizeof lens);
    lens[0].model = SENSIM_LENS_PINHOLE;
    lens[1].model = SENSIM_LENS_FOV;
    lens[2].model = SENSIM_LENS_RADTAN;
    lens[3].model = SENSIM_LENS_KB;
    const double radtan[8] = {-0.281, 0.0912, 0, 0, 0, 0}, kb[4] = {-0.00735, 0.04082, -0.03979, 0.00751};
    for (int k = 0; k < 4; k++) {
        lens[k].width = 640;
        lens[k].height = 480;
        lens[k].hfov = 90 * M_PI / 180;
        lens[k].fx = 601.3;
        lens[k].fy = 598.7;
        lens[k].cx = 319.4;
        lens[k].cy = 241.8;
    }
    memcpy(lens[2].k, radtan, 6 * sizeof(double));
    lens[2].p1 = 0.0012;
    lens[2].p2 = -0.0007;
    memcpy(lens[3].k, kb, sizeof kb);
    lens[3].fx = lens[3].fy = 285.7;
    const sensim_render_lens rl[4] = {SENSIM_RENDER_LENS_PINHOLE, SENSIM_RENDER_LENS_FOV, SENSIM_RENDER_LENS_RADTAN,
                                      SENSIM_RENDER_LENS_KB};
    const sensim_rng r = sensim_rng_make(7, 7, 7);
    for (int k = 0; k < 4; k++) {
        cp.width = 640;
        cp.height = 480;
        cp.hfov = lens[k].hfov;
        cp.lens = rl[k];
        cp.optics = lens[k];
        sensim_render_camera *c = sensim_render_camera_create(&cp);
        ck_assert_msg(c != NULL, "lens %d: %s", k, sensim_last_error());
        double worst = 0;
        for (uint64_t i = 0; i < 20000; i++) {
            const double px = 640 * sensim_rng_uniform(&r, 2 * i), py = 480 * sensim_rng_uniform(&r, 2 * i + 1);
            double d[3];
            sensim_lens_pixel_to_dir(&lens[k], px, py, d);
            const sensim_vec3 g = sensim_render_camera_direction(c, px, py);
            const double e[3] = {g.x - d[2], g.y + d[0], g.z + d[1]};
            for (int a = 0; a < 3; a++)
                worst = fabs(e[a]) > worst ? fabs(e[a]) : worst;
        }
        ck_assert_msg(worst < 1e-13, "lens %d: directions differ by %g", k, worst);
        sensim_render_camera_destroy(c);
    }
    /* Rosette (forest.yaml's): d = (cos th, X sin th / th, Y sin th / th). */
    sensim_render_lidar_params p = sensim_render_lidar_default_params();
    p.scan = SENSIM_SCAN_ROSETTE;
    p.channels = 1;
    p.columns = 10000;
    p.rosette_fov = 38.4 * M_PI / 180;
    p.rosette_hz[0] = 1160.9;
    p.rosette_hz[1] = -742.3;
    sensim_render_lidar *l = sensim_render_lidar_create(&p);
    ck_assert_ptr_nonnull(l);
    for (int col = 0; col < p.columns; col += 7) {
        const double t = sensim_render_lidar_fire_time(l, col, 0), q = 0.25 * p.rosette_fov;
        const double w1 = 2 * M_PI * p.rosette_hz[0], w2 = 2 * M_PI * p.rosette_hz[1];
        const double X = q * (cos(w1 * t) + cos(w2 * t)), Y = q * (sin(w1 * t) + sin(w2 * t)), th = hypot(X, Y);
        const double want[3] = {cos(th), th > 0 ? X * sin(th) / th : 0, th > 0 ? Y * sin(th) / th : 0};
        const sensim_vec3 g = sensim_render_lidar_beam_direction(l, col, 0);
        ck_assert_msg(fabs(g.x - want[0]) < 1e-7 && fabs(g.y - want[1]) < 1e-7 && fabs(g.z - want[2]) < 1e-7,
                      "column %d: (%g %g %g) vs (%g %g %g)", col, g.x, g.y, g.z, want[0], want[1], want[2]);
    }
    sensim_render_lidar_destroy(l);
}
END_TEST

/* The any-hit walks (sg_occluded, sg_occluded_packet_mask, and the twin's
 * rtcOccluded16 stand-in) against the closest hit: a ray is occluded
 * exactly when it has a closest hit in (tnear, tfar]; random rays and
 * packets (coherent or not, random masks and far distances) on the bundled
 * scenes and the instanced and moving one. */
START_TEST(occluded_any_hit)
{
    for (size_t k = 0; k <= NBUNDLED; k++) {
        sensim_scene *s = k < NBUNDLED ? load_bundled(bundled[k]) : mixed_scene();
        ck_assert_int_eq(sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN), SENSIM_OK);
        const sg_scene *v = &s->twin->view;
        float lo[3], hi[3];
        scene_bounds(s, lo, hi);
        const sensim_rng r = sensim_rng_make(77 + k, 5, 0);
        size_t occ = 0, clear = 0;
        for (uint64_t p = 0; p < 1500; p++) {
            double u[8];
            sensim_rng_uniform_fill(&r, 100 * p, 8, u);
            const int coherent = p % 2 == 0;
            const uint32_t mask = p % 3 == 1 ? (uint32_t)(u[5] * 65536.0) & 0xFFFFu : 0xFFFFu;
            sg_ray rays[16];
            sg_hit h[16];
            struct RTCRay16 rr;
            _Alignas(64) int valid[16];
            uint32_t want = 0;
            for (int j = 0; j < 16; j++) {
                double w[7];
                sensim_rng_uniform_fill(&r, 100 * p + 10 + 7 * (uint64_t)j, 7, w);
                double z[3], zn = 0;
                for (int a = 0; a < 3; a++) {
                    z[a] = coherent ? u[3 + a % 2] - 0.5 + 0.02 * w[a] : w[a] - 0.5;
                    zn += z[a] * z[a];
                }
                zn = sqrt(zn);
                for (int a = 0; a < 3; a++) {
                    rays[j].org[a] = (float)(lo[a] + (hi[a] - lo[a]) * (coherent ? u[a] : w[3 + a % 3]));
                    rays[j].dir[a] = (float)(z[a] / zn);
                }
                rays[j].tnear = 0.0f;
                rays[j].tfar = (float)(w[6] * 60);
                rays[j].time = (float)w[5];
                sg_trace(v, rays, h, (size_t)j);
                const int hit = h[j].geom != SG_INVALID;
                ck_assert_int_eq(sg_occluded(v, rays, (size_t)j), hit);
                if (mask >> j & 1u)
                    want |= (uint32_t)hit << j;
                valid[j] = mask >> j & 1u ? -1 : 0;
                rr.org_x[j] = rays[j].org[0];
                rr.org_y[j] = rays[j].org[1];
                rr.org_z[j] = rays[j].org[2];
                rr.dir_x[j] = rays[j].dir[0];
                rr.dir_y[j] = rays[j].dir[1];
                rr.dir_z[j] = rays[j].dir[2];
                rr.tnear[j] = 0.0f;
                rr.tfar[j] = rays[j].tfar;
                rr.time[j] = rays[j].time;
            }
            ck_assert_uint_eq(sg_occluded_packet_mask(v, rays, 0, 16, mask), want);
            sensim_twin_occluded16(s->twin, valid, &rr);
            for (int j = 0; j < 16; j++) {
                const int got = rr.tfar[j] < 0;
                ck_assert_int_eq(got, (int)(want >> j & 1u));
                if (mask >> j & 1u)
                    got ? occ++ : clear++;
            }
        }
        /* Both outcomes seen many times. */
        ck_assert_msg(occ > 1000 && clear > 1000, "%s: %zu occluded, %zu clear",
                      k < NBUNDLED ? bundled[k] : "mixed", occ, clear);
        sensim_scene_destroy(s);
    }
}
END_TEST

Suite *suite_twin(void)
{
    Suite *s = suite_create("twin");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, flatten_invariants);
    tcase_add_test(tc, build_deterministic);
    tcase_add_test(tc, matches_embree_bundled);
    tcase_add_test(tc, matches_embree_instances_and_motion);
    tcase_add_test(tc, packet_matches_single);
    tcase_add_test(tc, lidar_analytic);
    tcase_add_test(tc, threads_bit_identical);
    tcase_add_test(tc, backend_names_and_errors);
    tcase_add_test(tc, cli_backend);
    tcase_add_test(tc, shared_math_matches_libm);
    tcase_add_test(tc, raygen_matches_reference);
    tcase_add_test(tc, occluded_any_hit);
    suite_add_tcase(s, tc);
    return s;
}
