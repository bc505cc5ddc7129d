/* A GNSS log's series, as the GNSS fit takes them (sensim/gnssfit.h):
 * times, positions in ENU (converted from /lla when there is no /enu),
 * HDOP and the reported covariance when the log has them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/geodesy.h"
#include "sensim/gnssfit.h"
#include "sensim/log.h"
#include "../lib/base_internal.h"

void sensim_gnss_series_free(sensim_gnss_series *s)
{
    SENSIM_FREE_ALL(s->t, s->enu, s->hdop, s->cov);
    memset(s, 0, sizeof *s);
}

/* Positions given as /lla (deg, deg, m): to ENU about the group's
 * origin_lla, else the first fix. */
static sensim_status read_lla(const sensim_log *log, const char *path, const char *p, sensim_gnss_series *g)
{
    const size_t n = g->n;
    sensim_status st = SENSIM_OK;
    double *lla = malloc(3 * n * sizeof *lla);
    if (!lla || (st = sensim_log_read_f64(log, p, 0, n, lla))) {
        st = lla ? st : sensim_error(SENSIM_ENOMEM, "out of memory");
        free(lla);
        return st;
    }
    if (!g->have_origin) {
        memcpy(g->origin, lla, sizeof g->origin);
        g->have_origin = 1;
    }
    sensim_geo_enu frame;
    if ((st = sensim_geo_enu_init(&frame, g->origin))) {
        sensim_error_prefix(st, "%s: %s: origin", path, p);
        free(lla);
        return st;
    }
    for (size_t k = 0; k < n && !st; k++) {
        if (!isfinite(lla[3 * k]) || !isfinite(lla[3 * k + 1]) || !isfinite(lla[3 * k + 2]))
            st = sensim_error(SENSIM_EDATA, "%s: %s row %zu is not finite", path, p, k);
        else
            sensim_geo_lla_to_enu(&frame, lla + 3 * k, g->enu + 3 * k);
    }
    free(lla);
    return st;
}

sensim_status sensim_gnss_series_read(const char *path, const char *sensor, sensim_gnss_series *g)
{
    memset(g, 0, sizeof *g);
    sensim_log *log = sensim_log_open(path);
    if (!log)
        return sensim_last_status();
    char p[512];
    sensim_status st = SENSIM_OK;
    size_t n = 0, three = 3, n2 = 0;
    snprintf(p, sizeof p, "/sensors/%s", sensor);
    if (!sensim_log_exists(log, p)) {
        st = sensim_error(SENSIM_ENOTFOUND, "%s: no sensor group %s", path, p);
        goto done;
    }
    snprintf(p, sizeof p, "/sensors/%s/t", sensor);
    if (!sensim_log_exists(log, p)) {
        st = sensim_error(SENSIM_ENOTFOUND, "%s: %s: dataset missing", path, p);
        goto done;
    }
    if ((st = sensim_log_check_time(log, p, &n)))
        goto done;
    g->n = n;
    g->t = malloc(n * sizeof *g->t);
    g->enu = malloc(3 * n * sizeof *g->enu);
    if (!g->t || !g->enu) {
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
        goto done;
    }
    if ((st = sensim_log_read_f64(log, p, 0, n, g->t)))
        goto done;
    snprintf(p, sizeof p, "/sensors/%s", sensor);
    if (sensim_log_has_attr(log, p, "origin_lla") && !sensim_log_get_attr_f64(log, p, "origin_lla", g->origin, 3))
        g->have_origin = 1;
    double r;
    if (sensim_log_has_attr(log, p, "rate_hz") && !sensim_log_get_attr_f64(log, p, "rate_hz", &r, 1) && r > 0)
        g->rate = r;
    snprintf(p, sizeof p, "/sensors/%s/enu", sensor);
    if (sensim_log_exists(log, p)) {
        if ((st = sensim_log_check_shape(log, p, 1, &three, &n2)))
            goto done;
        if (n2 != n) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows, t has %zu", path, p, n2, n);
            goto done;
        }
        st = sensim_log_read_f64(log, p, 0, n, g->enu);
    } else {
        snprintf(p, sizeof p, "/sensors/%s/lla", sensor);
        if (!sensim_log_exists(log, p)) {
            st = sensim_error(SENSIM_ENOTFOUND, "%s: /sensors/%s has neither enu nor lla", path, sensor);
            goto done;
        }
        if ((st = sensim_log_check_shape(log, p, 1, &three, &n2)))
            goto done;
        if (n2 != n) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows, t has %zu", path, p, n2, n);
            goto done;
        }
        st = read_lla(log, path, p, g);
    }
    if (st)
        goto done;
    snprintf(p, sizeof p, "/sensors/%s/hdop", sensor);
    if (sensim_log_exists(log, p)) {
        if ((st = sensim_log_check_shape(log, p, 0, NULL, &n2)))
            goto done;
        if (n2 != n) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows, t has %zu", path, p, n2, n);
            goto done;
        }
        g->hdop = malloc(n * sizeof *g->hdop);
        if (!g->hdop) {
            st = sensim_error(SENSIM_ENOMEM, "out of memory");
            goto done;
        }
        if ((st = sensim_log_read_f64(log, p, 0, n, g->hdop)))
            goto done;
    }
    snprintf(p, sizeof p, "/sensors/%s/position_covariance", sensor);
    if (sensim_log_exists(log, p)) {
        size_t nine = 9;
        if ((st = sensim_log_check_shape(log, p, 1, &nine, &n2)))
            goto done;
        if (n2 != n) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows, t has %zu", path, p, n2, n);
            goto done;
        }
        g->cov = malloc(9 * n * sizeof *g->cov);
        if (!g->cov) {
            st = sensim_error(SENSIM_ENOMEM, "out of memory");
            goto done;
        }
        st = sensim_log_read_f64(log, p, 0, n, g->cov);
    }
done:
    sensim_log_close(log);
    return st;
}
