/* A log's repeated scans of a static scene, as the lidar fits take them
 * (sensim/lidar_fit.h): the scans' layout checked, ranges, channels, and
 * the per-return labels turned into targets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/lidar_fit.h"
#include "sensim/log.h"
#include "../lib/base_internal.h"

void sensim_lidar_scans_free(sensim_lidar_scans *s)
{
    SENSIM_FREE_ALL(s->range, s->points, s->channel, s->target, s->objects);
    memset(s, 0, sizeof *s);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The only group under /sensors with a scan_offset. */
static sensim_status find_sensor(const sensim_log *log, char *name, size_t size)
{
    char **names;
    size_t n, found = 0;
    sensim_status st = sensim_log_list(log, "/sensors", &names, &n);
    if (st)
        return st;
    for (size_t i = 0; i < n; i++) {
        char p[512];
        snprintf(p, sizeof p, "/sensors/%s/scan_offset", names[i]);
        if (sensim_log_exists(log, p)) {
            if (!found)
                snprintf(name, size, "%s", names[i]);
            found++;
        }
    }
    sensim_log_free_names(names, n);
    if (found == 1)
        return SENSIM_OK;
    return sensim_error(SENSIM_ENOTFOUND, "%s: %zu lidar groups (with scan_offset) under /sensors: give --sensor",
                        sensim_log_path(log), found);
}

/* scan_offset: S scans of P returns each, from 0. */
static sensim_status read_layout(const sensim_log *log, sensim_lidar_scans *s)
{
    const char *in = sensim_log_path(log);
    char p[600];
    size_t S1;
    snprintf(p, sizeof p, "/sensors/%s/scan_offset", s->sensor);
    sensim_status st = sensim_log_check_shape(log, p, 0, NULL, &S1);
    if (st)
        return st;
    if (S1 < 2)
        return sensim_error(SENSIM_EDATA, "%s: %s: empty scans", in, p);
    uint64_t *off = malloc(S1 * sizeof *off);
    if (!off)
        return sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory for %zu scan offsets", in, p, S1);
    if ((st = sensim_log_read(log, p, SENSIM_U64, 0, S1, off))) {
        free(off);
        return st;
    }
    size_t S = S1 - 1, P = (size_t)(off[1] - off[0]);
    if (P == 0 || off[0] != 0)
        st = sensim_error(SENSIM_EDATA, "%s: %s: empty scans or offsets not starting at 0", in, p);
    for (size_t k = 0; k < S && !st; k++)
        if (off[k + 1] - off[k] != P)
            st = sensim_error(SENSIM_EDATA,
                              "%s: %s: scan %zu has %llu returns, scan 0 has %zu: repeated scans of a static "
                              "scene must hold the same returns (use NaN ranges for missing ones)",
                              in, p, k, (unsigned long long)(off[k + 1] - off[k]), P);
    free(off);
    s->nscans = S;
    s->npoints = P;
    return st;
}

/* A dataset of the group with one row per return (M rows), checked. */
static sensim_status check_rows(const sensim_log *log, const char *p, int ntail, const size_t *tail, size_t M,
                                const char *what)
{
    size_t n = 0;
    sensim_status st = sensim_log_check_shape(log, p, ntail, tail, &n);
    if (!st && n != M)
        st = sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows, scan_offset ends at %zu%s", sensim_log_path(log), p,
                          n, M, what);
    return st;
}

static sensim_status read_points(const sensim_log *log, sensim_lidar_scans *s, size_t M)
{
    char p[600];
    const size_t four = 4;
    snprintf(p, sizeof p, "/sensors/%s/points", s->sensor);
    /* The rows the file holds before a buffer is sized from scan_offset. */
    sensim_status st = check_rows(log, p, 1, &four, M, "");
    if (st)
        return st;
    if (!(s->points = malloc(M * 4 * sizeof *s->points)))
        return sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory for %zu returns", sensim_log_path(log), p, M);
    return sensim_log_read(log, p, SENSIM_F32, 0, M, s->points);
}

/* Ranges (from the points without a range dataset) and channels. */
static sensim_status read_ranges(const sensim_log *log, sensim_lidar_scans *s)
{
    const size_t M = s->nscans * s->npoints, P = s->npoints;
    char p[600];
    sensim_status st;
    snprintf(p, sizeof p, "/sensors/%s/range", s->sensor);
    if (sensim_log_exists(log, p)) {
        if ((st = check_rows(log, p, 0, NULL, M, "")))
            return st;
        if (!(s->range = malloc(M * sizeof *s->range)))
            return sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory for %zu returns", sensim_log_path(log), p, M);
        if ((st = sensim_log_read(log, p, SENSIM_F32, 0, M, s->range)))
            return st;
    } else {
        if ((st = read_points(log, s, M)))
            return st;
        if (!(s->range = malloc(M * sizeof *s->range)))
            return sensim_error(SENSIM_ENOMEM, "%s: /sensors/%s/points: out of memory for %zu ranges",
                                sensim_log_path(log), s->sensor, M);
        const float *q = s->points;
        for (size_t i = 0; i < M; i++)
            s->range[i] = sqrtf(q[4 * i] * q[4 * i] + q[4 * i + 1] * q[4 * i + 1] + q[4 * i + 2] * q[4 * i + 2]);
    }
    snprintf(p, sizeof p, "/sensors/%s/channel", s->sensor);
    if (!sensim_log_exists(log, p))
        return SENSIM_OK;
    if (!(s->channel = malloc(P * sizeof *s->channel)))
        return sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory for %zu beams", sensim_log_path(log), p, P);
    if ((st = sensim_log_read(log, p, SENSIM_U16, 0, P, s->channel)))
        return st;
    for (size_t i = 0; i < P; i++)
        if ((size_t)s->channel[i] + 1 > s->nbeams)
            s->nbeams = (size_t)s->channel[i] + 1;
    return SENSIM_OK;
}

/* The labels, checked (object numbers, alike in every scan). */
static sensim_status check_labels(const sensim_log *log, const sensim_lidar_scans *s, const double *lab, size_t M)
{
    const size_t P = s->npoints;
    const double none = SENSIM_LIDAR_NO_TARGET;
    for (size_t i = 0; i < M; i++) {
        double v = lab[i];
        if (!(v == -1 || v == none || (v >= 0 && v == floor(v) && v < none)))
            return sensim_error(SENSIM_EDATA, "%s: %s row %zu: %g is not an object number (or -1 / %.0f for none)",
                                sensim_log_path(log), s->labels, i, v, none);
        if (i >= P && v != lab[i % P])
            return sensim_error(SENSIM_EDATA,
                                "%s: %s row %zu (scan %zu, return %zu): label %.0f, scan 0 has %.0f: the "
                                "scans of a static scene must label each return alike",
                                sensim_log_path(log), s->labels, i, i / P, i % P, v, lab[i % P]);
    }
    return SENSIM_OK;
}

/* The distinct objects of scan 0, sorted, and each return's target among
 * those `want` keeps. */
static sensim_status label_targets(const sensim_log *log, sensim_lidar_scans *s, const double *lab, const double *want,
                                   size_t nwant)
{
    const size_t P = s->npoints;
    const double none = SENSIM_LIDAR_NO_TARGET;
    double *tobj = s->objects;
    size_t ntobj = 0;
    for (size_t i = 0; i < P; i++)
        if (lab[i] >= 0 && lab[i] != none)
            tobj[ntobj++] = lab[i];
    qsort(tobj, ntobj, sizeof *tobj, cmp_double);
    size_t u = 0;
    for (size_t i = 0; i < ntobj; i++)
        if (u == 0 || tobj[i] != tobj[u - 1])
            tobj[u++] = tobj[i];
    s->nobjects = ntobj = u;
    for (size_t k = 0; k < nwant; k++)
        if (!bsearch(&want[k], tobj, ntobj, sizeof *tobj, cmp_double))
            return sensim_error(SENSIM_ENOTFOUND, "%s: %s: --targets names object %.0f, which no return hit",
                                sensim_log_path(log), s->labels, want[k]);
    for (size_t i = 0; i < P; i++) {
        double *f = lab[i] >= 0 && lab[i] != none ? bsearch(&lab[i], tobj, ntobj, sizeof *tobj, cmp_double) : NULL;
        int chosen = f && (!want || bsearch(&lab[i], want, nwant, sizeof *want, cmp_double));
        s->target[i] = chosen ? (int32_t)(f - tobj) : -1;
    }
    return SENSIM_OK;
}

/* Per-return target labels: the same in every scan. */
static sensim_status read_labels(const sensim_log *log, sensim_lidar_scans *s, const double *want, size_t nwant)
{
    static const char *const lnames[] = {"object", "target"};
    char p[600];
    for (int k = 0; k < 2 && !s->labels[0]; k++) {
        snprintf(p, sizeof p, "/sensors/%s/%s", s->sensor, lnames[k]);
        if (sensim_log_exists(log, p))
            snprintf(s->labels, sizeof s->labels, "%s", p);
    }
    if (!s->labels[0])
        return SENSIM_OK;
    const size_t M = s->nscans * s->npoints, P = s->npoints;
    sensim_status st = check_rows(log, s->labels, 0, NULL, M, ": one label per return");
    if (st)
        return st;
    double *lab = malloc(M * sizeof *lab);
    s->target = malloc(P * sizeof *s->target);
    s->objects = malloc(P * sizeof *s->objects);
    if (!lab || !s->target || !s->objects)
        st = sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory for %zu labels", sensim_log_path(log), s->labels, M);
    if (!st && !(st = sensim_log_read(log, s->labels, SENSIM_F64, 0, M, lab)) && !(st = check_labels(log, s, lab, M)))
        st = label_targets(log, s, lab, want, nwant);
    free(lab);
    snprintf(p, sizeof p, "/sensors/%s/points", s->sensor);
    if (!st && !s->points && sensim_log_exists(log, p))
        st = read_points(log, s, M);
    return st;
}

sensim_status sensim_lidar_scans_read(const sensim_log *log, const char *sensor, const double *want, size_t nwant,
                                      sensim_lidar_scans *out)
{
    memset(out, 0, sizeof *out);
    sensim_status st = SENSIM_OK;
    if (sensor)
        snprintf(out->sensor, sizeof out->sensor, "%s", sensor);
    else
        st = find_sensor(log, out->sensor, sizeof out->sensor);
    if (!st && !(st = read_layout(log, out)) && !(st = read_ranges(log, out)))
        st = read_labels(log, out, want, nwant);
    return st;
}

void sensim_lidar_scans_keep_flat(sensim_lidar_scans *s, const double *flat, const double *fsd, const size_t *count)
{
    int32_t *tgt = s->target;
    for (size_t i = 0; i < s->npoints; i++)
        if (tgt[i] >= 0 &&
            !(count[tgt[i]] >= SENSIM_LIDAR_MIN_TARGET_RETURNS && flat[tgt[i]] <= SENSIM_LIDAR_MAX_FLATNESS &&
              (!isfinite(fsd[tgt[i]]) || flat[tgt[i]] <= 1 + SENSIM_LIDAR_FLATNESS_SDS * fsd[tgt[i]])))
            tgt[i] = -1;
}

size_t sensim_lidar_scans_targets_used(const sensim_lidar_scans *s)
{
    const int32_t *tgt = s->target;
    size_t nsel = 0;
    for (size_t t = 0; t < s->nobjects; t++) {
        int used = 0;
        for (size_t i = 0; i < s->npoints && !used; i++)
            used = tgt[i] == (int32_t)t;
        nsel += used;
    }
    return nsel;
}

void sensim_lidar_scans_fit_free(sensim_lidar_scans_fit_result *r)
{
    SENSIM_FREE_ALL(r->beam_sigma, r->beam_bias, r->planes, r->flatness);
    memset(r, 0, sizeof *r);
}

/* The planar targets and their reference ranges: the candidates' planes,
 * the automatic choice keeping the flat ones (named targets are kept as
 * they are), then the planes of those kept and where each return's ray
 * meets its plane. 0 with r->angular_note set when there is none. */
static sensim_status fit_targets(sensim_lidar_scans *sc, int named, sensim_lidar_scans_fit_result *r, float *ref)
{
    const size_t S = sc->nscans, P = sc->npoints, T = sc->nobjects;
    size_t *count = malloc((T ? T : 1) * sizeof *count);
    double *fsd = malloc((T ? T : 1) * sizeof *fsd);
    sensim_status st = SENSIM_OK;
    if (!count || !fsd) {
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
    } else if (sensim_lidar_fit_planes(sc->points, S, P, sc->target, T, r->planes, r->flatness, fsd, count, NULL)) {
        st = sensim_error_prefix(sensim_last_status(), "%s", sc->labels);
    } else {
        if (!named)
            sensim_lidar_scans_keep_flat(sc, r->flatness, fsd, count);
        if (sensim_lidar_scans_targets_used(sc) == 0)
            snprintf(r->angular_note, sizeof r->angular_note,
                     "no labelled object is planar (>= %d returns, flatness <= %g and within %g sd of 1); "
                     "name targets with --targets",
                     SENSIM_LIDAR_MIN_TARGET_RETURNS, SENSIM_LIDAR_MAX_FLATNESS, SENSIM_LIDAR_FLATNESS_SDS);
        else if (sensim_lidar_fit_planes(sc->points, S, P, sc->target, T, r->planes, NULL, NULL, NULL, ref))
            st = sensim_error_prefix(sensim_last_status(), "%s", sc->labels);
        else
            r->angular = 1;
    }
    free(count);
    free(fsd);
    return st;
}

/* With planar targets, range and angular noise are fitted together on
 * them: under beam-pointing jitter the raw ranges move with the beam, and
 * a range-only line takes that for range noise. The line of all returns
 * stays in r->range_all. Without the joint fit, the angular sigmas alone
 * against the range line. */
static sensim_status fit_angular(const sensim_lidar_scans *sc, const char *named, sensim_lidar_scans_fit_result *r)
{
    const size_t S = sc->nscans, P = sc->npoints, T = sc->nobjects;
    sensim_lidar_fit_result rj;
    if (sensim_lidar_fit_joint(sc->points, S, P, sc->target, T, r->range.sigma_base, r->range.sigma_slope, NULL,
                               &rj, &r->ang) == SENSIM_OK) {
        r->joint = 1;
        r->range.sigma_base = rj.sigma_base;
        r->range.sigma_base_ci = rj.sigma_base_ci;
        r->range.sigma_slope = rj.sigma_slope;
        r->range.sigma_slope_ci = rj.sigma_slope_ci;
        r->range.chi2_dof = rj.chi2_dof;
        r->range.constrained = 0;
        return SENSIM_OK;
    }
    snprintf(r->joint_note, sizeof r->joint_note, "%s", sensim_last_error());
    if (sensim_lidar_fit_angular(sc->points, S, P, sc->target, T, r->range.sigma_base > 0 ? r->range.sigma_base : 0.0,
                                 r->range.sigma_slope > 0 ? r->range.sigma_slope : 0.0, NULL, &r->ang)) {
        /* Named targets must work; the automatic choice falls back to the
         * range fit and says why. */
        if (named)
            return sensim_error_prefix(sensim_last_status(), "%s: %s", sc->labels, named);
        snprintf(r->angular_note, sizeof r->angular_note, "%s", sensim_last_error());
        r->angular = 0;
    }
    return SENSIM_OK;
}

sensim_status sensim_lidar_scans_fit(sensim_lidar_scans *sc, const char *named, sensim_lidar_scans_fit_result *r)
{
    memset(r, 0, sizeof *r);
    const size_t S = sc->nscans, P = sc->npoints, B = sc->nbeams, T = sc->nobjects;
    float *ref = NULL;
    sensim_status st = SENSIM_OK;
    if (sc->channel && (!(r->beam_sigma = malloc(B * sizeof *r->beam_sigma)) ||
                        !(r->beam_bias = malloc(B * sizeof *r->beam_bias))))
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    /* Planes of the candidates. Without points (range only) there is
     * nothing to fit planes to. */
    if (!sc->labels[0])
        snprintf(r->angular_note, sizeof r->angular_note,
                 "needs per-return target labels (/sensors/%s/object or target, as sensim render writes)",
                 sc->sensor);
    else if (!sc->points)
        snprintf(r->angular_note, sizeof r->angular_note, "needs /sensors/%s/points (x, y, z)", sc->sensor);
    else if (T == 0)
        snprintf(r->angular_note, sizeof r->angular_note, "no return in %s is on an object", sc->labels);
    else if (!(r->planes = malloc(4 * T * sizeof *r->planes)) || !(r->flatness = malloc(T * sizeof *r->flatness)) ||
             !(ref = malloc(P * sizeof *ref)))
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
    else
        st = fit_targets(sc, named != NULL, r, ref);
    if (!st && sensim_lidar_fit_range(sc->range, S, P, r->angular ? ref : NULL, sc->channel, B, r->beam_bias,
                                      r->beam_sigma, &r->range))
        st = sensim_error_prefix(sensim_last_status(), "/sensors/%s", sc->sensor);
    r->range_all = r->range;
    if (!st && r->angular)
        st = fit_angular(sc, named, r);
    free(ref);
    if (st)
        return st;
    /* Whether the model describes the spread: the reduced chi-squared of a
     * good fit is 1 within about sqrt(2 / dof); beyond 4 of those the
     * intervals (widened by it) still hold, the values may not. */
    double c2 = r->angular ? r->ang.chi2_dof : r->range.chi2_dof;
    double dof = (double)(r->angular ? r->ang.points_used : r->range.points_used) - (r->angular ? 4 : 2);
    if (dof > 0 && c2 > 1 + 4 * sqrt(2 / dof))
        snprintf(r->fit_note, sizeof r->fit_note,
                 "chi2/dof %.3g on %.0f degrees of freedom: the noise model does not describe these returns "
                 "(intervals widened by it; values may be biased)",
                 c2, dof);
    return SENSIM_OK;
}
