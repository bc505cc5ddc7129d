/* ROS 2 containers behind sensim/bag.h: rosbag2 sqlite3 (.db3), MCAP and
 * rosbag2 directories.
 *
 * References that share no code with the reader: the two recordings in
 * ../shared/data/rosbag2 written by rosbags (geocamxyz/rosbags-rs test data;
 * their metadata.yaml parsed here by /usr/bin/python3's yaml module, their
 * Imu payloads checked against the values their writer stored at offsets
 * computed from the CDR layout of sensor_msgs/msg/Imu); for sensim's own
 * writer, Python's sqlite3 module and tests/data/mcap_walk.py (an MCAP
 * reader written from the specification with struct, zlib, zstandard, lz4).
 * Bad inputs: each refused with a message naming the file and the record or
 * split, never a crash (ASan run: make check-asan). */
#define _XOPEN_SOURCE 700
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../io/bag_internal.h"
#include "sensim/bag.h"
#include "testutil.h"

#define IMU_TOPIC "/test/sensor_msgs/imu"

/* ---- helpers ---- */

static char *data_path(const char *rel)
{
    char *base = tu_src("../shared/data/rosbag2");
    char *p = tu_path(base, rel);
    free(base);
    return p;
}

/* Runs a shell command, returns its stdout (malloc'd); fails the test on a
 * non-zero exit. */
static char *run_cmd(const char *cmd)
{
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 4096)
            buf = realloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    int st = pclose(f);
    ck_assert_msg(st == 0, "command failed (%d): %s", st, cmd);
    return buf;
}

/* A whole binary file (tu_read_file stops at the first NUL). */
static uint8_t *read_bin(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)len + 1);
    ck_assert_uint_eq(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void copy_file(const char *from, const char *to)
{
    size_t n;
    uint8_t *b = read_bin(from, &n);
    ck_assert_ptr_nonnull(b);
    FILE *f = fopen(to, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    fclose(f);
    free(b);
}

static void write_bytes(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    fclose(f);
}

static sensim_bag *open_ok(const char *path)
{
    sensim_bag *b = sensim_bag_open(path);
    ck_assert_msg(b != NULL, "%s: %s", path, sensim_last_error());
    return b;
}

/* Opening fails and the message holds every NULL-terminated needle. */
static void open_fails(const char *path, ...)
{
    sensim_bag *b = sensim_bag_open(path);
    ck_assert_msg(b == NULL, "%s opened", path);
    const char *msg = sensim_last_error();
    va_list ap;
    va_start(ap, path);
    const char *n;
    while ((n = va_arg(ap, const char *)))
        ck_assert_msg(strstr(msg, n) != NULL, "message '%s' lacks '%s'", msg, n);
    va_end(ap);
}

/* Opening succeeds, reading fails; the message holds every needle. */
static void read_fails(const char *path, ...)
{
    sensim_bag *b = open_ok(path);
    sensim_bag_msg m;
    int r;
    while ((r = sensim_bag_next(b, &m)) == 1)
        ;
    ck_assert_msg(r == -1, "%s read to the end", path);
    const char *msg = sensim_last_error();
    va_list ap;
    va_start(ap, path);
    const char *n;
    while ((n = va_arg(ap, const char *)))
        ck_assert_msg(strstr(msg, n) != NULL, "message '%s' lacks '%s'", msg, n);
    va_end(ap);
    sensim_bag_close(b);
}

static double rd_f64(const uint8_t *p)
{
    double d;
    memcpy(&d, p, 8); /* the test machine is little-endian, as the CDR_LE data */
    return d;
}

static uint32_t rd_u32(const uint8_t *p) { return (uint32_t)p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

/* ---- the shared recordings ---- */

typedef struct meta_topic {
    char name[128], type[128];
    unsigned long count;
} meta_topic;

/* metadata.yaml as /usr/bin/python3's yaml module reads it. */
static size_t read_metadata(const char *dir, meta_topic *out, size_t max, long long *start, long long *duration,
                            unsigned long *total)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import yaml,sys; m=yaml.safe_load(open('%s/metadata.yaml'))"
             "['rosbag2_bagfile_information'];"
             "print(m['starting_time']['nanoseconds_since_epoch'], m['duration']['nanoseconds'], m['message_count']);"
             "[print(t['topic_metadata']['name'], t['topic_metadata']['type'], t['message_count']) "
             "for t in m['topics_with_message_count']]\"",
             dir);
    char *o = run_cmd(cmd);
    char *save, *line = strtok_r(o, "\n", &save);
    ck_assert_int_eq(sscanf(line, "%lld %lld %lu", start, duration, total), 3);
    size_t n = 0;
    while ((line = strtok_r(NULL, "\n", &save)) && n < max) {
        ck_assert_int_eq(sscanf(line, "%127s %127s %lu", out[n].name, out[n].type, &out[n].count), 3);
        n++;
    }
    free(o);
    return n;
}

/* Topics, types, counts and spans of one recording opened four ways. */
static void check_shared(const char *dirname, const char *file)
{
    char *dir = data_path(dirname);
    meta_topic mt[128];
    long long start, duration;
    unsigned long total;
    size_t nm = read_metadata(dir, mt, 128, &start, &duration, &total);
    ck_assert_uint_eq(nm, 94);
    ck_assert_uint_eq(total, 188);
    char *fp = tu_path(dir, file);
    const char *paths[2] = {dir, fp};
    for (int k = 0; k < 2; k++) {
        sensim_bag *b = open_ok(paths[k]);
        ck_assert_int_eq(sensim_bag_get_format(b), strstr(file, ".mcap") ? SENSIM_BAG_MCAP : SENSIM_BAG_DB3);
        ck_assert_uint_eq(sensim_bag_ntopics(b), 94);
        uint64_t sum = 0;
        int64_t first = INT64_MAX, last = INT64_MIN;
        for (size_t i = 0; i < nm; i++) {
            size_t ti;
            ck_assert_msg(sensim_bag_find_topic(b, mt[i].name, &ti) == SENSIM_OK, "%s", sensim_last_error());
            const sensim_bag_topic *t = sensim_bag_topic_at(b, ti);
            ck_assert_str_eq(t->type, mt[i].type);
            ck_assert_uint_eq(t->count, mt[i].count);
            ck_assert_uint_eq(t->count, 2);
            ck_assert_int_eq(t->encoding, SENSIM_ENC_CDR);
            if (strcmp(t->name, IMU_TOPIC) == 0) /* rosbags stores the .msg text with its dependencies */
                ck_assert_ptr_nonnull(strstr(t->definition, "geometry_msgs/Quaternion orientation"));
            sum += t->count;
            first = t->t_first_ns < first ? t->t_first_ns : first;
            last = t->t_last_ns > last ? t->t_last_ns : last;
        }
        ck_assert_uint_eq(sum, 188);
        ck_assert_int_eq(first, start);
        ck_assert_int_eq(last, start + duration);
        /* The stream: 188 messages in receive-time order, indexes 0..187,
         * each topic's first and last stamps as listed. */
        int64_t *seen_first = malloc(94 * sizeof *seen_first), *seen_last = malloc(94 * sizeof *seen_last);
        uint64_t *cnt = calloc(94, sizeof *cnt);
        sensim_bag_msg m;
        int r;
        uint64_t n = 0;
        int64_t prev = INT64_MIN;
        while ((r = sensim_bag_next(b, &m)) == 1) {
            ck_assert_uint_eq(m.index, n);
            ck_assert_int_ge(m.recv_ns, prev);
            ck_assert_uint_lt(m.topic, 94);
            ck_assert_uint_ge(m.size, 4);
            /* CDR little-endian encapsulation: 00 01, options 00 00 */
            ck_assert(m.data[0] == 0 && m.data[1] == 1 && m.data[2] == 0 && m.data[3] == 0);
            if (cnt[m.topic]++ == 0)
                seen_first[m.topic] = m.recv_ns;
            seen_last[m.topic] = m.recv_ns;
            prev = m.recv_ns;
            n++;
        }
        ck_assert_msg(r == 0, "%s", sensim_last_error());
        ck_assert_uint_eq(n, 188);
        for (size_t i = 0; i < 94; i++) {
            const sensim_bag_topic *t = sensim_bag_topic_at(b, i);
            ck_assert_uint_eq(cnt[i], t->count);
            ck_assert_int_eq(seen_first[i], t->t_first_ns);
            ck_assert_int_eq(seen_last[i], t->t_last_ns);
        }
        free(seen_first);
        free(seen_last);
        free(cnt);
        sensim_bag_close(b);
    }
    free(fp);
    free(dir);
}

START_TEST(shared_db3_topics)
{
    check_shared("test_bag_sqlite3", "test_bag_sqlite3.db3");
}
END_TEST

START_TEST(shared_mcap_topics)
{
    check_shared("test_bag_mcap", "test_bag_mcap.mcap");
}
END_TEST

/* sensor_msgs/msg/Imu in CDR: after the 4-byte encapsulation header (CDR
 * alignment counts from after it) come header.stamp (int32 sec, uint32
 * nanosec: 8 bytes), header.frame_id (uint32 length with the NUL, bytes),
 * then float64 fields aligned to 8: orientation (4), orientation_covariance
 * (9), angular_velocity (3), its covariance (9), linear_acceleration (3),
 * its covariance (9). */
static void check_imu_payload(const uint8_t *d, size_t size)
{
    ck_assert(d[0] == 0 && d[1] == 1 && d[2] == 0 && d[3] == 0);
    const uint8_t *body = d + 4;
    uint32_t len = rd_u32(body + 8);
    ck_assert_uint_eq(len, sizeof "test_frame");
    ck_assert_int_eq(memcmp(body + 12, "test_frame", len), 0);
    size_t o = (12 + len + 7) & ~(size_t)7;
    size_t ang = o + 8 * (4 + 9), acc = ang + 8 * (3 + 9);
    ck_assert_uint_eq(size, 4 + acc + 8 * (3 + 9));
    const double q[4] = {0, 0, 0, 1}, w[3] = {0.01, 0.02, 0.03}, a[3] = {0.1, 0.2, 9.8};
    for (int i = 0; i < 4; i++)
        ck_assert_double_eq(rd_f64(body + o + 8 * i), q[i]);
    for (int i = 0; i < 3; i++) {
        ck_assert_double_eq(rd_f64(body + ang + 8 * i), w[i]);
        ck_assert_double_eq(rd_f64(body + acc + 8 * i), a[i]);
    }
}

START_TEST(shared_imu_payloads)
{
    const char *files[] = {"test_bag_sqlite3/test_bag_sqlite3.db3", "test_bag_mcap/test_bag_mcap.mcap",
                           "test_bag_sqlite3", "test_bag_mcap"};
    for (int k = 0; k < 4; k++) {
        char *p = data_path(files[k]);
        sensim_bag *b = open_ok(p);
        size_t ti;
        ck_assert_int_eq(sensim_bag_find_topic(b, IMU_TOPIC, &ti), SENSIM_OK);
        ck_assert_int_eq(sensim_bag_select(b, &ti, 1), SENSIM_OK);
        sensim_bag_msg m;
        int n = 0;
        while (sensim_bag_next(b, &m) == 1) {
            ck_assert_uint_eq(m.topic, ti);
            check_imu_payload(m.data, m.size);
            n++;
        }
        ck_assert_int_eq(n, 2);
        sensim_bag_close(b);
        free(p);
    }
}
END_TEST

/* The .db3 and the .mcap hold the same messages recorded at different
 * times: every topic's payloads are the same bytes except header stamps
 * (builtin_interfaces/Time: int32 sec, uint32 nanosec, 4-aligned in the
 * CDR body), whose seconds lie within the recordings' span in both files. */
static int stamp_at(const uint8_t *a, const uint8_t *b, size_t size, size_t p)
{
    const uint32_t lo = 1749315324 - 60, hi = 1749315343 + 60; /* both metadata.yaml spans */
    size_t w = 4 + ((p - 4) & ~(size_t)3);
    for (int k = 0; k < 2; k++, w -= 4) {
        if (w < 4 || w + 8 > size || p >= w + 8)
            continue;
        uint32_t sa = rd_u32(a + w), sb = rd_u32(b + w);
        if (sa >= lo && sa <= hi && sb >= lo && sb <= hi)
            return 1;
    }
    return 0;
}

START_TEST(shared_db3_mcap_identical)
{
    char *pd = data_path("test_bag_sqlite3/test_bag_sqlite3.db3"), *pm = data_path("test_bag_mcap/test_bag_mcap.mcap");
    sensim_bag *bd = open_ok(pd), *bm = open_ok(pm);
    enum { NT = 94 };
    uint8_t *pay[2][NT][2] = {{{0}}};
    size_t len[2][NT][2] = {{{0}}};
    sensim_bag *bags[2] = {bd, bm};
    for (int k = 0; k < 2; k++) {
        int cnt[NT] = {0};
        sensim_bag_msg m;
        while (sensim_bag_next(bags[k], &m) == 1) {
            /* index by the topic's position in the other bag's list */
            size_t ti;
            ck_assert_int_eq(sensim_bag_find_topic(bd, sensim_bag_topic_at(bags[k], m.topic)->name, &ti), SENSIM_OK);
            ck_assert_int_lt(cnt[ti], 2);
            pay[k][ti][cnt[ti]] = malloc(m.size);
            memcpy(pay[k][ti][cnt[ti]], m.data, m.size);
            len[k][ti][cnt[ti]++] = m.size;
        }
    }
    size_t bytes = 0, identical = 0;
    for (size_t t = 0; t < NT; t++)
        for (int j = 0; j < 2; j++) {
            ck_assert_msg(len[0][t][j] == len[1][t][j], "topic %s message %d: %zu and %zu bytes",
                          sensim_bag_topic_at(bd, t)->name, j, len[0][t][j], len[1][t][j]);
            int same = 1;
            for (size_t p = 0; p < len[0][t][j]; p++)
                if (pay[0][t][j][p] != pay[1][t][j][p]) {
                    same = 0;
                    ck_assert_msg(p >= 4 && stamp_at(pay[0][t][j], pay[1][t][j], len[0][t][j], p),
                                  "topic %s message %d differs at byte %zu, not in a stamp",
                                  sensim_bag_topic_at(bd, t)->name, j, p);
                }
            identical += same;
            bytes += len[0][t][j];
            free(pay[0][t][j]);
            free(pay[1][t][j]);
        }
    ck_assert_uint_gt(bytes, 188 * 4);
    ck_assert_uint_eq(identical, 106); /* the messages without a header */
    sensim_bag_close(bd);
    sensim_bag_close(bm);
    free(pd);
    free(pm);
}
END_TEST

/* Selection: only the chosen topics, with the indexes they have in the
 * full stream; select again rewinds. */
START_TEST(select_keeps_indexes)
{
    const char *files[] = {"test_bag_sqlite3/test_bag_sqlite3.db3", "test_bag_mcap/test_bag_mcap.mcap",
                           "test_bag_mcap"};
    for (int k = 0; k < 3; k++) {
        char *p = data_path(files[k]);
        sensim_bag *b = open_ok(p);
        uint64_t idx_of[94][2];
        int cnt[94] = {0};
        sensim_bag_msg m;
        while (sensim_bag_next(b, &m) == 1)
            idx_of[m.topic][cnt[m.topic]++] = m.index;
        size_t sel[2];
        ck_assert_int_eq(sensim_bag_find_topic(b, IMU_TOPIC, &sel[0]), SENSIM_OK);
        ck_assert_int_eq(sensim_bag_find_topic(b, "/test/sensor_msgs/nav_sat_fix", &sel[1]), SENSIM_OK);
        for (int pass = 0; pass < 2; pass++) {
            ck_assert_int_eq(sensim_bag_select(b, sel, 2), SENSIM_OK);
            int got[94] = {0}, n = 0;
            while (sensim_bag_next(b, &m) == 1) {
                ck_assert(m.topic == sel[0] || m.topic == sel[1]);
                ck_assert_uint_eq(m.index, idx_of[m.topic][got[m.topic]++]);
                n++;
            }
            ck_assert_int_eq(n, 4);
        }
        ck_assert_int_eq(sensim_bag_select(b, NULL, 0), SENSIM_OK);
        int n = 0;
        while (sensim_bag_next(b, &m) == 1)
            n++;
        ck_assert_int_eq(n, 188);
        /* An unknown topic: of 94 topics the message lists, whole, the nine
         * of types sensim reads and counts the others (it used to list all
         * 94 and be cut off at the error buffer's 1023 bytes, before the
         * Imu topic). */
        ck_assert_int_eq(sensim_bag_find_topic(b, "/nope", NULL), SENSIM_ENOTFOUND);
        const char *e = sensim_last_error();
        static const char *const listed[] = {
            "/test/geometry_msgs/pose_stamped (geometry_msgs/msg/PoseStamped)",
            "/test/geometry_msgs/transform_stamped (geometry_msgs/msg/TransformStamped)",
            "/test/nav_msgs/odometry (nav_msgs/msg/Odometry)", "/test/sensor_msgs/image (sensor_msgs/msg/Image)",
            "/test/sensor_msgs/imu (sensor_msgs/msg/Imu)",
            "/test/sensor_msgs/magnetic_field (sensor_msgs/msg/MagneticField)",
            "/test/sensor_msgs/nav_sat_fix (sensor_msgs/msg/NavSatFix)",
            "/test/sensor_msgs/point_cloud2 (sensor_msgs/msg/PointCloud2)",
            "/test/tf2_msgs/tf_message (tf2_msgs/msg/TFMessage)"};
        ck_assert_ptr_nonnull(strstr(e, "no topic '/nope' (94 topics; of the types sensim reads: "));
        for (size_t i = 0; i < sizeof listed / sizeof *listed; i++)
            ck_assert_msg(strstr(e, listed[i]), "'%s' not in %s", listed[i], e);
        ck_assert_ptr_null(strstr(e, "geometry_msgs/msg/Accel"));
        ck_assert_msg(strlen(e) < 1000 && !strcmp(e + strlen(e) - 39, "; and 85 of types sensim does not read)"),
                      "%s", e);
        sensim_bag_close(b);
        free(p);
    }
}
END_TEST

/* ---- sensim's writers ---- */

enum { NMSG = 9000, NTOP = 3 };
static const char *const W_TOPICS[NTOP] = {"/imu0", "/gps", "/mag"};
static const char *const W_TYPES[NTOP] = {"sensor_msgs/msg/Imu", "sensor_msgs/msg/NavSatFix",
                                          "sensor_msgs/MagneticField"};
#define T0 1700000000000000000LL

/* Message i of the test recording: topic i % 3; pairs share a stamp (ties
 * keep write order); every 1000th is 2 s late, so chunk time ranges
 * overlap and the reader must merge; sizes 60..359 bytes. */
static size_t w_topic(size_t i) { return i % NTOP; }
static int64_t w_time(size_t i) { return T0 + (int64_t)(i / 2) * 1000000 - (i % 1000 == 999 ? 2000000000LL : 0); }
static size_t w_size(size_t i) { return 60 + (i * 37) % 300; }
static void w_fill(size_t i, uint8_t *p)
{
    size_t n = w_size(i);
    p[0] = 0, p[1] = 1, p[2] = 0, p[3] = 0;
    for (size_t k = 4; k < n; k++)
        p[k] = (uint8_t)(i * 131 + k * 7 + (i >> 8));
}

static void write_recording(const char *path, sensim_bag_format fmt, sensim_bag_compression comp, size_t n)
{
    sensim_bag_writer *w = sensim_bag_writer_create(path, fmt, comp);
    ck_assert_msg(w != NULL, "%s", sensim_last_error());
    size_t h[NTOP];
    for (int t = 0; t < NTOP; t++)
        ck_assert_msg(sensim_bag_writer_add_topic(w, W_TOPICS[t], W_TYPES[t], "float64 x\n", &h[t]) == SENSIM_OK,
                      "%s", sensim_last_error());
    uint8_t buf[512];
    for (size_t i = 0; i < n; i++) {
        w_fill(i, buf);
        ck_assert_msg(sensim_bag_writer_write(w, h[w_topic(i)], w_time(i), buf, w_size(i)) == SENSIM_OK, "%s",
                      sensim_last_error());
    }
    ck_assert_msg(sensim_bag_writer_commit(w) == SENSIM_OK, "%s", sensim_last_error());
    sensim_bag_writer_close(w);
}

/* Write order sorted stably by stamp: the order readers must deliver. */
static size_t *expected_order(size_t n, int by_time)
{
    size_t *o = malloc(n * sizeof *o);
    for (size_t i = 0; i < n; i++)
        o[i] = i;
    if (by_time) /* insertion sort on nearly sorted data: stable */
        for (size_t i = 1; i < n; i++) {
            size_t v = o[i], j = i;
            while (j > 0 && w_time(o[j - 1]) > w_time(v)) {
                o[j] = o[j - 1];
                j--;
            }
            o[j] = v;
        }
    return o;
}

/* sensim reads back what was written: order, stamps, topics, bytes, counts. */
static void check_readback(const char *path, size_t n, int by_time)
{
    sensim_bag *b = open_ok(path);
    ck_assert_uint_eq(sensim_bag_ntopics(b), NTOP);
    size_t map[NTOP];
    for (int t = 0; t < NTOP; t++) {
        ck_assert_int_eq(sensim_bag_find_topic(b, W_TOPICS[t], &map[t]), SENSIM_OK);
        const sensim_bag_topic *tp = sensim_bag_topic_at(b, map[t]);
        /* ROS 1 style names are written as ROS 2 names */
        const char *want = t == 2 ? "sensor_msgs/msg/MagneticField" : W_TYPES[t];
        ck_assert_str_eq(tp->type, want);
        ck_assert_int_eq(tp->encoding, SENSIM_ENC_CDR);
        uint64_t c = 0;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t i = 0; i < n; i++)
            if (w_topic(i) == (size_t)t) {
                c++;
                lo = w_time(i) < lo ? w_time(i) : lo;
                hi = w_time(i) > hi ? w_time(i) : hi;
            }
        ck_assert_uint_eq(tp->count, c);
        ck_assert_int_eq(tp->t_first_ns, lo);
        ck_assert_int_eq(tp->t_last_ns, hi);
    }
    size_t *o = expected_order(n, by_time);
    uint8_t buf[512];
    sensim_bag_msg m;
    size_t k = 0;
    int r;
    while ((r = sensim_bag_next(b, &m)) == 1) {
        ck_assert_uint_lt(k, n);
        size_t i = o[k];
        ck_assert_uint_eq(m.index, k);
        ck_assert_uint_eq(m.topic, map[w_topic(i)]);
        ck_assert_int_eq(m.recv_ns, w_time(i));
        w_fill(i, buf);
        ck_assert_uint_eq(m.size, w_size(i));
        ck_assert_msg(memcmp(m.data, buf, m.size) == 0, "message %zu: payload differs", k);
        k++;
    }
    ck_assert_msg(r == 0, "%s", sensim_last_error());
    ck_assert_uint_eq(k, n);
    /* a selected topic after a full pass: the same messages with their indexes */
    ck_assert_int_eq(sensim_bag_select(b, &map[1], 1), SENSIM_OK);
    size_t j = 0;
    for (k = 0; k < n; k++) {
        if (w_topic(o[k]) != 1)
            continue;
        ck_assert_int_eq(sensim_bag_next(b, &m), 1);
        ck_assert_uint_eq(m.index, k);
        ck_assert_int_eq(m.recv_ns, w_time(o[k]));
        j++;
    }
    ck_assert_int_eq(sensim_bag_next(b, &m), 0);
    ck_assert_uint_eq(j, n / 3);
    free(o);
    sensim_bag_close(b);
}

/* Compares "topic\tstamp\thex" lines of an independent reader with the
 * expected order. */
static void check_lines(char *out, size_t n, const char **tail)
{
    size_t *o = expected_order(n, 1);
    uint8_t buf[512];
    char hex[1100];
    char *save, *line = strtok_r(out, "\n", &save);
    for (size_t k = 0; k < n; k++) {
        ck_assert_msg(line != NULL, "independent reader gave %zu lines, expected %zu", k, n);
        size_t i = o[k];
        w_fill(i, buf);
        for (size_t q = 0; q < w_size(i); q++)
            sprintf(hex + 2 * q, "%02x", buf[q]);
        char want[1300];
        snprintf(want, sizeof want, "%s\t%" PRId64 "\t%s", W_TOPICS[w_topic(i)], w_time(i), hex);
        ck_assert_msg(strcmp(line, want) == 0, "line %zu: '%.80s', expected '%.80s'", k, line, want);
        line = strtok_r(NULL, "\n", &save);
    }
    *tail = line;
    free(o);
}

START_TEST(mcap_writer_round_trip)
{
    char *dir = tu_mkdtemp();
    const sensim_bag_compression comps[] = {SENSIM_BAG_COMPRESS_NONE, SENSIM_BAG_COMPRESS_ZSTD,
                                            SENSIM_BAG_COMPRESS_LZ4};
    const char *names[] = {"none", "zstd", "lz4"};
    for (int c = 0; c < 3; c++) {
        char *p = tu_path(dir, "out.mcap");
        write_recording(p, SENSIM_BAG_MCAP, comps[c], NMSG);
        ck_assert_int_eq(tu_count_entries(dir), 1); /* no temporary left */
        check_readback(p, NMSG, 1);
        char *walker = tu_src("tests/data/mcap_walk.py");
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", walker, p);
        char *out = run_cmd(cmd);
        const char *tail;
        check_lines(out, NMSG, &tail);
        ck_assert_ptr_nonnull(tail);
        char want[256];
        snprintf(want, sizeof want,
                 "statistics=yes schemas=3 channels=3 chunks=%%d compression=%s profile=ros2 encoding=cdr "
                 "schema_encoding=ros2msg",
                 names[c]);
        int chunks = 0;
        ck_assert_msg(sscanf(tail, "statistics=yes schemas=3 channels=3 chunks=%d", &chunks) == 1, "%s", tail);
        ck_assert_int_ge(chunks, 2); /* 9000 messages of ~210 bytes: about 2 MiB in 1 MiB chunks */
        char full[300];
        snprintf(full, sizeof full, want, chunks);
        ck_assert_str_eq(tail, full);
        free(out);
        free(walker);
        free(p);
    }
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(db3_writer_round_trip)
{
    char *dir = tu_mkdtemp();
    char *p = tu_path(dir, "out.db3");
    write_recording(p, SENSIM_BAG_DB3, SENSIM_BAG_COMPRESS_NONE, NMSG);
    ck_assert_int_eq(tu_count_entries(dir), 1);
    check_readback(p, NMSG, 1);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import sqlite3; c=sqlite3.connect('%s');"
             "[print('%%s\\t%%d\\t%%s' %% (n, t, d.hex())) for n, t, d in c.execute("
             "'SELECT t.name, m.timestamp, m.data FROM messages m JOIN topics t ON m.topic_id=t.id "
             "ORDER BY m.timestamp, m.id')];"
             "print(sorted(c.execute('SELECT name, type, serialization_format FROM topics')))\"",
             p);
    char *out = run_cmd(cmd);
    const char *tail;
    check_lines(out, NMSG, &tail);
    ck_assert_str_eq(tail, "[('/gps', 'sensor_msgs/msg/NavSatFix', 'cdr'), ('/imu0', 'sensor_msgs/msg/Imu', 'cdr'), "
                           "('/mag', 'sensor_msgs/msg/MagneticField', 'cdr')]");
    free(out);
    tu_rmtree(dir);
    free(dir);
    free(p);
}
END_TEST

/* A writer closed without commit leaves nothing; nor does a refused one. */
START_TEST(writer_abort_leaves_nothing)
{
    char *dir = tu_mkdtemp();
    const sensim_bag_format fmts[] = {SENSIM_BAG_MCAP, SENSIM_BAG_DB3};
    for (int f = 0; f < 2; f++) {
        char *p = tu_path(dir, f ? "x.db3" : "x.mcap");
        sensim_bag_writer *w = sensim_bag_writer_create(p, fmts[f], SENSIM_BAG_COMPRESS_NONE);
        ck_assert_ptr_nonnull(w);
        size_t h;
        ck_assert_int_eq(sensim_bag_writer_add_topic(w, "/a", "std_msgs/msg/Int32", "int32 data\n", &h), SENSIM_OK);
        uint8_t d[8] = {0, 1, 0, 0, 5, 0, 0, 0};
        ck_assert_int_eq(sensim_bag_writer_write(w, h, 1000, d, 8), SENSIM_OK);
        ck_assert_int_eq(sensim_bag_writer_write(w, h + 7, 1000, d, 8), SENSIM_EINVAL);
        ck_assert_ptr_nonnull(strstr(sensim_last_error(), p));
        sensim_bag_writer_close(w);
        ck_assert_int_eq(tu_count_entries(dir), 0);
        free(p);
    }
    /* MCAP stamps are unsigned */
    char *p = tu_path(dir, "neg.mcap");
    sensim_bag_writer *w = sensim_bag_writer_create(p, SENSIM_BAG_MCAP, SENSIM_BAG_COMPRESS_NONE);
    size_t h;
    ck_assert_int_eq(sensim_bag_writer_add_topic(w, "/a", "std_msgs/msg/Int32", "int32 data\n", &h), SENSIM_OK);
    uint8_t d[8] = {0, 1, 0, 0, 5, 0, 0, 0};
    ck_assert_int_eq(sensim_bag_writer_write(w, h, -5, d, 8), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "'/a'"));
    sensim_bag_writer_close(w);
    ck_assert_int_eq(tu_count_entries(dir), 0);
    free(p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- MCAP without a summary: read sequentially, in file order ---- */

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Byte offset just after the Data End record of an MCAP file. */
static size_t data_end_after(const uint8_t *b, size_t n)
{
    size_t p = 8;
    while (p + 9 <= n) {
        uint64_t len = le64(b + p + 1);
        size_t next = p + 9 + (size_t)len;
        if (b[p] == 0x0F)
            return next;
        p = next;
    }
    ck_abort_msg("no Data End record");
    return 0;
}

START_TEST(mcap_without_summary)
{
    char *dir = tu_mkdtemp();
    char *p = tu_path(dir, "full.mcap"), *q = tu_path(dir, "nosummary.mcap");
    write_recording(p, SENSIM_BAG_MCAP, SENSIM_BAG_COMPRESS_ZSTD, NMSG);
    size_t n;
    uint8_t *b = read_bin(p, &n);
    size_t e = data_end_after(b, n);
    /* footer with summary_start = summary_offset_start = 0, crc 0; magic */
    static const uint8_t tail[] = {0x02, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                   0,    0,  0, 0, 0, 0, 0, 0, 0, 0, 0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};
    uint8_t *c = malloc(e + sizeof tail);
    memcpy(c, b, e);
    memcpy(c + e, tail, sizeof tail);
    write_bytes(q, c, e + sizeof tail);
    check_readback(q, NMSG, 0); /* file order */
    /* and a file that ends right after Data End (no footer at all) */
    write_bytes(q, c, e);
    check_readback(q, NMSG, 0);
    /* chunk indexes whose messages fall short of the statistics' count
     * (messages outside chunks are in no index): read sequentially too.
     * The summary CRC is set to 0 (= not available) for the patch. */
    size_t fpos = n - 8 - 29, sstart = (size_t)le64(b + fpos + 9), at = sstart;
    while (b[at] != 0x0B)
        at += 9 + (size_t)le64(b + at + 1);
    b[at + 9] ^= 1; /* message_count, low byte */
    memset(b + fpos + 25, 0, 4);
    write_bytes(q, b, n);
    check_readback(q, NMSG, 0);
    free(b);
    free(c);
    tu_rmtree(dir);
    free(dir);
    free(p);
    free(q);
}
END_TEST

/* Summary groups may come in any order: channels before the schemas they
 * name are still read (groups swapped in sensim's output, CRC set to 0). */
START_TEST(mcap_summary_any_order)
{
    char *dir = tu_mkdtemp();
    char *p = tu_path(dir, "a.mcap");
    write_recording(p, SENSIM_BAG_MCAP, SENSIM_BAG_COMPRESS_LZ4, NMSG);
    size_t n;
    uint8_t *b = read_bin(p, &n);
    size_t fpos = n - 8 - 29, sstart = (size_t)le64(b + fpos + 9);
    /* sensim writes the schema group first, the channel group right after */
    size_t at = sstart, chan = 0;
    while (b[at] == 0x03)
        at += 9 + (size_t)le64(b + at + 1);
    chan = at;
    while (b[at] == 0x04)
        at += 9 + (size_t)le64(b + at + 1);
    ck_assert_uint_gt(chan, sstart);
    ck_assert_uint_gt(at, chan);
    uint8_t *sw = malloc(at - sstart);
    memcpy(sw, b + chan, at - chan);
    memcpy(sw + (at - chan), b + sstart, chan - sstart);
    memcpy(b + sstart, sw, at - sstart);
    memset(b + fpos + 25, 0, 4);
    write_bytes(p, b, n);
    check_readback(p, NMSG, 1);
    free(sw);
    free(b);
    free(p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- bad inputs ---- */

static char *small_mcap(const char *dir, const char *name, sensim_bag_compression comp, size_t n)
{
    char *p = tu_path(dir, name);
    write_recording(p, SENSIM_BAG_MCAP, comp, n);
    return p;
}

START_TEST(bad_truncated_mcap)
{
    char *dir = tu_mkdtemp();
    char *p = small_mcap(dir, "a.mcap", SENSIM_BAG_COMPRESS_NONE, NMSG);
    char *q = tu_path(dir, "cut.mcap");
    size_t n;
    uint8_t *b = read_bin(p, &n);
    write_bytes(q, b, n * 6 / 10);
    open_fails(q, q, "truncated", "byte", NULL);
    /* every prefix of a small file is refused cleanly (no crash; ASan) */
    char *s = small_mcap(dir, "s.mcap", SENSIM_BAG_COMPRESS_LZ4, 7);
    size_t sn;
    uint8_t *sb = read_bin(s, &sn);
    /* ... or, when it ends at or after the Data End record (all data there),
     * read in full */
    size_t de = data_end_after(sb, sn);
    for (size_t k = 0; k < sn; k++) {
        write_bytes(q, sb, k);
        sensim_bag *bag = sensim_bag_open(q);
        if (k < de) {
            ck_assert_msg(bag == NULL, "prefix of %zu bytes opened", k);
            ck_assert_ptr_nonnull(strstr(sensim_last_error(), q));
            continue;
        }
        ck_assert_msg(bag != NULL, "prefix of %zu bytes: %s", k, sensim_last_error());
        sensim_bag_msg m;
        int r, nm = 0;
        while ((r = sensim_bag_next(bag, &m)) == 1)
            nm++;
        ck_assert_int_eq(r, 0);
        ck_assert_int_eq(nm, 7);
        sensim_bag_close(bag);
    }
    free(sb);
    free(s);
    free(b);
    free(p);
    free(q);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(bad_magic)
{
    char *dir = tu_mkdtemp();
    char *p = small_mcap(dir, "a.mcap", SENSIM_BAG_COMPRESS_NONE, 30);
    size_t n;
    uint8_t *b = read_bin(p, &n);
    b[1] = 'X';
    write_bytes(p, b, n);
    open_fails(p, p, "magic", NULL);
    free(b);
    free(p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Finds the first occurrence of needle in b. */
static size_t find_bytes(const uint8_t *b, size_t n, const void *needle, size_t k)
{
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(b + i, needle, k) == 0)
            return i;
    ck_abort_msg("pattern not found");
    return 0;
}

START_TEST(bad_unknown_compression)
{
    char *dir = tu_mkdtemp();
    char *p = small_mcap(dir, "a.mcap", SENSIM_BAG_COMPRESS_ZSTD, 30);
    size_t n;
    uint8_t *b = read_bin(p, &n);
    /* the chunk record's compression string (the first "zstd" in the file;
     * the chunk index in the summary keeps its own copy) */
    size_t at = find_bytes(b, n, "\x04\0\0\0zstd", 8);
    memcpy(b + at + 4, "zstx", 4);
    write_bytes(p, b, n);
    char where[64];
    snprintf(where, sizeof where, "chunk at byte %zu", at - 28 - 9);
    read_fails(p, p, where, "unknown compression 'zstx'", NULL);
    free(b);
    free(p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(bad_corrupt_chunk)
{
    char *dir = tu_mkdtemp();
    /* uncompressed: a payload byte changed, the CRC disagrees */
    char *p = small_mcap(dir, "a.mcap", SENSIM_BAG_COMPRESS_NONE, 30);
    size_t n;
    uint8_t *b = read_bin(p, &n);
    size_t chunk = 8; /* the first chunk record */
    while (b[chunk] != 0x06)
        chunk += 9 + (size_t)le64(b + chunk + 1);
    b[chunk + 200] ^= 0x40;
    write_bytes(p, b, n);
    char where[64];
    snprintf(where, sizeof where, "chunk at byte %zu", chunk);
    read_fails(p, p, where, "CRC mismatch", NULL);
    free(b);
    free(p);
    /* zstd: the compressed bytes damaged */
    p = small_mcap(dir, "z.mcap", SENSIM_BAG_COMPRESS_ZSTD, 300);
    b = read_bin(p, &n);
    chunk = 8;
    while (b[chunk] != 0x06)
        chunk += 9 + (size_t)le64(b + chunk + 1);
    size_t rec = chunk + 9 + 8 + 8 + 8 + 4 + 4 + 4 + 8; /* start of the compressed records */
    for (size_t k = 0; k < 16; k++)
        b[rec + 40 + k] ^= 0xA5;
    write_bytes(p, b, n);
    snprintf(where, sizeof where, "chunk at byte %zu", chunk);
    read_fails(p, p, where, NULL);
    ck_assert(strstr(sensim_last_error(), "zstd") || strstr(sensim_last_error(), "CRC"));
    free(b);
    free(p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(bad_summary_crc)
{
    char *dir = tu_mkdtemp();
    char *p = small_mcap(dir, "a.mcap", SENSIM_BAG_COMPRESS_NONE, 30);
    size_t n;
    uint8_t *b = read_bin(p, &n);
    size_t footer = n - 8 - 29;
    size_t sstart = (size_t)le64(b + footer + 9);
    b[sstart + 12] ^= 1; /* inside the first summary record */
    write_bytes(p, b, n);
    open_fails(p, p, "summary", "CRC mismatch", NULL);
    free(b);
    free(p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

static void write_metadata(const char *dir, const char *storage, const char *const *files, size_t nfiles)
{
    char text[4096];
    size_t o = (size_t)snprintf(text, sizeof text,
                                "rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: %s\n"
                                "  compression_format: ''\n  compression_mode: ''\n  relative_file_paths:\n",
                                storage);
    for (size_t i = 0; i < nfiles; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "  - %s\n", files[i]);
    char *m = tu_path(dir, "metadata.yaml");
    ck_assert_int_eq(tu_write_file(m, text), 0);
    free(m);
}

START_TEST(bad_ros2dir_missing_split)
{
    char *dir = tu_mkdtemp();
    char *src = data_path("test_bag_sqlite3/test_bag_sqlite3.db3");
    char *s0 = tu_path(dir, "run_0.db3");
    copy_file(src, s0);
    const char *files[] = {"run_0.db3", "run_1.db3"};
    write_metadata(dir, "sqlite3", files, 2);
    open_fails(dir, "metadata.yaml", "run_1.db3", "does not exist", "relative_file_paths[1]", NULL);
    free(src);
    free(s0);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(bad_db3_not_rosbag2)
{
    char *dir = tu_mkdtemp();
    char *p = tu_path(dir, "other.db3");
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import sqlite3; c=sqlite3.connect('%s');"
             "c.execute('CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT)'); c.commit()\"",
             p);
    free(run_cmd(cmd));
    open_fails(p, p, "not a rosbag2", "'messages'", NULL);
    /* SQLite's magic, then garbage */
    uint8_t junk[4096];
    memset(junk, 0x5A, sizeof junk);
    memcpy(junk, "SQLite format 3", 16);
    write_bytes(p, junk, sizeof junk);
    open_fails(p, p, NULL);
    free(p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Flipping bytes anywhere in a small file never crashes the reader: it
 * either reads or reports an error naming the file (ASan checks the rest). */
START_TEST(mcap_damage_never_crashes)
{
    char *dir = tu_mkdtemp();
    const sensim_bag_compression comps[] = {SENSIM_BAG_COMPRESS_NONE, SENSIM_BAG_COMPRESS_ZSTD,
                                            SENSIM_BAG_COMPRESS_LZ4};
    char *q = tu_path(dir, "d.mcap");
    int errors = 0;
    for (int c = 0; c < 3; c++) {
        char *p = small_mcap(dir, "s.mcap", comps[c], 9);
        size_t n;
        uint8_t *b = read_bin(p, &n);
        for (size_t k = 0; k < n; k++) {
            b[k] ^= 0xFF;
            write_bytes(q, b, n);
            b[k] ^= 0xFF;
            sensim_bag *bag = sensim_bag_open(q);
            if (!bag) {
                ck_assert_ptr_nonnull(strstr(sensim_last_error(), q));
                errors++;
                continue;
            }
            sensim_bag_msg m;
            int r;
            while ((r = sensim_bag_next(bag, &m)) == 1)
                ;
            if (r < 0) {
                ck_assert_ptr_nonnull(strstr(sensim_last_error(), q));
                errors++;
            }
            sensim_bag_close(bag);
        }
        free(b);
        free(p);
    }
    ck_assert_int_gt(errors, 100);
    free(q);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Two splits written by sensim, listed in metadata.yaml: one stream. */
START_TEST(ros2dir_two_splits)
{
    const char *storages[] = {"mcap", "sqlite3"};
    const sensim_bag_format fmts[] = {SENSIM_BAG_MCAP, SENSIM_BAG_DB3};
    for (int f = 0; f < 2; f++) {
        char *dir = tu_mkdtemp();
        const char *files[2] = {f ? "r_0.db3" : "r_0.mcap", f ? "r_1.db3" : "r_1.mcap"};
        /* split 0: messages 0..3999, split 1: 4000..8999, in time order per split */
        size_t cut = 4000;
        uint8_t buf[512];
        for (int s = 0; s < 2; s++) {
            char *p = tu_path(dir, files[s]);
            sensim_bag_writer *w = sensim_bag_writer_create(p, fmts[f], SENSIM_BAG_COMPRESS_NONE);
            ck_assert_ptr_nonnull(w);
            size_t h[NTOP];
            for (int t = 0; t < NTOP; t++) /* split 1 declares the topics in another order */
                ck_assert_int_eq(sensim_bag_writer_add_topic(w, W_TOPICS[s ? NTOP - 1 - t : t],
                                                             W_TYPES[s ? NTOP - 1 - t : t], "float64 x\n",
                                                             &h[s ? NTOP - 1 - t : t]),
                                 SENSIM_OK);
            for (size_t i = s ? cut : 0; i < (s ? NMSG : cut); i++) {
                w_fill(i, buf);
                /* stamps increasing, so that the splits follow each other */
                ck_assert_int_eq(sensim_bag_writer_write(w, h[w_topic(i)], T0 + (int64_t)i, buf, w_size(i)), SENSIM_OK);
            }
            ck_assert_int_eq(sensim_bag_writer_commit(w), SENSIM_OK);
            sensim_bag_writer_close(w);
            free(p);
        }
        write_metadata(dir, storages[f], files, 2);
        sensim_bag *b = open_ok(dir);
        ck_assert_int_eq(sensim_bag_get_format(b), fmts[f]);
        ck_assert_uint_eq(sensim_bag_ntopics(b), NTOP);
        size_t gps;
        ck_assert_int_eq(sensim_bag_find_topic(b, "/gps", &gps), SENSIM_OK);
        ck_assert_uint_eq(sensim_bag_topic_at(b, gps)->count, NMSG / 3);
        ck_assert_int_eq(sensim_bag_topic_at(b, gps)->t_first_ns, T0 + 1);
        ck_assert_int_eq(sensim_bag_topic_at(b, gps)->t_last_ns, T0 + NMSG - 2);
        sensim_bag_msg m;
        size_t k = 0;
        while (sensim_bag_next(b, &m) == 1) {
            ck_assert_uint_eq(m.index, k);
            ck_assert_int_eq(m.recv_ns, T0 + (int64_t)k);
            ck_assert_str_eq(sensim_bag_topic_at(b, m.topic)->name, W_TOPICS[w_topic(k)]);
            w_fill(k, buf);
            ck_assert_int_eq(memcmp(m.data, buf, m.size), 0);
            k++;
        }
        ck_assert_uint_eq(k, NMSG);
        ck_assert_int_eq(sensim_bag_select(b, &gps, 1), SENSIM_OK);
        k = 0;
        while (sensim_bag_next(b, &m) == 1) {
            ck_assert_uint_eq(m.index, 3 * k + 1);
            k++;
        }
        ck_assert_uint_eq(k, NMSG / 3);
        sensim_bag_close(b);
        tu_rmtree(dir);
        free(dir);
    }
}
END_TEST

/* MCAP's CRC-32 (io/crc32.c folds with PCLMULQDQ where it can) against
 * zlib's crc32_z: the check value of "123456789", every length from 0 to
 * 300 at 16 offsets (the folded bulk, the 16-byte steps and the byte tail
 * in every combination), a 1 MiB buffer, and a running CRC over pieces of
 * uneven sizes. */
START_TEST(crc32_matches_zlib)
{
    ck_assert_uint_eq(sensim_crc32_(0, "123456789", 9), 0xCBF43926u);
    size_t big = 1 << 20;
    uint8_t *b = malloc(big + 16);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < big + 16; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b[i] = (uint8_t)(x >> 24);
    }
    for (size_t off = 0; off < 16; off++)
        for (size_t n = 0; n <= 300; n++) {
            uint32_t want = (uint32_t)crc32_z(0, b + off, n);
            ck_assert_msg(sensim_crc32_(0, b + off, n) == want, "offset %zu, %zu bytes", off, n);
            ck_assert_uint_eq(sensim_crc32_(0xdeadbeef, b + off, n), (uint32_t)crc32_z(0xdeadbeef, b + off, n));
        }
    ck_assert_uint_eq(sensim_crc32_(0, b + 3, big), (uint32_t)crc32_z(0, b + 3, big));
    uint32_t run = 0;
    for (size_t at = 0, k = 1; at < big; k = k * 7 % 1000 + 1) {
        size_t n = at + k < big ? k : big - at;
        run = sensim_crc32_(run, b + at, n);
        at += n;
    }
    ck_assert_uint_eq(run, (uint32_t)crc32_z(0, b, big));
    free(b);
}
END_TEST

Suite *suite_bag_ros2(void)
{
    Suite *s = suite_create("bag_ros2");
    TCase *tc = tcase_create("shared");
    tcase_add_test(tc, shared_db3_topics);
    tcase_add_test(tc, shared_mcap_topics);
    tcase_add_test(tc, shared_imu_payloads);
    tcase_add_test(tc, shared_db3_mcap_identical);
    tcase_add_test(tc, select_keeps_indexes);
    suite_add_tcase(s, tc);
    tc = tcase_create("writer");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, mcap_writer_round_trip);
    tcase_add_test(tc, db3_writer_round_trip);
    tcase_add_test(tc, writer_abort_leaves_nothing);
    tcase_add_test(tc, mcap_without_summary);
    tcase_add_test(tc, mcap_summary_any_order);
    tcase_add_test(tc, ros2dir_two_splits);
    tcase_add_test(tc, crc32_matches_zlib);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, bad_truncated_mcap);
    tcase_add_test(tc, bad_magic);
    tcase_add_test(tc, bad_unknown_compression);
    tcase_add_test(tc, bad_corrupt_chunk);
    tcase_add_test(tc, bad_summary_crc);
    tcase_add_test(tc, bad_ros2dir_missing_split);
    tcase_add_test(tc, bad_db3_not_rosbag2);
    tcase_add_test(tc, mcap_damage_never_crashes);
    suite_add_tcase(s, tc);
    return s;
}
