/* sensim/quantile.h - chi-squared and beta quantiles over the whole range.
 *
 * GSL 2.7's gsl_cdf_chisq_Pinv and gsl_cdf_beta_Pinv fail to converge for
 * large degrees of freedom (chi-squared from about 5e4 at the 68 % level,
 * a few thousand at 90-99 %) and for lopsided beta shapes (a = 7, b = 8994),
 * returning inf or NaN. These invert GSL's CDFs with a safeguarded Newton
 * iteration inside a bracket (chi-squared up to 1e4 degrees of freedom,
 * the Cornish-Fisher expansion beyond, where GSL's incomplete gamma
 * function itself loses accuracy): the seed is the
 * Wilson-Hilferty approximation (chi-squared) or the mean (beta), the
 * bracket is widened until it holds the root, and every step that leaves
 * it or shrinks it too little is replaced by bisection (geometric where the
 * bracket spans decades). The lower tail is inverted for p <= 1/2, the upper
 * tail (computed as such, not as 1 - P) above, so both ends keep full
 * relative precision. Results agree with scipy.stats and mpmath to 1e-10.
 *
 * Thread safety: pure functions, reentrant. */
#ifndef SENSIM_QUANTILE_H
#define SENSIM_QUANTILE_H

#ifdef __cplusplus
extern "C" {
#endif

/* x with P(chi2_nu <= x) = p; nu > 0 (need not be an integer). 0 at p = 0,
 * +inf at p = 1, NaN for p outside [0, 1] or nu <= 0. */
double sensim_chisq_quantile(double p, double nu);

/* x with I_x(a, b) = p, the regularized incomplete beta; a, b > 0. 0 at
 * p = 0, 1 at p = 1, NaN for bad arguments. */
double sensim_beta_quantile(double p, double a, double b);

#ifdef __cplusplus
}
#endif
#endif
