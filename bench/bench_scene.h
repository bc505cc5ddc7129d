/* The renderer benches' scene: a 400 m terrain of cells x cells squares
 * (2 triangles each, heights up to 1.5 m) and 48 spheres of 1.5 m radius on
 * rings around the origin at 2.5 m height, committed. bench_render,
 * bench_twin and bench_gpu trace the same scene, so their rates compare.
 * NULL with the library's error set. */
#ifndef SENSIM_BENCH_SCENE_H
#define SENSIM_BENCH_SCENE_H

#include <math.h>

#include "sensim/render.h"

/* A pose track that stands still at the sensim_pose `user` points to. */
static inline void bench_still(const void *user, double t, sensim_pose *out)
{
    (void)t;
    *out = *(const sensim_pose *)user;
}

static inline sensim_scene *bench_scene_build(int cells)
{
    sensim_scene *s = sensim_scene_create();
    if (!s)
        return NULL;
    int terrain = sensim_scene_add_terrain(s, "terrain", 400, 400, cells, cells, 1.5);
    int ball = sensim_scene_add_sphere(s, "ball", 1.5, 64);
    if (terrain < 0 || ball < 0 || sensim_scene_add_object(s, terrain, 0, sensim_pose_identity()) < 0)
        goto fail;
    for (int i = 0; i < 48; i++) {
        sensim_pose p = sensim_pose_identity();
        double a = 2 * M_PI * i / 48, r = 8 + 3 * (i % 5);
        p.p = sensim_vec3_make(r * cos(a), r * sin(a), 2.5);
        if (sensim_scene_add_object(s, ball, 0, p) < 0)
            goto fail;
    }
    if (sensim_scene_commit(s))
        goto fail;
    return s;
fail:
    sensim_scene_destroy(s);
    return NULL;
}

#endif
