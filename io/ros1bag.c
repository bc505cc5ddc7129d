/* ROS 1 bag format 2.0, read and written (http://wiki.ros.org/Bags/Format/2.0).
 *
 * A bag is "#ROSBAG V2.0\n", a bag header record (padded to 4096 bytes)
 * whose index_pos points at the index section, then chunk records each
 * followed by one index data record per connection in it, then the index
 * section: connection records and chunk info records. Every record is
 *   u32 header_len, header (fields: u32 len, "name=value"), u32 data_len, data
 * little-endian. Times are u32 sec, u32 nsec.
 *
 * Reading. Opening reads the bag header, the index section and, for every
 * chunk, its record header and index data records (a small part of the file),
 * from which come the topics, their counts and first/last stamps. Messages
 * are then delivered in receive-time order by a k-way merge over chunks: the
 * chunks sorted by start time, a chunk is opened (its index entries read and
 * sorted by time) once the merge reaches its start time, and its data is
 * read and decompressed only when one of its messages is delivered. So a bag
 * whose chunks are in time order holds one chunk at a time; chunks whose
 * time ranges overlap are open together (their decompressed data bounded by
 * R1_CACHE_BYTES, re-read if evicted). Ties in time keep file order: the
 * merge key is (time, chunk position, offset in chunk). Only per-chunk
 * bookkeeping (about 80 bytes a chunk) grows with the bag; no allocation
 * happens per message.
 *
 * Every length and offset read from the file is checked against the file
 * size, the record or the chunk before use. */
#include "bag_internal.h"

#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sensim/afile.h"
#include "../lib/base_internal.h"

#define OP_MSG_DATA 0x02
#define OP_FILE_HEADER 0x03
#define OP_INDEX_DATA 0x04
#define OP_CHUNK 0x05
#define OP_CHUNK_INFO 0x06
#define OP_CONNECTION 0x07

#define MAGIC "#ROSBAG V2.0\n"
#define MAGIC_LEN 13
#define FILE_HEADER_PAD 4096
/* Decompressed chunk data kept for chunks open at the same time (only
 * bags whose chunks overlap in time open several). */
#define R1_CACHE_BYTES ((size_t)256 << 20)
/* The largest chunk read (uncompressed bytes): a guard against corrupt
 * size fields, far above what recorders write (768 KiB plus one message). */
#define R1_MAX_CHUNK ((uint32_t)1 << 30)
/* rosbag's default chunk threshold (uncompressed bytes). */
#define R1_CHUNK_BYTES ((size_t)768 << 10)

enum { COMP_NONE, COMP_BZ2, COMP_LZ4 };
static const char *const comp_name[] = {"none", "bz2", "lz4"};

typedef unsigned long long ull;

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static int64_t rdtime(const uint8_t *p) { return (int64_t)rd32(p) * 1000000000 + (int64_t)rd32(p + 4); }

/* Finds field `name` in a record header. 1 found (*val, *vlen set), 0
 * absent, -1 malformed (a field running past the header or without '='). */
static int hdr_field(const uint8_t *h, size_t n, const char *name, const uint8_t **val, size_t *vlen)
{
    size_t nl = strlen(name), p = 0;
    while (p < n) {
        if (n - p < 4)
            return -1;
        uint32_t fl = rd32(h + p);
        p += 4;
        if (fl > n - p)
            return -1;
        const uint8_t *f = h + p, *eq = memchr(f, '=', fl);
        if (!eq)
            return -1;
        if ((size_t)(eq - f) == nl && memcmp(f, name, nl) == 0) {
            *val = eq + 1;
            *vlen = fl - nl - 1;
            return 1;
        }
        p += fl;
    }
    return 0;
}

/* ======================================================================
 * Reader
 * ====================================================================== */

typedef struct r1_conn {
    uint32_t id;
    size_t topic;
} r1_conn;

typedef struct r1_chunk {
    uint64_t pos;            /* chunk record */
    uint64_t data_pos;       /* its (compressed) data */
    uint64_t idx_pos;        /* the index data records after it */
    uint64_t idx_len;
    int64_t start_ns, end_ns;
    uint32_t csize, usize;
    uint32_t nidx;           /* index data records (connections in the chunk) */
    uint32_t nmsgs;
    int compression;
} r1_chunk;

typedef struct r1_entry {
    int64_t t;
    uint32_t offset;         /* in the uncompressed chunk */
    uint32_t conn;           /* index into r1_reader.conns */
} r1_entry;

typedef struct r1_cursor {
    size_t chunk;
    r1_entry *e;
    size_t n, i, cap;
    uint8_t *data;           /* buffer for the decompressed chunk */
    size_t data_cap;
    int loaded;              /* data holds this chunk */
    uint64_t used;           /* last use, for eviction */
} r1_cursor;

typedef struct r1_reader {
    int fd;
    uint64_t fsize;
    r1_conn *conns;          /* sorted by id */
    size_t nconns;
    r1_chunk *chunks;        /* in file order */
    size_t nchunks;
    size_t *order;           /* chunk indices by (start time, position) */
    /* merge state */
    r1_cursor *cur;          /* cursor pool */
    size_t ncur;
    size_t *heap, nheap;     /* indices into cur */
    size_t *freecur, nfree;
    size_t pending;          /* next chunk (in `order`) to open */
    uint64_t msg_index;
    uint64_t clock;
    size_t cached;           /* bytes of decompressed data held */
    size_t cache_limit;      /* R1_CACHE_BYTES unless a test lowers it */
    /* scratch */
    uint8_t *buf;
    size_t buf_cap;
    LZ4F_dctx *lz4;
} r1_reader;

static sensim_status grow(uint8_t **p, size_t *cap, size_t need, const char *path)
{
    if (need <= *cap)
        return SENSIM_OK;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c = c > SIZE_MAX / 2 ? need : 2 * c;
    uint8_t *q = realloc(*p, c);
    if (!q)
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory (%zu bytes)", path, need);
    *p = q;
    *cap = c;
    return SENSIM_OK;
}

static sensim_status r1_pread(const sensim_bag *bag, r1_reader *r, void *dst, size_t n, uint64_t off,
                              const char *what)
{
    if (off > r->fsize || n > r->fsize - off)
        return sensim_error(SENSIM_EFORMAT,
                            "%s: truncated: %s at byte %llu needs %zu bytes, the file ends at byte %llu", bag->path,
                            what, (ull)off, n, (ull)r->fsize);
    uint8_t *d = dst;
    while (n) {
        ssize_t k = pread(r->fd, d, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return sensim_error(SENSIM_EIO, "%s: reading %s at byte %llu: %s", bag->path, what, (ull)off,
                                k < 0 ? strerror(errno) : "unexpected end of file");
        d += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return SENSIM_OK;
}

/* Reads the record at `off`: its header into r->buf (*hlen bytes), its data
 * length and the position of its data. The data itself is not read. */
static sensim_status r1_record(const sensim_bag *bag, r1_reader *r, uint64_t off, const char *what, size_t *hlen,
                               uint32_t *dlen, uint64_t *data_pos)
{
    uint8_t b4[4];
    sensim_status st = r1_pread(bag, r, b4, 4, off, what);
    if (st)
        return st;
    uint32_t hl = rd32(b4);
    if ((uint64_t)hl > r->fsize - off - 4)
        return sensim_error(SENSIM_EFORMAT,
                            "%s: truncated: %s at byte %llu: header length %u runs past the end of the file (%llu bytes)",
                            bag->path, what, (ull)off, hl, (ull)r->fsize);
    if ((st = grow(&r->buf, &r->buf_cap, hl, bag->path)) || (st = r1_pread(bag, r, r->buf, hl, off + 4, what)) ||
        (st = r1_pread(bag, r, b4, 4, off + 4 + hl, what)))
        return st;
    uint32_t dl = rd32(b4);
    uint64_t dp = off + 8 + hl;
    if ((uint64_t)dl > r->fsize - dp)
        return sensim_error(SENSIM_EFORMAT,
                            "%s: truncated: %s at byte %llu: data length %u runs past the end of the file "
                            "(%llu bytes)",
                            bag->path, what, (ull)off, dl, (ull)r->fsize);
    *hlen = hl;
    *dlen = dl;
    *data_pos = dp;
    return SENSIM_OK;
}

/* A required fixed-size field of the header in r->buf. */
static sensim_status r1_field(const sensim_bag *bag, const uint8_t *h, size_t hl, const char *name, size_t size,
                              const uint8_t **val, const char *what, uint64_t off)
{
    size_t vl = 0;
    int k = hdr_field(h, hl, name, val, &vl);
    if (k < 0)
        return sensim_error(SENSIM_EFORMAT, "%s: %s at byte %llu: malformed record header", bag->path, what,
                            (ull)off);
    if (k == 0)
        return sensim_error(SENSIM_EFORMAT, "%s: %s at byte %llu: no '%s' field", bag->path, what, (ull)off, name);
    if (size && vl != size)
        return sensim_error(SENSIM_EFORMAT, "%s: %s at byte %llu: field '%s' has %zu bytes, expected %zu",
                            bag->path, what, (ull)off, name, vl, size);
    return SENSIM_OK;
}

static sensim_status r1_op(const sensim_bag *bag, const uint8_t *h, size_t hl, int *op, const char *what,
                           uint64_t off)
{
    const uint8_t *v;
    sensim_status st = r1_field(bag, h, hl, "op", 1, &v, what, off);
    if (st == SENSIM_OK)
        *op = v[0];
    return st;
}

static int cmp_conn(const void *a, const void *b)
{
    uint32_t x = ((const r1_conn *)a)->id, y = ((const r1_conn *)b)->id;
    return (x > y) - (x < y);
}

static size_t r1_conn_find(const r1_reader *r, uint32_t id)
{
    r1_conn key;
    key.id = id;
    return bag_find(&key, r->conns, r->nconns, sizeof *r->conns, cmp_conn);
}

/* qsort's answer for (time ta, position pa) against (tb, pb): by time,
 * then position; what entries, chunks and written entries sort by. */
static int cmp_time_pos(int64_t ta, int64_t tb, uint64_t pa, uint64_t pb)
{
    if (ta != tb)
        return (ta > tb) - (ta < tb);
    return (pa > pb) - (pa < pb);
}

static int cmp_entry(const void *a, const void *b)
{
    const r1_entry *x = a, *y = b;
    return cmp_time_pos(x->t, y->t, x->offset, y->offset);
}

/* Reads the index data records of chunk `ci` into cursor entries (sorted
 * by time, then offset, when `sort`). Checks every entry against the chunk. */
static sensim_status r1_load_entries(sensim_bag *bag, r1_reader *r, size_t ci, r1_cursor *c, int sort)
{
    const r1_chunk *ch = &r->chunks[ci];
    sensim_status st;
    if ((st = grow(&r->buf, &r->buf_cap, ch->idx_len, bag->path)) ||
        (st = r1_pread(bag, r, r->buf, ch->idx_len, ch->idx_pos, "index data")))
        return st;
    if (c->cap < ch->nmsgs) {
        r1_entry *e = realloc(c->e, (ch->nmsgs ? ch->nmsgs : 1) * sizeof *e);
        if (!e)
            return sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
        c->e = e;
        c->cap = ch->nmsgs;
    }
    c->chunk = ci;
    c->n = c->i = 0;
    const uint8_t *b = r->buf;
    size_t p = 0;
    int sorted = 1;
    for (uint32_t k = 0; k < ch->nidx; k++) {
        uint64_t at = ch->idx_pos + p;
        /* idx_len was measured at open: each record fits. */
        uint32_t hl = rd32(b + p);
        const uint8_t *h = b + p + 4, *v;
        uint32_t dl = rd32(h + hl);
        const uint8_t *d = h + hl + 4;
        p += 8 + (size_t)hl + dl;
        if ((st = r1_field(bag, h, hl, "ver", 4, &v, "index data record", at)))
            return st;
        if (rd32(v) != 1)
            return sensim_error(SENSIM_EUNSUPPORTED, "%s: index data record at byte %llu: version %u (1 is read)",
                                bag->path, (ull)at, rd32(v));
        if ((st = r1_field(bag, h, hl, "conn", 4, &v, "index data record", at)))
            return st;
        uint32_t id = rd32(v);
        size_t conn = r1_conn_find(r, id);
        if (conn == (size_t)-1)
            return sensim_error(SENSIM_EFORMAT, "%s: index data record at byte %llu: unknown connection %u",
                                bag->path, (ull)at, id);
        if ((st = r1_field(bag, h, hl, "count", 4, &v, "index data record", at)))
            return st;
        uint32_t count = rd32(v);
        if ((uint64_t)count * 12 != dl || count > ch->nmsgs - c->n)
            return sensim_error(SENSIM_EFORMAT,
                                "%s: index data record at byte %llu: count %u does not fit its %u data bytes or "
                                "the chunk's %u messages",
                                bag->path, (ull)at, count, dl, ch->nmsgs);
        for (uint32_t j = 0; j < count; j++) {
            r1_entry *e = &c->e[c->n++];
            e->t = rdtime(d + 12 * (size_t)j);
            e->offset = rd32(d + 12 * (size_t)j + 8);
            e->conn = (uint32_t)conn;
            if (e->t < ch->start_ns || e->t > ch->end_ns || e->offset >= ch->usize)
                return sensim_error(SENSIM_EFORMAT,
                                    "%s: chunk at byte %llu: index entry %u of connection %u (time %lld ns, offset "
                                    "%u) lies outside the chunk (times %lld..%lld ns, %u bytes)",
                                    bag->path, (ull)ch->pos, j, id, (long long)e->t, e->offset,
                                    (long long)ch->start_ns, (long long)ch->end_ns, ch->usize);
            if (c->n > 1 && cmp_entry(e - 1, e) > 0)
                sorted = 0;
        }
    }
    if (c->n != ch->nmsgs)
        return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %llu: index data lists %zu messages, chunk info %u",
                            bag->path, (ull)ch->pos, c->n, ch->nmsgs);
    if (sort && !sorted)
        qsort(c->e, c->n, sizeof *c->e, cmp_entry);
    return SENSIM_OK;
}

/* Reads and decompresses the data of the cursor's chunk. */
static sensim_status r1_load_data(sensim_bag *bag, r1_reader *r, r1_cursor *c)
{
    const r1_chunk *ch = &r->chunks[c->chunk];
    sensim_status st = grow(&c->data, &c->data_cap, ch->usize ? ch->usize : 1, bag->path);
    if (st)
        return st;
    if (ch->compression == COMP_NONE)
        return r1_pread(bag, r, c->data, ch->usize, ch->data_pos, "chunk data");
    if ((st = grow(&r->buf, &r->buf_cap, ch->csize, bag->path)) ||
        (st = r1_pread(bag, r, r->buf, ch->csize, ch->data_pos, "chunk data")))
        return st;
    if (ch->compression == COMP_BZ2) {
        unsigned int out = ch->usize;
        int k = BZ2_bzBuffToBuffDecompress((char *)c->data, &out, (char *)r->buf, ch->csize, 0, 0);
        if (k != BZ_OK || out != ch->usize)
            return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %llu: bz2 data corrupt (%s)", bag->path,
                                (ull)ch->pos,
                                k == BZ_OK                ? "size differs from the chunk header"
                                : k == BZ_DATA_ERROR      ? "bad data or checksum"
                                : k == BZ_DATA_ERROR_MAGIC ? "no bz2 magic"
                                : k == BZ_UNEXPECTED_EOF  ? "data ends early"
                                : k == BZ_OUTBUFF_FULL    ? "decompresses to more than the chunk header says"
                                                          : "libbz2 error");
        return SENSIM_OK;
    }
    /* lz4 frame (roslz4 writes standard LZ4 frames). */
    if (!r->lz4 && LZ4F_isError(LZ4F_createDecompressionContext(&r->lz4, LZ4F_VERSION)))
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory (lz4)", bag->path);
    LZ4F_resetDecompressionContext(r->lz4);
    size_t in_done = 0, out_done = 0, hint = 1;
    while (in_done < ch->csize && hint != 0) {
        size_t in = ch->csize - in_done, out = ch->usize - out_done;
        hint = LZ4F_decompress(r->lz4, c->data + out_done, &out, r->buf + in_done, &in, NULL);
        if (LZ4F_isError(hint))
            return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %llu: lz4 data corrupt (%s)", bag->path,
                                (ull)ch->pos, LZ4F_getErrorName(hint));
        in_done += in;
        out_done += out;
        if (in == 0 && out == 0)
            break;
    }
    if (hint != 0 || out_done != ch->usize)
        return sensim_error(SENSIM_EFORMAT,
                            "%s: chunk at byte %llu: lz4 data corrupt (%s: %zu of %u bytes decompressed)", bag->path,
                            (ull)ch->pos, hint != 0 ? "frame incomplete" : "size differs from the chunk header",
                            out_done, ch->usize);
    return SENSIM_OK;
}

static bag_key r1_key(const void *impl, size_t c)
{
    const r1_reader *r = impl;
    const r1_cursor *cu = &r->cur[c];
    return (bag_key){(uint64_t)cu->e[cu->i].t, r->chunks[cu->chunk].pos, cu->e[cu->i].offset};
}

static void r1_drop_data(r1_reader *r, r1_cursor *cu)
{
    if (cu->loaded)
        r->cached -= r->chunks[cu->chunk].usize;
    cu->loaded = 0;
}

static void r1_release(r1_reader *r, size_t c)
{
    r1_cursor *cu = &r->cur[c];
    r1_drop_data(r, cu);
    /* The buffer stays: the message just delivered may point into it. */
    r->freecur[r->nfree++] = c;
}

/* Opens chunk `ci` as a cursor on the heap (nothing when it is empty). */
static sensim_status r1_open_chunk(sensim_bag *bag, r1_reader *r, size_t ci)
{
    size_t c = r->nfree ? r->freecur[--r->nfree] : r->ncur++; /* the pool has room for every chunk */
    r1_cursor *cu = &r->cur[c];
    cu->loaded = 0;
    cu->used = 0;
    /* A slot reused: the caller is done with the message that may have
     * pointed into its buffer; a large one is not kept for the next chunk. */
    if (cu->data_cap > r->cache_limit / 8) {
        free(cu->data);
        cu->data = NULL;
        cu->data_cap = 0;
    }
    sensim_status st = r1_load_entries(bag, r, ci, cu, 1);
    if (st || cu->n == 0)
        r->freecur[r->nfree++] = c;
    else
        bag_heap_push(r->heap, &r->nheap, c, r1_key, r);
    return st;
}

/* Makes sure the cursor's chunk data is in memory, first evicting the least
 * recently used data of other open chunks beyond R1_CACHE_BYTES (it is read
 * again if needed). */
static sensim_status r1_need_data(sensim_bag *bag, r1_reader *r, size_t c)
{
    r1_cursor *cu = &r->cur[c];
    cu->used = ++r->clock;
    if (cu->loaded)
        return SENSIM_OK;
    size_t need = r->chunks[cu->chunk].usize;
    while (r->cached + need > r->cache_limit) {
        r1_cursor *old = NULL;
        for (size_t k = 0; k < r->nheap; k++) {
            r1_cursor *o = &r->cur[r->heap[k]];
            if (o != cu && o->loaded && (!old || o->used < old->used))
                old = o;
        }
        if (!old)
            break;
        r1_drop_data(r, old);
        free(old->data);
        old->data = NULL;
        old->data_cap = 0;
    }
    sensim_status st = r1_load_data(bag, r, cu);
    if (st)
        return st;
    cu->loaded = 1;
    r->cached += need;
    return SENSIM_OK;
}

/* Parses the message data record at entry e of chunk data: checks op,
 * connection and time against the index entry. */
static sensim_status r1_message(sensim_bag *bag, r1_reader *r, const r1_cursor *cu, const r1_entry *e,
                                uint64_t index, const uint8_t **data, uint32_t *size)
{
    const r1_chunk *ch = &r->chunks[cu->chunk];
    const uint8_t *b = cu->data;
    size_t n = ch->usize, off = e->offset;
    const r1_conn *cn = &r->conns[e->conn];
    const char *why;
    if (n - off < 8 || rd32(b + off) > n - off - 8) {
        why = "record header runs past the chunk";
        goto bad;
    }
    uint32_t hl = rd32(b + off);
    const uint8_t *h = b + off + 4;
    uint32_t dl = rd32(h + hl);
    if (dl > n - off - 8 - hl) {
        why = "message data runs past the chunk";
        goto bad;
    }
    /* The fields of a message record: op, conn, time (any order). */
    int op = -1;
    int64_t t = -1;
    uint32_t id = 0;
    int have_id = 0;
    for (size_t p = 0; p < hl;) {
        if (hl - p < 4 || rd32(h + p) > hl - p - 4) {
            why = "malformed record header";
            goto bad;
        }
        uint32_t fl = rd32(h + p);
        const uint8_t *f = h + p + 4;
        p += 4 + (size_t)fl;
        if (fl == 4 && memcmp(f, "op=", 3) == 0)
            op = f[3];
        else if (fl == 9 && memcmp(f, "conn=", 5) == 0)
            id = rd32(f + 5), have_id = 1;
        else if (fl == 13 && memcmp(f, "time=", 5) == 0)
            t = rdtime(f + 5);
    }
    if (op != OP_MSG_DATA) {
        why = "no message data record at the offset the index gives";
        goto bad;
    }
    if (!have_id || id != cn->id || t != e->t) {
        why = "message record disagrees with the index (connection or time)";
        goto bad;
    }
    *data = h + hl + 4;
    *size = dl;
    return SENSIM_OK;
bad:
    return sensim_error(SENSIM_EFORMAT, "%s: topic '%s': message %llu: chunk at byte %llu, offset %u: %s", bag->path,
                        bag->topics[cn->topic].name, (ull)index, (ull)ch->pos, e->offset, why);
}

static int r1_next(sensim_bag *bag, sensim_bag_msg *msg)
{
    r1_reader *r = bag->impl;
    for (;;) {
        /* Open every chunk that starts no later than the earliest pending
         * message: none of its messages can come before one already open
         * otherwise. */
        while (r->pending < r->nchunks) {
            size_t ci = r->order[r->pending];
            if (r->nheap) {
                const r1_cursor *top = &r->cur[r->heap[0]];
                if (r->chunks[ci].start_ns > top->e[top->i].t)
                    break;
            }
            r->pending++;
            if (r1_open_chunk(bag, r, ci) != SENSIM_OK)
                return -1;
        }
        if (r->nheap == 0)
            return 0;
        size_t c = r->heap[0];
        r1_cursor *cu = &r->cur[c];
        const r1_entry *e = &cu->e[cu->i];
        uint64_t index = r->msg_index++;
        size_t topic = r->conns[e->conn].topic;
        int want = bag->selected[topic];
        if (want) {
            const uint8_t *data = NULL;
            uint32_t size = 0;
            if (r1_need_data(bag, r, c) != SENSIM_OK) {
                /* "run.bag: chunk at byte N: ..." becomes "run.bag: topic
                 * '/imu': message 12: chunk at byte N: ...". */
                char why[512];
                size_t pl = strlen(bag->path);
                const char *e = sensim_last_error();
                snprintf(why, sizeof why, "%s", strncmp(e, bag->path, pl) == 0 && e[pl] == ':' ? e + pl + 2 : e);
                sensim_error(sensim_last_status(), "%s: topic '%s': message %llu: %s", bag->path,
                             bag->topics[topic].name, (ull)index, why);
                return -1;
            }
            if (r1_message(bag, r, cu, e, index, &data, &size) != SENSIM_OK)
                return -1;
            msg->topic = topic;
            msg->recv_ns = e->t;
            msg->index = index;
            msg->data = data;
            msg->size = size;
        }
        /* Advance; a finished cursor is released, but its buffer is not
         * reused before the next call, so msg->data stays valid. */
        if (++cu->i == cu->n) {
            r->heap[0] = r->heap[--r->nheap];
            r1_release(r, c);
        }
        if (r->nheap)
            bag_heap_down(r->heap, r->nheap, 0, r1_key, r);
        if (want)
            return 1;
    }
}

static sensim_status r1_rewind(sensim_bag *bag)
{
    r1_reader *r = bag->impl;
    while (r->nheap)
        r1_release(r, r->heap[--r->nheap]);
    r->pending = 0;
    r->msg_index = 0;
    return SENSIM_OK;
}

static void r1_close(sensim_bag *bag)
{
    r1_reader *r = bag->impl;
    if (r->fd >= 0)
        close(r->fd);
    for (size_t k = 0; k < r->ncur; k++) {
        free(r->cur[k].e);
        free(r->cur[k].data);
    }
    SENSIM_FREE_ALL(r->cur, r->heap, r->freecur, r->conns, r->chunks, r->order, r->buf);
    if (r->lz4)
        LZ4F_freeDecompressionContext(r->lz4);
}

static int r1_open(sensim_bag *bag);
static const sensim_bag_ops r1_ops = {r1_open, r1_next, r1_rewind, r1_close};

void sensim_bag_ros1_cache_limit(sensim_bag *bag, size_t bytes)
{
    if (bag->ops == &r1_ops)
        ((r1_reader *)bag->impl)->cache_limit = bytes;
}

/* A string field of a connection header, copied NUL-terminated into *out
 * (malloc'd). */
static sensim_status r1_str_field(const sensim_bag *bag, const uint8_t *h, size_t hl, const char *name,
                                  char **out, int required, uint64_t off)
{
    const uint8_t *v;
    size_t vl = 0;
    int k = hdr_field(h, hl, name, &v, &vl);
    if (k < 0)
        return sensim_error(SENSIM_EFORMAT, "%s: connection record at byte %llu: malformed header", bag->path,
                            (ull)off);
    if (k == 0) {
        if (required)
            return sensim_error(SENSIM_EFORMAT, "%s: connection record at byte %llu: no '%s' field", bag->path,
                                (ull)off, name);
        v = (const uint8_t *)"";
        vl = 0;
    }
    char *s = malloc(vl + 1);
    if (!s)
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
    memcpy(s, v, vl);
    s[vl] = '\0';
    *out = s;
    return SENSIM_OK;
}

/* A connection record of the index section: its topic joins (or creates)
 * the bag's topic of that name. */
static sensim_status r1_read_connection(sensim_bag *bag, r1_reader *r, uint64_t off, size_t hl, uint32_t dl,
                                        uint64_t dpos)
{
    const uint8_t *v;
    sensim_status st = r1_field(bag, r->buf, hl, "conn", 4, &v, "connection record", off);
    if (st)
        return st;
    uint32_t id = rd32(v);
    for (size_t k = 0; k < r->nconns; k++)
        if (r->conns[k].id == id)
            return sensim_error(SENSIM_EFORMAT, "%s: connection record at byte %llu: connection %u defined twice",
                                bag->path, (ull)off, id);
    char *topic = NULL, *type = NULL, *md5 = NULL, *def = NULL;
    if ((st = r1_str_field(bag, r->buf, hl, "topic", &topic, 1, off)))
        return st;
    /* The data is the connection header: type, md5sum, message_definition. */
    if ((st = grow(&r->buf, &r->buf_cap, dl, bag->path)) ||
        (st = r1_pread(bag, r, r->buf, dl, dpos, "connection record")) ||
        (st = r1_str_field(bag, r->buf, dl, "type", &type, 1, off)) ||
        (st = r1_str_field(bag, r->buf, dl, "md5sum", &md5, 1, off)) ||
        (st = r1_str_field(bag, r->buf, dl, "message_definition", &def, 0, off)))
        goto done;
    size_t t = sensim_bag_topic_index_(bag, topic);
    if (t == (size_t)-1) {
        st = sensim_bag_add_topic_(bag, topic, type, md5, def, SENSIM_ENC_ROS1, &t);
    } else {
        const sensim_bag_topic *bt = &bag->topics[t];
        if (strcmp(bt->type, type) != 0 || strcmp(bt->md5sum, md5) != 0)
            st = sensim_error(SENSIM_EFORMAT,
                              "%s: topic '%s': connections disagree: type %s (md5sum %s) and type %s (md5sum %s, "
                              "connection %u)",
                              bag->path, topic, bt->type, bt->md5sum, type, md5, id);
    }
    if (st == SENSIM_OK) {
        r->conns[r->nconns].id = id;
        r->conns[r->nconns].topic = t;
        r->nconns++;
    }
done:
    free(topic), free(type), free(md5), free(def);
    return st;
}

/* A chunk info record: the chunk's position and time range, and the
 * chunk record header and index data records found there. */
static sensim_status r1_read_chunk_info(sensim_bag *bag, r1_reader *r, uint64_t off, size_t hl, uint32_t dl,
                                        uint64_t dpos, uint64_t index_pos)
{
    const char *what = "chunk info record";
    const uint8_t *v;
    sensim_status st;
    r1_chunk *ch = &r->chunks[r->nchunks];
    memset(ch, 0, sizeof *ch);
    if ((st = r1_field(bag, r->buf, hl, "ver", 4, &v, what, off)))
        return st;
    if (rd32(v) != 1)
        return sensim_error(SENSIM_EUNSUPPORTED, "%s: chunk info record at byte %llu: version %u (1 is read)",
                            bag->path, (ull)off, rd32(v));
    if ((st = r1_field(bag, r->buf, hl, "chunk_pos", 8, &v, what, off)))
        return st;
    ch->pos = rd64(v);
    if ((st = r1_field(bag, r->buf, hl, "start_time", 8, &v, what, off)))
        return st;
    ch->start_ns = rdtime(v);
    if ((st = r1_field(bag, r->buf, hl, "end_time", 8, &v, what, off)))
        return st;
    ch->end_ns = rdtime(v);
    if ((st = r1_field(bag, r->buf, hl, "count", 4, &v, what, off)))
        return st;
    uint32_t count = rd32(v);
    if ((uint64_t)count * 8 != dl)
        return sensim_error(SENSIM_EFORMAT, "%s: chunk info record at byte %llu: count %u but %u data bytes",
                            bag->path, (ull)off, count, dl);
    if (ch->pos < MAGIC_LEN || ch->pos >= index_pos || ch->end_ns < ch->start_ns)
        return sensim_error(SENSIM_EFORMAT,
                            "%s: chunk info record at byte %llu: chunk position %llu or time range %lld..%lld ns "
                            "invalid",
                            bag->path, (ull)off, (ull)ch->pos, (long long)ch->start_ns, (long long)ch->end_ns);
    /* Message counts per connection. */
    if ((st = grow(&r->buf, &r->buf_cap, dl, bag->path)) || (st = r1_pread(bag, r, r->buf, dl, dpos, what)))
        return st;
    uint64_t nmsgs = 0;
    for (uint32_t k = 0; k < count; k++) {
        uint32_t id = rd32(r->buf + 8 * (size_t)k);
        if (r1_conn_find(r, id) == (size_t)-1)
            return sensim_error(SENSIM_EFORMAT, "%s: chunk info record at byte %llu: unknown connection %u",
                                bag->path, (ull)off, id);
        nmsgs += rd32(r->buf + 8 * (size_t)k + 4);
    }
    if (nmsgs > UINT32_MAX)
        return sensim_error(SENSIM_EFORMAT, "%s: chunk info record at byte %llu: %llu messages in one chunk",
                            bag->path, (ull)off, (ull)nmsgs);
    ch->nmsgs = (uint32_t)nmsgs;
    ch->nidx = count;

    /* The chunk record: compression and sizes. */
    size_t chl;
    uint32_t cdl;
    uint64_t cdp;
    char where[64];
    snprintf(where, sizeof where, "chunk at byte %llu", (ull)ch->pos);
    if ((st = r1_record(bag, r, ch->pos, where, &chl, &cdl, &cdp)))
        return st;
    int op;
    if ((st = r1_op(bag, r->buf, chl, &op, "chunk", ch->pos)))
        return st;
    if (op != OP_CHUNK)
        return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %llu: record op 0x%02x, expected a chunk (0x05)",
                            bag->path, (ull)ch->pos, op);
    const uint8_t *cv;
    size_t cvl;
    int k = hdr_field(r->buf, chl, "compression", &cv, &cvl);
    if (k <= 0)
        return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %llu: %s", bag->path, (ull)ch->pos,
                            k < 0 ? "malformed record header" : "no 'compression' field");
    ch->compression = -1;
    for (int c = COMP_NONE; c <= COMP_LZ4; c++)
        if (cvl == strlen(comp_name[c]) && memcmp(cv, comp_name[c], cvl) == 0)
            ch->compression = c;
    if (ch->compression < 0)
        return sensim_error(SENSIM_EUNSUPPORTED, "%s: chunk at byte %llu: unknown compression '%.*s' (none, bz2 or lz4)",
                            bag->path, (ull)ch->pos, (int)(cvl > 32 ? 32 : cvl), (const char *)cv);
    if ((st = r1_field(bag, r->buf, chl, "size", 4, &v, "chunk", ch->pos)))
        return st;
    ch->usize = rd32(v);
    ch->csize = cdl;
    ch->data_pos = cdp;
    if (ch->compression == COMP_NONE && ch->csize != ch->usize)
        return sensim_error(SENSIM_EFORMAT, "%s: chunk at byte %llu: uncompressed chunk of %u bytes says size %u",
                            bag->path, (ull)ch->pos, ch->csize, ch->usize);
    /* The index data records after it: one per connection of the chunk. */
    ch->idx_pos = cdp + cdl;
    uint64_t p = ch->idx_pos;
    for (uint32_t j = 0; j < count; j++) {
        size_t ihl;
        uint32_t idl;
        uint64_t idp;
        if ((st = r1_record(bag, r, p, "index data record", &ihl, &idl, &idp)))
            return st;
        if ((st = r1_op(bag, r->buf, ihl, &op, "index data record", p)))
            return st;
        if (op != OP_INDEX_DATA)
            return sensim_error(SENSIM_EFORMAT,
                                "%s: chunk at byte %llu: record at byte %llu has op 0x%02x, expected index data "
                                "(0x04) for %u connections",
                                bag->path, (ull)ch->pos, (ull)p, op, count);
        p = idp + idl;
    }
    ch->idx_len = p - ch->idx_pos;
    /* Sizes that would make the reader allocate more than the file can
     * justify: 12 index bytes a message; lz4 expands at most 255-fold;
     * no chunk beyond R1_MAX_CHUNK. */
    if ((uint64_t)ch->nmsgs * 12 > ch->idx_len || ch->usize > R1_MAX_CHUNK ||
        (ch->compression == COMP_LZ4 && (uint64_t)ch->usize > 255 * (uint64_t)ch->csize + 65536) ||
        (ch->nmsgs && ch->usize < 8 * (uint64_t)ch->nmsgs))
        return sensim_error(SENSIM_EFORMAT,
                            "%s: chunk at byte %llu: sizes inconsistent (%u messages, %llu index bytes, %u bytes "
                            "compressed, %u uncompressed)",
                            bag->path, (ull)ch->pos, ch->nmsgs, (ull)ch->idx_len, ch->csize, ch->usize);
    r->nchunks++;
    return SENSIM_OK;
}

typedef struct r1_order_key {
    int64_t start;
    uint64_t pos;
    size_t i;
} r1_order_key;

static int cmp_order_key(const void *a, const void *b)
{
    const r1_order_key *x = a, *y = b;
    return cmp_time_pos(x->start, y->start, x->pos, y->pos);
}

static int r1_open(sensim_bag *bag)
{
    const char *path = bag->path;
    r1_reader *r = bag->impl;
    r->cache_limit = R1_CACHE_BYTES;
    if ((r->fd = sensim_bag_open_file_(path, &r->fsize)) < 0)
        return -1;
    uint8_t magic[MAGIC_LEN];
    if (r->fsize < MAGIC_LEN || r1_pread(bag, r, magic, MAGIC_LEN, 0, "magic") || memcmp(magic, MAGIC, MAGIC_LEN)) {
        sensim_error(SENSIM_EFORMAT, "%s: not a ROS 1 bag (no \"#ROSBAG V2.0\" at byte 0)", path);
        return -1;
    }

    /* The bag header record. */
    size_t hl;
    uint32_t dl;
    uint64_t dp;
    int op;
    const uint8_t *v;
    if (r1_record(bag, r, MAGIC_LEN, "bag header record", &hl, &dl, &dp) ||
        r1_op(bag, r->buf, hl, &op, "bag header record", MAGIC_LEN))
        return -1;
    if (op != OP_FILE_HEADER) {
        sensim_error(SENSIM_EFORMAT, "%s: record at byte %d has op 0x%02x, expected the bag header (0x03)", path,
                     MAGIC_LEN, op);
        return -1;
    }
    const uint8_t *ev;
    size_t evl;
    if (hdr_field(r->buf, hl, "encryptor", &ev, &evl) == 1 && evl > 0) {
        sensim_error(SENSIM_EUNSUPPORTED, "%s: encrypted bag (encryptor '%.*s')", path, (int)(evl > 64 ? 64 : evl),
                     (const char *)ev);
        return -1;
    }
    if (r1_field(bag, r->buf, hl, "index_pos", 8, &v, "bag header record", MAGIC_LEN))
        return -1;
    uint64_t index_pos = rd64(v);
    if (r1_field(bag, r->buf, hl, "conn_count", 4, &v, "bag header record", MAGIC_LEN))
        return -1;
    uint32_t conn_count = rd32(v);
    if (r1_field(bag, r->buf, hl, "chunk_count", 4, &v, "bag header record", MAGIC_LEN))
        return -1;
    uint32_t chunk_count = rd32(v);
    if (index_pos == 0) {
        sensim_error(SENSIM_EFORMAT,
                     "%s: bag not indexed (index_pos 0: recording not closed; 'rosbag reindex' repairs it)", path);
        return -1;
    }
    if (index_pos < dp + dl || index_pos > r->fsize) {
        sensim_error(SENSIM_EFORMAT, "%s: truncated: the index starts at byte %llu, the file ends at byte %llu",
                     path, (ull)index_pos, (ull)r->fsize);
        return -1;
    }
    /* Every connection and chunk takes at least 8 bytes of index. */
    if ((uint64_t)conn_count + chunk_count > (r->fsize - index_pos) / 8 + 1) {
        sensim_error(SENSIM_EFORMAT, "%s: truncated: %u connections and %u chunks cannot fit in the index (%llu bytes)",
                     path, conn_count, chunk_count, (ull)(r->fsize - index_pos));
        return -1;
    }
    r->conns = malloc(((size_t)conn_count + 1) * sizeof *r->conns);
    r->chunks = malloc(((size_t)chunk_count + 1) * sizeof *r->chunks);
    if (!r->conns || !r->chunks) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        return -1;
    }

    /* The index section: connection records, then chunk info records. */
    for (uint64_t p = index_pos; p < r->fsize;) {
        if (r1_record(bag, r, p, "index section record", &hl, &dl, &dp) ||
            r1_op(bag, r->buf, hl, &op, "index section record", p))
            return -1;
        if (op == OP_CONNECTION) {
            if (r->nconns == conn_count) {
                sensim_error(SENSIM_EFORMAT, "%s: connection record at byte %llu: more than the %u the header says",
                             path, (ull)p, conn_count);
                return -1;
            }
            if (r1_read_connection(bag, r, p, hl, dl, dp))
                return -1;
            qsort(r->conns, r->nconns, sizeof *r->conns, cmp_conn);
        } else if (op == OP_CHUNK_INFO) {
            if (r->nchunks == chunk_count) {
                sensim_error(SENSIM_EFORMAT, "%s: chunk info record at byte %llu: more than the %u the header says",
                             path, (ull)p, chunk_count);
                return -1;
            }
            if (r1_read_chunk_info(bag, r, p, hl, dl, dp, index_pos))
                return -1;
        } else {
            sensim_error(SENSIM_EFORMAT, "%s: index section: record at byte %llu has op 0x%02x", path, (ull)p, op);
            return -1;
        }
        p = dp + dl;
    }
    if (r->nconns != conn_count || r->nchunks != chunk_count) {
        sensim_error(SENSIM_EFORMAT,
                     "%s: truncated index: %zu of %u connection records and %zu of %u chunk info records", path,
                     r->nconns, conn_count, r->nchunks, chunk_count);
        return -1;
    }

    /* Counts and first/last stamps per topic, from the index entries. */
    r->cur = calloc(r->nchunks + 1, sizeof *r->cur);
    r->heap = malloc((r->nchunks + 1) * sizeof *r->heap);
    r->freecur = malloc((r->nchunks + 1) * sizeof *r->freecur);
    r->order = malloc((r->nchunks + 1) * sizeof *r->order);
    if (!r->cur || !r->heap || !r->freecur || !r->order) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        return -1;
    }
    r->ncur = 1; /* cur[0] is the scratch cursor of this scan */
    for (size_t ci = 0; ci < r->nchunks; ci++) {
        r1_cursor *c = &r->cur[0];
        if (r1_load_entries(bag, r, ci, c, 0))
            return -1;
        for (size_t j = 0; j < c->n; j++) {
            sensim_bag_topic *t = &bag->topics[r->conns[c->e[j].conn].topic];
            t->count++;
            if (c->e[j].t < t->t_first_ns)
                t->t_first_ns = c->e[j].t;
            if (c->e[j].t > t->t_last_ns)
                t->t_last_ns = c->e[j].t;
        }
    }
    r->freecur[r->nfree++] = 0;
    for (size_t t = 0; t < bag->ntopics; t++)
        if (bag->topics[t].count == 0)
            bag->topics[t].t_first_ns = bag->topics[t].t_last_ns = 0;
    /* The merge opens chunks by (start time, position). */
    r1_order_key *key = malloc((r->nchunks + 1) * sizeof *key);
    if (!key) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        return -1;
    }
    for (size_t ci = 0; ci < r->nchunks; ci++)
        key[ci] = (r1_order_key){r->chunks[ci].start_ns, r->chunks[ci].pos, ci};
    qsort(key, r->nchunks, sizeof *key, cmp_order_key);
    for (size_t ci = 0; ci < r->nchunks; ci++)
        r->order[ci] = key[ci].i;
    free(key);
    return 0;
}

sensim_bag *sensim_bag_open_ros1(const char *path)
{
    return sensim_bag_open_with_(path, SENSIM_BAG_ROS1, &r1_ops, sizeof(r1_reader));
}

/* ======================================================================
 * Writer
 * ====================================================================== */

typedef struct w1_entry {
    int64_t t;
    uint32_t offset;
} w1_entry;

typedef struct w1_conn {
    char *topic, *type, *md5, *def;
    int in_file;             /* its connection record was written in a chunk */
    w1_entry *e;             /* index entries in the open chunk */
    size_t n, cap;
} w1_conn;

typedef struct w1_chunkinfo {
    uint64_t pos;
    int64_t start_ns, end_ns;
    size_t counts;           /* first (conn, count) pair in w1_writer.counts */
    uint32_t ncounts;
} w1_chunkinfo;

typedef struct w1_writer {
    sensim_afile *af;
    FILE *f;
    uint64_t pos;            /* bytes written */
    size_t chunk_bytes;      /* threshold */
    w1_conn *conns;
    size_t nconns, cap_conns;
    /* the open chunk (uncompressed) */
    uint8_t *chunk;
    size_t chunk_len, chunk_cap;
    int64_t start_ns, end_ns;
    uint64_t nwritten;
    /* compressed copy */
    uint8_t *cbuf;
    size_t cbuf_cap;
    w1_chunkinfo *chunks;
    size_t nchunks, cap_chunks;
    uint32_t *counts;        /* (conn, count) pairs of every chunk */
    size_t ncounts, cap_counts;
    uint8_t *hdr;            /* scratch for record headers */
    size_t hdr_len, hdr_cap;
} w1_writer;

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static void wr64(uint8_t *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

static void wrtime(uint8_t *p, int64_t ns)
{
    wr32(p, (uint32_t)(ns / 1000000000));
    wr32(p + 4, (uint32_t)(ns % 1000000000));
}

/* Appends a header field name=value to w->hdr. */
static sensim_status w1_field(sensim_bag_writer *bw, const char *name, const void *val, size_t vlen)
{
    w1_writer *w = bw->impl;
    size_t nl = strlen(name), need = w->hdr_len + 4 + nl + 1 + vlen;
    sensim_status st = grow(&w->hdr, &w->hdr_cap, need, bw->path);
    if (st)
        return st;
    uint8_t *p = w->hdr + w->hdr_len;
    wr32(p, (uint32_t)(nl + 1 + vlen));
    memcpy(p + 4, name, nl);
    p[4 + nl] = '=';
    memcpy(p + 5 + nl, val, vlen);
    w->hdr_len = need;
    return SENSIM_OK;
}

static sensim_status w1_field32(sensim_bag_writer *bw, const char *name, uint32_t v)
{
    uint8_t b[4];
    wr32(b, v);
    return w1_field(bw, name, b, 4);
}

static sensim_status w1_field_op(sensim_bag_writer *bw, uint8_t op)
{
    ((w1_writer *)bw->impl)->hdr_len = 0;
    return w1_field(bw, "op", &op, 1);
}

static sensim_status w1_put(sensim_bag_writer *bw, const void *p, size_t n)
{
    w1_writer *w = bw->impl;
    if (n && fwrite(p, 1, n, w->f) != n)
        return sensim_error(SENSIM_EIO, "%s: writing: %s", bw->path, strerror(errno));
    w->pos += n;
    return SENSIM_OK;
}

/* Writes the record whose header is in w->hdr, with `data`, to the file. */
static sensim_status w1_record(sensim_bag_writer *bw, const void *data, size_t dlen)
{
    w1_writer *w = bw->impl;
    uint8_t b[4];
    sensim_status st;
    wr32(b, (uint32_t)w->hdr_len);
    if ((st = w1_put(bw, b, 4)) || (st = w1_put(bw, w->hdr, w->hdr_len)))
        return st;
    wr32(b, (uint32_t)dlen);
    if ((st = w1_put(bw, b, 4)) || (st = w1_put(bw, data, dlen)))
        return st;
    return SENSIM_OK;
}

/* Appends bytes to the open chunk. */
static sensim_status w1_chunk_put(sensim_bag_writer *bw, const void *p, size_t n)
{
    w1_writer *w = bw->impl;
    if (w->chunk_len + n > w->chunk_cap) {
        sensim_status st = grow(&w->chunk, &w->chunk_cap, w->chunk_len + n, bw->path);
        if (st)
            return st;
    }
    memcpy(w->chunk + w->chunk_len, p, n);
    w->chunk_len += n;
    return SENSIM_OK;
}

static sensim_status w1_file_header(sensim_bag_writer *bw, uint64_t index_pos, uint32_t nconns, uint32_t nchunks)
{
    w1_writer *w = bw->impl;
    uint8_t b[8];
    sensim_status st;
    wr64(b, index_pos);
    if ((st = w1_field_op(bw, OP_FILE_HEADER)) || (st = w1_field(bw, "index_pos", b, 8)) ||
        (st = w1_field32(bw, "conn_count", nconns)) || (st = w1_field32(bw, "chunk_count", nchunks)))
        return st;
    /* Padded with spaces so that the header can be rewritten in place. */
    char pad[FILE_HEADER_PAD];
    memset(pad, ' ', sizeof pad);
    return w1_record(bw, pad, FILE_HEADER_PAD - w->hdr_len);
}

/* The connection header (data of a connection record) into w->hdr. */
static sensim_status w1_conn_header(sensim_bag_writer *bw, const w1_conn *c)
{
    w1_writer *w = bw->impl;
    w->hdr_len = 0;
    sensim_status st;
    if ((st = w1_field(bw, "topic", c->topic, strlen(c->topic))) ||
        (st = w1_field(bw, "type", c->type, strlen(c->type))) ||
        (st = w1_field(bw, "md5sum", c->md5, strlen(c->md5))) ||
        (st = w1_field(bw, "message_definition", c->def, strlen(c->def))))
        return st;
    return SENSIM_OK;
}

/* The connection record's two parts, header then data, as one byte string
 * in *out (malloc'd scratch reused through cbuf). */
static sensim_status w1_conn_record(sensim_bag_writer *bw, uint32_t id, uint8_t **out, size_t *len)
{
    w1_writer *w = bw->impl;
    const w1_conn *c = &w->conns[id];
    sensim_status st;
    if ((st = w1_conn_header(bw, c)))
        return st;
    size_t dlen = w->hdr_len;
    uint8_t *data = malloc(dlen ? dlen : 1);
    if (!data)
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", bw->path);
    memcpy(data, w->hdr, dlen);
    if ((st = w1_field_op(bw, OP_CONNECTION)) || (st = w1_field(bw, "topic", c->topic, strlen(c->topic))) ||
        (st = w1_field32(bw, "conn", id))) {
        free(data);
        return st;
    }
    size_t hl = w->hdr_len, n = 8 + hl + dlen;
    uint8_t *r = malloc(n);
    if (!r) {
        free(data);
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", bw->path);
    }
    wr32(r, (uint32_t)hl);
    memcpy(r + 4, w->hdr, hl);
    wr32(r + 4 + hl, (uint32_t)dlen);
    memcpy(r + 8 + hl, data, dlen);
    free(data);
    *out = r;
    *len = n;
    return SENSIM_OK;
}

/* Writes connection `id`'s record through `put` (into the open chunk, or
 * into the index section after the last chunk). */
static sensim_status w1_conn_emit(sensim_bag_writer *bw, uint32_t id,
                                  sensim_status (*put)(sensim_bag_writer *, const void *, size_t))
{
    uint8_t *rec;
    size_t n;
    sensim_status st = w1_conn_record(bw, id, &rec, &n);
    if (st)
        return st;
    st = put(bw, rec, n);
    free(rec);
    return st;
}

static int cmp_wentry(const void *a, const void *b)
{
    const w1_entry *x = a, *y = b;
    return cmp_time_pos(x->t, y->t, x->offset, y->offset);
}

/* Compresses and writes the open chunk, then its index data records. */
static sensim_status w1_flush_chunk(sensim_bag_writer *bw)
{
    w1_writer *w = bw->impl;
    if (w->chunk_len == 0)
        return SENSIM_OK;
    sensim_status st;
    const uint8_t *data = w->chunk;
    size_t clen = w->chunk_len;
    if (w->chunk_len > UINT32_MAX)
        return sensim_error(SENSIM_EINVAL, "%s: chunk of %zu bytes (messages over 4 GiB)", bw->path, w->chunk_len);
    if (bw->compression == SENSIM_BAG_COMPRESS_BZ2) {
        /* libbz2's bound: 1% + 600 bytes more than the input. */
        size_t bound = w->chunk_len + w->chunk_len / 100 + 600;
        if ((st = grow(&w->cbuf, &w->cbuf_cap, bound, bw->path)))
            return st;
        unsigned int out = (unsigned int)bound;
        int k = BZ2_bzBuffToBuffCompress((char *)w->cbuf, &out, (char *)w->chunk, (unsigned int)w->chunk_len, 9, 0,
                                         0);
        if (k != BZ_OK)
            return sensim_error(SENSIM_EINTERNAL, "%s: bz2 compression failed (%d)", bw->path, k);
        data = w->cbuf;
        clen = out;
    } else if (bw->compression == SENSIM_BAG_COMPRESS_LZ4) {
        /* The frame roslz4 writes: 4 MB independent blocks, content
         * checksum, no content size. */
        LZ4F_preferences_t pref;
        memset(&pref, 0, sizeof pref);
        pref.frameInfo.blockSizeID = LZ4F_max4MB;
        pref.frameInfo.blockMode = LZ4F_blockIndependent;
        pref.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
        size_t bound = LZ4F_compressFrameBound(w->chunk_len, &pref);
        if ((st = grow(&w->cbuf, &w->cbuf_cap, bound, bw->path)))
            return st;
        size_t out = LZ4F_compressFrame(w->cbuf, bound, w->chunk, w->chunk_len, &pref);
        if (LZ4F_isError(out))
            return sensim_error(SENSIM_EINTERNAL, "%s: lz4 compression failed (%s)", bw->path,
                                LZ4F_getErrorName(out));
        data = w->cbuf;
        clen = out;
    }
    /* Chunk info first (it records the position). */
    if (BAG_RESERVE(w->chunks, w->cap_chunks, w->nchunks + 1, 64, bw->path))
        return sensim_last_status();
    w1_chunkinfo *ci = &w->chunks[w->nchunks++];
    ci->pos = w->pos;
    ci->start_ns = w->start_ns;
    ci->end_ns = w->end_ns;
    ci->counts = w->ncounts;
    ci->ncounts = 0;
    static const char *const cname[] = {"none", "bz2", "lz4"};
    if ((st = w1_field_op(bw, OP_CHUNK)) ||
        (st = w1_field(bw, "compression", cname[bw->compression], strlen(cname[bw->compression]))) ||
        (st = w1_field32(bw, "size", (uint32_t)w->chunk_len)) || (st = w1_record(bw, data, clen)))
        return st;
    /* One index data record per connection with messages in the chunk,
     * entries sorted by time (ties in write order), as rosbag writes. */
    for (size_t k = 0; k < w->nconns; k++) {
        w1_conn *c = &w->conns[k];
        if (c->n == 0)
            continue;
        int sorted = 1;
        for (size_t j = 1; j < c->n && sorted; j++)
            sorted = c->e[j - 1].t <= c->e[j].t;
        if (!sorted)
            qsort(c->e, c->n, sizeof *c->e, cmp_wentry);
        size_t dlen = 12 * c->n;
        if ((st = grow(&w->cbuf, &w->cbuf_cap, dlen, bw->path)))
            return st;
        for (size_t j = 0; j < c->n; j++) {
            wrtime(w->cbuf + 12 * j, c->e[j].t);
            wr32(w->cbuf + 12 * j + 8, c->e[j].offset);
        }
        if ((st = w1_field_op(bw, OP_INDEX_DATA)) || (st = w1_field32(bw, "conn", (uint32_t)k)) ||
            (st = w1_field32(bw, "ver", 1)) || (st = w1_field32(bw, "count", (uint32_t)c->n)) ||
            (st = w1_record(bw, w->cbuf, dlen)))
            return st;
        if (BAG_RESERVE(w->counts, w->cap_counts, w->ncounts + 2, 256, bw->path))
            return sensim_last_status();
        w->counts[w->ncounts++] = (uint32_t)k;
        w->counts[w->ncounts++] = (uint32_t)c->n;
        ci->ncounts++;
        c->n = 0;
    }
    w->chunk_len = 0;
    return SENSIM_OK;
}

static sensim_status w1_add_topic(sensim_bag_writer *bw, const char *name, const char *type, const char *md5sum,
                                  const char *definition, size_t *topic)
{
    w1_writer *w = bw->impl;
    for (size_t k = 0; k < w->nconns; k++)
        if (strcmp(w->conns[k].topic, name) == 0)
            return sensim_error(SENSIM_EINVAL, "%s: topic '%s' declared twice", bw->path, name);
    if (BAG_RESERVE(w->conns, w->cap_conns, w->nconns + 1, 8, bw->path))
        return sensim_last_status();
    w1_conn *c = &w->conns[w->nconns];
    memset(c, 0, sizeof *c);
    c->topic = strdup(name);
    c->type = strdup(type);
    c->md5 = strdup(*md5sum ? md5sum : "*");
    c->def = strdup(definition);
    if (!c->topic || !c->type || !c->md5 || !c->def) {
        free(c->topic), free(c->type), free(c->md5), free(c->def);
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", bw->path);
    }
    if (topic)
        *topic = w->nconns;
    w->nconns++;
    return SENSIM_OK;
}

static sensim_status w1_write(sensim_bag_writer *bw, size_t topic, int64_t recv_ns, const uint8_t *data,
                              size_t size)
{
    w1_writer *w = bw->impl;
    if (topic >= w->nconns)
        return sensim_error(SENSIM_EINVAL, "%s: message %llu: topic handle %zu not declared (%zu topics)", bw->path,
                            (ull)w->nwritten, topic, w->nconns);
    w1_conn *c = &w->conns[topic];
    if (recv_ns < 0 || recv_ns / 1000000000 > (int64_t)UINT32_MAX)
        return sensim_error(SENSIM_EINVAL, "%s: topic '%s': message %llu: stamp %lld ns outside ROS time (0 .. 2^32 s)",
                            bw->path, c->topic, (ull)w->nwritten, (long long)recv_ns);
    if (size > UINT32_MAX - 64)
        return sensim_error(SENSIM_EINVAL, "%s: topic '%s': message %llu: %zu bytes (at most 4 GiB)", bw->path,
                            c->topic, (ull)w->nwritten, size);
    sensim_status st;
    if (w->chunk_len == 0)
        w->start_ns = w->end_ns = recv_ns;
    if (!c->in_file) {
        /* The connection record goes into the first chunk that uses it. */
        if ((st = w1_conn_emit(bw, (uint32_t)topic, w1_chunk_put)))
            return st;
        c->in_file = 1;
    }
    if ((st = BAG_RESERVE(c->e, c->cap, c->n + 1, 256, bw->path)))
        return st;
    if (w->chunk_len > UINT32_MAX - size - 64)
        return sensim_error(SENSIM_EINVAL, "%s: topic '%s': message %llu: chunk over 4 GiB", bw->path, c->topic,
                            (ull)w->nwritten);
    c->e[c->n].t = recv_ns;
    c->e[c->n].offset = (uint32_t)w->chunk_len;
    c->n++;
    /* The message data record: header op, conn, time; then the data. */
    uint8_t rec[4 + 38 + 4];
    wr32(rec, 38);
    wr32(rec + 4, 4), memcpy(rec + 8, "op=\x02", 4);
    wr32(rec + 12, 9), memcpy(rec + 16, "conn=", 5), wr32(rec + 21, (uint32_t)topic);
    wr32(rec + 25, 13), memcpy(rec + 29, "time=", 5), wrtime(rec + 34, recv_ns);
    wr32(rec + 42, (uint32_t)size);
    if ((st = w1_chunk_put(bw, rec, sizeof rec)) || (st = w1_chunk_put(bw, data, size)))
        return st;
    if (recv_ns < w->start_ns)
        w->start_ns = recv_ns;
    if (recv_ns > w->end_ns)
        w->end_ns = recv_ns;
    w->nwritten++;
    if (w->chunk_len >= w->chunk_bytes)
        return w1_flush_chunk(bw);
    return SENSIM_OK;
}

static sensim_status w1_commit(sensim_bag_writer *bw)
{
    w1_writer *w = bw->impl;
    sensim_status st;
    if ((st = w1_flush_chunk(bw)))
        return st;
    uint64_t index_pos = w->pos;
    for (size_t k = 0; k < w->nconns; k++)
        if ((st = w1_conn_emit(bw, (uint32_t)k, w1_put)))
            return st;
    for (size_t j = 0; j < w->nchunks; j++) {
        const w1_chunkinfo *ci = &w->chunks[j];
        uint8_t b[8];
        if ((st = w1_field_op(bw, OP_CHUNK_INFO)) || (st = w1_field32(bw, "ver", 1)))
            return st;
        wr64(b, ci->pos);
        if ((st = w1_field(bw, "chunk_pos", b, 8)))
            return st;
        wrtime(b, ci->start_ns);
        if ((st = w1_field(bw, "start_time", b, 8)))
            return st;
        wrtime(b, ci->end_ns);
        if ((st = w1_field(bw, "end_time", b, 8)) || (st = w1_field32(bw, "count", ci->ncounts)))
            return st;
        if ((st = grow(&w->cbuf, &w->cbuf_cap, 8 * (size_t)ci->ncounts + 1, bw->path)))
            return st;
        for (uint32_t k = 0; k < 2 * ci->ncounts; k++)
            wr32(w->cbuf + 4 * (size_t)k, w->counts[ci->counts + k]);
        if ((st = w1_record(bw, w->cbuf, 8 * (size_t)ci->ncounts)))
            return st;
    }
    if (w->nchunks > UINT32_MAX)
        return sensim_error(SENSIM_EINVAL, "%s: too many chunks", bw->path);
    if (fseeko(w->f, MAGIC_LEN, SEEK_SET) != 0)
        return sensim_error(SENSIM_EIO, "%s: seeking: %s", bw->path, strerror(errno));
    if ((st = w1_file_header(bw, index_pos, (uint32_t)w->nconns, (uint32_t)w->nchunks)))
        return st;
    sensim_afile *af = w->af;
    w->af = NULL;
    w->f = NULL;
    return sensim_afile_commit(af);
}

static void w1_close(sensim_bag_writer *bw)
{
    w1_writer *w = bw->impl;
    sensim_afile_abort(w->af);
    for (size_t k = 0; k < w->nconns; k++) {
        w1_conn *c = &w->conns[k];
        SENSIM_FREE_ALL(c->topic, c->type, c->md5, c->def, c->e);
    }
    SENSIM_FREE_ALL(w->conns, w->chunk, w->cbuf, w->chunks, w->counts, w->hdr);
}

static int w1_create(sensim_bag_writer *bw)
{
    w1_writer *w = bw->impl;
    w->chunk_bytes = R1_CHUNK_BYTES;
    w->af = sensim_afile_open(bw->path);
    if (!w->af)
        return -1;
    w->f = sensim_afile_stream(w->af);
    return w1_put(bw, MAGIC, MAGIC_LEN) || w1_file_header(bw, 0, 0, 0) ? -1 : 0;
}

static const sensim_bag_writer_ops w1_ops = {w1_create, w1_add_topic, w1_write, w1_commit, w1_close};

sensim_bag_writer *sensim_bag_writer_create_ros1(const char *path, sensim_bag_compression compression)
{
    if (compression != SENSIM_BAG_COMPRESS_NONE && compression != SENSIM_BAG_COMPRESS_BZ2 &&
        compression != SENSIM_BAG_COMPRESS_LZ4) {
        sensim_error(SENSIM_EUNSUPPORTED, "%s: ROS 1 bags are written uncompressed, bz2 or lz4", path);
        return NULL;
    }
    return sensim_bag_writer_create_with_(path, SENSIM_BAG_ROS1, compression, &w1_ops, sizeof(w1_writer));
}

sensim_status sensim_bag_writer_ros1_chunk_size(sensim_bag_writer *bw, size_t bytes)
{
    if (bw->format != SENSIM_BAG_ROS1 || !bw->impl)
        return sensim_error(SENSIM_EINVAL, "%s: not a ROS 1 bag writer", bw->path);
    ((w1_writer *)bw->impl)->chunk_bytes = bytes ? bytes : 1;
    return SENSIM_OK;
}
