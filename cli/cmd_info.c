/* sensim info: describe a log. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bagcli.h"
#include "cli.h"
#include "sensim/log.h"

static const cli_opt cmd_info_opts[] = {
    {CLI_NOSHORT('J'), "json", NULL, "one JSON object instead of text"},
    CLI_OPTS_END};

const cli_spec cmd_info_spec = {
    .verb = "info",
    .head = "usage: sensim info FILE.h5|BAG [--json]\n"
            "\n"
            "Describes a sensim log: its format, the ground truth (samples, duration,\n"
            "rate, origin), each sensor (type, rate, seed, datasets with shapes and\n"
            "units) and each estimate.\n"
            "\n"
            "Of a recording (ROS 1 bag, rosbag2 .db3/.mcap file or directory): its\n"
            "format and time span, and per topic the message type, count, mean rate\n"
            "(receive times) and span, marking the types sensim cannot read.\n"
            "\n",
    .opts = cmd_info_opts,
    .column = 14,
    .long_flush = 1,
};

typedef struct {
    FILE *f;
    int json;
    int first; /* JSON: no comma before the next member */
    char damage[512]; /* the first damaged attribute met, "" if none */
} out_t;

/* A string attribute; a missing one is NULL, a damaged one too, remembered
 * in o->damage so that info still describes the rest and then fails. */
static char *attr_str(out_t *o, const sensim_log *log, const char *obj, const char *name)
{
    char *s = NULL;
    sensim_status st = sensim_log_get_attr_string(log, obj, name, &s);
    if (st != SENSIM_OK && st != SENSIM_ENOTFOUND && !o->damage[0])
        snprintf(o->damage, sizeof o->damage, "%s", sensim_last_error());
    return st == SENSIM_OK ? s : NULL;
}

/* Time span of a t dataset: first, last, count. */
/* A missing or empty t is no span; a damaged one is also remembered in
 * o->damage. */
static int span(out_t *o, const sensim_log *log, const char *t, double *first, double *last, size_t *n)
{
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK];
    sensim_status st = sensim_log_shape(log, t, &rank, dims);
    if (!st && rank == 1 && dims[0] > 0) {
        *n = dims[0];
        st = sensim_log_read_f64(log, t, 0, 1, first);
        if (!st)
            st = sensim_log_read_f64(log, t, dims[0] - 1, 1, last);
        if (!st)
            return 0;
    }
    if (st && st != SENSIM_ENOTFOUND && !o->damage[0])
        snprintf(o->damage, sizeof o->damage, "%s", sensim_last_error());
    return -1;
}

static void describe_datasets(out_t *o, const sensim_log *log, const char *group)
{
    char **names;
    size_t n;
    if (sensim_log_list(log, group, &names, &n))
        return;
    if (o->json)
        fprintf(o->f, "\"datasets\": {");
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", group, names[i]);
        int rank;
        size_t dims[SENSIM_LOG_MAX_RANK];
        if (sensim_log_shape(log, path, &rank, dims))
            continue;
        char *units = attr_str(o, log, path, "units");
        if (o->json) {
            fprintf(o->f, "%s", i ? ", " : "");
            cli_json_str(o->f, names[i]);
            fprintf(o->f, ": {\"shape\": [");
            for (int r = 0; r < rank; r++)
                fprintf(o->f, "%s%zu", r ? ", " : "", dims[r]);
            fprintf(o->f, "], \"units\": ");
            cli_json_str(o->f, units ? units : "");
            fprintf(o->f, "}");
        } else {
            fprintf(o->f, "    %-18s [", names[i]);
            for (int r = 0; r < rank; r++)
                fprintf(o->f, "%s%zu", r ? "," : "", dims[r]);
            fprintf(o->f, "]%s%s\n", units ? " " : "", units ? units : "");
        }
        free(units);
    }
    if (o->json)
        fprintf(o->f, "}");
    sensim_log_free_names(names, n);
}

static void describe_group_list(out_t *o, const sensim_log *log, const char *parent, const char *label)
{
    char **names;
    size_t n;
    if (!sensim_log_exists(log, parent) || sensim_log_list(log, parent, &names, &n))
        return;
    if (o->json)
        fprintf(o->f, ", \"%s\": {", label);
    else
        fprintf(o->f, "%s:\n", label);
    for (size_t i = 0; i < n; i++) {
        char g[512], t[600];
        snprintf(g, sizeof g, "%s/%s", parent, names[i]);
        snprintf(t, sizeof t, "%s/t", g);
        char *type = attr_str(o, log, g, "type");
        double rate = NAN, seed = NAN, first = 0, last = 0;
        size_t count = 0;
        if (sensim_log_has_attr(log, g, "rate_hz"))
            sensim_log_get_attr_f64(log, g, "rate_hz", &rate, 1);
        if (sensim_log_has_attr(log, g, "seed"))
            sensim_log_get_attr_f64(log, g, "seed", &seed, 1);
        int has_t = span(o, log, t, &first, &last, &count) == 0;
        if (o->json) {
            fprintf(o->f, "%s", i ? ", " : "");
            cli_json_str(o->f, names[i]);
            fprintf(o->f, ": {\"type\": ");
            cli_json_str(o->f, type ? type : "");
            if (isfinite(rate))
                fprintf(o->f, ", \"rate_hz\": %.17g", rate);
            if (isfinite(seed))
                fprintf(o->f, ", \"seed\": %.0f", seed);
            if (has_t)
                fprintf(o->f, ", \"samples\": %zu, \"t_first\": %s, \"t_last\": %s", count, CLI_JSON_G(first, 17),
                        CLI_JSON_G(last, 17));
            fprintf(o->f, ", ");
            describe_datasets(o, log, g);
            fprintf(o->f, "}");
        } else {
            fprintf(o->f, "  %s", names[i]);
            if (type)
                fprintf(o->f, " (%s", type);
            if (isfinite(rate))
                fprintf(o->f, ", %g Hz", rate);
            if (isfinite(seed))
                fprintf(o->f, ", seed %.0f", seed);
            if (type)
                fprintf(o->f, ")");
            if (has_t)
                fprintf(o->f, ": %zu samples, t %.6f .. %.6f s", count, first, last);
            fprintf(o->f, "\n");
            describe_datasets(o, log, g);
        }
        free(type);
    }
    if (o->json)
        fprintf(o->f, "}");
    sensim_log_free_names(names, n);
}

int cmd_info(int argc, char **argv)
{
    int json = 0;
    const cli_to to[] = {CLI_FLAG("json", &json), {0}};
    int c = cli_parse_all(&cmd_info_spec, to, argc, argv);
    if (c)
        return cli_parse_exit(c);
    if (argc - optind != 1)
        return cli_usage_error("info", "expected one FILE.h5 or recording");
    const char *path = argv[optind];
    if (cli_is_bag(path))
        return cli_info_bag(path, json);
    sensim_log *log = sensim_log_open(path);
    if (!log)
        return cli_fail_lib("info");
    out_t o = {stdout, json, 1, ""};
    char *format = attr_str(&o, log, "/", "format"), *by = attr_str(&o, log, "/", "created_by");
    double version = NAN;
    if (sensim_log_has_attr(log, "/", "format_version"))
        sensim_log_get_attr_f64(log, "/", "format_version", &version, 1);
    if (json) {
        printf("{\"file\": ");
        cli_json_str(stdout, path);
        printf(", \"format\": ");
        cli_json_str(stdout, format ? format : "");
        if (isfinite(version))
            printf(", \"format_version\": %.0f", version);
        printf(", \"created_by\": ");
        cli_json_str(stdout, by ? by : "");
    } else {
        printf("%s: %s", path, format ? format : "(no format attribute)");
        if (isfinite(version))
            printf(" v%.0f", version);
        if (by)
            printf(", created by %s", by);
        printf("\n");
    }
    double first, last;
    size_t n;
    if (span(&o, log, "/ground_truth/t", &first, &last, &n) == 0) {
        double lla[3] = {NAN, NAN, NAN};
        if (sensim_log_has_attr(log, "/ground_truth", "origin_lla"))
            sensim_log_get_attr_f64(log, "/ground_truth", "origin_lla", lla, 3);
        double rate = n > 1 ? (double)(n - 1) / (last - first) : 0;
        if (json) {
            printf(", \"ground_truth\": {\"samples\": %zu, \"t_first\": %s, \"t_last\": %s, \"rate_hz\": %s", n,
                   CLI_JSON_G(first, 17), CLI_JSON_G(last, 17), CLI_JSON_G(rate, 17));
            if (isfinite(lla[0]))
                printf(", \"origin_lla\": [%s, %s, %s]", CLI_JSON_G(lla[0], 17), CLI_JSON_G(lla[1], 17),
                       CLI_JSON_G(lla[2], 17));
            printf(", ");
            describe_datasets(&o, log, "/ground_truth");
            printf("}");
        } else {
            printf("ground truth: %zu samples, %.6f s (t %.6f .. %.6f), %.6g Hz", n, last - first, first, last,
                   rate);
            if (isfinite(lla[0]))
                printf(", origin %.7f, %.7f, %.3f m", lla[0], lla[1], lla[2]);
            printf("\n");
            describe_datasets(&o, log, "/ground_truth");
        }
    }
    describe_group_list(&o, log, "/sensors", "sensors");
    describe_group_list(&o, log, "/estimates", "estimates");
    if (json)
        printf("}\n");
    free(format);
    free(by);
    sensim_log_close(log);
    if (o.damage[0])
        return cli_fail("info", "%s", o.damage);
    return CLI_OK;
}
