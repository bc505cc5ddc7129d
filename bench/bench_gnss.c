/* GNSS and odometry throughput: epochs (samples) per second through
 * sensim_gnss_apply with every effect on (Gaussian + Chrono random walk at
 * 100 Hz inner rate + Gauss-Markov, HDOP, covariance, velocity noise,
 * outages, outliers, WGS84 output) and with the Gaussian model alone, and
 * samples per second through the encoder and the odometer. Objects are
 * created outside the timed loops.
 *
 * Then the rig path end to end (sensim_rig_inject from a ground-truth log:
 * interpolation, timing, model, HDF5 output) for a gnss and for an odometer
 * plus an encoder at 100 Hz, each three ways: no timing; clock offset and
 * drift, lag and jitter (ordered delivery); and those plus a 20 ms
 * collection window (32 ground-truth evaluations per sample). The baseline
 * is the first, measured in the same run. Temporary logs go to $TMPDIR.
 * Usage: bench_gnss [epochs] (default 200000; the rig runs use epochs / 100 s
 * of ground truth at 100 Hz). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sensim/gnss.h"
#include "sensim/log.h"
#include "sensim/odometer.h"
#include "sensim/rig.h"
#include "sensim/trajectory.h"
#include "bench.h"

static double run_gnss(const sensim_gnss_params *p, size_t n, const double *t, const double *pos,
                       const double *vel, const sensim_gnss_out *o)
{
    sensim_gnss *g = sensim_gnss_create(p, 1, 1);
    if (!g)
        return 0;
    sensim_gnss_state st;
    sensim_gnss_reset(g, &st, 0.0);
    const size_t blk = 4096;
    double t0 = bench_now();
    for (size_t i = 0; i < n; i += blk)
        sensim_gnss_apply(g, &st, i + blk < n ? blk : n - i, t + i, pos + 3 * i, vel + 3 * i, o);
    double dt = bench_now() - t0;
    sensim_gnss_destroy(g);
    return (double)n / dt;
}

/* A circle at 2 m/s, radius 10 m, for `secs` seconds at 100 Hz. */
static int write_gt(const char *path, double secs)
{
    sensim_trajectory_params tp = sensim_trajectory_default_params();
    tp.shape = SENSIM_TRAJ_CIRCLE, tp.speed = 2.0, tp.radius = 10.0;
    sensim_trajectory *tr = sensim_trajectory_create(&tp);
    size_t n = (size_t)(secs * 100) + 1;
    sensim_gt_block blk;
    if (!tr || sensim_gt_block_init(&blk, n))
        return -1;
    const double origin[3] = {43.0731, -89.4012, 260.0};
    sensim_log *lg = NULL;
    sensim_gt_writer *w = NULL;
    int ok = !sensim_trajectory_fill(tr, 0.0, 100.0, 0, n, &blk) && (lg = sensim_log_create(path, "bench_gnss")) &&
             (w = sensim_gt_writer_create(lg, origin)) && !sensim_gt_writer_append(w, &blk);
    sensim_gt_writer_close(w);
    ok = ok && !sensim_log_commit(lg);
    if (!ok)
        sensim_log_close(lg);
    sensim_gt_block_free(&blk);
    sensim_trajectory_destroy(tr);
    return ok ? 0 : -1;
}

/* Samples per second of one rig run (rows of `dset` over the inject time). */
static double run_rig(const char *text, const char *gt, const char *out, const char *dset)
{
    sensim_rig *rig = sensim_rig_load_string(text, "bench.yaml");
    if (!rig) {
        fprintf(stderr, "bench_gnss: %s\n", sensim_last_error());
        return 0;
    }
    sensim_inject_opts o = {rig->seed, 1, 0, NULL, NULL};
    double t0 = bench_now();
    sensim_status st = sensim_rig_inject(rig, &o, gt, out);
    double dt = bench_now() - t0;
    sensim_rig_free(rig);
    int rank;
    size_t dims[4] = {0};
    sensim_log *lg = st ? NULL : sensim_log_open(out);
    if (!lg || sensim_log_shape(lg, dset, &rank, dims)) {
        fprintf(stderr, "bench_gnss: %s\n", sensim_last_error());
        sensim_log_close(lg);
        return 0;
    }
    sensim_log_close(lg);
    return (double)dims[0] / dt;
}

static void bench_rigs(double secs)
{
    const char *tmp = getenv("TMPDIR");
    char d[512], gtp[600], outp[600];
    snprintf(d, sizeof d, "%s/bench_gnss-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(d)) {
        perror("bench_gnss: mkdtemp");
        return;
    }
    snprintf(gtp, sizeof gtp, "%s/gt.h5", d);
    snprintf(outp, sizeof outp, "%s/out.h5", d);
    if (write_gt(gtp, secs)) {
        fprintf(stderr, "bench_gnss: %s\n", sensim_last_error());
        rmdir(d);
        return;
    }
    static const char *const timing[3] = {
        "",
        "    timing: { clock_offset: 0.3, clock_drift: 2.0e-5, lag: 0.02, jitter: 0.01 }\n",
        "    timing: { clock_offset: 0.3, clock_drift: 2.0e-5, lag: 0.02, jitter: 0.01, collection_window: 0.02 }\n"};
    static const char *const what[3] = {"no timing", "clock+jitter", "clock+jitter+window"};
    double r[2][3];
    char text[1024];
    for (int i = 0; i < 3; i++) {
        snprintf(text, sizeof text,
                 "seed: 1\nsensors:\n  - name: gps\n    type: gnss\n    rate_hz: 100\n%s"
                 "    position_noise: { model: gaussian, sigma: 0.5 }\n    hdop: { initial: 100, final: 0.85, tau: 12.4 }\n",
                 timing[i]);
        r[0][i] = run_rig(text, gtp, outp, "/sensors/gps/t");
        snprintf(text, sizeof text,
                 "seed: 1\nsensors:\n  - name: odo\n    type: odometer\n    rate_hz: 100\n    pulses_per_rev: 1024\n%s"
                 "  - name: enc\n    type: encoder\n    rate_hz: 100\n    source: heading\n    resolution: 0.001\n%s",
                 timing[i], timing[i]);
        r[1][i] = 2 * run_rig(text, gtp, outp, "/sensors/odo/t");
    }
    printf("rig inject, %.0f s of ground truth at 100 Hz, sensors at 100 Hz (samples/s, vs no timing):\n", secs);
    for (int i = 0; i < 3; i++)
        printf("  gnss %-20s %10.3g (%.2fx)   odometer+encoder %10.3g (%.2fx)\n", what[i], r[0][i],
               r[0][i] / r[0][0], r[1][i], r[1][i] / r[1][0]);
    unlink(outp);
    unlink(gtp);
    rmdir(d);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 200000;
    if (n < 4096)
        n = 4096;
    double *t = malloc(n * sizeof *t), *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
    double *ot = malloc(4096 * sizeof *ot), *lla = malloc(3 * 4096 * sizeof *lla);
    double *enu = malloc(3 * 4096 * sizeof *enu), *ov = malloc(3 * 4096 * sizeof *ov);
    double *hd = malloc(4096 * sizeof *hd), *cov = malloc(9 * 4096 * sizeof *cov);
    int8_t *fix = malloc(4096);
    double *u = malloc(n * sizeof *u), *y = malloc(n * sizeof *y), *s = malloc(n * sizeof *s);
    if (!t || !pos || !vel || !ot || !lla || !enu || !ov || !hd || !cov || !fix || !u || !y || !s)
        return 1;
    for (size_t i = 0; i < n; i++) {
        t[i] = 0.1 * (double)i;
        pos[3 * i] = t[i], pos[3 * i + 1] = 0.5 * t[i], pos[3 * i + 2] = 1.0;
        vel[3 * i] = 1.0, vel[3 * i + 1] = 0.5, vel[3 * i + 2] = 0.0;
        u[i] = 0.37 * (double)i;
    }
    sensim_gnss_out o = {ot, NULL, NULL, lla, enu, ov, hd, cov, fix};

    sensim_gnss_params p = sensim_gnss_default_params();
    p.origin_lla[0] = 43.0731, p.origin_lla[1] = -89.4012, p.origin_lla[2] = 260.0;
    p.gauss_on = 1, p.gauss_sigma[0] = p.gauss_sigma[1] = p.gauss_sigma[2] = 0.03;
    double r_gauss = run_gnss(&p, n, t, pos, vel, &o);
    p.rw_on = 1, p.rw_sigma = 0.047, p.rw_max_velocity = 0.016, p.rw_max_acceleration = 0.152;
    p.gm_on = 1, p.gm_sigma[0] = p.gm_sigma[1] = p.gm_sigma[2] = 0.5, p.gm_tau[0] = p.gm_tau[1] = p.gm_tau[2] = 30;
    p.hdop_on = 1, p.cov_model = SENSIM_GNSS_COV_NMEA;
    p.vel_sigma[0] = p.vel_sigma[1] = p.vel_sigma[2] = 0.05;
    p.outage_rate = 0.01, p.outage_mean_duration = 2;
    p.outlier_probability = 0.01, p.outlier_magnitude = 5;
    double r_all = run_gnss(&p, n, t, pos, vel, &o);
    printf("gnss gaussian only:          %10.3g epochs/s (%zu epochs)\n", r_gauss, n);
    printf("gnss all effects (RW 100 Hz): %10.3g epochs/s (%zu epochs, 10 inner RW steps each)\n", r_all, n);

    sensim_encoder_params ep = sensim_encoder_default_params();
    ep.resolution = 0.001, ep.noise_sigma = 0.0005;
    sensim_encoder *e = sensim_encoder_create(&ep, 1, 2);
    sensim_encoder_state est;
    sensim_encoder_reset(e, &est);
    double t0 = bench_now();
    sensim_encoder_apply(e, &est, n, t, u, y, s);
    double r_enc = (double)n / (bench_now() - t0);
    sensim_odometer_params op = sensim_odometer_default_params();
    op.pulses_per_rev = 1024, op.noise_sigma = 0.001, op.slip = 0.02;
    sensim_odometer *od = sensim_odometer_create(&op, 1, 3);
    sensim_odometer_state ost;
    sensim_odometer_reset(od, &ost);
    t0 = bench_now();
    sensim_odometer_apply_speed(od, &ost, n, t, u, y);
    double r_odo = (double)n / (bench_now() - t0);
    printf("encoder (noise + binning + speed): %10.3g samples/s\n", r_enc);
    printf("odometer (speed, ppr, noise):      %10.3g samples/s\n", r_odo);
    sensim_encoder_destroy(e);
    sensim_odometer_destroy(od);
    bench_rigs((double)n / 100.0);
    free(t), free(pos), free(vel), free(ot), free(lla), free(enu), free(ov), free(hd), free(cov), free(fix);
    free(u), free(y), free(s);
    return 0;
}
