/* Sensor series read in blocks for allan and fit imu (series_stream.h). */
#include "series_stream.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/base_internal.h"
#include "bagcli.h"
#include "cli_series.h"
#include "sensim/log.h"

struct cli_stream {
    const char *path;
    sensim_log *log;  /* HDF5: the log and its datasets */
    char dset[2][320];
    int fd;           /* recording: the spool of n rows of naxes doubles */
    size_t nq, naxes, n;
    double rate;
    char units[32];
    double *tmp;      /* 3 columns of a block (HDF5) or naxes (spool) */
    size_t tmprows;
    int failed;
    /* HDF5 datasets stored plainly are read with pread (sensim_log_extents)
     * from any number of threads; h5lock guards the HDF5 library then. */
    int rawfd;
    sensim_log_extent *ext[2];
    size_t next[2];
    int swap[2];
    double fac[2][3];
    pthread_mutex_t h5lock;
};

static void stream_free(cli_stream *s)
{
    if (!s)
        return;
    if (s->log)
        sensim_log_close(s->log);
    if (s->fd >= 0)
        close(s->fd);
    if (s->rawfd >= 0)
        close(s->rawfd);
    free(s->ext[0]);
    free(s->ext[1]);
    pthread_mutex_destroy(&s->h5lock);
    free(s->tmp);
    free(s);
}

static cli_stream *stream_new(const char *path, size_t nq)
{
    cli_stream *s = calloc(1, sizeof *s);
    if (!s) {
        sensim_error(SENSIM_ENOMEM, "out of memory");
        return NULL;
    }
    s->path = path;
    s->fd = -1;
    s->rawfd = -1;
    pthread_mutex_init(&s->h5lock, NULL);
    s->nq = nq;
    s->naxes = 3 * nq;
    return s;
}

static sensim_status tmp_rows(cli_stream *s, size_t rows, size_t width)
{
    if (rows > s->tmprows) {
        free(s->tmp);
        s->tmp = malloc(rows * width * sizeof *s->tmp);
        s->tmprows = s->tmp ? rows : 0;
        if (!s->tmp)
            return sensim_error(SENSIM_ENOMEM, "%s: out of memory for %zu rows", s->path, rows);
    }
    return SENSIM_OK;
}

/* Whether v[0..n) holds a NaN or an infinity: 0 * v is 0 for a finite v
 * and NaN otherwise, summed in eight lanes that the compiler maps to
 * vector registers (isfinite, or a test of the exponent bits, stays scalar
 * on baseline x86-64). */
static int any_nonfinite(const double *v, size_t n)
{
    double lane[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
            lane[j] += 0 * v[i + j];
    for (; i < n; i++)
        lane[0] += 0 * v[i];
    double all = 0;
    for (int j = 0; j < 8; j++)
        all += lane[j];
    return all != 0 || isnan(all);
}

/* The error for the first non-finite value of v[0..3 count) of quantity q,
 * if any. */
static sensim_status check_finite(const cli_stream *s, size_t q, size_t start, size_t count, const double *v)
{
    if (any_nonfinite(v, 3 * count))
        for (size_t i = 0; i < 3 * count; i++)
            if (!isfinite(v[i]))
                return sensim_error(SENSIM_EDATA, "%s: %s: row %zu axis %zu is %s", s->path, s->dset[q],
                                    start + i / 3, i % 3, isnan(v[i]) ? "NaN" : "infinite");
    return SENSIM_OK;
}

/* Rows [start, start + count) of quantity q into v with pread, as
 * sensim_log_read_f64 gives them; nonzero when a read came short. */
static int raw_rows(const cli_stream *s, size_t q, size_t start, size_t count, double *v)
{
    return sensim_log_extents_read(s->rawfd, s->ext[q], s->next[q], 3, s->swap[q], s->fac[q], start, count, v);
}

/* Rows of the HDF5 datasets, from any number of threads at once: with
 * pread where the datasets allow (raw_setup), else through HDF5 one thread
 * at a time (its library is not thread-safe), the checks and copies outside
 * that lock. */
static sensim_status h5_read(void *ctx, size_t start, size_t count, size_t a0, size_t a1, double *buf)
{
    cli_stream *s = ctx;
    const size_t w = a1 - a0;
    sensim_status st = SENSIM_OK;
    double *tmp = NULL;
    for (size_t q = a0 / 3; q < s->nq && 3 * q < a1 && !st; q++) {
        /* A whole quantity asked alone lands in buf as the dataset holds
         * it; otherwise its columns are picked from a block in tmp. */
        int direct = a0 == 3 * q && w == 3;
        if (!direct && !tmp && !(tmp = sensim_read_buf_(count * 3 * sizeof *tmp))) {
            st = sensim_error(SENSIM_ENOMEM, "%s: out of memory for %zu rows", s->path, count);
            break;
        }
        double *v = direct ? buf : tmp;
        if (s->rawfd < 0 || raw_rows(s, q, start, count, v)) {
            /* (a short pread: the file changed or failed; HDF5 says how) */
            pthread_mutex_lock(&s->h5lock);
            st = sensim_log_read_f64(s->log, s->dset[q], start, count, v);
            pthread_mutex_unlock(&s->h5lock);
            if (st)
                break;
        }
        st = check_finite(s, q, start, count, v);
        for (size_t i = 0; i < count && !st && !direct; i++)
            for (size_t k = 0; k < 3; k++) {
                size_t a = 3 * q + k;
                if (a >= a0 && a < a1)
                    buf[i * w + a - a0] = v[3 * i + k];
            }
    }
    free(tmp);
    if (st)
        __atomic_store_n(&s->failed, 1, __ATOMIC_RELAXED);
    return st;
}

/* Whether every quantity can be read with pread (SENSIM_HDF5_PREAD=0: never,
 * for tests that compare both ways); sets up s->rawfd and s->ext. */
static void raw_setup(cli_stream *s)
{
    const char *e = getenv("SENSIM_HDF5_PREAD");
    if (e && !strcmp(e, "0"))
        return;
    for (size_t q = 0; q < s->nq; q++) {
        if (sensim_log_extents(s->log, s->dset[q], &s->ext[q], &s->next[q], &s->swap[q], s->fac[q], 3))
            goto no;
    }
    struct stat sb;
    if ((s->rawfd = open(s->path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(s->rawfd, &sb))
        goto no;
    /* Every extent inside the file: a truncated one is left to HDF5. */
    for (size_t q = 0; q < s->nq; q++)
        for (size_t k = 0; k < s->next[q]; k++)
            if (s->ext[q][k].offset + s->ext[q][k].nrows * 3 * sizeof(double) > (uint64_t)sb.st_size)
                goto no;
    return;
no:
    if (s->rawfd >= 0)
        close(s->rawfd);
    s->rawfd = -1;
    for (size_t q = 0; q < s->nq; q++) {
        free(s->ext[q]);
        s->ext[q] = NULL;
    }
}

static sensim_status spool_read(void *ctx, size_t start, size_t count, size_t a0, size_t a1, double *buf)
{
    cli_stream *s = ctx;
    const size_t w = a1 - a0, na = s->naxes;
    sensim_status st = tmp_rows(s, count, na);
    if (!st) {
        size_t want = count * na * sizeof(double), got = 0;
        off_t off = (off_t)(start * na * sizeof(double));
        while (got < want) {
            ssize_t r = pread(s->fd, (char *)s->tmp + got, want - got, off + (off_t)got);
            if (r <= 0) {
                st = sensim_error(SENSIM_EIO, "%s: reading the temporary copy of the series failed", s->path);
                break;
            }
            got += (size_t)r;
        }
    }
    for (size_t i = 0; i < count && !st; i++)
        for (size_t a = a0; a < a1; a++)
            buf[i * w + a - a0] = s->tmp[i * na + a];
    s->failed = st != SENSIM_OK;
    return st;
}

/* Fills a new stream s of a log's sensor (cli_stream_open_h5); stream_open
 * frees it on failure. */
static sensim_status h5_fill(cli_stream *s, const char *path, const char *sensor, const char *const *quantities,
                             size_t nq, double rate)
{
    sensim_status st = SENSIM_OK;
    cli_series info;
    /* The first quantity brings the checks of the sensor's t (read whole
     * once) and its rate; the second shares that t, so only its shape is
     * checked against it. */
    if (!(st = cli_series_h5_info(path, sensor, quantities[0], rate, &info))) {
        s->n = info.n;
        s->rate = info.rate;
        snprintf(s->units, sizeof s->units, "%s", info.units);
    }
    if (!st && !(s->log = sensim_log_open(path)))
        st = sensim_last_status();
    for (size_t q = 0; q < nq && !st; q++) {
        snprintf(s->dset[q], sizeof s->dset[q], "/sensors/%s/%s", sensor, quantities[q]);
        const size_t tail[1] = {3};
        size_t nq_rows = 0;
        if (q && !(st = sensim_log_check_shape(s->log, s->dset[q], 1, tail, &nq_rows)) && nq_rows != s->n)
            st = sensim_error(SENSIM_EDATA, "%s: sensor %s: %s has %zu samples, %s %zu", path, sensor, quantities[0],
                              s->n, quantities[q], nq_rows);
    }
    if (!st)
        raw_setup(s);
    return st;
}

typedef struct spool_ctx {
    cli_stream *s;
    const sensim_bag_topic *t;
    sensim_msg_kind kind;
    int q[2]; /* 0 angular_velocity, 1 specific_force, 2 magnetic_field */
    FILE *f;
    size_t n;
} spool_ctx;

static sensim_status spool_emit(void *ctx, size_t sel, int64_t stamp, uint64_t index, const uint8_t *data,
                                size_t size)
{
    (void)sel;
    (void)stamp;
    spool_ctx *c = ctx;
    sensim_msg_imu imu;
    sensim_msg_magnetic_field mag;
    sensim_status st = c->kind == SENSIM_MSG_IMU ? sensim_msg_decode_imu(c->t->encoding, data, size, &imu)
                                                 : sensim_msg_decode_magnetic_field(c->t->encoding, data, size, &mag);
    if (st)
        return sensim_error_prefix(st, "%s: topic '%s': message %llu", c->s->path, c->t->name,
                                   (unsigned long long)index);
    double row[6];
    for (size_t q = 0; q < c->s->nq; q++) {
        const double *v = c->q[q] == 0 ? imu.angular_velocity : c->q[q] == 1 ? imu.linear_acceleration
                                                                              : mag.magnetic_field;
        for (int i = 0; i < 3; i++) {
            if (!isfinite(v[i]))
                return sensim_error(SENSIM_EDATA, "%s: topic '%s': message %llu: axis %d is %s", c->s->path,
                                    c->t->name, (unsigned long long)index, i, isnan(v[i]) ? "NaN" : "infinite");
            row[3 * q + (size_t)i] = v[i];
        }
    }
    if (fwrite(row, sizeof *row, c->s->naxes, c->f) != c->s->naxes)
        return sensim_error(SENSIM_EIO, "%s: cannot write the temporary copy of the series (disk full?)", c->s->path);
    c->n++;
    return SENSIM_OK;
}

/* Fills a new stream s of a recording's topic (cli_stream_open_bag). */
static sensim_status bag_fill(cli_stream *s, const char *path, const char *topic, const char *const *quantities,
                              size_t nq, double rate)
{
    spool_ctx c = {.s = s};
    for (size_t q = 0; q < nq; q++)
        c.q[q] = !strcmp(quantities[q], "angular_velocity") ? 0 : !strcmp(quantities[q], "specific_force") ? 1 : 2;
    sensim_status st = SENSIM_OK;
    cli_bag_stream *bs = cli_bag_stream_open(path, &topic, 1, 0, NULL, NULL);
    if (!bs)
        return sensim_last_status();
    c.t = cli_bag_stream_topic(bs, 0);
    c.kind = cli_bag_stream_kind(bs, 0);
    if (c.kind != SENSIM_MSG_IMU && c.kind != SENSIM_MSG_MAGNETIC_FIELD) {
        st = sensim_error(SENSIM_EUNSUPPORTED, "%s: topic '%s' holds %s; a series needs sensor_msgs/Imu or "
                          "sensor_msgs/MagneticField", path, c.t->name, c.t->type);
        goto done;
    }
    for (size_t q = 0; q < nq && !st; q++)
        if ((c.kind == SENSIM_MSG_IMU) != (c.q[q] < 2))
            st = sensim_error(SENSIM_ENOTFOUND, "%s: topic '%s' (%s) has no %s", path, c.t->name, c.t->type,
                              quantities[q]);
    if (st)
        goto done;
    /* The spool: a temporary file, unlinked at once. */
    const char *dir = getenv("TMPDIR");
    char tpl[4096];
    snprintf(tpl, sizeof tpl, "%s/sensim-series-XXXXXX", dir && *dir ? dir : "/tmp");
    s->fd = mkstemp(tpl);
    if (s->fd < 0) {
        st = sensim_error(SENSIM_EIO, "cannot create a temporary file %s", tpl);
        goto done;
    }
    unlink(tpl);
    int fd2 = dup(s->fd);
    if (fd2 < 0 || !(c.f = fdopen(fd2, "wb"))) {
        if (fd2 >= 0)
            close(fd2);
        st = sensim_error(SENSIM_EIO, "cannot open a temporary file");
        goto done;
    }
    st = cli_bag_stream_run(bs, spool_emit, &c);
    if (fclose(c.f) && !st)
        st = sensim_error(SENSIM_EIO, "%s: cannot write the temporary copy of the series (disk full?)", path);
    if (st)
        goto done;
    if ((st = cli_bag_series_rate(path, c.t->name, cli_bag_stream_stats(bs, 0), c.n, rate, &s->rate)))
        goto done;
    s->n = c.n;
    snprintf(s->units, sizeof s->units, "%s", c.q[0] == 0 ? "rad/s" : c.q[0] == 1 ? "m/s^2" : "T");
done:
    cli_bag_stream_free(bs);
    return st;
}

typedef sensim_status (*stream_fill)(cli_stream *s, const char *path, const char *source, const char *const *quantities,
                                     size_t nq, double rate);

/* The one lifecycle of both opens: a new stream, filled from the sensor or
 * topic `source`, handed out or freed. */
static sensim_status stream_open(stream_fill fill, const char *path, const char *source, const char *const *quantities,
                                 size_t nq, double rate, cli_stream **out)
{
    *out = NULL;
    cli_stream *s = stream_new(path, nq);
    if (!s)
        return sensim_last_status();
    sensim_status st = fill(s, path, source, quantities, nq, rate);
    if (st) {
        stream_free(s);
        return st;
    }
    *out = s;
    return SENSIM_OK;
}

sensim_status cli_stream_open_h5(const char *path, const char *sensor, const char *const *quantities, size_t nq,
                                 double rate, cli_stream **out)
{
    return stream_open(h5_fill, path, sensor, quantities, nq, rate, out);
}

sensim_status cli_stream_open_bag(const char *path, const char *topic, const char *const *quantities, size_t nq,
                                  double rate, cli_stream **out)
{
    return stream_open(bag_fill, path, topic, quantities, nq, rate, out);
}

size_t cli_stream_n(const cli_stream *s) { return s->n; }
double cli_stream_rate(const cli_stream *s) { return s->rate; }
const char *cli_stream_units(const cli_stream *s) { return s->units; }
int cli_stream_failed(const cli_stream *s) { return s->failed; }

sensim_allan_source cli_stream_source(cli_stream *s)
{
    sensim_allan_source src = {s->log ? h5_read : spool_read, s, s->n, s->naxes, s->log != NULL};
    return src;
}

void cli_stream_close(cli_stream *s)
{
    stream_free(s);
}

size_t cli_stream_budget(void)
{
    const char *e = getenv("SENSIM_ALLAN_MB");
    char *end;
    double mb = e && *e ? strtod(e, &end) : 0;
    if (!e || !*e || *end || !(mb > 0) || mb > 1e6)
        return 0;
    size_t b = (size_t)(mb * 1048576.0);
    return b ? b : 1;
}
