/* Counter-based random streams: Philox4x32-10 (Salmon et al., SC'11, via
 * Random123) with ziggurat normals, Marsaglia-Tsang gamma and PTRS Poisson.
 * See sensim/rng.h for the counter layout. */
#include "sensim/rng.h"

#include <Random123/philox.h>
#include <math.h>
#include <string.h>

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

/* Philox4x32-10 for LANES consecutive blocks at once: the same rounds and
 * constants as Random123's philox4x32 (the known-answer test in
 * tests/test_rng.c pins them, and it checks these lanes against the scalar
 * draw). out[4 * l + w] is word w of block b0 + l.
 *
 * The portable version is written over arrays for the auto-vectorizer. On
 * x86-64 explicit AVX-512 and AVX2 versions are chosen at run time: GCC 12
 * turns the portable loop into full 64x64-bit multiplies with shuffles,
 * about five times slower than vpmuludq on 64-bit lanes. Those keep each
 * 32-bit word in the low half of a 64-bit lane; the high half may hold
 * garbage, which never reaches a low half (vpmuludq reads only low halves,
 * the other steps are XOR and the product's high half shifted down). */
#define LANES 16
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define SENSIM_X86_DISPATCH 1
#include <immintrin.h>
#endif

static void philox_lanes_base(const sensim_rng *r, uint64_t b0, uint32_t attempt, uint32_t out[4 * LANES])
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

#ifdef SENSIM_X86_DISPATCH
/* Eight blocks per 512-bit vector, two vectors per word. */
__attribute__((target("avx512f"))) static void philox_lanes_avx512(const sensim_rng *r, uint64_t b0,
                                                                    uint32_t attempt, uint32_t out[4 * LANES])
{
    const __m512i M0 = _mm512_set1_epi64(0xD2511F53), M1 = _mm512_set1_epi64(0xCD9E8D57);
    __m512i bA = _mm512_add_epi64(_mm512_set1_epi64((long long)b0), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    __m512i bB = _mm512_add_epi64(bA, _mm512_set1_epi64(8));
    __m512i x0[2] = {bA, bB}, x1[2] = {_mm512_srli_epi64(bA, 32), _mm512_srli_epi64(bB, 32)};
    __m512i x2[2], x3[2];
    x2[0] = x2[1] = _mm512_set1_epi64(r->stream);
    x3[0] = x3[1] = _mm512_set1_epi64(r->sensor | attempt << 24);
    uint32_t k0 = r->key[0], k1 = r->key[1];
    for (int round = 0; round < 10; round++) {
        __m512i K0 = _mm512_set1_epi64(k0), K1 = _mm512_set1_epi64(k1);
        for (int h = 0; h < 2; h++) {
            __m512i p0 = _mm512_mul_epu32(x0[h], M0), p1 = _mm512_mul_epu32(x2[h], M1);
            x0[h] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), x1[h], K0, 0x96);
            x2[h] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), x3[h], K1, 0x96);
            x1[h] = p1;
            x3[h] = p0;
        }
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    /* (x0, x1) and (x2, x3) into 64-bit pairs, then blocks in order. */
    const __m512i lo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), hi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    for (int h = 0; h < 2; h++) {
        __m512i w01 = _mm512_mask_blend_epi32(0xAAAA, x0[h], _mm512_slli_epi64(x1[h], 32));
        __m512i w23 = _mm512_mask_blend_epi32(0xAAAA, x2[h], _mm512_slli_epi64(x3[h], 32));
        _mm512_storeu_si512((void *)(out + 32 * h), _mm512_permutex2var_epi64(w01, lo, w23));
        _mm512_storeu_si512((void *)(out + 32 * h + 16), _mm512_permutex2var_epi64(w01, hi, w23));
    }
}

/* Four blocks per 256-bit vector, four vectors per word. */
__attribute__((target("avx2"))) static void philox_lanes_avx2(const sensim_rng *r, uint64_t b0, uint32_t attempt,
                                                               uint32_t out[4 * LANES])
{
    const __m256i M0 = _mm256_set1_epi64x(0xD2511F53), M1 = _mm256_set1_epi64x(0xCD9E8D57);
    __m256i x0[4], x1[4], x2[4], x3[4];
    for (int h = 0; h < 4; h++) {
        __m256i b = _mm256_add_epi64(_mm256_set1_epi64x((long long)(b0 + 4 * (uint64_t)h)),
                                     _mm256_set_epi64x(3, 2, 1, 0));
        x0[h] = b;
        x1[h] = _mm256_srli_epi64(b, 32);
        x2[h] = _mm256_set1_epi64x(r->stream);
        x3[h] = _mm256_set1_epi64x(r->sensor | attempt << 24);
    }
    uint32_t k0 = r->key[0], k1 = r->key[1];
    for (int round = 0; round < 10; round++) {
        __m256i K0 = _mm256_set1_epi64x(k0), K1 = _mm256_set1_epi64x(k1);
        for (int h = 0; h < 4; h++) {
            __m256i p0 = _mm256_mul_epu32(x0[h], M0), p1 = _mm256_mul_epu32(x2[h], M1);
            x0[h] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), x1[h]), K0);
            x2[h] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), x3[h]), K1);
            x1[h] = p1;
            x3[h] = p0;
        }
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    for (int h = 0; h < 4; h++) {
        __m256i w01 = _mm256_blend_epi32(x0[h], _mm256_slli_epi64(x1[h], 32), 0xAA);
        __m256i w23 = _mm256_blend_epi32(x2[h], _mm256_slli_epi64(x3[h], 32), 0xAA);
        __m256i l = _mm256_unpacklo_epi64(w01, w23), u = _mm256_unpackhi_epi64(w01, w23);
        _mm256_storeu_si256((__m256i *)(out + 16 * h), _mm256_permute2x128_si256(l, u, 0x20));
        _mm256_storeu_si256((__m256i *)(out + 16 * h + 8), _mm256_permute2x128_si256(l, u, 0x31));
    }
}

static void philox_lanes(const sensim_rng *r, uint64_t b0, uint32_t attempt, uint32_t out[4 * LANES])
{
    if (__builtin_cpu_supports("avx512f"))
        philox_lanes_avx512(r, b0, attempt, out);
    else if (__builtin_cpu_supports("avx2"))
        philox_lanes_avx2(r, b0, attempt, out);
    else
        philox_lanes_base(r, b0, attempt, out);
}
#else
#define philox_lanes philox_lanes_base
#endif

/* The ziggurat's rectangle test over a group: out[j] gets the fast-path
 * value and bad[j] = 1 where the lane failed the test (to be redone by the
 * slow path). Written without branches and with a byte per lane (not a bit
 * mask, whose variable 64-bit shifts keep GCC from vectorizing), so that the
 * loop vectorizes with the table reads as gathers. GCC 12 emits gathers
 * only under a tuning that favours them, which target_clones cannot name:
 * hence the explicit variants and the dispatch below. Returns whether any
 * lane failed. */
#define NORMAL_FAST_GROUP_BODY                                                 \
    {                                                                          \
        int any = 0;                                                           \
        _Pragma("omp simd reduction(|:any)") for (int j = 0; j < 4 * LANES; j++) \
        {                                                                      \
            int i = (int)(u[j] >> 25);                                         \
            double x = ((double)(u[j] & 0xFFFFFFu) + 0.5) * 0x1p-24 * zig_x[i]; \
            int b = !(x < zig_x[i + 1]);                                       \
            bad[j] = (uint8_t)b;                                               \
            any |= b;                                                          \
            out[j] = (u[j] >> 24 & 1u) ? -x : x;                               \
        }                                                                      \
        return any;                                                            \
    }
#ifdef SENSIM_X86_DISPATCH
__attribute__((target("avx512f,avx512vl,avx512dq,tune=icelake-server"))) static int
normal_fast_group_avx512(const uint32_t *u, double *out, uint8_t *bad) NORMAL_FAST_GROUP_BODY
__attribute__((target("avx2,tune=skylake"))) static int
normal_fast_group_avx2(const uint32_t *u, double *out, uint8_t *bad) NORMAL_FAST_GROUP_BODY
static int normal_fast_group_base(const uint32_t *u, double *out, uint8_t *bad) NORMAL_FAST_GROUP_BODY
static int normal_fast_group(const uint32_t *u, double *out, uint8_t *bad)
{
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))
        return normal_fast_group_avx512(u, out, bad);
    if (__builtin_cpu_supports("avx2"))
        return normal_fast_group_avx2(u, out, bad);
    return normal_fast_group_base(u, out, bad);
}
#else
static int normal_fast_group(const uint32_t *u, double *out, uint8_t *bad) NORMAL_FAST_GROUP_BODY
#endif
#undef NORMAL_FAST_GROUP_BODY

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
    uint8_t bad[4 * LANES];
    for (; i + G <= n; i += G) {
        philox_lanes(r, (first + i) >> 2, 0, u);
        if (!normal_fast_group(u, out + i, bad))
            continue;
        /* About 2.7 % of lanes fail: find them eight flag bytes at a time. */
        for (size_t j8 = 0; j8 < G; j8 += 8) {
            uint64_t w;
            memcpy(&w, bad + j8, 8);
            for (; w; w &= w - 1) {
                size_t j = j8 + (size_t)(__builtin_ctzll(w) >> 3);
                out[i + j] = normal_slow(r, first + i + j, u[j]);
            }
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
