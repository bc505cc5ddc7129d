/* sensim judge - run the velocity estimator (seed 004's "judge") on a log
 * and write its estimates to /estimates/<name>/. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "judge_log.h"
#include "progress.h"
#include "sensim/judge.h"
#include "sensim/log.h"

static const cli_opt cmd_judge_opts[] = {
    {'o', "output", "FILE", "the output log (written to a temporary name, then renamed)"},
    {CLI_NOSHORT('m'), "mode", "MODE", "robot_localization (default; rl) reproduces the EKF of\n"
                                       "seed 004 with its traps; corrected: INS/GNSS with\n"
                                       "position updates, the GNSS covariance and gating"},
    {CLI_NOSHORT('r'), "rate", "HZ", "output rate (default 35)"},
    {CLI_NOSHORT('i'), "imu", "NAME", "the IMU sensor (default: the only type=imu sensor,\n"
                                      "else a group named imu without a type)"},
    {CLI_NOSHORT('g'), "gnss", "NAME", "the GNSS sensor (default: the only type=gnss sensor,\n"
                                       "else a group named gnss or gps without a type)"},
    {CLI_NOSHORT('n'), "name", "NAME", "estimate group name (default judge)"},
    {CLI_NOSHORT('G'), "gyro-sigma", "S", "yaw-rate noise per sample, rad/s (default 0.003)"},
    {CLI_NOSHORT('A'), "accel-sigma", "S", "specific-force noise per sample, m/s^2 (default 0.05)"},
    {CLI_NOSHORT('P'), "gnss-sigma", "S", "GNSS sigma, m, when a fix has no usable covariance (0.5)"},
    {CLI_NOSHORT('N'), "no-align", NULL, "do not start from the ground truth's heading and\n"
                                         "velocity at the first IMU sample"},
    {'q', "quiet", NULL, "no summary line and no progress on stderr"},
    {'h', "help", NULL, "this text"},
    {0}};

const cli_spec cmd_judge_spec = {
    .verb = "judge",
    .head = "usage: sensim judge LOG.h5 -o OUT.h5 [options]\n"
            "\n"
            "Fuses a log's IMU (yaw rate, planar specific force) and GNSS (ENU\n"
            "position) with a planar extended Kalman filter and writes velocity\n"
            "estimates at a fixed rate to OUT.h5 under /estimates/NAME/ (t, velocity,\n"
            "speed), beside a copy of the input's ground truth and sensors. The IMU is\n"
            "taken as mounted level and aligned with the body (x forward, z up).\n"
            "\n"
            "Options:\n",
    .opts = cmd_judge_opts,
    .column = 23,
    .long_flush = 1,
    .tail = "\n"
            "Exit status: 0 success, 1 bad input (the message names file and dataset),\n"
            "2 usage error.\n",
};

/* The output side: the estimate datasets the blocks are appended to. */
typedef struct {
    cli_judge_input *in;
    sensim_log_dset *out[5]; /* t, velocity, speed, position, yaw */
} judge_out;

static sensim_status io_write(void *ctx, const sensim_judge_output *b)
{
    judge_out *io = ctx;
    double *v = io->in->scratch;
    for (size_t k = 0; k < b->n; k++) {
        v[3 * k] = b->velocity[2 * k];
        v[3 * k + 1] = b->velocity[2 * k + 1];
        v[3 * k + 2] = 0; /* planar filter */
    }
    sensim_status st = sensim_log_dset_append(io->out[0], b->t, b->n);
    if (!st)
        st = sensim_log_dset_append(io->out[1], v, b->n);
    if (!st)
        st = sensim_log_dset_append(io->out[2], b->speed, b->n);
    if (!st)
        st = sensim_log_dset_append(io->out[3], b->position, b->n);
    if (!st)
        st = sensim_log_dset_append(io->out[4], b->yaw, b->n);
    return st;
}

/* The command line of judge; parse_args returns -1 to go on, else the
 * exit status. */
typedef struct judge_args {
    const char *in, *out, *imu_name, *gnss_name, *name;
    int mode, align, quiet;
    double rate, gs, as, ps;
} judge_args;

static int parse_args(int argc, char **argv, judge_args *a)
{
    *a = (judge_args){NULL, NULL, NULL, NULL, "judge", SENSIM_JUDGE_ROBOT_LOCALIZATION, 1, 0, 35, NAN, NAN, NAN};
    double *val;
    int c;
    cli_parser op;
    cli_parse_begin(&op, &cmd_judge_spec, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case 'o': a->out = optarg; break;
        case 'q': a->quiet = 1; break;
        case 'i': a->imu_name = optarg; break;
        case 'g': a->gnss_name = optarg; break;
        case 'N': a->align = 0; break;
        case 'n':
            if (!*optarg || strchr(optarg, '/'))
                return cli_usage_error("judge", "--name: '%s' is not a group name", optarg);
            a->name = optarg;
            break;
        case 'm':
            if ((a->mode = sensim_judge_mode_parse(optarg)) < 0)
                return cli_usage_error("judge", "--mode: '%s' is not robot_localization, rl or corrected", optarg);
            break;
        case 'r':
        case 'G':
        case 'A':
        case 'P':
            val = c == 'r' ? &a->rate : c == 'G' ? &a->gs : c == 'A' ? &a->as : &a->ps;
            if (cli_parse_double(optarg, val) || !(*val > 0))
                return cli_usage_error("judge", "%s: '%s' is not a positive number", argv[optind - 1], optarg);
            break;
        }
    }
    if (c)
        return cli_parse_exit(c);
    if (optind + 1 != argc)
        return cli_usage_error("judge", optind >= argc ? "no input log" : "one input log only");
    if (!a->out)
        return cli_usage_error("judge", "no output: -o OUT.h5");
    a->in = argv[optind];
    if (cli_check_output("judge", a->out, a->in, NULL))
        return CLI_FAIL;
    return -1;
}

int cmd_judge(int argc, char **argv)
{
    judge_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char *in = a.in, *out = a.out, *imu_name = a.imu_name, *gnss_name = a.gnss_name, *name = a.name;
    int mode = a.mode, align = a.align, quiet = a.quiet;
    double rate = a.rate, gs = a.gs, as = a.as, ps = a.ps;

    sensim_judge_options o = sensim_judge_default_options((sensim_judge_mode)mode);
    o.rate_hz = rate;
    if (!isnan(gs))
        o.gyro_sigma = gs;
    if (!isnan(as))
        o.accel_sigma = as;
    if (!isnan(ps))
        o.gnss_sigma = ps;

    rc = CLI_OK;
    sensim_status st = SENSIM_OK;
    sensim_log *log = sensim_log_open(in), *w = NULL;
    cli_judge_input ji;
    judge_out io = {.in = &ji};
    sensim_judge_output res = {0};
    char eg[520], d[640];
    const size_t three = 3, two = 2;
    if (!log)
        return cli_fail_lib("judge");
    if ((rc = cli_judge_prepare("judge", log, imu_name, gnss_name, align, &o, &ji))) {
        sensim_log_close(log);
        return rc;
    }
    const char *ig = ji.imu, *gg = ji.gnss;
    if (!(w = sensim_log_create(out, "sensim judge"))) {
        st = sensim_last_status();
        goto fail;
    }
    if (sensim_log_exists(log, "/ground_truth") && (st = sensim_log_copy(w, log, "/ground_truth")))
        goto fail;
    if ((st = sensim_log_copy(w, log, "/sensors")))
        goto fail;
    if (sensim_log_exists(log, "/estimates") && (st = sensim_log_copy(w, log, "/estimates")))
        goto fail;
    snprintf(eg, sizeof eg, "/estimates/%.500s", name);
    if (sensim_log_exists(w, eg)) {
        st = sensim_error(SENSIM_EINVAL, "%s: %s exists already: choose another --name", in, eg);
        goto fail;
    }
    static const char *const what[5] = {"t", "velocity", "speed", "position", "yaw"};
    static const char *const units[5] = {"s", "m/s", "m/s", "m", "rad"};
    for (int k = 0; k < 5; k++) {
        snprintf(d, sizeof d, "%s/%s", eg, what[k]);
        const size_t *tail = k == 1 ? &three : k == 3 ? &two : NULL;
        if (!(io.out[k] = sensim_log_dset_create(w, d, SENSIM_F64, tail ? 1 : 0, tail, units[k], 0))) {
            st = sensim_last_status();
            goto fail;
        }
    }
    cli_progress prog;
    cli_progress_init(&prog, "judge", quiet);
    ji.progress = &prog;
    st = cli_judge_stream(&ji, &o, io_write, &io, &res);
    cli_progress_done(&prog);
    ji.progress = NULL;
    if (st)
        goto fail;
    for (int k = 0; k < 5; k++) {
        sensim_log_dset_close(io.out[k]);
        io.out[k] = NULL;
    }
    const double rates[4] = {o.rate_hz, o.gyro_sigma, o.accel_sigma, o.gnss_sigma};
    if ((st = sensim_log_set_attr_string(w, eg, "judge", sensim_judge_mode_name(o.mode))) ||
        (st = sensim_log_set_attr_string(w, eg, "imu", ig)) || (st = sensim_log_set_attr_string(w, eg, "gnss", gg)) ||
        (st = sensim_log_set_attr_f64(w, eg, "rate_hz", &rates[0], 1)) ||
        (st = sensim_log_set_attr_f64(w, eg, "gyro_sigma", &rates[1], 1)) ||
        (st = sensim_log_set_attr_f64(w, eg, "accel_sigma", &rates[2], 1)) ||
        (st = sensim_log_set_attr_f64(w, eg, "gnss_sigma", &rates[3], 1)))
        goto fail;
    st = sensim_log_commit(w);
    w = NULL;
    if (st)
        goto fail;
    if (!quiet)
        fprintf(stderr, "sensim judge: %zu estimates at %g Hz (%s): IMU %zu used, %zu gated; GNSS %zu used, %zu gated\n",
                res.n, o.rate_hz, sensim_judge_mode_name(o.mode), res.imu_used, res.imu_rejected, res.gnss_used,
                res.gnss_rejected);
    goto done;
fail:
    rc = cli_fail_lib("judge");
done:
    for (int k = 0; k < 5; k++)
        sensim_log_dset_close(io.out[k]);
    sensim_log_close(w);
    sensim_log_close(log);
    cli_judge_input_free(&ji);
    return rc;
}
