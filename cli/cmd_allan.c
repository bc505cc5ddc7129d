/* sensim allan: Allan-family deviations with confidence intervals of a CSV
 * column or an HDF5 sensor, as a table, CSV, JSON and an SVG plot. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "bagcli.h"
#include "cli_series.h"
#include "series_stream.h"
#include "sensim/allan.h"
#include "sensim/plot.h"

static const cli_opt cmd_allan_opts[] = {
    {'i', "input", "FILE", "CSV or HDF5 log"},
    {'r', "rate", "HZ", "sample rate (required for CSV; HDF5 default: the\n"
                        "sensor's rate_hz, checked against its timestamps)"},
    {'d', "data", "KIND", "freq: rate samples (rad/s, m/s^2, fractional frequency;\n"
                          "default); phase: integrated samples (rad, s)"},
    {'D', "dev", "DEV", "adev, oadev (default), mdev, hdev, ohdev, tdev, totdev"},
    {'t', "taus", "GRID", "octave (default), decade (1,2,4 per decade), all, or\n"
                          "log:N (N log-spaced points per decade)"},
    {'c', "confidence", "P", "two-sided level of the intervals (default 0.683)"},
    {CLI_NOSHORT('C'), "csv", NULL, "print CSV: tau,dev,lo,hi,n (axis,tau,... for 3 axes)"},
    {CLI_NOSHORT('J'), "json", NULL, "print JSON with edf and noise type per point"},
    {'p', "plot", "OUT.svg", "write a log-log plot with the confidence bars"},
    {'s', "sensor", "NAME", "read /sensors/NAME of an HDF5 log"},
    {'T', "topic", "TOPIC", "read a topic of a recording (rate: the median interval\n"
                            "of its stamps, or --rate checked against them)"},
    {'q', "quantity", "Q", "angular_velocity (default), specific_force,\n"
                           "magnetic_field, or imu: the first two together,\n"
                           "six axes in one call (gyro_x..accel_z)"},
    {'k', "column", "K", "CSV column to read, from 1 (default 1)"},
    CLI_OPTS_END};

const cli_spec cmd_allan_spec = {
    .verb = "allan",
    .head = "usage: sensim allan --input FILE [--rate HZ] [--data freq|phase] [--dev DEV]\n"
            "                    [--taus GRID] [--confidence P] [--csv | --json] [--plot OUT.svg]\n"
            "                    [--sensor NAME [--quantity Q]] [--topic TOPIC] [--column K]\n"
            "\n"
            "Allan-family deviations with chi-squared confidence intervals (NIST SP 1065).\n"
            "Input is one column of numbers (CSV, '#' comments allowed) or, with --sensor,\n"
            "the 3-axis quantity of /sensors/NAME in a sensim HDF5 log, or, with --topic,\n"
            "that of a sensor_msgs/Imu or MagneticField topic of a ROS 1 bag or rosbag2\n"
            "recording (messages in header-stamp order, as 'sensim import' reads them).\n"
            "\n",
    .opts = cmd_allan_opts,
    .column = 24,
    .tail = "\n"
            "All six axes of an IMU (gyro then accel) in one call, each dataset read once:\n"
            "  sensim allan LOG.h5 --sensor imu --quantity imu [--taus log:10] [--csv]\n"
            "A log or recording is streamed from disk: memory stays under about 140 MB\n"
            "whatever its length (SENSIM_ALLAN_MB sets the budget, default 112 MiB);\n"
            "beyond the budget the phase is kept in a temporary file in TMPDIR (8 bytes\n"
            "per sample and axis: 4.1 GB for 24 h of 6 axes at 1 kHz) while it is used.\n"
            "\n"
            "Without --csv or --json a table is printed. Exit status: 0 success,\n"
            "1 failure (bad or too short data, unreadable file), 2 usage error.\n",
};

/* Three axes are x, y, z; the six of --quantity imu are gyro then accel. */
static const char *const axis3[3] = {"x", "y", "z"};
static const char *const axis6[6] = {"gyro_x", "gyro_y", "gyro_z", "accel_x", "accel_y", "accel_z"};
#define axis_names (naxes == 6 ? axis6 : axis3)

static void print_table(FILE *f, const sensim_allan_opts *o, const sensim_allan_point *p, size_t nm, size_t naxes)
{
    static const char *const alpha_names[] = {"RW FM", "FL FM", "W FM", "FL PM", "W PM"};
    fprintf(f, "# %s of %s data, tau0 = %g s, %.1f%% intervals\n", sensim_allan_dev_name(o->dev),
            o->data == SENSIM_ALLAN_FREQ ? "rate" : "phase", o->tau0, 100 * o->confidence);
    for (size_t a = 0; a < naxes; a++) {
        if (naxes > 1)
            fprintf(f, "# axis %s\n", axis_names[a]);
        fprintf(f, "%8s %12s %12s %12s %12s %9s %8s  %s\n", "m", "tau", "lo", "dev", "hi", "n", "edf", "noise");
        for (size_t k = 0; k < nm; k++) {
            const sensim_allan_point *q = &p[a * nm + k];
            int ai = q->alpha + 2;
            fprintf(f, "%8zu %12.5e %12.5e %12.5e %12.5e %9zu %8.1f  %s\n", q->m, q->tau, q->lo, q->dev, q->hi, q->n,
                    q->edf,
                    q->alpha == SENSIM_ALLAN_ALPHA_UNKNOWN ? "unknown"
                    : ai >= 0 && ai <= 4                   ? alpha_names[ai]
                                                           : "other");
        }
    }
}

static void print_csv(FILE *f, const sensim_allan_point *p, size_t nm, size_t naxes)
{
    fprintf(f, naxes > 1 ? "axis,tau,dev,lo,hi,n\n" : "tau,dev,lo,hi,n\n");
    for (size_t a = 0; a < naxes; a++)
        for (size_t k = 0; k < nm; k++) {
            const sensim_allan_point *q = &p[a * nm + k];
            if (naxes > 1)
                fprintf(f, "%s,", axis_names[a]);
            fprintf(f, "%.10g,%.10g,%.10g,%.10g,%zu\n", q->tau, q->dev, q->lo, q->hi, q->n);
        }
}

static void print_json(FILE *f, const sensim_allan_opts *o, const sensim_allan_point *p, size_t nm, size_t naxes,
                       const char *units)
{
    fprintf(f, "{\"dev\": \"%s\", \"data\": \"%s\", \"tau0\": %s, \"confidence\": %s, \"units\": ",
            sensim_allan_dev_name(o->dev), o->data == SENSIM_ALLAN_FREQ ? "freq" : "phase", CLI_JSON_G(o->tau0, 17),
            CLI_JSON_G(o->confidence, 6));
    cli_json_str(f, units);
    fputs(", \"axes\": [", f);
    for (size_t a = 0; a < naxes; a++) {
        fprintf(f, "%s{\"axis\": \"%s\", \"points\": [", a ? ", " : "", naxes > 1 ? axis_names[a] : "");
        for (size_t k = 0; k < nm; k++) {
            const sensim_allan_point *q = &p[a * nm + k];
            fprintf(f,
                    "%s{\"m\": %zu, \"tau\": %s, \"dev\": %s, \"lo\": %s, \"hi\": %s, \"n\": %zu, "
                    "\"edf\": %s, \"alpha\": ",
                    k ? ", " : "", q->m, CLI_JSON_G(q->tau, 10), CLI_JSON_G(q->dev, 10), CLI_JSON_G(q->lo, 10),
                    CLI_JSON_G(q->hi, 10), q->n, CLI_JSON_G(q->edf, 6));
            if (q->alpha == SENSIM_ALLAN_ALPHA_UNKNOWN)
                fputs("null, \"alpha_note\": \"too few averaged points to identify the noise; the interval uses the "
                      "smallest EDF of any type\"",
                      f);
            else
                fprintf(f, "%d", q->alpha);
            if (!isfinite(q->lo) || !isfinite(q->hi))
                fputs(", \"ci_note\": \"no finite confidence bound at this tau (too few degrees of freedom)\"", f);
            fputc('}', f);
        }
        fputs("]}", f);
    }
    fputs("]}\n", f);
}

static sensim_status write_plot(const char *path, const sensim_allan_opts *o, const sensim_allan_point *p, size_t nm,
                                size_t naxes, const char *what, const char *units)
{
    char title[400], ylab[96];
    snprintf(title, sizeof title, "%s of %s", sensim_allan_dev_name(o->dev), what);
    snprintf(ylab, sizeof ylab, "%s%s%s%s", sensim_allan_dev_name(o->dev), *units ? " (" : "", units, *units ? ")" : "");
    sensim_plot *pl = sensim_plot_create(title, "tau (s)", ylab);
    if (!pl)
        return sensim_last_status();
    double *buf = malloc(4 * nm * sizeof *buf);
    sensim_status st = buf ? SENSIM_OK : sensim_error(SENSIM_ENOMEM, "out of memory");
    for (size_t a = 0; a < naxes && !st; a++) {
        double *t = buf, *d = buf + nm, *lo = buf + 2 * nm, *hi = buf + 3 * nm;
        for (size_t k = 0; k < nm; k++) {
            t[k] = p[a * nm + k].tau;
            d[k] = p[a * nm + k].dev;
            lo[k] = p[a * nm + k].lo;
            hi[k] = p[a * nm + k].hi;
        }
        st = sensim_plot_add(pl, naxes > 1 ? axis_names[a] : sensim_allan_dev_name(o->dev), t, d, lo, hi, nm,
                             SENSIM_PLOT_LINE | SENSIM_PLOT_POINTS | SENSIM_PLOT_ERRORBARS, 0);
    }
    if (!st)
        st = sensim_plot_write_svg(pl, path, 720, 540);
    free(buf);
    sensim_plot_destroy(pl);
    return st;
}

/* --data: freq (or rate) or phase (or angle); -1 for neither. */
static int parse_data(const char *arg, sensim_allan_data *data)
{
    if (!strcmp(arg, "freq") || !strcmp(arg, "rate"))
        *data = SENSIM_ALLAN_FREQ;
    else if (!strcmp(arg, "phase") || !strcmp(arg, "angle"))
        *data = SENSIM_ALLAN_PHASE;
    else
        return -1;
    return 0;
}

/* The checks of the arguments after the options; CLI_OK or the exit status. */
static int check_args(int argc, char **argv, const char *input, const char *plot, const char *sensor,
                      const char *topic, double rate, int csv, int json)
{
    if (optind < argc)
        return cli_usage_error("allan", "unexpected argument '%s'", argv[optind]);
    if (!input)
        return cli_usage_error("allan", "--input FILE is required");
    if (csv && json)
        return cli_usage_error("allan", "--csv and --json exclude each other");
    if (sensor && topic)
        return cli_usage_error("allan", "--sensor (a log) and --topic (a recording) exclude each other");
    if (!sensor && !topic && !(rate > 0))
        return cli_usage_error("allan", "--rate HZ is required for CSV input");
    if (!sensor && !topic && cli_is_bag(input))
        return cli_usage_error("allan", "%s is a recording: name the topic with --topic", input);
    if (cli_check_output("allan", plot, input, NULL))
        return CLI_FAIL;
    return CLI_OK;
}

/* A streamed computation's error, named by file and sensor; of the six
 * axes of --quantity imu (qs: its two quantities, else NULL), "axis K"
 * becomes the quantity and its axis. */
static void name_stream_error(sensim_status st, const char *input, const char *sensor, const char *const *qs)
{
    const char *msg = sensim_last_error();
    unsigned ax = 0;
    if (qs && sscanf(msg, "axis %u", &ax) == 1 && ax < 6) {
        char *rest = strdup(strchr(msg, ':') ? strchr(msg, ':') + 2 : msg);
        sensim_error(st, "%s: sensor %s %s: axis %u: %s", input, sensor, qs[ax / 3], ax % 3, rest ? rest : msg);
        free(rest);
    } else
        sensim_error_prefix(st, "%s%s%s", input, sensor ? ": sensor " : "", sensor ? sensor : "");
}

/* The deviations on stdout: CSV, JSON or a table. */
static void print_points(int csv, int json, const sensim_allan_opts *o, const sensim_allan_point *p, size_t nm,
                         size_t naxes, const char *units)
{
    if (csv)
        print_csv(stdout, p, nm, naxes);
    else if (json)
        print_json(stdout, o, p, nm, naxes, units);
    else
        print_table(stdout, o, p, nm, naxes);
}

int cmd_allan(int argc, char **argv)
{
    const char *input = NULL, *plot = NULL, *sensor = NULL, *topic = NULL, *quantity = "angular_velocity";
    double rate = 0;
    unsigned long long column = 1;
    int csv = 0, json = 0, per_decade = 0;
    sensim_allan_grid grid = SENSIM_TAUS_OCTAVE;
    sensim_allan_opts o = sensim_allan_default_opts();
    int c;
    const cli_to to[] = {CLI_STR("input", &input), CLI_STR("plot", &plot), CLI_STR("sensor", &sensor),
                         CLI_STR("topic", &topic), CLI_FLAG("csv", &csv), CLI_FLAG("json", &json),
                         CLI_REAL("rate", &rate, 0, INFINITY, "--rate '%s': expected a positive number of Hz"),
                         CLI_REAL("confidence", &o.confidence, 0, 1,
                                  "--confidence '%s': expected a number between 0 and 1"),
                         {0}};
    cli_parser op;
    cli_parse_begin_to(&op, &cmd_allan_spec, to, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case 'd':
            if (parse_data(optarg, &o.data))
                return cli_usage_error("allan", "--data '%s': expected freq or phase", optarg);
            break;
        case 'D':
            if (sensim_allan_dev_parse(optarg, &o.dev))
                return cli_usage_error("allan", "--dev: %s", sensim_last_error());
            break;
        case 't':
            if (sensim_allan_grid_parse(optarg, &grid, &per_decade))
                return cli_usage_error("allan", "--taus: %s", sensim_last_error());
            break;
        case 'q':
            if (strcmp(optarg, "angular_velocity") && strcmp(optarg, "specific_force") &&
                strcmp(optarg, "magnetic_field") && strcmp(optarg, "imu"))
                return cli_usage_error("allan", "--quantity '%s': expected angular_velocity, specific_force or imu",
                                       optarg);
            quantity = optarg;
            break;
        case 'k':
            if (cli_parse_u64(optarg, &column) || column < 1)
                return cli_usage_error("allan", "--column '%s': expected a column number from 1", optarg);
            break;
        }
    }
    if (c)
        return cli_parse_exit(c);
    if (optind < argc && !input)
        input = argv[optind++];
    if ((c = check_args(argc, argv, input, plot, sensor, topic, rate, csv, json)) != CLI_OK)
        return c;

    /* A log or a recording is streamed (memory does not grow with it); a
     * CSV column is read whole. */
    cli_series s = {0};
    cli_stream *cs = NULL;
    int imu = (sensor || topic) && !strcmp(quantity, "imu");
    const char *const qs[2] = {imu ? "angular_velocity" : quantity, "specific_force"};
    sensim_status st = topic    ? cli_stream_open_bag(input, topic, qs, imu ? 2 : 1, rate, &cs)
                       : sensor ? cli_stream_open_h5(input, sensor, qs, imu ? 2 : 1, rate, &cs)
                                : cli_series_csv(input, (size_t)column - 1, rate, &s);
    if (topic)
        sensor = topic;
    if (st)
        return cli_fail_lib("allan");
    if (cs) {
        s.n = cli_stream_n(cs);
        s.naxes = imu ? 6 : 3;
        s.rate = cli_stream_rate(cs);
        snprintf(s.units, sizeof s.units, "%s", imu ? "" : cli_stream_units(cs));
    }
    const size_t naxes = s.naxes;
    o.tau0 = 1 / s.rate;
    size_t *m = NULL, nm = 0;
    sensim_allan_point *p = NULL;
    if ((st = sensim_allan_taus(grid, per_decade, o.dev, o.data, s.n, &m, &nm)))
        goto fail;
    p = malloc(nm * naxes * sizeof *p);
    if (!p) {
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
        goto fail;
    }
    if (cs) {
        sensim_allan_source src = cli_stream_source(cs);
        st = sensim_allan_compute_stream(&src, &o, m, nm, cli_stream_budget(), p);
        if (st && !cli_stream_failed(cs))
            name_stream_error(st, input, sensor, imu ? qs : NULL);
        cli_stream_close(cs);
        cs = NULL;
        if (st)
            goto fail;
    } else if ((st = sensim_allan_compute_axes(s.x, s.n, s.naxes, &o, m, nm, p))) {
        sensim_error_prefix(st, "%s", input);
        goto fail;
    }
    char what[300];
    snprintf(what, sizeof what, "%s%s%s", sensor ? sensor : input, sensor ? " " : "", sensor ? quantity : "");
    if (plot && (st = write_plot(plot, &o, p, nm, naxes, what, s.units)))
        goto fail;
    print_points(csv, json, &o, p, nm, naxes, s.units);
    free(m);
    free(p);
    cli_series_free(&s);
    return fflush(stdout) ? cli_fail("allan", "cannot write the output") : CLI_OK;
fail:
    free(m);
    free(p);
    cli_series_free(&s);
    cli_stream_close(cs);
    return cli_fail_lib("allan");
}
