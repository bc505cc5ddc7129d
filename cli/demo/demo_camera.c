/* Demo step: a camera through the EMVA 1288 chain, one noised frame as PNG,
 * and the photon-transfer fit of a simulated flat-field stack beside the
 * camera's true gain, read noise and dark current. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "demo.h"
#include "sensim/camera.h"
#include "sensim/log.h"
#include "sensim/rig.h"
#include "sensim/png.h"
#include "sensim/ptc.h"
#include "sensim/rng.h"
#include "sensim/status.h"

#define NLEV 12      /* exposure levels of the stack */
#define SW 128       /* stack frame size: small, the fit needs few pixels */
#define SH 128
#define IW 320       /* the PNG frame */
#define IH 240

/* The camera of the demo, bundled as data/rigs/camera-cmos.yaml (a
 * mid-range machine-vision CMOS; the photon-transfer tests use it too), read
 * by demo_camera; frame size and exposure set per use. */
static sensim_camera_params cmos;

static sensim_camera_params demo_cam(size_t W, size_t H, double exposure)
{
    sensim_camera_params p = cmos;
    p.width = W;
    p.height = H;
    p.exposure_time = exposure;
    return p;
}

/* The noised frame: a horizontal ramp with a bright disc in a dim scene
 * (about 2000 e- at white, so shot noise shows), read out at a high gain
 * that spreads those electrons over the 16-bit range. */
static int write_png(const char *path)
{
    uint16_t *in = malloc(sizeof(uint16_t) * IW * IH), *out = malloc(sizeof(uint16_t) * IW * IH);
    sensim_camera_params p = demo_cam(IW, IH, 2e-3);
    p.photons_full_scale = 4000;
    p.gain = 30;
    sensim_camera *cam = NULL;
    int rc = -1;
    if (!in || !out)
        sensim_error(SENSIM_ENOMEM, "demo: out of memory for the %dx%d frame", IW, IH);
    else
        cam = sensim_camera_create(&p, 7, sensim_rng_sensor_id("cam"));
    if (cam) {
        for (size_t y = 0; y < IH; y++)
            for (size_t x = 0; x < IW; x++) {
                double dx = x - 0.5 * IW, dy = y - 0.5 * IH, I = 0.05 + 0.5 * x / (double)IW;
                if (dx * dx + dy * dy < 60.0 * 60.0)
                    I = 0.9;
                in[y * IW + x] = (uint16_t)lround(65535 * I);
            }
        sensim_image_info info = {IW, IH, 1, 16};
        if (sensim_camera_apply(cam, 0, SENSIM_PIXEL_U16, in, out) == SENSIM_OK &&
            sensim_png_write(path, &info, out) == SENSIM_OK)
            rc = 0;
    }
    sensim_camera_destroy(cam);
    free(in);
    free(out);
    return rc;
}

/* The stack as `sensim fit camera` reads it: level k at exposure k+1 ms
 * with the light proportional to it (up to 95 % of full scale, past the
 * full well), two light and two dark frames per level. */
static int write_stack(const char *path)
{
    const size_t n = SW * SH, tail[3] = {2, SH, SW};
    uint16_t *light = malloc(sizeof(uint16_t) * NLEV * 2 * n), *dark = malloc(sizeof(uint16_t) * NLEV * 2 * n);
    double exposure[NLEV], level[NLEV];
    int rc = -1;
    if (!light || !dark) {
        sensim_error(SENSIM_ENOMEM, "demo: out of memory for the stack");
        goto done;
    }
    for (int k = 0; k < NLEV; k++) {
        exposure[k] = 1e-3 * (k + 1);
        level[k] = 0.95 * (k + 1) / NLEV;
    }
    sensim_camera_params p = demo_cam(SW, SH, 0);
    if (sensim_ptc_simulate(&p, 2024, sensim_rng_sensor_id("cam"), NLEV, exposure, level, light, dark))
        goto done;
    sensim_log *log = sensim_log_create(path, "sensim demo");
    if (!log)
        goto done;
    if (sensim_log_write(log, "/stack/exposure", SENSIM_F64, NLEV, 0, NULL, exposure, "s") ||
        sensim_log_write(log, "/stack/light", SENSIM_U16, NLEV, 3, tail, light, "DN") ||
        sensim_log_write(log, "/stack/dark", SENSIM_U16, NLEV, 3, tail, dark, "DN")) {
        sensim_log_close(log); /* not committed: the temporary file goes */
        goto done;
    }
    rc = sensim_log_commit(log) ? -1 : 0;
done:
    free(light);
    free(dark);
    return rc;
}

/* Reads the fitted values back from the YAML's comment line, which `sensim
 * fit camera` writes as "# gain K G +- g DN/e-, read noise R +- r e-, dark
 * current D +- d e-/s (95 %)". */
static int read_fit(const char *yaml, double v[6])
{
    FILE *f = fopen(yaml, "r");
    char line[512];
    int got = 0;
    while (f && !got && fgets(line, sizeof line, f))
        got = sscanf(line, "# gain K %lf +- %lf DN/e-, read noise %lf +- %lf e-, dark current %lf +- %lf", &v[0],
                     &v[1], &v[2], &v[3], &v[4], &v[5]) == 6;
    if (f)
        fclose(f);
    return got ? 0 : -1;
}

/* Step 5: the camera. */
int demo_camera(const char *data, const char *dir, const char *gt)
{
    (void)gt;
    const char *rigpath = DEMO_PATH(data, "rigs/camera-cmos.yaml");
    sensim_rig *rig = sensim_rig_load(rigpath);
    int fov;
    const sensim_camera_params *cp = rig ? sensim_camera_sensor_params(sensim_rig_find(rig, "cam"), &fov) : NULL;
    if (cp)
        cmos = *cp;
    else if (rig)
        sensim_error(SENSIM_EINVAL, "%s: no camera named 'cam'", rigpath);
    sensim_rig_free(rig);
    if (!cp)
        return cli_fail_lib("demo");
    const char *png = DEMO_PATH(dir, "camera-frame.png");
    const char *stack = DEMO_PATH(dir, "camera-stack.h5");
    const char *yaml = DEMO_PATH(dir, "camera-fit.yaml");
    const char *svg = DEMO_PATH(dir, "camera-ptc.svg");
    printf("   one noised frame, then a flat-field stack of %d exposures (1 to %d ms,\n"
           "   two light and two dark %dx%d frames each) fitted back:\n",
           NLEV, NLEV, SW, SH);
    if (write_png(png))
        return cli_fail_lib("demo");
    printf("   wrote %s (a dim ramp and disc, %dx%d, 16-bit, read out at K = 30)\n", png, IW, IH);
    if (write_stack(stack))
        return cli_fail_lib("demo");
    printf("   wrote %s\n", stack);
    if (demo_run(cmd_fit, "fit", "camera", stack, "-o", yaml, "--model", "emva", "--plot", svg, NULL))
        return -1;
    double v[6];
    if (read_fit(yaml, v))
        return cli_fail("demo", "%s: no fit summary line", yaml);
    const sensim_camera_params p = demo_cam(SW, SH, 0);
    const struct {
        const char *name;
        double truth, fit, ci;
    } row[] = {{"gain K (DN/e-)", p.gain, v[0], v[1]},
               {"read noise (e-)", p.read_noise, v[2], v[3]},
               {"dark current (e-/s)", p.dark_current, v[4], v[5]}};
    printf("\n   %-24s %10s %12s %12s %8s\n", "quantity", "true", "fitted", "95 % CI +-", "inside");
    for (int i = 0; i < 3; i++)
        printf("   %-24s %10.4g %12.5g %12.2g %8s\n", row[i].name, row[i].truth, row[i].fit, row[i].ci,
               fabs(row[i].fit - row[i].truth) <= row[i].ci ? "yes" : "no");
    printf("\n   The photon-transfer plot is %s.\n"
           "   The rig %s applies the fitted noise with\n"
           "   `sensim inject` once photons_full_scale, quantum_efficiency and\n"
           "   exposure_time are set: a photon-transfer curve cannot measure them.\n",
           svg, yaml);
    return 0;
}
