/* The C side of bench/bench_python.py: the two calls the Python interface
 * must not slow down, timed in C on the same data the script makes.
 *
 *   build/bench/bench_pycall [N_ALLAN [N_IMU [REPEATS]]]   (default 4700000 1000000 7)
 *
 * Allan: OADEV with noise identification and intervals (octave grid) of
 * N_ALLAN rate samples, sensim_rng_normal_fill(seed 1, sensor 0, stream 0).
 * IMU: the gyro and accelerometer of data/rigs/imu-adis16448.yaml (from
 * SENSIM_SRCDIR, default .) on N_IMU samples at 200 Hz, seed 7, zero rate
 * and 1 g, from a fresh state each run. Prints the median wall time of
 * REPEATS runs of each, in CPU ms, as "allan_ms X" and "imu_ms Y". Set
 * OMP_NUM_THREADS to compare like with like. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sensim/allan.h"
#include "sensim/imu.h"
#include "sensim/rig.h"
#include "sensim/rng.h"
#include "bench.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    size_t na = argc > 1 ? strtoull(argv[1], NULL, 10) : 4700000, ni = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
    int reps = argc > 3 ? atoi(argv[3]) : 7;
    if (reps < 1 || reps > 100 || na < 100 || ni < 1) {
        fprintf(stderr, "usage: bench_pycall [N_ALLAN [N_IMU [REPEATS]]]\n");
        return 2;
    }
    double times[100];

    double *x = malloc(na * sizeof *x);
    sensim_rng r = sensim_rng_make(1, 0, 0);
    sensim_rng_normal_fill(&r, 0, na, x);
    sensim_allan_opts o = sensim_allan_default_opts();
    o.tau0 = 0.01;
    size_t *m = NULL, nm = 0;
    if (sensim_allan_taus(SENSIM_TAUS_OCTAVE, 0, o.dev, o.data, na, &m, &nm))
        return bench_fail("bench_pycall");
    sensim_allan_point *pt = malloc(nm * sizeof *pt);
    for (int k = 0; k < reps; k++) {
        double t0 = bench_cpu();
        if (sensim_allan_compute(x, na, 1, &o, m, nm, pt))
            return bench_fail("bench_pycall");
        times[k] = bench_cpu() - t0;
    }
    printf("allan_ms %.3f\n", 1e3 * median(times, reps));
    free(x);
    free(m);
    free(pt);

    const char *src = getenv("SENSIM_SRCDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/data/rigs/imu-adis16448.yaml", src ? src : ".");
    sensim_rig *rig = sensim_rig_load(path);
    if (!rig)
        return bench_fail("bench_pycall");
    const sensim_sensor *s = &rig->sensors[0];
    /* The run's models: the rig's parameters with seed 7 (the seed enters at create). */
    sensim_triax *tx[2] = {
        sensim_triax_create(sensim_triax_params_of(sensim_imu_sensor_triax(s, SENSIM_GYRO)), SENSIM_GYRO, s->rate_hz, 7,
                            s->id, s->name),
        sensim_triax_create(sensim_triax_params_of(sensim_imu_sensor_triax(s, SENSIM_ACCEL)), SENSIM_ACCEL, s->rate_hz,
                            7, s->id, s->name)};
    if (!tx[0] || !tx[1])
        return bench_fail("bench_pycall");
    double *t = malloc(ni * sizeof *t), *w = calloc(3 * ni, sizeof *w), *f = calloc(3 * ni, sizeof *f);
    double *yw = malloc(3 * ni * sizeof *yw), *yf = malloc(3 * ni * sizeof *yf);
    for (size_t i = 0; i < ni; i++) {
        t[i] = (double)i / 200.0;
        f[3 * i + 2] = SENSIM_G0;
    }
    for (int k = 0; k < reps; k++) {
        double t0 = bench_cpu();
        sensim_triax_state st[2];
        sensim_triax_state *sp[2] = {&st[0], &st[1]};
        sensim_triax_reset(tx[0], &st[0]);
        sensim_triax_reset(tx[1], &st[1]);
        const double *u[2] = {w, f}, *fs[2] = {f, NULL};
        double *y[2] = {yw, yf};
        sensim_triax_apply_set(2, (const sensim_triax *const *)tx, sp, ni, t, u, fs, y);
        times[k] = bench_cpu() - t0;
    }
    printf("imu_ms %.3f\n", 1e3 * median(times, reps));
    free(t);
    free(w);
    free(f);
    free(yw);
    free(yf);
    sensim_triax_destroy(tx[0]);
    sensim_triax_destroy(tx[1]);
    sensim_rig_free(rig);
    return 0;
}
