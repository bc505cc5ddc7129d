/* sensim/camera.h - camera pixel noise (intensity-dependent Gaussian and the
 * EMVA 1288 physical chain) and lens models (pinhole, FOV wide-angle) with
 * image remapping for replayed frames.
 *
 * Images are row-major [H, W] or [H, W, C] arrays of u8, u16 or f32. The
 * models work on intensities normalized to [0, 1] (u8 / 255, u16 / 65535,
 * f32 as is); outputs are clamped to the type's range, never wrapped.
 *
 * Randomness: every draw comes from sensim/rng.h keyed by (seed, sensor id,
 * stream) and indexed by frame * (H*W*C) + pixel, so a frame's noise is
 * the same whatever the thread count (rows are processed with OpenMP). The
 * temporal normals are sensim_rng_normal_icdf (single precision, |z| <=
 * 6.34) and the per-pixel arithmetic is single precision.
 * Fixed patterns (PRNU, DSNU, hot pixels, row and column offsets) are drawn
 * once from the seed at create time and indexed by pixel only: the same in
 * every frame of a run, different for another seed.
 *
 * Ownership: a sensim_camera owns its fixed-pattern maps; the params struct is
 * copied at create. Apply functions borrow caller buffers for the call, never
 * allocate, and may run concurrently on one const model (different buffers).
 * The lens functions are pure. */
#ifndef SENSIM_CAMERA_H
#define SENSIM_CAMERA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sensim/model.h"
#include "sensim/status.h"
#include "sensim/yaml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ noise */

typedef enum sensim_camera_noise {
    SENSIM_CAMERA_NOISE_NONE = 0,
    /* Chrono::Sensor, seed 000 eq. 4: y = I + N(0, s1^2 I + s2^2) on the
     * normalized intensity I, clamped to [0, 1]. */
    SENSIM_CAMERA_NOISE_INTENSITY,
    /* EMVA 1288 (seed 000 eq. 3): photons -> electrons (QE), Poisson shot
     * noise on signal and dark current, read noise, gain K, black level,
     * saturation, ADC quantization, fixed patterns. */
    SENSIM_CAMERA_NOISE_EMVA
} sensim_camera_noise;

/* Element types of images (the sensim_dtype values u8, u16, f32 are mapped
 * by the caller; kept separate so this header needs no HDF5). */
typedef enum sensim_pixel_type {
    SENSIM_PIXEL_U8,
    SENSIM_PIXEL_U16,
    SENSIM_PIXEL_F32
} sensim_pixel_type;

typedef struct sensim_camera_params {
    sensim_camera_noise model;
    size_t width, height, channels; /* frame shape; channels 1 (gray) or 3 (RGB) */

    /* Intensity model (seed 000 eq. 4), on the [0, 1] scale. */
    double variance_slope;     /* sigma_1^2 (per unit intensity), >= 0 */
    double variance_intercept; /* sigma_2^2, >= 0 */

    /* EMVA 1288 chain. A normalized input intensity I maps to a mean of
     * I * photons_full_scale photons during the exposure. */
    double photons_full_scale; /* photons per pixel per exposure at I = 1, > 0 */
    double quantum_efficiency; /* electrons per photon, (0, 1] */
    double exposure_time;      /* s, >= 0 (dark current integrates over it) */
    double dark_current;       /* electrons/s, >= 0 (mean) */
    double read_noise;         /* electrons rms, >= 0 (sigma_d) */
    double gain;               /* K, DN per electron, > 0 */
    double black_level;        /* DN added before quantization, >= 0 */
    double full_well;          /* electrons, saturation capacity, > 0 */
    int adc_bits;              /* 1..16; output DN in [0, 2^bits - 1] */
    /* Fixed patterns, drawn once per run from the seed. */
    double prnu;                 /* relative rms of the per-pixel gain, >= 0 (0.01 = 1 %) */
    double dsnu;                 /* rms of the per-pixel dark offset, electrons, >= 0 */
    double hot_pixel_fraction;   /* [0, 1] fraction of pixels with extra dark current */
    double hot_pixel_dark_current; /* extra electrons/s of a hot pixel, >= 0 */
    double row_offset_sigma;     /* rms of per-row offsets, DN, >= 0 */
    double column_offset_sigma;  /* rms of per-column offsets, DN, >= 0 */
    /* Shot noise is drawn exactly from Poisson(mean electrons) while the mean
     * is below this threshold; above it the sum of shot and read noise is one
     * normal draw of the same mean and variance (skewness 1/sqrt(mean), below
     * 0.032 at the default 1000). INFINITY forces exact Poisson everywhere.
     * The exact draws (sensim_rng_poisson_exact_fill) cost 15-30 ns a pixel
     * against about 1.5 for the normal one. */
    double poisson_exact_below;
} sensim_camera_params;

typedef struct sensim_camera sensim_camera;

/* sensim_camera_default_params: model NONE; intensity 0/0; EMVA:
 * photons_full_scale 20000, QE 0.6, exposure 10 ms, dark current 50 e-/s,
 * read noise 5 e-, K 0.5 DN/e- (16-bit scale), black level 0, full well
 * 12000 e-, 16 bits, no fixed patterns, poisson_exact_below 1000.
 * sensim_camera_create validates (messages name the parameter) and
 * precomputes fixed patterns from (seed, sensor_id). NULL on error.
 * sensim_camera_print describes the model (its noise chain and parameters)
 * on f. sensim_camera_destroy, sensim_camera_params_of: sensim/model.h. */
SENSIM_MODEL_DECLARE(sensim_camera);

/* Applies noise to frame number `frame` (the noise index): in and out hold
 * H*W*C pixels of `type` (in == out allowed). Never allocates. Returns
 * SENSIM_EINVAL only for NULL buffers. NaN float inputs stay NaN. */
sensim_status sensim_camera_apply(const sensim_camera *cam, uint64_t frame, sensim_pixel_type type,
                                  const void *in, void *out);

/* The noise-free EMVA mean output in DN for a normalized intensity I at a
 * pixel without fixed patterns (for tests and calibration checks). */
double sensim_camera_emva_mean_dn(const sensim_camera_params *p, double intensity);

/* The fixed patterns, H*W*C floats each (read-only, NULL when off): the
 * per-pixel gain factor 1 + PRNU; the mean dark electrons per exposure of
 * each pixel (dark current plus hot pixels; Poisson-noisy); the per-pixel
 * DN offset (DSNU * K plus row and column offsets; not noisy). */
const float *sensim_camera_gain_map(const sensim_camera *cam);
const float *sensim_camera_dark_map(const sensim_camera *cam);
const float *sensim_camera_offset_map(const sensim_camera *cam);

/* The noise parameters of a rig sensor of type camera (its noise: key;
 * width, height and channels are 1 until the caller sets them), borrowed
 * from the sensor; *fov_lens (may be NULL) = 1 when its lens: asks for a
 * remap (fov, radtan or kannala_brandt). NULL when s is not a camera. For callers that make frames
 * themselves (sensim render --rig). */
struct sensim_sensor;
/* The rig sensor type "camera" (models/camera_rig.c): noise on recorded
 * frames, and the noise and lens of rendered ones. */
struct sensim_sensor_type;
extern const struct sensim_sensor_type sensim_camera_type;
const sensim_camera_params *sensim_camera_sensor_params(const struct sensim_sensor *s, int *fov_lens);
/* ------------------------------------------------------------------- lens */

typedef enum sensim_lens_model {
    SENSIM_LENS_PINHOLE = 0,
    /* FOV wide-angle lens of Chrono::Sensor (seed 000 eqs. 1-2). */
    SENSIM_LENS_FOV,
    /* OpenCV's radial-tangential (Brown-Conrady) model of cv::projectPoints
     * (OpenCV 4 calib3d documentation, "Camera Calibration and 3D
     * Reconstruction"): x' = X/Z, y' = Y/Z, r^2 = x'^2 + y'^2,
     *   x'' = x' R + 2 p1 x'y' + p2 (r^2 + 2 x'^2),
     *   y'' = y' R + p1 (r^2 + 2 y'^2) + 2 p2 x'y',
     *   R = (1 + k1 r^2 + k2 r^4 + k3 r^6) / (1 + k4 r^2 + k5 r^4 + k6 r^6),
     *   u = fx x'' + cx, v = fy y'' + cy
     * (k4..k6 zero: the plain 5-coefficient plumb-bob model). */
    SENSIM_LENS_RADTAN,
    /* Kannala-Brandt fisheye of OpenCV's cv::fisheye (equidistant with a
     * polynomial): theta = angle from the optical axis (atan2(sqrt(X^2 +
     * Y^2), Z), up to pi), theta_d = theta (1 + k1 theta^2 + k2 theta^4 +
     * k3 theta^6 + k4 theta^8), (x', y') = theta_d (X, Y) / sqrt(X^2 + Y^2),
     * u = fx x' + cx, v = fy y' + cy (no skew). */
    SENSIM_LENS_KB
} sensim_lens_model;

/* Camera frame: +z along the optical axis, +x right, +y down (image rows).
 * Pixel coordinates are continuous: pixel (i, j) covers [i, i+1) x [j, j+1)
 * and its centre is (i + 0.5, j + 0.5); the principal point is the image
 * centre. Normalized coordinates: x1 = 2u/W - 1, y1 = (2v/H - 1) H/W, so
 * r1 = 1 at the left/right edges. */
typedef struct sensim_lens {
    sensim_lens_model model;
    size_t width, height;
    double hfov; /* horizontal field of view, rad, (0, pi); PINHOLE and FOV only */
    /* RADTAN and KB: the intrinsics as calibration tools print them, in
     * pixels with OpenCV's convention that pixel (i, j)'s centre is at
     * (i, j): sensim's continuous pixel coordinate u is OpenCV's u + 0.5.
     * The principal point (cx, cy) need not be the image centre. */
    double fx, fy, cx, cy;
    double k[6];   /* RADTAN: k1..k6; KB: k1..k4 (k[4], k[5] must be 0) */
    double p1, p2; /* RADTAN: tangential coefficients; KB: must be 0 */
} sensim_lens;

/* Checks the lens: sizes > 0. PINHOLE and FOV: hfov in (0, pi); for FOV,
 * w = hfov/2 must keep r1 tan(w) < pi/2 up to the image corner (the model's
 * tangent diverges). RADTAN and KB: fx, fy > 0, every coefficient finite,
 * and the model invertible across the image [-0.5, W - 0.5] x [-0.5, H -
 * 0.5] (OpenCV pixels): the radial map (r -> r R(r^2), or theta ->
 * theta_d, below pi) strictly increasing, at steps of 1e-4 (relative), from
 * the axis to beyond the image's farthest corner, R's denominator positive
 * there, and the Newton inverse converging with a positive Jacobian at
 * every border pixel and on a 65 x 65 grid inside (RADTAN; its tangential
 * terms make the map two-dimensional). The refusal names the radius where
 * the map folds back or the pixel where the inverse fails. */
sensim_status sensim_lens_check(const sensim_lens *lens);

/* Pixel -> unit ray direction in the camera frame. Pinhole: (x1 tan w,
 * y1 tan w, 1) normalized. FOV (seed 000 eq. 2): r2 = tan(r1 tan w)/tan w,
 * s = tan(tan w)/tan w, (x2, y2) = (x1, y1) r2/(r1 s), then as pinhole with
 * (x2, y2). The horizontal FOV is kept (x2 = x1 at r1 = 1, y1 = 0). */
void sensim_lens_pixel_to_dir(const sensim_lens *lens, double u, double v, double dir[3]);
/* RADTAN and KB: the pixel's distorted normalized point ((u - 0.5 - cx) /
 * fx, (v - 0.5 - cy) / fy) is undistorted by Newton's method (2-D for
 * RADTAN, on theta for KB) until the step is below 1e-12 (relative to the
 * point's size, at least 1e-12 absolute), from the distorted point itself,
 * at most 100 steps, halving steps that do not reduce the residual. For a
 * lens that passed sensim_lens_check, every pixel of the image converges;
 * sensim_lens_undistort reports a pixel that does not. */
void sensim_lens_pixel_to_dir(const sensim_lens *lens, double u, double v, double dir[3]);
/* Inverse: ray direction (any length) -> pixel coordinates. Returns 0 for a
 * direction with z <= 0 (KB: at theta >= pi) or outside the model's domain
 * (u, v untouched), 1 otherwise (the pixel may still lie outside the
 * image). RADTAN and KB: the forward formulas above. */
int sensim_lens_dir_to_pixel(const sensim_lens *lens, const double dir[3], double *u, double *v);
/* RADTAN and KB: the undistortion of a pixel (sensim coordinates) as
 * sensim_lens_pixel_to_dir does it, into a unit direction; returns the
 * Newton steps taken (>= 0), or -1 when it did not converge (dir then
 * holds the last iterate). Other models: 0 and pixel_to_dir's answer. */
int sensim_lens_undistort(const sensim_lens *lens, double u, double v, double dir[3]);

/* Parses a rig's or scene's lens mapping: model (pinhole | fov | radtan |
 * kannala_brandt; ROS's plumb_bob and rational_polynomial name radtan,
 * Kalibr's equidistant and OpenCV's fisheye name kannala_brandt), hfov
 * (PINHOLE and FOV; required for FOV), and for RADTAN and KB fx, fy, cx, cy
 * (pixels, required) and the coefficients either by name (k1..k6, p1, p2;
 * k1..k4 for KB; absent ones 0) or as `distortion:` in OpenCV's order
 * ([k1, k2, p1, p2[, k3[, k4, k5, k6]]] for radtan, [k1, k2, k3, k4] for
 * kannala_brandt), not both. lens->width and height are left to the caller;
 * other fields are set (hfov only where given). Errors name file, line and
 * key. The lens is not checked (the image size may come later). */
sensim_status sensim_lens_from_yaml(const sensim_ynode *lens_map, sensim_lens *lens);
/* Writes a lens mapping (after the caller's key) that sensim_lens_from_yaml
 * reads back bit for bit: model, hfov when > 0 (PINHOLE, FOV), fx, fy, cx,
 * cy and the named coefficients (RADTAN, KB). */
void sensim_lens_write_yaml(sensim_ywriter *w, const sensim_lens *lens);

/* A remap from a source lens to a destination lens (same optical axis): each
 * destination pixel samples the source image bilinearly at the pixel seeing
 * the same direction; outside the source, `fill` (normalized) is written.
 * Pinhole -> FOV renders a replayed pinhole frame through the FOV lens;
 * FOV -> pinhole undoes it. */
typedef struct sensim_remap sensim_remap;
sensim_remap *sensim_remap_create(const sensim_lens *src, const sensim_lens *dst);
void sensim_remap_destroy(sensim_remap *m);
/* The remap a rig camera's lens applies to recorded frames of width x
 * height: from the undistorted pinhole view (of the same hfov for FOV; of
 * the same fx, fy, cx, cy without distortion for RADTAN and KB) to the
 * lens. NULL with the error set (a lens that fails sensim_lens_check at
 * that size, or a PINHOLE lens, which needs none). */
sensim_remap *sensim_lens_remap_from_pinhole(const sensim_lens *lens, size_t width, size_t height);
/* in: src W*H*C, out: dst W*H*C, of `type` (in != out). Never allocates. */
sensim_status sensim_remap_apply(const sensim_remap *m, sensim_pixel_type type, size_t channels, double fill,
                                 const void *in, void *out);

/* (models/camera_rig.c) Parses the noise and lens keys of a rig sensor
 * mapping into *p and *lens (sensim_lens_from_yaml; width and height kept;
 * NULL: not wanted), which the caller presets (usually with defaults; a
 * pinhole or fov lens without hfov leaves it); other keys are ignored.
 * Errors name file, line and key. */
sensim_status sensim_camera_params_from_yaml(const sensim_ynode *sensor_map, sensim_camera_params *p,
                                             sensim_lens *lens);
/* Writes one camera sensor of a rig: the common keys of s
 * (sensim_sensor_write_yaml), noise (model, then each parameter where it
 * differs from the defaults) and, when lens is not NULL, the lens
 * (sensim_lens_write_yaml), in SI. sensim_camera_params_from_yaml reads back what it
 * wrote. */
void sensim_camera_write_yaml(sensim_ywriter *w, const struct sensim_sensor *s, const sensim_camera_params *p,
                              const sensim_lens *lens);
/* Simulates a photon-transfer stack with the camera model (16-bit
 * samples), for checking a fit against known parameters: level k gets
 * p->exposure_time = exposure[k], two light frames of the uniform
 * normalized intensity[k] into light + 2k H*W and two dark frames (intensity
 * 0) into dark + 2k H*W (the /stack/light and /stack/dark layouts of
 * sensim-fit(1)). One camera per level from the same (seed, sensor), so the
 * fixed patterns are the same at every level; frame numbers 4k..4k+3, so no
 * two frames share noise. p->model must be EMVA. Allocates a camera and two
 * frames per level. */
sensim_status sensim_ptc_simulate(const sensim_camera_params *p, uint64_t seed, uint32_t sensor, size_t levels,
                                  const double *exposure, const double *intensity, uint16_t *light,
                                  uint16_t *dark);

#ifdef __cplusplus
}
#endif
#endif
