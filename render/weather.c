/* Rain and snow: extinction for lidar and camera, particle echoes for lidar.
 *
 * Extinction alpha (1/m) of precipitation at rate R (mm/h; snow as melted
 * water). Raindrops and flakes are mm-sized, far above the wavelengths, so
 * alpha is the same for the camera and any lidar (geometric optics).
 *   MAVS (the default; the reference peer):
 *     rain  alpha = 0.01 R^0.6                 Goodin, Carruth, Doude &
 *           Hudson, "Predicting the Influence of Rain on LIDAR in ADAS",
 *           Electronics 8(1) 89 (2019); MAVS src/sensors/lidar/lidar.cpp,
 *           Lidar::Update: alpha_rain_ = 0.01f * pow(rate, 0.6).
 *     snow  alpha = (15 R + 1) / 1e4 (dry, T <= -1 C),
 *           alpha = (2 R - 0.1) / 1e4 (wet; 0 below 0.05 mm/h)
 *           MAVS src/mavs_core/environment/snow/snow.cpp,
 *           Snow::Initialize, from Rasshofer, Spies & Spies, "Influences
 *           of weather phenomena on automotive laser radar systems", Adv.
 *           Radio Sci. 9 (2011) eqs. 25-26, in 1/km, with MAVS's own
 *           factor 1/10 ("way too high ... lower by factor of 10").
 *   DSD: extinction efficiency 2 (large-particle limit) over the size
 *     distribution: alpha = 2 int (pi D^2 / 4) N(D) dD = pi N0 / Lambda^3.
 *     Note MAVS's rain fit is 27x this at 10 mm/h (0.040 vs 0.0016 /m);
 *     the DSD value is the one that matches visibility in rain (2.5 km at
 *     10 mm/h by Koschmieder).
 * Particle size distributions N(D) = N0 exp(-Lambda D), D in mm, N in
 * m^-3 mm^-1:
 *   rain  Marshall & Palmer, J. Meteor. 5 (1948) 165: N0 = 8000,
 *         Lambda = 4.1 R^-0.21;
 *   snow  Gunn & Marshall, J. Meteor. 15 (1958) 452: N0 = 3800 R^-0.87,
 *         Lambda = 2.55 R^-0.48 (D the melted diameter; used here as the
 *         flake's, which understates a dry flake's cross-section).
 *
 * Lidar particle echoes (sensim's model; MAVS draws no echoes from rain
 * and a guessed rate for snow). A beam with 1/e^2 half-widths
 * w_h,v(x) = w0 + x tan(theta_h,v / 2) (seed 002 eq. 21's waist w0 and the
 * lidar's divergences) carries its power over the effective area
 * A(x) = (pi / 2) w_h w_v (a Gaussian of peak irradiance I0 carries
 * I0 pi w_h w_v / 2). A particle of diameter D at range x intercepts the
 * fraction f = min(1, (pi D^2 / 4) / A(x)) of it and echoes like a
 * Lambertian target of reflectance rho (2 pi / S for lidar ratio S) filling
 * that fraction:
 *     I(D, x) = rho f F(x) exp(-2 alpha x),
 * F the lidar's range falloff, alpha the total extinction: the unit of a
 * surface return (a white Lambertian target filling the beam head-on gives
 * F(x)). It is detected when I >= T, T the lidar's threshold or, when that
 * is 0, MAVS's noise cutoff (Lidar::Update: 0.9 / (pi max_range^2) against
 * rho cos / r^2), a Lambertian target of reflectance 0.9 / pi at max_range:
 * T = (0.9 / pi) F(max_range). Particles fill space as a Poisson process
 * of density N(D) dD, so the detectable ones in the beam are a Poisson
 * process in range of rate
 *     lambda(x) = A(x) int_{D >= Dmin(x)} N(D) dD
 *               = A(x) (N0 / Lambda) exp(-Lambda Dmin(x)),
 *     Dmin(x) = sqrt(4 q A(x) / pi), q = T / (rho F(x) exp(-2 alpha x)),
 * and lambda = 0 where q > 1. A beam whose light reaches r (its farthest
 * first hit over the sub-rays; max_range when one misses) gets
 * Poisson(int_{min_range}^{r} lambda) echoes, each at a range of density
 * proportional to lambda and of diameter Dmin(x) + Exp(Lambda) (the
 * exponential's tail is memoryless). The echoes join the beam's surface
 * hits and the return mode chooses among them. An ideal ray (no divergence,
 * no waist) meets no particle. The integral is tabulated per scan on 256
 * Simpson segments, denser near the sensor; a range is drawn by inverting
 * it, linear within a segment. */
#include <math.h>
#include <string.h>

#include "render_internal.h"
#include "sensim/rng.h"

#define K (SENSIM_WEATHER_NODES - 1)

sensim_weather sensim_weather_default(void)
{
    sensim_weather w;
    memset(&w, 0, sizeof w);
    w.snow_temperature = -5;
    /* Lidar ratio S = 18.8 sr of water spheres (O'Connor, Illingworth &
     * Hogan, J. Atmos. Oceanic Technol. 21 (2004) 777); extinction
     * efficiency 2 gives dsigma/dOmega = 2 a / S, a Lambertian disc of area
     * a the same for rho = 2 pi / S. */
    w.rain_reflectance = w.snow_reflectance = 2 * M_PI / 18.8;
    w.extinction = SENSIM_WEATHER_EXTINCTION_MAVS;
    w.false_returns = 1;
    return w;
}

sensim_status sensim_weather_size_distribution(sensim_precipitation kind, double rate, double *n0, double *lambda)
{
    if (!(rate > 0 && isfinite(rate)))
        return sensim_error(SENSIM_EINVAL, "weather: rate must be finite and > 0 mm/h (got %g)", rate);
    if (kind == SENSIM_PRECIPITATION_RAIN) {
        *n0 = 8000;
        *lambda = 4.1 * pow(rate, -0.21);
    } else if (kind == SENSIM_PRECIPITATION_SNOW) {
        *n0 = 3800 * pow(rate, -0.87);
        *lambda = 2.55 * pow(rate, -0.48);
    } else {
        return sensim_error(SENSIM_EINVAL, "weather: unknown precipitation %d", (int)kind);
    }
    return SENSIM_OK;
}

/* pi N0 / Lambda^3 in mm^2/m^3, to 1/m. */
static double dsd_extinction(sensim_precipitation kind, double rate)
{
    double n0, la;
    if (!(rate > 0) || sensim_weather_size_distribution(kind, rate, &n0, &la))
        return 0;
    return M_PI * n0 / (la * la * la) * 1e-6;
}

double sensim_weather_extinction(const sensim_weather *w)
{
    double a = 0;
    if (w->extinction == SENSIM_WEATHER_EXTINCTION_DSD)
        return dsd_extinction(SENSIM_PRECIPITATION_RAIN, w->rain_rate) +
               dsd_extinction(SENSIM_PRECIPITATION_SNOW, w->snow_rate);
    if (w->rain_rate > 0)
        a += 0.01 * pow(w->rain_rate, 0.6);
    if (w->snow_rate > 0)
        a += w->snow_temperature <= -1 ? (15 * w->snow_rate + 1) / 1e4 : fmax(0.0, (2 * w->snow_rate - 0.1) / 1e4);
    return a;
}

sensim_status sensim_scene_set_weather(sensim_scene *s, const sensim_weather *w)
{
    if (!(w->rain_rate >= 0 && w->rain_rate <= 500))
        return sensim_error(SENSIM_EINVAL, "weather: rain_rate must be in [0, 500] mm/h (got %g)", w->rain_rate);
    if (!(w->snow_rate >= 0 && w->snow_rate <= 50))
        return sensim_error(SENSIM_EINVAL, "weather: snow_rate must be in [0, 50] mm/h (got %g)", w->snow_rate);
    if (!(w->snow_temperature >= -60 && w->snow_temperature <= 10))
        return sensim_error(SENSIM_EINVAL, "weather: snow_temperature must be in [-60, 10] C (got %g)",
                            w->snow_temperature);
    if (!(w->rain_reflectance >= 0 && w->rain_reflectance <= 1) ||
        !(w->snow_reflectance >= 0 && w->snow_reflectance <= 1))
        return sensim_error(SENSIM_EINVAL, "weather: reflectances must be in [0, 1] (got %g, %g)", w->rain_reflectance,
                            w->snow_reflectance);
    if (w->extinction != SENSIM_WEATHER_EXTINCTION_MAVS && w->extinction != SENSIM_WEATHER_EXTINCTION_DSD)
        return sensim_error(SENSIM_EINVAL, "weather: unknown extinction model %d", (int)w->extinction);
    s->weather = *w;
    s->weather.false_returns = w->false_returns != 0;
    s->weather_alpha = sensim_weather_extinction(w);
    return SENSIM_OK;
}

sensim_weather sensim_scene_weather(const sensim_scene *s) { return s->weather; }

/* ---- lidar particle echoes ---- */

static double beam_area(const sensim_weather_table *t, double x)
{
    return 0.5 * M_PI * (t->w0 + x * t->th) * (t->w0 + x * t->tv);
}

/* F(x) exp(-2 alpha x): a white Lambertian target filling the beam. */
static double beam_gain(const sensim_weather_table *t, double x)
{
    double g = sensim_render_lidar_falloff(t->l, x);
    return t->alpha > 0 ? g * exp(-2 * t->alpha * x) : g;
}

/* Smallest detectable diameter (mm) at x for reflectance rho; INFINITY when
 * none is (q > 1). */
static double d_min(const sensim_weather_table *t, double rho, double x, double *area, double *gain)
{
    *area = beam_area(t, x);
    *gain = rho * beam_gain(t, x);
    if (!(*area > 0) || !(*gain > 0) || *gain < t->thr)
        return INFINITY;
    return 1e3 * sqrt(4 * (t->thr / *gain) * *area / M_PI);
}

/* lambda(x): detectable particles per metre of range. */
static double density(const sensim_weather_table *t, int j, double x)
{
    double a, g, d = d_min(t, t->pop[j].rho, x, &a, &g);
    if (!isfinite(d))
        return 0;
    return a * t->pop[j].n0 / t->pop[j].lambda * exp(-t->pop[j].lambda * d);
}

static double node(const sensim_weather_table *t, int k)
{
    double u = (double)k / K;
    return t->x0 + (t->x1 - t->x0) * u * u;
}

void sensim_weather_table_make(const sensim_scene *s, const sensim_render_lidar *l, sensim_weather_table *t)
{
    const sensim_weather *w = &s->weather;
    const sensim_render_lidar_params *p = sensim_render_lidar_params_of(l);
    t->on = 0;
    t->pop[0].on = t->pop[1].on = 0;
    t->l = l;
    if (!w->false_returns || !(w->rain_rate > 0 || w->snow_rate > 0))
        return;
    t->th = tan(0.5 * p->divergence);
    t->tv = p->divergence_v > 0 ? tan(0.5 * p->divergence_v) : t->th;
    t->w0 = p->waist;
    t->x0 = p->min_range;
    t->x1 = p->max_range;
    if (!(beam_area(t, t->x1) > 0))
        return; /* an ideal ray meets no particle */
    t->alpha = sensim_scene_extinction_at(s, p->wavelength);
    t->thr = p->threshold > 0 ? p->threshold : 0.9 / M_PI * sensim_render_lidar_falloff(l, p->max_range);
    if (!(t->thr > 0) || !isfinite(t->thr))
        return;
    const double rate[2] = {w->rain_rate, w->snow_rate}, rho[2] = {w->rain_reflectance, w->snow_reflectance};
    for (int j = 0; j < 2; j++) {
        if (!(rate[j] > 0 && rho[j] > 0) ||
            sensim_weather_size_distribution((sensim_precipitation)j, rate[j], &t->pop[j].n0, &t->pop[j].lambda))
            continue;
        t->pop[j].rho = rho[j];
        double *c = t->pop[j].cum, xa = node(t, 0), fa = density(t, j, xa);
        c[0] = 0;
        for (int k = 0; k < K; k++) {
            double xb = node(t, k + 1), fb = density(t, j, xb), fm = density(t, j, 0.5 * (xa + xb));
            c[k + 1] = c[k] + (xb - xa) / 6 * (fa + 4 * fm + fb);
            xa = xb;
            fa = fb;
        }
        if (c[K] > 0)
            t->pop[j].on = t->on = 1;
    }
}

/* Expected count from min_range to r. */
static double cum_at(const sensim_weather_table *t, int j, double r)
{
    const double *c = t->pop[j].cum;
    if (!(r < t->x1))
        return c[K];
    if (!(r > t->x0))
        return 0;
    int k = (int)(K * sqrt((r - t->x0) / (t->x1 - t->x0)));
    if (k > K - 1)
        k = K - 1;
    double xa = node(t, k), xb = node(t, k + 1);
    while (k > 0 && r < xa) /* rounding at a node */
        xb = xa, xa = node(t, --k);
    while (k < K - 1 && r > xb)
        xa = xb, xb = node(t, ++k + 1);
    return c[k] + (c[k + 1] - c[k]) * (r - xa) / (xb - xa);
}

/* The range where the expected count from min_range reaches m. */
static double cum_inverse(const sensim_weather_table *t, int j, double m)
{
    const double *c = t->pop[j].cum;
    const int lo = (int)render_interval(c, 0, K, m); /* c[lo] <= m < c[lo + 1] */
    double xa = node(t, lo), xb = node(t, lo + 1), dc = c[lo + 1] - c[lo];
    return dc > 0 ? xa + (xb - xa) * fmin(1.0, (m - c[lo]) / dc) : xa;
}

int sensim_weather_beam(const sensim_weather_table *t, uint64_t beam, double reach, float *r, float *in)
{
    const sensim_render_lidar_params *p = sensim_render_lidar_params_of(t->l);
    int n = 0;
    for (int j = 0; j < 2; j++) {
        if (!t->pop[j].on)
            continue;
        const double m = cum_at(t, j, reach);
        if (!(m > 0))
            continue;
        const uint32_t base = SENSIM_RENDER_STREAM_WEATHER + 16u * (uint32_t)j;
        const sensim_rng rc = sensim_rng_make(p->seed, p->sensor, base);
        const sensim_rng rr = sensim_rng_make(p->seed, p->sensor, base + 1);
        const sensim_rng rs = sensim_rng_make(p->seed, p->sensor, base + 2);
        uint32_t cnt = sensim_rng_poisson(&rc, beam, m);
        if (cnt > SENSIM_WEATHER_MAX_ECHOES)
            cnt = SENSIM_WEATHER_MAX_ECHOES;
        for (uint32_t i = 0; i < cnt; i++) {
            const uint64_t idx = beam * SENSIM_WEATHER_MAX_ECHOES + i;
            const double x = cum_inverse(t, j, sensim_rng_uniform(&rr, idx) * m);
            double a, g, d = d_min(t, t->pop[j].rho, x, &a, &g);
            if (!isfinite(d))
                continue;
            d += -log(sensim_rng_uniform(&rs, idx)) / t->pop[j].lambda;
            const double f = fmin(1.0, M_PI * d * d * 1e-6 / 4 / a);
            r[n] = (float)x;
            in[n++] = (float)(f * g);
        }
    }
    return n;
}
