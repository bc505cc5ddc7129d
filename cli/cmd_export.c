/* sensim export: /ground_truth of a log to CSV, streamed in blocks. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "bagcli.h"
#include "cli.h"
#include "export_text.h"
#include "sensim/csv.h"
#include "sensim/log.h"

static const char cmd_export_usage[] =
    "usage: sensim export --ground-truth LOG.h5 -o OUT.csv\n"
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
    "Options:\n"
    "  -g, --ground-truth LOG  the log to read (its /ground_truth is validated first);\n"
    "      --group GROUP       with a LOG argument, -g names the group instead\n"
    "  -f, --format F          csv (default), euroc or tum\n"
    "  -o, --output FILE       the file to write ('-' for standard output); written to a\n"
    "                          temporary name and renamed when complete\n"
    "  -h, --help              this text\n"
    "\n"
    CLI_EXPORT_BAG_USAGE
    "\n"
    "Exit status: 0 success, 1 failure, 2 usage error. See sensim-export(1).\n";
const cli_spec cmd_export_spec = {.verb = "export", .head = cmd_export_usage};

#define BLOCK_ROWS 4096

int cmd_export(int argc, char **argv)
{
    if (cli_export_wants_bag(argc, argv))
        return cli_export_bag(argc, argv);
    static const struct option opts[] = {
        {"ground-truth", required_argument, NULL, 'g'},
        {"group", required_argument, NULL, 'g'},
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *verb = "export", *in = NULL, *out = NULL, *format = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":g:o:f:h", opts, NULL)) != -1) {
        switch (c) {
        case 'g': in = optarg; break;
        case 'o': out = optarg; break;
        case 'f':
            if (strcmp(optarg, "csv") && strcmp(optarg, "euroc") && strcmp(optarg, "tum"))
                return cli_usage_error(verb, "--format: '%s' is not csv, euroc or tum", optarg);
            format = optarg;
            break;
        case 'h': cli_print_help(verb, stdout); return CLI_OK;
        case ':': return cli_usage_error(verb, "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error(verb, "unknown option %s", argv[optind - 1]);
        }
    }
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
