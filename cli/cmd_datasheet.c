/* sensim datasheet - datasheet figures (with their units) to sensim IMU model
 * parameters, showing each conversion step by step; optionally writes a rig
 * YAML and a kalibr imu.yaml.
 *
 * Conversions are those of MODELS.md "Datasheet units": ARW in deg/sqrt(h) and
 * a noise density in deg/s/sqrt(Hz) are both rad/sqrt(s) (the Allan N
 * coefficient, IEEE Std 952 annex C); VRW in m/s/sqrt(h) is an acceleration
 * density m/s^2/sqrt(Hz); the bias random walk K is rad/s^2/sqrt(Hz) or
 * m/s^3/sqrt(Hz). Per-sample values at the rate f (white sigma_d = N sqrt(f),
 * random-walk step sigma_bd = K / sqrt(f)) are shown for reference. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sensim/afile.h"
#include "sensim/units.h"
#include "sensim/yaml.h"

enum { F_ARW, F_GND, F_GBI, F_GRW, F_GRANGE, F_GRES, F_VRW, F_AND, F_ABI, F_ARW_ACC, F_ARANGE, F_ARES, F_RATE, NFIG };
enum { O_PRESET = CLI_LONG, O_NAME, O_SEED, O_KALIBR, O_JSON, O_FIG };

/* The figures' options are O_FIG + F_*; figs[] below gives each its
 * preset key, label and units. */
static const cli_opt cmd_datasheet_opts[] = {
    {O_FIG + F_ARW, "arw", "Q", "gyro angle random walk (deg/sqrt(h))"},
    {O_FIG + F_GND, "gyro-noise-density", "Q", "gyro noise density (deg/s/sqrt(Hz))"},
    {O_FIG + F_GBI, "gyro-bias-instability", "Q", "gyro in-run bias instability (deg/h)"},
    {O_FIG + F_GRW, "gyro-random-walk", "Q", "gyro rate random walk (deg/h/sqrt(h))"},
    {O_FIG + F_GRANGE, "gyro-range", "Q", "gyro full-scale range (deg/s)"},
    {O_FIG + F_GRES, "gyro-resolution", "Q", "gyro quantization step, one LSB (deg/s)"},
    {O_FIG + F_VRW, "vrw", "Q", "velocity random walk (m/s/sqrt(h))"},
    {O_FIG + F_AND, "accel-noise-density", "Q", "accel noise density (ug/sqrt(Hz))"},
    {O_FIG + F_ABI, "accel-bias-instability", "Q", "accel in-run bias instability (ug)"},
    {O_FIG + F_ARW_ACC, "accel-random-walk", "Q", "accel bias random walk (m/s^3/sqrt(Hz))"},
    {O_FIG + F_ARANGE, "accel-range", "Q", "accel full-scale range (g)"},
    {O_FIG + F_ARES, "accel-resolution", "Q", "accel quantization step, one LSB (mg)"},
    {O_FIG + F_RATE, "rate", "Q", "output data rate (Hz)"},
    {0, NULL, NULL, "\nOptions:\n"},
    {O_PRESET, "preset", "FILE.yaml", "read figures from FILE (keys as the options,\n"
                                      "with '_' for '-'); options override it"},
    {O_NAME, "name", "NAME", "sensor name in the rig (default imu)"},
    {O_SEED, "seed", "N", "rig seed (default 1)"},
    {'o', "output", "FILE", "write a rig YAML with one imu sensor"},
    {O_KALIBR, "kalibr", "FILE", "write kalibr's imu.yaml"},
    {O_JSON, "json", NULL, "print the conversion as JSON instead of a table"},
    {'h', "help", NULL, "this text"},
    {0}};

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

typedef struct figure_def {
    const char *opt;       /* option name; the preset key has '_' for '-' */
    const char *key;       /* preset key */
    const char *label;
    const char *block;     /* "gyro", "accel" or NULL */
    const char *model_key; /* key in the rig's block */
    const char *si_unit;   /* how the SI value is written */
    int positive;          /* must be > 0 rather than >= 0 */
    const char *unit;      /* the unit --help shows: that of a bare number */
} figure_def;

static const figure_def figs[NFIG] = {
    [F_ARW] = {"arw", "arw", "gyro angle random walk", "gyro", "noise_density", "rad/s/sqrt(Hz)", 0, "deg/sqrt(h)"},
    [F_GND] = {"gyro-noise-density", "gyro_noise_density", "gyro noise density", "gyro", "noise_density",
               "rad/s/sqrt(Hz)", 0, "deg/s/sqrt(Hz)"},
    [F_GBI] = {"gyro-bias-instability", "gyro_bias_instability", "gyro bias instability", "gyro", "bias_instability",
               "rad/s", 0, "deg/h"},
    [F_GRW] = {"gyro-random-walk", "gyro_random_walk", "gyro rate random walk", "gyro", "random_walk",
               "rad/s^2/sqrt(Hz)", 0, "deg/h/sqrt(h)"},
    [F_GRANGE] = {"gyro-range", "gyro_range", "gyro range", "gyro", "range", "rad/s", 1, "deg/s"},
    [F_GRES] = {"gyro-resolution", "gyro_resolution", "gyro resolution", "gyro", "quantization", "rad/s", 1, "deg/s"},
    [F_VRW] = {"vrw", "vrw", "velocity random walk", "accel", "noise_density", "m/s^2/sqrt(Hz)", 0, "m/s/sqrt(h)"},
    [F_AND] = {"accel-noise-density", "accel_noise_density", "accel noise density", "accel", "noise_density",
               "m/s^2/sqrt(Hz)", 0, "ug/sqrt(Hz)"},
    [F_ABI] = {"accel-bias-instability", "accel_bias_instability", "accel bias instability", "accel",
               "bias_instability", "m/s^2", 0, "ug"},
    [F_ARW_ACC] = {"accel-random-walk", "accel_random_walk", "accel bias random walk", "accel", "random_walk",
                   "m/s^3/sqrt(Hz)", 0, "m/s^3/sqrt(Hz)"},
    [F_ARANGE] = {"accel-range", "accel_range", "accel range", "accel", "range", "m/s^2", 1, "g"},
    [F_ARES] = {"accel-resolution", "accel_resolution", "accel resolution", "accel", "quantization", "m/s^2", 1, "mg"},
    [F_RATE] = {"rate", "rate", "output data rate", NULL, "rate_hz", "Hz", 1, "Hz"},
};

static sensim_dim fig_dim(int i)
{
    switch (i) {
    case F_ARW:
    case F_GND: return SENSIM_DIM_ANGULAR_RATE_DENSITY;
    case F_GBI:
    case F_GRANGE:
    case F_GRES: return SENSIM_DIM_ANGULAR_RATE;
    case F_GRW: return SENSIM_DIM_ANGULAR_RATE_RW;
    case F_VRW:
    case F_AND: return SENSIM_DIM_ACCEL_DENSITY;
    case F_ABI:
    case F_ARANGE:
    case F_ARES: return SENSIM_DIM_ACCEL;
    case F_ARW_ACC: return SENSIM_DIM_ACCEL_RW;
    default: return SENSIM_DIM_FREQUENCY;
    }
}

typedef struct figure {
    int set;
    int used;          /* goes into the model (one of two equivalent figures may not) */
    char given[128];   /* the text as written */
    char source[320];  /* "--arw" or "preset.yaml:4" */
    double si;
    double number;     /* the number as written */
    double scale;      /* SI value of one of the written unit */
    char unit[96];     /* the unit as written, "" if none */
    char explain[256]; /* "deg = pi/180 rad; h = 3600 s" */
} figure;

typedef struct ds {
    figure f[NFIG];
    char name[64];
    char part[128];
    char datasheet[256];
    unsigned long long seed;
    const char *preset;
} ds;

/* Converts `text` for figure i; errors are prefixed with `where`. */
static int set_figure(ds *d, int i, const char *text_in, const char *where)
{
    figure *f = &d->f[i];
    double si;
    /* A bare number is in the unit --help shows beside the option (0.66
     * for --arw is 0.66 deg/sqrt(h), not rad/s/sqrt(Hz)). */
    char withunit[160];
    const char *text = text_in;
    double v0;
    sensim_dim d0;
    int has_unit = 1;
    if (sensim_units_parse(text_in, &v0, &d0, &has_unit) == SENSIM_OK && !has_unit) {
        size_t n = strlen(text_in);
        while (n && (text_in[n - 1] == ' ' || text_in[n - 1] == '\t'))
            n--;
        snprintf(withunit, sizeof withunit, "%.*s %s", (int)(n < 100 ? n : 100), text_in, figs[i].unit);
        text = withunit;
    }
    if (sensim_units_convert(text, fig_dim(i), &si)) {
        sensim_error_prefix(sensim_last_status(), "%s", where);
        return -1;
    }
    if (si < 0 || (figs[i].positive && si == 0)) {
        sensim_error(SENSIM_EINVAL, "%s: '%s': must be %s", where, text_in, figs[i].positive ? "> 0" : ">= 0");
        return -1;
    }
    if (strlen(text) >= sizeof f->given) {
        sensim_error(SENSIM_EINVAL, "%s: value too long", where);
        return -1;
    }
    memset(f, 0, sizeof *f);
    f->set = 1;
    f->si = si;
    snprintf(f->given, sizeof f->given, "%s", text);
    snprintf(f->source, sizeof f->source, "%s", where);
    /* The text is valid, so strtod stops where the unit begins. */
    char *end;
    f->number = strtod(text, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    snprintf(f->unit, sizeof f->unit, "%s", end);
    size_t n = strlen(f->unit);
    while (n && (f->unit[n - 1] == ' ' || f->unit[n - 1] == '\t'))
        f->unit[--n] = '\0';
    f->scale = 1.0;
    if (f->unit[0] && sensim_units_explain(f->unit, &f->scale, NULL, f->explain, sizeof f->explain))
        return -1;
    return 0;
}

static int load_preset(ds *d, const char *path)
{
    sensim_yaml *doc = sensim_yaml_load_file(path);
    if (!doc)
        return -1;
    const sensim_ynode *root = sensim_yaml_root(doc);
    const char *allowed[NFIG + 6];
    size_t k = 0;
    allowed[k++] = "name";
    allowed[k++] = "part";
    allowed[k++] = "datasheet";
    allowed[k++] = "notes";
    allowed[k++] = "seed";
    for (int i = 0; i < NFIG; i++)
        allowed[k++] = figs[i].key;
    allowed[k] = NULL;
    int rc = -1;
    const char *s;
    if (sensim_ynode_check_keys(root, "datasheet preset", allowed))
        goto done;
    s = NULL;
    if (sensim_ynode_get_string(root, "name", 0, &s))
        goto done;
    if (s)
        snprintf(d->name, sizeof d->name, "%s", s);
    s = NULL;
    if (sensim_ynode_get_string(root, "part", 0, &s))
        goto done;
    if (s)
        snprintf(d->part, sizeof d->part, "%s", s);
    s = NULL;
    if (sensim_ynode_get_string(root, "datasheet", 0, &s))
        goto done;
    if (s)
        snprintf(d->datasheet, sizeof d->datasheet, "%s", s);
    uint64_t seed = d->seed;
    if (sensim_ynode_get_uint64(root, "seed", 0, &seed))
        goto done;
    d->seed = seed;
    for (int i = 0; i < NFIG; i++) {
        const sensim_ynode *v = sensim_ynode_get(root, figs[i].key);
        if (!v)
            continue;
        const char *text = sensim_ynode_scalar(v);
        char where[400];
        snprintf(where, sizeof where, "%s:%d: key '%s'", path, sensim_ynode_line(v), figs[i].key);
        if (!text || !*text) {
            sensim_error(SENSIM_EINVAL, "%s: expected a number with a unit", where);
            goto done;
        }
        if (set_figure(d, i, text, where))
            goto done;
        snprintf(d->f[i].source, sizeof d->f[i].source, "%s:%d", path, sensim_ynode_line(v));
    }
    rc = 0;
done:
    sensim_yaml_free(doc);
    return rc;
}

/* Picks one of two equivalent figures (ARW / noise density) for the model,
 * warning when they disagree by more than 10%. The random-walk figure (the
 * Allan N coefficient, measured over the long averaging times a simulation
 * runs for) is preferred over a spectral density read at one frequency. */
static void choose(ds *d, int first, int second, char *warn, size_t wsize)
{
    figure *a = &d->f[first], *b = &d->f[second];
    a->used = a->set;
    b->used = b->set && !a->set;
    if (!a->set || !b->set)
        return;
    double rel = a->si > 0 ? fabs(b->si - a->si) / a->si : (b->si > 0 ? INFINITY : 0);
    if (rel > 0.10) {
        size_t n = strlen(warn);
        snprintf(warn + n, wsize - n,
                 "warning: %s %s (from %s) = %.4g %s and %s %s (from %s) = %.4g %s differ by %.0f%%; using %s\n",
                 figs[first].opt, a->given, a->source, a->si, figs[first].si_unit, figs[second].opt, b->given,
                 b->source, b->si, figs[second].si_unit, 100 * rel, figs[first].opt);
    }
}

static const char *const blocks[2] = {"gyro", "accel"};
#define NMODEL_KEYS 5
/* The rig's bias_instability is the IEEE Std 952 coefficient B, whose Allan
 * deviation floor is 0.664 B; a datasheet's bias instability is that floor
 * (the minimum of its Allan deviation plot), so B = figure / 0.664. */
#define BI_FLOOR_PER_B 0.664

static double model_si(const char *key, double si)
{
    return strcmp(key, "bias_instability") ? si : si / BI_FLOOR_PER_B;
}

static const char *const model_keys[NMODEL_KEYS] = {"noise_density", "bias_instability", "random_walk", "range",
                                                    "quantization"};

static const figure *model_value(const ds *d, const char *block, const char *key)
{
    for (int i = 0; i < NFIG; i++)
        if (d->f[i].used && figs[i].block && !strcmp(figs[i].block, block) && !strcmp(figs[i].model_key, key))
            return &d->f[i];
    return NULL;
}

static void print_table(const ds *d, FILE *out)
{
    fprintf(out, "sensor '%s'%s%s%s\n", d->name, d->part[0] ? " (" : "", d->part, d->part[0] ? ")" : "");
    if (d->datasheet[0])
        fprintf(out, "source: %s\n", d->datasheet);
    fprintf(out, "\n%-24s %-24s %-30s %s\n", "figure", "as given", "SI value", "model key");
    for (int i = 0; i < NFIG; i++) {
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
                     model_si(figs[i].model_key, f->si));
        else if (figs[i].block)
            snprintf(key, sizeof key, "%s.%s", figs[i].block, figs[i].model_key);
        else
            snprintf(key, sizeof key, "%s", figs[i].model_key);
        fprintf(out, "%-24s %-24s %-30s %s\n", figs[i].label, f->given, si, key);
    }
    fprintf(out, "\nconversions:\n");
    double rate = d->f[F_RATE].set ? d->f[F_RATE].si : 0;
    for (int i = 0; i < NFIG; i++) {
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
    for (int i = 0; i < NFIG; i++) {
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
        fprintf(out, "\"model_si\": %s, \"key\": ", json_double(model_si(figs[i].model_key, f->si), v2, sizeof v2));
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
    if (d->f[F_RATE].set) {
        char v[32];
        fprintf(out, "\"rate_hz\": %s", json_double(d->f[F_RATE].si, v, sizeof v));
        sep = ", ";
    }
    for (int b = 0; b < 2; b++) {
        int any = 0;
        for (int k = 0; k < NMODEL_KEYS; k++) {
            const figure *f = model_value(d, blocks[b], model_keys[k]);
            if (!f)
                continue;
            if (!any)
                fprintf(out, "%s\"%s\": {", sep, blocks[b]);
            char v[32];
            fprintf(out, "%s\"%s\": %s", any ? ", " : "", model_keys[k],
                    json_double(model_si(model_keys[k], f->si), v, sizeof v));
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

static void write_rig(const ds *d, FILE *out)
{
    fprintf(out, "# sensim rig written by 'sensim datasheet' (sensim %s)", SENSIM_VERSION);
    if (d->part[0]) {
        fprintf(out, " for ");
        comment_text(out, d->part);
    }
    fprintf(out, "\n");
    if (d->datasheet[0]) {
        fprintf(out, "# source: ");
        comment_text(out, d->datasheet);
        fprintf(out, "\n");
    }
    fprintf(out, "# Values are SI; each comment gives the datasheet figure it came from.\n");
    fprintf(out, "seed: %llu\nsensors:\n  - name: ", d->seed);
    cli_json_str(out, d->name); /* a JSON string is a valid YAML double-quoted scalar */
    char v[32];
    fprintf(out, "\n    type: imu\n    rate_hz: %s\n", fmt_double(d->f[F_RATE].si, v, sizeof v));
    for (int b = 0; b < 2; b++) {
        int any = 0;
        for (int k = 0; k < NMODEL_KEYS; k++) {
            const figure *f = model_value(d, blocks[b], model_keys[k]);
            if (!f)
                continue;
            int i = (int)(f - d->f);
            if (!any)
                fprintf(out, "    %s:\n", blocks[b]);
            any = 1;
            char v[32];
            fprintf(out, "      %s: %s  # %s <- %s%s ", model_keys[k], fmt_double(model_si(model_keys[k], f->si), v, sizeof v),
                    figs[i].si_unit, figs[i].opt, strcmp(model_keys[k], "bias_instability") ? "" : " / 0.664 (IEEE B)");
            comment_text(out, f->given);
            fprintf(out, "\n");
        }
    }
}

static void write_kalibr(const ds *d, FILE *out)
{
    fprintf(out, "# kalibr IMU noise model written by 'sensim datasheet' (sensim %s)", SENSIM_VERSION);
    if (d->part[0]) {
        fprintf(out, " for ");
        comment_text(out, d->part);
    }
    fprintf(out, "\n# Continuous-time noise densities and random walks, SI units.\n");
    char v[32];
    fprintf(out, "accelerometer_noise_density: %s  # m/s^2/sqrt(Hz)\n",
            fmt_double(model_value(d, "accel", "noise_density")->si, v, sizeof v));
    fprintf(out, "accelerometer_random_walk: %s  # m/s^3/sqrt(Hz)\n",
            fmt_double(model_value(d, "accel", "random_walk")->si, v, sizeof v));
    fprintf(out, "gyroscope_noise_density: %s  # rad/s/sqrt(Hz)\n",
            fmt_double(model_value(d, "gyro", "noise_density")->si, v, sizeof v));
    fprintf(out, "gyroscope_random_walk: %s  # rad/s^2/sqrt(Hz)\n",
            fmt_double(model_value(d, "gyro", "random_walk")->si, v, sizeof v));
    fprintf(out, "rostopic: /imu0\nupdate_rate: %s  # Hz\n", fmt_double(d->f[F_RATE].si, v, sizeof v));
}

int cmd_datasheet(int argc, char **argv)
{
    static const char *verb = "datasheet";
    ds d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "imu");
    d.seed = 1;
    const char *opt_text[NFIG] = {0};
    const char *output = NULL, *kalibr = NULL, *name = NULL;
    int json = 0, seed_given = 0;
    unsigned long long seed = 1;

    int c;
    cli_parser op;
    cli_parse_begin(&op, &cmd_datasheet_spec, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case O_PRESET: d.preset = optarg; break;
        case O_NAME: name = optarg; break;
        case O_SEED:
            if (cli_parse_u64(optarg, &seed))
                return cli_usage_error(verb, "--seed: '%s' is not an unsigned integer", optarg);
            seed_given = 1;
            break;
        case 'o': output = optarg; break;
        case O_KALIBR: kalibr = optarg; break;
        case O_JSON: json = 1; break;
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
    for (int i = 0; i < NFIG; i++)
        any_opt |= opt_text[i] != NULL;
    if (!any_opt && !d.preset)
        return cli_usage_error(verb, "no datasheet figures given (options such as --arw, or --preset FILE)");
    if (output && kalibr && !strcmp(output, kalibr))
        return cli_usage_error(verb, "-o and --kalibr name the same file");
    if (cli_check_output(verb, output, d.preset ? d.preset : "", NULL) ||
        cli_check_output(verb, kalibr, d.preset ? d.preset : "", NULL))
        return CLI_FAIL;

    if (d.preset && load_preset(&d, d.preset))
        return cli_fail_lib(verb);
    for (int i = 0; i < NFIG; i++) {
        if (!opt_text[i])
            continue;
        char where[64];
        snprintf(where, sizeof where, "--%s", figs[i].opt);
        if (set_figure(&d, i, opt_text[i], where))
            return cli_fail_lib(verb);
    }
    if (name)
        snprintf(d.name, sizeof d.name, "%s", name);
    if (seed_given)
        d.seed = seed;

    int nset = 0;
    for (int i = 0; i < NFIG; i++) {
        d.f[i].used = d.f[i].set;
        nset += d.f[i].set;
    }
    if (!nset)
        return cli_fail(verb, "%s: no datasheet figures in the preset", d.preset);
    char warnings[2048] = "";
    choose(&d, F_ARW, F_GND, warnings, sizeof warnings);
    choose(&d, F_VRW, F_AND, warnings, sizeof warnings);

    if (output && !d.f[F_RATE].set)
        return cli_fail(verb, "-o: the rig needs the sensor's rate: give --rate (or 'rate' in the preset)");
    if (kalibr) {
        const char *need[5][3] = {{"accel", "noise_density", "--accel-noise-density or --vrw"},
                                  {"accel", "random_walk", "--accel-random-walk"},
                                  {"gyro", "noise_density", "--gyro-noise-density or --arw"},
                                  {"gyro", "random_walk", "--gyro-random-walk"},
                                  {NULL, NULL, "--rate"}};
        char missing[256] = "";
        for (int k = 0; k < 5; k++) {
            int have = need[k][0] ? model_value(&d, need[k][0], need[k][1]) != NULL : d.f[F_RATE].set;
            if (!have) {
                size_t len = strlen(missing);
                snprintf(missing + len, sizeof missing - len, "%s%s", len ? ", " : "", need[k][2]);
            }
        }
        if (missing[0])
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

    /* Write every output under a temporary name first, then rename them all,
     * so a failure while writing leaves the old files in place. */
    sensim_afile *outs[2] = {NULL, NULL};
    const char *paths[2] = {output, kalibr};
    for (int k = 0; k < 2; k++) {
        if (!paths[k])
            continue;
        if (!(outs[k] = sensim_afile_open(paths[k]))) {
            sensim_afile_abort(outs[0]);
            return cli_fail_lib(verb);
        }
        if (k == 0)
            write_rig(&d, sensim_afile_stream(outs[k]));
        else
            write_kalibr(&d, sensim_afile_stream(outs[k]));
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
