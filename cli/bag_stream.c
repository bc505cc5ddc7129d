/* Recordings on the command line: detection and one stream per topic in
 * stamp order (see bagcli.h). */
#include "bagcli.h"
#include "../lib/base_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The reorder window: messages held per topic before the oldest must go. */
#define REORDER_MAX 4096
#define REORDER_BYTES (64u << 20)
/* Intervals kept for the median (the rest are compared with it). */
#define DT_KEEP 10001

int cli_is_bag(const char *path)
{
    struct stat sb;
    if (stat(path, &sb))
        return 0;
    if (S_ISDIR(sb.st_mode)) {
        size_t n = strlen(path);
        char *m = malloc(n + 16);
        if (!m)
            return 0;
        snprintf(m, n + 16, "%s/metadata.yaml", path);
        int ok = stat(m, &sb) == 0;
        free(m);
        return ok;
    }
    if (!S_ISREG(sb.st_mode)) /* a FIFO would block the sniffing read; the reader names what it is */
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char head[16] = {0};
    size_t k = fread(head, 1, sizeof head, f);
    fclose(f);
    return (k >= 13 && !memcmp(head, "#ROSBAG V2.0\n", 13)) || (k >= 8 && !memcmp(head, "\x89MCAP0\r\n", 8)) ||
           (k >= 16 && !memcmp(head, "SQLite format 3", 16));
}

typedef struct entry {
    int64_t stamp;
    uint64_t seq, index;
    uint8_t *data;
    size_t size, cap; /* cap: bytes allocated at data */
} entry;

/* A spare payload buffer, kept for the next message so that the window
 * does not call malloc and free per message. */
typedef struct spare {
    uint8_t *data;
    size_t cap;
} spare;
#define SPARE_MAX 64

/* The window: entries sorted by (stamp, arrival) in a ring (capacity a
 * power of two). Messages mostly arrive in order, so an insertion is an
 * append and the oldest leaves from the front; one out of order walks back
 * to its place. */
typedef struct sel_state {
    size_t topic;
    sensim_msg_kind kind;
    entry *ring;
    size_t head, n, cap, bytes;
    spare spares[SPARE_MAX];
    size_t nspare;
    uint64_t seq;
    int64_t max_seen, last_out;
    int any_seen, any_out;
    double *dts;
    size_t ndts;
    int median_known;
    cli_bag_stats st;
} sel_state;

struct cli_bag_stream {
    sensim_bag *bag;
    sel_state *sel;
    size_t nsel;
    size_t *topic_sel; /* per bag topic: selection + 1, or 0 */
    int time_receive;
    char *tf_parent, *tf_child;
    int64_t first_ns;
    int have_first;
};


void cli_bag_stream_free(cli_bag_stream *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nsel; i++) {
        sel_state *q = &s->sel[i];
        for (size_t k = 0; k < q->n; k++)
            free(q->ring[(q->head + k) & (q->cap - 1)].data);
        for (size_t k = 0; k < q->nspare; k++)
            free(q->spares[k].data);
        free(q->ring);
        free(s->sel[i].dts);
    }
    SENSIM_FREE_ALL(s->sel, s->topic_sel, s->tf_parent, s->tf_child);
    sensim_bag_close(s->bag);
    free(s);
}

cli_bag_stream *cli_bag_stream_open(const char *path, const char *const *topics, size_t nsel, int time_receive,
                                    const char *tf_parent, const char *tf_child)
{
    cli_bag_stream *s = calloc(1, sizeof *s);
    if (!s) {
        sensim_error(SENSIM_ENOMEM, "out of memory");
        return NULL;
    }
    s->time_receive = time_receive;
    if (!(s->bag = sensim_bag_open(path)))
        goto fail;
    size_t nt = sensim_bag_ntopics(s->bag);
    s->sel = calloc(nsel ? nsel : 1, sizeof *s->sel);
    s->topic_sel = calloc(nt ? nt : 1, sizeof *s->topic_sel);
    if ((tf_parent && !(s->tf_parent = strdup(tf_parent))) || (tf_child && !(s->tf_child = strdup(tf_child))) ||
        !s->sel || !s->topic_sel) {
        sensim_error(SENSIM_ENOMEM, "out of memory");
        goto fail;
    }
    s->nsel = nsel;
    for (size_t i = 0; i < nsel; i++) {
        sel_state *q = &s->sel[i];
        if (sensim_bag_find_topic(s->bag, topics[i], &q->topic))
            goto fail;
        const sensim_bag_topic *t = sensim_bag_topic_at(s->bag, q->topic);
        if (sensim_msg_check_topic(t, SENSIM_MSG_UNKNOWN)) {
            sensim_error_prefix(sensim_last_status(), "%s", path);
            goto fail;
        }
        q->kind = sensim_msg_kind_of(t->type);
        if (q->kind == SENSIM_MSG_TF && !(tf_parent && tf_child)) {
            sensim_error(SENSIM_EINVAL, "%s: topic '%s' holds %s: pick a transform with --tf PARENT:CHILD", path,
                         t->name, t->type);
            goto fail;
        }
        if (s->topic_sel[q->topic]) {
            sensim_error(SENSIM_EINVAL, "%s: topic '%s' selected twice", path, t->name);
            goto fail;
        }
        s->topic_sel[q->topic] = i + 1;
        if (!(q->dts = malloc(DT_KEEP * sizeof *q->dts))) {
            sensim_error(SENSIM_ENOMEM, "out of memory");
            goto fail;
        }
    }
    return s;
fail:
    cli_bag_stream_free(s);
    return NULL;
}

sensim_bag *cli_bag_stream_bag(cli_bag_stream *s) { return s->bag; }
const sensim_bag_topic *cli_bag_stream_topic(const cli_bag_stream *s, size_t sel)
{
    return sensim_bag_topic_at(s->bag, s->sel[sel].topic);
}
sensim_msg_kind cli_bag_stream_kind(const cli_bag_stream *s, size_t sel) { return s->sel[sel].kind; }
int64_t cli_bag_stream_first_ns(const cli_bag_stream *s) { return s->first_ns; }
const cli_bag_stats *cli_bag_stream_stats(const cli_bag_stream *s, size_t sel) { return &s->sel[sel].st; }

typedef struct tf_find {
    const char *parent, *child;
    sensim_msg_transform_stamped *out;
    int found;
} tf_find;

/* Stops at the first transform of the pair. tf2 frame ids may carry a
 * leading '/' (tf1 style); they are compared without it. */
static int tf_pick(const sensim_msg_transform_stamped *tf, void *ctx)
{
    tf_find *f = ctx;
    const char *p = tf->header.frame_id, *c = tf->child_frame_id;
    p += *p == '/';
    c += *c == '/';
    if (!strcmp(p, f->parent + (*f->parent == '/')) && !strcmp(c, f->child + (*f->child == '/'))) {
        *f->out = *tf;
        f->found = 1;
        return 1;
    }
    return 0;
}

int cli_bag_find_tf(sensim_msg_encoding enc, const uint8_t *data, size_t size, const char *parent, const char *child,
                    sensim_msg_transform_stamped *out)
{
    tf_find f = {parent, child, out, 0};
    if (sensim_msg_decode_tf(enc, data, size, tf_pick, &f))
        return -1;
    return f.found;
}

/* ---- the window, ordered by (stamp, arrival) ---- */

static int before(const entry *a, const entry *b) { return a->stamp < b->stamp || (a->stamp == b->stamp && a->seq < b->seq); }

/* A buffer of at least `size` bytes for a new entry: a spare one if there
 * is, grown when short. */
static int take_buffer(sel_state *q, entry *e, size_t size)
{
    spare sp = {NULL, 0};
    if (q->nspare)
        sp = q->spares[--q->nspare];
    if (sp.cap < size) {
        size_t cap = size > 64 ? size : 64;
        uint8_t *p = realloc(sp.data, cap);
        if (!p) {
            free(sp.data);
            return -1;
        }
        sp.data = p;
        sp.cap = cap;
    }
    e->data = sp.data;
    e->cap = sp.cap;
    return 0;
}

static void give_buffer(sel_state *q, entry *e)
{
    if (q->nspare < SPARE_MAX)
        q->spares[q->nspare++] = (spare){e->data, e->cap};
    else
        free(e->data);
    e->data = NULL;
}

/* Inserts e (its buffer already filled) at its place. */
static int window_push(sel_state *q, const entry *e)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        entry *r = malloc(cap * sizeof *r);
        if (!r)
            return -1;
        for (size_t k = 0; k < q->n; k++)
            r[k] = q->ring[(q->head + k) & (q->cap - 1)];
        free(q->ring);
        q->ring = r;
        q->head = 0;
        q->cap = cap;
    }
    size_t mask = q->cap - 1, i = q->n;
    while (i > 0 && before(e, &q->ring[(q->head + i - 1) & mask])) {
        q->ring[(q->head + i) & mask] = q->ring[(q->head + i - 1) & mask];
        i--;
    }
    q->ring[(q->head + i) & mask] = *e;
    q->n++;
    q->bytes += e->size;
    return 0;
}

/* How many messages ahead of the front the payload is prefetched: the
 * window (4096 Imu messages are 1.3 MB) outgrows the core's cache, and its
 * buffers lie wherever malloc put them, out of the hardware prefetcher's
 * sight. */
#define PREFETCH_AHEAD 8

static entry window_pop(sel_state *q)
{
    if (q->n > PREFETCH_AHEAD) {
        const entry *a = &q->ring[(q->head + PREFETCH_AHEAD) & (q->cap - 1)];
        for (size_t o = 0; o < a->size && o < 1024; o += 64)
            __builtin_prefetch(a->data + o);
    }
    entry top = q->ring[q->head];
    q->head = (q->head + 1) & (q->cap - 1);
    q->n--;
    q->bytes -= top.size;
    return top;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void median_and_gaps(sel_state *q)
{
    double *c = malloc(q->ndts * sizeof *c);
    if (!c)
        return;
    memcpy(c, q->dts, q->ndts * sizeof *c);
    qsort(c, q->ndts, sizeof *c, cmp_double);
    q->st.median_dt = c[(q->ndts - 1) / 2];
    free(c);
    for (size_t i = 0; i < q->ndts; i++)
        q->st.gaps += q->dts[i] > 1.5 * q->st.median_dt;
    q->median_known = 1;
}

static sensim_status out_one(cli_bag_stream *s, size_t k, cli_bag_emit emit, void *ctx)
{
    sel_state *q = &s->sel[k];
    entry e = window_pop(q);
    sensim_status st = SENSIM_OK;
    const sensim_bag_topic *t = sensim_bag_topic_at(s->bag, q->topic);
    if (q->any_out && e.stamp < q->last_out) {
        st = sensim_error(SENSIM_EDATA,
                          "%s: topic '%s': message %llu: stamp %.9f s is %.9f s older than a message already "
                          "written, beyond the %d-message reorder window (try --time receive)",
                          sensim_bag_path(s->bag), t->name, (unsigned long long)e.index, e.stamp * 1e-9,
                          (q->last_out - e.stamp) * 1e-9, REORDER_MAX);
    } else if (q->any_out && e.stamp == q->last_out) {
        q->st.duplicates++;
    } else {
        if (q->any_out) {
            double dt = (double)(e.stamp - q->last_out) / 1e9;
            if (q->median_known)
                q->st.gaps += dt > 1.5 * q->st.median_dt;
            else {
                q->dts[q->ndts++] = dt;
                if (q->ndts == DT_KEEP)
                    median_and_gaps(q);
            }
        } else
            q->st.first_ns = e.stamp;
        q->last_out = q->st.last_ns = e.stamp;
        q->any_out = 1;
        q->st.messages++;
        st = emit(ctx, k, e.stamp, e.index, e.data, e.size);
    }
    give_buffer(q, &e);
    return st;
}

sensim_status cli_bag_stream_run(cli_bag_stream *s, cli_bag_emit emit, void *ctx)
{
    size_t *tops = malloc((s->nsel ? s->nsel : 1) * sizeof *tops);
    if (!tops)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->nsel; i++)
        tops[i] = s->sel[i].topic;
    sensim_status st = sensim_bag_select(s->bag, tops, s->nsel);
    free(tops);
    if (st)
        return st;
    const char *path = sensim_bag_path(s->bag);
    sensim_bag_msg m;
    int r;
    while ((r = sensim_bag_next(s->bag, &m)) == 1) {
        size_t k1 = m.topic < sensim_bag_ntopics(s->bag) ? s->topic_sel[m.topic] : 0;
        if (!k1)
            continue;
        sel_state *q = &s->sel[k1 - 1];
        const sensim_bag_topic *t = sensim_bag_topic_at(s->bag, q->topic);
        int64_t stamp = m.recv_ns;
        sensim_msg_header h; /* frame_id of the message (TF: of the picked transform) */
        if (q->kind == SENSIM_MSG_TF) {
            sensim_msg_transform_stamped tf;
            int f = cli_bag_find_tf(t->encoding, m.data, m.size, s->tf_parent, s->tf_child, &tf);
            if (f < 0)
                return sensim_error_prefix(sensim_last_status(), "%s: topic '%s': message %llu", path, t->name,
                                           (unsigned long long)m.index);
            if (f == 0) {
                q->st.skipped++;
                continue;
            }
            h = tf.header;
        } else if (sensim_msg_decode_header(t->encoding, m.data, m.size, &h))
            return sensim_error_prefix(sensim_last_status(), "%s: topic '%s': message %llu", path, t->name,
                                       (unsigned long long)m.index);
        if (!s->time_receive)
            stamp = h.stamp_ns;
        if (!q->any_seen) {
            snprintf(q->st.frame_id, sizeof q->st.frame_id, "%s", h.frame_id);
        } else {
            if (stamp < q->max_seen)
                q->st.reordered++;
            if (strcmp(h.frame_id, q->st.frame_id))
                q->st.frame_changes++;
        }
        if (!q->any_seen || stamp > q->max_seen)
            q->max_seen = stamp;
        q->any_seen = 1;
        if (!s->have_first) {
            s->first_ns = stamp;
            s->have_first = 1;
        }
        entry e = {stamp, q->seq++, m.index, NULL, m.size, 0};
        if (take_buffer(q, &e, m.size))
            return sensim_error(SENSIM_ENOMEM, "out of memory");
        memcpy(e.data, m.data, m.size);
        if (window_push(q, &e)) {
            free(e.data);
            return sensim_error(SENSIM_ENOMEM, "out of memory");
        }
        while (q->n > REORDER_MAX || q->bytes > REORDER_BYTES)
            if ((st = out_one(s, k1 - 1, emit, ctx)))
                return st;
    }
    if (r < 0)
        return sensim_last_status() ? sensim_last_status() : SENSIM_EFORMAT;
    for (size_t k = 0; k < s->nsel; k++) {
        while (s->sel[k].n)
            if ((st = out_one(s, k, emit, ctx)))
                return st;
        if (!s->sel[k].median_known && s->sel[k].ndts)
            median_and_gaps(&s->sel[k]);
    }
    return SENSIM_OK;
}
