/* Lidar noise in sensor coordinates. See sensim/lidar.h.
 *
 * Chrono::Sensor (seed 000 sec. 3.1) applies noise to range, angles and
 * intensity and maps it to the point, rather than to x, y, z; AGX Sensor
 * (seed 002 sec. 2.5) grows the range sigma linearly with distance. The
 * dropout rules follow CARLA's ray-cast lidar (dropoff_general_rate,
 * dropoff_intensity_limit, dropoff_zero_intensity). */
#include "sensim/lidar.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/rng.h"
#include "../lib/base_internal.h"

enum {
    STREAM_RANGE = 1,
    STREAM_AZIMUTH = 2,
    STREAM_ELEVATION = 3,
    STREAM_INTENSITY = 4,
    STREAM_DROP_GENERAL = 5,
    STREAM_DROP_INTENSITY = 6
};

struct sensim_lidar {
    sensim_lidar_params p;
    sensim_rng r_range, r_az, r_el, r_int, r_gen, r_int_drop;
    double alpha, beta; /* CARLA's keep probability alpha i + beta */
};

sensim_lidar_params sensim_lidar_default_params(void)
{
    sensim_lidar_params p;
    memset(&p, 0, sizeof p);
    p.min_intensity = -INFINITY;
    p.max_range = INFINITY;
    return p;
}

double sensim_lidar_range_sigma(const sensim_lidar_params *p, double range)
{
    return p->range_sigma_base + p->range_sigma_slope * range;
}

#define NONNEG(name)                                                                                  \
    if (!(p->name >= 0 && isfinite(p->name))) {                                                       \
        sensim_error(SENSIM_EINVAL, "lidar: " #name " = %g: must be finite and >= 0", p->name);      \
        return NULL;                                                                                  \
    }
#define UNIT(name)                                                                                    \
    if (!(p->name >= 0 && p->name <= 1)) {                                                            \
        sensim_error(SENSIM_EINVAL, "lidar: " #name " = %g: must be in [0, 1]", p->name);             \
        return NULL;                                                                                  \
    }

sensim_lidar *sensim_lidar_create(const sensim_lidar_params *p, uint64_t seed, uint32_t sensor)
{
    if (!p) {
        sensim_error(SENSIM_EINVAL, "lidar: NULL parameters");
        return NULL;
    }
    NONNEG(range_sigma_base)
    NONNEG(range_sigma_slope)
    NONNEG(azimuth_sigma)
    NONNEG(elevation_sigma)
    NONNEG(intensity_sigma)
    NONNEG(range_resolution)
    NONNEG(min_range)
    UNIT(dropoff_general_rate)
    UNIT(dropoff_zero_intensity)
    if (!isfinite(p->range_bias)) {
        sensim_error(SENSIM_EINVAL, "lidar: range_bias = %g: must be finite", p->range_bias);
        return NULL;
    }
    if (p->dropoff_zero_intensity > 0 && !(p->dropoff_intensity_limit > 0 && isfinite(p->dropoff_intensity_limit))) {
        sensim_error(SENSIM_EINVAL, "lidar: dropoff_intensity_limit = %g: must be > 0 when dropoff_zero_intensity > 0",
                     p->dropoff_intensity_limit);
        return NULL;
    }
    if (isnan(p->min_intensity) || !(p->max_range > p->min_range)) {
        sensim_error(SENSIM_EINVAL, "lidar: min_intensity = %g, range limits [%g, %g]: need a number and min < max",
                     p->min_intensity, p->min_range, p->max_range);
        return NULL;
    }
    sensim_lidar *l = sensim_new_(sizeof *l, "lidar");
    if (!l)
        return NULL;
    l->p = *p;
    l->r_range = sensim_rng_make(seed, sensor, STREAM_RANGE);
    l->r_az = sensim_rng_make(seed, sensor, STREAM_AZIMUTH);
    l->r_el = sensim_rng_make(seed, sensor, STREAM_ELEVATION);
    l->r_int = sensim_rng_make(seed, sensor, STREAM_INTENSITY);
    l->r_gen = sensim_rng_make(seed, sensor, STREAM_DROP_GENERAL);
    l->r_int_drop = sensim_rng_make(seed, sensor, STREAM_DROP_INTENSITY);
    if (p->dropoff_zero_intensity > 0) {
        /* As CARLA's ARayCastLidar::Set computes them (its header comment
         * gives alpha = (1 - zero)/limit, which would keep more than all
         * points at the limit; the code's alpha = zero/limit is right). */
        l->alpha = p->dropoff_zero_intensity / p->dropoff_intensity_limit;
        l->beta = 1.0 - p->dropoff_zero_intensity;
    }
    return l;
}

void sensim_lidar_destroy(sensim_lidar *l) { free(l); }
const sensim_lidar_params *sensim_lidar_params_of(const sensim_lidar *l) { return &l->p; }

sensim_status sensim_lidar_apply(const sensim_lidar *l, const sensim_lidar_block *b, size_t *kept)
{
    if (!l || !b || !b->points || !b->points_out || !b->keep)
        return sensim_error(SENSIM_EINVAL, "lidar: apply: NULL model or buffer");
    const sensim_lidar_params *p = &l->p;
    const long long n = (long long)b->n;
    size_t nk = 0;
#pragma omp parallel for schedule(static) reduction(+ : nk)
    for (long long k = 0; k < n; k++) {
        const size_t i = (size_t)k;
        const uint64_t g = b->first + i;
        const float *pt = b->points + 4 * i;
        double x = pt[0], y = pt[1], z = pt[2], inten = pt[3];
        double r, az, el;
        if (b->range && b->azimuth && b->elevation) {
            r = b->range[i];
            az = b->azimuth[i];
            el = b->elevation[i];
        } else {
            r = sqrt(x * x + y * y + z * z);
            az = atan2(y, x);
            el = r > 0 ? asin(z / r) : 0.0;
        }
        int keep = isfinite(r) && isfinite(az) && isfinite(el) && isfinite(inten);
        if (keep && p->dropoff_general_rate > 0 && sensim_rng_uniform(&l->r_gen, g) < p->dropoff_general_rate)
            keep = 0;
        if (keep && p->dropoff_zero_intensity > 0 && inten < p->dropoff_intensity_limit &&
            sensim_rng_uniform(&l->r_int_drop, g) >= l->alpha * inten + l->beta)
            keep = 0;
        double rn = r, azn = az, eln = el, in = inten;
        if (keep) {
            double s = sensim_lidar_range_sigma(p, r);
            if (s > 0)
                rn += s * sensim_rng_normal(&l->r_range, g);
            rn += p->range_bias;
            if (p->range_resolution > 0)
                rn = round(rn / p->range_resolution) * p->range_resolution;
            if (p->azimuth_sigma > 0)
                azn += p->azimuth_sigma * sensim_rng_normal(&l->r_az, g);
            if (p->elevation_sigma > 0)
                eln += p->elevation_sigma * sensim_rng_normal(&l->r_el, g);
            if (p->intensity_sigma > 0) {
                in += p->intensity_sigma * sensim_rng_normal(&l->r_int, g);
                if (in < 0)
                    in = 0;
            }
            if (in < p->min_intensity || !(rn >= p->min_range && rn <= p->max_range) || rn <= 0)
                keep = 0;
        }
        /* Map the noisy polar measurement back to the point (an untouched
         * measurement keeps its x, y, z bit for bit). */
        float *o = b->points_out + 4 * i;
        if (rn != r || azn != az || eln != el) {
            double ce = cos(eln);
            o[0] = (float)(rn * ce * cos(azn));
            o[1] = (float)(rn * ce * sin(azn));
            o[2] = (float)(rn * sin(eln));
        } else {
            o[0] = (float)x;
            o[1] = (float)y;
            o[2] = (float)z;
        }
        o[3] = (float)in;
        if (b->range_out)
            b->range_out[i] = (float)rn;
        if (b->azimuth_out)
            b->azimuth_out[i] = (float)azn;
        if (b->elevation_out)
            b->elevation_out[i] = (float)eln;
        b->keep[i] = (uint8_t)keep;
        nk += (size_t)keep;
    }
    if (kept)
        *kept = nk;
    return SENSIM_OK;
}

void sensim_lidar_print(const sensim_lidar *l, FILE *f)
{
    const sensim_lidar_params *p = &l->p;
    fprintf(f,
            "lidar: range sigma %g m + %g r, bias %g m, azimuth %g rad, elevation %g rad, intensity %g, resolution "
            "%g m; dropout %g, intensity rule %g below %g, min intensity %g, range %g..%g m\n",
            p->range_sigma_base, p->range_sigma_slope, p->range_bias, p->azimuth_sigma, p->elevation_sigma,
            p->intensity_sigma, p->range_resolution, p->dropoff_general_rate, p->dropoff_zero_intensity,
            p->dropoff_intensity_limit, p->min_intensity, p->min_range, p->max_range);
}
