/* sensim fit lidar - range noise sigma = base + slope * range from repeated
 * scans of a static scene, written as a rig YAML. */
#include <getopt.h>
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

const char cli_fit_lidar_usage[] =
    "usage: sensim fit lidar SCANS.h5 -o LIDAR.yaml [options]\n"
    "\n"
    "Fits the lidar range noise sigma = range_sigma_base + range_sigma_slope *\n"
    "range (weighted least squares, 95 % confidence intervals) from repeated scans\n"
    "of a static scene by a static sensor: /sensors/NAME/ with scan_offset and\n"
    "range (or points), every scan holding the same returns in the same order;\n"
    "NaN ranges are missing returns. With a channel dataset, the per-beam\n"
    "spread is reported too.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE   rig YAML to write (required)\n"
    "      --sensor NAME   the lidar group (default: the only /sensors group with\n"
    "                      scan_offset)\n"
    "      --json          print the results as JSON on stdout\n"
    "  -h, --help          this text\n";

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
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                          {"sensor", required_argument, NULL, 's'},
                                          {"json", no_argument, NULL, 'j'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    const char *out = NULL, *sensor = NULL;
    int json = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 's': sensor = optarg; break;
        case 'j': json = 1; break;
        case 'h': fputs(cli_fit_lidar_usage, stdout); return CLI_OK;
        default: return cli_usage_error(VERB, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error(VERB, "expected one SCANS.h5");
    if (!out)
        return cli_usage_error(VERB, "missing -o OUTPUT.yaml");
    const char *in = argv[optind];
    sensim_log *log = sensim_log_open(in);
    if (!log)
        return cli_fail_lib(VERB);
    char name[256], p[600];
    int rc = CLI_FAIL;
    uint64_t *off = NULL;
    float *rg = NULL, *pts = NULL;
    uint16_t *ch = NULL;
    size_t S1, M, nbeams = 0;
    double *bsig = NULL;
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
        size_t four = 4, n = 0;
        snprintf(p, sizeof p, "/sensors/%s/points", name);
        pts = malloc(M * 4 * sizeof *pts);
        if (!pts || sensim_log_check_shape(log, p, 1, &four, &n) ||
            (n == M && sensim_log_read(log, p, SENSIM_F32, 0, M, pts))) {
            rc = cli_fail_lib(VERB);
            goto done;
        }
        if (n != M) {
            rc = cli_fail(VERB, "%s: %s has %zu rows, scan_offset ends at %zu", in, p, n, M);
            goto done;
        }
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
    sensim_lidar_fit_result r;
    if (sensim_lidar_fit_range(rg, S, P, NULL, ch, nbeams, NULL, bsig, &r)) {
        sensim_error_prefix(sensim_last_status(), "%s: /sensors/%s", in, name);
        rc = cli_fail_lib(VERB);
        goto done;
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
        for (size_t b = 0; b < nbeams && bsig; b++)
            if (isfinite(bsig[b]))
                fprintf(f, "# beam %zu: range sd %.4g m\n", b, bsig[b]);
        fprintf(f, "seed: 0\nsensors:\n  - name: %s\n    type: lidar\n    noise:\n", name);
        fprintf(f, "      range_sigma_base: %.9g\n      range_sigma_slope: %.9g\n", r.sigma_base > 0 ? r.sigma_base : 0.0,
                r.sigma_slope > 0 ? r.sigma_slope : 0.0);
        if (sensim_afile_commit(af)) {
            rc = cli_fail_lib(VERB);
            goto done;
        }
    }
    if (json)
        printf("{\"range_sigma_base\": %.9g, \"range_sigma_base_ci\": %.3g, \"range_sigma_slope\": %.9g, "
               "\"range_sigma_slope_ci\": %.3g, \"chi2_dof\": %.4g, \"scans\": %zu, \"returns\": %zu, "
               "\"used\": %zu}\n",
               r.sigma_base, r.sigma_base_ci, r.sigma_slope, r.sigma_slope_ci, r.chi2_dof, S, P, r.points_used);
    rc = CLI_OK;
done:
    free(off);
    free(rg);
    free(pts);
    free(ch);
    free(bsig);
    sensim_log_close(log);
    return rc;
}
