/* Standard normals by inversion of one 32-bit Philox word, for bulk noise
 * (the camera's temporal noise). See sensim/rng.h for the contract.
 *
 * Map from a word k to a normal: the top bit is the sign; the other 31 bits
 * m give the tail probability p = (m + 1/2) 2^-32 in (0, 1/2), and
 * |z| = Phi^-1(1 - p) = sqrt(2) erfinv(1 - 2p). The erfinv is the
 * single-precision form of M. Giles, "Approximating the erfinv function",
 * GPU Computing Gems Jade Edition (2011), ch. 10: w = -log(4 p (1 - p)),
 * then a degree-8 polynomial in w - 2.5 for w < 5 (Giles' coefficients,
 * scaled by sqrt(2)) and one in sqrt(w) - 3 above. Giles' tail polynomial
 * was fitted for float x only (w < 16.6); because p is built from the word's
 * integer bits, w here reaches 21.5 (p = 2^-33, |z| = 6.34, the largest a
 * 32-bit word can give), so the tail polynomial was refitted (weighted
 * least squares, relative error 4e-7 in float over w in [5, 21.6]). The log
 * is computed here too (exponent split and a degree-7 polynomial on
 * [sqrt(1/2), sqrt(2)), relative error 3e-7), not by logf: with only IEEE
 * additions, multiplications, fmaf (one rounding on every target: an
 * instruction or the correctly rounded libm function) and sqrtf, the vector
 * and scalar paths give the same bits, so a value depends on its index only,
 * never on chunking, vector width or thread count.
 *
 * Accuracy (tests/test_rng_icdf.c checks it against GSL's inverse normal
 * CDF): |z - Phi^-1| < 2e-6 (1 + |z|) over the whole range, |z| <= 6.34. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sensim/rng.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define ICDF_X86 1
#include <immintrin.h>
#endif

/* m below this uses the tail polynomial: w(m) = 5 at m = 7247043.2. */
#define M_TAIL 7247043

/* Blocks of Philox per group (128 words). */
#define GROUP_BLOCKS 32
#define GROUP (4 * GROUP_BLOCKS)

static inline __attribute__((always_inline)) float bits_to_float(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static inline __attribute__((always_inline)) uint32_t float_to_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* The polynomials, highest degree first: log(u)/f on f = u - 1 in
 * [sqrt(1/2) - 1, sqrt(2) - 1]; sqrt(2) erfinv(x)/x on w - 2.5 (w < 5,
 * Giles' coefficients times sqrt(2)) and on sqrt(w) - 3 (w in [5, 21.6],
 * refitted). scripts/icdf_coefficients.py prints these tables and their
 * errors. */
static const float LOG_C[8] = {-0.101063848f, 0.162223607f, -0.172509015f, 0.199001953f,
                               -0.249699056f, 0.333350569f, -0.500003636f, 0.99999994f};
static const float CENTRAL_C[9] = {3.97426021e-08f, 4.85462635e-07f, -4.9828227e-06f,
                                   -6.21052823e-06f, 0.00030912002f, -0.00177303492f,
                                   -0.00590813393f, 0.348802656f,    2.12331367f};
static const float TAIL_C[9] = {-2.79154028e-05f, -0.000162571028f, 0.00162350072f,
                                -0.00484225061f, 0.00822715461f,    -0.0108986814f,
                                0.0133305807f,   1.41659093f,       4.00643492f};

/* Horner's rule with one rounding per step (fmaf). */
static inline __attribute__((always_inline)) float horner(const float *c, int n, float x)
{
    float q = c[0];
#pragma GCC unroll 16
    for (int i = 1; i < n; i++)
        q = fmaf(q, x, c[i]);
    return q;
}

/* -log(t) for t in [2^-31, 1]: t = 2^e u with u in [sqrt(1/2), sqrt(2)),
 * log(u) = f P(f), f = u - 1. */
static inline __attribute__((always_inline)) float neg_log(float t)
{
    uint32_t b = float_to_bits(t);
    int32_t e = (int32_t)(b - 0x3F3504F3u) >> 23;
    float f = bits_to_float(b - ((uint32_t)e << 23)) - 1.0f;
    return -fmaf((float)e, 0.693147182f, f * horner(LOG_C, 8, f));
}

/* The common start of both branches: p from the word's low 31 bits, x = 1 -
 * 2p (exact for p >= 1/4) and w = -log(4 p (1 - p)). */
static inline __attribute__((always_inline)) void icdf_start(uint32_t k, float *x, float *w)
{
    float p = ((float)(int32_t)(k & 0x7FFFFFFFu) + 0.5f) * 0x1p-32f;
    *x = 1.0f - 2.0f * p;
    *w = neg_log((4.0f * p) * (1.0f - p));
}

/* Applies the word's sign bit to a non-negative value. */
static inline __attribute__((always_inline)) float with_sign(uint32_t k, float r)
{
    return bits_to_float(float_to_bits(r) | (k & 0x80000000u));
}

static inline __attribute__((always_inline)) float icdf_central(uint32_t k)
{
    float x, w;
    icdf_start(k, &x, &w);
    return with_sign(k, horner(CENTRAL_C, 9, w - 2.5f) * x);
}

static inline __attribute__((always_inline)) float icdf_tail(uint32_t k)
{
    float x, w;
    icdf_start(k, &x, &w);
    return with_sign(k, horner(TAIL_C, 9, sqrtf(w) - 3.0f) * x);
}

float sensim_rng_normal_icdf_u32(uint32_t word)
{
    return (word & 0x7FFFFFFFu) < M_TAIL ? icdf_tail(word) : icdf_central(word);
}

float sensim_rng_normal_icdf(const sensim_rng *r, uint64_t index)
{
    return sensim_rng_normal_icdf_u32(sensim_rng_u32(r, index));
}

/* out[j] = normal of word u[j] for j < n (n <= GROUP): the central
 * polynomial for every lane in one vectorizable loop, then the tail lanes
 * (0.34 %) again, found eight flag bytes at a time. */
static inline __attribute__((always_inline)) void transform(const uint32_t *u, size_t n, float *out)
{
    uint64_t tail[GROUP / 8] = {0};
    uint8_t *t = (uint8_t *)tail;
#pragma omp simd
    for (size_t j = 0; j < n; j++) {
        out[j] = icdf_central(u[j]);
        t[j] = (u[j] & 0x7FFFFFFFu) < M_TAIL;
    }
    /* A group of 128 has a tail lane with probability 0.35: test all of
     * them at once first. */
    uint64_t any = 0;
    for (size_t w = 0; w < GROUP / 8; w++)
        any |= tail[w];
    if (!any)
        return;
    for (size_t w = 0; w < GROUP / 8; w++)
        for (uint64_t f = tail[w]; f; f &= f - 1) {
            size_t j = 8 * w + (size_t)(__builtin_ctzll(f) >> 3);
            out[j] = icdf_tail(u[j]);
        }
}

/* Philox4x32-10 of blocks b0 .. b0 + 31 of r (attempt 0), word w of block
 * b0 + l in out[4 l + w]: the same values as sensim_rng_block. */
static void philox_group_base(const sensim_rng *r, uint64_t b0, uint32_t out[GROUP])
{
    for (int l = 0; l < GROUP_BLOCKS; l++)
        sensim_rng_block(r, b0 + (uint64_t)l, out + 4 * l);
}

/* Philox rounds (Salmon et al., SC'11; Random123's constants) on 64-bit
 * lanes in GCC vector types, four vectors per word (independent multiply
 * chains). Each 32-bit word sits in
 * a lane's low half: vpmuludq reads only low halves and gives the full
 * product, whose high half is the Philox "hi"; garbage left in a high half
 * never reaches a low half. AVX2: four blocks per vector, two halves of
 * sixteen blocks. */
#ifdef ICDF_X86
#define AVX512_TARGET "avx512f,avx512vl,avx512dq,avx512bw,prefer-vector-width=512"
#define AVX2_TARGET "avx2,fma"
typedef uint64_t u64x4 __attribute__((vector_size(32)));
typedef uint32_t u32x8 __attribute__((vector_size(32)));

__attribute__((target(AVX2_TARGET))) static inline void philox_group_avx2(const sensim_rng *r, uint64_t b0,
                                                                   uint32_t out[GROUP])
{
    const u64x4 lane = {0, 1, 2, 3};
    const u64x4 M0 = (u64x4){0} + 0xD2511F53u, M1 = (u64x4){0} + 0xCD9E8D57u;
    for (int half = 0; half < 2; half++) {
        u64x4 x0[4], x1[4], x2[4], x3[4];
        for (int h = 0; h < 4; h++) {
            x0[h] = lane + (b0 + 16 * (uint64_t)half + 4 * (uint64_t)h);
            x1[h] = x0[h] >> 32;
            x2[h] = (u64x4){0} + r->stream;
            x3[h] = (u64x4){0} + r->sensor;
        }
        uint64_t k0 = r->key[0], k1 = r->key[1];
        for (int round = 0; round < 10; round++) {
#pragma GCC unroll 4
            for (int h = 0; h < 4; h++) {
                u64x4 p0 = (u64x4)_mm256_mul_epu32((__m256i)x0[h], (__m256i)M0);
                u64x4 p1 = (u64x4)_mm256_mul_epu32((__m256i)x2[h], (__m256i)M1);
                x0[h] = (p1 >> 32) ^ x1[h] ^ k0;
                x2[h] = (p0 >> 32) ^ x3[h] ^ k1;
                x1[h] = p1;
                x3[h] = p0;
            }
            k0 = (uint32_t)(k0 + 0x9E3779B9u);
            k1 = (uint32_t)(k1 + 0xBB67AE85u);
        }
        /* Low halves of words (0, 1) and (2, 3) paired, then blocks in order. */
        const u32x8 pair = {0, 8, 2, 10, 4, 12, 6, 14};
        const u64x4 first2 = {0, 4, 1, 5}, last2 = {2, 6, 3, 7};
        for (int h = 0; h < 4; h++) {
            u64x4 w01 = (u64x4)__builtin_shuffle((u32x8)x0[h], (u32x8)x1[h], pair);
            u64x4 w23 = (u64x4)__builtin_shuffle((u32x8)x2[h], (u32x8)x3[h], pair);
            u64x4 a = __builtin_shuffle(w01, w23, first2), b = __builtin_shuffle(w01, w23, last2);
            memcpy(out + 4 * (16 * half + 4 * h), &a, sizeof a);
            memcpy(out + 4 * (16 * half + 4 * h) + 8, &b, sizeof b);
        }
    }
}


/* The same rounds in AVX-512 intrinsics: with AVX512DQ available GCC turns
 * the masked multiply above into vpmullq (a full 64-bit product, several
 * times slower) and spills the state; vpmuludq is what is meant. */
__attribute__((target(AVX512_TARGET))) static inline void philox_group_avx512(const sensim_rng *r, uint64_t b0,
                                                                              uint32_t out[GROUP])
{
    const __m512i M0 = _mm512_set1_epi64(0xD2511F53), M1 = _mm512_set1_epi64(0xCD9E8D57);
    __m512i x0[4], x1[4], x2[4], x3[4];
    for (int h = 0; h < 4; h++) {
        x0[h] = _mm512_add_epi64(_mm512_set1_epi64((long long)(b0 + 8 * (uint64_t)h)),
                                 _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
        x1[h] = _mm512_srli_epi64(x0[h], 32);
        x2[h] = _mm512_set1_epi64(r->stream);
        x3[h] = _mm512_set1_epi64(r->sensor);
    }
    uint32_t k0 = r->key[0], k1 = r->key[1];
    for (int round = 0; round < 10; round++) {
        __m512i K0 = _mm512_set1_epi64(k0), K1 = _mm512_set1_epi64(k1);
#pragma GCC unroll 4
        for (int h = 0; h < 4; h++) {
            __m512i p0 = _mm512_mul_epu32(x0[h], M0), p1 = _mm512_mul_epu32(x2[h], M1);
            x0[h] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), x1[h], K0, 0x96);
            x2[h] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), x3[h], K1, 0x96);
            x1[h] = p1;
            x3[h] = p0;
        }
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    /* Words (0, 1) and (2, 3) into 64-bit pairs, then blocks in order. */
    const __m512i lo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), hi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    for (int h = 0; h < 4; h++) {
        __m512i w01 = _mm512_mask_blend_epi32(0xAAAA, x0[h], _mm512_slli_epi64(x1[h], 32));
        __m512i w23 = _mm512_mask_blend_epi32(0xAAAA, x2[h], _mm512_slli_epi64(x3[h], 32));
        _mm512_storeu_si512((void *)(out + 32 * h), _mm512_permutex2var_epi64(w01, lo, w23));
        _mm512_storeu_si512((void *)(out + 32 * h + 16), _mm512_permutex2var_epi64(w01, hi, w23));
    }
}
#endif

/* The fill loop: groups of 32 blocks from the block holding index first;
 * words before first (or past the end) are computed and dropped. */
#define FILL_BODY(philox)                                                     \
    {                                                                         \
        uint32_t u[GROUP];                                                    \
        size_t i = 0;                                                         \
        while (i < n) {                                                       \
            uint64_t idx = first + i;                                         \
            size_t off = (size_t)(idx & 3);                                   \
            size_t cnt = GROUP - off < n - i ? GROUP - off : n - i;           \
            philox(r, idx >> 2, u);                                           \
            transform(u + off, cnt, out + i);                                 \
            i += cnt;                                                         \
        }                                                                     \
    }

static void fill_base(const sensim_rng *r, uint64_t first, size_t n, float *out) FILL_BODY(philox_group_base)
#ifdef ICDF_X86
__attribute__((target(AVX512_TARGET))) static void fill_avx512(const sensim_rng *r, uint64_t first, size_t n,
                                                               float *out) FILL_BODY(philox_group_avx512)
__attribute__((target(AVX2_TARGET))) static void fill_avx2(const sensim_rng *r, uint64_t first, size_t n,
                                                           float *out) FILL_BODY(philox_group_avx2)
#endif
#undef FILL_BODY

void sensim_rng_normal_icdf_fill(const sensim_rng *r, uint64_t first, size_t n, float *out)
{
#ifdef ICDF_X86
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw")) {
        fill_avx512(r, first, n, out);
        return;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        fill_avx2(r, first, n, out);
        return;
    }
#endif
    fill_base(r, first, n, out);
}
