/* Exact Poisson draws for bulk use (the camera's shot noise at low light).
 * See sensim/rng.h for the contract.
 *
 * Two exact methods, both evaluated in double precision:
 *  - mean < 10: inversion by sequential search. One 52-bit uniform u from
 *    the first Poisson attempt's words 0 and 1; X is the least k with
 *    u <= F(k), F accumulated from P(0) = exp(-mean) (fdlibm's algorithm,
 *    below) by the recurrence
 *    P(k) = P(k-1) mean / k. The search ends at the latest when the terms
 *    no longer change the sum (k < 100 for mean < 10); should u exceed that
 *    sum (the double rounding of F, probability below 1e-15) the search
 *    starts again on the next attempt's words.
 *  - mean >= 10: PTRS, the transformed rejection with squeeze of
 *    W. Hormann, "The transformed rejection method for generating Poisson
 *    random variables", Insurance: Mathematics and Economics 12 (1993)
 *    39-45 (algorithm PTRS, its constants). Each attempt reads the four
 *    words of one Philox block (u and v, 52 bits each); about 1.15 attempts
 *    a draw. The squeeze (us >= 0.07 and v <= v_r) accepts 37-74 % of
 *    draws (more for larger means) with +, -, *, /, sqrt and floor only;
 *    the rest take the exact test
 *    log(v alpha us^2 / (a + b us^2)) <= -mean + k log(mean) - log(k!)
 *    (Hormann's log(v alpha / (a / us^2 + b)), one division fewer), with
 *    log(k!) from a table below k = 32 and the Stirling series (five terms,
 *    relative error below 3e-17) above, and logs by fdlibm's algorithm
 *    (below).
 *
 * Attempt j of index i reads the Philox block with counter (i, stream,
 * sensor | (64 + j) << 24): the value is a pure function of (key, index,
 * mean), whatever the neighbours, the chunking or the thread count.
 *
 * The bulk fill runs Philox, the squeeze and the exact test for a list of
 * indices at once in loops the compiler vectorizes, for the first three
 * attempts (the rejected indices of one make the next one's list), and
 * the inversion for small means in lock step (the lanes still searching
 * packed after each step); the scalar code finishes the rare rest (three
 * rejections, an inversion sum that stops growing below u, means of 1e9
 * and more). The vector loops use only IEEE +, -, *,
 * /, sqrt, floor, integer operations and comparisons (no FMA contraction
 * under -std=c11; the Makefile builds this file with -fno-math-errno
 * -fno-trapping-math so that sqrt and floor vectorize), and the scalar
 * code evaluates the same expressions, so every kernel gives the bits of
 * sensim_rng_poisson_exact. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sensim/rng.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define POISSON_X86 1
#endif

#define ATTEMPT_POISSON 64u
#define ATTEMPT_END 128u
/* Means from here up take PTRS (Hormann's algorithm is valid from 10). */
#define PTRS_FROM 10.0
/* Means from here up are drawn by the scalar code only (the vector loop
 * converts k to a 32-bit signed integer). */
#define VECTOR_BELOW 1e9
/* Indices per vector group. */
#define GROUP 256

#define INLINE static inline __attribute__((always_inline))

/* A uniform on (0, 1) with 52 bits from two words: exact in double. */
INLINE double u52(uint32_t hi, uint32_t lo)
{
    return ((double)(int32_t)(hi >> 6) * 0x1p26 + (double)(int32_t)(lo >> 6) + 0.5) * 0x1p-52;
}

/* Philox4x32-10 of the counter (index, stream, sensor | attempt << 24):
 * the rounds of Random123's philox4x32 written out on plain integers so
 * that a loop over indices vectorizes. */
INLINE void philox(uint32_t k0, uint32_t k1, uint64_t index, uint32_t stream, uint32_t c3, uint32_t *w0,
                   uint32_t *w1, uint32_t *w2, uint32_t *w3)
{
    uint32_t x0 = (uint32_t)index, x1 = (uint32_t)(index >> 32), x2 = stream, x3 = c3;
#pragma GCC unroll 10
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)x0 * 0xD2511F53u, p1 = (uint64_t)x2 * 0xCD9E8D57u;
        x0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0;
        x2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1;
        x1 = (uint32_t)p1;
        x3 = (uint32_t)p0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    *w0 = x0;
    *w1 = x1;
    *w2 = x2;
    *w3 = x3;
}

static void attempt_words(const sensim_rng *r, uint64_t index, uint32_t attempt, uint32_t w[4])
{
    philox(r->key[0], r->key[1], index, r->stream, r->sensor | attempt << 24, &w[0], &w[1], &w[2], &w[3]);
}

/* PTRS's constants for a mean (Hormann 1993, step 0). */
INLINE void ptrs_constants(double mean, double *b, double *a, double *vr)
{
    *b = 0.931 + 2.53 * sqrt(mean);
    *a = -0.059 + 0.02483 * *b;
    *vr = 0.9277 - 3.6224 / (*b - 2.0);
}

/* One PTRS attempt up to the squeeze: k from (u, v) (the words w0..w3),
 * and whether the squeeze accepts it. The vector loop and the scalar code
 * share it. */
INLINE int ptrs_squeeze(double b, double a, double vr, double mean, uint32_t w0, uint32_t w1, uint32_t w2,
                        uint32_t w3, double *k, double *us, double *v)
{
    double u = u52(w0, w1) - 0.5;
    *v = u52(w2, w3);
    *us = 0.5 - fabs(u);
    *k = floor((2.0 * a / *us + b) * u + mean + 0.43);
    return *us >= 0.07 && *v <= vr;
}

/* Natural log of a positive normal double by the algorithm of fdlibm's
 * e_log.c (Sun Microsystems 1993, as in musl): x = 2^e (1 + f) with 1 + f
 * in [sqrt(1/2), sqrt(2)), s = f / (2 + f), log(1 + f) = f - f^2/2 +
 * s (f^2/2 + R(s^2)) with fdlibm's minimax R (error below 2^-58.45); the
 * result is within 1 ulp. Here rather than libm's log because it uses
 * only IEEE +, -, *, / and integer operations, so the vector loop and the
 * scalar code give the same bits. */
INLINE double plog(double x)
{
    const double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01, Lg3 = 2.857142874366239149e-01,
                 Lg4 = 2.222219843214978396e-01, Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                 Lg7 = 1.479819860511658591e-01, ln2_hi = 6.93147180369123816490e-01,
                 ln2_lo = 1.90821492927058770002e-10;
    uint64_t ix;
    memcpy(&ix, &x, sizeof ix);
    uint32_t hx = (uint32_t)(ix >> 32) + (0x3ff00000u - 0x3fe6a09eu);
    const double dk = (double)((int32_t)(hx >> 20) - 0x3ff);
    hx = (hx & 0x000fffffu) + 0x3fe6a09eu;
    ix = (uint64_t)hx << 32 | (ix & 0xffffffffu);
    double m;
    memcpy(&m, &ix, sizeof m);
    const double f = m - 1.0, hfsq = 0.5 * f * f, s = f / (2.0 + f), z = s * s, w = z * z;
    const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6)), t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
    return dk * ln2_hi - ((hfsq - (s * (hfsq + (t1 + t2)) + dk * ln2_lo)) - f);
}

/* log(k!) for k >= 0. Below 32, the log of the product 2 3 ... k (exact
 * up to 22!, then at most nine roundings: error below 1.2e-15). From 32,
 * Stirling's series for log Gamma(x), x = k + 1: (x - 1/2) log x - x +
 * log(2 pi)/2 + 1/(12x) - 1/(360x^3) + 1/(1260x^5) - 1/(1680x^7); the
 * first omitted term, 1/(1188x^9), is below 3e-17 of the sum for x >= 33.
 * One log either way, no table and no branch, so that a vector loop runs
 * it. */
INLINE double log_fact(double k)
{
    double prod = 1.0;
#pragma GCC unroll 32
    for (int j = 2; j < 32; j++)
        prod *= (double)j <= k ? (double)j : 1.0;
    const double x = k + 1.0, r = 1.0 / x, r2 = r * r;
    const int small = k < 32;
    const double l = plog(small ? prod : x);
    const double s = r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680))));
    return small ? l : (x - 0.5) * l - x + 0.91893853320467274 + s;
}

/* PTRS's exact test (Hormann 1993, step 3.2), from alpha and log(mean):
 * log(v alpha us^2 / (a + b us^2)) <= -mean + k log(mean) - log(k!). */
INLINE int ptrs_exact_test(double mean, double log_mean, double inv_alpha, double a, double b, double k, double us,
                           double v)
{
    const double us2 = us * us;
    return plog(v * inv_alpha * us2 / (a + b * us2)) <= -mean + k * log_mean - log_fact(k);
}

/* The same test where k >= 32 is known: Stirling only, exactly the
 * operations log_fact makes there. */
INLINE int ptrs_exact_test_large_k(double mean, double log_mean, double inv_alpha, double a, double b, double k,
                                   double us, double v)
{
    const double us2 = us * us, x = k + 1.0, r = 1.0 / x, r2 = r * r;
    const double s = r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680))));
    const double lf = (x - 0.5) * plog(x) - x + 0.91893853320467274 + s;
    return plog(v * inv_alpha * us2 / (a + b * us2)) <= -mean + k * log_mean - lf;
}

INLINE double ptrs_inv_alpha(double b) { return 1.1239 + 1.1328 / (b - 3.4); }

/* exp(x) for x in [-745, 0] by the algorithm of fdlibm's e_exp.c: x = k
 * ln2 + r, |r| <= ln2 / 2, exp(r) from fdlibm's minimax rational form
 * (error below 2^-59), scaled by 2^k; within 1 ulp. Written without
 * branches and libm for the same reason as plog. (The inversion needs it
 * on [-10, 0].) */
INLINE double pexp(double x)
{
    const double P1 = 1.66666666666666019037e-01, P2 = -2.77777777770155933842e-03,
                 P3 = 6.61375632143793436117e-05, P4 = -1.65339022054652515390e-06,
                 P5 = 4.13813679705723846039e-08, ln2_hi = 6.93147180369123816490e-01,
                 ln2_lo = 1.90821492927058770002e-10, inv_ln2 = 1.44269504088896338700e+00;
    /* Nearest k for x <= 0 (the conversion truncates towards 0). */
    const int32_t k = (int32_t)(inv_ln2 * x - 0.5);
    const double dk = (double)k, hi = x - dk * ln2_hi, lo = dk * ln2_lo, r = hi - lo, t = r * r;
    const double c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
    const double y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
    /* 2^k in two factors, so that k down to -1074 stays representable. */
    const int32_t k1 = k / 2, k2 = k - k1;
    const uint64_t b1 = (uint64_t)(int64_t)(k1 + 1023) << 52, b2 = (uint64_t)(int64_t)(k2 + 1023) << 52;
    double s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    return y * s1 * s2;
}

static uint32_t to_u32(double k) { return k >= 4294967295.0 ? UINT32_MAX : (uint32_t)k; }

/* PTRS from attempt number at (0-based), whose words are w0. */
static uint32_t ptrs_from(const sensim_rng *r, uint64_t index, double mean, uint32_t at, const uint32_t w0[4])
{
    double b, a, vr;
    ptrs_constants(mean, &b, &a, &vr);
    const double inv_alpha = ptrs_inv_alpha(b), log_mean = plog(mean);
    uint32_t w[4];
    memcpy(w, w0, sizeof w);
    for (at += ATTEMPT_POISSON;;) {
        double k, us, v;
        if (ptrs_squeeze(b, a, vr, mean, w[0], w[1], w[2], w[3], &k, &us, &v))
            return to_u32(k);
        if (k >= 0 && !(us < 0.013 && v > us)) {
            if (ptrs_exact_test(mean, log_mean, inv_alpha, a, b, k, us, v))
                return to_u32(k);
        }
        if (++at == ATTEMPT_END)
            break;
        attempt_words(r, index, at, w);
    }
    /* 64 rejections in a row: probability below 1e-50. */
    return to_u32(floor(mean));
}

/* Inversion by sequential search from attempt 0, whose words are w. */
static uint32_t inversion(const sensim_rng *r, uint64_t index, double mean, const uint32_t w0[4])
{
    const double p0 = pexp(-mean);
    uint32_t w[4];
    memcpy(w, w0, sizeof w);
    for (uint32_t at = ATTEMPT_POISSON;;) {
        double u = u52(w[0], w[1]), p = p0, cdf = p0;
        uint32_t k = 0;
        while (u > cdf) {
            k++;
            p *= mean * (1.0 / k);
            double next = cdf + p;
            if (next == cdf)
                break;
            cdf = next;
        }
        if (u <= cdf)
            return k;
        if (++at == ATTEMPT_END)
            return k;
        attempt_words(r, index, at, w);
    }
}

/* The draw from attempt 0's words. */
static uint32_t finish(const sensim_rng *r, uint64_t index, double mean, const uint32_t w[4])
{
    if (!(mean > 0.0))
        return 0;
    if (!(mean < 4294967295.0))
        return UINT32_MAX;
    return mean < PTRS_FROM ? inversion(r, index, mean, w) : ptrs_from(r, index, mean, 0, w);
}

uint32_t sensim_rng_poisson_exact(const sensim_rng *r, uint64_t index, double mean)
{
    uint32_t w[4];
    attempt_words(r, index, ATTEMPT_POISSON, w);
    return finish(r, index, mean, w);
}

#ifdef POISSON_X86
#include <immintrin.h>
/* The Philox blocks of a list in AVX-512 intrinsics: with AVX512DQ GCC
 * turns the generic loop's 32 x 32 -> 64-bit products into vpmullq (a full
 * 64-bit multiply, several times slower); vpmuludq is what is meant, as in
 * lib/rng_icdf.c. The same words as philox(). */
__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw"))) static void
philox_list_avx512(uint32_t k0, uint32_t k1, const uint64_t *idx, size_t L, uint32_t stream, uint32_t c3,
                   uint32_t *w0, uint32_t *w1, uint32_t *w2, uint32_t *w3)
{
    const __m512i M0 = _mm512_set1_epi64(0xD2511F53), M1 = _mm512_set1_epi64(0xCD9E8D57);
    for (size_t l = 0; l < L; l += 8) {
        const __mmask8 mask = L - l >= 8 ? 0xFF : (__mmask8)((1u << (L - l)) - 1);
        __m512i x0 = _mm512_maskz_loadu_epi64(mask, idx + l), x1 = _mm512_srli_epi64(x0, 32);
        __m512i x2 = _mm512_set1_epi64(stream), x3 = _mm512_set1_epi64(c3);
        uint32_t a = k0, b = k1;
        for (int round = 0; round < 10; round++) {
            const __m512i K0 = _mm512_set1_epi64(a), K1 = _mm512_set1_epi64(b);
            const __m512i p0 = _mm512_mul_epu32(x0, M0), p1 = _mm512_mul_epu32(x2, M1);
            x0 = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), x1, K0, 0x96);
            x2 = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), x3, K1, 0x96);
            x1 = p1;
            x3 = p0;
            a += 0x9E3779B9u;
            b += 0xBB67AE85u;
        }
        _mm512_mask_cvtepi64_storeu_epi32(w0 + l, mask, x0);
        _mm512_mask_cvtepi64_storeu_epi32(w1 + l, mask, x1);
        _mm512_mask_cvtepi64_storeu_epi32(w2 + l, mask, x2);
        _mm512_mask_cvtepi64_storeu_epi32(w3 + l, mask, x3);
    }
}
#endif

/* The Philox blocks of a list: in AVX-512 where `avx512` (a constant after
 * inlining), else in the generic loop, which the compiler vectorizes. */
INLINE void philox_list(int avx512, uint32_t k0, uint32_t k1, const uint64_t *idx, size_t L, uint32_t stream,
                        uint32_t c3, uint32_t w[4][GROUP])
{
#ifdef POISSON_X86
    if (avx512) {
        philox_list_avx512(k0, k1, idx, L, stream, c3, w[0], w[1], w[2], w[3]);
        return;
    }
#else
    (void)avx512;
#endif
#pragma omp simd
    for (size_t l = 0; l < L; l++)
        philox(k0, k1, idx[l], stream, c3, &w[0][l], &w[1][l], &w[2][l], &w[3][l]);
}

/* Number of attempts the fill runs in vector loops before handing the
 * rejected indices (about 0.14^VECTOR_ATTEMPTS of them) to the scalar code. */
#define VECTOR_ATTEMPTS 3
/* Steps of the vector inversion before the scalar code takes over (a
 * mean below 10 passes 64 with probability below 1e-30). */
#define INVERSION_STEPS 64

/* Means from here up make the second PTRS list (see fill_body). */
#define LARGE_FROM 64.0

/* PTRS for a list of L indices (idx, mu, position pos in out) in vector
 * loops for the first VECTOR_ATTEMPTS attempts: Philox, squeeze, exact
 * test; accepted draws stored, rejected ones packed for the next attempt,
 * the rest scalar. small_k (a constant after inlining): the test with
 * log k! for every k (the product below 32, which costs every lane
 * thirty multiplications); otherwise Stirling only and the lanes with k
 * < 32 past the squeeze go to the scalar code, which is right for the
 * list of means from LARGE_FROM up, where such k are rare. */
INLINE void ptrs_list(const sensim_rng *r, uint32_t *out, uint64_t *idx, double *mu, uint16_t *pos, size_t L,
                      int small_k, int avx512, uint32_t w[4][GROUP], uint32_t *res, uint8_t *st)
{
    enum { REJECT = 0, ACCEPT = 1, SCALAR = 2 };
    const uint32_t k0 = r->key[0], k1 = r->key[1], stream = r->stream;
    (void)avx512;
    for (uint32_t at = 0; at < VECTOR_ATTEMPTS && L > 0; at++) {
        const uint32_t c3 = r->sensor | (ATTEMPT_POISSON + at) << 24;
        philox_list(avx512, k0, k1, idx, L, stream, c3, w);
#pragma omp simd
        for (size_t l = 0; l < L; l++) {
            const double x = mu[l];
            double b, a, vr, k, us, v;
            ptrs_constants(x, &b, &a, &vr);
            const int sq = ptrs_squeeze(b, a, vr, x, w[0][l], w[1][l], w[2][l], w[3][l], &k, &us, &v);
            const int pre = k >= 0 && !(us < 0.013 && v > us);
            const int big = k >= 32;
            const int test = small_k ? ptrs_exact_test(x, plog(x), ptrs_inv_alpha(b), a, b, k, us, v)
                                     : ptrs_exact_test_large_k(x, plog(x), ptrs_inv_alpha(b), a, b, k, us, v);
            /* Bitwise: with || and && GCC 12 leaves the loop scalar. */
            const int acc = sq | (pre & test & (small_k | big));
            res[l] = acc ? (uint32_t)(int32_t)k : 0;
            st[l] = acc ? ACCEPT : (pre & !small_k & !big) ? SCALAR : REJECT;
        }
        /* Without a branch on the (random) outcome: out is 0 until an
         * index's draw is accepted, once. */
        size_t L2 = 0;
        for (size_t l = 0; l < L; l++) {
            out[pos[l]] |= res[l];
            if (!small_k && st[l] == SCALAR) {
                const uint32_t q[4] = {w[0][l], w[1][l], w[2][l], w[3][l]};
                out[pos[l]] = ptrs_from(r, idx[l], mu[l], at, q);
            }
            idx[L2] = idx[l];
            mu[L2] = mu[l];
            pos[L2] = pos[l];
            L2 += st[l] == REJECT;
        }
        L = L2;
    }
    for (size_t l = 0; l < L; l++) {
        uint32_t q[4];
        attempt_words(r, idx[l], ATTEMPT_POISSON + VECTOR_ATTEMPTS, q);
        out[pos[l]] = ptrs_from(r, idx[l], mu[l], VECTOR_ATTEMPTS, q);
    }
}

/* The fill, per group of indices: those with a mean in (0, 10) go on one
 * list (the inversion), those in [10, 1e9) on another; for attempt 0, 1,
 * 2 the second list's Philox blocks and PTRS (squeeze, then the exact
 * test) run in vectorizable loops over the list, the accepted draws are
 * stored and the rejected ones make the next attempt's list. The scalar
 * code takes the rest. Each index sees exactly the attempts and the
 * arithmetic of the scalar code. */
INLINE void fill_body(const sensim_rng *r, uint64_t first, size_t n, const float *mean, uint32_t *out, int avx512)
{
    uint64_t idx[GROUP];
    double mu[GROUP];
    uint32_t res[GROUP];
    uint16_t pos[GROUP];
    uint32_t w[4][GROUP];
    uint8_t st[GROUP], scalar[GROUP];
    uint64_t iidx[GROUP], lidx[GROUP];
    double lmu[GROUP];
    uint16_t lpos[GROUP];
    double imu[GROUP], iu[GROUP], ip[GROUP], icdf[GROUP];
    uint32_t ik[GROUP];
    uint16_t ipos[GROUP];
    uint8_t iact[GROUP], isat[GROUP];
    const uint32_t k0 = r->key[0], k1 = r->key[1], stream = r->stream;
    (void)avx512;
    for (size_t i0 = 0; i0 < n; i0 += GROUP) {
        const size_t m = n - i0 < GROUP ? n - i0 : GROUP;
        size_t L = 0, NI = 0, NL = 0;
        for (size_t j = 0; j < m; j++) {
            const double x = mean[i0 + j];
            const int list = x >= PTRS_FROM && x < LARGE_FROM, large = x >= LARGE_FROM && x < VECTOR_BELOW;
            const int inv = x > 0.0 && x < PTRS_FROM;
            out[i0 + j] = 0;
            scalar[j] = x > 0.0 && !list && !large && !inv;
            idx[L] = first + i0 + j;
            mu[L] = x;
            pos[L] = (uint16_t)j;
            L += (size_t)list;
            lidx[NL] = first + i0 + j;
            lmu[NL] = x;
            lpos[NL] = (uint16_t)j;
            NL += (size_t)large;
            iidx[NI] = first + i0 + j;
            imu[NI] = x;
            ipos[NI] = (uint16_t)j;
            NI += (size_t)inv;
        }
        if (NI > 0) {
            /* Inversion for the small means, all lanes in step: at step j
             * every lane still searching has k = j - 1 before it (as in
             * inversion()). Lanes whose sum stops growing below u, or that
             * search past INVERSION_STEPS, go to the scalar code. */
            const uint32_t c3 = r->sensor | ATTEMPT_POISSON << 24;
            philox_list(avx512, k0, k1, iidx, NI, stream, c3, w);
#pragma omp simd
            for (size_t l = 0; l < NI; l++) {
                iu[l] = u52(w[0][l], w[1][l]);
                ip[l] = pexp(-imu[l]);
                icdf[l] = ip[l];
                ik[l] = 0;
                iact[l] = iu[l] > icdf[l];
                isat[l] = 0;
            }
            /* After each step the lanes still searching are packed to the
             * front (the others stored), so a step costs what is left. */
            size_t NA = NI;
            for (uint32_t step = 1;; step++) {
                size_t NA2 = 0;
                for (size_t l = 0; l < NA; l++) {
                    out[i0 + ipos[l]] = ik[l];
                    if (isat[l] | (iact[l] & (step > INVERSION_STEPS)))
                        out[i0 + ipos[l]] = sensim_rng_poisson_exact(r, iidx[l], imu[l]);
                    iidx[NA2] = iidx[l];
                    imu[NA2] = imu[l];
                    iu[NA2] = iu[l];
                    ip[NA2] = ip[l];
                    icdf[NA2] = icdf[l];
                    ik[NA2] = ik[l];
                    ipos[NA2] = ipos[l];
                    NA2 += iact[l] & (step <= INVERSION_STEPS);
                }
                NA = NA2;
                if (!NA)
                    break;
                const double rs = 1.0 / (double)step;
#pragma omp simd
                for (size_t l = 0; l < NA; l++) {
                    const double pn = ip[l] * (imu[l] * rs), next = icdf[l] + pn;
                    const int sat = next == icdf[l];
                    ip[l] = pn;
                    ik[l] += 1;
                    icdf[l] = sat ? icdf[l] : next;
                    isat[l] = (uint8_t)sat;
                    iact[l] = (uint8_t)(!sat && iu[l] > next);
                }
            }
        }
        ptrs_list(r, out + i0, idx, mu, pos, L, 1, avx512, w, res, st);
        ptrs_list(r, out + i0, lidx, lmu, lpos, NL, 0, avx512, w, res, st);
        for (size_t j8 = 0; j8 < m; j8 += 8) {
            uint64_t f = 0;
            memcpy(&f, scalar + j8, m - j8 < 8 ? m - j8 : 8);
            for (; f; f &= f - 1) {
                size_t j = j8 + (size_t)(__builtin_ctzll(f) >> 3);
                out[i0 + j] = sensim_rng_poisson_exact(r, first + i0 + j, mean[i0 + j]);
            }
        }
    }
}

static void fill_base(const sensim_rng *r, uint64_t first, size_t n, const float *mean, uint32_t *out)
{
    fill_body(r, first, n, mean, out, 0);
}
#ifdef POISSON_X86
__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,prefer-vector-width=512"))) static void
fill_avx512(const sensim_rng *r, uint64_t first, size_t n, const float *mean, uint32_t *out)
{
    fill_body(r, first, n, mean, out, 1);
}
__attribute__((target("avx2,fma"))) static void fill_avx2(const sensim_rng *r, uint64_t first, size_t n,
                                                         const float *mean, uint32_t *out)
{
    fill_body(r, first, n, mean, out, 0);
}
#endif

/* Whether this build and CPU have a kernel (the baseline always). */
static int have(sensim_rng_impl impl)
{
#ifdef POISSON_X86
    if (impl == SENSIM_RNG_IMPL_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
    if (impl == SENSIM_RNG_IMPL_AVX2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    return impl == SENSIM_RNG_IMPL_SCALAR;
}

sensim_status sensim_rng_poisson_exact_fill_impl(const sensim_rng *r, uint64_t first, size_t n, const float *mean,
                                                 uint32_t *out, sensim_rng_impl impl)
{
    if (impl == SENSIM_RNG_IMPL_AUTO)
        impl = have(SENSIM_RNG_IMPL_AVX512) ? SENSIM_RNG_IMPL_AVX512
               : have(SENSIM_RNG_IMPL_AVX2) ? SENSIM_RNG_IMPL_AVX2
                                            : SENSIM_RNG_IMPL_SCALAR;
    if (!have(impl))
        return sensim_error(SENSIM_EUNSUPPORTED, "rng: Poisson fill: kernel %d not available on this CPU or build",
                            (int)impl);
    switch (impl) {
#ifdef POISSON_X86
    case SENSIM_RNG_IMPL_AVX512:
        fill_avx512(r, first, n, mean, out);
        break;
    case SENSIM_RNG_IMPL_AVX2:
        fill_avx2(r, first, n, mean, out);
        break;
#endif
    default:
        fill_base(r, first, n, mean, out);
        break;
    }
    return SENSIM_OK;
}

void sensim_rng_poisson_exact_fill(const sensim_rng *r, uint64_t first, size_t n, const float *mean,
                                   uint32_t *out)
{
    sensim_rng_poisson_exact_fill_impl(r, first, n, mean, out, SENSIM_RNG_IMPL_AUTO);
}
