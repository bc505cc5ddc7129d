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

#define VERB "fit lidar"

#define NO_TARGET 4294967295.0 /* SENSIM_RENDER_NO_OBJECT */
#define MIN_TARGET_RETURNS 10  /* automatic choice: returns on a target */
/* Automatic choice: sensim_lidar_fit_planes flatness at most 3 and within 4
 * of its standard deviations for a plane above 1. */
#define MAX_FLATNESS 3.0
#define FLATNESS_SDS 4.0

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

/* Reads /sensors/NAME/points (M rows of x, y, z, intensity) into *out. */
static int read_points(const sensim_log *log, const char *in, const char *name, size_t M, float **out)
{
    char p[600];
    size_t four = 4, n = 0;
    snprintf(p, sizeof p, "/sensors/%s/points", name);
    float *pts = malloc(M * 4 * sizeof *pts);
    if (!pts)
        return cli_fail(VERB, "out of memory");
    if (sensim_log_check_shape(log, p, 1, &four, &n) || (n == M && sensim_log_read(log, p, SENSIM_F32, 0, M, pts))) {
        free(pts);
        return cli_fail_lib(VERB);
    }
    if (n != M) {
        free(pts);
        return cli_fail(VERB, "%s: %s has %zu rows, scan_offset ends at %zu", in, p, n, M);
    }
    *out = pts;
    return CLI_OK;
}

static int find_sensor(const sensim_log *log, const char *in, char *name, size_t size)
{
    char **names;
    size_t n, found = 0;
    if (sensim_log_list(log, "/sensors", &names, &n))
        return cli_fail_lib(VERB);
    for (size_t i = 0; i < n; i++) {
        char p[512];
        snprintf(p, sizeof p, "/sensors/%s/scan_offset", names[i]);
        if (sensim_log_exists(log, p)) {
            if (!found)
                snprintf(name, size, "%s", names[i]);
            found++;
        }
    }
    sensim_log_free_names(names, n);
    if (found == 1)
        return CLI_OK;
    return cli_fail(VERB, "%s: %zu lidar groups (with scan_offset) under /sensors: give --sensor", in, found);
}

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
    char name[256], p[600];
    int rc = CLI_FAIL;
    uint64_t *off = NULL;
    float *rg = NULL, *pts = NULL;
    uint16_t *ch = NULL;
    size_t S1, M, nbeams = 0;
    double *bsig = NULL, *bbias = NULL, *lab = NULL, *tobj = NULL, *planes = NULL, *flat = NULL, *fsd = NULL;
    int32_t *tgt = NULL;
    size_t *tcount = NULL, ntobj = 0;
    float *ref = NULL;
    char labname[600] = "";
    if (sensor)
        snprintf(name, sizeof name, "%s", sensor);
    else if ((rc = find_sensor(log, in, name, sizeof name)) != CLI_OK)
        goto done;
    rc = CLI_FAIL;
    snprintf(p, sizeof p, "/sensors/%s/scan_offset", name);
    if (sensim_log_check_shape(log, p, 0, NULL, &S1)) {
        rc = cli_fail_lib(VERB);
        goto done;
    }
    if (S1 < 2) {
        rc = cli_fail(VERB, "%s: %s: empty scans", in, p);
        goto done;
    }
    off = malloc(S1 * sizeof *off);
    if (!off || sensim_log_read(log, p, SENSIM_U64, 0, S1, off)) {
        rc = off ? cli_fail_lib(VERB) : cli_fail(VERB, "out of memory");
        goto done;
    }
    size_t S = S1 - 1, P = (size_t)(off[1] - off[0]);
    M = (size_t)off[S];
    if (P == 0 || off[0] != 0) {
        rc = cli_fail(VERB, "%s: %s: empty scans or offsets not starting at 0", in, p);
        goto done;
    }
    for (size_t k = 0; k < S; k++)
        if (off[k + 1] - off[k] != P) {
            rc = cli_fail(VERB, "%s: %s: scan %zu has %llu returns, scan 0 has %zu: repeated scans of a static "
                          "scene must hold the same returns (use NaN ranges for missing ones)",
                          in, p, k, (unsigned long long)(off[k + 1] - off[k]), P);
            goto done;
        }
    rg = malloc(M * sizeof *rg);
    if (!rg) {
        rc = cli_fail(VERB, "out of memory");
        goto done;
    }
    snprintf(p, sizeof p, "/sensors/%s/range", name);
    if (sensim_log_exists(log, p)) {
        size_t n = 0;
        if (sensim_log_check_shape(log, p, 0, NULL, &n) || (n == M && sensim_log_read(log, p, SENSIM_F32, 0, M, rg))) {
            rc = cli_fail_lib(VERB);
            goto done;
        }
        if (n != M) {
            rc = cli_fail(VERB, "%s: %s has %zu rows, scan_offset ends at %zu", in, p, n, M);
            goto done;
        }
    } else {
        if ((rc = read_points(log, in, name, M, &pts)) != CLI_OK)
            goto done;
        rc = CLI_FAIL;
        for (size_t i = 0; i < M; i++)
            rg[i] = sqrtf(pts[4 * i] * pts[4 * i] + pts[4 * i + 1] * pts[4 * i + 1] + pts[4 * i + 2] * pts[4 * i + 2]);
    }
    snprintf(p, sizeof p, "/sensors/%s/channel", name);
    if (sensim_log_exists(log, p)) {
        ch = malloc(P * sizeof *ch);
        if (!ch || sensim_log_read(log, p, SENSIM_U16, 0, P, ch)) {
            rc = cli_fail_lib(VERB);
            goto done;
        }
        for (size_t i = 0; i < P; i++)
            if ((size_t)ch[i] + 1 > nbeams)
                nbeams = (size_t)ch[i] + 1;
        bsig = malloc(nbeams * sizeof *bsig);
    }
    /* Per-return target labels: the same in every scan. */
    {
        static const char *const lnames[] = {"object", "target"};
        for (int k = 0; k < 2 && !labname[0]; k++) {
            snprintf(p, sizeof p, "/sensors/%s/%s", name, lnames[k]);
            if (sensim_log_exists(log, p))
                snprintf(labname, sizeof labname, "%s", p);
        }
    }
    if (labname[0]) {
        size_t n = 0;
        if (sensim_log_check_shape(log, labname, 0, NULL, &n)) {
            rc = cli_fail_lib(VERB);
            goto done;
        }
        if (n != M) {
            rc = cli_fail(VERB, "%s: %s has %zu rows, scan_offset ends at %zu: one label per return", in, labname, n,
                          M);
            goto done;
        }
        lab = malloc(M * sizeof *lab);
        tgt = malloc(P * sizeof *tgt);
        tobj = malloc(P * sizeof *tobj);
        if (!lab || !tgt || !tobj) {
            rc = cli_fail(VERB, "out of memory");
            goto done;
        }
        if (sensim_log_read(log, labname, SENSIM_F64, 0, M, lab)) {
            rc = cli_fail_lib(VERB);
            goto done;
        }
        for (size_t i = 0; i < M; i++) {
            double v = lab[i];
            if (!(v == -1 || v == NO_TARGET || (v >= 0 && v == floor(v) && v < NO_TARGET))) {
                rc = cli_fail(VERB, "%s: %s row %zu: %g is not an object number (or -1 / %.0f for none)", in,
                              labname, i, v, NO_TARGET);
                goto done;
            }
            if (i >= P && v != lab[i % P]) {
                rc = cli_fail(VERB, "%s: %s row %zu (scan %zu, return %zu): label %.0f, scan 0 has %.0f: the "
                              "scans of a static scene must label each return alike", in, labname, i, i / P, i % P,
                              v, lab[i % P]);
                goto done;
            }
        }
        /* The distinct objects of scan 0, sorted: target t is tobj[t]. */
        for (size_t i = 0; i < P; i++)
            if (lab[i] >= 0 && lab[i] != NO_TARGET)
                tobj[ntobj++] = lab[i];
        qsort(tobj, ntobj, sizeof *tobj, cmp_double);
        size_t u = 0;
        for (size_t i = 0; i < ntobj; i++)
            if (u == 0 || tobj[i] != tobj[u - 1])
                tobj[u++] = tobj[i];
        ntobj = u;
        for (size_t k = 0; k < nwant; k++)
            if (!bsearch(&want[k], tobj, ntobj, sizeof *tobj, cmp_double)) {
                rc = cli_fail(VERB, "%s: %s: --targets names object %.0f, which no return hit", in, labname,
                              want[k]);
                goto done;
            }
        for (size_t i = 0; i < P; i++) {
            double *f = lab[i] >= 0 && lab[i] != NO_TARGET
                            ? bsearch(&lab[i], tobj, ntobj, sizeof *tobj, cmp_double)
                            : NULL;
            int chosen = f && (!want || bsearch(&lab[i], want, nwant, sizeof *want, cmp_double));
            tgt[i] = chosen ? (int32_t)(f - tobj) : -1;
        }
    } else if (want) {
        rc = cli_fail(VERB, "%s: --targets needs per-return labels: no /sensors/%s/object or target dataset", in,
                      name);
        goto done;
    }
    snprintf(p, sizeof p, "/sensors/%s/points", name);
    if (labname[0] && !pts && sensim_log_exists(log, p)) {
        if ((rc = read_points(log, in, name, M, &pts)) != CLI_OK)
            goto done;
        rc = CLI_FAIL;
    }
    /* Planes of the candidates; the automatic choice keeps the flat ones.
     * Without points (range only) there is nothing to fit planes to. */
    int have_angular = 0;
    sensim_lidar_angular_result ar;
    memset(&ar, 0, sizeof ar);
    char angular_note[1024] = "";
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
            for (size_t i = 0; i < P; i++)
                if (tgt[i] >= 0 &&
                    !(tcount[tgt[i]] >= MIN_TARGET_RETURNS && flat[tgt[i]] <= MAX_FLATNESS &&
                      (!isfinite(fsd[tgt[i]]) || flat[tgt[i]] <= 1 + FLATNESS_SDS * fsd[tgt[i]])))
                    tgt[i] = -1;
        size_t nsel = 0;
        for (size_t t = 0; t < ntobj; t++) {
            int used = 0;
            for (size_t i = 0; i < P && !used; i++)
                used = tgt[i] == (int32_t)t;
            nsel += used;
        }
        if (nsel == 0)
            snprintf(angular_note, sizeof angular_note,
                     "no labelled object is planar (>= %d returns, flatness <= %g and within %g sd of 1); "
                     "name targets with --targets",
                     MIN_TARGET_RETURNS, MAX_FLATNESS, FLATNESS_SDS);
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
    if (have_angular &&
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
        fprintf(f, "seed: 0\nsensors:\n  - name: %s\n    type: lidar\n    noise:\n", name);
        fprintf(f, "      range_sigma_base: %.9g\n      range_sigma_slope: %.9g\n", r.sigma_base > 0 ? r.sigma_base : 0.0,
                r.sigma_slope > 0 ? r.sigma_slope : 0.0);
        if (have_angular)
            fprintf(f, "      azimuth_sigma: %.9g\n      elevation_sigma: %.9g\n", ar.azimuth_sigma, ar.elevation_sigma);
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
    free(off);
    free(rg);
    free(pts);
    free(ch);
    free(bsig);
    free(bbias);
    free(lab);
    free(tgt);
    free(tobj);
    free(planes);
    free(flat);
    free(fsd);
    free(tcount);
    free(ref);
    free(want);
    sensim_log_close(log);
    return rc;
}
