/* ROS message codec: ROS 1 serialization and ROS 2 CDR (see sensim/rosmsg.h).
 *
 * One reading cursor (rd) and one writing cursor (wr) know both encodings;
 * each message is described once, by a walk over its fields that either cursor
 * runs (see "either direction" below). ROS 1 (wiki.ros.org/msg,
 * "Serialization"): little-endian, packed, strings and variable arrays as a
 * u32 count then the elements, time as u32 secs + u32 nsecs, std_msgs/Header
 * with a u32 seq. CDR (OMG DDS-XTypes 7.4.3, "classic" encoding as rosbag2
 * stores it): a 4-byte encapsulation header (00 01 little-endian, 00 00
 * big-endian, then two option bytes), every primitive aligned to its size
 * counted from the byte after that header, strings with a u32 length that
 * includes the NUL, sequences with a u32 count, fixed arrays without one;
 * builtin_interfaces/Time is int32 sec + uint32 nanosec and the header has no
 * seq.
 *
 * Reads are sticky: after the first failure a cursor reads zeros and keeps
 * the first message, so a decoder reads every field and checks once at the
 * end. */
#include "sensim/rosmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rosmsg_defs.h"

#define NKINDS (sizeof rosmsg_defs / sizeof rosmsg_defs[0])

/* ---------------------------------------------------------------- types */

sensim_msg_kind sensim_msg_kind_of(const char *type)
{
    if (!type)
        return SENSIM_MSG_UNKNOWN;
    for (size_t k = 1; k < NKINDS; k++)
        if (!strcmp(type, rosmsg_defs[k].ros1) || !strcmp(type, rosmsg_defs[k].ros2))
            return (sensim_msg_kind)k;
    return SENSIM_MSG_UNKNOWN;
}

static const struct rosmsg_def *def_of(sensim_msg_kind kind)
{
    return (size_t)kind < NKINDS ? &rosmsg_defs[kind] : &rosmsg_defs[0];
}

const char *sensim_msg_ros1_type(sensim_msg_kind kind) { return def_of(kind)->ros1; }
const char *sensim_msg_ros2_type(sensim_msg_kind kind) { return def_of(kind)->ros2; }
const char *sensim_msg_md5sum(sensim_msg_kind kind) { return def_of(kind)->md5sum; }
const char *sensim_msg_definition(sensim_msg_kind kind) { return def_of(kind)->definition; }
const char *sensim_msg_ros2_definition(sensim_msg_kind kind) { return def_of(kind)->definition2; }

/* "sensor_msgs/Imu, sensor_msgs/NavSatFix, ..." */
static void kinds_list(char *s, size_t cap)
{
    size_t n = 0;
    s[0] = '\0';
    for (size_t k = 1; k < NKINDS && n < cap; k++) {
        int w = snprintf(s + n, cap - n, "%s%s", k > 1 ? ", " : "", rosmsg_defs[k].ros1);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

sensim_status sensim_msg_check_topic(const sensim_bag_topic *topic, sensim_msg_kind want)
{
    char list[512];
    const char *name = topic && topic->name ? topic->name : "?";
    const char *type = topic && topic->type ? topic->type : "?";
    sensim_msg_kind kind = sensim_msg_kind_of(type);
    if (kind == SENSIM_MSG_UNKNOWN) {
        kinds_list(list, sizeof list);
        return sensim_error(SENSIM_EUNSUPPORTED, "topic '%s': message type %s is not supported (sensim reads %s)",
                            name, type, list);
    }
    if (want != SENSIM_MSG_UNKNOWN && kind != want)
        return sensim_error(SENSIM_EUNSUPPORTED, "topic '%s' holds %s, not %s", name, type,
                            sensim_msg_ros1_type(want));
    /* ROS 1 connections carry the md5sum of the definition they were
     * recorded with; "*" is the wildcard rosbag writes for any type. */
    const char *md5 = topic->md5sum;
    if (topic->encoding == SENSIM_ENC_ROS1 && md5 && md5[0] && strcmp(md5, "*") &&
        strcmp(md5, sensim_msg_md5sum(kind)))
        return sensim_error(SENSIM_EUNSUPPORTED,
                            "topic '%s': %s with md5sum %s, but sensim reads the definition with md5sum %s", name,
                            type, md5, sensim_msg_md5sum(kind));
    return SENSIM_OK;
}

/* -------------------------------------------------------- reading cursor */

/* What both cursors keep for their errors: the first failure (sticky), the
 * message name ("Imu") and an element prefix ("transforms[3]."). */
typedef struct fail {
    const char *msg;
    char prefix[48];
    sensim_status st;
} fail;

static sensim_status fail_set(fail *f, sensim_status st, const char *field, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
static sensim_status fail_set(fail *f, sensim_status st, const char *field, const char *fmt, va_list ap)
{
    if (f->st)
        return f->st;
    char what[256];
    vsnprintf(what, sizeof what, fmt, ap);
    f->st = sensim_error(st, "%s%s%s%s: %s", f->msg, field ? "." : "", field ? f->prefix : "", field ? field : "",
                         what);
    return st;
}

typedef struct rd {
    const uint8_t *buf;
    size_t n, pos;
    size_t origin;    /* CDR: where alignment counts from (after the encapsulation header) */
    int cdr, be;      /* CDR; big-endian */
    fail f;
} rd;

static sensim_status rd_fail(rd *r, sensim_status st, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static sensim_status rd_fail(rd *r, sensim_status st, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = fail_set(&r->f, st, field, fmt, ap);
    va_end(ap);
    return st;
}

static sensim_status rd_init(rd *r, sensim_msg_encoding enc, const uint8_t *buf, size_t n, const char *msg)
{
    /* Field by field, not memset: this runs once per message. */
    r->pos = r->origin = 0;
    r->cdr = r->be = 0;
    r->f.prefix[0] = '\0';
    r->f.st = SENSIM_OK;
    r->buf = buf;
    r->n = buf ? n : 0;
    r->f.msg = msg;
    if (enc != SENSIM_ENC_CDR)
        return SENSIM_OK;
    r->cdr = 1;
    if (r->n < 4)
        return rd_fail(r, SENSIM_EFORMAT, NULL, "CDR payload of %zu bytes, shorter than its 4-byte encapsulation header",
                       r->n);
    if (buf[0] != 0 || buf[1] > 1)
        return rd_fail(r, SENSIM_EUNSUPPORTED, NULL,
                       "CDR encapsulation 0x%02x%02x (only plain CDR, 0x0000 big- and 0x0001 little-endian)", buf[0],
                       buf[1]);
    r->be = buf[1] == 0;
    r->pos = r->origin = 4;
    return SENSIM_OK;
}

/* Aligns (CDR) and checks that `size` bytes are left; 0 when they are not.
 * `what` names the type, `count` > 0 an array of that many. */
static int rd_take_n(rd *r, const char *field, size_t size, const char *what, size_t count)
{
    if (r->f.st)
        return 0;
    if (r->cdr && size > 1) {
        size_t a = size > 8 ? 8 : size;
        r->pos += (0 - (r->pos - r->origin)) & (a - 1); /* a is 2, 4 or 8: no division */
    }
    if (r->pos > r->n || r->n - r->pos < size) {
        char t[48];
        snprintf(t, sizeof t, count ? "%s[%zu]" : "%s", what, count);
        rd_fail(r, SENSIM_EFORMAT, field, "%s at byte %zu runs past the end of a %zu-byte message", t, r->pos, r->n);
        return 0;
    }
    return 1;
}

static int rd_take(rd *r, const char *field, size_t size, const char *what) { return rd_take_n(r, field, size, what, 0); }

/* An unsigned integer of 1, 2, 4 or 8 bytes in the given byte order. */
static uint64_t load(const uint8_t *p, size_t size, int be)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    switch (size) {
    case 8: {
        uint64_t v;
        memcpy(&v, p, 8);
        return be ? __builtin_bswap64(v) : v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return be ? __builtin_bswap32(v) : v;
    }
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return be ? __builtin_bswap16(v) : v;
    }
    default: return p[0];
    }
#else
    uint64_t v = 0;
    for (size_t i = 0; i < size; i++)
        v |= (uint64_t)p[be ? size - 1 - i : i] << (8 * i);
    return v;
#endif
}

static inline uint64_t rd_uint(rd *r, const char *field, size_t size, const char *what)
{
    /* The common case in one test: aligned already and inside the message. */
    if (!r->f.st && r->pos <= r->n && r->n - r->pos >= size && !(r->cdr && ((r->pos - r->origin) & (size - 1)))) {
        uint64_t v = load(r->buf + r->pos, size, r->be);
        r->pos += size;
        return v;
    }
    if (!rd_take(r, field, size, what))
        return 0;
    uint64_t v = load(r->buf + r->pos, size, r->be);
    r->pos += size;
    return v;
}

static uint8_t rd_u8(rd *r, const char *field) { return (uint8_t)rd_uint(r, field, 1, "uint8"); }
static uint16_t rd_u16(rd *r, const char *field) { return (uint16_t)rd_uint(r, field, 2, "uint16"); }
static uint32_t rd_u32(rd *r, const char *field) { return (uint32_t)rd_uint(r, field, 4, "uint32"); }

static double rd_f64(rd *r, const char *field)
{
    uint64_t u = rd_uint(r, field, 8, "float64");
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* float64[count]: one check for the whole array (CDR aligns the first
 * element; the rest follow packed). */
static void rd_f64s(rd *r, const char *field, double *out, size_t count)
{
    if (!rd_take_n(r, field, 8 * count, "float64", count))
        return;
    const uint8_t *p = r->buf + r->pos;
    for (size_t i = 0; i < count; i++) {
        uint64_t u = load(p + 8 * i, 8, r->be);
        memcpy(&out[i], &u, sizeof u);
    }
    r->pos += 8 * count;
}

/* The fast path of the fixed-layout messages (Imu, MagneticField): when
 * the rest of the payload is exactly `count` float64 in the host's byte
 * order (CDR: aligned to 8, then at most 7 bytes of padding), one copy
 * reads them all and returns 1; otherwise 0 with the cursor untouched, and
 * the field-by-field reads that follow name whatever is wrong. */
static int rd_f64_tail(rd *r, double *out, size_t count)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (r->f.st || r->be)
        return 0;
    size_t pos = r->pos;
    if (r->cdr)
        pos += (0 - (pos - r->origin)) & 7;
    if (pos > r->n || r->n - pos < 8 * count || r->n - pos - 8 * count > (r->cdr ? 7u : 0u))
        return 0;
    memcpy(out, r->buf + pos, 8 * count);
    r->pos = pos + 8 * count;
    return 1;
#else
    (void)r, (void)out, (void)count;
    return 0;
#endif
}

/* A sequence count: u32, checked against the bytes left at `min_size`
 * bytes per element, so a lying count fails here, not after a long loop. */
static uint32_t rd_count(rd *r, const char *field, size_t min_size, const char *what)
{
    uint32_t k = rd_u32(r, field);
    if (!r->f.st && min_size > 0 && (uint64_t)k * min_size > r->n - r->pos)
        rd_fail(r, SENSIM_EFORMAT, field, "%s of %u elements (at least %llu bytes) past the end of a %zu-byte message",
                what, k, (unsigned long long)k * min_size, r->n);
    return r->f.st ? 0 : k;
}

/* A string copied into dst[cap] (NUL-terminated). */
static void rd_string(rd *r, const char *field, char *dst, size_t cap)
{
    dst[0] = '\0';
    uint32_t len = rd_u32(r, field);
    if (r->f.st)
        return;
    if (len > r->n - r->pos) {
        rd_fail(r, SENSIM_EFORMAT, field, "string of %u bytes past the end of a %zu-byte message", len, r->n);
        return;
    }
    const uint8_t *s = r->buf + r->pos;
    r->pos += len;
    size_t k = len;
    if (r->cdr && k > 0) {
        /* CDR counts the terminating NUL; an empty string may be written
         * with length 0 or 1. */
        if (s[k - 1] != '\0') {
            rd_fail(r, SENSIM_EFORMAT, field, "CDR string of %u bytes without its terminating NUL", len);
            return;
        }
        k--;
    }
    if (memchr(s, '\0', k)) {
        rd_fail(r, SENSIM_EFORMAT, field, "string of %zu bytes with a NUL inside", k);
        return;
    }
    if (k >= cap) {
        rd_fail(r, SENSIM_EUNSUPPORTED, field, "string of %zu bytes, longer than the %zu sensim keeps", k, cap - 1);
        return;
    }
    memcpy(dst, s, k);
    dst[k] = '\0';
}

/* uint8[]: borrowed pointer into the payload. */
static const uint8_t *rd_bytes(rd *r, const char *field, size_t *size)
{
    *size = 0;
    uint32_t len = rd_u32(r, field);
    if (r->f.st)
        return NULL;
    if (len > r->n - r->pos) {
        rd_fail(r, SENSIM_EFORMAT, field, "uint8[] of %u bytes past the end of a %zu-byte message", len, r->n);
        return NULL;
    }
    const uint8_t *p = r->buf + r->pos;
    r->pos += len;
    *size = len;
    return p;
}

static void rd_header(rd *r, sensim_msg_header *h)
{
    h->seq = 0;
    if (r->cdr) {
        int32_t sec = (int32_t)rd_u32(r, "header.stamp.sec");
        uint32_t nsec = rd_u32(r, "header.stamp.nanosec");
        h->stamp_ns = (int64_t)sec * 1000000000 + nsec;
    } else {
        h->seq = rd_u32(r, "header.seq");
        uint32_t sec = rd_u32(r, "header.stamp.secs");
        uint32_t nsec = rd_u32(r, "header.stamp.nsecs");
        h->stamp_ns = (int64_t)sec * 1000000000 + nsec;
    }
    rd_string(r, "header.frame_id", h->frame_id, sizeof h->frame_id);
}

/* The end: ROS 1 must be used up; CDR may be padded to 8. */
static sensim_status rd_end(rd *r)
{
    if (r->f.st)
        return r->f.st;
    size_t left = r->n - r->pos;
    if (left > (r->cdr ? 7u : 0u))
        return rd_fail(r, SENSIM_EFORMAT, NULL, "%zu bytes left over after the message ends at byte %zu (not a %s?)",
                       left, r->pos, r->f.msg);
    return SENSIM_OK;
}

/* -------------------------------------------------------- writing cursor */

typedef struct wr {
    sensim_msg_buf *b;
    size_t start, origin;
    int cdr, be;
    fail f;
} wr;

static void wr_grow(wr *w, size_t more)
{
    sensim_msg_buf *b = w->b;
    if (w->f.st)
        return;
    if (b->cap - b->len >= more)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < more) {
        if (cap > SIZE_MAX / 2) {
            w->f.st = sensim_error(SENSIM_ENOMEM, "%s: message larger than memory", w->f.msg);
            return;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->data, cap);
    if (!p) {
        w->f.st = sensim_error(SENSIM_ENOMEM, "%s: cannot grow the output to %zu bytes", w->f.msg, cap);
        return;
    }
    b->data = p;
    b->cap = cap;
}

static void wr_raw(wr *w, const void *p, size_t n)
{
    wr_grow(w, n);
    if (w->f.st || n == 0)
        return;
    memcpy(w->b->data + w->b->len, p, n);
    w->b->len += n;
}

static void wr_init(wr *w, sensim_msg_encoding enc, sensim_msg_buf *b, const char *msg)
{
    memset(w, 0, sizeof *w);
    w->b = b;
    w->start = b->len;
    w->f.msg = msg;
    if (enc == SENSIM_ENC_CDR) {
        w->cdr = 1;
        w->be = b->cdr_big_endian != 0;
        const uint8_t head[4] = {0, w->be ? 0 : 1, 0, 0};
        wr_raw(w, head, 4);
        w->origin = w->start + 4;
    }
}

static void wr_uint(wr *w, uint64_t v, size_t size)
{
    static const uint8_t zeros[8] = {0};
    if (w->cdr && size > 1) {
        size_t a = size > 8 ? 8 : size;
        wr_raw(w, zeros, (0 - (w->b->len - w->origin)) & (a - 1));
    }
    uint8_t p[8];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (w->be)
        v = size == 8 ? __builtin_bswap64(v) : size == 4 ? __builtin_bswap32((uint32_t)v)
            : size == 2 ? __builtin_bswap16((uint16_t)v) : v;
    memcpy(p, &v, size); /* the low bytes */
#else
    for (size_t i = 0; i < size; i++)
        p[w->be ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
#endif
    wr_raw(w, p, size);
}

static void wr_u8(wr *w, uint8_t v) { wr_uint(w, v, 1); }
static void wr_u16(wr *w, uint16_t v) { wr_uint(w, v, 2); }
static void wr_u32(wr *w, uint32_t v) { wr_uint(w, v, 4); }

static void wr_f64(wr *w, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    wr_uint(w, u, 8);
}

static void wr_f64s(wr *w, const double *v, size_t count)
{
    for (size_t i = 0; i < count; i++)
        wr_f64(w, v[i]);
}

static void wr_fail(wr *w, sensim_status st, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void wr_fail(wr *w, sensim_status st, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_set(&w->f, st, field, fmt, ap);
    va_end(ap);
}

/* A string of at most `cap - 1` bytes (the decoder's limit, so what is
 * written reads back). */
static void wr_string(wr *w, const char *field, const char *s, size_t cap)
{
    size_t k = strnlen(s, cap);
    if (k >= cap) {
        wr_fail(w, SENSIM_EINVAL, field, "string longer than the %zu bytes sensim keeps", cap - 1);
        return;
    }
    wr_u32(w, (uint32_t)(k + (size_t)w->cdr));
    wr_raw(w, s, k);
    if (w->cdr)
        wr_raw(w, "", 1);
}

static void wr_bytes(wr *w, const char *field, const uint8_t *p, size_t n)
{
    if (n > UINT32_MAX) {
        wr_fail(w, SENSIM_EINVAL, field, "%zu bytes, more than a uint32 count holds", n);
        return;
    }
    wr_u32(w, (uint32_t)n);
    wr_raw(w, p, n);
}

static void wr_header(wr *w, const sensim_msg_header *h)
{
    int64_t ns = h->stamp_ns;
    int64_t sec = ns / 1000000000, nsec = ns % 1000000000;
    if (nsec < 0) {
        sec -= 1;
        nsec += 1000000000;
    }
    if (w->cdr) {
        if (sec < INT32_MIN || sec > INT32_MAX)
            wr_fail(w, SENSIM_EINVAL, "header.stamp", "%lld ns outside builtin_interfaces/Time (int32 seconds)",
                    (long long)ns);
        wr_u32(w, (uint32_t)(int32_t)sec);
        wr_u32(w, (uint32_t)nsec);
    } else {
        if (sec < 0 || sec > UINT32_MAX)
            wr_fail(w, SENSIM_EINVAL, "header.stamp", "%lld ns outside ROS 1 time (uint32 seconds since 1970)",
                    (long long)ns);
        wr_u32(w, h->seq);
        wr_u32(w, (uint32_t)sec);
        wr_u32(w, (uint32_t)nsec);
    }
    wr_string(w, "header.frame_id", h->frame_id, sizeof h->frame_id);
}

static sensim_status wr_end(wr *w)
{
    if (w->f.st)
        w->b->len = w->start;
    return w->f.st;
}

/* ------------------------------------------------------ either direction */

/* A message is described once, by a walk over its fields through a cursor
 * that either reads them into *m (decoding) or writes them from *m
 * (encoding; the walk then only reads *m, so the encoders pass their const
 * message). The walks are inlined into each direction, where the test of
 * the direction folds away. */
typedef struct io {
    rd *r; /* decoding, or NULL */
    wr *w; /* encoding, or NULL */
} io;

#define WALK static inline __attribute__((always_inline)) void

static inline int io_ok(const io *c) { return !(c->r ? c->r->f.st : c->w->f.st); }

static inline void io_prefix(io *c, const char *fmt, size_t i)
{
    fail *f = c->r ? &c->r->f : &c->w->f;
    if (fmt)
        snprintf(f->prefix, sizeof f->prefix, fmt, i);
    else
        f->prefix[0] = '\0';
}

/* io_X(c, field, v): rd_X into *v when decoding, wr_X of *v when encoding. */
#define IO_SCALAR(name, type)                                                                                    \
    static inline void io_##name(io *c, const char *field, type *v)                                              \
    {                                                                                                            \
        if (c->r)                                                                                                \
            *v = rd_##name(c->r, field);                                                                         \
        else                                                                                                     \
            wr_##name(c->w, *v);                                                                                 \
    }
IO_SCALAR(f64, double)
IO_SCALAR(u8, uint8_t)
IO_SCALAR(u16, uint16_t)
IO_SCALAR(u32, uint32_t)

static inline void io_header(io *c, sensim_msg_header *h) { c->r ? rd_header(c->r, h) : wr_header(c->w, h); }

static inline void io_f64s(io *c, const char *field, double *v, size_t count)
{
    c->r ? rd_f64s(c->r, field, v, count) : wr_f64s(c->w, v, count);
}

static inline void io_string(io *c, const char *field, char *s, size_t cap)
{
    c->r ? rd_string(c->r, field, s, cap) : wr_string(c->w, field, s, cap);
}

/* uint8[]: decoding borrows a pointer into the payload. */
static inline void io_bytes(io *c, const char *field, const uint8_t **p, size_t *size)
{
    c->r ? (void)(*p = rd_bytes(c->r, field, size)) : wr_bytes(c->w, field, *p, *size);
}

/* A float64 array field: its name, the array and its length. */
typedef struct f64_field {
    const char *name;
    double *v;
    size_t count;
} f64_field;

/* The float64 arrays that end a fixed-layout message (Imu, MagneticField),
 * in order. Decoding tries rd_f64_tail's one copy of them all first; the
 * field-by-field walk runs when that does not apply. */
WALK io_f64_tail(io *c, const f64_field *f, size_t n)
{
    if (c->r) {
        double v[64];
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
            total += f[i].count;
        if (total <= sizeof v / sizeof v[0] && rd_f64_tail(c->r, v, total)) {
            for (size_t i = 0, k = 0; i < n; k += f[i++].count)
                memcpy(f[i].v, v + k, f[i].count * sizeof *v);
            return;
        }
    }
    for (size_t i = 0; i < n; i++)
        io_f64s(c, f[i].name, f[i].v, f[i].count);
}

/* ------------------------------------------------------------- messages */

sensim_status sensim_msg_decode_header(sensim_msg_encoding enc, const uint8_t *buf, size_t n,
                                       sensim_msg_header *out)
{
    rd r;
    if (rd_init(&r, enc, buf, n, "Header"))
        return r.f.st;
    rd_header(&r, out);
    return r.f.st;
}

/* The decoder and encoder of message NAME: the decoder clears *out when
 * CLEAR (the walk sets every field otherwise), walks, and checks the
 * result with CHECK; the encoder checks *m with CHECK before it walks. */
#define CODEC(name, type, msgname, CLEAR, CHECK)                                                                   \
    sensim_status sensim_msg_decode_##name(sensim_msg_encoding enc, const uint8_t *buf, size_t n, type *out)     \
    {                                                                                                            \
        rd r;                                                                                                    \
        if (CLEAR)                                                                                               \
            memset(out, 0, sizeof *out);                                                                         \
        if (rd_init(&r, enc, buf, n, msgname))                                                                   \
            return r.f.st;                                                                                       \
        io c = {&r, NULL};                                                                                       \
        walk_##name(&c, out);                                                                                    \
        if (rd_end(&r))                                                                                          \
            return r.f.st;                                                                                       \
        return CHECK(out);                                                                                       \
    }                                                                                                            \
    sensim_status sensim_msg_encode_##name(sensim_msg_encoding enc, const type *m, sensim_msg_buf *out)          \
    {                                                                                                            \
        sensim_status st = CHECK(m);                                                                             \
        if (st)                                                                                                  \
            return st;                                                                                           \
        wr w;                                                                                                    \
        wr_init(&w, enc, out, msgname);                                                                          \
        io c = {NULL, &w};                                                                                       \
        walk_##name(&c, (type *)m);                                                                              \
        return wr_end(&w);                                                                                       \
    }

/* The CHECK of the messages with no checks beyond their walk. */
static inline sensim_status no_check(const void *m)
{
    (void)m;
    return SENSIM_OK;
}

/* A fixed-layout message, a header then float64 arrays (the f64_field
 * initializers that follow, naming the message `m`): its walk and codec. The
 * walk sets every field, so the decoder does not clear *out first. */
#define F64_CODEC(name, type, msgname, ...)                                                                        \
    WALK walk_##name(io *c, type *m)                                                                             \
    {                                                                                                            \
        io_header(c, &m->header);                                                                                \
        const f64_field f[] = {__VA_ARGS__};                                                                     \
        io_f64_tail(c, f, sizeof f / sizeof f[0]);                                                               \
    }                                                                                                            \
    CODEC(name, type, msgname, 0, no_check)

F64_CODEC(imu, sensim_msg_imu, "Imu",
          {"orientation", m->orientation, 4},
          {"orientation_covariance", m->orientation_covariance, 9},
          {"angular_velocity", m->angular_velocity, 3},
          {"angular_velocity_covariance", m->angular_velocity_covariance, 9},
          {"linear_acceleration", m->linear_acceleration, 3},
          {"linear_acceleration_covariance", m->linear_acceleration_covariance, 9})

WALK walk_navsatfix(io *c, sensim_msg_navsatfix *m)
{
    io_header(c, &m->header);
    io_u8(c, "status.status", (uint8_t *)&m->status);
    io_u16(c, "status.service", &m->service);
    io_f64(c, "latitude", &m->latitude);
    io_f64(c, "longitude", &m->longitude);
    io_f64(c, "altitude", &m->altitude);
    io_f64s(c, "position_covariance", m->position_covariance, 9);
    io_u8(c, "position_covariance_type", &m->position_covariance_type);
}
CODEC(navsatfix, sensim_msg_navsatfix, "NavSatFix", 1, no_check)

F64_CODEC(magnetic_field, sensim_msg_magnetic_field, "MagneticField",
          {"magnetic_field", m->magnetic_field, 3},
          {"magnetic_field_covariance", m->magnetic_field_covariance, 9})

WALK walk_odometry(io *c, sensim_msg_odometry *m)
{
    io_header(c, &m->header);
    io_string(c, "child_frame_id", m->child_frame_id, sizeof m->child_frame_id);
    io_f64s(c, "pose.pose.position", m->pose.position, 3);
    io_f64s(c, "pose.pose.orientation", m->pose.orientation, 4);
    io_f64s(c, "pose.covariance", m->pose_covariance, 36);
    io_f64s(c, "twist.twist.linear", m->twist_linear, 3);
    io_f64s(c, "twist.twist.angular", m->twist_angular, 3);
    io_f64s(c, "twist.covariance", m->twist_covariance, 36);
}
CODEC(odometry, sensim_msg_odometry, "Odometry", 1, no_check)

WALK walk_pose_stamped(io *c, sensim_msg_pose_stamped *m)
{
    io_header(c, &m->header);
    io_f64s(c, "pose.position", m->pose.position, 3);
    io_f64s(c, "pose.orientation", m->pose.orientation, 4);
}
CODEC(pose_stamped, sensim_msg_pose_stamped, "PoseStamped", 1, no_check)

WALK walk_transform_stamped(io *c, sensim_msg_transform_stamped *m)
{
    io_header(c, &m->header);
    io_string(c, "child_frame_id", m->child_frame_id, sizeof m->child_frame_id);
    io_f64s(c, "transform.translation", m->translation, 3);
    io_f64s(c, "transform.rotation", m->rotation, 4);
}
CODEC(transform_stamped, sensim_msg_transform_stamped, "TransformStamped", 1, no_check)

sensim_status sensim_msg_decode_tf(sensim_msg_encoding enc, const uint8_t *buf, size_t n,
                                   int (*each)(const sensim_msg_transform_stamped *tf, void *ctx), void *ctx)
{
    rd r;
    if (rd_init(&r, enc, buf, n, "TFMessage"))
        return r.f.st;
    io c = {&r, NULL};
    /* The smallest TransformStamped: a header with an empty frame id, an
     * empty child frame id and seven float64 (CDR: 8 + 4 + 4 + 56). */
    uint32_t k = rd_count(&r, "transforms", 72, "TransformStamped[]");
    for (uint32_t i = 0; i < k && !r.f.st; i++) {
        sensim_msg_transform_stamped tf;
        memset(&tf, 0, sizeof tf);
        io_prefix(&c, "transforms[%zu].", i);
        walk_transform_stamped(&c, &tf);
        if (!r.f.st && each && each(&tf, ctx))
            return SENSIM_OK;
    }
    io_prefix(&c, NULL, 0);
    return rd_end(&r);
}

sensim_status sensim_msg_encode_tf(sensim_msg_encoding enc, const sensim_msg_transform_stamped *tf, size_t n,
                                   sensim_msg_buf *out)
{
    wr w;
    wr_init(&w, enc, out, "TFMessage");
    io c = {NULL, &w};
    if (n > UINT32_MAX)
        wr_fail(&w, SENSIM_EINVAL, "transforms", "%zu transforms, more than a uint32 count holds", n);
    wr_u32(&w, (uint32_t)n);
    for (size_t i = 0; i < n && !w.f.st; i++)
        walk_transform_stamped(&c, (sensim_msg_transform_stamped *)&tf[i]);
    return wr_end(&w);
}

/* ---------------------------------------------------------- PointCloud2 */

/* The data of an image-like message (PointCloud2, Image): `height` rows
 * of `step` bytes (the field named `step_name`) at least. */
static sensim_status data_check(const char *msg, size_t size, const char *step_name, uint32_t step, uint32_t height)
{
    uint64_t need = (uint64_t)step * height;
    if (size < need)
        return sensim_error(SENSIM_EFORMAT, "%s.data: %zu bytes, less than %s %u x height %u = %llu", msg, size,
                            step_name, step, height, (unsigned long long)need);
    return SENSIM_OK;
}

static const uint8_t pf_size[9] = {0, 1, 1, 2, 2, 4, 4, 4, 8};

/* The checks both directions share: fields inside a point, points inside a
 * row, rows inside data. Errors name the field through `fail`. */
static sensim_status pc2_check(const sensim_msg_pointcloud2 *pc, const char *msg)
{
    for (size_t i = 0; i < pc->nfields; i++) {
        const sensim_msg_point_field *f = &pc->fields[i];
        if (f->datatype < SENSIM_PF_INT8 || f->datatype > SENSIM_PF_FLOAT64)
            return sensim_error(SENSIM_EFORMAT, "%s.fields[%zu].datatype: %u is not a PointField datatype (1-8)",
                                msg, i, f->datatype);
        uint64_t end = (uint64_t)f->offset + (uint64_t)pf_size[f->datatype] * (f->count ? f->count : 1);
        if (end > pc->point_step)
            return sensim_error(SENSIM_EFORMAT,
                                "%s.fields[%zu].offset: field '%s' ends at byte %llu, past point_step %u", msg, i,
                                f->name, (unsigned long long)end, pc->point_step);
    }
    if ((uint64_t)pc->width * pc->point_step > pc->row_step)
        return sensim_error(SENSIM_EFORMAT, "%s.row_step: %u bytes, less than width %u x point_step %u", msg,
                            pc->row_step, pc->width, pc->point_step);
    return data_check(msg, pc->data_size, "row_step", pc->row_step, pc->height);
}

WALK walk_pointcloud2(io *c, sensim_msg_pointcloud2 *m)
{
    io_header(c, &m->header);
    io_u32(c, "height", &m->height);
    io_u32(c, "width", &m->width);
    if (c->r) {
        /* A PointField is at least a 4-byte name length, offset, datatype, count. */
        uint32_t k = rd_count(c->r, "fields", 13, "PointField[]");
        size_t max = sizeof m->fields / sizeof m->fields[0];
        if (k > max)
            rd_fail(c->r, SENSIM_EUNSUPPORTED, "fields", "%u fields, more than the %zu sensim reads", k, max);
        m->nfields = k;
    } else {
        wr_u32(c->w, (uint32_t)m->nfields); /* at most the array's size: checked before */
    }
    for (size_t i = 0; i < m->nfields && io_ok(c); i++) {
        sensim_msg_point_field *f = &m->fields[i];
        io_prefix(c, "fields[%zu].", i);
        io_string(c, "name", f->name, sizeof f->name);
        io_u32(c, "offset", &f->offset);
        io_u8(c, "datatype", &f->datatype);
        io_u32(c, "count", &f->count);
    }
    io_prefix(c, NULL, 0);
    io_u8(c, "is_bigendian", &m->is_bigendian);
    io_u32(c, "point_step", &m->point_step);
    io_u32(c, "row_step", &m->row_step);
    io_bytes(c, "data", &m->data, &m->data_size);
    io_u8(c, "is_dense", &m->is_dense);
}

/* What the encoder checks (the decoder's walk refuses more fields than it
 * keeps already), then pc2_check. */
static sensim_status pc2_valid(const sensim_msg_pointcloud2 *m)
{
    size_t max = sizeof m->fields / sizeof m->fields[0];
    if (m->nfields > max)
        return sensim_error(SENSIM_EINVAL, "PointCloud2.fields: %zu fields, more than the %zu sensim writes",
                            m->nfields, max);
    return pc2_check(m, "PointCloud2");
}
CODEC(pointcloud2, sensim_msg_pointcloud2, "PointCloud2", 1, pc2_valid)

sensim_status sensim_msg_pointcloud2_field(const sensim_msg_pointcloud2 *pc, const char *name, size_t *field)
{
    char list[512];
    size_t n = 0;
    list[0] = '\0';
    for (size_t i = 0; i < pc->nfields; i++) {
        if (!strcmp(pc->fields[i].name, name)) {
            *field = i;
            return SENSIM_OK;
        }
        if (n < sizeof list) {
            int w = snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", pc->fields[i].name);
            n += w > 0 ? (size_t)w : 0;
        }
    }
    return sensim_error(SENSIM_ENOTFOUND, "PointCloud2 has no field '%s' (fields: %s)", name,
                        pc->nfields ? list : "none");
}

double sensim_msg_pointcloud2_get(const sensim_msg_pointcloud2 *pc, size_t field, size_t point)
{
    const sensim_msg_point_field *f = &pc->fields[field];
    size_t row = point / pc->width, col = point % pc->width;
    const uint8_t *p = pc->data + row * pc->row_step + col * pc->point_step + f->offset;
    uint64_t u = load(p, pf_size[f->datatype], pc->is_bigendian != 0);
    switch (f->datatype) {
    case SENSIM_PF_INT8: return (int8_t)u;
    case SENSIM_PF_UINT8: return (uint8_t)u;
    case SENSIM_PF_INT16: return (int16_t)u;
    case SENSIM_PF_UINT16: return (uint16_t)u;
    case SENSIM_PF_INT32: return (int32_t)u;
    case SENSIM_PF_UINT32: return (uint32_t)u;
    case SENSIM_PF_FLOAT32: {
        uint32_t v = (uint32_t)u;
        float x;
        memcpy(&x, &v, sizeof x);
        return x;
    }
    default: {
        double x;
        memcpy(&x, &u, sizeof x);
        return x;
    }
    }
}

/* ---------------------------------------------------------------- Image */

static sensim_status image_check(const sensim_msg_image *im)
{
    return data_check("Image", im->data_size, "step", im->step, im->height);
}

WALK walk_image(io *c, sensim_msg_image *m)
{
    io_header(c, &m->header);
    io_u32(c, "height", &m->height);
    io_u32(c, "width", &m->width);
    io_string(c, "encoding", m->encoding, sizeof m->encoding);
    io_u8(c, "is_bigendian", &m->is_bigendian);
    io_u32(c, "step", &m->step);
    io_bytes(c, "data", &m->data, &m->data_size);
}

CODEC(image, sensim_msg_image, "Image", 1, image_check)

void sensim_msg_buf_free(sensim_msg_buf *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
