/* sensim/ptc.h - camera calibration by the photon-transfer method (EMVA
 * Standard 1288): from flat-field frame pairs at increasing exposure and dark
 * frame pairs at the same exposures, the system gain K, read noise, dark
 * current, saturation, PRNU and DSNU, and the two parameters of the simple
 * intensity model sigma^2 = sigma_1^2 I + sigma_2^2 (seed 000 eq. 4).
 *
 * Usage: one sensim_ptc_level per exposure (sensim_ptc_level_compute on the
 * four frames), then sensim_ptc_fit over the levels, then optionally
 * sensim_ptc_plot_svg. A stack to fit is simulated by sensim_ptc_simulate
 * of sensim/camera.h (the camera model makes the frames).
 *
 * Ownership: frames are borrowed for the call; results are plain structs.
 * Thread safety: no shared state (level_compute uses OpenMP reductions, whose
 * float sums may differ in the last bits between thread counts). */
#ifndef SENSIM_PTC_H
#define SENSIM_PTC_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/camera.h"
#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Statistics of one exposure level, in DN (raw sample values: u8, u16 or
 * f32 as stored, not normalized). */
typedef struct sensim_ptc_level {
    double exposure;         /* s */
    size_t npix;
    double mu_y, var_y;      /* mean of the two light frames; temporal variance var(A - B)/2 */
    double mu_dark, var_dark;/* same for the two dark frames */
    double svar_y, svar_dark;/* spatial variance of the pair-mean images (fixed pattern + var/2) */
} sensim_ptc_level;

/* Computes a level from two flat-field frames and two dark frames of npix
 * samples each (dark_a/dark_b may be NULL when darks are not available:
 * then mu_dark = var_dark = svar_dark = 0, and dark current and read noise
 * cannot be fitted). */
sensim_status sensim_ptc_level_compute(sensim_pixel_type type, size_t npix, const void *a, const void *b,
                                       const void *dark_a, const void *dark_b, double exposure,
                                       sensim_ptc_level *out);

typedef struct sensim_ptc_result {
    /* Each *_ci is the half-width of a 95 % confidence interval (NAN when it
     * cannot be computed), from the weighted least-squares covariance scaled
     * by max(1, chi^2/dof). */
    double gain, gain_ci;                   /* K, DN per electron */
    double read_noise, read_noise_ci;       /* sigma_d, electrons */
    double dark_current, dark_current_ci;   /* electrons/s (NAN with one exposure) */
    double dark_offset;                     /* DN, mean dark at zero exposure (black level) */
    double saturation_dn;                   /* mean DN (above dark) at maximal variance */
    double saturation_capacity;             /* electrons: saturation_dn / K */
    int saturation_reached;                 /* 0: the variance peaks at the brightest level, so
                                               saturation was not seen and the two values above
                                               are lower bounds */
    double prnu;                            /* relative (0.01 = 1 %), at the level nearest 50 % saturation */
    double dsnu;                            /* electrons rms, at the shortest exposure */
    double variance_slope, variance_slope_ci;         /* sigma_1^2 of eq. 4, normalized units */
    double variance_intercept, variance_intercept_ci; /* sigma_2^2 */
    size_t levels_used;                     /* levels below 70 % of saturation in the fits */
    /* EMVA 1288's model of quantization (1/12 DN^2) holds only while the
     * temporal noise is not far below 1 DN; release 3.1 (6.5) takes a dark
     * variance under 0.24 DN^2 (sigma_y.dark < 0.49 DN) as quantization
     * limited, with the dark noise an upper limit only. Set to 1 when the
     * dark variance (or, without darks, the light variance of a level in the
     * gain fit) is below 0.24 DN^2: the gain and read-noise intervals do not
     * then describe the sensor. */
    int quantization_limited;
    double min_temporal_var_dn2;            /* smallest such temporal variance, DN^2 */
} sensim_ptc_result;

/* Fits the levels (at least 3 below 70 % of saturation with distinct means).
 * full_scale: the DN of intensity 1 for the simple model (255, 65535 or 1). */
sensim_status sensim_ptc_fit(const sensim_ptc_level *levels, size_t n, double full_scale, sensim_ptc_result *r);

typedef struct sensim_log sensim_log; /* sensim/log.h */

/* Reads the photon-transfer stack of a log (the layout of sensim-fit(1)):
 * /stack/light [L,2,H,W] u8, u16 or f32 (two flat-field frames per level,
 * L >= 3), /stack/dark of the same shape (optional), /stack/exposure [L] in
 * s, positive and increasing; computes one level per exposure
 * (sensim_ptc_level_compute). *levels (L of them, *n = L) is the caller's
 * to free(); *full_scale is the DN of intensity 1 for the element type
 * (255, 65535 or 1). Errors name the file, dataset and level. */
sensim_status sensim_ptc_stack_read(const sensim_log *log, sensim_ptc_level **levels, size_t *n, double *full_scale);

/* Writes the photon-transfer plot (temporal variance minus dark variance
 * against mean minus dark, log-log, with the fitted line up to the
 * saturation and the levels beyond 70 % of it set apart) as SVG through
 * sensim/plot.h; temporary name and rename. */
sensim_status sensim_ptc_plot_svg(const char *path, const sensim_ptc_level *levels, size_t n,
                                  const sensim_ptc_result *r);

#ifdef __cplusplus
}
#endif
#endif
