/* sg_types.h - the flattened scene both the CPU twin and the CUDA kernels
 * trace (issue 18).
 *
 * Shared code: this header and the other headers of render/gpu/ are written in the
 * common subset of C11 and CUDA C++. Functions are `SENSIM_HD static inline`
 * (__host__ __device__ under CUDA, nothing in C), use no libm (only + - * /
 * and comparisons, correctly rounded in IEEE single and double on both
 * sides) and must be compiled without contraction of a*b+c
 * (-ffp-contract=off for the twin, -fmad=false / -ffp-contract=off for the
 * kernels), so that a kernel and the twin give the same bits for the same
 * ray.
 *
 * Layout (built on the host by render/twin_bvh.c from Embree's
 * rtcBuildBVH, flattened depth first):
 *  - sg_node: a binary BVH node holding its two children's boxes (Aila and
 *    Laine 2009 layout: one 64-byte line per visited node gives both boxes).
 *    A child reference c >= 0 is an interior node (index into the node
 *    array); c < 0 is a leaf whose items are ~c .. ~c + count - 1.
 *  - sg_blas: a bottom-level tree over triangles (sg_tri); the static
 *    objects of a scene are one tree in world space (`world`), each mesh
 *    used by an instance or a moving object one tree in its object space.
 *  - sg_inst: an instance (scene object) of a bottom-level tree under a
 *    3x4 transform, `steps` of them over the ray-time window [0, 1] for a
 *    moving object (interpolated linearly per ray, as Embree does).
 *  - the top level: a tree (same sg_node format) whose leaf items are
 *    instance indices.
 * All indices are absolute (into the scene's arrays). The struct sg_scene
 * holds pointers: host pointers for the twin, device pointers for a kernel
 * (the launcher copies the arrays and fills a second sg_scene). */
#ifndef SENSIM_SG_TYPES_H
#define SENSIM_SG_TYPES_H

#include <stddef.h>
#include <stdint.h>

#if (defined(__CUDACC__) || defined(__CUDA__)) && defined(__host__)
#define SENSIM_HD __host__ __device__
#elif defined(__CUDACC__) || defined(__CUDA__)
/* clang CUDA without the CUDA headers (-nocudainc): the attributes. */
#define SENSIM_HD __attribute__((host)) __attribute__((device))
#else
#define SENSIM_HD
#endif

/* No primitive / geometry / instance (Embree's RTC_INVALID_GEOMETRY_ID). */
#define SG_INVALID 0xFFFFFFFFu
/* Traversal stack entries; trees are built at most SG_MAX_DEPTH deep. */
#define SG_STACK 64
#define SG_MAX_DEPTH 48

typedef struct sg_node {
    float box[2][6];   /* child c: lower x y z, upper x y z */
    int32_t child[2];  /* >= 0: interior node; < 0: leaf, items from ~child */
    uint32_t count[2]; /* leaf item count (0 for an interior child) */
} sg_node;             /* 64 bytes */

typedef struct sg_tri {
    float v0[3], v1[3], v2[3]; /* vertices as Embree has them (world or object space) */
    uint32_t geom;             /* geomID: the scene object (world tree) or 0 (a mesh's own tree) */
    uint32_t prim;             /* primID: the triangle's index in its mesh */
} sg_tri;

typedef struct sg_blas {
    int32_t root;       /* child reference of the root (may be a leaf) */
    uint32_t count;     /* item count when root is a leaf */
    float lo[3], hi[3]; /* bounds of the tree's triangles */
} sg_blas;

typedef struct sg_inst {
    uint32_t blas;  /* bottom-level tree */
    uint32_t id;    /* instID reported for hits (the scene object) */
    uint32_t steps; /* transforms over ray time [0, 1]; 1: static */
    uint32_t xfm;   /* first of them in sg_scene.xfm (and its inverse in ixfm) */
} sg_inst;

typedef struct sg_scene {
    const sg_node *node;
    const sg_tri *tri;
    const sg_blas *blas;
    const sg_inst *inst;
    /* 3x4 object-to-world transforms, 12 floats each, column-major as
     * Embree's RTC_FORMAT_FLOAT3X4_COLUMN_MAJOR: x[3c + row] is column c of
     * the linear part R S, x[9..11] the translation; ixfm: their inverses
     * (world to object) in the same layout. */
    const float *xfm, *ixfm;
    uint32_t nnode, ntri, nblas, ninst, nxfm;
    int32_t world;      /* blas of the static world-space triangles, -1: none */
    int32_t top;        /* child reference of the instance tree's root, valid when ninst > 0 */
    uint32_t top_count; /* item count when top is a leaf */
} sg_scene;

typedef struct sg_ray {
    float org[3];
    float tnear;  /* hits need t > tnear */
    float dir[3]; /* need not be unit; t is in its units */
    float tfar;   /* hits need t <= tfar */
    float time;   /* [0, 1] over the scene's keyframe window */
} sg_ray;

typedef struct sg_hit {
    float t;       /* distance; the ray's tfar on a miss */
    float u, v;    /* barycentric weights of v1 and v2 (Embree's u, v) */
    float ng[3];   /* unnormalized geometric normal (v1 - v0) x (v2 - v0),
                       * in object space for an instance hit (as Embree) */
    uint32_t geom; /* geomID, SG_INVALID on a miss */
    uint32_t prim; /* primID */
    uint32_t inst; /* instID (the scene object), SG_INVALID for world triangles */
} sg_hit;

#endif
