/* A camera's depth and segmentation images beside its colour image
 * (render/camera.c, render/renderlog.c): the depth of a plane at a known
 * distance against the closed form at every pixel, for the pinhole and
 * the calibrated lenses; segmentation ids in the scene's object order. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/camera.h"
#include "sensim/log.h"
#include "sensim/render.h"
#include "testutil.h"

static void fixed_pose(const void *user, double t, sensim_pose *out)
{
    (void)t;
    *out = *(const sensim_pose *)user;
}

/* A camera D metres above an endless plane (object 0, z = 0), looking
 * straight down: the plane is perpendicular to the optical axis, so the
 * z-depth is D at every pixel that sees it, and the range is D / cos of
 * the ray's angle to the axis. Pinhole: cos = 1 / sqrt(1 + x^2 + y^2)
 * with (x, y) = (2u / W - 1, (H - 2v) / W) tan(hfov / 2); the calibrated
 * lenses: the lens's own ray (tested against OpenCV in the lens suite),
 * and a fisheye's rays past 90 degrees see the sky (+inf, no object). */
START_TEST(depth_of_a_plane)
{
    const double D = 7.25;
    sensim_scene *s = sensim_scene_create();
    int plane = sensim_scene_add_plane(s, "ground", 1e5, 1e5, 1, 1);
    ck_assert_int_eq(sensim_scene_add_object(s, plane, 0, sensim_pose_identity()), 0);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    sensim_pose pose = {{0.3, -0.2, D}, sensim_quat_axis_angle(sensim_vec3_make(0, 1, 0), M_PI / 2)};
    sensim_render_camera_params p = sensim_render_camera_default_params();
    p.width = 80;
    p.height = 60;
    p.hfov = 70 * M_PI / 180;
    sensim_lens kb = {.model = SENSIM_LENS_KB,
                      .width = 80,
                      .height = 60,
                      .fx = 25,
                      .fy = 25,
                      .cx = 39.5,
                      .cy = 29.5,
                      .k = {-0.01, 0.004}};
    sensim_lens rt = {.model = SENSIM_LENS_RADTAN,
                      .width = 80,
                      .height = 60,
                      .fx = 60,
                      .fy = 61,
                      .cx = 40.2,
                      .cy = 28.9,
                      .k = {-0.2, 0.05},
                      .p1 = 1e-3,
                      .p2 = -5e-4};
    if (_i == 1) {
        p.lens = SENSIM_RENDER_LENS_KB;
        p.optics = kb;
    } else if (_i == 2) {
        p.lens = SENSIM_RENDER_LENS_RADTAN;
        p.optics = rt;
    }
    const size_t W = 80, H = 60;
    float *rgb = malloc(W * H * 3 * sizeof *rgb), *dz = malloc(W * H * sizeof *dz), *dr = malloc(W * H * sizeof *dr);
    uint32_t *obj = malloc(W * H * sizeof *obj);
    for (int kind = 0; kind < 2; kind++) {
        p.depth = kind ? SENSIM_RENDER_DEPTH_RANGE : SENSIM_RENDER_DEPTH_Z;
        sensim_render_camera *c = sensim_render_camera_create(&p);
        ck_assert_msg(c != NULL, "%s", sensim_last_error());
        ck_assert_int_eq(
            sensim_render_camera_render_images(c, s, fixed_pose, &pose, 0, 0, rgb, kind ? dr : dz, kind ? NULL : obj),
            SENSIM_OK);
        sensim_render_camera_destroy(c);
    }
    size_t sky = 0;
    double worst = 0;
    for (size_t j = 0; j < H; j++)
        for (size_t i = 0; i < W; i++) {
            size_t k = j * W + i;
            double cosang;
            if (_i == 0) {
                double tw = tan(p.hfov / 2), x = (2 * (i + 0.5) / W - 1) * tw, y = (H - 2 * (j + 0.5)) / (double)W * tw;
                cosang = 1 / sqrt(1 + x * x + y * y);
            } else {
                double d[3];
                sensim_lens_pixel_to_dir(_i == 1 ? &kb : &rt, i + 0.5, j + 0.5, d);
                cosang = d[2];
            }
            if (cosang < 1e-3) { /* at or past 90 degrees: no plane there */
                ck_assert_msg(isinf(dz[k]) && dz[k] > 0 && isinf(dr[k]) && obj[k] == SENSIM_RENDER_NO_OBJECT,
                              "pixel (%zu, %zu): depth %g, object %u", i, j, dz[k], obj[k]);
                sky++;
                continue;
            }
            ck_assert_uint_eq(obj[k], 0);
            /* Rays and hit distances are single precision. */
            ck_assert_msg(fabs(dz[k] - D) <= 2e-6 * D / cosang, "z-depth at (%zu, %zu): %.9g, expected %.9g", i, j,
                          dz[k], D);
            ck_assert_msg(fabs(dr[k] - D / cosang) <= 2e-6 * D / cosang, "range at (%zu, %zu): %.9g, expected %.9g", i,
                          j, dr[k], D / cosang);
            worst = fmax(worst, fabs(dr[k] - D / cosang) / (D / cosang));
        }
    /* The fisheye (about 190 degrees across the diagonal) sees sky in its
     * corners; the others none. */
    if (_i == 1)
        ck_assert_uint_gt(sky, 0);
    else
        ck_assert_uint_eq(sky, 0);
    ck_assert(worst < 2e-6);
    free(rgb), free(dz), free(dr), free(obj);
    sensim_scene_destroy(s);
}
END_TEST

static void *read_all(const char *file, const char *dset, sensim_dtype type, size_t esz, int *rank, size_t dims[],
                      char **units)
{
    sensim_log *L = sensim_log_open(file);
    ck_assert_msg(L != NULL, "%s", sensim_last_error());
    ck_assert_msg(sensim_log_shape(L, dset, rank, dims) == SENSIM_OK, "%s", sensim_last_error());
    size_t n = 1;
    for (int r = 0; r < *rank; r++)
        n *= dims[r];
    void *x = malloc(n * esz);
    ck_assert_int_eq(sensim_log_read(L, dset, type, 0, dims[0], x), SENSIM_OK);
    ck_assert_int_eq(sensim_log_get_attr_string(L, dset, "units", units), SENSIM_OK);
    sensim_log_close(L);
    return x;
}

/* `sensim render` writes /sensors/NAME/depth and /segmentation when the
 * scene's camera asks for them. A camera 1 m up looks along +x at three
 * 2 m boxes (the scene's objects 1, 2, 3, a `repeat` from y = 3 to -3)
 * whose near faces stand 9 m ahead on the ground (object 0): at the
 * horizon row, the image's left, middle and right see objects 1, 2, 3 at
 * z-depth 9 m, the bottom row the ground, the top row the sky. */
START_TEST(cli_depth_and_segmentation)
{
    char *dir = tu_mkdtemp(), *scene = tu_path(dir, "scene.yaml"), *gt = tu_path(dir, "gt.h5");
    char *out = tu_path(dir, "out.h5"), *plain = tu_path(dir, "plain.h5");
    ck_assert_int_eq(tu_write_file(scene,
                                   "meshes:\n"
                                   "  - {name: ground, plane: {size: [200, 200]}}\n"
                                   "  - {name: box, box: {size: [2, 2, 2]}}\n"
                                   "objects:\n"
                                   "  - {mesh: ground}\n"
                                   "  - {mesh: box, position: [10, 3, 1], repeat: {count: 3, step: [0, -3, 0]}}\n"
                                   "sensors:\n"
                                   "  - {name: cam, type: camera, width: 64, height: 48, hfov: 90 deg,\n"
                                   "     mount: {position: [0, 0, 1]}, depth: z, segmentation: true}\n"
                                   "  - {name: bare, type: camera, width: 64, height: 48, hfov: 90 deg,\n"
                                   "     mount: {position: [0, 0, 1]}}\n"
                                   "  - {name: bad, type: camera, depth: metres}\n"),
                     0);
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "1", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("render", scene, "-t", gt, "-s", "cam", "-n", "2", "-o", out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK];
    char *units = NULL;
    float *depth = read_all(out, "/sensors/cam/depth", SENSIM_F32, sizeof(float), &rank, dims, &units);
    ck_assert(rank == 3 && dims[0] == 2 && dims[1] == 48 && dims[2] == 64);
    ck_assert_str_eq(units, "m");
    free(units);
    uint32_t *seg = read_all(out, "/sensors/cam/segmentation", SENSIM_U32, sizeof(uint32_t), &rank, dims, &units);
    ck_assert(rank == 3 && dims[0] == 2 && dims[1] == 48 && dims[2] == 64);
    free(units);
    /* Horizon row 24 (rays 1/64 of tan 45 deg below the axis): box faces
     * at x = 9 m span y in [2, 4], [-1, 1], [-4, -2]; image right is -y,
     * column u sees y = -(2 (u + 0.5) / 64 - 1) 9. */
    const int cols[3] = {21, 32, 42};
    for (int b = 0; b < 3; b++) {
        size_t k = 24 * 64 + (size_t)cols[b];
        double y = -(2 * (cols[b] + 0.5) / 64 - 1) * 9;
        ck_assert_msg(fabs(y - (3 - 3 * b)) < 1, "test geometry: column %d sees y = %g", cols[b], y);
        ck_assert_msg(seg[k] == (uint32_t)(b + 1), "column %d: object %u, expected %d", cols[b], seg[k], b + 1);
        ck_assert_within(depth[k], 9, 2e-5);
    }
    /* Bottom row: the ground, 45 deg below: z-depth 1 / tan of the row's
     * angle (row 47's centre, (48 - 2 * 47.5) / 64 = -0.734 below). */
    size_t kb = 47 * 64 + 32;
    ck_assert_uint_eq(seg[kb], 0);
    ck_assert_within(depth[kb], 1 / (47.0 / 64), 2e-5);
    /* Top row: the sky. */
    ck_assert_uint_eq(seg[32], SENSIM_RENDER_NO_OBJECT);
    ck_assert(isinf(depth[32]) && depth[32] > 0);
    /* Both frames alike (nothing moves). */
    ck_assert(!memcmp(seg, seg + 48 * 64, 48 * 64 * sizeof *seg));
    free(depth), free(seg);
    /* Without the keys: no extra datasets. */
    r = tu_run("render", scene, "-t", gt, "-s", "bare", "-n", "1", "-o", plain, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    sensim_log *L = sensim_log_open(plain);
    ck_assert(!sensim_log_exists(L, "/sensors/bare/depth") && !sensim_log_exists(L, "/sensors/bare/segmentation"));
    sensim_log_close(L);
    /* A bad kind names the key and its line. */
    r = tu_run("render", scene, "-t", gt, "-s", "bad", "-n", "1", "-o", plain, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "scene.yaml:12") && strstr(r.err, "depth") && strstr(r.err, "metres"), "%s", r.err);
    tu_run_free(&r);
    tu_rmtree(dir);
    free(dir), free(scene), free(gt), free(out), free(plain);
}
END_TEST

Suite *suite_camimages(void)
{
    Suite *s = suite_create("camimages");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, depth_of_a_plane, 0, 3);
    tcase_add_test(tc, cli_depth_and_segmentation);
    suite_add_tcase(s, tc);
    return s;
}
