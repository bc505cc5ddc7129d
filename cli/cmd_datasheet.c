/* sensim datasheet - datasheet figures (with their units) to sensim IMU model
 * parameters (the conversion is sensim/datasheet.h's), showing each
 * conversion step by step; optionally writes a rig YAML and a kalibr
 * imu.yaml. Per-sample values at the rate f (white sigma_d = N sqrt(f),
 * random-walk step sigma_bd = K / sqrt(f)) are shown for reference. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sensim/afile.h"
#include "sensim/datasheet.h"
#include "sensim/imu.h"
#include "sensim/rig.h"
#include "sensim/units.h"
#include "sensim/yaml.h"

enum { O_PRESET = CLI_LONG, O_NAME, O_SEED, O_KALIBR, O_JSON, O_FIG };

/* The figures' options are O_FIG + SENSIM_DATASHEET_*; sensim_datasheet_figures
 * gives each its preset key, label and units. */
static const cli_opt cmd_datasheet_opts[] = {
    {O_FIG + SENSIM_DATASHEET_ARW, "arw", "Q", "gyro angle random walk (deg/sqrt(h))"},
    {O_FIG + SENSIM_DATASHEET_GYRO_ND, "gyro-noise-density", "Q", "gyro noise density (deg/s/sqrt(Hz))"},
    {O_FIG + SENSIM_DATASHEET_GYRO_BI, "gyro-bias-instability", "Q", "gyro in-run bias instability (deg/h)"},
    {O_FIG + SENSIM_DATASHEET_GYRO_RW, "gyro-random-walk", "Q", "gyro rate random walk (deg/h/sqrt(h))"},
    {O_FIG + SENSIM_DATASHEET_GYRO_RANGE, "gyro-range", "Q", "gyro full-scale range (deg/s)"},
    {O_FIG + SENSIM_DATASHEET_GYRO_RES, "gyro-resolution", "Q", "gyro quantization step, one LSB (deg/s)"},
    {O_FIG + SENSIM_DATASHEET_VRW, "vrw", "Q", "velocity random walk (m/s/sqrt(h))"},
    {O_FIG + SENSIM_DATASHEET_ACCEL_ND, "accel-noise-density", "Q", "accel noise density (ug/sqrt(Hz))"},
    {O_FIG + SENSIM_DATASHEET_ACCEL_BI, "accel-bias-instability", "Q", "accel in-run bias instability (ug)"},
    {O_FIG + SENSIM_DATASHEET_ACCEL_RW, "accel-random-walk", "Q", "accel bias random walk (m/s^3/sqrt(Hz))"},
    {O_FIG + SENSIM_DATASHEET_ACCEL_RANGE, "accel-range", "Q", "accel full-scale range (g)"},
    {O_FIG + SENSIM_DATASHEET_ACCEL_RES, "accel-resolution", "Q", "accel quantization step, one LSB (mg)"},
    {O_FIG + SENSIM_DATASHEET_RATE, "rate", "Q", "output data rate (Hz)"},
    {0, NULL, NULL, "\nOptions:\n"},
    {O_PRESET, "preset", "FILE.yaml", "read figures from FILE (keys as the options,\n"
                                      "with '_' for '-'); options override it"},
    {O_NAME, "name", "NAME", "sensor name in the rig (default imu)"},
    {O_SEED, "seed", "N", "rig seed (default 1)"},
    {'o', "output", "FILE", "write a rig YAML with one imu sensor"},
    {O_KALIBR, "kalibr", "FILE", "write kalibr's imu.yaml"},
    {O_JSON, "json", NULL, "print the conversion as JSON instead of a table"},
    CLI_OPTS_END};

const cli_spec cmd_datasheet_spec = {
    .verb = "datasheet",
    .head = "usage: sensim datasheet [options]\n"
            "\n"
            "Converts IMU datasheet figures, written with their units, into sensim model\n"
            "parameters (SI) and shows each conversion step by step.\n"
            "\n"
            "Figures (a number and a unit, e.g. \"0.66 deg/sqrt(h)\"; a bare number is in\n"
            "the unit shown in parentheses):\n",
    .opts = cmd_datasheet_opts,
    .column = 31,
    .long_flush = 1,
    .tail = "\n"
            "When both --arw and --gyro-noise-density (or --vrw and --accel-noise-density)\n"
            "are given, the random-walk figure is used and a warning is printed if they\n"
            "differ by more than 10%.\n"
            "\n"
            "Example:\n"
            "  sensim datasheet --arw \"0.66 deg/sqrt(h)\" --vrw \"0.11 m/s/sqrt(h)\" \\\n"
            "      --gyro-bias-instability \"14.5 deg/h\" --rate 400 -o rig.yaml\n",
};


/* The conversion is calib/datasheet.c's; these are its names here. */
typedef sensim_datasheet ds;
typedef sensim_datasheet_value figure;
static const sensim_datasheet_figure_def *const figs = sensim_datasheet_figures;

static const char *const blocks[2] = {"gyro", "accel"};
#define NMODEL_KEYS 5
static const char *const model_keys[NMODEL_KEYS] = {"noise_density", "bias_instability", "random_walk", "range",
                                                    "quantization"};

static void print_table(const ds *d, FILE *out)
{
    fprintf(out, "sensor '%s'%s%s%s\n", d->name, d->part[0] ? " (" : "", d->part, d->part[0] ? ")" : "");
    if (d->datasheet[0])
        fprintf(out, "source: %s\n", d->datasheet);
    fprintf(out, "\n%-24s %-24s %-30s %s\n", "figure", "as given", "SI value", "model key");
    for (int i = 0; i < SENSIM_DATASHEET_NFIG; i++) {
        const figure *f = &d->f[i];
        if (!f->set)
            continue;
        char si[64], key[96];
        /* A bias-instability figure is the Allan floor; the rig's key holds
         * B = floor / 0.664: label both so the two numbers are not confused. */
        const int is_bi = !strcmp(figs[i].model_key, "bias_instability");
        snprintf(si, sizeof si, "%.6g %s%s", f->si, figs[i].si_unit, is_bi ? " (floor)" : "");
        if (!f->used)
            snprintf(key, sizeof key, "(not used)");
        else if (figs[i].block && is_bi)
            snprintf(key, sizeof key, "%s.%s = %.6g (B = floor / 0.664)", figs[i].block, figs[i].model_key,
                     sensim_datasheet_model_si(figs[i].model_key, f->si));
        else if (figs[i].block)
            snprintf(key, sizeof key, "%s.%s", figs[i].block, figs[i].model_key);
        else
            snprintf(key, sizeof key, "%s", figs[i].model_key);
        fprintf(out, "%-24s %-24s %-30s %s\n", figs[i].label, f->given, si, key);
    }
    fprintf(out, "\nconversions:\n");
    double rate = d->f[SENSIM_DATASHEET_RATE].set ? d->f[SENSIM_DATASHEET_RATE].si : 0;
    for (int i = 0; i < SENSIM_DATASHEET_NFIG; i++) {
        const figure *f = &d->f[i];
        if (!f->set)
            continue;
        fprintf(out, "  %s (%s):\n", figs[i].label, f->source);
        if (!f->unit[0]) {
            fprintf(out, "    %s has no unit: taken as SI, %.10g %s\n", f->given, f->si, figs[i].si_unit);
        } else {
            fprintf(out, "    1 %s = %.10g %s", f->unit, f->scale, figs[i].si_unit);
            if (f->explain[0])
                fprintf(out, "   (%s)", f->explain);
            fprintf(out, "\n    %s = %.10g x %.10g = %.10g %s\n", f->given, f->number, f->scale, f->si,
                    figs[i].si_unit);
        }
        if (f->used && rate > 0 && !strcmp(figs[i].model_key, "noise_density"))
            fprintf(out, "      per sample at %g Hz: N sqrt(f) = %.6g %s\n", rate, f->si * sqrt(rate),
                    figs[i].block[0] == 'g' ? "rad/s" : "m/s^2");
        if (f->used && rate > 0 && !strcmp(figs[i].model_key, "random_walk"))
            fprintf(out, "      bias step per sample at %g Hz: K / sqrt(f) = %.6g %s\n", rate, f->si / sqrt(rate),
                    figs[i].block[0] == 'g' ? "rad/s" : "m/s^2");
    }
}

/* The shortest "%.Ng" that reads back as the same double. */
static const char *fmt_double(double x, char *buf, size_t size)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

/* fmt_double for JSON: null for a value JSON cannot hold. */
static const char *json_double(double x, char *buf, size_t size)
{
    return isfinite(x) ? fmt_double(x, buf, size) : "null";
}

static void print_json(const ds *d, const char *warnings, FILE *out)
{
    fprintf(out, "{\"sensor\": ");
    cli_json_str(out, d->name);
    fprintf(out, ", \"part\": ");
    cli_json_str(out, d->part);
    fprintf(out, ", \"datasheet\": ");
    cli_json_str(out, d->datasheet);
    fprintf(out, ", \"figures\": [");
    int first = 1;
    for (int i = 0; i < SENSIM_DATASHEET_NFIG; i++) {
        const figure *f = &d->f[i];
        if (!f->set)
            continue;
        fprintf(out, "%s\n  {\"figure\": \"%s\", \"given\": ", first ? "" : ",", figs[i].opt);
        cli_json_str(out, f->given);
        fprintf(out, ", \"source\": ");
        cli_json_str(out, f->source);
        char v1[32], v2[32];
        fprintf(out, ", \"factor\": %s, \"si\": %s, \"unit\": \"%s\", ", json_double(f->scale, v1, sizeof v1),
                json_double(f->si, v2, sizeof v2), figs[i].si_unit);
        /* The value the key gets (B = floor / 0.664 for bias instability). */
        fprintf(out, "\"model_si\": %s, \"key\": ", json_double(sensim_datasheet_model_si(figs[i].model_key, f->si), v2, sizeof v2));
        if (!f->used)
            fprintf(out, "null");
        else if (figs[i].block)
            fprintf(out, "\"%s.%s\"", figs[i].block, figs[i].model_key);
        else
            fprintf(out, "\"%s\"", figs[i].model_key);
        fprintf(out, "}");
        first = 0;
    }
    fprintf(out, "\n], \"model\": {");
    const char *sep = "";
    if (d->f[SENSIM_DATASHEET_RATE].set) {
        char v[32];
        fprintf(out, "\"rate_hz\": %s", json_double(d->f[SENSIM_DATASHEET_RATE].si, v, sizeof v));
        sep = ", ";
    }
    for (int b = 0; b < 2; b++) {
        int any = 0;
        for (int k = 0; k < NMODEL_KEYS; k++) {
            const figure *f = sensim_datasheet_model_value(d, blocks[b], model_keys[k]);
            if (!f)
                continue;
            if (!any)
                fprintf(out, "%s\"%s\": {", sep, blocks[b]);
            char v[32];
            fprintf(out, "%s\"%s\": %s", any ? ", " : "", model_keys[k],
                    json_double(sensim_datasheet_model_si(model_keys[k], f->si), v, sizeof v));
            any = 1;
        }
        if (any) {
            fprintf(out, "}");
            sep = ", ";
        }
    }
    fprintf(out, "}, \"warnings\": [");
    first = 1;
    for (const char *w = warnings; *w;) {
        const char *nl = strchr(w, '\n');
        size_t n = nl ? (size_t)(nl - w) : strlen(w);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), w);
        fprintf(out, "%s", first ? "" : ", ");
        cli_json_str(out, line);
        first = 0;
        w += n + (nl ? 1 : 0);
    }
    fprintf(out, "]}\n");
}

/* A comment-safe copy: control characters become spaces. */
static void comment_text(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 ? ' ' : *s, out);
}

static sensim_status write_kalibr(const ds *d, FILE *out)
{
    fprintf(out, "# kalibr IMU noise model written by 'sensim datasheet' (sensim %s)", SENSIM_VERSION);
    if (d->part[0]) {
        fprintf(out, " for ");
        comment_text(out, d->part);
    }
    fprintf(out, "\n# Continuous-time noise densities and random walks, SI units: m/s^2/sqrt(Hz),\n"
                 "# m/s^3/sqrt(Hz), rad/s/sqrt(Hz), rad/s^2/sqrt(Hz); the rate in Hz.\n");
    sensim_kalibr_imu k = {"/imu0",
                           d->f[SENSIM_DATASHEET_RATE].si,
                           1,
                           1,
                           sensim_datasheet_model_value(d, "gyro", "noise_density")->si,
                           sensim_datasheet_model_value(d, "gyro", "random_walk")->si,
                           sensim_datasheet_model_value(d, "accel", "noise_density")->si,
                           sensim_datasheet_model_value(d, "accel", "random_walk")->si};
    sensim_ywriter *w = sensim_ywriter_create(out);
    if (!w)
        return sensim_last_status();
    sensim_imu_write_kalibr(w, &k);
    return sensim_ywriter_close(w);
}

/* What kalibr's imu.yaml needs that the figures do not give ("" if none):
 * returns whether something is missing. */
static int kalibr_missing(const ds *d, char *missing, size_t size)
{
    const char *need[5][3] = {{"accel", "noise_density", "--accel-noise-density or --vrw"},
                              {"accel", "random_walk", "--accel-random-walk"},
                              {"gyro", "noise_density", "--gyro-noise-density or --arw"},
                              {"gyro", "random_walk", "--gyro-random-walk"},
                              {NULL, NULL, "--rate"}};
    missing[0] = '\0';
    for (int k = 0; k < 5; k++) {
        int have = need[k][0] ? sensim_datasheet_model_value(d, need[k][0], need[k][1]) != NULL
                              : d->f[SENSIM_DATASHEET_RATE].set;
        if (!have) {
            size_t len = strlen(missing);
            snprintf(missing + len, size - len, "%s%s", len ? ", " : "", need[k][2]);
        }
    }
    return missing[0] != '\0';
}

/* Writes every output under a temporary name first, then renames them all,
 * so a failure while writing leaves the old files in place. */
static int write_outputs(const char *verb, const ds *d, const char *output, const char *kalibr)
{
    sensim_afile *outs[2] = {NULL, NULL};
    const char *paths[2] = {output, kalibr};
    for (int k = 0; k < 2; k++) {
        if (!paths[k])
            continue;
        if (!(outs[k] = sensim_afile_open(paths[k]))) {
            sensim_afile_abort(outs[0]);
            return cli_fail_lib(verb);
        }
        sensim_status st = k == 0 ? sensim_datasheet_write_rig(d, sensim_afile_stream(outs[k]))
                                  : write_kalibr(d, sensim_afile_stream(outs[k]));
        if (st) {
            sensim_afile_abort(outs[0]);
            sensim_afile_abort(outs[1]);
            return cli_fail_lib(verb);
        }
    }
    for (int k = 0; k < 2; k++) {
        if (outs[k] && sensim_afile_commit(outs[k])) {
            if (k == 0)
                sensim_afile_abort(outs[1]);
            return cli_fail_lib(verb);
        }
    }
    return CLI_OK;
}

int cmd_datasheet(int argc, char **argv)
{
    static const char *verb = "datasheet";
    ds d = sensim_datasheet_default();
    const char *preset = NULL;
    const char *opt_text[SENSIM_DATASHEET_NFIG] = {0};
    const char *output = NULL, *kalibr = NULL, *name = NULL;
    int json = 0, seed_given = 0;
    unsigned long long seed = 1;

    const cli_to to[] = {CLI_STR("preset", &preset), CLI_STR("name", &name), CLI_STR("output", &output),
                         CLI_STR("kalibr", &kalibr), CLI_FLAG("json", &json), {0}};
    int c;
    cli_parser op;
    cli_parse_begin_to(&op, &cmd_datasheet_spec, to, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case O_SEED:
            if (cli_parse_u64(optarg, &seed))
                return cli_usage_error(verb, "--seed: '%s' is not an unsigned integer", optarg);
            seed_given = 1;
            break;
        default: opt_text[c - O_FIG] = optarg; break;
        }
    }
    if (c)
        return cli_parse_exit(c);
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    if (name && (!*name || strlen(name) >= sizeof d.name))
        return cli_usage_error(verb, "--name: must be 1 to %zu characters", sizeof d.name - 1);
    int any_opt = 0;
    for (int i = 0; i < SENSIM_DATASHEET_NFIG; i++)
        any_opt |= opt_text[i] != NULL;
    if (!any_opt && !preset)
        return cli_usage_error(verb, "no datasheet figures given (options such as --arw, or --preset FILE)");
    if (output && kalibr && !strcmp(output, kalibr))
        return cli_usage_error(verb, "-o and --kalibr name the same file");
    if (cli_check_output(verb, output, preset ? preset : "", NULL) ||
        cli_check_output(verb, kalibr, preset ? preset : "", NULL))
        return CLI_FAIL;

    if (preset && sensim_datasheet_load_preset(&d, preset))
        return cli_fail_lib(verb);
    for (int i = 0; i < SENSIM_DATASHEET_NFIG; i++) {
        if (!opt_text[i])
            continue;
        char where[64];
        snprintf(where, sizeof where, "--%s", figs[i].opt);
        if (sensim_datasheet_set(&d, (sensim_datasheet_fig)i, opt_text[i], where))
            return cli_fail_lib(verb);
    }
    if (name)
        snprintf(d.name, sizeof d.name, "%s", name);
    if (seed_given)
        d.seed = seed;

    char warnings[2048] = "";
    if (!sensim_datasheet_resolve(&d, warnings, sizeof warnings))
        return cli_fail(verb, "%s: no datasheet figures in the preset", preset);

    if (output && !d.f[SENSIM_DATASHEET_RATE].set)
        return cli_fail(verb, "-o: the rig needs the sensor's rate: give --rate (or 'rate' in the preset)");
    if (kalibr) {
        char missing[256];
        if (kalibr_missing(&d, missing, sizeof missing))
            return cli_fail(verb, "--kalibr: kalibr's imu.yaml needs %s", missing);
    }

    if (warnings[0]) {
        for (const char *w = warnings; *w;) {
            const char *nl = strchr(w, '\n');
            int len = (int)(nl ? nl - w : (long)strlen(w));
            fprintf(stderr, "sensim %s: %.*s\n", verb, len, w);
            w += len + (nl ? 1 : 0);
        }
    }
    if (json)
        print_json(&d, warnings, stdout);
    else
        print_table(&d, stdout);
    if (fflush(stdout))
        return cli_fail(verb, "cannot write to standard output: %s", strerror(errno));

    return write_outputs(verb, &d, output, kalibr);
}
