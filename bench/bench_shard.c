/* The cost of sharding a render (issue 19).
 *
 * One `sensim render` of S lidar scans (data/scenes/fig5.yaml, the HDL-32E
 * along a 20 m/s line) on 2 threads, against the same scans as 4 shards
 * (`--shard I/4`, one thread each, 2 at a time as 2 cores allow) and the
 * `sensim stitch` of the 4: wall times, the stitch's own, and the
 * per-shard fixed cost (a render of one scan: scene load, BVH build, the
 * ground truth copied). From these the per-scan cost, in CPU-seconds,
 * that the README's scaling estimate uses. OMP_WAIT_POLICY=passive unless
 * set (spinning threads would count as work on a loaded machine).
 *
 * The same for F camera frames (640x360, 4 samples a pixel).
 *
 * usage: bench_shard [SCANS [FRAMES]]   (default 80, 12; SENSIM_BIN, SENSIM_SRCDIR set by make bench) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

static pid_t spawn(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* CPU-seconds (user + system) of the children awaited so far */
static double cpu_children = 0;

static int wait_ok(pid_t pid)
{
    int st;
    struct rusage ru;
    if (pid <= 0 || wait4(pid, &st, 0, &ru) != pid)
        return 0;
    cpu_children += ru.ru_utime.tv_sec + 1e-6 * ru.ru_utime.tv_usec + ru.ru_stime.tv_sec + 1e-6 * ru.ru_stime.tv_usec;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int run(char *const argv[])
{
    return wait_ok(spawn(argv));
}

/* One sensor of fig5.yaml: `frames` frames at `rate` Hz, as above. */
static int bench_sensor(const char *bin, const char *src, const char *sensor, double rate, int frames,
                        const char *what)
{
    char dir[] = "/tmp/sensim-bench-shard-XXXXXX";
    if (!mkdtemp(dir))
        return 0;
    char scene[4096], gt[4200], one[4200], full[4200], part[4][4200], all[4200], dur[32], sh[4][8];
    snprintf(scene, sizeof scene, "%s/data/scenes/fig5.yaml", src);
    snprintf(gt, sizeof gt, "%s/gt.h5", dir);
    snprintf(one, sizeof one, "%s/one.h5", dir);
    snprintf(full, sizeof full, "%s/full.h5", dir);
    snprintf(all, sizeof all, "%s/all.h5", dir);
    /* F frames of 1/rate s end by F / rate */
    snprintf(dur, sizeof dur, "%.3f", frames / rate + 0.001);
    char *traj[] = {(char *)bin, "trajectory", "--shape", "line", "--speed", "20", "--duration", dur, "-o", gt, NULL};
    int ok = run(traj);
    /* the fixed cost of one process: one frame */
    double t0 = bench_now(), c0 = cpu_children;
    char *r1[] = {(char *)bin, "render", scene, "-t", gt, "-s", (char *)sensor, "-q", "-j", "1", "--frames", "0..0",
                  "-o", one, NULL};
    ok = ok && run(r1);
    double fixed = bench_now() - t0, fixed_cpu = cpu_children - c0;
    /* one process, 2 threads */
    t0 = bench_now();
    c0 = cpu_children;
    char *rf[] = {(char *)bin, "render", scene, "-t", gt, "-s", (char *)sensor, "-q", "-j", "2", "-o", full, NULL};
    ok = ok && run(rf);
    double single = bench_now() - t0, single_cpu = cpu_children - c0;
    /* 4 shards, one thread each, 2 at a time */
    t0 = bench_now();
    c0 = cpu_children;
    pid_t pids[4];
    for (int i = 0; i < 4 && ok; i++) {
        snprintf(part[i], sizeof part[i], "%s/part-%d.h5", dir, i);
        snprintf(sh[i], sizeof sh[i], "%d/4", i);
        char *rp[] = {(char *)bin, "render", scene, "-t", gt, "-s", (char *)sensor, "-q", "-j", "1", "--shard", sh[i],
                      "-o", part[i], NULL};
        if (i >= 2)
            ok = wait_ok(pids[i - 2]);
        pids[i] = spawn(rp);
    }
    ok = ok && wait_ok(pids[2]) && wait_ok(pids[3]);
    double sharded = bench_now() - t0, sharded_cpu = cpu_children - c0;
    t0 = bench_now();
    c0 = cpu_children;
    char *st[] = {(char *)bin, "stitch", all, part[0], part[1], part[2], part[3], NULL};
    ok = ok && run(st);
    double stitch = bench_now() - t0, stitch_cpu = cpu_children - c0;
    struct stat sb;
    const double bytes = stat(full, &sb) == 0 ? (double)sb.st_size : NAN;
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_shard: could not remove %s\n", dir);
    if (!ok) {
        fprintf(stderr, "bench_shard: a sensim command failed\n");
        return 0;
    }
    /* per frame, in CPU-seconds (what a loaded machine still measures): the
     * shards' work less their fixed costs (each of which renders one frame) */
    const double per = (sharded_cpu - 4 * fixed_cpu) / (frames - 4), fixed_only = fixed_cpu - per;
    printf("render of %d %s (fig5.yaml '%s'), 2 cores:     wall      CPU\n", frames, what, sensor);
    printf("  one process, -j 2:                             %7.2f s %7.2f s\n", single, single_cpu);
    printf("  4 shards (-j 1, 2 at a time):                  %7.2f s %7.2f s  (wall %+.1f%%, CPU %+.1f%%)\n",
           sharded, sharded_cpu, 100 * (sharded / single - 1), 100 * (sharded_cpu / single_cpu - 1));
    printf("  stitch of the 4:                               %7.3f s %7.3f s\n", stitch, stitch_cpu);
    printf("  shards + stitch against one process:           %+6.1f%%   %+6.1f%%\n",
           100 * ((sharded + stitch) / single - 1), 100 * ((sharded_cpu + stitch_cpu) / single_cpu - 1));
    printf("  fixed cost of a process (1 frame, -j 1):       %7.3f s %7.3f s\n", fixed, fixed_cpu);
    printf("  per frame: %.4f CPU-s (10 000: %.0f CPU-s); a process's start: %.3f CPU-s\n", per, 1e4 * per,
           fixed_only);
    printf("  output: %.3f MB a frame (10 000: %.1f GB)\n", bytes / frames / 1e6, bytes / frames * 1e4 / 1e9);
    return 1;
}

int main(int argc, char **argv)
{
    const char *bin = getenv("SENSIM_BIN"), *src = getenv("SENSIM_SRCDIR");
    int scans = argc > 1 ? atoi(argv[1]) : 80, frames = argc > 2 ? atoi(argv[2]) : 12;
    if (!bin || !src || scans < 8 || frames < 8) {
        fprintf(stderr, "bench_shard: set SENSIM_BIN and SENSIM_SRCDIR (make bench does); SCANS, FRAMES >= 8\n");
        return 2;
    }
    /* idle OpenMP threads sleep rather than spin: on a loaded machine a
     * spinning thread counts as CPU time the render does not use */
    setenv("OMP_WAIT_POLICY", "passive", 0);
    if (!bench_sensor(bin, src, "hdl32e", 20, scans, "HDL-32E scans") ||
        !bench_sensor(bin, src, "cam", 10, frames, "640x360 frames"))
        return 1;
    return 0;
}
