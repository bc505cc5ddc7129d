/* sensim judge - run the velocity estimator (seed 004's "judge") on a log
 * and write its estimates to /estimates/<name>/. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sensim/judge.h"
#include "sensim/log.h"

const char cmd_judge_usage[] =
    "usage: sensim judge LOG.h5 -o OUT.h5 [options]\n"
    "\n"
    "Fuses a log's IMU (yaw rate, planar specific force) and GNSS (ENU\n"
    "position) with a planar extended Kalman filter and writes velocity\n"
    "estimates at a fixed rate to OUT.h5 under /estimates/NAME/ (t, velocity,\n"
    "speed), beside a copy of the input's ground truth and sensors. The IMU is\n"
    "taken as mounted level and aligned with the body (x forward, z up).\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE    the output log (written to a temporary name, then renamed)\n"
    "  --mode MODE          robot_localization (default; rl) reproduces the EKF of\n"
    "                       seed 004 with its traps; corrected: INS/GNSS with\n"
    "                       position updates, the GNSS covariance and gating\n"
    "  --rate HZ            output rate (default 35)\n"
    "  --imu NAME           the IMU sensor (default: the only type=imu sensor)\n"
    "  --gnss NAME          the GNSS sensor (default: the only type=gnss sensor)\n"
    "  --name NAME          estimate group name (default judge)\n"
    "  --gyro-sigma S       yaw-rate noise per sample, rad/s (default 0.003)\n"
    "  --accel-sigma S      specific-force noise per sample, m/s^2 (default 0.05)\n"
    "  --gnss-sigma S       GNSS sigma, m, when a fix has no usable covariance (0.5)\n"
    "  --no-align           do not start from the ground truth's heading and\n"
    "                       velocity at the first IMU sample\n"
    "  -h, --help           this text\n"
    "\n"
    "Exit status: 0 success, 1 bad input (the message names file and dataset),\n"
    "2 usage error.\n";

/* Reads a whole dataset of shape [n, cols] (cols 0: a vector). */
static sensim_status read_all(const sensim_log *log, const char *d, size_t cols, double **out, size_t *n)
{
    sensim_status st = sensim_log_check_shape(log, d, cols ? 1 : 0, cols ? &cols : NULL, n);
    if (st)
        return st;
    size_t w = cols ? cols : 1;
    *out = malloc((*n ? *n : 1) * w * sizeof **out);
    if (!*out)
        return sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory", sensim_log_path(log), d);
    if (*n && (st = sensim_log_read_f64(log, d, 0, *n, *out))) {
        free(*out);
        *out = NULL;
    }
    return st;
}

/* The sensor of a type: the named one (checked), or the only one. */
static int find_sensor(const sensim_log *log, const char *type, const char *want, char *group, size_t size)
{
    const char *path = sensim_log_path(log);
    if (want) {
        snprintf(group, size, "/sensors/%s", want);
        if (!sensim_log_exists(log, group))
            return cli_fail("judge", "%s: no sensor %s", path, group);
        return CLI_OK;
    }
    char **names = NULL;
    size_t n = 0, found = 0;
    if (sensim_log_exists(log, "/sensors") && sensim_log_list(log, "/sensors", &names, &n))
        return cli_fail_lib("judge");
    for (size_t i = 0; i < n; i++) {
        char g[512], *t = NULL;
        snprintf(g, sizeof g, "/sensors/%s", names[i]);
        if (sensim_log_has_attr(log, g, "type") && !sensim_log_get_attr_string(log, g, "type", &t) &&
            !strcmp(t, type)) {
            if (!found++)
                snprintf(group, size, "%s", g);
        }
        free(t);
    }
    sensim_log_free_names(names, n);
    if (found == 0)
        return cli_fail("judge", "%s: no %s sensor under /sensors (a group with attribute type=\"%s\")", path, type,
                        type);
    if (found > 1)
        return cli_fail("judge", "%s: %zu %s sensors under /sensors: choose one with --%s NAME", path, found, type,
                        !strcmp(type, "imu") ? "imu" : "gnss");
    return CLI_OK;
}

/* Heading and velocity from the ground truth at time t (nearest sample at
 * or after t): the "aligned start" of a vehicle that knows where it points. */
static sensim_status align_from_gt(const sensim_log *log, double t, double state[SENSIM_JUDGE_NSTATE])
{
    double *gt = NULL, *q = NULL, *v = NULL, *p = NULL;
    size_t n, n2, n3, n4;
    sensim_status st = read_all(log, "/ground_truth/t", 0, &gt, &n);
    if (!st)
        st = read_all(log, "/ground_truth/orientation", 4, &q, &n2);
    if (!st)
        st = read_all(log, "/ground_truth/velocity", 3, &v, &n3);
    if (!st)
        st = read_all(log, "/ground_truth/position", 3, &p, &n4);
    if (!st && (n == 0 || n2 != n || n3 != n || n4 != n))
        st = sensim_error(SENSIM_EFORMAT, "%s: /ground_truth: datasets of different lengths",
                          sensim_log_path(log));
    if (!st) {
        size_t k = 0;
        while (k + 1 < n && gt[k] < t)
            k++;
        const double *qq = q + 4 * k;
        /* yaw of (w, x, y, z) rotating body into ENU */
        state[4] = atan2(2 * (qq[0] * qq[3] + qq[1] * qq[2]), 1 - 2 * (qq[2] * qq[2] + qq[3] * qq[3]));
        state[0] = p[3 * k];
        state[1] = p[3 * k + 1];
        state[2] = v[3 * k];
        state[3] = v[3 * k + 1];
    }
    free(gt);
    free(q);
    free(v);
    free(p);
    return st;
}

int cmd_judge(int argc, char **argv)
{
    static const struct option lo[] = {
        {"output", required_argument, NULL, 'o'},      {"mode", required_argument, NULL, 'm'},
        {"rate", required_argument, NULL, 'r'},        {"imu", required_argument, NULL, 'i'},
        {"gnss", required_argument, NULL, 'g'},        {"name", required_argument, NULL, 'n'},
        {"gyro-sigma", required_argument, NULL, 'G'},  {"accel-sigma", required_argument, NULL, 'A'},
        {"gnss-sigma", required_argument, NULL, 'P'},  {"no-align", no_argument, NULL, 'N'},
        {"quiet", no_argument, NULL, 'q'},             {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *imu_name = NULL, *gnss_name = NULL, *name = "judge";
    int mode = SENSIM_JUDGE_ROBOT_LOCALIZATION, align = 1, quiet = 0;
    double rate = 35, gs = NAN, as = NAN, ps = NAN, *val;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:qh", lo, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'q': quiet = 1; break;
        case 'i': imu_name = optarg; break;
        case 'g': gnss_name = optarg; break;
        case 'N': align = 0; break;
        case 'n':
            if (!*optarg || strchr(optarg, '/'))
                return cli_usage_error("judge", "--name: '%s' is not a group name", optarg);
            name = optarg;
            break;
        case 'm':
            if ((mode = sensim_judge_mode_parse(optarg)) < 0)
                return cli_usage_error("judge", "--mode: '%s' is not robot_localization, rl or corrected", optarg);
            break;
        case 'r':
        case 'G':
        case 'A':
        case 'P':
            val = c == 'r' ? &rate : c == 'G' ? &gs : c == 'A' ? &as : &ps;
            if (cli_parse_double(optarg, val) || !(*val > 0))
                return cli_usage_error("judge", "%s: '%s' is not a positive number", argv[optind - 1], optarg);
            break;
        case 'h': cli_print_help("judge", stdout); return CLI_OK;
        case ':': return cli_usage_error("judge", "option '%s' needs a value", argv[optind - 1]);
        default: return cli_usage_error("judge", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind + 1 != argc)
        return cli_usage_error("judge", optind >= argc ? "no input log" : "one input log only");
    if (!out)
        return cli_usage_error("judge", "no output: -o OUT.h5");
    const char *in = argv[optind];

    sensim_judge_options o = sensim_judge_default_options((sensim_judge_mode)mode);
    o.rate_hz = rate;
    if (!isnan(gs))
        o.gyro_sigma = gs;
    if (!isnan(as))
        o.accel_sigma = as;
    if (!isnan(ps))
        o.gnss_sigma = ps;

    int rc = CLI_OK;
    sensim_status st = SENSIM_OK;
    sensim_log *log = sensim_log_open(in), *w = NULL;
    double *it = NULL, *iw = NULL, *isf = NULL, *gt = NULL, *genu = NULL, *gcov = NULL, *buf = NULL;
    double *yr = NULL, *fx = NULL, *fy = NULL;
    sensim_judge_output res = {0};
    char ig[512], gg[512], d[640];
    size_t ni, n2, n3, ng = 0, ng2, ng3;
    if (!log)
        return cli_fail_lib("judge");
    if ((rc = find_sensor(log, "imu", imu_name, ig, sizeof ig)) ||
        (rc = find_sensor(log, "gnss", gnss_name, gg, sizeof gg)))
        goto done;
#define READ(dst, cols, nn, fmt, grp)                        \
    snprintf(d, sizeof d, fmt, grp);                         \
    if ((st = read_all(log, d, cols, &dst, &nn)))            \
        goto fail;
    READ(it, 0, ni, "%s/t", ig);
    READ(iw, 3, n2, "%s/angular_velocity", ig);
    READ(isf, 3, n3, "%s/specific_force", ig);
    if (n2 != ni || n3 != ni) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: t, angular_velocity and specific_force differ in length (%zu, %zu, %zu)",
                          in, ig, ni, n2, n3);
        goto fail;
    }
    READ(gt, 0, ng, "%s/t", gg);
    READ(genu, 3, ng2, "%s/enu", gg);
    if (ng2 != ng) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s/enu has %zu rows, t has %zu", in, gg, ng2, ng);
        goto fail;
    }
    snprintf(d, sizeof d, "%s/position_covariance", gg);
    if (sensim_log_exists(log, d)) {
        READ(gcov, 9, ng3, "%s/position_covariance", gg);
        if (ng3 != ng) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows, t has %zu", in, d, ng3, ng);
            goto fail;
        }
    }
#undef READ
    yr = malloc((ni ? ni : 1) * 3 * sizeof *yr);
    if (!yr) {
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
        goto fail;
    }
    fx = yr + ni;
    fy = fx + ni;
    for (size_t k = 0; k < ni; k++) {
        yr[k] = iw[3 * k + 2];
        fx[k] = isf[3 * k];
        fy[k] = isf[3 * k + 1];
    }
    if (align && ni && sensim_log_exists(log, "/ground_truth")) {
        if ((st = align_from_gt(log, it[0], o.initial_state)))
            goto fail;
        o.have_initial = 1;
        /* Known heading and velocity, position from the receiver's accuracy. */
        o.initial_sd[0] = o.initial_sd[1] = 1.0;
    }
    sensim_judge_imu imu = {ni, it, yr, fx, fy};
    sensim_judge_gnss gnss = {ng, gt, genu, 3, gcov};
    if ((st = sensim_judge_run(&o, &imu, &gnss, &res))) {
        sensim_error_prefix(st, "%s", in);
        goto fail;
    }
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
    char eg[520];
    snprintf(eg, sizeof eg, "/estimates/%.500s", name);
    if (sensim_log_exists(w, eg)) {
        st = sensim_error(SENSIM_EINVAL, "%s: %s exists already: choose another --name", in, eg);
        goto fail;
    }
    buf = malloc(3 * res.n * sizeof *buf + 1);
    if (!buf) {
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t k = 0; k < res.n; k++) {
        buf[3 * k] = res.velocity[2 * k];
        buf[3 * k + 1] = res.velocity[2 * k + 1];
        buf[3 * k + 2] = 0; /* planar filter */
    }
    size_t three = 3, two = 2;
    snprintf(d, sizeof d, "%s/t", eg);
    if ((st = sensim_log_write(w, d, SENSIM_F64, res.n, 0, NULL, res.t, "s")))
        goto fail;
    snprintf(d, sizeof d, "%s/velocity", eg);
    if ((st = sensim_log_write(w, d, SENSIM_F64, res.n, 1, &three, buf, "m/s")))
        goto fail;
    snprintf(d, sizeof d, "%s/speed", eg);
    if ((st = sensim_log_write(w, d, SENSIM_F64, res.n, 0, NULL, res.speed, "m/s")))
        goto fail;
    snprintf(d, sizeof d, "%s/position", eg);
    if ((st = sensim_log_write(w, d, SENSIM_F64, res.n, 1, &two, res.position, "m")))
        goto fail;
    snprintf(d, sizeof d, "%s/yaw", eg);
    if ((st = sensim_log_write(w, d, SENSIM_F64, res.n, 0, NULL, res.yaw, "rad")))
        goto fail;
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
    sensim_log_close(w);
    sensim_log_close(log);
    sensim_judge_output_free(&res);
    free(it);
    free(iw);
    free(isf);
    free(gt);
    free(genu);
    free(gcov);
    free(yr);
    free(buf);
    return rc;
}
