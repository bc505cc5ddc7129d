/* Chi-squared and beta quantiles by bracketed Newton inversion of GSL's
 * CDFs (see sensim/quantile.h for why GSL's own inverses are not used). */
#include "sensim/quantile.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <float.h>
#include <math.h>

#include "sensim/status.h"

typedef struct {
    int kind; /* 0 chi-squared, 1 beta */
    double a, b;
    int upper; /* solve Q(x) = target instead of P(x) = target */
    double target;
} qproblem;

/* g(x), increasing in x, zero at the quantile. */
static double q_g(const qproblem *q, double x)
{
    if (q->kind == 0)
        return q->upper ? q->target - gsl_cdf_chisq_Q(x, q->a) : gsl_cdf_chisq_P(x, q->a) - q->target;
    return q->upper ? q->target - gsl_cdf_beta_Q(x, q->a, q->b) : gsl_cdf_beta_P(x, q->a, q->b) - q->target;
}

static double q_pdf(const qproblem *q, double x)
{
    return q->kind == 0 ? gsl_ran_chisq_pdf(x, q->a) : gsl_ran_beta_pdf(x, q->a, q->b);
}

/* The root of g in (lo, hi), g(lo) < 0 < g(hi), starting at x. */
static double q_solve(const qproblem *q, double lo, double hi, double x)
{
    for (int it = 0; it < 400; it++) {
        double g = q_g(q, x);
        if (g == 0)
            return x;
        if (g < 0)
            lo = x;
        else
            hi = x;
        if (hi - lo <= 4 * DBL_EPSILON * fabs(x) || hi - lo < 1e-300)
            break;
        double d = q_pdf(q, x), xn = d > 0 && isfinite(d) ? x - g / d : NAN;
        /* Accept a Newton step that stays strictly inside the bracket; a
         * step into its outer part is still fine (the bracket shrinks by
         * the update above). Otherwise bisect, geometrically across decades. */
        if (!(xn > lo && xn < hi)) {
            if (lo > 0 && hi > 4 * lo)
                xn = sqrt(lo) * sqrt(hi);
            else if (lo == 0 && hi > 1e-300)
                xn = hi / 16;
            else
                xn = lo + (hi - lo) / 2;
        }
        if (fabs(xn - x) <= 2 * DBL_EPSILON * fabs(x))
            return xn;
        x = xn;
    }
    return x;
}

/* Above this many degrees of freedom the Cornish-Fisher expansion is used
 * instead of inverting the CDF: GSL's incomplete gamma function loses
 * accuracy with large shape (relative error 6e-9 in P at nu = 1e5, checked
 * against mpmath at 50 digits) and, above nu = 2e6, switches for
 * |x - nu| < sqrt(2 nu) to a uniform asymptotic form good to about 1e-4
 * only, with a jump in P at the switch. The expansion's first omitted term
 * is O(z^6 / nu^2) in x: below 1e-12 relative from here on for |z| < 7
 * (p down to 1e-12), checked against mpmath. */
#define CF_NU 1e4

double sensim_chisq_quantile(double p, double nu)
{
    if (!(p >= 0 && p <= 1) || !(nu > 0) || !isfinite(nu))
        return NAN;
    if (p == 0)
        return 0;
    if (p == 1)
        return HUGE_VAL;
    SENSIM_GSL_QUIET_SCOPE();
    double z = gsl_cdf_ugaussian_Pinv(p);
    if (nu > CF_NU) {
        /* Cornish-Fisher (Abramowitz & Stegun 26.4.18). */
        double s = sqrt(2 * nu), z2 = z * z;
        return nu + s * z + 2.0 / 3.0 * (z2 - 1) + z * (z2 - 7) / (9 * s) - (6 * z2 * z2 + 14 * z2 - 32) / (405 * nu) +
               z * (9 * z2 * z2 + 256 * z2 - 433) / (4860 * nu * s);
    }
    qproblem q = {0, nu, 0, p > 0.5, p > 0.5 ? 1 - p : p};
    /* Wilson-Hilferty: (x/nu)^(1/3) is nearly normal, mean 1 - 2/(9 nu). */
    double c = 2.0 / (9.0 * nu);
    double w = 1 - c + z * sqrt(c), x = w > 0 ? nu * w * w * w : nu * 1e-3;
    if (!(x > 0) || !isfinite(x))
        x = nu;
    double lo = x, hi = x;
    while (lo > 1e-300 && q_g(&q, lo) >= 0)
        lo /= 4;
    if (!(q_g(&q, lo) < 0))
        lo = 0;
    while (!(q_g(&q, hi) > 0) && hi < 1e300)
        hi = hi * 2 + 1;
    return q_solve(&q, lo, hi, x > lo && x < hi ? x : (lo + hi) / 2);
}

double sensim_beta_quantile(double p, double a, double b)
{
    if (!(p >= 0 && p <= 1) || !(a > 0) || !(b > 0) || !isfinite(a) || !isfinite(b))
        return NAN;
    if (p == 0)
        return 0;
    if (p == 1)
        return 1;
    SENSIM_GSL_QUIET_SCOPE();
    qproblem q = {1, a, b, p > 0.5, p > 0.5 ? 1 - p : p};
    return q_solve(&q, 0, 1, a / (a + b));
}
