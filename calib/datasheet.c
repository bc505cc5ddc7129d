/* IMU datasheet figures to sensim IMU model parameters (sensim/datasheet.h):
 * the conversion of `sensim datasheet`, step by step values kept for its
 * table. */
#include "sensim/datasheet.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/imu.h"
#include "sensim/rig.h"
#include "sensim/units.h"
#include "sensim/yaml.h"

const sensim_datasheet_figure_def sensim_datasheet_figures[SENSIM_DATASHEET_NFIG] = {
    [SENSIM_DATASHEET_ARW] = {"arw", "arw", "gyro angle random walk", "gyro", "noise_density", "rad/s/sqrt(Hz)", 0, "deg/sqrt(h)"},
    [SENSIM_DATASHEET_GYRO_ND] = {"gyro-noise-density", "gyro_noise_density", "gyro noise density", "gyro", "noise_density",
               "rad/s/sqrt(Hz)", 0, "deg/s/sqrt(Hz)"},
    [SENSIM_DATASHEET_GYRO_BI] = {"gyro-bias-instability", "gyro_bias_instability", "gyro bias instability", "gyro", "bias_instability",
               "rad/s", 0, "deg/h"},
    [SENSIM_DATASHEET_GYRO_RW] = {"gyro-random-walk", "gyro_random_walk", "gyro rate random walk", "gyro", "random_walk",
               "rad/s^2/sqrt(Hz)", 0, "deg/h/sqrt(h)"},
    [SENSIM_DATASHEET_GYRO_RANGE] = {"gyro-range", "gyro_range", "gyro range", "gyro", "range", "rad/s", 1, "deg/s"},
    [SENSIM_DATASHEET_GYRO_RES] = {"gyro-resolution", "gyro_resolution", "gyro resolution", "gyro", "quantization", "rad/s", 1, "deg/s"},
    [SENSIM_DATASHEET_VRW] = {"vrw", "vrw", "velocity random walk", "accel", "noise_density", "m/s^2/sqrt(Hz)", 0, "m/s/sqrt(h)"},
    [SENSIM_DATASHEET_ACCEL_ND] = {"accel-noise-density", "accel_noise_density", "accel noise density", "accel", "noise_density",
               "m/s^2/sqrt(Hz)", 0, "ug/sqrt(Hz)"},
    [SENSIM_DATASHEET_ACCEL_BI] = {"accel-bias-instability", "accel_bias_instability", "accel bias instability", "accel",
               "bias_instability", "m/s^2", 0, "ug"},
    [SENSIM_DATASHEET_ACCEL_RW] = {"accel-random-walk", "accel_random_walk", "accel bias random walk", "accel", "random_walk",
                   "m/s^3/sqrt(Hz)", 0, "m/s^3/sqrt(Hz)"},
    [SENSIM_DATASHEET_ACCEL_RANGE] = {"accel-range", "accel_range", "accel range", "accel", "range", "m/s^2", 1, "g"},
    [SENSIM_DATASHEET_ACCEL_RES] = {"accel-resolution", "accel_resolution", "accel resolution", "accel", "quantization", "m/s^2", 1, "mg"},
    [SENSIM_DATASHEET_RATE] = {"rate", "rate", "output data rate", NULL, "rate_hz", "Hz", 1, "Hz"},
};

static sensim_dim fig_dim(sensim_datasheet_fig i)
{
    switch (i) {
    case SENSIM_DATASHEET_ARW:
    case SENSIM_DATASHEET_GYRO_ND: return SENSIM_DIM_ANGULAR_RATE_DENSITY;
    case SENSIM_DATASHEET_GYRO_BI:
    case SENSIM_DATASHEET_GYRO_RANGE:
    case SENSIM_DATASHEET_GYRO_RES: return SENSIM_DIM_ANGULAR_RATE;
    case SENSIM_DATASHEET_GYRO_RW: return SENSIM_DIM_ANGULAR_RATE_RW;
    case SENSIM_DATASHEET_VRW:
    case SENSIM_DATASHEET_ACCEL_ND: return SENSIM_DIM_ACCEL_DENSITY;
    case SENSIM_DATASHEET_ACCEL_BI:
    case SENSIM_DATASHEET_ACCEL_RANGE:
    case SENSIM_DATASHEET_ACCEL_RES: return SENSIM_DIM_ACCEL;
    case SENSIM_DATASHEET_ACCEL_RW: return SENSIM_DIM_ACCEL_RW;
    default: return SENSIM_DIM_FREQUENCY;
    }
}

sensim_datasheet sensim_datasheet_default(void)
{
    sensim_datasheet d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "imu");
    d.seed = 1;
    return d;
}

sensim_status sensim_datasheet_set(sensim_datasheet *d, sensim_datasheet_fig i, const char *text_in, const char *where)
{
    sensim_datasheet_value *f = &d->f[i];
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
        snprintf(withunit, sizeof withunit, "%.*s %s", (int)(n < 100 ? n : 100), text_in, sensim_datasheet_figures[i].unit);
        text = withunit;
    }
    if (sensim_units_convert(text, fig_dim(i), &si))
        return sensim_error_prefix(sensim_last_status(), "%s", where);
    if (si < 0 || (sensim_datasheet_figures[i].positive && si == 0))
        return sensim_error(SENSIM_EINVAL, "%s: '%s': must be %s", where, text_in,
                            sensim_datasheet_figures[i].positive ? "> 0" : ">= 0");
    const size_t len = strlen(text);
    if (len >= sizeof f->given)
        return sensim_error(SENSIM_EINVAL, "%s: value too long", where);
    memset(f, 0, sizeof *f);
    f->set = 1;
    f->si = si;
    memcpy(f->given, text, len + 1); /* fits: checked above */
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
    if (f->unit[0])
        return sensim_units_explain(f->unit, &f->scale, NULL, f->explain, sizeof f->explain);
    return SENSIM_OK;
}

sensim_status sensim_datasheet_load_preset(sensim_datasheet *d, const char *path)
{
    sensim_yaml *doc = sensim_yaml_load_file(path);
    if (!doc)
        return sensim_last_status();
    const sensim_ynode *root = sensim_yaml_root(doc);
    const char *allowed[SENSIM_DATASHEET_NFIG + 6];
    size_t k = 0;
    allowed[k++] = "name";
    allowed[k++] = "part";
    allowed[k++] = "datasheet";
    allowed[k++] = "notes";
    allowed[k++] = "seed";
    for (int i = 0; i < SENSIM_DATASHEET_NFIG; i++)
        allowed[k++] = sensim_datasheet_figures[i].key;
    allowed[k] = NULL;
    sensim_status rc = SENSIM_OK;
    const char *s;
    if (sensim_ynode_check_keys(root, "datasheet preset", allowed))
        goto fail;
    s = NULL;
    if (sensim_ynode_get_string(root, "name", 0, &s))
        goto fail;
    if (s)
        snprintf(d->name, sizeof d->name, "%s", s);
    s = NULL;
    if (sensim_ynode_get_string(root, "part", 0, &s))
        goto fail;
    if (s)
        snprintf(d->part, sizeof d->part, "%s", s);
    s = NULL;
    if (sensim_ynode_get_string(root, "datasheet", 0, &s))
        goto fail;
    if (s)
        snprintf(d->datasheet, sizeof d->datasheet, "%s", s);
    uint64_t seed = d->seed;
    if (sensim_ynode_get_uint64(root, "seed", 0, &seed))
        goto fail;
    d->seed = seed;
    for (int i = 0; i < SENSIM_DATASHEET_NFIG; i++) {
        const sensim_ynode *v = sensim_ynode_get(root, sensim_datasheet_figures[i].key);
        if (!v)
            continue;
        const char *text = sensim_ynode_scalar(v);
        char where[400];
        snprintf(where, sizeof where, "%s:%d: key '%s'", path, sensim_ynode_line(v),
                 sensim_datasheet_figures[i].key);
        if (!text || !*text) {
            rc = sensim_error(SENSIM_EINVAL, "%s: expected a number with a unit", where);
            goto done;
        }
        if ((rc = sensim_datasheet_set(d, (sensim_datasheet_fig)i, text, where)))
            goto done;
        snprintf(d->f[i].source, sizeof d->f[i].source, "%s:%d", path, sensim_ynode_line(v));
    }
    goto done;
fail:
    rc = sensim_last_status();
done:
    sensim_yaml_free(doc);
    return rc;
}

/* Picks one of two equivalent figures (ARW / noise density) for the model,
 * warning when they disagree by more than 10%. The random-walk figure (the
 * Allan N coefficient, measured over the long averaging times a simulation
 * runs for) is preferred over a spectral density read at one frequency. */
static void choose(sensim_datasheet *d, int first, int second, char *warn, size_t wsize)
{
    sensim_datasheet_value *a = &d->f[first], *b = &d->f[second];
    a->used = a->set;
    b->used = b->set && !a->set;
    if (!a->set || !b->set)
        return;
    double rel = a->si > 0 ? fabs(b->si - a->si) / a->si : (b->si > 0 ? INFINITY : 0);
    if (rel > 0.10 && warn) {
        const sensim_datasheet_figure_def *fa = &sensim_datasheet_figures[first], *fb = &sensim_datasheet_figures[second];
        size_t n = strlen(warn);
        snprintf(warn + n, wsize - n,
                 "warning: %s %s (from %s) = %.4g %s and %s %s (from %s) = %.4g %s differ by %.0f%%; using %s\n",
                 fa->opt, a->given, a->source, a->si, fa->si_unit, fb->opt, b->given, b->source, b->si, fb->si_unit,
                 100 * rel, fa->opt);
    }
}

int sensim_datasheet_resolve(sensim_datasheet *d, char *warn, size_t size)
{
    int nset = 0;
    for (int i = 0; i < SENSIM_DATASHEET_NFIG; i++) {
        d->f[i].used = d->f[i].set;
        nset += d->f[i].set;
    }
    choose(d, SENSIM_DATASHEET_ARW, SENSIM_DATASHEET_GYRO_ND, warn, size);
    choose(d, SENSIM_DATASHEET_VRW, SENSIM_DATASHEET_ACCEL_ND, warn, size);
    return nset;
}

/* The rig's bias_instability is the IEEE Std 952 coefficient B, whose Allan
 * deviation floor is 0.664 B; a datasheet's bias instability is that floor
 * (the minimum of its Allan deviation plot), so B = figure / 0.664. */
#define BI_FLOOR_PER_B 0.664

double sensim_datasheet_model_si(const char *key, double si)
{
    return strcmp(key, "bias_instability") ? si : si / BI_FLOOR_PER_B;
}

const sensim_datasheet_value *sensim_datasheet_model_value(const sensim_datasheet *d, const char *block,
                                                           const char *key)
{
    for (int i = 0; i < SENSIM_DATASHEET_NFIG; i++)
        if (d->f[i].used && sensim_datasheet_figures[i].block && !strcmp(sensim_datasheet_figures[i].block, block) && !strcmp(sensim_datasheet_figures[i].model_key, key))
            return &d->f[i];
    return NULL;
}

static const char *const model_blocks[2] = {"gyro", "accel"};
#define NMODEL_KEYS 5
static const char *const model_keys[NMODEL_KEYS] = {"noise_density", "bias_instability", "random_walk", "range",
                                                    "quantization"};

/* A comment-safe copy: control characters become spaces. */
static void comment_text(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 ? ' ' : *s, out);
}

sensim_status sensim_datasheet_write_rig(const sensim_datasheet *d, FILE *out)
{
    if (!d->f[SENSIM_DATASHEET_RATE].set)
        return sensim_error(SENSIM_EINVAL, "datasheet: the rig needs the sensor's rate (figure 'rate')");
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
    fprintf(out, "# Values are SI; the datasheet figure each came from:\n");
    sensim_imu_params p = sensim_imu_default_params();
    for (int b = 0; b < 2; b++) {
        sensim_triax_params *t = &p.triax[b == 0 ? SENSIM_GYRO : SENSIM_ACCEL];
        for (int k = 0; k < NMODEL_KEYS; k++) {
            const sensim_datasheet_value *f = sensim_datasheet_model_value(d, model_blocks[b], model_keys[k]);
            if (!f)
                continue;
            int i = (int)(f - d->f);
            p.present[b == 0 ? SENSIM_GYRO : SENSIM_ACCEL] = 1;
            double *v = !strcmp(model_keys[k], "noise_density")      ? t->noise_density
                        : !strcmp(model_keys[k], "bias_instability") ? t->bias_instability
                        : !strcmp(model_keys[k], "random_walk")      ? t->random_walk
                        : !strcmp(model_keys[k], "range")            ? t->range
                                                                     : t->quantization;
            v[0] = v[1] = v[2] = sensim_datasheet_model_si(model_keys[k], f->si);
            fprintf(out, "#   %s.%s %s <- %s%s ", model_blocks[b], model_keys[k], sensim_datasheet_figures[i].si_unit, sensim_datasheet_figures[i].opt,
                    strcmp(model_keys[k], "bias_instability") ? "" : " / 0.664 (IEEE B)");
            comment_text(out, f->given);
            fprintf(out, "\n");
        }
    }
    sensim_ywriter *w = sensim_ywriter_create(out);
    if (!w)
        return sensim_last_status();
    sensim_sensor s;
    sensim_sensor_init(&s, d->name, d->f[SENSIM_DATASHEET_RATE].si);
    sensim_rig_write_yaml_begin(w, d->seed, NULL);
    sensim_imu_write_yaml(w, &s, &p);
    return sensim_ywriter_close(w);
}

