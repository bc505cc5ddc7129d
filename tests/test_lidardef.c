/* Lidars described in YAML: each preset is its data file (data/lidars/),
 * so a lidar defined only by that file's table reproduces the preset's scan
 * bit for bit; an inline per-channel table (elevation, azimuth offset,
 * firing time) gives the beam directions and times of the closed form;
 * elliptical beams spread their footprint rays over the ellipse; and the
 * errors of a bad table name the file and line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/render.h"
#include "testutil.h"

static void still(const void *user, double t, sensim_pose *out)
{
    (void)t;
    *out = *(const sensim_pose *)user;
}

/* One scan of data/scenes/outdoor.yaml from 1.8 m up at the origin. */
static sensim_render_lidar_points *scan_outdoor(const sensim_scene *s, const sensim_render_lidar_params *p)
{
    sensim_render_lidar *l = sensim_render_lidar_create(p);
    ck_assert_msg(l != NULL, "%s", sensim_last_error());
    sensim_render_lidar_points *pts = sensim_render_lidar_points_create(l);
    sensim_pose at = sensim_pose_identity();
    at.p = sensim_vec3_make(0, 0, 1.8);
    ck_assert_int_eq(sensim_render_lidar_scan(l, s, still, &at, 0.0, 0, pts), SENSIM_OK);
    sensim_render_lidar_destroy(l);
    return pts;
}

static int same_points(const sensim_render_lidar_points *a, const sensim_render_lidar_points *b)
{
    return a->count == b->count && memcmp(a->xyzi, b->xyzi, a->count * 4 * sizeof(float)) == 0 &&
           memcmp(a->range, b->range, a->count * sizeof(float)) == 0 &&
           memcmp(a->time_offset, b->time_offset, a->count * sizeof(float)) == 0 &&
           memcmp(a->channel, b->channel, a->count * sizeof(uint16_t)) == 0 &&
           memcmp(a->object, b->object, a->count * sizeof(uint32_t)) == 0;
}

START_TEST(presets_are_their_data_files)
{
    /* A scene whose sensor says only `definition: <data/lidars/X.yaml>`
     * loads the same parameters as `preset: X` and renders the same scan,
     * bit for bit. */
    const char *names[3] = {"vlp16", "hdl32e", "os128"};
    char *dir = tu_mkdtemp(), *y = tu_path(dir, "s.yaml"), *outdoor = tu_src("data/scenes/outdoor.yaml");
    sensim_scene *s = sensim_scene_load(outdoor);
    ck_assert_msg(s != NULL, "%s", sensim_last_error());
    for (int i = 0; i < 3; i++) {
        char *def = NULL, text[1024], rel[64];
        snprintf(rel, sizeof rel, "data/lidars/%s.yaml", names[i]);
        def = tu_src(rel);
        snprintf(text, sizeof text,
                 "sensors:\n  - {name: a, type: lidar, preset: %s}\n  - {name: b, type: lidar, definition: %s}\n",
                 names[i], def);
        tu_write_file(y, text);
        sensim_render_sensor ra, rb;
        ck_assert_msg(sensim_render_sensor_load(y, "a", &ra) == SENSIM_OK, "%s", sensim_last_error());
        ck_assert_msg(sensim_render_sensor_load(y, "b", &rb) == SENSIM_OK, "%s", sensim_last_error());
        /* Same parameters (the sensor ids differ with the names). */
        rb.lidar.sensor = ra.lidar.sensor;
        ck_assert_int_eq(memcmp(&ra.lidar, &rb.lidar, sizeof ra.lidar), 0);
        sensim_render_lidar_params p;
        ck_assert_int_eq(sensim_render_lidar_preset(names[i], &p), SENSIM_OK);
        sensim_render_lidar_points *pa = scan_outdoor(s, &p), *pb = scan_outdoor(s, &rb.lidar);
        ck_assert_uint_gt(pa->count, 1000);
        ck_assert_msg(same_points(pa, pb), "%s: the definition file's scan differs from the preset's", names[i]);
        sensim_render_lidar_points_destroy(pa);
        sensim_render_lidar_points_destroy(pb);
        free(def);
    }
    /* The VLP-16's table as the manual gives it. */
    sensim_render_lidar_params p;
    ck_assert_int_eq(sensim_render_lidar_preset("vlp16", &p), SENSIM_OK);
    ck_assert_int_eq(p.channels, 16);
    ck_assert_int_eq(p.columns, 1808);
    ck_assert_int_eq(p.direction, -1);
    ck_assert_within(p.elevation[2], -13 * M_PI / 180, 1e-15);
    ck_assert_within(p.time_offset[15], 15 * 2.304e-6, 1e-18);
    ck_assert_int_eq(sensim_render_lidar_preset("hdl64", &p), SENSIM_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "hdl32e, os128, vlp16"));
    sensim_scene_destroy(s);
    tu_rmtree(dir);
    free(dir);
    free(y);
    free(outdoor);
}
END_TEST

START_TEST(inline_table_directions)
{
    /* Four channels with their own elevation, azimuth offset and firing
     * time: beam (c, k) fires at t = c T + dt_k (T = hfov / (2 pi f
     * columns)) towards azimuth az0 + dir 2 pi f t + daz_k and elevation
     * el_k. */
    char *dir = tu_mkdtemp(), *y = tu_path(dir, "s.yaml");
    tu_write_file(y, "sensors:\n"
                     "  - name: custom\n    type: lidar\n    rate_hz: 20\n    columns: 360\n"
                     "    azimuth0: 10 deg\n    direction: cw\n"
                     "    table:\n"
                     "      elevation: [-10 deg, -2.5 deg, 0.0436 rad, 12 deg]\n"
                     "      azimuth_offset: [0, 1.5 deg, -1.5 deg, 3 deg]\n"
                     "      time_offset: [0 us, 5 us, 10 us, 15.5 us]\n");
    sensim_render_sensor rs;
    ck_assert_msg(sensim_render_sensor_load(y, "custom", &rs) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_int_eq(rs.lidar.channels, 4);
    sensim_render_lidar *l = sensim_render_lidar_create(&rs.lidar);
    const double el[4] = {-10 * M_PI / 180, -2.5 * M_PI / 180, 0.0436, 12 * M_PI / 180};
    const double daz[4] = {0, 1.5 * M_PI / 180, -1.5 * M_PI / 180, 3 * M_PI / 180};
    const double dt[4] = {0, 5e-6, 10e-6, 15.5e-6};
    const double T = 2 * M_PI / (2 * M_PI * 20 * 360);
    for (int c = 0; c < 360; c += 7)
        for (int k = 0; k < 4; k++) {
            double t = c * T + dt[k];
            ck_assert_within(sensim_render_lidar_fire_time(l, c, k), t, 1e-15);
            double az = 10 * M_PI / 180 - 2 * M_PI * 20 * t + daz[k];
            sensim_vec3 d = sensim_render_lidar_beam_direction(l, c, k);
            /* Directions are stored as float: 1e-7. */
            ck_assert_within(d.x, cos(el[k]) * cos(az), 2e-7);
            ck_assert_within(d.y, cos(el[k]) * sin(az), 2e-7);
            ck_assert_within(d.z, sin(el[k]), 2e-7);
        }
    sensim_render_lidar_destroy(l);
    tu_rmtree(dir);
    free(dir);
    free(y);
}
END_TEST

START_TEST(elliptical_beam)
{
    /* divergence [4 mrad, 1 mrad] with a 5 x 5 grid: offsets
     * a_i = A (2 (i + 1/2) / 5 - 1) along the horizontal, b_j the same with
     * B, A = tan(2 mrad), B = tan(0.5 mrad); weights exp(-2 (a^2/A^2 +
     * b^2/B^2)) normalised. A round beam keeps its old footprint. */
    sensim_render_lidar_params p = sensim_render_lidar_default_params();
    p.divergence = 4e-3;
    p.divergence_v = 1e-3;
    p.pattern_n = 5;
    sensim_render_lidar *l = sensim_render_lidar_create(&p);
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(sensim_render_lidar_rays_per_beam(l), 25);
    double a[25], b[25], w[25], sum = 0, expect[25];
    sensim_render_lidar_beam_rays(l, a, b, w);
    const double A = tan(2e-3), B = tan(0.5e-3);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++) {
            int r = 5 * i + j;
            ck_assert_within(a[r], A * (2 * (i + 0.5) / 5 - 1), 1e-18);
            ck_assert_within(b[r], B * (2 * (j + 0.5) / 5 - 1), 1e-18);
            expect[r] = exp(-2 * (a[r] * a[r] / (A * A) + b[r] * b[r] / (B * B)));
            sum += expect[r];
        }
    for (int r = 0; r < 25; r++)
        ck_assert_within(w[r], expect[r] / sum, 1e-15);
    sensim_render_lidar_destroy(l);
    /* Equal divergences are a round beam: the same rays as before. */
    sensim_render_lidar_params q = p;
    q.divergence_v = q.divergence;
    sensim_render_lidar_params r0 = p;
    r0.divergence_v = 0;
    sensim_render_lidar *lq = sensim_render_lidar_create(&q), *l0 = sensim_render_lidar_create(&r0);
    double a2[25], b2[25], w2[25];
    sensim_render_lidar_beam_rays(lq, a, b, w);
    sensim_render_lidar_beam_rays(l0, a2, b2, w2);
    ck_assert_int_eq(memcmp(a, a2, sizeof a), 0);
    ck_assert_int_eq(memcmp(w, w2, sizeof w), 0);
    sensim_render_lidar_destroy(lq);
    sensim_render_lidar_destroy(l0);
    /* Not with the round-beam power law of seed 002 eq. 21. */
    p.falloff = SENSIM_FALLOFF_GAUSSIAN_BEAM;
    p.waist = 0.005;
    p.receiver_radius = 0.01;
    ck_assert_ptr_null(sensim_render_lidar_create(&p));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "round beam"));
    /* In a scene file: divergence: [4 mrad, 1 mrad]. */
    char *dir = tu_mkdtemp(), *y = tu_path(dir, "s.yaml");
    tu_write_file(y, "sensors:\n  - {name: e, type: lidar, preset: vlp16, divergence: [4 mrad, 1 mrad], "
                     "beam: {n: 3}}\n");
    sensim_render_sensor rs;
    ck_assert_msg(sensim_render_sensor_load(y, "e", &rs) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_within(rs.lidar.divergence, 4e-3, 1e-18);
    ck_assert_within(rs.lidar.divergence_v, 1e-3, 1e-18);
    tu_rmtree(dir);
    free(dir);
    free(y);
}
END_TEST

START_TEST(bad_tables)
{
    char *dir = tu_mkdtemp(), *y = tu_path(dir, "s.yaml");
    const char *bad[][2] = {
        {"sensors:\n  - name: x\n    type: lidar\n    table:\n      elevation: [1 deg, 2 deg]\n"
         "      time_offset: [0 us]\n",
         "s.yaml:6: key 'time_offset': 1 values for 2 channels"},
        {"sensors:\n  - name: x\n    type: lidar\n    channels: 2\n    table: {elevation: [1 deg, 2 deg]}\n",
         "s.yaml:4: key 'channels'"},
        {"sensors:\n  - name: x\n    type: lidar\n    table: {time_offset: [0, 1]}\n", "missing key 'elevation'"},
        {"sensors:\n  - name: x\n    type: lidar\n    table: {elevation: [1 m]}\n", "s.yaml:4:"},
        {"sensors:\n  - name: x\n    type: lidar\n    table: {elevation: [100 deg]}\n", "channel 0"},
        {"sensors:\n  - {name: x, type: lidar, preset: vlp16, definition: a.yaml}\n", "not both"},
        {"sensors:\n  - {name: x, type: lidar, definition: missing.yaml}\n", "s.yaml:2: definition"},
        {"sensors:\n  - {name: x, type: lidar, definition: d.yaml}\n", "d.yaml:1: unknown key 'mount'"},
    };
    char *d = tu_path(dir, "d.yaml");
    tu_write_file(d, "mount: {position: [0, 0, 1]}\n");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_write_file(y, bad[i][0]);
        sensim_render_sensor rs;
        ck_assert_int_ne(sensim_render_sensor_load(y, "x", &rs), SENSIM_OK);
        ck_assert_msg(strstr(sensim_last_error(), bad[i][1]), "case %zu: %s", i, sensim_last_error());
    }
    tu_rmtree(dir);
    free(dir);
    free(y);
    free(d);
}
END_TEST

static sensim_render_lidar_params rosette(double f1, double f2)
{
    sensim_render_lidar_params p = sensim_render_lidar_default_params();
    p.scan = SENSIM_SCAN_ROSETTE;
    p.channels = 1;
    p.rosette_fov = 38.4 * M_PI / 180;
    p.rosette_hz[0] = f1;
    p.rosette_hz[1] = f2;
    p.rate_hz = 10;
    p.columns = 10000;
    p.max_range = 500;
    return p;
}

START_TEST(rosette_closed_form)
{
    /* e^(ia) + e^(ib) = 2 cos((a - b) / 2) e^(i (a + b) / 2): the offset is
     * A (cos psi, sin psi) with A = (fov / 2) cos(pi (f1 - f2) t) and
     * psi = pi (f1 + f2) t, so the beam is (cos |A|, sin A cos psi,
     * sin A sin psi), at t = column / (rate columns). */
    sensim_render_lidar_params p = rosette(1160.9, -742.3);
    sensim_render_lidar *l = sensim_render_lidar_create(&p);
    ck_assert_msg(l != NULL, "%s", sensim_last_error());
    ck_assert_uint_eq(sensim_render_lidar_max_points(l), 10000);
    double thmax = 0;
    for (int c = 0; c < 10000; c += 3) {
        double t = c / (10.0 * 10000);
        ck_assert_within(sensim_render_lidar_fire_time(l, c, 0), t, 1e-15);
        double A = 0.5 * p.rosette_fov * cos(M_PI * (1160.9 + 742.3) * t), psi = M_PI * (1160.9 - 742.3) * t;
        sensim_vec3 d = sensim_render_lidar_beam_direction(l, c, 0);
        ck_assert_within(d.x, cos(fabs(A)), 2e-7);
        ck_assert_within(d.y, sin(A) * cos(psi), 2e-7);
        ck_assert_within(d.z, sin(A) * sin(psi), 2e-7);
        thmax = fmax(thmax, acos(fmin(1.0, d.x)));
    }
    /* Never outside the cone, and out to its edge. */
    ck_assert_double_le(thmax, 0.5 * p.rosette_fov + 1e-6);
    ck_assert_double_gt(thmax, 0.5 * p.rosette_fov - 1e-3);
    sensim_render_lidar_destroy(l);
    /* Bad rosettes. */
    p.channels = 2;
    ck_assert_ptr_null(sensim_render_lidar_create(&p));
    p.channels = 1;
    p.rosette_hz[1] = p.rosette_hz[0];
    ck_assert_ptr_null(sensim_render_lidar_create(&p));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "rosette"));
}
END_TEST

/* Fraction of the 0.2 x 0.2 deg cells of the cone (in the offset plane) that
 * the points of scans 0..nscan-1 fall in, rendered from inside a large box
 * (every beam hits). Also returns the largest direction difference between
 * scan 0 and scan 1 in *moved. */
static double rosette_coverage(double f1, double f2, int nscan, double *moved)
{
    sensim_scene *s = sensim_scene_create();
    int m = sensim_scene_add_box(s, "room", 400, 400, 400);
    sensim_scene_add_object(s, m, 0, sensim_pose_identity());
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    sensim_render_lidar_params p = rosette(f1, f2);
    sensim_render_lidar *l = sensim_render_lidar_create(&p);
    sensim_render_lidar_points *pts = sensim_render_lidar_points_create(l);
    const double R = 0.5 * p.rosette_fov * 180 / M_PI / 0.2; /* cells */
    const int G = 2 * (int)ceil(R);
    char *seen = calloc((size_t)G * G, 1);
    float *first = malloc(10000 * 3 * sizeof *first);
    sensim_pose at = sensim_pose_identity();
    *moved = 0;
    for (int sc = 0; sc < nscan; sc++) {
        ck_assert_int_eq(sensim_render_lidar_scan(l, s, still, &at, sc / 10.0, (uint64_t)sc, pts), SENSIM_OK);
        ck_assert_uint_eq(pts->count, 10000);
        for (size_t i = 0; i < pts->count; i++) {
            double d[3];
            for (int k = 0; k < 3; k++)
                d[k] = pts->xyzi[4 * i + k] / pts->range[i];
            if (sc == 0)
                memcpy(first + 3 * i, (float[3]){(float)d[0], (float)d[1], (float)d[2]}, sizeof(float[3]));
            else if (sc == 1)
                for (int k = 0; k < 3; k++)
                    *moved = fmax(*moved, fabs(d[k] - first[3 * i + k]));
            double th = acos(fmin(1.0, d[0])) * 180 / M_PI / 0.2, ps = atan2(d[2], d[1]);
            int x = (int)floor(th * cos(ps) + G / 2), y = (int)floor(th * sin(ps) + G / 2);
            if (x >= 0 && x < G && y >= 0 && y < G)
                seen[y * G + x] = 1;
        }
    }
    /* Cells whose centre lies inside the cone. */
    int inside = 0, hit = 0;
    for (int y = 0; y < G; y++)
        for (int x = 0; x < G; x++) {
            double cx = x + 0.5 - G / 2, cy = y + 0.5 - G / 2;
            if (cx * cx + cy * cy <= (R - 0.5) * (R - 0.5)) {
                inside++;
                hit += seen[y * G + x];
            }
        }
    free(seen);
    free(first);
    sensim_render_lidar_points_destroy(pts);
    sensim_render_lidar_destroy(l);
    sensim_scene_destroy(s);
    return (double)hit / inside;
}

START_TEST(rosette_period_and_coverage)
{
    /* Prisms at 50 and -30 Hz repeat every 1 / gcd = 0.1 s, one scan: the
     * second scan retraces the first (to float rounding) and ten scans cover
     * no more of the cone than one. At incommensurate rates (1160.9 and
     * -742.3 Hz, a Mid-40-like rosette) the petals precess: the second scan
     * lies elsewhere and the cone fills as scans accumulate: 10 000 points
     * a scan against some 29 000 cells of 0.2 deg. */
    double moved;
    double c1 = rosette_coverage(50, -30, 1, &moved);
    double c10 = rosette_coverage(50, -30, 10, &moved);
    ck_assert_double_lt(moved, 2e-5);
    ck_assert_double_eq(c1, c10);
    ck_assert_double_lt(c10, 0.2);
    double n1 = rosette_coverage(1160.9, -742.3, 1, &moved);
    double n10 = rosette_coverage(1160.9, -742.3, 10, &moved);
    ck_assert_double_gt(moved, 1e-2);
    /* Measured: repetitive 0.064 / 0.064, non-repetitive 0.284 / 0.915. */
    ck_assert_double_gt(n10, n1 + 0.1);
    ck_assert_double_gt(n10, 0.9);
}
END_TEST

Suite *suite_lidardef(void)
{
    Suite *su = suite_create("lidardef");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, presets_are_their_data_files);
    tcase_add_test(tc, inline_table_directions);
    tcase_add_test(tc, elliptical_beam);
    tcase_add_test(tc, bad_tables);
    tcase_add_test(tc, rosette_closed_form);
    tcase_add_test(tc, rosette_period_and_coverage);
    suite_add_tcase(su, tc);
    return su;
}
