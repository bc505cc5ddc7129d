/* sensim fit lidar - range noise sigma = base + slope * range from repeated
 * scans of a static scene, and with per-return target labels the azimuth
 * and elevation sigma from planar targets, written as a rig YAML. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sensim/afile.h"
#include "fit.h"
#include "sensim/lidar_fit.h"
#include "sensim/log.h"
#include "sensim/lidar.h"
#include "sensim/rig.h"

#define VERB "fit lidar"


/* --targets: comma-separated object numbers, into a sorted list. */
static int parse_targets(const char *s, double **out, size_t *n)
{
    size_t cap = 1;
    for (const char *c = s; *c; c++)
        cap += *c == ',';
    double *v = malloc(cap * sizeof *v);
    if (!v)
        return cli_fail(VERB, "out of memory");
    *n = 0;
    const char *c = s;
    for (;;) {
        unsigned long long x;
        char tok[32];
        size_t len = strcspn(c, ",");
        if (len == 0 || len >= sizeof tok) {
            free(v);
            return cli_usage_error(VERB, "--targets '%s': expected object numbers separated by commas", s);
        }
        memcpy(tok, c, len);
        tok[len] = 0;
        if (cli_parse_u64(tok, &x) || x >= 4294967295ULL) {
            free(v);
            return cli_usage_error(VERB, "--targets '%s': '%s' is not an object number", s, tok);
        }
        v[(*n)++] = (double)x;
        if (!c[len])
            break;
        c += len + 1;
    }
    *out = v;
    return CLI_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A JSON array of n numbers (null for NaN), or null without values. */
static void json_array(const char *key, const double *v, size_t n)
{
    printf("\"%s\": ", key);
    if (!v) {
        printf("null");
        return;
    }
    putchar('[');
    for (size_t i = 0; i < n; i++) {
        if (isfinite(v[i]))
            printf("%s%.6g", i ? ", " : "", v[i]);
        else
            printf("%snull", i ? ", " : "");
    }
    putchar(']');
}

static const cli_opt cli_fit_lidar_opts[] = {
    {'o', "output", "FILE", "rig YAML to write (required)"},
    {CLI_NOSHORT('s'), "sensor", "NAME", "the lidar group (default: the only /sensors group with\n"
                                         "scan_offset)"},
    {CLI_NOSHORT('T'), "targets", "LIST", "comma-separated object numbers of the planar targets\n"
                                          "(needs labels; default: the flat ones, chosen as above)"},
    {CLI_NOSHORT('j'), "json", NULL, "print the results as JSON on stdout"},
    CLI_OPTS_END};

const cli_spec cli_fit_lidar_spec = {
    .verb = VERB,
    .head = "usage: sensim fit lidar SCANS.h5 -o LIDAR.yaml [options]\n"
            "\n"
            "Fits the lidar range noise sigma = range_sigma_base + range_sigma_slope *\n"
            "range (weighted least squares, 95 % confidence intervals) from repeated scans\n"
            "of a static scene by a static sensor: /sensors/NAME/ with scan_offset and\n"
            "range (or points), every scan holding the same returns in the same order;\n"
            "NaN ranges are missing returns. With a channel dataset, the per-beam\n"
            "spread is reported too.\n"
            "\n"
            "With per-return labels (an integer dataset object or target, one row per\n"
            "return, the same in every scan, as sensim render writes; -1 and 4294967295\n"
            "mean no target), azimuth_sigma and elevation_sigma are fitted too from the\n"
            "point-to-plane spread on planar targets: those of --targets, or else every\n"
            "labelled object with at least 10 returns whose scan-mean points lie on a\n"
            "plane within their scatter (flatness <= 3 and within 4 sd of 1, see\n"
            "sensim-fit(1)). The targets\n"
            "must include planes tilted about a vertical and about a horizontal axis.\n"
            "The per-beam range bias against the fitted planes is then reported as\n"
            "comments and in --json (the noise model has one range_bias for all beams).\n"
            "\n"
            "options:\n",
    .opts = cli_fit_lidar_opts,
    .column = 22,
};

/* The rig YAML: the fit in comments, then the lidar with the fitted noise. */
static int write_yaml(const char *out, const char *in, const sensim_lidar_scans *sc,
                      const sensim_lidar_scans_fit_result *fr)
{
    const sensim_lidar_fit_result *r = &fr->range;
    const sensim_lidar_angular_result *ar = &fr->ang;
    sensim_afile *af = sensim_afile_open(out);
    if (!af)
        return cli_fail_lib(VERB);
    FILE *f = sensim_afile_stream(af);
    fprintf(f, "# sensim fit lidar: %s /sensors/%s, %zu scans of %zu returns (%zu used), ranges %.3g..%.3g m\n", in,
            sc->sensor, sc->nscans, sc->npoints, r->points_used, r->range_min, r->range_max);
    fprintf(f, "# range_sigma_base %.6g +- %.2g m, range_sigma_slope %.6g +- %.2g (95 %%), chi2/dof %.3g\n",
            r->sigma_base, r->sigma_base_ci, r->sigma_slope, r->sigma_slope_ci, r->chi2_dof);
    if (r->constrained)
        fprintf(f, "# the free line (base %.6g m, slope %.6g) has a %s; refitted with it held at 0\n", r->base_free,
                r->slope_free, r->constrained == 1 ? "sigma decreasing with range" : "negative sigma at range 0");
    if (fr->joint)
        fprintf(f, "# range and angular noise fitted together on the target returns (beam-pointing jitter moves\n"
                   "# the raw ranges); the range-only line of all returns: base %.6g m, slope %.6g\n",
                fr->range_all.sigma_base, fr->range_all.sigma_slope);
    else if (*fr->joint_note)
        fprintf(f, "# joint range + angular fit not possible (%s): range line from all returns\n", fr->joint_note);
    if (*fr->fit_note)
        fprintf(f, "# WARNING: %s\n", fr->fit_note);
    if (fr->angular) {
        fprintf(f, "# azimuth_sigma %.6g +- %.2g rad, elevation_sigma %.6g +- %.2g rad (95 %%), chi2/dof %.3g,\n",
                ar->azimuth_sigma, ar->azimuth_sigma_ci, ar->elevation_sigma, ar->elevation_sigma_ci, ar->chi2_dof);
        fprintf(f, "#   from %zu returns on %zu planar targets (objects", ar->points_used, ar->targets_used);
        for (size_t t = 0; t < sc->nobjects; t++)
            if (isfinite(fr->planes[4 * t]))
                fprintf(f, " %.0f", sc->objects[t]);
        fprintf(f, ")\n");
    } else
        fprintf(f, "# azimuth_sigma, elevation_sigma: not fitted: %s\n", fr->angular_note);
    if (fr->angular && fr->beam_bias)
        fprintf(f, "# per-beam range bias against the fitted planes: comments only, the noise model has one\n"
                   "# range_bias for all beams\n");
    for (size_t b = 0; b < sc->nbeams && fr->beam_sigma; b++)
        if (isfinite(fr->beam_sigma[b])) {
            fprintf(f, "# beam %zu: range sd %.4g m", b, fr->beam_sigma[b]);
            if (fr->angular && fr->beam_bias && isfinite(fr->beam_bias[b]))
                fprintf(f, ", bias %.4g m", fr->beam_bias[b]);
            fputc('\n', f);
        }
    sensim_lidar_params lp = sensim_lidar_default_params();
    lp.range_sigma_base = r->sigma_base > 0 ? r->sigma_base : 0.0;
    lp.range_sigma_slope = r->sigma_slope > 0 ? r->sigma_slope : 0.0;
    if (fr->angular)
        lp.azimuth_sigma = ar->azimuth_sigma, lp.elevation_sigma = ar->elevation_sigma;
    sensim_sensor ls;
    sensim_sensor_init(&ls, sc->sensor, 0);
    sensim_ywriter *w = sensim_ywriter_create(f);
    if (w) {
        sensim_rig_write_yaml_begin(w, 0, NULL);
        sensim_lidar_write_yaml(w, &ls, &lp);
    }
    if (!w || sensim_ywriter_close(w)) {
        sensim_afile_abort(af);
        return cli_fail_lib(VERB);
    }
    return sensim_afile_commit(af) ? cli_fail_lib(VERB) : CLI_OK;
}

/* The targets used and their flatness, as JSON keys. */
static void print_json_targets(const sensim_lidar_scans *sc, const sensim_lidar_scans_fit_result *fr)
{
    const sensim_lidar_angular_result *ar = &fr->ang;
    printf("\"azimuth_sigma\": %s, \"azimuth_sigma_ci\": %s, \"elevation_sigma\": %s, "
           "\"elevation_sigma_ci\": %s, \"angular_chi2_dof\": %s, \"angular_used\": %zu, \"targets\": [",
           CLI_JSON_G(ar->azimuth_sigma, 9), CLI_JSON_G(ar->azimuth_sigma_ci, 3), CLI_JSON_G(ar->elevation_sigma, 9),
           CLI_JSON_G(ar->elevation_sigma_ci, 3), CLI_JSON_G(ar->chi2_dof, 4), ar->points_used);
    const char *sep = "";
    for (size_t t = 0; t < sc->nobjects; t++)
        if (isfinite(fr->planes[4 * t])) {
            printf("%s%.0f", sep, sc->objects[t]);
            sep = ", ";
        }
    printf("], \"flatness\": [");
    sep = "";
    for (size_t t = 0; t < sc->nobjects; t++)
        if (isfinite(fr->planes[4 * t])) {
            if (isfinite(fr->flatness[t]))
                printf("%s%s", sep, CLI_JSON_G(fr->flatness[t], 4));
            else
                printf("%snull", sep);
            sep = ", ";
        }
    printf("], ");
}

static void print_json(const sensim_lidar_scans *sc, const sensim_lidar_scans_fit_result *fr)
{
    const sensim_lidar_fit_result *r = &fr->range;
    printf("{\"range_sigma_base\": %s, \"range_sigma_base_ci\": %s, \"range_sigma_slope\": %s, "
           "\"range_sigma_slope_ci\": %s, \"chi2_dof\": %s, \"scans\": %zu, \"returns\": %zu, "
           "\"used\": %zu, ",
           CLI_JSON_G(r->sigma_base, 9), CLI_JSON_G(r->sigma_base_ci, 3), CLI_JSON_G(r->sigma_slope, 9),
           CLI_JSON_G(r->sigma_slope_ci, 3), CLI_JSON_G(r->chi2_dof, 4), sc->nscans, sc->npoints, r->points_used);
    if (fr->joint)
        printf("\"joint\": true, \"range_only_sigma_base\": %s, \"range_only_sigma_slope\": %s, ",
               CLI_JSON_G(fr->range_all.sigma_base, 9), CLI_JSON_G(fr->range_all.sigma_slope, 9));
    if (*fr->fit_note) {
        printf("\"fit_note\": ");
        cli_json_str(stdout, fr->fit_note);
        printf(", ");
    }
    if (r->constrained)
        printf("\"constrained\": \"%s\", \"range_sigma_base_free\": %s, \"range_sigma_slope_free\": %s, ",
               r->constrained == 1 ? "slope held at 0: the free slope is negative"
                                   : "base held at 0: the free base is negative",
               CLI_JSON_G(r->base_free, 9), CLI_JSON_G(r->slope_free, 9));
    if (fr->angular) {
        print_json_targets(sc, fr);
    } else {
        printf("\"azimuth_sigma\": null, \"elevation_sigma\": null, \"angular_note\": ");
        cli_json_str(stdout, fr->angular_note);
        printf(", ");
    }
    json_array("beam_sigma", fr->beam_sigma, sc->nbeams);
    printf(", ");
    json_array("beam_bias", fr->angular ? fr->beam_bias : NULL, sc->nbeams);
    printf("}\n");
}

/* The scans of `in` (--targets: want, nwant, named), fitted and written. */
static int fit_file(const char *in, const char *out, const char *sensor, const double *want, size_t nwant,
                    const char *named, int json)
{
    sensim_log *log = sensim_log_open(in);
    if (!log)
        return cli_fail_lib(VERB);
    int rc = CLI_FAIL;
    sensim_lidar_scans sc;
    sensim_lidar_scans_fit_result fr;
    memset(&fr, 0, sizeof fr);
    if (sensim_lidar_scans_read(log, sensor, want, nwant, &sc)) {
        rc = cli_fail_lib(VERB);
    } else if (want && !sc.labels[0]) {
        rc = cli_fail(VERB, "%s: --targets needs per-return labels: no /sensors/%s/object or target dataset", in,
                      sc.sensor);
    } else if (sensim_lidar_scans_fit(&sc, named, &fr)) {
        sensim_error_prefix(sensim_last_status(), "%s", in);
        rc = cli_fail_lib(VERB);
    } else {
        if (*fr.fit_note)
            fprintf(stderr, "sensim fit lidar: warning: %s: %s\n", in, fr.fit_note);
        rc = write_yaml(out, in, &sc, &fr);
        if (rc == CLI_OK && json)
            print_json(&sc, &fr);
    }
    sensim_lidar_scans_fit_free(&fr);
    sensim_lidar_scans_free(&sc);
    sensim_log_close(log);
    return rc;
}

int cli_fit_lidar(int argc, char **argv)
{
    const char *out = NULL, *sensor = NULL, *targets_arg = NULL;
    int json = 0;
    const cli_to to[] = {CLI_STR("output", &out), CLI_STR("sensor", &sensor), CLI_FLAG("json", &json),
                         CLI_STR("targets", &targets_arg), {0}};
    int c = cli_parse_all(&cli_fit_lidar_spec, to, argc, argv);
    if (c)
        return cli_parse_exit(c);
    const char *in;
    if ((c = cli_fit_input(VERB, argc, argv, "SCANS.h5", out, &in)))
        return c;
    double *want = NULL; /* --targets, sorted */
    size_t nwant = 0;
    if (targets_arg && (c = parse_targets(targets_arg, &want, &nwant)) != CLI_OK)
        return c;
    if (want)
        qsort(want, nwant, sizeof *want, cmp_double);
    char named[600];
    snprintf(named, sizeof named, "--targets %s", targets_arg ? targets_arg : "");
    c = fit_file(in, out, sensor, want, nwant, want ? named : NULL, json);
    free(want);
    return c;
}
