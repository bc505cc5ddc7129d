/* bench_gpu: the CUDA backend against the CPU twin on the same machine
 * (issue 18), on bench_render's scene (> 1 M triangles: terrain and 48
 * spheres):
 *  - lidar primary rays of a 128 x 2048 scan at 1, 4 and 9 rays per beam:
 *    the kernel alone on rays already on the device (Grays/s), with the
 *    copies of the rays and hits (Grays/s), and the twin's sg_trace over
 *    the same rays with OpenMP (Grays/s); hits compared bit for bit;
 *  - whole scans (sensim_render_lidar_scan: rays made on the host, traced,
 *    shaded, compacted), scans/s for each backend, points compared;
 *  - camera frames at 1920x1080, 4 samples per pixel with shadow rays,
 *    frames/s for each backend, images compared.
 *
 *   bench_gpu [REPS [TERRAIN_CELLS]]   (defaults 3, 720)
 *   bench_gpu --probe                  the device, or why there is none (exit 2)
 *
 * Rates are from the best of REPS runs. Without a usable GPU it prints
 * "no GPU: skipped" with the reason and exits 0: no figure is made up. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The bench reaches into the scene for the twin's and the device's
 * flattened scenes so that both trace exactly the same rays. */
#include "../render/cuda_loader.h"
#include "../render/render_internal.h"
#include "bench_scene.h"
#include "../render/twin.h"
#include "bench.h"

static sensim_scene *bench_scene(int cells)
{
    sensim_scene *s = bench_scene_build(cells);
    if (s && (sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN) ||
              sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_CUDA))) {
        sensim_scene_destroy(s);
        return NULL;
    }
    return s;
}

/* The scan's world rays in the lidar's order (column, channel, sub-ray). */
static sg_ray *scan_rays(const sensim_render_lidar *l, const sensim_render_lidar_params *p, sensim_pose pose, size_t *n)
{
    const int nr = sensim_render_lidar_rays_per_beam(l);
    *n = (size_t)p->columns * p->channels * nr;
    sg_ray *r = malloc(*n * sizeof *r);
    double a[SENSIM_RENDER_LIDAR_MAX_RAYS], b[SENSIM_RENDER_LIDAR_MAX_RAYS], w[SENSIM_RENDER_LIDAR_MAX_RAYS];
    sensim_render_lidar_beam_rays(l, a, b, w);
    for (int c = 0; r && c < p->columns; c++)
        for (int k = 0; k < p->channels; k++) {
            sensim_vec3 e = sensim_quat_rotate(pose.q, sensim_render_lidar_beam_direction(l, c, k));
            double ch = hypot(e.x, e.y);
            sensim_vec3 u = sensim_vec3_make(-e.y / ch, e.x / ch, 0), v = sensim_vec3_cross(e, u);
            for (int j = 0; j < nr; j++) {
                sensim_vec3 d =
                    sensim_vec3_add(e, sensim_vec3_add(sensim_vec3_scale(u, a[j]), sensim_vec3_scale(v, b[j])));
                d = sensim_vec3_scale(d, 1 / sensim_vec3_norm(d));
                sg_ray *y = &r[((size_t)c * p->channels + k) * nr + j];
                y->org[0] = (float)pose.p.x;
                y->org[1] = (float)pose.p.y;
                y->org[2] = (float)pose.p.z;
                y->dir[0] = (float)d.x;
                y->dir[1] = (float)d.y;
                y->dir[2] = (float)d.z;
                y->tnear = 0;
                y->tfar = (float)p->max_range;
                y->time = 0;
            }
        }
    return r;
}

/* Best time of reps launches of the trace kernel on rays already on the
 * device (the scene's batch buffers). */
static double kernel_only(sensim_cuda_scene *cs, const sg_ray *rays, sg_hit *hits, size_t n, int reps)
{
    if (sensim_cuda_scene_trace(cs, rays, hits, n)) /* uploads and sizes the buffers */
        return NAN;
    unsigned long long nn = n;
    void *params[] = {&cs->dev, &cs->rays, &cs->hits, &nn};
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        if (sensim_cuda_launch(cs->cu, "sg_trace_kernel", n, params))
            return NAN;
        best = fmin(best, bench_now() - t0);
    }
    return best;
}

static int same_points(const sensim_render_lidar_points *a, const sensim_render_lidar_points *b)
{
    return a->count == b->count && !memcmp(a->xyzi, b->xyzi, 4 * a->count * sizeof *a->xyzi) &&
           !memcmp(a->range, b->range, a->count * sizeof *a->range) &&
           !memcmp(a->object, b->object, a->count * sizeof *a->object);
}

int main(int argc, char **argv)
{
    char dev[512];
    if (sensim_render_cuda_probe(dev, sizeof dev)) {
        printf("bench_gpu: no GPU: skipped (%s)\n", sensim_last_error());
        return argc > 1 && !strcmp(argv[1], "--probe") ? 2 : 0;
    }
    printf("device: %s\n", dev);
    if (argc > 1 && !strcmp(argv[1], "--probe"))
        return 0;
    int reps = argc > 1 ? atoi(argv[1]) : 3, cells = argc > 2 ? atoi(argv[2]) : 720;
    if (reps < 1 || cells < 10) {
        fprintf(stderr, "usage: bench_gpu [REPS [TERRAIN_CELLS]] | bench_gpu --probe\n");
        return 2;
    }
    double tb = bench_now();
    sensim_scene *s = bench_scene(cells);
    if (!s)
        return bench_fail("bench_gpu");
    printf("scene: %zu triangles, twin and device copy built in %.2f s (%.1f MiB on the device); CPU: %d threads\n",
           sensim_scene_triangle_count(s), bench_now() - tb, s->cuda->bytes / 1048576.0, omp_get_max_threads());
    sensim_pose pose = sensim_pose_identity();
    pose.p = sensim_vec3_make(0.3, 0.2, 3.0);
    int status = 0;
    printf("%-16s %9s %12s %12s %12s %8s %10s %10s %6s\n", "lidar 128x2048", "rays", "kernel Gr/s", "+copy Gr/s",
           "twin Gr/s", "GPU/twin", "scans/s", "twin sc/s", "same");
    const int per_beam[3] = {1, 2, 3};
    for (int v = 0; v < 3; v++) {
        sensim_render_lidar_params p = bench_lidar_params(per_beam[v]);
        p.backend = SENSIM_RENDER_BACKEND_CUDA;
        sensim_render_lidar *lg = sensim_render_lidar_create(&p);
        p.backend = SENSIM_RENDER_BACKEND_TWIN;
        sensim_render_lidar *lt = sensim_render_lidar_create(&p);
        sensim_render_lidar_points *pg = sensim_render_lidar_points_create(lg),
                                   *pt = sensim_render_lidar_points_create(lt);
        size_t n = 0;
        sg_ray *rays = scan_rays(lt, &p, pose, &n);
        sg_hit *hg = malloc(n * sizeof *hg), *ht = malloc(n * sizeof *ht);
        if (!lg || !lt || !pg || !pt || !rays || !hg || !ht)
            return bench_fail("bench_gpu");
        double tk = kernel_only(s->cuda, rays, hg, n, reps), tc = INFINITY, tt = INFINITY, sg = INFINITY, st = INFINITY;
        for (int r = 0; r < reps; r++) {
            double t0 = bench_now();
            if (sensim_cuda_scene_trace(s->cuda, rays, hg, n))
                tc = NAN;
            tc = fmin(tc, bench_now() - t0);
            t0 = bench_now();
            sensim_twin_trace(s->twin, rays, ht, n);
            tt = fmin(tt, bench_now() - t0);
            t0 = bench_now();
            if (sensim_render_lidar_scan(lg, s, bench_still, &pose, 0, (uint64_t)r, pg))
                fprintf(stderr, "bench_gpu: %s\n", sensim_last_error());
            sg = fmin(sg, bench_now() - t0);
            t0 = bench_now();
            sensim_render_lidar_scan(lt, s, bench_still, &pose, 0, (uint64_t)r, pt);
            st = fmin(st, bench_now() - t0);
        }
        int same = !memcmp(hg, ht, n * sizeof *hg) && same_points(pg, pt);
        status |= !same;
        printf("%-16d %9zu %12.3f %12.3f %12.3f %8.1f %10.2f %10.2f %6s\n", sensim_render_lidar_rays_per_beam(lg), n,
               n / tk / 1e9, n / tc / 1e9, n / tt / 1e9, tt / tc, 1 / sg, 1 / st, same ? "yes" : "NO");
        free(rays);
        free(hg);
        free(ht);
        sensim_render_lidar_points_destroy(pg);
        sensim_render_lidar_points_destroy(pt);
        sensim_render_lidar_destroy(lg);
        sensim_render_lidar_destroy(lt);
    }
    sensim_render_camera_params cp = bench_camera_params();
    float *ig = malloc((size_t)1920 * 1080 * 3 * sizeof *ig), *it = malloc((size_t)1920 * 1080 * 3 * sizeof *it);
    sensim_pose cam = pose;
    cam.q = sensim_quat_axis_angle(sensim_vec3_make(0, 1, 0), 0.2);
    double fg = INFINITY, ft = INFINITY;
    for (int b = 0; b < 2; b++) {
        cp.backend = b ? SENSIM_RENDER_BACKEND_TWIN : SENSIM_RENDER_BACKEND_CUDA;
        sensim_render_camera *c = sensim_render_camera_create(&cp);
        for (int r = 0; c && r < reps; r++) {
            double t0 = bench_now();
            if (sensim_render_camera_render(c, s, bench_still, &cam, 0, 0, b ? it : ig))
                fprintf(stderr, "bench_gpu: %s\n", sensim_last_error());
            double dt = bench_now() - t0;
            if (b)
                ft = fmin(ft, dt);
            else
                fg = fmin(fg, dt);
        }
        sensim_render_camera_destroy(c);
    }
    int same = !memcmp(ig, it, (size_t)1920 * 1080 * 3 * sizeof *ig);
    status |= !same;
    printf("camera 1920x1080, 4 spp (+ shadow rays): CUDA %.2f frames/s, twin %.2f frames/s (%.1fx), images %s\n",
           1 / fg, 1 / ft, ft / fg, same ? "identical" : "DIFFER");
    free(ig);
    free(it);
    sensim_scene_destroy(s);
    return status;
}
