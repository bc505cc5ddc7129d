/* Demo step: a lidar scan and a camera frame of the bundled outdoor scene,
 * each written as a PNG (a bird's-eye view of the scan, the camera image). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "demo.h"
#include "sensim/log.h"
#include "sensim/render.h"

/* Step 5: `sensim render` casts the VLP-16 (7 rays per divergent beam, dual
 * returns) and the front camera from the start of the demo circle. */
int demo_render(const char *data, const char *dir, const char *gt)
{
    const char *scene = DEMO_PATH(data, "scenes/outdoor.yaml");
    const char *scan = DEMO_PATH(dir, "scan.h5");
    const char *frame = DEMO_PATH(dir, "frame.h5");
    const char *noisy = DEMO_PATH(dir, "scan-noisy.h5");
    const char *rig = DEMO_PATH(data, "rigs/lidar-vlp16.yaml");
    const char *pngdir = DEMO_PATH(dir, "render");
    if (demo_run(cmd_render, "render", scene, "-t", gt, "-s", "vlp16", "-o", scan, "-n", "1", "--bev", pngdir,
                 "--bev-extent", "30", NULL) ||
        demo_run(cmd_render, "render", scene, "-t", gt, "-s", "front", "-o", frame, "-n", "1", "--png", pngdir, NULL))
        return -1;
    printf("\n   The same scan with the VLP-16's datasheet noise (range sigma 1.5 cm,\n"
           "   2 mm range unit) drawn as sensim inject would:");
    if (demo_run(cmd_render, "render", scene, "-t", gt, "-s", "vlp16", "-o", noisy, "-n", "1", "--rig", rig, NULL))
        return -1;
    sensim_render_sensor rs;
    if (sensim_render_sensor_load(scene, "vlp16", &rs))
        return cli_fail_lib("demo");
    double beams = (double)rs.lidar.channels * rs.lidar.columns;
    sensim_log *ls = sensim_log_open(scan), *lf = ls ? sensim_log_open(frame) : NULL;
    sensim_log *ln = lf ? sensim_log_open(noisy) : NULL;
    size_t np = 0, nr = 0, nn = 0;
    double *rn = ln ? demo_read_col(ln, "/sensors/vlp16/range", &nn) : NULL;
    sensim_log_close(ln);
    double *range = lf ? demo_read_col(ls, "/sensors/vlp16/range", &np) : NULL;
    double *ret = range ? demo_read_col(ls, "/sensors/vlp16/return_index", &nr) : NULL;
    /* The frame is u8 [1, H, W, 3]: read it whole (demo_read_col is for
     * rank <= 2). */
    size_t dims[SENSIM_LOG_MAX_RANK];
    int rank = 0;
    uint8_t *img = NULL;
    int ok = rn && ret && sensim_log_shape(lf, "/sensors/front/image", &rank, dims) == SENSIM_OK && rank == 4 &&
             (img = malloc(dims[1] * dims[2] * dims[3])) &&
             sensim_log_read(lf, "/sensors/front/image", SENSIM_U8, 0, 1, img) == SENSIM_OK;
    sensim_log_close(ls);
    sensim_log_close(lf);
    if (!ok) {
        free(rn);
        free(range);
        free(ret);
        free(img);
        return cli_fail_lib("demo");
    }
    double rmin = INFINITY, rmax = 0, first = 0, mean = 0;
    for (size_t i = 0; i < np; i++) {
        rmin = range[i] < rmin ? range[i] : rmin;
        rmax = range[i] > rmax ? range[i] : rmax;
        first += ret[i] == 0;
    }
    /* The rig has no dropouts inside 100 m, so the noisy scan keeps every
     * point, in the same order: the difference is the range noise. */
    double dsum = 0, dsq = 0;
    for (size_t i = 0; nn == np && i < np; i++) {
        double d = rn[i] - range[i];
        dsum += d;
        dsq += d * d;
    }
    double dsd = nn == np && np > 1 ? sqrt((dsq - dsum * dsum / np) / (np - 1)) : NAN;
    size_t npx = dims[1] * dims[2] * dims[3];
    for (size_t i = 0; i < npx; i++)
        mean += img[i];
    mean /= npx ? 255.0 * npx : 1;
    printf("\n   %-40s %zu (%zu beams with a return, %.1f %% of %.0f)\n", "lidar points (dual returns)", np,
           (size_t)first, 100 * first / beams, beams);
    printf("   %-40s %.2f .. %.2f m\n", "range", np ? rmin : NAN, np ? rmax : NAN);
    printf("   %-40s %s/vlp16_00000.png\n", "bird's-eye view (colour = height)", pngdir);
    printf("   %-40s %.4f m (rig: 0.015 m, plus 2 mm / sqrt(12) rounding)\n", "range noise of the noisy scan", dsd);
    printf("   %-40s %zu x %zu, mean %.3f (sRGB, 0..1)\n", "camera image", dims[2], dims[1], mean);
    printf("   %-40s %s/front_00000.png\n", "camera PNG", pngdir);
    printf("\n   Beams without a return point at the sky. %zu beams give a second\n"
           "   return (dual mode: strongest and last): the 7 rays traced over the\n"
           "   beam's footprint straddle an edge or a thin stem and see two surfaces.\n",
           np - (size_t)first);
    free(rn);
    free(range);
    free(ret);
    free(img);
    return 0;
}
