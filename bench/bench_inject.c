/* Inject pipeline throughput.
 *
 * 1. In memory: gyro + accelerometer with white noise, Gauss-Markov bias and
 *    random walk on all 6 axes (one sensim_triax_apply_set call per block, as
 *    `sensim inject` does), in axis-samples per second at 1 and 2 threads
 *    (objects created outside the timed loop); before it, the rate of
 *    sensim_rng_normal_fill alone with each kernel the CPU has.
 * 2. End to end: `sensim inject` on a one-hour 1 kHz ground-truth log
 *    (HDF5 in and out), wall time and peak memory, and the same for a
 *    ten-minute log to show memory does not grow with log length.
 *
 * Wall-clock rates are printed with rates per CPU-second next to them: on a
 * loaded shared machine the latter stay close to what an idle one gives
 * (at 2 threads run with OMP_WAIT_POLICY=passive there, or libgomp's
 * spin-waiting while the other thread is descheduled counts as CPU time).
 *
 * usage: bench_inject [SAMPLES_PER_AXIS [LOG_SECONDS]]   (defaults 4194304, 3600) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sensim/imu.h"
#include "sensim/rng.h"
#include "bench.h"

/* Normals per second from sensim_rng_normal_fill in L1-sized chunks (wall
 * and per CPU-second, the latter being what a loaded machine still shows),
 * for each kernel this CPU has (all give the same bits). */
static void normal_rate(size_t n)
{
    static const char *names[] = {"auto", "portable", "AVX2", "AVX-512"};
    sensim_rng r = sensim_rng_make(1, 1, 1);
    double buf[1024];
    volatile double sink = 0;
    for (int impl = SENSIM_RNG_IMPL_AUTO; impl <= SENSIM_RNG_IMPL_AVX512; impl++) {
        if (!sensim_rng_impl_available((sensim_rng_impl)impl))
            continue;
        double t0 = bench_now(), c0 = bench_cpu();
        for (size_t k = 0; k < n; k += 1024) {
            sensim_rng_normal_fill_impl(&r, k, 1024, buf, (sensim_rng_impl)impl);
            sink += buf[k % 1024];
        }
        double dt = bench_now() - t0, dc = bench_cpu() - c0;
        printf("  normals, %-8s kernel: %8.1f M/s wall, %8.1f M per CPU-second\n", names[impl], n / dt / 1e6,
               n / dc / 1e6);
    }
}

/* Returns axis-samples per wall second; *per_cpu gets them per CPU-second
 * (all threads), which a loaded shared machine distorts much less. */
static double in_memory(size_t n, int threads, double *per_cpu)
{
    omp_set_num_threads(threads);
    sensim_triax_params p = sensim_triax_default_params();
    for (int a = 0; a < 3; a++) {
        p.noise_density[a] = 1e-3;
        p.gm_sigma[a] = 1e-3;
        p.gm_tau[a] = 100;
        p.random_walk[a] = 1e-5;
    }
    sensim_triax *g = sensim_triax_create(&p, SENSIM_GYRO, 1000, 1, 1, "bench");
    sensim_triax *a = sensim_triax_create(&p, SENSIM_ACCEL, 1000, 1, 1, "bench");
    const size_t B = 65536;
    double *t = malloc(n * sizeof *t), *ug = calloc(3 * B, sizeof *ug), *ua = calloc(3 * B, sizeof *ua);
    for (size_t k = 0; k < n; k++)
        t[k] = k * 1e-3;
    sensim_triax_state sg, sa;
    sensim_triax_reset(g, &sg);
    sensim_triax_reset(a, &sa);
    double t0 = bench_now(), c0 = bench_cpu();
    for (size_t k0 = 0; k0 < n; k0 += B) {
        size_t c = n - k0 < B ? n - k0 : B;
        const sensim_triax *m[2] = {g, a};
        sensim_triax_state *s[2] = {&sg, &sa};
        const double *u[2] = {ug, ua};
        double *y[2] = {ug, ua};
        sensim_triax_apply_set(2, m, s, c, t + k0, u, NULL, y);
    }
    double dt = bench_now() - t0, dc = bench_cpu() - c0;
    if (per_cpu)
        *per_cpu = 6.0 * n / dc;
    volatile double sink = ug[0] + ua[0];
    (void)sink;
    free(t);
    free(ug);
    free(ua);
    sensim_triax_destroy(g);
    sensim_triax_destroy(a);
    return 6.0 * n / dt;
}

static double last_cpu; /* CPU seconds (user + system) of the last run() */

/* Runs a command, returns wall seconds and the child's peak RSS in MiB. */
static int run(const char *cmd, double *secs, double *rss_mib)
{
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0)
        return -1;
    *secs = bench_now() - t0;
    *rss_mib = ru.ru_maxrss / 1024.0;
    last_cpu = ru.ru_utime.tv_sec + 1e-6 * ru.ru_utime.tv_usec + ru.ru_stime.tv_sec + 1e-6 * ru.ru_stime.tv_usec;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int end_to_end(const char *bin, const char *dir, int seconds, int threads)
{
    char cmd[2048], gt[512], out[512], rig[512];
    snprintf(gt, sizeof gt, "%s/gt-%d.h5", dir, seconds);
    snprintf(out, sizeof out, "%s/out-%d.h5", dir, seconds);
    snprintf(rig, sizeof rig, "%s/rig.yaml", dir);
    FILE *f = fopen(rig, "w");
    if (!f)
        return -1;
    fprintf(f, "seed: 1\nsensors:\n  - name: imu\n    type: imu\n    rate_hz: 1000\n"
               "    gyro:  { noise_density: 1.0e-3, gauss_markov: { sigma: 1.0e-3, tau: 100 }, random_walk: 1.0e-5 }\n"
               "    accel: { noise_density: 2.0e-3, gauss_markov: { sigma: 1.0e-3, tau: 100 }, random_walk: 3.0e-3 }\n");
    fclose(f);
    double s, rss;
    snprintf(cmd, sizeof cmd, "%s trajectory --shape figure8 --duration %d --rate 1000 -o %s", bin, seconds, gt);
    if (run(cmd, &s, &rss))
        return -1;
    printf("  trajectory %5d s at 1 kHz:            %7.2f s, peak %6.1f MiB\n", seconds, s, rss);
    snprintf(cmd, sizeof cmd, "%s inject %s %s -o %s --threads %d", bin, rig, gt, out, threads);
    if (run(cmd, &s, &rss))
        return -1;
    double samples = seconds * 1000.0 + 1;
    printf("  inject %5d s log, %d thread(s):        %7.2f s, %6.2f M samples/s (%6.1f M axis-samples/s), peak %6.1f MiB,"
           " %.2f CPU-s\n",
           seconds, threads, s, samples / s / 1e6, 6 * samples / s / 1e6, rss, last_cpu);
    unlink(gt);
    unlink(out);
    return 0;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 22;
    int seconds = argc > 2 ? atoi(argv[2]) : 3600;
    printf("inject pipeline: white + Gauss-Markov + random walk, 6 axes, %zu samples per axis\n", n);
    normal_rate(n);
    in_memory(n / 8 + 1, 1, NULL); /* warm-up */
    double c1, c2, r1 = in_memory(n, 1, &c1), r2 = in_memory(n, 2, &c2);
    printf("  in memory, 1 thread:  %8.1f M axis-samples/s (%6.1f M per CPU-second)\n", r1 / 1e6, c1 / 1e6);
    printf("  in memory, 2 threads: %8.1f M axis-samples/s (x%.2f; %6.1f M per CPU-second)\n", r2 / 1e6, r2 / r1,
           c2 / 1e6);
    const char *bin = getenv("SENSIM_BIN");
    if (!bin || !*bin) {
        printf("  (SENSIM_BIN unset: end-to-end runs skipped)\n");
        return 0;
    }
    char dir[] = "/tmp/sensim-bench-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    int rc = 0;
    if (end_to_end(bin, dir, seconds / 6, 2) || end_to_end(bin, dir, seconds, 2) || end_to_end(bin, dir, seconds, 1))
        rc = 1;
    char rig[600];
    snprintf(rig, sizeof rig, "%s/rig.yaml", dir);
    unlink(rig);
    rmdir(dir);
    return rc;
}
