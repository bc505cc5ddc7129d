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

/* Rows read or written per block: memory stays bounded for logs of any
 * length (the results do not depend on it). */
#define JUDGE_BLOCK 65536

/* The log's IMU and GNSS datasets read in blocks for sensim_judge_stream,
 * and the estimate datasets the outputs are appended to. */
typedef struct {
    const sensim_log *log;
    char it[520], iw[560], isf[560], gt[520], genu[560], gcov[580];
    double *scratch; /* JUDGE_BLOCK * 9 */
    sensim_log_dset *out[5]; /* t, velocity, speed, position, yaw */
} judge_io;

static sensim_status io_read_imu(void *ctx, size_t row0, size_t n, double *t, double *w, double *fx, double *fy)
{
    judge_io *io = ctx;
    double *v = io->scratch;
    sensim_status st = sensim_log_read_f64(io->log, io->it, row0, n, t);
    if (!st && !(st = sensim_log_read_f64(io->log, io->iw, row0, n, v)))
        for (size_t k = 0; k < n; k++)
            w[k] = v[3 * k + 2];
    if (!st && !(st = sensim_log_read_f64(io->log, io->isf, row0, n, v)))
        for (size_t k = 0; k < n; k++) {
            fx[k] = v[3 * k];
            fy[k] = v[3 * k + 1];
        }
    return st;
}

static sensim_status io_read_gnss(void *ctx, size_t row0, size_t n, double *t, double *enu2, double *cov9)
{
    judge_io *io = ctx;
    double *v = io->scratch;
    sensim_status st = sensim_log_read_f64(io->log, io->gt, row0, n, t);
    if (!st && !(st = sensim_log_read_f64(io->log, io->genu, row0, n, v)))
        for (size_t k = 0; k < n; k++) {
            enu2[2 * k] = v[3 * k];
            enu2[2 * k + 1] = v[3 * k + 1];
        }
    if (!st && cov9)
        st = sensim_log_read_f64(io->log, io->gcov, row0, n, cov9);
    return st;
}

static sensim_status io_write(void *ctx, const sensim_judge_output *b)
{
    judge_io *io = ctx;
    double *v = io->scratch;
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
 * or after t, else the last): the "aligned start" of a vehicle that knows
 * where it points. The times are searched block by block. */
static sensim_status align_from_gt(const sensim_log *log, double t, double *scratch,
                                   double state[SENSIM_JUDGE_NSTATE])
{
    const size_t three = 3, four = 4;
    size_t n, n2, n3, n4, k = 0;
    sensim_status st = sensim_log_check_shape(log, "/ground_truth/t", 0, NULL, &n);
    if (!st)
        st = sensim_log_check_shape(log, "/ground_truth/orientation", 1, &four, &n2);
    if (!st)
        st = sensim_log_check_shape(log, "/ground_truth/velocity", 1, &three, &n3);
    if (!st)
        st = sensim_log_check_shape(log, "/ground_truth/position", 1, &three, &n4);
    if (!st && (n == 0 || n2 != n || n3 != n || n4 != n))
        st = sensim_error(SENSIM_EFORMAT, "%s: /ground_truth: datasets of different lengths",
                          sensim_log_path(log));
    for (size_t r0 = 0, found = 0; !st && !found && r0 < n; r0 += JUDGE_BLOCK) {
        size_t m = n - r0 < JUDGE_BLOCK ? n - r0 : JUDGE_BLOCK;
        if ((st = sensim_log_read_f64(log, "/ground_truth/t", r0, m, scratch)))
            break;
        for (size_t i = 0; i < m && !found; i++) {
            k = r0 + i;
            found = !(k + 1 < n && scratch[i] < t);
        }
    }
    double q[4], v[3], p[3];
    if (!st)
        st = sensim_log_read_f64(log, "/ground_truth/orientation", k, 1, q);
    if (!st)
        st = sensim_log_read_f64(log, "/ground_truth/velocity", k, 1, v);
    if (!st)
        st = sensim_log_read_f64(log, "/ground_truth/position", k, 1, p);
    if (!st) {
        /* yaw of (w, x, y, z) rotating body into ENU */
        state[4] = atan2(2 * (q[0] * q[3] + q[1] * q[2]), 1 - 2 * (q[2] * q[2] + q[3] * q[3]));
        state[0] = p[0];
        state[1] = p[1];
        state[2] = v[0];
        state[3] = v[1];
    }
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
    judge_io io = {.log = log};
    sensim_judge_output res = {0};
    char ig[512], gg[512], eg[520], d[640];
    const size_t three = 3, nine = 9, two = 2;
    size_t ni, n2, n3, ng = 0, ng2, ng3;
    if (!log)
        return cli_fail_lib("judge");
    if ((rc = find_sensor(log, "imu", imu_name, ig, sizeof ig)) ||
        (rc = find_sensor(log, "gnss", gnss_name, gg, sizeof gg)))
        goto done;
    snprintf(io.it, sizeof io.it, "%s/t", ig);
    snprintf(io.iw, sizeof io.iw, "%s/angular_velocity", ig);
    snprintf(io.isf, sizeof io.isf, "%s/specific_force", ig);
    snprintf(io.gt, sizeof io.gt, "%s/t", gg);
    snprintf(io.genu, sizeof io.genu, "%s/enu", gg);
    snprintf(io.gcov, sizeof io.gcov, "%s/position_covariance", gg);
    if ((st = sensim_log_check_shape(log, io.it, 0, NULL, &ni)) ||
        (st = sensim_log_check_shape(log, io.iw, 1, &three, &n2)) ||
        (st = sensim_log_check_shape(log, io.isf, 1, &three, &n3)))
        goto fail;
    if (n2 != ni || n3 != ni) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: t, angular_velocity and specific_force differ in length (%zu, %zu, %zu)",
                          in, ig, ni, n2, n3);
        goto fail;
    }
    if ((st = sensim_log_check_shape(log, io.gt, 0, NULL, &ng)) ||
        (st = sensim_log_check_shape(log, io.genu, 1, &three, &ng2)))
        goto fail;
    if (ng2 != ng) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s/enu has %zu rows, t has %zu", in, gg, ng2, ng);
        goto fail;
    }
    int has_cov = sensim_log_exists(log, io.gcov);
    if (has_cov) {
        if ((st = sensim_log_check_shape(log, io.gcov, 1, &nine, &ng3)))
            goto fail;
        if (ng3 != ng) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows, t has %zu", in, io.gcov, ng3, ng);
            goto fail;
        }
    }
    if (!(io.scratch = malloc(JUDGE_BLOCK * 9 * sizeof *io.scratch))) {
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
        goto fail;
    }
    if (align && ni && sensim_log_exists(log, "/ground_truth")) {
        double t0;
        if ((st = sensim_log_read_f64(log, io.it, 0, 1, &t0)) ||
            (st = align_from_gt(log, t0, io.scratch, o.initial_state)))
            goto fail;
        o.have_initial = 1;
        /* Known heading and velocity, position from the receiver's accuracy. */
        o.initial_sd[0] = o.initial_sd[1] = 1.0;
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
    sensim_judge_source src = {ni, ng, has_cov, &io, io_read_imu, io_read_gnss};
    if ((st = sensim_judge_stream(&o, &src, JUDGE_BLOCK, io_write, &io, &res))) {
        sensim_error_prefix(st, "%s", in);
        goto fail;
    }
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
    free(io.scratch);
    return rc;
}
