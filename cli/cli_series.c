/* Series input for the calibration verbs; see cli_series.h. */
#include "cli_series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/csv.h"
#include "sensim/log.h"

void cli_series_free(cli_series *s)
{
    if (s) {
        free(s->x);
        s->x = NULL;
    }
}

sensim_status cli_series_csv(const char *path, size_t column, double rate, cli_series *s)
{
    memset(s, 0, sizeof *s);
    if (!(rate > 0) || !isfinite(rate))
        return sensim_error(SENSIM_EINVAL, "%s: a sample rate (--rate HZ, > 0) is needed for CSV input", path);
    sensim_status st = sensim_csv_read_column(path, column, &s->x, &s->n);
    if (st)
        return st;
    s->naxes = 1;
    s->rate = rate;
    return SENSIM_OK;
}

/* The k-th smallest of v[0..n) (v is reordered): Hoare's selection, O(n)
 * on average, where sorting the 1e5 spacings cost more than the rest of a
 * short command. */
static double select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double tmp = v[i];
                v[i] = v[j];
                v[j] = tmp;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

/* Median spacing of t over at most the first 100001 samples. */
static sensim_status median_dt(const sensim_log *log, const char *tpath, size_t n, double *dt)
{
    size_t k = n < 100001 ? n : 100001;
    double *t = malloc(k * sizeof *t);
    if (!t)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    sensim_status st = sensim_log_read_f64(log, tpath, 0, k, t);
    if (!st) {
        for (size_t i = 0; i + 1 < k; i++)
            t[i] = t[i + 1] - t[i];
        *dt = k > 1 ? select_kth(t, k - 1, (k - 1) / 2) : t[0];
    }
    free(t);
    return st;
}

static sensim_status series_h5(const char *path, const char *sensor, const char *quantity, double rate, cli_series *s,
                               int load)
{
    memset(s, 0, sizeof *s);
    sensim_log *log = sensim_log_open(path);
    if (!log)
        return sensim_last_status();
    char group[256], dset[320], tpath[320];
    snprintf(group, sizeof group, "/sensors/%s", sensor);
    snprintf(dset, sizeof dset, "%s/%s", group, quantity);
    snprintf(tpath, sizeof tpath, "%s/t", group);
    sensim_status st = SENSIM_OK;
    if (!sensim_log_exists(log, group)) {
        char **names = NULL, list[512] = "";
        size_t cnt = 0;
        if (sensim_log_exists(log, "/sensors") && !sensim_log_list(log, "/sensors", &names, &cnt))
            for (size_t i = 0; i < cnt; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
        sensim_log_free_names(names, cnt);
        st = sensim_error(SENSIM_ENOTFOUND, "%s: no sensor '%s' (%s%s)", path, sensor, cnt ? "sensors: " : "no /sensors group",
                          list);
        goto done;
    }
    const size_t tail[1] = {3};
    size_t n = 0;
    if ((st = sensim_log_check_shape(log, dset, 1, tail, &n)))
        goto done;
    if (n < 3) {
        st = sensim_error(SENSIM_EDATA, "%s: %s: %zu samples; need at least 3", path, dset, n);
        goto done;
    }
    double attr = 0, dt = 0;
    int has_attr = sensim_log_has_attr(log, group, "rate_hz") && !sensim_log_get_attr_f64(log, group, "rate_hz", &attr, 1) &&
                   attr > 0;
    int has_t = sensim_log_exists(log, tpath);
    if (has_t) {
        /* The whole of t through the one validator before any value is
         * trusted, and its length against the data's. */
        size_t nt = 0;
        if ((st = sensim_log_check_time(log, tpath, &nt)))
            goto done;
        if (nt != n) {
            st = sensim_error(SENSIM_EDATA, "%s: %s has %zu rows but %s has %zu: the datasets disagree", path, tpath,
                              nt, dset, n);
            goto done;
        }
        if ((st = median_dt(log, tpath, n, &dt)))
            goto done;
    }
    if (rate > 0) {
        if (has_t && dt > 0 && fabs(rate * dt - 1) > 0.01) {
            st = sensim_error(SENSIM_EDATA, "%s: --rate %g Hz does not match %s (median spacing %g s, %g Hz)", path,
                              rate, tpath, dt, 1 / dt);
            goto done;
        }
        s->rate = rate;
    } else if (has_attr) {
        /* The attribute is what the rig asked for; t is what the log holds.
         * Trusting a wrong attribute silently scales every tau (and the
         * fitted densities with it), so they must agree (1 %, as --rate). */
        if (has_t && dt > 0 && fabs(attr * dt - 1) > 0.01) {
            st = sensim_error(SENSIM_EDATA,
                              "%s: %s/rate_hz is %g Hz but %s is spaced %g s (%g Hz); fix the attribute or give "
                              "--rate",
                              path, group, attr, tpath, dt, 1 / dt);
            goto done;
        }
        s->rate = attr;
    }
    else if (has_t && dt > 0)
        s->rate = 1 / dt;
    else {
        st = sensim_error(SENSIM_ENOTFOUND, "%s: %s has no rate_hz attribute and no usable t; give --rate", path, group);
        goto done;
    }
    if (!load)
        goto meta;
    s->x = malloc(n * 3 * sizeof *s->x);
    if (!s->x) {
        st = sensim_error(SENSIM_ENOMEM, "%s: out of memory for %zu samples", path, n);
        goto done;
    }
    if ((st = sensim_log_read_f64(log, dset, 0, n, s->x)))
        goto done;
    for (size_t i = 0; i < 3 * n; i++)
        if (!isfinite(s->x[i])) {
            st = sensim_error(SENSIM_EDATA, "%s: %s: row %zu axis %zu is %s", path, dset, i / 3, i % 3,
                              isnan(s->x[i]) ? "NaN" : "infinite");
            goto done;
        }
meta:;
    /* The read converted the values to the layout's unit; the label follows. */
    const char *lu = sensim_log_layout_units(dset);
    char *u = NULL;
    if (lu && strcmp(lu, "*"))
        snprintf(s->units, sizeof s->units, "%s", lu);
    else if (sensim_log_has_attr(log, dset, "units") && !sensim_log_get_attr_string(log, dset, "units", &u)) {
        snprintf(s->units, sizeof s->units, "%s", u);
        free(u);
    }
    s->n = n;
    s->naxes = 3;
done:
    if (st)
        cli_series_free(s);
    sensim_log_close(log);
    return st;
}

sensim_status cli_series_h5(const char *path, const char *sensor, const char *quantity, double rate, cli_series *s)
{
    return series_h5(path, sensor, quantity, rate, s, 1);
}

sensim_status cli_series_h5_info(const char *path, const char *sensor, const char *quantity, double rate,
                                 cli_series *s)
{
    return series_h5(path, sensor, quantity, rate, s, 0);
}
