/* bench_twin: the CPU twin of the CUDA path (issue 18) against Embree on
 * the scene of bench_render (finely tessellated terrain + 48 instanced
 * spheres, > 1 M triangles): lidar primary rays of a 128 x 2048 scan from
 * 3 m up, at 1, 4 and 9 rays per beam.
 *
 *   bench_twin [SCANS [TERRAIN_CELLS]]   (defaults 3, 720)
 *
 * "raw" traces the same precomputed world rays with each backend alone:
 * Embree in coherent packets of 16 (rtcIntersect16), the twin one ray at a
 * time through sg_trace, the per-ray entry the CUDA kernels call. "scan"
 * is sensim_render_lidar_scan with backend embree or twin (ray generation,
 * shading, echoes and compaction included). Rates are the best of SCANS
 * alternating runs; the target is a twin no slower than a third of
 * Embree. Rates per CPU second (all threads) are printed too: on a shared,
 * loaded machine they compare the two fairly where the wall clock does
 * not. Hit counts show that both trace the same thing. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The bench reaches into the committed scene for its Embree handle and its
 * twin, so that both baselines trace exactly what the renderer traces. */
#include "../render/gpu/sg_packet.h"
#include "../render/render_internal.h"
#include "bench_scene.h"
#include "../render/twin.h"
#include "bench.h"
#include "bench_embree.h"

static double raw_embree(RTCScene scene, const sg_ray *rays, long n, long *hits)
{
    return bench_embree16(scene, n, rays->org, sizeof *rays, rays->dir, sizeof *rays, &rays->tfar, sizeof *rays, hits);
}

static double raw_twin(const sensim_twin *tw, const sg_ray *rays, sg_hit *out, long n, long *hits)
{
    long h = 0;
    double t0 = bench_now();
    /* Packets of 16 consecutive rays (a beam's sub-rays, then the next
     * channels), as the lidar loop hands them to the twin. */
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : h)
    for (long base = 0; base < n; base += 16) {
        const int m = n - base < 16 ? (int)(n - base) : 16;
        sg_trace_packet(&tw->view, rays, out, (size_t)base, m);
        for (int j = 0; j < m; j++)
            h += out[base + j].geom != SG_INVALID;
    }
    *hits = h;
    return bench_now() - t0;
}

int main(int argc, char **argv)
{
    int scans, st;
    sensim_scene *s;
    double tbuild;
    if ((st = bench_scene_start(argc, argv, "bench_twin", "bench_twin [SCANS [TERRAIN_CELLS]]", 1, &scans, &s,
                                &tbuild)))
        return st;
    double tc = bench_now();
    if (sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN))
        return bench_fail("bench_twin");
    const sensim_twin *tw = s->twin;
    printf("scene: %zu triangles, Embree commit %.2f s, twin build %.2f s (%u nodes, %.1f MB), %d threads\n",
           sensim_scene_triangle_count(s), tbuild, bench_now() - tc, tw->view.nnode, tw->bytes / 1e6,
           omp_get_max_threads());
    sensim_pose pose = sensim_pose_identity();
    pose.p = sensim_vec3_make(0.3, 0.2, 3.0);
    const int per_beam[3] = {1, 2, 3};
    printf("%-16s %9s %12s %12s %7s %12s %12s %7s\n", "lidar 128x2048", "rays", "raw embree", "raw twin", "ratio",
           "scan embree", "scan twin", "ratio");
    int fail = 0;
    for (int v = 0; v < 3; v++) {
        sensim_render_lidar_params p = bench_lidar_params(per_beam[v]);
        sensim_render_lidar *le = sensim_render_lidar_create(&p);
        p.backend = SENSIM_RENDER_BACKEND_TWIN;
        sensim_render_lidar *lt = sensim_render_lidar_create(&p);
        sensim_render_lidar_points *pts = sensim_render_lidar_points_create(le);
        const int nr = sensim_render_lidar_rays_per_beam(le);
        const long n = (long)p.columns * p.channels * nr;
        sg_ray *rays = malloc((size_t)n * sizeof *rays);
        sg_hit *hit = malloc((size_t)n * sizeof *hit);
        double a[SENSIM_RENDER_LIDAR_MAX_RAYS], b[SENSIM_RENDER_LIDAR_MAX_RAYS], w[SENSIM_RENDER_LIDAR_MAX_RAYS];
        sensim_render_lidar_beam_rays(le, a, b, w);
        long i = 0;
        for (int c = 0; c < p.columns; c++)
            for (int k = 0; k < p.channels; k++) {
                sensim_vec3 e = sensim_render_lidar_beam_direction(le, c, k);
                double ch = hypot(e.x, e.y);
                sensim_vec3 u = sensim_vec3_make(-e.y / ch, e.x / ch, 0), vv = sensim_vec3_cross(e, u);
                for (int j = 0; j < nr; j++, i++) {
                    sensim_vec3 d =
                        sensim_vec3_add(e, sensim_vec3_add(sensim_vec3_scale(u, a[j]), sensim_vec3_scale(vv, b[j])));
                    d = sensim_vec3_scale(d, 1 / sensim_vec3_norm(d));
                    sg_ray r = {{(float)pose.p.x, (float)pose.p.y, (float)pose.p.z},
                                0.0f,
                                {(float)d.x, (float)d.y, (float)d.z},
                                200.0f,
                                0.0f};
                    rays[i] = r;
                }
            }
        double be = INFINITY, bt = INFINITY, se = INFINITY, st = INFINITY, ce = INFINITY, ct = INFINITY;
        long he = 0, ht = 0;
        for (int r = 0; r < scans; r++) {
            double c0 = bench_cpu();
            be = fmin(be, raw_embree(s->top, rays, n, &he));
            double c1 = bench_cpu();
            bt = fmin(bt, raw_twin(tw, rays, hit, n, &ht));
            double c2 = bench_cpu();
            ce = fmin(ce, c1 - c0);
            ct = fmin(ct, c2 - c1);
            double t0 = bench_now();
            fail |= sensim_render_lidar_scan(le, s, bench_still, &pose, 0, 0, pts) != SENSIM_OK;
            double t1 = bench_now();
            fail |= sensim_render_lidar_scan(lt, s, bench_still, &pose, 0, 0, pts) != SENSIM_OK;
            double t2 = bench_now();
            se = fmin(se, t1 - t0);
            st = fmin(st, t2 - t1);
        }
        char label[32];
        snprintf(label, sizeof label, "%d ray%s/beam", nr, nr > 1 ? "s" : "");
        printf("%-16s %9ld %8.2f Mr/s %8.2f Mr/s %7.2f %8.2f Mr/s %8.2f Mr/s %7.2f\n", label, n, n / be / 1e6,
               n / bt / 1e6, be / bt, n / se / 1e6, n / st / 1e6, se / st);
        printf("%-16s per CPU second: raw embree %.2f Mr/s, raw twin %.2f Mr/s, ratio %.2f; hits: embree %ld, "
               "twin %ld\n",
               "", n / ce / 1e6, n / ct / 1e6, ce / ct, he, ht);
        free(rays);
        free(hit);
        sensim_render_lidar_points_destroy(pts);
        sensim_render_lidar_destroy(le);
        sensim_render_lidar_destroy(lt);
    }
    sensim_scene_destroy(s);
    if (fail)
        return bench_fail("bench_twin");
    return 0;
}
