/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) as zlib's crc32_z
 * computes it, for MCAP's chunk and section checksums (see bag_internal.h).
 *
 * zlib's table-driven loop runs at about 2.6 GB/s here, a fifth of the
 * time of importing an uncompressed MCAP file of Imu messages. On x86-64
 * with PCLMULQDQ the bulk of a buffer is folded 64 bytes at a time with
 * carry-less multiplications instead (V. Gopal et al., "Fast CRC
 * Computation for Generic Polynomials Using PCLMULQDQ Instruction", Intel
 * white paper 323102, 2009: fold by 4 x 128 bits, fold to 128, then 64 and
 * 32 bits, and a bit-reflected Barrett reduction); the constants are the
 * paper's x^k mod P(x) for the reflected polynomial (k = 4*128+32 and
 * 4*128-32 for the 64-byte fold, 128+32 and 128-32 for the 16-byte fold,
 * 64 for the last fold), and floor(x^64 / P(x)) with P(x) itself for the
 * reduction. What is left (under 64 bytes, or the last bytes that do not
 * fill 16) goes through zlib, and so does everything on other machines.
 * tests/test_bag_ros2.c checks the two against each other.
 *
 * Thread safety: no state (the CPU test reads what the compiler's runtime
 * set once at start-up). */
#include "bag_internal.h"

#include <zlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define CRC_SIMD 1

__attribute__((target("pclmul,sse2"))) static uint32_t fold_pclmul(uint32_t state, const uint8_t *p, size_t n)
{
    /* n >= 64 and a multiple of 16; `state` is the raw (uninverted) CRC. */
    const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
    const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
    const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124);
    const __m128i poly = _mm_set_epi64x(0x1f7011641, 0x1db710641); /* u', P' */
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i x1 = _mm_loadu_si128((const __m128i *)p), x2 = _mm_loadu_si128((const __m128i *)(p + 16)),
            x3 = _mm_loadu_si128((const __m128i *)(p + 32)), x4 = _mm_loadu_si128((const __m128i *)(p + 48));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)state));
    p += 64;
    n -= 64;
#define FOLD(x, k, next)                                                                                       \
    do {                                                                                                       \
        __m128i lo_ = _mm_clmulepi64_si128(x, k, 0x00), hi_ = _mm_clmulepi64_si128(x, k, 0x11);              \
        x = _mm_xor_si128(_mm_xor_si128(lo_, hi_), next);                                                      \
    } while (0)
    for (; n >= 64; p += 64, n -= 64) {
        FOLD(x1, k1k2, _mm_loadu_si128((const __m128i *)p));
        FOLD(x2, k1k2, _mm_loadu_si128((const __m128i *)(p + 16)));
        FOLD(x3, k1k2, _mm_loadu_si128((const __m128i *)(p + 32)));
        FOLD(x4, k1k2, _mm_loadu_si128((const __m128i *)(p + 48)));
    }
    FOLD(x1, k3k4, x2);
    FOLD(x1, k3k4, x3);
    FOLD(x1, k3k4, x4);
    for (; n >= 16; p += 16, n -= 16)
        FOLD(x1, k3k4, _mm_loadu_si128((const __m128i *)p));
#undef FOLD
    /* 128 -> 64 bits (appending 32 zero bits): x1.low * k4, xor x1 >> 64. */
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x10), _mm_srli_si128(x1, 8));
    /* 64 -> 32: the low 32 bits times k5, xor x1 >> 32. */
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00), _mm_srli_si128(x1, 4));
    /* Barrett: T1 = (x1 mod x^32) * u', T2 = (T1 mod x^32) * P'; the CRC is
     * bits 32..63 of x1 ^ T2. */
    __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
    x1 = _mm_xor_si128(x1, t);
    return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(x1, 4));
}
#endif

uint32_t sensim_crc32_(uint32_t crc, const void *data, size_t n)
{
    const uint8_t *p = data;
#ifdef CRC_SIMD
    if (n >= 64 && __builtin_cpu_supports("pclmul")) {
        size_t m = n & ~(size_t)15;
        crc = ~fold_pclmul(~crc, p, m);
        p += m;
        n -= m;
    }
#endif
    return (uint32_t)crc32_z(crc, p, n);
}
