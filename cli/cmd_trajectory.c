/* sensim trajectory: write an analytic ground-truth log (/ground_truth of
 * DESIGN.md) in blocks, so an hour at 1 kHz never sits in memory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_gt.h"
#include "sensim/geodesy.h"
#include "sensim/guard.h"
#include "sensim/log.h"
#include "sensim/trajectory.h"

enum { OPT_START_TIME = 256, OPT_ORIGIN, OPT_START, OPT_HEADING, OPT_SPEED, OPT_ACCEL, OPT_RADIUS, OPT_DIRECTION,
       OPT_WIDTH, OPT_LENGTH, OPT_LEAD, OPT_SIZE, OPT_PERIOD };

static const cli_opt cmd_trajectory_opts[] = {
    {'s', "shape", "SHAPE", "static | line | circle | sine | figure8 (required)"},
    {'d', "duration", "S", "length of the log in seconds, or with a unit such as\n"
                           "'5 min' (required, > 0)"},
    {'r', "rate", "HZ", "sample rate (default 100)"},
    {OPT_START_TIME, "start-time", "S", "time of the first sample and of the start of motion (default 0)"},
    {OPT_ORIGIN, "origin", "LAT,LON,ALT", "WGS84 origin of the ENU frame, deg, deg, m\n"
                                          "(default 43.0731,-89.4012,260)"},
    {OPT_START, "start", "E,N,U", "start position in the ENU frame, m (default 0,0,0)"},
    {OPT_HEADING, "heading", "DEG", "initial heading, compass degrees clockwise from north\n"
                                    "(default 90 = east); figure8: direction of the long axis"},
    {OPT_SPEED, "speed", "M/S", "line, circle, sine (along track) speed (default 1)"},
    {OPT_ACCEL, "accel", "M/S2", "line: start from rest and accelerate to --speed (default 0)"},
    {OPT_RADIUS, "radius", "M", "circle radius (default 10)"},
    {OPT_DIRECTION, "direction", "DIR", "circle: left (counter-clockwise, default) or right"},
    {OPT_WIDTH, "width", "M", "sine: lateral offset, + left, - right (default 3.5)"},
    {OPT_LENGTH, "length", "M", "sine: along-track length of the lane change (default 30)"},
    {OPT_LEAD, "lead", "M", "sine: straight distance before it (default 20)"},
    {OPT_SIZE, "size", "M", "figure8: extent along the long axis (default 20)"},
    {OPT_PERIOD, "period", "S", "figure8: time of one figure (default 60)"},
    {'o', "output", "FILE", "output HDF5 log (written to a temporary name, then renamed)"},
    CLI_OPTS_END};

const cli_spec cmd_trajectory_spec = {
    .verb = "trajectory",
    .head = "usage: sensim trajectory --shape SHAPE --duration S [options] -o OUT.h5\n"
            "\n"
            "Writes a ground-truth log whose position, orientation, velocity, body\n"
            "angular velocity and kinematic acceleration are exact analytic functions\n"
            "of time (planar vehicle, ENU world, yaw along the velocity).\n"
            "\n"
            "Shapes: static, line, circle, sine (lane change), figure8.\n"
            "\n"
            "Options:\n",
    .opts = cmd_trajectory_opts,
    .column = 25,
    .tail = "\n"
            "Exit status: 0 success, 1 failure, 2 usage error. See sensim-trajectory(1).\n",
};

/* The option behind a parameter named in a library message
 * ("circle trajectory: radius must be ..."), as a "--radius: " prefix. */
static const char *option_of(const char *msg)
{
    static const struct {
        const char *param, *prefix;
    } map[] = {{": speed ", "--speed: "},   {": accel ", "--accel: "},   {": radius ", "--radius: "},
               {": direction ", "--direction: "}, {": width ", "--width: "}, {": length ", "--length: "},
               {": lead ", "--lead: "},     {": size ", "--size: "},     {": period ", "--period: "},
               {": yaw ", "--heading: "},   {": t0 ", "--start-time: "}, {": start ", "--start: "}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strstr(msg, map[i].param))
            return map[i].prefix;
    return "";
}

/* Progress of a long log, on a terminal. */
static void show_progress(void *ctx, uint64_t done, uint64_t rows)
{
    (void)ctx;
    if ((done / 4096) % 64 == 1)
        fprintf(stderr, "\rsensim trajectory: %3.0f%%", 100.0 * (double)done / (double)rows);
}

/* Writes n rows of the trajectory of p at `rate` to out, atomically. */
static int write_log(const sensim_trajectory_params *p, double rate, double heading, const double origin[3],
                     uint64_t n, const char *out, const char *created_by)
{
    const char *verb = "trajectory";
    sensim_trajectory *tr = sensim_trajectory_create(p);
    if (!tr)
        return cli_fail(verb, "%s%s", option_of(sensim_last_error()), sensim_last_error());
    cli_check_output(verb, out, NULL); /* no inputs: only stale temporaries */
    int rc = CLI_FAIL;
    sensim_log *log = sensim_log_create(out, created_by);
    /* The parameters that made the log, those the shape uses. */
    char desc[512];
    sensim_trajectory_describe(p, rate, heading, desc, sizeof desc);
    int progress = isatty(STDERR_FILENO) && n > 1000000;
    if (log && !sensim_trajectory_write(tr, rate, n, origin, desc, log, progress ? show_progress : NULL, NULL)) {
        if (progress)
            fprintf(stderr, "\rsensim trajectory: 100%%\n");
        sensim_status st = sensim_log_commit(log);
        log = NULL;
        if (!st)
            rc = CLI_OK;
    }
    if (rc != CLI_OK)
        cli_fail_lib(verb);
    sensim_log_close(log);
    sensim_trajectory_destroy(tr);
    return rc;
}

/* The options of trajectory; parse_options returns -1 to go on, else the
 * exit status. */
typedef struct traj_args {
    sensim_trajectory_params p;
    double duration, rate, heading, origin[3];
    const char *out, *shape;
} traj_args;

static int parse_options(int argc, char **argv, traj_args *a)
{
    const char *verb = "trajectory";
    *a = (traj_args){sensim_trajectory_default_params(), NAN, 100, 90, {CLI_DEFAULT_ORIGIN}, NULL, NULL};
    int c;
    const cli_to to[] = {
        CLI_STR("shape", &a->shape), CLI_STR("output", &a->out), CLI_SECONDS("duration", &a->duration),
        CLI_NUMBER("rate", &a->rate), CLI_NUMBER("start-time", &a->p.t0), CLI_NUMBER("heading", &a->heading),
        CLI_NUMBER("speed", &a->p.speed), CLI_NUMBER("accel", &a->p.accel), CLI_NUMBER("radius", &a->p.radius),
        CLI_NUMBER("width", &a->p.width), CLI_NUMBER("length", &a->p.length), CLI_NUMBER("lead", &a->p.lead),
        CLI_NUMBER("size", &a->p.size), CLI_SECONDS("period", &a->p.period), {0}};
    cli_parser op;
    cli_parse_begin_to(&op, &cmd_trajectory_spec, to, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case OPT_ORIGIN:
            if (cli_parse_triple(optarg, a->origin))
                return cli_usage_error(verb, "--origin: expected LAT,LON,ALT, got '%s'", optarg);
            break;
        case OPT_START:
            if (cli_parse_triple(optarg, a->p.start))
                return cli_usage_error(verb, "--start: expected E,N,U in metres, got '%s'", optarg);
            break;
        case OPT_DIRECTION:
            if (!strcmp(optarg, "left") || !strcmp(optarg, "ccw"))
                a->p.direction = 1;
            else if (!strcmp(optarg, "right") || !strcmp(optarg, "cw"))
                a->p.direction = -1;
            else
                return cli_usage_error(verb, "--direction: expected left or right, got '%s'", optarg);
            break;
        }
    }
    if (c)
        return cli_parse_exit(c);
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    return -1;
}

int cmd_trajectory(int argc, char **argv)
{
    const char *verb = "trajectory";
    traj_args a;
    int arc = parse_options(argc, argv, &a);
    if (arc >= 0)
        return arc;
    sensim_trajectory_params p = a.p;
    double duration = a.duration, rate = a.rate, heading = a.heading, *origin = a.origin;
    const char *out = a.out, *shape = a.shape;
    if (!shape)
        return cli_usage_error(verb, "--shape is required");
    /* The shape first: a misspelt one is the mistake to report, not the
     * options that shape would have needed. */
    if (sensim_trajectory_shape_parse(shape, &p.shape)) {
        static const char *const shapes[] = {"static", "line", "circle", "sine", "figure8", NULL};
        const char *near = cli_suggest(shape, shapes);
        if (near)
            return cli_usage_error(verb, "--shape: unknown shape '%s' (did you mean %s?)", shape, near);
        return cli_usage_error(verb, "--shape: %s", sensim_last_error());
    }
    if (!out)
        return cli_usage_error(verb, "-o/--output is required");
    if (isnan(duration))
        return cli_usage_error(verb, "--duration is required");
    if (!(duration > 0))
        return cli_usage_error(verb, "--duration must be > 0, got %g", duration);
    if (!(rate > 0))
        return cli_usage_error(verb, "--rate must be > 0, got %g", rate);
    /* Compass heading (clockwise from north) to ENU yaw (counter-clockwise from east). */
    p.yaw = (90.0 - heading) * M_PI / 180.0;
    sensim_geo_enu frame;
    if (sensim_geo_enu_init(&frame, origin))
        return cli_fail(verb, "--origin: %s", sensim_last_error());
    /* Samples at t0 + k/rate for k = 0 .. floor(duration * rate), both ends included. */
    double nd = floor(duration * rate * (1 + 1e-12)) + 1;
    if (nd > 1e12)
        return cli_fail(verb, "--duration %g s at --rate %g Hz is too many samples", duration, rate);
    uint64_t n = (uint64_t)nd;
    /* 17 doubles a row (t, position, orientation, velocity, angular velocity,
     * acceleration): refuse before writing what cannot fit. */
    char figure[128];
    snprintf(figure, sizeof figure, "--rate %g Hz x --duration %g s = %.3g rows of ground truth", rate, duration, nd);
    if (sensim_guard_output(out, nd * 17 * 8, figure))
        return cli_fail_lib(verb);

    char *cmdline = cli_join_args("sensim", argc, argv);
    int rc = write_log(&p, rate, heading, origin, n, out, cmdline ? cmdline : "sensim trajectory");
    free(cmdline);
    return rc;
}
