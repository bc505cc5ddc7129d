/* The twin's BVH: built on the host by Embree's rtcBuildBVH (binned SAH,
 * binary) through the create-node / set-children / set-bounds /
 * create-leaf callbacks, then flattened depth first into the one array
 * layout of render/gpu/sg_types.h that the CPU twin and the CUDA kernels
 * both traverse (issue 18).
 *
 * Determinism: Embree's parallel build partitions primitives in place, so
 * the order of the items inside a leaf may depend on the thread count; the
 * leaves' items are sorted here, and the flattening walks the tree from the
 * root, so the artefact is the same at any thread count (test_twin.c
 * checks 1 against 2). The split planes come from exact bin counts and
 * min/max bounds; only a fallback split of primitives with equal centroids
 * could in principle see the order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/sg_bvh.h"
#include "render_internal.h"
#include "twin.h"
#include "../lib/base_internal.h"

/* A node of Embree's tree as the callbacks make it (in Embree's
 * thread-local memory, freed with the RTCBVH). */
typedef struct bnode {
    int leaf;
    unsigned n; /* leaf: item count */
    struct bnode *kid[2];
    float box[2][6];
    unsigned ids[]; /* leaf: items, sorted */
} bnode;

static void *cb_create_node(RTCThreadLocalAllocator a, unsigned int n, void *user)
{
    (void)n;
    (void)user;
    bnode *b = rtcThreadLocalAlloc(a, sizeof *b, 16);
    memset(b, 0, sizeof *b);
    return b;
}

static void cb_set_children(void *p, void **kids, unsigned int n, void *user)
{
    (void)user;
    bnode *b = p;
    for (unsigned i = 0; i < n && i < 2; i++)
        b->kid[i] = kids[i];
}

static void cb_set_bounds(void *p, const struct RTCBounds **bounds, unsigned int n, void *user)
{
    (void)user;
    bnode *b = p;
    for (unsigned i = 0; i < n && i < 2; i++) {
        const struct RTCBounds *r = bounds[i];
        const float box[6] = {r->lower_x, r->lower_y, r->lower_z, r->upper_x, r->upper_y, r->upper_z};
        memcpy(b->box[i], box, sizeof box);
    }
}

static void *cb_create_leaf(RTCThreadLocalAllocator a, const struct RTCBuildPrimitive *prims, size_t n, void *user)
{
    (void)user;
    bnode *b = rtcThreadLocalAlloc(a, sizeof *b + n * sizeof(unsigned), 16);
    memset(b, 0, sizeof *b);
    b->leaf = 1;
    b->n = (unsigned)n;
    for (size_t i = 0; i < n; i++) { /* insertion sort: leaves are small */
        unsigned x = prims[i].primID;
        size_t j = i;
        for (; j > 0 && b->ids[j - 1] > x; j--)
            b->ids[j] = b->ids[j - 1];
        b->ids[j] = x;
    }
    return b;
}

/* Arrays being filled. */
typedef struct acc {
    sensim_twin *t;
    size_t cap_node, cap_tri, cap_blas;
    uint32_t *order; /* leaf order of the current tree's items */
    size_t norder, cap_order;
} acc;

#define GROW(a, field, need) \
    (sensim_render_grow((void **)&(a)->t->field, &(a)->cap_##field, (need), sizeof *(a)->t->field) < 0 \
         ? (sensim_error(SENSIM_ENOMEM, "twin: out of memory"), -1) \
         : 0)

/* Depth-first flattening of b's subtree: child reference and item count
 * into *ref and *cnt; item ids appended to a->order, items numbered from
 * item_base. -1 on error. */
static int flatten(acc *a, const bnode *b, uint32_t item_base, int depth, int32_t *ref, uint32_t *cnt)
{
    if (depth > SG_MAX_DEPTH)
        return sensim_error(SENSIM_EINTERNAL, "twin: BVH deeper than %d levels", SG_MAX_DEPTH), -1;
    if (b->leaf) {
        if (b->n > a->cap_order - a->norder)
            return sensim_error(SENSIM_EINTERNAL, "twin: BVH leaves hold more items than were given"), -1;
        *ref = ~(int32_t)(item_base + a->norder);
        *cnt = b->n;
        memcpy(a->order + a->norder, b->ids, b->n * sizeof *b->ids);
        a->norder += b->n;
        return 0;
    }
    if (GROW(a, node, a->t->view.nnode + 1) < 0)
        return -1;
    const uint32_t me = a->t->view.nnode++;
    memcpy(a->t->node[me].box, b->box, sizeof b->box);
    for (int c = 0; c < 2; c++) {
        int32_t r;
        uint32_t n;
        if (!b->kid[c] || flatten(a, b->kid[c], item_base, depth + 1, &r, &n) < 0)
            return b->kid[c] ? -1 : (sensim_error(SENSIM_EINTERNAL, "twin: BVH node without a child"), -1);
        a->t->node[me].child[c] = r;
        a->t->node[me].count[c] = n;
    }
    *ref = (int32_t)me;
    *cnt = 0;
    return 0;
}

/* Builds a tree over n boxes (prims[i].primID = i) and flattens it; the
 * items' leaf order goes to a->order. */
static int build_tree(acc *a, RTCDevice dev, struct RTCBuildPrimitive *prims, size_t n, uint32_t item_base,
                      int32_t *ref, uint32_t *cnt)
{
    a->norder = 0;
    a->cap_order = n;
    RTCBVH bvh = rtcNewBVH(dev);
    if (!bvh)
        return sensim_error(SENSIM_EINTERNAL, "twin: embree cannot create a BVH (error %d)",
                            (int)rtcGetDeviceError(dev)),
               -1;
    struct RTCBuildArguments args = rtcDefaultBuildArguments();
    args.buildQuality = RTC_BUILD_QUALITY_MEDIUM;
    args.maxBranchingFactor = 2;
    args.maxDepth = SG_MAX_DEPTH;
    args.minLeafSize = 1;
    args.maxLeafSize = 4;
    args.traversalCost = 1.0f;
    args.intersectionCost = 1.0f;
    args.bvh = bvh;
    args.primitives = prims;
    args.primitiveCount = n;
    args.primitiveArrayCapacity = n;
    args.createNode = cb_create_node;
    args.setNodeChildren = cb_set_children;
    args.setNodeBounds = cb_set_bounds;
    args.createLeaf = cb_create_leaf;
    const bnode *root = rtcBuildBVH(&args);
    int rc;
    if (!root || rtcGetDeviceError(dev) != RTC_ERROR_NONE)
        rc = (sensim_error(SENSIM_EINTERNAL, "twin: embree's BVH build failed over %zu items", n), -1);
    else
        rc = flatten(a, root, item_base, 0, ref, cnt);
    if (rc == 0 && a->norder != n)
        rc = (sensim_error(SENSIM_EINTERNAL, "twin: BVH holds %zu of %zu items", a->norder, n), -1);
    rtcReleaseBVH(bvh);
    return rc;
}

static void prim_box(struct RTCBuildPrimitive *p, const float *lo, const float *hi, unsigned id)
{
    p->lower_x = lo[0];
    p->lower_y = lo[1];
    p->lower_z = lo[2];
    p->upper_x = hi[0];
    p->upper_y = hi[1];
    p->upper_z = hi[2];
    p->geomID = 0;
    p->primID = id;
}

/* A bottom-level tree over the n triangles of cand (moved into the twin
 * in leaf order). */
static int add_blas(acc *a, RTCDevice dev, const sg_tri *cand, size_t n, uint32_t *blas_out)
{
    sensim_twin *t = a->t;
    /* RTCBuildPrimitive is declared 32-byte aligned (UBSan checks it). */
    struct RTCBuildPrimitive *prims = aligned_alloc(32, (n ? n : 1) * sizeof *prims);
    a->order = malloc((n ? n : 1) * sizeof *a->order);
    if (!prims || !a->order || GROW(a, blas, t->view.nblas + 1) < 0 || GROW(a, tri, t->view.ntri + n) < 0) {
        free(prims);
        free(a->order);
        a->order = NULL;
        return sensim_error(SENSIM_ENOMEM, "twin: out of memory"), -1;
    }
    sg_blas *b = &t->blas[t->view.nblas];
    for (int k = 0; k < 3; k++) {
        b->lo[k] = 3.0e38f;
        b->hi[k] = -3.0e38f;
    }
    for (size_t i = 0; i < n; i++) {
        float lo[3], hi[3];
        for (int k = 0; k < 3; k++) {
            lo[k] = sg_minf(sg_minf(cand[i].v0[k], cand[i].v1[k]), cand[i].v2[k]);
            hi[k] = sg_maxf(sg_maxf(cand[i].v0[k], cand[i].v1[k]), cand[i].v2[k]);
            b->lo[k] = sg_minf(b->lo[k], lo[k]);
            b->hi[k] = sg_maxf(b->hi[k], hi[k]);
        }
        prim_box(&prims[i], lo, hi, (unsigned)i);
    }
    const uint32_t base = t->view.ntri;
    int rc = build_tree(a, dev, prims, n, base, &b->root, &b->count);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            t->tri[base + i] = cand[a->order[i]];
        t->view.ntri += (uint32_t)n;
        *blas_out = t->view.nblas++;
    }
    free(prims);
    free(a->order);
    a->order = NULL;
    return rc;
}

/* World box of blas b under every time step of instance in, padded for
 * the rounding of the twin's float ray transform. */
static void inst_box(const sensim_twin *t, const sg_inst *in, float lo[3], float hi[3])
{
    const sg_blas *b = &t->blas[in->blas];
    double l[3] = {1e300, 1e300, 1e300}, h[3] = {-1e300, -1e300, -1e300};
    for (uint32_t k = 0; k < in->steps; k++) {
        const float *x = t->xfm + 12 * ((size_t)in->xfm + k);
        for (int c = 0; c < 8; c++) {
            const double p[3] = {c & 1 ? b->hi[0] : b->lo[0], c & 2 ? b->hi[1] : b->lo[1], c & 4 ? b->hi[2] : b->lo[2]};
            for (int r = 0; r < 3; r++) {
                double y = (double)x[r] * p[0] + (double)x[3 + r] * p[1] + (double)x[6 + r] * p[2] + x[9 + r];
                l[r] = y < l[r] ? y : l[r];
                h[r] = y > h[r] ? y : h[r];
            }
        }
    }
    double big = 0;
    for (int r = 0; r < 3; r++) {
        double m = (l[r] < 0 ? -l[r] : l[r]) > (h[r] < 0 ? -h[r] : h[r]) ? (l[r] < 0 ? -l[r] : l[r])
                                                                         : (h[r] < 0 ? -h[r] : h[r]);
        big = m + (h[r] - l[r]) > big ? m + (h[r] - l[r]) : big;
    }
    const double pad = 1e-5 * big + 1e-20;
    for (int r = 0; r < 3; r++) {
        lo[r] = (float)(l[r] - pad);
        hi[r] = (float)(h[r] + pad);
    }
}

static int build_all(acc *a, const sensim_scene *s, RTCDevice dev)
{
    sensim_twin *t = a->t;
    /* The static objects, baked as Embree has them. */
    size_t nstat = 0, ninst = 0, nxfm = 0;
    for (size_t i = 0; i < s->nobj; i++) {
        const scene_object *o = &s->obj[i];
        if (!o->nkey && !o->instanced)
            nstat += s->mesh[o->mesh].nt;
        else {
            ninst++;
            nxfm += (size_t)sensim_scene_object_steps(o);
        }
    }
    t->view.world = -1;
    if (nstat > 0) {
        sg_tri *cand = malloc(nstat * sizeof *cand);
        float *v = NULL;
        size_t m = 0;
        int rc = cand ? 0 : -1;
        for (size_t i = 0; rc == 0 && i < s->nobj; i++) {
            const scene_object *o = &s->obj[i];
            const scene_mesh *me = &s->mesh[o->mesh];
            if (o->nkey || o->instanced)
                continue;
            float *nv = realloc(v, me->nv * 3 * sizeof *v);
            if (!nv) {
                rc = -1;
                break;
            }
            v = nv;
            sensim_scene_bake_vertices(me, &o->pose, o->scale, v);
            for (size_t k = 0; k < me->nt; k++, m++) {
                memcpy(cand[m].v0, v + 3 * me->tri[3 * k], 3 * sizeof *v);
                memcpy(cand[m].v1, v + 3 * me->tri[3 * k + 1], 3 * sizeof *v);
                memcpy(cand[m].v2, v + 3 * me->tri[3 * k + 2], 3 * sizeof *v);
                cand[m].geom = (uint32_t)i;
                cand[m].prim = (uint32_t)k;
            }
        }
        free(v);
        uint32_t w;
        if (rc < 0)
            sensim_error(SENSIM_ENOMEM, "twin: out of memory");
        else
            rc = add_blas(a, dev, cand, nstat, &w);
        free(cand);
        if (rc < 0)
            return -1;
        t->view.world = (int32_t)w;
    }
    if (ninst == 0)
        return 0;
    /* One tree per mesh used by an instance, in its own space. */
    int *mesh_blas = malloc(s->nmesh * sizeof *mesh_blas);
    t->inst = malloc(ninst * sizeof *t->inst);
    t->xfm = malloc(nxfm * 12 * sizeof *t->xfm);
    t->ixfm = malloc(nxfm * 12 * sizeof *t->ixfm);
    sg_inst *tmp = malloc(ninst * sizeof *tmp);
    struct RTCBuildPrimitive *prims = aligned_alloc(32, (ninst ? ninst : 1) * sizeof *prims);
    a->order = malloc(ninst * sizeof *a->order);
    int rc = 0;
    if (!mesh_blas || !t->inst || !t->xfm || !t->ixfm || !tmp || !prims || !a->order)
        rc = (sensim_error(SENSIM_ENOMEM, "twin: out of memory"), -1);
    for (size_t i = 0; rc == 0 && i < s->nmesh; i++)
        mesh_blas[i] = -1;
    size_t q = 0, nx = 0;
    for (size_t i = 0; rc == 0 && i < s->nobj; i++) {
        const scene_object *o = &s->obj[i];
        if (!o->nkey && !o->instanced)
            continue;
        const scene_mesh *me = &s->mesh[o->mesh];
        if (mesh_blas[o->mesh] < 0) {
            sg_tri *cand = malloc(me->nt * sizeof *cand);
            if (!cand) {
                rc = (sensim_error(SENSIM_ENOMEM, "twin: out of memory"), -1);
                break;
            }
            for (size_t k = 0; k < me->nt; k++) {
                memcpy(cand[k].v0, me->v + 3 * me->tri[3 * k], 3 * sizeof *me->v);
                memcpy(cand[k].v1, me->v + 3 * me->tri[3 * k + 1], 3 * sizeof *me->v);
                memcpy(cand[k].v2, me->v + 3 * me->tri[3 * k + 2], 3 * sizeof *me->v);
                cand[k].geom = 0;
                cand[k].prim = (uint32_t)k;
            }
            uint32_t b;
            uint32_t *keep = a->order; /* add_blas uses its own order array */
            a->order = NULL;
            rc = add_blas(a, dev, cand, me->nt, &b);
            a->order = keep;
            free(cand);
            if (rc < 0)
                break;
            mesh_blas[o->mesh] = (int)b;
        }
        sg_inst *in = &tmp[q];
        in->blas = (uint32_t)mesh_blas[o->mesh];
        in->id = (uint32_t)i;
        in->steps = (uint32_t)sensim_scene_object_steps(o);
        in->xfm = (uint32_t)nx;
        for (uint32_t k = 0; k < in->steps; k++, nx++) {
            sensim_scene_object_xfm(s, o, (int)k, t->xfm + 12 * nx);
            sg_xfm_invert(t->xfm + 12 * nx, t->ixfm + 12 * nx);
        }
        float lo[3], hi[3];
        inst_box(t, in, lo, hi);
        prim_box(&prims[q], lo, hi, (unsigned)q);
        q++;
    }
    if (rc == 0) {
        t->view.nxfm = (uint32_t)nx;
        /* The top level: a tree whose items are the instances. */
        rc = build_tree(a, dev, prims, ninst, 0, &t->view.top, &t->view.top_count);
        for (size_t i = 0; rc == 0 && i < ninst; i++)
            t->inst[i] = tmp[a->order[i]];
        if (rc == 0)
            t->view.ninst = (uint32_t)ninst;
    }
    free(mesh_blas);
    free(tmp);
    free(prims);
    free(a->order);
    a->order = NULL;
    return rc;
}

sensim_twin *sensim_twin_build(const sensim_scene *s, int threads)
{
    if (!s || !s->committed) {
        sensim_error(SENSIM_EINVAL, "twin: the scene must be committed first");
        return NULL;
    }
    if (threads < 0) {
        sensim_error(SENSIM_EINVAL, "twin: thread count must be >= 0 (got %d)", threads);
        return NULL;
    }
    sensim_twin *t = calloc(1, sizeof *t);
    if (!t) {
        sensim_error(SENSIM_ENOMEM, "twin: out of memory");
        return NULL;
    }
    RTCDevice dev = s->dev;
    if (threads > 0) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "threads=%d,verbose=0", threads);
        dev = rtcNewDevice(cfg);
        if (!dev) {
            free(t);
            sensim_error(SENSIM_EINTERNAL, "twin: embree cannot create a device (error %d)",
                         (int)rtcGetDeviceError(NULL));
            return NULL;
        }
    }
    acc a = {.t = t};
    int rc = build_all(&a, s, dev);
    if (threads > 0)
        rtcReleaseDevice(dev);
    if (rc < 0) {
        sensim_twin_destroy(t);
        return NULL;
    }
    /* Nodes on 64-byte lines: one line per visited node, not two. */
    size_t nb = ((size_t)t->view.nnode * sizeof *t->node + 63) / 64 * 64;
    sg_node *aligned = aligned_alloc(64, nb ? nb : 64);
    if (!aligned) {
        sensim_twin_destroy(t);
        sensim_error(SENSIM_ENOMEM, "twin: out of memory");
        return NULL;
    }
    if (t->view.nnode)
        memcpy(aligned, t->node, t->view.nnode * sizeof *t->node);
    free(t->node);
    t->node = aligned;
    t->view.node = t->node;
    t->view.tri = t->tri;
    t->view.blas = t->blas;
    t->view.inst = t->inst;
    t->view.xfm = t->xfm;
    t->view.ixfm = t->ixfm;
    t->bytes = t->view.nnode * sizeof *t->node + t->view.ntri * sizeof *t->tri + t->view.nblas * sizeof *t->blas +
               t->view.ninst * sizeof *t->inst + 2 * (size_t)t->view.nxfm * 12 * sizeof(float);
    return t;
}

void sensim_twin_destroy(sensim_twin *t)
{
    if (!t)
        return;
    SENSIM_FREE_ALL(t->node, t->tri, t->blas, t->inst, t->xfm, t->ixfm, t);
}
