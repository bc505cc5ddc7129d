/* Series and temporary logs from a recording, for allan and fit (see
 * bagcli.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bagcli.h"

typedef struct series_ctx {
    const char *path;
    const sensim_bag_topic *t;
    sensim_msg_kind kind;
    int q; /* 0 angular_velocity, 1 specific_force, 2 magnetic_field */
    double *x;
    size_t n, cap;
} series_ctx;

static sensim_status series_emit(void *ctx, size_t sel, int64_t stamp, uint64_t index, const uint8_t *data,
                                 size_t size)
{
    (void)sel;
    (void)stamp;
    series_ctx *c = ctx;
    const double *v;
    sensim_msg_imu imu;
    sensim_msg_magnetic_field mag;
    sensim_status st;
    if (c->kind == SENSIM_MSG_IMU) {
        st = sensim_msg_decode_imu(c->t->encoding, data, size, &imu);
        v = c->q == 0 ? imu.angular_velocity : imu.linear_acceleration;
    } else {
        st = sensim_msg_decode_magnetic_field(c->t->encoding, data, size, &mag);
        v = mag.magnetic_field;
    }
    if (st)
        return sensim_error_prefix(st, "%s: topic '%s': message %llu", c->path, c->t->name,
                                   (unsigned long long)index);
    for (int i = 0; i < 3; i++)
        if (!isfinite(v[i]))
            return sensim_error(SENSIM_EDATA, "%s: topic '%s': message %llu: axis %d is %s", c->path, c->t->name,
                                (unsigned long long)index, i, isnan(v[i]) ? "NaN" : "infinite");
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 4096;
        double *x = realloc(c->x, 3 * cap * sizeof *x);
        if (!x)
            return sensim_error(SENSIM_ENOMEM, "out of memory for %zu samples", cap);
        c->x = x;
        c->cap = cap;
    }
    memcpy(c->x + 3 * c->n++, v, 3 * sizeof *v);
    return SENSIM_OK;
}

sensim_status cli_bag_series_rate(const char *path, const char *topic, const cli_bag_stats *bst, size_t n,
                                  double rate, double *out)
{
    if (n < 3)
        return sensim_error(SENSIM_EDATA, "%s: topic '%s': %zu messages; need at least 3", path, topic, n);
    double dt = bst->median_dt;
    if (rate > 0) {
        if (dt > 0 && fabs(rate * dt - 1) > 0.01)
            return sensim_error(SENSIM_EDATA, "%s: topic '%s': --rate %g Hz does not match the stamps (median spacing "
                                "%g s, %g Hz)", path, topic, rate, dt, 1 / dt);
        *out = rate;
    } else if (dt > 0)
        *out = 1 / dt;
    else
        return sensim_error(SENSIM_EDATA, "%s: topic '%s': no usable stamps for a rate; give --rate", path, topic);
    if (bst->gaps || bst->duplicates)
        fprintf(stderr, "sensim: %s: topic '%s': %llu gaps, %llu duplicate stamps dropped; the series is taken as "
                "evenly spaced at %.6g Hz\n", path, topic, (unsigned long long)bst->gaps,
                (unsigned long long)bst->duplicates, *out);
    return SENSIM_OK;
}

sensim_status cli_series_bag(const char *path, const char *topic, const char *quantity, double rate, int time_receive,
                             cli_series *s)
{
    memset(s, 0, sizeof *s);
    series_ctx c = {.path = path};
    c.q = !strcmp(quantity, "angular_velocity") ? 0 : !strcmp(quantity, "specific_force") ? 1 : 2;
    cli_bag_stream *bs = cli_bag_stream_open(path, &topic, 1, time_receive, NULL, NULL);
    if (!bs)
        return sensim_last_status();
    sensim_status st = SENSIM_OK;
    c.t = cli_bag_stream_topic(bs, 0);
    c.kind = cli_bag_stream_kind(bs, 0);
    if (c.kind != SENSIM_MSG_IMU && c.kind != SENSIM_MSG_MAGNETIC_FIELD) {
        st = sensim_error(SENSIM_EUNSUPPORTED, "%s: topic '%s' holds %s; a series needs sensor_msgs/Imu or "
                          "sensor_msgs/MagneticField", path, c.t->name, c.t->type);
        goto done;
    }
    if ((c.kind == SENSIM_MSG_IMU) != (c.q < 2)) {
        st = sensim_error(SENSIM_ENOTFOUND, "%s: topic '%s' (%s) has no %s", path, c.t->name, c.t->type, quantity);
        goto done;
    }
    if ((st = cli_bag_stream_run(bs, series_emit, &c)))
        goto done;
    if ((st = cli_bag_series_rate(path, c.t->name, cli_bag_stream_stats(bs, 0), c.n, rate, &s->rate)))
        goto done;
    s->x = c.x;
    c.x = NULL;
    s->n = c.n;
    s->naxes = 3;
    snprintf(s->units, sizeof s->units, "%s", c.q == 0 ? "rad/s" : c.q == 1 ? "m/s^2" : "T");
done:
    free(c.x);
    cli_bag_stream_free(bs);
    return st;
}

sensim_status cli_bag_temp_log(const char *path, const char *topic, int time_receive, char **tmp, char **sensor)
{
    *tmp = NULL;
    *sensor = NULL;
    const char *dir = getenv("TMPDIR");
    size_t n = strlen(dir && *dir ? dir : "/tmp") + 32;
    char *p = malloc(n), *name = malloc(strlen(topic) + 1);
    if (!p || !name) {
        free(p);
        free(name);
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    }
    snprintf(p, n, "%s/sensim-bag-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(p);
    if (fd < 0) {
        sensim_status st = sensim_error(SENSIM_EIO, "cannot create a temporary file %s", p);
        free(p);
        free(name);
        return st;
    }
    close(fd);
    const char *q = topic + (topic[0] == '/');
    size_t i = 0;
    for (; q[i]; i++)
        name[i] = q[i] == '/' ? '_' : q[i];
    name[i] = '\0';
    char spec[600];
    snprintf(spec, sizeof spec, "%s:%s", topic, name);
    char *argv[] = {"import", (char *)path, "--topic", spec, "-o", p, "--time",
                    time_receive ? "receive" : "header", NULL};
    int rc = cli_import_bag_run(8, argv, NULL);
    if (rc != 0) {
        unlink(p);
        free(p);
        free(name);
        return sensim_last_status() ? sensim_last_status() : SENSIM_EFORMAT;
    }
    *tmp = p;
    *sensor = name;
    return SENSIM_OK;
}
