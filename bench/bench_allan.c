/* OADEV throughput against the NumPy formulation AllanTools uses, same
 * estimator, same data and tau grid, in the same run.
 *
 *   build/bench/bench_allan [N [NAXES [NTAUS]]]   (default 470000 x 6, 60 taus)
 *   build/bench/bench_allan 4700000 6 60           (the full size)
 *
 * The grid is AllanTools' log grid: unique integers of
 * logspace(0, log10(N/2), NTAUS). sensim runs with its OpenMP default
 * threads (set OMP_NUM_THREADS), once with noise identification and
 * confidence intervals (what `sensim allan` does) and once without (the
 * estimator alone, like the baseline), each the best of three runs, with
 * the CPU seconds of the first kind beside its wall time: on a shared
 * machine the wall time of several threads depends on what else runs. The
 * NumPy baseline is bench/oadev_numpy.py under /usr/bin/python3; the
 * deviations of both are compared and the largest relative difference
 * printed. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sensim/allan.h"
#include "sensim/rng.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 470000;
    size_t naxes = argc > 2 ? strtoull(argv[2], NULL, 10) : 6;
    size_t ntaus = argc > 3 ? strtoull(argv[3], NULL, 10) : 60;
    if (n < 100 || naxes < 1 || ntaus < 1) {
        fprintf(stderr, "usage: bench_allan [N>=100 [NAXES [NTAUS]]]\n");
        return 2;
    }
    const double tau0 = 0.0025; /* 400 Hz */
    double *x = malloc(n * naxes * sizeof *x);
    size_t *m = malloc(ntaus * sizeof *m), nm = 0;
    if (!x || !m)
        return 1;
    for (size_t a = 0; a < naxes; a++) {
        sensim_rng r = sensim_rng_make(1, 1, (uint32_t)a);
        for (size_t i = 0; i < n; i++)
            x[i * naxes + a] = 1e-3 * sensim_rng_normal(&r, i) + 1e-7 * (double)i / (double)n;
    }
    double top = log10((double)(n / 2));
    for (size_t k = 0; k < ntaus; k++) {
        size_t v = (size_t)pow(10, ntaus > 1 ? top * k / (ntaus - 1) : 0);
        if (v > n / 2)
            v = n / 2;
        if (nm == 0 || v > m[nm - 1])
            m[nm++] = v;
    }
    sensim_allan_point *p = malloc(naxes * nm * sizeof *p);
    sensim_allan_opts o = sensim_allan_default_opts();
    o.tau0 = tau0;
    printf("OADEV: %zu samples x %zu axes, %zu taus (log grid), %d threads\n", n, naxes, nm, omp_get_max_threads());
    /* One untimed run first: page faults of the first large allocations and
     * the OpenMP thread start would otherwise be charged to the first timing. */
    if (sensim_allan_compute_axes(x, n, naxes, &o, m, nm, p)) {
        fprintf(stderr, "bench_allan: %s\n", sensim_last_error());
        return 1;
    }
    /* Best of REPS: the machine may be shared, and the least disturbed run
     * is the closest to what the code costs. */
    enum { REPS = 3 };
    double t_full = HUGE_VAL, t_est = HUGE_VAL, cpu_full = HUGE_VAL;
    for (int r = 0; r < REPS; r++) {
        o.fixed_alpha = 0;
        double t0 = now(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if (sensim_allan_compute_axes(x, n, naxes, &o, m, nm, p)) {
            fprintf(stderr, "bench_allan: %s\n", sensim_last_error());
            return 1;
        }
        t_full = fmin(t_full, now() - t0);
        cpu_full = fmin(cpu_full, clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0);
        o.fixed_alpha = 1;
        o.alpha = 0;
        t0 = now();
        sensim_allan_compute_axes(x, n, naxes, &o, m, nm, p);
        t_est = fmin(t_est, now() - t0);
    }
    double rate = (double)n * naxes * nm;
    printf("sensim, with noise id and intervals: %8.3f s  (%.0f M sample-taus/s; %.3f s of CPU)\n", t_full,
           rate / t_full / 1e6, cpu_full);
    printf("sensim, estimator only:              %8.3f s  (%.0f M sample-taus/s)\n", t_est, rate / t_est / 1e6);

    /* Baseline in the same run. */
    char dir[] = "/tmp/sensim-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char data[64], taus[64], cmd[512];
    snprintf(data, sizeof data, "%s/x.f64", dir);
    snprintf(taus, sizeof taus, "%s/m.txt", dir);
    FILE *f = fopen(data, "wb");
    fwrite(x, sizeof *x, n * naxes, f);
    fclose(f);
    f = fopen(taus, "w");
    for (size_t k = 0; k < nm; k++)
        fprintf(f, "%zu\n", m[k]);
    fclose(f);
    const char *src = getenv("SENSIM_SRCDIR");
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/bench/oadev_numpy.py %s %zu %zu %s %.17g", src && *src ? src : ".",
             data, n, naxes, taus, tau0);
    FILE *py = popen(cmd, "r");
    double t_np = -1, maxrel = 0;
    if (py && fscanf(py, "seconds %lf cpu %*f", &t_np) == 1) {
        for (size_t a = 0; a < naxes; a++)
            for (size_t k = 0; k < nm; k++) {
                double v;
                if (fscanf(py, "%lf", &v) != 1) {
                    t_np = -1;
                    break;
                }
                maxrel = fmax(maxrel, fabs(v - p[a * nm + k].dev) / v);
            }
    }
    if (py)
        pclose(py);
    remove(data);
    remove(taus);
    rmdir(dir);
    if (t_np < 0) {
        printf("numpy baseline: not available (%s)\n", cmd);
        return 0;
    }
    printf("numpy (AllanTools formulation):      %8.3f s  (%.0f M sample-taus/s)\n", t_np, rate / t_np / 1e6);
    printf("ratio numpy / sensim: %.1fx (estimator only %.1fx); max relative difference %.2e\n", t_np / t_full,
           t_np / t_est, maxrel);
    free(p);
    free(m);
    free(x);
    return maxrel < 1e-9 ? 0 : 1;
}
