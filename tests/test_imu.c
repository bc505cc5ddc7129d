/* Triaxial pipeline against closed forms. Tolerances are 5 standard errors
 * of the estimator at the sample size used (stated per test), so a correct
 * model fails with probability below 1e-6 per check. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/imu.h"
#include "testutil.h"

/* Runs n samples at `rate` of zero input through a model; returns y[n*3]. */
static double *run(const sensim_triax_params *p, sensim_instrument kind, double rate, size_t n, uint64_t seed,
                   size_t block)
{
    sensim_triax *m = sensim_triax_create(p, kind, rate, seed, 77, "test");
    ck_assert_msg(m != NULL, "%s", sensim_last_error());
    double *t = malloc(n * sizeof *t), *y = calloc(3 * n, sizeof *y);
    for (size_t k = 0; k < n; k++)
        t[k] = (double)k / rate;
    sensim_triax_state s;
    sensim_triax_reset(m, &s);
    for (size_t k0 = 0; k0 < n; k0 += block) {
        size_t c = n - k0 < block ? n - k0 : block;
        sensim_triax_apply(m, &s, c, t + k0, y + 3 * k0, NULL, y + 3 * k0);
    }
    free(t);
    sensim_triax_destroy(m);
    return y;
}

START_TEST(white_noise_sigma_and_rate_scaling)
{
    /* sigma_d = N sqrt(rate). n = 2e5 per axis: SE(var)/var = sqrt(2/n) =
     * 0.32%, so 5 SE = 1.6% on the variance. */
    const size_t n = 200000;
    double rates[] = {100.0, 1600.0};
    for (int r = 0; r < 2; r++) {
        sensim_triax_params p = sensim_triax_default_params();
        for (int a = 0; a < 3; a++)
            p.noise_density[a] = 1.0e-3;
        double *y = run(&p, SENSIM_GYRO, rates[r], n, 1, 65536);
        double expect = 1e-6 * rates[r];
        for (int a = 0; a < 3; a++) {
            ck_assert_within(tu_var(y + a, n, 3) / expect, 1.0, 5 * sqrt(2.0 / n));
            ck_assert_within(tu_mean(y + a, n, 3), 0.0, 5 * sqrt(expect / n));
            ck_assert_within(tu_acf1(y + a, n, 3), 0.0, 5 / sqrt(n));
        }
        free(y);
    }
}
END_TEST

START_TEST(random_walk_variance_growth)
{
    /* K at 100 Hz: Var(b_k) = K^2 k dt. Over R = 4000 independent seeds,
     * SE(var)/var = sqrt(2/R) = 2.2%: tolerance 5 SE = 11%. */
    const int R = 4000;
    const size_t n = 101;
    sensim_triax_params p = sensim_triax_default_params();
    p.random_walk[0] = 2e-3;
    double *last = malloc(R * sizeof *last), *mid = malloc(R * sizeof *mid);
    for (int r = 0; r < R; r++) {
        double *y = run(&p, SENSIM_GYRO, 100.0, n, 1000 + (uint64_t)r, n);
        last[r] = y[3 * 100];
        mid[r] = y[3 * 25];
        free(y);
    }
    double tol = 5 * sqrt(2.0 / R);
    ck_assert_within(tu_var(last, R, 1) / (4e-6 * 100 * 0.01), 1.0, tol);
    ck_assert_within(tu_var(mid, R, 1) / (4e-6 * 25 * 0.01), 1.0, tol);
    free(last);
    free(mid);
}
END_TEST

START_TEST(gauss_markov_variance_and_correlation)
{
    /* sigma 0.01, tau 0.05 s at 400 Hz: phi = exp(-0.125) = 0.8825.
     * n = 1e6; for AR(1) the variance estimate has SE ~ var sqrt(2 (1+phi^2)
     * / (n (1-phi^2))) = 0.44% (tolerance 5 SE = 2.2%); lag-1 correlation SE
     * ~ sqrt((1 - phi^2)/n) = 4.7e-4. */
    const size_t n = 1000000;
    sensim_triax_params p = sensim_triax_default_params();
    p.gm_sigma[1] = 0.01;
    p.gm_tau[1] = 0.05;
    double *y = run(&p, SENSIM_ACCEL, 400.0, n, 3, 65536);
    double phi = exp(-0.0025 / 0.05);
    ck_assert_within(tu_var(y + 1, n, 3) / 1e-4, 1.0, 5 * sqrt(2 * (1 + phi * phi) / (n * (1 - phi * phi))));
    ck_assert_within(tu_acf1(y + 1, n, 3), phi, 5 * sqrt((1 - phi * phi) / n));
    /* Axis 0 had nothing: exactly zero. */
    ck_assert_double_eq(tu_var(y, n, 3), 0.0);
    free(y);
}
END_TEST

/* Allan variance with a tolerance from its equivalent degrees of freedom:
 * for M = n/m non-overlapping clusters, EDF ~ M - 1 for white-like noise and
 * fewer for random walk; we use SE(avar)/avar ~ sqrt(2/(M-1)) (white) and a
 * wider bound for random walk (Lesage & Audoin: EDF ~ (M-1)... scaled by
 * 0.77 for RW). 5 SE. */
START_TEST(allan_white_random_walk_ramp_ar1)
{
    const size_t n = 1 << 20;
    const double rate = 100.0, dt = 1.0 / rate;
    /* White: avar = s^2 / m. */
    sensim_triax_params p = sensim_triax_default_params();
    p.noise_sigma[0] = 0.5;
    /* Random walk on axis 1: per-step std w = K sqrt(dt); avar = (2m^2+1) w^2 / (6m). */
    p.random_walk[1] = 1e-2;
    /* Ramp on axis 2: avar = (R m dt)^2 / 2, exactly. */
    p.rate_ramp[2] = 3e-3;
    double *y = run(&p, SENSIM_GYRO, rate, n, 5, 100000);
    size_t ms[] = {1, 16, 256};
    for (int i = 0; i < 3; i++) {
        size_t m = ms[i], M = n / m;
        double *ax = malloc(n * sizeof *ax);
        for (int a = 0; a < 3; a++) {
            for (size_t k = 0; k < n; k++)
                ax[k] = y[3 * k + a];
            double av = tu_avar(ax, n, m);
            if (a == 0)
                ck_assert_within(av / (0.25 / m), 1.0, 5 * sqrt(2.0 / (M - 1)));
            else if (a == 1) {
                double ws = 1e-2 * sqrt(dt);
                double expect = (2.0 * m * m + 1) * ws * ws / (6.0 * m);
                ck_assert_within(av / expect, 1.0, 5 * sqrt(2.0 / (0.77 * (M - 1))));
            } else
                ck_assert_within(av / (pow(3e-3 * m * dt, 2) / 2), 1.0, 1e-6);
        }
        free(ax);
    }
    free(y);

    /* AR(1) (Gauss-Markov) against MODELS.md's closed form with innovation
     * variance s^2 = sigma^2 (1 - phi^2). */
    sensim_triax_params g = sensim_triax_default_params();
    g.gm_sigma[0] = 1.0;
    g.gm_tau[0] = 0.1;
    y = run(&g, SENSIM_GYRO, rate, n, 6, 65536);
    double phi = exp(-dt / 0.1), s2 = 1 - phi * phi;
    double *ax = malloc(n * sizeof *ax);
    for (size_t k = 0; k < n; k++)
        ax[k] = y[3 * k];
    size_t gms[] = {4, 32, 128};
    for (int i = 0; i < 3; i++) {
        double m = (double)gms[i];
        double expect = s2 * (m - 3 * phi - m * phi * phi + 4 * pow(phi, m + 1) - pow(phi, 2 * m + 1)) /
                        (m * m * (1 - phi) * (1 - phi) * (1 - phi * phi));
        size_t M = n / gms[i];
        ck_assert_within(tu_avar(ax, n, gms[i]) / expect, 1.0, 5 * sqrt(2.0 / (0.5 * (M - 1))));
    }
    free(ax);
    free(y);
}
END_TEST

START_TEST(bias_instability_flat_floor)
{
    /* B = 1e-4 over [1, 100] s at 20 Hz: ADEV ~ 0.664 B across the span.
     * 2^21 samples (29 h); at tau = 10 s, M = 10485 clusters. The sum of GM
     * terms matches the flat floor to within a few percent; the statistical
     * tolerance (5 SE, EDF ~ M/2 for flicker-like noise) is added. */
    const size_t n = 1 << 21;
    const double rate = 20.0;
    sensim_triax_params p = sensim_triax_default_params();
    p.bias_instability[0] = 1e-4;
    p.bi_tau_min = 1.0;
    p.bi_tau_max = 100.0;
    p.bi_terms = 5;
    double *y = run(&p, SENSIM_GYRO, rate, n, 8, 65536);
    double *ax = malloc(n * sizeof *ax);
    for (size_t k = 0; k < n; k++)
        ax[k] = y[3 * k];
    double floor_var = 2 * M_LN2 / M_PI * 1e-8;
    double taus[] = {2.0, 10.0, 50.0};
    for (int i = 0; i < 3; i++) {
        size_t m = (size_t)(taus[i] * rate), M = n / m;
        double ratio = tu_avar(ax, n, m) / floor_var;
        ck_assert_within(ratio, 1.0, 0.06 + 5 * sqrt(2.0 / (0.5 * M)));
    }
    free(ax);
    free(y);
}
END_TEST

START_TEST(quantization_clamp_scale_cross_axis)
{
    const size_t n = 100000;
    sensim_triax_params p = sensim_triax_default_params();
    for (int a = 0; a < 3; a++) {
        p.noise_sigma[a] = 1.0;
        p.quantization[a] = 0.25;
        p.range[a] = 2.0;
    }
    double *y = run(&p, SENSIM_GYRO, 100, n, 9, 4096);
    size_t clipped = 0;
    for (size_t k = 0; k < 3 * n; k++) {
        ck_assert(fabs(y[k]) <= 2.0);
        clipped += fabs(y[k]) == 2.0;
    }
    /* Sample k is x + q T, T = e_k - e_{k-1} triangular on +-1 (the
     * difference of two readout errors, independent of x): clipped when
     * x >= 2 - q T, p = 2 E[Phi(-(2 - 0.25 T))] (Simpson over 200
     * intervals of the triangular density); binomial SE over 3n draws. */
    double pc = 0;
    for (int i = 0; i <= 200; i++) {
        double T = -1 + 2.0 * i / 200, w = (i == 0 || i == 200 ? 1 : i % 2 ? 4 : 2) * (1 - fabs(T));
        pc += w * 2 * 0.5 * erfc((2 - 0.25 * T) / sqrt(2.0));
    }
    pc *= 2.0 / 200 / 3;
    ck_assert_within((double)clipped / (3 * n), pc, 5 * sqrt(pc * (1 - pc) / (3 * n)));
    free(y);

    /* IEEE 952 angle quantization: the running sum of the output stays
     * within q/2 of the running sum of the input (the integral is read to
     * +-S/2), and each sample's error q (e_k - e_{k-1}) is a difference of
     * two independent uniform reading errors: variance q^2/6, |err| <= q. */
    sensim_triax_params q = sensim_triax_default_params();
    q.quantization[0] = 0.1;
    sensim_triax *m = sensim_triax_create(&q, SENSIM_GYRO, 100, 1, 1, "test");
    double *t = malloc(n * sizeof *t), *u = malloc(3 * n * sizeof *u), *out = malloc(3 * n * sizeof *out);
    sensim_rng r = sensim_rng_make(1, 1, 1);
    for (size_t k = 0; k < n; k++) {
        t[k] = k * 0.01;
        u[3 * k] = 10 * sensim_rng_uniform(&r, k);
        u[3 * k + 1] = u[3 * k + 2] = 0;
    }
    sensim_triax_state s;
    sensim_triax_reset(m, &s);
    sensim_triax_apply(m, &s, n, t, u, NULL, out);
    double *err = malloc(n * sizeof *err), sum = 0, emax = 0, smax = 0;
    for (size_t k = 0; k < n; k++) {
        err[k] = out[3 * k] - u[3 * k];
        sum += err[k];
        emax = fmax(emax, fabs(err[k]));
        smax = fmax(smax, fabs(sum));
    }
    ck_assert_msg(emax <= 0.1 + 1e-9 && smax <= 0.05 + 1e-9, "largest error %g (<= q), integrated error %g (<= q/2)",
                  emax, smax);
    /* Var of a - b for a, b ~ U(-q/2, q/2): q^2/6; its fourth moment is
     * q^4/15 (triangular on +-q), so SE = sqrt((1/15 - 1/36) q^4 / n). */
    ck_assert_within(tu_var(err, n, 1), 0.01 / 6, 5 * sqrt((1.0 / 15 - 1.0 / 36) * 1e-4 / n));
    sensim_triax_destroy(m);

    /* Scale and cross-axis: y = C diag(1+s) u exactly. */
    sensim_triax_params c = sensim_triax_default_params();
    double C[3][3] = {{1, 0.01, -0.02}, {0.003, 1, 0.004}, {-0.005, 0.006, 1}};
    memcpy(c.cross_axis, C, sizeof C);
    c.scale[0] = 0.001;
    c.scale[1] = -0.002;
    c.scale[2] = 0.0005;
    m = sensim_triax_create(&c, SENSIM_ACCEL, 100, 1, 1, "test");
    double uu[3] = {1.5, -2.0, 9.81}, yy[3], tt = 0;
    sensim_triax_reset(m, &s);
    sensim_triax_apply(m, &s, 1, &tt, uu, NULL, yy);
    for (int a = 0; a < 3; a++) {
        double e = 0;
        for (int b = 0; b < 3; b++)
            e += C[a][b] * (1 + c.scale[b]) * uu[b];
        ck_assert_double_eq_tol(yy[a], e, 1e-14);
    }
    sensim_triax_destroy(m);
    free(t);
    free(u);
    free(out);
    free(err);
}
END_TEST

START_TEST(chrono_drift_semantics)
{
    /* Chrono: b += N(0, (b0 sqrt(dt_nom/t_b))^2) on every sample, the first
     * included, so Var(b_k) = (k+1) b0^2 dt_nom / t_b whatever tau says about
     * correlation. R = 4000 seeds, 5 SE = 11%. */
    const int R = 4000;
    sensim_triax_params p = sensim_triax_default_params();
    p.chrono_bias_drift[0] = 0.02;
    p.chrono_tau_drift[0] = 5.0;
    double *v = malloc(R * sizeof *v);
    for (int r = 0; r < R; r++) {
        double *y = run(&p, SENSIM_GYRO, 50.0, 50, 5000 + (uint64_t)r, 50);
        v[r] = y[3 * 49];
        free(y);
    }
    double expect = 50 * 0.02 * 0.02 * (0.02 / 5.0);
    ck_assert_within(tu_var(v, R, 1) / expect, 1.0, 5 * sqrt(2.0 / R));
    free(v);
}
END_TEST

START_TEST(turn_on_bias_constant_within_run)
{
    sensim_triax_params p = sensim_triax_default_params();
    p.turn_on_bias[2] = 0.1;
    p.bias[2] = 0.5;
    double *y = run(&p, SENSIM_GYRO, 100, 1000, 11, 333);
    for (size_t k = 1; k < 1000; k++)
        ck_assert_double_eq(y[3 * k + 2], y[2]);
    ck_assert(y[2] != 0.5);
    /* Across runs it varies with std 0.1 (R = 2000, 5 SE = 16%). */
    const int R = 2000;
    double *b = malloc(R * sizeof *b);
    for (int r = 0; r < R; r++) {
        double *z = run(&p, SENSIM_GYRO, 100, 1, (uint64_t)r, 1);
        b[r] = z[2];
        free(z);
    }
    ck_assert_within(tu_var(b, R, 1) / 0.01, 1.0, 5 * sqrt(2.0 / R));
    ck_assert_within(tu_mean(b, R, 1), 0.5, 5 * 0.1 / sqrt(R));
    free(b);
    free(y);
}
END_TEST

START_TEST(reproducible_any_block_and_threads)
{
    sensim_triax_params p = sensim_triax_default_params();
    for (int a = 0; a < 3; a++) {
        p.noise_density[a] = 1e-3;
        p.gm_sigma[a] = 1e-3;
        p.gm_tau[a] = 30;
        p.random_walk[a] = 1e-5;
        p.bias_instability[a] = 2e-5;
        p.turn_on_bias[a] = 1e-3;
        p.chrono_bias_drift[a] = 1e-3;
        p.chrono_tau_drift[a] = 100;
        p.airsim_bias_stability[a] = 1e-4;
        p.airsim_tau[a] = 500;
    }
    const size_t n = 20000;
    omp_set_num_threads(1);
    double *a = run(&p, SENSIM_GYRO, 400, n, 42, n);
    omp_set_num_threads(2);
    double *b = run(&p, SENSIM_GYRO, 400, n, 42, 4097);
    double *c = run(&p, SENSIM_GYRO, 400, n, 42, 7);
    double *d = run(&p, SENSIM_GYRO, 400, n, 43, n);
    ck_assert(memcmp(a, b, 3 * n * sizeof *a) == 0);
    ck_assert(memcmp(a, c, 3 * n * sizeof *a) == 0);
    ck_assert(memcmp(a, d, 3 * n * sizeof *a) != 0);
    free(a);
    free(b);
    free(c);
    free(d);
}
END_TEST

START_TEST(fused_pass_matches_formulas)
{
    /* White noise + Gauss-Markov + random walk with uniform steps take the
     * fused pass: it must equal the model's formulas evaluated one sample
     * at a time from sensim_rng_normal (streams (kind*16+effect)*4+axis,
     * effects white 0, turn-on 1, GM 2, RW 3, quantization 7), bit for bit. Axis 2 has no
     * Gauss-Markov term and axis 1 no random walk. */
    sensim_triax_params p = sensim_triax_default_params();
    for (int a = 0; a < 3; a++) {
        p.noise_density[a] = 1e-3 * (a + 1);
        p.gm_sigma[a] = a == 2 ? 0.0 : 2e-3;
        p.gm_tau[a] = 5.0 + a;
        p.random_walk[a] = a == 1 ? 0.0 : 3e-4;
        p.bias[a] = 0.01 * a;
        p.turn_on_bias[a] = 1e-3;
        p.quantization[a] = 1e-5;
        p.range[a] = 0.05;
    }
    const size_t n = 3000;
    const double rate = 250;
    omp_set_num_threads(2);
    double *y = run(&p, SENSIM_ACCEL, rate, n, 9, 1001);
    const double dt = 1.0 / rate;
    for (int a = 0; a < 3; a++) {
        sensim_rng rw_ = sensim_rng_make(9, 77, (uint32_t)((SENSIM_ACCEL * 16 + 0) * 4 + a));
        sensim_rng rt = sensim_rng_make(9, 77, (uint32_t)((SENSIM_ACCEL * 16 + 1) * 4 + a));
        sensim_rng rg = sensim_rng_make(9, 77, (uint32_t)((SENSIM_ACCEL * 16 + 2) * 4 + a));
        sensim_rng rr = sensim_rng_make(9, 77, (uint32_t)((SENSIM_ACCEL * 16 + 3) * 4 + a));
        const double ws = p.noise_density[a] * sqrt(rate), cb = p.bias[a] + p.turn_on_bias[a] * sensim_rng_normal(&rt, 0);
        const double phi = exp(-dt / p.gm_tau[a]), qg = p.gm_sigma[a] * sqrt(-expm1(-2.0 * dt / p.gm_tau[a]));
        const double step = p.random_walk[a] * sqrt(dt);
        sensim_rng rq = sensim_rng_make(9, 77, (uint32_t)(((4 + SENSIM_ACCEL) * 16 + 0) * 4 + a));
        double gm = p.gm_sigma[a] > 0 ? p.gm_sigma[a] * sensim_rng_normal(&rg, 0) : 0.0, w = 0.0;
        for (size_t k = 0; k < n; k++) {
            double acc = 0.0 + cb;
            if (k > 0 && p.gm_sigma[a] > 0)
                gm = phi * gm + qg * sensim_rng_normal(&rg, k);
            if (k > 0 && p.random_walk[a] > 0)
                w += step * sensim_rng_normal(&rr, k);
            if (p.gm_sigma[a] > 0)
                acc += gm;
            if (p.random_walk[a] > 0)
                acc += w;
            acc += ws * sensim_rng_normal(&rw_, k);
            /* Readout errors of the integral: effect 16, the first of the
             * second page of streams. */
            double e1 = sensim_rng_uniform(&rq, k), e0 = k ? sensim_rng_uniform(&rq, k - 1) : 0.5;
            acc += p.quantization[a] * (e1 - e0);
            acc = acc > p.range[a] ? p.range[a] : acc < -p.range[a] ? -p.range[a] : acc;
            ck_assert_msg(y[3 * k + a] == acc, "axis %d sample %zu: %.17g != %.17g", a, k, y[3 * k + a], acc);
        }
    }
    free(y);
}
END_TEST

/* Runs gyro, accelerometer and magnetometer through sensim_triax_apply_set
 * in blocks of `block`; y[i] gets instrument i's n*3 outputs. */
static void run_set(sensim_triax *const m[3], size_t n, double rate, size_t block, int count, double *y[3])
{
    double *t = malloc(n * sizeof *t);
    for (size_t k = 0; k < n; k++)
        t[k] = (double)k / rate;
    sensim_triax_state st[3], *sp[3] = {&st[0], &st[1], &st[2]};
    for (int i = 0; i < 3; i++) {
        sensim_triax_reset(m[i], &st[i]);
        for (size_t k = 0; k < 3 * n; k++)
            y[i][k] = 0.1 * i;
    }
    for (size_t k0 = 0; k0 < n; k0 += block) {
        size_t c = n - k0 < block ? n - k0 : block;
        const double *u[3] = {y[0] + 3 * k0, y[1] + 3 * k0, y[2] + 3 * k0};
        double *o[3] = {y[0] + 3 * k0, y[1] + 3 * k0, y[2] + 3 * k0};
        if (count == 1)
            for (int i = 0; i < 3; i++)
                sensim_triax_apply(m[i], sp[i], c, t + k0, u[i], NULL, o[i]);
        else
            sensim_triax_apply_set(count, (const sensim_triax *const *)m, sp, c, t + k0, u, NULL, o);
    }
    free(t);
}

START_TEST(apply_set_matches_apply)
{
    /* The gyro and accelerometer take the fused pass (the accelerometer
     * with white noise only), the magnetometer (bias instability) the
     * per-effect one: apply_set over all (instrument, axis) tasks at 2
     * threads and odd blocks equals separate apply calls at 1 thread. */
    sensim_triax_params g = sensim_triax_default_params(), a = g, mg = g;
    for (int i = 0; i < 3; i++) {
        g.noise_density[i] = 1e-3;
        g.gm_sigma[i] = 1e-3;
        g.gm_tau[i] = 20;
        g.random_walk[i] = 1e-4;
        a.noise_density[i] = 2e-3;
        mg.noise_density[i] = 1e-7;
        mg.bias_instability[i] = 1e-7;
    }
    sensim_triax *m[3] = {sensim_triax_create(&g, SENSIM_GYRO, 400, 5, 77, "g"),
                          sensim_triax_create(&a, SENSIM_ACCEL, 400, 5, 77, "a"),
                          sensim_triax_create(&mg, SENSIM_MAG, 400, 5, 77, "m")};
    ck_assert(m[0] && m[1] && m[2]);
    const size_t n = 9000;
    double *ref[3], *got[3];
    for (int i = 0; i < 3; i++) {
        ref[i] = malloc(3 * n * sizeof(double));
        got[i] = malloc(3 * n * sizeof(double));
    }
    omp_set_num_threads(1);
    run_set(m, n, 400, n, 1, ref);
    omp_set_num_threads(2);
    size_t blocks[] = {n, 4999, 777, 64};
    for (int b = 0; b < 4; b++)
        for (int count = 2; count <= 3; count++) {
            run_set(m, n, 400, blocks[b], count, got);
            for (int i = 0; i < count; i++)
                ck_assert_msg(memcmp(ref[i], got[i], 3 * n * sizeof(double)) == 0,
                              "instrument %d differs (block %zu, %d instruments)", i, blocks[b], count);
        }
    for (int i = 0; i < 3; i++) {
        free(ref[i]);
        free(got[i]);
        sensim_triax_destroy(m[i]);
    }
}
END_TEST

START_TEST(bad_parameters)
{
    sensim_triax_params p = sensim_triax_default_params();
    p.noise_density[1] = -1;
    ck_assert_ptr_null(sensim_triax_create(&p, SENSIM_GYRO, 100, 0, 0, "rig.yaml:5: imu"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "rig.yaml:5: imu: gyro: noise_density must be finite and >= 0"));
    p = sensim_triax_default_params();
    p.gm_sigma[0] = 1;
    ck_assert_ptr_null(sensim_triax_create(&p, SENSIM_ACCEL, 100, 0, 0, "x"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "gauss_markov.tau must be > 0"));
    p = sensim_triax_default_params();
    ck_assert_ptr_null(sensim_triax_create(&p, SENSIM_ACCEL, 0, 0, 0, "x"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "rate_hz must be > 0"));
    p.bias[0] = NAN;
    ck_assert_ptr_null(sensim_triax_create(&p, SENSIM_ACCEL, 10, 0, 0, "x"));
    sensim_triax_destroy(NULL);
}
END_TEST

START_TEST(lever_arm_specific_force)
{
    /* A body spinning about z at w with the sensor at r = (0.5, 0.2, 0):
     * f = w x (w x r) + R^T g_up = (-w^2 r_x, -w^2 r_y, g) for level attitude,
     * plus alpha x r when spinning up. Attitude yawed by 30 degrees does not
     * change the body-frame result (gravity is along z). */
    double w = 3.0, q[4] = {cos(M_PI / 12), 0, 0, sin(M_PI / 12)};
    double a[3] = {0, 0, 0}, wb[3] = {0, 0, w}, al[3] = {0, 0, 2.0}, r[3] = {0.5, 0.2, 0}, f[3];
    sensim_imu_specific_force(q, a, wb, al, r, SENSIM_G0, f);
    ck_assert_double_eq_tol(f[0], -w * w * 0.5 - 2.0 * 0.2, 1e-12);
    ck_assert_double_eq_tol(f[1], -w * w * 0.2 + 2.0 * 0.5, 1e-12);
    ck_assert_double_eq_tol(f[2], SENSIM_G0, 1e-12);
    /* World acceleration east with yaw 90 degrees: appears on body -y. */
    double q90[4] = {cos(M_PI / 4), 0, 0, sin(M_PI / 4)}, ae[3] = {2.0, 0, 0}, zero[3] = {0, 0, 0};
    sensim_imu_specific_force(q90, ae, zero, zero, zero, SENSIM_G0, f);
    ck_assert_double_eq_tol(f[0], 0, 1e-12);
    ck_assert_double_eq_tol(f[1], -2.0, 1e-12);
    /* Rolled 90 degrees about x: gravity appears on body +y. */
    double qr[4] = {cos(M_PI / 4), sin(M_PI / 4), 0, 0};
    sensim_imu_specific_force(qr, zero, zero, zero, zero, SENSIM_G0, f);
    ck_assert_double_eq_tol(f[1], SENSIM_G0, 1e-12);
    ck_assert_double_eq_tol(f[2], 0, 1e-12);
}
END_TEST

/* The noise does not depend on the absolute start time: a run stamped from
 * t = 20000 s at 1 kHz (where stamps k/rate round to steps that differ from
 * 1/rate by ~1e-12 s, a relative 1e-9) gives the same bits as one stamped
 * from 0, in one block and in blocks of 333. */
START_TEST(noise_independent_of_start_time)
{
    const size_t n = 5000;
    const double rate = 1000;
    sensim_triax_params p = sensim_triax_default_params();
    for (int a = 0; a < 3; a++) {
        p.noise_density[a] = 1e-3;
        p.gm_sigma[a] = 0.01;
        p.gm_tau[a] = 50;
        p.random_walk[a] = 1e-4;
    }
    sensim_triax *m = sensim_triax_create(&p, SENSIM_GYRO, rate, 9, 77, "test");
    ck_assert_msg(m != NULL, "%s", sensim_last_error());
    double *t = malloc(n * sizeof *t), *y0 = calloc(3 * n, sizeof *y0), *y1 = calloc(3 * n, sizeof *y1);
    for (int run = 0; run < 3; run++) {
        double *y = run ? y1 : y0;
        const double start = run ? 20000.0 : 0.0;
        const size_t block = run == 2 ? 333 : n;
        for (size_t k = 0; k < n; k++)
            t[k] = start + (double)k / rate;
        memset(y, 0, 3 * n * sizeof *y);
        sensim_triax_state s;
        sensim_triax_reset(m, &s);
        for (size_t k0 = 0; k0 < n; k0 += block) {
            size_t c = n - k0 < block ? n - k0 : block;
            sensim_triax_apply(m, &s, c, t + k0, y + 3 * k0, NULL, y + 3 * k0);
        }
        if (run)
            ck_assert_msg(memcmp(y0, y1, 3 * n * sizeof *y0) == 0, "run %d differs from the run stamped from 0",
                          run);
    }
    free(t);
    free(y0);
    free(y1);
    sensim_triax_destroy(m);
}
END_TEST

/* Runs n samples of zero input at the times t[n] (rate_hz sets the nominal
 * step) in blocks of `block`; returns y[n*3]. */
static double *run_t(const sensim_triax_params *p, sensim_instrument kind, double rate, const double *t, size_t n,
                     uint64_t seed, size_t block)
{
    sensim_triax *m = sensim_triax_create(p, kind, rate, seed, 77, "test");
    ck_assert_msg(m != NULL, "%s", sensim_last_error());
    double *y = calloc(3 * n, sizeof *y);
    sensim_triax_state s;
    sensim_triax_reset(m, &s);
    for (size_t k0 = 0; k0 < n; k0 += block) {
        size_t c = n - k0 < block ? n - k0 : block;
        sensim_triax_apply(m, &s, c, t + k0, y + 3 * k0, NULL, y + 3 * k0);
    }
    sensim_triax_destroy(m);
    return y;
}

/* Stamps at `rate` with a uniform jitter of +-frac of the step (kept
 * increasing), as recorded stamps are. */
static double *jittered(size_t n, double rate, double frac, uint64_t seed)
{
    double *t = malloc(n * sizeof *t);
    sensim_rng r = sensim_rng_make(seed, 3, 3);
    for (size_t k = 0; k < n; k++)
        t[k] = 100.0 + ((double)k + frac * (2 * sensim_rng_uniform(&r, k) - 1)) / rate;
    return t;
}

/* The draw sensim uses for (instrument, effect, axis) at index k. */
static double draw(uint64_t seed, sensim_instrument kind, int effect, int axis, uint64_t k)
{
    sensim_rng r = sensim_rng_make(seed, 77, (uint32_t)(((int)kind * 16 + effect) * 4 + axis));
    return sensim_rng_normal(&r, k);
}

START_TEST(gazebo_matches_gz_sensors)
{
    /* A re-implementation of gz-sensors' GaussianNoiseModel (gazebosim/
     * gz-sensors src/GaussianNoiseModel.cc, Load and ApplyImpl; dt from
     * src/ImuSensor.cc as a float, 0 at the first update), fed sensim's
     * draws: white (effect 0), dynamic bias (effect 7), turn-on normal and
     * sign uniform (effect 7, axis slot 3, indices a and 4 + a). On jittered
     * stamps at 250 Hz, and at 1 kHz uniform. The only difference allowed is
     * the order of the final additions (a few ulp). */
    const double rates[2] = {250.0, 1000.0}, jit[2] = {0.3, 0.0};
    const size_t n = 5000;
    for (int c = 0; c < 2; c++) {
        sensim_triax_params p = sensim_triax_default_params();
        for (int a = 0; a < 3; a++) {
            p.gz_mean[a] = 1e-4 * a;
            p.gz_stddev[a] = 2e-3;
            p.gz_bias_mean[a] = 5e-3 * (a + 1);
            p.gz_bias_stddev[a] = a == 1 ? 0.0 : 1e-3;
            p.gz_dyn_stddev[a] = 2e-4;
            p.gz_dyn_tau[a] = 400.0 / (a + 1);
        }
        double *t = jittered(n, rates[c], jit[c], 4);
        double *y = run_t(&p, SENSIM_GYRO, rates[c], t, n, 21, 777);
        for (int a = 0; a < 3; a++) {
            sensim_rng on = sensim_rng_make(21, 77, (uint32_t)((SENSIM_GYRO * 16 + 7) * 4 + 3));
            /* Load(): bias = DblNormal(bias_mean, bias_stddev) or bias_mean;
             * negated if DblUniform() < 0.5. */
            double bias = p.gz_bias_stddev[a] > 0.0
                              ? p.gz_bias_mean[a] + p.gz_bias_stddev[a] * sensim_rng_normal(&on, (uint64_t)a)
                              : p.gz_bias_mean[a];
            if (sensim_rng_uniform(&on, 4 + (uint64_t)a) < 0.5)
                bias = -bias;
            for (size_t k = 0; k < n; k++) {
                float dt = k == 0 ? 0.0f : (float)(t[k] - t[k - 1]);
                double white = p.gz_stddev[a] > 0.0 ? p.gz_mean[a] + p.gz_stddev[a] * draw(21, SENSIM_GYRO, 0, a, k)
                                                    : p.gz_mean[a];
                if (p.gz_dyn_stddev[a] > 0 && p.gz_dyn_tau[a] > 0 && dt > 0) {
                    double sigma_b = p.gz_dyn_stddev[a], tau = p.gz_dyn_tau[a];
                    double sigma_b_d = sqrt(-sigma_b * sigma_b * tau / 2 * expm1(-2 * dt / tau));
                    double phi_d = exp(-dt / tau);
                    bias = phi_d * bias + sigma_b_d * draw(21, SENSIM_GYRO, 7, a, k);
                }
                double out = 0.0 + bias + white;
                ck_assert_msg(fabs(y[3 * k + a] - out) <= 1e-15, "rate %g axis %d sample %zu: %.17g != %.17g",
                              rates[c], a, k, y[3 * k + a], out);
            }
        }
        free(t);
        free(y);
    }
}
END_TEST

START_TEST(gazebo_settled_bias_is_driving_density)
{
    /* Gazebo's dynamic_bias_stddev sigma_b drives the process: the settled
     * std is sigma_b sqrt(tau / 2) (14.1 sigma_b at tau = 400 s), and a
     * turn-on bias decays as exp(-t / tau). Started at zero, the variance
     * at t is sigma_b^2 tau / 2 (1 - e^{-2t/tau}); over R = 2000 seeds at
     * t = tau (10 Hz): SE(var)/var = sqrt(2/R) = 3.2%, 5 SE = 16%. */
    const int R = 2000;
    const double tau = 400.0, sb = 1e-4, rate = 10.0;
    const size_t n = (size_t)(tau * rate) + 1;
    sensim_triax_params p = sensim_triax_default_params();
    p.gz_dyn_stddev[0] = sb;
    p.gz_dyn_tau[0] = tau;
    double *v = malloc(R * sizeof *v);
    for (int r = 0; r < R; r++) {
        double *y = run(&p, SENSIM_GYRO, rate, n, 700 + (uint64_t)r, n);
        v[r] = y[3 * (n - 1)];
        free(y);
    }
    ck_assert_within(tu_var(v, R, 1) / (sb * sb * tau / 2 * -expm1(-2.0)), 1.0, 5 * sqrt(2.0 / R));
    free(v);
    /* A turn-on bias of exactly +-1e-3 (stddev 0) decays: |b(tau)| = e^-1
     * 1e-3 in the mean over seeds (the driving noise averages out). */
    p.gz_dyn_stddev[0] = 1e-9;
    p.gz_bias_mean[0] = 1e-3;
    int neg = 0;
    for (int r = 0; r < 200; r++) {
        double *y = run(&p, SENSIM_GYRO, rate, (size_t)(tau * rate) + 1, 900 + (uint64_t)r, 4096);
        ck_assert_within(fabs(y[0]), 1e-3, 1e-15);
        ck_assert_within(fabs(y[3 * (size_t)(tau * rate)]), 1e-3 * exp(-1.0), 1e-6);
        neg += y[0] < 0;
        free(y);
    }
    /* The sign is random with p = 1/2: 5 SE over 200 runs = 35. */
    ck_assert_within(neg, 100, 35);
}
END_TEST

START_TEST(airsim_matches_imusimple)
{
    /* A re-implementation of AirSim's ImuSimple::addNoise (microsoft/AirSim
     * AirLib/include/sensors/imu/ImuSimple.hpp) fed sensim's draws (white
     * effect 0, walk effect 6): sqrt_dt = sqrt(max(dt, 1 ms)), dt = 0 at the
     * reset call; white arw / sqrt_dt; the output takes the bias before its
     * step. At 10 kHz (where AirSim's floor makes the white noise 3.16x
     * smaller than N sqrt(rate)), 200 Hz and jittered 100 Hz stamps. */
    const double rates[3] = {10000.0, 200.0, 100.0}, jit[3] = {0.0, 0.0, 0.4};
    const size_t n = 4000;
    for (int c = 0; c < 3; c++) {
        sensim_triax_params p = sensim_triax_default_params();
        for (int a = 0; a < 3; a++) {
            p.airsim_arw[a] = 8.7e-5 * (a + 1);
            p.airsim_bias_stability[a] = 2.2e-5;
            p.airsim_tau[a] = 500;
            p.bias[a] = 1e-3; /* AirSim's turn_on_bias: the walk's start */
        }
        double *t = jittered(n, rates[c], jit[c], 5);
        double *y = run_t(&p, SENSIM_GYRO, rates[c], t, n, 31, 1000);
        for (int a = 0; a < 3; a++) {
            const double norm = p.airsim_bias_stability[a] / sqrt(p.airsim_tau[a]);
            double bias = p.bias[a];
            for (size_t k = 0; k < n; k++) {
                /* AirSim's clock counts whole nanoseconds: a step of 1/rate up
                 * to the rounding of the stamps is 1/rate (sensim's rule too). */
                double dt = k == 0 ? 0.0 : t[k] - t[k - 1];
                if (fabs(dt - 1.0 / rates[c]) <= 1e-9 / rates[c])
                    dt = 1.0 / rates[c];
                double sqrt_dt = sqrt(fmax(dt, 1.0 / 1000));
                double sigma_arw = p.airsim_arw[a] / sqrt_dt;
                double white = draw(31, SENSIM_GYRO, 0, a, k) * sigma_arw, out = 0.0 + white + bias;
                /* sensim adds the parts in another order: a few ulp of each. */
                double tol = 1e-14 * (fabs(white) + fabs(bias));
                bias += draw(31, SENSIM_GYRO, 6, a, k) * (norm * sqrt_dt);
                ck_assert_msg(fabs(y[3 * k + a] - out) <= tol,
                              "rate %g axis %d sample %zu: %.17g != %.17g", rates[c], a, k, y[3 * k + a], out);
            }
        }
        free(t);
        free(y);
    }
}
END_TEST

START_TEST(chrono_matches_chnoisenormaldrift)
{
    /* A re-implementation of Chrono's ChNoiseNormalDrift::AddNoise
     * (projectchrono/chrono src/chrono_sensor/sensors/ChNoiseModel.cpp) fed
     * sensim's draws (white effect 4, walk effect 5): eta_a ~ N(mean,
     * stdev); eta_b ~ N(0, drift_bias sqrt(1 / (rate tau_drift))) only when
     * tau_drift and drift_bias exceed DBL_EPSILON; bias += eta_b, data +=
     * eta_a + bias, every call. drift_mean is sensim's extra, 0 here; with
     * tau_drift or bias_drift 0 it must not ramp (it rides on the walk). */
    const size_t n = 3000;
    for (int c = 0; c < 3; c++) {
        sensim_triax_params p = sensim_triax_default_params();
        for (int a = 0; a < 3; a++) {
            p.chrono_mean[a] = 1e-3 * (a - 1);
            p.chrono_stddev[a] = 2e-3;
            p.chrono_bias_drift[a] = c == 1 ? 0.0 : 5e-3;
            p.chrono_tau_drift[a] = c == 2 ? 0.0 : 30.0;
            p.chrono_drift_mean[a] = c == 0 ? 0.0 : 1e-4;
        }
        double *t = jittered(n, 100.0, 0.3, 6); /* Chrono ignores the interval */
        double *y = run_t(&p, SENSIM_ACCEL, 100.0, t, n, 41, 999);
        for (int a = 0; a < 3; a++) {
            double bias = 0.0;
            const int on = p.chrono_tau_drift[a] > DBL_EPSILON && p.chrono_bias_drift[a] > DBL_EPSILON;
            for (size_t k = 0; k < n; k++) {
                double eta_a = p.chrono_mean[a] + p.chrono_stddev[a] * draw(41, SENSIM_ACCEL, 4, a, k);
                double eta_b = on ? 0.0 + p.chrono_bias_drift[a] * sqrt(1 / (100.0 * p.chrono_tau_drift[a])) *
                                              draw(41, SENSIM_ACCEL, 5, a, k)
                                  : 0.0;
                bias += eta_b;
                double out = 0.0 + (eta_a + bias);
                ck_assert_msg(fabs(y[3 * k + a] - out) <= 1e-15, "case %d axis %d sample %zu: %.17g != %.17g", c, a,
                              k, y[3 * k + a], out);
            }
        }
        free(t);
        free(y);
    }
}
END_TEST

START_TEST(bias_instability_sampled_floor)
{
    /* The fitted terms' Allan deviation, as sampled (the AR(1) closed form
     * evaluated independently here as the autocovariance sum), is flat at
     * 0.664 B within 5 % from tau = 1/f to the top of the span, for the
     * default span at 400 Hz and two others. */
    const double rates[3] = {400.0, 100.0, 20.0}, tmax[3] = {1000.0, 100.0, 100.0};
    const double tmin[3] = {0.0, 0.01, 0.05};
    for (int c = 0; c < 3; c++) {
        sensim_triax_params p = sensim_triax_default_params();
        p.bias_instability[0] = 1.0;
        p.bi_tau_min = tmin[c];
        p.bi_tau_max = tmax[c];
        sensim_triax *m = sensim_triax_create(&p, SENSIM_GYRO, rates[c], 0, 0, "test");
        ck_assert(m);
        double taus[SENSIM_BI_MAX_TERMS], sig[SENSIM_BI_MAX_TERMS];
        int nt = sensim_triax_bi_terms(m, 0, taus, sig);
        const double lo = tmin[c] > 0 ? tmin[c] : 1.0 / rates[c];
        for (double tau = lo; tau <= tmax[c] * 1.0001; tau *= 1.25) {
            long nn = lround(tau * rates[c]);
            if (nn < 1)
                nn = 1;
            if (nn > 20000) /* the sum gets slow; the terms are smooth there */
                break;
            double av = 0;
            for (int i = 0; i < nt; i++) {
                double phi = exp(-1.0 / (rates[c] * taus[i])), sum = nn;
                for (long k = 1; k < 2 * nn; k++)
                    sum += ((k < nn ? 2.0 * (nn - k) : 0.0) - (k < 2 * nn - k ? k : 2 * nn - k)) * pow(phi, (double)k);
                av += sig[i] * sig[i] * sum / ((double)nn * nn);
            }
            ck_assert_msg(fabs(sqrt(av / (2 * M_LN2 / M_PI)) - 1.0) <= 0.05, "rate %g tau %g (n %ld): ADEV %.4f x floor",
                          rates[c], tau, nn, sqrt(av / (2 * M_LN2 / M_PI)));
        }
        sensim_triax_destroy(m);
    }
    /* And by simulation at the short end: 2^20 samples at 100 Hz over
     * [0.01, 100] s, ADEV at n = 1 and 3 within 5 % + 5 SE (EDF ~ M/2). */
    const size_t n = 1 << 20;
    sensim_triax_params p = sensim_triax_default_params();
    p.bias_instability[0] = 1e-4;
    p.bi_tau_max = 100.0;
    double *y = run(&p, SENSIM_GYRO, 100.0, n, 12, 65536);
    double *ax = malloc(n * sizeof *ax);
    for (size_t k = 0; k < n; k++)
        ax[k] = y[3 * k];
    size_t ms[2] = {1, 3};
    for (int i = 0; i < 2; i++) {
        size_t M = n / ms[i];
        double r = sqrt(tu_avar(ax, n, ms[i]) / (2 * M_LN2 / M_PI * 1e-8));
        ck_assert_within(r, 1.0, 0.05 + 5 * sqrt(1.0 / (0.5 * M)));
    }
    free(ax);
    free(y);
}
END_TEST

Suite *suite_imu(void)
{
    Suite *s = suite_create("imu");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, white_noise_sigma_and_rate_scaling);
    tcase_add_test(tc, random_walk_variance_growth);
    tcase_add_test(tc, gauss_markov_variance_and_correlation);
    tcase_add_test(tc, allan_white_random_walk_ramp_ar1);
    tcase_add_test(tc, bias_instability_flat_floor);
    tcase_add_test(tc, quantization_clamp_scale_cross_axis);
    tcase_add_test(tc, chrono_drift_semantics);
    tcase_add_test(tc, turn_on_bias_constant_within_run);
    tcase_add_test(tc, reproducible_any_block_and_threads);
    tcase_add_test(tc, fused_pass_matches_formulas);
    tcase_add_test(tc, apply_set_matches_apply);
    tcase_add_test(tc, bad_parameters);
    tcase_add_test(tc, lever_arm_specific_force);
    tcase_add_test(tc, noise_independent_of_start_time);
    tcase_add_test(tc, gazebo_matches_gz_sensors);
    tcase_add_test(tc, gazebo_settled_bias_is_driving_density);
    tcase_add_test(tc, airsim_matches_imusimple);
    tcase_add_test(tc, chrono_matches_chnoisenormaldrift);
    tcase_add_test(tc, bias_instability_sampled_floor);
    suite_add_tcase(s, tc);
    return s;
}
