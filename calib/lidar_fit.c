/* Lidar range-noise fit: sigma = base + slope * range (AGX Sensor, seed 002
 * sec. 2.5) by iteratively reweighted least squares. See sensim/lidar_fit.h. */
#include "sensim/lidar_fit.h"

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_matrix.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define Z95 1.959963984540054

/* c4(n): E[s] = c4 sigma for the sample sd of n normal values. */
static double c4(size_t n)
{
    double k = (double)n;
    return sqrt(2.0 / (k - 1.0)) * exp(lgamma(k / 2.0) - lgamma((k - 1.0) / 2.0));
}

sensim_status sensim_lidar_fit_range(const float *ranges, size_t S, size_t M, const float *ref, const uint16_t *channel,
                                     size_t nbeams, double *beam_bias, double *beam_sigma, sensim_lidar_fit_result *r)
{
    if (!ranges || !r)
        return sensim_error(SENSIM_EINVAL, "lidar fit: NULL ranges or result");
    if (S < 3)
        return sensim_error(SENSIM_EDATA, "lidar fit: %zu scans: need at least 3 repeated scans", S);
    if (M == 0)
        return sensim_error(SENSIM_EDATA, "lidar fit: empty scans (0 returns)");
    if (channel && nbeams == 0)
        return sensim_error(SENSIM_EINVAL, "lidar fit: nbeams must be > 0 with channels");
    if (!channel)
        nbeams = 1;
    SENSIM_GSL_QUIET_SCOPE();
    memset(r, 0, sizeof *r);
    double *x = malloc(M * sizeof *x), *y = malloc(M * sizeof *y), *w = malloc(M * sizeof *w);
    double *rel = malloc(M * sizeof *rel); /* relative variance of s/c4: (1 - c4^2)/c4^2 */
    double *bsum = calloc(nbeams, sizeof *bsum), *bvar = calloc(nbeams, sizeof *bvar);
    size_t *bn = calloc(nbeams, sizeof *bn), *bnr = calloc(nbeams, sizeof *bnr);
    sensim_status st = SENSIM_OK;
    if (!x || !y || !w || !rel || !bsum || !bvar || !bn || !bnr) {
        st = sensim_error(SENSIM_ENOMEM, "lidar fit: out of memory");
        goto done;
    }
    size_t m = 0;
    double rmin = INFINITY, rmax = -INFINITY;
    for (size_t i = 0; i < M; i++) {
        size_t b = channel ? channel[i] : 0;
        if (b >= nbeams) {
            st = sensim_error(SENSIM_EDATA, "lidar fit: return %zu: channel %zu >= nbeams %zu", i, b, nbeams);
            goto done;
        }
        double s1 = 0, s2 = 0;
        size_t n = 0;
        for (size_t s = 0; s < S; s++) {
            double v = ranges[s * M + i];
            if (v < 0) {
                st = sensim_error(SENSIM_EDATA, "lidar fit: scan %zu, return %zu: range %g m is negative", s, i, v);
                goto done;
            }
            if (isfinite(v)) {
                s1 += v;
                n++;
            }
        }
        if (n < 3)
            continue;
        double mean = s1 / n;
        for (size_t s = 0; s < S; s++) {
            double v = ranges[s * M + i];
            if (isfinite(v))
                s2 += (v - mean) * (v - mean);
        }
        double var = s2 / (double)(n - 1), cc = c4(n);
        double range = ref && isfinite(ref[i]) ? ref[i] : mean;
        x[m] = range;
        y[m] = sqrt(var) / cc;
        rel[m] = (1.0 - cc * cc) / (cc * cc);
        m++;
        rmin = fmin(rmin, range);
        rmax = fmax(rmax, range);
        bvar[b] += var;
        bn[b]++;
        if (ref && isfinite(ref[i])) {
            bsum[b] += mean - ref[i];
            bnr[b]++;
        }
    }
    r->points_used = m;
    r->range_min = rmin;
    r->range_max = rmax;
    if (m < 3 || !(rmax > rmin)) {
        st = sensim_error(SENSIM_EDATA,
                          "lidar fit: %zu returns seen in >= 3 scans over ranges [%g, %g] m: need 3 or more at "
                          "distinct ranges",
                          m, rmin, rmax);
        goto done;
    }
    /* Iteratively reweighted: Var(s/c4) = sigma(r)^2 (1 - c4^2)/c4^2 with
     * sigma(r) from the previous fit (the first uses the point's own s,
     * floored to avoid infinite weights). */
    double c0 = 0, c1 = 0, cov00 = 0, cov01 = 0, cov11 = 0, chisq = 0;
    double floor_s = 0;
    for (size_t i = 0; i < m; i++)
        floor_s += y[i];
    floor_s = 1e-3 * floor_s / m + 1e-12;
    for (int it = 0; it < 4; it++) {
        for (size_t i = 0; i < m; i++) {
            double sg = it == 0 ? y[i] : c0 + c1 * x[i];
            if (!(sg > floor_s))
                sg = floor_s;
            w[i] = 1.0 / (sg * sg * rel[i]);
        }
        if (gsl_fit_wlinear(x, 1, w, 1, y, 1, m, &c0, &c1, &cov00, &cov01, &cov11, &chisq) != 0) {
            st = sensim_error(SENSIM_EINTERNAL, "lidar fit: weighted least squares failed");
            goto done;
        }
    }
    r->base_free = c0;
    r->slope_free = c1;
    double npar = 2;
    if (c1 < 0 || c0 < 0) {
        /* A sigma that decreases with range, or is negative at range 0, is
         * no noise model: refit with the offending term held at 0 (a
         * constant, or a proportional sigma), reweighting as above, so that
         * every output states the same model. */
        r->constrained = c1 < 0 ? 1 : 2;
        npar = 1;
        for (int it = 0; it < 4; it++) {
            double sw = 0, swy = 0, swx2 = 0, swxy = 0;
            for (size_t i = 0; i < m; i++) {
                double sg = it == 0 ? y[i] : r->constrained == 1 ? c0 : c1 * x[i];
                if (!(sg > floor_s))
                    sg = floor_s;
                w[i] = 1.0 / (sg * sg * rel[i]);
                sw += w[i];
                swy += w[i] * y[i];
                swx2 += w[i] * x[i] * x[i];
                swxy += w[i] * x[i] * y[i];
            }
            if (r->constrained == 1) {
                c0 = swy / sw, c1 = 0, cov00 = 1 / sw, cov11 = 0;
            } else {
                c0 = 0, c1 = swxy / swx2, cov00 = 0, cov11 = 1 / swx2;
            }
        }
        chisq = 0;
        for (size_t i = 0; i < m; i++)
            chisq += w[i] * (y[i] - c0 - c1 * x[i]) * (y[i] - c0 - c1 * x[i]);
    }
    double dof = (double)m - npar, scale = chisq / dof;
    r->chi2_dof = scale;
    if (!(scale > 1))
        scale = 1;
    r->sigma_base = c0;
    r->sigma_slope = c1;
    r->sigma_base_ci = Z95 * sqrt(cov00 * scale);
    r->sigma_slope_ci = Z95 * sqrt(cov11 * scale);
    for (size_t b = 0; b < nbeams; b++) {
        if (beam_bias)
            beam_bias[b] = bnr[b] ? bsum[b] / bnr[b] : NAN;
        if (beam_sigma)
            beam_sigma[b] = bn[b] ? sqrt(bvar[b] / bn[b]) : NAN;
    }
done:
    free(x);
    free(y);
    free(w);
    free(rel);
    free(bsum);
    free(bvar);
    free(bn);
    free(bnr);
    return st;
}

/* ---- angular sigma from planar targets (see sensim/lidar_fit.h) ---- */

/* The unit normal of the plane through n points (3 doubles each): the
 * eigenvector of the smallest eigenvalue of their scatter matrix. */
static sensim_status plane_fit(const double *p, size_t n, double normal[3], double *offset)
{
    double c[3] = {0, 0, 0}, m[9] = {0};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            c[k] += p[3 * i + k] / (double)n;
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                m[3 * a + b] += (p[3 * i + a] - c[a]) * (p[3 * i + b] - c[b]);
    gsl_matrix_view mv = gsl_matrix_view_array(m, 3, 3);
    gsl_vector *eval = gsl_vector_alloc(3);
    gsl_matrix *evec = gsl_matrix_alloc(3, 3);
    gsl_eigen_symmv_workspace *ws = gsl_eigen_symmv_alloc(3);
    sensim_status st = SENSIM_OK;
    if (!eval || !evec || !ws)
        st = sensim_error(SENSIM_ENOMEM, "lidar angular fit: out of memory");
    else if (gsl_eigen_symmv(&mv.matrix, eval, evec, ws) != 0)
        st = sensim_error(SENSIM_EINTERNAL, "lidar angular fit: plane eigen-decomposition failed");
    else {
        gsl_eigen_symmv_sort(eval, evec, GSL_EIGEN_SORT_VAL_ASC);
        double dot = 0;
        for (int k = 0; k < 3; k++) {
            normal[k] = gsl_matrix_get(evec, k, 0);
            dot += normal[k] * c[k];
        }
        /* Point away from the sensor (the origin): n.c > 0. */
        if (dot < 0) {
            for (int k = 0; k < 3; k++)
                normal[k] = -normal[k];
            dot = -dot;
        }
        *offset = -dot;
    }
    gsl_eigen_symmv_free(ws);
    gsl_matrix_free(evec);
    gsl_vector_free(eval);
    return st;
}

/* Per return: the mean point over the scans where it is finite and their
 * count (0 and NAN off the targets). */
static void scan_means(const float *pts, size_t S, size_t M, const int32_t *target, double *mean, size_t *cnt)
{
    for (size_t i = 0; i < M; i++) {
        double s[3] = {0, 0, 0};
        cnt[i] = 0;
        for (size_t k = 0; k < S && target[i] >= 0; k++) {
            const float *q = pts + 4 * (k * M + i);
            if (!(isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2])))
                continue;
            for (int j = 0; j < 3; j++)
                s[j] += q[j];
            cnt[i]++;
        }
        for (int j = 0; j < 3; j++)
            mean[3 * i + j] = cnt[i] ? s[j] / (double)cnt[i] : NAN;
    }
}

/* The plane of target t through the mean points of its returns seen in 3
 * or more scans (tp: scratch of 3 M); *n gets their number and plane[4]
 * the normal and offset, or NANs when n < 3. */
static sensim_status target_plane(const double *mean, const size_t *cnt, const int32_t *target, size_t M, size_t t,
                                  double *tp, size_t *n, double plane[4])
{
    size_t k = 0;
    for (size_t i = 0; i < M; i++)
        if (target[i] == (int32_t)t && cnt[i] >= 3) {
            memcpy(tp + 3 * k, mean + 3 * i, 3 * sizeof *tp);
            k++;
        }
    *n = k;
    for (int j = 0; j < 4; j++)
        plane[j] = NAN;
    return k < 3 ? SENSIM_OK : plane_fit(tp, k, plane, &plane[3]);
}

/* The checks both target fits share; `what` names the fit in messages. */
static sensim_status check_targets(const char *what, size_t S, size_t M, const int32_t *target, size_t T)
{
    if (S < 3)
        return sensim_error(SENSIM_EDATA, "lidar %s fit: %zu scans: need at least 3 repeated scans", what, S);
    if (M == 0)
        return sensim_error(SENSIM_EDATA, "lidar %s fit: empty scans (0 returns)", what);
    if (T == 0)
        return sensim_error(SENSIM_EINVAL, "lidar %s fit: no targets (ntargets = 0)", what);
    for (size_t i = 0; i < M; i++)
        if (target[i] < -1 || (target[i] >= 0 && (size_t)target[i] >= T))
            return sensim_error(SENSIM_EDATA, "lidar %s fit: return %zu: target %d is not in -1..%zu", what, i,
                                (int)target[i], T - 1);
    return SENSIM_OK;
}

/* Per return on a target seen in 3 or more scans: the variance over scans
 * v of its point-to-plane distance, its degrees of freedom, g = (u.n)^2,
 * the angular coefficients A = (r cos(el) t_az.n)^2 and B = (r t_el.n)^2
 * and its range r (see sensim/lidar_fit.h). mean, tp: 3 M scratch; cnt: M
 * scratch; planes: 4 T or NULL. */
static sensim_status target_rows(const float *pts, size_t S, size_t M, const int32_t *target, size_t T, double *mean,
                                 double *tp, size_t *cnt, double *planes, double *a, double *b, double *v, double *g,
                                 double *rr_out, double *dof, size_t *m_out, size_t *targets_used)
{
    scan_means(pts, S, M, target, mean, cnt);
    size_t m = 0;
    *targets_used = 0;
    for (size_t t = 0; t < T; t++) {
        size_t n = 0;
        double pl[4];
        sensim_status st = target_plane(mean, cnt, target, M, t, tp, &n, pl);
        if (st)
            return st;
        if (planes)
            memcpy(planes + 4 * t, pl, sizeof pl);
        if (n < 3)
            continue;
        const double nv[3] = {pl[0], pl[1], pl[2]}, d0 = pl[3];
        (*targets_used)++;
        for (size_t i = 0; i < M; i++) {
            if (target[i] != (int32_t)t || cnt[i] < 3)
                continue;
            double s1 = 0, s2 = 0;
            for (size_t k = 0; k < S; k++) {
                const float *q = pts + 4 * (k * M + i);
                if (!(isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2])))
                    continue;
                double d = nv[0] * q[0] + nv[1] * q[1] + nv[2] * q[2] + d0;
                s1 += d;
                s2 += d * d;
            }
            double c = (double)cnt[i];
            const double *p = mean + 3 * i;
            double rr = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
            if (!(rr > 0))
                continue;
            double az = atan2(p[1], p[0]), el = asin(p[2] / rr);
            double un = (p[0] * nv[0] + p[1] * nv[1] + p[2] * nv[2]) / rr;
            double taz = -sin(az) * nv[0] + cos(az) * nv[1];
            double tel = -sin(el) * cos(az) * nv[0] - sin(el) * sin(az) * nv[1] + cos(el) * nv[2];
            a[m] = rr * cos(el) * taz * rr * cos(el) * taz;
            b[m] = rr * tel * rr * tel;
            v[m] = (s2 - s1 * s1 / c) / (c - 1);
            g[m] = un * un;
            rr_out[m] = rr;
            dof[m] = c - 1;
            m++;
        }
    }
    *m_out = m;
    return SENSIM_OK;
}

sensim_status sensim_lidar_fit_angular(const float *pts, size_t S, size_t M, const int32_t *target, size_t T,
                                       double base, double slope, double *planes, sensim_lidar_angular_result *r)
{
    if (!pts || !target || !r)
        return sensim_error(SENSIM_EINVAL, "lidar angular fit: NULL points, targets or result");
    sensim_status st0 = check_targets("angular", S, M, target, T);
    if (st0)
        return st0;
    if (!(base >= 0 && slope >= 0 && isfinite(base) && isfinite(slope)))
        return sensim_error(SENSIM_EINVAL, "lidar angular fit: range sigma base %g, slope %g: must be finite and >= 0",
                            base, slope);
    SENSIM_GSL_QUIET_SCOPE();
    memset(r, 0, sizeof *r);
    /* Per return: the scan-mean point and the number of finite scans. */
    double *mean = malloc(3 * M * sizeof *mean), *tp = malloc(3 * M * sizeof *tp);
    double *a = malloc(M * sizeof *a), *b = malloc(M * sizeof *b), *y = malloc(M * sizeof *y);
    double *dof = malloc(M * sizeof *dof), *rp = malloc(M * sizeof *rp);
    size_t *cnt = calloc(M, sizeof *cnt);
    sensim_status st = SENSIM_OK;
    if (!mean || !tp || !a || !b || !y || !dof || !rp || !cnt) {
        st = sensim_error(SENSIM_ENOMEM, "lidar angular fit: out of memory");
        goto done;
    }
    size_t m = 0, tused = 0;
    double *g = malloc(M * sizeof *g), *rr = malloc(M * sizeof *rr);
    if (!g || !rr) {
        free(g);
        free(rr);
        st = sensim_error(SENSIM_ENOMEM, "lidar angular fit: out of memory");
        goto done;
    }
    st = target_rows(pts, S, M, target, T, mean, tp, cnt, planes, a, b, y, g, rr, dof, &m, &tused);
    r->targets_used = tused;
    for (size_t i = 0; i < m; i++) {
        double sr = base + slope * rr[i];
        rp[i] = sr * sr * g[i];
        y[i] -= rp[i];
    }
    free(g);
    free(rr);
    if (st)
        goto done;
    r->points_used = m;
    if (m < 3) {
        st = sensim_error(SENSIM_EDATA,
                          "lidar angular fit: %zu returns on planar targets with 3 or more scans: need at least 3", m);
        goto done;
    }
    /* Weighted least squares without intercept, y = x_az a + x_el b, with
     * var(v) = 2 E[v]^2 / dof; E[v] from the data first, then the fit. */
    double xa = 0, xb = 0, ia = 0, ib = 0, chisq = 0, vfloor = 0;
    for (size_t i = 0; i < m; i++)
        vfloor += (y[i] + rp[i]) / (double)m;
    vfloor = 1e-3 * fabs(vfloor) + 1e-300;
    for (int it = 0; it < 4; it++) {
        double saa = 0, sbb = 0, sab = 0, say = 0, sby = 0;
        for (size_t i = 0; i < m; i++) {
            double e = it == 0 ? y[i] + rp[i] : xa * a[i] + xb * b[i] + rp[i];
            if (!(e > vfloor))
                e = vfloor;
            double w = dof[i] / (2 * e * e);
            saa += w * a[i] * a[i];
            sbb += w * b[i] * b[i];
            sab += w * a[i] * b[i];
            say += w * a[i] * y[i];
            sby += w * b[i] * y[i];
        }
        /* Degenerate: one term (nearly) absent, or the two proportional. */
        double det = saa * sbb - sab * sab;
        if (!(saa > 1e-6 * sbb && sbb > 1e-6 * saa && det > 1e-6 * saa * sbb)) {
            st = sensim_error(SENSIM_EDATA,
                              "lidar angular fit: the targets do not separate azimuth from elevation noise: use "
                              "planes tilted about a vertical and about a horizontal axis");
            goto done;
        }
        xa = (sbb * say - sab * sby) / det;
        xb = (saa * sby - sab * say) / det;
        ia = sbb / det;
        ib = saa / det;
        chisq = 0;
        for (size_t i = 0; i < m; i++) {
            double e = xa * a[i] + xb * b[i] + rp[i];
            if (!(e > vfloor))
                e = vfloor;
            double res = y[i] - xa * a[i] - xb * b[i];
            chisq += dof[i] / (2 * e * e) * res * res;
        }
    }
    double scale = chisq / (double)(m - 2);
    r->chi2_dof = scale;
    if (!(scale > 1))
        scale = 1;
    /* sigma = sqrt(x); half-width by the delta method, or sqrt of the
     * variance's upper bound when the estimate is not positive. */
    double ca = Z95 * sqrt(ia * scale), cb = Z95 * sqrt(ib * scale);
    r->azimuth_sigma = xa > 0 ? sqrt(xa) : 0.0;
    r->elevation_sigma = xb > 0 ? sqrt(xb) : 0.0;
    r->azimuth_sigma_ci = xa > 0 ? ca / (2 * sqrt(xa)) : sqrt(ca);
    r->elevation_sigma_ci = xb > 0 ? cb / (2 * sqrt(xb)) : sqrt(cb);
done:
    free(mean);
    free(tp);
    free(a);
    free(b);
    free(y);
    free(dof);
    free(rp);
    free(cnt);
    return st;
}

sensim_status sensim_lidar_fit_planes(const float *pts, size_t S, size_t M, const int32_t *target, size_t T,
                                      double *planes, double *flatness, double *flatness_sd, size_t *count,
                                      float *reference)
{
    if (!pts || !target || !planes)
        return sensim_error(SENSIM_EINVAL, "lidar plane fit: NULL points, targets or planes");
    sensim_status st0 = check_targets("plane", S, M, target, T);
    if (st0)
        return st0;
    SENSIM_GSL_QUIET_SCOPE();
    double *mean = malloc(3 * M * sizeof *mean), *tp = malloc(3 * M * sizeof *tp);
    size_t *cnt = calloc(M, sizeof *cnt);
    sensim_status st = SENSIM_OK;
    if (!mean || !tp || !cnt) {
        st = sensim_error(SENSIM_ENOMEM, "lidar plane fit: out of memory");
        goto done;
    }
    scan_means(pts, S, M, target, mean, cnt);
    for (size_t i = 0; reference && i < M; i++)
        reference[i] = NAN;
    for (size_t t = 0; t < T; t++) {
        size_t n = 0;
        if ((st = target_plane(mean, cnt, target, M, t, tp, &n, planes + 4 * t)) != SENSIM_OK)
            goto done;
        if (flatness)
            flatness[t] = NAN;
        if (flatness_sd)
            flatness_sd[t] = NAN;
        if (count)
            count[t] = n;
        if (n < 3)
            continue;
        const double nv[3] = {planes[4 * t], planes[4 * t + 1], planes[4 * t + 2]}, d0 = planes[4 * t + 3];
        /* Distance of each mean point from the plane against the scatter of
         * its distance across scans (the variance of a mean of c values). */
        double num = 0, den = 0, den2 = 0, rsum = 0;
        for (size_t i = 0; i < M; i++) {
            if (target[i] != (int32_t)t || cnt[i] < 3)
                continue;
            const double *p = mean + 3 * i;
            rsum += sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
            double md = nv[0] * p[0] + nv[1] * p[1] + nv[2] * p[2] + d0, s2 = 0;
            for (size_t k = 0; k < S; k++) {
                const float *q = pts + 4 * (k * M + i);
                if (!(isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2])))
                    continue;
                double d = nv[0] * q[0] + nv[1] * q[1] + nv[2] * q[2] + d0 - md;
                s2 += d * d;
            }
            double c = (double)cnt[i];
            num += md * md;
            den += s2 / (c - 1) / c;
            den2 += (s2 / (c - 1) / c) * (s2 / (c - 1) / c);
            if (reference) {
                double rr = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
                double un = (nv[0] * p[0] + nv[1] * p[1] + nv[2] * p[2]) / rr;
                /* At grazing incidence the meeting point amplifies any tilt
                 * of the fitted plane by 1 / cos(incidence): none past 75 deg. */
                reference[i] = rr > 0 && un > 0.25 ? (float)(-d0 / un) : NAN;
            }
        }
        if (n > 3 && den > 0 && flatness_sd) {
            /* Each mean_d^2 is its variance times a chi^2_1: the ratio's sd
             * is sqrt(2 sum v^2) / sum v, at least sqrt(2 / n). */
            flatness_sd[t] = sqrt(2 * den2) / den * (double)n / (double)(n - 3);
        }
        if (flatness && n > 3) {
            double f = (double)n / (double)(n - 3);
            if (den > 0)
                flatness[t] = num / den * f;
            else
                /* No scatter: flat when off by no more than float
                 * rounding (6e-8 relative) of the points. */
                flatness[t] = sqrt(num / (double)n) > 1e-6 + 1e-6 * rsum / (double)n ? INFINITY : 1.0;
        }
    }
done:
    free(mean);
    free(tp);
    free(cnt);
    return st;
}

/* Solves the 4 x 4 system G x = h (Gauss-Jordan, partial pivoting) and, when
 * inv is not NULL, gives G^-1. Returns -1 when singular. */
static int solve4(const double G0[4][4], const double h[4], double x[4], double inv[4][4])
{
    double A[4][9];
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            A[i][j] = G0[i][j];
            A[i][4 + j] = i == j;
        }
        A[i][8] = h[i];
    }
    for (int p = 0; p < 4; p++) {
        int piv = p;
        for (int i = p + 1; i < 4; i++)
            if (fabs(A[i][p]) > fabs(A[piv][p]))
                piv = i;
        if (!(fabs(A[piv][p]) > 1e-300))
            return -1;
        for (int j = 0; j < 9; j++) {
            double t = A[p][j];
            A[p][j] = A[piv][j];
            A[piv][j] = t;
        }
        double d = A[p][p];
        for (int j = 0; j < 9; j++)
            A[p][j] /= d;
        for (int i = 0; i < 4; i++)
            if (i != p) {
                double f = A[i][p];
                for (int j = 0; j < 9; j++)
                    A[i][j] -= f * A[p][j];
            }
    }
    for (int i = 0; i < 4; i++) {
        x[i] = A[i][8];
        for (int j = 0; inv && j < 4; j++)
            inv[i][j] = A[i][4 + j];
    }
    return 0;
}

/* The joint fit's cells: per cell the gain g, range r, angular terms A and
 * B, sample variance v and its degrees of freedom. */
typedef struct joint_cells {
    size_t m;
    const double *g, *r, *A, *B, *v, *dof;
} joint_cells;

/* The modelled variance of cell i, E = g (b + s r)^2 + xa A + xb B. */
static double joint_var(const joint_cells *c, const double th[4], size_t i)
{
    double sr = th[0] + th[1] * c->r[i];
    return c->g[i] * sr * sr + th[2] * c->A[i] + th[3] * c->B[i];
}

/* The weighted normal equations G dx = h at th (weights dof / (2 E^2), E
 * floored at floor_e); returns the weighted sum of squares. */
static double joint_normal(const joint_cells *c, const double th[4], double floor_e, double G[4][4], double h[4])
{
    double ssr = 0;
    memset(G, 0, 16 * sizeof G[0][0]);
    memset(h, 0, 4 * sizeof h[0]);
    for (size_t i = 0; i < c->m; i++) {
        double sr = th[0] + th[1] * c->r[i], e = joint_var(c, th, i);
        if (!(e > floor_e))
            e = floor_e;
        double w = c->dof[i] / (2 * e * e), res = c->v[i] - e;
        double J[4] = {2 * c->g[i] * sr, 2 * c->g[i] * sr * c->r[i], c->A[i], c->B[i]};
        for (int p = 0; p < 4; p++) {
            h[p] += w * J[p] * res;
            for (int q = 0; q < 4; q++)
                G[p][q] += w * J[p] * J[q];
        }
        ssr += w * res * res;
    }
    return ssr;
}

sensim_status sensim_lidar_fit_joint(const float *pts, size_t S, size_t M, const int32_t *target, size_t T,
                                     double base0, double slope0, double *planes, sensim_lidar_fit_result *rr_out,
                                     sensim_lidar_angular_result *ar)
{
    if (!pts || !target || !rr_out || !ar)
        return sensim_error(SENSIM_EINVAL, "lidar joint fit: NULL points, targets or result");
    sensim_status st = check_targets("joint", S, M, target, T);
    if (st)
        return st;
    SENSIM_GSL_QUIET_SCOPE();
    memset(rr_out, 0, sizeof *rr_out);
    memset(ar, 0, sizeof *ar);
    double *mean = malloc(3 * M * sizeof *mean), *tp = malloc(3 * M * sizeof *tp);
    double *A = malloc(M * sizeof *A), *B = malloc(M * sizeof *B), *v = malloc(M * sizeof *v);
    double *g = malloc(M * sizeof *g), *r = malloc(M * sizeof *r), *dof = malloc(M * sizeof *dof);
    size_t *cnt = calloc(M, sizeof *cnt), m = 0, tused = 0;
    if (!mean || !tp || !A || !B || !v || !g || !r || !dof || !cnt) {
        st = sensim_error(SENSIM_ENOMEM, "lidar joint fit: out of memory");
        goto done;
    }
    if ((st = target_rows(pts, S, M, target, T, mean, tp, cnt, planes, A, B, v, g, r, dof, &m, &tused)))
        goto done;
    ar->targets_used = tused;
    ar->points_used = rr_out->points_used = m;
    if (m < 5) {
        st = sensim_error(SENSIM_EDATA,
                          "lidar joint fit: %zu returns on planar targets with 3 or more scans: need at least 5", m);
        goto done;
    }
    rr_out->range_min = INFINITY;
    rr_out->range_max = -INFINITY;
    double vmean = 0;
    for (size_t i = 0; i < m; i++) {
        rr_out->range_min = fmin(rr_out->range_min, r[i]);
        rr_out->range_max = fmax(rr_out->range_max, r[i]);
        vmean += v[i] / (double)m;
    }
    /* Model of each variance: E = g (b + s r)^2 + xa A + xb B, the range
     * noise seen across the plane and the two angular terms. Fitted
     * together, so that the range line cannot take the angular part (a
     * raw range spread under beam-pointing jitter holds both): iteratively
     * reweighted Gauss-Newton, weights dof / (2 E^2) (var of a sample
     * variance), step halved until the weighted sum of squares falls,
     * parameters kept >= 0. Start: the range-only line and the angular
     * fit given it. */
    double th[4] = {base0 > 0 ? base0 : sqrt(fabs(vmean)), slope0 > 0 ? slope0 : 0, 0, 0};
    {
        sensim_lidar_angular_result a0;
        if (sensim_lidar_fit_angular(pts, S, M, target, T, th[0], th[1], NULL, &a0) == SENSIM_OK) {
            th[2] = a0.azimuth_sigma * a0.azimuth_sigma;
            th[3] = a0.elevation_sigma * a0.elevation_sigma;
        }
    }
    const double floor_e = 1e-3 * fabs(vmean) + 1e-300;
    const joint_cells cells = {m, g, r, A, B, v, dof};
    double C[4][4], chisq = 0;
    int ok = 0;
    for (int it = 0; it < 60; it++) {
        double G[4][4], h[4], ssr = joint_normal(&cells, th, floor_e, G, h);
        double dx[4];
        if (solve4(G, h, dx, C)) {
            ok = 0;
            break;
        }
        chisq = ssr;
        ok = 1;
        /* Step, halved until the sum of squares (these weights) falls. */
        double best = ssr, cand[4];
        int moved = 0;
        for (double lam = 1; lam > 1e-4; lam /= 2) {
            for (int p = 0; p < 4; p++)
                cand[p] = fmax(th[p] + lam * dx[p], 0);
            double s2 = 0;
            for (size_t i = 0; i < m; i++) {
                double e0 = joint_var(&cells, th, i), e = joint_var(&cells, cand, i);
                if (!(e0 > floor_e))
                    e0 = floor_e;
                s2 += dof[i] / (2 * e0 * e0) * (v[i] - e) * (v[i] - e);
            }
            if (s2 < best) {
                memcpy(th, cand, sizeof th);
                moved = 1;
                break;
            }
        }
        double rel = 0;
        for (int p = 0; p < 4; p++)
            rel = fmax(rel, fabs(dx[p]) * sqrt(fmax(C[p][p], 0)) > 0 ? fabs(dx[p]) / sqrt(C[p][p]) : 0);
        if (!moved || rel < 1e-6)
            break;
    }
    if (!ok || !(th[0] + th[1] * rr_out->range_max > 0)) {
        st = sensim_error(SENSIM_EDATA,
                          "lidar joint fit: the targets do not separate range from angular noise: use planes at "
                          "several ranges and incidence angles, tilted about a vertical and a horizontal axis");
        goto done;
    }
    /* Covariance at the solution (weights from it), scaled by the reduced
     * chi-squared when above 1. */
    {
        double G[4][4], h[4], dx[4];
        chisq = joint_normal(&cells, th, floor_e, G, h);
        if (solve4(G, h, dx, C)) {
            st = sensim_error(SENSIM_EDATA, "lidar joint fit: singular at the solution: the targets do not "
                                            "separate range from angular noise");
            goto done;
        }
    }
    double red = chisq / (double)(m - 4), scale = red > 1 ? red : 1;
    rr_out->chi2_dof = ar->chi2_dof = red;
    rr_out->sigma_base = th[0];
    rr_out->sigma_slope = th[1];
    rr_out->sigma_base_ci = Z95 * sqrt(fmax(C[0][0], 0) * scale);
    rr_out->sigma_slope_ci = Z95 * sqrt(fmax(C[1][1], 0) * scale);
    rr_out->base_free = th[0];
    rr_out->slope_free = th[1];
    double ca = Z95 * sqrt(fmax(C[2][2], 0) * scale), cb = Z95 * sqrt(fmax(C[3][3], 0) * scale);
    ar->azimuth_sigma = sqrt(th[2]);
    ar->elevation_sigma = sqrt(th[3]);
    ar->azimuth_sigma_ci = th[2] > 0 ? ca / (2 * sqrt(th[2])) : sqrt(ca);
    ar->elevation_sigma_ci = th[3] > 0 ? cb / (2 * sqrt(th[3])) : sqrt(cb);
done:
    free(mean);
    free(tp);
    free(A);
    free(B);
    free(v);
    free(g);
    free(r);
    free(dof);
    free(cnt);
    return st;
}
