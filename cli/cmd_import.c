/* sensim import: a ground-truth CSV to the /ground_truth of a new log,
 * streamed in blocks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bagcli.h"
#include "cli.h"
#include "progress.h"
#include "cli_gt.h"
#include "import_text.h"
#include "sensim/csv.h"
#include "sensim/geodesy.h"
#include "sensim/guard.h"
#include "sensim/log.h"

enum { OPT_ORIGIN = CLI_LONG, OPT_COLUMNS, OPT_RATE, OPT_TIMES };

static const cli_opt cmd_import_opts[] = {
    {'o', "output", "FILE", "the log to write (temporary name, renamed when complete)"},
    {'f', "format", "F", "euroc, tum, csv (text), kitti, ply, pcd (clouds)"},
    {'u', "time-unit", "U", "s, ms, us or ns: the unit of the time column"},
    {OPT_COLUMNS, "columns", "MAP", "KEY=NAME,... with keys " SENSIM_TEXT_KEYS "\n"
                                    "and NAME a header name or a column number from 1"},
    {'n', "name", "NAME", "the sensor group of an IMU or cloud input (default\n"
                          "imu, lidar)"},
    {OPT_RATE, "rate", "HZ", "scans per second of the clouds (scan k at k/HZ s)"},
    {OPT_TIMES, "times", "FILE", "one stamp per scan (numbers in --time-unit, default s,\n"
                                 "or KITTI raw 'YYYY-MM-DD hh:mm:ss.sssssssss')"},
    {'g', "ground-truth", "FILE", "sensim's ground-truth CSV ('-' for standard input)"},
    {OPT_ORIGIN, "origin", "LAT,LON,ALT", "WGS84 origin of the ENU frame (deg, deg, m); default:\n"
                                          "the file's '# origin_lla:' comment (as 'sensim export'\n"
                                          "writes it), else 43.0731,-89.4012,260"},
    {'q', "quiet", NULL, "no progress (shown on stderr only when it is a\n"
                         "terminal)"},
    CLI_OPTS_END};

const cli_spec cmd_import_spec = {
    .verb = "import",
    .head = "usage: sensim import FILE... -o OUT.h5 [--format F] [--time-unit U] [--columns MAP]\n"
            "                     [--name NAME] [--rate HZ] [--times FILE] [--origin LAT,LON,ALT]\n"
            "       sensim import --ground-truth IN.csv -o OUT.h5 [--origin LAT,LON,ALT]\n"
            "\n"
            "Writes a new log from recordings. Each FILE is one of:\n"
            "  EuRoC/ASL   mav0/imu0/data.csv ('#timestamp [ns],w_RS_S_x [rad s^-1],...')\n"
            "              -> /sensors/imu; mav0/state_groundtruth_estimate0/data.csv\n"
            "              (p_RS_R, q_RS wxyz, v_RS_R) -> /ground_truth\n"
            "  TUM         'timestamp tx ty tz qx qy qz qw' (blank-separated, '#' comments)\n"
            "              -> /ground_truth\n"
            "  CSV         a header naming t and wx,wy,wz / ax,ay,az / mx,my,mz (an IMU) or\n"
            "              px,py,pz, qw,qx,qy,qz [vx,vy,vz] (poses), directly, by common\n"
            "              names (x, tx, gyro_x, acc_x, ...), or mapped with --columns;\n"
            "              a unit in brackets ('gyro_x [deg/s]') is converted to SI\n"
            "  clouds      KITTI velodyne .bin (float32 x,y,z,reflectance), PLY or PCD:\n"
            "              one scan each, in the order given -> /sensors/lidar (points,\n"
            "              scan_offset, t, range, azimuth, elevation), ready for inject\n"
            "The format is told from the header (EuRoC's names; 8 numeric columns are\n"
            "TUM) and the file name (.bin, .ply, .pcd). Sensim's own ground-truth CSV\n"
            "(" SENSIM_CSV_GT_HEADER ")\n"
            "and position-only t,x,y,z tracks are read as with --ground-truth.\n"
            "\n"
            "Stamps are kept as exact integer nanoseconds: t is seconds after the root\n"
            "attribute time_epoch_ns (the first whole second of an epoch clock, else 0).\n"
            "The time unit is --time-unit, the header's ('[ns]', 'time_us'), EuRoC's\n"
            "(ns), TUM's (s), or told from the stamps (an epoch or a clock started at 0,\n"
            "at 0.5 Hz..100 kHz; said on stderr); stamps whose unit cannot be told are\n"
            "refused, never read as seconds.\n"
            "\n"
            "The --ground-truth form reads sensim's ground-truth CSV: every row checked\n"
            "(17 finite cells, t strictly increasing, quaternion norm within 1e-3 of 1),\n"
            "or a position-only track (t,x,y,z, ENU metres): velocity and acceleration\n"
            "from quadratics through each sample and its neighbours, yaw from the\n"
            "horizontal velocity (held below 0.05 m/s), yaw rate from the curvature.\n"
            "Poses from EuRoC, TUM and CSV files get velocity (unless recorded) and\n"
            "acceleration the same way, and the body rate from successive rotations.\n"
            "Errors name the file, line and column.\n"
            "\n"
            "Options:\n",
    .opts = cmd_import_opts,
    .column = 27,
    .tail = "\n",
    .next = &cli_import_bag_spec,
};

#define BLOCK_ROWS 4096

static int import_gt_csv(const char *verb, const char *in, const char *out, double origin[3], int have_origin,
                         int quiet, int argc, char **argv);

/* 1 when a CSV is sensim's own ground truth (or a t,x,y,z track), which the
 * --ground-truth reader takes. */
static int is_sensim_gt_csv(const char *path)
{
    sensim_csv_gt_reader *r = sensim_csv_gt_reader_open(path);
    sensim_csv_gt_reader_close(r);
    sensim_error_clear();
    return r != NULL;
}

int cmd_import(int argc, char **argv)
{
    if (cli_import_wants_bag(argc, argv))
        return cli_import_bag(argc, argv);
    const char *verb = "import", *in = NULL, *out = NULL;
    double origin[3] = {CLI_DEFAULT_ORIGIN};
    int have_origin = 0, quiet = 0, c;
    import_text_opts to = {sensim_text_default_opts(), NULL, NULL, 0, NULL, {0, 0, 0}, NULL};
    const cli_to plain[] = {CLI_STR("ground-truth", &in), CLI_STR("output", &out),
                            CLI_STR("columns", &to.text.columns), CLI_STR("times", &to.times),
                            CLI_REAL("rate", &to.rate, 0, INFINITY, "--rate: '%s' is not a rate > 0"),
                            CLI_FLAG("quiet", &quiet), {0}};
    cli_parser op;
    cli_parse_begin_to(&op, &cmd_import_spec, plain, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "kitti") && strcmp(optarg, "ply") && strcmp(optarg, "pcd") &&
                sensim_text_format_parse(optarg, &to.text.format))
                return cli_usage_error(verb, "--format: '%s' is not euroc, tum, csv, kitti, ply or pcd", optarg);
            to.format = optarg;
            break;
        case 'u':
            if (sensim_time_unit_parse(optarg, &to.text.time_unit))
                return cli_usage_error(verb, "--time-unit: '%s' is not s, ms, us or ns", optarg);
            break;
        case 'n':
            if (!*optarg || strchr(optarg, '/'))
                return cli_usage_error(verb, "--name: '%s' is not a group name", optarg);
            to.name = optarg;
            break;
        case OPT_ORIGIN:
            if (cli_parse_triple(optarg, origin))
                return cli_usage_error(verb, "--origin: expected LAT,LON,ALT, got '%s'", optarg);
            have_origin = 1;
            break;
        }
    }
    if (c)
        return cli_parse_exit(c);
    int nfiles = argc - optind;
    if (in && nfiles)
        return cli_usage_error(verb, "--ground-truth and FILE arguments do not go together");
    if (!in && !nfiles)
        return cli_usage_error(verb, "no input: give FILE... or --ground-truth FILE");
    if (!out)
        return cli_usage_error(verb, "-o/--output is required");
    for (int i = optind; i < argc; i++)
        if (cli_check_output(verb, out, argv[i], NULL))
            return CLI_FAIL;
    if (in && cli_check_output(verb, out, in, NULL))
        return CLI_FAIL;
    if (in && (to.format || to.text.time_unit || to.text.columns || to.name || to.rate > 0 || to.times))
        return cli_usage_error(verb, "--format, --time-unit, --columns, --name, --rate and --times apply to FILE inputs");
    if (in)
        return import_gt_csv(verb, in, out, origin, have_origin, quiet, argc, argv);
    if (nfiles == 1 && !to.format && !to.text.columns && !to.text.time_unit && is_sensim_gt_csv(argv[optind]))
        return import_gt_csv(verb, argv[optind], out, origin, have_origin, quiet, argc, argv);
    memcpy(to.origin, origin, sizeof to.origin);
    char *cmdline = cli_join_args("sensim", argc, argv);
    to.created_by = cmdline;
    int rc = import_files(verb, argv + optind, nfiles, out, &to);
    free(cmdline);
    return rc;
}

static int import_gt_csv(const char *verb, const char *in, const char *out, double origin[3], int have_origin,
                         int quiet, int argc, char **argv)
{
    int rc = CLI_FAIL;
    sensim_gt_block b = {0};
    sensim_gt_writer *w = NULL;
    sensim_log *log = NULL;
    char *cmdline = NULL;
    sensim_geo_enu frame;
    cli_progress prog;
    cli_progress_init(&prog, verb, 1);
    sensim_csv_gt_reader *r = sensim_csv_gt_reader_open(!strcmp(in, "-") ? "/dev/stdin" : in);
    if (!r)
        goto done;
    if (!have_origin)
        sensim_csv_gt_reader_origin(r, origin);
    if (sensim_geo_enu_init(&frame, origin)) {
        sensim_error_prefix(SENSIM_EINVAL, "%s", have_origin ? "--origin" : in);
        goto done;
    }
    cmdline = cli_join_args("sensim", argc, argv);
    if (!(log = sensim_log_create(out, cmdline ? cmdline : "sensim import")) ||
        sensim_gt_block_init(&b, BLOCK_ROWS) || !(w = sensim_gt_writer_create(log, origin)))
        goto done;
    /* Times that cannot be seconds (epoch or relative ns, us, ms) are
     * refused as such: from the first block, before it is written, and over
     * the whole file at the end. */
    char what[512];
    snprintf(what, sizeof what, "%s: column t", in);
    double t_first = 0, t_last = 0;
    /* Progress by the bytes of the file read (none from a pipe). */
    struct stat st_in;
    double size = strcmp(in, "-") && stat(in, &st_in) == 0 && S_ISREG(st_in.st_mode) ? (double)st_in.st_size : 0;
    cli_progress_init(&prog, verb, quiet || size <= 0);
    for (int first = 1;; first = 0) {
        if (sensim_csv_gt_reader_read(r, &b))
            goto done;
        if (b.n == 0)
            break;
        if (first)
            t_first = b.t[0];
        t_last = b.t[b.n - 1];
        if (first && sensim_guard_times(b.t[0], b.t[b.n - 1], b.n, what))
            goto done;
        if (sensim_gt_writer_append(w, &b))
            goto done;
        cli_progress_update(&prog, in, (double)sensim_csv_gt_reader_offset(r) / size);
    }
    cli_progress_done(&prog);
    if (sensim_csv_gt_reader_rows(r) < 2) {
        sensim_error(SENSIM_EDATA, "%s: %zu data rows, need at least 2", in, sensim_csv_gt_reader_rows(r));
        goto done;
    }
    if (sensim_guard_times(t_first, t_last, sensim_csv_gt_reader_rows(r), what))
        goto done;
    sensim_gt_writer_close(w);
    w = NULL;
    sensim_status st = sensim_log_commit(log);
    log = NULL;
    if (!st)
        rc = CLI_OK;
done:
    cli_progress_done(&prog);
    if (rc != CLI_OK)
        cli_fail_lib(verb);
    sensim_gt_writer_close(w);
    sensim_log_close(log);
    sensim_gt_block_free(&b);
    sensim_csv_gt_reader_close(r);
    free(cmdline);
    return rc;
}
