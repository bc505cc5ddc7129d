/* bench_gpu: the CUDA backend against the CPU twin on the same machine
 * (issue 18), on bench_render's scene (> 1 M triangles: terrain and 48
 * spheres):
 *  - lidar primary rays of a 128 x 2048 scan at 1, 4 and 9 rays per beam,
 *    made by the shared ray generation (render/gpu/sg_raygen.h): the trace
 *    kernel alone on rays already on the device (Grays/s), with the copies
 *    of the rays and hits (Grays/s), the scan's device part as the backend
 *    runs it (devgen: rays made on the device, traced, hits compacted per
 *    beam and only they downloaded; Grays/s), and the twin's sg_trace over
 *    the same rays with OpenMP (Grays/s); GPU/twin is devgen over twin;
 *    hits compared bit for bit (the compacted ones too);
 *  - whole scans (sensim_render_lidar_scan: the device part, then the hits
 *    shaded and returns made on the host), scans/s for each backend,
 *    points compared;
 *  - camera frames at 1920x1080, 4 samples per pixel with shadow rays
 *    (primary rays made and traced on the device, each lit hit's shadow
 *    ray made and traced there right after it; one shading pass on the
 *    host), frames/s for each backend, images compared.
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

/* The scan as the shared ray generation sees it (render/gpu/sg_raygen.h),
 * from the lidar's public tables, the sensor still at `pose`: host
 * pointers into *tab (freed by the caller). */
typedef struct {
    float *dir;
    double toff[SENSIM_RENDER_LIDAR_MAX_CHANNELS], a[SG_LIDAR_MAX_RAYS], b[SG_LIDAR_MAX_RAYS], n[SG_LIDAR_MAX_RAYS];
    sg_pose *pose;
} scan_tables;

static int scan_sg(const sensim_render_lidar *l, const sensim_render_lidar_params *p, sensim_pose pose,
                   scan_tables *tab, sg_lidar *L)
{
    const int nr = sensim_render_lidar_rays_per_beam(l);
    double w[SG_LIDAR_MAX_RAYS];
    sensim_render_lidar_beam_rays(l, tab->a, tab->b, w);
    for (int j = 0; j < nr; j++)
        tab->n[j] = 1 / sqrt(1 + tab->a[j] * tab->a[j] + tab->b[j] * tab->b[j]);
    const sensim_render_lidar_params *q = sensim_render_lidar_params_of(l);
    memcpy(tab->toff, q->time_offset, sizeof tab->toff);
    tab->dir = malloc((size_t)p->columns * p->channels * 3 * sizeof *tab->dir);
    tab->pose = malloc((size_t)p->columns * p->channels * sizeof *tab->pose);
    if (!tab->dir || !tab->pose)
        return -1;
    for (size_t i = 0; i < (size_t)p->columns * p->channels; i++) {
        const sensim_vec3 e = sensim_render_lidar_beam_direction(l, (int)(i / p->channels), (int)(i % p->channels));
        tab->dir[3 * i] = (float)e.x;
        tab->dir[3 * i + 1] = (float)e.y;
        tab->dir[3 * i + 2] = (float)e.z;
        const sg_pose x = {{pose.p.x, pose.p.y, pose.p.z}, {pose.q.w, pose.q.x, pose.q.y, pose.q.z}};
        tab->pose[i] = x;
    }
    memset(L, 0, sizeof *L);
    L->dir = tab->dir;
    L->toff = tab->toff;
    L->ra = tab->a;
    L->rb = tab->b;
    L->rn = tab->n;
    L->pose = tab->pose; /* one per beam */
    L->channels = (uint32_t)p->channels;
    L->columns = (uint32_t)p->columns;
    L->nrays = (uint32_t)nr;
    L->period = sensim_render_lidar_fire_time(l, 1, 0) - sensim_render_lidar_fire_time(l, 0, 0);
    L->tfar = (float)p->max_range;
    return 0;
}

/* The scan's world rays in the lidar's order (column, channel, sub-ray),
 * made by the shared code as the device makes them. */
static sg_ray *scan_rays(const sg_lidar *L, size_t *n)
{
    *n = (size_t)L->columns * L->channels * L->nrays;
    sg_ray *r = malloc(*n * sizeof *r);
    for (size_t i = 0; r && i < *n; i++)
        sg_lidar_ray(L, i, &r[i]);
    return r;
}

/* The device's compacted hits of the scan against the twin's hits of the
 * same rays: every hit, in order, the same bits. */
static int same_hits(const sensim_cuda_lidar_hits *h, const sg_ray *rays, const sg_hit *ht, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (ht[i].geom == SG_INVALID)
            continue;
        if (m >= h->nhit)
            return 0;
        const sg_lhit *x = &h->hit[m++];
        if (x->t != ht[i].t || x->geom != ht[i].geom || x->inst != ht[i].inst ||
            memcmp(x->ng, ht[i].ng, sizeof x->ng) || memcmp(x->dir, rays[i].dir, sizeof x->dir))
            return 0;
    }
    return m == h->nhit;
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
    int reps, st;
    sensim_scene *s;
    double tbuild;
    if ((st = bench_scene_start(argc, argv, "bench_gpu", "bench_gpu [REPS [TERRAIN_CELLS]] | bench_gpu --probe", 1,
                                &reps, &s, &tbuild)))
        return st;
    double tp = bench_now(); /* the twin's and the device's copies are part of the build */
    if (sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN) ||
        sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_CUDA)) {
        sensim_scene_destroy(s);
        return bench_fail("bench_gpu");
    }
    printf("scene: %zu triangles, twin and device copy built in %.2f s (%.1f MiB on the device); CPU: %d threads\n",
           sensim_scene_triangle_count(s), tbuild + bench_now() - tp, s->cuda->bytes / 1048576.0,
           omp_get_max_threads());
    sensim_pose pose = sensim_pose_identity();
    pose.p = sensim_vec3_make(0.3, 0.2, 3.0);
    int status = 0;
    printf("%-16s %9s %12s %12s %12s %12s %8s %10s %10s %6s\n", "lidar 128x2048", "rays", "kernel Gr/s",
           "+copy Gr/s", "devgen Gr/s", "twin Gr/s", "GPU/twin", "scans/s", "twin sc/s", "same");
    const int per_beam[3] = {1, 2, 3};
    for (int v = 0; v < 3; v++) {
        sensim_render_lidar_params p = bench_lidar_params(per_beam[v]);
        p.backend = SENSIM_RENDER_BACKEND_CUDA;
        sensim_render_lidar *lg = sensim_render_lidar_create(&p);
        p.backend = SENSIM_RENDER_BACKEND_TWIN;
        sensim_render_lidar *lt = sensim_render_lidar_create(&p);
        sensim_render_lidar_points *pg = sensim_render_lidar_points_create(lg),
                                   *pt = sensim_render_lidar_points_create(lt);
        scan_tables tab;
        sg_lidar L;
        size_t n = 0;
        sg_ray *rays = scan_sg(lt, &p, pose, &tab, &L) ? NULL : scan_rays(&L, &n);
        sg_hit *hg = malloc(n * sizeof *hg), *ht = malloc(n * sizeof *ht);
        if (!lg || !lt || !pg || !pt || !rays || !hg || !ht)
            return bench_fail("bench_gpu");
        double tk = kernel_only(s->cuda, rays, hg, n, reps), tc = INFINITY, td = INFINITY, tt = INFINITY,
               sg = INFINITY, st = INFINITY;
        sensim_cuda_lidar_hits dh = {0};
        for (int r = 0; r < reps; r++) {
            double t0 = bench_now();
            if (sensim_cuda_scene_trace(s->cuda, rays, hg, n))
                tc = NAN;
            tc = fmin(tc, bench_now() - t0);
            /* Rays made on the device, traced, hits compacted and
             * downloaded: the scan's device part (the lidar's tables
             * uploaded once, the poses each scan). */
            t0 = bench_now();
            if (sensim_cuda_lidar_trace(s->cuda, &L, ~0ull - (unsigned long long)v, n / L.nrays, &dh))
                td = NAN;
            td = fmin(td, bench_now() - t0);
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
        int same = !memcmp(hg, ht, n * sizeof *hg) && same_hits(&dh, rays, ht, n) && same_points(pg, pt);
        status |= !same;
        printf("%-16d %9zu %12.3f %12.3f %12.3f %12.3f %8.1f %10.2f %10.2f %6s\n",
               sensim_render_lidar_rays_per_beam(lg), n, n / tk / 1e9, n / tc / 1e9, n / td / 1e9, n / tt / 1e9,
               tt / td, 1 / sg, 1 / st, same ? "yes" : "NO");
        free(tab.dir);
        free(tab.pose);
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
