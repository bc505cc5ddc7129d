/* sensim/imu.h - triaxial inertial sensors: gyroscope, accelerometer and
 * magnetometer as one pipeline with every effect optional.
 *
 * Per sample k at time t_k, for the true signal u in the sensor frame
 * (angular rate, specific force including gravity, or magnetic field):
 *
 *   y = C diag(1 + s) u  [+ G f]                 scale factor s, cross-axis C,
 *                                                gyro g-sensitivity G (f: specific force)
 *     + b0 + b_on                                constant bias, turn-on bias (once per run)
 *     + chrono_k + airsim_k + gm_k + rw_k + bi_k  bias drift processes
 *     + R (t_k - t_0)                            rate ramp
 *     + w_k                                      white noise
 *   y += q (e_k - e_{k-1}), e_k ~ U(-1/2, 1/2)    angle/velocity quantization
 *                                                (IEEE 952): readings of the
 *                                                integral good to +-q dt / 2
 *   y = clamp(y, -range, range)                  output saturation
 *
 * Drift processes (MODELS.md; each per axis, with the ACTUAL dt = t_k - t_{k-1}
 * unless said otherwise):
 *   chrono drift  Chrono::Sensor's ChNoiseNormalDrift (seed 000, eq. 5),
 *                 reproduced exactly: white N(mu_a, sigma_a^2) and a pure random
 *                 walk b += N(mu_b, (b0 sqrt(dt_nom / t_b))^2) with the NOMINAL
 *                 dt_nom = 1/rate (tau_drift only scales the step in Chrono).
 *   airsim        AirSim's ImuSimple::addNoise (AirLib/include/sensors/imu/
 *                 ImuSimple.hpp), reproduced exactly: with dt' = max(dt, 1 ms)
 *                 (dt = 0 at the first sample, AirSim's reset call), white
 *                 noise arw / sqrt(dt') n and a walk whose value BEFORE this
 *                 sample's step is output, b += (bias_stability / sqrt(tau))
 *                 sqrt(dt') n'.
 *   gazebo        gz-sensors' GaussianNoiseModel (src/GaussianNoiseModel.cc,
 *                 Load and ApplyImpl, taken from rotors' IMU plugin),
 *                 reproduced exactly: b_0 = +-N(bias_mean, bias_stddev^2)
 *                 with a random sign, then for dt > 0
 *                 b = phi b + N(0, sigma_b^2 tau/2 (1 - phi^2)),
 *                 phi = exp(-dt/tau), sigma_b = dynamic_bias_stddev (a
 *                 driving density: the settled std is sigma_b sqrt(tau/2));
 *                 white N(mean, stddev^2) per sample.
 *   gauss_markov  exact first-order Gauss-Markov with a STATIONARY std sigma
 *                 (gnss-ins-sim's parametrization, not Gazebo's):
 *                 phi = exp(-dt/tau), b = phi b + N(0, sigma^2 (1 - phi^2)),
 *                 started from its stationary distribution.
 *   random_walk   rate random walk K: b += K sqrt(dt) N(0,1)
 *                 (Allan variance K^2 tau / 3).
 *   bias_instability  B: a sum of Gauss-Markov processes with correlation times
 *                 log-spaced over [tau_min, tau_max], variances fitted (at
 *                 create) so that their Allan variance AS SAMPLED at the rate
 *                 (the AR(1) closed form, not the continuous-time one) is flat
 *                 at (2 ln 2 / pi) B^2 over that range (IEEE Std 952 flicker
 *                 floor).
 * White noise: a noise density N (per sqrt(Hz)) gives sigma_d = N sqrt(rate);
 * a per-sample sigma adds in quadrature.
 *
 * Random streams: stream = (instrument * 16 + effect) * 4 + axis, indexed by
 * sample k, so every value is a pure function of (seed, sensor, k). Effects:
 * white 0 (AirSim's white noise too), turn-on 1, gauss_markov 2, random walk 3,
 * Chrono white 4, Chrono walk 5, AirSim walk 6, Gazebo dynamic bias 7,
 * bias-instability terms 8..15. Gazebo's turn-on bias takes normal index a and
 * uniform index 4 + a of effect 7's spare axis stream 3.
 *
 * Ownership and threads: a sensim_triax is immutable after create and may be
 * shared; the mutable process state lives in a caller-owned
 * sensim_triax_state. sensim_triax_apply never allocates.
 * Files: sensim_triax_* in models/triax.c, sensim_imu_specific_force in
 * models/imu.c, the rig's imu sensor (sensim_imu_*_yaml, the kalibr
 * writer) in models/imu_rig.c. */
#ifndef SENSIM_IMU_H
#define SENSIM_IMU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sensim/rng.h"
#include "sensim/status.h"
#include "sensim/yaml.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SENSIM_BI_MAX_TERMS 8

typedef enum sensim_instrument {
    SENSIM_GYRO = 0,
    SENSIM_ACCEL = 1,
    SENSIM_MAG = 2
} sensim_instrument;

typedef struct sensim_triax_params {
    double scale[3];              /* scale-factor error, fraction (0.001 = 1000 ppm) */
    double cross_axis[3][3];      /* C: identity for none; off-diagonals are cross-axis sensitivity */
    double g_sensitivity[3][3];   /* G: gyro only, rad/s per m/s^2; zero for none */
    double bias[3];               /* constant bias b0 */
    double turn_on_bias[3];       /* std of the per-run bias b_on (drawn once at k = 0) */
    double noise_density[3];      /* white noise density N, per sqrt(Hz) */
    double noise_sigma[3];        /* white noise std per sample */
    double random_walk[3];        /* K, per s^(3/2) (rad/s^2/sqrt(Hz), m/s^3/sqrt(Hz)) */
    double bias_instability[3];   /* B (flat Allan floor / 0.664) */
    double bi_tau_min, bi_tau_max;/* correlation-time span reproducing the floor, s */
    int bi_terms;                 /* Gauss-Markov terms (1..SENSIM_BI_MAX_TERMS) */
    double rate_ramp[3];          /* R, per s */
    double gm_sigma[3], gm_tau[3];/* Gauss-Markov bias: stationary std, correlation time */
    double chrono_mean[3];        /* Chrono drift: mu_a (white noise mean) */
    double chrono_stddev[3];      /*   sigma_a (white noise std per sample) */
    double chrono_bias_drift[3];  /*   b0 (random-walk scale) */
    double chrono_drift_mean[3];  /*   mu_b (random-walk step mean) */
    double chrono_tau_drift[3];   /*   t_b, s (0 disables the drift) */
    double airsim_bias_stability[3]; /* AirSim bias stability (0 disables) */
    double airsim_tau[3];         /*   its time constant, s */
    double airsim_arw[3];         /* AirSim white noise (arw, vrw), per sqrt(Hz) (0 disables) */
    double gz_mean[3];            /* Gazebo <mean>: added to every sample */
    double gz_stddev[3];          /* Gazebo <stddev>: white noise std per sample */
    double gz_bias_mean[3];       /* Gazebo <bias_mean> and <bias_stddev>: turn-on */
    double gz_bias_stddev[3];     /*   bias +-N(mean, stddev^2), sign random */
    double gz_dyn_stddev[3];      /* Gazebo <dynamic_bias_stddev>, per sqrt(s) */
    double gz_dyn_tau[3];         /*   <dynamic_bias_correlation_time>, s */
    double gz_precision[3];       /* Gazebo <precision>: each sample rounded to it (0 for none) */
    double quantization[3];       /* rate step q = S / dt of the integrated output
                                     (0 for none): Allan Q = q dt / sqrt(12) */
    double range[3];              /* |y| <= range (0 for unlimited) */
} sensim_triax_params;

/* All effects off: identity cross-axis, zeros elsewhere, bias-instability span
 * [1/rate, 1000 s] with 8 terms (resolved at create when tau_min is 0). */
sensim_triax_params sensim_triax_default_params(void);

typedef struct sensim_triax sensim_triax;

/* Validates (negative sigmas, tau <= 0 with a sigma set, NaN, ...; messages
 * name `what`, e.g. "rig.yaml:7: imu.gyro") and precomputes. Every draw of
 * the model comes from the streams of (seed, sensor_id) (the model
 * contract, libsensim(3)). */
sensim_triax *sensim_triax_create(const sensim_triax_params *p, sensim_instrument kind, double rate_hz, uint64_t seed,
                                  uint32_t sensor_id, const char *what);
void sensim_triax_destroy(sensim_triax *m);
const sensim_triax_params *sensim_triax_params_of(const sensim_triax *m);
/* Bias-instability terms chosen at create: taus and stds for an axis. */
int sensim_triax_bi_terms(const sensim_triax *m, int axis, double *taus, double *sigmas);
void sensim_triax_print(const sensim_triax *m, FILE *f);

/* Process state carried from block to block. */
typedef struct sensim_triax_state {
    uint64_t k;          /* index of the next sample */
    double t_prev, t0;   /* time of the previous sample, of the first */
    double turn_on[3];
    double chrono[3], airsim[3], gm[3], rw[3], gz[3];
    double bi[3][SENSIM_BI_MAX_TERMS];
    double dt_cached, gm_phi[3], gm_q[3], bi_phi[3][SENSIM_BI_MAX_TERMS], bi_q[3][SENSIM_BI_MAX_TERMS];
} sensim_triax_state;

/* Starts a run: sample index 0; the turn-on bias and the processes' start
 * are drawn at the first sample, index 0 of the model's streams. */
void sensim_triax_reset(const sensim_triax *m, sensim_triax_state *s);

/* Applies the pipeline to n samples: t[n] sample times (strictly increasing
 * across calls), u[n*3] true values in the sensor frame, f[n*3] the specific
 * force for g-sensitivity (NULL if none), y[n*3] output (may equal u).
 * Never allocates. */
void sensim_triax_apply(const sensim_triax *m, sensim_triax_state *s, size_t n, const double *t, const double *u,
                        const double *f, double *y);

/* The same for up to SENSIM_TRIAX_SET_MAX instruments of one sensor sharing
 * the sample times t[n] (gyro, accelerometer, magnetometer): m[i], s[i],
 * u[i], y[i] as above, f NULL or f[i] NULL for none. The 3 * count
 * (instrument, axis) tasks run in one parallel loop, so that threads share
 * the work evenly (a larger count is taken SENSIM_TRIAX_SET_MAX at a time).
 * Results equal count calls of sensim_triax_apply bit for bit. */
#define SENSIM_TRIAX_SET_MAX 3
void sensim_triax_apply_set(int count, const sensim_triax *const m[], sensim_triax_state *const s[], size_t n,
                            const double *t, const double *const u[], const double *const f[], double *const y[]);

/* The model of instrument `kind` of a rig sensor of type imu, borrowed from
 * the sensor (valid while its rig lives); NULL when s is not an imu or has
 * no such instrument. It validated the rig's block (seed 0): for callers
 * that apply the noise to their own arrays (the Python interface), a model
 * created from its sensim_triax_params_of with the run's seed and s->id,
 * applied with sensim_triax_apply_set, gives what `sensim inject` writes
 * for recorded clean data. */
struct sensim_sensor;
const sensim_triax *sensim_imu_sensor_triax(const struct sensim_sensor *s, sensim_instrument kind);

/* Standard gravity, m/s^2 (the g of datasheets and of specific force). */
#define SENSIM_G0 9.80665

/* Specific force at a point offset r (body frame, m) from the body origin,
 * in the body frame (seed 002 eq. 29): f = R^T (a + g_up) + alpha x r +
 * w x (w x r), with q the body-to-world attitude, a the world kinematic
 * acceleration of the origin, g_up = (0, 0, g) in ENU (a resting sensor reads
 * +g upward), w and alpha the body angular velocity and acceleration. */
void sensim_imu_specific_force(const double q[4], const double a_world[3], const double w_body[3],
                               const double alpha_body[3], const double r_body[3], double g, double f_body[3]);

/* ---- the rig's imu sensor (models/imu_rig.c) ---- */

/* An imu sensor's blocks as a rig gives them (sensim-inject(1)). */
typedef struct sensim_imu_params {
    int present[3];                /* gyro, accel, mag block given (index sensim_instrument) */
    sensim_triax_params triax[3];  /* each block's parameters */
    int mag_dipole;                /* 1: the Earth's dipole at the log's origin; 0: mag_field */
    double mag_field[3];           /* T, world ENU (when mag_dipole is 0) */
    double hard_iron[3];           /* T */
    double soft_iron[3][3];        /* identity for none */
} sensim_imu_params;

/* No block; each triax at sensim_triax_default_params; the dipole field, no
 * hard iron, identity soft iron. */
sensim_imu_params sensim_imu_default_params(void);
/* Parses the gyro, accel and mag keys of a rig sensor mapping into *p,
 * which the caller presets (usually with defaults); other keys are ignored.
 * Errors name file, line and key. */
sensim_status sensim_imu_params_from_yaml(const sensim_ynode *sensor_map, sensim_imu_params *p);
/* Writes one sensor of a rig: the common keys of s (sensim_sensor_write_yaml)
 * and the blocks of p, each key where it differs from the defaults, in SI.
 * Per-axis correlation times (gauss_markov.tau, airsim.tau,
 * chrono_drift.tau_drift) are one value in a rig: the first axis's is
 * written. sensim_imu_params_from_yaml reads back what it wrote. */
struct sensim_sensor;
void sensim_imu_write_yaml(sensim_ywriter *w, const struct sensim_sensor *s, const sensim_imu_params *p);

/* kalibr's IMU noise model (imu.yaml of ethz-asl/kalibr): one value per
 * instrument, continuous-time densities in SI. */
typedef struct sensim_kalibr_imu {
    const char *rostopic;               /* NULL: /imu0 (borrowed) */
    double update_rate;                 /* Hz */
    int has_gyro, has_accel;            /* which pair of keys to write */
    double gyroscope_noise_density;     /* rad/s/sqrt(Hz) */
    double gyroscope_random_walk;       /* rad/s^2/sqrt(Hz) */
    double accelerometer_noise_density; /* m/s^2/sqrt(Hz) */
    double accelerometer_random_walk;   /* m/s^3/sqrt(Hz) */
} sensim_kalibr_imu;
/* Writes k's keys into the root mapping of w in kalibr's order
 * (accelerometer, gyroscope, rostopic, update_rate). */
void sensim_imu_write_kalibr(sensim_ywriter *w, const sensim_kalibr_imu *k);

/* The rig sensor type "imu" (models/imu_rig.c): gyro, accel and mag blocks
 * of a rig (sensim-inject(1)), simulated from ground truth with the rig's
 * timing or added to recorded clean data; writes /sensors/<name>/{t,
 * t_sample, t_sensor, angular_velocity, specific_force, magnetic_field}. */
struct sensim_sensor_type;
extern const struct sensim_sensor_type sensim_imu_type;

#ifdef __cplusplus
}
#endif
#endif
