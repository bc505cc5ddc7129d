/* bench_render: sensim's lidar against a minimal Embree loop casting the same
 * rays (rtcIntersect16, coherent packets, same BVH) on a scene of > 1 M
 * triangles (finely tessellated terrain + spheres), a 128 x 2048 scan at 1,
 * 4 and 9 rays per beam; then camera frames at 1920x1080, 4 samples per
 * pixel; then peak memory.
 *
 *   bench_render [SCANS [TERRAIN_CELLS [FRAMES]]]   (defaults 3, 720, 1)
 *
 * Lidar rates are from the best of SCANS alternating runs of each. Then
 * the pipeline of `sensim render` (sensim_render_log: ground truth streamed
 * and interpolated, frames timed, every point written to an HDF5 log) for
 * SCANS scans of the 1-ray sensor, against the bare scans above.
 *
 * The raw loop only intersects; sensim's scan also builds the footprint
 * rays, interpolates the pose, shades, forms echoes and compacts the
 * points, which is what the ratio prices. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* The bench reaches into the committed scene for its Embree handle so that
 * the baseline traverses exactly the same BVH. */
#include "../render/render_internal.h"
#include "bench_scene.h"
#include "sensim/log.h"
#include "bench.h"
#include "bench_embree.h"

/* Raw Embree: the same world rays, precomputed, traced in packets of 16. */
static double raw_scan(RTCScene scene, const float *dirs, long nrays, const float org[3], float tfar, long *hits)
{
    return bench_embree16(scene, nrays, org, 0, dirs, 3 * sizeof *dirs, &tfar, 0, hits);
}

/* A straight drive at 5 m/s, 3 m up, ground truth at 100 Hz over the
 * scans' span, written to dir/gt.h5. */
static int write_truth(const char *path, double seconds)
{
    size_t n = (size_t)(seconds * 100) + 2;
    sensim_log *log = sensim_log_create(path, "bench_render");
    sensim_gt_writer *w = log ? sensim_gt_writer_create(log, NULL) : NULL;
    sensim_gt_block b;
    if (!w || sensim_gt_block_init(&b, n))
        return -1;
    for (size_t i = 0; i < n; i++) {
        double t = i / 100.0, p[3] = {0.3 + 5 * t, 0.2, 3}, v[3] = {5, 0, 0}, q[4] = {1, 0, 0, 0};
        b.t[i] = t;
        memcpy(b.position + 3 * i, p, sizeof p);
        memcpy(b.velocity + 3 * i, v, sizeof v);
        memcpy(b.orientation + 4 * i, q, sizeof q);
        memset(b.acceleration + 3 * i, 0, 3 * sizeof(double));
        memset(b.angular_velocity + 3 * i, 0, 3 * sizeof(double));
    }
    b.n = n;
    int bad = sensim_gt_writer_append(w, &b) != SENSIM_OK;
    sensim_gt_writer_close(w);
    sensim_gt_block_free(&b);
    return bad || sensim_log_commit(log) ? -1 : 0;
}

/* sensim_render_log of `scans` scans of the 1-ray os128: scans/s. */
static double pipeline(const sensim_scene *s, int scans, double bare)
{
    char dir[] = "/tmp/bench_render.XXXXXX", gt[64], out[64];
    if (!mkdtemp(dir))
        return NAN;
    snprintf(gt, sizeof gt, "%s/gt.h5", dir);
    snprintf(out, sizeof out, "%s/out.h5", dir);
    sensim_render_sensor rs;
    memset(&rs, 0, sizeof rs);
    snprintf(rs.name, sizeof rs.name, "os128");
    rs.type = SENSIM_SENSOR_LIDAR;
    sensim_render_lidar_preset("os128", &rs.lidar);
    rs.lidar.max_range = 200;
    rs.rate_hz = rs.lidar.rate_hz;
    rs.mount = sensim_pose_identity();
    sensim_render_log_opts o = sensim_render_log_default_opts();
    o.count = (uint64_t)scans;
    double dt = NAN;
    if (!write_truth(gt, (scans + 1) / rs.rate_hz)) {
        double t0 = bench_now();
        if (!sensim_render_log(&rs, s, NULL, &o, gt, out))
            dt = bench_now() - t0;
        else
            fprintf(stderr, "bench_render: %s\n", sensim_last_error());
    }
    unlink(gt);
    unlink(out);
    rmdir(dir);
    printf("pipeline (sensim_render_log, 1 ray, %d scans into a log): %.2f scans/s (bare scans %.2f/s)\n", scans,
           scans / dt, bare);
    return scans / dt;
}

int main(int argc, char **argv)
{
    int scans, frames = argc > 3 ? atoi(argv[3]) : 1, st;
    sensim_scene *s;
    double tbuild;
    if ((st = bench_scene_start(argc, argv, "bench_render", "bench_render [SCANS [TERRAIN_CELLS [FRAMES]]]",
                                frames >= 0, &scans, &s, &tbuild)))
        return st;
    printf("scene: %zu triangles, built in %.2f s, %d threads\n", sensim_scene_triangle_count(s), tbuild,
           omp_get_max_threads());

    sensim_pose pose = sensim_pose_identity();
    pose.p = sensim_vec3_make(0.3, 0.2, 3.0);
    const float org[3] = {(float)pose.p.x, (float)pose.p.y, (float)pose.p.z};
    int per_beam[3] = {1, 2, 3};
    double bare1 = NAN;
    printf("%-14s %8s %10s %10s %10s %8s %8s\n", "lidar 128x2048", "rays", "raw Mray/s", "sensim", "scans/s", "ratio",
           "points");
    for (int v = 0; v < 3; v++) {
        sensim_render_lidar_params p = bench_lidar_params(per_beam[v]);
        sensim_render_lidar *l = sensim_render_lidar_create(&p);
        sensim_render_lidar_points *pts = sensim_render_lidar_points_create(l);
        int nr = sensim_render_lidar_rays_per_beam(l);
        long nbeams = (long)p.columns * p.channels, nrays = nbeams * nr;
        /* The same world rays, in the same order (column, channel, sub-ray). */
        float *dirs = malloc((size_t)nrays * 3 * sizeof *dirs);
        double a[SENSIM_RENDER_LIDAR_MAX_RAYS], b[SENSIM_RENDER_LIDAR_MAX_RAYS], w[SENSIM_RENDER_LIDAR_MAX_RAYS];
        sensim_render_lidar_beam_rays(l, a, b, w);
        for (int c = 0; c < p.columns; c++)
            for (int k = 0; k < p.channels; k++) {
                sensim_vec3 e = sensim_render_lidar_beam_direction(l, c, k);
                double ch = hypot(e.x, e.y);
                sensim_vec3 u = sensim_vec3_make(-e.y / ch, e.x / ch, 0), vv = sensim_vec3_cross(e, u);
                for (int j = 0; j < nr; j++) {
                    sensim_vec3 d = sensim_vec3_add(e, sensim_vec3_add(sensim_vec3_scale(u, a[j]),
                                                                       sensim_vec3_scale(vv, b[j])));
                    d = sensim_vec3_scale(d, 1 / sensim_vec3_norm(d));
                    size_t i = ((size_t)c * p.channels + k) * nr + j;
                    dirs[3 * i] = (float)d.x;
                    dirs[3 * i + 1] = (float)d.y;
                    dirs[3 * i + 2] = (float)d.z;
                }
            }
        long hits = 0;
        raw_scan(s->top, dirs, nrays, org, (float)p.max_range, &hits); /* warm-up */
        sensim_render_lidar_scan(l, s, bench_still, &pose, 0, 0, pts);
        /* Alternate the two and keep the best time of each: the machine may
         * be shared, and the minimum is the least disturbed run. */
        double traw = INFINITY, tsim = INFINITY;
        for (int k = 0; k < scans; k++) {
            traw = fmin(traw, raw_scan(s->top, dirs, nrays, org, (float)p.max_range, &hits));
            double t0 = bench_now();
            sensim_render_lidar_scan(l, s, bench_still, &pose, 0, (uint64_t)k, pts);
            tsim = fmin(tsim, bench_now() - t0);
        }
        double mraw = nrays / traw / 1e6, msim = nrays / tsim / 1e6;
        if (v == 0)
            bare1 = 1 / tsim;
        printf("%-14d %8ld %10.2f %10.2f %10.2f %8.3f %8zu\n", nr, nrays, mraw, msim, 1 / tsim, msim / mraw,
               pts->count);
        free(dirs);
        sensim_render_lidar_points_destroy(pts);
        sensim_render_lidar_destroy(l);
    }
    pipeline(s, scans, bare1);
    if (frames > 0) {
        sensim_render_camera_params cp = bench_camera_params();
        sensim_pose cam = pose;
        cam.q = sensim_quat_axis_angle(sensim_vec3_make(0, 1, 0), 0.2);
        double dt = bench_camera_frames(s, &cp, cam, frames);
        printf("camera 1920x1080, 4 spp (+ shadow rays): %.3f frames/s, %.2f Mprimary rays/s\n", frames / dt,
               frames * 1920.0 * 1080 * 4 / dt / 1e6);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak memory (ru_maxrss): %.1f MiB\n", ru.ru_maxrss / 1024.0);
    sensim_scene_destroy(s);
    return 0;
}
