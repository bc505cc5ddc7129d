/* bench_realmesh: scan and frame rates on a real-mesh scene (issue 20)
 * against the synthetic bench scene, in the same run.
 *
 *   bench_realmesh [SCANS [FRAMES [SCENE.yaml]]]   (defaults 20, 2, plaza)
 *
 * The real scene is data/scenes/plaza.yaml (under $SENSIM_SRCDIR, else
 * .): five CC BY 4.0 models, 396 k triangles of quantized meshopt glTF,
 * kept in ../shared/data/plaza/. It is read as `sensim render` reads it
 * (sensim_scene_load: YAML, glTF decoding, Embree's BVH; then the twin's
 * BVH, sensim_scene_prepare_backend), and its sensors vlp16, os128 and cam
 * (1920x1080, 4 samples a pixel) are loaded from the file
 * (sensim_render_sensor_load) and placed at their mounts. The baseline is
 * bench_render's scene (bench_scene.h: 1.23 M triangles of terrain and
 * spheres) with the same sensors 3 m up. Each scene prints its load time,
 * its memory (sensim_scene_memory: meshes, objects, Embree; the twin's
 * arrays; the growth of the resident set over the load) and its triangle
 * count; then scans/s and frames/s with the Embree backend and the CPU twin
 * (`--backend twin`), the best of SCANS (FRAMES) alternating runs, per
 * second of wall clock and per CPU second (all threads: on a shared,
 * loaded machine the fair comparison), and the returns of a scan. Without the scene's models only the baseline runs.
 * The load average is printed: the machine may be shared. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* For the twin's size (s->twin->bytes), as bench_twin. */
#include "../render/render_internal.h"
#include "../render/twin.h"
#include "bench.h"
#include "bench_scene.h"

/* Resident set now, MiB (/proc/self/statm). */
static double rss_mib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (double)sysconf(_SC_PAGESIZE) / (1 << 20);
}

static void loadavg(const char *when)
{
    double a[3] = {0};
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &a[0], &a[1], &a[2]) != 3)
            a[0] = a[1] = a[2] = NAN;
        fclose(f);
    }
    printf("load average (%s): %.2f %.2f %.2f on %ld CPUs, %d threads\n", when, a[0], a[1], a[2],
           sysconf(_SC_NPROCESSORS_ONLN), omp_get_max_threads());
}

/* The sensors every scene is traced with. */
typedef struct {
    sensim_render_sensor lidar[2], cam;
} sensors;

/* Memory and load report of a committed scene whose load took `load` s and
 * grew the resident set by `grew` MiB; then builds the twin. */
static int prepare(sensim_scene *s, const char *name, double load, double grew)
{
    size_t peak = 0, bytes = sensim_scene_memory(s, &peak);
    double t0 = bench_now();
    if (sensim_scene_prepare_backend(s, SENSIM_RENDER_BACKEND_TWIN)) {
        fprintf(stderr, "bench_realmesh: %s: %s\n", name, sensim_last_error());
        return -1;
    }
    printf("%s: %zu triangles, %zu objects; load %.2f s, twin build %.2f s; memory: scene %.1f MiB (peak %.1f), "
           "twin %.1f MiB, resident set +%.1f MiB over the load\n",
           name, sensim_scene_triangle_count(s), sensim_scene_object_count(s), load, bench_now() - t0, bytes / 1048576.0,
           peak / 1048576.0, s->twin->bytes / 1048576.0, grew);
    return 0;
}

/* The two backends every rate compares, in the order of rate[4]. */
static const sensim_render_backend backends[2] = {SENSIM_RENDER_BACKEND_EMBREE, SENSIM_RENDER_BACKEND_TWIN};

/* The sensor's lidar (camera) on backends[b], without noise: the rates
 * are the ray caster's. */
static sensim_render_lidar *lidar_on(const sensim_render_sensor *rs, int b)
{
    sensim_render_lidar_params p = rs->lidar;
    p.noise = NULL;
    p.backend = backends[b];
    return sensim_render_lidar_create(&p);
}

static sensim_render_camera *camera_on(const sensim_render_sensor *rs, int b)
{
    sensim_render_camera_params p = rs->camera;
    p.noise = NULL;
    p.backend = backends[b];
    return sensim_render_camera_create(&p);
}

/* One scan or frame with backend b (index into backends), seed k. */
typedef int (*shot_fn)(void *ctx, int b, uint64_t k);

/* Best of n alternating shots with each backend, after `warm` rounds that
 * do not count: rate[b] per wall second, rate[2 + b] per CPU second. */
static int best_rates(shot_fn shot, void *ctx, int warm, int n, double rate[4])
{
    double best[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
    for (int k = 0; k < warm + n; k++)
        for (int b = 0; b < 2; b++) {
            double t0 = bench_now(), c0 = bench_cpu();
            if (shot(ctx, b, (uint64_t)k))
                return -1;
            if (k >= warm) {
                best[b] = fmin(best[b], bench_now() - t0);
                best[2 + b] = fmin(best[2 + b], bench_cpu() - c0);
            }
        }
    for (int i = 0; i < 4; i++)
        rate[i] = 1 / best[i];
    return 0;
}

typedef struct {
    const sensim_scene *s;
    sensim_pose pose;
    sensim_render_lidar *l[2];
    sensim_render_lidar_points *pts;
    size_t points; /* a scan's returns (Embree's) */
} lidar_shot;

static int lidar_scan(void *ctx, int b, uint64_t k)
{
    lidar_shot *c = ctx;
    if (sensim_render_lidar_scan(c->l[b], c->s, bench_still, &c->pose, 0, k, c->pts) != SENSIM_OK)
        return -1;
    if (!b)
        c->points = c->pts->count;
    return 0;
}

/* Scans/s with each backend after one warm-up scan; returns a scan's
 * returns in *points (Embree's). */
static int lidar_rates(const sensim_scene *s, const sensim_render_sensor *rs, sensim_pose pose, int n, double rate[4],
                       size_t *points)
{
    lidar_shot c = {.s = s, .pose = pose, .l = {lidar_on(rs, 0), lidar_on(rs, 1)}};
    c.pts = c.l[0] ? sensim_render_lidar_points_create(c.l[0]) : NULL;
    int bad = !c.l[0] || !c.l[1] || !c.pts || best_rates(lidar_scan, &c, 1, n, rate);
    *points = c.points;
    sensim_render_lidar_points_destroy(c.pts);
    for (int b = 0; b < 2; b++)
        sensim_render_lidar_destroy(c.l[b]);
    return bad ? -1 : 0;
}

typedef struct {
    const sensim_scene *s;
    sensim_pose pose;
    sensim_render_camera *cam[2];
    float *img;
} camera_shot;

static int camera_frame(void *ctx, int b, uint64_t k)
{
    camera_shot *c = ctx;
    return sensim_render_camera_render(c->cam[b], c->s, bench_still, &c->pose, 0, k, c->img) != SENSIM_OK ? -1 : 0;
}

/* Frames/s with each backend (no warm-up). */
static int camera_rates(const sensim_scene *s, const sensim_render_sensor *rs, sensim_pose pose, int n, double rate[4])
{
    camera_shot c = {.s = s, .pose = pose, .cam = {camera_on(rs, 0), camera_on(rs, 1)}};
    c.img = malloc((size_t)rs->camera.width * rs->camera.height * 3 * sizeof *c.img);
    int bad = !c.cam[0] || !c.cam[1] || !c.img || best_rates(camera_frame, &c, 0, n, rate);
    free(c.img);
    for (int b = 0; b < 2; b++)
        sensim_render_camera_destroy(c.cam[b]);
    return bad ? -1 : 0;
}

/* Every rate of one scene; the lidars at `at` and the camera at `cam`
 * (NULL: their mounts). */
static int rates(const sensim_scene *s, const char *name, const sensors *ss, const sensim_pose *at,
                 const sensim_pose *cam, int scans, int frames)
{
    for (int i = 0; i < 2; i++) {
        const sensim_render_sensor *rs = &ss->lidar[i];
        double r[4];
        size_t pts = 0;
        if (lidar_rates(s, rs, at ? *at : rs->mount, scans, r, &pts))
            return -1;
        printf("%-9s %-7s %3dx%-5d %9.2f %9.2f %6.2f %9.2f %9.2f %6.2f %8zu  scans\n", name, rs->name,
               rs->lidar.channels, rs->lidar.columns, r[0], r[1], r[0] / r[1], r[2], r[3], r[2] / r[3], pts);
    }
    if (frames > 0) {
        double r[4];
        if (camera_rates(s, &ss->cam, cam ? *cam : ss->cam.mount, frames, r))
            return -1;
        printf("%-9s %-7s %4dx%-4d %9.3f %9.3f %6.2f %9.3f %9.3f %6.2f %8s  frames, %d samples a pixel\n", name,
               ss->cam.name, ss->cam.camera.width, ss->cam.camera.height, r[0], r[1], r[0] / r[1], r[2], r[3],
               r[2] / r[3], "", ss->cam.camera.samples);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int scans = argc > 1 ? atoi(argv[1]) : 20, frames = argc > 2 ? atoi(argv[2]) : 2;
    if (scans < 1 || frames < 0 || argc > 4) {
        fprintf(stderr, "usage: bench_realmesh [SCANS [FRAMES [SCENE.yaml]]]\n");
        return 2;
    }
    char path[4096];
    const char *src = getenv("SENSIM_SRCDIR");
    if (argc > 3)
        snprintf(path, sizeof path, "%s", argv[3]);
    else
        snprintf(path, sizeof path, "%s/data/scenes/plaza.yaml", src && *src ? src : ".");
    sensors ss;
    const char *names[2] = {"vlp16", "os128"};
    for (int i = 0; i < 2; i++)
        if (sensim_render_sensor_load(path, names[i], &ss.lidar[i])) {
            fprintf(stderr, "bench_realmesh: %s\n", sensim_last_error());
            return 1;
        }
    if (sensim_render_sensor_load(path, "cam", &ss.cam)) {
        fprintf(stderr, "bench_realmesh: %s\n", sensim_last_error());
        return 1;
    }
    loadavg("start");

    /* The real scene first, so that its resident-set growth is its own. */
    double m0 = rss_mib(), t0 = bench_now();
    sensim_scene *real = sensim_scene_load(path);
    double tload = bench_now() - t0, grew = rss_mib() - m0;
    if (!real)
        printf("real scene skipped: %s\n", sensim_last_error());
    else if (prepare(real, "plaza", tload, grew))
        return 1;
    m0 = rss_mib();
    t0 = bench_now();
    sensim_scene *syn = bench_scene_build(720);
    tload = bench_now() - t0;
    grew = rss_mib() - m0;
    if (!syn || prepare(syn, "synthetic", tload, grew)) {
        fprintf(stderr, "bench_realmesh: %s\n", sensim_last_error());
        return 1;
    }

    printf("%-27s %-26s %-26s\n%-9s %-7s %-9s %9s %9s %6s %9s %9s %6s %8s\n", "", "per second (wall clock)",
           "per CPU second", "scene", "sensor", "size", "embree", "twin", "ratio", "embree", "twin", "ratio",
           "returns");
    /* The synthetic scene's sensors stand where bench_render's do, the
     * camera pitched as the plaza's. */
    sensim_pose at = sensim_pose_identity();
    at.p = sensim_vec3_make(0.3, 0.2, 3.0);
    sensim_pose cam = at;
    cam.q = ss.cam.mount.q;
    int bad = (real && rates(real, "plaza", &ss, NULL, NULL, scans, frames)) ||
              rates(syn, "synthetic", &ss, &at, &cam, scans, frames);
    if (bad) {
        fprintf(stderr, "bench_realmesh: %s\n", sensim_last_error());
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak memory (ru_maxrss, both scenes): %.1f MiB\n", ru.ru_maxrss / 1024.0);
    loadavg("end");
    sensim_scene_destroy(real);
    sensim_scene_destroy(syn);
    return 0;
}
