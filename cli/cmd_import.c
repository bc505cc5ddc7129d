/* sensim import: a ground-truth CSV to the /ground_truth of a new log,
 * streamed in blocks. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_gt.h"
#include "sensim/csv.h"
#include "sensim/geodesy.h"
#include "sensim/guard.h"
#include "sensim/log.h"

const char cmd_import_usage[] =
    "usage: sensim import --ground-truth IN.csv -o OUT.h5 [--origin LAT,LON,ALT]\n"
    "\n"
    "Reads a ground-truth CSV with a header naming the columns\n"
    "  " SENSIM_CSV_GT_HEADER "\n"
    "(any order) and writes it as /ground_truth of a new log. Lines starting with\n"
    "'#' and blank lines are skipped. Every row is checked: all 17 cells finite\n"
    "numbers, t strictly increasing, quaternion norm within 1e-3 of 1 (then\n"
    "normalized). An error names the file, line and column.\n"
    "\n"
    "A position-only track (header t,x,y,z in ENU metres) is accepted too: velocity\n"
    "and acceleration are derived from quadratics through each sample and its\n"
    "neighbours, yaw from the horizontal velocity (held below 0.05 m/s), yaw rate\n"
    "from the curvature. Derivatives amplify noise: smooth measured tracks first.\n"
    "\n"
    "Options:\n"
    "  -g, --ground-truth FILE  the CSV to read ('-' for standard input)\n"
    "  -o, --output FILE        the log to write (temporary name, renamed when complete)\n"
    "      --origin LAT,LON,ALT WGS84 origin of the ENU frame (deg, deg, m); default:\n"
    "                           the file's '# origin_lla:' comment (as 'sensim export'\n"
    "                           writes it), else 43.0731,-89.4012,260\n"
    "  -h, --help               this text\n"
    "\n"
    "Exit status: 0 success, 1 failure, 2 usage error. See sensim-import(1).\n";

#define BLOCK_ROWS 4096
enum { OPT_ORIGIN = 256 };

int cmd_import(int argc, char **argv)
{
    static const struct option opts[] = {
        {"ground-truth", required_argument, NULL, 'g'},
        {"output", required_argument, NULL, 'o'},
        {"origin", required_argument, NULL, OPT_ORIGIN},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *verb = "import", *in = NULL, *out = NULL;
    double origin[3] = {CLI_DEFAULT_ORIGIN};
    int have_origin = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":g:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'g': in = optarg; break;
        case 'o': out = optarg; break;
        case OPT_ORIGIN:
            if (cli_parse_triple(optarg, origin))
                return cli_usage_error(verb, "--origin: expected LAT,LON,ALT, got '%s'", optarg);
            have_origin = 1;
            break;
        case 'h': cli_print_help(verb, stdout); return CLI_OK;
        case ':': return cli_usage_error(verb, "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error(verb, "unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    if (!in)
        return cli_usage_error(verb, "--ground-truth is required");
    if (!out)
        return cli_usage_error(verb, "-o/--output is required");

    int rc = CLI_FAIL;
    sensim_gt_block b = {0};
    sensim_gt_writer *w = NULL;
    sensim_log *log = NULL;
    char *cmdline = NULL;
    sensim_geo_enu frame;
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
    }
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
    if (rc != CLI_OK)
        cli_fail_lib(verb);
    sensim_gt_writer_close(w);
    sensim_log_close(log);
    sensim_gt_block_free(&b);
    sensim_csv_gt_reader_close(r);
    free(cmdline);
    return rc;
}
