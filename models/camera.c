/* Camera pixel noise and lens models. See sensim/camera.h.
 *
 * Intensity noise: Chrono::Sensor (Benatti et al., seed 000, eq. 4),
 * sigma^2 = sigma_1^2 I + sigma_2^2, with the clamp Chrono lacks.
 * Physical chain: EMVA Standard 1288 (release 3.1/4.0), the linear camera
 * model mu_y = K (eta mu_p + mu_d) + black, with Poisson shot noise on the
 * collected charge, Gaussian read noise and uniform ADC quantization.
 * Lens: FOV wide-angle model of seed 000, eqs. 1-2. */
#include "sensim/camera.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/rng.h"

#include "lens_impl.h"
#include "../lib/base_internal.h"

/* Random streams of a camera (one per random quantity). */
enum {
    STREAM_TEMPORAL = 1, /* per-frame normal draws (intensity noise, read noise) */
    STREAM_SHOT = 2,     /* per-frame exact Poisson draws */
    STREAM_PRNU = 16,    /* fixed patterns, indexed by pixel */
    STREAM_DSNU = 17,
    STREAM_HOT = 18,
    STREAM_ROW = 19,
    STREAM_COL = 20
};

/* Normal draws are made in chunks of this many samples into a stack buffer
 * (the hot path does not allocate); the draws are a pure function of the
 * index, so the chunk size does not change the output. */
#define CHUNK 1024

struct sensim_camera {
    sensim_camera_params p;
    sensim_rng temporal, shot;
    size_t npix; /* H * W * C */
    float *gain; /* NULL when prnu == 0 */
    float *dark; /* NULL when no hot pixels: then dark_mean applies */
    float *offset; /* NULL when dsnu, rows and columns are all 0 */
    double dark_mean;   /* e- per exposure */
    double signal_scale; /* e- at I = 1: photons_full_scale * QE */
    double max_dn;       /* 2^bits - 1 */
    /* Stand-ins for absent maps over one chunk, so that the vectorized loop
     * reads every map the same way. */
    float ones[CHUNK], zeros[CHUNK], dark_row[CHUNK];
};

sensim_camera_params sensim_camera_default_params(void)
{
    sensim_camera_params p;
    memset(&p, 0, sizeof p);
    p.model = SENSIM_CAMERA_NOISE_NONE;
    p.channels = 1;
    p.photons_full_scale = 20000.0;
    p.quantum_efficiency = 0.6;
    p.exposure_time = 0.01;
    p.dark_current = 50.0;
    p.read_noise = 5.0;
    p.gain = 0.5;
    p.black_level = 0.0;
    p.full_well = 12000.0;
    p.adc_bits = 16;
    p.poisson_exact_below = 1000.0;
    return p;
}

#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            sensim_error(SENSIM_EINVAL, __VA_ARGS__);      \
            return SENSIM_EINVAL;                          \
        }                                                  \
    } while (0)

static sensim_status check_params(const sensim_camera_params *p)
{
    CHECK(p->model == SENSIM_CAMERA_NOISE_NONE || p->model == SENSIM_CAMERA_NOISE_INTENSITY ||
              p->model == SENSIM_CAMERA_NOISE_EMVA,
          "camera: unknown noise model %d", (int)p->model);
    CHECK(p->width > 0 && p->height > 0, "camera: image size %zux%zu: width and height must be > 0", p->width,
          p->height);
    CHECK(p->channels == 1 || p->channels == 3, "camera: channels = %zu: must be 1 or 3", p->channels);
    CHECK(p->width <= (1u << 20) && p->height <= (1u << 20), "camera: image size %zux%zu is too large", p->width,
          p->height);
    CHECK(p->variance_slope >= 0 && isfinite(p->variance_slope), "camera: variance_slope = %g: must be >= 0",
          p->variance_slope);
    CHECK(p->variance_intercept >= 0 && isfinite(p->variance_intercept),
          "camera: variance_intercept = %g: must be >= 0", p->variance_intercept);
    if (p->model != SENSIM_CAMERA_NOISE_EMVA)
        return SENSIM_OK;
    CHECK(p->photons_full_scale > 0 && isfinite(p->photons_full_scale),
          "camera: photons_full_scale = %g: must be > 0", p->photons_full_scale);
    CHECK(p->quantum_efficiency > 0 && p->quantum_efficiency <= 1, "camera: quantum_efficiency = %g: must be in (0, 1]",
          p->quantum_efficiency);
    CHECK(p->exposure_time >= 0 && isfinite(p->exposure_time), "camera: exposure_time = %g: must be >= 0",
          p->exposure_time);
    CHECK(p->dark_current >= 0 && isfinite(p->dark_current), "camera: dark_current = %g: must be >= 0",
          p->dark_current);
    CHECK(p->read_noise >= 0 && isfinite(p->read_noise), "camera: read_noise = %g: must be >= 0", p->read_noise);
    CHECK(p->gain > 0 && isfinite(p->gain), "camera: gain = %g: must be > 0", p->gain);
    CHECK(p->black_level >= 0 && isfinite(p->black_level), "camera: black_level = %g: must be >= 0",
          p->black_level);
    CHECK(p->full_well > 0 && isfinite(p->full_well), "camera: full_well = %g: must be > 0", p->full_well);
    CHECK(p->adc_bits >= 1 && p->adc_bits <= 16, "camera: adc_bits = %d: must be in 1..16", p->adc_bits);
    CHECK(p->prnu >= 0 && isfinite(p->prnu), "camera: prnu = %g: must be >= 0", p->prnu);
    CHECK(p->dsnu >= 0 && isfinite(p->dsnu), "camera: dsnu = %g: must be >= 0", p->dsnu);
    CHECK(p->hot_pixel_fraction >= 0 && p->hot_pixel_fraction <= 1,
          "camera: hot_pixel_fraction = %g: must be in [0, 1]", p->hot_pixel_fraction);
    CHECK(p->hot_pixel_dark_current >= 0 && isfinite(p->hot_pixel_dark_current),
          "camera: hot_pixel_dark_current = %g: must be >= 0", p->hot_pixel_dark_current);
    CHECK(p->row_offset_sigma >= 0 && isfinite(p->row_offset_sigma), "camera: row_offset_sigma = %g: must be >= 0",
          p->row_offset_sigma);
    CHECK(p->column_offset_sigma >= 0 && isfinite(p->column_offset_sigma),
          "camera: column_offset_sigma = %g: must be >= 0", p->column_offset_sigma);
    CHECK(p->poisson_exact_below >= 0, "camera: poisson_exact_below = %g: must be >= 0", p->poisson_exact_below);
    return SENSIM_OK;
}

void sensim_camera_destroy(sensim_camera *cam)
{
    if (!cam)
        return;
    SENSIM_FREE_ALL(cam->gain, cam->dark, cam->offset, cam);
}

/* Draws the per-run fixed patterns once. Each is a function of (seed,
 * sensor, pattern stream, pixel), so frames share them and seeds differ. */
static sensim_status make_patterns(sensim_camera *c, uint64_t seed, uint32_t sensor)
{
    const sensim_camera_params *p = &c->p;
    size_t W = p->width, H = p->height, C = p->channels, n = c->npix;
    double z[CHUNK];
    if (p->prnu > 0) {
        if (!(c->gain = malloc(n * sizeof *c->gain)))
            return sensim_error(SENSIM_ENOMEM, "camera: cannot allocate the PRNU map (%zu pixels)", n);
        sensim_rng r = sensim_rng_make(seed, sensor, STREAM_PRNU);
        for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
            size_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
            sensim_rng_normal_fill(&r, i0, m, z);
            for (size_t k = 0; k < m; k++) {
                double g = 1.0 + p->prnu * z[k];
                c->gain[i0 + k] = (float)(g > 0 ? g : 0);
            }
        }
    }
    if (p->hot_pixel_fraction > 0 && p->hot_pixel_dark_current > 0) {
        if (!(c->dark = malloc(n * sizeof *c->dark)))
            return sensim_error(SENSIM_ENOMEM, "camera: cannot allocate the dark map (%zu pixels)", n);
        sensim_rng r = sensim_rng_make(seed, sensor, STREAM_HOT);
        double hot = p->hot_pixel_dark_current * p->exposure_time;
        for (size_t i = 0; i < n; i++)
            c->dark[i] = (float)(c->dark_mean + (sensim_rng_uniform(&r, i) < p->hot_pixel_fraction ? hot : 0.0));
    }
    if (p->dsnu > 0 || p->row_offset_sigma > 0 || p->column_offset_sigma > 0) {
        if (!(c->offset = malloc(n * sizeof *c->offset)))
            return sensim_error(SENSIM_ENOMEM, "camera: cannot allocate the offset map (%zu pixels)", n);
        sensim_rng rd = sensim_rng_make(seed, sensor, STREAM_DSNU);
        sensim_rng rr = sensim_rng_make(seed, sensor, STREAM_ROW);
        sensim_rng rc = sensim_rng_make(seed, sensor, STREAM_COL);
        double *col = calloc(W, sizeof *col);
        if (!col)
            return sensim_error(SENSIM_ENOMEM, "camera: cannot allocate the column offsets (%zu columns)", W);
        if (p->column_offset_sigma > 0)
            for (size_t x = 0; x < W; x++)
                col[x] = p->column_offset_sigma * sensim_rng_normal(&rc, x);
        const size_t R = W * C;
        for (size_t y = 0; y < H; y++) {
            double row = p->row_offset_sigma > 0 ? p->row_offset_sigma * sensim_rng_normal(&rr, y) : 0.0;
            for (size_t j0 = 0; j0 < R; j0 += CHUNK) {
                size_t m = R - j0 < CHUNK ? R - j0 : CHUNK;
                if (p->dsnu > 0)
                    sensim_rng_normal_fill(&rd, y * R + j0, m, z);
                for (size_t k = 0; k < m; k++) {
                    double d = p->dsnu > 0 ? p->dsnu * p->gain * z[k] : 0.0;
                    c->offset[y * R + j0 + k] = (float)(row + col[(j0 + k) / C] + d);
                }
            }
        }
        free(col);
    }
    return SENSIM_OK;
}

sensim_camera *sensim_camera_create(const sensim_camera_params *p, uint64_t seed, uint32_t sensor)
{
    if (!p) {
        sensim_error(SENSIM_EINVAL, "camera: NULL parameters");
        return NULL;
    }
    if (check_params(p) != SENSIM_OK)
        return NULL;
    sensim_camera *c = sensim_new_(sizeof *c, "camera");
    if (!c)
        return NULL;
    c->p = *p;
    c->npix = p->width * p->height * p->channels;
    c->temporal = sensim_rng_make(seed, sensor, STREAM_TEMPORAL);
    c->shot = sensim_rng_make(seed, sensor, STREAM_SHOT);
    c->dark_mean = p->dark_current * p->exposure_time;
    c->signal_scale = p->photons_full_scale * p->quantum_efficiency;
    c->max_dn = ldexp(1.0, p->adc_bits) - 1.0;
    for (size_t k = 0; k < CHUNK; k++) {
        c->ones[k] = 1.0f;
        c->dark_row[k] = (float)c->dark_mean;
    }
    if (p->model == SENSIM_CAMERA_NOISE_EMVA && make_patterns(c, seed, sensor) != SENSIM_OK)
        goto fail;
    return c;
fail:
    sensim_camera_destroy(c);
    return NULL;
}

const sensim_camera_params *sensim_camera_params_of(const sensim_camera *cam) { return &cam->p; }
const float *sensim_camera_gain_map(const sensim_camera *cam) { return cam->gain; }
const float *sensim_camera_dark_map(const sensim_camera *cam) { return cam->dark; }
const float *sensim_camera_offset_map(const sensim_camera *cam) { return cam->offset; }

double sensim_camera_emva_mean_dn(const sensim_camera_params *p, double intensity)
{
    double e = intensity * p->photons_full_scale * p->quantum_efficiency + p->dark_current * p->exposure_time;
    if (e > p->full_well)
        e = p->full_well;
    return p->gain * e + p->black_level;
}

/* ---- element access: normalized load and clamped, rounded store ---- */

static inline __attribute__((always_inline)) double load(sensim_pixel_type t, const void *buf, size_t i)
{
    switch (t) {
    case SENSIM_PIXEL_U8:
        return ((const uint8_t *)buf)[i] * (1.0 / 255.0);
    case SENSIM_PIXEL_U16:
        return ((const uint16_t *)buf)[i] * (1.0 / 65535.0);
    default:
        return ((const float *)buf)[i];
    }
}

/* Clamps y (normalized) to [0, 1] and stores it: no wrap-around at the rails
 * (Chrono casts the noisy value without clamping). NaN stays NaN for f32 and
 * becomes 0 for integers. */
static inline __attribute__((always_inline)) void store(sensim_pixel_type t, void *buf, size_t i, double y)
{
    if (!(y >= 0.0))
        y = (t == SENSIM_PIXEL_F32 && isnan(y)) ? y : 0.0;
    else if (y > 1.0)
        y = 1.0;
    switch (t) {
    case SENSIM_PIXEL_U8:
        ((uint8_t *)buf)[i] = (uint8_t)(y * 255.0 + 0.5);
        break;
    case SENSIM_PIXEL_U16:
        ((uint16_t *)buf)[i] = (uint16_t)(y * 65535.0 + 0.5);
        break;
    default:
        ((float *)buf)[i] = (float)y;
        break;
    }
}

/* ---- the per-row kernels ----
 *
 * Each row is cut into chunks of CHUNK pixels. A chunk's standard normals
 * come in bulk from sensim_rng_normal_icdf_fill (Philox words turned into
 * normals by an inverse-CDF polynomial, sixteen lanes at a time, no
 * rejections), indexed by frame * H*W*C + pixel, so the draws are the same
 * whatever the thread count or chunk size. The per-pixel arithmetic is one
 * branch-free single-precision loop the compiler vectorizes (#pragma omp
 * simd; the pixel type is a constant after inlining), fixed patterns read in
 * the same pass. In the EMVA chain that loop uses the normal approximation
 * for every pixel and flags the pixels whose mean is below
 * poisson_exact_below; a second pass redoes those with an exact Poisson
 * draw (sensim_rng_poisson_exact: inversion below 10 e-, Hormann's PTRS
 * above, its Philox blocks and squeeze vectorized across pixels in
 * lib/rng_poisson.c; index frame * H*W*C + pixel as for the normals). Scalar and vector evaluation give the same bits (only IEEE
 * +, *, sqrt, floor and comparisons; no FMA contraction under -std=c11).
 * The Makefile compiles this file with -fno-math-errno -fno-trapping-math
 * (sqrt's arguments here are never negative; no code reads errno or FP
 * exception flags), without which GCC cannot vectorize sqrt, floor and the
 * clamps.
 *
 * Single precision is enough: electrons up to a full well of 10^6 carry a
 * rounding error below 0.06 e- (2^-24 relative), far under the shot noise
 * (1000 e- there); the DN sum before the ADC rounding is below 2^16, where
 * a float's spacing is 2^-8 DN, so the rounding thresholds move by under
 * 0.004 DN, invisible under a temporal noise of at least K sigma_d; integer
 * DN up to 2^16 - 1 are exact. */

/* The raw element as a float (u8 and u16 unscaled). */
static inline __attribute__((always_inline)) float load_raw(sensim_pixel_type t, const void *buf, size_t i)
{
    switch (t) {
    case SENSIM_PIXEL_U8:
        return (float)((const uint8_t *)buf)[i];
    case SENSIM_PIXEL_U16:
        return (float)((const uint16_t *)buf)[i];
    default:
        return ((const float *)buf)[i];
    }
}

static inline double type_max(sensim_pixel_type t)
{
    return t == SENSIM_PIXEL_U8 ? 255.0 : t == SENSIM_PIXEL_U16 ? 65535.0 : 1.0;
}

/* Stores q, on the type's own scale (0..255, 0..65535, or 0..1 for f32),
 * already clamped to it (NaN stays NaN for f32; integers never see one). */
static inline __attribute__((always_inline)) void store_scaled(sensim_pixel_type t, void *buf, size_t i, float q)
{
    switch (t) {
    case SENSIM_PIXEL_U8:
        ((uint8_t *)buf)[i] = (uint8_t)(int32_t)(q + 0.5f);
        break;
    case SENSIM_PIXEL_U16:
        ((uint16_t *)buf)[i] = (uint16_t)(int32_t)(q + 0.5f);
        break;
    default:
        ((float *)buf)[i] = q;
        break;
    }
}

/* Finds the set bytes of flags[0..n) eight at a time and calls body with j. */
#define FOR_FLAGGED(flags, n, j, body)                                   \
    for (size_t j8_ = 0; j8_ < (n); j8_ += 8) {                          \
        uint64_t f_ = 0;                                                 \
        memcpy(&f_, (flags) + j8_, (n) - j8_ < 8 ? (n) - j8_ : 8);       \
        for (; f_; f_ &= f_ - 1) {                                       \
            size_t j = j8_ + (size_t)(__builtin_ctzll(f_) >> 3);         \
            body;                                                        \
        }                                                                \
    }

/* Chrono eq. 4 on one row segment [i0, i0 + n), in single precision. */
static inline __attribute__((always_inline)) void intensity_segment(const sensim_camera *c, uint64_t base,
                                                                    sensim_pixel_type t, const void *in,
                                                                    void *out, size_t i0, size_t n)
{
    float z[CHUNK];
    const float s1 = (float)c->p.variance_slope, s2 = (float)c->p.variance_intercept;
    const float tm = (float)type_max(t), inv = (float)(1.0 / type_max(t));
    for (size_t done = 0; done < n; done += CHUNK) {
        size_t m = n - done < CHUNK ? n - done : CHUNK;
        size_t i1 = i0 + done;
        sensim_rng_normal_icdf_fill(&c->temporal, base + i1, m, z);
#pragma omp simd
        for (size_t k = 0; k < m; k++) {
            float I = load_raw(t, in, i1 + k) * inv;
            float y = I + sqrtf(s1 * (I > 0 ? I : 0) + s2) * z[k];
            /* No wrap-around at the rails (Chrono casts without a clamp). */
            y = y < 0 ? 0 : y;
            y = y > 1 ? 1 : y;
            store_scaled(t, out, i1 + k, y * tm);
        }
    }
}

/* The tail of the EMVA chain from collected electrons to the stored value:
 * saturation, gain, black level and offsets, ADC rounding and rails; then
 * the DN on the output type's scale (os = type max / ADC max, or 1 / ADC
 * max for f32). */
static inline __attribute__((always_inline)) float emva_out(float e, float fw, float K, float black, float off,
                                                            float maxdn, float os)
{
    e = e > fw ? fw : e;
    float dn = floorf(K * e + black + off + 0.5f);
    dn = dn < 0 ? 0 : dn;
    dn = dn > maxdn ? maxdn : dn;
    return dn * os;
}

/* EMVA 1288 chain on one row segment. Per pixel, in electrons:
 * mean mu = I * photons_full_scale * QE * (1 + PRNU) + dark (dark current
 * times exposure, plus hot pixels); collected charge ~ Poisson(mu) plus read
 * noise N(0, sigma_d^2) (one normal of variance mu + sigma_d^2 above
 * poisson_exact_below); saturation at the full well; DN = K e + black +
 * offsets (DSNU, row, column), rounded (the ADC's 1/12 DN^2 quantization
 * noise) and clamped to [0, 2^bits - 1]. NaN inputs (f32) stay NaN: every
 * comparison on them is false. */
static inline __attribute__((always_inline)) void emva_segment(const sensim_camera *c, uint64_t base,
                                                               sensim_pixel_type t, const void *in, void *out,
                                                               size_t i0, size_t n)
{
    float z[CHUNK], mus[CHUNK], mlow[CHUNK];
    uint32_t ne[CHUNK];
    uint8_t low[CHUNK];
    const sensim_camera_params *p = &c->p;
    /* Electrons per raw input unit: the normalization folded in. */
    const float S = (float)(c->signal_scale / type_max(t));
    const float K = (float)p->gain, black = (float)p->black_level, fw = (float)p->full_well;
    const float rn = (float)p->read_noise, rn2 = rn * rn, maxdn = (float)c->max_dn;
    const float thr = p->poisson_exact_below > 1e30 ? INFINITY : (float)p->poisson_exact_below;
    const float os = t == SENSIM_PIXEL_F32 ? (float)(1.0 / c->max_dn) : (float)(type_max(t) / c->max_dn);
    for (size_t done = 0; done < n; done += CHUNK) {
        size_t m = n - done < CHUNK ? n - done : CHUNK;
        size_t i1 = i0 + done;
        sensim_rng_normal_icdf_fill(&c->temporal, base + i1, m, z);
        /* Absent maps read as constants: 1 gain, the mean dark, 0 offset. */
        const float *g = c->gain ? c->gain + i1 : c->ones;
        const float *o = c->offset ? c->offset + i1 : c->zeros;
        const float *d = c->dark ? c->dark + i1 : c->dark_row;
#pragma omp simd
        for (size_t k = 0; k < m; k++) {
            float v = load_raw(t, in, i1 + k);
            v = v < 0 ? 0 : v;
            float mu = v * S * g[k] + d[k];
            mus[k] = mu;
            low[k] = mu < thr;
            float e = mu + sqrtf(mu + rn2) * z[k];
            store_scaled(t, out, i1 + k, emva_out(e, fw, K, black, o[k], maxdn, os));
        }
        /* The flag count eight bytes at a time (each byte lane sums at
         * most CHUNK / 8 = 128 flags, so none carries). */
        uint64_t lanes = 0;
        for (size_t k = 0; k < m; k += 8) {
            uint64_t f = 0;
            memcpy(&f, low + k, m - k < 8 ? m - k : 8);
            lanes += f;
        }
        if (!lanes)
            continue;
        size_t nlow = 0;
        for (int b = 0; b < 8; b++)
            nlow += (size_t)(lanes >> 8 * b & 0xFF);
        /* Many low pixels: their Philox blocks and PTRS squeezes in the
         * vector fill (0 where the normal stood: no draw); a few: one by
         * one. The same draws either way. */
        if (8 * nlow >= m) {
#pragma omp simd
            for (size_t k = 0; k < m; k++)
                mlow[k] = low[k] ? mus[k] : 0.0f;
            sensim_rng_poisson_exact_fill(&c->shot, base + i1, m, mlow, ne);
        }
        FOR_FLAGGED(low, m, k, {
            uint32_t q = 8 * nlow >= m ? ne[k] : sensim_rng_poisson_exact(&c->shot, base + i1 + k, mus[k]);
            float e = (float)q + rn * z[k];
            store_scaled(t, out, i1 + k, emva_out(e, fw, K, black, o[k], maxdn, os));
        })
    }
}

/* One function per model, pixel type and instruction set, so that the pixel
 * type is a constant in the inlined segment: AVX-512 (512-bit vectors
 * asked for explicitly, as GCC's default tuning stops at 256), AVX2 with
 * FMA, and the baseline, chosen at run time. The same results on each: no
 * FMA is contracted. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define CAMERA_X86 1
#endif
typedef void row_fn(const sensim_camera *c, uint64_t base, const void *in, void *out, size_t i0, size_t n);
#define ROW_FN1(name, attr, segment, T)                                                                     \
    attr static void name(const sensim_camera *c, uint64_t base, const void *in, void *out, size_t i0, size_t n) \
    {                                                                                                       \
        segment(c, base, T, in, out, i0, n);                                                                \
    }
#ifdef CAMERA_X86
#define ROW_FN(name, segment, T)                                                                                 \
    ROW_FN1(name##_avx512, __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,prefer-vector-width=512"))), \
            segment, T)                                                                                          \
    ROW_FN1(name##_avx2, __attribute__((target("avx2,fma"))), segment, T)                                        \
    ROW_FN1(name##_base, , segment, T)                                                                           \
    static row_fn *name(void)                                                                                    \
    {                                                                                                            \
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&                           \
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))                            \
            return name##_avx512;                                                                                \
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))                                     \
            return name##_avx2;                                                                                  \
        return name##_base;                                                                                      \
    }
#else
#define ROW_FN(name, segment, T)                     \
    ROW_FN1(name##_base, , segment, T)               \
    static row_fn *name(void) { return name##_base; }
#endif
ROW_FN(emva_row_u8, emva_segment, SENSIM_PIXEL_U8)
ROW_FN(emva_row_u16, emva_segment, SENSIM_PIXEL_U16)
ROW_FN(emva_row_f32, emva_segment, SENSIM_PIXEL_F32)
ROW_FN(intensity_row_u8, intensity_segment, SENSIM_PIXEL_U8)
ROW_FN(intensity_row_u16, intensity_segment, SENSIM_PIXEL_U16)
ROW_FN(intensity_row_f32, intensity_segment, SENSIM_PIXEL_F32)
#undef ROW_FN
#undef ROW_FN1

sensim_status sensim_camera_apply(const sensim_camera *c, uint64_t frame, sensim_pixel_type t, const void *in,
                                  void *out)
{
    if (!c || !in || !out)
        return sensim_error(SENSIM_EINVAL, "camera: apply: NULL model or buffer");
    if (t != SENSIM_PIXEL_U8 && t != SENSIM_PIXEL_U16 && t != SENSIM_PIXEL_F32)
        return sensim_error(SENSIM_EUNSUPPORTED, "camera: apply: unsupported pixel type %d", (int)t);
    const size_t row = c->p.width * c->p.channels, H = c->p.height;
    const uint64_t base = frame * (uint64_t)c->npix;
    if (c->p.model == SENSIM_CAMERA_NOISE_NONE) {
        if (in != out)
            memcpy(out, in, c->npix * (t == SENSIM_PIXEL_U8 ? 1 : t == SENSIM_PIXEL_U16 ? 2 : 4));
        return SENSIM_OK;
    }
    long long h = (long long)H;
    const int emva = c->p.model == SENSIM_CAMERA_NOISE_EMVA;
    row_fn *fn = emva ? (t == SENSIM_PIXEL_U8    ? emva_row_u8()
                         : t == SENSIM_PIXEL_U16 ? emva_row_u16()
                                                 : emva_row_f32())
                      : (t == SENSIM_PIXEL_U8    ? intensity_row_u8()
                         : t == SENSIM_PIXEL_U16 ? intensity_row_u16()
                                                 : intensity_row_f32());
    /* Rows are handed out eight at a time as threads free up (a 4K row is
     * about 8 us of work): on a shared machine a descheduled thread's rows
     * go to the other instead of leaving it spinning at the barrier, which
     * a static split does. The output does not depend on the split. */
#pragma omp parallel for schedule(dynamic, 8)
    for (long long y = 0; y < h; y++)
        fn(c, base, in, out, (size_t)y * row, row);
    return SENSIM_OK;
}

/* ------------------------------------------------------------------- lens */

sensim_status sensim_lens_check(const sensim_lens *l)
{
    if (!l)
        return sensim_error(SENSIM_EINVAL, "lens: NULL");
    if (l->model != SENSIM_LENS_PINHOLE && l->model != SENSIM_LENS_FOV && l->model != SENSIM_LENS_RADTAN &&
        l->model != SENSIM_LENS_KB)
        return sensim_error(SENSIM_EINVAL, "lens: unknown model %d", (int)l->model);
    if (l->width == 0 || l->height == 0)
        return sensim_error(SENSIM_EINVAL, "lens: image size %zux%zu: must be > 0", l->width, l->height);
    if (l->model == SENSIM_LENS_RADTAN || l->model == SENSIM_LENS_KB)
        return lens_intr_check(l);
    if (!(l->hfov > 0 && l->hfov < M_PI))
        return sensim_error(SENSIM_EINVAL, "lens: hfov = %g rad: must be in (0, pi)", l->hfov);
    if (l->model == SENSIM_LENS_FOV) {
        double T = tan(0.5 * l->hfov), a = (double)l->height / (double)l->width;
        double rmax = sqrt(1.0 + a * a);
        if (!(rmax * T < 0.5 * M_PI))
            return sensim_error(SENSIM_EINVAL,
                                "lens: FOV model with hfov = %g rad and aspect %zux%zu: r1 tan(w) reaches %g at the "
                                "corner, must stay below pi/2 (use a smaller hfov)",
                                l->hfov, l->width, l->height, rmax * T);
    }
    return SENSIM_OK;
}

void sensim_lens_pixel_to_dir(const sensim_lens *l, double u, double v, double dir[3])
{
    if (l->model == SENSIM_LENS_RADTAN || l->model == SENSIM_LENS_KB) {
        lens_intr_undistort(l, u, v, dir);
        return;
    }
    double W = (double)l->width, H = (double)l->height, T = tan(0.5 * l->hfov);
    double x = 2.0 * u / W - 1.0, y = (2.0 * v / H - 1.0) * H / W;
    if (l->model == SENSIM_LENS_FOV) {
        /* seed 000 eq. 2: r2 = tan(r1 tan w)/tan w, s = tan(tan w)/tan w,
         * (x2, y2) = (x1, y1) r2 / (r1 s). As r1 -> 0, r2/r1 -> 1. */
        double r1 = sqrt(x * x + y * y), s = tan(T) / T;
        double f = r1 > 1e-12 ? tan(r1 * T) / (T * r1 * s) : 1.0 / s;
        x *= f;
        y *= f;
    }
    double d[3] = {x * T, y * T, 1.0};
    double n = sqrt(d[0] * d[0] + d[1] * d[1] + 1.0);
    dir[0] = d[0] / n;
    dir[1] = d[1] / n;
    dir[2] = d[2] / n;
}

int sensim_lens_undistort(const sensim_lens *l, double u, double v, double dir[3])
{
    if (l->model == SENSIM_LENS_RADTAN || l->model == SENSIM_LENS_KB)
        return lens_intr_undistort(l, u, v, dir);
    sensim_lens_pixel_to_dir(l, u, v, dir);
    return 0;
}

int sensim_lens_dir_to_pixel(const sensim_lens *l, const double dir[3], double *u, double *v)
{
    if (l->model == SENSIM_LENS_RADTAN || l->model == SENSIM_LENS_KB)
        return lens_intr_dir_to_pixel(l, dir, u, v);
    if (!(dir[2] > 0))
        return 0;
    double W = (double)l->width, H = (double)l->height, T = tan(0.5 * l->hfov);
    double x = dir[0] / (dir[2] * T), y = dir[1] / (dir[2] * T);
    if (l->model == SENSIM_LENS_FOV) {
        /* Inverse of eq. 2: rho = r2/s, r1 = atan(r2 tan w)/tan w. */
        double rho = sqrt(x * x + y * y), s = tan(T) / T;
        double f = rho > 1e-12 ? atan(rho * s * T) / (T * rho) : s;
        x *= f;
        y *= f;
    }
    if (!isfinite(x) || !isfinite(y))
        return 0;
    *u = 0.5 * (x + 1.0) * W;
    *v = 0.5 * (y * W / H + 1.0) * H;
    return 1;
}

struct sensim_remap {
    size_t sw, sh, dw, dh;
    int32_t *x0, *y0; /* top-left source sample; x0 = -1 when outside */
    float *fx, *fy;
};

void sensim_remap_destroy(sensim_remap *m)
{
    if (!m)
        return;
    SENSIM_FREE_ALL(m->x0, m->y0, m->fx, m->fy, m);
}

sensim_remap *sensim_remap_create(const sensim_lens *src, const sensim_lens *dst)
{
    if (sensim_lens_check(src) != SENSIM_OK) {
        sensim_error_prefix(SENSIM_EINVAL, "remap: source");
        return NULL;
    }
    if (sensim_lens_check(dst) != SENSIM_OK) {
        sensim_error_prefix(SENSIM_EINVAL, "remap: destination");
        return NULL;
    }
    sensim_remap *m = calloc(1, sizeof *m);
    size_t n = dst->width * dst->height;
    if (!m || !(m->x0 = malloc(n * sizeof *m->x0)) || !(m->y0 = malloc(n * sizeof *m->y0)) ||
        !(m->fx = malloc(n * sizeof *m->fx)) || !(m->fy = malloc(n * sizeof *m->fy))) {
        sensim_remap_destroy(m);
        sensim_error(SENSIM_ENOMEM, "remap: cannot allocate a %zux%zu map", dst->width, dst->height);
        return NULL;
    }
    m->sw = src->width;
    m->sh = src->height;
    m->dw = dst->width;
    m->dh = dst->height;
    for (size_t j = 0; j < dst->height; j++)
        for (size_t i = 0; i < dst->width; i++) {
            size_t k = j * dst->width + i;
            double d[3], u, v;
            sensim_lens_pixel_to_dir(dst, i + 0.5, j + 0.5, d);
            m->x0[k] = -1;
            if (!sensim_lens_dir_to_pixel(src, d, &u, &v) || !(u >= 0 && u <= (double)src->width) ||
                !(v >= 0 && v <= (double)src->height))
                continue;
            /* Bilinear between pixel centres, clamped at the borders. */
            double su = u - 0.5, sv = v - 0.5;
            if (su < 0)
                su = 0;
            if (sv < 0)
                sv = 0;
            if (su > (double)src->width - 1)
                su = (double)src->width - 1;
            if (sv > (double)src->height - 1)
                sv = (double)src->height - 1;
            double fu = floor(su), fv = floor(sv);
            if (fu > (double)src->width - 2)
                fu = src->width >= 2 ? (double)src->width - 2 : 0;
            if (fv > (double)src->height - 2)
                fv = src->height >= 2 ? (double)src->height - 2 : 0;
            m->x0[k] = (int32_t)fu;
            m->y0[k] = (int32_t)fv;
            m->fx[k] = (float)(su - fu);
            m->fy[k] = (float)(sv - fv);
        }
    return m;
}

sensim_status sensim_remap_apply(const sensim_remap *m, sensim_pixel_type t, size_t C, double fill, const void *in,
                                 void *out)
{
    if (!m || !in || !out || C == 0)
        return sensim_error(SENSIM_EINVAL, "remap: NULL map or buffer, or zero channels");
    if (in == out)
        return sensim_error(SENSIM_EINVAL, "remap: input and output must be different buffers");
    const size_t sw = m->sw, sh = m->sh;
    const size_t dx = sw >= 2 ? C : 0, dy = sh >= 2 ? sw * C : 0;
    long long dh = (long long)m->dh;
#pragma omp parallel for schedule(static)
    for (long long j = 0; j < dh; j++)
        for (size_t i = 0; i < m->dw; i++) {
            size_t k = (size_t)j * m->dw + i;
            for (size_t ch = 0; ch < C; ch++) {
                size_t o = k * C + ch;
                if (m->x0[k] < 0) {
                    store(t, out, o, fill);
                    continue;
                }
                size_t s = ((size_t)m->y0[k] * sw + (size_t)m->x0[k]) * C + ch;
                double a = load(t, in, s), b = load(t, in, s + dx);
                double cc = load(t, in, s + dy), d = load(t, in, s + dy + dx);
                double fx = m->fx[k], fy = m->fy[k];
                double top = a + (b - a) * fx, bot = cc + (d - cc) * fx;
                store(t, out, o, top + (bot - top) * fy);
            }
        }
    return SENSIM_OK;
}

void sensim_camera_print(const sensim_camera *cam, FILE *f)
{
    const sensim_camera_params *p = &cam->p;
    fprintf(f, "camera %zux%zux%zu, noise ", p->width, p->height, p->channels);
    switch (p->model) {
    case SENSIM_CAMERA_NOISE_INTENSITY:
        fprintf(f, "intensity: variance %g I + %g\n", p->variance_slope, p->variance_intercept);
        break;
    case SENSIM_CAMERA_NOISE_EMVA:
        fprintf(f,
                "emva: %g photons at I = 1, QE %g, exposure %g s, dark %g e-/s, read %g e-, K %g DN/e-, black %g DN, "
                "full well %g e-, %d bits, PRNU %g, DSNU %g e-, hot %g at %g e-/s, rows %g DN, columns %g DN\n",
                p->photons_full_scale, p->quantum_efficiency, p->exposure_time, p->dark_current, p->read_noise,
                p->gain, p->black_level, p->full_well, p->adc_bits, p->prnu, p->dsnu, p->hot_pixel_fraction,
                p->hot_pixel_dark_current, p->row_offset_sigma, p->column_offset_sigma);
        break;
    default:
        fprintf(f, "none\n");
        break;
    }
}
