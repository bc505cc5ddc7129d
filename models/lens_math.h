/* lens_math.h - the calibrated lenses' maps written once for the lens model
 * (models/lens.c, with libm) and the renderer's ray generation
 * (render/gpu/sg_raygen.h, with sg_math.h's functions, also compiled as
 * CUDA device code): OpenCV's radtan, k = k1..k6 (rational), p1, p2, and
 * Kannala-Brandt, k = k1..k4, their distortion and its inverse by Newton's
 * method (formulas in models/lens.c). Internal, not installed.
 *
 * A template without an include guard: the includer defines, before
 * including it once,
 *   LM_FN(name)             the name a function gets (a prefix, e.g. sg_##name)
 *   LM_QUAL                 the functions' qualifiers (static inline, and
 *                           __host__ __device__ under CUDA)
 *   LM_SQRT(x), LM_HYPOT(x, y), LM_FABS(x), LM_FMAX(a, b), LM_FINITE(x),
 *   LM_SINCOS(x, s, c) (*s = sin x, *c = cos x), LM_PI
 * and each user keeps its own elementary functions (libm's for the lens
 * model, the no-libm ones of sg_math.h for every render backend), so that
 * neither one's bits change. The code is plain C11 and CUDA C++ (the rules
 * of render/gpu/sg_types.h); the macros are undefined at the end. */

#ifndef LM_NEWTON_TOL
#define LM_NEWTON_TOL 1e-12
#define LM_NEWTON_MAX 100
#endif

/* RADTAN's distortion of a normalized point, and the Jacobian J = d(xd,
 * yd)/d(x, y) (row-major) when J is not NULL. */
LM_QUAL void LM_FN(radtan_distort)(const double *k, double p1, double p2, double x, double y, double *xd, double *yd,
                                   double *J)
{
    const double r2 = x * x + y * y;
    const double a = 1 + r2 * (k[0] + r2 * (k[1] + r2 * k[2]));
    const double b = 1 + r2 * (k[3] + r2 * (k[4] + r2 * k[5]));
    const double R = a / b;
    *xd = x * R + 2 * p1 * x * y + p2 * (r2 + 2 * x * x);
    *yd = y * R + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y;
    if (J) {
        /* dR/d(r^2) = (a' b - a b') / b^2. */
        const double da = k[0] + r2 * (2 * k[1] + 3 * r2 * k[2]);
        const double db = k[3] + r2 * (2 * k[4] + 3 * r2 * k[5]);
        const double dR = (da * b - a * db) / (b * b);
        J[0] = R + 2 * x * x * dR + 2 * p1 * y + 6 * p2 * x;
        J[1] = 2 * x * y * dR + 2 * p1 * x + 2 * p2 * y;
        J[2] = 2 * x * y * dR + 2 * p1 * x + 2 * p2 * y;
        J[3] = R + 2 * y * y * dR + 6 * p1 * y + 2 * p2 * x;
    }
}

/* Newton on F(x, y) = distort(x, y) - (xd, yd) from (xd, yd), halving a
 * step that does not reduce the residual. Returns the steps taken, or -1
 * (a non-positive Jacobian, or no convergence). */
LM_QUAL int LM_FN(radtan_undistort)(const double *k, double p1, double p2, double xd, double yd, double *xo, double *yo)
{
    double x = xd, y = yd, fx, fy, J[4], K[4];
    LM_FN(radtan_distort)(k, p1, p2, x, y, &fx, &fy, J);
    fx -= xd;
    fy -= yd;
    for (int it = 0; it < LM_NEWTON_MAX; it++) {
        const double det = J[0] * J[3] - J[1] * J[2];
        if (!(det > 0) || !LM_FINITE(det)) {
            *xo = x;
            *yo = y;
            return -1;
        }
        double sx = (J[3] * fx - J[1] * fy) / det, sy = (J[0] * fy - J[2] * fx) / det;
        const double f0 = LM_HYPOT(fx, fy), scale = LM_FMAX(1.0, LM_HYPOT(x, y));
        if (LM_HYPOT(sx, sy) <= LM_NEWTON_TOL * scale) {
            *xo = x - sx;
            *yo = y - sy;
            return it + 1;
        }
        double nx = x - sx, ny = y - sy, gx = 0, gy = 0;
        for (int h = 0; h < 40; h++) {
            LM_FN(radtan_distort)(k, p1, p2, nx, ny, &gx, &gy, K);
            gx -= xd;
            gy -= yd;
            if (LM_HYPOT(gx, gy) < f0 || h == 39)
                break;
            sx *= 0.5;
            sy *= 0.5;
            nx = x - sx;
            ny = y - sy;
        }
        x = nx;
        y = ny;
        fx = gx;
        fy = gy;
        for (int q = 0; q < 4; q++)
            J[q] = K[q];
        if (!LM_FINITE(x) || !LM_FINITE(y))
            break;
    }
    *xo = x;
    *yo = y;
    return -1;
}

/* KB: theta_d(theta) and its derivative (when dtd is not NULL). */
LM_QUAL double LM_FN(kb_theta_d)(const double *k, double th, double *dtd)
{
    const double t2 = th * th;
    const double P = 1 + t2 * (k[0] + t2 * (k[1] + t2 * (k[2] + t2 * k[3])));
    if (dtd)
        *dtd = 1 + t2 * (3 * k[0] + t2 * (5 * k[1] + t2 * (7 * k[2] + t2 * 9 * k[3])));
    return th * P;
}

/* Newton on theta_d(theta) = td from theta = td, kept in [0, pi): the
 * steps taken, or -1. */
LM_QUAL int LM_FN(kb_undistort)(const double *k, double td, double *tho)
{
    double th = td < LM_PI ? td : 0.5 * LM_PI;
    for (int it = 0; it < LM_NEWTON_MAX; it++) {
        double d;
        const double f = LM_FN(kb_theta_d)(k, th, &d) - td;
        if (!(d > 0) || !LM_FINITE(d))
            break;
        double s = f / d;
        if (LM_FABS(s) <= LM_NEWTON_TOL * LM_FMAX(1.0, th)) {
            *tho = th - s;
            return it + 1;
        }
        double n = th - s;
        for (int h = 0; h < 40 && (n < 0 || n >= LM_PI || LM_FABS(LM_FN(kb_theta_d)(k, n, 0) - td) >= LM_FABS(f));
             h++) {
            s *= 0.5;
            n = th - s;
        }
        th = n;
        if (!LM_FINITE(th))
            break;
    }
    *tho = th;
    return -1;
}

/* The unit ray of pixel coordinate (u, v) (sensim's: OpenCV's + 0.5) of a
 * radtan (radtan = 1) or Kannala-Brandt lens in the optical frame (z
 * forward, x right, y down); returns the Newton steps, or -1. */
LM_QUAL int LM_FN(lens_undistort)(int radtan, const double *k, double p1, double p2, double fx, double fy, double cx,
                                  double cy, double u, double v, double dir[3])
{
    const double xd = (u - 0.5 - cx) / fx, yd = (v - 0.5 - cy) / fy;
    if (radtan) {
        double x, y;
        const int n = LM_FN(radtan_undistort)(k, p1, p2, xd, yd, &x, &y);
        const double nn = LM_SQRT(x * x + y * y + 1);
        dir[0] = x / nn;
        dir[1] = y / nn;
        dir[2] = 1 / nn;
        return n;
    }
    const double td = LM_HYPOT(xd, yd);
    if (td == 0) {
        dir[0] = dir[1] = 0;
        dir[2] = 1;
        return 0;
    }
    double th, sth, cth;
    const int n = LM_FN(kb_undistort)(k, td, &th);
    LM_SINCOS(th, &sth, &cth);
    const double s = sth / td;
    dir[0] = xd * s;
    dir[1] = yd * s;
    dir[2] = cth;
    return n;
}

#undef LM_FN
#undef LM_QUAL
#undef LM_SQRT
#undef LM_HYPOT
#undef LM_FABS
#undef LM_FMAX
#undef LM_FINITE
#undef LM_SINCOS
#undef LM_PI
