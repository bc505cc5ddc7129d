/* sensim/metrics.h - sim2real scores: 1-D Wasserstein distance, spectral
 * flatness, and the VEPD score of seed 004 (Velocity Estimation Performance
 * Difference) over sets of tests, with a bootstrap confidence interval and a
 * permutation test.
 *
 * Per test (MODELS.md "Sim2real: VEPD", the authors' scoring procedure):
 * ground truth and the judge's speed estimate are put on a 15 Hz grid
 * t = 0, 1/15, ... < min(last gt time, last estimate time); the estimate and
 * its time stamps are smoothed by a moving average of window 2 first;
 * RMSE of the difference; spectral flatness SF = exp(mean ln(|X| + 1e-10)) /
 * mean |X| of the full FFT X of each series; and |SF(gt) - SF(est)|.
 * Over the tests: W1 = Wasserstein(RMSE real, RMSE sim), W2 = Wasserstein(SF
 * differences real, sim), VEPD = (W1 + W2) / 2.
 *
 * Ownership: input arrays are borrowed for the call; results are written to
 * caller structs; sensim_vepd_series and sensim_vepd_set own their arrays
 * and are freed with their _free functions (NULL-safe, zero-initialized
 * structs are valid empty values).
 *
 * Thread safety: every function is reentrant (no statics); the FFT allocates
 * its own GSL workspace per call. */
#ifndef SENSIM_METRICS_H
#define SENSIM_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- 1-D Wasserstein distance ---- */

/* W1 between two weighted samples u[n] and v[m]: the integral over the merged
 * support of |F_u - F_v|, F the weighted empirical CDFs (the definition of
 * scipy.stats.wasserstein_distance). Weights may be NULL (all equal); they
 * must be finite, >= 0 and not all zero; they need not sum to 1. Values must
 * be finite. n, m >= 1. Allocates a work array of n + m values. */
sensim_status sensim_wasserstein1(const double *u, size_t n, const double *uw, const double *v, size_t m,
                                  const double *vw, double *out);

/* ---- spectral flatness ---- */

/* The offset inside the logarithm of the authors' flatness (keeps ln finite
 * for exactly zero bins). */
#define SENSIM_FLATNESS_EPS 1e-10

/* Wiener entropy of the magnitude of the full complex FFT of x[n] (n >= 1,
 * any length: GSL mixed-radix): exp(mean ln(|X_k| + 1e-10)) / mean |X_k|
 * over all n bins. 1 for a flat spectrum, near 0 for a pure tone. An all-zero
 * input is SENSIM_EDATA (0/0). */
sensim_status sensim_spectral_flatness(const double *x, size_t n, double *sf);

/* ---- one test ---- */

/* Grid rate and smoothing window of the authors' procedure. */
#define SENSIM_VEPD_GRID_HZ 15.0
/* The largest grid sensim_vepd_score builds (2^20 points, 19.4 hours at 15
 * Hz; a 2^26-point grid took over 30 s under the fuzzer). */
#define SENSIM_VEPD_MAX_GRID (1 << 20)

/* Time series of one test: the judge's speed estimate and the ground-truth
 * speed, each with its own time stamps (s, from the start of the test). */
typedef struct sensim_vepd_series {
    size_t n_est, n_gt;
    double *est_t, *est_v; /* [n_est] */
    double *gt_t, *gt_v;   /* [n_gt] */
} sensim_vepd_series;

void sensim_vepd_series_free(sensim_vepd_series *s);

/* The scores of one test. */
typedef struct sensim_vepd_test {
    double rmse;    /* m/s, estimate vs ground truth on the 15 Hz grid */
    double sf_gt;   /* spectral flatness of the gridded ground truth */
    double sf_est;  /* of the gridded, smoothed estimate */
    double sf_diff; /* |sf_gt - sf_est| */
    size_t n_grid;  /* grid points used */
} sensim_vepd_test;

/* Scores one test. Times must be finite and non-decreasing; needs at least
 * 2 estimate samples, 1 ground-truth sample and a grid of at least 1 point
 * (min of the last times > 0). Interpolation clamps outside the data, like
 * numpy.interp. */
sensim_status sensim_vepd_score(const sensim_vepd_series *s, sensim_vepd_test *out);

/* Reads one test in the authors' CSV layout: a header line naming the
 * columns se_time, gt_time, se_vel, gt_vel (any order, other columns
 * ignored), then rows of numbers. Columns may have different lengths: empty
 * cells at the end of a column are padding, and so are trailing
 * ground-truth rows whose time and speed are both exactly 0 (the authors
 * pad with zeros). A zero speed at a real time is a stop and is kept; a
 * time of 0 before the trailing padding is an error. Errors name the file,
 * line and column. */
sensim_status sensim_vepd_read_csv(const char *path, sensim_vepd_series *out);

/* Flags of sensim_vepd_read_csv_ex. */
#define SENSIM_VEPD_DROP_ZEROS                                                                                         \
    1u /* the authors' script: drop every ground-truth row                                                             \
          whose time or speed is exactly 0 (stops too) */

/* sensim_vepd_read_csv with flags (0: the same). */
sensim_status sensim_vepd_read_csv_ex(const char *path, unsigned flags, sensim_vepd_series *out);

/* Reads one test from a sensim HDF5 log: the estimate's t and speed from
 * /estimates/<estimate>/ (estimate NULL: the only group under /estimates)
 * and the ground truth's t and horizontal speed |(v_E, v_N)| from
 * /ground_truth/velocity. Times are shifted so that the ground truth starts
 * at 0, as in the authors' CSV files. The velocity is read in blocks; the
 * series (times and speeds) is held whole, as the scoring's FFT needs it.
 * Errors name the file and dataset. */
sensim_status sensim_vepd_read_log(const char *path, const char *estimate, sensim_vepd_series *out);

/* The ground-truth half of sensim_vepd_read_log, for an estimate held in
 * memory: fills n_gt, gt_t (shifted to start at 0) and gt_v of *out
 * (replacing what they held; the estimate fields are untouched) and sets
 * *t0 to the shift, to be subtracted from the estimate's times. */
sensim_status sensim_vepd_read_truth(const char *path, sensim_vepd_series *out, double *t0);

/* ---- sets of tests ---- */

typedef struct sensim_vepd_result {
    double w1;   /* Wasserstein distance between the RMSE sets, m/s */
    double w2;   /* between the flatness-difference sets */
    double vepd; /* (w1 + w2) / 2 */
} sensim_vepd_result;

/* Scores a real set against a simulated set (nr, ns >= 1; the sizes may
 * differ). */
sensim_status sensim_vepd_compare(const sensim_vepd_test *real, size_t nr, const sensim_vepd_test *sim, size_t ns,
                                  sensim_vepd_result *out);

typedef struct sensim_vepd_ci {
    double lo, hi;    /* percentile interval of VEPD */
    double level;     /* e.g. 0.95 */
    size_t n_boot;    /* replicates */
    uint64_t seed;
} sensim_vepd_ci;

/* Percentile bootstrap interval of VEPD: each replicate resamples the real
 * and the simulated tests with replacement (sizes kept). Draws come from the
 * counter-based streams (seed, sensor "vepd-bootstrap", stream 0 for real and
 * 1 for sim) indexed by replicate * size + i, so the interval is a pure
 * function of the inputs and the seed. n_boot >= 10, 0 < level < 1. */
sensim_status sensim_vepd_bootstrap(const sensim_vepd_test *real, size_t nr, const sensim_vepd_test *sim, size_t ns,
                                    size_t n_boot, uint64_t seed, double level, sensim_vepd_ci *out);

/* Two-sample permutation test of "real and simulated tests come from the
 * same distribution", with VEPD as the statistic. A VEPD between two finite
 * samples of one distribution is > 0 (and its percentile bootstrap interval
 * lies above it); the permutation p-value says whether the observed VEPD is
 * larger than relabelings of the pooled tests give.
 *
 * Each of the n_perm relabelings shuffles the pooled tests within each
 * stratum (Fisher-Yates) and gives the first nr_k of stratum k to the real
 * set, the rest to the simulated set, so every stratum keeps its sizes
 * (stratified permutation: a combined score over scenarios is compared with
 * relabelings that keep the scenario mix of each set). VEPD is recomputed on
 * all the tests, as sensim_vepd_compare does. p = (1 + n_ge) / (n_perm + 1),
 * n_ge the relabelings whose VEPD is >= the observed one less a relative
 * 1e-12 (so that ties broken by rounding count as ties). p >= 1 / (n_perm +
 * 1); it is an exact-level test (P(p <= a) <= a under exchangeability).
 *
 * real_stratum[nr] and sim_stratum[ns] label the tests' strata (any values;
 * tests with equal labels form a stratum), or both are NULL: one stratum. A
 * stratum present in only one set keeps its labels. Choose the strata within
 * which tests are exchangeable under the null: where each simulated test
 * replicates one real test (same maneuver: sensim vepd's test names), one
 * stratum per pair (a paired test); for independent repeats, one per
 * scenario. Draws come from the
 * counter-based stream (seed, sensor "vepd-permutation", stream 0) indexed by
 * permutation * (nr + ns) + position, so p is a pure function of the inputs
 * and the seed, whatever the thread count. n_perm >= 1. */
typedef struct sensim_vepd_perm {
    double vepd;   /* observed VEPD */
    double p;      /* (1 + n_ge) / (n_perm + 1) */
    size_t n_ge;   /* relabelings with VEPD >= observed */
    size_t n_perm; /* relabelings drawn */
    uint64_t seed;
} sensim_vepd_perm;

sensim_status sensim_vepd_permutation(const sensim_vepd_test *real, size_t nr, const size_t *real_stratum,
                                      const sensim_vepd_test *sim, size_t ns, const size_t *sim_stratum,
                                      size_t n_perm, uint64_t seed, sensim_vepd_perm *out);

/* ---- SVG histogram ---- */

/* Writes a self-contained SVG histogram of one or two samples (b may be
 * NULL) with `bins` equal bins over their joint range, overlaid with the
 * labels in a legend. Writes to a temporary name and renames over path. */
sensim_status sensim_svg_histogram(const char *path, const char *title, const char *xlabel, const double *a,
                                   size_t na, const char *label_a, const double *b, size_t nb, const char *label_b,
                                   int bins);

/* ---- the sim2real experiment (seed 004's GNSS experiment in simulation) ----
 *
 * For each generator, "real" logs are made with that GNSS model (plus an IMU
 * rig); simulated logs with each of the paper's five variants. Every log is
 * a line, circle or sine trajectory (`tests` each, speeds 1.5 to 2.4 m/s,
 * 100 Hz truth); the judge runs on every log, each variant's set is scored
 * against the real set by VEPD and the variants are ranked. Simulated tests
 * use seeds 1..3 tests, real tests seeds from real_seed on; all variants
 * share the simulated IMU logs (common random numbers). */

#define SENSIM_SIM2REAL_NMODELS 5
#define SENSIM_SIM2REAL_NSCEN 3

/* The five GNSS variants of seed 004 (section III-B) in the paper's order:
 * id (ch-gauss, ...), preset (DATA/<preset>.yaml) and the paper's label. */
typedef struct sensim_sim2real_model {
    const char *id, *preset, *label;
} sensim_sim2real_model;
extern const sensim_sim2real_model sensim_sim2real_models[SENSIM_SIM2REAL_NMODELS];
/* "line", "circle", "sine". */
extern const char *const sensim_sim2real_scenarios[SENSIM_SIM2REAL_NSCEN];
/* The model whose id or label is name[0..len) (case-insensitive), or -1. */
int sensim_sim2real_model_find(const char *name, size_t len);

typedef struct sensim_sim2real_opts {
    const char *data;    /* directory of the GNSS presets */
    const char *imu_rig; /* the IMU rig file */
    const char *dir;     /* working directory (created); the kept logs go under it */
    int judge_mode;      /* a sensim_judge_mode */
    int generators[SENSIM_SIM2REAL_NMODELS], ngen; /* distinct model indices */
    size_t tests;        /* per scenario, >= 1 */
    double duration;     /* s per test */
    uint64_t real_seed;  /* first seed of the real tests (not within 1..3 tests) */
    size_t n_boot, n_perm; /* bootstrap replicates, permutations (0: none) */
    int keep;            /* also write the judged logs: DIR/real-<generator>/ and DIR/sim/<model>/ */
    /* Progress: ("tests", fraction done) before each test; NULL: none. */
    void (*progress)(void *ctx, const char *part, double fraction);
    void *progress_ctx;
} sensim_sim2real_opts;

/* One variant's standing against one real set. */
typedef struct sensim_sim2real_standing {
    int model;
    sensim_vepd_result all, scen[SENSIM_SIM2REAL_NSCEN];
    int scen_rank[SENSIM_SIM2REAL_NSCEN]; /* 1 = lowest VEPD in the scenario */
    sensim_vepd_ci ci;                    /* zero without bootstrap */
    sensim_vepd_perm perm, scen_perm[SENSIM_SIM2REAL_NSCEN]; /* zero without permutations */
} sensim_sim2real_standing;

/* Per generator g (in the order given), the variants sorted by VEPD over
 * all tests, lowest first. */
typedef struct sensim_sim2real_result {
    int ngen;
    sensim_sim2real_standing standings[SENSIM_SIM2REAL_NMODELS][SENSIM_SIM2REAL_NMODELS];
} sensim_sim2real_result;

/* Runs the experiment. The per-test truth and IMU logs are scratch under
 * DIR/work (removed). Errors name the file (a rig, a log) or the option. */
sensim_status sensim_sim2real_run(const sensim_sim2real_opts *o, sensim_sim2real_result *r);

/* One set of the experiment's tests with given rigs: test i of scenario k
 * (idx = k * tests + i) is the truth of run_test, the IMU rig injected with
 * seed seed0 + idx, the GNSS rig with the same seed, the judge, and its
 * scores into out[idx] (out holds SENSIM_SIM2REAL_NSCEN * o->tests). Uses
 * o->dir (created), o->judge_mode, o->tests, o->duration, o->progress; the
 * scratch logs go to a fresh folder under o->dir (removed), so processes
 * may share o->dir. sensim_sim2real_run's simulated set of variant m is this
 * with seed0 1 and its real set of generator g this with real_seed. */
struct sensim_rig;
sensim_status sensim_sim2real_score_set(const sensim_sim2real_opts *o, const struct sensim_rig *imu,
                                        const struct sensim_rig *gnss, uint64_t seed0, sensim_vepd_test *out);

#ifdef __cplusplus
}
#endif
#endif
