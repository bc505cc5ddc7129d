/* `sensim import` end to end, the command a user runs, on a generated ROS 1
 * bag and a generated MCAP file of sensor_msgs/Imu messages (400 Hz,
 * frame "imu_link", every field set), against the raw container reader on
 * the same file in the same run.
 *
 *   build/bench/bench_import [MB]
 *
 * MB is the size of each recording (default $SENSIM_BENCH_IMPORT_MB, else
 * 1024, the size issue 11 asks for; `SENSIM_BENCH_IMPORT_MB=128 make bench`
 * keeps `make bench` short). The files go to a new folder in $TMPDIR (or
 * /tmp) and are deleted at the end, also on failure.
 *
 * For each format, written with sensim's own writer (uncompressed chunks):
 *   raw read   sensim_bag_open + sensim_bag_next over every message, each
 *              payload touched (the container's cost: records located,
 *              CRCs checked, messages handed out in time order);
 *   import     `$SENSIM_BIN import FILE --topic /imu0 -o OUT.h5`: process
 *              start, the reorder window, decoding, the HDF5 writer; the
 *              log is checked to hold every message;
 *   import 1/8 the same on a recording an eighth the size, for its peak
 *              memory: the import streams, so it should not grow with the
 *              recording.
 * Each runs in its own child; wait4 gives its CPU seconds (user + system)
 * and peak RSS. Printed: messages/s and MB/s (recording bytes) over wall
 * time and per CPU second (a steadier figure on a shared machine), peak
 * RSS, and the import's CPU time over the raw read's. The recordings were
 * just written, so they are read from the page cache: this times sensim,
 * not the disk. */
#define _XOPEN_SOURCE 700
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sensim/bag.h"
#include "sensim/log.h"
#include "sensim/rosmsg.h"
#include "bench.h"

static double file_mb(const char *path)
{
    struct stat st;
    return stat(path, &st) ? 0 : st.st_size / 1048576.0;
}

/* Writes an Imu recording of about `mb` MB; returns the message count (0
 * on failure, message printed). */
static uint64_t write_recording(const char *path, sensim_bag_format fmt, double mb)
{
    sensim_bag_writer *w = sensim_bag_writer_create(path, fmt, SENSIM_BAG_COMPRESS_NONE);
    size_t topic;
    if (!w || sensim_bag_writer_add_topic(w, "/imu0", "sensor_msgs/Imu", "", &topic) != SENSIM_OK) {
        fprintf(stderr, "bench_import: %s\n", sensim_last_error());
        sensim_bag_writer_close(w);
        return 0;
    }
    sensim_msg_encoding enc = fmt == SENSIM_BAG_ROS1 ? SENSIM_ENC_ROS1 : SENSIM_ENC_CDR;
    sensim_msg_imu m;
    memset(&m, 0, sizeof m);
    snprintf(m.header.frame_id, sizeof m.header.frame_id, "imu_link");
    m.orientation[3] = 1;
    for (int k = 0; k < 9; k += 4) {
        m.orientation_covariance[k] = 1e-4;
        m.angular_velocity_covariance[k] = 4e-8;
        m.linear_acceleration_covariance[k] = 1e-5;
    }
    sensim_msg_buf b = {0};
    /* per message: the payload plus the container's record (ROS 1: 4-byte
     * header length, op/conn/time fields, 4-byte data length; MCAP: opcode,
     * length, channel, sequence, two times) and its index entry. */
    const double overhead = fmt == SENSIM_BAG_ROS1 ? 46 + 12 : 31 + 16;
    uint64_t n = 0;
    int64_t t = 1700000000LL * 1000000000LL;
    for (double bytes = 0; bytes < mb * 1048576.0; n++, t += 2500000) {
        m.header.seq = (uint32_t)n;
        m.header.stamp_ns = t;
        for (int k = 0; k < 3; k++) {
            m.angular_velocity[k] = 1e-3 * (double)((n * 7 + (uint64_t)k) % 97);
            m.linear_acceleration[k] = (k == 2 ? 9.81 : 0) + 1e-3 * (double)((n * 11 + (uint64_t)k) % 89);
        }
        b.len = 0;
        if (sensim_msg_encode_imu(enc, &m, &b) || sensim_bag_writer_write(w, topic, t, b.data, b.len)) {
            fprintf(stderr, "bench_import: %s\n", sensim_last_error());
            sensim_bag_writer_close(w);
            sensim_msg_buf_free(&b);
            return 0;
        }
        bytes += (double)b.len + overhead;
    }
    sensim_msg_buf_free(&b);
    if (sensim_bag_writer_commit(w) != SENSIM_OK) {
        fprintf(stderr, "bench_import: %s\n", sensim_last_error());
        n = 0;
    }
    sensim_bag_writer_close(w);
    return n;
}

static volatile uint64_t sink; /* keeps the payload reads */

/* The baseline, in a forked child: every message through the raw reader. */
static int raw_read(const char *path, uint64_t n)
{
    sensim_bag *bag = sensim_bag_open(path);
    if (!bag)
        return bench_fail("bench_import");
    sensim_bag_msg m;
    uint64_t got = 0, sum = 0;
    int r;
    while ((r = sensim_bag_next(bag, &m)) == 1) {
        sum += m.data[0] + m.data[m.size / 2] + m.data[m.size - 1];
        got++;
    }
    sensim_bag_close(bag);
    if (r != 0 || got != n) {
        fprintf(stderr, "bench_import: raw read of %s: %" PRIu64 " of %" PRIu64 " messages: %s\n", path, got, n,
                r ? sensim_last_error() : "");
        return 1;
    }
    sink = sum;
    return 0;
}

typedef struct run {
    double wall, cpu, rss_mb;
} run;

/* Runs fn(path, n) in a forked child, or argv with execv when fn is NULL. */
static int measure(int (*fn)(const char *, uint64_t), const char *path, uint64_t n, char *const *argv, run *out)
{
    fflush(stdout);
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid == 0) {
        if (fn)
            _exit(fn(path, n));
        execv(argv[0], argv);
        perror(argv[0]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
        return 1;
    out->wall = bench_now() - t0;
    out->cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    out->rss_mb = ru.ru_maxrss / 1024.0;
    return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* Rows of /sensors/imu0/t in the imported log. */
static uint64_t imported_rows(const char *h5)
{
    sensim_log *log = sensim_log_open(h5);
    int rank = 0;
    size_t dims[SENSIM_LOG_MAX_RANK] = {0};
    uint64_t rows = log && sensim_log_shape(log, "/sensors/imu0/t", &rank, dims) == SENSIM_OK ? dims[0] : 0;
    sensim_log_close(log);
    return rows;
}

static void line(const char *what, uint64_t n, double mb, const run *r)
{
    printf("  %-11s %.2f M msg/s, %.0f MB/s wall (%.2f s); %.2f CPU s: %.2f M msg/s, %.0f MB/s per CPU second; "
           "peak RSS %.1f MB\n",
           what, n / r->wall / 1e6, mb / r->wall, r->wall, r->cpu, n / r->cpu / 1e6, mb / r->cpu, r->rss_mb);
}

static int bench_format(const char *dir, const char *bin, sensim_bag_format fmt, double mb)
{
    const char *name = fmt == SENSIM_BAG_ROS1 ? "ROS 1 bag" : "MCAP (ros2, CDR)";
    const char *ext = fmt == SENSIM_BAG_ROS1 ? "bag" : "mcap";
    char rec[4096], small[4096], h5[4096], h5s[4096];
    snprintf(rec, sizeof rec, "%s/imu.%s", dir, ext);
    snprintf(small, sizeof small, "%s/imu-eighth.%s", dir, ext);
    snprintf(h5, sizeof h5, "%s/imu-%s.h5", dir, ext);
    snprintf(h5s, sizeof h5s, "%s/imu-eighth-%s.h5", dir, ext);
    double t0 = bench_now();
    uint64_t n = write_recording(rec, fmt, mb), ns = n ? write_recording(small, fmt, mb / 8) : 0;
    if (!n || !ns)
        return 1;
    double size = file_mb(rec), size_s = file_mb(small);
    printf("%s: %" PRIu64 " sensor_msgs/Imu messages, %.1f MB (written in %.1f s with a copy of 1/8 the size)\n",
           name, n, size, bench_now() - t0);
    run raw, imp, imps;
    char *argv[] = {(char *)bin, "import", rec, "--topic", "/imu0", "-o", h5, NULL};
    char *argv_s[] = {(char *)bin, "import", small, "--topic", "/imu0", "-o", h5s, NULL};
    int bad = measure(raw_read, rec, n, NULL, &raw);
    if (!bad && (bad = measure(NULL, NULL, 0, argv, &imp)))
        fprintf(stderr, "bench_import: %s import %s failed\n", bin, rec);
    if (!bad && (bad = measure(NULL, NULL, 0, argv_s, &imps)))
        fprintf(stderr, "bench_import: %s import %s failed\n", bin, small);
    uint64_t rows = bad ? 0 : imported_rows(h5);
    if (!bad && rows != n) {
        fprintf(stderr, "bench_import: %s holds %" PRIu64 " of %" PRIu64 " messages\n", h5, rows, n);
        bad = 1;
    }
    if (!bad) {
        line("raw read", n, size, &raw);
        line("import", n, size, &imp);
        printf("  import is %.1fx the raw read's CPU time; peak RSS %.1f MB at %.0f MB, %.1f MB at %.0f MB\n",
               imp.cpu / raw.cpu, imp.rss_mb, size, imps.rss_mb, size_s);
    }
    remove(rec), remove(small), remove(h5), remove(h5s);
    return bad;
}

int main(int argc, char **argv)
{
    const char *env = getenv("SENSIM_BENCH_IMPORT_MB");
    double mb = argc > 1 ? atof(argv[1]) : env && *env ? atof(env) : 1024;
    if (!(mb >= 1)) {
        fprintf(stderr, "usage: bench_import [MB >= 1]   (or SENSIM_BENCH_IMPORT_MB)\n");
        return 2;
    }
    const char *bin = getenv("SENSIM_BIN"), *tmp = getenv("TMPDIR");
    bin = bin && *bin ? bin : "build/sensim";
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/sensim-bench-import-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror(dir);
        return 1;
    }
    printf("sensim import end to end (%s), recordings of %.0f MB in %s\n", bin, mb, dir);
    int bad = bench_format(dir, bin, SENSIM_BAG_ROS1, mb) || bench_format(dir, bin, SENSIM_BAG_MCAP, mb);
    rmdir(dir);
    return bad;
}
