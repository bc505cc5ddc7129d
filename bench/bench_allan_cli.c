/* `sensim allan` end to end (process start, HDF5 read, estimators, noise
 * identification, intervals, CSV output) on a 6-axis IMU log, against the
 * NumPy formulation AllanTools uses (bench/oadev_numpy.py, computation only,
 * the file already in memory) on the same data and taus, in the same run.
 *
 *   build/bench/bench_allan_cli [N]     (default 470000; 4700000 the full size)
 *
 * The log holds /sensors/imu/angular_velocity and specific_force (N x 3
 * each, 400 Hz): `sensim allan --sensor imu --quantity imu` does the six
 * axes in one call. Both the octave and the log:10 grid are timed, each the
 * best of three runs of the command (the machine may be shared), with the
 * CPU seconds of the command beside the wall time, once on one thread
 * (OMP_NUM_THREADS=1: the baseline is single-threaded NumPy) and once with
 * OpenMP's default (all cores, or the caller's OMP_NUM_THREADS), so the
 * ratio is reported both ways; the taus of the baseline are those sensim
 * printed, and the largest relative difference of the deviations is
 * printed beside the ratios.
 *
 *   build/bench/bench_allan_cli --memory H [H ...]
 *
 * Peak memory (the child's ru_maxrss), wall and CPU time of `sensim allan
 * --quantity imu` and `sensim fit imu` on a 1 kHz 6-axis log of H hours
 * (written in blocks, so the bench itself stays small; 24 h is a 4.8 GB
 * log). The commands stream the series, so the peak does not grow with H;
 * beyond the 112 MiB budget they keep the phase in a temporary file in
 * TMPDIR (1 GB for 6 h, 4.1 GB for 24 h), next to the log. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sensim/log.h"
#include "sensim/rng.h"

/* CPU seconds (user + system) of the finished children so far. */
static double child_cpu(void)
{
    struct rusage u;
    getrusage(RUSAGE_CHILDREN, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Runs argv (NULL-terminated) with stdout to /dev/null; *rss_kb its peak
 * resident size, *wall its seconds, *cpu its CPU seconds (user + system,
 * all threads: on a shared machine the wall time says more about the
 * neighbours). Returns the exit status. */
static int run_measured(char *const *argv, long *rss_kb, double *wall, double *cpu)
{
    fflush(stdout);
    double t0 = now();
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    struct rusage u;
    if (pid < 0 || wait4(pid, &status, 0, &u) < 0)
        return -1;
    *wall = now() - t0;
    *rss_kb = u.ru_maxrss;
    *cpu = u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int memory_bench(int argc, char **argv, const char *bin)
{
    const double rate = 1000;
    char dir[] = "/tmp/sensim-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char logp[96], yamlp[96];
    snprintf(logp, sizeof logp, "%s/imu.h5", dir);
    snprintf(yamlp, sizeof yamlp, "%s/fit.yaml", dir);
    int rc = 0;
    printf("peak memory of the streaming commands, 1 kHz 6-axis logs (%s)\n", bin);
    for (int h = 0; h < argc && !rc; h++) {
        const double hours = strtod(argv[h], NULL);
        const size_t n = (size_t)(hours * 3600 * rate), blk = 1 << 16;
        if (n < 1000)
            continue;
        /* Gyro and accel white noise plus a random walk, in blocks. */
        sensim_log *log = sensim_log_create(logp, "bench_allan_cli");
        const size_t tail[1] = {3};
        /* Sized as inject sizes an IMU's outputs (its length is known). */
        sensim_log_dset *dt = log ? sensim_log_dset_create_sized(log, "/sensors/imu/t", SENSIM_F64, 0, NULL, "s", 0, n)
                                  : NULL;
        sensim_log_dset *dg = log ? sensim_log_dset_create_sized(log, "/sensors/imu/angular_velocity", SENSIM_F64, 1,
                                                                 tail, "rad/s", 0, n)
                                  : NULL;
        sensim_log_dset *da = log ? sensim_log_dset_create_sized(log, "/sensors/imu/specific_force", SENSIM_F64, 1,
                                                                 tail, "m/s^2", 0, n)
                                  : NULL;
        double *t = malloc(blk * sizeof *t), *g = malloc(3 * blk * sizeof *g), *a = malloc(3 * blk * sizeof *a),
               *z = malloc(blk * sizeof *z), rw[6] = {0};
        sensim_status st = log && dt && dg && da && t && g && a && z ? SENSIM_OK : SENSIM_EIO;
        for (size_t i0 = 0; i0 < n && !st; i0 += blk) {
            size_t cnt = n - i0 < blk ? n - i0 : blk;
            for (int ax = 0; ax < 6; ax++) {
                sensim_rng r = sensim_rng_make(5, 1, (uint32_t)ax);
                sensim_rng_normal_fill(&r, i0, cnt, z);
                double *o = ax < 3 ? g : a;
                for (size_t i = 0; i < cnt; i++) {
                    rw[ax] += 1e-6 * z[(i * 7 + 3) % cnt];
                    o[3 * i + ax % 3] = (ax < 3 ? 1e-3 : 2e-2) * z[i] + rw[ax] + (ax == 5 ? 9.80665 : 0);
                }
            }
            for (size_t i = 0; i < cnt; i++)
                t[i] = (double)(i0 + i) / rate;
            st = sensim_log_dset_append(dt, t, cnt);
            if (!st)
                st = sensim_log_dset_append(dg, g, cnt);
            if (!st)
                st = sensim_log_dset_append(da, a, cnt);
        }
        sensim_log_dset_close(dt);
        sensim_log_dset_close(dg);
        sensim_log_dset_close(da);
        if (!st)
            st = sensim_log_set_attr_f64(log, "/sensors/imu", "rate_hz", &rate, 1);
        if (!st)
            st = sensim_log_set_attr_string(log, "/sensors/imu", "type", "imu");
        if (!st)
            st = sensim_log_commit(log);
        else
            sensim_log_close(log);
        free(t);
        free(g);
        free(a);
        free(z);
        if (st) {
            fprintf(stderr, "bench_allan_cli: writing the log: %s\n", sensim_last_error());
            rc = 1;
            break;
        }
        struct stat sb;
        stat(logp, &sb);
        char *allan[] = {(char *)bin, "allan", logp, "--sensor", "imu", "--quantity", "imu", "--csv", NULL};
        char *fit[] = {(char *)bin, "fit", "imu", logp, "--sensor", "imu", "-o", yamlp, "--quiet", NULL};
        long r1 = 0, r2 = 0;
        double w1 = 0, w2 = 0, c1 = 0, c2 = 0;
        int e1 = run_measured(allan, &r1, &w1, &c1), e2 = run_measured(fit, &r2, &w2, &c2);
        printf("%5.1f h  %10zu samples x 6  log %6.0f MB | allan --quantity imu: peak %6.1f MB, %7.1f s (%.1f s CPU) | "
               "fit imu: peak %6.1f MB, %7.1f s (%.1f s CPU)%s\n",
               hours, n, sb.st_size / 1e6, r1 / 1024.0, w1, c1, r2 / 1024.0, w2, c2, e1 || e2 ? "  (FAILED)" : "");
        fflush(stdout);
        rc = e1 || e2;
        remove(logp);
        remove(yamlp);
    }
    rmdir(dir);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--memory")) {
        const char *b = getenv("SENSIM_BIN");
        return memory_bench(argc - 2, argv + 2, b && *b ? b : "build/sensim");
    }
    const size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 470000;
    const double rate = 400, tau0 = 1 / rate;
    if (n < 1000) {
        fprintf(stderr, "usage: bench_allan_cli [N>=1000]\n");
        return 2;
    }
    const char *bin = getenv("SENSIM_BIN"), *src = getenv("SENSIM_SRCDIR");
    bin = bin && *bin ? bin : "build/sensim";
    src = src && *src ? src : ".";
    char dir[] = "/tmp/sensim-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char logp[96], rawp[96], taup[96], outp[96], cmd[1024];
    snprintf(logp, sizeof logp, "%s/imu.h5", dir);
    snprintf(rawp, sizeof rawp, "%s/x.f64", dir);
    snprintf(taup, sizeof taup, "%s/m.txt", dir);
    snprintf(outp, sizeof outp, "%s/out.csv", dir);
    /* Six axes of white noise plus a slow drift, interleaved as the baseline
     * reads them; the log gets gyro and accel blocks of three. */
    double *x = malloc(6 * n * sizeof *x), *g = malloc(3 * n * sizeof *g), *a = malloc(3 * n * sizeof *a),
           *t = malloc(n * sizeof *t);
    if (!x || !g || !a || !t)
        return 1;
    for (size_t ax = 0; ax < 6; ax++) {
        sensim_rng r = sensim_rng_make(3, 1, (uint32_t)ax);
        sensim_rng_normal_fill(&r, 0, n, g);
        for (size_t i = 0; i < n; i++)
            x[6 * i + ax] = (ax < 3 ? 1e-3 : 2e-2) * g[i] + 1e-7 * (double)i / (double)n + (ax == 5 ? 9.80665 : 0);
    }
    for (size_t i = 0; i < n; i++) {
        t[i] = (double)i / rate;
        for (int k = 0; k < 3; k++) {
            g[3 * i + k] = x[6 * i + k];
            a[3 * i + k] = x[6 * i + 3 + k];
        }
    }
    sensim_log *log = sensim_log_create(logp, "bench_allan_cli");
    const size_t tail[1] = {3};
    if (!log || sensim_log_write(log, "/sensors/imu/t", SENSIM_F64, n, 0, NULL, t, "s") ||
        sensim_log_write(log, "/sensors/imu/angular_velocity", SENSIM_F64, n, 1, tail, g, "rad/s") ||
        sensim_log_write(log, "/sensors/imu/specific_force", SENSIM_F64, n, 1, tail, a, "m/s^2") ||
        sensim_log_set_attr_f64(log, "/sensors/imu", "rate_hz", &rate, 1) ||
        sensim_log_set_attr_string(log, "/sensors/imu", "type", "imu") || sensim_log_commit(log)) {
        fprintf(stderr, "bench_allan_cli: %s\n", sensim_last_error());
        return 1;
    }
    free(g);
    free(a);
    free(t);
    FILE *f = fopen(rawp, "wb");
    fwrite(x, sizeof *x, 6 * n, f);
    fclose(f);
    /* The threaded pass: the caller's OMP_NUM_THREADS, else OpenMP's
     * default of one thread per processor this process may run on (under
     * taskset, fewer than the machine has). */
    const char *omp = getenv("OMP_NUM_THREADS");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (!sched_getaffinity(0, sizeof set, &set) && CPU_COUNT(&set) > 0)
        ncpu = CPU_COUNT(&set);
    char threads[64] = "", nthreads[32];
    if (omp && *omp)
        snprintf(threads, sizeof threads, "OMP_NUM_THREADS=%.20s ", omp);
    if (omp && *omp)
        snprintf(nthreads, sizeof nthreads, "%.16s threads:", omp);
    else
        snprintf(nthreads, sizeof nthreads, "%ld threads:", ncpu);
    printf("sensim allan end to end: %zu samples x 6 axes (one HDF5 log, --quantity imu)\n", n);
    static const char *const grids[2] = {"octave", "log:10"};
    int rc = 0;
    for (int gi = 0; gi < 2; gi++) {
        /* Pass 0 on one thread, pass 1 with the default threads. */
        double best[2] = {HUGE_VAL, HUGE_VAL}, cpu[2] = {HUGE_VAL, HUGE_VAL};
        for (int pass = 0; pass < 2; pass++) {
            snprintf(cmd, sizeof cmd, "%s%s allan -i %s --sensor imu --quantity imu --taus %s --csv > %s",
                     pass ? threads : "OMP_NUM_THREADS=1 ", bin, logp, grids[gi], outp);
            for (int rep = 0; rep < 3; rep++) {
                double t0 = now(), c0 = child_cpu();
                if (system(cmd) != 0) {
                    fprintf(stderr, "bench_allan_cli: failed: %s\n", cmd);
                    return 1;
                }
                best[pass] = fmin(best[pass], now() - t0);
                cpu[pass] = fmin(cpu[pass], child_cpu() - c0);
            }
        }
        /* The command's output: axis,tau,dev,lo,hi,n; the taus of the
         * first axis are the grid. */
        enum { MAXT = 4096 };
        static double dev[6][MAXT];
        static size_t m[MAXT];
        size_t nm = 0, cnt[6] = {0};
        f = fopen(outp, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            char axis[32];
            double tau, d;
            if (sscanf(line, "%31[^,],%lf,%lf", axis, &tau, &d) != 3)
                continue;
            int ax = (axis[0] == 'a' ? 3 : 0) + (int)(axis[strlen(axis) - 1] - 'x');
            if (ax < 0 || ax > 5 || cnt[ax] >= MAXT)
                continue;
            if (ax == 0)
                m[nm++] = (size_t)llround(tau / tau0);
            dev[ax][cnt[ax]++] = d;
        }
        if (f)
            fclose(f);
        f = fopen(taup, "w");
        for (size_t k = 0; k < nm; k++)
            fprintf(f, "%zu\n", m[k]);
        fclose(f);
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/bench/oadev_numpy.py %s %zu 6 %s %.17g", src, rawp, n, taup,
                 tau0);
        FILE *py = popen(cmd, "r");
        double t_np = -1, c_np = -1, maxrel = 0;
        if (py && fscanf(py, "seconds %lf cpu %lf", &t_np, &c_np) == 2)
            for (size_t ax = 0; ax < 6; ax++)
                for (size_t k = 0; k < nm; k++) {
                    double v;
                    if (fscanf(py, "%lf", &v) != 1 || k >= cnt[ax]) {
                        t_np = -1;
                        break;
                    }
                    maxrel = fmax(maxrel, fabs(v - dev[ax][k]) / v);
                }
        if (py)
            pclose(py);
        printf("%-7s %3zu taus: numpy %.3f s computing (%.3f s CPU); max relative difference %.1e\n", grids[gi], nm,
               t_np, c_np, maxrel);
        for (int pass = 0; pass < 2; pass++)
            printf("        sensim allan, %-10s %.3f s end to end (%.3f s CPU): ratio %.1fx wall, %.1fx CPU\n",
                   pass ? nthreads : "1 thread:", best[pass], cpu[pass], t_np > 0 ? t_np / best[pass] : 0.0,
                   c_np > 0 ? c_np / cpu[pass] : 0.0);
        /* The CSV prints 10 significant digits. */
        if (t_np < 0 || maxrel > 1e-9)
            rc = 1;
    }
    remove(logp);
    remove(rawp);
    remove(taup);
    remove(outp);
    rmdir(dir);
    free(x);
    return rc;
}
