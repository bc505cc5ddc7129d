/* Benchmark of the sim2real scores: a 30 vs 30 VEPD run over CSV files in
 * the authors' layout (read, score, Wasserstein, plus a 1000-replicate
 * bootstrap and a 999-relabeling permutation test), and the judge's
 * throughput in IMU samples per second in both modes.
 * Usage: bench_vepd [seconds per test (60)] [judge seconds (600)] */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sensim/judge.h"
#include "sensim/metrics.h"
#include "sensim/rng.h"
#include "bench.h"

/* One test: estimate at 35 Hz, ground truth at 50 Hz, over `secs`. */
static int write_test(const char *path, double secs, uint64_t seed, double noise)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    sensim_rng r = sensim_rng_make(seed, 9, 0);
    size_t ne = (size_t)(secs * 35), ng = (size_t)(secs * 50), n = ne > ng ? ne : ng;
    fprintf(f, "se_time,gt_time,se_vel,gt_vel\n");
    for (size_t i = 0; i < n; i++) {
        if (i < ne) {
            double t = i / 35.0;
            fprintf(f, "%.6f,", t);
        } else
            fputc(',', f);
        if (i < ng)
            fprintf(f, "%.6f,", 0.001 + i / 50.0);
        else
            fputc(',', f);
        if (i < ne) {
            double t = i / 35.0;
            fprintf(f, "%.6f,", 2 + sin(0.3 * t) + noise * sensim_rng_normal(&r, i));
        } else
            fputc(',', f);
        if (i < ng)
            fprintf(f, "%.6f\n", 2 + sin(0.3 * (0.001 + i / 50.0)));
        else
            fputc('\n', f);
    }
    return fclose(f);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 60, jsecs = argc > 2 ? atof(argv[2]) : 600;
    if (!(secs > 1) || !(jsecs > 1)) {
        fprintf(stderr, "usage: bench_vepd [seconds per test > 1] [judge seconds > 1]\n");
        return 2;
    }
    char dir[] = "/tmp/sensim-bench-vepd-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char path[60][256];
    for (int i = 0; i < 60; i++) {
        snprintf(path[i], sizeof path[i], "%s/%s_%d.csv", dir, i < 30 ? "real" : "sim", i % 30);
        if (write_test(path[i], secs, (uint64_t)i, i < 30 ? 0.05 : 0.07)) {
            fprintf(stderr, "cannot write %s\n", path[i]);
            return 1;
        }
    }
    /* VEPD 30 vs 30: everything the verb does after listing the files. */
    sensim_vepd_test t[60];
    sensim_vepd_result res;
    sensim_vepd_ci ci;
    int reps = 5;
    double t0 = bench_now();
    for (int rep = 0; rep < reps; rep++) {
        for (int i = 0; i < 60; i++) {
            sensim_vepd_series s;
            if (sensim_vepd_read_csv(path[i], &s) || sensim_vepd_score(&s, &t[i])) {
                fprintf(stderr, "%s\n", sensim_last_error());
                return 1;
            }
            sensim_vepd_series_free(&s);
        }
        if (sensim_vepd_compare(t, 30, t + 30, 30, &res))
            return 1;
    }
    double t1 = bench_now();
    if (sensim_vepd_bootstrap(t, 30, t + 30, 30, 1000, 1, 0.95, &ci))
        return 1;
    double t2 = bench_now();
    printf("vepd 30 vs 30 CSV tests of %.0f s (35 Hz estimate, 50 Hz truth): %.1f ms per run "
           "(read + score + W1/W2), VEPD %.4f\n",
           secs, 1e3 * (t1 - t0) / reps, res.vepd);
    printf("vepd bootstrap 1000 replicates: %.1f ms, 95%% CI [%.4f, %.4f]\n", 1e3 * (t2 - t1), ci.lo, ci.hi);
    /* The permutation test at sim2real's default: 999 relabelings within
     * three strata of 10 + 10 tests (the paper's scenarios). */
    size_t strata[60];
    for (int i = 0; i < 60; i++)
        strata[i] = (size_t)(i % 30) / 10;
    sensim_vepd_perm perm;
    if (sensim_vepd_permutation(t, 30, strata, t + 30, 30, strata + 30, 999, 1, &perm))
        return 1;
    double t3 = bench_now();
    printf("vepd permutation test 999 relabelings (3 strata): %.1f ms, p %.4g\n", 1e3 * (t3 - t2), perm.p);
    for (int i = 0; i < 60; i++)
        unlink(path[i]);
    rmdir(dir);

    /* Judge: a circle-ish drive with noisy IMU at 100 Hz and GNSS at 10 Hz. */
    size_t n = (size_t)(jsecs * 100), ng = n / 10;
    double *buf = malloc((4 * n + 4 * ng) * sizeof *buf);
    if (!buf)
        return 1;
    double *it = buf, *w = it + n, *fx = w + n, *fy = fx + n, *gt = fy + n, *enu = gt + ng;
    sensim_rng r = sensim_rng_make(3, 1, 0);
    for (size_t k = 0; k < n; k++) {
        double tt = k / 100.0;
        it[k] = tt;
        w[k] = 0.1 + 0.003 * sensim_rng_normal(&r, 3 * k);
        fx[k] = 0.05 * sensim_rng_normal(&r, 3 * k + 1);
        fy[k] = 0.3 + 0.05 * sensim_rng_normal(&r, 3 * k + 2);
    }
    for (size_t j = 0; j < ng; j++) {
        double tt = j / 10.0;
        gt[j] = tt;
        enu[3 * j] = 30 * sin(0.1 * tt);
        enu[3 * j + 1] = 30 - 30 * cos(0.1 * tt);
        enu[3 * j + 2] = 0;
    }
    sensim_judge_imu imu = {n, it, w, fx, fy};
    sensim_judge_gnss g = {ng, gt, enu, 3, NULL};
    for (int mode = 0; mode < 2; mode++) {
        sensim_judge_options o = sensim_judge_default_options((sensim_judge_mode)mode);
        sensim_judge_output out;
        double a = bench_now();
        if (sensim_judge_run(&o, &imu, &g, &out)) {
            fprintf(stderr, "%s\n", sensim_last_error());
            return 1;
        }
        double b = bench_now();
        printf("judge %-18s %zu IMU + %zu GNSS samples -> %zu outputs: %.1f ms, %.3g IMU samples/s\n",
               sensim_judge_mode_name(o.mode), n, ng, out.n, 1e3 * (b - a), n / (b - a));
        sensim_judge_output_free(&out);
    }
    free(buf);
    return 0;
}
