/* sensim fit gnss - GNSS noise parameters from a standstill log (Chrono
 * Ch:Gauss / Ch:RW, Gauss-Markov, Gauss-Markov plus white noise, outliers,
 * AirSim HDOP low-pass), written as a rig
 * YAML that `sensim inject` takes back. Estimators: sensim/gnssfit.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bagcli.h"
#include "cli.h"
#include "fit.h"
#include "sensim/afile.h"
#include "sensim/gnss.h"
#include "sensim/gnssfit.h"
#include "sensim/rig.h"
#include "sensim/log.h"
#include "sensim/quantile.h"
#include "../lib/base_internal.h"

#define VERB "fit gnss"

enum { O_RATE = CLI_LONG, O_AMAX, O_POWER, O_JSON, O_OTHR, O_KEEP, O_TOPIC };

static const cli_opt cli_fit_gnss_opts[] = {
    {'s', "sensor", "NAME", "the GNSS group in the log (required for a log)"},
    {O_TOPIC, "topic", "TOPIC", "a sensor_msgs/NavSatFix topic of a ROS 1 bag or rosbag2\n"
                                "recording (read as 'sensim import' reads it)"},
    {'o', "output", "FILE", "rig YAML with one gnss sensor (same keys as\n"
                            "data/gnss-*.yaml)"},
    {'m', "model", "M", "position noise written to the YAML: auto (default),\n"
                        "gaussian, gauss_markov, gauss_markov_white,\n"
                        "chrono_random_walk, none. auto: none if positions\n"
                        "are constant, else chrono_random_walk if the first\n"
                        "differences are smooth (lag-1 autocorrelation >\n"
                        "0.5), else gaussian if every axis is white, else\n"
                        "gauss_markov_white if the white part is significant\n"
                        "on some axis (likelihood ratio, Bonferroni over the\n"
                        "axes), else gauss_markov"},
    {O_OTHR, "outlier-threshold", "K", "\n"
                                       "reject epochs more than K robust standard\n"
                                       "deviations from their neighbours (default 6)"},
    {O_KEEP, "keep-outliers", NULL, "reject nothing"},
    {O_RATE, "rw-model-rate", "HZ", "Chrono's inner model rate (default 100)"},
    {O_AMAX, "rw-max-acceleration", "A", "\n"
                                         "the clamp written for Ch:RW, m/s^2 (default 4 sigma;\n"
                                         "not identifiable at the output rate)"},
    {O_POWER, "power-on", "T", "time the receiver was switched on, the HDOP\n"
                               "low-pass's start (default: the first time stamp)"},
    {'c', "confidence", "P", "two-sided level of the intervals (default 0.95)"},
    {'n', "name", "NAME", "sensor name in the YAML (default: --sensor)"},
    {O_JSON, "json", NULL, "print the estimates as JSON; otherwise a table"},
    CLI_OPTS_END};

const cli_spec cli_fit_gnss_spec = {
    .verb = VERB,
    .head = "usage: sensim fit gnss LOG.h5 --sensor NAME -o FITTED.yaml [options]\n"
            "       sensim fit gnss BAG --topic TOPIC -o FITTED.yaml [options]\n"
            "\n"
            "Fits GNSS noise parameters to a standstill log: /sensors/NAME/t with enu\n"
            "(or lla, converted to ENU metres) and, when present, hdop. First,\n"
            "single-epoch outliers (jumps from the median of the neighbours beyond\n"
            "--outlier-threshold robust standard deviations) are rejected and their rate\n"
            "reported with an exact binomial interval. Per ENU axis: the lag-1\n"
            "autocorrelation (white or not), the white sigma (Chrono Ch:Gauss), a\n"
            "first-order Gauss-Markov (sigma, tau) by exact AR(1) maximum likelihood and\n"
            "Gauss-Markov plus white noise (sigma_gm, tau, sigma_white) by the exact\n"
            "Kalman-filter likelihood; pooled: Chrono's Ch:RW sigma from the standard\n"
            "deviation of the second derivative of position (seed 004), corrected for\n"
            "Chrono's inner model rate; the AirSim HDOP low-pass (initial, final, tau)\n"
            "by nonlinear least squares. Every estimate comes with a confidence\n"
            "interval. The YAML's covariance is the log's position_covariance rule\n"
            "(scaled or nmea of the HDOP) when it follows one, else none.\n"
            "\n"
            "options:\n",
    .opts = cli_fit_gnss_opts,
    .column = 27,
    .tail = "\n"
            "Exit status: 0 success, 1 failure (the message names file and dataset;\n"
            "FITTED.yaml is not touched), 2 usage error.\n",
};

enum { M_AUTO, M_NONE, M_GAUSS, M_GM, M_RW, M_GMW };
static const char *const model_names[] = {"auto",         "none",   "gaussian", "gauss_markov", "chrono_random_walk",
                                          "gauss_markov_white"};
static const char *const axis_names[3] = {"east", "north", "up"};

typedef struct gfit {
    const char *input, *sensor, *name;
    size_t n;
    double *t, *enu, *hdop;
    double rate, duration, origin[3], confidence;
    int have_origin, have_hdop;
    int constant[3], all_constant;
    sensim_gnss_gm_fit gm[3];
    sensim_gnss_gmw_fit gmw[3];
    double gmw_crit; /* the likelihood ratio's critical value per axis (Bonferroni) */
    int reject;      /* outlier rejection on */
    double outlier_threshold;
    int have_outliers;
    sensim_gnss_outlier_fit of;
    int have_rw;
    sensim_gnss_rw_fit rw;
    double rw_model_rate, rw_amax;
    double acf1_diff; /* lag-1 autocorrelation of first differences, pooled */
    int have_hdop_fit;
    sensim_gnss_hdop_fit hf;
    char hdop_note[160];
    int model; /* chosen */
    double *cov;     /* position_covariance [n*9], or NULL */
    int cov_rule;    /* COV_* below */
    double cov_value; /* the scale or the epe of that rule */
} gfit;

/* Covariance rules the model writes (sensim/gnss.h) that the log follows. */
enum { COV_NONE, COV_SCALED, COV_NMEA, COV_OTHER };

static void gfit_free(gfit *g) { SENSIM_FREE_ALL(g->t, g->enu, g->hdop, g->cov); }

/* The log's series (calib/gnss_series.c), owned by g from here on. */
static sensim_status read_log(gfit *g)
{
    sensim_gnss_series s;
    sensim_status st = sensim_gnss_series_read(g->input, g->sensor, &s);
    if (st) {
        sensim_gnss_series_free(&s);
        return st;
    }
    g->n = s.n;
    g->t = s.t;
    g->enu = s.enu;
    g->hdop = s.hdop;
    g->have_hdop = s.hdop != NULL;
    g->cov = s.cov;
    if (s.rate > 0)
        g->rate = s.rate;
    memcpy(g->origin, s.origin, sizeof g->origin);
    g->have_origin = s.have_origin;
    return SENSIM_OK;
}

/* Lag-1 autocorrelation of the first differences, pooled over axes: near 1
 * for Chrono's integrated random walk, near 0 (or negative) for white or
 * Gauss-Markov noise. */
static double diff_acf1(const double *x, size_t n)
{
    double num = 0, den = 0;
    for (int a = 0; a < 3; a++) {
        double m = (x[3 * (n - 1) + a] - x[a]) / (double)(n - 1);
        for (size_t k = 1; k < n; k++) {
            double d = x[3 * k + a] - x[3 * (k - 1) + a] - m;
            den += d * d;
            if (k > 1)
                num += d * (x[3 * (k - 1) + a] - x[3 * (k - 2) + a] - m);
        }
    }
    return den > 0 ? num / den : 0;
}

/* Which of the model's HDOP rules the logged covariance follows: seed
 * 004's diag((s h)^2, (s h)^2, (s h)^2) (the vertical filter taken equal
 * to the horizontal one) or nmea_navsat_driver's diag((h e)^2, (h e)^2,
 * (4 h e)^2); all zeros is Chrono's none. Anything else is reported, not
 * written. */
static void detect_cov(gfit *g)
{
    g->cov_rule = COV_NONE;
    if (!g->cov)
        return;
    int zero = 1;
    for (size_t k = 0; k < 9 * g->n && zero; k++)
        zero = g->cov[k] == 0;
    if (zero)
        return;
    g->cov_rule = COV_OTHER;
    if (!g->have_hdop)
        return;
    double r = -1, v = -1;
    for (size_t k = 0; k < g->n; k++) {
        const double *c = g->cov + 9 * k, h = g->hdop[k];
        if (!(h > 0) || !(c[0] >= 0) || !(c[8] >= 0) || c[1] != 0 || c[2] != 0 || c[5] != 0 || c[4] != c[0])
            return;
        double rk = sqrt(c[0]) / h, vk = sqrt(c[8]) / h;
        if (r < 0)
            r = rk, v = vk;
        if (fabs(rk - r) > 1e-6 * r || fabs(vk - v) > 1e-6 * v)
            return;
    }
    if (fabs(v - r) <= 1e-6 * r)
        g->cov_rule = COV_SCALED, g->cov_value = r;
    else if (fabs(v - 4 * r) <= 1e-6 * r)
        g->cov_rule = COV_NMEA, g->cov_value = r;
}

/* Flags single-epoch outliers over the three axes and drops them from t,
 * enu, hdop and the covariance (the fits take the longer gaps). */
static sensim_status reject_outliers(gfit *g)
{
    unsigned char *bad = malloc(g->n);
    if (!bad)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    sensim_status st =
        sensim_gnss_find_outliers(g->t, g->enu, g->n, g->outlier_threshold, g->confidence, bad, &g->of);
    if (st) {
        free(bad);
        return st;
    }
    g->have_outliers = 1;
    size_t m = 0;
    for (size_t k = 0; k < g->n; k++) {
        if (bad[k])
            continue;
        g->t[m] = g->t[k];
        memmove(g->enu + 3 * m, g->enu + 3 * k, 3 * sizeof *g->enu);
        if (g->hdop)
            g->hdop[m] = g->hdop[k];
        if (g->cov)
            memmove(g->cov + 9 * m, g->cov + 9 * k, 9 * sizeof *g->cov);
        m++;
    }
    g->n = m;
    free(bad);
    return SENSIM_OK;
}

#define PREFIX_DSET(st, ds) sensim_error_prefix((st), "%s: /sensors/%s/%s", g->input, g->sensor, (ds))

static sensim_status fit_all(gfit *g, int model, double power_on)
{
    sensim_status st;
    const char *pos_ds = "enu";
    size_t n = g->n;
    if (n < 20)
        return sensim_error(SENSIM_EDATA, "%s: /sensors/%s/t: %zu epochs are too few (need at least 20)", g->input,
                            g->sensor, n);
    for (size_t k = 0; k < n; k++)
        for (int a = 0; a < 3; a++)
            if (!isfinite(g->enu[3 * k + a]))
                return sensim_error(SENSIM_EDATA, "%s: /sensors/%s/%s row %zu (%s) is %g", g->input, g->sensor, pos_ds,
                                    k, axis_names[a], g->enu[3 * k + a]);
    g->duration = g->t[n - 1] - g->t[0];
    if (!(g->rate > 0))
        g->rate = (double)(n - 1) / g->duration;
    if (g->reject) {
        if ((st = reject_outliers(g)))
            return PREFIX_DSET(st, pos_ds);
        n = g->n;
    }
    g->all_constant = 1;
    for (int a = 0; a < 3; a++) {
        g->constant[a] = 1;
        for (size_t k = 1; k < n && g->constant[a]; k++)
            g->constant[a] = g->enu[3 * k + a] == g->enu[a];
        g->all_constant &= g->constant[a];
        if (!g->constant[a] && ((st = sensim_gnss_fit_gm(g->t, g->enu + a, n, 3, g->confidence, &g->gm[a])) ||
                                (st = sensim_gnss_fit_gmw(g->t, g->enu + a, n, 3, NULL, g->confidence, &g->gmw[a]))))
            return sensim_error_prefix(st, "%s: /sensors/%s/%s (%s)", g->input, g->sensor, pos_ds, axis_names[a]);
    }
    /* One white component over three axes: each axis's test at alpha / 3
     * (boundary likelihood ratio: chi2_1 quantile at 1 - 2 alpha / 3). */
    SENSIM_GSL_QUIET_SCOPE();
    g->gmw_crit = sensim_chisq_quantile(1 - 2 * (1 - g->confidence) / 3, 1.0);
    g->acf1_diff = g->all_constant ? 0 : diff_acf1(g->enu, n);
    int want_rw = model == M_RW || (model == M_AUTO && !g->all_constant && g->acf1_diff > 0.5);
    if (!g->all_constant && n >= SENSIM_GNSS_RW_MIN_EPOCHS) {
        st = sensim_gnss_fit_rw(g->t, g->enu, n, g->rw_model_rate, g->confidence, &g->rw);
        if (st == SENSIM_OK)
            g->have_rw = 1;
        else if (want_rw)
            return PREFIX_DSET(st, pos_ds);
        sensim_error_clear();
    } else if (want_rw) {
        if (g->all_constant)
            return sensim_error(SENSIM_EDATA, "%s: /sensors/%s/%s: positions are constant: no random walk to fit",
                                g->input, g->sensor, pos_ds);
        return sensim_error(SENSIM_EDATA,
                            "%s: /sensors/%s/%s: %zu epochs are too few for the random-walk fit (need at least %d)",
                            g->input, g->sensor, pos_ds, n, SENSIM_GNSS_RW_MIN_EPOCHS);
    }
    if (model == M_AUTO) {
        int white = 1;
        for (int a = 0; a < 3; a++)
            white &= g->constant[a] || g->gm[a].white;
        int wn = 0;
        for (int a = 0; a < 3; a++)
            wn |= !g->constant[a] && g->gmw[a].lr > g->gmw_crit;
        model = g->all_constant ? M_NONE : want_rw ? M_RW : white ? M_GAUSS : wn ? M_GMW : M_GM;
    } else if ((model == M_GAUSS || model == M_GM || model == M_GMW) && g->all_constant) {
        return sensim_error(SENSIM_EDATA, "%s: /sensors/%s/%s: positions are constant: no %s noise to fit", g->input,
                            g->sensor, pos_ds, model_names[model]);
    }
    g->model = model;
    if (!(g->rw_amax > 0))
        g->rw_amax = 4 * g->rw.sigma.value;

    if (g->have_hdop) {
        double t0 = isfinite(power_on) ? power_on : g->t[0];
        st = sensim_gnss_fit_hdop(g->t, g->hdop, n, t0, g->confidence, &g->hf);
        if (st == SENSIM_OK) {
            g->have_hdop_fit = 1;
        } else if (strstr(sensim_last_error(), "constant")) {
            snprintf(g->hdop_note, sizeof g->hdop_note, "hdop is constant (%g): no low-pass written", g->hdop[0]);
            sensim_error_clear();
        } else {
            return PREFIX_DSET(st, "hdop");
        }
    }
    detect_cov(g);
    if (g->all_constant && !g->have_hdop_fit)
        return sensim_error(SENSIM_EDATA, "%s: /sensors/%s/%s: positions are constant and there is no varying hdop: "
                                          "constant data, nothing to fit",
                            g->input, g->sensor, pos_ds);
    return SENSIM_OK;
}

static void yaml_param(FILE *f, const char *what, const sensim_fit_param *p, const char *unit)
{
    /* A bound the fit could not determine is said in words, not as nan. */
    char lo[32] = "not determined", hi[32] = "not determined";
    if (isfinite(p->lo))
        snprintf(lo, sizeof lo, "%.6g", p->lo);
    if (isfinite(p->hi))
        snprintf(hi, sizeof hi, "%.6g", p->hi);
    fprintf(f, "#   %s %.6g %s [%s, %s]%s\n", what, p->value, unit, lo, hi,
            p->flag == SENSIM_FIT_OK ? "" : p->flag == SENSIM_FIT_UPPER ? " (upper bound only)" : " (unresolved)");
}

static sensim_status write_yaml(FILE *f, const gfit *g)
{
    fprintf(f, "# Fitted by sensim fit gnss from %s (sensor %s): %zu epochs over %.6g s.\n", g->input, g->sensor, g->n,
            g->duration);
    fprintf(f, "# Estimates, value [%.0f%% interval]:\n", 100 * g->confidence);
    for (int a = 0; a < 3; a++) {
        if (g->constant[a]) {
            fprintf(f, "#   %s: constant\n", axis_names[a]);
            continue;
        }
        char w[64];
        snprintf(w, sizeof w, "%s white sigma", axis_names[a]);
        yaml_param(f, w, &g->gm[a].white_sigma, "m");
        fprintf(f, "#     lag-1 autocorrelation %.4f (white below %.4f)\n", g->gm[a].acf1, g->gm[a].acf1_bound);
        snprintf(w, sizeof w, "%s gauss_markov sigma", axis_names[a]);
        yaml_param(f, w, &g->gm[a].sigma, "m");
        snprintf(w, sizeof w, "%s gauss_markov tau", axis_names[a]);
        yaml_param(f, w, &g->gm[a].tau, "s");
    }
    for (int a = 0; a < 3; a++) {
        if (g->constant[a])
            continue;
        char w[64];
        snprintf(w, sizeof w, "%s gm+white sigma_gm", axis_names[a]);
        yaml_param(f, w, &g->gmw[a].sigma_gm, "m");
        snprintf(w, sizeof w, "%s gm+white tau", axis_names[a]);
        yaml_param(f, w, &g->gmw[a].tau, "s");
        snprintf(w, sizeof w, "%s gm+white sigma_white", axis_names[a]);
        yaml_param(f, w, &g->gmw[a].sigma_white, "m");
        fprintf(f, "#     likelihood ratio for the white part %.4g (significant above %.4g)\n", g->gmw[a].lr,
                g->gmw_crit);
    }
    if (g->have_outliers) {
        fprintf(f, "#   outliers: %zu of %zu epochs rejected (beyond %g robust std)\n", g->of.rejected, g->of.n,
                g->of.threshold);
        yaml_param(f, "outlier rate", &g->of.rate, "per epoch");
    }
    if (g->have_rw) {
        yaml_param(f, "chrono_random_walk sigma", &g->rw.sigma, "m/s^2");
        fprintf(f, "#     std of the second derivative %.6g m/s^2 (seed 004's statistic) = sigma * sqrt(%.4g)\n",
                g->rw.d2_std, g->rw.factor);
    }
    if (g->have_hdop_fit) {
        yaml_param(f, "hdop initial", &g->hf.initial, "");
        yaml_param(f, "hdop final", &g->hf.final, "");
        yaml_param(f, "hdop tau", &g->hf.tau, "s");
    } else if (*g->hdop_note) {
        fprintf(f, "#   %s\n", g->hdop_note);
    }
    fprintf(f, "# Position noise model written: %s.\n", model_names[g->model]);
    /* A receiver, not a place: the origin is a comment (a rig's origin_lla
     * must match the ground truth's it is injected onto). */
    if (g->have_origin)
        fprintf(f, "# origin of the fitted log: origin_lla: [%.10g, %.10g, %.6g]\n", g->origin[0], g->origin[1],
                g->origin[2]);
    sensim_gnss_params p = sensim_gnss_default_params();
    switch (g->model) {
    case M_GAUSS:
        p.gauss_on = 1;
        for (int a = 0; a < 3; a++)
            p.gauss_sigma[a] = g->constant[a] ? 0 : g->gm[a].white_sigma.value;
        break;
    case M_GM:
        p.gm_on = 1;
        for (int a = 0; a < 3; a++) {
            p.gm_sigma[a] = g->constant[a] ? 0 : g->gm[a].sigma.value;
            p.gm_tau[a] = g->constant[a] ? 1 : g->gm[a].tau.value;
        }
        break;
    case M_GMW:
        p.gm_on = p.gauss_on = 1;
        for (int a = 0; a < 3; a++) {
            p.gm_sigma[a] = g->constant[a] ? 0 : g->gmw[a].sigma_gm.value;
            p.gm_tau[a] = g->constant[a] ? 1 : g->gmw[a].tau.value;
            p.gauss_sigma[a] = g->constant[a] ? 0 : g->gmw[a].sigma_white.value;
        }
        break;
    case M_RW:
        /* max_velocity: the largest epoch-mean speed seen; max_error: 1 m,
         * hard-coded in Chrono. */
        p.rw_on = 1;
        p.rw_sigma = g->rw.sigma.value;
        p.rw_model_rate_hz = g->rw_model_rate;
        p.rw_max_velocity = g->rw.max_velocity;
        p.rw_max_acceleration = g->rw_amax;
        p.rw_max_error = 1.0;
        break;
    default:
        break;
    }
    if (g->have_outliers && g->of.rejected) {
        p.outlier_probability = g->of.rate.value;
        p.outlier_magnitude = g->of.magnitude;
    }
    if (g->have_hdop_fit) {
        p.hdop_on = 1;
        p.eph_initial = p.epv_initial = g->hf.initial.value;
        p.eph_final = p.epv_final = g->hf.final.value;
        p.eph_tau = p.epv_tau = g->hf.tau.value;
    }
    if (g->have_hdop_fit && g->cov_rule == COV_SCALED) {
        p.cov_model = SENSIM_GNSS_COV_SCALED;
        p.cov_scale = g->cov_value;
    } else if (g->have_hdop_fit && g->cov_rule == COV_NMEA) {
        p.cov_model = SENSIM_GNSS_COV_NMEA;
        p.cov_epe = g->cov_value;
    } else if (g->cov_rule == COV_OTHER) {
        fprintf(f, "# covariance: none; the log's position_covariance follows no rule sensim writes\n");
    }
    sensim_ywriter *w = sensim_ywriter_create(f);
    if (!w)
        return sensim_last_status();
    sensim_sensor s;
    sensim_sensor_init(&s, g->name, g->rate);
    sensim_rig_write_yaml_begin(w, 1, NULL);
    sensim_gnss_write_yaml(w, &s, &p);
    return sensim_ywriter_close(w);
}

static void json_param(FILE *f, const char *key, const sensim_fit_param *p)
{
    fprintf(f, "\"%s\": {\"value\": %s, \"lo\": %s, \"hi\": %s, \"status\": \"%s\"}", key, CLI_JSON_G(p->value, 10),
            CLI_JSON_G(p->lo, 10), CLI_JSON_G(p->hi, 10),
            p->flag == SENSIM_FIT_OK      ? "ok"
            : p->flag == SENSIM_FIT_UPPER ? "upper_bound"
                                          : "unresolved");
}

static void print_json(FILE *f, const gfit *g)
{
    fputs("{\"source\": ", f);
    cli_json_str(f, g->input);
    fputs(", \"sensor\": ", f);
    cli_json_str(f, g->sensor);
    fprintf(f,
            ", \"epochs\": %zu, \"duration\": %s, \"rate_hz\": %s, \"confidence\": %s, \"model\": \"%s\", "
            "\"diff_acf1\": %s, \"axes\": [",
            g->n, CLI_JSON_G(g->duration, 10), CLI_JSON_G(g->rate, 10), CLI_JSON_G(g->confidence, 6),
            model_names[g->model], CLI_JSON_G(g->acf1_diff, 6));
    for (int a = 0; a < 3; a++) {
        const sensim_gnss_gm_fit *m = &g->gm[a];
        fprintf(f, "%s{\"axis\": \"%s\", \"constant\": %s", a ? ", " : "", axis_names[a],
                g->constant[a] ? "true" : "false");
        if (!g->constant[a]) {
            fprintf(f, ", \"acf1\": %s, \"acf1_bound\": %s, \"white\": %s, ", CLI_JSON_G(m->acf1, 6),
                    CLI_JSON_G(m->acf1_bound, 6), m->white ? "true" : "false");
            json_param(f, "white_sigma", &m->white_sigma);
            fputs(", \"gauss_markov\": {", f);
            json_param(f, "sigma", &m->sigma);
            fputs(", ", f);
            json_param(f, "tau", &m->tau);
            fprintf(f, ", \"mean\": %s, \"loglik\": %s, \"note\": ", CLI_JSON_G(m->mean, 10),
                    CLI_JSON_G(m->loglik, 10));
            cli_json_str(f, m->note);
            const sensim_gnss_gmw_fit *w = &g->gmw[a];
            fputs("}, \"gauss_markov_white\": {", f);
            json_param(f, "sigma_gm", &w->sigma_gm);
            fputs(", ", f);
            json_param(f, "tau", &w->tau);
            fputs(", ", f);
            json_param(f, "sigma_white", &w->sigma_white);
            fprintf(f,
                    ", \"lr\": %s, \"lr_crit\": %s, \"significant\": %s, \"mean\": %s, \"loglik\": %s, "
                    "\"note\": ",
                    CLI_JSON_G(w->lr, 10), CLI_JSON_G(g->gmw_crit, 10), w->lr > g->gmw_crit ? "true" : "false",
                    CLI_JSON_G(w->mean, 10), CLI_JSON_G(w->loglik, 10));
            cli_json_str(f, w->note);
            fputc('}', f);
        }
        fputc('}', f);
    }
    fputs("], \"outliers\": ", f);
    if (g->have_outliers) {
        fprintf(f, "{\"epochs\": %zu, \"rejected\": %zu, \"threshold\": %s, \"magnitude\": %s, ", g->of.n,
                g->of.rejected, CLI_JSON_G(g->of.threshold, 6), CLI_JSON_G(g->of.magnitude, 10));
        json_param(f, "rate", &g->of.rate);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs(", \"chrono_random_walk\": ", f);
    if (g->have_rw) {
        fputc('{', f);
        json_param(f, "sigma", &g->rw.sigma);
        fprintf(f,
                ", \"d2_std\": %s, \"factor\": %s, \"dt\": %s, \"model_rate_hz\": %s, "
                "\"max_velocity\": %s, \"saturated\": %s, \"blocks\": %zu, \"note\": ",
                CLI_JSON_G(g->rw.d2_std, 10), CLI_JSON_G(g->rw.factor, 10), CLI_JSON_G(g->rw.dt, 10),
                CLI_JSON_G(g->rw_model_rate, 10), CLI_JSON_G(g->rw.max_velocity, 10), CLI_JSON_G(g->rw.saturated, 6),
                g->rw.blocks);
        cli_json_str(f, g->rw.note);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    static const char *const rules[] = {"none", "scaled", "nmea", "other"};
    fprintf(f, ", \"covariance\": {\"rule\": \"%s\", \"value\": %s}", rules[g->cov_rule], CLI_JSON_G(g->cov_value, 10));
    fputs(", \"hdop\": ", f);
    if (g->have_hdop_fit) {
        fputc('{', f);
        json_param(f, "initial", &g->hf.initial);
        fputs(", ", f);
        json_param(f, "final", &g->hf.final);
        fputs(", ", f);
        json_param(f, "tau", &g->hf.tau);
        fprintf(f, ", \"t0\": %s, \"rms\": %s, \"iterations\": %d, \"note\": ", CLI_JSON_G(g->hf.t0, 10),
                CLI_JSON_G(g->hf.rms, 6), g->hf.iterations);
        cli_json_str(f, g->hf.note);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs("}\n", f);
}

static void table_param(FILE *f, const char *what, const sensim_fit_param *p, const char *unit)
{
    fprintf(f, "  %-26s %12.5g  [%.5g, %.5g] %s%s\n", what, p->value, p->lo, p->hi, unit,
            p->flag == SENSIM_FIT_OK ? "" : p->flag == SENSIM_FIT_UPPER ? "  (upper bound only)" : "  (unresolved)");
}

static void print_table(FILE *f, const gfit *g)
{
    fprintf(f, "%s /sensors/%s: %zu epochs over %.6g s (%.6g Hz); %.0f%% intervals\n", g->input, g->sensor, g->n,
            g->duration, g->rate, 100 * g->confidence);
    for (int a = 0; a < 3; a++) {
        const sensim_gnss_gm_fit *m = &g->gm[a];
        if (g->constant[a]) {
            fprintf(f, "%s: constant\n", axis_names[a]);
            continue;
        }
        fprintf(f, "%s: lag-1 autocorrelation %.4f (%s, white below %.4f)\n", axis_names[a], m->acf1,
                m->white ? "white" : "correlated", m->acf1_bound);
        table_param(f, "white sigma", &m->white_sigma, "m");
        table_param(f, "gauss_markov sigma", &m->sigma, "m");
        table_param(f, "gauss_markov tau", &m->tau, "s");
        if (*m->note)
            fprintf(f, "  note: %s\n", m->note);
        const sensim_gnss_gmw_fit *w = &g->gmw[a];
        table_param(f, "gm+white sigma_gm", &w->sigma_gm, "m");
        table_param(f, "gm+white tau", &w->tau, "s");
        table_param(f, "gm+white sigma_white", &w->sigma_white, "m");
        fprintf(f, "  %-26s %12.5g  (white part significant above %.4g)\n", "likelihood ratio", w->lr, g->gmw_crit);
    }
    if (g->have_outliers)
        fprintf(f, "outliers: %zu of %zu epochs rejected (beyond %g robust std, median size %.4g m); rate %.4g "
                   "[%.4g, %.4g]\n",
                g->of.rejected, g->of.n, g->of.threshold, g->of.magnitude, g->of.rate.value, g->of.rate.lo,
                g->of.rate.hi);
    if (g->have_rw) {
        fprintf(f, "chrono_random_walk (pooled; first differences lag-1 autocorrelation %.3f):\n", g->acf1_diff);
        table_param(f, "sigma", &g->rw.sigma, "m/s^2");
        fprintf(f, "  %-26s %12.5g  m/s^2 (= sigma * sqrt(%.4g) at %g Hz model rate)\n", "std of second derivative",
                g->rw.d2_std, g->rw.factor, g->rw_model_rate);
        fprintf(f, "  %-26s %12.5g  m/s (%.1f%% of epochs at it)\n", "largest speed", g->rw.max_velocity,
                100 * g->rw.saturated);
        if (*g->rw.note)
            fprintf(f, "  note: %s\n", g->rw.note);
    }
    if (g->have_hdop_fit) {
        fprintf(f, "hdop low-pass from t0 = %.6g s (rms residual %.3g):\n", g->hf.t0, g->hf.rms);
        table_param(f, "initial", &g->hf.initial, "");
        table_param(f, "final", &g->hf.final, "");
        table_param(f, "tau", &g->hf.tau, "s");
        if (*g->hf.note)
            fprintf(f, "  note: %s\n", g->hf.note);
    } else if (*g->hdop_note) {
        fprintf(f, "%s\n", g->hdop_note);
    }
    fprintf(f, "position noise model: %s\n", model_names[g->model]);
}

int cli_fit_gnss(int argc, char **argv)
{
    gfit g;
    memset(&g, 0, sizeof g);
    g.confidence = 0.95;
    g.rw_model_rate = 100;
    g.reject = 1;
    g.outlier_threshold = SENSIM_GNSS_OUTLIER_THRESHOLD;
    const char *output = NULL, *topic = NULL;
    int model = M_AUTO, json = 0, c;
    double power_on = NAN;
    const cli_to to[] = {
        CLI_STR("sensor", &g.sensor), CLI_STR("output", &output), CLI_STR("name", &g.name), CLI_FLAG("json", &json),
        CLI_STR("topic", &topic),
        CLI_REAL("rw-model-rate", &g.rw_model_rate, 0, INFINITY,
                 "--rw-model-rate '%s': expected a positive number of Hz"),
        CLI_REAL("rw-max-acceleration", &g.rw_amax, 0, INFINITY,
                 "--rw-max-acceleration '%s': expected a positive number of m/s^2"),
        CLI_REAL("power-on", &power_on, -INFINITY, INFINITY, "--power-on '%s': expected a time in seconds"),
        CLI_REAL("confidence", &g.confidence, 0, 1, "--confidence '%s': expected a number between 0 and 1"),
        CLI_REAL("outlier-threshold", &g.outlier_threshold, 0, INFINITY,
                 "--outlier-threshold '%s': expected a positive number of standard deviations"),
        {0}};
    cli_parser op;
    cli_parse_begin_to(&op, &cli_fit_gnss_spec, to, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case 'm':
            model = -1;
            for (int i = 0; i < (int)(sizeof model_names / sizeof model_names[0]); i++)
                if (!strcmp(optarg, model_names[i]))
                    model = i;
            if (model < 0)
                return cli_usage_error(VERB, "--model '%s': expected auto, gaussian, gauss_markov, "
                                             "gauss_markov_white, chrono_random_walk or none", optarg);
            break;
        case O_KEEP: g.reject = 0; break;
        }
    }
    if (c)
        return cli_parse_exit(c);
    if (optind != argc - 1)
        return cli_usage_error(VERB, optind < argc ? "expected one LOG.h5, got more" : "expected one LOG.h5");
    if (!g.sensor && !topic)
        return cli_usage_error(VERB, "--sensor NAME (or --topic T for a recording) is required");
    if (g.sensor && topic)
        return cli_usage_error(VERB, "--sensor and --topic exclude each other");
    if (!output)
        return cli_usage_error(VERB, "-o FITTED.yaml is required");
    const char *input = argv[optind];
    g.input = input;
    if (cli_check_output(VERB, output, g.input, NULL))
        return CLI_FAIL;
    /* A recording: the topic goes through 'sensim import' into a temporary
     * log, read as any other. */
    char *tmp = NULL, *tsensor = NULL;
    sensim_status st = SENSIM_OK;
    if (topic && (st = cli_bag_temp_log(g.input, topic, 0, &tmp, &tsensor)))
        return cli_fail_lib(VERB);
    if (tmp) {
        g.input = tmp;
        g.sensor = tsensor;
    }
    if (!g.name)
        g.name = g.sensor;

    st = read_log(&g);
    if (tmp) {
        unlink(tmp);
        g.input = input;
    }
    if (!st)
        st = fit_all(&g, model, power_on);
    if (!st) {
        sensim_afile *af = sensim_afile_open(output);
        if (!af) {
            st = sensim_last_status();
        } else {
            st = write_yaml(sensim_afile_stream(af), &g);
            if (st)
                sensim_afile_abort(af);
            else
                st = sensim_afile_commit(af);
        }
    }
    if (!st) {
        if (json)
            print_json(stdout, &g);
        else
            print_table(stdout, &g);
    }
    gfit_free(&g);
    free(tmp);
    free(tsensor);
    return st ? cli_fail_lib(VERB) : CLI_OK;
}
