/* Counter-based random streams: Philox4x32-10 (Salmon et al., SC'11, via
 * Random123) with ziggurat normals, Marsaglia-Tsang gamma and PTRS Poisson.
 * See sensim/rng.h for the counter layout. */
#include "sensim/rng.h"

#include <Random123/philox.h>
#include <math.h>

#include "ziggurat_table.h"

#define ATTEMPT_NORMAL 1u
#define ATTEMPT_POISSON 64u
#define ATTEMPT_GAMMA 128u

sensim_rng sensim_rng_make(uint64_t seed, uint32_t sensor, uint32_t stream)
{
    sensim_rng r;
    r.key[0] = (uint32_t)seed;
    r.key[1] = (uint32_t)(seed >> 32);
    r.stream = stream;
    r.sensor = sensor & 0xFFFFFFu;
    return r;
}

uint32_t sensim_rng_sensor_id(const char *name)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return (h >> 24 ^ h) & 0xFFFFFFu;
}

static inline philox4x32_ctr_t draw(const sensim_rng *r, uint64_t c01, uint32_t attempt)
{
    philox4x32_ctr_t c = {{(uint32_t)c01, (uint32_t)(c01 >> 32), r->stream,
                           r->sensor | attempt << 24}};
    philox4x32_key_t k = {{r->key[0], r->key[1]}};
    return philox4x32(c, k);
}

void sensim_rng_block(const sensim_rng *r, uint64_t block, uint32_t out[4])
{
    philox4x32_ctr_t v = draw(r, block, 0);
    for (int i = 0; i < 4; i++)
        out[i] = v.v[i];
}

uint32_t sensim_rng_u32(const sensim_rng *r, uint64_t index)
{
    return draw(r, index >> 2, 0).v[index & 3];
}

static inline double u01(uint32_t u) { return ((double)u + 0.5) * 0x1p-32; }

double sensim_rng_uniform(const sensim_rng *r, uint64_t index)
{
    return u01(sensim_rng_u32(r, index));
}

/* The slow path of the ziggurat: u failed the rectangle test. Later
 * candidates come from (index, attempt) counters private to this index. */
static double normal_slow(const sensim_rng *r, uint64_t index, uint32_t u)
{
    for (uint32_t a = ATTEMPT_NORMAL; a < ATTEMPT_POISSON; a++) {
        philox4x32_ctr_t v = draw(r, index, a);
        unsigned i = u >> 25;
        double sign = (u >> 24 & 1u) ? -1.0 : 1.0;
        double x = ((double)(u & 0xFFFFFFu) + 0.5) * 0x1p-24 * zig_x[i];
        if (x < zig_x[i + 1])
            return sign * x;
        if (i == 0) {
            /* Tail beyond r (Marsaglia 1964): two uniforms per try. */
            double xt, yt;
            xt = -log(u01(v.v[1])) / zig_x[1];
            yt = -log(u01(v.v[2]));
            if (2.0 * yt > xt * xt)
                return sign * (zig_x[1] + xt);
        } else {
            double y = zig_f[i] + u01(v.v[1]) * (zig_f[i + 1] - zig_f[i]);
            if (y < exp(-0.5 * x * x))
                return sign * x;
        }
        u = v.v[0];
    }
    return 0.0; /* 63 rejections in a row: probability below 1e-120 */
}

static inline double normal_lane(const sensim_rng *r, uint64_t index, uint32_t u)
{
    unsigned i = u >> 25;
    double x = ((double)(u & 0xFFFFFFu) + 0.5) * 0x1p-24 * zig_x[i];
    if (x < zig_x[i + 1])
        return (u >> 24 & 1u) ? -x : x;
    return normal_slow(r, index, u);
}

double sensim_rng_normal(const sensim_rng *r, uint64_t index)
{
    return normal_lane(r, index, sensim_rng_u32(r, index));
}

/* Philox4x32-10 for LANES consecutive blocks at once, written over arrays
 * so that the compiler vectorizes the 32x32->64 multiplies (vpmuludq); the
 * same rounds and constants as Random123's philox4x32 (the known-answer test
 * in tests/test_rng.c pins them). out[4 * l + w] is word w of block b0 + l. */
#define LANES 16
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define SENSIM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SENSIM_CLONES
#endif

SENSIM_CLONES
static void philox_lanes(const sensim_rng *r, uint64_t b0, uint32_t attempt, uint32_t out[4 * LANES])
{
    uint32_t x0[LANES], x1[LANES], x2[LANES], x3[LANES];
    const uint32_t c2 = r->stream, c3 = r->sensor | attempt << 24;
    for (int l = 0; l < LANES; l++) {
        uint64_t b = b0 + (uint64_t)l;
        x0[l] = (uint32_t)b;
        x1[l] = (uint32_t)(b >> 32);
        x2[l] = c2;
        x3[l] = c3;
    }
    uint32_t k0 = r->key[0], k1 = r->key[1];
    for (int round = 0; round < 10; round++) {
        if (round) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        for (int l = 0; l < LANES; l++) {
            uint64_t p0 = (uint64_t)0xD2511F53u * x0[l];
            uint64_t p1 = (uint64_t)0xCD9E8D57u * x2[l];
            uint32_t n0 = (uint32_t)(p1 >> 32) ^ x1[l] ^ k0;
            uint32_t n2 = (uint32_t)(p0 >> 32) ^ x3[l] ^ k1;
            x1[l] = (uint32_t)p1;
            x3[l] = (uint32_t)p0;
            x0[l] = n0;
            x2[l] = n2;
        }
    }
    for (int l = 0; l < LANES; l++) {
        out[4 * l] = x0[l];
        out[4 * l + 1] = x1[l];
        out[4 * l + 2] = x2[l];
        out[4 * l + 3] = x3[l];
    }
}

/* The ziggurat's rectangle test over a group; returns a bit mask of the
 * lanes that failed it (to be redone by the slow path). */
SENSIM_CLONES
static uint64_t normal_fast_group(const uint32_t *u, double *out)
{
    uint64_t bad = 0;
    for (int j = 0; j < 4 * LANES; j++) {
        uint32_t i = u[j] >> 25;
        double x = ((double)(u[j] & 0xFFFFFFu) + 0.5) * 0x1p-24 * zig_x[i];
        bad |= (uint64_t)!(x < zig_x[i + 1]) << j;
        out[j] = (u[j] >> 24 & 1u) ? -x : x;
    }
    return bad;
}

void sensim_rng_normal_fill(const sensim_rng *r, uint64_t first, size_t n, double *out)
{
    size_t i = 0;
    const size_t G = 4 * LANES;
    /* Head: up to the next multiple of G, one block at a time. */
    while (i < n && (first + i) % G) {
        uint64_t idx = first + i;
        philox4x32_ctr_t v = draw(r, idx >> 2, 0);
        for (unsigned lane = (unsigned)(idx & 3); lane < 4 && i < n && (first + i) % G; lane++, i++)
            out[i] = normal_lane(r, first + i, v.v[lane]);
    }
    uint32_t u[4 * LANES];
    for (; i + G <= n; i += G) {
        philox_lanes(r, (first + i) >> 2, 0, u);
        for (uint64_t bad = normal_fast_group(u, out + i); bad; bad &= bad - 1) {
            int j = __builtin_ctzll(bad);
            out[i + j] = normal_slow(r, first + i + j, u[j]);
        }
    }
    while (i < n) {
        uint64_t idx = first + i;
        philox4x32_ctr_t v = draw(r, idx >> 2, 0);
        for (unsigned lane = (unsigned)(idx & 3); lane < 4 && i < n; lane++, i++)
            out[i] = normal_lane(r, first + i, v.v[lane]);
    }
}

void sensim_rng_uniform_fill(const sensim_rng *r, uint64_t first, size_t n, double *out)
{
    size_t i = 0;
    while (i < n) {
        uint64_t idx = first + i;
        philox4x32_ctr_t v = draw(r, idx >> 2, 0);
        for (unsigned lane = (unsigned)(idx & 3); lane < 4 && i < n; lane++, i++)
            out[i] = u01(v.v[lane]);
    }
}

/* A uniform with 53 bits from two lanes. */
static inline double u53(uint32_t hi, uint32_t lo)
{
    return ((double)((uint64_t)(hi >> 5) << 26 | (lo >> 6)) + 0.5) * 0x1p-53;
}

double sensim_rng_gamma(const sensim_rng *r, uint64_t index, double shape)
{
    if (!(shape > 0.0))
        return NAN;
    double boost = 1.0;
    if (shape < 1.0) {
        /* G(a) = G(a+1) U^(1/a); U from the first gamma attempt's last lanes. */
        philox4x32_ctr_t v = draw(r, index, ATTEMPT_GAMMA);
        boost = pow(u53(v.v[0], v.v[1]), 1.0 / shape);
        shape += 1.0;
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (uint32_t a = ATTEMPT_GAMMA + 1; a < 256; a++) {
        philox4x32_ctr_t v = draw(r, index, a);
        /* Box-Muller from two lanes; the third decides acceptance. */
        double u1 = u01(v.v[0]), u2 = u01(v.v[1]);
        double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
        double t = 1.0 + c * z;
        if (t <= 0.0)
            continue;
        t = t * t * t;
        double u = u01(v.v[2]);
        if (log(u) < 0.5 * z * z + d - d * t + d * log(t))
            return boost * d * t;
    }
    return boost * d; /* 127 rejections: probability negligible */
}

uint32_t sensim_rng_poisson(const sensim_rng *r, uint64_t index, double mean)
{
    if (!(mean > 0.0))
        return 0;
    if (mean < 10.0) {
        /* Inversion by sequential search on one 53-bit uniform. */
        philox4x32_ctr_t v = draw(r, index, ATTEMPT_POISSON);
        double u = u53(v.v[0], v.v[1]);
        double p = exp(-mean), cdf = p;
        uint32_t k = 0;
        while (u > cdf && k < 1000) {
            k++;
            p *= mean / k;
            cdf += p;
        }
        return k;
    }
    /* PTRS: transformed rejection with squeeze (Hormann 1993). */
    double slam = sqrt(mean), loglam = log(mean);
    double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (uint32_t at = ATTEMPT_POISSON; at < ATTEMPT_GAMMA; at++) {
        philox4x32_ctr_t w = draw(r, index, at);
        double u = u53(w.v[0], w.v[1]) - 0.5, v = u53(w.v[2], w.v[3]);
        double us = 0.5 - fabs(u);
        double k = floor((2 * a / us + b) * u + mean + 0.43);
        if (us >= 0.07 && v <= vr)
            return (uint32_t)k;
        if (k < 0 || (us < 0.013 && v > us))
            continue;
        if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -mean + k * loglam - lgamma(k + 1))
            return (uint32_t)k;
    }
    return (uint32_t)floor(mean + 0.5);
}
