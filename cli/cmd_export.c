/* sensim export: /ground_truth of a log to CSV, streamed in blocks. */
#include <stdio.h>
#include <string.h>

#include "bagcli.h"
#include "cli.h"
#include "export_text.h"
#include "sensim/csv.h"
#include "sensim/log.h"

static const cli_opt cmd_export_opts[] = {
    {'g', "ground-truth", "LOG", "the log to read (its /ground_truth is validated first);"},
    {CLI_NOSHORT('g'), "group", "GROUP", "with a LOG argument, -g names the group instead"},
    {'f', "format", "F", "csv (default), euroc or tum"},
    {'o', "output", "FILE", "the file to write ('-' for standard output); written to a\n"
                            "temporary name and renamed when complete"},
    CLI_OPTS_END};

const cli_spec cmd_export_spec = {
    .verb = "export",
    .head = "usage: sensim export --ground-truth LOG.h5 -o OUT.csv\n"
            "       sensim export LOG.h5 [-g GROUP] [--format csv|euroc|tum] -o OUT\n"
            "\n"
            "Writes /ground_truth of a log as CSV with the header\n"
            "  " SENSIM_CSV_GT_HEADER "\n"
            "(units as in the log: s, m, quaternion w,x,y,z body to world, m/s, rad/s\n"
            "body, m/s^2 kinematic), preceded by a comment line '# origin_lla: LAT,LON,ALT'.\n"
            "Numbers have 17 significant digits, so 'sensim import' restores them exactly.\n"
            "\n"
            "With a LOG argument, GROUP (default /ground_truth) is written as FORMAT:\n"
            "  csv    the ground-truth CSV above (/ground_truth only)\n"
            "  euroc  an IMU group (/sensors/NAME) as EuRoC's imu0/data.csv\n"
            "         ('#timestamp [ns],w_RS_S_x [rad s^-1],...,a_RS_S_z [m s^-2]'), or\n"
            "         /ground_truth as state_groundtruth_estimate0/data.csv (p_RS_R,\n"
            "         q_RS wxyz, v_RS_R; the bias columns are 0)\n"
            "  tum    /ground_truth as 'timestamp tx ty tz qx qy qz qw' (seconds)\n"
            "Stamps are exact integer ns: the log's time_epoch_ns (as 'sensim import'\n"
            "records it; else 0) plus t rounded to the ns. OUT may be a directory\n"
            "(data.csv or trajectory.txt in it) or '-'.\n"
            "\n"
            "Options:\n",
    .opts = cmd_export_opts,
    .column = 26,
    .tail = "\n",
    .next = &cli_export_bag_spec,
};


#define BLOCK_ROWS 4096

int cmd_export(int argc, char **argv)
{
    if (cli_export_wants_bag(argc, argv))
        return cli_export_bag(argc, argv);
    const char *verb = "export", *in = NULL, *out = NULL, *format = NULL;
    const cli_to to[] = {CLI_STR("ground-truth", &in), CLI_STR("output", &out), {0}};
    int c;
    cli_parser op;
    cli_parse_begin_to(&op, &cmd_export_spec, to, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "csv") && strcmp(optarg, "euroc") && strcmp(optarg, "tum"))
                return cli_usage_error(verb, "--format: '%s' is not csv, euroc or tum", optarg);
            format = optarg;
            break;
        }
    }
    if (c)
        return cli_parse_exit(c);
    if (argc - optind > 1)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind + 1]);
    if (optind < argc) {
        /* sensim export LOG [-g GROUP]: -g names the group. */
        const char *group = in ? in : "/ground_truth";
        if (!out)
            return cli_usage_error(verb, "-o/--output is required");
        if (group[0] != '/')
            return cli_usage_error(verb, "-g: '%s' is not a group path (/ground_truth, /sensors/NAME)", group);
        if (format && strcmp(format, "csv"))
            return export_text(verb, argv[optind], group, format, out);
        if (strcmp(group, "/ground_truth"))
            return cli_usage_error(verb, "--format csv writes /ground_truth only; use --format euroc for %s", group);
        in = argv[optind];
    } else if (format && strcmp(format, "csv"))
        return cli_usage_error(verb, "--format %s needs the log as an argument: sensim export LOG -g GROUP", format);
    if (!in)
        return cli_usage_error(verb, "--ground-truth is required");
    if (!out)
        return cli_usage_error(verb, "-o/--output is required");
    if (cli_check_output(verb, out, in, NULL))
        return CLI_FAIL;

    int rc = CLI_FAIL;
    sensim_gt_block b = {0};
    sensim_csv_gt_writer *w = NULL;
    sensim_log *log = sensim_log_open(in);
    size_t n;
    double origin[3];
    if (!log || sensim_gt_check(log, &n, origin) || sensim_gt_block_init(&b, BLOCK_ROWS) ||
        !(w = sensim_csv_gt_writer_create(out, origin)))
        goto done;
    for (size_t r0 = 0; r0 < n; r0 += BLOCK_ROWS) {
        size_t m = n - r0 < BLOCK_ROWS ? n - r0 : BLOCK_ROWS;
        if (sensim_gt_read(log, r0, m, &b) || sensim_csv_gt_writer_append(w, &b))
            goto done;
    }
    sensim_status st = sensim_csv_gt_writer_commit(w);
    w = NULL;
    if (!st)
        rc = CLI_OK;
done:
    if (rc != CLI_OK)
        cli_fail_lib(verb);
    sensim_csv_gt_writer_close(w);
    sensim_gt_block_free(&b);
    sensim_log_close(log);
    return rc;
}
