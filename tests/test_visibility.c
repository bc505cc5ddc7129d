/* Atmosphere from visibility: Koschmieder's 3.912 / V at 550 nm with the
 * wavelength exponent q of Kim, Bruce & Korevaar (2001) in each visibility
 * band, the scene keys (visibility vs extinction, exclusive), the lidar
 * `wavelength` key, and a rendered scan attenuated by exp(-2 alpha(905 nm) r). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/render.h"
#include "testutil.h"

/* Closed forms written out per band (not through a shared helper), so a
 * wrong band boundary or exponent in the library shows. */
START_TEST(closed_forms)
{
    const double l905 = 905e-9, l1550 = 1550e-9;
    struct {
        double v, lambda, expect;
    } c[] = {
        {100e3, l905, 3.912 / 100e3 * pow(905.0 / 550.0, -1.6)},
        {60e3, l1550, 3.912 / 60e3 * pow(1550.0 / 550.0, -1.6)},
        {20e3, l905, 3.912 / 20e3 * pow(905.0 / 550.0, -1.3)},
        {10e3, l1550, 3.912 / 10e3 * pow(1550.0 / 550.0, -1.3)},
        {3e3, l905, 3.912 / 3e3 * pow(905.0 / 550.0, -(0.16 * 3 + 0.34))},
        {2e3, l1550, 3.912 / 2e3 * pow(1550.0 / 550.0, -(0.16 * 2 + 0.34))},
        {800, l905, 3.912 / 800 * pow(905.0 / 550.0, -(0.8 - 0.5))},
        {300, l905, 3.912 / 300},
        {300, l1550, 3.912 / 300},
        {5e3, 550e-9, 3.912 / 5e3},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        ck_assert_within(sensim_visibility_extinction(c[i].v, c[i].lambda), c[i].expect, 1e-12 * c[i].expect);
    /* q is continuous at 6 km (1.3), 1 km (0.5) and 0.5 km (0). */
    ck_assert_within(sensim_visibility_extinction(6e3, l905), 3.912 / 6e3 * pow(905.0 / 550.0, -1.3), 1e-15);
    ck_assert_within(sensim_visibility_extinction(1e3, l905), 3.912 / 1e3 * pow(905.0 / 550.0, -0.5), 1e-15);
    ck_assert_within(sensim_visibility_extinction(500, l905), 3.912 / 500, 1e-15);
    ck_assert(isnan(sensim_visibility_extinction(0, l905)));
    ck_assert(isnan(sensim_visibility_extinction(1e3, -1)));
    ck_assert(isnan(sensim_visibility_extinction(INFINITY, l905)));
}
END_TEST

START_TEST(scene_visibility)
{
    sensim_scene *s = sensim_scene_create();
    ck_assert_int_eq(sensim_scene_set_visibility(s, 2000), SENSIM_OK);
    ck_assert_within(sensim_scene_visibility(s), 2000, 0);
    ck_assert_within(sensim_scene_extinction(s), 3.912 / 2000, 1e-15);
    ck_assert_within(sensim_scene_extinction_at(s, 905e-9), sensim_visibility_extinction(2000, 905e-9), 0);
    ck_assert_int_eq(sensim_scene_set_atmosphere(s, 0.01), SENSIM_OK);
    ck_assert_within(sensim_scene_visibility(s), 0, 0);
    ck_assert_within(sensim_scene_extinction_at(s, 905e-9), 0.01, 0);
    ck_assert_int_eq(sensim_scene_set_visibility(s, -1), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "visibility must be finite and > 0"));
    sensim_scene_destroy(s);
}
END_TEST

static void fixed_pose(const void *user, double t, sensim_pose *out)
{
    (void)user;
    (void)t;
    *out = sensim_pose_identity();
    out->p = sensim_vec3_make(0, 0, 10);
}

/* A scene file with a ground plane and a lidar looking down; returns the
 * scan (caller frees) with the given atmosphere line and lidar extra keys. */
static sensim_render_lidar_points *scan_of(const char *dir, const char *atmo, const char *lidar_extra,
                                           sensim_render_lidar **lo)
{
    char *p = tu_path(dir, "scene.yaml"), text[2048];
    snprintf(text, sizeof text,
             "meshes:\n  - {name: g, plane: {size: [400, 400]}}\nobjects:\n  - {mesh: g}\n%s"
             "sensors:\n  - {name: l, type: lidar, channels: 8, vfov: [-60 deg, -10 deg], columns: 36,\n"
             "     max_range: 300, falloff: none%s}\n",
             atmo, lidar_extra);
    ck_assert_int_eq(tu_write_file(p, text), 0);
    sensim_scene *s = sensim_scene_load(p);
    ck_assert_msg(s != NULL, "%s", sensim_last_error());
    sensim_render_sensor sen;
    ck_assert_msg(sensim_render_sensor_load(p, "l", &sen) == SENSIM_OK, "%s", sensim_last_error());
    sensim_render_lidar *l = sensim_render_lidar_create(&sen.lidar);
    sensim_render_lidar_points *pt = sensim_render_lidar_points_create(l);
    ck_assert_int_eq(sensim_render_lidar_scan(l, s, fixed_pose, NULL, 0, 0, pt), SENSIM_OK);
    sensim_scene_destroy(s);
    free(p);
    *lo = l;
    return pt;
}

START_TEST(lidar_attenuation)
{
    char *dir = tu_mkdtemp();
    sensim_render_lidar *l0, *l1, *l2;
    sensim_render_lidar_points *a = scan_of(dir, "", "", &l0),
                               *b = scan_of(dir, "atmosphere: {visibility: 2 km}\n", "", &l1),
                               *c = scan_of(dir, "atmosphere: {visibility: 2 km}\n", ", wavelength: 1550 nm", &l2);
    ck_assert_within(sensim_render_lidar_params_of(l1)->wavelength, 905e-9, 0);
    ck_assert_within(sensim_render_lidar_params_of(l2)->wavelength, 1550e-9, 1e-20);
    const double a905 = 3.912 / 2000 * pow(905.0 / 550.0, -0.66), a1550 = 3.912 / 2000 * pow(1550.0 / 550.0, -0.66);
    ck_assert_uint_eq(a->count, 8 * 36);
    ck_assert_uint_eq(b->count, a->count);
    ck_assert_uint_eq(c->count, a->count);
    for (size_t i = 0; i < a->count; i++) {
        double r = a->range[i];
        /* intensities are float32: 1e-6 relative. */
        ck_assert_within(b->xyzi[4 * i + 3] / a->xyzi[4 * i + 3], exp(-2 * a905 * r), 1e-6);
        ck_assert_within(c->xyzi[4 * i + 3] / a->xyzi[4 * i + 3], exp(-2 * a1550 * r), 1e-6);
    }
    sensim_render_lidar_points_destroy(a);
    sensim_render_lidar_points_destroy(b);
    sensim_render_lidar_points_destroy(c);
    sensim_render_lidar_destroy(l0);
    sensim_render_lidar_destroy(l1);
    sensim_render_lidar_destroy(l2);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

static void expect_scene_error(const char *text, const char *expect)
{
    char *dir = tu_mkdtemp(), *p = tu_path(dir, "scene.yaml");
    ck_assert_int_eq(tu_write_file(p, text), 0);
    ck_assert_ptr_null(sensim_scene_load(p));
    ck_assert_msg(strstr(sensim_last_error(), expect) != NULL, "message '%s' lacks '%s'", sensim_last_error(),
                  expect);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

START_TEST(bad_keys)
{
    const char *base = "meshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - {mesh: b}\n";
    char t[512];
    snprintf(t, sizeof t, "%satmosphere: {extinction: 0.01, visibility: 3 km}\n", base);
    expect_scene_error(t, "scene.yaml:5: atmosphere: give extinction or visibility, not both");
    snprintf(t, sizeof t, "%satmosphere: {visibility: -3 km}\n", base);
    expect_scene_error(t, "scene.yaml:5");
    snprintf(t, sizeof t, "%satmosphere: {visibility: 3 s}\n", base);
    expect_scene_error(t, "visibility");
    snprintf(t, sizeof t, "%satmosphere: {returns: {probability: 0.1, shape: 2, scale: 3}}\n", base);
    expect_scene_error(t, "missing key 'extinction' or 'visibility'");
    /* A lidar wavelength out of range. */
    char *dir = tu_mkdtemp(), *p = tu_path(dir, "scene.yaml");
    snprintf(t, sizeof t, "%ssensors:\n  - {name: l, type: lidar, wavelength: 20 nm}\n", base);
    ck_assert_int_eq(tu_write_file(p, t), 0);
    sensim_render_sensor sen;
    ck_assert_int_ne(sensim_render_sensor_load(p, "l", &sen), SENSIM_OK);
    ck_assert_msg(strstr(sensim_last_error(), "scene.yaml:6") && strstr(sensim_last_error(), "wavelength"), "%s",
                  sensim_last_error());
    free(p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_visibility(void)
{
    Suite *s = suite_create("visibility");
    TCase *tc = tcase_create("visibility");
    tcase_add_test(tc, closed_forms);
    tcase_add_test(tc, scene_visibility);
    tcase_add_test(tc, lidar_attenuation);
    tcase_add_test(tc, bad_keys);
    suite_add_tcase(s, tc);
    return s;
}
