"""cffi build script (API mode) for sensim._sensim, the C half of the Python
interface. The declarations below are checked by the C compiler against the
real headers (#include <sensim/sensim.h>): a field or signature that drifts
from the library is a compile error, not a crash. Structs end in `...;` so
that only the fields used here are named and cffi takes the layout from the
compiler.

Where the library comes from (first found):
  SENSIM_BUILD=<dir>   a build tree of this checkout (libsensim.a, its include/)
  ../build             the build tree beside this python/ folder
  pkg-config sensim    an installed libsensim
The extension links libsensim.a statically (built with -fPIC), so the installed
module does not depend on where the build tree was."""
import os
import shlex
import subprocess

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CDEF = r"""
typedef enum sensim_status { SENSIM_OK, SENSIM_EINVAL, SENSIM_ENOMEM, SENSIM_EIO, SENSIM_EFORMAT,
    SENSIM_ENOTFOUND, SENSIM_EDATA, SENSIM_EUNSUPPORTED, SENSIM_EINTERNAL } sensim_status;
const char *sensim_strerror(sensim_status status);
const char *sensim_last_error(void);
sensim_status sensim_last_status(void);
void sensim_error_clear(void);

/* rng.h */
typedef struct sensim_rng { uint32_t key[2]; uint32_t stream; uint32_t sensor; } sensim_rng;
sensim_rng sensim_rng_make(uint64_t seed, uint32_t sensor, uint32_t stream);
uint32_t sensim_rng_sensor_id(const char *name);
uint32_t sensim_rng_u32(const sensim_rng *r, uint64_t index);
void sensim_rng_normal_fill(const sensim_rng *r, uint64_t first, size_t n, double *out);
void sensim_rng_uniform_fill(const sensim_rng *r, uint64_t first, size_t n, double *out);
void sensim_rng_normal_icdf_fill(const sensim_rng *r, uint64_t first, size_t n, float *out);
void sensim_rng_poisson_exact_fill(const sensim_rng *r, uint64_t first, size_t n, const float *mean, uint32_t *out);

/* yaml.h (only to hand a rig sensor's mapping to the params parsers) */
typedef struct sensim_ynode sensim_ynode;

/* rig.h */
typedef struct sensim_sensor_type { const char *type; ...; } sensim_sensor_type;
typedef struct sensim_sensor {
    char name[...];
    const sensim_sensor_type *type;
    uint32_t id;
    double rate_hz;
    const sensim_ynode *node;
    ...;
} sensim_sensor;
typedef struct sensim_rig { uint64_t seed; size_t nsensors; sensim_sensor *sensors; ...; } sensim_rig;
typedef struct sensim_inject_opts {
    uint64_t seed; int threads; size_t block;
    void (*warn)(void *ctx, const char *msg); void *warn_ctx; ...;
} sensim_inject_opts;
sensim_rig *sensim_rig_load(const char *path);
sensim_rig *sensim_rig_load_string(const char *text, const char *name);
void sensim_rig_free(sensim_rig *rig);
const sensim_sensor *sensim_rig_find(const sensim_rig *rig, const char *name);
sensim_status sensim_rig_inject(const sensim_rig *rig, const sensim_inject_opts *o, const char *in_path,
                                const char *out_path);

/* imu.h */
typedef enum sensim_instrument { SENSIM_GYRO, SENSIM_ACCEL, SENSIM_MAG } sensim_instrument;
typedef struct sensim_triax sensim_triax;
typedef struct sensim_triax_state { uint64_t k; ...; } sensim_triax_state;
#define SENSIM_TRIAX_SET_MAX ...
const sensim_triax *sensim_imu_sensor_triax(const struct sensim_sensor *s, sensim_instrument kind);
typedef struct sensim_triax_params { ...; } sensim_triax_params;
sensim_triax *sensim_triax_create(const sensim_triax_params *p, sensim_instrument kind, double rate_hz, uint64_t seed,
                                  uint32_t sensor_id, const char *what);
void sensim_triax_destroy(sensim_triax *m);
const sensim_triax_params *sensim_triax_params_of(const sensim_triax *m);
void sensim_triax_reset(const sensim_triax *m, sensim_triax_state *s);
void sensim_triax_apply_set(int count, const sensim_triax *const m[], sensim_triax_state *const s[], size_t n,
                            const double *t, const double *const u[], const double *const f[], double *const y[]);

/* gnss.h */
typedef struct sensim_gnss_params { double origin_lla[3]; ...; } sensim_gnss_params;
typedef struct sensim_gnss sensim_gnss;
typedef struct sensim_gnss_state { uint64_t k; ...; } sensim_gnss_state;
typedef struct sensim_gnss_out {
    double *t; double *t_sample; uint64_t *epoch; double *lla; double *enu; double *velocity;
    double *hdop; double *covariance; int8_t *fix;
} sensim_gnss_out;
sensim_gnss_params sensim_gnss_default_params(void);
sensim_gnss *sensim_gnss_create(const sensim_gnss_params *p, uint64_t seed, uint32_t sensor_id);
void sensim_gnss_destroy(sensim_gnss *g);
void sensim_gnss_reset(const sensim_gnss *g, sensim_gnss_state *st, double t_on);
size_t sensim_gnss_apply(const sensim_gnss *g, sensim_gnss_state *st, size_t n, const double *t,
                         const double *position, const double *velocity, const sensim_gnss_out *out);
sensim_status sensim_gnss_params_from_yaml(const sensim_ynode *sensor_map, sensim_gnss_params *p);

/* odometer.h */
typedef struct sensim_encoder_params { ...; } sensim_encoder_params;
typedef struct sensim_encoder sensim_encoder;
typedef struct sensim_encoder_state { uint64_t k; uint64_t overruns; ...; } sensim_encoder_state;
sensim_encoder_params sensim_encoder_default_params(void);
sensim_encoder *sensim_encoder_create(const sensim_encoder_params *p, uint64_t seed, uint32_t sensor_id);
void sensim_encoder_destroy(sensim_encoder *e);
void sensim_encoder_reset(const sensim_encoder *e, sensim_encoder_state *st);
void sensim_encoder_apply(const sensim_encoder *e, sensim_encoder_state *st, size_t n, const double *t,
                          const double *u, double *position, double *speed);
sensim_status sensim_encoder_params_from_yaml(const sensim_ynode *sensor_map, sensim_encoder_params *p);
typedef struct sensim_odometer_params { ...; } sensim_odometer_params;
typedef struct sensim_odometer sensim_odometer;
typedef struct sensim_odometer_state { uint64_t k; ...; } sensim_odometer_state;
sensim_odometer_params sensim_odometer_default_params(void);
sensim_odometer *sensim_odometer_create(const sensim_odometer_params *p, uint64_t seed, uint32_t sensor_id);
void sensim_odometer_destroy(sensim_odometer *o);
void sensim_odometer_reset(const sensim_odometer *o, sensim_odometer_state *st);
void sensim_odometer_apply_angle(const sensim_odometer *o, sensim_odometer_state *st, size_t n, const double *angle,
                                 double *distance);
void sensim_odometer_apply_speed(const sensim_odometer *o, sensim_odometer_state *st, size_t n, const double *t,
                                 const double *speed, double *distance);
sensim_status sensim_odometer_params_from_yaml(const sensim_ynode *sensor_map, sensim_odometer_params *p);

/* camera.h */
typedef enum sensim_pixel_type { SENSIM_PIXEL_U8, SENSIM_PIXEL_U16, SENSIM_PIXEL_F32 } sensim_pixel_type;
typedef struct sensim_camera_params { size_t width, height, channels; ...; } sensim_camera_params;
typedef struct sensim_camera sensim_camera;
sensim_camera *sensim_camera_create(const sensim_camera_params *p, uint64_t seed, uint32_t sensor);
void sensim_camera_destroy(sensim_camera *cam);
sensim_status sensim_camera_apply(const sensim_camera *cam, uint64_t frame, sensim_pixel_type type,
                                  const void *in, void *out);
const sensim_camera_params *sensim_camera_sensor_params(const struct sensim_sensor *s, int *fov_lens);
typedef enum sensim_lens_model { SENSIM_LENS_PINHOLE, SENSIM_LENS_FOV, ... } sensim_lens_model;
typedef struct sensim_lens { sensim_lens_model model; size_t width, height; double hfov; ...; } sensim_lens;
sensim_status sensim_camera_params_from_yaml(const sensim_ynode *sensor_map, sensim_camera_params *p,
                                             sensim_lens *lens);
typedef struct sensim_remap sensim_remap;
sensim_remap *sensim_remap_create(const sensim_lens *src, const sensim_lens *dst);
sensim_remap *sensim_lens_remap_from_pinhole(const sensim_lens *lens, size_t width, size_t height);
void sensim_remap_destroy(sensim_remap *m);
sensim_status sensim_remap_apply(const sensim_remap *m, sensim_pixel_type type, size_t channels, double fill,
                                 const void *in, void *out);

/* lidar.h */
typedef struct sensim_lidar_params { ...; } sensim_lidar_params;
typedef struct sensim_lidar sensim_lidar;
typedef struct sensim_lidar_block {
    size_t n; uint64_t first; const float *points; const float *range, *azimuth, *elevation;
    float *points_out; float *range_out, *azimuth_out, *elevation_out; uint8_t *keep;
} sensim_lidar_block;
sensim_lidar *sensim_lidar_create(const sensim_lidar_params *p, uint64_t seed, uint32_t sensor);
void sensim_lidar_destroy(sensim_lidar *l);
sensim_status sensim_lidar_apply(const sensim_lidar *l, const sensim_lidar_block *b, size_t *kept);
const sensim_lidar_params *sensim_lidar_sensor_params(const struct sensim_sensor *s);

/* allan.h */
typedef enum sensim_allan_dev { SENSIM_ADEV, SENSIM_OADEV, SENSIM_MDEV, SENSIM_HDEV, SENSIM_OHDEV, SENSIM_TDEV,
    SENSIM_TOTDEV, SENSIM_ALLAN_NDEV } sensim_allan_dev;
typedef enum sensim_allan_data { SENSIM_ALLAN_FREQ, SENSIM_ALLAN_PHASE } sensim_allan_data;
typedef enum sensim_allan_grid { SENSIM_TAUS_OCTAVE, SENSIM_TAUS_DECADE, SENSIM_TAUS_ALL, SENSIM_TAUS_LOG }
    sensim_allan_grid;
#define SENSIM_ALLAN_ALPHA_UNKNOWN ...
typedef struct sensim_allan_point {
    double tau; double dev; double lo; double hi; double edf; size_t m; size_t n; int alpha; ...;
} sensim_allan_point;
typedef struct sensim_allan_opts {
    sensim_allan_dev dev; sensim_allan_data data; double tau0; double confidence; int fixed_alpha; int alpha; ...;
} sensim_allan_opts;
sensim_allan_opts sensim_allan_default_opts(void);
sensim_status sensim_allan_dev_parse(const char *name, sensim_allan_dev *dev);
sensim_status sensim_allan_grid_parse(const char *text, sensim_allan_grid *grid, int *per_decade);
sensim_status sensim_allan_taus(sensim_allan_grid grid, int per_decade, sensim_allan_dev dev, sensim_allan_data data,
                                size_t n, size_t **m, size_t *count);
sensim_status sensim_allan_compute(const double *x, size_t n, size_t stride, const sensim_allan_opts *o,
                                   const size_t *m, size_t nm, sensim_allan_point *out);
sensim_status sensim_allan_compute_axes(const double *x, size_t n, size_t naxes, const sensim_allan_opts *o,
                                        const size_t *m, size_t nm, sensim_allan_point *out);
void free(void *p);

/* imufit.h */
typedef enum sensim_imu_term { SENSIM_TERM_Q, SENSIM_TERM_N, SENSIM_TERM_B, SENSIM_TERM_K, SENSIM_TERM_R,
    SENSIM_TERM_COUNT } sensim_imu_term;
typedef enum sensim_fit_flag { SENSIM_FIT_OK, SENSIM_FIT_UPPER, SENSIM_FIT_UNRESOLVED } sensim_fit_flag;
typedef struct sensim_fit_param { double value, lo, hi; sensim_fit_flag flag; } sensim_fit_param;
typedef struct sensim_imu_fit {
    sensim_fit_param term[5]; double classic[5]; double chi2; int dof; double scale; char note[256];
} sensim_imu_fit;
typedef struct sensim_imu_fit_opts { double confidence; unsigned terms; ...; } sensim_imu_fit_opts;
sensim_imu_fit_opts sensim_imu_fit_default_opts(void);
const char *sensim_imu_term_key(sensim_imu_term t);
const char *sensim_imu_term_symbol(sensim_imu_term t);
sensim_status sensim_imu_fit_allan(const sensim_allan_point *pt, size_t n, const sensim_imu_fit_opts *o,
                                   sensim_imu_fit *fit);
typedef struct sensim_gm_fit {
    sensim_fit_param sigma; sensim_fit_param tau; sensim_fit_param white; double chi2; int dof; char note[256];
} sensim_gm_fit;
sensim_status sensim_gm_fit_allan(const sensim_allan_point *pt, size_t n, double confidence, sensim_gm_fit *fit);

/* gnssfit.h */
typedef struct sensim_gnss_rw_fit {
    sensim_fit_param sigma; double d2_std; double factor; double dt; double max_velocity; double saturated;
    size_t blocks; char note[256];
} sensim_gnss_rw_fit;
sensim_status sensim_gnss_fit_rw(const double *t, const double *enu, size_t n, double model_rate_hz,
                                 double confidence, sensim_gnss_rw_fit *fit);
typedef struct sensim_gnss_gm_fit {
    sensim_fit_param sigma; sensim_fit_param tau; double mean; double loglik; double acf1; double acf1_bound;
    int white; sensim_fit_param white_sigma; char note[256];
} sensim_gnss_gm_fit;
sensim_status sensim_gnss_fit_gm(const double *t, const double *x, size_t n, size_t stride, double confidence,
                                 sensim_gnss_gm_fit *fit);
typedef struct sensim_gnss_outlier_fit {
    size_t n; size_t rejected; sensim_fit_param rate; double magnitude; double scale[3]; double threshold;
} sensim_gnss_outlier_fit;
sensim_status sensim_gnss_find_outliers(const double *t, const double *enu, size_t n, double threshold,
                                        double confidence, unsigned char *outlier, sensim_gnss_outlier_fit *fit);
typedef struct sensim_gnss_gmw_fit {
    sensim_fit_param sigma_gm; sensim_fit_param tau; sensim_fit_param sigma_white; double mean; double loglik;
    double loglik_gm; double lr, lr_crit; int white_significant; size_t n; int iterations; char note[256];
} sensim_gnss_gmw_fit;
sensim_status sensim_gnss_fit_gmw(const double *t, const double *x, size_t n, size_t stride,
                                  const unsigned char *skip, double confidence, sensim_gnss_gmw_fit *fit);
typedef struct sensim_gnss_hdop_fit {
    sensim_fit_param initial, final, tau; double t0; double rms; size_t n; int iterations; char note[256];
} sensim_gnss_hdop_fit;
sensim_status sensim_gnss_fit_hdop(const double *t, const double *hdop, size_t n, double t0, double confidence,
                                   sensim_gnss_hdop_fit *fit);

/* lidar_fit.h */
typedef struct sensim_lidar_fit_result {
    double sigma_base, sigma_base_ci; double sigma_slope, sigma_slope_ci; double chi2_dof; size_t points_used;
    double range_min, range_max; int constrained; double base_free, slope_free;
} sensim_lidar_fit_result;
sensim_status sensim_lidar_fit_range(const float *ranges, size_t nscans, size_t npoints, const float *reference,
                                     const uint16_t *channel, size_t nbeams, double *beam_bias, double *beam_sigma,
                                     sensim_lidar_fit_result *r);
typedef struct sensim_lidar_angular_result {
    double azimuth_sigma, azimuth_sigma_ci; double elevation_sigma, elevation_sigma_ci; double chi2_dof;
    size_t points_used; size_t targets_used;
} sensim_lidar_angular_result;
sensim_status sensim_lidar_fit_angular(const float *points, size_t nscans, size_t npoints, const int32_t *target,
                                       size_t ntargets, double range_sigma_base, double range_sigma_slope,
                                       double *planes, sensim_lidar_angular_result *r);
sensim_status sensim_lidar_fit_joint(const float *points, size_t nscans, size_t npoints, const int32_t *target,
                                     size_t ntargets, double base0, double slope0, double *planes,
                                     sensim_lidar_fit_result *range, sensim_lidar_angular_result *angular);
sensim_status sensim_lidar_fit_planes(const float *points, size_t nscans, size_t npoints, const int32_t *target,
                                      size_t ntargets, double *planes, double *flatness, double *flatness_sd,
                                      size_t *count, float *reference);

/* ptc.h */
typedef struct sensim_ptc_level {
    double exposure; size_t npix; double mu_y, var_y; double mu_dark, var_dark; double svar_y, svar_dark;
} sensim_ptc_level;
sensim_status sensim_ptc_level_compute(sensim_pixel_type type, size_t npix, const void *a, const void *b,
                                       const void *dark_a, const void *dark_b, double exposure,
                                       sensim_ptc_level *out);
typedef struct sensim_ptc_result {
    double gain, gain_ci; double read_noise, read_noise_ci; double dark_current, dark_current_ci;
    double dark_offset; double saturation_dn; double saturation_capacity; int saturation_reached;
    double prnu; double dsnu; double variance_slope, variance_slope_ci;
    double variance_intercept, variance_intercept_ci; size_t levels_used;
    int quantization_limited; double min_temporal_var_dn2;
} sensim_ptc_result;
sensim_status sensim_ptc_fit(const sensim_ptc_level *levels, size_t n, double full_scale, sensim_ptc_result *r);

/* judge.h */
typedef enum sensim_judge_mode { SENSIM_JUDGE_ROBOT_LOCALIZATION, SENSIM_JUDGE_CORRECTED } sensim_judge_mode;
int sensim_judge_mode_parse(const char *name);
typedef struct sensim_judge_options { sensim_judge_mode mode; double rate_hz; ...; } sensim_judge_options;
sensim_judge_options sensim_judge_default_options(sensim_judge_mode mode);
typedef struct sensim_judge_imu { size_t n; const double *t, *yaw_rate, *fx, *fy; } sensim_judge_imu;
typedef struct sensim_judge_gnss {
    size_t n; const double *t; const double *enu; size_t enu_stride; const double *cov;
} sensim_judge_gnss;
typedef struct sensim_judge_output {
    size_t n; double *t; double *position; double *velocity; double *speed; double *yaw; double *covariance;
    size_t imu_used, imu_rejected, gnss_used, gnss_rejected;
} sensim_judge_output;
void sensim_judge_output_free(sensim_judge_output *out);
sensim_status sensim_judge_run(const sensim_judge_options *opt, const sensim_judge_imu *imu,
                               const sensim_judge_gnss *gnss, sensim_judge_output *out);

/* metrics.h */
sensim_status sensim_wasserstein1(const double *u, size_t n, const double *uw, const double *v, size_t m,
                                  const double *vw, double *out);
sensim_status sensim_spectral_flatness(const double *x, size_t n, double *sf);
typedef struct sensim_vepd_series {
    size_t n_est, n_gt; double *est_t, *est_v; double *gt_t, *gt_v;
} sensim_vepd_series;
void sensim_vepd_series_free(sensim_vepd_series *s);
typedef struct sensim_vepd_test { double rmse; double sf_gt; double sf_est; double sf_diff; size_t n_grid; }
    sensim_vepd_test;
sensim_status sensim_vepd_score(const sensim_vepd_series *s, sensim_vepd_test *out);
sensim_status sensim_vepd_read_csv(const char *path, sensim_vepd_series *out);
sensim_status sensim_vepd_read_log(const char *path, const char *estimate, sensim_vepd_series *out);
typedef struct sensim_vepd_result { double w1; double w2; double vepd; } sensim_vepd_result;
sensim_status sensim_vepd_compare(const sensim_vepd_test *real, size_t nr, const sensim_vepd_test *sim, size_t ns,
                                  sensim_vepd_result *out);
typedef struct sensim_vepd_ci { double lo, hi; double level; size_t n_boot; uint64_t seed; } sensim_vepd_ci;
sensim_status sensim_vepd_bootstrap(const sensim_vepd_test *real, size_t nr, const sensim_vepd_test *sim, size_t ns,
                                    size_t n_boot, uint64_t seed, double level, sensim_vepd_ci *out);
typedef struct sensim_vepd_perm { double vepd; double p; size_t n_ge; size_t n_perm; uint64_t seed; }
    sensim_vepd_perm;
sensim_status sensim_vepd_permutation(const sensim_vepd_test *real, size_t nr, const size_t *real_stratum,
                                      const sensim_vepd_test *sim, size_t ns, const size_t *sim_stratum,
                                      size_t n_perm, uint64_t seed, sensim_vepd_perm *out);

/* render.h */
typedef struct { double x, y, z; } sensim_vec3;
typedef struct { double w, x, y, z; } sensim_quat;
typedef struct sensim_pose { sensim_vec3 p; sensim_quat q; } sensim_pose;
typedef void (*sensim_pose_fn)(const void *user, double t, sensim_pose *out);
typedef struct sensim_pose_track sensim_pose_track;
sensim_pose_track *sensim_pose_track_create(const double *t, const double *position, const double *orientation,
                                            size_t n, const sensim_pose *mount);
void sensim_pose_track_destroy(sensim_pose_track *tr);
void sensim_pose_track_eval(const void *user, double t, sensim_pose *out);
typedef struct sensim_scene sensim_scene;
sensim_scene *sensim_scene_load(const char *path);
void sensim_scene_destroy(sensim_scene *s);
size_t sensim_scene_triangle_count(const sensim_scene *s);
size_t sensim_scene_object_count(const sensim_scene *s);
typedef enum sensim_render_backend { SENSIM_RENDER_BACKEND_EMBREE, SENSIM_RENDER_BACKEND_TWIN,
    SENSIM_RENDER_BACKEND_CUDA, SENSIM_RENDER_BACKEND_AUTO } sensim_render_backend;
sensim_status sensim_render_backend_parse(const char *name, sensim_render_backend *out);
const char *sensim_render_backend_name(sensim_render_backend b);
sensim_status sensim_scene_prepare_backend(sensim_scene *s, sensim_render_backend b);
sensim_render_backend sensim_scene_backend(const sensim_scene *s, sensim_render_backend b, const char **note);
typedef struct sensim_render_lidar_params { int channels; int columns; double rate_hz; uint64_t seed;
    uint32_t sensor; sensim_render_backend backend; ...; } sensim_render_lidar_params;
sensim_status sensim_render_lidar_preset(const char *name, sensim_render_lidar_params *out);
sensim_render_lidar_params sensim_render_lidar_default_params(void);
typedef struct sensim_render_lidar sensim_render_lidar;
sensim_render_lidar *sensim_render_lidar_create(const sensim_render_lidar_params *p);
void sensim_render_lidar_destroy(sensim_render_lidar *l);
size_t sensim_render_lidar_max_points(const sensim_render_lidar *l);
typedef struct sensim_render_lidar_points {
    size_t count, capacity; float *xyzi; float *range, *azimuth, *elevation; uint16_t *channel;
    uint8_t *return_index; float *time_offset; uint32_t *object;
} sensim_render_lidar_points;
sensim_render_lidar_points *sensim_render_lidar_points_create(const sensim_render_lidar *l);
void sensim_render_lidar_points_destroy(sensim_render_lidar_points *pts);
sensim_status sensim_render_lidar_scan(const sensim_render_lidar *l, const sensim_scene *s, sensim_pose_fn pose,
                                const void *pose_user, double t_start, uint64_t scan, sensim_render_lidar_points *out);
sensim_status sensim_render_lidar_points_noise(sensim_render_lidar_points *pts, const sensim_lidar *m,
                                               uint64_t first, uint8_t *keep, size_t *kept);
typedef struct sensim_render_camera_params { int width, height; double hfov; int samples; uint64_t seed;
    uint32_t sensor; sensim_render_backend backend; ...; } sensim_render_camera_params;
sensim_render_camera_params sensim_render_camera_default_params(void);
typedef struct sensim_render_camera sensim_render_camera;
sensim_render_camera *sensim_render_camera_create(const sensim_render_camera_params *p);
void sensim_render_camera_destroy(sensim_render_camera *c);
sensim_status sensim_render_camera_render(const sensim_render_camera *c, const sensim_scene *s, sensim_pose_fn pose,
                                   const void *pose_user, double t, uint64_t frame, float *rgb);
void sensim_image_to_u8(const float *in, size_t n, uint8_t *out);
typedef enum sensim_render_sensor_type { SENSIM_SENSOR_LIDAR = 1, SENSIM_SENSOR_CAMERA } sensim_render_sensor_type;
typedef struct sensim_render_sensor {
    char name[...]; sensim_render_sensor_type type; double rate_hz; sensim_pose mount; uint64_t seed;
    sensim_render_lidar_params lidar; sensim_render_camera_params camera; ...;
} sensim_render_sensor;
sensim_status sensim_render_sensor_load(const char *path, const char *name, sensim_render_sensor *out);

/* units.h */
typedef struct sensim_dim { signed char m2, s2, rad2, t2; } sensim_dim;
sensim_status sensim_units_parse(const char *text, double *si_value, sensim_dim *dim, int *has_unit);
sensim_status sensim_units_convert(const char *text, sensim_dim expected, double *si_value);
sensim_status sensim_units_unit(const char *unit, double *scale, sensim_dim *dim);
sensim_status sensim_units_from_si(double si_value, const char *unit, double *value);
char *sensim_dim_format(sensim_dim d, char *buf, size_t size);

/* datasheet.h */
typedef enum sensim_datasheet_fig { SENSIM_DATASHEET_RATE, SENSIM_DATASHEET_NFIG, ... } sensim_datasheet_fig;
typedef struct sensim_datasheet_figure_def {
    const char *opt, *key, *label, *block, *model_key, *si_unit; int positive; const char *unit;
} sensim_datasheet_figure_def;
extern const sensim_datasheet_figure_def sensim_datasheet_figures[];
typedef struct sensim_datasheet_value {
    int set; int used; char given[...]; char source[...]; double si; double number; double scale;
    char unit[...]; char explain[...];
} sensim_datasheet_value;
typedef struct sensim_datasheet {
    sensim_datasheet_value f[...]; char name[...]; char part[...]; char datasheet[...]; uint64_t seed;
} sensim_datasheet;
sensim_datasheet sensim_datasheet_default(void);
sensim_status sensim_datasheet_set(sensim_datasheet *d, sensim_datasheet_fig fig, const char *text, const char *where);
sensim_status sensim_datasheet_load_preset(sensim_datasheet *d, const char *path);
int sensim_datasheet_resolve(sensim_datasheet *d, char *warn, size_t size);
const sensim_datasheet_value *sensim_datasheet_model_value(const sensim_datasheet *d, const char *block,
                                                           const char *key);
double sensim_datasheet_model_si(const char *key, double si);
sensim_status sensim_datasheet_write_rig(const sensim_datasheet *d, FILE *out);
FILE *tmpfile(void);
int fclose(FILE *f);
size_t fread(void *ptr, size_t size, size_t n, FILE *f);
long ftell(FILE *f);
void rewind(FILE *f);

/* log.h */
typedef struct sensim_log sensim_log;
#define SENSIM_LOG_MAX_RANK ...
sensim_log *sensim_log_open(const char *path);
void sensim_log_close(sensim_log *log);
int sensim_log_exists(const sensim_log *log, const char *obj);
sensim_status sensim_log_shape(const sensim_log *log, const char *dset, int *rank, size_t *dims);
sensim_status sensim_log_read_f64(const sensim_log *log, const char *dset, size_t row0, size_t nrows, double *buf);

/* bag.h */
typedef enum sensim_bag_format { SENSIM_BAG_ROS1, SENSIM_BAG_DB3, SENSIM_BAG_MCAP } sensim_bag_format;
typedef enum sensim_msg_encoding { SENSIM_ENC_ROS1, SENSIM_ENC_CDR } sensim_msg_encoding;
typedef struct sensim_bag sensim_bag;
typedef struct sensim_bag_topic {
    const char *name; const char *type; const char *md5sum; const char *definition; sensim_msg_encoding encoding;
    uint64_t count; int64_t t_first_ns; int64_t t_last_ns;
} sensim_bag_topic;
typedef struct sensim_bag_msg {
    size_t topic; int64_t recv_ns; uint64_t index; const uint8_t *data; size_t size;
} sensim_bag_msg;
sensim_bag *sensim_bag_open(const char *path);
void sensim_bag_close(sensim_bag *bag);
sensim_bag_format sensim_bag_get_format(const sensim_bag *bag);
size_t sensim_bag_ntopics(const sensim_bag *bag);
const sensim_bag_topic *sensim_bag_topic_at(const sensim_bag *bag, size_t i);
sensim_status sensim_bag_find_topic(const sensim_bag *bag, const char *name, size_t *index);
sensim_status sensim_bag_select(sensim_bag *bag, const size_t *topics, size_t n);
int sensim_bag_next(sensim_bag *bag, sensim_bag_msg *msg);

/* rosmsg.h */
typedef struct sensim_msg_header { uint32_t seq; int64_t stamp_ns; char frame_id[...]; } sensim_msg_header;
typedef struct sensim_msg_imu {
    sensim_msg_header header; double orientation[4]; double orientation_covariance[9];
    double angular_velocity[3]; double angular_velocity_covariance[9]; double linear_acceleration[3];
    double linear_acceleration_covariance[9];
} sensim_msg_imu;
typedef struct sensim_msg_navsatfix {
    sensim_msg_header header; int8_t status; uint16_t service; double latitude, longitude, altitude;
    double position_covariance[9]; uint8_t position_covariance_type;
} sensim_msg_navsatfix;
sensim_status sensim_msg_decode_imu(sensim_msg_encoding enc, const uint8_t *buf, size_t n, sensim_msg_imu *out);
sensim_status sensim_msg_decode_navsatfix(sensim_msg_encoding enc, const uint8_t *buf, size_t n,
                                          sensim_msg_navsatfix *out);
"""


def _pkg(args):
    try:
        out = subprocess.run(["pkg-config"] + args, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    return shlex.split(out)


def _version_from_makefile(build=None):
    """The version the build wrote into sensim.pc, else the Makefile's."""
    try:
        with open(os.path.join(build or "", "sensim.pc")) as f:
            for line in f:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        with open(os.path.join(ROOT, "Makefile")) as f:
            for line in f:
                if line.startswith("VERSION"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


DEPS = ["hdf5", "yaml-0.1", "gsl", "libpng", "libjpeg", "liblz4", "libzstd", "sqlite3", "zlib", "draco", "assimp"]


def _locate():
    """(include_dirs, extra_objects, extra_compile_args, link_args, version)."""
    build = os.environ.get("SENSIM_BUILD") or os.path.join(ROOT, "build")
    static = os.path.join(build, "libsensim.a")
    if os.path.exists(static):
        inc = os.path.join(ROOT, "include")
        if not os.path.isdir(inc):  # a copy of python/ elsewhere: the checkout beside the build
            inc = os.path.join(os.path.dirname(os.path.abspath(build)), "include")
        cflags = _pkg(["--cflags"] + DEPS)
        libs = _pkg(["--libs"] + DEPS)
        link = ["-fopenmp"] + libs + ["-lhdf5_hl", "-lembree3", "-lbz2", "-lmeshoptimizer", "-lstdc++", "-lm", "-lpthread"]
        return [inc], [static], cflags, link, _version_from_makefile(build)
    if _pkg(["--modversion", "sensim"]):
        ver = _pkg(["--modversion", "sensim"])[0]
        return ([], [], _pkg(["--cflags", "sensim"]),
                ["-fopenmp"] + _pkg(["--libs", "--static", "sensim"]), ver)
    raise RuntimeError("sensim: libsensim not found: build it first (make, in the checkout; or set "
                       "SENSIM_BUILD to a build folder holding libsensim.a), or install it (pkg-config sensim)")


INCLUDE_DIRS, EXTRA_OBJECTS, EXTRA_CFLAGS, LINK_ARGS, VERSION = _locate()

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "sensim._sensim",
    '#include <stdlib.h>\n#include "sensim/sensim.h"\n#include "sensim/rosmsg.h"\n'
    '#define SENSIM_PY_VERSION "%s"\nstatic const char *sensim_py_version(void) { return SENSIM_PY_VERSION; }\n'
    % (VERSION or "unknown"),
    include_dirs=INCLUDE_DIRS,
    extra_objects=EXTRA_OBJECTS,
    extra_compile_args=["-std=c11", "-D_DEFAULT_SOURCE"] + EXTRA_CFLAGS,
    extra_link_args=LINK_ARGS,
)
ffibuilder.cdef("static const char *sensim_py_version(void);")

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
