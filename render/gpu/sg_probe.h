/* The arithmetic probe: a few float and double expressions whose bits show
 * whether a compiler contracted a*b+c into a fused multiply-add, flushed
 * subnormals to zero or used an approximate division or square root. Shared
 * by the kernel (sg_kernels.cu) and the host (render/cuda.c), which runs it
 * on the device before the CUDA backend is used and refuses a device whose
 * bits differ from the CPU's: the renderer's shared code relies on exactly
 * these operations giving the same bits on both (IEEE 754 binary32/64,
 * round to nearest even, subnormals kept, no contraction).
 *
 * Common subset of C11 and CUDA C++; no libm (sqrt through the compiler's
 * builtin, correctly rounded on both: sqrtss/sqrtsd and sqrt.rn). */
#ifndef SENSIM_SG_PROBE_H
#define SENSIM_SG_PROBE_H

#include "sg_types.h" /* SENSIM_HD */

#define SG_PROBE_OUT 8 /* results per input triple */

/* Results k = 0..7 for the input triple x[0..2] into out[0..7] (as bits). */
SENSIM_HD static inline void sg_probe_eval(const float *x, unsigned *out)
{
    union {
        float f;
        unsigned u;
    } r[SG_PROBE_OUT];
    const float a = x[0], b = x[1], c = x[2];
    /* 0, 1: a product and a sum (a fused a*b+c keeps the product unrounded;
     * a*b - a*b is 0 unless one side was fused, then it is the product's
     * rounding error). */
    r[0].f = a * b + c;
    r[1].f = a * b - a * b;
    /* 2, 3: division and square root, correctly rounded. */
    r[2].f = a / b;
    r[3].f = __builtin_sqrtf(a < 0 ? -a : a);
    /* 4: subnormals: a scaled into the subnormal range and back. */
    float tiny = a * 1e-30f;
    tiny = tiny * 1e-10f;
    r[4].f = tiny * 1e30f;
    /* 5, 6: double arithmetic, rounded to float at the end. */
    double da = a, db = b, dc = c;
    r[5].f = (float)(da * db + dc * da);
    r[6].f = (float)(__builtin_sqrt(da * da + db * db) / (dc == 0 ? 1.0 : dc));
    /* 7: float to int and back. */
    r[7].f = (float)(int)(a * 1000.0f) + (float)(unsigned)(b < 0 ? -b : b);
    for (int k = 0; k < SG_PROBE_OUT; k++)
        out[k] = r[k].u;
}

#endif
