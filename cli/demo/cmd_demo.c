/* sensim demo: the whole pipeline on the bundled data, each step printed as
 * the command a user would type, then a summary that checks the outputs
 * against what the models promise. Each later step lives in its own
 * cli/demo/demo_<part>.c and is listed in demo_steps below. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "demo.h"
#include "sensim/log.h"

#ifndef SENSIM_DATADIR
#define SENSIM_DATADIR "/usr/local/share/sensim"
#endif

static const cli_opt cmd_demo_opts[] = {
    {CLI_NOSHORT('d'), "dir", "DIR", "where the files go (default: ./sensim-demo)"},
    {CLI_NOSHORT('D'), "data", "DIR", "the bundled data (default: $SENSIM_DATA, ./data, the\n"
                                      "program's ../share/sensim, or " SENSIM_DATADIR ")"},
    CLI_OPTS_END};

const cli_spec cmd_demo_spec = {
    .verb = "demo",
    .head = "usage: sensim demo [--dir DIR] [--data DIR]\n"
            "\n"
            "Runs the pipeline on the bundled presets, printing each step as the\n"
            "command a user would type, then a summary checked against the models:\n"
            "  - a ground-truth circle and an ADIS16448 IMU injected onto it, its\n"
            "    measured noise beside the datasheet's values;\n"
            "  - an hour of the IMU lying still, its white noise N, bias instability B\n"
            "    and rate random walk K fitted back (sensim fit imu) beside the rig's\n"
            "    values;\n"
            "  - the circle seen by each bundled GNSS model, with its horizontal error;\n"
            "  - GNSS noise fitted back from 15-minute standstill logs of the Ch:RW\n"
            "    and NEO-M8N (Gauss-Markov + white + outliers) presets, beside the\n"
            "    presets' values;\n"
            "  - seed 004's GNSS experiment at a small size: five GNSS models ranked\n"
            "    by VEPD against \"real\" logs from Ch:Gauss and then from Ch:RW;\n"
            "  - a camera frame through the EMVA 1288 chain (PNG) and the photon-\n"
            "    transfer fit of a simulated flat-field stack beside the true values;\n"
            "  - a lidar scan and a camera frame of the bundled outdoor scene (a PNG\n"
            "    of each: a bird's-eye view of the scan, the image), and the scan\n"
            "    again with the VLP-16's datasheet range noise.\n"
            "\n",
    .opts = cmd_demo_opts,
    .column = 15,
    .long_flush = 1,
};

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

/* The steps after the IMU summary, in order, each printed under its heading
 * (the camera's goes on to say what it simulates): each gets the data
 * folder, the output folder and the step-1 ground truth, and returns 0 or -1
 * (error printed). */
static const struct {
    const char *heading;
    int (*run)(const char *data, const char *dir, const char *gt);
} demo_steps[] = {
    {"Calibration: an hour of the same IMU lying still, and its noise\n"
     "   terms fitted back from the Allan deviation:",
     demo_imufit},
    {"The same circle seen by each bundled GNSS model at 10 Hz:", demo_gnss},
    {"GNSS noise fitted back from 15 minutes standing still (sensim fit gnss):", demo_gnssfit},
    {"Seed 004's GNSS experiment in simulation: \"real\" logs from one model,\n"
     "   simulated logs from all five, ranked by VEPD (small: 2 tests of 20 s per scenario):",
     demo_sim2real},
    {"A 16-bit camera through the EMVA 1288 chain (K 0.25 DN/e-, read noise\n"
     "   8 e-, dark current 300 e-/s, PRNU 1 %, DSNU 5 e-, full well 30000 e-):\n",
     demo_camera},
    {"One lidar scan and one camera frame of the bundled outdoor scene\n"
     "   from the start of the circle, with a PNG of each:",
     demo_render},
};

int cmd_demo(int argc, char **argv)
{
    const char *dir = "sensim-demo", *data = NULL;
    const cli_to to[] = {CLI_STR("dir", &dir), CLI_STR("data", &data), {0}};
    int c = cli_parse_all(&cmd_demo_spec, to, argc, argv);
    if (c)
        return cli_parse_exit(c);
    if (optind != argc)
        return cli_usage_error("demo", "unexpected argument '%s'", argv[optind]);
    data = demo_find_data(data);
    const char *rig = DEMO_PATH(data, "rigs/imu-adis16448.yaml");
    if (access(rig, R_OK) != 0)
        return cli_fail("demo", "%s: cannot read the bundled rig (%s); give --data DIR", rig, strerror(errno));
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return cli_fail("demo", "%s: cannot create the directory: %s", dir, strerror(errno));
    const char *gt = DEMO_PATH(dir, "gt.h5");
    const char *imu = DEMO_PATH(dir, "imu.h5");

    printf("sensim demo: files in %s/, data from %s/\n", dir, data);
    demo_heading("A ground-truth circle, 10 m radius at 2 m/s for two minutes, 400 Hz:");
    if (demo_run(cmd_trajectory, "trajectory", "--shape", "circle", "--duration", "120", "--rate", "400", "--speed", "2",
             "--radius", "10", "-o", gt, NULL))
        return CLI_FAIL;
    demo_heading("An ADIS16448 (datasheet figures, EuRoC random walks) sampled at 200 Hz:");
    if (demo_run(cmd_inject, "inject", rig, gt, "-o", imu, NULL))
        return CLI_FAIL;
    if (demo_run(cmd_info, "info", imu, NULL))
        return CLI_FAIL;

    demo_heading("What the IMU measured, beside what the models promise:\n");
    sensim_log *log = sensim_log_open(imu);
    if (!log)
        return cli_fail_lib("demo");
    size_t n = 0;
    double *w = demo_read_col(log, "/sensors/imu/angular_velocity", &n);
    double *f = demo_read_col(log, "/sensors/imu/specific_force", &n);
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
    /* Later steps, in order; each prints its own summary. */
    for (size_t i = 0; i < sizeof demo_steps / sizeof demo_steps[0]; i++) {
        demo_heading("%s", demo_steps[i].heading);
        if (demo_steps[i].run(data, dir, gt))
            return CLI_FAIL;
    }
    printf("\nDone. Inspect the files with `sensim info`, h5py or HDFView.\n");
    return CLI_OK;
}
