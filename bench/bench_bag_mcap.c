/* Raw MCAP read throughput: sensim_bag_open + sensim_bag_next over a
 * generated recording of sensor_msgs/msg/Imu-sized messages (324-byte CDR
 * payloads, 1 kHz stamps), written by sensim's own MCAP writer.
 *
 * Prints, for the read alone (done in a child process so that its peak
 * resident memory is its own): messages/s, MB/s of payload, and peak RSS.
 * The file was just written, so it is read from the page cache: this is the
 * container's cost (record walking, index merge, CRC, decompression), not
 * the disk's. Messages are not decoded (that is sensim/rosmsg.h's job); the
 * loop touches every payload byte's first and last word so that nothing is
 * skipped.
 *
 * usage: bench_bag_mcap [MBYTES [none|zstd|lz4 [DIR]]]   (defaults 1024, none, $TMPDIR or /tmp) */
#define _XOPEN_SOURCE 700
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sensim/bag.h"
#include "bench.h"

#define PAYLOAD 324 /* CDR Imu with frame_id "imu_link": 4 + 8 + 4+9 (+3 pad) + 37 doubles */

static void imu_payload(uint8_t *p, uint64_t i, int64_t t)
{
    memset(p, 0, PAYLOAD);
    p[1] = 1; /* CDR_LE */
    int32_t sec = (int32_t)(t / 1000000000);
    uint32_t nsec = (uint32_t)(t % 1000000000);
    memcpy(p + 4, &sec, 4);
    memcpy(p + 8, &nsec, 4);
    uint32_t len = 9;
    memcpy(p + 12, &len, 4);
    memcpy(p + 16, "imu_link", 9);
    double v[37];
    for (int k = 0; k < 37; k++)
        v[k] = (k == 3 ? 1.0 : 0.0) + 1e-3 * (double)((i * 7 + (uint64_t)k) % 97);
    memcpy(p + 4 + 24, v, sizeof v); /* fields from body offset 24 (8-aligned) */
}

int main(int argc, char **argv)
{
    double mbytes = argc > 1 ? atof(argv[1]) : 1024;
    const char *cname = argc > 2 ? argv[2] : "none";
    const char *tmp = argc > 3 ? argv[3] : getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    sensim_bag_compression comp = SENSIM_BAG_COMPRESS_NONE;
    if (strcmp(cname, "zstd") == 0)
        comp = SENSIM_BAG_COMPRESS_ZSTD;
    else if (strcmp(cname, "lz4") == 0)
        comp = SENSIM_BAG_COMPRESS_LZ4;
    else if (strcmp(cname, "none") != 0) {
        fprintf(stderr, "usage: bench_bag_mcap [MBYTES [none|zstd|lz4 [DIR]]]\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_bag_mcap-%d.mcap", tmp, (int)getpid());
    /* each message: 9 (record) + 22 (message header) + payload */
    uint64_t n = (uint64_t)(mbytes * 1e6 / (9 + 22 + PAYLOAD));

    double t0 = bench_now();
    sensim_bag_writer *w = sensim_bag_writer_create(path, SENSIM_BAG_MCAP, comp);
    size_t h;
    if (!w || sensim_bag_writer_add_topic(w, "/imu0", "sensor_msgs/msg/Imu", "# bench\n", &h) != SENSIM_OK)
        return bench_fail("bench_bag_mcap");
    uint8_t buf[PAYLOAD];
    for (uint64_t i = 0; i < n; i++) {
        int64_t t = 1700000000000000000LL + (int64_t)i * 1000000;
        imu_payload(buf, i, t);
        if (sensim_bag_writer_write(w, h, t, buf, PAYLOAD) != SENSIM_OK) {
            fprintf(stderr, "bench_bag_mcap: %s\n", sensim_last_error());
            sensim_bag_writer_close(w);
            return 1;
        }
    }
    if (sensim_bag_writer_commit(w) != SENSIM_OK) {
        fprintf(stderr, "bench_bag_mcap: %s\n", sensim_last_error());
        sensim_bag_writer_close(w);
        return 1;
    }
    sensim_bag_writer_close(w);
    double tw = bench_now() - t0;
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    double fsize = (double)ftell(f);
    fclose(f);
    printf("wrote %s: %" PRIu64 " Imu messages, %.1f MB (%s chunks) in %.2f s\n", path, n, fsize / 1e6, cname, tw);
    fflush(stdout);

    pid_t pid = fork();
    if (pid == 0) {
        double w0 = bench_now(), c0 = bench_cpu();
        sensim_bag *b = sensim_bag_open(path);
        if (!b) {
            fprintf(stderr, "bench_bag_mcap: %s\n", sensim_last_error());
            _exit(1);
        }
        double topen = bench_now() - w0;
        sensim_bag_msg m;
        uint64_t got = 0, bytes = 0, sink = 0;
        int r;
        while ((r = sensim_bag_next(b, &m)) == 1) {
            got++;
            bytes += m.size;
            sink += m.data[0] + m.data[m.size - 1];
        }
        double wall = bench_now() - w0, cpu = bench_cpu() - c0;
        if (r < 0 || got != n) {
            fprintf(stderr, "bench_bag_mcap: read %" PRIu64 " of %" PRIu64 ": %s\n", got, n, sensim_last_error());
            _exit(1);
        }
        sensim_bag_close(b);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("read: open %.3f s; %" PRIu64 " messages in %.2f s wall (%.2f s CPU): %.2f M messages/s, %.0f MB/s "
               "of payload (%.2f M/s per CPU-second); peak RSS %.1f MB (sink %" PRIu64 ")\n",
               topen, got, wall, cpu, got / wall / 1e6, bytes / wall / 1e6, got / cpu / 1e6, ru.ru_maxrss / 1024.0,
               sink % 10);
        fflush(stdout);
        _exit(0);
    }
    int st = 1;
    waitpid(pid, &st, 0);
    remove(path);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
