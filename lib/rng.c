/* Counter-based random streams: Philox4x32-10 (Salmon et al., SC'11, via
 * Random123) with ziggurat normals, Marsaglia-Tsang gamma and PTRS Poisson.
 * See sensim/rng.h for the counter layout. */
#include "sensim/rng.h"

#include <Random123/philox.h>
#include <math.h>
#include <string.h>

#include "ziggurat_table.h"
#include "ziggurat_k.h"

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

/* The slow path of the ziggurat from attempt a0 on, with candidate u:
 * later candidates come from (index, attempt) counters private to this
 * index. w1, when not NULL, holds the words of attempt 1 already drawn (the
 * fill kernels draw them for several indices at once). */
static double normal_slow_from(const sensim_rng *r, uint64_t index, uint32_t u, const uint32_t *w1, uint32_t a0)
{
    for (uint32_t a = a0; a < ATTEMPT_POISSON; a++) {
        unsigned i = u >> 25;
        double sign = (u >> 24 & 1u) ? -1.0 : 1.0;
        double x = ((double)(u & 0xFFFFFFu) + 0.5) * 0x1p-24 * zig_x[i];
        if (x < zig_x[i + 1])
            return sign * x;
        uint32_t v[4];
        if (a == ATTEMPT_NORMAL && w1)
            memcpy(v, w1, sizeof v);
        else {
            philox4x32_ctr_t c = draw(r, index, a);
            memcpy(v, c.v, sizeof v);
        }
        if (i == 0) {
            /* Tail beyond r (Marsaglia 1964): two uniforms per try. */
            double xt, yt;
            xt = -log(u01(v[1])) / zig_x[1];
            yt = -log(u01(v[2]));
            if (2.0 * yt > xt * xt)
                return sign * (zig_x[1] + xt);
        } else {
            double y = zig_f[i] + u01(v[1]) * (zig_f[i + 1] - zig_f[i]);
            if (y < exp(-0.5 * x * x))
                return sign * x;
        }
        u = v[0];
    }
    return 0.0; /* 63 rejections in a row: probability below 1e-120 */
}

static double normal_slow(const sensim_rng *r, uint64_t index, uint32_t u, const uint32_t *w1)
{
    return normal_slow_from(r, index, u, w1, ATTEMPT_NORMAL);
}

static inline double normal_lane(const sensim_rng *r, uint64_t index, uint32_t u)
{
    unsigned i = u >> 25;
    double x = ((double)(u & 0xFFFFFFu) + 0.5) * 0x1p-24 * zig_x[i];
    if (x < zig_x[i + 1])
        return (u >> 24 & 1u) ? -x : x;
    return normal_slow(r, index, u, NULL);
}

double sensim_rng_normal(const sensim_rng *r, uint64_t index)
{
    return normal_lane(r, index, sensim_rng_u32(r, index));
}

/* Philox4x32-10 for LANES consecutive blocks at once, written over arrays
 * so that the compiler vectorizes the 32x32->64 multiplies where it can;
 * the same rounds and constants as Random123's philox4x32 (the known-answer
 * test in tests/test_rng.c pins them). out[4 * l + w] is word w of block
 * b0 + l. This portable kernel is the reference: the AVX2 and AVX-512 ones
 * below give the same bits, since integer Philox is exact and the
 * ziggurat's ((m + 0.5) 2^-24) zig_x[i] is one rounded product anywhere
 * (tests/test_rng.c calls each one and compares). */
#define LANES 16
#define GROUP (4 * LANES)

#define GENERIC_KERNELS(SUFFIX, ATTR)                                                                       \
    ATTR static void philox_lanes_##SUFFIX(const sensim_rng *r, uint64_t b0, uint32_t out[GROUP])           \
    {                                                                                                       \
        uint32_t x0[LANES], x1[LANES], x2[LANES], x3[LANES];                                                \
        const uint32_t c2 = r->stream, c3 = r->sensor;                                                      \
        for (int l = 0; l < LANES; l++) {                                                                   \
            uint64_t b = b0 + (uint64_t)l;                                                                  \
            x0[l] = (uint32_t)b;                                                                            \
            x1[l] = (uint32_t)(b >> 32);                                                                    \
            x2[l] = c2;                                                                                     \
            x3[l] = c3;                                                                                     \
        }                                                                                                   \
        uint32_t k0 = r->key[0], k1 = r->key[1];                                                            \
        for (int round = 0; round < 10; round++) {                                                          \
            if (round) {                                                                                    \
                k0 += 0x9E3779B9u;                                                                          \
                k1 += 0xBB67AE85u;                                                                          \
            }                                                                                               \
            for (int l = 0; l < LANES; l++) {                                                               \
                uint64_t p0 = (uint64_t)0xD2511F53u * x0[l];                                                \
                uint64_t p1 = (uint64_t)0xCD9E8D57u * x2[l];                                                \
                uint32_t n0 = (uint32_t)(p1 >> 32) ^ x1[l] ^ k0;                                            \
                uint32_t n2 = (uint32_t)(p0 >> 32) ^ x3[l] ^ k1;                                            \
                x1[l] = (uint32_t)p1;                                                                       \
                x3[l] = (uint32_t)p0;                                                                       \
                x0[l] = n0;                                                                                 \
                x2[l] = n2;                                                                                 \
            }                                                                                               \
        }                                                                                                   \
        for (int l = 0; l < LANES; l++) {                                                                   \
            out[4 * l] = x0[l];                                                                             \
            out[4 * l + 1] = x1[l];                                                                         \
            out[4 * l + 2] = x2[l];                                                                         \
            out[4 * l + 3] = x3[l];                                                                         \
        }                                                                                                   \
    }                                                                                                       \
    /* The ziggurat's rectangle test over a group; returns a bit mask of the                              \
     * lanes that failed it (to be redone by the slow path). */                                            \
    ATTR static uint64_t normal_group_##SUFFIX(const sensim_rng *r, uint64_t b0, uint32_t u[GROUP],         \
                                               double *out)                                                 \
    {                                                                                                       \
        philox_lanes_##SUFFIX(r, b0, u);                                                                    \
        uint64_t bad = 0;                                                                                   \
        for (int j = 0; j < GROUP; j++) {                                                                   \
            uint32_t i = u[j] >> 25;                                                                        \
            double x = ((double)(u[j] & 0xFFFFFFu) + 0.5) * 0x1p-24 * zig_x[i];                             \
            bad |= (uint64_t)!(x < zig_x[i + 1]) << j;                                                      \
            out[j] = (u[j] >> 24 & 1u) ? -x : x;                                                            \
        }                                                                                                   \
        return bad;                                                                                         \
    }

GENERIC_KERNELS(base, )

#if defined(__x86_64__) && defined(__GNUC__)
#define SENSIM_X86_KERNELS 1
#include <immintrin.h>


/* Philox4x32-10's ten rounds for a vector of 32-bit lanes (V, its 32-bit
 * add ADD and broadcast SET1): the last argument, a block, is one round
 * under the keys k0, k1, which the Weyl constants bump before every round
 * but the first. One
 * template for the AVX2 and AVX-512 kernels, expanded in place so each
 * keeps its fully unrolled straight-line code. */
#define PHILOX_ROUNDS(V, ADD, SET1, k0, k1, ...)                                                            \
    do {                                                                                                    \
        const V w0_ = SET1((int)0x9E3779B9u), w1_ = SET1((int)0xBB67AE85u);                                 \
        _Pragma("GCC unroll 10") for (int round_ = 0; round_ < 10; round_++)                                \
        {                                                                                                   \
            if (round_) {                                                                                   \
                k0 = ADD(k0, w0_);                                                                          \
                k1 = ADD(k1, w1_);                                                                          \
            }                                                                                               \
            __VA_ARGS__                                                                                     \
        }                                                                                                   \
    } while (0)

/* AVX2: Philox4x32-10 on two sets of 8 blocks (two independent chains),
 * transposed to index order, then the ziggurat's rectangle test as
 * m < zig_k[i] with gathers. */
/* One Philox4x32 round on 8 blocks (one 32-bit word per lane and register). */
__attribute__((target("avx2"))) static inline void philox8_round(__m256i v[4], __m256i k0, __m256i k1)
{
    const __m256i m0 = _mm256_set1_epi64x(0xD2511F53u), m1 = _mm256_set1_epi64x(0xCD9E8D57u);
    __m256i e0 = _mm256_mul_epu32(v[0], m0), o0 = _mm256_mul_epu32(_mm256_srli_epi64(v[0], 32), m0);
    __m256i e1 = _mm256_mul_epu32(v[2], m1), o1 = _mm256_mul_epu32(_mm256_srli_epi64(v[2], 32), m1);
    __m256i h0 = _mm256_blend_epi32(_mm256_srli_epi64(e0, 32), o0, 0xAA);
    __m256i l0 = _mm256_blend_epi32(e0, _mm256_slli_epi64(o0, 32), 0xAA);
    __m256i h1 = _mm256_blend_epi32(_mm256_srli_epi64(e1, 32), o1, 0xAA);
    __m256i l1 = _mm256_blend_epi32(e1, _mm256_slli_epi64(o1, 32), 0xAA);
    v[0] = _mm256_xor_si256(_mm256_xor_si256(h1, v[1]), k0);
    v[2] = _mm256_xor_si256(_mm256_xor_si256(h0, v[3]), k1);
    v[1] = l1;
    v[3] = l0;
}

/* Keys of two interleaved chains of 8 blocks, chain h under v[h] (blocks
 * of any streams), bumped for both chains at once. */
typedef struct keys8x2 {
    __m256i v[2];
} keys8x2;

__attribute__((target("avx2"))) static inline keys8x2 keys8x2_add(keys8x2 k, __m256i w)
{
    return (keys8x2){{_mm256_add_epi32(k.v[0], w), _mm256_add_epi32(k.v[1], w)}};
}

/* Normals for 4 lanes: m (mantissa), i (layer), w (the words, for the sign). */
__attribute__((target("avx2"))) static inline void zig4(__m128i m, __m128i i, __m128i w, double *out)
{
    __m256d xi = _mm256_i32gather_pd(zig_x, i, 8);
    __m256d x = _mm256_mul_pd(
        _mm256_mul_pd(_mm256_add_pd(_mm256_cvtepi32_pd(m), _mm256_set1_pd(0.5)), _mm256_set1_pd(0x1p-24)), xi);
    __m256i sg = _mm256_slli_epi64(_mm256_cvtepu32_epi64(_mm_and_si128(w, _mm_set1_epi32(1 << 24))), 39);
    _mm256_storeu_pd(out, _mm256_castsi256_pd(_mm256_xor_si256(_mm256_castpd_si256(x), sg)));
}

__attribute__((target("avx2"))) static uint64_t normal_group_avx2(const sensim_rng *r, uint64_t b0, uint32_t u[GROUP],
                                                                   double *out)
{
    __m256i x[2][4];
    for (int h = 0; h < 2; h++) {
        const uint64_t b = b0 + 8 * (uint64_t)h;
        const __m256i lo0 = _mm256_set1_epi32((int)(uint32_t)b);
        x[h][0] = _mm256_add_epi32(lo0, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        /* Carry into the high word where the low word wrapped (unsigned x0 < lo0). */
        const __m256i bias = _mm256_set1_epi32((int)0x80000000u);
        __m256i wrapped = _mm256_cmpgt_epi32(_mm256_xor_si256(lo0, bias), _mm256_xor_si256(x[h][0], bias));
        x[h][1] = _mm256_sub_epi32(_mm256_set1_epi32((int)(uint32_t)(b >> 32)), wrapped);
        x[h][2] = _mm256_set1_epi32((int)r->stream);
        x[h][3] = _mm256_set1_epi32((int)r->sensor);
    }
    __m256i k0 = _mm256_set1_epi32((int)r->key[0]), k1 = _mm256_set1_epi32((int)r->key[1]);
    PHILOX_ROUNDS(__m256i, _mm256_add_epi32, _mm256_set1_epi32, k0, k1, {
        for (int h = 0; h < 2; h++)
            philox8_round(x[h], k0, k1);
    });
    const __m256i mant = _mm256_set1_epi32(0xFFFFFF);
    uint64_t bad = 0;
    for (int h = 0; h < 2; h++) {
        __m256i t0 = _mm256_unpacklo_epi32(x[h][0], x[h][1]), t1 = _mm256_unpackhi_epi32(x[h][0], x[h][1]);
        __m256i t2 = _mm256_unpacklo_epi32(x[h][2], x[h][3]), t3 = _mm256_unpackhi_epi32(x[h][2], x[h][3]);
        __m256i a0 = _mm256_unpacklo_epi64(t0, t2), a1 = _mm256_unpackhi_epi64(t0, t2);
        __m256i a2 = _mm256_unpacklo_epi64(t1, t3), a3 = _mm256_unpackhi_epi64(t1, t3);
        __m256i v[4] = {_mm256_permute2x128_si256(a0, a1, 0x20), _mm256_permute2x128_si256(a2, a3, 0x20),
                        _mm256_permute2x128_si256(a0, a1, 0x31), _mm256_permute2x128_si256(a2, a3, 0x31)};
        for (int j = 0; j < 4; j++) {
            const int o = 32 * h + 8 * j;
            _mm256_storeu_si256((__m256i *)(u + o), v[j]);
            __m256i m = _mm256_and_si256(v[j], mant), i = _mm256_srli_epi32(v[j], 25);
            __m256i ok = _mm256_cmpgt_epi32(_mm256_i32gather_epi32((const int *)zig_k, i, 4), m);
            zig4(_mm256_castsi256_si128(m), _mm256_castsi256_si128(i), _mm256_castsi256_si128(v[j]), out + o);
            zig4(_mm256_extracti128_si256(m, 1), _mm256_extracti128_si256(i, 1), _mm256_extracti128_si256(v[j], 1),
                 out + o + 4);
            bad |= (uint64_t)(~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(ok)) & 0xFFu) << o;
        }
    }
    return bad;
}

/* 32x32 -> 64-bit products of the 16 lanes of v by c: high and low words. */
__attribute__((target("avx512f"))) static inline void mulhilo16(__m512i v, __m512i c, __m512i *hi, __m512i *lo)
{
    __m512i ev = _mm512_mul_epu32(v, c);
    __m512i od = _mm512_mul_epu32(_mm512_srli_epi64(v, 32), c);
    *hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(ev, 32), od);
    *lo = _mm512_mask_blend_epi32(0xAAAA, ev, _mm512_slli_epi64(od, 32));
}

/* Normals for 8 lanes: m (mantissa), i (layer), sign mask sg; stores them
 * (the failed lanes' values are overwritten by the slow path). */
__attribute__((target("avx512f"))) static inline void zig8(__m256i m, __m256i i, __mmask8 sg, double *out)
{
    const __m512d half = _mm512_set1_pd(0.5), scale = _mm512_set1_pd(0x1p-24);
    __m512d xi = _mm512_i32gather_pd(i, zig_x, 8);
    __m512d x = _mm512_mul_pd(_mm512_mul_pd(_mm512_add_pd(_mm512_cvtepi32_pd(m), half), scale), xi);
    __m512i xs = _mm512_mask_xor_epi64(_mm512_castpd_si512(x), sg, _mm512_castpd_si512(x),
                                       _mm512_set1_epi64((long long)0x8000000000000000ull));
    _mm512_storeu_si512(out, xs);
}

/* Philox4x32-10's ten rounds on 16 counters, word w in lanes of x[w],
 * under per-lane keys k0, k1. */
__attribute__((target("avx512f"))) static inline void philox16(__m512i x[4], __m512i k0, __m512i k1)
{
    const __m512i m0 = _mm512_set1_epi64(0xD2511F53u), m1 = _mm512_set1_epi64(0xCD9E8D57u);
    PHILOX_ROUNDS(__m512i, _mm512_add_epi32, _mm512_set1_epi32, k0, k1, {
        __m512i h0, l0, h1, l1;
        mulhilo16(x[0], m0, &h0, &l0);
        mulhilo16(x[2], m1, &h1, &l1);
        x[0] = _mm512_ternarylogic_epi32(h1, x[1], k0, 0x96);
        x[2] = _mm512_ternarylogic_epi32(h0, x[3], k1, 0x96);
        x[1] = l1;
        x[3] = l0;
    });
}

/* Philox4x32-10 of arbitrary per-lane counters and keys, 16 lanes as two
 * interleaved 8-lane AVX2 chains (the draws of the first retries of lanes
 * that failed the rectangle test: few, from any stream). */
__attribute__((target("avx2"))) static void philox_any16_avx2(const uint32_t in[6][16], uint32_t out[4][16])
{
    __m256i x[2][4];
    keys8x2 k0, k1;
    for (int h = 0; h < 2; h++) {
        for (int w = 0; w < 4; w++)
            x[h][w] = _mm256_loadu_si256((const __m256i *)(in[w] + 8 * h));
        k0.v[h] = _mm256_loadu_si256((const __m256i *)(in[4] + 8 * h));
        k1.v[h] = _mm256_loadu_si256((const __m256i *)(in[5] + 8 * h));
    }
    PHILOX_ROUNDS(__m256i, keys8x2_add, _mm256_set1_epi32, k0, k1, {
        _Pragma("GCC unroll 2")
        for (int h = 0; h < 2; h++)
            philox8_round(x[h], k0.v[h], k1.v[h]);
    });
    for (int h = 0; h < 2; h++)
        for (int w = 0; w < 4; w++)
            _mm256_storeu_si256((__m256i *)(out[w] + 8 * h), x[h][w]);
}

/* philox_any16_avx2's job in one 16-lane AVX-512 chain. */
__attribute__((target("avx512f"))) static void philox_any16_avx512(const uint32_t in[6][16], uint32_t out[4][16])
{
    __m512i x[4];
    for (int w = 0; w < 4; w++)
        x[w] = _mm512_loadu_si512(in[w]);
    philox16(x, _mm512_loadu_si512(in[4]), _mm512_loadu_si512(in[5]));
    for (int w = 0; w < 4; w++)
        _mm512_storeu_si512(out[w], x[w]);
}

/* Philox4x32-10 on 16 blocks in the 16 lanes of four registers (one per
 * counter word), transposed to index order, then the ziggurat's rectangle
 * test 8 lanes at a time: one pass, no round trip through memory. */
__attribute__((target("avx512f"))) static uint64_t normal_group_avx512(const sensim_rng *r, uint64_t b0,
                                                                        uint32_t u[GROUP], double *out)
{
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i lo0 = _mm512_set1_epi32((int)(uint32_t)b0);
    __m512i x[4];
    x[0] = _mm512_add_epi32(lo0, iota);
    __mmask16 carry = _mm512_cmplt_epu32_mask(x[0], lo0);
    x[1] = _mm512_mask_add_epi32(_mm512_set1_epi32((int)(uint32_t)(b0 >> 32)), carry,
                                 _mm512_set1_epi32((int)(uint32_t)(b0 >> 32)), _mm512_set1_epi32(1));
    x[2] = _mm512_set1_epi32((int)r->stream);
    x[3] = _mm512_set1_epi32((int)r->sensor);
    philox16(x, _mm512_set1_epi32((int)r->key[0]), _mm512_set1_epi32((int)r->key[1]));
    __m512i x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    /* 4x16 transpose: v[j] holds indices 16 j .. 16 j + 15 (blocks 4j..4j+3). */
    __m512i t0 = _mm512_unpacklo_epi32(x0, x1), t1 = _mm512_unpackhi_epi32(x0, x1);
    __m512i t2 = _mm512_unpacklo_epi32(x2, x3), t3 = _mm512_unpackhi_epi32(x2, x3);
    __m512i a0 = _mm512_unpacklo_epi64(t0, t2), a1 = _mm512_unpackhi_epi64(t0, t2);
    __m512i a2 = _mm512_unpacklo_epi64(t1, t3), a3 = _mm512_unpackhi_epi64(t1, t3);
    __m512i c0 = _mm512_shuffle_i32x4(a0, a1, 0x44), c1 = _mm512_shuffle_i32x4(a2, a3, 0x44);
    __m512i c2 = _mm512_shuffle_i32x4(a0, a1, 0xEE), c3 = _mm512_shuffle_i32x4(a2, a3, 0xEE);
    __m512i v[4] = {_mm512_shuffle_i32x4(c0, c1, 0x88), _mm512_shuffle_i32x4(c0, c1, 0xDD),
                    _mm512_shuffle_i32x4(c2, c3, 0x88), _mm512_shuffle_i32x4(c2, c3, 0xDD)};
    const __m512i mant = _mm512_set1_epi32(0xFFFFFF), sbit = _mm512_set1_epi32(1 << 24);
    const __m512i b5 = _mm512_set1_epi32(32), b6 = _mm512_set1_epi32(64);
    /* The rectangle test in integers, m < zig_k[i], the 128-entry table
     * looked up from registers (four 32-entry permutes and a select). */
    const __m512i z0 = _mm512_loadu_si512(zig_k), z1 = _mm512_loadu_si512(zig_k + 16);
    const __m512i z2 = _mm512_loadu_si512(zig_k + 32), z3 = _mm512_loadu_si512(zig_k + 48);
    const __m512i z4 = _mm512_loadu_si512(zig_k + 64), z5 = _mm512_loadu_si512(zig_k + 80);
    const __m512i z6 = _mm512_loadu_si512(zig_k + 96), z7 = _mm512_loadu_si512(zig_k + 112);
    uint64_t bad = 0;
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        _mm512_storeu_si512(u + 16 * j, v[j]);
        __m512i m = _mm512_and_si512(v[j], mant), i = _mm512_srli_epi32(v[j], 25);
        __mmask16 sg = _mm512_test_epi32_mask(v[j], sbit);
        __mmask16 s5 = _mm512_test_epi32_mask(i, b5), s6 = _mm512_test_epi32_mask(i, b6);
        __m512i lo = _mm512_mask_blend_epi32(s5, _mm512_permutex2var_epi32(z0, i, z1),
                                             _mm512_permutex2var_epi32(z2, i, z3));
        __m512i hi = _mm512_mask_blend_epi32(s5, _mm512_permutex2var_epi32(z4, i, z5),
                                             _mm512_permutex2var_epi32(z6, i, z7));
        __mmask16 ok = _mm512_cmplt_epu32_mask(m, _mm512_mask_blend_epi32(s6, lo, hi));
        zig8(_mm512_castsi512_si256(m), _mm512_castsi512_si256(i), (__mmask8)sg, out + 16 * j);
        zig8(_mm512_extracti64x4_epi64(m, 1), _mm512_extracti64x4_epi64(i, 1), (__mmask8)(sg >> 8), out + 16 * j + 8);
        bad |= (uint64_t)(uint16_t)~ok << 16 * j;
    }
    return bad;
}
#endif

typedef struct normal_kernels {
    uint64_t (*group)(const sensim_rng *, uint64_t, uint32_t *, double *);
    void (*philox_any16)(const uint32_t in[6][16], uint32_t out[4][16]);
} normal_kernels;

static void philox_any16_base(const uint32_t in[6][16], uint32_t out[4][16])
{
    for (int l = 0; l < 16; l++) {
        philox4x32_ctr_t c = {{in[0][l], in[1][l], in[2][l], in[3][l]}};
        philox4x32_key_t k = {{in[4][l], in[5][l]}};
        philox4x32_ctr_t v = philox4x32(c, k);
        for (int w = 0; w < 4; w++)
            out[w][l] = v.v[w];
    }
}

static int pick_kernels(sensim_rng_impl impl, normal_kernels *k)
{
#ifdef SENSIM_X86_KERNELS
    if (impl == SENSIM_RNG_IMPL_AUTO)
        impl = __builtin_cpu_supports("avx512f") ? SENSIM_RNG_IMPL_AVX512
               : __builtin_cpu_supports("avx2") ? SENSIM_RNG_IMPL_AVX2
                                                 : SENSIM_RNG_IMPL_SCALAR;
    if (impl == SENSIM_RNG_IMPL_AVX512 && __builtin_cpu_supports("avx512f")) {
        *k = (normal_kernels){normal_group_avx512, philox_any16_avx512};
        return 1;
    }
    if (impl == SENSIM_RNG_IMPL_AVX2 && __builtin_cpu_supports("avx2")) {
        *k = (normal_kernels){normal_group_avx2, philox_any16_avx2};
        return 1;
    }
#endif
    if (impl == SENSIM_RNG_IMPL_AUTO || impl == SENSIM_RNG_IMPL_SCALAR) {
        *k = (normal_kernels){normal_group_base, philox_any16_base};
        return 1;
    }
    return 0;
}

int sensim_rng_impl_available(sensim_rng_impl impl)
{
    normal_kernels k;
    return pick_kernels(impl, &k);
}

/* Lanes that failed the rectangle test wait here, from any stream, until
 * 16 are, so that their first retries' Philox blocks are drawn together
 * and their wedge tests run without a branch per lane. */
#define PENDING 16
typedef struct pending {
    int n;
    const sensim_rng *r[PENDING];
    uint64_t idx[PENDING];
    uint32_t u[PENDING];
    double *out[PENDING];
} pending;

static void pending_flush(const normal_kernels *k, pending *p)
{
    if (!p->n)
        return;
    uint32_t in[6][16] = {{0}}, w[4][16];
    for (int l = 0; l < p->n; l++) {
        const sensim_rng *r = p->r[l];
        in[0][l] = (uint32_t)p->idx[l];
        in[1][l] = (uint32_t)(p->idx[l] >> 32);
        in[2][l] = r->stream;
        in[3][l] = r->sensor | ATTEMPT_NORMAL << 24;
        in[4][l] = r->key[0];
        in[5][l] = r->key[1];
    }
    k->philox_any16(in, w);
    /* Attempt 1 of normal_slow_from for every lane (the rectangle test is
     * known to fail); the tail layer and wedge rejections continue there. */
    unsigned again = 0;
    for (int l = 0; l < p->n; l++) {
        uint32_t u = p->u[l];
        unsigned i = u >> 25;
        double x = ((double)(u & 0xFFFFFFu) + 0.5) * 0x1p-24 * zig_x[i];
        double y = zig_f[i] + u01(w[1][l]) * (zig_f[i + 1] - zig_f[i]);
        int ok = i != 0 && y < exp(-0.5 * x * x);
        *p->out[l] = (u >> 24 & 1u) ? -x : x;
        again |= (unsigned)!ok << l;
    }
    for (; again; again &= again - 1) {
        int l = __builtin_ctz(again);
        if (p->u[l] >> 25 == 0) {
            uint32_t w1[4] = {w[0][l], w[1][l], w[2][l], w[3][l]};
            *p->out[l] = normal_slow_from(p->r[l], p->idx[l], p->u[l], w1, ATTEMPT_NORMAL);
        } else
            *p->out[l] = normal_slow_from(p->r[l], p->idx[l], w[0][l], NULL, ATTEMPT_NORMAL + 1);
    }
    p->n = 0;
}

/* Scalar head or tail of a fill: indices first .. first + n - 1. */
static void normal_fill_scalar(const sensim_rng *r, uint64_t first, size_t n, double *out)
{
    size_t i = 0;
    while (i < n) {
        uint64_t idx = first + i;
        philox4x32_ctr_t v = draw(r, idx >> 2, 0);
        for (unsigned lane = (unsigned)(idx & 3); lane < 4 && i < n; lane++, i++)
            out[i] = normal_lane(r, first + i, v.v[lane]);
    }
}

static void normal_fill_with(const normal_kernels *k, pending *p, const sensim_rng *r, uint64_t first, size_t n,
                             double *out)
{
    /* Head: up to the next multiple of GROUP. */
    size_t head = (size_t)((GROUP - first % GROUP) % GROUP);
    if (head > n)
        head = n;
    normal_fill_scalar(r, first, head, out);
    size_t i = head;
    uint32_t u[GROUP];
    for (; i + GROUP <= n; i += GROUP) {
        for (uint64_t bad = k->group(r, (first + i) >> 2, u, out + i); bad; bad &= bad - 1) {
            int j = __builtin_ctzll(bad);
            if (p->n == PENDING)
                pending_flush(k, p);
            p->r[p->n] = r;
            p->idx[p->n] = first + i + (size_t)j;
            p->u[p->n] = u[j];
            p->out[p->n++] = out + i + j;
        }
    }
    normal_fill_scalar(r, first + i, n - i, out + i);
}

void sensim_rng_normal_fill_many(int count, const sensim_rng *const r[], const uint64_t first[], size_t n,
                                 double *const out[])
{
    normal_kernels k;
    pick_kernels(SENSIM_RNG_IMPL_AUTO, &k);
    pending p;
    p.n = 0;
    for (int s = 0; s < count; s++)
        normal_fill_with(&k, &p, r[s], first[s], n, out[s]);
    pending_flush(&k, &p);
}

void sensim_rng_normal_fill(const sensim_rng *r, uint64_t first, size_t n, double *out)
{
    sensim_rng_normal_fill_many(1, &r, &first, n, &out);
}

sensim_status sensim_rng_normal_fill_impl(const sensim_rng *r, uint64_t first, size_t n, double *out,
                                          sensim_rng_impl impl)
{
    normal_kernels k;
    if (!pick_kernels(impl, &k))
        return sensim_error(SENSIM_EUNSUPPORTED, "rng: normal_fill implementation %d is not available on this CPU",
                            (int)impl);
    pending p;
    p.n = 0;
    normal_fill_with(&k, &p, r, first, n, out);
    pending_flush(&k, &p);
    return SENSIM_OK;
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
