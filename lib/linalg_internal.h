/* Small dense linear algebra the library's folders share beyond the public
 * sensim/linalg.h. Not installed; header-only, so nothing here is exported.
 * Other folders include it as "../lib/linalg_internal.h". */
#ifndef SENSIM_LINALG_INTERNAL_H
#define SENSIM_LINALG_INTERNAL_H

#include <math.h>
#include <stddef.h>

/* Gauss-Jordan elimination with partial pivoting on the n x 2n augmented
 * matrix [A | B] stored row-major with row stride `stride` (>= 2n): on
 * success (0) the left half is the identity and the right half A^-1 B (the
 * inverse when B = I). -1 when a pivot's magnitude is not above tiny (A
 * singular to that tolerance, or not finite); a is then partly reduced. */
static inline int sensim_gauss_jordan_(double *a, int n, size_t stride, double tiny)
{
    for (int c = 0; c < n; c++) {
        double *rc = a + (size_t)c * stride;
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[(size_t)r * stride + c]) > fabs(a[(size_t)p * stride + c]))
                p = r;
        if (!(fabs(a[(size_t)p * stride + c]) > tiny))
            return -1;
        if (p != c)
            for (int j = 0; j < 2 * n; j++) {
                double t = rc[j];
                rc[j] = a[(size_t)p * stride + j];
                a[(size_t)p * stride + j] = t;
            }
        double d = rc[c];
        for (int j = 0; j < 2 * n; j++)
            rc[j] /= d;
        for (int r = 0; r < n; r++)
            if (r != c) {
                double *rr = a + (size_t)r * stride, f = rr[c];
                for (int j = 0; j < 2 * n; j++)
                    rr[j] -= f * rc[j];
            }
    }
    return 0;
}

#endif
