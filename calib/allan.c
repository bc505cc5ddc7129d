/* Allan-family deviations, equivalent degrees of freedom and noise
 * identification. Formulas: NIST SP 1065 (Riley 2008) eqs. 7-20 (estimators),
 * eq. 45 (chi-squared interval), Table 11 (TOTDEV EDF); Greenhall & Riley,
 * "Uncertainty of stability variances based on finite differences", PTTI
 * 2003, eqs. 7-13 and Tables 1-3 (EDF of ADEV/OADEV/MDEV/HDEV/OHDEV);
 * Riley & Greenhall, "Power law noise identification using the lag 1
 * autocorrelation", EFTF 2004 (noise type). */
#include "sensim/allan.h"
#include "../lib/base_internal.h"
#include "sensim/quantile.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#else
static int omp_get_num_threads(void) { return 1; }
static int omp_get_thread_num(void) { return 0; }
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sensim/guard.h"

static const char *const dev_names[SENSIM_ALLAN_NDEV] = {"adev", "oadev", "mdev", "hdev", "ohdev", "tdev", "totdev"};

/* Noise identification looks at no more than this many averaged points: the
 * lag-1 estimate is then good to about 1/sqrt(65536), and memory stays
 * bounded whatever the length of the data. */
#define NOISE_ID_MAX 65536
#define NOISE_ID_MIN 30
#define ALPHA_UNKNOWN SENSIM_ALLAN_ALPHA_UNKNOWN

/* The hot loops are compiled for AVX-512, AVX2 and the baseline, chosen at
 * run time; the arithmetic (no FMA contraction in ISO C mode) is the same
 * in each, so the results do not depend on the machine. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define ALLAN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ALLAN_CLONES
#endif

const char *sensim_allan_dev_name(sensim_allan_dev dev)
{
    return (unsigned)dev < SENSIM_ALLAN_NDEV ? dev_names[dev] : NULL;
}

sensim_status sensim_allan_dev_parse(const char *name, sensim_allan_dev *dev)
{
    for (int i = 0; i < SENSIM_ALLAN_NDEV; i++)
        if (name && !strcmp(name, dev_names[i])) {
            *dev = (sensim_allan_dev)i;
            return SENSIM_OK;
        }
    return sensim_error(SENSIM_EINVAL, "unknown deviation '%s' (expected adev, oadev, mdev, hdev, ohdev, tdev or totdev)",
                        name ? name : "(null)");
}

sensim_status sensim_allan_grid_parse(const char *text, sensim_allan_grid *grid, int *per_decade)
{
    *per_decade = 0;
    if (!strcmp(text, "octave"))
        *grid = SENSIM_TAUS_OCTAVE;
    else if (!strcmp(text, "decade"))
        *grid = SENSIM_TAUS_DECADE;
    else if (!strcmp(text, "all"))
        *grid = SENSIM_TAUS_ALL;
    else if (!strncmp(text, "log:", 4)) {
        char *end;
        long k = strtol(text + 4, &end, 10);
        if (end == text + 4 || *end || k < 1 || k > 1000)
            return sensim_error(SENSIM_EINVAL, "tau grid '%s': log:N needs N points per decade, 1 to 1000", text);
        *grid = SENSIM_TAUS_LOG;
        *per_decade = (int)k;
    } else
        return sensim_error(SENSIM_EINVAL, "unknown tau grid '%s' (expected octave, decade, all or log:N)", text);
    return SENSIM_OK;
}

static size_t nphase_of(sensim_allan_data data, size_t n)
{
    return data == SENSIM_ALLAN_FREQ ? n + 1 : n;
}

/* Order of the difference: 2 for the Allan family, 3 for Hadamard. */
static int diff_order(sensim_allan_dev dev)
{
    return dev == SENSIM_HDEV || dev == SENSIM_OHDEV || dev == SENSIM_MDEV || dev == SENSIM_TDEV ? 3 : 2;
}

size_t sensim_allan_max_m(sensim_allan_dev dev, sensim_allan_data data, size_t n)
{
    size_t np = nphase_of(data, n);
    if (np < 3)
        return 0;
    /* ADEV/OADEV/TOTDEV need x[i+2m] (at least one term: 2m <= np-1);
     * MDEV's window spans 3m and Hadamard's third difference 3m. */
    return (np - 1) / (size_t)diff_order(dev);
}

sensim_status sensim_allan_taus(sensim_allan_grid grid, int per_decade, sensim_allan_dev dev, sensim_allan_data data,
                                size_t n, size_t **m, size_t *count)
{
    *m = NULL;
    *count = 0;
    size_t mmax = sensim_allan_max_m(dev, data, n);
    if (mmax < 1)
        return sensim_error(SENSIM_EDATA, "%zu samples are too few for %s (need at least %d %s samples)", n,
                            dev_names[dev], diff_order(dev) + (data == SENSIM_ALLAN_PHASE), data == SENSIM_ALLAN_FREQ ? "rate" : "phase");
    if (grid == SENSIM_TAUS_LOG && per_decade < 1)
        return sensim_error(SENSIM_EINVAL, "log tau grid needs at least 1 point per decade");
    size_t cap = grid == SENSIM_TAUS_ALL ? mmax : 64 + (size_t)(per_decade > 0 ? per_decade : 1) * 20;
    size_t *v = malloc(cap * sizeof *v), k = 0;
    if (!v)
        return sensim_error(SENSIM_ENOMEM, "tau grid: out of memory");
    switch (grid) {
    case SENSIM_TAUS_OCTAVE:
        for (size_t a = 1; a <= mmax && k < cap; a *= 2)
            v[k++] = a;
        break;
    case SENSIM_TAUS_DECADE:
        for (size_t d = 1; d <= mmax && k + 3 <= cap; d *= 10) {
            const size_t f[3] = {1, 2, 4};
            for (int j = 0; j < 3; j++)
                if (d * f[j] <= mmax)
                    v[k++] = d * f[j];
        }
        break;
    case SENSIM_TAUS_ALL:
        for (size_t a = 1; a <= mmax; a++)
            v[k++] = a;
        break;
    case SENSIM_TAUS_LOG:
        for (int j = 0; k < cap; j++) {
            double a = floor(pow(10.0, (double)j / per_decade) + 0.5);
            if (a > (double)mmax)
                break;
            if (k == 0 || (size_t)a > v[k - 1])
                v[k++] = (size_t)a;
        }
        break;
    default:
        free(v);
        return sensim_error(SENSIM_EINVAL, "unknown tau grid %d", (int)grid);
    }
    *m = v;
    *count = k;
    return SENSIM_OK;
}

sensim_allan_opts sensim_allan_default_opts(void)
{
    sensim_allan_opts o = {SENSIM_OADEV, SENSIM_ALLAN_FREQ, 1.0, 0.682689492137086, 0, 0};
    return o;
}

/* ---- chi-squared interval ---- */

void sensim_allan_ci(double dev, double edf, double confidence, double *lo, double *hi)
{
    SENSIM_GSL_QUIET_SCOPE();
    double p = (1.0 - confidence) / 2.0;
    if (!(edf > 0) || !(confidence > 0 && confidence < 1)) {
        *lo = *hi = dev;
        return;
    }
    double chi_lo = sensim_chisq_quantile(p, edf), chi_hi = sensim_chisq_quantile(1.0 - p, edf);
    *lo = dev * sqrt(edf / chi_hi);
    *hi = chi_lo > 0 ? dev * sqrt(edf / chi_lo) : HUGE_VAL;
}

/* ---- Greenhall & Riley (2003) EDF ---- */

/* Eq. 7: the generalized autocovariance kernel of power-law noise. */
static double gh_sw(double t, int alpha)
{
    double a = fabs(t);
    switch (alpha) {
    case 2: return -a;
    case 1: return t == 0 ? 0 : t * t * log(a);
    case 0: return a * a * a;
    case -1: return t == 0 ? 0 : pow(t, 4) * log(a);
    case -2: return pow(a, 5);
    case -3: return t == 0 ? 0 : pow(t, 6) * log(a);
    default: return pow(a, 7);
    }
}

/* Eq. 8: F is the filter factor (m for plain, 1 for modified, inf). */
static double gh_sx(double t, double F, int alpha)
{
    if (isinf(F))
        return gh_sw(t, alpha + 2);
    return F * F * (2 * gh_sw(t, alpha) - gh_sw(t - 1 / F, alpha) - gh_sw(t + 1 / F, alpha));
}

/* Eq. 9: the d-th difference, coefficients (-1)^j C(2d, d+j). */
static double gh_sz(double t, double F, int alpha, int d)
{
    static const double c[4][4] = {{0}, {2, -1}, {6, -4, 1}, {20, -15, 6, -1}};
    double s = c[d][0] * gh_sx(t, F, alpha);
    for (int j = 1; j <= d; j++)
        s += c[d][j] * (gh_sx(t - j, F, alpha) + gh_sx(t + j, F, alpha));
    return s;
}

/* Eq. 10. */
static double gh_basic_sum(double J, double M, double S, double F, int alpha, int d)
{
    double z0 = gh_sz(0, F, alpha, d), zj = gh_sz(J / S, F, alpha, d);
    double s = z0 * z0 + (1 - J / M) * zj * zj;
    for (int j = 1; j < (int)J; j++) {
        double z = gh_sz(j / S, F, alpha, d);
        s += 2 * (1 - j / M) * z * z;
    }
    return s;
}

/* Tables 1 (modified) and 2 (unmodified): rows alpha = +2..-4, columns
 * d = 1..3, pairs (a0, a1); -1 marks combinations the paper leaves out. */
static const double gh_table1[7][3][2] = {
    {{2.0 / 3, 1.0 / 3}, {7.0 / 9, 1.0 / 2}, {22.0 / 25, 2.0 / 3}},
    {{0.840, 0.345}, {0.997, 0.616}, {1.141, 0.843}},
    {{1.079, 0.368}, {1.033, 0.607}, {1.184, 0.848}},
    {{-1, -1}, {1.048, 0.534}, {1.180, 0.816}},
    {{-1, -1}, {1.302, 0.535}, {1.175, 0.777}},
    {{-1, -1}, {-1, -1}, {1.194, 0.703}},
    {{-1, -1}, {-1, -1}, {1.489, 0.702}},
};
static const double gh_table2[7][3][2] = {
    {{3.0 / 2, 1.0 / 2}, {35.0 / 18, 1.0}, {231.0 / 100, 3.0 / 2}},
    {{78.6, 25.2}, {790.0, 410.0}, {9950.0, 6520.0}},
    {{2.0 / 3, 1.0 / 6}, {2.0 / 3, 1.0 / 3}, {7.0 / 9, 1.0 / 2}},
    {{-1, -1}, {0.852, 0.375}, {0.997, 0.617}},
    {{-1, -1}, {1.079, 0.368}, {1.033, 0.607}},
    {{-1, -1}, {-1, -1}, {1.053, 0.553}},
    {{-1, -1}, {-1, -1}, {1.302, 0.535}},
};
/* Table 3: alpha = +1, (b0, b1) by d. */
static const double gh_table3[3][2] = {{6.0, 4.0}, {15.23, 12.0}, {47.8, 40.0}};

/* SP 1065 Table 5 simple formulas for the overlapping Allan variance. */
static double edf_simple(double N, double m, int alpha)
{
    switch (alpha) {
    case 2: return (N + 1) * (N - 2 * m) / (2 * (N - m));
    case 1: return exp(sqrt(log((N - 1) / (2 * m)) * log((2 * m + 1) * (N - 1) / 4)));
    case 0: return (3 * (N - 1) / (2 * m) - 2 * (N - 2) / N) * 4 * m * m / (4 * m * m + 5);
    case -1: return m == 1 ? 2 * (N - 2) / (2.3 * N - 4.9) : 5 * N * N / (4 * m * (N + 3 * m));
    default: return (N - 2) / (m * (N - 3) * (N - 3)) * ((N - 1) * (N - 1) - 3 * m * (N - 1) + 4 * m * m);
    }
}

static double edf_greenhall(int alpha, int d, double m, double N, int overlapping, int modified)
{
    const double Jmax = 100;
    double F = modified ? 1 : m, S = overlapping ? m : 1;
    double L = m / F + m * d;
    if (N <= L || alpha + 2 * d <= 1 || alpha > 2 || alpha < -4)
        return edf_simple(N, m, alpha < -2 ? -2 : alpha);
    double M = 1 + floor(S * (N - L) / m);
    double J = fmin(M, (d + 1) * S), r = M / S;
    int row = 2 - alpha, col = d - 1;
    double inv;
    if (modified) {
        if (J <= Jmax)
            inv = gh_basic_sum(J, M, S, 1, alpha, d) / (pow(gh_sz(0, 1, alpha, d), 2) * M);
        else if (r > d + 1 && gh_table1[row][col][0] > 0)
            inv = (gh_table1[row][col][0] - gh_table1[row][col][1] / r) / r;
        else
            inv = gh_basic_sum(Jmax, Jmax, Jmax / r, 1, alpha, d) / (pow(gh_sz(0, 1, alpha, d), 2) * Jmax);
    } else if (alpha <= 0) {
        if (J <= Jmax) {
            double mp = m * (d + 1) <= Jmax ? m : INFINITY;
            inv = gh_basic_sum(J, M, S, mp, alpha, d) / (pow(gh_sz(0, mp, alpha, d), 2) * M);
        } else if (r > d + 1 && gh_table2[row][col][0] > 0)
            inv = (gh_table2[row][col][0] - gh_table2[row][col][1] / r) / r;
        else
            inv = gh_basic_sum(Jmax, Jmax, Jmax / r, INFINITY, alpha, d) / (pow(gh_sz(0, INFINITY, alpha, d), 2) * Jmax);
    } else if (alpha == 1) {
        double b = gh_table3[col][0] + gh_table3[col][1] * log(m);
        if (J <= Jmax)
            inv = gh_basic_sum(J, M, S, m, 1, d) / (pow(gh_sz(0, m, 1, d), 2) * M);
        else if (r > d + 1)
            inv = (gh_table2[row][col][0] - gh_table2[row][col][1] / r) / (b * b * r);
        else
            inv = gh_basic_sum(Jmax, Jmax, Jmax / r, Jmax / r, 1, d) / (b * b * Jmax);
    } else {
        /* alpha = +2, unmodified: the paper's closed form needs ceil(r) > d. */
        if (ceil(r) <= d)
            return edf_simple(N, m, 2);
        double a0 = d == 1 ? 6.0 / 4 : d == 2 ? 70.0 / 36 : 924.0 / 400, a1 = d / 2.0;
        inv = (a0 - a1 / r) / M;
    }
    return inv > 0 ? 1 / inv : edf_simple(N, m, alpha < -2 ? -2 : alpha);
}

double sensim_allan_edf(sensim_allan_dev dev, int alpha, size_t m, size_t nphase)
{
    double N = (double)nphase, dm = (double)m, e;
    switch (dev) {
    case SENSIM_ADEV: e = edf_greenhall(alpha, 2, dm, N, 0, 0); break;
    case SENSIM_OADEV: e = edf_greenhall(alpha, 2, dm, N, 1, 0); break;
    case SENSIM_MDEV:
    case SENSIM_TDEV: e = edf_greenhall(alpha, 2, dm, N, 1, 1); break;
    case SENSIM_HDEV: e = edf_greenhall(alpha, 3, dm, N, 0, 0); break;
    case SENSIM_OHDEV: e = edf_greenhall(alpha, 3, dm, N, 1, 0); break;
    default:
        /* SP 1065 Table 11: TOTDEV edf = b (T / tau) - c, T = (N - 1) tau0,
         * for white, flicker and random-walk FM; the OADEV value otherwise. */
        /* At m = 1 no term reaches the reflection: TOTDEV is OADEV, with its
         * EDF (Howe's formula, fitted at larger m, doubles it there). */
        if (m > 1 && (alpha == 0 || alpha == -1 || alpha == -2)) {
            static const double bc[3][2] = {{1.50, 0.0}, {1.17, 0.22}, {0.93, 0.36}};
            e = bc[-alpha][0] * (N - 1) / dm - bc[-alpha][1];
        } else
            e = edf_greenhall(alpha, 2, dm, N, 1, 0);
        break;
    }
    if (!(e > 0) || !isfinite(e))
        e = 1;
    return e;
}

/* ---- lag-1 autocorrelation noise identification ---- */

/* The sums below run in NL lanes (element k in lane k mod NL) so that they
 * vectorize: one sequential chain per sum cost more than the rest of the
 * noise identification. The order differs from a plain loop only in
 * rounding, which moves rho by about 1e-16. */
#define NL 8

/* Removes a least-squares polynomial of degree deg (1 or 2) from z in place,
 * with t centred and scaled to [-1, 1] for conditioning. */
static void detrend(double *z, size_t L, int deg)
{
    const double c = (L - 1) / 2.0, ih = 1 / (c > 0 ? c : 1);
    /* p[i] p[j] depends only on i + j: T[e] = sum t^e, B[i] = sum t^i z. */
    double T[5][NL] = {{0}}, B[3][NL] = {{0}};
    size_t k = 0;
    double kd = 0; /* k, counted in a double: no integer conversions in the loop */
    for (; k + NL <= L; k += NL, kd += NL)
        for (int l = 0; l < NL; l++) {
            double t = (kd + l - c) * ih, t2 = t * t, zk = z[k + (size_t)l];
            T[1][l] += t;
            T[2][l] += t2;
            T[3][l] += t2 * t;
            T[4][l] += t2 * t2;
            B[0][l] += zk;
            B[1][l] += t * zk;
            B[2][l] += t2 * zk;
        }
    for (; k < L; k++, kd++) {
        double t = (kd - c) * ih, t2 = t * t, zk = z[k];
        T[1][0] += t;
        T[2][0] += t2;
        T[3][0] += t2 * t;
        T[4][0] += t2 * t2;
        B[0][0] += zk;
        B[1][0] += t * zk;
        B[2][0] += t2 * zk;
    }
    double Ts[5] = {(double)L, 0, 0, 0, 0}, b[3] = {0};
    for (int l = 0; l < NL; l++) {
        for (int e = 1; e < 5; e++)
            Ts[e] += T[e][l];
        for (int i = 0; i < 3; i++)
            b[i] += B[i][l];
    }
    double A[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            A[i][j] = Ts[i + j];
    /* Gaussian elimination on the (deg+1)^2 normal equations. */
    int n = deg + 1;
    for (int i = 0; i < n; i++)
        for (int r = i + 1; r < n; r++) {
            double f = A[r][i] / A[i][i];
            for (int j = i; j < n; j++)
                A[r][j] -= f * A[i][j];
            b[r] -= f * b[i];
        }
    double q[3] = {0};
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int j = i + 1; j < n; j++)
            s -= A[i][j] * q[j];
        q[i] = s / A[i][i];
    }
    const double q2 = deg == 2 ? q[2] : 0;
    kd = 0;
    for (k = 0; k < L; k++, kd++) {
        double t = (kd - c) * ih;
        z[k] -= q[0] + q[1] * t + q2 * t * t;
    }
}

/* Riley & Greenhall (2004): difference until rho = r1 / (1 + r1) < 0.25;
 * alpha = -round(2 rho) - 2 d (+2 for phase). z is destroyed. */
static int noise_id_series(double *z, size_t L, int phase, int dmax)
{
    detrend(z, L, phase ? 2 : 1);
    for (int d = 0;; d++) {
        double ms[NL] = {0}, as[NL] = {0}, bs[NL] = {0}, mu = 0, a = 0, b = 0;
        size_t k = 0;
        for (; k + NL <= L; k += NL)
            for (int l = 0; l < NL; l++)
                ms[l] += z[k + (size_t)l];
        for (; k < L; k++)
            ms[0] += z[k];
        for (int l = 0; l < NL; l++)
            mu += ms[l];
        mu /= (double)L;
        /* b over every point, a over the L - 1 neighbouring pairs. */
        for (k = 0; k + NL < L; k += NL)
            for (int l = 0; l < NL; l++) {
                double e = z[k + (size_t)l] - mu;
                bs[l] += e * e;
                as[l] += e * (z[k + (size_t)l + 1] - mu);
            }
        for (; k < L; k++) {
            double e = z[k] - mu;
            bs[0] += e * e;
            if (k + 1 < L)
                as[0] += e * (z[k + 1] - mu);
        }
        for (int l = 0; l < NL; l++) {
            a += as[l];
            b += bs[l];
        }
        double r1 = b > 0 ? a / b : 0, rho = r1 / (1 + r1);
        if (rho < 0.25 || d >= dmax || L < 3) {
            int al = -(int)lround(2 * rho) - 2 * d + (phase ? 2 : 0);
            if (al > 2)
                al = 2;
            if (al < (dmax >= 3 ? -4 : -2))
                al = dmax >= 3 ? -4 : -2;
            return al;
        }
        for (k = 0; k + 1 < L; k++)
            z[k] = z[k + 1] - z[k];
        L--;
    }
}
#undef NL

sensim_status sensim_allan_noise_id(const double *x, size_t n, size_t stride, sensim_allan_data data, size_t m,
                                    int dmax, int *alpha)
{
    if (m < 1 || stride < 1)
        return sensim_error(SENSIM_EINVAL, "noise identification: averaging factor and stride must be >= 1");
    size_t L = data == SENSIM_ALLAN_FREQ ? n / m : (n + m - 1) / m;
    if (L < NOISE_ID_MIN)
        return sensim_error(SENSIM_EDATA, "noise identification at m = %zu: %zu averaged points, need %d", m, L,
                            NOISE_ID_MIN);
    if (L > NOISE_ID_MAX)
        L = NOISE_ID_MAX;
    double *z = malloc(L * sizeof *z);
    if (!z)
        return sensim_error(SENSIM_ENOMEM, "noise identification: out of memory");
    for (size_t k = 0; k < L; k++) {
        if (data == SENSIM_ALLAN_FREQ) {
            double s = 0;
            for (size_t j = 0; j < m; j++)
                s += x[(k * m + j) * stride];
            z[k] = s / (double)m;
        } else
            z[k] = x[k * m * stride];
    }
    *alpha = noise_id_series(z, L, data == SENSIM_ALLAN_PHASE, dmax);
    free(z);
    return SENSIM_OK;
}

/* Expected MVAR / AVAR ratio R(m) (SP 1065 section 5.6) for the discrete
 * power-law phase spectrum S_x(u) = |2 sin(pi u)|^-a, u = f tau0 in
 * (0, 1/2], a = 2 - alpha (the spectrum of Kasdin's discrete noise): with
 * d the overlapping second difference at m and v the sum of m of them,
 * E[d^2] = int S 16 sin^4(pi u m) du and E[v^2] = int S 16 sin^6(pi u m) /
 * sin^2(pi u) du, and R = E[v^2] / (m^2 E[d^2]). 1/m exactly for white PM.
 * Midpoint rule with 32 points per period of sin(pi u m), m capped at 256
 * (beyond, the ratio to 1/m is taken as at 256: it grows like log m for
 * flicker PM, so the split below then leans to flicker, the wider interval). */
static double rn_expected(int alpha, size_t m) /* alpha 2, 1 or 0 */
{
    if (alpha == 2)
        return 1.0 / (double)m;
    /* u_k = (k + 1/2) / (2K), K = 32 mc: sin(pi u_k mc) = sin(pi (k + 1/2) / 64)
     * repeats every 128 points, so it comes from a table. */
    double tab[128];
    for (int j = 0; j < 128; j++)
        tab[j] = sin(M_PI * (j + 0.5) / 64.0);
    size_t mc = m > 256 ? 256 : m, K = 32 * mc;
    double num = 0, den = 0;
    for (size_t k = 0; k < K; k++) {
        double u = (k + 0.5) / (2.0 * (double)K), su = sin(M_PI * u), sm = tab[k % 128];
        double S = alpha == 1 ? 1 / (2 * su) : 1 / (4 * su * su), s4 = sm * sm * sm * sm; /* a = 1 or 2 */
        num += S * s4 * sm * sm / (su * su);
        den += S * s4;
    }
    return num / ((double)mc * (double)mc * den) * (double)mc / (double)m;
}

/* The observed MVAR / AVAR ratio at m from phase ph[0..np); 0 when it
 * cannot be formed. */
static double rn_observed(const double *ph, size_t np, size_t m)
{
    if (np < 3 * m + 1)
        return 0;
    double sd = 0, sv = 0, v = 0;
    size_t nd = 0, nv = 0;
    for (size_t i = 0; i + 2 * m < np; i++) {
        double d = ph[i + 2 * m] - 2 * ph[i + m] + ph[i];
        sd += d * d;
        nd++;
        /* The window sum slides by d - e, e the term leaving it: one
         * addition on the dependency chain per step. */
        v += i >= m ? d - (ph[i + m] - 2 * ph[i] + ph[i - m]) : d;
        if (i + 1 >= m) {
            sv += v * v;
            nv++;
        }
    }
    return sd > 0 && nv ? (sv / (double)nv) / ((double)m * (double)m * sd / (double)nd) : 0;
}

/* rn_observed's ratio with the window sums v computed four at a time.
 *
 * The sequential window sum is one long dependency chain. Cut it into
 * chains of m steps: chain c covers i in [(c+1)m - 1, (c+2)m - 1), where v
 * starts at V_c = sum of d_j over j in [cm, (c+1)m) and moves by d_i -
 * d_{i-m}. Each chain runs on u = v - V_c from 0, summing u and u^2, so four
 * neighbouring chains run side by side in the lanes of a vector (their d
 * rows are m apart and shared: chain c's d_{i-m} is chain c-1's d_i), and
 * sum v^2 = sum u^2 + 2 V_c sum u + n V_c^2 once V_c is known: V_{c+1} is
 * V_c plus chain c's last u and one more step. The sums differ from
 * rn_observed only by rounding; the ratio only picks a noise type. */
#if defined(__GNUC__)
typedef double allan_v4d __attribute__((vector_size(32)));
#if defined(__clang__)
#define RN_SHUF(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
typedef long long allan_v4i __attribute__((vector_size(32)));
#define RN_SHUF(a, b, i, j, k, l) __builtin_shuffle(a, b, (allan_v4i){i, j, k, l})
#endif

/* Four steps of four chains: r0..r3 hold step k of chains 0..3 (row q =
 * chain); transposed so that each add takes one step of all four chains,
 * the running value u and its sums su and su2 advanced in step order. */
#define RN_STEPS4(r0, r1, r2, r3, u, su, su2)                                                                      \
    do {                                                                                                           \
        allan_v4d t0_ = RN_SHUF(r0, r1, 0, 4, 2, 6), t1_ = RN_SHUF(r0, r1, 1, 5, 3, 7);                            \
        allan_v4d t2_ = RN_SHUF(r2, r3, 0, 4, 2, 6), t3_ = RN_SHUF(r2, r3, 1, 5, 3, 7);                            \
        RN_STEP(RN_SHUF(t0_, t2_, 0, 1, 4, 5), u, su, su2);                                                       \
        RN_STEP(RN_SHUF(t1_, t3_, 0, 1, 4, 5), u, su, su2);                                                       \
        RN_STEP(RN_SHUF(t0_, t2_, 2, 3, 6, 7), u, su, su2);                                                       \
        RN_STEP(RN_SHUF(t1_, t3_, 2, 3, 6, 7), u, su, su2);                                                       \
    } while (0)
/* One step of the four chains: u moves by r, its sums follow. */
#define RN_STEP(r, u, su, su2)                                                                                     \
    do {                                                                                                           \
        u += (r);                                                                                                  \
        su += u;                                                                                                   \
        su2 += u * u;                                                                                              \
    } while (0)
#define RN_FAST_MIN 64

static inline double rn_d(const double *ph, size_t m, size_t j)
{
    return ph[j + 2 * m] - 2 * ph[j + m] + ph[j];
}

/* v = p[0..4), unaligned (a macro: vectors returned from functions
 * compiled without AVX change the ABI). */
#define RN_LOAD(v, p) memcpy(&(v), (p), sizeof(v))

/* The four chains' vector state (u, su, su2) into uu, s1, s2, then their
 * steps t in [t, t1) one at a time, chain q at i = start[q] + t: u, its
 * sums, and d_i^2 added to *sd in step order. */
static inline void rn_finish4(const double *ph, size_t m, const size_t start[4], size_t t, size_t t1,
                              const allan_v4d *u, const allan_v4d *su, const allan_v4d *su2, double uu[4],
                              double s1[4], double s2[4], double *sd)
{
    for (int q = 0; q < 4; q++) {
        uu[q] = (*u)[q];
        s1[q] = (*su)[q];
        s2[q] = (*su2)[q];
    }
    for (; t < t1; t++)
        for (int q = 0; q < 4; q++) {
            const size_t i = start[q] + t;
            double dn = rn_d(ph, m, i);
            uu[q] += dn - rn_d(ph, m, i - m);
            s1[q] += uu[q];
            s2[q] += uu[q] * uu[q];
            *sd += dn * dn;
        }
}

/* v over i in [i0, i1) from v = V at i0: adds v^2 for i in [i0, i1) to *sv
 * and d_i^2 for i in (i0, i1) to *sd; returns v at i1 - 1. Four pieces of
 * the run side by side in the lanes (u from 0 in each, as above) where it
 * is long enough, the rest one step at a time. */
ALLAN_CLONES
static double rn_run(const double *ph, size_t m, size_t i0, size_t i1, double V, double *sv, double *sd)
{
    const size_t len = i1 - i0, h = len / 4 >= 16 ? len / 4 : 0;
    size_t tail = i0;
    if (h) {
        allan_v4d u = {0}, su = {0}, su2 = {0}, sdv = {0};
        const allan_v4d two = {2, 2, 2, 2};
        size_t t = 1;
        for (; t + 4 <= h; t += 4) {
            allan_v4d r[4];
            for (int q = 0; q < 4; q++) {
                const double *p = ph + i0 + (size_t)q * h + t;
                allan_v4d a0, a1, a2, a3;
                RN_LOAD(a0, p - m);
                RN_LOAD(a1, p);
                RN_LOAD(a2, p + m);
                RN_LOAD(a3, p + 2 * m);
                allan_v4d dn = a3 - two * a2 + a1, dold = a2 - two * a1 + a0;
                sdv += dn * dn;
                r[q] = dn - dold;
            }
            RN_STEPS4(r[0], r[1], r[2], r[3], u, su, su2);
        }
        double uu[4], s1[4], s2[4], sdd = sdv[0] + sdv[1] + sdv[2] + sdv[3];
        const size_t start[4] = {i0, i0 + h, i0 + 2 * h, i0 + 3 * h};
        rn_finish4(ph, m, start, t, h, &u, &su, &su2, uu, s1, s2, &sdd);
        *sd += sdd;
        for (int q = 0; q < 4; q++) {
            *sv += s2[q] + 2 * V * s1[q] + (double)h * V * V;
            V += uu[q];
            if (q < 3) {
                const size_t e = i0 + (size_t)(q + 1) * h;
                double dx = rn_d(ph, m, e);
                *sd += dx * dx;
                V += dx - rn_d(ph, m, e - m);
            }
        }
        tail = i0 + 4 * h - 1; /* v at tail is V; go on from there */
    } else
        *sv += V * V;
    double s2 = 0, s = 0;
    for (size_t i = tail + 1; i < i1; i++) {
        double dn = rn_d(ph, m, i);
        V += dn - rn_d(ph, m, i - m);
        s2 += V * V;
        s += dn * dn;
    }
    *sv += s2;
    *sd += s;
    return V;
}

ALLAN_CLONES
static double rn_observed_fast(const double *ph, size_t np, size_t m)
{
    if (np < 3 * m + 1 || m < RN_FAST_MIN)
        return rn_observed(ph, np, m);
    const size_t nd = np - 2 * m, nv = np - 3 * m + 1, nchain = (nv + m - 1) / m;
    double sd = 0, sv = 0, V = 0;
    for (size_t j = 0; j < m; j++) {
        double d = rn_d(ph, m, j);
        sd += d * d;
        V += d;
    }
    /* V is V_c of chain c on entry to each group; a chain is full (m
     * steps) while (c + 4) m <= np + 1. */
    size_t c = 0;
    for (; c + 4 <= nchain && (c + 7) * m <= np + 1; c += 4) {
        allan_v4d u = {0}, su = {0}, su2 = {0}, sdv = {0};
        const allan_v4d two = {2, 2, 2, 2};
        const double *x0 = ph + c * m; /* row q of step t at x0 + q m + t - 1 */
        size_t t = 1;
        for (; t + 4 <= m; t += 4) {
            const double *p = x0 + t - 1;
            allan_v4d a0, a1, a2, a3, a4, a5, a6;
            RN_LOAD(a0, p);
            RN_LOAD(a1, p + m);
            RN_LOAD(a2, p + 2 * m);
            RN_LOAD(a3, p + 3 * m);
            RN_LOAD(a4, p + 4 * m);
            RN_LOAD(a5, p + 5 * m);
            RN_LOAD(a6, p + 6 * m);
            allan_v4d d0 = a2 - two * a1 + a0, d1 = a3 - two * a2 + a1, d2 = a4 - two * a3 + a2;
            allan_v4d d3 = a5 - two * a4 + a3, d4 = a6 - two * a5 + a4;
            sdv += d1 * d1 + d2 * d2 + d3 * d3 + d4 * d4;
            allan_v4d r0 = d1 - d0, r1 = d2 - d1, r2 = d3 - d2, r3 = d4 - d3;
            /* Transpose: column k holds step t + k of the four chains. */
            RN_STEPS4(r0, r1, r2, r3, u, su, su2);
        }
        double uu[4], s1[4], s2[4];
        sd += sdv[0] + sdv[1] + sdv[2] + sdv[3];
        const size_t start[4] = {(c + 1) * m - 1, (c + 2) * m - 1, (c + 3) * m - 1, (c + 4) * m - 1};
        rn_finish4(ph, m, start, t, m, &u, &su, &su2, uu, s1, s2, &sd);
        /* v at the end of chain c + l is V + uu[l]; one more step gives
         * the start of the next chain. */
        for (int l = 0; l < 4; l++) {
            const size_t e = (c + (size_t)l + 2) * m - 1;
            sv += s2[l] + 2 * V * s1[l] + (double)m * V * V;
            if (c + (size_t)l + 1 < nchain) {
                double dx = rn_d(ph, m, e);
                sd += dx * dx;
                V += uu[l] + (dx - rn_d(ph, m, e - m));
            }
        }
    }
    /* The chains left (fewer than four, the last maybe short) in one run. */
    if (c < nchain)
        rn_run(ph, m, (c + 1) * m - 1, nd, V, &sv, &sd);
    return sd > 0 ? (sv / (double)nv) / ((double)m * (double)m * sd / (double)nd) : 0;
}
#else
#define rn_observed_fast rn_observed
#define RN_FAST_MIN 1
#endif

/* White PM (2), flicker PM (1) or neither (0) at m by R(m), split at the
 * geometric means of the expected ratios. */
static void rn_thresholds(size_t m, double thr[2])
{
    double e1 = rn_expected(1, m);
    thr[0] = sqrt(rn_expected(2, m) * e1);
    thr[1] = sqrt(e1 * rn_expected(0, m));
}

/* Where noise identification reads the phase: dec[k * dstride] = ph[k m]
 * (k up to what the caller needs), and robs(v, np) the observed R(m) over
 * ph[0..np): from a phase array in memory, or from a stream. */
typedef struct id_view {
    const double *dec;
    size_t dstride;
    double (*robs)(const struct id_view *v, size_t np);
    const double *ph; /* in memory */
    size_t m;
    void *stream; /* streamed: the state and the axis */
    size_t axis;
} id_view;

static double robs_mem(const id_view *v, size_t np)
{
    /* stream (in memory) points at the R(m) over all np points when known. */
    if (v->stream && np == v->axis)
        return *(const double *)v->stream;
    return rn_observed_fast(v->ph, np, v->m);
}

/* rn_observed of three axes p0, p1, p2 at once, the same arithmetic per
 * axis: three independent chains keep the pipeline full. */
static void rn_observed3(const double *p0, const double *p1, const double *p2, size_t np, size_t m, double r[3])
{
    if (np < 3 * m + 1) {
        r[0] = r[1] = r[2] = 0;
        return;
    }
    double sd0 = 0, sd1 = 0, sd2 = 0, sv0 = 0, sv1 = 0, sv2 = 0, v0 = 0, v1 = 0, v2 = 0;
    size_t nd = 0, nv = 0, i = 0;
#define RN_D(p) ((p)[i + 2 * m] - 2 * (p)[i + m] + (p)[i])
#define RN_E(p) ((p)[i + m] - 2 * (p)[i] + (p)[i - m])
    for (; i + 1 < m && i + 2 * m < np; i++) {
        double d0 = RN_D(p0), d1 = RN_D(p1), d2 = RN_D(p2);
        sd0 += d0 * d0, sd1 += d1 * d1, sd2 += d2 * d2;
        v0 += d0, v1 += d1, v2 += d2;
        nd++;
    }
    for (; i < m && i + 2 * m < np; i++) { /* i = m - 1 */
        double d0 = RN_D(p0), d1 = RN_D(p1), d2 = RN_D(p2);
        sd0 += d0 * d0, sd1 += d1 * d1, sd2 += d2 * d2;
        v0 += d0, v1 += d1, v2 += d2;
        sv0 += v0 * v0, sv1 += v1 * v1, sv2 += v2 * v2;
        nd++, nv++;
    }
    for (; i + 2 * m < np; i++) {
        double d0 = RN_D(p0), d1 = RN_D(p1), d2 = RN_D(p2);
        sd0 += d0 * d0, sd1 += d1 * d1, sd2 += d2 * d2;
        v0 += d0 - RN_E(p0), v1 += d1 - RN_E(p1), v2 += d2 - RN_E(p2);
        sv0 += v0 * v0, sv1 += v1 * v1, sv2 += v2 * v2;
        nd++, nv++;
    }
#undef RN_D
#undef RN_E
    const double sd[3] = {sd0, sd1, sd2}, sv[3] = {sv0, sv1, sv2};
    for (int a = 0; a < 3; a++)
        r[a] = sd[a] > 0 && nv ? (sv[a] / (double)nv) / ((double)m * (double)m * sd[a] / (double)nd) : 0;
}

/* rn_observed of na axes ph + a * pstride into r[a * rs], three at a time. */
static void rn_observed_axes(const double *ph, size_t pstride, size_t na, size_t np, size_t m, double *r, size_t rs)
{
    if (m >= RN_FAST_MIN) {
        for (size_t a = 0; a < na; a++)
            r[a * rs] = rn_observed_fast(ph + a * pstride, np, m);
        return;
    }
    size_t a = 0;
    for (; a + 3 <= na; a += 3) {
        double t[3];
        rn_observed3(ph + a * pstride, ph + (a + 1) * pstride, ph + (a + 2) * pstride, np, m, t);
        for (int j = 0; j < 3; j++)
            r[(a + (size_t)j) * rs] = t[j];
    }
    for (; a < na; a++)
        r[a * rs] = rn_observed(ph + a * pstride, np, m);
}

/* thr: the two splits at m (rn_thresholds), or NULL to compute them. */
static int rn_classify(const id_view *v, size_t np, size_t m, const double *thr)
{
    double r = m >= 2 ? v->robs(v, np) : 0, t[2];
    if (m < 2 || !(r > 0))
        return 1;
    if (!thr) {
        rn_thresholds(m, t);
        thr = t;
    }
    return r < thr[0] ? 2 : r < thr[1] ? 1 : 0;
}

/* Barnes' bias function B1(N, mu): the expected ratio of the N-sample to the
 * two-sample variance for AVAR ~ tau^mu (SP 1065 eq. 68). */
static double b1_expected(double N, double mu)
{
    if (mu == 0)
        return N * log(N) / (2 * (N - 1) * log(2.0));
    return N * (1 - pow(N, mu)) / (2 * (N - 1) * (1 - pow(2.0, mu)));
}

/* Where the lag-1 method has too few points: the B1 ratio of the L averaged
 * frequencies (ph[(k+1)m] - ph[k m]) picks mu in -2..1 (alpha 2/1, 0, -1,
 * -2), split at geometric means of neighbouring expected values, after
 * R(m) has ruled out white and flicker PM. ALPHA_UNKNOWN below 4 points. */
static int noise_id_b1(const id_view *v, size_t np, size_t m, size_t L, const double *thr)
{
    if (L < 4)
        return ALPHA_UNKNOWN;
    const double *dec = v->dec;
    const size_t ds = v->dstride;
    double mean = 0, s2 = 0, a2 = 0;
    for (size_t k = 0; k < L; k++)
        mean += dec[(k + 1) * ds] - dec[k * ds];
    mean /= (double)L;
    for (size_t k = 0; k < L; k++) {
        double y = dec[(k + 1) * ds] - dec[k * ds] - mean;
        s2 += y * y;
        if (k + 1 < L) {
            double d = dec[(k + 2) * ds] - 2 * dec[(k + 1) * ds] + dec[k * ds];
            a2 += d * d;
        }
    }
    if (!(a2 > 0))
        return ALPHA_UNKNOWN;
    double b1 = (s2 / (double)(L - 1)) / (a2 / (2.0 * (double)(L - 1)));
    int mu = -2;
    for (int u = -1; u <= 1; u++)
        if (b1 > sqrt(b1_expected((double)L, u - 1) * b1_expected((double)L, u)))
            mu = u;
    /* B1 tells the PM types from white FM poorly with few points; R(m),
     * from every overlapping term at m, decides there. */
    int pm = rn_classify(v, np, m, thr);
    if (pm)
        return pm;
    return mu == -2 ? 0 : -mu - 1;
}

/* The same from the phase buffer ph (np points), which serves both kinds of
 * input: averaged rate over block k is (ph[(k+1)m] - ph[km]) / (m tau0), and
 * the scale does not matter to a correlation. work holds NOISE_ID_MAX; thr
 * the R(m) splits at m, or NULL to compute them when needed.
 * Lag-1 where at least NOISE_ID_MIN averaged points remain, B1 below; on
 * phase data, white versus flicker PM (which the decimated lag-1 estimate
 * tells apart poorly) by R(m). */
static int noise_id_view(const id_view *v, size_t np, int freq, size_t m, int dmax, double *work, const double *thr)
{
    size_t L = freq ? (np - 1) / m : (np - 1) / m + 1;
    if (L < NOISE_ID_MIN)
        return noise_id_b1(v, np, m, (np - 1) / m - 1, thr);
    if (L > NOISE_ID_MAX)
        L = NOISE_ID_MAX;
    const double *dec = v->dec;
    const size_t ds = v->dstride;
    for (size_t k = 0; k < L; k++)
        work[k] = freq ? dec[(k + 1) * ds] - dec[k * ds] : dec[k * ds];
    int alpha = noise_id_series(work, L, !freq, dmax);
    if ((alpha == 1 || alpha == 2) && m >= 2) {
        size_t span = NOISE_ID_MAX * m + 1;
        alpha = rn_classify(v, np < span ? np : span, m, thr);
        alpha = alpha ? alpha : 1;
    }
    return alpha;
}

static int noise_id_phase(const double *ph, size_t np, int freq, size_t m, int dmax, double *work, const double *thr,
                          const double *robs)
{
    id_view v = {ph, m, robs_mem, ph, m, (void *)robs, np};
    return noise_id_view(&v, np, freq, m, dmax, work, thr);
}

/* ---- estimators on phase ---- */

/* The reflected sequence of SP 1065 eq. 25 (uninverted even reflection about
 * each end): x*(-j) = 2 x(0) - x(j), x*(np-1+j) = 2 x(np-1) - x(np-1-j). */
static inline double totdev_x(const double *ph, ptrdiff_t np, ptrdiff_t i)
{
    if (i < 0)
        return 2 * ph[0] - ph[-i];
    if (i >= np)
        return 2 * ph[np - 1] - ph[2 * (np - 1) - i];
    return ph[i];
}

/* Variance (squared deviation) at averaging factor m; *terms the count.
 * OADEV and OHDEV go through ov_sums instead. */
static double variance_at(const double *ph, size_t np, size_t m, double tau0, sensim_allan_dev dev, size_t *terms)
{
    double tau = (double)m * tau0, s = 0;
    size_t cnt = 0;
    switch (dev) {
    case SENSIM_ADEV:
        for (size_t i = 0; i + 2 * m < np; i += m) {
            double d = ph[i + 2 * m] - 2 * ph[i + m] + ph[i];
            s += d * d;
            cnt++;
        }
        *terms = cnt;
        return s / (2 * tau * tau * (double)cnt);
    case SENSIM_HDEV:
        for (size_t i = 0; i + 3 * m < np; i += m) {
            double d = ph[i + 3 * m] - 3 * ph[i + 2 * m] + 3 * ph[i + m] - ph[i];
            s += d * d;
            cnt++;
        }
        *terms = cnt;
        return s / (6 * tau * tau * (double)cnt);
    case SENSIM_MDEV:
    case SENSIM_TDEV: {
        /* Window sum v_j = sum_{i=j}^{j+m-1} (x[i+2m] - 2x[i+m] + x[i]),
         * slid in O(1) per step (SP 1065 eq. 14). */
        double v = 0;
        for (size_t i = 0; i < m; i++)
            v += ph[i + 2 * m] - 2 * ph[i + m] + ph[i];
        s = v * v;
        cnt = 1;
        for (size_t j = 0; j + 3 * m < np; j++) {
            v += ph[j + 3 * m] - 3 * ph[j + 2 * m] + 3 * ph[j + m] - ph[j];
            s += v * v;
            cnt++;
        }
        *terms = cnt;
        double mv = s / (2 * (double)m * m * tau * tau * (double)cnt);
        return dev == SENSIM_TDEV ? tau * tau / 3 * mv : mv;
    }
    default: {
        /* TOTDEV, SP 1065 eq. 25: i over 1..np-2 of the original sequence. */
        ptrdiff_t N = (ptrdiff_t)np, mm = (ptrdiff_t)m;
        for (ptrdiff_t i = 1; i <= N - 2; i++) {
            double d = totdev_x(ph, N, i - mm) - 2 * ph[i] + totdev_x(ph, N, i + mm);
            s += d * d;
        }
        *terms = np - 2;
        return s / (2 * tau * tau * (double)(np - 2));
    }
    }
}

/* ---- overlapping second and third differences, blocked over taus ----
 *
 * OADEV and OHDEV cost one pass over the phase per tau, and with tens of
 * taus on millions of points that pass, not the arithmetic, is the limit
 * once the phase no longer fits in cache. So the sum runs over i in fixed
 * chunks of OV_CHUNK (the unit of OpenMP work), and inside a chunk over
 * blocks of OV_BLOCK points for which every tau of a batch is summed before
 * moving on: ph[i .. i + OV_BLOCK) is then read from memory once for all
 * taus, and the short taus' shifted windows are in cache as well. Each tau's
 * sum is kept in OV_LANES partial sums, lane i mod OV_LANES, which the
 * compiler maps to vector registers; lanes and then chunks are added in a
 * fixed order, so the result depends on neither the thread count nor the
 * instruction set (ISO C mode does not contract to FMA). */
#define OV_CHUNK 32768
#define OV_BLOCK 2048
#define OV_BATCH 64
#define OV_LANES 16
_Static_assert(OV_CHUNK % OV_BLOCK == 0 && OV_BLOCK % OV_LANES == 0, "a lane must be i mod OV_LANES in every block");

/* lane[l] += sum over i in [lo, hi), i = l mod OV_LANES, of d_i^2 with d_i
 * the order-th difference of ph at spacing m (lo a multiple of OV_LANES). */
ALLAN_CLONES
static void ov_sum(const double *ph, size_t lo, size_t hi, size_t m, int order, double *lane)
{
    double l[OV_LANES];
    memcpy(l, lane, sizeof l);
    const double *a = ph, *b = ph + m, *c = ph + 2 * m, *e = ph + 3 * m;
    size_t i = lo;
    if (order == 2) {
        for (; i + OV_LANES <= hi; i += OV_LANES)
#pragma GCC unroll 16
            for (int j = 0; j < OV_LANES; j++) {
                double d = c[i + j] - 2 * b[i + j] + a[i + j];
                l[j] += d * d;
            }
        for (; i < hi; i++) {
            double d = c[i] - 2 * b[i] + a[i];
            l[i % OV_LANES] += d * d;
        }
    } else {
        for (; i + OV_LANES <= hi; i += OV_LANES)
#pragma GCC unroll 16
            for (int j = 0; j < OV_LANES; j++) {
                double d = e[i + j] - 3 * c[i + j] + 3 * b[i + j] - a[i + j];
                l[j] += d * d;
            }
        for (; i < hi; i++) {
            double d = e[i] - 3 * c[i] + 3 * b[i] - a[i];
            l[i % OV_LANES] += d * d;
        }
    }
    memcpy(lane, l, sizeof l);
}

/* OADEV's sums of OV_FUSE taus (or fewer) in one pass over [lo, hi) (both
 * multiples of OV_LANES past a lane boundary): every tau reads ph[i] and
 * its own two shifted points, so K taus cost 2 K + 1 loads a point instead
 * of 3 K, and c - 2 b is one fused multiply-add, which rounds once to what
 * c - 2 * b rounds to (2 b is exact): each lane's sum is ov_sum's, bit for
 * bit. Used only where the CPU has FMA (ov_fuse_ok); the default clone
 * would call libm's fma. */
#define OV_FUSE 3
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define OV_FUSED_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OV_FUSED_CLONES
#endif

static inline __attribute__((always_inline)) void ov_fused_k(const double *ph, size_t lo, size_t hi, const size_t *m,
                                                             int K, double (*lane)[OV_LANES])
{
    double l[OV_FUSE][OV_LANES];
    const double *b[OV_FUSE], *c[OV_FUSE];
    for (int q = 0; q < K; q++) {
        memcpy(l[q], lane[q], sizeof l[q]);
        b[q] = ph + m[q];
        c[q] = ph + 2 * m[q];
    }
    for (size_t i = lo; i < hi; i += OV_LANES)
#pragma GCC unroll 16
        for (int j = 0; j < OV_LANES; j++) {
            const double a = ph[i + j];
#pragma GCC unroll 3
            for (int q = 0; q < K; q++) {
                double d = fma(-2.0, b[q][i + j], c[q][i + j]) + a;
                l[q][j] += d * d;
            }
        }
    for (int q = 0; q < K; q++)
        memcpy(lane[q], l[q], sizeof l[q]);
}

OV_FUSED_CLONES
static void ov_sum_fused(const double *ph, size_t lo, size_t hi, const size_t *m, int K, double (*lane)[OV_LANES])
{
    /* K a constant in each call, so the compiler keeps the lanes in registers. */
    if (K == 3)
        ov_fused_k(ph, lo, hi, m, 3, lane);
    else
        ov_fused_k(ph, lo, hi, m, 2, lane);
}

/* Whether ov_sum_fused runs on fused multiply-add instructions here
 * (SENSIM_ALLAN_FUSE=0: never, for tests that compare both ways). */
static int ov_fuse_ok(void)
{
    const char *e = getenv("SENSIM_ALLAN_FUSE");
    if (e && !strcmp(e, "0"))
        return 0;
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("fma");
#else
    return 1;
#endif
}

/* The number of OV_CHUNK chunks the sums for np phase points need. */
static size_t ov_nchunk(size_t np)
{
    return (np + OV_CHUNK - 1) / OV_CHUNK;
}

/* Sums of squared order-th differences of the na phase series ph + a *
 * pstride (np points each) at spacings m[0..nm) (each <= (np - 1) / order)
 * into sum[a * nm + k]; part holds na * OV_BATCH * ov_nchunk(np) doubles for
 * the per-chunk partial sums. Runs in parallel over (axis, chunk) pairs. */
static void ov_sums(const double *ph, size_t pstride, size_t na, size_t np, const size_t *m, size_t nm, int order,
                    double *sum, double *part)
{
    const int fuse = order == 2 && ov_fuse_ok();
    for (size_t k0 = 0; k0 < nm; k0 += OV_BATCH) {
        size_t kn = nm - k0 < OV_BATCH ? nm - k0 : OV_BATCH, cntmax = 0;
        for (size_t k = 0; k < kn; k++)
            if (np - (size_t)order * m[k0 + k] > cntmax)
                cntmax = np - (size_t)order * m[k0 + k];
        size_t nchunk = (cntmax + OV_CHUNK - 1) / OV_CHUNK;
#pragma omp parallel for schedule(dynamic, 1)
        for (size_t item = 0; item < na * nchunk; item++) {
            size_t a = item / nchunk, c = item % nchunk;
            const double *pa = ph + a * pstride;
            size_t lo = c * OV_CHUNK, hi = lo + OV_CHUNK < cntmax ? lo + OV_CHUNK : cntmax;
            double lane[OV_BATCH][OV_LANES];
            memset(lane, 0, sizeof lane);
            for (size_t b = lo; b < hi; b += OV_BLOCK) {
                size_t be = b + OV_BLOCK < hi ? b + OV_BLOCK : hi, K = 1;
                for (size_t k = 0; k < kn; k += K) {
                    /* Up to OV_FUSE taus with points in this block together,
                     * over the whole lane groups they all have; each then
                     * ends alone from x. */
                    size_t x = b, end = be;
                    for (K = 0; fuse && K < OV_FUSE && k + K < kn; K++) {
                        const size_t cnt = np - 2 * m[k0 + k + K];
                        if (cnt <= b)
                            break;
                        end = cnt < end ? cnt : end;
                    }
                    if (K >= 2 && (x = b + (end - b) / OV_LANES * OV_LANES) > b)
                        ov_sum_fused(pa, b, x, m + k0 + k, (int)K, lane + k);
                    K = K ? K : 1;
                    for (size_t q = k; q < k + K; q++) {
                        size_t cnt = np - (size_t)order * m[k0 + q];
                        if (cnt > x)
                            ov_sum(pa, x, be < cnt ? be : cnt, m[k0 + q], order, lane[q]);
                    }
                }
            }
            for (size_t k = 0; k < kn; k++) {
                double s = 0;
                for (int j = 0; j < OV_LANES; j++)
                    s += lane[k][j];
                part[(a * kn + k) * nchunk + c] = s;
            }
        }
        for (size_t a = 0; a < na; a++)
            for (size_t k = 0; k < kn; k++) {
                double s = 0;
                for (size_t c = 0; c < nchunk; c++)
                    s += part[(a * kn + k) * nchunk + c];
                sum[a * nm + k0 + k] = s;
            }
    }
}

static sensim_status check_opts(const sensim_allan_opts *o)
{
    if (!o || (unsigned)o->dev >= SENSIM_ALLAN_NDEV)
        return sensim_error(SENSIM_EINVAL, "allan: unknown deviation type");
    if (o->data != SENSIM_ALLAN_FREQ && o->data != SENSIM_ALLAN_PHASE)
        return sensim_error(SENSIM_EINVAL, "allan: data must be frequency (rate) or phase");
    if (!(o->tau0 > 0) || !isfinite(o->tau0))
        return sensim_error(SENSIM_EINVAL, "allan: sample interval tau0 = %g s; it must be a positive finite number",
                            o->tau0);
    if (!(o->confidence > 0 && o->confidence < 1))
        return sensim_error(SENSIM_EINVAL, "allan: confidence level %g must lie strictly between 0 and 1",
                            o->confidence);
    if (o->fixed_alpha && (o->alpha > 2 || o->alpha < -4))
        return sensim_error(SENSIM_EINVAL, "allan: noise exponent alpha = %d must be in +2..-4", o->alpha);
    return SENSIM_OK;
}

/* Fills ph + a * (n + 1), a < na, from the axes x[i * stride + a]; on
 * SENSIM_EDATA (NaN, constant data) *bad is the first axis at fault. The
 * axes are read together, two passes over interleaved input in all, since
 * reading one axis of an interleaved array costs as much memory traffic as
 * reading all of them. Each axis's arithmetic (sequential mean, sequential
 * running sum) is the same as for that axis alone. */
#define PH_BLOCK 4096

static sensim_status make_phase(const double *x, size_t n, size_t stride, size_t na, const sensim_allan_opts *o,
                                double *ph, size_t *np, size_t *bad, double *big)
{
    size_t *nonfinite = malloc(na * sizeof *nonfinite);
    double *mean = malloc(na * sizeof *mean);
    int *constant = malloc(na * sizeof *constant);
    if (!nonfinite || !mean || !constant) {
        free(nonfinite);
        free(mean);
        free(constant);
        *bad = 0;
        return sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu axes", na);
    }
    for (size_t a = 0; a < na; a++) {
        nonfinite[a] = SIZE_MAX;
        mean[a] = 0;
        constant[a] = 1;
    }
    /* Blocks of PH_BLOCK samples of all axes stay in cache while each axis
     * runs through them with its sums in registers; the blocks go to the
     * threads, and their sums are added in block order, so the mean is the
     * same at any thread count. */
    size_t nblock = (n + PH_BLOCK - 1) / PH_BLOCK;
    double *bsum = malloc(2 * nblock * na * sizeof *bsum), *bmax = bsum + nblock * na;
    if (!bsum) {
        free(nonfinite);
        free(mean);
        free(constant);
        *bad = 0;
        return sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu axes", na);
    }
#pragma omp parallel for schedule(dynamic, 8)
    for (size_t blk = 0; blk < nblock; blk++) {
        size_t i0 = blk * PH_BLOCK, i1 = n - i0 < PH_BLOCK ? n : i0 + PH_BLOCK;
        for (size_t a = 0; a < na; a++) {
            double sum = 0, mx = 0;
            const double first = x[a];
            int same = 1;
            for (size_t i = i0; i < i1; i++) {
                double v = x[i * stride + a];
                sum += v;
                mx = fabs(v) > mx ? fabs(v) : mx;
                same &= v == first;
            }
            bsum[blk * na + a] = sum;
            bmax[blk * na + a] = mx;
            if (!same) {
#pragma omp atomic write
                constant[a] = 0;
            }
        }
    }
    for (size_t a = 0; a < na; a++)
        big[a] = 0;
    for (size_t blk = 0; blk < nblock; blk++)
        for (size_t a = 0; a < na; a++) {
            mean[a] += bsum[blk * na + a];
            big[a] = fmax(big[a], bmax[blk * na + a]);
        }
    free(bsum);
    /* A non-finite sample makes the sum non-finite (so may an overflow):
     * only then look for the sample. */
    for (size_t a = 0; a < na; a++)
        for (size_t i = 0; !isfinite(mean[a]) && i < n; i++)
            if (!isfinite(x[i * stride + a])) {
                nonfinite[a] = i;
                break;
            }
    sensim_status st = SENSIM_OK;
    int freq = o->data == SENSIM_ALLAN_FREQ;
    for (size_t a = 0; a < na && !st; a++) {
        *bad = a;
        size_t i = nonfinite[a];
        if (i != SIZE_MAX)
            st = sensim_error(SENSIM_EDATA, "sample %zu is %s", i, isnan(x[i * stride + a]) ? "NaN" : "infinite");
        else if (freq && constant[a])
            st = sensim_error(SENSIM_EDATA, "all %zu samples equal %g: constant data has no noise to analyse", n, x[a]);
        mean[a] /= (double)n;
    }
    if (!st && freq) {
        /* The running sum is sequential per axis; the threads split the
         * axes, each reading the input once for its share. */
#pragma omp parallel
        {
            size_t nt = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
            size_t a0 = na * t / nt, a1 = na * (t + 1) / nt;
            for (size_t a = a0; a < a1; a++)
                ph[a * (n + 1)] = 0;
            for (size_t i0 = 0; i0 < n && a0 < a1; i0 += PH_BLOCK) {
                size_t i1 = n - i0 < PH_BLOCK ? n : i0 + PH_BLOCK;
                for (size_t a = a0; a < a1; a++) {
                    double *p = ph + a * (n + 1), run = p[i0];
                    const double mu = mean[a], tau0 = o->tau0;
                    for (size_t i = i0; i < i1; i++) {
                        run += (x[i * stride + a] - mu) * tau0;
                        p[i + 1] = run;
                    }
                }
            }
        }
        *np = n + 1;
    } else if (!st) {
        /* Remove the line through the end points: the estimators do not see
         * it, and smaller numbers lose less to rounding. mean[] holds the
         * slope, constant[] nothing. */
        for (size_t a = 0; a < na; a++)
            mean[a] = (x[(n - 1) * stride + a] - x[a]) / (double)(n - 1);
        for (size_t i = 0; i < n; i++)
            for (size_t a = 0; a < na; a++)
                ph[a * (n + 1) + i] = x[i * stride + a] - x[a] - mean[a] * (double)i;
        for (size_t a = 0; a < na && !st; a++) {
            const double *p = ph + a * (n + 1);
            double big = 0, dev = 0;
            for (size_t i = 0; i < n; i++)
                big = fmax(big, fabs(x[i * stride + a]));
            for (size_t i = 1; i + 1 < n; i++)
                dev = fmax(dev, fabs(p[i + 1] - 2 * p[i] + p[i - 1]));
            *bad = a;
            if (dev <= 1e-13 * big)
                st = sensim_error(SENSIM_EDATA,
                                  "the %zu phase samples lie on a straight line: constant rate has no noise to analyse", n);
        }
        *np = n;
    }
    free(nonfinite);
    free(mean);
    free(constant);
    return st;
}

static void finish_points(const sensim_allan_opts *o, size_t np, sensim_allan_point *out, size_t items);

/* The deviations of na axes from their phases ph + a * pstride (np points
 * each) into out[a * nm + k]. Parallel over (axis, tau) pairs; each value is
 * computed by one thread in a fixed order. */
static sensim_status compute_phases(const double *ph, size_t pstride, size_t na, size_t np, const sensim_allan_opts *o,
                                    const size_t *m, size_t nm, sensim_allan_point *out)
{
    int freq = o->data == SENSIM_ALLAN_FREQ, dmax = diff_order(o->dev) == 3 && o->dev != SENSIM_MDEV && o->dev != SENSIM_TDEV ? 3 : 2;
    int overlapping = o->dev == SENSIM_OADEV || o->dev == SENSIM_OHDEV, order = diff_order(o->dev);
    double *sums = NULL;
    if (overlapping) {
        sums = malloc(na * (nm + OV_BATCH * ov_nchunk(np)) * sizeof *sums);
        if (!sums)
            return sensim_error(SENSIM_ENOMEM, "allan: out of memory for the partial sums of %zu taus", nm);
        ov_sums(ph, pstride, na, np, m, nm, order, sums, sums + na * nm);
    }
    /* The R(m) splits of the taus that B1 decides (too few points for
     * lag-1), once for all axes: integrating the expected ratios costs more
     * than the test itself. Elsewhere R(m) is rarely needed. */
    double *rnthr = o->fixed_alpha ? NULL : malloc(2 * nm * sizeof *rnthr);
    if (rnthr) {
#pragma omp parallel for schedule(dynamic, 1)
        for (size_t k = 0; k < nm; k++) {
            size_t L = freq ? (np - 1) / m[k] : (np - 1) / m[k] + 1;
            if (L < NOISE_ID_MIN && m[k] >= 2)
                rn_thresholds(m[k], rnthr + 2 * k);
            else
                rnthr[2 * k] = rnthr[2 * k + 1] = NAN; /* computed when needed */
        }
    }
    /* Where B1 decides (too few points for lag-1), R(m) over every point is
     * always needed: all axes at once, per tau. */
    double *robs = rnthr ? malloc(na * nm * sizeof *robs) : NULL;
    if (robs) {
#pragma omp parallel for schedule(dynamic, 1)
        for (size_t k = 0; k < nm; k++) {
            size_t L = freq ? (np - 1) / m[k] : (np - 1) / m[k] + 1;
            if (L < NOISE_ID_MIN && m[k] >= 2 && (np - 1) / m[k] >= 5)
                rn_observed_axes(ph, pstride, na, np, m[k], robs + k, nm);
            else
                for (size_t a = 0; a < na; a++)
                    robs[a * nm + k] = NAN;
        }
    }
    int failed = 0;
    size_t items = na * nm;
#pragma omp parallel
    {
        double *work = NULL;
        if (!o->fixed_alpha && !(work = malloc(NOISE_ID_MAX * sizeof *work))) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (size_t it = 0; it < items; it++) {
            size_t a = it / nm, k = it % nm, terms = 0;
            const double *pa = ph + a * pstride;
            double var, tau = (double)m[k] * o->tau0;
            if (overlapping) {
                /* SP 1065 eqs. 8 and 18. */
                terms = np - (size_t)order * m[k];
                var = sums[it] / ((order == 2 ? 2 : 6) * tau * tau * (double)terms);
            } else
                var = variance_at(pa, np, m[k], o->tau0, o->dev, &terms);
            out[it].m = m[k];
            out[it].tau = tau;
            out[it].dev = sqrt(var > 0 ? var : 0);
            out[it].n = terms;
            const double *thr = rnthr && !isnan(rnthr[2 * k]) ? rnthr + 2 * k : NULL;
            const double *ro = robs && !isnan(robs[it]) ? robs + it : NULL;
            out[it].alpha = o->fixed_alpha ? o->alpha : work ? noise_id_phase(pa, np, freq, m[k], dmax, work, thr, ro) : 0;
        }
        free(work);
    }
    free(sums);
    free(rnthr);
    free(robs);
    if (failed)
        return sensim_error(SENSIM_ENOMEM, "allan: out of memory for the noise-identification workspace");
    finish_points(o, np, out, items);
    return SENSIM_OK;
}

/* EDF and interval of each point from its deviation and noise type. */
static void finish_points(const sensim_allan_opts *o, size_t np, sensim_allan_point *out, size_t items)
{
    int dmax = diff_order(o->dev) == 3 && o->dev != SENSIM_MDEV && o->dev != SENSIM_TDEV ? 3 : 2;
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t it = 0; it < items; it++) {
        sensim_allan_point *q = &out[it];
        int lo = 2, hi = diff_order(o->dev) == 2 || o->dev == SENSIM_MDEV || o->dev == SENSIM_TDEV ? -2
                         : dmax >= 3                                                               ? -4
                                                                                                   : -2;
        if (q->alpha != ALPHA_UNKNOWN) {
            int a = q->alpha < hi ? hi : q->alpha; /* the Allan family needs alpha > -3 */
            q->edf = sensim_allan_edf(o->dev, a, q->m, np);
        } else {
            /* Not identified (too few points even for B1): the smallest
             * EDF of any type, so the interval is the widest it could be,
             * and the type is reported as unknown rather than carried
             * over from another tau. */
            q->edf = HUGE_VAL;
            for (int a = lo; a >= hi; a--)
                q->edf = fmin(q->edf, sensim_allan_edf(o->dev, a, q->m, np));
            q->alpha = SENSIM_ALLAN_ALPHA_UNKNOWN;
        }
        sensim_allan_ci(q->dev, q->edf, o->confidence, &q->lo, &q->hi);
    }
}

static sensim_status check_grid(const sensim_allan_opts *o, size_t n, const size_t *m, size_t nm)
{
    size_t mmax = sensim_allan_max_m(o->dev, o->data, n);
    if (nm == 0)
        return sensim_error(SENSIM_EINVAL, "allan: no averaging factors given");
    for (size_t k = 0; k < nm; k++)
        if (m[k] < 1 || m[k] > mmax) {
            if (mmax == 0)
                return sensim_error(SENSIM_EDATA, "%s needs more than %zu samples", dev_names[o->dev], n);
            return sensim_error(SENSIM_EDATA,
                                "%s at tau = %g s (m = %zu) needs more samples: %zu samples allow m up to %zu (tau %g s)",
                                dev_names[o->dev], (double)m[k] * o->tau0, m[k], n, mmax, (double)mmax * o->tau0);
        }
    return SENSIM_OK;
}

/* Data near the ends of the double range (1e160, 1e-300) would overflow or
 * underflow in the squares: such an axis's phase is scaled by a power of two
 * (exact) and its results scaled back. The noise type and EDF do not depend
 * on the scale. scale[a] is the factor applied to axis a's phase. */
static double phase_scale(double big, double tau0)
{
    int e = big > 0 ? ilogb(big * fmax(tau0, 1.0)) : 0;
    return e > 200 || e < -200 ? ldexp(1.0, -e) : 1;
}

/* Scales the phases as phase_scale says, computes the points and scales the
 * results back; scale[g] is workspace. */
static sensim_status phases_to_points(double *ph, size_t pstride, size_t g, size_t np, const sensim_allan_opts *o,
                                      const double *big, double *scale, const size_t *m, size_t nm,
                                      sensim_allan_point *out)
{
    for (size_t a = 0; a < g; a++) {
        scale[a] = 1;
        double s = phase_scale(big[a], o->tau0);
        if (s != 1) {
            for (size_t i = 0; i < np; i++)
                ph[a * pstride + i] *= s;
            scale[a] = 1 / s;
        }
    }
    sensim_status st = compute_phases(ph, pstride, g, np, o, m, nm, out);
    for (size_t a = 0; a < g && !st; a++)
        for (size_t k = 0; k < nm && scale[a] != 1; k++) {
            sensim_allan_point *q = &out[a * nm + k];
            q->dev *= scale[a];
            q->lo *= scale[a];
            q->hi *= scale[a];
        }
    return st;
}

/* The most phase memory compute_axes holds at once (the input aside). */
#define PHASE_MAX_BYTES ((size_t)1 << 30)

/* Allocates the phase buffer. Large buffers are 2 MiB aligned and marked
 * for transparent huge pages: first-touch page faults of a fresh buffer of
 * hundreds of MB otherwise cost more than the estimators (measured: 1.8 s
 * for 225 MB in 4 KiB pages on a paravirtualized machine, 0.05 s in huge
 * pages). Freed with free(). */
static double *phase_alloc(size_t count)
{
    const size_t huge = (size_t)2 << 20;
    size_t bytes = count * sizeof(double);
#ifdef MADV_HUGEPAGE
    if (bytes >= 4 * huge) {
        size_t round = (bytes + huge - 1) / huge * huge;
        double *p = aligned_alloc(huge, round);
        if (p) {
            (void)madvise(p, round, MADV_HUGEPAGE); /* advice only: 4 KiB pages work too */
            return p;
        }
    }
#endif
    return malloc(bytes);
}

/* Both entry points: na axes x[i * stride + a] into out[a * nm + k]; the
 * error names the axis when name_axis. */
static sensim_status compute_axes(const double *x, size_t n, size_t stride, size_t na, int name_axis,
                                  const sensim_allan_opts *o, const size_t *m, size_t nm, sensim_allan_point *out)
{
    sensim_status st = check_opts(o);
    if (st || (st = check_grid(o, n, m, nm)))
        return st;
    if (na < 1 || stride < na)
        return sensim_error(SENSIM_EINVAL, "allan: %s", na < 1 ? "number of axes must be >= 1" : "stride must be >= 1");
    if ((n + 1) > SIZE_MAX / sizeof(double))
        return sensim_error(SENSIM_ENOMEM, "allan: %zu phase points do not fit in memory", n + 1);
    /* All axes at once up to PHASE_MAX_BYTES of phase, then groups of axes:
     * each axis's numbers are the same either way. */
    size_t group = PHASE_MAX_BYTES / ((n + 1) * sizeof(double));
    group = group < 1 ? 1 : group > na ? na : group;
    double *ph = phase_alloc(group * (n + 1)), *big = malloc(2 * group * sizeof *big), *scale = big + group;
    if (!ph || !big) {
        free(ph);
        free(big);
        return sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu x %zu phase points", group, n + 1);
    }
    for (size_t a0 = 0; a0 < na && !st; a0 += group) {
        size_t g = na - a0 < group ? na - a0 : group, np = 0, bad = 0;
        st = make_phase(x + a0, n, stride, g, o, ph, &np, &bad, big);
        if (!st)
            st = phases_to_points(ph, n + 1, g, np, o, big, scale, m, nm, out + a0 * nm);
        if (st && name_axis)
            sensim_error_prefix(st, "axis %zu", a0 + bad);
    }
    free(ph);
    free(big);
    return st;
}

sensim_status sensim_allan_compute(const double *x, size_t n, size_t stride, const sensim_allan_opts *o,
                                   const size_t *m, size_t nm, sensim_allan_point *out)
{
    return compute_axes(x, n, stride, 1, 0, o, m, nm, out);
}

sensim_status sensim_allan_compute_axes(const double *x, size_t n, size_t naxes, const sensim_allan_opts *o,
                                        const size_t *m, size_t nm, sensim_allan_point *out)
{
    return compute_axes(x, n, naxes, naxes, 1, o, m, nm, out);
}

/* ---- streaming from a sensim_allan_source ----
 *
 * The same arithmetic as make_phase, compute_phases and variance_at, in the
 * same order for each axis, so the results are the same bits. */

/* Rows per read and per phase window, and the spacing of the phase
 * checkpoints (a multiple of PH_BLOCK, so the block sums of the mean are
 * those of make_phase). */
#define ST_ROWS 65536
_Static_assert(ST_ROWS % PH_BLOCK == 0, "reads must hold whole mean blocks");
/* The most decimated phase the noise identification holds at once. */
#define ST_DEC_BYTES ((size_t)16 << 20)

typedef struct stream_st {
    const sensim_allan_source *src;
    const sensim_allan_opts *o;
    size_t n, na, np;
    int freq;
    double *mu;   /* [na] mean (rate data) or slope (phase data) */
    double *x0;   /* [na] the first sample */
    double *big;  /* [na] the largest magnitude */
    double *scl;  /* [na] the phase scale (phase_scale) */
    double *ck;   /* [nck][na] unscaled phase at multiples of ST_ROWS (rate data) */
    double *raw;  /* ST_ROWS * na samples */
    sensim_status st;
    size_t max_bytes;
    int spool;    /* the scaled phase, np rows of na, in an unlinked temporary file; -1: none */
    int spool_w;  /* the same while st_prepare writes it */
} stream_st;

/* The phase spool: written once by st_prepare, then read by every cursor in
 * place of the source (no re-reading, no running sums). Its rows hold the
 * very values st_produce would compute. */
static int spool_open(size_t bytes)
{
    const char *dir = getenv("TMPDIR");
    char tpl[4096];
    snprintf(tpl, sizeof tpl, "%s/sensim-phase-XXXXXX", dir && *dir ? dir : "/tmp");
    /* Room for it and a margin; else the source is re-read instead. */
    if (sensim_guard_free_bytes(tpl) < (double)bytes * 1.1 + (double)(64 << 20))
        return -1;
    int fd = mkstemp(tpl);
    if (fd >= 0)
        unlink(tpl);
    return fd;
}

static void spool_drop(stream_st *s)
{
    if (s->spool_w >= 0)
        close(s->spool_w);
    s->spool_w = -1;
}

/* Appends rows (cnt of na values) at row j0; on failure (disk full) the
 * spool is dropped and the source serves the cursors. */
static void spool_write(stream_st *s, size_t j0, const double *rows, size_t cnt)
{
    if (s->spool_w < 0)
        return;
    const size_t want = cnt * s->na * sizeof *rows;
    const off_t off = (off_t)(j0 * s->na * sizeof *rows);
    size_t done = 0;
    while (done < want) {
        ssize_t w = pwrite(s->spool_w, (const char *)rows + done, want - done, off + (off_t)done);
        if (w <= 0) {
            spool_drop(s);
            return;
        }
        done += (size_t)w;
    }
}

static sensim_status spool_read(stream_st *s, size_t j0, size_t cnt, double *out)
{
    const size_t want = cnt * s->na * sizeof *out;
    const off_t off = (off_t)(j0 * s->na * sizeof *out);
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(s->spool, (char *)out + got, want - got, off + (off_t)got);
        if (r <= 0) {
            if (!s->st)
                s->st = sensim_error(SENSIM_EIO, "allan: reading the temporary copy of the phase failed");
            return s->st;
        }
        got += (size_t)r;
    }
    return SENSIM_OK;
}

static sensim_status st_read(stream_st *s, size_t start, size_t count, size_t a0, size_t a1, double *buf)
{
    sensim_status st = s->src->read(s->src->ctx, start, count, a0, a1, buf);
    if (st && !s->st)
        s->st = st;
    return st;
}

/* Phase rows [j0, j0 + cnt) of every axis into out[(j - j0) * na + a], j0 a
 * multiple of ST_ROWS, cnt <= ST_ROWS. */
static sensim_status st_produce(stream_st *s, size_t j0, size_t cnt, double *out)
{
    const size_t na = s->na;
    const double tau0 = s->o->tau0;
    if (s->spool >= 0)
        return spool_read(s, j0, cnt, out);
    if (s->freq) {
        /* ph[j] for j >= 1 is the running sum after sample j - 1. */
        const double *c = s->ck + (j0 / ST_ROWS) * na;
        for (size_t a = 0; a < na; a++)
            out[a] = c[a] * s->scl[a];
        size_t r1 = j0 + cnt - 1 < s->n ? j0 + cnt - 1 : s->n;
        if (r1 > j0) {
            sensim_status st = st_read(s, j0, r1 - j0, 0, na, s->raw);
            if (st)
                return st;
            for (size_t a = 0; a < na; a++) {
                double run = c[a];
                const double mu = s->mu[a], sc = s->scl[a];
                for (size_t i = j0; i < r1; i++) {
                    run += (s->raw[(i - j0) * na + a] - mu) * tau0;
                    out[(i + 1 - j0) * na + a] = run * sc;
                }
            }
        }
    } else {
        sensim_status st = st_read(s, j0, cnt, 0, na, s->raw);
        if (st)
            return st;
        for (size_t a = 0; a < na; a++)
            for (size_t i = j0; i < j0 + cnt; i++)
                out[(i - j0) * na + a] = (s->raw[(i - j0) * na + a] - s->x0[a] - s->mu[a] * (double)i) * s->scl[a];
    }
    return SENSIM_OK;
}

/* A window of ST_ROWS phase rows that follows a position. */
typedef struct cursor {
    stream_st *s;
    double *buf;
    size_t base, cnt;
} cursor;

static const double *cur_load(cursor *c, size_t j)
{
    if (c->s->st)
        return NULL;
    c->base = j / ST_ROWS * ST_ROWS;
    c->cnt = c->s->np - c->base < ST_ROWS ? c->s->np - c->base : ST_ROWS;
    if (st_produce(c->s, c->base, c->cnt, c->buf)) {
        c->cnt = 0;
        return NULL;
    }
    return c->buf + (j - c->base) * c->s->na;
}

/* The row of phase j (na values); NULL after a read error. */
static inline const double *cur_row(cursor *c, size_t j)
{
    if (j - c->base < c->cnt)
        return c->buf + (j - c->base) * c->s->na;
    return cur_load(c, j);
}

static void cur_reset(cursor *c)
{
    c->base = 0;
    c->cnt = 0;
}

/* A cursor that only moves forward: it carries the running sums, so it
 * needs a checkpoint only where it starts. */
typedef struct seqcur {
    size_t next; /* the next phase row it produces */
    double *run; /* [na] unscaled phase at next (rate data) */
    double *buf; /* rows [next - filled, next) after seq_fill */
} seqcur;

/* Advances the running sums of c over sample rows [c->next, c->next + cnt),
 * writing the scaled phase rows to out (NULL: none). */
static sensim_status seq_run(stream_st *s, seqcur *c, size_t cnt, double *out)
{
    const size_t na = s->na, j0 = c->next;
    if (s->spool >= 0) {
        if (out && spool_read(s, j0, cnt, out))
            return s->st;
    } else if (s->freq) {
        size_t r1 = j0 + cnt < s->n ? j0 + cnt : s->n;
        if (r1 > j0 && st_read(s, j0, r1 - j0, 0, na, s->raw))
            return s->st;
        const double tau0 = s->o->tau0;
        for (size_t a = 0; a < na; a++) {
            double run = c->run[a];
            const double mu = s->mu[a], sc = s->scl[a];
            for (size_t r = 0; r < cnt; r++) {
                if (out)
                    out[r * na + a] = run * sc;
                if (j0 + r < r1)
                    run += (s->raw[r * na + a] - mu) * tau0;
            }
            c->run[a] = run;
        }
    } else if (out) {
        if (st_read(s, j0, cnt, 0, na, s->raw))
            return s->st;
        for (size_t a = 0; a < na; a++)
            for (size_t r = 0; r < cnt; r++)
                out[r * na + a] = (s->raw[r * na + a] - s->x0[a] - s->mu[a] * (double)(j0 + r)) * s->scl[a];
    }
    c->next = j0 + cnt;
    return SENSIM_OK;
}

static sensim_status seq_seek(stream_st *s, seqcur *c, size_t j)
{
    size_t ck = j / ST_ROWS;
    if (s->spool >= 0) {
        c->next = j;
        return SENSIM_OK;
    }
    c->next = ck * ST_ROWS;
    if (s->freq)
        memcpy(c->run, s->ck + ck * s->na, s->na * sizeof *c->run);
    return j > c->next ? seq_run(s, c, j - c->next, NULL) : SENSIM_OK;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The overlapping sums of every tau at once (st_ov's arithmetic): one
 * forward cursor per distinct lag j m (j <= order), all moving together, so
 * the phase is rebuilt once per lag rather than order + 1 times per tau.
 * sum[k * na + a]. */
static sensim_status st_ov_all(stream_st *s, const size_t *m, size_t nm, int order, double *sum)
{
    const size_t na = s->na, np = s->np, per = (size_t)order + 1;
    size_t *off = malloc(nm * per * sizeof *off), *idx = malloc(nm * per * sizeof *idx), nd = 0;
    seqcur *cur = NULL;
    double *mem = NULL, *ring = NULL, *lane = calloc(nm * na * OV_LANES, sizeof *lane);
    sensim_status st = SENSIM_OK;
    if (!off || !idx || !lane) {
        st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu taus", nm);
        goto done;
    }
    for (size_t k = 0; k < nm; k++)
        for (size_t j = 0; j < per; j++)
            off[nd++] = j * m[k];
    qsort(off, nd, sizeof *off, cmp_size);
    size_t u = 0;
    for (size_t i = 0; i < nd; i++)
        if (!u || off[i] != off[u - 1])
            off[u++] = off[i];
    nd = u;
    for (size_t k = 0; k < nm; k++)
        for (size_t j = 0; j < per; j++) {
            size_t *f = bsearch(&(size_t){j * m[k]}, off, nd, sizeof *off, cmp_size);
            idx[k * per + j] = (size_t)(f - off);
        }
    /* Window rows: a power of two dividing OV_CHUNK, within half the budget. */
    size_t W = OV_CHUNK, room = s->max_bytes / 2 > ((size_t)8 << 20) ? s->max_bytes / 2 : ((size_t)8 << 20);
    while (W > 1024 && nd * W * na * sizeof(double) > room)
        W /= 2;
    /* Lags up to R - W are read from a ring of the R rows from i0 on, filled
     * by one sequential cursor (R a power of two; W mirror rows past its end,
     * so no window wraps); each larger lag has a cursor of its own. The
     * largest R whose ring and cursors fit in `room`; none below 2 W. */
    size_t R = 0, nbig = nd, rbytes = 0;
    {
        size_t r = 2 * W;
        while (r < off[nd - 1] + W)
            r *= 2;
        for (; r >= 2 * W; r /= 2) {
            size_t big = 0;
            for (size_t d = 0; d < nd; d++)
                big += off[d] > r - W;
            if ((r + W + big * W) * na * sizeof(double) <= room) {
                R = r;
                nbig = big;
                break;
            }
        }
    }
    const size_t nring = nd - nbig;
    rbytes = R ? (R + W) * na * sizeof *ring : 0;
    cur = malloc(nd * sizeof *cur);
    mem = malloc((nbig * W + nd + 1) * na * sizeof *mem);
    ring = R ? phase_alloc(rbytes / sizeof *ring) : NULL;
    if (!cur || !mem || (R && !ring)) {
        st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu cursors", nd);
        goto done;
    }
    seqcur lead = {0, mem + nbig * W * na + nd * na, NULL};
    if (R)
        st = seq_seek(s, &lead, 0);
    for (size_t d = 0; d < nd && !st; d++) {
        cur[d].run = mem + nbig * W * na + d * na;
        cur[d].buf = NULL;
        if (d >= nring) {
            cur[d].buf = mem + (d - nring) * W * na;
            st = seq_seek(s, &cur[d], off[d]);
        }
    }
    for (size_t i = 0; i < nm * na; i++)
        sum[i] = 0;
    size_t cntmax = 0;
    for (size_t k = 0; k < nm; k++)
        cntmax = np - (size_t)order * m[k] > cntmax ? np - (size_t)order * m[k] : cntmax;
    for (size_t i0 = 0; i0 < cntmax && !st; i0 += W) {
        if (R) {
            const size_t target = np < i0 + R ? np : i0 + R;
            while (lead.next < target && !st) {
                /* (at most W rows a call: seq_run reads through s->raw) */
                const size_t q = lead.next & (R - 1), room_q = R - q < W ? R - q : W,
                             cnt = target - lead.next < room_q ? target - lead.next : room_q;
                st = seq_run(s, &lead, cnt, ring + q * na);
                if (!st && q < W)
                    memcpy(ring + (R + q) * na, ring + q * na, (q + cnt < W ? cnt : W - q) * na * sizeof *ring);
            }
            for (size_t d = 0; d < nring; d++)
                cur[d].buf = ring + ((i0 + off[d]) & (R - 1)) * na;
        }
        for (size_t d = nring; d < nd && !st; d++)
            if (i0 + off[d] < np) {
                size_t rows = np - (i0 + off[d]) < W ? np - (i0 + off[d]) : W;
                st = seq_run(s, &cur[d], rows, cur[d].buf);
            }
        for (size_t k = 0; k < nm && !st; k++) {
            const size_t cnt = np - (size_t)order * m[k];
            if (i0 >= cnt)
                continue;
            const size_t i1 = i0 + W < cnt ? i0 + W : cnt, *ix = idx + k * per;
            const double *b0 = cur[ix[0]].buf, *b1 = cur[ix[1]].buf, *b2 = cur[ix[2]].buf,
                         *b3 = order == 3 ? cur[ix[3]].buf : b2;
            double *lk = lane + k * na * OV_LANES, *sk = sum + k * na;
            for (size_t i = i0; i < i1; i++) {
                const size_t r = (i - i0) * na;
                double *l = lk + i % OV_LANES;
                if (order == 2)
                    for (size_t a = 0; a < na; a++) {
                        double dd = b2[r + a] - 2 * b1[r + a] + b0[r + a];
                        l[a * OV_LANES] += dd * dd;
                    }
                else
                    for (size_t a = 0; a < na; a++) {
                        double dd = b3[r + a] - 3 * b2[r + a] + 3 * b1[r + a] - b0[r + a];
                        l[a * OV_LANES] += dd * dd;
                    }
                if ((i + 1) % OV_CHUNK == 0 || i + 1 == cnt)
                    for (size_t a = 0; a < na; a++) {
                        double t = 0;
                        for (int j = 0; j < OV_LANES; j++)
                            t += lk[a * OV_LANES + j];
                        sk[a] += t;
                        memset(lk + a * OV_LANES, 0, OV_LANES * sizeof *lk);
                    }
            }
        }
    }
done:
    free(off);
    free(idx);
    free(cur);
    free(mem);
    free(ring);
    free(lane);
    return st;
}

/* MDEV/TDEV window sums (variance_at): sum[a] of v^2, *terms. */
static sensim_status st_mdev(stream_st *s, cursor *cu, size_t m, double *sum, double *v, size_t *terms)
{
    const size_t na = s->na, np = s->np;
    for (int k = 0; k < 4; k++)
        cur_reset(&cu[k]);
    for (size_t a = 0; a < na; a++)
        v[a] = 0;
    for (size_t i = 0; i < m; i++) {
        const double *p0 = cur_row(&cu[0], i), *p1 = cur_row(&cu[1], i + m), *p2 = cur_row(&cu[2], i + 2 * m);
        if (!p0 || !p1 || !p2)
            return s->st;
        for (size_t a = 0; a < na; a++)
            v[a] += p2[a] - 2 * p1[a] + p0[a];
    }
    for (size_t a = 0; a < na; a++)
        sum[a] = v[a] * v[a];
    size_t cnt = 1;
    /* cu[0..2] now stand at m, 2m, 3m: they serve j + m, j + 2m, j + 3m. */
    for (size_t j = 0; j + 3 * m < np; j++) {
        const double *p0 = cur_row(&cu[3], j), *p1 = cur_row(&cu[0], j + m), *p2 = cur_row(&cu[1], j + 2 * m),
                     *p3 = cur_row(&cu[2], j + 3 * m);
        if (!p0 || !p1 || !p2 || !p3)
            return s->st;
        for (size_t a = 0; a < na; a++) {
            v[a] += p3[a] - 3 * p2[a] + 3 * p1[a] - p0[a];
            sum[a] += v[a] * v[a];
        }
        cnt++;
    }
    *terms = cnt;
    return SENSIM_OK;
}

/* TOTDEV (variance_at): the reflections are read by cursors running
 * backwards. sum[a]; e0/e1 hold ph[0] and ph[np-1] of every axis. */
static sensim_status st_totdev(stream_st *s, cursor *cu, size_t m, double *sum, double *e0, double *e1)
{
    const size_t na = s->na, N = s->np;
    for (int k = 0; k < 4; k++)
        cur_reset(&cu[k]);
    const double *p = cur_row(&cu[0], 0);
    if (!p)
        return s->st;
    memcpy(e0, p, na * sizeof *e0);
    if (!(p = cur_row(&cu[0], N - 1)))
        return s->st;
    memcpy(e1, p, na * sizeof *e1);
    for (size_t a = 0; a < na; a++)
        sum[a] = 0;
    for (size_t i = 1; i + 2 <= N; i++) {
        /* lo: x*(i - m), hi: x*(i + m), each either a row or a reflection. */
        int lr = i < m, hr = i + m >= N;
        const double *pl = cur_row(&cu[1], lr ? m - i : i - m), *pc = cur_row(&cu[0], i),
                     *ph = cur_row(&cu[2], hr ? 2 * (N - 1) - (i + m) : i + m);
        if (!pl || !pc || !ph)
            return s->st;
        for (size_t a = 0; a < na; a++) {
            double xl = lr ? 2 * e0[a] - pl[a] : pl[a], xh = hr ? 2 * e1[a] - ph[a] : ph[a];
            double d = xl - 2 * pc[a] + xh;
            sum[a] += d * d;
        }
    }
    return SENSIM_OK;
}

/* Observed R(m) of one axis over ph[0..np) (rn_observed), streamed. */
typedef struct st_robs_ctx {
    stream_st *s;
    cursor *cu;
    const double *cache; /* [na] R(m) over all points, or NULL */
} st_robs_ctx;

/* R(m) over all np points for every axis at once into r[a]; w holds 3 na. */
static sensim_status st_robs_all(stream_st *s, cursor *cu, size_t m, double *r, double *w)
{
    const size_t na = s->na, np = s->np;
    double *sd = w, *sv = w + na, *v = w + 2 * na;
    for (size_t a = 0; a < na; a++)
        sd[a] = sv[a] = v[a] = r[a] = 0;
    if (np < 3 * m + 1)
        return SENSIM_OK;
    for (int k = 0; k < 4; k++)
        cur_reset(&cu[k]);
    size_t nd = 0, nv = 0;
    for (size_t i = 0; i + 2 * m < np; i++) {
        const double *p0 = cur_row(&cu[0], i), *p1 = cur_row(&cu[1], i + m), *p2 = cur_row(&cu[2], i + 2 * m);
        const double *pm = i >= m ? cur_row(&cu[3], i - m) : p0;
        if (!p0 || !p1 || !p2 || !pm)
            return s->st;
        for (size_t a = 0; a < na; a++) {
            double d = p2[a] - 2 * p1[a] + p0[a];
            sd[a] += d * d;
            v[a] += i >= m ? d - (p1[a] - 2 * p0[a] + pm[a]) : d;
            if (i + 1 >= m)
                sv[a] += v[a] * v[a];
        }
        nd++;
        nv += i + 1 >= m;
    }
    for (size_t a = 0; a < na; a++)
        r[a] = sd[a] > 0 && nv ? (sv[a] / (double)nv) / ((double)m * (double)m * sd[a] / (double)nd) : 0;
    return SENSIM_OK;
}

static double robs_stream(const id_view *v, size_t np)
{
    st_robs_ctx *c = v->stream;
    stream_st *s = c->s;
    cursor *cu = c->cu;
    const size_t m = v->m, a = v->axis;
    if (c->cache && np == s->np)
        return c->cache[a];
    if (np < 3 * m + 1)
        return 0;
    for (int k = 0; k < 4; k++)
        cur_reset(&cu[k]);
    double sd = 0, sv = 0, w = 0;
    size_t nd = 0, nv = 0;
    for (size_t i = 0; i + 2 * m < np; i++) {
        const double *p0 = cur_row(&cu[0], i), *p1 = cur_row(&cu[1], i + m), *p2 = cur_row(&cu[2], i + 2 * m);
        if (!p0 || !p1 || !p2)
            return 0;
        double d = p2[a] - 2 * p1[a] + p0[a];
        sd += d * d;
        nd++;
        if (i >= m) {
            const double *pm = cur_row(&cu[3], i - m);
            if (!pm)
                return 0;
            w += d - (p1[a] - 2 * p0[a] + pm[a]);
        } else
            w += d;
        if (i + 1 >= m) {
            sv += w * w;
            nv++;
        }
    }
    (void)s;
    return sd > 0 && nv ? (sv / (double)nv) / ((double)m * (double)m * sd / (double)nd) : 0;
}

/* Pass 1: mean (or slope), largest magnitude, the checks of make_phase;
 * pass 2: the phase checkpoints (rate data) or the straight-line check
 * (phase data). *bad is the axis at fault on SENSIM_EDATA. */
static sensim_status st_prepare(stream_st *s, size_t *bad)
{
    const size_t n = s->n, na = s->na;
    size_t *nonfinite = malloc(na * sizeof *nonfinite);
    double *xl = malloc(2 * na * sizeof *xl), *bsum = xl + na;
    int *same = malloc(na * sizeof *same);
    double *sp = NULL, *sclf = NULL; /* a block of spooled rows, the final scales */
    sensim_status st = SENSIM_OK;
    *bad = 0;
    if (!nonfinite || !xl || !same) {
        st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu axes", na);
        goto done;
    }
    for (size_t a = 0; a < na; a++) {
        nonfinite[a] = SIZE_MAX;
        s->mu[a] = 0;
        s->big[a] = 0;
        same[a] = 1;
    }
    for (size_t r0 = 0; r0 < n && !st; r0 += ST_ROWS) {
        size_t cnt = n - r0 < ST_ROWS ? n - r0 : ST_ROWS;
        if ((st = st_read(s, r0, cnt, 0, na, s->raw)))
            break;
        if (r0 == 0)
            for (size_t a = 0; a < na; a++)
                s->x0[a] = s->raw[a];
        if (r0 + cnt == n)
            for (size_t a = 0; a < na; a++)
                xl[a] = s->raw[(cnt - 1) * na + a];
        for (size_t b0 = 0; b0 < cnt; b0 += PH_BLOCK) {
            size_t b1 = cnt - b0 < PH_BLOCK ? cnt : b0 + PH_BLOCK;
            for (size_t a = 0; a < na; a++) {
                double sum = 0, mx = 0;
                const double first = s->x0[a];
                int sm = 1;
                for (size_t i = b0; i < b1; i++) {
                    double v = s->raw[i * na + a];
                    sum += v;
                    mx = fabs(v) > mx ? fabs(v) : mx;
                    sm &= v == first;
                    if (!isfinite(v) && nonfinite[a] == SIZE_MAX)
                        nonfinite[a] = r0 + i;
                }
                s->mu[a] += sum;
                s->big[a] = fmax(s->big[a], mx);
                same[a] &= sm;
            }
        }
    }
    if (st)
        goto done;
    for (size_t a = 0; a < na && !st; a++) {
        *bad = a;
        size_t i = nonfinite[a];
        if (i != SIZE_MAX) {
            double v = 0;
            if ((st = st_read(s, i, 1, a, a + 1, &v)))
                break;
            st = sensim_error(SENSIM_EDATA, "sample %zu is %s", i, isnan(v) ? "NaN" : "infinite");
        } else if (s->freq && same[a])
            st = sensim_error(SENSIM_EDATA, "all %zu samples equal %g: constant data has no noise to analyse", n,
                              s->x0[a]);
        s->mu[a] /= (double)n;
    }
    if (st)
        goto done;
    /* The spool gets the scaled phase (the scale is known now), the
     * checkpoints and the line check the unscaled one. */
    if (s->spool_w >= 0 && (!(sp = malloc((ST_ROWS + 1) * na * sizeof *sp)) || !(sclf = malloc(na * sizeof *sclf))))
        spool_drop(s);
    for (size_t a = 0; a < na; a++) {
        if (sclf)
            sclf[a] = phase_scale(s->big[a], s->o->tau0);
        s->scl[a] = 1;
    }
    if (s->freq) {
        for (size_t a = 0; a < na; a++)
            s->ck[a] = 0;
        for (size_t a = 0; a < na; a++)
            bsum[a] = 0; /* the running sums */
        if (s->spool_w >= 0) {
            for (size_t a = 0; a < na; a++)
                sp[a] = 0 * sclf[a];
            spool_write(s, 0, sp, 1);
        }
        for (size_t r0 = 0; r0 < n && !st; r0 += ST_ROWS) {
            size_t cnt = n - r0 < ST_ROWS ? n - r0 : ST_ROWS;
            if ((st = st_read(s, r0, cnt, 0, na, s->raw)))
                break;
            const int spool = s->spool_w >= 0;
            for (size_t a = 0; a < na; a++) {
                double run = bsum[a];
                const double mu = s->mu[a], tau0 = s->o->tau0;
                if (spool) {
                    const double sc = sclf[a];
                    for (size_t i = 0; i < cnt; i++) {
                        run += (s->raw[i * na + a] - mu) * tau0;
                        sp[i * na + a] = run * sc;
                    }
                } else
                    for (size_t i = 0; i < cnt; i++)
                        run += (s->raw[i * na + a] - mu) * tau0;
                bsum[a] = run;
                /* ph[r0 + cnt] ends this read; cnt == ST_ROWS but at the end. */
                if (cnt == ST_ROWS)
                    s->ck[((r0 + cnt) / ST_ROWS) * na + a] = run;
            }
            if (spool)
                spool_write(s, r0 + 1, sp, cnt);
        }
    } else {
        for (size_t a = 0; a < na; a++)
            s->mu[a] = (xl[a] - s->x0[a]) / (double)(n - 1);
        /* The straight-line check of make_phase on the second differences. */
        double *dev = bsum, *prev = malloc(2 * na * sizeof *prev);
        if (!prev) {
            st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu axes", na);
            goto done;
        }
        for (size_t a = 0; a < na; a++)
            dev[a] = 0;
        double *buf = malloc(ST_ROWS * na * sizeof *buf);
        if (!buf)
            st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu axes", na);
        for (size_t r0 = 0; r0 < n && !st; r0 += ST_ROWS) {
            size_t cnt = n - r0 < ST_ROWS ? n - r0 : ST_ROWS;
            if ((st = st_produce(s, r0, cnt, buf)))
                break;
            if (s->spool_w >= 0) {
                for (size_t i = 0; i < cnt; i++)
                    for (size_t a = 0; a < na; a++)
                        sp[i * na + a] = buf[i * na + a] * sclf[a];
                spool_write(s, r0, sp, cnt);
            }
            for (size_t a = 0; a < na; a++)
                for (size_t i = r0; i < r0 + cnt; i++) {
                    double p = buf[(i - r0) * na + a];
                    if (i >= 2)
                        dev[a] = fmax(dev[a], fabs(p - 2 * prev[2 * a + 1] + prev[2 * a]));
                    prev[2 * a] = prev[2 * a + 1];
                    prev[2 * a + 1] = p;
                }
        }
        free(buf);
        free(prev);
        for (size_t a = 0; a < na && !st; a++) {
            *bad = a;
            if (dev[a] <= 1e-13 * s->big[a])
                st = sensim_error(SENSIM_EDATA,
                                  "the %zu phase samples lie on a straight line: constant rate has no noise to analyse",
                                  n);
        }
    }
    for (size_t a = 0; a < na; a++)
        s->scl[a] = phase_scale(s->big[a], s->o->tau0);
done:
    free(sp);
    free(sclf);
    free(nonfinite);
    free(xl);
    free(same);
    return st;
}

/* Decimated phase for the noise identification of taus [k0, k1): dec
 * holds, per tau, [na][cnt] values ph[k m] with cnt = dcount(m). */
static size_t dcount(size_t np, size_t m)
{
    size_t c = (np - 1) / m + 1;
    return c < NOISE_ID_MAX + 1 ? c : NOISE_ID_MAX + 1;
}

/* All axes streamed: variances, noise types, intervals into out[a * nm + k]. */
static sensim_status stream_all(stream_st *s, const size_t *m, size_t nm, sensim_allan_point *out)
{
    const sensim_allan_opts *o = s->o;
    const size_t na = s->na, np = s->np;
    const int freq = s->freq, order = diff_order(o->dev);
    const int dmax = order == 3 && o->dev != SENSIM_MDEV && o->dev != SENSIM_TDEV ? 3 : 2;
    sensim_status st = SENSIM_OK;
    cursor cu[4];
    double *cbuf = malloc(4 * ST_ROWS * na * sizeof *cbuf), *sum = malloc(4 * na * sizeof *sum),
           *lane = malloc(na * OV_LANES * sizeof *lane), *work = malloc(NOISE_ID_MAX * sizeof *work);
    size_t *dec_off = malloc((nm + 1) * sizeof *dec_off);
    double *dec = NULL, *rnthr = NULL, *rcache = malloc(4 * na * sizeof *rcache);
    if (!cbuf || !sum || !lane || !work || !dec_off || !rcache) {
        st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for the stream buffers");
        goto done;
    }
    for (int k = 0; k < 4; k++)
        cu[k] = (cursor){s, cbuf + (size_t)k * ST_ROWS * na, 0, 0};
    /* Variances. ADEV and HDEV: one pass, every tau, from ph[j m]. */
    if (o->dev == SENSIM_ADEV || o->dev == SENSIM_HDEV) {
        double *z = malloc(nm * na * 4 * sizeof *z), *acc = malloc(nm * na * sizeof *acc);
        size_t *cnt = calloc(nm, sizeof *cnt), *seen = calloc(nm, sizeof *seen);
        if (!z || !acc || !cnt || !seen)
            st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu taus", nm);
        for (size_t i = 0; i < nm * na && !st; i++)
            acc[i] = 0;
        for (size_t j0 = 0; j0 < np && !st; j0 += ST_ROWS) {
            const double *p = cur_row(&cu[0], j0);
            if (!p) {
                st = s->st;
                break;
            }
            size_t j1 = j0 + cu[0].cnt;
            for (size_t k = 0; k < nm; k++) {
                const size_t mk = m[k];
                for (size_t j = (j0 + mk - 1) / mk * mk; j < j1; j += mk) {
                    const double *r = cu[0].buf + (j - j0) * na;
                    double *zk = z + k * na * 4;
                    size_t q = seen[k]++; /* r is ph[q m] */
                    for (size_t a = 0; a < na; a++) {
                        double *za = zk + a * 4;
                        za[0] = za[1];
                        za[1] = za[2];
                        za[2] = za[3];
                        za[3] = r[a];
                        if (order == 2 && q >= 2) {
                            double d = za[3] - 2 * za[2] + za[1];
                            acc[k * na + a] += d * d;
                        } else if (order == 3 && q >= 3) {
                            double d = za[3] - 3 * za[2] + 3 * za[1] - za[0];
                            acc[k * na + a] += d * d;
                        }
                    }
                    if (q >= (size_t)order)
                        cnt[k]++;
                }
            }
        }
        for (size_t k = 0; k < nm && !st; k++) {
            double tau = (double)m[k] * o->tau0;
            for (size_t a = 0; a < na; a++) {
                sensim_allan_point *q = &out[a * nm + k];
                double var = acc[k * na + a] / ((order == 2 ? 2 : 6) * tau * tau * (double)cnt[k]);
                q->m = m[k];
                q->tau = tau;
                q->dev = sqrt(var > 0 ? var : 0);
                q->n = cnt[k];
            }
        }
        free(z);
        free(acc);
        free(cnt);
        free(seen);
    } else {
        double *ovsum = o->dev == SENSIM_OADEV || o->dev == SENSIM_OHDEV ? malloc(nm * na * sizeof *ovsum) : NULL;
        if ((o->dev == SENSIM_OADEV || o->dev == SENSIM_OHDEV) && !ovsum)
            st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu taus", nm);
        for (size_t k = 0; k < nm && !st; k++) {
            double tau = (double)m[k] * o->tau0, den;
            size_t terms = 0;
            if (o->dev == SENSIM_OADEV || o->dev == SENSIM_OHDEV) {
                if (k == 0)
                    st = st_ov_all(s, m, nm, order, ovsum);
                memcpy(sum, ovsum + k * na, na * sizeof *sum);
                terms = np - (size_t)order * m[k];
                den = (order == 2 ? 2 : 6) * tau * tau * (double)terms;
            } else if (o->dev == SENSIM_MDEV || o->dev == SENSIM_TDEV) {
                st = st_mdev(s, cu, m[k], sum, sum + na, &terms);
                den = 2 * (double)m[k] * m[k] * tau * tau * (double)terms;
            } else {
                st = st_totdev(s, cu, m[k], sum, sum + na, sum + 2 * na);
                terms = np - 2;
                den = 2 * tau * tau * (double)(np - 2);
            }
            for (size_t a = 0; a < na && !st; a++) {
                sensim_allan_point *q = &out[a * nm + k];
                double var = sum[a] / den;
                if (o->dev == SENSIM_TDEV)
                    var = tau * tau / 3 * var;
                q->m = m[k];
                q->tau = tau;
                q->dev = sqrt(var > 0 ? var : 0);
                q->n = terms;
            }
        }
        free(ovsum);
    }
    if (st)
        goto done;
    /* Noise types, from decimated phase in batches of taus. */
    if (o->fixed_alpha) {
        for (size_t it = 0; it < na * nm; it++)
            out[it].alpha = o->alpha;
    } else {
        if (!(rnthr = malloc(2 * nm * sizeof *rnthr))) {
            st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu taus", nm);
            goto done;
        }
        for (size_t k = 0; k < nm; k++) {
            size_t L = freq ? (np - 1) / m[k] : (np - 1) / m[k] + 1;
            if (L < NOISE_ID_MIN && m[k] >= 2)
                rn_thresholds(m[k], rnthr + 2 * k);
            else
                rnthr[2 * k] = rnthr[2 * k + 1] = NAN;
        }
        const size_t cap = ST_DEC_BYTES / sizeof(double);
        for (size_t k0 = 0; k0 < nm && !st;) {
            size_t k1 = k0, tot = 0, jmax = 0;
            while (k1 < nm && (k1 == k0 || tot + na * dcount(np, m[k1]) <= cap)) {
                dec_off[k1 - k0] = tot;
                tot += na * dcount(np, m[k1]);
                size_t last = (dcount(np, m[k1]) - 1) * m[k1];
                jmax = last > jmax ? last : jmax;
                k1++;
            }
            free(dec);
            if (!(dec = malloc(tot * sizeof *dec))) {
                st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for the noise identification");
                break;
            }
            for (size_t j0 = 0; j0 <= jmax; j0 += ST_ROWS) {
                if (!cur_row(&cu[0], j0)) {
                    st = s->st;
                    break;
                }
                size_t j1 = j0 + cu[0].cnt;
                for (size_t k = k0; k < k1; k++) {
                    const size_t mk = m[k], c = dcount(np, mk);
                    double *dk = dec + dec_off[k - k0];
                    for (size_t j = (j0 + mk - 1) / mk * mk; j < j1 && j / mk < c; j += mk)
                        for (size_t a = 0; a < na; a++)
                            dk[a * c + j / mk] = cu[0].buf[(j - j0) * na + a];
                }
            }
            st_robs_ctx rc = {s, cu, NULL};
            for (size_t k = k0; k < k1 && !st; k++) {
                /* Where B1 decides, R(m) over every point is always needed:
                 * all axes in one pass. */
                size_t L = freq ? (np - 1) / m[k] : (np - 1) / m[k] + 1;
                rc.cache = NULL;
                if (L < NOISE_ID_MIN && m[k] >= 2 && (np - 1) / m[k] >= 5) {
                    if ((st = st_robs_all(s, cu, m[k], rcache, rcache + na)))
                        break;
                    rc.cache = rcache;
                }
                for (size_t a = 0; a < na; a++) {
                    const size_t c = dcount(np, m[k]);
                    id_view v = {dec + dec_off[k - k0] + a * c, 1, robs_stream, NULL, m[k], &rc, a};
                    const double *thr = !isnan(rnthr[2 * k]) ? rnthr + 2 * k : NULL;
                    out[a * nm + k].alpha = noise_id_view(&v, np, freq, m[k], dmax, work, thr);
                    if (s->st) {
                        st = s->st;
                        break;
                    }
                }
            }
            k0 = k1;
        }
    }
    if (!st)
        finish_points(o, np, out, na * nm);
done:
    free(cbuf);
    free(sum);
    free(lane);
    free(work);
    free(dec_off);
    free(dec);
    free(rnthr);
    free(rcache);
    return st;
}

/* p[q][i + 1] = sum over j <= i of (p[q][j + 1] - mu[q]) tau0, and
 * p[q][0] = 0, for k (1 to 3) axes side by side, each its own chain. */
static inline __attribute__((always_inline)) void running_sums_k(double *const *p, const double *mu, int k, size_t n,
                                                                 double tau0)
{
    double r[3] = {0, 0, 0};
    for (int q = 0; q < k; q++)
        p[q][0] = 0;
    for (size_t i = 0; i < n; i++)
        for (int q = 0; q < k; q++) {
            r[q] += (p[q][i + 1] - mu[q]) * tau0;
            p[q][i + 1] = r[q];
        }
}

static void running_sums(double *const *p, const double *mu, int k, size_t n, double tau0)
{
    /* k a constant in each call, so the chains stay in registers. */
    if (k == 3)
        running_sums_k(p, mu, 3, n, tau0);
    else if (k == 2)
        running_sums_k(p, mu, 2, n, tau0);
    else
        running_sums_k(p, mu, 1, n, tau0);
}

/* A group of axes [a0, a0 + g) read whole into ph (g rows of pstride), with
 * the arithmetic of make_phase; *np the phase points. The reads go to the
 * threads in pieces of LG_ROWS rows (src->read under a lock unless
 * src->concurrent), each piece copied into ph and summed per PH_BLOCK
 * there; the block sums are added in block order afterwards, and each
 * axis's running sum is one thread's, so the numbers are those of one
 * thread. A failed read is repeated on the calling thread for its message
 * (the first failing piece in row order, as a serial pass would stop). */
#define LG_ROWS ((size_t)PH_BLOCK * 8)
#define LG_RAW_BYTES ((size_t)24 << 20) /* at most for the threads' read buffers */

static sensim_status load_group(const sensim_allan_source *src, const sensim_allan_opts *o, size_t a0, size_t g,
                                double *ph, size_t pstride, size_t *np, double *big, double *raw, size_t *bad)
{
    const size_t n = src->n;
    const int freq = o->data == SENSIM_ALLAN_FREQ;
    const size_t off = freq ? 1 : 0;
    const size_t R = src->concurrent ? LG_ROWS : ST_ROWS;
    const size_t npiece = (n + R - 1) / R, nblk = (n + PH_BLOCK - 1) / PH_BLOCK;
    sensim_status st = SENSIM_OK;
    size_t *nonfinite = malloc(g * sizeof *nonfinite), *nfb = malloc(nblk * g * sizeof *nfb);
    double *mean = malloc(g * sizeof *mean), *bsum = malloc(3 * nblk * g * sizeof *bsum), *bmax = bsum + nblk * g,
           *bfirst = bmax + nblk * g, *extra = NULL;
    unsigned char *bsame = malloc(nblk * g);
    size_t fail = SIZE_MAX;
    *bad = 0;
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads();
#endif
    size_t cap = LG_RAW_BYTES / (R * g * sizeof(double));
    nt = (size_t)nt > npiece ? (int)npiece : nt;
    nt = (size_t)nt > cap ? (int)(cap ? cap : 1) : nt;
    nt = nt < 1 ? 1 : nt;
    if (nt > 1)
        extra = sensim_read_buf_((size_t)(nt - 1) * R * g * sizeof *extra);
    if (!nonfinite || !nfb || !mean || !bsum || !bsame || (nt > 1 && !extra)) {
        st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu axes", g);
        goto done;
    }
#pragma omp parallel num_threads(nt)
    {
        const size_t tid = (size_t)omp_get_thread_num();
        double *buf = tid ? extra + (tid - 1) * R * g : raw;
#pragma omp for schedule(dynamic, 1)
        for (size_t c = 0; c < npiece; c++) {
            const size_t r0 = c * R, cnt = n - r0 < R ? n - r0 : R;
            size_t seen;
#pragma omp atomic read
            seen = fail;
            if (seen < c)
                continue; /* an earlier piece failed: this one is not needed */
            sensim_status rs;
            if (src->concurrent)
                rs = src->read(src->ctx, r0, cnt, a0, a0 + g, buf);
            else {
#pragma omp critical(sensim_allan_load_read)
                rs = src->read(src->ctx, r0, cnt, a0, a0 + g, buf);
            }
            if (rs) {
#pragma omp critical(sensim_allan_load_fail)
                fail = c < fail ? c : fail;
                continue;
            }
            for (size_t b0 = 0; b0 < cnt; b0 += PH_BLOCK) {
                const size_t b1 = cnt - b0 < PH_BLOCK ? cnt : b0 + PH_BLOCK, blk = (r0 + b0) / PH_BLOCK;
                double *bs = bsum + blk * g, *bm = bmax + blk * g, *bf = bfirst + blk * g;
                unsigned char *be = bsame + blk * g;
                size_t *bn = nfb + blk * g;
                if (g == 3) {
                    /* A vector quantity, its sums in registers: a
                     * non-finite sample makes its axis's sum non-finite,
                     * and only then is the block searched. */
                    double s0 = 0, s1 = 0, s2 = 0, m0 = 0, m1 = 0, m2 = 0;
                    int e0 = 1, e1 = 1, e2 = 1;
                    const double f0 = buf[3 * b0], f1 = buf[3 * b0 + 1], f2 = buf[3 * b0 + 2];
                    double *x0 = ph + off + r0, *x1 = x0 + pstride, *x2 = x1 + pstride;
                    for (size_t i = b0; i < b1; i++) {
                        const double v0 = buf[3 * i], v1 = buf[3 * i + 1], v2 = buf[3 * i + 2];
                        x0[i] = v0;
                        x1[i] = v1;
                        x2[i] = v2;
                        s0 += v0;
                        s1 += v1;
                        s2 += v2;
                        m0 = fabs(v0) > m0 ? fabs(v0) : m0;
                        m1 = fabs(v1) > m1 ? fabs(v1) : m1;
                        m2 = fabs(v2) > m2 ? fabs(v2) : m2;
                        e0 &= v0 == f0;
                        e1 &= v1 == f1;
                        e2 &= v2 == f2;
                    }
                    bs[0] = s0, bs[1] = s1, bs[2] = s2;
                    bm[0] = m0, bm[1] = m1, bm[2] = m2;
                    bf[0] = f0, bf[1] = f1, bf[2] = f2;
                    be[0] = (unsigned char)e0, be[1] = (unsigned char)e1, be[2] = (unsigned char)e2;
                    for (size_t a = 0; a < 3; a++) {
                        bn[a] = SIZE_MAX;
                        for (size_t i = b0; !isfinite(bs[a]) && i < b1; i++)
                            if (!isfinite(buf[3 * i + a])) {
                                bn[a] = r0 + i;
                                break;
                            }
                    }
                    continue;
                }
                for (size_t a = 0; a < g; a++) {
                    bs[a] = 0;
                    bm[a] = 0;
                    bf[a] = buf[b0 * g + a];
                    be[a] = 1;
                    bn[a] = SIZE_MAX;
                }
                for (size_t i = b0; i < b1; i++) {
                    const double *row = buf + i * g;
                    for (size_t a = 0; a < g; a++) {
                        double v = row[a];
                        ph[a * pstride + off + r0 + i] = v;
                        bs[a] += v;
                        bm[a] = fabs(v) > bm[a] ? fabs(v) : bm[a];
                        be[a] &= v == bf[a];
                        if (!isfinite(v) && bn[a] == SIZE_MAX)
                            bn[a] = r0 + i;
                    }
                }
            }
        }
    }
    if (fail != SIZE_MAX) {
        /* The same read again here, for its message on this thread. */
        const size_t r0 = fail * R, cnt = n - r0 < R ? n - r0 : R;
        st = src->read(src->ctx, r0, cnt, a0, a0 + g, raw);
        if (!st)
            st = sensim_error(SENSIM_EIO, "allan: reading rows %zu to %zu failed once and then not", r0, r0 + cnt);
        *bad = SIZE_MAX; /* the source's own message */
        goto done;
    }
    for (size_t a = 0; a < g; a++) {
        nonfinite[a] = SIZE_MAX;
        mean[a] = 0;
        big[a] = 0;
    }
    for (size_t a = 0; a < g; a++) {
        int eq = 1;
        const double f = ph[a * pstride + off];
        for (size_t blk = 0; blk < nblk; blk++) {
            const size_t k = blk * g + a;
            mean[a] += bsum[k];
            big[a] = fmax(big[a], bmax[k]);
            if (nonfinite[a] == SIZE_MAX)
                nonfinite[a] = nfb[k];
            eq &= bsame[k] && bfirst[k] == f;
        }
        bsame[a] = (unsigned char)eq; /* the axis's flag, in the first block's slot of a */
    }
    for (size_t a = 0; a < g && !st; a++) {
        *bad = a;
        size_t i = nonfinite[a];
        const double *x = ph + a * pstride + off;
        if (i != SIZE_MAX)
            st = sensim_error(SENSIM_EDATA, "sample %zu is %s", i, isnan(x[i]) ? "NaN" : "infinite");
        else if (freq && bsame[a])
            st = sensim_error(SENSIM_EDATA, "all %zu samples equal %g: constant data has no noise to analyse", n, x[0]);
        mean[a] /= (double)n;
    }
    if (st)
        goto done;
    /* Each axis's running sum (or line removal) on one thread. */
    const int na_t = (size_t)nt < g ? nt : (int)g;
    if (freq) {
        /* A running sum is one chain of additions, bound by their latency
         * or, out of cache, by one thread's memory bandwidth: up to three
         * axes side by side on one thread (each with its own arithmetic,
         * so the grouping changes no bit), the axes split over as many
         * threads as there are (two threads: axes {0}, {1, 2}). */
        const double tau0 = o->tau0;
        const size_t ngr = (size_t)nt < g ? (size_t)nt : g, G = ngr > (g + 2) / 3 ? ngr : (g + 2) / 3;
#pragma omp parallel for schedule(static, 1) num_threads((size_t)nt < G ? nt : (int)G)
        for (size_t j = 0; j < G; j++)
            for (size_t a = j * g / G, a1 = (j + 1) * g / G; a < a1; a += 3) {
                const size_t k = a1 - a < 3 ? a1 - a : 3;
                double *p[3];
                for (size_t q = 0; q < k; q++)
                    p[q] = ph + (a + q) * pstride;
                running_sums(p, mean + a, (int)k, n, tau0);
            }
    } else {
        /* bsum's first g slots: each axis's largest second difference. */
#pragma omp parallel for schedule(static, 1) num_threads(na_t)
        for (size_t a = 0; a < g; a++) {
            double *p = ph + a * pstride;
            const double x0 = p[0], slope = (p[n - 1] - p[0]) / (double)(n - 1);
            for (size_t i = 0; i < n; i++)
                p[i] = p[i] - x0 - slope * (double)i;
            double dev = 0;
            for (size_t i = 1; i + 1 < n; i++)
                dev = fmax(dev, fabs(p[i + 1] - 2 * p[i] + p[i - 1]));
            bsum[a] = dev;
        }
        for (size_t a = 0; a < g && !st; a++) {
            *bad = a;
            if (bsum[a] <= 1e-13 * big[a])
                st = sensim_error(SENSIM_EDATA,
                                  "the %zu phase samples lie on a straight line: constant rate has no noise to analyse",
                                  n);
        }
    }
    *np = freq ? n + 1 : n;
done:
    SENSIM_FREE_ALL(nonfinite, nfb, mean, bsum, bsame, extra);
    return st;
}

sensim_status sensim_allan_compute_stream(const sensim_allan_source *src, const sensim_allan_opts *o, const size_t *m,
                                          size_t nm, size_t max_bytes, sensim_allan_point *out)
{
    sensim_status st = check_opts(o);
    if (st)
        return st;
    if (!src || !src->read || src->naxes < 1)
        return sensim_error(SENSIM_EINVAL, "allan: a stream needs a read function and at least one axis");
    if ((st = check_grid(o, src->n, m, nm)))
        return st;
    const size_t n = src->n, na = src->naxes, name_axis = na > 1;
    if (max_bytes == 0)
        max_bytes = SENSIM_ALLAN_STREAM_BYTES;
    size_t g = max_bytes / ((n + 1) * sizeof(double));
    g = g > na ? na : g;
    /* Whole vector quantities per group where that fits: each is then read
     * once. */
    if (g >= 3 && g < na && na % 3 == 0)
        g -= g % 3;
    size_t bad = 0;
    if (g >= 1) {
        /* Groups of axes in memory, each read once. */
        double *ph = phase_alloc(g * (n + 1)), *raw = sensim_read_buf_(ST_ROWS * g * sizeof *raw),
               *big = malloc(2 * g * sizeof *big);
        if (!ph || !raw || !big)
            st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for %zu x %zu phase points", g, n + 1);
        for (size_t a0 = 0; a0 < na && !st; a0 += g) {
            size_t gg = na - a0 < g ? na - a0 : g, np = 0;
            bad = 0;
            st = load_group(src, o, a0, gg, ph, n + 1, &np, big, raw, &bad);
            if (!st)
                st = phases_to_points(ph, n + 1, gg, np, o, big, big + g, m, nm, out + a0 * nm);
            if (st && name_axis && bad != SIZE_MAX && st != SENSIM_ENOMEM)
                sensim_error_prefix(st, "axis %zu", a0 + bad);
        }
        free(ph);
        free(raw);
        free(big);
        return st;
    }
    stream_st s = {src, o, n, na, nphase_of(o->data, n), o->data == SENSIM_ALLAN_FREQ, NULL, NULL, NULL, NULL,
                   NULL, NULL, SENSIM_OK, max_bytes, -1, -1};
    s.spool_w = spool_open(s.np * na * sizeof(double));
    double *v = malloc(4 * na * sizeof *v);
    s.ck = malloc((n / ST_ROWS + 1) * na * sizeof *s.ck);
    s.raw = sensim_read_buf_(ST_ROWS * na * sizeof *s.raw);
    if (!v || !s.ck || !s.raw) {
        st = sensim_error(SENSIM_ENOMEM, "allan: out of memory for the stream of %zu axes", na);
        goto done;
    }
    s.mu = v;
    s.x0 = v + na;
    s.big = v + 2 * na;
    s.scl = v + 3 * na;
    if ((st = st_prepare(&s, &bad))) {
        if (name_axis && st == SENSIM_EDATA && !s.st)
            sensim_error_prefix(st, "axis %zu", bad);
        goto done;
    }
    s.spool = s.spool_w;
    if (!(st = stream_all(&s, m, nm, out)))
        for (size_t a = 0; a < na; a++)
            for (size_t k = 0; k < nm && s.scl[a] != 1; k++) {
                sensim_allan_point *q = &out[a * nm + k];
                q->dev /= s.scl[a];
                q->lo /= s.scl[a];
                q->hi /= s.scl[a];
            }
done:
    spool_drop(&s);
    free(v);
    free(s.ck);
    free(s.raw);
    return st;
}
