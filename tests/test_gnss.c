/* GNSS model: closed-form statistics (Gaussian sigma in metres,
 * Gauss-Markov variance and lag-1 correlation at the actual dt, HDOP curve,
 * covariance from HDOP), Chrono's random walk step for step, outages,
 * outliers, WGS84 conversion, block-size independence, bad parameters. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/geodesy.h"
#include "sensim/gnss.h"
#include "sensim/log.h"
#include "sensim/rig.h"
#include "sensim/trajectory.h"
#include "sensim/yaml.h"
#include "testutil.h"

typedef struct {
    size_t n;
    double *t, *pos, *vel;
    double *ot, *ots, *lla, *enu, *ovel, *hdop, *cov;
    uint64_t *epoch;
    int8_t *fix;
    sensim_gnss_out out;
} run_buf;

/* n epochs at t0 + i * dt with a slowly moving truth. */
static void buf_init(run_buf *b, size_t n, double t0, double dt)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    b->t = malloc(n * sizeof(double));
    b->pos = malloc(3 * n * sizeof(double));
    b->vel = malloc(3 * n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        b->t[i] = t0 + (double)i * dt;
        b->vel[3 * i] = 1.0;
        b->vel[3 * i + 1] = -0.5;
        b->vel[3 * i + 2] = 0.0;
        b->pos[3 * i] = b->t[i];
        b->pos[3 * i + 1] = -0.5 * b->t[i];
        b->pos[3 * i + 2] = 2.0;
    }
    b->ot = calloc(n, sizeof(double));
    b->ots = calloc(n, sizeof(double));
    b->lla = calloc(3 * n, sizeof(double));
    b->enu = calloc(3 * n, sizeof(double));
    b->ovel = calloc(3 * n, sizeof(double));
    b->hdop = calloc(n, sizeof(double));
    b->cov = calloc(9 * n, sizeof(double));
    b->epoch = calloc(n, sizeof(uint64_t));
    b->fix = calloc(n, sizeof(int8_t));
    sensim_gnss_out o = {b->ot, b->ots, b->epoch, b->lla, b->enu, b->ovel, b->hdop, b->cov, b->fix};
    b->out = o;
}

static void buf_free(run_buf *b)
{
    free(b->t), free(b->pos), free(b->vel), free(b->ot), free(b->ots), free(b->lla), free(b->enu);
    free(b->ovel), free(b->hdop), free(b->cov), free(b->epoch), free(b->fix);
}

/* Runs the whole buffer through the model in blocks of the given sizes
 * (cycled; 0 = one block). Returns the number of delivered epochs. */
static size_t run_blocks(const sensim_gnss_params *p, run_buf *b, uint64_t seed, double t_on, const size_t *sizes,
                         size_t nsizes)
{
    sensim_gnss *g = sensim_gnss_create(p, seed, 77);
    ck_assert_msg(g != NULL, "%s", sensim_last_error());
    sensim_gnss_state st;
    sensim_gnss_reset(g, &st, t_on);
    size_t done = 0, m = 0;
    for (size_t c = 0; done < b->n; c++) {
        size_t len = nsizes ? sizes[c % nsizes] : b->n;
        if (len > b->n - done)
            len = b->n - done;
        sensim_gnss_out o = b->out;
        o.t += m, o.t_sample += m, o.epoch += m, o.lla += 3 * m, o.enu += 3 * m, o.velocity += 3 * m;
        o.hdop += m, o.covariance += 9 * m, o.fix += m;
        m += sensim_gnss_apply(g, &st, len, b->t + done, b->pos + 3 * done, b->vel + 3 * done, &o);
        done += len;
    }
    sensim_gnss_destroy(g);
    return m;
}

/* Error of delivered row i on axis a (truth is a pure function of t). */
static double err(const run_buf *b, size_t i, int a)
{
    size_t k = (size_t)b->epoch[i];
    return b->enu[3 * i + a] - b->pos[3 * k + a];
}

START_TEST(gaussian_sigma_in_metres)
{
    /* n = 40000: SE(var)/var = sqrt(2/n) = 7.1e-3; tolerance 5 SE. */
    const size_t n = 40000;
    run_buf b;
    buf_init(&b, n, 0.0, 0.1);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.origin_lla[0] = 43.0731, p.origin_lla[1] = -89.4012, p.origin_lla[2] = 260.0;
    p.gauss_on = 1;
    p.gauss_sigma[0] = 0.5, p.gauss_sigma[1] = 0.5, p.gauss_sigma[2] = 1.5;
    p.vel_sigma[0] = p.vel_sigma[1] = p.vel_sigma[2] = 0.05;
    p.cov_model = SENSIM_GNSS_COV_NOISE;
    ck_assert_uint_eq(run_blocks(&p, &b, 3, 0.0, NULL, 0), n);
    double *e = malloc(n * sizeof *e), *v = malloc(n * sizeof *v);
    for (int a = 0; a < 3; a++) {
        for (size_t i = 0; i < n; i++) {
            e[i] = err(&b, i, a);
            v[i] = b.ovel[3 * i + a] - b.vel[3 * i + a];
        }
        double s2 = p.gauss_sigma[a] * p.gauss_sigma[a];
        ck_assert_within(tu_mean(e, n, 1), 0.0, 5 * p.gauss_sigma[a] / sqrt(n));
        ck_assert_within(tu_var(e, n, 1), s2, 5 * s2 * sqrt(2.0 / n));
        ck_assert_within(tu_acf1(e, n, 1), 0.0, 5 / sqrt(n));
        ck_assert_within(tu_var(v, n, 1), 0.0025, 5 * 0.0025 * sqrt(2.0 / n));
        ck_assert_within(b.cov[9 * 17 + 4 * a], s2, 1e-15);
    }
    /* The noise is added in metres and converted on the ellipsoid: the LLA
     * round-trips to the noisy ENU to well under a millimetre. */
    sensim_geo_enu frame;
    ck_assert_int_eq(sensim_geo_enu_init(&frame, p.origin_lla), SENSIM_OK);
    for (size_t i = 0; i < n; i += 997) {
        double back[3];
        sensim_geo_lla_to_enu(&frame, b.lla + 3 * i, back);
        for (int a = 0; a < 3; a++)
            ck_assert_within(back[a], b.enu[3 * i + a], 1e-6);
    }
    free(e), free(v);
    buf_free(&b);
}
END_TEST

START_TEST(gauss_markov_variance_and_correlation)
{
    /* Alternating dt of 0.1 s and 0.3 s: the lag-1 correlation of each
     * kind of pair is exp(-dt/tau) at its own dt (exact discretization).
     * n = 200000 epochs, sigma 2 m, tau 5 s. Sample variance of an AR(1)
     * with phi ~ exp(-0.2/5): SE/var ~ sqrt(2 (1+phi^2)/(1-phi^2) / n)
     * ~ 0.023; tolerance 5 SE. Correlation of pairs: SE ~ sqrt((1 -
     * rho^2)^2 / (n/2)) <= 1.3e-3 (1.2e-3 for rho = 0.98); 5 SE. */
    const size_t n = 200000;
    const double sigma = 2.0, tau = 5.0;
    run_buf b;
    buf_init(&b, n, 0.0, 0.1);
    for (size_t i = 1; i < n; i++)
        b.t[i] = b.t[i - 1] + (i % 2 ? 0.1 : 0.3);
    for (size_t i = 0; i < n; i++)
        b.pos[3 * i] = b.pos[3 * i + 1] = b.pos[3 * i + 2] = 0.0;
    sensim_gnss_params p = sensim_gnss_default_params();
    p.gm_on = 1;
    for (int a = 0; a < 3; a++)
        p.gm_sigma[a] = sigma, p.gm_tau[a] = tau;
    ck_assert_uint_eq(run_blocks(&p, &b, 11, 0.0, NULL, 0), n);
    double phi_mean = 0.5 * (exp(-0.1 / tau) + exp(-0.3 / tau));
    double se_var = sigma * sigma * sqrt(2.0 * (1 + phi_mean * phi_mean) / (1 - phi_mean * phi_mean) / n);
    for (int a = 0; a < 3; a++) {
        double s01 = 0, s03 = 0, q = 0;
        size_t c01 = 0, c03 = 0;
        for (size_t i = 0; i < n; i++) {
            double x = b.enu[3 * i + a];
            q += x * x;
            if (i + 1 < n) {
                double y = b.enu[3 * (i + 1) + a];
                if ((i + 1) % 2) s01 += x * y, c01++;
                else s03 += x * y, c03++;
            }
        }
        double var = q / n;
        ck_assert_within(var, sigma * sigma, 5 * se_var);
        double r01 = s01 / c01 / var, r03 = s03 / c03 / var;
        double e01 = exp(-0.1 / tau), e03 = exp(-0.3 / tau);
        ck_assert_within(r01, e01, 5 * (1 - e01 * e01) / sqrt(n / 2.0) + 5 * se_var / (sigma * sigma) * e01);
        ck_assert_within(r03, e03, 5 * (1 - e03 * e03) / sqrt(n / 2.0) + 5 * se_var / (sigma * sigma) * e03);
    }
    buf_free(&b);
}
END_TEST

START_TEST(hdop_curve_fix_and_covariance)
{
    /* AirSim low-pass, calibrated values of seed 004: the HDOP at every
     * epoch equals final + (initial - final) exp(-(t - t_on)/tau), at
     * irregular epoch times and a power-on before the first epoch. */
    const size_t n = 600;
    const double t_on = 2.0, ini = 100.0, fin = 0.85, tau = 12.4;
    run_buf b;
    buf_init(&b, n, 2.5, 0.1);
    for (size_t i = 1; i < n; i++)
        b.t[i] = b.t[i - 1] + 0.05 + 0.1 * (double)(i % 3);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.hdop_on = 1;
    p.eph_initial = p.epv_initial = ini;
    p.eph_final = p.epv_final = fin;
    p.eph_tau = p.epv_tau = tau;
    p.cov_model = SENSIM_GNSS_COV_NMEA;
    p.cov_epe = 0.02; /* a receiver reporting RTK fixed (GGA 4) for its fixes */
    ck_assert_uint_eq(run_blocks(&p, &b, 5, t_on, NULL, 0), n);
    int saw[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        double h = fin + (ini - fin) * exp(-(b.t[i] - t_on) / tau);
        ck_assert_within(b.hdop[i], h, 1e-12 * h);
        int fix = h <= 3.0 ? SENSIM_GNSS_FIX_3D : h <= 4.0 ? SENSIM_GNSS_FIX_2D : SENSIM_GNSS_FIX_NONE;
        ck_assert_int_eq(b.fix[i], fix);
        saw[fix]++;
        const double *c = b.cov + 9 * i, epe = fix == SENSIM_GNSS_FIX_NONE ? 1e6 : 0.02;
        ck_assert_within(c[0], (h * epe) * (h * epe), 1e-12 * c[0]);
        ck_assert_within(c[4], c[0], 0.0);
        ck_assert_within(c[8], (2 * h * 2 * epe) * (2 * h * 2 * epe), 1e-12 * c[8]);
        ck_assert(c[1] == 0 && c[2] == 0 && c[3] == 0 && c[5] == 0 && c[6] == 0 && c[7] == 0);
        /* AirSim does not noise the position. */
        ck_assert(b.enu[3 * i] == b.pos[3 * i]);
    }
    ck_assert(saw[SENSIM_GNSS_FIX_NONE] > 0 && saw[SENSIM_GNSS_FIX_2D] > 0 && saw[SENSIM_GNSS_FIX_3D] > 0);
    /* Seed 004's variant: (0.02 * eph)^2. */
    p.cov_model = SENSIM_GNSS_COV_SCALED;
    run_blocks(&p, &b, 5, t_on, NULL, 0);
    for (size_t i = 0; i < n; i += 7)
        ck_assert_within(b.cov[9 * i], pow(0.02 * b.hdop[i], 2), 1e-12 * b.cov[9 * i]);
    buf_free(&b);
}
END_TEST

/* Chrono's ChNoiseRandomWalks::AddNoise written out independently, drawing
 * the same normals (stream 3 + axis, index = inner step). */
typedef struct {
    double v[3], e[3], t;
    uint64_t steps;
} ref_rw;

static void ref_rw_to(ref_rw *r, const sensim_gnss_params *p, const sensim_rng *key, double next)
{
    double step_size = 1.0 / p->rw_model_rate_hz;
    while (next - r->t > 1e-9 * step_size) {
        double h = fmin(step_size, next - r->t);
        for (int a = 0; a < 3; a++) {
            sensim_rng s = *key;
            s.stream = 3 + (uint32_t)a;
            double c = p->rw_sigma * 0.2 * (-1 * r->e[a] / p->rw_max_error);
            double w = c + p->rw_sigma * sensim_rng_normal(&s, r->steps);
            w = w > p->rw_max_acceleration ? p->rw_max_acceleration : w;
            w = w < -p->rw_max_acceleration ? -p->rw_max_acceleration : w;
            r->v[a] += w * h;
        }
        double len = sqrt(r->v[0] * r->v[0] + r->v[1] * r->v[1] + r->v[2] * r->v[2]);
        if (len > p->rw_max_velocity)
            for (int a = 0; a < 3; a++)
                r->v[a] = r->v[a] / len * p->rw_max_velocity;
        for (int a = 0; a < 3; a++)
            r->e[a] += r->v[a] * h;
        r->t += h;
        r->steps++;
    }
    r->t = next;
}

START_TEST(chrono_random_walk_semantics_and_bounds)
{
    /* Seed 004's Ch:RW parameters; GNSS at 10 Hz, model at 100 Hz, with
     * one irregular epoch spacing so partial inner steps occur. */
    const size_t n = 20000;
    run_buf b;
    buf_init(&b, n, 0.0, 0.1);
    for (size_t i = 0; i < n; i++)
        b.t[i] = 0.1 * (double)i + (i % 5 == 3 ? 0.0137 : 0.0);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.rw_on = 1;
    p.rw_sigma = 0.047, p.rw_model_rate_hz = 100, p.rw_max_velocity = 0.016, p.rw_max_acceleration = 0.152;
    p.rw_max_error = 1.0;
    ck_assert_uint_eq(run_blocks(&p, &b, 9, 0.0, NULL, 0), n);
    sensim_rng key = sensim_rng_make(9, 77, 0);
    ref_rw r;
    memset(&r, 0, sizeof r);
    double emax = 0, e2sum = 0;
    for (size_t i = 0; i < n; i++) {
        ref_rw_to(&r, &p, &key, b.t[i]);
        for (int a = 0; a < 3; a++) {
            ck_assert_within(err(&b, i, a), r.e[a], 1e-9);
            emax = fmax(emax, fabs(err(&b, i, a)));
            e2sum += err(&b, i, a) * err(&b, i, a);
        }
        /* |v| <= v_max, so the error moves at most v_max * dt per epoch. */
        if (i > 0) {
            double d2 = 0, dt = b.t[i] - b.t[i - 1];
            for (int a = 0; a < 3; a++)
                d2 += pow(err(&b, i, a) - err(&b, i - 1, a), 2);
            ck_assert(sqrt(d2) <= p.rw_max_velocity * dt * (1 + 1e-9));
        }
    }
    /* Bounded: the pull-back keeps the error near the truth. Measured over
     * 2000 s for seeds 1-5 at these parameters: max |e| 0.23-0.28 m, rms
     * 0.078-0.087 m; without the pull-back (D -> infinity) max 0.8-2.1 m, rms
     * 0.36-0.83 m. Bounds of 0.6 m and 0.2 m separate the two with about
     * twice the spread as margin. */
    ck_assert_msg(emax < 0.6, "max |e| = %g m", emax);
    ck_assert_msg(sqrt(e2sum / (3.0 * n)) < 0.2, "rms e = %g m", sqrt(e2sum / (3.0 * n)));
    ck_assert(emax > 0.0);
    /* Reproducible by seed, different across seeds. */
    run_buf b2;
    buf_init(&b2, n, 0.0, 0.1);
    memcpy(b2.t, b.t, n * sizeof(double));
    run_blocks(&p, &b2, 9, 0.0, NULL, 0);
    ck_assert(memcmp(b.enu, b2.enu, 3 * n * sizeof(double)) == 0);
    run_blocks(&p, &b2, 10, 0.0, NULL, 0);
    ck_assert(memcmp(b.enu, b2.enu, 3 * n * sizeof(double)) != 0);
    buf_free(&b2);
    buf_free(&b);
}
END_TEST

START_TEST(outages_start_delay_latency)
{
    /* Listed windows must hold no epoch; random outages (rate 0.05/s, mean
     * 2 s) cover d r / (1 + d r) = 1/11 of the time. Over T = 40000 s
     * there are ~T/22 = 1818 up/down cycles; the renewal-reward SE of the
     * fraction is sqrt(((1-f)^2 d^2 + f^2 u^2) / cycles) / (u + d)
     * = 2.7e-3; tolerance 5 SE. */
    const size_t n = 400000;
    run_buf b;
    buf_init(&b, n, 0.0, 0.1);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.start_delay = 3.0;
    p.latency = 0.2;
    p.n_outage_windows = 2;
    p.outage_windows[0][0] = 5.0, p.outage_windows[0][1] = 7.0;
    p.outage_windows[1][0] = 20.0, p.outage_windows[1][1] = 20.55;
    size_t m = run_blocks(&p, &b, 2, 0.0, NULL, 0);
    ck_assert_uint_eq(m, n - 30 - 20 - 6);
    for (size_t i = 0; i < m; i++) {
        double ts = b.ots[i];
        ck_assert(ts >= 3.0);
        ck_assert(!(ts >= 5.0 && ts < 7.0) && !(ts >= 20.0 && ts < 20.55));
        ck_assert_within(b.ot[i], ts + 0.2, 1e-12);
    }
    p.n_outage_windows = 0;
    p.start_delay = 0;
    p.outage_rate = 0.05;
    p.outage_mean_duration = 2.0;
    m = run_blocks(&p, &b, 2, 0.0, NULL, 0);
    double f = 1.0 - (double)m / n;
    ck_assert_within(f, 1.0 / 11.0, 5 * 2.7e-3);
    buf_free(&b);
}
END_TEST

START_TEST(outlier_rate_binomial)
{
    /* p = 0.02 over n = 50000 epochs: count ~ Bin(n, p), SE = sqrt(n p (1-p))
     * = 31.3; tolerance 5 SE. Each outlier is a jump of exactly 10 m. */
    const size_t n = 50000;
    run_buf b;
    buf_init(&b, n, 0.0, 0.1);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.outlier_probability = 0.02;
    p.outlier_magnitude = 10.0;
    ck_assert_uint_eq(run_blocks(&p, &b, 4, 0.0, NULL, 0), n);
    size_t hits = 0;
    double zsum = 0;
    for (size_t i = 0; i < n; i++) {
        double e2 = 0;
        for (int a = 0; a < 3; a++)
            e2 += err(&b, i, a) * err(&b, i, a);
        if (e2 > 0) {
            ck_assert_within(sqrt(e2), 10.0, 1e-9);
            zsum += err(&b, i, 2);
            hits++;
        }
    }
    ck_assert_within((double)hits, n * 0.02, 5 * sqrt(n * 0.02 * 0.98));
    /* Direction uniform on the sphere: mean of z is 0 with SE 10/sqrt(3 hits). */
    ck_assert_within(zsum / hits, 0.0, 5 * 10.0 / sqrt(3.0 * hits));
    buf_free(&b);
}
END_TEST

START_TEST(nmea_covariance_per_fix_quality)
{
    /* nmea_navsat_driver's driver.py picks the default epe of each GGA
     * sentence's fix quality: no fix (0) 1e6, SPS (1) 4.0, RTK fixed (4)
     * 0.02, RTK float (5) 4.0; lon/lat std hdop * epe, alt 2 hdop (2 epe).
     * A run through no fix, 2D and the RTK chain with a DGPS receiver
     * (quality 2, epe 0.1) for its ordinary fixes. */
    const size_t n = 20000;
    run_buf b;
    buf_init(&b, n, 0.0, 0.2);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.hdop_on = 1;
    p.eph_initial = p.epv_initial = 6, p.eph_final = p.epv_final = 1, p.eph_tau = p.epv_tau = 100;
    p.rtk_on = 1;
    p.rtk_mean_fixed = 30, p.rtk_mean_float = 10;
    p.cov_model = SENSIM_GNSS_COV_NMEA;
    p.cov_epe = 0.1;
    ck_assert_uint_eq(run_blocks(&p, &b, 5, 0.0, NULL, 0), n);
    const double epe_of[SENSIM_GNSS_FIX_TYPES] = {1e6, NAN, 0.1, 0.1, 0.02, 4.0};
    size_t seen[SENSIM_GNSS_FIX_TYPES] = {0};
    for (size_t i = 0; i < n; i++) {
        int f = b.fix[i];
        seen[f]++;
        double h = b.hdop[i], lon_std = epe_of[f], alt_std = epe_of[f] * 2;
        ck_assert_within(b.cov[9 * i], (h * lon_std) * (h * lon_std), 1e-12 * b.cov[9 * i]);
        ck_assert_within(b.cov[9 * i + 4], (h * lon_std) * (h * lon_std), 1e-12 * b.cov[9 * i]);
        ck_assert_within(b.cov[9 * i + 8], (2 * h * alt_std) * (2 * h * alt_std), 1e-12 * b.cov[9 * i + 8]);
    }
    ck_assert(seen[SENSIM_GNSS_FIX_NONE] && seen[SENSIM_GNSS_FIX_2D] && seen[SENSIM_GNSS_FIX_RTK_FIXED] &&
              seen[SENSIM_GNSS_FIX_RTK_FLOAT]);
    buf_free(&b);
}
END_TEST

START_TEST(fix_noise_per_type_and_rtk)
{
    /* HDOP 6 -> 1 (tau 100 s): no fix for 51 s, then 2D for 41 s, then 3D,
     * which the RTK chain (mean fixed 30 s, mean float 10 s, float from
     * power-on) splits into RTK fixed and float. White noise with a sigma per fix type: each
     * type's sample std per axis within 5 SE (sigma / sqrt(2 N)). */
    const size_t n = 100000;
    const double dt = 0.2;
    run_buf b;
    buf_init(&b, n, 0.0, dt);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.hdop_on = 1;
    p.eph_initial = p.epv_initial = 6, p.eph_final = p.epv_final = 1, p.eph_tau = p.epv_tau = 100;
    p.rtk_on = 1;
    p.rtk_mean_fixed = 30, p.rtk_mean_float = 10;
    p.fix_noise_on = 1;
    const double sig[SENSIM_GNSS_FIX_TYPES][3] = {
        {5, 5, 8}, {0, 0, 0}, {2, 2, 3}, {1, 1, 1}, {0.01, 0.01, 0.02}, {0.3, 0.3, 0.5}};
    memcpy(p.fix_sigma, sig, sizeof sig);
    p.cov_model = SENSIM_GNSS_COV_NOISE;
    ck_assert_uint_eq(run_blocks(&p, &b, 5, 0.0, NULL, 0), n);
    double s2[SENSIM_GNSS_FIX_TYPES][3];
    size_t cnt[SENSIM_GNSS_FIX_TYPES] = {0}, runs = 0, float_n = 0, rtk_n = 0;
    memset(s2, 0, sizeof s2);
    for (size_t i = 0; i < n; i++) {
        int f = b.fix[i];
        ck_assert(f >= 0 && f < SENSIM_GNSS_FIX_TYPES && f != 1 && f != SENSIM_GNSS_FIX_3D);
        cnt[f]++;
        for (int a = 0; a < 3; a++) {
            s2[f][a] += err(&b, i, a) * err(&b, i, a);
            /* The noise covariance follows the fix type. */
            ck_assert_within(b.cov[9 * i + 4 * a], sig[f][a] * sig[f][a], 1e-12);
        }
        if (f == SENSIM_GNSS_FIX_RTK_FIXED || f == SENSIM_GNSS_FIX_RTK_FLOAT) {
            rtk_n++;
            float_n += f == SENSIM_GNSS_FIX_RTK_FLOAT;
            runs += f == SENSIM_GNSS_FIX_RTK_FLOAT && b.fix[i - 1] != SENSIM_GNSS_FIX_RTK_FLOAT;
        }
    }
    const int types[] = {SENSIM_GNSS_FIX_NONE, SENSIM_GNSS_FIX_2D, SENSIM_GNSS_FIX_RTK_FIXED,
                         SENSIM_GNSS_FIX_RTK_FLOAT};
    for (int j = 0; j < 4; j++) {
        int f = types[j];
        ck_assert_msg(cnt[f] > 150, "fix %d seen %zu times", f, cnt[f]);
        for (int a = 0; a < 3; a++) {
            double s = sqrt(s2[f][a] / (double)cnt[f]);
            ck_assert_msg(fabs(s - sig[f][a]) < 5 * sig[f][a] / sqrt(2.0 * (double)cnt[f]),
                          "fix %d axis %d: std %g, sigma %g (%zu epochs)", f, a, s, sig[f][a], cnt[f]);
        }
    }
    /* The chain: float a fraction 10 / (30 + 10) = 0.25 of the time. Time
     * averages of a two-state chain have variance 2 p q tc / T with
     * tc = 1 / (1/30 + 1/10) = 7.5 s; tolerance 5 SE. Mean float period
     * (epochs in float / float runs, times dt): 10 s within 5 SE of an
     * exponential mean (10 / sqrt(runs)) plus dt for the sampling. */
    double T = (double)rtk_n * dt, q = 0.25, se = sqrt(2 * q * (1 - q) * 7.5 / T);
    ck_assert_msg(fabs((double)float_n / (double)rtk_n - q) < 5 * se, "float fraction %g",
                  (double)float_n / (double)rtk_n);
    double mean_float = (double)float_n * dt / (double)runs;
    ck_assert_msg(fabs(mean_float - 10) < 5 * 10 / sqrt((double)runs) + dt, "mean float period %g s over %zu",
                  mean_float, runs);
    buf_free(&b);
}
END_TEST

START_TEST(multipath_bursts_telegraph)
{
    /* Bursts at rate r = 0.05/s lasting Exp(mean d = 5 s), bias
     * N(0, diag(1, 1, 4)) per burst, 20000 s at 10 Hz and nothing else: the
     * error is non-zero exactly in a burst and constant within one.
     * Occupancy r d / (1 + r d) = 0.2, SE sqrt(2 p q tc / T) with
     * tc = 1 / (r + 1/d) = 4 s (0.008); mean burst = epochs in bursts /
     * bursts * dt, 5 s within 5 SE (d / sqrt(bursts)) plus dt (a burst
     * shorter than dt can fall between epochs); the biases' std per axis
     * within 5 SE (sigma / sqrt(2 bursts)). */
    const size_t n = 200000;
    const double dt = 0.1, r = 0.05, d = 5, sg[3] = {1, 1, 2};
    run_buf b;
    buf_init(&b, n, 0.0, dt);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.multipath_rate = r, p.multipath_mean_duration = d;
    memcpy(p.multipath_sigma, sg, sizeof sg);
    const size_t sizes[] = {777, 1, 40000};
    ck_assert_uint_eq(run_blocks(&p, &b, 6, 0.0, sizes, 3), n);
    size_t on = 0, bursts = 0;
    double b2[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        double e[3] = {err(&b, i, 0), err(&b, i, 1), err(&b, i, 2)};
        if (e[0] == 0 && e[1] == 0 && e[2] == 0)
            continue;
        on++;
        int fresh = i == 0 || fabs(e[0] - err(&b, i - 1, 0)) > 1e-9 || fabs(e[2] - err(&b, i - 1, 2)) > 1e-9;
        if (fresh) {
            bursts++;
            for (int a = 0; a < 3; a++)
                b2[a] += e[a] * e[a];
        }
    }
    double occ = r * d / (1 + r * d), T = (double)n * dt;
    ck_assert_msg(fabs((double)on / (double)n - occ) < 5 * sqrt(2 * occ * (1 - occ) * (1 / (r + 1 / d)) / T),
                  "occupancy %g", (double)on / (double)n);
    double mean_len = (double)on * dt / (double)bursts;
    ck_assert_msg(fabs(mean_len - d) < 5 * d / sqrt((double)bursts) + dt, "mean burst %g s over %zu", mean_len,
                  bursts);
    for (int a = 0; a < 3; a++) {
        double s = sqrt(b2[a] / (double)bursts);
        ck_assert_msg(fabs(s - sg[a]) < 5 * sg[a] / sqrt(2.0 * (double)bursts), "axis %d bias std %g", a, s);
    }
    /* Same seed in one block: bit-identical. */
    run_buf c;
    buf_init(&c, n, 0.0, dt);
    run_blocks(&p, &c, 6, 0.0, NULL, 0);
    ck_assert(memcmp(b.enu, c.enu, 3 * n * sizeof *b.enu) == 0);
    buf_free(&b);
    buf_free(&c);
}
END_TEST

/* One noise-free epoch at ENU position enu from the origin; returns lla. */
static void lla_of(const double origin[3], const double enu[3], double lla[3])
{
    sensim_gnss_params p = sensim_gnss_default_params();
    memcpy(p.origin_lla, origin, sizeof p.origin_lla);
    sensim_gnss *g = sensim_gnss_create(&p, 1, 1);
    ck_assert_msg(g != NULL, "%s", sensim_last_error());
    sensim_gnss_state st;
    sensim_gnss_reset(g, &st, 0.0);
    double t = 0.0;
    sensim_gnss_out o;
    memset(&o, 0, sizeof o);
    o.lla = lla;
    ck_assert_uint_eq(sensim_gnss_apply(g, &st, 1, &t, enu, NULL, &o), 1);
    sensim_gnss_destroy(g);
}

START_TEST(lla_on_wgs84_not_sphere)
{
    /* At the equator and prime meridian, 1000 m east is ECEF (a, 1000, 0). */
    double o[3] = {0, 0, 0}, enu[3] = {1000, 0, 0}, lla[3];
    lla_of(o, enu, lla);
    ck_assert_within(lla[0], 0.0, 1e-12);
    ck_assert_within(lla[1], atan2(1000.0, 6378137.0) * 180 / M_PI, 1e-12);
    ck_assert_within(lla[2], hypot(6378137.0, 1000.0) - 6378137.0, 1e-6);
    /* 1000 m north at 43.07 deg spans 1000 / (M + h) rad of latitude, M the
     * meridian radius of curvature of the ellipsoid (Chrono's sphere of
     * 6371 km would be off by about 1 m). */
    double o2[3] = {43.0731, -89.4012, 260.0}, n1[3] = {0, 1000, 0};
    lla_of(o2, n1, lla);
    double e2 = (1 / 298.257223563) * (2 - 1 / 298.257223563), s = sin(o2[0] * M_PI / 180);
    double M = 6378137.0 * (1 - e2) / pow(1 - e2 * s * s, 1.5);
    ck_assert_within((lla[0] - o2[0]) * M_PI / 180 * (M + 260.0), 1000.0, 0.01);
    ck_assert_within(lla[1], o2[1], 1e-12);
    /* Up is along the ellipsoid normal: latitude unchanged. */
    double up[3] = {0, 0, 5000};
    lla_of(o2, up, lla);
    ck_assert_within(lla[0], o2[0], 1e-11);
    ck_assert_within(lla[2], 5260.0, 1e-6);
}
END_TEST

START_TEST(same_seed_any_block_size)
{
    const size_t n = 12000;
    run_buf a, b;
    buf_init(&a, n, 1.0, 0.1);
    buf_init(&b, n, 1.0, 0.1);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.origin_lla[0] = 43.0731, p.origin_lla[1] = -89.4012, p.origin_lla[2] = 260.0;
    p.gauss_on = 1, p.gauss_sigma[0] = p.gauss_sigma[1] = p.gauss_sigma[2] = 0.03;
    p.rw_on = 1, p.rw_sigma = 0.047, p.rw_max_velocity = 0.016, p.rw_max_acceleration = 0.152;
    p.gm_on = 1, p.gm_sigma[0] = p.gm_sigma[1] = p.gm_sigma[2] = 0.3;
    p.hdop_on = 1, p.cov_model = SENSIM_GNSS_COV_SCALED;
    p.vel_sigma[0] = p.vel_sigma[1] = p.vel_sigma[2] = 0.05;
    p.outage_rate = 0.02, p.outage_mean_duration = 3;
    p.outlier_probability = 0.01, p.outlier_magnitude = 4;
    p.start_delay = 1.5, p.latency = 0.05;
    size_t ma = run_blocks(&p, &a, 123, 0.5, NULL, 0);
    const size_t sizes[] = {1, 7, 333, 2, 4096, 13};
    size_t mb = run_blocks(&p, &b, 123, 0.5, sizes, 6);
    ck_assert_uint_eq(ma, mb);
    ck_assert(ma < n && ma > n / 2);
    ck_assert(memcmp(a.ot, b.ot, ma * sizeof(double)) == 0);
    ck_assert(memcmp(a.lla, b.lla, 3 * ma * sizeof(double)) == 0);
    ck_assert(memcmp(a.enu, b.enu, 3 * ma * sizeof(double)) == 0);
    ck_assert(memcmp(a.ovel, b.ovel, 3 * ma * sizeof(double)) == 0);
    ck_assert(memcmp(a.hdop, b.hdop, ma * sizeof(double)) == 0);
    ck_assert(memcmp(a.cov, b.cov, 9 * ma * sizeof(double)) == 0);
    ck_assert(memcmp(a.fix, b.fix, ma) == 0);
    buf_free(&a);
    buf_free(&b);
}
END_TEST

START_TEST(bad_params_named)
{
    sensim_gnss_params p = sensim_gnss_default_params();
    p.gauss_on = 1;
    p.gauss_sigma[1] = -1;
    ck_assert_ptr_null(sensim_gnss_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "gaussian sigma"));
    p = sensim_gnss_default_params();
    p.gm_on = 1;
    p.gm_sigma[0] = 1;
    p.gm_tau[2] = 0;
    ck_assert_ptr_null(sensim_gnss_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "tau"));
    p = sensim_gnss_default_params();
    p.outlier_probability = 1.5;
    ck_assert_ptr_null(sensim_gnss_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "outlier probability"));
    p = sensim_gnss_default_params();
    p.n_outage_windows = 1;
    p.outage_windows[0][0] = 4, p.outage_windows[0][1] = 3;
    ck_assert_ptr_null(sensim_gnss_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "outage window 0"));
    sensim_gnss_destroy(NULL);
}
END_TEST

/* Parses sensors[0] of a rig text; returns the status, params in *p. */
static sensim_status parse_rig(const char *text, sensim_gnss_params *p)
{
    sensim_yaml *doc = sensim_yaml_load_string(text, strlen(text), "rig.yaml");
    ck_assert_msg(doc != NULL, "%s", sensim_last_error());
    const sensim_ynode *sensors = sensim_ynode_get(sensim_yaml_root(doc), "sensors");
    *p = sensim_gnss_default_params();
    sensim_status st = sensim_gnss_params_from_yaml(sensim_ynode_item(sensors, 0), p);
    sensim_yaml_free(doc);
    return st;
}

START_TEST(yaml_forms_load)
{
    sensim_gnss_params p;
    ck_assert_int_eq(parse_rig("sensors:\n"
                               "  - name: gps\n"
                               "    type: gnss\n"
                               "    fix_noise: { rtk_fixed: [0.01, 0.01, 0.02], rtk_float: 0.3, 3d: 2, 2d: 5 }\n"
                               "    rtk: { mean_fixed: 5 min, mean_float: 20 s }\n"
                               "    multipath: { rate: 0.01, mean_duration: 4, sigma: [1, 1, 2] }\n",
                               &p),
                     SENSIM_OK);
    ck_assert(p.fix_noise_on && p.fix_sigma[SENSIM_GNSS_FIX_RTK_FIXED][2] == 0.02 &&
              p.fix_sigma[SENSIM_GNSS_FIX_RTK_FLOAT][0] == 0.3 && p.fix_sigma[SENSIM_GNSS_FIX_3D][1] == 2 &&
              p.fix_sigma[SENSIM_GNSS_FIX_2D][2] == 5 && p.fix_sigma[SENSIM_GNSS_FIX_NONE][0] == 0);
    ck_assert(p.rtk_on && p.rtk_mean_fixed == 300 && p.rtk_mean_float == 20);
    ck_assert(p.multipath_rate == 0.01 && p.multipath_mean_duration == 4 && p.multipath_sigma[2] == 2);

    ck_assert_int_eq(parse_rig("seed: 3\n"
                               "sensors:\n"
                               "  - name: gps\n"
                               "    type: gnss\n"
                               "    rate_hz: 10\n"
                               "    origin_lla: [43.0731, -89.4012, 260.0]\n"
                               "    position_noise: { model: gaussian, sigma: 0.5 }\n",
                               &p),
                     SENSIM_OK);
    ck_assert(p.gauss_on && !p.rw_on && !p.gm_on && !p.hdop_on);
    ck_assert(p.gauss_sigma[0] == 0.5 && p.gauss_sigma[2] == 0.5);
    ck_assert(p.origin_lla[0] == 43.0731 && p.origin_lla[1] == -89.4012 && p.origin_lla[2] == 260.0);

    ck_assert_int_eq(parse_rig("sensors:\n"
                               "  - name: gps\n"
                               "    type: gnss\n"
                               "    position_noise: { model: chrono_random_walk, sigma: 0.047, model_rate_hz: 100,\n"
                               "                      max_velocity: 0.016, max_acceleration: 0.152, max_error: 1 }\n",
                               &p),
                     SENSIM_OK);
    ck_assert(p.rw_on && p.rw_sigma == 0.047 && p.rw_model_rate_hz == 100 && p.rw_max_velocity == 0.016 &&
              p.rw_max_acceleration == 0.152 && p.rw_max_error == 1);

    ck_assert_int_eq(parse_rig("sensors:\n"
                               "  - name: gps\n"
                               "    type: gnss\n"
                               "    position_noise:\n"
                               "      - { model: gauss_markov, sigma: [0.4, 0.4, 0.9], tau: \"2 min\" }\n"
                               "      - { model: gaussian, sigma: \"3 cm\" }\n"
                               "    hdop: { initial: 100, final: 0.85, tau: 12.4 }\n"
                               "    covariance: { model: nmea, quality: rtk_fixed }\n"
                               "    velocity_noise: { sigma: 0.05 }\n"
                               "    outages: { windows: [[10, 15], [30, 31]], rate: 0.001, mean_duration: 5 }\n"
                               "    outliers: { probability: 0.01, magnitude: 5 }\n",
                               &p),
                     SENSIM_OK);
    ck_assert(p.gm_on && p.gm_sigma[2] == 0.9 && p.gm_tau[1] == 120.0);
    ck_assert(p.gauss_on && fabs(p.gauss_sigma[0] - 0.03) < 1e-15);
    ck_assert(p.hdop_on && p.eph_final == 0.85 && p.eph_tau == 12.4 && p.epv_tau == 12.4 && p.eph_initial == 100);
    ck_assert(p.cov_model == SENSIM_GNSS_COV_NMEA && p.cov_epe == 0.02);
    ck_assert(p.vel_sigma[1] == 0.05);
    ck_assert(p.n_outage_windows == 2 && p.outage_windows[1][0] == 30 && p.outage_rate == 0.001);
    ck_assert(p.outlier_probability == 0.01 && p.outlier_magnitude == 5);
    sensim_gnss *g = sensim_gnss_create(&p, 1, 1);
    ck_assert_ptr_nonnull(g);
    sensim_gnss_destroy(g);
}
END_TEST

static void expect_error(const char *text, const char *what1, const char *what2)
{
    sensim_gnss_params p;
    ck_assert_int_ne(parse_rig(text, &p), SENSIM_OK);
    const char *msg = sensim_last_error();
    ck_assert_msg(strstr(msg, what1) && strstr(msg, what2), "message '%s' lacks '%s' or '%s'", msg, what1, what2);
}

START_TEST(yaml_bad_values_named)
{
    expect_error("sensors:\n"
                 "  - name: gps\n"
                 "    type: gnss\n"
                 "    multipath: { rate: 0, mean_duration: 5, sigma: 1 }\n",
                 "rig.yaml:4:", "key 'rate': must be > 0");
    expect_error("sensors:\n"
                 "  - name: gps\n"
                 "    type: gnss\n"
                 "    rtk: { mean_fixed: 30 }\n",
                 "rig.yaml:4:", "missing key 'mean_float'");
    expect_error("sensors:\n"
                 "  - name: gps\n"
                 "    type: gnss\n"
                 "    fix_noise: { rtk_fixed: 0.01, rtk_fix: 0.3 }\n",
                 "rig.yaml:4:", "unknown key 'rtk_fix'");
    expect_error("sensors:\n"
                 "  - name: gps\n"
                 "    type: gnss\n"
                 "    fix_noise: { 2d: [1, -2, 3] }\n",
                 "rig.yaml:4:", "2d");
    expect_error("sensors:\n"
                 "  - name: gps\n"
                 "    type: gnss\n"
                 "    position_noise: { model: gaussian, sigma: -0.5 }\n",
                 "rig.yaml:4:", "key 'sigma': must be >= 0");
    expect_error("sensors:\n"
                 "  - name: gps\n"
                 "    type: gnss\n"
                 "    rate_hz: 10\n"
                 "    position_noise: { model: gauss_markov, sigma: 1, tau: 0 }\n",
                 "rig.yaml:5:", "key 'tau': must be > 0");
    expect_error("sensors:\n"
                 "  - name: gps\n"
                 "    type: gnss\n"
                 "    hdop: { initial: 100, final: 0.85, tau: 0 }\n",
                 "rig.yaml:4:", "key 'tau': must be > 0");
    expect_error("sensors:\n"
                 "  - name: gps\n"
                 "    type: gnss\n"
                 "\n"
                 "    position_noise: { model: gausian, sigma: 1 }\n",
                 "rig.yaml:5:", "unknown position noise model 'gausian'");
    expect_error("sensors:\n"
                 "  - name: gps\n"
                 "    type: gnss\n"
                 "    position_noise: { model: gaussian, sigmaa: 1 }\n",
                 "rig.yaml:4:", "unknown key 'sigmaa'");
    expect_error("sensors:\n"
                 "  - name: gps\n"
                 "    type: gnss\n"
                 "    covariance: { model: nmea, quality: rtk }\n"
                 "    hdop: {}\n",
                 "rig.yaml:4:", "unknown fix quality 'rtk'");
    expect_error("sensors:\n"
                 "  - name: gps\n"
                 "    type: gnss\n"
                 "    outages: { windows: [[5, 3]] }\n",
                 "rig.yaml:4:", "end > start");
    expect_error("sensors:\n"
                 "  - name: gps\n"
                 "    type: gnss\n"
                 "    position_noise: { model: gaussian, sigma: \"2 deg\" }\n",
                 "rig.yaml:4:", "key 'sigma'");
}
END_TEST

/* End to end through the rig: a circle at 2 m/s for 60 s (ground truth at
 * 100 Hz) into a GNSS at 10 Hz with the AirSim HDOP and an outage window,
 * an odometer and an encoder. */
START_TEST(rig_inject_gnss_odometer_encoder)
{
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5"), *outp = tu_path(dir, "out.h5");
    sensim_trajectory_params tp = sensim_trajectory_default_params();
    tp.shape = SENSIM_TRAJ_CIRCLE, tp.speed = 2.0, tp.radius = 10.0;
    sensim_trajectory *tr = sensim_trajectory_create(&tp);
    ck_assert_msg(tr != NULL, "%s", sensim_last_error());
    sensim_gt_block blk;
    ck_assert_int_eq(sensim_gt_block_init(&blk, 6001), SENSIM_OK);
    ck_assert_int_eq(sensim_trajectory_fill(tr, 0.0, 100.0, 0, 6001, &blk), SENSIM_OK);
    sensim_log *lg = sensim_log_create(gt, "test");
    double origin[3] = {43.0731, -89.4012, 260.0};
    sensim_gt_writer *w = sensim_gt_writer_create(lg, origin);
    ck_assert_int_eq(sensim_gt_writer_append(w, &blk), SENSIM_OK);
    sensim_gt_writer_close(w);
    ck_assert_int_eq(sensim_log_commit(lg), SENSIM_OK);
    const char *rig_text = "seed: 3\n"
                           "sensors:\n"
                           "  - name: gps\n"
                           "    type: gnss\n"
                           "    rate_hz: 10\n"
                           "    timing: { lag: 0.05, start_delay: 1.0 }\n"
                           "    position_noise: { model: gaussian, sigma: 0.5 }\n"
                           "    hdop: { initial: 100, final: 0.85, tau: 12.4 }\n"
                           "    covariance: { model: scaled, scale: 0.02 }\n"
                           "    outages: { windows: [[20, 25]] }\n"
                           "  - name: odo\n"
                           "    type: odometer\n"
                           "    rate_hz: 50\n"
                           "    wheel_radius: 0.3\n"
                           "    pulses_per_rev: 1024\n"
                           "  - name: enc\n"
                           "    type: encoder\n"
                           "    rate_hz: 100\n"
                           "    source: heading\n"
                           "    resolution: \"0.1 deg\"\n";
    sensim_rig *rig = sensim_rig_load_string(rig_text, "rig.yaml");
    ck_assert_msg(rig != NULL, "%s", sensim_last_error());
    sensim_inject_opts o = {rig->seed, 1, 1000, NULL, NULL};
    ck_assert_msg(sensim_rig_inject(rig, &o, gt, outp) == SENSIM_OK, "%s", sensim_last_error());
    sensim_log *in = sensim_log_open(outp);
    ck_assert_ptr_nonnull(in);
    int rank;
    size_t dims[4];
    ck_assert_int_eq(sensim_log_shape(in, "/sensors/gps/lla", &rank, dims), SENSIM_OK);
    /* Epochs 10..600 minus the 50 in [20, 25). */
    size_t n = dims[0];
    ck_assert_uint_eq(n, 591 - 50);
    double *t = malloc(n * sizeof *t), *h = malloc(n * sizeof *h), *lla = malloc(3 * n * sizeof *lla);
    ck_assert_int_eq(sensim_log_read_f64(in, "/sensors/gps/t", 0, n, t), SENSIM_OK);
    ck_assert_int_eq(sensim_log_read_f64(in, "/sensors/gps/hdop", 0, n, h), SENSIM_OK);
    ck_assert_int_eq(sensim_log_read_f64(in, "/sensors/gps/lla", 0, n, lla), SENSIM_OK);
    for (size_t i = 0; i < n; i++) {
        double ts = t[i] - 0.05;
        ck_assert(!(ts >= 20.0 - 1e-9 && ts < 25.0 - 1e-9) && ts >= 1.0 - 1e-9);
        ck_assert_within(h[i], 0.85 + 99.15 * exp(-ts / 12.4), 1e-9);
        ck_assert_within(lla[3 * i], 43.0731, 1e-3);
    }
    ck_assert_int_eq(sensim_log_shape(in, "/sensors/odo/distance", &rank, dims), SENSIM_OK);
    ck_assert_uint_eq(dims[0], 3001);
    double dlast;
    ck_assert_int_eq(sensim_log_read_f64(in, "/sensors/odo/distance", 3000, 1, &dlast), SENSIM_OK);
    ck_assert_within(dlast, 120.0, 2 * M_PI * 0.3 / 1024 + 1e-6);
    ck_assert_int_eq(sensim_log_shape(in, "/sensors/enc/speed", &rank, dims), SENSIM_OK);
    double sp[100];
    ck_assert_int_eq(sensim_log_read_f64(in, "/sensors/enc/speed", 5000, 100, sp), SENSIM_OK);
    /* Yaw rate 2/10 rad/s crosses 0.1 deg bins every 8.7 ms: each 10 ms
     * sample sees 1 or 2 new bins, so the speed is 1 or 2 bins / 10 ms and
     * its mean over 1 s is 0.2 rad/s to within a bin per second. */
    double mean = 0, bin = 0.1 * M_PI / 180;
    for (int i = 0; i < 100; i++) {
        double nb = sp[i] * 0.01 / bin;
        ck_assert_within(nb, round(nb), 1e-6);
        mean += sp[i] / 100;
    }
    ck_assert_within(mean, 0.2, 2 * bin);
    sensim_log_close(in);
    free(t), free(h), free(lla);
    sensim_rig_free(rig);
    sensim_trajectory_destroy(tr);
    sensim_gt_block_free(&blk);
    tu_rmtree(dir);
    free(dir), free(gt), free(outp);
}
END_TEST

START_TEST(presets_load)
{
    const char *names[] = {"data/gnss-chrono-gauss.yaml", "data/gnss-chrono-rw.yaml", "data/gnss-airsim.yaml",
                           "data/gnss-zed-f9p.yaml", "data/gnss-standalone.yaml"};
    for (int i = 0; i < 5; i++) {
        char *path = tu_src(names[i]);
        sensim_rig *rig = sensim_rig_load(path);
        ck_assert_msg(rig != NULL, "%s: %s", names[i], sensim_last_error());
        ck_assert_uint_eq(rig->nsensors, 1);
        sensim_rig_free(rig);
        free(path);
    }
}
END_TEST

/* The first fix's latitude and longitude of /sensors/gps/lla in a log. */
static void first_fix(const char *path, double lla[3])
{
    sensim_log *log = sensim_log_open(path);
    ck_assert_msg(log != NULL, "%s", sensim_last_error());
    ck_assert_int_eq(sensim_log_read_f64(log, "/sensors/gps/lla", 0, 1, lla), SENSIM_OK);
    sensim_log_close(log);
}

START_TEST(presets_keep_ground_truth_origin)
{
    /* A preset describes a receiver, not a place: every bundled GNSS preset
     * on a trajectory made at Paris reports fixes at Paris (within 1 km,
     * 0.01 deg, of the origin; the worst preset noise is metres), where
     * they used to be moved 7000 km to Madison. A rig origin different from
     * the ground truth's is refused unless the rig says it overrides it. */
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5"), *out = tu_path(dir, "out.h5"), *rig = tu_path(dir, "r.yaml");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "6", "--rate", "20", "--origin",
                             "48.8566,2.3522,35", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    const char *names[] = {"data/gnss-chrono-gauss.yaml", "data/gnss-chrono-rw.yaml", "data/gnss-airsim.yaml",
                           "data/gnss-zed-f9p.yaml", "data/gnss-standalone.yaml", "data/gnss-chrono-gauss-airsim.yaml",
                           "data/gnss-chrono-rw-airsim.yaml"};
    for (int i = 0; i < 7; i++) {
        char *path = tu_src(names[i]);
        r = tu_run("inject", path, gt, "-o", out, NULL);
        ck_assert_msg(r.status == 0, "%s: %s", names[i], r.err);
        tu_run_free(&r);
        double lla[3];
        first_fix(out, lla);
        ck_assert_msg(fabs(lla[0] - 48.8566) < 0.01 && fabs(lla[1] - 2.3522) < 0.01, "%s: first fix at %.5f, %.5f",
                      names[i], lla[0], lla[1]);
        free(path);
    }
    const char *madison = "sensors:\n  - name: gps\n    type: gnss\n    rate_hz: 5\n"
                          "    origin_lla: [43.0731, -89.4012, 260]\n"
                          "    position_noise: { model: gaussian, sigma: 1.0 }\n";
    ck_assert_int_eq(tu_write_file(rig, madison), 0);
    r = tu_run("inject", rig, gt, "-o", out, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "r.yaml:5") && strstr(r.err, "origin_override") && strstr(r.err, "48.8566") &&
                      strstr(r.err, "gt.h5"),
                  "%s", r.err);
    tu_run_free(&r);
    char text[512];
    snprintf(text, sizeof text, "%s    origin_override: true\n", madison);
    ck_assert_int_eq(tu_write_file(rig, text), 0);
    r = tu_run("inject", rig, gt, "-o", out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    double lla[3];
    first_fix(out, lla);
    ck_assert(fabs(lla[0] - 43.0731) < 0.01 && fabs(lla[1] + 89.4012) < 0.01);
    /* The ground truth's own origin written out passes without the flag. */
    ck_assert_int_eq(tu_write_file(rig, "sensors:\n  - name: gps\n    type: gnss\n    rate_hz: 5\n"
                                        "    origin_lla: [48.8566, 2.3522, 35]\n"),
                     0);
    r = tu_run("inject", rig, gt, "-o", out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    ck_assert_int_eq(tu_write_file(rig, "sensors:\n  - name: gps\n    type: gnss\n    rate_hz: 5\n"
                                        "    origin_override: true\n"),
                     0);
    r = tu_run("inject", rig, gt, "-o", out, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "r.yaml:5") && strstr(r.err, "origin_lla"), "%s", r.err);
    tu_run_free(&r);
    tu_rmtree(dir);
    free(dir), free(gt), free(out), free(rig);
}
END_TEST

Suite *suite_gnss(void)
{
    Suite *s = suite_create("gnss");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, gaussian_sigma_in_metres);
    tcase_add_test(tc, gauss_markov_variance_and_correlation);
    tcase_add_test(tc, hdop_curve_fix_and_covariance);
    tcase_add_test(tc, chrono_random_walk_semantics_and_bounds);
    tcase_add_test(tc, outages_start_delay_latency);
    tcase_add_test(tc, outlier_rate_binomial);
    tcase_add_test(tc, fix_noise_per_type_and_rtk);
    tcase_add_test(tc, nmea_covariance_per_fix_quality);
    tcase_add_test(tc, multipath_bursts_telegraph);
    tcase_add_test(tc, lla_on_wgs84_not_sphere);
    tcase_add_test(tc, same_seed_any_block_size);
    tcase_add_test(tc, bad_params_named);
    tcase_add_test(tc, yaml_forms_load);
    tcase_add_test(tc, yaml_bad_values_named);
    tcase_add_test(tc, rig_inject_gnss_odometer_encoder);
    tcase_add_test(tc, presets_load);
    tcase_add_test(tc, presets_keep_ground_truth_origin);
    suite_add_tcase(s, tc);
    return s;
}
