/* sensim judge - run the velocity estimator (seed 004's "judge") on a log
 * and write its estimates to /estimates/<name>/. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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
    CLI_OPTS_END};

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
    const cli_to to[] = {CLI_STR("output", &a->out), CLI_FLAG("quiet", &a->quiet), CLI_STR("imu", &a->imu_name),
                         CLI_STR("gnss", &a->gnss_name), CLI_POSITIVE("rate", &a->rate),
                         CLI_POSITIVE("gyro-sigma", &a->gs), CLI_POSITIVE("accel-sigma", &a->as),
                         CLI_POSITIVE("gnss-sigma", &a->ps), {0}};
    int c;
    cli_parser op;
    cli_parse_begin_to(&op, &cmd_judge_spec, to, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
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

    cli_progress prog;
    cli_progress_init(&prog, "judge", quiet);
    sensim_judge_output res = {0};
    sensim_status st = sensim_judge_log_write(in, out, imu_name, gnss_name, align, &o, name, &res, cli_progress_fn,
                                              &prog);
    cli_progress_done(&prog);
    if (st)
        return cli_fail_lib("judge");
    if (!quiet)
        fprintf(stderr, "sensim judge: %zu estimates at %g Hz (%s): IMU %zu used, %zu gated; GNSS %zu used, %zu gated\n",
                res.n, o.rate_hz, sensim_judge_mode_name(o.mode), res.imu_used, res.imu_rejected, res.gnss_used,
                res.gnss_rejected);
    return CLI_OK;
}
