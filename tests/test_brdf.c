/* The two-layer GGX + Oren-Nayar material and the gamma atmospheric returns
 * of seed 002 (eqs. 5-12 and 14) against closed forms: Fresnel at normal
 * and grazing incidence, GGX normalization and Smith's weak white furnace,
 * Oren-Nayar at sigma = 0 = Lambert, a lidar on a coated plane, and the mean
 * and variance of gamma-distributed atmospheric returns. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/render.h"
#include "testutil.h"

static sensim_vec3 unit(double th, double ph)
{
    return sensim_vec3_make(sin(th) * cos(ph), sin(th) * sin(ph), cos(th));
}

START_TEST(fresnel_closed_forms)
{
    /* Normal incidence: ((n-1)^2 + k^2) / ((n+1)^2 + k^2). */
    ck_assert_double_eq_tol(sensim_brdf_fresnel(1.5, 0, 1), 0.04, 1e-12);
    ck_assert_double_eq_tol(sensim_brdf_fresnel(0.2, 3.0, 1), (0.64 + 9) / (1.44 + 9), 1e-12);
    /* Grazing: total reflection; n = 1: none at any angle. */
    ck_assert_double_eq_tol(sensim_brdf_fresnel(1.5, 0.1, 0), 1, 1e-12);
    for (double c = 0.05; c <= 1; c += 0.1)
        ck_assert_double_eq_tol(sensim_brdf_fresnel(1, 0, c), 0, 1e-15);
    /* Real n at 40 deg: the textbook s and p amplitudes. */
    double n = 1.33, ti = 40 * M_PI / 180, tt = asin(sin(ti) / n);
    double rs = (cos(ti) - n * cos(tt)) / (cos(ti) + n * cos(tt)), rp = (n * cos(ti) - cos(tt)) / (n * cos(ti) + cos(tt));
    ck_assert_double_eq_tol(sensim_brdf_fresnel(n, 0, cos(ti)), 0.5 * (rs * rs + rp * rp), 1e-12);
    /* Brewster: rp = 0, R = rs^2 / 2. */
    double tb = atan(n);
    tt = asin(sin(tb) / n);
    rs = (cos(tb) - n * cos(tt)) / (cos(tb) + n * cos(tt));
    ck_assert_double_eq_tol(sensim_brdf_fresnel(n, 0, cos(tb)), 0.5 * rs * rs, 1e-12);
}
END_TEST

/* GGX: the projected microfacet area is one, pi int_0^1 D(sqrt(u)) du = 1
 * (u = cos^2 theta_h), and Smith's masking satisfies the weak white furnace
 * int D(h) max(0, v.h) dw_h = (1 + Lambda(v)) (n.v). Midpoint quadrature
 * errors are below 1e-4 at these grids. */
START_TEST(ggx_normalization)
{
    const double alphas[] = {0.1, 0.4, 1.0};
    for (int a = 0; a < 3; a++) {
        const int N = 200000;
        double sum = 0;
        for (int i = 0; i < N; i++)
            sum += sensim_brdf_ggx_d(alphas[a], sqrt((i + 0.5) / N));
        ck_assert_msg(fabs(M_PI * sum / N - 1) < 1e-3, "alpha %g: %g", alphas[a], M_PI * sum / N);
    }
    const double alpha = 0.5, tv = 60 * M_PI / 180;
    sensim_vec3 v = unit(tv, 0);
    const int NT = 1000, NP = 720;
    double sum = 0;
    for (int i = 0; i < NT; i++) {
        double th = (i + 0.5) * (M_PI / 2) / NT;
        double d = sensim_brdf_ggx_d(alpha, cos(th));
        for (int j = 0; j < NP; j++) {
            double vh = sensim_vec3_dot(v, unit(th, (j + 0.5) * 2 * M_PI / NP));
            sum += d * fmax(vh, 0) * sin(th);
        }
    }
    sum *= (M_PI / 2 / NT) * (2 * M_PI / NP);
    ck_assert_double_eq_tol(sum, (1 + sensim_brdf_ggx_lambda(alpha, cos(tv))) * cos(tv), 2e-3);
    /* Lambda vanishes head-on and grows towards grazing. */
    ck_assert_double_eq_tol(sensim_brdf_ggx_lambda(alpha, 1), 0, 1e-15);
    ck_assert(sensim_brdf_ggx_lambda(alpha, 0.2) > sensim_brdf_ggx_lambda(alpha, 0.6));
}
END_TEST

START_TEST(oren_nayar_and_surface)
{
    sensim_vec3 n = sensim_vec3_make(0, 0, 1);
    const double rho = 0.6;
    sensim_material m = sensim_material_default();
    m.brdf = SENSIM_BRDF_SURFACE;
    m.reflectance = rho;
    m.ior = 1; /* no coat reflection: F = 0 */
    m.diffuse_roughness = 0;
    for (int i = 0; i < 50; i++) {
        sensim_vec3 l = unit(0.03 * i, 0.4 * i), v = unit(1.5 - 0.03 * i, 2.0 - 0.1 * i);
        /* sigma = 0 is Lambert, and so is the surface without a coat. */
        ck_assert_double_eq_tol(sensim_brdf_oren_nayar(rho, 0, n, l, v), rho / M_PI, 1e-15);
        ck_assert_double_eq_tol(sensim_material_brdf(&m, n, l, v), rho / M_PI, 1e-12);
    }
    /* sigma > 0, head-on (s = 0): rho/pi A. Backscatter (l = v) grows
     * towards grazing as B s/t = B sin(theta) tan(theta). */
    double sg = 0.5, s2 = sg * sg;
    double A = 1 - 0.5 * s2 / (s2 + 0.33) + 0.17 * rho * s2 / (s2 + 0.13), B = 0.45 * s2 / (s2 + 0.09);
    ck_assert_double_eq_tol(sensim_brdf_oren_nayar(rho, sg, n, n, n), rho / M_PI * A, 1e-12);
    double th = 1.0;
    sensim_vec3 l = unit(th, 0.3);
    ck_assert_double_eq_tol(sensim_brdf_oren_nayar(rho, sg, n, l, l), rho / M_PI * (A + B * sin(th) * tan(th)), 1e-12);
    /* Below the surface: nothing. */
    ck_assert_double_eq(sensim_material_brdf(&m, n, unit(2.0, 0), n), 0);
    /* Retro: pi f cos = rho at any incidence. */
    m.brdf = SENSIM_BRDF_RETRO;
    ck_assert_double_eq_tol(M_PI * sensim_material_brdf(&m, n, l, l) * cos(th), rho, 1e-12);
}
END_TEST

typedef struct {
    sensim_vec3 p;
} fixed_pose;

static void pose_at(const void *user, double t, sensim_pose *out)
{
    (void)t;
    out->p = ((const fixed_pose *)user)->p;
    out->q = sensim_quat_make(1, 0, 0, 0);
}

static sensim_scene *plane_of(const sensim_material *m, double extinction)
{
    sensim_scene *s = sensim_scene_create();
    int mat = sensim_scene_add_material(s, m);
    ck_assert_msg(mat >= 0, "%s", sensim_last_error());
    int mesh = sensim_scene_add_plane(s, "ground", 400, 400, 2, 2);
    ck_assert_int_ge(sensim_scene_add_object(s, mesh, mat, sensim_pose_identity()), 0);
    ck_assert_int_eq(sensim_scene_set_atmosphere(s, extinction), SENSIM_OK);
    return s;
}

static sensim_render_lidar_params fan(double el0, double el1)
{
    sensim_render_lidar_params p = sensim_render_lidar_default_params();
    p.channels = 16;
    p.vfov_min = el0 * M_PI / 180;
    p.vfov_max = el1 * M_PI / 180;
    p.columns = 360;
    p.min_range = 0.01;
    p.max_range = 1000;
    p.falloff = SENSIM_FALLOFF_NONE;
    return p;
}

/* A lidar on a coated plane: each point's intensity is pi f(l, l) cos(theta)
 * with the monostatic closed form f = R0 D(c) / (4 c^2 (1 + 2 Lambda(c))) +
 * (1 - R0) rho/pi, c = cos(theta) = sin|el|, R0 the normal-incidence Fresnel
 * term (h = l), computed here from the formulas. */
START_TEST(lidar_on_coated_plane)
{
    sensim_material m = sensim_material_default();
    snprintf(m.name, sizeof m.name, "coat");
    m.brdf = SENSIM_BRDF_SURFACE;
    m.reflectance = 0.4;
    m.ior = 1.8;
    m.ior_k = 0.5;
    m.specular_roughness = 0.35;
    sensim_scene *s = plane_of(&m, 0);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    sensim_render_lidar_params p = fan(-85, -10);
    sensim_render_lidar *l = sensim_render_lidar_create(&p);
    sensim_render_lidar_points *pt = sensim_render_lidar_points_create(l);
    fixed_pose fp = {{0, 0, 3}};
    ck_assert_int_eq(sensim_render_lidar_scan(l, s, pose_at, &fp, 0, 0, pt), SENSIM_OK);
    ck_assert_uint_eq(pt->count, 16 * 360);
    double R0 = ((1.8 - 1) * (1.8 - 1) + 0.25) / ((1.8 + 1) * (1.8 + 1) + 0.25);
    double a2 = 2 * 0.35 * 0.35;
    for (size_t i = 0; i < pt->count; i++) {
        double c = sin(-(double)pt->elevation[i]);
        double d = (a2 - 1) * c * c + 1, D = a2 / (M_PI * d * d);
        double lam = 0.5 * (-1 + sqrt(1 + a2 * (1 - c * c) / (c * c)));
        double f = R0 * D / (4 * c * c * (1 + 2 * lam)) + (1 - R0) * 0.4 / M_PI;
        ck_assert_double_eq_tol(pt->xyzi[4 * i + 3], M_PI * f * c, 2e-5 * M_PI * f * c + 1e-6);
    }
    sensim_render_lidar_points_destroy(pt);
    sensim_render_lidar_destroy(l);
    sensim_scene_destroy(s);
}
END_TEST

/* Atmospheric returns: every beam looks at the sky, so each point is the
 * air's echo at x ~ Gamma(k, theta): mean k theta and variance k theta^2
 * within 5 standard errors (sqrt(var/n); for the variance
 * var sqrt((kurtosis - 1)/n), kurtosis 3 + 6/k). With probability q the
 * count of echoes is Binomial(beams, q), within 5 sqrt(n q (1 - q)). */
START_TEST(gamma_atmospheric_returns)
{
    const double k = 2, theta = 5, rho = 0.5, alpha = 0.004;
    sensim_material m = sensim_material_default();
    snprintf(m.name, sizeof m.name, "grass");
    sensim_scene *s = plane_of(&m, alpha);
    ck_assert_int_eq(sensim_scene_set_atmospheric_returns(s, 1, k, theta, rho), SENSIM_OK);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    sensim_render_lidar_params p = fan(5, 60);
    p.seed = 17;
    p.sensor = 3;
    sensim_render_lidar *l = sensim_render_lidar_create(&p);
    sensim_render_lidar_points *pt = sensim_render_lidar_points_create(l), *p2 = sensim_render_lidar_points_create(l);
    fixed_pose fp = {{0, 0, 2}};
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    ck_assert_int_eq(sensim_render_lidar_scan(l, s, pose_at, &fp, 0, 4, pt), SENSIM_OK);
    omp_set_num_threads(2);
    ck_assert_int_eq(sensim_render_lidar_scan(l, s, pose_at, &fp, 0, 4, p2), SENSIM_OK);
    omp_set_num_threads(saved);
    const size_t n = pt->count, beams = 16 * 360;
    /* P(x < 0.01 or x > 1000) for Gamma(2, 5) is below 3e-6: none lost. */
    ck_assert_uint_eq(n, beams);
    ck_assert_uint_eq(p2->count, n);
    ck_assert(memcmp(pt->range, p2->range, n * sizeof(float)) == 0);
    ck_assert(memcmp(pt->xyzi, p2->xyzi, 4 * n * sizeof(float)) == 0);
    double sx = 0, sxx = 0;
    for (size_t i = 0; i < n; i++) {
        double x = pt->range[i];
        sx += x;
        sxx += x * x;
        /* Intensity of a head-on Lambertian target, two-way Beer-Lambert. */
        ck_assert_double_eq_tol(pt->xyzi[4 * i + 3], rho * exp(-2 * alpha * x), 1e-6);
    }
    double mean = sx / n, var = sxx / n - mean * mean, mv = k * theta, vv = k * theta * theta;
    ck_assert_msg(fabs(mean - mv) < 5 * sqrt(vv / n), "mean %g vs %g", mean, mv);
    ck_assert_msg(fabs(var - vv) < 5 * vv * sqrt((2 + 6 / k) / n), "var %g vs %g", var, vv);
    /* Another scan, other draws. */
    sensim_render_lidar_scan(l, s, pose_at, &fp, 0, 5, p2);
    ck_assert(memcmp(pt->range, p2->range, n * sizeof(float)) != 0);
    sensim_render_lidar_points_destroy(pt);
    sensim_render_lidar_points_destroy(p2);
    sensim_render_lidar_destroy(l);
    sensim_scene_destroy(s);
    /* Probability q: a binomial count; the ground is still seen below. */
    const double q = 0.3;
    s = plane_of(&m, 0);
    ck_assert_int_eq(sensim_scene_set_atmospheric_returns(s, q, k, theta, rho), SENSIM_OK);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    l = sensim_render_lidar_create(&p);
    pt = sensim_render_lidar_points_create(l);
    ck_assert_int_eq(sensim_render_lidar_scan(l, s, pose_at, &fp, 0, 0, pt), SENSIM_OK);
    double sd = sqrt(beams * q * (1 - q));
    ck_assert_msg(fabs((double)pt->count - beams * q) < 5 * sd, "%zu echoes of %zu beams", pt->count, beams);
    sensim_render_lidar_points_destroy(pt);
    sensim_render_lidar_destroy(l);
    /* Bad parameters name what is wrong. */
    ck_assert_int_eq(sensim_scene_set_atmospheric_returns(s, -0.1, k, theta, rho), SENSIM_EINVAL);
    sensim_scene_destroy(s);
    s = sensim_scene_create();
    ck_assert_int_eq(sensim_scene_set_atmospheric_returns(s, 1.5, k, theta, rho), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "probability"));
    ck_assert_int_eq(sensim_scene_set_atmospheric_returns(s, 0.5, 0, theta, rho), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "shape"));
    m.brdf = SENSIM_BRDF_SURFACE;
    m.specular_roughness = 0;
    ck_assert_int_eq(sensim_scene_add_material(s, &m), -1);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "specular_roughness"));
    sensim_scene_destroy(s);
}
END_TEST

Suite *suite_brdf(void)
{
    Suite *su = suite_create("brdf");
    TCase *tc = tcase_create("brdf");
    tcase_add_test(tc, fresnel_closed_forms);
    tcase_add_test(tc, ggx_normalization);
    tcase_add_test(tc, oren_nayar_and_surface);
    tcase_add_test(tc, lidar_on_coated_plane);
    tcase_add_test(tc, gamma_atmospheric_returns);
    suite_add_tcase(su, tc);
    return su;
}
