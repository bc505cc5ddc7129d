/* sensim fit camera - photon-transfer calibration (EMVA 1288) of a frame
 * stack, written as a rig YAML with the fitted camera noise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sensim/afile.h"
#include "fit.h"
#include "sensim/log.h"
#include "sensim/ptc.h"
#include "sensim/camera.h"
#include "sensim/rig.h"

#define VERB "fit camera"

static const cli_opt cli_fit_camera_opts[] = {
    {'o', "output", "FILE", "rig YAML to write (required)"},
    {CLI_NOSHORT('n'), "name", "NAME", "sensor name in the YAML (default cam)"},
    {CLI_NOSHORT('m'), "model", "M", "intensity (default) or emva: the noise model written"},
    {CLI_NOSHORT('f'), "full-scale", "X", "DN of intensity 1 (default 255, 65535 or 1 by type)"},
    {CLI_NOSHORT('s'), "plot", "FILE", "photon-transfer plot (SVG); --svg is the same"},
    {CLI_NOSHORT('s'), "svg", "FILE", NULL},
    {CLI_NOSHORT('j'), "json", NULL, "print the results as JSON on stdout"},
    CLI_OPTS_END};

const cli_spec cli_fit_camera_spec = {
    .verb = VERB,
    .head = "usage: sensim fit camera STACK.h5 -o CAM.yaml [options]\n"
            "\n"
            "Fits camera noise by the photon-transfer method (EMVA 1288) from flat-field\n"
            "frame pairs at increasing exposure and dark pairs at the same exposures:\n"
            "gain K, read noise, dark current, saturation, PRNU, DSNU, and the two\n"
            "parameters of the intensity model sigma^2 = s1^2 I + s2^2.\n"
            "\n"
            "STACK.h5 layout:\n"
            "  /stack/exposure  f64[L]            s, one per level\n"
            "  /stack/light     u8|u16|f32 [L,2,H,W]  two flat-field frames per level\n"
            "  /stack/dark      same shape (optional) two dark frames per level\n"
            "\n"
            "options:\n",
    .opts = cli_fit_camera_opts,
    .column = 24,
};

static int write_yaml(const char *path, const char *name, int emva, const sensim_ptc_result *r, const char *src,
                      size_t L)
{
    sensim_afile *af = sensim_afile_open(path);
    if (!af)
        return cli_fail_lib(VERB);
    FILE *f = sensim_afile_stream(af);
    fprintf(f, "# sensim fit camera: %s, %zu levels (%zu below 70 %% of saturation)\n", src, L, r->levels_used);
    fprintf(f, "# gain K %.6g +- %.2g DN/e-, read noise %.4g +- %.2g e-, dark current %.4g +- %.2g e-/s (95 %%)\n",
            r->gain, r->gain_ci, r->read_noise, r->read_noise_ci, r->dark_current, r->dark_current_ci);
    fprintf(f, "# saturation %s%.6g DN above dark = %.6g e-%s; PRNU %.4g %%; DSNU %.4g e-\n",
            r->saturation_reached ? "" : "at least ", r->saturation_dn, r->saturation_capacity,
            r->saturation_reached ? "" : " (not reached: the variance still grows at the brightest level)",
            100 * r->prnu, r->dsnu);
    if (r->quantization_limited)
        fprintf(f, "# WARNING: temporal variance %.3g DN^2 below 0.24 DN^2, outside EMVA 1288's validity: quantization\n"
                   "# dominates; read noise at most %.4g e-, intervals not valid\n",
                r->min_temporal_var_dn2, sqrt(0.24 - 1.0 / 12) / r->gain);
    fprintf(f, "# intensity model: variance_slope %.6g +- %.2g, variance_intercept %.6g +- %.2g\n",
            r->variance_slope, r->variance_slope_ci, r->variance_intercept, r->variance_intercept_ci);
    sensim_camera_params p = sensim_camera_default_params();
    if (emva) {
        p.model = SENSIM_CAMERA_NOISE_EMVA;
        p.gain = r->gain;
        p.read_noise = isfinite(r->read_noise) ? r->read_noise : 0.0;
        p.dark_current = isfinite(r->dark_current) && r->dark_current > 0 ? r->dark_current : 0.0;
        p.black_level = r->dark_offset > 0 ? r->dark_offset : 0.0;
        p.full_well = r->saturation_capacity;
        p.prnu = r->prnu;
        p.dsnu = r->dsnu;
        fprintf(f, "# photons_full_scale, quantum_efficiency and exposure_time are not measurable\n"
                   "# without a calibrated light source: set them under noise (the model's defaults apply).\n");
    } else {
        /* A negative intercept (large black level) is not a valid variance:
         * clamp, and say so in the comment above. */
        p.model = SENSIM_CAMERA_NOISE_INTENSITY;
        p.variance_slope = r->variance_slope > 0 ? r->variance_slope : 0.0;
        p.variance_intercept = r->variance_intercept > 0 ? r->variance_intercept : 0.0;
    }
    sensim_ywriter *w = sensim_ywriter_create(f);
    if (!w) {
        sensim_afile_abort(af);
        return cli_fail_lib(VERB);
    }
    sensim_sensor s;
    sensim_sensor_init(&s, name, 0);
    sensim_rig_write_yaml_begin(w, 0, NULL);
    sensim_camera_write_yaml(w, &s, &p, NULL);
    if (sensim_ywriter_close(w)) {
        sensim_afile_abort(af);
        return cli_fail_lib(VERB);
    }
    return sensim_afile_commit(af) ? cli_fail_lib(VERB) : CLI_OK;
}

/* Where the fit is only a bound or outside EMVA 1288's validity. */
static void print_warnings(const char *in, const sensim_ptc_result *r)
{
    if (!r->saturation_reached)
        fprintf(stderr,
                "sensim fit camera: warning: %s: the variance still grows at the brightest level (%.6g DN above "
                "dark): saturation was not reached, and saturation_capacity %.6g e- is only a lower bound; add "
                "longer exposures\n",
                in, r->saturation_dn, r->saturation_capacity);
    if (r->quantization_limited)
        fprintf(stderr,
                "sensim fit camera: warning: %s: temporal variance %.3g DN^2 is below 0.24 DN^2 (noise under 0.49 "
                "DN), outside EMVA 1288's validity: quantization dominates, the read noise is only bounded (at most "
                "%.4g e-) and the intervals do not describe the sensor; raise the gain or use more bits\n",
                in, r->min_temporal_var_dn2, sqrt(0.24 - 1.0 / 12) / r->gain);
}

static void print_json(const sensim_ptc_result *r, size_t L)
{
    /* The JSON key of each number is the name of its member. */
    /* clang-format off */
#define F(x) {#x, r->x}
    /* clang-format on */
    const struct {
        const char *k;
        double v;
    } f[] = {F(gain),
             F(gain_ci),
             F(read_noise),
             F(read_noise_ci),
             F(dark_current),
             F(dark_current_ci),
             F(dark_offset),
             F(saturation_dn),
             F(saturation_capacity),
             F(prnu),
             F(dsnu),
             F(variance_slope),
             F(variance_slope_ci),
             F(variance_intercept),
             F(variance_intercept_ci)};
#undef F
    printf("{");
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        /* JSON has no NaN: unknown values are null. */
        printf("\"%s\": %s, ", f[i].k, CLI_JSON_G(f[i].v, 9));
    }
    if (r->quantization_limited)
        printf("\"validity_note\": \"temporal variance %.3g DN^2 below 0.24 DN^2: outside EMVA 1288's validity, "
               "quantization dominates; read noise at most %.4g e-\", ",
               r->min_temporal_var_dn2, sqrt(0.24 - 1.0 / 12) / r->gain);
    if (!r->saturation_reached)
        printf("\"saturation_note\": \"not reached: the variance still grows at the brightest level; "
               "saturation_dn and saturation_capacity are lower bounds\", ");
    printf("\"levels\": %zu, \"levels_used\": %zu}\n", L, r->levels_used);
}

int cli_fit_camera(int argc, char **argv)
{
    const char *out = NULL, *name = "cam", *svg = NULL;
    int emva = 0, json = 0, c;
    double fs = 0;
    const cli_to to[] = {CLI_STR("output", &out), CLI_STR("name", &name), CLI_POSITIVE("full-scale", &fs),
                         CLI_STR("plot", &svg), CLI_FLAG("json", &json), {0}};
    cli_parser op;
    cli_parse_begin_to(&op, &cli_fit_camera_spec, to, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case 'm':
            if (!strcmp(optarg, "emva"))
                emva = 1;
            else if (strcmp(optarg, "intensity"))
                return cli_usage_error(VERB, "--model: '%s' is not intensity or emva", optarg);
            break;
        }
    }
    if (c)
        return cli_parse_exit(c);
    const char *in;
    if ((c = cli_fit_input(VERB, argc, argv, "STACK.h5", out, &in)))
        return c;
    if (cli_check_output(VERB, svg, in, NULL))
        return CLI_FAIL;
    sensim_log *log = sensim_log_open(in);
    if (!log)
        return cli_fail_lib(VERB);
    sensim_ptc_level *lv = NULL;
    size_t L = 0;
    double fs_type;
    sensim_ptc_result r;
    int rc = CLI_FAIL;
    if (sensim_ptc_stack_read(log, &lv, &L, &fs_type)) {
        rc = cli_fail_lib(VERB);
    } else if (sensim_ptc_fit(lv, L, fs ? fs : fs_type, &r)) {
        sensim_error_prefix(sensim_last_status(), "%s", in);
        rc = cli_fail_lib(VERB);
    } else {
        print_warnings(in, &r);
        if (svg && sensim_ptc_plot_svg(svg, lv, L, &r))
            rc = cli_fail_lib(VERB);
        else if ((rc = write_yaml(out, name, emva, &r, in, L)) == CLI_OK && json)
            print_json(&r, L);
    }
    free(lv);
    sensim_log_close(log);
    return rc;
}
