/* Camera and lidar noise throughput.
 *
 *   bench_camera [FRAMES [WIDTH HEIGHT]]     (default 4 frames of 3840x2160)
 *
 * Camera: u16 frames through (a) the EMVA 1288 chain with fixed patterns
 * (PRNU, DSNU, row/column offsets; Poisson exact below 1000 e-, one normal
 * above), (b) the same chain forced to exact Poisson everywhere, (b') the
 * chain with its default threshold on a dark scene (the same scene times
 * 0.05, I <= 0.045: every pixel takes the exact Poisson pass) and a night
 * scene (times 0.001: means 0.5 to 11 e-, the inversion), (c) the
 * intensity model, and (d) a plain per-pixel baseline measured in the same
 * run: per pixel one sensim_rng_poisson and one sensim_rng_normal call, the
 * way a straightforward implementation draws them. All use OpenMP over rows
 * (set OMP_NUM_THREADS=2 for the 2-core target of 60 frames/s = 500 Mpx/s).
 * Lidar: points/s of range/angle/intensity noise plus dropouts. Objects are
 * created outside the timed loops. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sensim/camera.h"
#include "sensim/lidar.h"
#include "sensim/rng.h"
#include "bench.h"

static void report(const char *name, int frames, size_t n, double dt, double dc)
{
    int th = omp_get_max_threads();
    printf("  %-30s %7.1f frames/s %8.1f Mpx/s | %7.1f Mpx/CPU-s, idle %d-core %6.1f frames/s\n", name, frames / dt,
           frames * n / dt * 1e-6, frames * n / dc * 1e-6, th, th * frames / dc);
}

/* The baseline: per-pixel calls, no chunked normals, no fast path. */
static void baseline(const sensim_camera_params *p, const sensim_rng *shot, const sensim_rng *rd, uint64_t frame,
                     const uint16_t *in, uint16_t *out)
{
    const size_t W = p->width, n = p->width * p->height;
    const double S = p->photons_full_scale * p->quantum_efficiency, dark = p->dark_current * p->exposure_time;
    long long H = (long long)p->height;
#pragma omp parallel for schedule(static)
    for (long long y = 0; y < H; y++)
        for (size_t x = 0; x < W; x++) {
            size_t i = (size_t)y * W + x;
            uint64_t k = frame * n + i;
            double mu = in[i] / 65535.0 * S + dark;
            double e = sensim_rng_poisson(shot, k, mu) + p->read_noise * sensim_rng_normal(rd, k);
            if (e > p->full_well)
                e = p->full_well;
            double dn = floor(p->gain * e + p->black_level + 0.5);
            out[i] = (uint16_t)(dn < 0 ? 0 : dn > 65535 ? 65535 : dn);
        }
}

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 4;
    size_t W = argc > 3 ? (size_t)atol(argv[2]) : 3840, H = argc > 3 ? (size_t)atol(argv[3]) : 2160;
    if (frames < 1 || W == 0 || H == 0) {
        fprintf(stderr, "usage: bench_camera [FRAMES [WIDTH HEIGHT]]\n");
        return 2;
    }
    const size_t n = W * H;
    uint16_t *in = malloc(n * 2), *out = malloc(n * 2), *dark_in = malloc(n * 2), *night_in = malloc(n * 2);
    if (!in || !out || !dark_in || !night_in)
        return 1;
    /* A smooth scene covering the range, mostly mid-grey. */
    for (size_t y = 0; y < H; y++)
        for (size_t x = 0; x < W; x++)
            in[y * W + x] = (uint16_t)(65535.0 * (0.1 + 0.8 * (0.5 + 0.5 * sin(x * 0.003 + y * 0.002))));
    for (size_t i = 0; i < n; i++) {
        dark_in[i] = (uint16_t)(in[i] * 0.05 + 0.5);
        night_in[i] = (uint16_t)(in[i] * 0.001 + 0.5);
    }
    printf("camera: %d frames of %zux%zu u16, %d threads\n", frames, W, H, omp_get_max_threads());

    sensim_camera_params p = sensim_camera_default_params();
    p.model = SENSIM_CAMERA_NOISE_EMVA;
    p.width = W;
    p.height = H;
    p.prnu = 0.01;
    p.dsnu = 2;
    p.row_offset_sigma = 0.5;
    p.column_offset_sigma = 0.5;
    struct {
        const char *name;
        sensim_camera_params p;
        const uint16_t *in;
    } cases[5] = {{"EMVA chain + fixed patterns", p, in},
                  {"EMVA chain, exact Poisson", p, in},
                  {"EMVA dark scene (I <= 0.05)", p, dark_in},
                  {"EMVA night scene (I <= 0.001)", p, night_in},
                  {"intensity model", p, in}};
    cases[1].p.poisson_exact_below = INFINITY;
    cases[4].p.model = SENSIM_CAMERA_NOISE_INTENSITY;
    cases[4].p.variance_slope = 4e-4;
    cases[4].p.variance_intercept = 2.5e-5;
    for (int c = 0; c < 5; c++) {
        sensim_camera *cam = sensim_camera_create(&cases[c].p, 1, 1);
        if (!cam)
            return bench_fail("bench_camera");
        sensim_camera_apply(cam, 1000, SENSIM_PIXEL_U16, cases[c].in, out); /* warm-up */
        double t0 = bench_now(), c0 = bench_cpu();
        for (int f = 0; f < frames; f++)
            sensim_camera_apply(cam, (uint64_t)f, SENSIM_PIXEL_U16, cases[c].in, out);
        report(cases[c].name, frames, n, bench_now() - t0, bench_cpu() - c0);
        sensim_camera_destroy(cam);
    }
    {
        sensim_rng shot = sensim_rng_make(1, 1, 2), rd = sensim_rng_make(1, 1, 1);
        baseline(&p, &shot, &rd, 1000, in, out);
        double t0 = bench_now(), c0 = bench_cpu();
        for (int f = 0; f < frames; f++)
            baseline(&p, &shot, &rd, (uint64_t)f, in, out);
        report("baseline per-pixel loop", frames, n, bench_now() - t0, bench_cpu() - c0);
    }

    /* Lidar: 2^21 points (about 16 scans of a 128-beam sensor at 1024 az). */
    const size_t m = (size_t)1 << 21;
    float *pts = malloc(m * 16), *po = malloc(m * 16), *ro = malloc(m * 4);
    uint8_t *keep = malloc(m);
    if (!pts || !po || !ro || !keep)
        return 1;
    for (size_t i = 0; i < m; i++) {
        double r = 2 + (i % 997) * 0.1, a = (i % 1024) * 2 * M_PI / 1024, e = ((i / 1024) % 128) * 0.004 - 0.25;
        pts[4 * i] = (float)(r * cos(e) * cos(a));
        pts[4 * i + 1] = (float)(r * cos(e) * sin(a));
        pts[4 * i + 2] = (float)(r * sin(e));
        pts[4 * i + 3] = (float)((i % 101) / 100.0);
    }
    sensim_lidar_params lp = sensim_lidar_default_params();
    lp.range_sigma_base = 0.02;
    lp.range_sigma_slope = 0.001;
    lp.azimuth_sigma = 0.001;
    lp.elevation_sigma = 0.001;
    lp.intensity_sigma = 0.01;
    lp.dropoff_general_rate = 0.05;
    lp.dropoff_intensity_limit = 0.8;
    lp.dropoff_zero_intensity = 0.4;
    sensim_lidar *l = sensim_lidar_create(&lp, 1, 2);
    int reps = frames;
    double t0 = bench_now();
    for (int r = 0; r < reps; r++) {
        sensim_lidar_block b = {m, (uint64_t)r * m, pts, NULL, NULL, NULL, po, ro, NULL, NULL, keep};
        sensim_lidar_apply(l, &b, NULL);
    }
    double dt = bench_now() - t0;
    printf("lidar: %zu points x %d, %8.1f Mpoints/s\n", m, reps, reps * m / dt * 1e-6);
    sensim_lidar_destroy(l);
    free(pts);
    free(po);
    free(ro);
    free(keep);
    free(in);
    free(out);
    free(dark_in);
    free(night_in);
    return 0;
}
