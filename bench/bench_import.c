/* Recording import throughput: a ROS 1 bag of sensor_msgs/Imu messages is
 * generated with sensim's own writer, then read back with sensim_bag_next
 * (the raw container path every import, fit and info goes through:
 * records located, decompressed and handed out in time order, payload
 * untouched). Each phase runs in its own child process so that the peak
 * resident memory (getrusage of the child) is the phase's own; it should
 * not depend on the bag size.
 *
 *   build/bench/bench_import [MB [none|bz2|lz4 [DIR]]]   (default 1024 MB, none, $TMPDIR or /tmp)
 *
 * Prints messages/s and MB/s (bag bytes over wall time) for writing and
 * reading, and each phase's peak RSS; for the read also its CPU seconds
 * (user + system), a steadier figure than wall time on a loaded machine.
 * The read usually comes from the page cache, the bag having just been
 * written; one core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sensim/bag.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); } /* x86-64 and arm64: little-endian */
static void putf64(uint8_t *p, double v) { memcpy(p, &v, 8); }

/* A serialized ROS 1 sensor_msgs/Imu: header (seq, stamp, frame_id
 * "imu_link"), orientation, 9 covariances, angular velocity, 9, linear
 * acceleration, 9: 4+8+4+8 + 32+72+24+72+24+72 = 320 bytes. */
#define IMU_SIZE 320
static void imu_payload(uint8_t *b, uint32_t seq, int64_t t_ns)
{
    memset(b, 0, IMU_SIZE);
    put32(b, seq);
    put32(b + 4, (uint32_t)(t_ns / 1000000000));
    put32(b + 8, (uint32_t)(t_ns % 1000000000));
    put32(b + 12, 8);
    memcpy(b + 16, "imu_link", 8);
    putf64(b + 24 + 24, 1.0);                        /* orientation w */
    putf64(b + 56, -1.0);                            /* orientation unknown */
    putf64(b + 128, 1e-3 * (seq % 17));              /* angular velocity x */
    putf64(b + 224 + 16, 9.81 + 1e-4 * (seq % 13));  /* linear acceleration z */
}

static int run_child(int (*fn)(const char *, size_t, sensim_bag_compression), const char *path, size_t mb,
                     sensim_bag_compression c, const char *what)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
    {
        int rc = fn(path, mb, c);
        fflush(stdout);
        _exit(rc);
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_import: %s failed\n", what);
        return 1;
    }
    printf("  %-6s peak RSS %.1f MB\n", what, ru.ru_maxrss / 1024.0);
    return 0;
}

static int do_write(const char *path, size_t mb, sensim_bag_compression c)
{
    double t0 = now();
    sensim_bag_writer *w = sensim_bag_writer_create(path, SENSIM_BAG_ROS1, c);
    size_t topic;
    /* sensim fills in sensor_msgs/Imu's definition and md5sum. */
    if (!w || sensim_bag_writer_add_topic(w, "/imu0", "sensor_msgs/Imu", "", &topic) != SENSIM_OK) {
        fprintf(stderr, "bench_import: %s\n", sensim_last_error());
        return 1;
    }
    uint8_t b[IMU_SIZE];
    const size_t record = IMU_SIZE + 46; /* message data record */
    size_t n = (mb << 20) / record;
    int64_t t = 1700000000LL * 1000000000LL;
    for (size_t i = 0; i < n; i++, t += 2500000) { /* 400 Hz */
        imu_payload(b, (uint32_t)i, t);
        if (sensim_bag_writer_write(w, topic, t, b, IMU_SIZE) != SENSIM_OK) {
            fprintf(stderr, "bench_import: %s\n", sensim_last_error());
            return 1;
        }
    }
    if (sensim_bag_writer_commit(w) != SENSIM_OK) {
        fprintf(stderr, "bench_import: %s\n", sensim_last_error());
        return 1;
    }
    sensim_bag_writer_close(w);
    double dt = now() - t0;
    struct stat st;
    stat(path, &st);
    printf("  write  %zu messages, %.1f MB in %.2f s: %.2f M msg/s, %.0f MB/s\n", n, st.st_size / 1048576.0, dt,
           n / dt / 1e6, st.st_size / 1048576.0 / dt);
    return 0;
}

static int do_read(const char *path, size_t mb, sensim_bag_compression c)
{
    (void)mb, (void)c;
    double t0 = now(), c0 = cpu();
    sensim_bag *bag = sensim_bag_open(path);
    if (!bag) {
        fprintf(stderr, "bench_import: %s\n", sensim_last_error());
        return 1;
    }
    double t_open = now() - t0;
    sensim_bag_msg m;
    size_t n = 0;
    uint64_t sum = 0;
    int k;
    int64_t last = INT64_MIN;
    while ((k = sensim_bag_next(bag, &m)) == 1) {
        sum += m.size + m.data[0]; /* touch the payload */
        if (m.recv_ns < last)
            k = -2;
        last = m.recv_ns;
        n++;
    }
    double dt = now() - t0, dc = cpu() - c0;
    if (k != 0) {
        fprintf(stderr, "bench_import: %s\n", k == -2 ? "out of order" : sensim_last_error());
        return 1;
    }
    uint64_t count = sensim_bag_topic_at(bag, 0)->count;
    sensim_bag_close(bag);
    struct stat st;
    stat(path, &st);
    printf("  read   %zu messages (index says %llu, checksum %llu) in %.2f s (open %.3f s): %.2f M msg/s, "
           "%.0f MB/s; %.2f CPU s: %.2f M msg/s per CPU second\n",
           n, (unsigned long long)count, (unsigned long long)sum, dt, t_open, n / dt / 1e6,
           st.st_size / 1048576.0 / dt, dc, n / dc / 1e6);
    return n == count ? 0 : 1;
}

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    const char *cname = argc > 2 ? argv[2] : "none";
    sensim_bag_compression c = SENSIM_BAG_COMPRESS_NONE;
    if (strcmp(cname, "bz2") == 0)
        c = SENSIM_BAG_COMPRESS_BZ2;
    else if (strcmp(cname, "lz4") == 0)
        c = SENSIM_BAG_COMPRESS_LZ4;
    else if (strcmp(cname, "none") != 0 || mb == 0) {
        fprintf(stderr, "usage: bench_import [MB [none|bz2|lz4 [DIR]]]\n");
        return 2;
    }
    const char *dir = argc > 3 ? argv[3] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_import-%ld.bag", dir, (long)getpid());
    printf("ROS 1 bag of sensor_msgs/Imu, %zu MB, chunks %s (%s)\n", mb, cname, path);
    int bad = run_child(do_write, path, mb, c, "write") || run_child(do_read, path, mb, c, "read");
    unlink(path);
    return bad;
}
