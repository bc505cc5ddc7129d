/* sensim demo: the whole pipeline on the bundled data, each step printed as
 * the command a user would type, then a summary that checks the outputs
 * against what the models promise. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "sensim/gtcursor.h"
#include "sensim/log.h"
#include "sensim/rig.h"

#ifndef SENSIM_DATADIR
#define SENSIM_DATADIR "/usr/local/share/sensim"
#endif

const char cmd_demo_usage[] =
    "usage: sensim demo [--dir DIR] [--data DIR]\n"
    "\n"
    "Runs the pipeline on the bundled presets and prints each step as a command\n"
    "and a summary: a ground-truth circle, an ADIS16448 IMU injected onto it,\n"
    "the measured noise beside the values the datasheet promises, and the\n"
    "same circle seen by each bundled GNSS model with its horizontal error.\n"
    "\n"
    "  --dir DIR    where the files go (default: ./sensim-demo)\n"
    "  --data DIR   the bundled data (default: $SENSIM_DATA, ./data, or the\n"
    "               installed " SENSIM_DATADIR ")\n"
    "  -h, --help   this text\n";

int cmd_trajectory(int argc, char **argv);
int cmd_inject(int argc, char **argv);
int cmd_info(int argc, char **argv);

/* Runs a verb in-process with a NULL-terminated argument list, echoing it. */
static int step(int (*fn)(int, char **), const char *verb, ...)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)verb;
    va_list ap;
    va_start(ap, verb);
    for (char *a = va_arg(ap, char *); a && argc < 31; a = va_arg(ap, char *))
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    printf("\n$ sensim");
    for (int i = 0; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\n");
    fflush(stdout);
    return fn(argc, argv);
}

static int dir_exists(const char *d)
{
    struct stat st;
    return stat(d, &st) == 0 && S_ISDIR(st.st_mode);
}

static const char *find_data(const char *given)
{
    if (given)
        return given;
    const char *env = getenv("SENSIM_DATA");
    if (env && *env)
        return env;
    if (dir_exists("data/rigs"))
        return "data";
    return SENSIM_DATADIR;
}

static double *read_col(const sensim_log *log, const char *dset, size_t *n)
{
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK];
    if (sensim_log_shape(log, dset, &rank, dims))
        return NULL;
    size_t cols = rank > 1 ? dims[1] : 1;
    double *x = malloc(dims[0] * cols * sizeof *x);
    if (x && sensim_log_read_f64(log, dset, 0, dims[0], x)) {
        free(x);
        return NULL;
    }
    *n = dims[0];
    return x;
}

/* Mean and the white-noise sigma from first differences (var(diff)/2),
 * which the slow bias processes barely touch. */
static void stats(const double *x, size_t n, int axis, double *mean, double *sigma)
{
    double m = 0, d = 0;
    for (size_t k = 0; k < n; k++)
        m += x[3 * k + axis];
    m /= n;
    for (size_t k = 1; k < n; k++) {
        double e = x[3 * k + axis] - x[3 * (k - 1) + axis];
        d += e * e;
    }
    *mean = m;
    *sigma = sqrt(d / (2.0 * (n - 1)));
}

/* Step 4: one GNSS track per bundled model on the same circle, and its
 * horizontal error against the ground truth at each delivered stamp. */
static int gnss_step(const char *data, const char *dir, const char *gt)
{
    static const char *const models[][2] = {
        {"gnss-chrono-gauss", "Ch:Gauss, sigma 0.03 m (seed 004)"},
        {"gnss-chrono-rw", "Ch:RW, seed 004's parameters"},
        {"gnss-airsim", "AirSim HDOP low-pass (no position noise)"},
        {"gnss-zed-f9p", "u-blox ZED-F9P RTK datasheet"},
        {"gnss-standalone", "u-blox NEO-M8N standalone datasheet"},
    };
    printf("\n4. The same circle seen by each bundled GNSS model at 10 Hz:");
    char rig[1024], out[1024];
    double err_rms[5], err_max[5], hdop_last[5];
    size_t count[5];
    for (int m = 0; m < 5; m++) {
        snprintf(rig, sizeof rig, "%s/%s.yaml", data, models[m][0]);
        snprintf(out, sizeof out, "%s/%s.h5", dir, models[m][0]);
        if (step(cmd_inject, "inject", rig, gt, "-o", out, NULL))
            return -1;
        /* Delivery stamps trail the sample by the receiver's latency. */
        sensim_rig *r = sensim_rig_load(rig);
        const sensim_sensor *gps = r ? sensim_rig_find(r, "gps") : NULL;
        double lag = gps ? gps->timing.lag : 0.0;
        sensim_rig_free(r);
        sensim_log *truth = sensim_log_open(gt), *log = sensim_log_open(out);
        sensim_gt_cursor *cur = truth ? sensim_gt_cursor_create(truth, 65536) : NULL;
        size_t n = 0, nh = 0;
        double *t = log ? read_col(log, "/sensors/gps/t", &n) : NULL;
        double *enu = log ? read_col(log, "/sensors/gps/enu", &n) : NULL;
        double *hdop = log ? read_col(log, "/sensors/gps/hdop", &nh) : NULL;
        int ok = cur && t && enu && n > 0;
        double s2 = 0, mx = 0;
        size_t used = 0;
        for (size_t k = 0; ok && k < n; k++) {
            sensim_gt_state g;
            double ts = t[k] - lag;
            if (ts > sensim_gt_cursor_t_last(cur))
                break;
            if (sensim_gt_cursor_at(cur, ts, &g)) {
                ok = 0;
                break;
            }
            double de = enu[3 * k] - g.position[0], dn = enu[3 * k + 1] - g.position[1];
            double e = sqrt(de * de + dn * dn);
            s2 += e * e;
            mx = e > mx ? e : mx;
            used++;
        }
        err_rms[m] = used ? sqrt(s2 / used) : NAN;
        err_max[m] = mx;
        hdop_last[m] = hdop && nh ? hdop[nh - 1] : NAN;
        count[m] = n;
        free(t);
        free(enu);
        free(hdop);
        sensim_gt_cursor_destroy(cur);
        sensim_log_close(truth);
        sensim_log_close(log);
        if (!ok)
            return cli_fail_lib("demo");
    }
    printf("\n   %-44s %8s %14s %14s %10s\n", "model", "epochs", "horiz. RMS (m)", "horiz. max (m)",
           "final HDOP");
    for (int m = 0; m < 5; m++)
        printf("   %-44s %8zu %14.4f %14.4f %10.3g\n", models[m][1], count[m], err_rms[m], err_max[m], hdop_last[m]);
    printf("\n   Errors are against the truth when each fix was taken (its delivery\n"
           "   stamp less the receiver's latency), in metres before conversion to\n"
           "   WGS84 (lla in the files). The AirSim model adds no position noise\n"
           "   and reports its HDOP instead.\n");
    return 0;
}

int cmd_demo(int argc, char **argv)
{
    static const struct option opts[] = {{"dir", required_argument, NULL, 'd'},
                                         {"data", required_argument, NULL, 'D'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *dir = "sensim-demo", *data = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 'D': data = optarg; break;
        case 'h': cli_print_help("demo", stdout); return CLI_OK;
        default: return cli_usage_error("demo", "unknown option");
        }
    }
    if (optind != argc)
        return cli_usage_error("demo", "unexpected argument '%s'", argv[optind]);
    data = find_data(data);
    char rig[1024], gt[1024], imu[1024];
    snprintf(rig, sizeof rig, "%s/rigs/imu-adis16448.yaml", data);
    if (access(rig, R_OK) != 0)
        return cli_fail("demo", "%s: cannot read the bundled rig (%s); give --data DIR", rig, strerror(errno));
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return cli_fail("demo", "%s: cannot create the directory: %s", dir, strerror(errno));
    snprintf(gt, sizeof gt, "%s/gt.h5", dir);
    snprintf(imu, sizeof imu, "%s/imu.h5", dir);

    printf("sensim demo: files in %s/, data from %s/\n", dir, data);
    printf("\n1. A ground-truth circle, 10 m radius at 2 m/s for two minutes, 400 Hz:");
    if (step(cmd_trajectory, "trajectory", "--shape", "circle", "--duration", "120", "--rate", "400", "--speed", "2",
             "--radius", "10", "-o", gt, NULL))
        return CLI_FAIL;
    printf("\n2. An ADIS16448 (datasheet figures, EuRoC random walks) sampled at 200 Hz:");
    if (step(cmd_inject, "inject", rig, gt, "-o", imu, NULL))
        return CLI_FAIL;
    if (step(cmd_info, "info", imu, NULL))
        return CLI_FAIL;

    printf("\n3. What the IMU measured, beside what the models promise:\n");
    sensim_log *log = sensim_log_open(imu);
    if (!log)
        return cli_fail_lib("demo");
    size_t n = 0;
    double *w = read_col(log, "/sensors/imu/angular_velocity", &n);
    double *f = read_col(log, "/sensors/imu/specific_force", &n);
    sensim_log_close(log);
    if (!w || !f) {
        free(w);
        free(f);
        return cli_fail_lib("demo");
    }
    /* Datasheet: ARW 0.66 deg/sqrt(h) = 1.92e-4 rad/s/sqrt(Hz); VRW 0.11
     * m/s/sqrt(h) = 1.83e-3 m/s^2/sqrt(Hz); per sample at 200 Hz: N sqrt(200). */
    const double gyro_sd = 0.66 * M_PI / 180 / 60 * sqrt(200), acc_sd = 0.11 / 60 * sqrt(200);
    double m, s;
    printf("   %-34s %14s %14s %14s %14s\n", "quantity", "measured mean", "true value", "white sigma",
           "datasheet");
    stats(w, n, 2, &m, &s);
    printf("   %-34s %14.6f %14.6f %14.3e %14.3e\n", "yaw rate (rad/s), v/r", m, 0.2, s, gyro_sd);
    stats(w, n, 0, &m, &s);
    printf("   %-34s %14.6f %14.6f %14.3e %14.3e\n", "roll rate (rad/s)", m, 0.0, s, gyro_sd);
    stats(f, n, 1, &m, &s);
    printf("   %-34s %14.6f %14.6f %14.3e %14.3e\n", "lateral force (m/s^2), v^2/r", m, 0.4, s, acc_sd);
    stats(f, n, 2, &m, &s);
    printf("   %-34s %14.6f %14.6f %14.3e %14.3e\n", "vertical force (m/s^2), g", m, 9.80665, s, acc_sd);
    printf("\n   %zu samples per axis. Means differ from the truth by the bias\n"
           "   processes (instability and random walk) over two minutes; the white\n"
           "   sigma matches the datasheet's noise density times sqrt(rate).\n",
           n);
    free(w);
    free(f);
    if (gnss_step(data, dir, gt))
        return CLI_FAIL;
    printf("\nDone. Inspect the files with `sensim info`, h5py or HDFView.\n");
    return CLI_OK;
}
