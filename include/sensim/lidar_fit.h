/* sensim/lidar_fit.h - lidar range-noise calibration from repeated scans of a
 * static scene: per-point spread across scans, fitted to the AGX model
 * sigma = sigma_base + sigma_slope * range (seed 002 sec. 2.5) by weighted
 * least squares (GSL) with 95 % confidence intervals; per-beam range bias
 * when reference ranges are given.
 *
 * Input layout: S scans of the same M returns in the same order (a static
 * sensor and scene: scan s, return i is ranges[s * M + i]); dropped returns
 * are NaN and excluded.
 *
 * Ownership: inputs borrowed for the call; outputs in caller arrays.
 * Thread safety: pure. */
#ifndef SENSIM_LIDAR_FIT_H
#define SENSIM_LIDAR_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sensim_lidar_fit_result {
    double sigma_base, sigma_base_ci;   /* m; ci = 95 % half-width */
    double sigma_slope, sigma_slope_ci; /* m/m */
    double chi2_dof;                    /* reduced chi-square of the fit */
    size_t points_used;                 /* returns with >= 3 finite scans */
    double range_min, range_max;        /* m, span of the fitted ranges */
} sensim_lidar_fit_result;

/* ranges: nscans * npoints (NaN = missing). reference: npoints true ranges
 * or NULL. channel: npoints beam numbers < nbeams, or NULL (then one beam).
 * beam_bias, beam_sigma: nbeams outputs or NULL: mean (measured - reference)
 * (NAN without reference) and the pooled sd of each beam. Needs nscans >= 3
 * and at least 3 usable returns at 2 or more distinct ranges. */
sensim_status sensim_lidar_fit_range(const float *ranges, size_t nscans, size_t npoints, const float *reference,
                                     const uint16_t *channel, size_t nbeams, double *beam_bias, double *beam_sigma,
                                     sensim_lidar_fit_result *r);

#ifdef __cplusplus
}
#endif
#endif
