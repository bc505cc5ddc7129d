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
    {'h', "help", NULL, "this text"},
    {0}};

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

int cli_fit_lidar(int argc, char **argv)
{
    const char *out = NULL, *sensor = NULL, *targets_arg = NULL;
    int json = 0, c;
    cli_parser op;
    cli_parse_begin(&op, &cli_fit_lidar_spec, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case 'o': out = optarg; break;
        case 's': sensor = optarg; break;
        case 'j': json = 1; break;
        case 'T': targets_arg = optarg; break;
        }
    }
    if (c)
        return cli_parse_exit(c);
    if (optind != argc - 1)
        return cli_usage_error(VERB, "expected one SCANS.h5");
    if (!out)
        return cli_usage_error(VERB, "missing -o OUTPUT.yaml");
    const char *in = argv[optind];
    if (cli_check_output(VERB, out, in, NULL))
        return CLI_FAIL;
    double *want = NULL; /* --targets, sorted */
    size_t nwant = 0;
    if (targets_arg && (c = parse_targets(targets_arg, &want, &nwant)) != CLI_OK)
        return c;
    if (want)
        qsort(want, nwant, sizeof *want, cmp_double);
    sensim_log *log = sensim_log_open(in);
    if (!log) {
        free(want);
        return cli_fail_lib(VERB);
    }
    int rc = CLI_FAIL;
    double *bsig = NULL, *bbias = NULL, *planes = NULL, *flat = NULL, *fsd = NULL;
    size_t *tcount = NULL;
    float *ref = NULL;
    /* The scans, their ranges, channels and labels (calib/lidar_scans.c). */
    sensim_lidar_scans sc;
    if (sensim_lidar_scans_read(log, sensor, want, nwant, &sc)) {
        rc = cli_fail_lib(VERB);
        goto done;
    }
    const char *name = sc.sensor, *labname = sc.labels;
    const size_t S = sc.nscans, P = sc.npoints, nbeams = sc.nbeams, ntobj = sc.nobjects;
    const float *rg = sc.range, *pts = sc.points;
    const uint16_t *ch = sc.channel;
    const int32_t *tgt = sc.target;
    const double *tobj = sc.objects;
    if (ch && !(bsig = malloc(nbeams * sizeof *bsig))) {
        rc = cli_fail(VERB, "out of memory");
        goto done;
    }
    if (want && !labname[0]) {
        rc = cli_fail(VERB, "%s: --targets needs per-return labels: no /sensors/%s/object or target dataset", in,
                      name);
        goto done;
    }
    /* Planes of the candidates; the automatic choice keeps the flat ones.
     * Without points (range only) there is nothing to fit planes to. */
    int have_angular = 0;
    sensim_lidar_angular_result ar;
    memset(&ar, 0, sizeof ar);
    char angular_note[1024] = "", joint_note[1024] = "", fit_note[512] = "";
    if (labname[0] && !pts) {
        snprintf(angular_note, sizeof angular_note, "needs /sensors/%s/points (x, y, z)", name);
    } else if (labname[0] && ntobj == 0) {
        snprintf(angular_note, sizeof angular_note, "no return in %s is on an object", labname);
    } else if (labname[0]) {
        planes = malloc(4 * ntobj * sizeof *planes);
        flat = malloc(ntobj * sizeof *flat);
        fsd = malloc(ntobj * sizeof *fsd);
        tcount = malloc(ntobj * sizeof *tcount);
        ref = malloc(P * sizeof *ref);
        if (!planes || !flat || !fsd || !tcount || !ref) {
            rc = cli_fail(VERB, "out of memory");
            goto done;
        }
        if (sensim_lidar_fit_planes(pts, S, P, tgt, ntobj, planes, flat, fsd, tcount, NULL)) {
            sensim_error_prefix(sensim_last_status(), "%s: %s", in, labname);
            rc = cli_fail_lib(VERB);
            goto done;
        }
        if (!want)
            sensim_lidar_scans_keep_flat(&sc, flat, fsd, tcount);
        if (sensim_lidar_scans_targets_used(&sc) == 0)
            snprintf(angular_note, sizeof angular_note,
                     "no labelled object is planar (>= %d returns, flatness <= %g and within %g sd of 1); "
                     "name targets with --targets",
                     SENSIM_LIDAR_MIN_TARGET_RETURNS, SENSIM_LIDAR_MAX_FLATNESS, SENSIM_LIDAR_FLATNESS_SDS);
        else if (sensim_lidar_fit_planes(pts, S, P, tgt, ntobj, planes, NULL, NULL, NULL, ref)) {
            sensim_error_prefix(sensim_last_status(), "%s: %s", in, labname);
            rc = cli_fail_lib(VERB);
            goto done;
        } else
            have_angular = 1;
    }
    if (ch) {
        bbias = malloc(nbeams * sizeof *bbias);
        if (!bbias || !bsig) {
            rc = cli_fail(VERB, "out of memory");
            goto done;
        }
    }
    sensim_lidar_fit_result r;
    if (sensim_lidar_fit_range(rg, S, P, have_angular ? ref : NULL, ch, nbeams, bbias, bsig, &r)) {
        sensim_error_prefix(sensim_last_status(), "%s: /sensors/%s", in, name);
        rc = cli_fail_lib(VERB);
        goto done;
    }
    /* With planar targets, range and angular noise are fitted together on
     * them: under beam-pointing jitter the raw ranges move with the beam,
     * and a range-only line takes that for range noise. The line of all
     * returns is kept for the comments. */
    int joint = 0;
    sensim_lidar_fit_result rall = r;
    if (have_angular) {
        sensim_lidar_fit_result rj;
        if (sensim_lidar_fit_joint(pts, S, P, tgt, ntobj, r.sigma_base, r.sigma_slope, NULL, &rj, &ar) ==
            SENSIM_OK) {
            joint = 1;
            r.sigma_base = rj.sigma_base;
            r.sigma_base_ci = rj.sigma_base_ci;
            r.sigma_slope = rj.sigma_slope;
            r.sigma_slope_ci = rj.sigma_slope_ci;
            r.chi2_dof = rj.chi2_dof;
            r.constrained = 0;
        } else {
            snprintf(joint_note, sizeof joint_note, "%s", sensim_last_error());
        }
    }
    if (have_angular && !joint &&
        sensim_lidar_fit_angular(pts, S, P, tgt, ntobj, r.sigma_base > 0 ? r.sigma_base : 0.0,
                                 r.sigma_slope > 0 ? r.sigma_slope : 0.0, NULL, &ar)) {
        /* Named targets must work; the automatic choice falls back to the
         * range fit and says why. */
        if (want) {
            sensim_error_prefix(sensim_last_status(), "%s: %s: --targets %s", in, labname, targets_arg);
            rc = cli_fail_lib(VERB);
            goto done;
        }
        snprintf(angular_note, sizeof angular_note, "%s", sensim_last_error());
        have_angular = 0;
    }
    if (!labname[0])
        snprintf(angular_note, sizeof angular_note,
                 "needs per-return target labels (/sensors/%s/object or target, as sensim render writes)", name);
    /* Whether the model describes the spread: the reduced chi-squared of a
     * good fit is 1 within about sqrt(2 / dof); beyond 4 of those the
     * intervals (widened by it) still hold, the values may not. */
    {
        double c2 = have_angular ? ar.chi2_dof : r.chi2_dof;
        double dof = (double)(have_angular ? ar.points_used : r.points_used) - (have_angular ? 4 : 2);
        if (dof > 0 && c2 > 1 + 4 * sqrt(2 / dof))
            snprintf(fit_note, sizeof fit_note,
                     "chi2/dof %.3g on %.0f degrees of freedom: the noise model does not describe these returns "
                     "(intervals widened by it; values may be biased)",
                     c2, dof);
        if (*fit_note)
            fprintf(stderr, "sensim fit lidar: warning: %s: %s\n", in, fit_note);
    }
    {
        sensim_afile *af = sensim_afile_open(out);
        if (!af) {
            rc = cli_fail_lib(VERB);
            goto done;
        }
        FILE *f = sensim_afile_stream(af);
        fprintf(f, "# sensim fit lidar: %s /sensors/%s, %zu scans of %zu returns (%zu used), ranges %.3g..%.3g m\n",
                in, name, S, P, r.points_used, r.range_min, r.range_max);
        fprintf(f, "# range_sigma_base %.6g +- %.2g m, range_sigma_slope %.6g +- %.2g (95 %%), chi2/dof %.3g\n",
                r.sigma_base, r.sigma_base_ci, r.sigma_slope, r.sigma_slope_ci, r.chi2_dof);
        if (r.constrained)
            fprintf(f, "# the free line (base %.6g m, slope %.6g) has a %s; refitted with it held at 0\n", r.base_free,
                    r.slope_free, r.constrained == 1 ? "sigma decreasing with range" : "negative sigma at range 0");
        if (joint)
            fprintf(f, "# range and angular noise fitted together on the target returns (beam-pointing jitter moves\n"
                       "# the raw ranges); the range-only line of all returns: base %.6g m, slope %.6g\n",
                    rall.sigma_base, rall.sigma_slope);
        else if (*joint_note)
            fprintf(f, "# joint range + angular fit not possible (%s): range line from all returns\n", joint_note);
        if (*fit_note)
            fprintf(f, "# WARNING: %s\n", fit_note);
        if (have_angular) {
            fprintf(f, "# azimuth_sigma %.6g +- %.2g rad, elevation_sigma %.6g +- %.2g rad (95 %%), chi2/dof %.3g,\n",
                    ar.azimuth_sigma, ar.azimuth_sigma_ci, ar.elevation_sigma, ar.elevation_sigma_ci, ar.chi2_dof);
            fprintf(f, "#   from %zu returns on %zu planar targets (objects", ar.points_used, ar.targets_used);
            for (size_t t = 0; t < ntobj; t++)
                if (isfinite(planes[4 * t]))
                    fprintf(f, " %.0f", tobj[t]);
            fprintf(f, ")\n");
        } else
            fprintf(f, "# azimuth_sigma, elevation_sigma: not fitted: %s\n", angular_note);
        if (have_angular && bbias)
            fprintf(f, "# per-beam range bias against the fitted planes: comments only, the noise model has one\n"
                       "# range_bias for all beams\n");
        for (size_t b = 0; b < nbeams && bsig; b++)
            if (isfinite(bsig[b])) {
                fprintf(f, "# beam %zu: range sd %.4g m", b, bsig[b]);
                if (have_angular && bbias && isfinite(bbias[b]))
                    fprintf(f, ", bias %.4g m", bbias[b]);
                fputc('\n', f);
            }
        sensim_lidar_params lp = sensim_lidar_default_params();
        lp.range_sigma_base = r.sigma_base > 0 ? r.sigma_base : 0.0;
        lp.range_sigma_slope = r.sigma_slope > 0 ? r.sigma_slope : 0.0;
        if (have_angular)
            lp.azimuth_sigma = ar.azimuth_sigma, lp.elevation_sigma = ar.elevation_sigma;
        sensim_sensor ls;
        sensim_sensor_init(&ls, name, 0);
        sensim_ywriter *w = sensim_ywriter_create(f);
        if (w) {
            sensim_rig_write_yaml_begin(w, 0, NULL);
            sensim_lidar_write_yaml(w, &ls, &lp);
        }
        if (!w || sensim_ywriter_close(w)) {
            sensim_afile_abort(af);
            rc = cli_fail_lib(VERB);
            goto done;
        }
        if (sensim_afile_commit(af)) {
            rc = cli_fail_lib(VERB);
            goto done;
        }
    }
    if (json) {
        printf("{\"range_sigma_base\": %s, \"range_sigma_base_ci\": %s, \"range_sigma_slope\": %s, "
               "\"range_sigma_slope_ci\": %s, \"chi2_dof\": %s, \"scans\": %zu, \"returns\": %zu, "
               "\"used\": %zu, ",
               CLI_JSON_G(r.sigma_base, 9), CLI_JSON_G(r.sigma_base_ci, 3), CLI_JSON_G(r.sigma_slope, 9),
               CLI_JSON_G(r.sigma_slope_ci, 3), CLI_JSON_G(r.chi2_dof, 4), S, P, r.points_used);
        if (joint)
            printf("\"joint\": true, \"range_only_sigma_base\": %s, \"range_only_sigma_slope\": %s, ",
                   CLI_JSON_G(rall.sigma_base, 9), CLI_JSON_G(rall.sigma_slope, 9));
        if (*fit_note) {
            printf("\"fit_note\": ");
            cli_json_str(stdout, fit_note);
            printf(", ");
        }
        if (r.constrained)
            printf("\"constrained\": \"%s\", \"range_sigma_base_free\": %s, \"range_sigma_slope_free\": %s, ",
                   r.constrained == 1 ? "slope held at 0: the free slope is negative"
                                      : "base held at 0: the free base is negative",
                   CLI_JSON_G(r.base_free, 9), CLI_JSON_G(r.slope_free, 9));
        if (have_angular) {
            printf("\"azimuth_sigma\": %s, \"azimuth_sigma_ci\": %s, \"elevation_sigma\": %s, "
                   "\"elevation_sigma_ci\": %s, \"angular_chi2_dof\": %s, \"angular_used\": %zu, \"targets\": [",
                   CLI_JSON_G(ar.azimuth_sigma, 9), CLI_JSON_G(ar.azimuth_sigma_ci, 3),
                   CLI_JSON_G(ar.elevation_sigma, 9), CLI_JSON_G(ar.elevation_sigma_ci, 3), CLI_JSON_G(ar.chi2_dof, 4),
                   ar.points_used);
            const char *sep = "";
            for (size_t t = 0; t < ntobj; t++)
                if (isfinite(planes[4 * t])) {
                    printf("%s%.0f", sep, tobj[t]);
                    sep = ", ";
                }
            printf("], \"flatness\": [");
            sep = "";
            for (size_t t = 0; t < ntobj; t++)
                if (isfinite(planes[4 * t])) {
                    if (isfinite(flat[t]))
                        printf("%s%s", sep, CLI_JSON_G(flat[t], 4));
                    else
                        printf("%snull", sep);
                    sep = ", ";
                }
            printf("], ");
        } else {
            printf("\"azimuth_sigma\": null, \"elevation_sigma\": null, \"angular_note\": ");
            cli_json_str(stdout, angular_note);
            printf(", ");
        }
        json_array("beam_sigma", bsig, nbeams);
        printf(", ");
        json_array("beam_bias", have_angular ? bbias : NULL, nbeams);
        printf("}\n");
    }
    rc = CLI_OK;
done:
    sensim_lidar_scans_free(&sc);
    free(bsig);
    free(bbias);
    free(planes);
    free(flat);
    free(fsd);
    free(tcount);
    free(ref);
    free(want);
    sensim_log_close(log);
    return rc;
}
