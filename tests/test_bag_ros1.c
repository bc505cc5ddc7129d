/* ROS 1 bags (io/ros1bag.c) against Debian's python3-rosbag, which is
 * independent of sensim: bags rosbag writes (uncompressed, bz2, lz4 chunks;
 * many small chunks; stamps out of order within and across chunks; two
 * connections on one topic) are read by sensim and compared message by
 * message with what rosbag was given (tests/data/ros1bag_ref.py dumps it);
 * bags sensim writes are read by rosbag, which deserializes every message
 * with the definitions sensim stored. Bad inputs are refused with a message
 * naming the file and the place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../io/bag_internal.h"
#include "sensim/bag.h"
#include "testutil.h"

/* ---- the reference dump written by ros1bag_ref.py ---- */

typedef struct ref_topic {
    char name[64], type[64], md5[40];
    char *def;
    unsigned long long count;
    long long t_first, t_last;
} ref_topic;

typedef struct ref_msg {
    char topic[64];
    long long t;
    unsigned char *data;
    size_t size;
} ref_msg;

typedef struct ref {
    ref_topic topics[8];
    size_t ntopics;
    ref_msg *msgs;
    size_t nmsgs;
} ref;

static unsigned char *unhex(const char *h, size_t *n)
{
    size_t len = strcspn(h, " \n");
    unsigned char *d = malloc(len / 2 + 1);
    ck_assert_ptr_nonnull(d);
    for (size_t i = 0; i < len / 2; i++) {
        unsigned v;
        ck_assert_int_eq(sscanf(h + 2 * i, "%2x", &v), 1);
        d[i] = (unsigned char)v;
    }
    d[len / 2] = 0;
    *n = len / 2;
    return d;
}

static void ref_load(ref *r, const char *path)
{
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char *line = NULL;
    size_t cap = 0, mcap = 0;
    while (getline(&line, &cap, f) > 0) {
        if (line[0] == 'T') {
            ck_assert_uint_lt(r->ntopics, 8);
            ref_topic *t = &r->topics[r->ntopics++];
            int off = 0;
            ck_assert_int_eq(sscanf(line, "T %63s %63s %39s %llu %lld %lld %n", t->name, t->type, t->md5, &t->count,
                                    &t->t_first, &t->t_last, &off),
                             6);
            size_t n;
            t->def = (char *)unhex(line + off, &n);
        } else {
            if (r->nmsgs == mcap) {
                mcap = mcap ? 2 * mcap : 1024;
                r->msgs = realloc(r->msgs, mcap * sizeof *r->msgs);
                ck_assert_ptr_nonnull(r->msgs);
            }
            ref_msg *m = &r->msgs[r->nmsgs++];
            int off = 0;
            ck_assert_int_eq(sscanf(line, "M %63s %lld %n", m->topic, &m->t, &off), 2);
            m->data = unhex(line + off, &m->size);
        }
    }
    free(line);
    fclose(f);
}

static void ref_free(ref *r)
{
    for (size_t i = 0; i < r->ntopics; i++)
        free(r->topics[i].def);
    for (size_t i = 0; i < r->nmsgs; i++)
        free(r->msgs[i].data);
    free(r->msgs);
}

/* Runs ros1bag_ref.py with the arguments; returns its exit status. */
static int ref_py(const char *args)
{
    char *script = tu_src("tests/data/ros1bag_ref.py");
    size_t n = strlen(script) + strlen(args) + 64;
    char *cmd = malloc(n);
    snprintf(cmd, n, "/usr/bin/python3 %s %s", script, args);
    int st = system(cmd);
    free(cmd);
    free(script);
    return st;
}

/* rosbag writes dir/name.bag and dir/name.txt. */
static void py_write(const char *dir, const char *name, const char *compression, int threshold, const char *order)
{
    char args[4096];
    snprintf(args, sizeof args, "write %s/%s.bag %s %d %s %s/%s.txt", dir, name, compression, threshold, order, dir,
             name);
    ck_assert_int_eq(ref_py(args), 0);
}

/* Reads the whole bag and checks topics and every message against ref:
 * order, stamps, topics, payload bytes, running index. cache: the ROS 1
 * reader's limit on decompressed data (0: its default). */
static void check_bag_cached(const char *bagpath, const ref *r, size_t cache)
{
    sensim_bag *bag = sensim_bag_open(bagpath);
    ck_assert_msg(bag != NULL, "%s", sensim_last_error());
    if (cache)
        sensim_bag_ros1_cache_limit(bag, cache);
    ck_assert_int_eq(sensim_bag_get_format(bag), SENSIM_BAG_ROS1);
    ck_assert_uint_eq(sensim_bag_ntopics(bag), r->ntopics);
    for (size_t i = 0; i < r->ntopics; i++) {
        size_t k;
        ck_assert_int_eq(sensim_bag_find_topic(bag, r->topics[i].name, &k), SENSIM_OK);
        const sensim_bag_topic *t = sensim_bag_topic_at(bag, k);
        ck_assert_str_eq(t->type, r->topics[i].type);
        ck_assert_str_eq(t->md5sum, r->topics[i].md5);
        ck_assert_str_eq(t->definition, r->topics[i].def);
        ck_assert_int_eq(t->encoding, SENSIM_ENC_ROS1);
        ck_assert_uint_eq(t->count, r->topics[i].count);
        ck_assert_int_eq(t->t_first_ns, r->topics[i].t_first);
        ck_assert_int_eq(t->t_last_ns, r->topics[i].t_last);
    }
    sensim_bag_msg m;
    size_t n = 0;
    int k;
    while ((k = sensim_bag_next(bag, &m)) == 1) {
        ck_assert_uint_lt(n, r->nmsgs);
        const ref_msg *e = &r->msgs[n];
        ck_assert_str_eq(sensim_bag_topic_at(bag, m.topic)->name, e->topic);
        ck_assert_int_eq(m.recv_ns, e->t);
        ck_assert_uint_eq(m.index, n);
        ck_assert_uint_eq(m.size, e->size);
        ck_assert_msg(memcmp(m.data, e->data, e->size) == 0, "message %zu: payload differs", n);
        n++;
    }
    ck_assert_msg(k == 0, "%s", sensim_last_error());
    ck_assert_uint_eq(n, r->nmsgs);
    ck_assert_int_eq(sensim_bag_next(bag, &m), 0);
    sensim_bag_close(bag);
}

static void check_bag_against(const char *bagpath, const ref *r) { check_bag_cached(bagpath, r, 0); }

static const char *const comp[] = {"none", "bz2", "lz4"};

/* rosbag's bags, in time order, 3000-byte chunks (about 190 of them). */
START_TEST(reads_rosbag_written)
{
    char *dir = tu_mkdtemp();
    py_write(dir, "b", comp[_i], 3000, "ordered");
    char *bagp = tu_path(dir, "b.bag"), *txt = tu_path(dir, "b.txt");
    ref r;
    ref_load(&r, txt);
    ck_assert_uint_eq(r.nmsgs, 1500 + 150 + 214);
    check_bag_against(bagp, &r);
    ref_free(&r);
    tu_rmtree(dir);
    free(dir), free(bagp), free(txt);
}
END_TEST

/* Stamps written out of order: blocks of 60 messages shuffled, swaps within
 * blocks, so chunks overlap in time and are not in time order; sensim must
 * still deliver receive-time order (ties in file order). */
START_TEST(reads_out_of_order_chunks)
{
    char *dir = tu_mkdtemp();
    py_write(dir, "s", comp[_i], 3000, "shuffled");
    char *bagp = tu_path(dir, "s.bag"), *txt = tu_path(dir, "s.txt");
    ref r;
    ref_load(&r, txt);
    check_bag_against(bagp, &r);
    /* With room for one chunk only: the data of chunks that overlap is
     * dropped and read again, same messages. */
    check_bag_cached(bagp, &r, 1);

    /* Selection: only /status (two connections merged), with the index
     * still counting every message of the file. */
    sensim_bag *bag = sensim_bag_open(bagp);
    ck_assert_ptr_nonnull(bag);
    size_t st;
    ck_assert_int_eq(sensim_bag_find_topic(bag, "/status", &st), SENSIM_OK);
    ck_assert_int_eq(sensim_bag_select(bag, &st, 1), SENSIM_OK);
    sensim_bag_msg m;
    size_t n = 0;
    while (sensim_bag_next(bag, &m) == 1) {
        ck_assert_uint_eq(m.topic, st);
        ck_assert_uint_lt(m.index, r.nmsgs);
        ck_assert_str_eq(r.msgs[m.index].topic, "/status");
        ck_assert_int_eq(r.msgs[m.index].t, m.recv_ns);
        ck_assert_uint_eq(r.msgs[m.index].size, m.size);
        n++;
    }
    ck_assert_uint_eq(n, 150);
    /* Back to all topics: rewinds. */
    ck_assert_int_eq(sensim_bag_select(bag, NULL, 0), SENSIM_OK);
    ck_assert_int_eq(sensim_bag_next(bag, &m), 1);
    ck_assert_uint_eq(m.index, 0);
    ck_assert_int_eq(m.recv_ns, r.msgs[0].t);
    sensim_bag_close(bag);
    ref_free(&r);
    tu_rmtree(dir);
    free(dir), free(bagp), free(txt);
}
END_TEST

/* sensim writes rosbag's messages again (topics, definitions, md5sums,
 * stamps, payloads); rosbag reads them back with those definitions and
 * finds the same messages, and so does sensim. */
START_TEST(rosbag_reads_sensim_written)
{
    static const sensim_bag_compression wc[] = {SENSIM_BAG_COMPRESS_NONE, SENSIM_BAG_COMPRESS_BZ2,
                                                SENSIM_BAG_COMPRESS_LZ4};
    char *dir = tu_mkdtemp();
    py_write(dir, "ref", "none", 100000, "ordered");
    char *txt = tu_path(dir, "ref.txt"), *out = tu_path(dir, "out.bag");
    ref r;
    ref_load(&r, txt);
    sensim_bag_writer *w = sensim_bag_writer_create(out, SENSIM_BAG_ROS1, wc[_i]);
    ck_assert_msg(w != NULL, "%s", sensim_last_error());
    ck_assert_int_eq(sensim_bag_writer_ros1_chunk_size(w, 4000), SENSIM_OK);
    /* sensor_msgs/Imu through the public call without a definition (sensim
     * fills in its own text and md5sum, which must be rosbag's); the
     * std_msgs types with rosbag's. */
    size_t h[8];
    for (size_t i = 0; i < r.ntopics; i++)
        if (strcmp(r.topics[i].type, "sensor_msgs/Imu") == 0)
            ck_assert_int_eq(sensim_bag_writer_add_topic(w, r.topics[i].name, r.topics[i].type, "", &h[i]),
                             SENSIM_OK);
        else
            ck_assert_int_eq(sensim_bag_writer_add_topic_md5(w, r.topics[i].name, r.topics[i].type,
                                                             r.topics[i].md5, r.topics[i].def, &h[i]),
                             SENSIM_OK);
    for (size_t j = 0; j < r.nmsgs; j++) {
        size_t t = 0;
        while (strcmp(r.topics[t].name, r.msgs[j].topic) != 0)
            t++;
        ck_assert_int_eq(sensim_bag_writer_write(w, h[t], r.msgs[j].t, r.msgs[j].data, r.msgs[j].size), SENSIM_OK);
    }
    ck_assert(!tu_file_exists(out)); /* nothing at the target before commit */
    ck_assert_int_eq(sensim_bag_writer_commit(w), SENSIM_OK);
    sensim_bag_writer_close(w);
    ck_assert_int_eq(tu_count_entries(dir), 3);

    char args[4096];
    snprintf(args, sizeof args, "read %s %s", out, txt);
    ck_assert_int_eq(ref_py(args), 0);
    check_bag_against(out, &r);
    ref_free(&r);
    tu_rmtree(dir);
    free(dir), free(txt), free(out);
}
END_TEST

/* Out-of-order stamps written by sensim: rosbag's index and sensim's merge
 * agree (rosbag's own reader is not used for the order: it merges per
 * connection and would need sorted connection indexes). */
START_TEST(sensim_writes_out_of_order)
{
    char *dir = tu_mkdtemp();
    py_write(dir, "ref", "none", 100000, "shuffled");
    char *txt = tu_path(dir, "ref.txt"), *out = tu_path(dir, "out.bag");
    ref r;
    ref_load(&r, txt);
    sensim_bag_writer *w = sensim_bag_writer_create(out, SENSIM_BAG_ROS1, SENSIM_BAG_COMPRESS_LZ4);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(sensim_bag_writer_ros1_chunk_size(w, 2500), SENSIM_OK);
    size_t h[8];
    for (size_t i = 0; i < r.ntopics; i++)
        ck_assert_int_eq(sensim_bag_writer_add_topic_md5(w, r.topics[i].name, r.topics[i].type, r.topics[i].md5,
                                                         r.topics[i].def, &h[i]),
                         SENSIM_OK);
    /* Written in a scrambled order (blocks of about 37 messages, last
     * block first): the reader must restore stamp order. Ties keep write
     * order, so no block boundary splits messages of equal stamp. */
    size_t *start = malloc((r.nmsgs / 37 + 2) * sizeof *start), nb = 0;
    for (size_t j = 0; j < r.nmsgs;) {
        start[nb++] = j;
        j += 37;
        while (j < r.nmsgs && r.msgs[j].t == r.msgs[j - 1].t)
            j++;
    }
    start[nb] = r.nmsgs;
    for (size_t b = nb; b-- > 0;)
        for (size_t j = start[b]; j < start[b + 1]; j++) {
            size_t t = 0;
            while (strcmp(r.topics[t].name, r.msgs[j].topic) != 0)
                t++;
            ck_assert_int_eq(sensim_bag_writer_write(w, h[t], r.msgs[j].t, r.msgs[j].data, r.msgs[j].size),
                             SENSIM_OK);
        }
    free(start);
    ck_assert_int_eq(sensim_bag_writer_commit(w), SENSIM_OK);
    sensim_bag_writer_close(w);
    check_bag_against(out, &r);
    ref_free(&r);
    tu_rmtree(dir);
    free(dir), free(txt), free(out);
}
END_TEST

/* ---- bad inputs ---- */

static void expect_open_error(const char *path, const char *needle1, const char *needle2)
{
    sensim_bag *bag = sensim_bag_open(path);
    ck_assert_msg(bag == NULL, "%s opened", path);
    const char *e = sensim_last_error();
    ck_assert_msg(strncmp(e, path, strlen(path)) == 0, "message '%s' does not start with the file name", e);
    ck_assert_msg(strstr(e, needle1) != NULL, "message '%s' lacks '%s'", e, needle1);
    if (needle2)
        ck_assert_msg(strstr(e, needle2) != NULL, "message '%s' lacks '%s'", e, needle2);
}

/* Reads to the first error: returns the message (static copy). */
static const char *read_error(const char *path)
{
    static char msg[1024];
    sensim_bag *bag = sensim_bag_open(path);
    ck_assert_msg(bag != NULL, "%s", sensim_last_error());
    sensim_bag_msg m;
    int k;
    while ((k = sensim_bag_next(bag, &m)) == 1)
        ;
    ck_assert_int_eq(k, -1);
    snprintf(msg, sizeof msg, "%s", sensim_last_error());
    ck_assert_msg(strncmp(msg, path, strlen(path)) == 0, "message '%s' does not start with the file name", msg);
    sensim_bag_close(bag);
    return msg;
}

/* A whole binary file (tu_read_file stops at a NUL). */
static unsigned char *load(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    ck_assert_int_gt(len, 0);
    rewind(f);
    unsigned char *d = malloc((size_t)len);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(fread(d, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return d;
}

static void save(const char *path, const unsigned char *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(d, 1, n, f), n);
    fclose(f);
}

static unsigned char *find(unsigned char *d, size_t n, const char *s)
{
    size_t l = strlen(s);
    for (size_t i = 0; i + l <= n; i++)
        if (memcmp(d + i, s, l) == 0)
            return d + i;
    return NULL;
}

static unsigned long long rd64le(const unsigned char *p)
{
    unsigned long long v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

START_TEST(bad_inputs)
{
    char *dir = tu_mkdtemp();
    py_write(dir, "z", "bz2", 3000, "ordered");
    py_write(dir, "l", "lz4", 3000, "ordered");
    char *zb = tu_path(dir, "z.bag"), *lb = tu_path(dir, "l.bag"), *bad = tu_path(dir, "bad.bag");
    size_t n, ln;
    unsigned char *d = load(zb, &n), *ld = load(lb, &ln);

    /* Wrong magic. */
    d[1] = 'X';
    save(bad, d, n);
    expect_open_error(bad, "not a recording", NULL);
    d[1] = 'R';
    save(bad, (const unsigned char *)"#ROSBAG V1.2\n", 13);
    expect_open_error(bad, "version '1.2'", NULL);

    /* Truncated: the index is cut off, or the file ends inside it. */
    save(bad, d, n / 2);
    expect_open_error(bad, "truncated", NULL);
    save(bad, d, n - 10);
    expect_open_error(bad, "truncated", NULL);
    save(bad, d, 20);
    expect_open_error(bad, "truncated", NULL);

    /* Not indexed (index_pos 0, as an interrupted recording). */
    unsigned char *ip = find(d, n, "index_pos=");
    ck_assert_ptr_nonnull(ip);
    unsigned char keep[8];
    memcpy(keep, ip + 10, 8);
    memset(ip + 10, 0, 8);
    save(bad, d, n);
    expect_open_error(bad, "not indexed", NULL);
    memcpy(ip + 10, keep, 8);

    /* Unknown compression in a chunk header. */
    unsigned char *cp = find(ld, ln, "compression=lz4");
    ck_assert_ptr_nonnull(cp);
    memcpy(cp + 12, "xz4", 3);
    save(bad, ld, ln);
    expect_open_error(bad, "unknown compression 'xz4'", "chunk at byte");
    memcpy(cp + 12, "lz4", 3);

    /* Corrupt chunk: bytes flipped inside the compressed data of the 5th
     * chunk (bz2 and lz4, both checksummed). */
    unsigned char *c = d;
    for (int k = 0; k < 5; k++)
        c = find(c + 1, n - (size_t)(c + 1 - d), "compression=bz2");
    ck_assert_ptr_nonnull(c);
    size_t chunk_pos = (size_t)(c - d) - 4 - 4 - 4 - 4; /* len(op field), op, len(compression field), header len */
    for (int k = 0; k < 8; k++)
        c[40 + 7 * k] ^= 0x5a;
    save(bad, d, n);
    const char *e = read_error(bad);
    ck_assert_msg(strstr(e, "bz2 data corrupt") && strstr(e, "chunk at byte") && strstr(e, "topic '/") &&
                      strstr(e, "message "),
                  "%s", e);
    char at[64];
    snprintf(at, sizeof at, "chunk at byte %zu", chunk_pos);
    ck_assert_msg(strstr(e, at) != NULL, "'%s' lacks '%s'", e, at);
    for (int k = 0; k < 8; k++)
        c[40 + 7 * k] ^= 0x5a;

    c = find(ld, ln, "compression=lz4");
    for (int k = 0; k < 16; k++)
        c[60 + 3 * k] ^= 0xff;
    save(bad, ld, ln);
    e = read_error(bad);
    ck_assert_msg(strstr(e, bad) && strstr(e, "lz4 data corrupt") && strstr(e, "chunk at byte"), "%s", e);

    /* An index entry pointing at something else than its message. */
    py_write(dir, "u", "none", 3000, "ordered");
    char *ub = tu_path(dir, "u.bag");
    size_t un;
    unsigned char *ud = load(ub, &un);
    unsigned char *op = find(ud + 4200, un - 4200, "op=\x02");
    op[3] = 0x09;
    save(bad, ud, un);
    e = read_error(bad);
    ck_assert_msg(strstr(e, bad) && strstr(e, "topic '/imu'") && strstr(e, "message 0") &&
                      strstr(e, "no message data record"),
                  "%s", e);

    /* A chunk info pointing beyond the index start. */
    free(ud);
    ud = load(ub, &un);
    unsigned char *ci = find(ud, un, "chunk_pos=");
    ck_assert_ptr_nonnull(ci);
    ck_assert_uint_lt(rd64le(ci + 10), un);
    memset(ci + 10, 0x7f, 8);
    save(bad, ud, un);
    expect_open_error(bad, "chunk position", "invalid");

    /* Two connections on one topic with different types. */
    py_write(dir, "c", "none", 3000, "conflict");
    char *cb = tu_path(dir, "c.bag");
    expect_open_error(cb, "topic '/status': connections disagree", "std_msgs/Float64");
    free(cb);

    /* Not a file at all, and a missing one. */
    expect_open_error(dir, "metadata.yaml", NULL);
    char *missing = tu_path(dir, "missing.bag");
    expect_open_error(missing, "No such file", NULL);

    free(missing);
    free(d), free(ld), free(ud);
    tu_rmtree(dir);
    free(dir), free(zb), free(lb), free(ub), free(bad);
}
END_TEST

/* Random damage (bytes overwritten, file cut short) at 300 places a bag:
 * every outcome is a clean refusal naming the file, or a read to the end
 * (damage inside a payload cannot be seen); never a crash or an overrun
 * (the suite runs under AddressSanitizer in make check-asan). */
START_TEST(survives_random_damage)
{
    char *dir = tu_mkdtemp();
    py_write(dir, "f", comp[_i], 3000, "shuffled");
    char *fb = tu_path(dir, "f.bag"), *bad = tu_path(dir, "bad.bag");
    size_t n;
    unsigned char *d = load(fb, &n), *x = malloc(n);
    uint64_t s = 0x9e3779b97f4a7c15ULL + (uint64_t)_i;
    int refused = 0, read_through = 0;
    for (int it = 0; it < 300; it++) {
        memcpy(x, d, n);
        size_t len = n;
        int k = 1 + (int)(s % 4);
        for (int j = 0; j < k; j++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            /* Half of the damage in the first 5% (headers, first chunks) and
             * the index section at the end, where the structure is dense. */
            size_t at = (s >> 8) % 4 == 0 ? n - 1 - (s >> 16) % (n / 10) : (s >> 16) % n;
            x[at] = (unsigned char)(s >> 40);
        }
        if (s % 11 == 0)
            len = (size_t)(s >> 20) % n;
        save(bad, x, len);
        sensim_bag *bag = sensim_bag_open(bad);
        if (!bag) {
            ck_assert_msg(strncmp(sensim_last_error(), bad, strlen(bad)) == 0, "%s", sensim_last_error());
            refused++;
            continue;
        }
        sensim_bag_msg m;
        int r;
        size_t got = 0;
        while ((r = sensim_bag_next(bag, &m)) == 1)
            got++;
        if (r < 0) {
            ck_assert_msg(strncmp(sensim_last_error(), bad, strlen(bad)) == 0, "%s", sensim_last_error());
            refused++;
        } else {
            read_through++;
        }
        sensim_bag_close(bag);
    }
    /* The damage is not all unseen; uncompressed, damage to payloads is
     * (compressed chunks carry checksums, so there nearly all is seen). */
    ck_assert_int_gt(refused, 30);
    if (_i == 0)
        ck_assert_int_gt(read_through, 3);
    free(d), free(x);
    tu_rmtree(dir);
    free(dir), free(fb), free(bad);
}
END_TEST

/* The dispatcher tells formats by content, not by name: files with MCAP and
 * SQLite magic (here followed by junk) and a directory with metadata.yaml
 * go to their backends, which refuse them naming the file; a ROS 1 bag
 * named .mcap is read as ROS 1. */
START_TEST(dispatch_by_content)
{
    char *dir = tu_mkdtemp(), *m = tu_path(dir, "x.bag"), *q = tu_path(dir, "y.bag"), *d2 = tu_path(dir, "r2"),
         *meta = tu_path(d2, "metadata.yaml");
    static const char mcap[] = "\x89MCAP0\r\n junk junk", sqlite[] = "SQLite format 3\0 junk junk";
    save(m, (const unsigned char *)mcap, sizeof mcap - 1);
    save(q, (const unsigned char *)sqlite, sizeof sqlite - 1);
    ck_assert_int_eq(mkdir(d2, 0777), 0);
    ck_assert_int_eq(tu_write_file(meta, "rosbag2_bagfile_information:\n"), 0);
    const char *paths[] = {m, q, d2};
    for (int k = 0; k < 3; k++) {
        ck_assert_ptr_null(sensim_bag_open(paths[k]));
        const char *e = sensim_last_error();
        ck_assert_msg(strncmp(e, paths[k], strlen(paths[k])) == 0 && !strstr(e, "not a recording"), "%s", e);
    }
    py_write(dir, "b", "none", 100000, "ordered");
    char *b = tu_path(dir, "b.bag"), *bm = tu_path(dir, "b.mcap");
    ck_assert_int_eq(rename(b, bm), 0);
    sensim_bag *bag = sensim_bag_open(bm);
    ck_assert_msg(bag != NULL, "%s", sensim_last_error());
    ck_assert_int_eq(sensim_bag_get_format(bag), SENSIM_BAG_ROS1);
    ck_assert_str_eq(sensim_bag_path(bag), bm);
    sensim_bag_close(bag);
    tu_rmtree(dir);
    free(dir), free(m), free(q), free(d2), free(meta), free(b), free(bm);
}
END_TEST

START_TEST(topic_not_found_lists_topics)
{
    char *dir = tu_mkdtemp();
    py_write(dir, "b", "none", 100000, "ordered");
    char *bagp = tu_path(dir, "b.bag");
    sensim_bag *bag = sensim_bag_open(bagp);
    ck_assert_ptr_nonnull(bag);
    size_t k;
    ck_assert_int_eq(sensim_bag_find_topic(bag, "/imu0", &k), SENSIM_ENOTFOUND);
    const char *e = sensim_last_error();
    ck_assert_msg(strstr(e, "/imu0") && strstr(e, "/imu (sensor_msgs/Imu)") && strstr(e, "/status (std_msgs/String)") &&
                      strstr(e, "/temp (std_msgs/Float64)") && strstr(e, bagp),
                  "%s", e);
    size_t bogus = 9;
    ck_assert_int_eq(sensim_bag_select(bag, &bogus, 1), SENSIM_EINVAL);
    sensim_bag_close(bag);
    tu_rmtree(dir);
    free(dir), free(bagp);
}
END_TEST

/* Writer refusals: bad stamps and topic handles name the message; an
 * uncommitted or failed writer leaves nothing behind; compression not
 * in ROS 1 is refused. */
START_TEST(writer_refusals)
{
    char *dir = tu_mkdtemp(), *out = tu_path(dir, "w.bag");
    ck_assert_ptr_null(sensim_bag_writer_create(out, SENSIM_BAG_ROS1, SENSIM_BAG_COMPRESS_ZSTD));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "zstd"));
    sensim_bag_writer *w = sensim_bag_writer_create(out, SENSIM_BAG_ROS1, SENSIM_BAG_COMPRESS_NONE);
    ck_assert_ptr_nonnull(w);
    size_t t;
    ck_assert_int_eq(sensim_bag_writer_add_topic_md5(w, "/x", "std_msgs/Float64", "fdb28210bfa9d7c91146260178d9a584",
                                                     "float64 data\n", &t),
                     SENSIM_OK);
    ck_assert_int_eq(sensim_bag_writer_add_topic_md5(w, "/x", "std_msgs/Float64", "", "float64 data\n", NULL),
                     SENSIM_EINVAL);
    sensim_bag_writer_close(w);
    ck_assert_int_eq(tu_count_entries(dir), 0);

    w = sensim_bag_writer_create(out, SENSIM_BAG_ROS1, SENSIM_BAG_COMPRESS_BZ2);
    ck_assert_int_eq(sensim_bag_writer_add_topic_md5(w, "/x", "std_msgs/Float64", "fdb28210bfa9d7c91146260178d9a584",
                                                     "float64 data\n", &t),
                     SENSIM_OK);
    unsigned char v[8] = {0};
    ck_assert_int_eq(sensim_bag_writer_write(w, t, 1000, v, 8), SENSIM_OK);
    ck_assert_int_eq(sensim_bag_writer_write(w, t, -5, v, 8), SENSIM_EINVAL);
    const char *e = sensim_last_error();
    ck_assert_msg(strstr(e, out) && strstr(e, "topic '/x'") && strstr(e, "message 1"), "%s", e);
    /* After a failure the writer refuses to go on. */
    ck_assert_int_ne(sensim_bag_writer_commit(w), SENSIM_OK);
    sensim_bag_writer_close(w);
    ck_assert_int_eq(tu_count_entries(dir), 0);

    w = sensim_bag_writer_create(out, SENSIM_BAG_ROS1, SENSIM_BAG_COMPRESS_NONE);
    ck_assert_int_eq(sensim_bag_writer_write(w, 3, 1000, v, 8), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "topic handle 3"));
    sensim_bag_writer_close(w);
    ck_assert_int_eq(tu_count_entries(dir), 0);

    /* An empty bag is valid, and opens with no topics. */
    w = sensim_bag_writer_create(out, SENSIM_BAG_ROS1, SENSIM_BAG_COMPRESS_NONE);
    ck_assert_int_eq(sensim_bag_writer_commit(w), SENSIM_OK);
    sensim_bag_writer_close(w);
    sensim_bag *bag = sensim_bag_open(out);
    ck_assert_msg(bag != NULL, "%s", sensim_last_error());
    ck_assert_uint_eq(sensim_bag_ntopics(bag), 0);
    sensim_bag_msg m;
    ck_assert_int_eq(sensim_bag_next(bag, &m), 0);
    sensim_bag_close(bag);
    tu_rmtree(dir);
    free(dir), free(out);
}
END_TEST

Suite *suite_bag_ros1(void)
{
    Suite *s = suite_create("bag_ros1");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, reads_rosbag_written, 0, 3);
    tcase_add_loop_test(tc, reads_out_of_order_chunks, 1, 3);
    tcase_add_loop_test(tc, rosbag_reads_sensim_written, 0, 3);
    tcase_add_test(tc, sensim_writes_out_of_order);
    tcase_add_test(tc, bad_inputs);
    tcase_add_test(tc, topic_not_found_lists_topics);
    tcase_add_test(tc, dispatch_by_content);
    tcase_add_loop_test(tc, survives_random_damage, 0, 3);
    tcase_add_test(tc, writer_refusals);
    suite_add_tcase(s, tc);
    return s;
}
