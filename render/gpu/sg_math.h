/* sg_math.h - the few elementary functions ray generation needs, in double,
 * with + - * / and sqrt only (no libm), so that the CPU (Embree and twin
 * backends) and the CUDA kernels compute them with the same operations and
 * get the same bits (see sg_types.h for the rules: no contraction, C11 and
 * CUDA common subset). Also Philox4x32-10, the generator of sensim_rng
 * (lib/rng.c, Random123's), for the camera's jitter and exposure times.
 *
 * The algorithms are fdlibm's (Sun Microsystems, 1993; as in FreeBSD's
 * msun): sin and cos by argument reduction modulo pi/2 with pi/2 split into
 * three parts (Cody and Waite), then the degree-13 and degree-14 kernel
 * polynomials on [-pi/4, pi/4]; atan by reduction to [0, 7/16] with four
 * breakpoints and a degree-22 odd polynomial; tan as sin / cos, asin
 * through atan2. Against glibc (tests/test_twin.c): within 1 ulp (double)
 * for sin, cos and atan2, 3 for tan, 2 for asin, for |x| < 1e5 (larger
 * arguments lose bits in the reduction), so that a result rounded to float
 * nearly always is the float of glibc's value (200000 of 200000 per
 * function in the test). */
#ifndef SENSIM_SG_MATH_H
#define SENSIM_SG_MATH_H

#include "sg_types.h"

#define SG_PI 3.14159265358979311600e+00
#define SG_PI_LO 1.22464679914735317720e-16

SENSIM_HD static inline double sg_fabs(double x) { return x < 0 ? -x : x; }
SENSIM_HD static inline double sg_sqrt(double x) { return __builtin_sqrt(x); }
SENSIM_HD static inline double sg_fmin(double a, double b) { return a < b ? a : b; }
SENSIM_HD static inline double sg_fmax(double a, double b) { return a > b ? a : b; }
/* x is finite (neither NaN nor infinite). */
SENSIM_HD static inline int sg_finite(double x) { return x - x == 0.0; }

/* sin and cos of x + y on [-pi/4, pi/4], y a small tail (fdlibm's
 * __kernel_sin and __kernel_cos). */
SENSIM_HD static inline double sg_ksin(double x, double y)
{
    const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                 S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                 S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
    const double z = x * x, v = z * x;
    const double r = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
    return x - ((z * (0.5 * y - v * r) - y) - v * S1);
}

SENSIM_HD static inline double sg_kcos(double x, double y)
{
    const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                 C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                 C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
    const double z = x * x;
    const double r = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))));
    const double hz = 0.5 * z, w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + (z * r - x * y));
}

/* x = n pi/2 + (y0 + y1), |y0 + y1| <= pi/4 (about); returns n. Three-part
 * Cody-Waite reduction (fdlibm's __ieee754_rem_pio2 for medium arguments). */
SENSIM_HD static inline int sg_rem_pio2(double x, double *y0, double *y1)
{
    const double invpio2 = 6.36619772367581382433e-01;
    const double pio2_1 = 1.57079632673412561417e+00, pio2_1t = 6.07710050650619224932e-11;
    const double pio2_2 = 6.07710050630396597660e-11, pio2_2t = 2.02226624879595063154e-21;
    const double pio2_3 = 2.02226624871116645580e-21, pio2_3t = 8.47842766036889956997e-32;
    if (sg_fabs(x) <= 7.85398163397448278999e-01) {
        *y0 = x;
        *y1 = 0.0;
        return 0;
    }
    /* n = x 2/pi rounded to nearest (ties away; any n works). */
    const double q = x * invpio2;
    const double fn = (double)(long long)(q < 0 ? q - 0.5 : q + 0.5);
    double r = x - fn * pio2_1, w = fn * pio2_1t;
    double y = r - w, t = r;
    /* Second and third iterations: pi/2's next 33 bits, then the rest. */
    w = fn * pio2_2;
    r = t - w;
    w = fn * pio2_2t - ((t - r) - w);
    y = r - w;
    t = r;
    w = fn * pio2_3;
    r = t - w;
    w = fn * pio2_3t - ((t - r) - w);
    y = r - w;
    *y0 = y;
    *y1 = (r - y) - w;
    return (int)(long long)fn;
}

SENSIM_HD static inline void sg_sincos(double x, double *s, double *c)
{
    double y0, y1;
    const int n = sg_rem_pio2(x, &y0, &y1) & 3;
    const double a = sg_ksin(y0, y1), b = sg_kcos(y0, y1);
    *s = n == 0 ? a : n == 1 ? b : n == 2 ? -a : -b;
    *c = n == 0 ? b : n == 1 ? -a : n == 2 ? -b : a;
}

SENSIM_HD static inline double sg_sin(double x)
{
    double s, c;
    sg_sincos(x, &s, &c);
    return s;
}

SENSIM_HD static inline double sg_cos(double x)
{
    double s, c;
    sg_sincos(x, &s, &c);
    return c;
}

SENSIM_HD static inline double sg_tan(double x)
{
    double s, c;
    sg_sincos(x, &s, &c);
    return s / c;
}

/* atan (fdlibm's s_atan.c). */
SENSIM_HD static inline double sg_atan(double x)
{
    const double hi[4] = {4.63647609000806093515e-01, 7.85398163397448278999e-01, 9.82793723247329054082e-01,
                          1.57079632679489655800e+00};
    const double lo[4] = {2.26987774529616870924e-17, 3.06161699786838301793e-17, 1.39033110312309984516e-17,
                          6.12323399573676603587e-17};
    const double a0 = 3.33333333333329318027e-01, a1 = -1.99999999998764832476e-01, a2 = 1.42857142725034663711e-01,
                 a3 = -1.11111104054623557880e-01, a4 = 9.09088713343650656196e-02,
                 a5 = -7.69187620504482999495e-02, a6 = 6.66107313738753120669e-02,
                 a7 = -5.83357013379057348645e-02, a8 = 4.97687799461593236017e-02,
                 a9 = -3.65315727442169155270e-02, a10 = 1.62858201153657823623e-02;
    if (x != x)
        return x;
    const int neg = x < 0;
    double ax = neg ? -x : x;
    if (ax >= 7.3786976294838206464e19) /* 2^66: atan is pi/2 to double */
        return neg ? -(hi[3] + lo[3]) : hi[3] + lo[3];
    int id;
    if (ax < 0.4375) {
        if (ax < 3.7252902984e-09) /* 2^-28 */
            return x;
        id = -1;
    } else if (ax < 1.1875) {
        if (ax < 0.6875) {
            id = 0;
            ax = (2.0 * ax - 1.0) / (2.0 + ax);
        } else {
            id = 1;
            ax = (ax - 1.0) / (ax + 1.0);
        }
    } else if (ax < 2.4375) {
        id = 2;
        ax = (ax - 1.5) / (1.0 + 1.5 * ax);
    } else {
        id = 3;
        ax = -1.0 / ax;
    }
    const double z = ax * ax, w = z * z;
    const double s1 = z * (a0 + w * (a2 + w * (a4 + w * (a6 + w * (a8 + w * a10)))));
    const double s2 = w * (a1 + w * (a3 + w * (a5 + w * (a7 + w * a9))));
    if (id < 0)
        return x - x * (s1 + s2);
    const double r = hi[id] - ((ax * (s1 + s2) - lo[id]) - ax);
    return neg ? -r : r;
}

/* atan2 (fdlibm's e_atan2.c for finite arguments). */
SENSIM_HD static inline double sg_atan2(double y, double x)
{
    if (x != x || y != y)
        return x + y;
    if (y == 0.0)
        return x > 0.0 || (x == 0.0 && 1.0 / x > 0) ? y : (1.0 / y > 0 ? SG_PI : -SG_PI);
    if (x == 0.0)
        return y > 0 ? 0.5 * SG_PI + 0.5 * SG_PI_LO : -0.5 * SG_PI - 0.5 * SG_PI_LO;
    const double z = sg_atan(sg_fabs(y / x));
    if (x > 0)
        return y > 0 ? z : -z;
    return y > 0 ? SG_PI - (z - SG_PI_LO) : (z - SG_PI_LO) - SG_PI;
}

/* asin of x in [-1, 1] as atan2(x, sqrt((1 - x)(1 + x))). */
SENSIM_HD static inline double sg_asin(double x) { return sg_atan2(x, sg_sqrt((1.0 - x) * (1.0 + x))); }

/* ---- Philox4x32-10 (Salmon et al., SC'11), as Random123's philox4x32 ---- */

SENSIM_HD static inline void sg_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* A sensim_rng's key and counter words (sensim/rng.h's layout). */
typedef struct sg_rng {
    uint32_t key[2], stream, sensor;
} sg_rng;

/* sensim_rng_u32 and sensim_rng_uniform (lib/rng.c): word index & 3 of the
 * block with counter (index >> 2, stream, sensor). */
SENSIM_HD static inline uint32_t sg_rng_u32(const sg_rng *r, uint64_t index)
{
    const uint64_t b = index >> 2;
    const uint32_t c[4] = {(uint32_t)b, (uint32_t)(b >> 32), r->stream, r->sensor};
    uint32_t o[4];
    sg_philox(c, r->key, o);
    return o[index & 3];
}

SENSIM_HD static inline double sg_rng_uniform(const sg_rng *r, uint64_t index)
{
    return ((double)sg_rng_u32(r, index) + 0.5) * 2.3283064365386963e-10; /* 2^-32 */
}

#endif
