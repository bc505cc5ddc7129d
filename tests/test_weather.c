/* Rain and snow (render/weather.c) against the formulas it cites:
 * MAVS's extinction fits and the geometric-optics extinction of the
 * Marshall-Palmer and Gunn-Marshall size distributions; two-way
 * attenuation exp(-2 alpha r) of a return and the threshold it falls
 * below; the Poisson rate of particle echoes in a beam and the range of the
 * first one, from the beam's area, the falloff and N(D) integrated here by
 * quadrature (the smallest detectable diameter found by bisection on the
 * echo's definition, not by the library's algebra), with z and chi-square
 * tests at 5 sigma; echoes only in front of the first hit; the camera's
 * contrast fading as exp(-alpha d); reproducibility at 1 and 2 threads;
 * the scene keys and their errors; the demo scenes. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/render.h"
#include "testutil.h"

START_TEST(extinction_closed_forms)
{
    double n0, la;
    ck_assert_int_eq(sensim_weather_size_distribution(SENSIM_PRECIPITATION_RAIN, 10, &n0, &la), SENSIM_OK);
    ck_assert_within(n0, 8000, 0);
    ck_assert_within(la, 4.1 * pow(10, -0.21), 1e-15);
    ck_assert_int_eq(sensim_weather_size_distribution(SENSIM_PRECIPITATION_SNOW, 2, &n0, &la), SENSIM_OK);
    ck_assert_within(n0, 3800 * pow(2, -0.87), 1e-9);
    ck_assert_within(la, 2.55 * pow(2, -0.48), 1e-15);
    ck_assert_int_eq(sensim_weather_size_distribution(SENSIM_PRECIPITATION_RAIN, 0, &n0, &la), SENSIM_EINVAL);

    sensim_weather w = sensim_weather_default();
    ck_assert_within(w.rain_reflectance, 2 * M_PI / 18.8, 1e-15);
    ck_assert_within(sensim_weather_extinction(&w), 0, 0);
    /* MAVS: rain 0.01 R^0.6; snow (15 S + 1) / 1e4 dry, (2 S - 0.1) / 1e4 wet. */
    w.rain_rate = 10;
    ck_assert_within(sensim_weather_extinction(&w), 0.01 * pow(10, 0.6), 1e-15);
    w.rain_rate = 0;
    w.snow_rate = 2;
    ck_assert_within(sensim_weather_extinction(&w), 31e-4, 1e-15);
    w.snow_temperature = 0;
    ck_assert_within(sensim_weather_extinction(&w), 3.9e-4, 1e-15);
    w.snow_rate = 0.01;
    ck_assert_within(sensim_weather_extinction(&w), 0, 0);
    w.snow_rate = 1;
    w.rain_rate = 5;
    ck_assert_within(sensim_weather_extinction(&w), 0.01 * pow(5, 0.6) + 1.9e-4, 1e-15);
    /* DSD: 2 int (pi D^2 / 4) N(D) dD by the midpoint rule over 0..40 mm. */
    w.extinction = SENSIM_WEATHER_EXTINCTION_DSD;
    w.snow_temperature = -5;
    const double rates[][2] = {{10, 0}, {0, 2}, {25, 1}};
    for (int c = 0; c < 3; c++) {
        w.rain_rate = rates[c][0];
        w.snow_rate = rates[c][1];
        double q = 0;
        for (int kind = 0; kind < 2; kind++) {
            double r = rates[c][kind];
            if (!(r > 0))
                continue;
            double a = kind == 0 ? 8000 : 3800 * pow(r, -0.87),
                   b = kind == 0 ? 4.1 * pow(r, -0.21) : 2.55 * pow(r, -0.48);
            const double h = 1e-4;
            for (double d = 0.5 * h; d < 40; d += h)
                q += 2 * (M_PI * d * d / 4) * a * exp(-b * d) * h;
        }
        q *= 1e-6; /* mm^2/m^3 */
        ck_assert_msg(fabs(sensim_weather_extinction(&w) / q - 1) < 1e-6, "case %d: %g vs %g", c,
                      sensim_weather_extinction(&w), q);
    }
    /* At 10 mm/h the DSD extinction is 1.56e-3 /m, MAVS's 0.0398 /m. */
    w.rain_rate = 10;
    w.snow_rate = 0;
    ck_assert_within(sensim_weather_extinction(&w), 1.555e-3, 1e-6);

    /* The scene adds the weather to the atmosphere, for lidar and camera. */
    sensim_scene *s = sensim_scene_create();
    sensim_weather got = sensim_scene_weather(s);
    ck_assert_within(got.rain_rate, 0, 0);
    ck_assert_int_eq(got.false_returns, 1);
    ck_assert_int_eq(sensim_scene_set_visibility(s, 2000), SENSIM_OK);
    w = sensim_weather_default();
    w.rain_rate = 10;
    ck_assert_int_eq(sensim_scene_set_weather(s, &w), SENSIM_OK);
    ck_assert_within(sensim_scene_extinction_at(s, 905e-9),
                     sensim_visibility_extinction(2000, 905e-9) + 0.01 * pow(10, 0.6), 1e-15);
    ck_assert_within(sensim_scene_extinction(s), 3.912 / 2000 + 0.01 * pow(10, 0.6), 1e-15);
    ck_assert_within(sensim_scene_weather(s).rain_rate, 10, 0);
    w.rain_rate = -1;
    ck_assert_int_eq(sensim_scene_set_weather(s, &w), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "rain_rate must be in [0, 500] mm/h"));
    w.rain_rate = 1;
    w.snow_rate = 51;
    ck_assert_int_eq(sensim_scene_set_weather(s, &w), SENSIM_EINVAL);
    w.snow_rate = 1;
    w.rain_reflectance = 1.5;
    ck_assert_int_eq(sensim_scene_set_weather(s, &w), SENSIM_EINVAL);
    ck_assert_within(sensim_scene_weather(s).rain_rate, 10, 0); /* unchanged */
    sensim_scene_destroy(s);
}
END_TEST

/* ---- scans from scene text ---- */

static void fixed_pose(const void *user, double t, sensim_pose *out)
{
    (void)t;
    *out = sensim_pose_identity();
    if (user)
        out->p.z = *(const double *)user;
}

typedef struct {
    sensim_scene *s;
    sensim_render_lidar *l;
    sensim_render_lidar_points *pt;
} rig;

/* Loads scene text (with a lidar named l) from a temporary file. */
static rig load(const char *text)
{
    char *dir = tu_mkdtemp(), *p = tu_path(dir, "scene.yaml");
    ck_assert_int_eq(tu_write_file(p, text), 0);
    rig r;
    r.s = sensim_scene_load(p);
    ck_assert_msg(r.s != NULL, "%s", sensim_last_error());
    sensim_render_sensor sen;
    ck_assert_msg(sensim_render_sensor_load(p, "l", &sen) == SENSIM_OK, "%s", sensim_last_error());
    r.l = sensim_render_lidar_create(&sen.lidar);
    ck_assert_msg(r.l != NULL, "%s", sensim_last_error());
    r.pt = sensim_render_lidar_points_create(r.l);
    free(p);
    tu_rmtree(dir);
    free(dir);
    return r;
}

static void scan(rig *r, uint64_t k, const double *z)
{
    ck_assert_msg(sensim_render_lidar_scan(r->l, r->s, fixed_pose, z, 0, k, r->pt) == SENSIM_OK, "%s",
                  sensim_last_error());
}

static void unload(rig *r)
{
    sensim_render_lidar_points_destroy(r->pt);
    sensim_render_lidar_destroy(r->l);
    sensim_scene_destroy(r->s);
}

/* A ground plane 10 m below a lidar looking down (falloff none, one ray):
 * in rain each return is the clear one times exp(-2 alpha r); with a
 * threshold the return is lost exactly when that falls below it. */
START_TEST(lidar_two_way_attenuation)
{
    const char *fmt = "meshes:\n  - {name: g, plane: {size: [400, 400]}}\nobjects:\n  - {mesh: g}\n%s"
                      "sensors:\n  - {name: l, type: lidar, channels: 8, vfov: [-60 deg, -10 deg], columns: 36,\n"
                      "     max_range: 300, falloff: none%s}\n";
    char t[1024];
    const double z = 10;
    snprintf(t, sizeof t, fmt, "", "");
    rig a = load(t);
    snprintf(t, sizeof t, fmt, "weather: {rain_rate: 10}\n", "");
    rig b = load(t);
    snprintf(t, sizeof t, fmt, "weather: {snow_rate: 2, snow_temperature: -3, extinction: dsd}\n", "");
    rig c = load(t);
    /* With a divergent beam but false returns off: the same attenuation. */
    snprintf(t, sizeof t, fmt, "weather: {rain_rate: 10, false_returns: false}\n", ", divergence: 3 mrad");
    rig d = load(t);
    scan(&a, 0, &z);
    scan(&b, 0, &z);
    scan(&c, 0, &z);
    scan(&d, 0, &z);
    const double ab = 0.01 * pow(10, 0.6);
    double n0, la;
    ck_assert_int_eq(sensim_weather_size_distribution(SENSIM_PRECIPITATION_SNOW, 2, &n0, &la), SENSIM_OK);
    const double ac = M_PI * n0 / (la * la * la) * 1e-6;
    ck_assert_uint_eq(a.pt->count, 8 * 36);
    ck_assert_uint_eq(b.pt->count, a.pt->count);
    ck_assert_uint_eq(c.pt->count, a.pt->count);
    ck_assert_uint_eq(d.pt->count, a.pt->count);
    for (size_t i = 0; i < a.pt->count; i++) {
        double r = a.pt->range[i], ia = a.pt->xyzi[4 * i + 3];
        ck_assert_within(b.pt->range[i], r, 0);
        ck_assert_within(b.pt->xyzi[4 * i + 3] / ia, exp(-2 * ab * r), 1e-6);
        ck_assert_within(c.pt->xyzi[4 * i + 3] / ia, exp(-2 * ac * r), 1e-6);
        ck_assert_within(d.pt->xyzi[4 * i + 3] / ia, exp(-2 * ab * r), 1e-6);
        ck_assert_uint_ne(b.pt->object[i], SENSIM_RENDER_NO_OBJECT);
    }
    /* Detection: a return is kept iff rho cos(theta) exp(-2 alpha r) >= T
     * (MAVS drops a return whose attenuated power is under its cutoff). */
    const double thr = 0.25;
    snprintf(t, sizeof t, fmt, "weather: {rain_rate: 10}\n", ", threshold: 0.25");
    rig e = load(t);
    scan(&e, 0, &z);
    size_t expect = 0, lost = 0;
    for (size_t i = 0; i < a.pt->count; i++) {
        double v = a.pt->xyzi[4 * i + 3] * exp(-2 * ab * a.pt->range[i]);
        ck_assert_msg(fabs(v / thr - 1) > 1e-5, "point %zu too near the threshold for the test", i);
        expect += v >= thr;
        lost += v < thr && a.pt->xyzi[4 * i + 3] >= thr;
    }
    ck_assert_uint_eq(e.pt->count, expect);
    ck_assert_uint_gt(lost, 20); /* the rain, not the threshold alone, loses them */
    unload(&a);
    unload(&b);
    unload(&c);
    unload(&d);
    unload(&e);
}
END_TEST

/* ---- the particle echo model, integrated here ---- */

typedef struct {
    double n0[2], la[2], rho[2]; /* per precipitation; n0 0: absent */
    double alpha, thr, th, w0, ref, rmin;
} model;

static double area(const model *m, double x) { return 0.5 * M_PI * pow(m->w0 + x * m->th, 2); }
static double gain(const model *m, double x) { return pow(m->ref / x, 2) * exp(-2 * m->alpha * x); }

/* Echo of a particle of diameter d (mm) at x: the model's definition. */
static double echo(const model *m, int j, double d, double x)
{
    return m->rho[j] * fmin(1.0, M_PI * d * d * 1e-6 / 4 / area(m, x)) * gain(m, x);
}

/* The smallest diameter (mm) whose echo at x reaches the threshold, by
 * bisection; INFINITY when none does. */
static double dmin_of(const model *m, int j, double x)
{
    if (echo(m, j, 1e6, x) < m->thr)
        return INFINITY;
    double lo = 0, hi = 1e6;
    for (int it = 0; it < 64; it++) {
        double mid = 0.5 * (lo + hi);
        if (echo(m, j, mid, x) >= m->thr)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* Detectable particles per metre at x: A(x) int N(D) [echo >= thr] dD. */
static double rate_at(const model *m, int j, double x)
{
    double d = dmin_of(m, j, x);
    return isfinite(d) ? area(m, x) * m->n0[j] / m->la[j] * exp(-m->la[j] * d) : 0;
}

static double rate_all(const model *m, double x)
{
    double v = 0;
    for (int j = 0; j < 2; j++)
        if (m->n0[j] > 0)
            v += rate_at(m, j, x);
    return v;
}

/* int_{rmin}^{r} rate by Simpson's rule on n steps. */
static double expected(const model *m, double r, int n)
{
    double h = (r - m->rmin) / n, s = rate_all(m, m->rmin) + rate_all(m, r);
    for (int i = 1; i < n; i++)
        s += (i & 1 ? 4 : 2) * rate_all(m, m->rmin + i * h);
    return s * h / 3;
}

static model make_model(double rain, double snow, double thr)
{
    model m;
    memset(&m, 0, sizeof m);
    if (rain > 0)
        sensim_weather_size_distribution(SENSIM_PRECIPITATION_RAIN, rain, &m.n0[0], &m.la[0]);
    if (snow > 0)
        sensim_weather_size_distribution(SENSIM_PRECIPITATION_SNOW, snow, &m.n0[1], &m.la[1]);
    m.rho[0] = m.rho[1] = 2 * M_PI / 18.8;
    m.alpha = 0.01 * pow(rain, 0.6) + (snow > 0 ? (15 * snow + 1) / 1e4 : 0);
    m.thr = thr;
    m.th = tan(1.5e-3);
    m.ref = 10;
    m.rmin = 0.5;
    return m;
}

/* Beams into the empty sky (first return, no echo merging): the share of
 * beams with an echo is 1 - exp(-L), L the expected count to max_range;
 * the first echo's range has density lambda(x) exp(-L(x)) / (1 - exp(-L)),
 * checked by its mean (z) and on 8 bins of equal probability (chi-square,
 * 7 degrees of freedom, 41.8 at 5 sigma). With one precipitation, the
 * echo's size: past 3 m (where no drop fills the beam) I / T = (D / Dmin)^2,
 * and Lambda (D - Dmin) must be Exp(1) (mean by z, 8 bins by chi-square). */
static void sky_rate(const char *weather, double rain, double snow, double thr)
{
    char t[1024];
    snprintf(
        t, sizeof t,
        "seed: 11\nmeshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - {mesh: b, position: [0, 0, -900]}\n"
        "weather: %s\nsensors:\n  - {name: l, type: lidar, channels: 16, vfov: [10 deg, 60 deg], columns: 1000,\n"
        "     divergence: 3 mrad, max_range: 100, min_range: 0.5, threshold: %g, returns: first,\n"
        "     echo_separation: 0}\n",
        weather, thr);
    rig r = load(t);
    model m = make_model(rain, snow, thr);
    const int nscan = 3;
    const double L = expected(&m, 100, 20000), P = 1 - exp(-L);
    /* Bin edges of equal probability of the first echo's range, and its
     * mean, from the cumulative L(x) on a fine grid. */
    enum { NB = 8, NG = 4000 };
    double edge[NB + 1], cum = 0, mean = 0, m2 = 0, xa = m.rmin, fa = rate_all(&m, xa);
    edge[0] = m.rmin;
    int e = 1;
    for (int g = 1; g <= NG; g++) {
        double xb = m.rmin + (100 - m.rmin) * pow((double)g / NG, 2), fb = rate_all(&m, xb),
               fm = rate_all(&m, 0.5 * (xa + xb));
        double c1 = cum + (xb - xa) / 6 * (fa + 4 * fm + fb);
        /* the first echo's probability in [xa, xb) */
        double p = exp(-cum) - exp(-c1), xm = 0.5 * (xa + xb);
        mean += p * xm;
        m2 += p * xm * xm;
        while (e < NB && (1 - exp(-c1)) / P >= (double)e / NB)
            edge[e++] = xb; /* within one grid step (< 5 cm) */
        cum = c1;
        xa = xb;
        fa = fb;
    }
    edge[NB] = 100;
    mean /= P;
    double sd = sqrt(m2 / P - mean * mean);
    ck_assert_msg(fabs(cum / L - 1) < 1e-6, "grid %g vs %g", cum, L);
    size_t n = 0, beams = 0, bins[NB] = {0}, nsize = 0, sbins[NB] = {0};
    const int one = (rain > 0) != (snow > 0), pop = rain > 0 ? 0 : 1;
    double sum = 0, ssum = 0;
    for (int k = 0; k < nscan; k++) {
        scan(&r, (uint64_t)k, NULL);
        beams += 16 * 1000;
        for (size_t i = 0; i < r.pt->count; i++) {
            double x = r.pt->range[i];
            ck_assert_uint_eq(r.pt->object[i], SENSIM_RENDER_NO_OBJECT);
            ck_assert(x >= 0.5 && x <= 100);
            ck_assert(r.pt->xyzi[4 * i + 3] >= thr * (1 - 1e-6));
            sum += x;
            if (one && x >= 3) {
                double dm = dmin_of(&m, pop, x), e = m.la[pop] * dm * (sqrt(r.pt->xyzi[4 * i + 3] / thr) - 1);
                ssum += e;
                nsize++;
                int sb = (int)(NB * (1 - exp(-e))); /* Exp(1) CDF: equal-probability bins */
                sbins[sb < 0 ? 0 : sb >= NB ? NB - 1 : sb]++;
            }
            int b = 0;
            while (b < NB - 1 && x >= edge[b + 1])
                b++;
            bins[b]++;
        }
        n += r.pt->count;
    }
    double z = (n - beams * P) / sqrt(beams * P * (1 - P));
    ck_assert_msg(fabs(z) < 5, "%s: %zu echoes in %zu beams, expected %.1f (L %.4f): z = %.2f", weather, n, beams,
                  beams * P, L, z);
    double zm = (sum / n - mean) / (sd / sqrt((double)n));
    ck_assert_msg(fabs(zm) < 5, "%s: mean range %.4f vs %.4f: z = %.2f", weather, sum / n, mean, zm);
    double chi = 0;
    for (int b = 0; b < NB; b++)
        chi += pow(bins[b] - n / (double)NB, 2) / (n / (double)NB);
    ck_assert_msg(chi < 41.8, "%s: chi-square %.1f over %d bins", weather, chi, NB);
    double zs = 0, chis = 0;
    if (one) {
        ck_assert_uint_gt(nsize, 1000);
        zs = (ssum / nsize - 1) * sqrt((double)nsize);
        ck_assert_msg(fabs(zs) < 5, "%s: Lambda (D - Dmin) has mean %.4f over %zu echoes: z = %.2f", weather,
                      ssum / nsize, nsize, zs);
        for (int b = 0; b < NB; b++)
            chis += pow(sbins[b] - nsize / (double)NB, 2) / (nsize / (double)NB);
        ck_assert_msg(chis < 41.8, "%s: sizes: chi-square %.1f over %d bins", weather, chis, NB);
    }
    fprintf(stderr,
            "weather %s: L %.4f, %zu/%zu beams (z %.2f), mean range %.3f m (z %.2f), chi2 %.1f; "
            "sizes of %zu: z %.2f, chi2 %.1f\n",
            weather, L, n, beams, z, sum / n, zm, chi, nsize, zs, chis);
    unload(&r);
}

START_TEST(rain_false_return_rate) { sky_rate("{rain_rate: 10}", 10, 0, 0.005); }
END_TEST

START_TEST(snow_false_return_rate)
{
    sky_rate("{snow_rate: 2, snow_temperature: -5}", 0, 2, 0.003);
    sky_rate("{rain_rate: 4, snow_rate: 1}", 4, 1, 0.005);
}
END_TEST

/* A wall at 10 m: echoes only in front of it, and as many beams as
 * sum over beams of 1 - exp(-L(r_b)), r_b the beam's range to the wall;
 * with threshold 0 the floor is MAVS's, (0.9 / pi) F(max_range). */
START_TEST(echoes_only_in_front_of_the_hit)
{
    const char *fmt =
        "seed: 3\nmeshes:\n  - {name: w, box: {size: [1, 400, 400]}}\nobjects:\n  - {mesh: w, position: [10.5, 0, 0]}\n"
        "%ssensors:\n  - {name: l, type: lidar, channels: 16, vfov: [-10 deg, 10 deg], columns: 500, hfov: 60 deg,\n"
        "     azimuth0: -30 deg, divergence: 3 mrad, max_range: 100, min_range: 0.5, returns: first,\n"
        "     echo_separation: 0}\n";
    char t[1024];
    snprintf(t, sizeof t, fmt, "");
    rig a = load(t);
    snprintf(t, sizeof t, fmt, "weather: {rain_rate: 30}\n");
    rig b = load(t);
    model m = make_model(30, 0, 0.9 / M_PI * pow(10.0 / 100, 2));
    scan(&a, 0, NULL);
    ck_assert_uint_eq(a.pt->count, 16 * 500);
    /* L(x) on a 1 mm grid from min_range to 12 m (Simpson per step). */
    enum { NG = 11500 };
    static double cum[NG + 1];
    cum[0] = 0;
    for (int g = 0; g < NG; g++) {
        double xa = 0.5 + g * 1e-3, xb = xa + 1e-3;
        cum[g + 1] = cum[g] + 1e-3 / 6 * (rate_all(&m, xa) + 4 * rate_all(&m, xa + 5e-4) + rate_all(&m, xb));
    }
    double expect = 0, var = 0;
    for (size_t i = 0; i < a.pt->count; i++) {
        double u = (a.pt->range[i] - 0.5) / 1e-3;
        int g = (int)u;
        ck_assert(g >= 0 && g < NG);
        double p = 1 - exp(-(cum[g] + (cum[g + 1] - cum[g]) * (u - g)));
        expect += p;
        var += p * (1 - p);
    }
    size_t n = 0, beams = 0;
    for (uint64_t k = 0; k < 4; k++) {
        scan(&b, k, NULL);
        ck_assert_uint_eq(b.pt->count, a.pt->count); /* one return a beam */
        for (size_t i = 0; i < b.pt->count; i++)
            if (b.pt->object[i] == SENSIM_RENDER_NO_OBJECT) {
                ck_assert_msg(b.pt->range[i] < a.pt->range[i], "echo at %g behind the wall at %g", b.pt->range[i],
                              a.pt->range[i]);
                n++;
            } else {
                ck_assert_within(b.pt->range[i], a.pt->range[i], 0);
            }
        beams += a.pt->count;
    }
    double z = (n - 4 * expect) / sqrt(4 * var);
    ck_assert_msg(fabs(z) < 5, "%zu echoes in %zu beams, expected %.1f: z = %.2f", n, beams, 4 * expect, z);
    ck_assert_uint_gt(n, 100);
    unload(&a);
    unload(&b);
}
END_TEST

/* The same scan at 1 and 2 threads, bit for bit; another seed differs. */
START_TEST(reproducible_at_any_thread_count)
{
    const char *fmt = "seed: %d\nmeshes:\n  - {name: g, plane: {size: [400, 400]}}\nobjects:\n  - {mesh: g}\n"
                      "weather: {rain_rate: 20, snow_rate: 1}\n"
                      "sensors:\n  - {name: l, type: lidar, preset: vlp16, returns: dual}\n";
    char t[1024];
    snprintf(t, sizeof t, fmt, 7);
    rig a = load(t), b = load(t);
    snprintf(t, sizeof t, fmt, 8);
    rig c = load(t);
    const double z = 1.8;
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    scan(&a, 5, &z);
    omp_set_num_threads(2);
    scan(&b, 5, &z);
    scan(&c, 5, &z);
    omp_set_num_threads(saved);
    ck_assert_uint_eq(a.pt->count, b.pt->count);
    size_t n = a.pt->count, air = 0;
    ck_assert_int_eq(memcmp(a.pt->xyzi, b.pt->xyzi, 4 * n * sizeof *a.pt->xyzi), 0);
    ck_assert_int_eq(memcmp(a.pt->object, b.pt->object, n * sizeof *a.pt->object), 0);
    ck_assert_int_eq(memcmp(a.pt->return_index, b.pt->return_index, n * sizeof *a.pt->return_index), 0);
    for (size_t i = 0; i < n; i++)
        air += a.pt->object[i] == SENSIM_RENDER_NO_OBJECT;
    ck_assert_uint_gt(air, 50);
    ck_assert(c.pt->count != n || memcmp(a.pt->xyzi, c.pt->xyzi, 4 * n * sizeof *a.pt->xyzi) != 0);
    unload(&a);
    unload(&b);
    unload(&c);
}
END_TEST

/* Camera: a wall at 20 m; each pixel's contrast to the sky fades as
 * exp(-alpha t), t = 20 / cos(angle off the axis), alpha = 0.01 R^0.6. */
START_TEST(camera_contrast)
{
    const char *fmt = "materials:\n  - {name: paint, albedo: [0.8, 0.5, 0.2]}\n"
                      "meshes:\n  - {name: w, box: {size: [1, 400, 400]}}\n"
                      "objects:\n  - {mesh: w, material: paint, position: [20.5, 0, 0]}\n"
                      "ambient: {light: [0.6, 0.6, 0.6], sky: [0.2, 0.7, 0.9]}\n%s"
                      "sensors:\n  - {name: c, type: camera, width: 32, height: 24, hfov: 60 deg}\n";
    char t[1024], *dir = tu_mkdtemp(), *p = tu_path(dir, "scene.yaml");
    float *img[2];
    sensim_render_camera *cam = NULL;
    for (int k = 0; k < 2; k++) {
        snprintf(t, sizeof t, fmt, k ? "weather: {rain_rate: 10}\n" : "");
        ck_assert_int_eq(tu_write_file(p, t), 0);
        sensim_scene *s = sensim_scene_load(p);
        ck_assert_msg(s != NULL, "%s", sensim_last_error());
        sensim_render_sensor sen;
        ck_assert_msg(sensim_render_sensor_load(p, "c", &sen) == SENSIM_OK, "%s", sensim_last_error());
        if (!cam)
            cam = sensim_render_camera_create(&sen.camera);
        img[k] = malloc(32 * 24 * 3 * sizeof(float));
        ck_assert_int_eq(sensim_render_camera_render(cam, s, fixed_pose, NULL, 0, 0, img[k]), SENSIM_OK);
        sensim_scene_destroy(s);
    }
    const double alpha = 0.01 * pow(10, 0.6), sky[3] = {0.2, 0.7, 0.9};
    /* The sample lies somewhere in its pixel: t between the pixel's
     * nearest and farthest corner rays (and 1e-5 for float rounding). */
    int centre = 0;
    for (int y = 0; y < 24; y++)
        for (int x = 0; x < 32; x++) {
            double tmin = INFINITY, tmax = 0;
            for (int c = 0; c < 4; c++) {
                sensim_vec3 d = sensim_render_camera_direction(cam, x + (c & 1), y + (c >> 1));
                tmin = fmin(tmin, 20 / d.x);
                tmax = fmax(tmax, 20 / d.x);
            }
            for (int i = 0; i < 3; i++) {
                size_t q = 3 * ((size_t)y * 32 + x) + i;
                ck_assert(fabs(img[0][q] - sky[i]) > 0.1); /* the wall, not the sky */
                double ratio = (img[1][q] - sky[i]) / (img[0][q] - sky[i]);
                ck_assert_msg(ratio >= exp(-alpha * tmax) * (1 - 1e-5) && ratio <= exp(-alpha * tmin) * (1 + 1e-5),
                              "pixel (%d, %d): contrast ratio %.6f outside exp(-alpha t) for t in [%.4f, %.4f]", x, y,
                              ratio, tmin, tmax);
            }
            centre += tmax - tmin < 0.05;
        }
    ck_assert_int_gt(centre, 0); /* some pixels pin t to 2.5e-3 relative */
    free(img[0]);
    free(img[1]);
    sensim_render_camera_destroy(cam);
    free(p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

static void expect_error(const char *weather, const char *needle)
{
    char *dir = tu_mkdtemp(), *p = tu_path(dir, "scene.yaml"), t[512];
    snprintf(t, sizeof t, "meshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - {mesh: b}\nweather: %s\n",
             weather);
    ck_assert_int_eq(tu_write_file(p, t), 0);
    ck_assert_ptr_null(sensim_scene_load(p));
    ck_assert_msg(strstr(sensim_last_error(), needle) != NULL, "message '%s' lacks '%s'", sensim_last_error(), needle);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

static double rain_of(const char *weather)
{
    char *dir = tu_mkdtemp(), *p = tu_path(dir, "scene.yaml"), t[512];
    snprintf(t, sizeof t, "meshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - {mesh: b}\nweather: %s\n",
             weather);
    ck_assert_int_eq(tu_write_file(p, t), 0);
    sensim_scene *s = sensim_scene_load(p);
    ck_assert_msg(s != NULL, "%s", sensim_last_error());
    double r = sensim_scene_weather(s).rain_rate;
    sensim_scene_destroy(s);
    free(p);
    tu_rmtree(dir);
    free(dir);
    return r;
}

START_TEST(scene_keys)
{
    ck_assert_within(rain_of("{rain_rate: 12.5}"), 12.5, 0);
    ck_assert_within(rain_of("{rain_rate: 10 mm/h}"), 10, 1e-12);
    ck_assert_within(rain_of("{rain_rate: 2.5 cm/h}"), 25, 1e-12);
    ck_assert_within(rain_of("{snow_rate: 1}"), 0, 0);
    expect_error("{rain_rate: -1}", "scene.yaml:5: weather: key 'rain_rate': must be 0..500 mm/h (got -1 mm/h)");
    expect_error("{rain_rate: 501}", "scene.yaml:5: weather: key 'rain_rate'");
    expect_error("{snow_rate: 60}", "scene.yaml:5: weather: key 'snow_rate': must be 0..50 mm/h");
    expect_error("{rain_rate: 10 s}", "scene.yaml:5");
    expect_error("{rain_rate: 10 s}", "rain_rate");
    expect_error("{rain_rate: wet}", "rain_rate");
    expect_error("{rain: 10}", "scene.yaml:5: unknown key 'rain' in weather");
    expect_error("{snow_temperature: -3}", "scene.yaml:5: weather: missing key 'rain_rate' or 'snow_rate'");
    expect_error("{snow_rate: 1, snow_temperature: 20}", "snow_temperature");
    expect_error("{rain_rate: 1, rain_reflectance: 2}", "rain_reflectance");
    expect_error("{rain_rate: 1, extinction: mie}", "key 'extinction': unknown 'mie' (expected mavs, dsd)");
    expect_error("{rain_rate: 1, false_returns: maybe}", "false_returns");
    expect_error("[10]", "weather");
}
END_TEST

/* The demo scenes render: particle echoes near the sensor, ground returns
 * dimmed by the rain's two-way extinction against the same scene clear. */
static void demo(const char *file, double alpha)
{
    char *path = tu_src(file), *dir = tu_mkdtemp(), *clear = tu_path(dir, "clear.yaml");
    size_t len;
    char *text = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    /* The same scene without its weather block (the block is the lines
     * from "weather:" to the next top-level key). */
    char *w = strstr(text, "\nweather:");
    ck_assert_ptr_nonnull(w);
    char *next = w + 1;
    while ((next = strchr(next, '\n')) && (next[1] == ' ' || next[1] == '#'))
        next++;
    ck_assert_ptr_nonnull(next);
    memmove(w, next, strlen(next) + 1);
    /* The clear copy beside a copy of the mesh it names. */
    char *mesh = tu_src("data/scenes/cone.gltf"), *mcopy = tu_path(dir, "cone.gltf");
    char *mtext = tu_read_file(mesh, &len);
    ck_assert_ptr_nonnull(mtext);
    ck_assert_int_eq(tu_write_file(mcopy, mtext), 0);
    ck_assert_int_eq(tu_write_file(clear, text), 0);
    sensim_scene *s[2] = {sensim_scene_load(path), sensim_scene_load(clear)};
    ck_assert_msg(s[0] && s[1], "%s", sensim_last_error());
    ck_assert_within(sensim_scene_extinction_at(s[0], 905e-9) - sensim_scene_extinction_at(s[1], 905e-9), alpha, 1e-12);
    sensim_render_sensor sen;
    ck_assert_msg(sensim_render_sensor_load(path, "vlp16", &sen) == SENSIM_OK, "%s", sensim_last_error());
    sensim_render_lidar *l = sensim_render_lidar_create(&sen.lidar);
    sensim_render_lidar_points *pt[2] = {sensim_render_lidar_points_create(l), sensim_render_lidar_points_create(l)};
    const double z = sen.mount.p.z;
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(sensim_render_lidar_scan(l, s[k], fixed_pose, &z, 0, 0, pt[k]), SENSIM_OK);
    size_t air = 0, ground = 0;
    double ratio = 0;
    for (size_t i = 0; i < pt[0]->count; i++)
        air += pt[0]->object[i] == SENSIM_RENDER_NO_OBJECT;
    /* Beams without an echo from the weather: the same hit, dimmer. */
    for (size_t i = 0, j = 0; i < pt[0]->count && j < pt[1]->count;) {
        if (pt[0]->channel[i] == pt[1]->channel[j] && pt[0]->azimuth[i] == pt[1]->azimuth[j]) {
            /* (an echo merged into the hit moves its range: skipped) */
            if (pt[0]->object[i] != SENSIM_RENDER_NO_OBJECT && pt[0]->range[i] == pt[1]->range[j]) {
                double r = pt[1]->range[j];
                ratio = fmax(ratio, fabs(pt[0]->xyzi[4 * i + 3] / pt[1]->xyzi[4 * j + 3] / exp(-2 * alpha * r) - 1));
                ground++;
            }
            i++, j++;
        } else if (pt[0]->object[i] == SENSIM_RENDER_NO_OBJECT) {
            i++;
        } else {
            j++;
        }
    }
    fprintf(stderr, "demo %s: %zu points, %zu from the weather, %zu compared\n", file, pt[0]->count, air, ground);
    ck_assert_uint_gt(air, 20);
    ck_assert_uint_gt(ground, pt[1]->count / 2);
    ck_assert_msg(ratio < 1e-5, "ratio error %g", ratio);
    for (int k = 0; k < 2; k++) {
        sensim_render_lidar_points_destroy(pt[k]);
        sensim_scene_destroy(s[k]);
    }
    sensim_render_lidar_destroy(l);
    free(mesh);
    free(mcopy);
    free(mtext);
    free(text);
    free(clear);
    tu_rmtree(dir);
    free(dir);
    free(path);
}

START_TEST(demo_scenes)
{
    demo("data/scenes/rain.yaml", 0.01 * pow(25, 0.6));
    demo("data/scenes/snow.yaml", (15 * 2 + 1) / 1e4);
    /* And through the program, with a bird's-eye PNG. */
    char *dir = tu_mkdtemp(), *out = tu_path(dir, "rain.h5"), *bev = tu_path(dir, "bev"),
         *scene = tu_src("data/scenes/rain.yaml"), *traj = tu_path(dir, "line.h5");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "1", "-o", traj, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("render", scene, "-t", traj, "-s", "vlp16", "-o", out, "-n", "1", "--bev", bev, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    ck_assert_int_eq(tu_count_entries(bev), 1);
    tu_rmtree(dir);
    free(dir);
    free(out);
    free(bev);
    free(scene);
    free(traj);
}
END_TEST

Suite *suite_weather(void)
{
    Suite *s = suite_create("weather");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, extinction_closed_forms);
    tcase_add_test(tc, lidar_two_way_attenuation);
    tcase_add_test(tc, rain_false_return_rate);
    tcase_add_test(tc, snow_false_return_rate);
    tcase_add_test(tc, echoes_only_in_front_of_the_hit);
    tcase_add_test(tc, reproducible_at_any_thread_count);
    tcase_add_test(tc, camera_contrast);
    tcase_add_test(tc, scene_keys);
    tcase_add_test(tc, demo_scenes);
    suite_add_tcase(s, tc);
    return s;
}
