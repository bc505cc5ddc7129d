/* The renderer benches' scene: a 400 m terrain of cells x cells squares
 * (2 triangles each, heights up to 1.5 m) and 48 spheres of 1.5 m radius on
 * rings around the origin at 2.5 m height, committed. bench_render,
 * bench_twin and bench_gpu trace the same scene, so their rates compare.
 * NULL with the library's error set. */
#ifndef SENSIM_BENCH_SCENE_H
#define SENSIM_BENCH_SCENE_H

#include <math.h>
#include <stdlib.h>

#include "bench.h"
#include "sensim/render.h"

/* The renderer benches' lidar: an os128 (128 x 2048) to 200 m with
 * per_beam rays a beam on a grid (3 mrad of divergence when more than
 * one). */
static inline sensim_render_lidar_params bench_lidar_params(int per_beam)
{
    sensim_render_lidar_params p;
    sensim_render_lidar_preset("os128", &p);
    p.divergence = per_beam > 1 ? 3e-3 : 0;
    p.pattern = SENSIM_BEAM_GRID;
    p.pattern_n = per_beam;
    p.max_range = 200;
    return p;
}

/* The renderer benches' camera: 1920 x 1080, 4 samples a pixel, 10 ms
 * exposure, 90 degrees across. */
static inline sensim_render_camera_params bench_camera_params(void)
{
    sensim_render_camera_params cp = sensim_render_camera_default_params();
    cp.width = 1920;
    cp.height = 1080;
    cp.samples = 4;
    cp.exposure = 0.01;
    cp.hfov = 90 * M_PI / 180;
    return cp;
}

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

/* The start of the renderer benches: "[COUNT [TERRAIN_CELLS ...]]" from
 * the command line (3 and 720 when absent) and the scene of that many
 * cells, built in *build_s wall seconds. 0, or main's exit status after the
 * message on stderr: 2 and "usage: USAGE" when COUNT < 1, TERRAIN_CELLS < 10
 * or !rest_ok (the caller's check of the other arguments), 1 and the
 * library's error when the scene cannot be built. */
static inline int bench_scene_start(int argc, char **argv, const char *name, const char *usage, int rest_ok,
                                    int *count, sensim_scene **s, double *build_s)
{
    int cells = argc > 2 ? atoi(argv[2]) : 720;
    *count = argc > 1 ? atoi(argv[1]) : 3;
    if (*count < 1 || cells < 10 || !rest_ok) {
        fprintf(stderr, "usage: %s\n", usage);
        return 2;
    }
    double t0 = bench_now();
    *s = bench_scene_build(cells);
    *build_s = bench_now() - t0;
    return *s ? 0 : bench_fail(name);
}

/* Wall seconds for `frames` frames of camera cp standing at pose. */
static inline double bench_camera_frames(const sensim_scene *s, const sensim_render_camera_params *cp,
                                         sensim_pose pose, int frames)
{
    sensim_render_camera *c = sensim_render_camera_create(cp);
    float *img = malloc((size_t)cp->width * cp->height * 3 * sizeof *img);
    double t0 = bench_now();
    for (int f = 0; c && img && f < frames; f++)
        sensim_render_camera_render(c, s, bench_still, &pose, 0, (uint64_t)f, img);
    double dt = bench_now() - t0;
    free(img);
    sensim_render_camera_destroy(c);
    return dt;
}

#endif
