/* MCAP files (foxglove/mcap, docs/specification/README.md, major version 0):
 * reader and ros2-profile writer behind sensim/bag.h.
 *
 * Reading. With a summary section (footer summary_start != 0) holding chunk
 * indexes, the chunk indexes give where the chunks are and their time
 * ranges; each chunk's message index records (right after the chunk, never
 * compressed) give the log time and offset of every message in it. Messages
 * are delivered in log_time order by a k-way merge over the chunks whose
 * time ranges overlap the current time: a chunk enters the merge when its
 * message_start_time is reached and leaves once its last message is handed
 * out, so memory holds only the chunks that overlap in time (one for a file
 * written in time order). A chunk is decompressed only when one of its
 * messages is selected. Ties in log_time keep file order (chunk offset, then
 * offset inside the chunk). Topic counts and time spans come from the
 * message indexes at open (16 bytes per message; no chunk is decompressed).
 *
 * Without a summary, with a footer that is missing or damaged, or with a
 * summary that has no chunk indexes (messages outside chunks), the file is
 * read sequentially: open scans it once for schemas, channels, counts and
 * spans, and next() delivers messages in file order.
 *
 * Every length is checked against what holds it (record against file,
 * field against record, chunk records against the uncompressed size); chunk
 * uncompressed_crc and the summary CRC are verified when not zero.
 * Errors name the file and the byte offset of the record (and, inside a
 * chunk, the offset within the uncompressed chunk).
 *
 * Writing: profile "ros2", schemas "ros2msg" (the .msg definition text),
 * channels "cdr" with the offered_qos_profiles metadata the profile asks
 * for; messages in chunks of about 1 MiB (uncompressed, zstd or lz4 frame),
 * each followed by its message index records; Data End with the data
 * section CRC; a summary with schemas, channels, statistics and chunk
 * indexes, summary offsets and a footer with the summary CRC. */
#include "bag_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "sensim/afile.h"
#include "../lib/base_internal.h"

#define MCAP_MAGIC "\x89MCAP0\r\n"
#define MCAP_MAGIC_LEN 8
#define FOOTER_LEN (1 + 8 + 20) /* opcode, length, content */

enum {
    OP_HEADER = 0x01,
    OP_FOOTER = 0x02,
    OP_SCHEMA = 0x03,
    OP_CHANNEL = 0x04,
    OP_MESSAGE = 0x05,
    OP_CHUNK = 0x06,
    OP_MESSAGE_INDEX = 0x07,
    OP_CHUNK_INDEX = 0x08,
    OP_ATTACHMENT = 0x09,
    OP_ATTACHMENT_INDEX = 0x0A,
    OP_STATISTICS = 0x0B,
    OP_METADATA = 0x0C,
    OP_METADATA_INDEX = 0x0D,
    OP_SUMMARY_OFFSET = 0x0E,
    OP_DATA_END = 0x0F
};

/* A chunk larger than this (uncompressed) is refused rather than allocated:
 * writers use chunks of a few MiB; a bigger size is damage. */
#define MAX_CHUNK_BYTES ((uint64_t)1 << 32)

/* Message record header inside content: channel_id u16, sequence u32,
 * log_time u64, publish_time u64. */
#define MSG_HEAD 22

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static uint32_t crc32_of(const uint8_t *p, size_t n) { return sensim_crc32_(0, p, n); }

/* A bounds-checked cursor over one record's content: any read past `end`
 * sets `bad` and yields zeros, so a parser checks once at the end. */
typedef struct cur {
    const uint8_t *p, *end;
    int bad;
} cur;

static const uint8_t *cur_take(cur *c, uint64_t n)
{
    if (c->bad || n > (uint64_t)(c->end - c->p)) {
        c->bad = 1;
        return NULL;
    }
    const uint8_t *q = c->p;
    c->p += n;
    return q;
}
static uint16_t cur16(cur *c)
{
    const uint8_t *q = cur_take(c, 2);
    return q ? rd16(q) : 0;
}
static uint32_t cur32(cur *c)
{
    const uint8_t *q = cur_take(c, 4);
    return q ? rd32(q) : 0;
}
static uint64_t cur64(cur *c)
{
    const uint8_t *q = cur_take(c, 8);
    return q ? rd64(q) : 0;
}
/* A String or uint32-prefixed Bytes/Map/Array: pointer and length. */
static const uint8_t *cur_blob32(cur *c, uint32_t *n)
{
    *n = cur32(c);
    return cur_take(c, *n);
}

/* ==================================================================== */
/* reading                                                               */
/* ==================================================================== */

typedef struct mschema {
    uint16_t id;
    char *name, *encoding, *data; /* NUL-terminated copies */
} mschema;

/* One chunk as its chunk index says. */
typedef struct mchunk {
    uint64_t t0, t1;
    uint64_t off, len;         /* chunk record, from its opcode */
    uint64_t mi_off, mi_len;   /* message index records after it */
    int has_mi;                /* message_index_offsets not empty */
} mchunk;

/* One message of an active chunk: where it is and when. */
typedef struct mentry {
    uint64_t t;
    uint64_t off; /* offset of the message record in the uncompressed chunk */
    uint16_t channel;
} mentry;

/* A chunk taking part in the merge. */
typedef struct mslot {
    size_t chunk;        /* index into chunks[] (sorted by start time) */
    mentry *e;           /* its messages sorted by (t, off) */
    size_t ne, cap_e, pos;
    uint8_t *raw;        /* chunk record content as read */
    size_t cap_raw;
    uint8_t *data;       /* uncompressed records (== inside raw when uncompressed) */
    uint8_t *own;        /* decompression buffer */
    size_t cap_own;
    uint64_t usize;
    int loaded, done, used;
} mslot;

typedef struct mcap_impl {
    int fd;
    uint64_t fsize;
    mschema *schemas;
    size_t nschemas;
    int32_t *chan_topic; /* 65536 entries: channel id -> topic index, -1 unknown */
    int indexed;
    /* indexed mode */
    mchunk *chunks;
    size_t nchunks, next_chunk;
    mslot *slots;
    size_t nslots;
    size_t *heap; /* slot numbers, min-heap on the current entry */
    size_t nheap;
    /* sequential mode */
    uint64_t pos;         /* next record in the file */
    uint8_t *rec;         /* content of the current top-level record */
    size_t cap_rec;
    uint8_t *cbuf;        /* uncompressed current chunk */
    size_t cap_cbuf;
    const uint8_t *cdata; /* records of the current chunk (cbuf or inside rec) */
    uint64_t clen, cpos, coff; /* its size, read position, file offset of the chunk */
    int in_chunk, at_end;
    /* both */
    int has_stats;
    uint64_t stat_count; /* Statistics message_count, when has_stats */
    uint64_t counter; /* messages passed so far, selected or not */
    ZSTD_DCtx *zd;
    LZ4F_dctx *lz;
} mcap_impl;

static mcap_impl *IMPL(sensim_bag *bag) { return (mcap_impl *)bag->impl; }

static sensim_status read_at(sensim_bag *bag, uint64_t off, void *dst, uint64_t n, const char *what)
{
    mcap_impl *m = IMPL(bag);
    if (off > m->fsize || n > m->fsize - off)
        return sensim_error(SENSIM_EFORMAT, "%s: %s at byte %" PRIu64 " (%" PRIu64 " bytes) runs past the end of the file (%" PRIu64 " bytes): truncated?",
                            bag->path, what, off, n, m->fsize);
    uint8_t *d = dst;
    while (n > 0) {
        size_t want = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : (size_t)n;
        ssize_t got = pread(m->fd, d, want, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return sensim_error(SENSIM_EIO, "%s: read at byte %" PRIu64 ": %s", bag->path, off,
                                got < 0 ? strerror(errno) : "unexpected end of file");
        d += got;
        off += (uint64_t)got;
        n -= (uint64_t)got;
    }
    return SENSIM_OK;
}

static sensim_status grow(sensim_bag *bag, uint8_t **buf, size_t *cap, uint64_t need)
{
    if (need <= *cap)
        return SENSIM_OK;
    if (need > SIZE_MAX / 2)
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory (%" PRIu64 " bytes)", bag->path, need);
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    uint8_t *p = realloc(*buf, c);
    if (!p)
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory (%zu bytes)", bag->path, c);
    *buf = p;
    *cap = c;
    return SENSIM_OK;
}

static char *dup_n(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        if (n)
            memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

/* ---- schemas, channels, topics ---- */

static const mschema *find_schema(const mcap_impl *m, uint16_t id)
{
    for (size_t i = 0; i < m->nschemas; i++)
        if (m->schemas[i].id == id)
            return &m->schemas[i];
    return NULL;
}

/* where: "record at byte N" or "chunk at byte N: record at offset M" for messages. */
static sensim_status add_schema(sensim_bag *bag, const uint8_t *c, uint64_t n, const char *where)
{
    mcap_impl *m = IMPL(bag);
    cur k = {c, c + n, 0};
    uint16_t id = cur16(&k);
    uint32_t ln, le, ld;
    const uint8_t *name = cur_blob32(&k, &ln), *enc = cur_blob32(&k, &le), *data = cur_blob32(&k, &ld);
    if (k.bad)
        return sensim_error(SENSIM_EFORMAT, "%s: %s: schema record shorter than its fields", bag->path, where);
    if (id == 0 || find_schema(m, id)) /* id 0 is invalid (ignored); duplicates must be identical */
        return SENSIM_OK;
    mschema *s = realloc(m->schemas, (m->nschemas + 1) * sizeof *s);
    if (!s)
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
    m->schemas = s;
    s = &m->schemas[m->nschemas];
    s->id = id;
    s->name = dup_n(name, ln);
    s->encoding = dup_n(enc, le);
    s->data = dup_n(data, ld);
    m->nschemas++;
    if (!s->name || !s->encoding || !s->data)
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
    return SENSIM_OK;
}

/* Looks up key in a Map<string,string>; NULL when absent. */
static const uint8_t *map_get(const uint8_t *p, uint32_t n, const char *key, uint32_t *vlen)
{
    cur k = {p, p + n, 0};
    size_t kl = strlen(key);
    while (!k.bad && k.p < k.end) {
        uint32_t a, b;
        const uint8_t *kk = cur_blob32(&k, &a), *vv = cur_blob32(&k, &b);
        if (!k.bad && a == kl && memcmp(kk, key, kl) == 0) {
            *vlen = b;
            return vv;
        }
    }
    return NULL;
}

static sensim_status add_channel(sensim_bag *bag, const uint8_t *c, uint64_t n, const char *where)
{
    mcap_impl *m = IMPL(bag);
    cur k = {c, c + n, 0};
    uint16_t id = cur16(&k), sid = cur16(&k);
    uint32_t lt, le, lm;
    const uint8_t *topic = cur_blob32(&k, &lt), *enc = cur_blob32(&k, &le), *meta = cur_blob32(&k, &lm);
    if (k.bad)
        return sensim_error(SENSIM_EFORMAT, "%s: %s: channel record shorter than its fields", bag->path, where);
    if (m->chan_topic[id] >= 0)
        return SENSIM_OK;
    char *name = dup_n(topic, lt), *encs = dup_n(enc, le);
    uint32_t lmd = 0;
    const uint8_t *md5 = map_get(meta, lm, "md5sum", &lmd);
    char *md5s = dup_n(md5 ? md5 : (const uint8_t *)"", md5 ? lmd : 0);
    sensim_status st = SENSIM_OK;
    if (!name || !encs || !md5s) {
        st = sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
        goto out;
    }
    const mschema *s = sid ? find_schema(m, sid) : NULL;
    if (sid && !s) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: channel %u (topic '%s') refers to schema %u, not defined before it",
                          bag->path, where, id, name, sid);
        goto out;
    }
    sensim_msg_encoding me;
    if (bag_encoding(encs, &me) != 0) {
        st = sensim_error(SENSIM_EUNSUPPORTED,
                          "%s: %s: topic '%s': message encoding '%s' (sensim reads ROS messages: cdr or ros1)",
                          bag->path, where, name, encs);
        goto out;
    }
    const char *type = s ? s->name : "";
    size_t ti = sensim_bag_topic_index_(bag, name);
    if (ti != (size_t)-1) {
        /* Several channels on one topic (several publishers): one topic when they agree. */
        const sensim_bag_topic *t = &bag->topics[ti];
        if (strcmp(t->type, type) != 0 || t->encoding != me) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s: topic '%s': channel %u has type '%s' (%s), another channel '%s' (%s)",
                              bag->path, where, name, id, type, encs, t->type, t->encoding == SENSIM_ENC_CDR ? "cdr" : "ros1");
            goto out;
        }
    } else {
        st = sensim_bag_add_topic_(bag, name, type, md5s, s ? s->data : "", me, &ti);
        if (st != SENSIM_OK)
            goto out;
    }
    m->chan_topic[id] = (int32_t)ti;
out:
    free(name);
    free(encs);
    free(md5s);
    return st;
}

static void topic_saw(sensim_bag *bag, size_t ti, uint64_t t, uint64_t count)
{
    sensim_bag_topic *tp = &bag->topics[ti];
    tp->count += count;
    int64_t ts = (int64_t)t;
    if (ts < tp->t_first_ns)
        tp->t_first_ns = ts;
    if (ts > tp->t_last_ns)
        tp->t_last_ns = ts;
}

/* ---- chunks ---- */

static const char *const COMP_NAMES = "\"\" (none), \"zstd\" or \"lz4\"";

/* Decompresses (or points at) the records of a chunk record's content `c`
 * (n bytes; the record sits at file offset `off`) and verifies size and CRC.
 * *data points into c when uncompressed, else into *buf. */
static sensim_status chunk_open(sensim_bag *bag, const uint8_t *c, uint64_t n, uint64_t off, uint8_t **buf,
                                size_t *cap, const uint8_t **data, uint64_t *usize_out, uint64_t *t0, uint64_t *t1)
{
    mcap_impl *m = IMPL(bag);
    cur k = {c, c + n, 0};
    *t0 = cur64(&k);
    *t1 = cur64(&k);
    uint64_t usize = cur64(&k);
    uint32_t crc = cur32(&k);
    uint32_t lc;
    const uint8_t *comp = cur_blob32(&k, &lc);
    uint64_t csize = cur64(&k);
    const uint8_t *rec = cur_take(&k, csize);
    if (k.bad)
        return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": fields run past the record (%" PRIu64 " bytes)",
                            bag->path, off, n);
    if (usize > MAX_CHUNK_BYTES)
        return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": uncompressed size %" PRIu64 " bytes is implausible",
                            bag->path, off, usize);
    if (lc == 0) {
        if (csize != usize)
            return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": uncompressed, yet records hold %" PRIu64 " bytes and uncompressed_size says %" PRIu64,
                                bag->path, off, csize, usize);
        *data = rec;
    } else if (lc == 4 && memcmp(comp, "zstd", 4) == 0) {
        sensim_status st = grow(bag, buf, cap, usize ? usize : 1);
        if (st != SENSIM_OK)
            return st;
        if (!m->zd && !(m->zd = ZSTD_createDCtx()))
            return sensim_error(SENSIM_ENOMEM, "%s: out of memory (zstd)", bag->path);
        size_t r = ZSTD_decompressDCtx(m->zd, *buf, (size_t)usize, rec, (size_t)csize);
        if (ZSTD_isError(r))
            return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": zstd data corrupt (%s)", bag->path, off,
                                ZSTD_getErrorName(r));
        if (r != usize)
            return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": zstd gave %zu bytes, uncompressed_size says %" PRIu64,
                                bag->path, off, r, usize);
        *data = *buf;
    } else if (lc == 3 && memcmp(comp, "lz4", 3) == 0) {
        sensim_status st = grow(bag, buf, cap, usize ? usize : 1);
        if (st != SENSIM_OK)
            return st;
        if (!m->lz && LZ4F_isError(LZ4F_createDecompressionContext(&m->lz, LZ4F_VERSION)))
            return sensim_error(SENSIM_ENOMEM, "%s: out of memory (lz4)", bag->path);
        LZ4F_resetDecompressionContext(m->lz);
        size_t in_pos = 0, out_pos = 0, r = 1;
        while (r != 0) {
            size_t in_n = (size_t)csize - in_pos, out_n = (size_t)usize - out_pos;
            r = LZ4F_decompress(m->lz, *buf + out_pos, &out_n, rec + in_pos, &in_n, NULL);
            if (LZ4F_isError(r))
                return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": lz4 data corrupt (%s)", bag->path,
                                    off, LZ4F_getErrorName(r));
            in_pos += in_n;
            out_pos += out_n;
            if (r != 0 && in_n == 0 && out_n == 0)
                return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": lz4 frame %s", bag->path, off,
                                    out_pos == usize ? "larger than uncompressed_size" : "truncated");
        }
        if (out_pos != usize)
            return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": lz4 gave %zu bytes, uncompressed_size says %" PRIu64,
                                bag->path, off, out_pos, usize);
        *data = *buf;
    } else {
        return sensim_error(SENSIM_EUNSUPPORTED, "%s: chunk at byte %" PRIu64 ": unknown compression '%.*s' (MCAP chunks are %s)",
                            bag->path, off, (int)(lc > 64 ? 64 : lc), (const char *)comp, COMP_NAMES);
    }
    if (crc != 0 && crc32_of(*data, (size_t)usize) != crc)
        return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": CRC mismatch (records say %08" PRIx32 ", data give %08" PRIx32 ")",
                            bag->path, off, crc, crc32_of(*data, (size_t)usize));
    *usize_out = usize;
    return SENSIM_OK;
}

/* Reads record header at data+pos within len: opcode and content length.
 * 0 when it does not fit. */
static int inner_record(const uint8_t *data, uint64_t len, uint64_t pos, uint8_t *op, uint64_t *n)
{
    if (pos > len || len - pos < 9)
        return 0;
    *op = data[pos];
    *n = rd64(data + pos + 1);
    return *n <= len - pos - 9;
}

/* ---- indexed mode ---- */

static int entry_less(const mentry *a, const mentry *b)
{
    return a->t < b->t || (a->t == b->t && a->off < b->off);
}

static int cmp_entry(const void *pa, const void *pb)
{
    const mentry *a = pa, *b = pb;
    return entry_less(a, b) ? -1 : entry_less(b, a) ? 1 : 0;
}

static int cmp_chunk(const void *pa, const void *pb)
{
    const mchunk *a = pa, *b = pb;
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    return a->off < b->off ? -1 : a->off > b->off;
}

static sensim_status slot_push(sensim_bag *bag, mslot *s, uint64_t t, uint64_t off, uint16_t ch)
{
    if (BAG_RESERVE(s->e, s->cap_e, s->ne + 1, 256, bag->path))
        return sensim_last_status();
    s->e[s->ne++] = (mentry){t, off, ch};
    return SENSIM_OK;
}

/* Reads and decompresses chunk s->chunk into the slot. */
static sensim_status slot_load(sensim_bag *bag, mslot *s)
{
    mcap_impl *m = IMPL(bag);
    const mchunk *c = &m->chunks[s->chunk];
    uint8_t head[9];
    sensim_status st = read_at(bag, c->off, head, 9, "chunk");
    if (st != SENSIM_OK)
        return st;
    uint64_t n = rd64(head + 1);
    if (head[0] != OP_CHUNK || n + 9 != c->len)
        return sensim_error(SENSIM_EFORMAT, "%s: chunk index points at byte %" PRIu64 ", which holds no chunk of %" PRIu64 " bytes (opcode 0x%02x, length %" PRIu64 ")",
                            bag->path, c->off, c->len, head[0], n);
    if ((st = grow(bag, &s->raw, &s->cap_raw, n)) != SENSIM_OK ||
        (st = read_at(bag, c->off + 9, s->raw, n, "chunk")) != SENSIM_OK)
        return st;
    const uint8_t *data;
    uint64_t t0, t1;
    st = chunk_open(bag, s->raw, n, c->off, &s->own, &s->cap_own, &data, &s->usize, &t0, &t1);
    if (st != SENSIM_OK)
        return st;
    s->data = (uint8_t *)data;
    s->loaded = 1;
    return SENSIM_OK;
}

/* Fills the slot's entries from the chunk's message index records, or from
 * the chunk itself when it has none. */
static sensim_status slot_entries(sensim_bag *bag, mslot *s, uint8_t **tmp, size_t *cap_tmp)
{
    mcap_impl *m = IMPL(bag);
    const mchunk *c = &m->chunks[s->chunk];
    s->ne = 0;
    if (c->has_mi) {
        sensim_status st = grow(bag, tmp, cap_tmp, c->mi_len);
        if (st != SENSIM_OK || (st = read_at(bag, c->mi_off, *tmp, c->mi_len, "message index")) != SENSIM_OK)
            return st;
        uint64_t p = 0;
        uint8_t op;
        uint64_t n;
        while (p < c->mi_len) {
            if (!inner_record(*tmp, c->mi_len, p, &op, &n))
                return sensim_error(SENSIM_EFORMAT, "%s: message index at byte %" PRIu64 " runs past the chunk's message indexes",
                                    bag->path, c->mi_off + p);
            const uint8_t *r = *tmp + p + 9;
            if (op == OP_MESSAGE_INDEX) {
                cur k = {r, r + n, 0};
                uint16_t ch = cur16(&k);
                uint32_t la;
                const uint8_t *a = cur_blob32(&k, &la);
                if (k.bad || la % 16)
                    return sensim_error(SENSIM_EFORMAT, "%s: message index at byte %" PRIu64 ": malformed", bag->path,
                                        c->mi_off + p);
                if (m->chan_topic[ch] < 0)
                    return sensim_error(SENSIM_EFORMAT, "%s: message index at byte %" PRIu64 ": channel %u is not in the summary",
                                        bag->path, c->mi_off + p, ch);
                for (uint32_t i = 0; i < la; i += 16)
                    if ((st = slot_push(bag, s, rd64(a + i), rd64(a + i + 8), ch)) != SENSIM_OK)
                        return st;
            }
            p += 9 + n;
        }
    } else {
        sensim_status st = slot_load(bag, s);
        if (st != SENSIM_OK)
            return st;
        uint64_t p = 0, n;
        uint8_t op;
        while (p < s->usize) {
            if (!inner_record(s->data, s->usize, p, &op, &n))
                return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": record at offset %" PRIu64 " runs past the chunk",
                                    bag->path, c->off, p);
            if (op == OP_MESSAGE) {
                if (n < MSG_HEAD)
                    return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": message at offset %" PRIu64 " shorter than its header",
                                        bag->path, c->off, p);
                uint16_t ch = rd16(s->data + p + 9);
                if (m->chan_topic[ch] < 0)
                    return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": message at offset %" PRIu64 " on unknown channel %u",
                                        bag->path, c->off, p, ch);
                if ((st = slot_push(bag, s, rd64(s->data + p + 15), p, ch)) != SENSIM_OK)
                    return st;
            }
            p += 9 + n;
        }
    }
    /* Message indexes are per channel: merge them; a chunk written in time
     * order is already sorted. */
    int sorted = 1;
    for (size_t i = 1; i < s->ne && sorted; i++)
        sorted = !entry_less(&s->e[i], &s->e[i - 1]);
    if (!sorted)
        qsort(s->e, s->ne, sizeof *s->e, cmp_entry);
    return SENSIM_OK;
}

static bag_key slot_key(const void *impl, size_t si)
{
    const mcap_impl *m = impl;
    const mslot *s = &m->slots[si];
    return (bag_key){s->e[s->pos].t, m->chunks[s->chunk].off, s->e[s->pos].off};
}

/* Does the chunk hold any selected channel? (from its index offsets we only
 * know channels when the entries are read, so this reads them) */
static sensim_status activate(sensim_bag *bag, size_t ci)
{
    mcap_impl *m = IMPL(bag);
    size_t si = 0;
    while (si < m->nslots && m->slots[si].used)
        si++;
    if (si == m->nslots) {
        mslot *ns = realloc(m->slots, (m->nslots + 1) * sizeof *ns);
        if (!ns)
            return sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
        m->slots = ns;
        memset(&m->slots[m->nslots], 0, sizeof *ns);
        size_t *nh = realloc(m->heap, (m->nslots + 1) * sizeof *nh);
        if (!nh)
            return sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
        m->heap = nh;
        m->nslots++;
    }
    mslot *s = &m->slots[si];
    s->chunk = ci;
    s->pos = 0;
    s->loaded = s->done = 0;
    s->used = 1;
    /* The entries buffer of the message index read is shared through `own`
     * only when no decompression follows; use a separate scratch (raw). */
    sensim_status st = slot_entries(bag, s, &s->raw, &s->cap_raw);
    if (st != SENSIM_OK) {
        s->used = 0;
        return st;
    }
    if (s->ne == 0) {
        s->used = 0;
        return SENSIM_OK;
    }
    bag_heap_push(m->heap, &m->nheap, si, slot_key, m);
    return SENSIM_OK;
}

static int next_indexed(sensim_bag *bag, sensim_bag_msg *msg)
{
    mcap_impl *m = IMPL(bag);
    /* Chunks whose last message went out on the previous call are free now. */
    for (size_t i = 0; i < m->nslots; i++)
        if (m->slots[i].used && m->slots[i].done)
            m->slots[i].used = 0;
    for (;;) {
        while (m->next_chunk < m->nchunks &&
               (m->nheap == 0 ||
                m->chunks[m->next_chunk].t0 <= m->slots[m->heap[0]].e[m->slots[m->heap[0]].pos].t)) {
            if (activate(bag, m->next_chunk++) != SENSIM_OK)
                return -1;
        }
        if (m->nheap == 0)
            return 0;
        size_t si = m->heap[0];
        mslot *s = &m->slots[si];
        mentry e = s->e[s->pos++];
        if (s->pos == s->ne) {
            s->done = 1;
            m->heap[0] = m->heap[--m->nheap];
        }
        if (m->nheap)
            bag_heap_down(m->heap, m->nheap, 0, slot_key, m);
        uint64_t index = m->counter++;
        size_t ti = (size_t)m->chan_topic[e.channel];
        if (!bag->selected[ti])
            continue;
        const mchunk *c = &m->chunks[s->chunk];
        if (!s->loaded && slot_load(bag, s) != SENSIM_OK)
            return -1;
        uint8_t op;
        uint64_t n;
        if (!inner_record(s->data, s->usize, e.off, &op, &n) || op != OP_MESSAGE || n < MSG_HEAD ||
            rd16(s->data + e.off + 9) != e.channel || rd64(s->data + e.off + 15) != e.t) {
            sensim_error(SENSIM_EFORMAT, "%s: topic '%s': message %" PRIu64 ": message index of the chunk at byte %" PRIu64 " points at offset %" PRIu64 ", which holds no such message",
                         bag->path, bag->topics[ti].name, index, c->off, e.off);
            return -1;
        }
        msg->topic = ti;
        msg->recv_ns = (int64_t)e.t;
        msg->index = index;
        msg->data = s->data + e.off + 9 + MSG_HEAD;
        msg->size = (size_t)(n - MSG_HEAD);
        return 1;
    }
}

/* ---- sequential mode ---- */

/* The next record of the file, descending into chunks. On 1, *op, *c and
 * *n describe it and *where names it for messages. 0 at the end (Data End,
 * Footer), -1 on error. */
static int seq_record(sensim_bag *bag, uint8_t *op, const uint8_t **c, uint64_t *n, char *where, size_t wn)
{
    mcap_impl *m = IMPL(bag);
    for (;;) {
        if (m->in_chunk) {
            if (m->cpos >= m->clen) {
                m->in_chunk = 0;
                continue;
            }
            if (!inner_record(m->cdata, m->clen, m->cpos, op, n)) {
                sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": record at offset %" PRIu64 " runs past the chunk (%" PRIu64 " bytes)",
                             bag->path, m->coff, m->cpos, m->clen);
                return -1;
            }
            *c = m->cdata + m->cpos + 9;
            snprintf(where, wn, "chunk at byte %" PRIu64 ": record at offset %" PRIu64, m->coff, m->cpos);
            m->cpos += 9 + *n;
            return 1;
        }
        if (m->at_end)
            return 0;
        uint64_t at = m->pos;
        if (at == m->fsize || m->fsize - at < 9) {
            sensim_error(SENSIM_EFORMAT, "%s: ends at byte %" PRIu64 " without a Data End or Footer record: truncated", bag->path,
                         m->fsize);
            return -1;
        }
        uint8_t head[9];
        if (read_at(bag, at, head, 9, "record") != SENSIM_OK)
            return -1;
        *op = head[0];
        *n = rd64(head + 1);
        if (*n > m->fsize - at - 9) {
            sensim_error(SENSIM_EFORMAT, "%s: record at byte %" PRIu64 " (opcode 0x%02x, %" PRIu64 " bytes) runs past the end of the file (%" PRIu64 " bytes): truncated",
                         bag->path, at, *op, *n, m->fsize);
            return -1;
        }
        m->pos = at + 9 + *n;
        if (*op == OP_DATA_END || *op == OP_FOOTER) {
            m->at_end = 1;
            return 0;
        }
        /* Attachments and metadata can be large and are not needed. */
        if (*op != OP_SCHEMA && *op != OP_CHANNEL && *op != OP_MESSAGE && *op != OP_CHUNK && *op != OP_HEADER)
            continue;
        if (grow(bag, &m->rec, &m->cap_rec, *n ? *n : 1) != SENSIM_OK ||
            read_at(bag, at + 9, m->rec, *n, "record") != SENSIM_OK)
            return -1;
        if (*op == OP_CHUNK) {
            uint64_t t0, t1;
            if (chunk_open(bag, m->rec, *n, at, &m->cbuf, &m->cap_cbuf, &m->cdata, &m->clen, &t0, &t1) != SENSIM_OK)
                return -1;
            m->in_chunk = 1;
            m->cpos = 0;
            m->coff = at;
            continue;
        }
        *c = m->rec;
        snprintf(where, wn, "record at byte %" PRIu64, at);
        return 1;
    }
}

static void seq_rewind(mcap_impl *m)
{
    m->pos = MCAP_MAGIC_LEN;
    m->in_chunk = 0;
    m->at_end = 0;
    m->counter = 0;
}

static int next_seq(sensim_bag *bag, sensim_bag_msg *msg)
{
    mcap_impl *m = IMPL(bag);
    uint8_t op;
    const uint8_t *c;
    uint64_t n;
    char where[96];
    int r;
    while ((r = seq_record(bag, &op, &c, &n, where, sizeof where)) == 1) {
        if (op != OP_MESSAGE)
            continue;
        uint64_t index = m->counter++;
        if (n < MSG_HEAD) {
            sensim_error(SENSIM_EFORMAT, "%s: message %" PRIu64 ": %s: shorter than its header", bag->path, index, where);
            return -1;
        }
        uint16_t ch = rd16(c);
        if (m->chan_topic[ch] < 0) {
            sensim_error(SENSIM_EFORMAT, "%s: message %" PRIu64 ": %s: channel %u not defined before it", bag->path, index,
                         where, ch);
            return -1;
        }
        size_t ti = (size_t)m->chan_topic[ch];
        if (!bag->selected[ti])
            continue;
        msg->topic = ti;
        msg->recv_ns = (int64_t)rd64(c + 6);
        msg->index = index;
        msg->data = c + MSG_HEAD;
        msg->size = (size_t)(n - MSG_HEAD);
        return 1;
    }
    return r;
}

/* Open's scan: every schema, channel and message of the file. */
static sensim_status seq_scan(sensim_bag *bag)
{
    mcap_impl *m = IMPL(bag);
    seq_rewind(m);
    uint8_t op;
    const uint8_t *c;
    uint64_t n;
    char where[96];
    int r;
    sensim_status st;
    while ((r = seq_record(bag, &op, &c, &n, where, sizeof where)) == 1) {
        if (op == OP_SCHEMA && (st = add_schema(bag, c, n, where)) != SENSIM_OK)
            return st;
        if (op == OP_CHANNEL && (st = add_channel(bag, c, n, where)) != SENSIM_OK)
            return st;
        if (op == OP_MESSAGE) {
            if (n < MSG_HEAD)
                return sensim_error(SENSIM_EFORMAT, "%s: message %" PRIu64 ": %s: shorter than its header", bag->path,
                                    m->counter, where);
            uint16_t ch = rd16(c);
            if (m->chan_topic[ch] < 0)
                return sensim_error(SENSIM_EFORMAT, "%s: message %" PRIu64 ": %s: channel %u not defined before it",
                                    bag->path, m->counter, where, ch);
            topic_saw(bag, (size_t)m->chan_topic[ch], rd64(c + 6), 1);
            m->counter++;
        }
    }
    if (r < 0)
        return sensim_last_status();
    seq_rewind(m);
    return SENSIM_OK;
}

/* ---- summary ---- */

/* Reads the footer and summary. *ok = 1 when the file has a usable summary
 * with chunk indexes (m->chunks filled); 0 means read sequentially. */
static sensim_status read_summary(sensim_bag *bag, int *ok)
{
    mcap_impl *m = IMPL(bag);
    *ok = 0;
    if (m->fsize < MCAP_MAGIC_LEN + FOOTER_LEN + MCAP_MAGIC_LEN)
        return SENSIM_OK;
    uint8_t tail[FOOTER_LEN + MCAP_MAGIC_LEN];
    uint64_t fpos = m->fsize - sizeof tail;
    sensim_status st = read_at(bag, fpos, tail, sizeof tail, "footer");
    if (st != SENSIM_OK)
        return st;
    if (memcmp(tail + FOOTER_LEN, MCAP_MAGIC, MCAP_MAGIC_LEN) != 0 || tail[0] != OP_FOOTER || rd64(tail + 1) != 20)
        return SENSIM_OK; /* no footer: truncated or still being written */
    uint64_t sstart = rd64(tail + 9), sostart = rd64(tail + 17);
    uint32_t scrc = rd32(tail + 25);
    if (sstart == 0)
        return SENSIM_OK;
    uint64_t send = sostart ? sostart : fpos;
    if (sstart < MCAP_MAGIC_LEN || sstart > send || send > fpos)
        return sensim_error(SENSIM_EFORMAT, "%s: footer at byte %" PRIu64 ": summary at %" PRIu64 "..%" PRIu64 " lies outside the file",
                            bag->path, fpos, sstart, send);
    uint64_t slen = fpos + 9 + 16 - sstart; /* what the summary CRC covers */
    uint8_t *s = malloc(slen ? slen : 1);
    if (!s)
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
    st = read_at(bag, sstart, s, slen, "summary");
    if (st == SENSIM_OK && scrc != 0 && crc32_of(s, slen) != scrc)
        st = sensim_error(SENSIM_EFORMAT, "%s: summary at byte %" PRIu64 ": CRC mismatch (footer says %08" PRIx32 ", data give %08" PRIx32 ")",
                          bag->path, sstart, scrc, crc32_of(s, slen));
    size_t cap_chunks = 0;
    /* Two passes: schemas first, since the summary's groups may come in
     * any order and a channel needs its schema. */
    uint64_t len = send - sstart;
    for (int pass = 0; pass < 2; pass++) {
        for (uint64_t p = 0; st == SENSIM_OK && p < len;) {
            uint8_t op;
            uint64_t n;
            char where[64];
            snprintf(where, sizeof where, "summary record at byte %" PRIu64, sstart + p);
            if (!inner_record(s, len, p, &op, &n)) {
                st = sensim_error(SENSIM_EFORMAT, "%s: %s runs past the summary section", bag->path, where);
                break;
            }
            const uint8_t *c = s + p + 9;
            if ((op == OP_SCHEMA) != (pass == 0)) {
                p += 9 + n;
                continue;
            }
            if (op == OP_SCHEMA)
                st = add_schema(bag, c, n, where);
            else if (op == OP_CHANNEL)
                st = add_channel(bag, c, n, where);
            else if (op == OP_STATISTICS && n >= 8) {
                m->has_stats = 1;
                m->stat_count = rd64(c);
            } else if (op == OP_CHUNK_INDEX) {
                cur k = {c, c + n, 0};
                mchunk ch;
                ch.t0 = cur64(&k);
                ch.t1 = cur64(&k);
                ch.off = cur64(&k);
                ch.len = cur64(&k);
                uint32_t lmap;
                const uint8_t *map = cur_blob32(&k, &lmap);
                ch.mi_len = cur64(&k);
                ch.mi_off = ch.off + ch.len;
                ch.has_mi = lmap > 0;
                if (k.bad || lmap % 10)
                    st = sensim_error(SENSIM_EFORMAT, "%s: %s: chunk index shorter than its fields", bag->path, where);
                else if (ch.off < MCAP_MAGIC_LEN || ch.len < 9 || ch.off > sstart || ch.len > sstart - ch.off ||
                         ch.mi_len > sstart - ch.off - ch.len)
                    st = sensim_error(SENSIM_EFORMAT, "%s: %s: chunk at %" PRIu64 " (+%" PRIu64 ", message indexes +%" PRIu64 ") lies outside the data section",
                                      bag->path, where, ch.off, ch.len, ch.mi_len);
                else {
                    /* Message index records must lie in the block after the chunk. */
                    for (uint32_t i = 0; i < lmap && st == SENSIM_OK; i += 10) {
                        uint64_t o = rd64(map + i + 2);
                        if (o < ch.mi_off || o >= ch.mi_off + ch.mi_len)
                            st = sensim_error(SENSIM_EFORMAT, "%s: %s: message index of channel %u at byte %" PRIu64 " lies outside the chunk's message indexes",
                                              bag->path, where, rd16(map + i), o);
                    }
                    if (st == SENSIM_OK && m->nchunks == cap_chunks) {
                        cap_chunks = cap_chunks ? 2 * cap_chunks : 64;
                        mchunk *nc = realloc(m->chunks, cap_chunks * sizeof *nc);
                        if (!nc)
                            st = sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
                        else
                            m->chunks = nc;
                    }
                    if (st == SENSIM_OK)
                        m->chunks[m->nchunks++] = ch;
                }
            }
            p += 9 + n;
        }
    }
    free(s);
    if (st == SENSIM_OK && m->nchunks > 0)
        *ok = 1;
    return st;
}

/* Counts and spans from every chunk's message indexes (or contents). */
static sensim_status index_counts(sensim_bag *bag)
{
    mcap_impl *m = IMPL(bag);
    mslot s;
    memset(&s, 0, sizeof s);
    sensim_status st = SENSIM_OK;
    for (size_t i = 0; i < m->nchunks && st == SENSIM_OK; i++) {
        s.chunk = i;
        s.loaded = 0;
        st = slot_entries(bag, &s, &s.raw, &s.cap_raw);
        for (size_t k = 0; k < s.ne && st == SENSIM_OK; k++) {
            if (s.e[k].t < m->chunks[i].t0 || s.e[k].t > m->chunks[i].t1)
                st = sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %" PRIu64 ": message at offset %" PRIu64 " has log_time %" PRIu64 " outside the chunk's range %" PRIu64 "..%" PRIu64,
                                  bag->path, m->chunks[i].off, s.e[k].off, s.e[k].t, m->chunks[i].t0, m->chunks[i].t1);
            else
                topic_saw(bag, (size_t)m->chan_topic[s.e[k].channel], s.e[k].t, 1);
        }
    }
    free(s.e);
    free(s.raw);
    free(s.own);
    return st;
}

/* ---- ops ---- */

static int mcap_next(sensim_bag *bag, sensim_bag_msg *msg)
{
    return IMPL(bag)->indexed ? next_indexed(bag, msg) : next_seq(bag, msg);
}

static sensim_status mcap_rewind(sensim_bag *bag)
{
    mcap_impl *m = IMPL(bag);
    if (m->indexed) {
        for (size_t i = 0; i < m->nslots; i++)
            m->slots[i].used = 0;
        m->nheap = 0;
        m->next_chunk = 0;
        m->counter = 0;
    } else {
        seq_rewind(m);
    }
    return SENSIM_OK;
}

static void mcap_close(sensim_bag *bag)
{
    mcap_impl *m = IMPL(bag);
    if (m->fd >= 0)
        close(m->fd);
    for (size_t i = 0; i < m->nschemas; i++)
        SENSIM_FREE_ALL(m->schemas[i].name, m->schemas[i].encoding, m->schemas[i].data);
    SENSIM_FREE_ALL(m->schemas, m->chan_topic, m->chunks);
    for (size_t i = 0; i < m->nslots; i++)
        SENSIM_FREE_ALL(m->slots[i].e, m->slots[i].raw, m->slots[i].own);
    SENSIM_FREE_ALL(m->slots, m->heap, m->rec, m->cbuf);
    ZSTD_freeDCtx(m->zd);
    if (m->lz)
        LZ4F_freeDecompressionContext(m->lz);
}

static int mcap_open(sensim_bag *bag)
{
    const char *path = bag->path;
    mcap_impl *m = bag->impl;
    m->fd = -1;
    if (!(m->chan_topic = malloc(65536 * sizeof *m->chan_topic))) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < 65536; i++)
        m->chan_topic[i] = -1;
    if ((m->fd = sensim_bag_open_file_(path, &m->fsize)) < 0)
        return -1;
    uint8_t head[MCAP_MAGIC_LEN + 9];
    if (m->fsize < sizeof head) {
        sensim_error(SENSIM_EFORMAT, "%s: %" PRIu64 " bytes, too short for an MCAP file (magic and header record): truncated",
                     path, m->fsize);
        return -1;
    }
    if (read_at(bag, 0, head, sizeof head, "header") != SENSIM_OK)
        return -1;
    if (memcmp(head, MCAP_MAGIC, MCAP_MAGIC_LEN) != 0) {
        if (memcmp(head, "\x89MCAP", 5) == 0)
            sensim_error(SENSIM_EUNSUPPORTED, "%s: MCAP major version '%c' (sensim reads version '0')", path, head[5]);
        else
            sensim_error(SENSIM_EFORMAT, "%s: not an MCAP file (wrong magic at byte 0)", path);
        return -1;
    }
    if (head[MCAP_MAGIC_LEN] != OP_HEADER) {
        sensim_error(SENSIM_EFORMAT, "%s: record at byte 8 has opcode 0x%02x, not a Header (0x01)", path,
                     head[MCAP_MAGIC_LEN]);
        return -1;
    }
    int ok;
    if (read_summary(bag, &ok) != SENSIM_OK)
        return -1;
    if (ok) {
        m->indexed = 1;
        qsort(m->chunks, m->nchunks, sizeof *m->chunks, cmp_chunk);
        if (index_counts(bag) != SENSIM_OK)
            return -1;
        /* Messages outside chunks are in no index: when the statistics
         * count more than the indexes hold, read the file sequentially. */
        uint64_t total = 0;
        for (size_t i = 0; i < bag->ntopics; i++)
            total += bag->topics[i].count;
        if (m->has_stats && m->stat_count != total)
            ok = 0;
    }
    if (!ok) {
        m->indexed = 0;
        for (size_t i = 0; i < bag->ntopics; i++) {
            bag->topics[i].count = 0;
            bag->topics[i].t_first_ns = INT64_MAX;
            bag->topics[i].t_last_ns = INT64_MIN;
        }
        if (seq_scan(bag) != SENSIM_OK)
            return -1;
    }
    return 0;
}

static const sensim_bag_ops MCAP_OPS = {mcap_open, mcap_next, mcap_rewind, mcap_close};

sensim_bag *sensim_bag_open_mcap(const char *path)
{
    return sensim_bag_open_with_(path, SENSIM_BAG_MCAP, &MCAP_OPS, sizeof(mcap_impl));
}

/* ==================================================================== */
/* writing                                                               */
/* ==================================================================== */

#define CHUNK_TARGET ((size_t)1 << 20)

typedef struct wtopic {
    char *name, *type, *definition;
    uint16_t schema_id; /* shared by topics of one type */
    uint64_t count;
    uint32_t seq;
    /* message index of the current chunk */
    uint8_t *mi; /* (log_time u64, offset u64) pairs */
    size_t nmi, cap_mi;
    int in_chunk_list;
} wtopic;

typedef struct wchunk_index {
    uint64_t t0, t1, off, len, mi_len, csize, usize;
    uint16_t *chan;   /* channels with message index records */
    uint64_t *mi_off; /* their offsets */
    size_t nchan;
} wchunk_index;

typedef struct mcapw_impl {
    sensim_afile *af;
    FILE *f;
    uint64_t pos;
    uint32_t crc;     /* running CRC of the section being written */
    wtopic *topics;
    size_t ntopics;
    uint16_t nschemas;
    /* current chunk */
    uint8_t *cb;
    size_t clen, ccap;
    uint64_t ct0, ct1;
    size_t *ctopics; /* topics with messages in the current chunk, in first-use order */
    size_t nct;
    uint8_t *zb; /* compressed chunk */
    size_t zcap;
    ZSTD_CCtx *zc;
    wchunk_index *ci;
    size_t nci, cap_ci;
    uint64_t nmsg, t_min, t_max;
} mcapw_impl;

static mcapw_impl *WIMPL(sensim_bag_writer *w) { return (mcapw_impl *)w->impl; }

static sensim_status wput(sensim_bag_writer *w, const void *p, size_t n)
{
    mcapw_impl *m = WIMPL(w);
    if (n && fwrite(p, 1, n, m->f) != n)
        return sensim_error(SENSIM_EIO, "%s: write failed: %s", w->path, strerror(errno));
    m->crc = sensim_crc32_(m->crc, p, n);
    m->pos += n;
    return SENSIM_OK;
}

/* A small growable byte buffer for composing records. */
typedef struct wbuf {
    uint8_t *p;
    size_t n, cap;
    int oom;
} wbuf;

static void wb_put(wbuf *b, const void *p, size_t n)
{
    if (b->oom)
        return;
    if (sensim_reserve_(&b->p, &b->cap, b->n + n, 1, 256)) {
        b->oom = 1;
        return;
    }
    if (n)
        memcpy(b->p + b->n, p, n);
    b->n += n;
}
static void wb_u8(wbuf *b, uint8_t v) { wb_put(b, &v, 1); }
static void wb_u16(wbuf *b, uint16_t v)
{
    uint8_t q[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    wb_put(b, q, 2);
}
static void wb_u32(wbuf *b, uint32_t v)
{
    uint8_t q[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    wb_put(b, q, 4);
}
static void wb_u64(wbuf *b, uint64_t v)
{
    wb_u32(b, (uint32_t)v);
    wb_u32(b, (uint32_t)(v >> 32));
}
static void wb_str(wbuf *b, const char *s)
{
    size_t n = strlen(s);
    wb_u32(b, (uint32_t)n);
    wb_put(b, s, n);
}
/* Starts a record; wb_end() fills in its length. */
static size_t wb_begin(wbuf *b, uint8_t op)
{
    wb_u8(b, op);
    size_t at = b->n;
    wb_u64(b, 0);
    return at;
}
static void wb_end(wbuf *b, size_t at)
{
    if (b->oom)
        return;
    uint64_t n = b->n - at - 8;
    for (int i = 0; i < 8; i++)
        b->p[at + i] = (uint8_t)(n >> (8 * i));
}
static void wb_schema(wbuf *b, uint16_t id, const char *name, const char *def)
{
    size_t at = wb_begin(b, OP_SCHEMA);
    wb_u16(b, id);
    wb_str(b, name);
    wb_str(b, "ros2msg");
    wb_str(b, def);
    wb_end(b, at);
}
static void wb_channel(wbuf *b, uint16_t id, uint16_t sid, const char *topic)
{
    size_t at = wb_begin(b, OP_CHANNEL);
    wb_u16(b, id);
    wb_u16(b, sid);
    wb_str(b, topic);
    wb_str(b, "cdr");
    /* Map<string,string> {"offered_qos_profiles": ""} as the ros2 profile asks */
    wb_u32(b, 4 + 20 + 4);
    wb_str(b, "offered_qos_profiles");
    wb_str(b, "");
    wb_end(b, at);
}

static sensim_status wb_flush(sensim_bag_writer *w, wbuf *b)
{
    sensim_status st = b->oom ? sensim_error(SENSIM_ENOMEM, "%s: out of memory", w->path) : wput(w, b->p, b->n);
    b->n = 0;
    return st;
}

static sensim_status mcapw_add_topic(sensim_bag_writer *w, const char *name, const char *type, const char *md5sum,
                                     const char *definition, size_t *topic)
{
    (void)md5sum;
    mcapw_impl *m = WIMPL(w);
    for (size_t i = 0; i < m->ntopics; i++)
        if (strcmp(m->topics[i].name, name) == 0)
            return sensim_error(SENSIM_EINVAL, "%s: topic '%s' declared twice", w->path, name);
    if (m->ntopics >= 65535)
        return sensim_error(SENSIM_EINVAL, "%s: topic '%s': more than 65535 topics", w->path, name);
    wtopic *t = realloc(m->topics, (m->ntopics + 1) * sizeof *t);
    if (!t)
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", w->path);
    m->topics = t;
    t = &m->topics[m->ntopics];
    memset(t, 0, sizeof *t);
    t->name = dup_n((const uint8_t *)name, strlen(name));
    t->type = sensim_bag_ros2_type_(type);
    t->definition = dup_n((const uint8_t *)definition, strlen(definition));
    if (!t->name || !t->type || !t->definition) {
        free(t->name), free(t->type), free(t->definition);
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", w->path);
    }
    /* One schema per type (same name and text). */
    for (size_t i = 0; i < m->ntopics; i++)
        if (strcmp(m->topics[i].type, t->type) == 0 && strcmp(m->topics[i].definition, t->definition) == 0)
            t->schema_id = m->topics[i].schema_id;
    wbuf b = {0};
    if (!t->schema_id) {
        t->schema_id = ++m->nschemas;
        wb_schema(&b, t->schema_id, t->type, t->definition);
    }
    /* Channel ids are topic index + 1 (0 stays free, as many readers expect). */
    wb_channel(&b, (uint16_t)(m->ntopics + 1), t->schema_id, t->name);
    m->ntopics++;
    sensim_status st = wb_flush(w, &b);
    free(b.p);
    if (st == SENSIM_OK && topic)
        *topic = m->ntopics - 1;
    return st;
}

static sensim_status flush_chunk(sensim_bag_writer *w)
{
    mcapw_impl *m = WIMPL(w);
    if (m->clen == 0)
        return SENSIM_OK;
    const char *comp = "";
    const uint8_t *rec = m->cb;
    size_t csize = m->clen;
    if (w->compression == SENSIM_BAG_COMPRESS_ZSTD || w->compression == SENSIM_BAG_COMPRESS_LZ4) {
        LZ4F_preferences_t pr;
        memset(&pr, 0, sizeof pr);
        pr.frameInfo.contentSize = m->clen;
        size_t bound = w->compression == SENSIM_BAG_COMPRESS_ZSTD ? ZSTD_compressBound(m->clen)
                                                                  : LZ4F_compressFrameBound(m->clen, &pr);
        if (bound > m->zcap) {
            uint8_t *z = realloc(m->zb, bound);
            if (!z)
                return sensim_error(SENSIM_ENOMEM, "%s: out of memory", w->path);
            m->zb = z;
            m->zcap = bound;
        }
        if (w->compression == SENSIM_BAG_COMPRESS_ZSTD) {
            if (!m->zc && !(m->zc = ZSTD_createCCtx()))
                return sensim_error(SENSIM_ENOMEM, "%s: out of memory (zstd)", w->path);
            csize = ZSTD_compressCCtx(m->zc, m->zb, m->zcap, m->cb, m->clen, 1);
            if (ZSTD_isError(csize))
                return sensim_error(SENSIM_EINTERNAL, "%s: zstd: %s", w->path, ZSTD_getErrorName(csize));
            comp = "zstd";
        } else {
            csize = LZ4F_compressFrame(m->zb, m->zcap, m->cb, m->clen, &pr);
            if (LZ4F_isError(csize))
                return sensim_error(SENSIM_EINTERNAL, "%s: lz4: %s", w->path, LZ4F_getErrorName(csize));
            comp = "lz4";
        }
        rec = m->zb;
    }
    if (BAG_RESERVE(m->ci, m->cap_ci, m->nci + 1, 64, w->path))
        return sensim_last_status();
    wchunk_index *ci = &m->ci[m->nci];
    memset(ci, 0, sizeof *ci);
    ci->t0 = m->ct0;
    ci->t1 = m->ct1;
    ci->off = m->pos;
    ci->csize = csize;
    ci->usize = m->clen;
    ci->chan = malloc(m->nct * sizeof *ci->chan);
    ci->mi_off = malloc(m->nct * sizeof *ci->mi_off);
    if (!ci->chan || !ci->mi_off) {
        free(ci->chan), free(ci->mi_off);
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", w->path);
    }
    m->nci++;
    wbuf b = {0};
    wb_u8(&b, OP_CHUNK);
    wb_u64(&b, 8 + 8 + 8 + 4 + 4 + strlen(comp) + 8 + csize);
    wb_u64(&b, m->ct0);
    wb_u64(&b, m->ct1);
    wb_u64(&b, m->clen);
    wb_u32(&b, crc32_of(m->cb, m->clen));
    wb_str(&b, comp);
    wb_u64(&b, csize);
    sensim_status st = wb_flush(w, &b);
    if (st == SENSIM_OK)
        st = wput(w, rec, csize);
    ci->len = m->pos - ci->off;
    uint64_t mi_start = m->pos;
    for (size_t k = 0; k < m->nct && st == SENSIM_OK; k++) {
        wtopic *t = &m->topics[m->ctopics[k]];
        ci->chan[k] = (uint16_t)(m->ctopics[k] + 1);
        ci->mi_off[k] = m->pos;
        size_t at = wb_begin(&b, OP_MESSAGE_INDEX);
        wb_u16(&b, ci->chan[k]);
        wb_u32(&b, (uint32_t)(t->nmi * 16));
        wb_put(&b, t->mi, t->nmi * 16);
        wb_end(&b, at);
        st = wb_flush(w, &b);
        t->nmi = 0;
        t->in_chunk_list = 0;
    }
    ci->nchan = m->nct;
    ci->mi_len = m->pos - mi_start;
    free(b.p);
    m->clen = 0;
    m->nct = 0;
    return st;
}

static sensim_status mcapw_write(sensim_bag_writer *w, size_t topic, int64_t recv_ns, const uint8_t *data,
                                 size_t size)
{
    mcapw_impl *m = WIMPL(w);
    if (topic >= m->ntopics)
        return sensim_error(SENSIM_EINVAL, "%s: message %" PRIu64 ": no topic %zu (%zu declared)", w->path, m->nmsg,
                            topic, m->ntopics);
    wtopic *t = &m->topics[topic];
    if (recv_ns < 0)
        return sensim_error(SENSIM_EINVAL, "%s: topic '%s': message %" PRIu64 ": time %" PRId64 " ns before 1970 (MCAP times are unsigned)",
                            w->path, t->name, m->nmsg, recv_ns);
    uint64_t ts = (uint64_t)recv_ns;
    size_t need = 9 + MSG_HEAD + size;
    if (BAG_RESERVE(m->cb, m->ccap, m->clen + need, CHUNK_TARGET + 4096, w->path))
        return sensim_last_status();
    if (BAG_RESERVE(t->mi, t->cap_mi, t->nmi * 16 + 16, 1024, w->path))
        return sensim_last_status();
    if (!t->in_chunk_list) {
        size_t *q = realloc(m->ctopics, (m->nct + 1) * sizeof *q);
        if (!q)
            return sensim_error(SENSIM_ENOMEM, "%s: out of memory", w->path);
        m->ctopics = q;
        m->ctopics[m->nct++] = topic;
        t->in_chunk_list = 1;
    }
    if (m->clen == 0 || ts < m->ct0)
        m->ct0 = ts;
    if (m->clen == 0 || ts > m->ct1)
        m->ct1 = ts;
    uint64_t off = m->clen;
    uint8_t *p = m->cb + m->clen;
    uint64_t n = MSG_HEAD + size;
    p[0] = OP_MESSAGE;
    for (int i = 0; i < 8; i++)
        p[1 + i] = (uint8_t)(n >> (8 * i));
    uint16_t ch = (uint16_t)(topic + 1);
    p[9] = (uint8_t)ch;
    p[10] = (uint8_t)(ch >> 8);
    for (int i = 0; i < 4; i++)
        p[11 + i] = (uint8_t)(t->seq >> (8 * i));
    for (int i = 0; i < 8; i++)
        p[15 + i] = p[23 + i] = (uint8_t)(ts >> (8 * i)); /* log_time, publish_time */
    if (size)
        memcpy(p + 9 + MSG_HEAD, data, size);
    m->clen += need;
    uint8_t *q = t->mi + t->nmi * 16;
    for (int i = 0; i < 8; i++) {
        q[i] = (uint8_t)(ts >> (8 * i));
        q[8 + i] = (uint8_t)(off >> (8 * i));
    }
    t->nmi++;
    t->seq++;
    t->count++;
    if (m->nmsg == 0 || ts < m->t_min)
        m->t_min = ts;
    if (m->nmsg == 0 || ts > m->t_max)
        m->t_max = ts;
    m->nmsg++;
    if (m->clen >= CHUNK_TARGET)
        return flush_chunk(w);
    return SENSIM_OK;
}

static sensim_status mcapw_commit(sensim_bag_writer *w)
{
    mcapw_impl *m = WIMPL(w);
    sensim_status st = flush_chunk(w);
    if (st != SENSIM_OK)
        return st;
    wbuf b = {0};
    /* Data End carries the CRC of everything before it. */
    size_t at = wb_begin(&b, OP_DATA_END);
    wb_u32(&b, m->crc);
    wb_end(&b, at);
    if ((st = wb_flush(w, &b)) != SENSIM_OK)
        goto out;
    uint64_t sstart = m->pos;
    m->crc = 0;
    uint64_t gstart[4], glen[4];
    static const uint8_t gop[4] = {OP_SCHEMA, OP_CHANNEL, OP_STATISTICS, OP_CHUNK_INDEX};
    /* schemas */
    gstart[0] = m->pos;
    for (size_t i = 0; i < m->ntopics; i++) {
        int first = 1;
        for (size_t j = 0; j < i; j++)
            first &= m->topics[j].schema_id != m->topics[i].schema_id;
        if (first)
            wb_schema(&b, m->topics[i].schema_id, m->topics[i].type, m->topics[i].definition);
    }
    if ((st = wb_flush(w, &b)) != SENSIM_OK)
        goto out;
    glen[0] = m->pos - gstart[0];
    /* channels */
    gstart[1] = m->pos;
    for (size_t i = 0; i < m->ntopics; i++)
        wb_channel(&b, (uint16_t)(i + 1), m->topics[i].schema_id, m->topics[i].name);
    if ((st = wb_flush(w, &b)) != SENSIM_OK)
        goto out;
    glen[1] = m->pos - gstart[1];
    /* statistics */
    gstart[2] = m->pos;
    at = wb_begin(&b, OP_STATISTICS);
    wb_u64(&b, m->nmsg);
    wb_u16(&b, m->nschemas);
    wb_u32(&b, (uint32_t)m->ntopics);
    wb_u32(&b, 0); /* attachments */
    wb_u32(&b, 0); /* metadata */
    wb_u32(&b, (uint32_t)m->nci);
    wb_u64(&b, m->nmsg ? m->t_min : 0);
    wb_u64(&b, m->nmsg ? m->t_max : 0);
    size_t nwith = 0;
    for (size_t i = 0; i < m->ntopics; i++)
        nwith += m->topics[i].count > 0;
    wb_u32(&b, (uint32_t)(nwith * 10));
    for (size_t i = 0; i < m->ntopics; i++)
        if (m->topics[i].count) {
            wb_u16(&b, (uint16_t)(i + 1));
            wb_u64(&b, m->topics[i].count);
        }
    wb_end(&b, at);
    if ((st = wb_flush(w, &b)) != SENSIM_OK)
        goto out;
    glen[2] = m->pos - gstart[2];
    /* chunk indexes */
    gstart[3] = m->pos;
    for (size_t i = 0; i < m->nci; i++) {
        const wchunk_index *c = &m->ci[i];
        at = wb_begin(&b, OP_CHUNK_INDEX);
        wb_u64(&b, c->t0);
        wb_u64(&b, c->t1);
        wb_u64(&b, c->off);
        wb_u64(&b, c->len);
        wb_u32(&b, (uint32_t)(c->nchan * 10));
        for (size_t k = 0; k < c->nchan; k++) {
            wb_u16(&b, c->chan[k]);
            wb_u64(&b, c->mi_off[k]);
        }
        wb_u64(&b, c->mi_len);
        wb_str(&b, w->compression == SENSIM_BAG_COMPRESS_ZSTD  ? "zstd"
                   : w->compression == SENSIM_BAG_COMPRESS_LZ4 ? "lz4"
                                                               : "");
        wb_u64(&b, c->csize);
        wb_u64(&b, c->usize);
        wb_end(&b, at);
        if (b.n > ((size_t)1 << 20) && (st = wb_flush(w, &b)) != SENSIM_OK)
            goto out;
    }
    if ((st = wb_flush(w, &b)) != SENSIM_OK)
        goto out;
    glen[3] = m->pos - gstart[3];
    /* summary offsets */
    uint64_t sostart = m->pos;
    for (int g = 0; g < 4; g++) {
        if (glen[g] == 0)
            continue;
        at = wb_begin(&b, OP_SUMMARY_OFFSET);
        wb_u8(&b, gop[g]);
        wb_u64(&b, gstart[g]);
        wb_u64(&b, glen[g]);
        wb_end(&b, at);
    }
    /* footer: the summary CRC runs through summary_offset_start */
    wb_u8(&b, OP_FOOTER);
    wb_u64(&b, 20);
    wb_u64(&b, sstart);
    wb_u64(&b, sostart);
    if ((st = wb_flush(w, &b)) != SENSIM_OK)
        goto out;
    uint32_t scrc = m->crc;
    wb_u32(&b, scrc);
    wb_put(&b, MCAP_MAGIC, MCAP_MAGIC_LEN);
    if ((st = wb_flush(w, &b)) != SENSIM_OK)
        goto out;
    sensim_afile *af = m->af;
    m->af = NULL;
    st = sensim_afile_commit(af);
out:
    free(b.p);
    return st;
}

static void mcapw_close(sensim_bag_writer *w)
{
    mcapw_impl *m = WIMPL(w);
    sensim_afile_abort(m->af);
    for (size_t i = 0; i < m->ntopics; i++)
        SENSIM_FREE_ALL(m->topics[i].name, m->topics[i].type, m->topics[i].definition, m->topics[i].mi);
    SENSIM_FREE_ALL(m->topics, m->cb, m->ctopics, m->zb);
    ZSTD_freeCCtx(m->zc);
    for (size_t i = 0; i < m->nci; i++) {
        free(m->ci[i].chan);
        free(m->ci[i].mi_off);
    }
    free(m->ci);
}

static int mcapw_create(sensim_bag_writer *w)
{
    mcapw_impl *m = w->impl;
    if (!(m->af = sensim_afile_open(w->path)))
        return -1;
    m->f = sensim_afile_stream(m->af);
    wbuf b = {0};
    wb_put(&b, MCAP_MAGIC, MCAP_MAGIC_LEN);
    size_t at = wb_begin(&b, OP_HEADER);
    wb_str(&b, "ros2");
    wb_str(&b, "sensim " SENSIM_VERSION);
    wb_end(&b, at);
    sensim_status st = wb_flush(w, &b);
    free(b.p);
    return st != SENSIM_OK ? -1 : 0;
}

static const sensim_bag_writer_ops MCAPW_OPS = {mcapw_create, mcapw_add_topic, mcapw_write, mcapw_commit, mcapw_close};

sensim_bag_writer *sensim_bag_writer_create_mcap(const char *path, sensim_bag_compression compression)
{
    return sensim_bag_writer_create_with_(path, SENSIM_BAG_MCAP, compression, &MCAPW_OPS, sizeof(mcapw_impl));
}
