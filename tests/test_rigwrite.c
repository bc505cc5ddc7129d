/* Rig YAML writers (sensim_<type>_write_yaml): for every sensor type,
 * parse(write(params)) equals params bit for bit, with names that YAML
 * would misread unquoted (':', '#', quotes, spaces, flow indicators), and a
 * fitted rig written by the CLI is accepted by inject. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/camera.h"
#include "sensim/gnss.h"
#include "sensim/imu.h"
#include "sensim/lidar.h"
#include "sensim/odometer.h"
#include "sensim/rig.h"
#include "sensim/yaml.h"
#include "testutil.h"

/* Names a plain YAML scalar cannot hold as they are. */
static const char *const names[] = {
    "imu: #1", "cam \"left\" #2", "it's a: b", "x #y", "{braces}", "[list]", "&anchor *alias", "!tag", "%pct",
    "@at `tick`", "- dash", "? q", "back\\slash", "true", "123", "0x1F", "null", "~", "a,b", "tab is not: ok"};

/* Full-precision values, reproducible: a Weyl sequence in [lo, hi). */
static double val(unsigned *k, double lo, double hi)
{
    double u = fmod(0.6180339887498949 * (double)++*k + 0.1234567891011, 1.0);
    return lo + (hi - lo) * u;
}

typedef void (*write_fn)(sensim_ywriter *w, const sensim_sensor *s, const void *p);

/* Writes one sensor of type `type` named `name` with writer `fn`, loads the
 * text back as a rig and returns it (the test fails when it is refused). */
static sensim_rig *round_trip(const char *name, double rate, write_fn fn, const void *p, char **text)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    fputs("# a comment before the document\n", f);
    sensim_ywriter *w = sensim_ywriter_create(f);
    ck_assert_ptr_nonnull(w);
    sensim_rig_write_yaml_begin(w, 18446744073709551615ull, "rig: \"written\" # by a test");
    sensim_sensor s;
    sensim_sensor_init(&s, name, rate);
    s.mount_position = sensim_vec3_make(0.125, -0.3000000000000001, 2.5e-3);
    s.mount_orientation = sensim_quat_make(0.6, 0.8, 0.0, 0.0);
    s.timing.lag = 0.0021;
    s.timing.clock_drift = 2.0000000000000002e-5;
    s.timing.jitter = 1e-4;
    fn(w, &s, p);
    ck_assert_msg(sensim_ywriter_close(w) == SENSIM_OK, "%s", sensim_last_error());
    fclose(f);
    sensim_rig *rig = sensim_rig_load_string(buf, "written.yaml");
    ck_assert_msg(rig != NULL, "%s\n%s", sensim_last_error(), buf);
    ck_assert_uint_eq(rig->seed, 18446744073709551615ull);
    ck_assert_uint_eq(rig->nsensors, 1);
    const sensim_sensor *r = &rig->sensors[0];
    ck_assert_str_eq(r->name, name);
    ck_assert(r->rate_hz == rate);
    ck_assert(r->mount_position.x == s.mount_position.x && r->mount_position.y == s.mount_position.y &&
              r->mount_position.z == s.mount_position.z);
    ck_assert(r->mount_orientation.w == 0.6 && r->mount_orientation.x == 0.8);
    ck_assert(!memcmp(&r->timing, &s.timing, sizeof s.timing));
    ck_assert_str_eq(sensim_ynode_scalar(sensim_ynode_get(sensim_yaml_root(rig->doc), "description")),
                     "rig: \"written\" # by a test");
    *text = buf;
    return rig;
}

static void w_imu(sensim_ywriter *w, const sensim_sensor *s, const void *p) { sensim_imu_write_yaml(w, s, p); }
static void w_gnss(sensim_ywriter *w, const sensim_sensor *s, const void *p) { sensim_gnss_write_yaml(w, s, p); }
static void w_odo(sensim_ywriter *w, const sensim_sensor *s, const void *p) { sensim_odometer_write_yaml(w, s, p); }
static void w_lidar(sensim_ywriter *w, const sensim_sensor *s, const void *p) { sensim_lidar_write_yaml(w, s, p); }

START_TEST(imu_round_trip)
{
    unsigned k = (unsigned)_i * 97;
    sensim_imu_params p = sensim_imu_default_params();
    for (int i = 0; i < 3; i++) {
        sensim_triax_params *t = &p.triax[i];
        p.present[i] = 1;
        for (int a = 0; a < 3; a++) {
            t->noise_density[a] = val(&k, 1e-5, 1e-3);
            t->noise_sigma[a] = val(&k, 0, 1e-3);
            t->bias[a] = val(&k, -1e-2, 1e-2);
            t->turn_on_bias[a] = val(&k, 0, 1e-3);
            t->random_walk[a] = val(&k, 1e-6, 1e-4);
            t->bias_instability[a] = val(&k, 1e-6, 1e-4);
            t->rate_ramp[a] = val(&k, -1e-6, 1e-6);
            t->quantization[a] = i == SENSIM_GYRO ? 0.0 : val(&k, 1e-6, 1e-5);
            t->range[a] = val(&k, 100, 200);
            t->scale[a] = val(&k, -1e-3, 1e-3);
            t->gm_sigma[a] = val(&k, 1e-5, 1e-4);
            t->chrono_mean[a] = val(&k, -1e-4, 1e-4);
            t->chrono_stddev[a] = val(&k, 0, 1e-4);
            t->chrono_bias_drift[a] = val(&k, 0, 1e-4);
            t->chrono_drift_mean[a] = val(&k, -1e-5, 1e-5);
            t->airsim_arw[a] = i == SENSIM_MAG ? 0.0 : val(&k, 1e-5, 1e-4);
            t->airsim_bias_stability[a] = val(&k, 1e-6, 1e-5);
            t->gz_mean[a] = val(&k, -1e-4, 1e-4);
            t->gz_stddev[a] = val(&k, 0, 1e-4);
            t->gz_bias_mean[a] = val(&k, -1e-4, 1e-4);
            t->gz_bias_stddev[a] = val(&k, 0, 1e-4);
            t->gz_dyn_stddev[a] = val(&k, 1e-6, 1e-5);
            t->gz_dyn_tau[a] = val(&k, 100, 400);
            t->gz_precision[a] = i == SENSIM_GYRO ? val(&k, 1e-5, 1e-4) : 0.0;
        }
        const double gm_tau = val(&k, 10, 100), tau_drift = val(&k, 10, 100), airsim_tau = val(&k, 100, 500);
        for (int a = 0; a < 3; a++) {
            t->gm_tau[a] = gm_tau;
            t->chrono_tau_drift[a] = tau_drift;
            t->airsim_tau[a] = airsim_tau;
        }
        t->bi_tau_min = val(&k, 0.01, 0.1);
        t->bi_tau_max = val(&k, 500, 2000);
        t->bi_terms = 5;
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                t->cross_axis[r][c] = r == c ? 1.0 : val(&k, -1e-3, 1e-3);
                if (i == SENSIM_GYRO)
                    t->g_sensitivity[r][c] = val(&k, -1e-4, 1e-4);
            }
    }
    p.mag_dipole = 0;
    for (int a = 0; a < 3; a++) {
        p.mag_field[a] = val(&k, -5e-5, 5e-5);
        p.hard_iron[a] = val(&k, -1e-6, 1e-6);
        for (int c = 0; c < 3; c++)
            p.soft_iron[a][c] = (a == c) + val(&k, -0.01, 0.01);
    }
    char *text;
    sensim_rig *rig = round_trip(names[_i], val(&k, 50, 1000), w_imu, &p, &text);
    sensim_imu_params q = sensim_imu_default_params();
    ck_assert_msg(sensim_imu_params_from_yaml(rig->sensors[0].node, &q) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_msg(!memcmp(&p, &q, sizeof p), "imu parameters differ after a round trip:\n%s", text);
    /* Only the blocks given come back; a default triax writes no key. */
    sensim_rig_free(rig);
    free(text);
    sensim_imu_params e = sensim_imu_default_params();
    e.present[SENSIM_ACCEL] = 1;
    rig = round_trip(names[_i], 100, w_imu, &e, &text);
    q = sensim_imu_default_params();
    ck_assert(sensim_imu_params_from_yaml(rig->sensors[0].node, &q) == SENSIM_OK);
    ck_assert(!memcmp(&e, &q, sizeof e));
    ck_assert_msg(strstr(text, "accel: {}") != NULL, "%s", text);
    sensim_rig_free(rig);
    free(text);
}
END_TEST

START_TEST(gnss_round_trip)
{
    unsigned k = (unsigned)_i * 89;
    sensim_gnss_params p = sensim_gnss_default_params();
    p.origin_lla[0] = val(&k, -80, 80), p.origin_lla[1] = val(&k, -180, 180), p.origin_lla[2] = val(&k, -50, 900);
    p.gauss_on = p.rw_on = p.gm_on = p.hdop_on = p.fix_noise_on = p.rtk_on = 1;
    p.rw_sigma = val(&k, 0.001, 0.1);
    p.rw_model_rate_hz = val(&k, 50, 200);
    p.rw_max_velocity = val(&k, 0.01, 0.1);
    p.rw_max_acceleration = val(&k, 0.001, 0.01);
    p.rw_max_error = val(&k, 0.5, 2);
    p.eph_initial = val(&k, 50, 150), p.eph_final = val(&k, 0.05, 0.5), p.eph_tau = val(&k, 0.5, 2);
    p.epv_initial = val(&k, 50, 150), p.epv_final = val(&k, 0.05, 0.5), p.epv_tau = val(&k, 0.5, 2);
    p.fix_3d_max = val(&k, 2, 3), p.fix_2d_max = val(&k, 3, 5);
    p.cov_model = SENSIM_GNSS_COV_SCALED;
    p.cov_epe = val(&k, 0.01, 5), p.cov_scale = val(&k, 0.01, 0.05);
    for (int a = 0; a < 3; a++) {
        p.gauss_sigma[a] = val(&k, 0.1, 3);
        p.gm_sigma[a] = val(&k, 0.1, 3);
        p.gm_tau[a] = val(&k, 10, 300);
        p.vel_sigma[a] = val(&k, 0.01, 0.2);
        p.multipath_sigma[a] = val(&k, 0.5, 5);
        for (int f = 0; f < SENSIM_GNSS_FIX_TYPES; f++)
            if (f != 1) /* no fix type 1 */
                p.fix_sigma[f][a] = val(&k, 0.01, 10);
    }
    p.n_outage_windows = 3;
    for (size_t i = 0; i < p.n_outage_windows; i++) {
        p.outage_windows[i][0] = val(&k, 10 * i, 10 * i + 4);
        p.outage_windows[i][1] = p.outage_windows[i][0] + val(&k, 0.1, 5);
    }
    p.outage_rate = val(&k, 1e-3, 1e-2), p.outage_mean_duration = val(&k, 1, 30);
    p.outlier_probability = val(&k, 1e-4, 1e-2), p.outlier_magnitude = val(&k, 5, 50);
    p.rtk_mean_fixed = val(&k, 30, 600), p.rtk_mean_float = val(&k, 5, 60);
    p.multipath_rate = val(&k, 1e-3, 1e-1), p.multipath_mean_duration = val(&k, 1, 20);
    char *text;
    sensim_rig *rig = round_trip(names[_i], val(&k, 1, 20), w_gnss, &p, &text);
    sensim_gnss_params q = sensim_gnss_default_params();
    ck_assert_msg(sensim_gnss_params_from_yaml(rig->sensors[0].node, &q) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_msg(!memcmp(&p, &q, sizeof p), "gnss parameters differ after a round trip:\n%s", text);
    sensim_rig_free(rig);
    free(text);
    /* One position model is a mapping, and vdop equal to hdop is left out. */
    sensim_gnss_params o = sensim_gnss_default_params();
    o.gm_on = o.hdop_on = 1;
    o.gm_sigma[0] = o.gm_sigma[1] = o.gm_sigma[2] = 0.5;
    rig = round_trip(names[_i], 5, w_gnss, &o, &text);
    q = sensim_gnss_default_params();
    ck_assert(sensim_gnss_params_from_yaml(rig->sensors[0].node, &q) == SENSIM_OK);
    ck_assert(!memcmp(&o, &q, sizeof o));
    ck_assert_ptr_null(strstr(text, "vdop"));
    sensim_rig_free(rig);
    free(text);
}
END_TEST

START_TEST(odometer_encoder_round_trip)
{
    unsigned k = (unsigned)_i * 83;
    sensim_odometer_params p = sensim_odometer_default_params();
    p.wheel_radius = val(&k, 0.05, 0.5);
    p.pulses_per_rev = 1024;
    p.scale_error = val(&k, -0.01, 0.01);
    p.slip = val(&k, 0, 0.1);
    p.noise_sigma = val(&k, 1e-4, 1e-2);
    char *text;
    sensim_rig *rig = round_trip(names[_i], val(&k, 10, 100), w_odo, &p, &text);
    sensim_odometer_params q = sensim_odometer_default_params();
    ck_assert_msg(sensim_odometer_params_from_yaml(rig->sensors[0].node, &q) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_msg(!memcmp(&p, &q, sizeof p), "odometer parameters differ after a round trip:\n%s", text);
    sensim_rig_free(rig);
    free(text);

    static const char *const sources[] = {"wheel", "heading", "distance", NULL};
    for (int i = 0; i < 4; i++) {
        sensim_encoder_params e = sensim_encoder_default_params();
        const char *src = sources[i];
        if (src && !strcmp(src, "distance"))
            e.lower = -INFINITY, e.upper = INFINITY;
        else
            e.lower = val(&k, -4, -3), e.upper = val(&k, 3, 4);
        e.mode = i == 1 ? SENSIM_ENCODER_ABSOLUTE : SENSIM_ENCODER_INCREMENTAL;
        e.resolution = val(&k, 1e-4, 1e-3);
        e.noise_sigma = val(&k, 1e-5, 1e-4);
        e.scale = val(&k, 0.9, 1.1);
        e.counter_bits = i == 1 ? 0 : 16;
        /* The writer takes the encoder's parameters and the rig's source
         * and wheel. */
        const double radius = val(&k, 0.2, 0.4);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        sensim_ywriter *w = sensim_ywriter_create(f);
        sensim_rig_write_yaml_begin(w, 1, NULL);
        sensim_sensor s;
        sensim_sensor_init(&s, names[_i], 100);
        sensim_encoder_write_yaml(w, &s, &e, src, radius);
        ck_assert_msg(sensim_ywriter_close(w) == SENSIM_OK, "%s", sensim_last_error());
        fclose(f);
        rig = sensim_rig_load_string(buf, "enc.yaml");
        ck_assert_msg(rig != NULL, "%s\n%s", sensim_last_error(), buf);
        ck_assert_str_eq(rig->sensors[0].name, names[_i]);
        sensim_encoder_params r = sensim_encoder_default_params();
        ck_assert(sensim_encoder_params_from_yaml(rig->sensors[0].node, &r) == SENSIM_OK);
        ck_assert_msg(!memcmp(&e, &r, sizeof e), "encoder parameters differ after a round trip:\n%s", buf);
        double rr = 0;
        ck_assert(sensim_ynode_get_double(rig->sensors[0].node, "wheel_radius", 1, &rr) == SENSIM_OK);
        ck_assert(rr == radius);
        sensim_rig_free(rig);
        free(buf);
    }
}
END_TEST

typedef struct {
    sensim_camera_params p;
    sensim_lens lens;
} cam_arg;

static void w_cam(sensim_ywriter *w, const sensim_sensor *s, const void *a)
{
    const cam_arg *c = a;
    sensim_camera_write_yaml(w, s, &c->p, &c->lens);
}

START_TEST(camera_round_trip)
{
    unsigned k = (unsigned)_i * 79;
    for (int model = SENSIM_CAMERA_NOISE_NONE; model <= SENSIM_CAMERA_NOISE_EMVA; model++) {
        cam_arg c = {sensim_camera_default_params(), {.model = SENSIM_LENS_FOV, .hfov = val(&k, 1.0, 2.0)}};
        c.p.model = (sensim_camera_noise)model;
        c.p.variance_slope = val(&k, 1e-4, 1e-3);
        c.p.variance_intercept = val(&k, 1e-6, 1e-5);
        c.p.photons_full_scale = val(&k, 1e4, 5e4);
        c.p.quantum_efficiency = val(&k, 0.3, 0.9);
        c.p.exposure_time = val(&k, 1e-3, 2e-2);
        c.p.dark_current = val(&k, 10, 100);
        c.p.read_noise = val(&k, 1, 10);
        c.p.gain = val(&k, 0.1, 1);
        c.p.black_level = val(&k, 0, 64);
        c.p.full_well = val(&k, 8000, 20000);
        c.p.adc_bits = 12;
        c.p.prnu = val(&k, 0, 0.02);
        c.p.dsnu = val(&k, 0, 5);
        c.p.hot_pixel_fraction = val(&k, 0, 1e-3);
        c.p.hot_pixel_dark_current = val(&k, 100, 1000);
        c.p.row_offset_sigma = val(&k, 0, 2);
        c.p.column_offset_sigma = val(&k, 0, 2);
        c.p.poisson_exact_below = val(&k, 100, 2000);
        if (model == SENSIM_CAMERA_NOISE_NONE)
            c.lens.model = SENSIM_LENS_PINHOLE;
        /* The calibrated lenses: every lens model over the loop. */
        const int lm = (model + _i) % 4;
        if (lm >= 2) {
            c.lens.model = lm == 2 ? SENSIM_LENS_RADTAN : SENSIM_LENS_KB;
            c.lens.hfov = 0;
            c.lens.fx = val(&k, 200, 900);
            c.lens.fy = val(&k, 200, 900);
            c.lens.cx = val(&k, 300, 340);
            c.lens.cy = val(&k, 220, 260);
            for (int i = 0; i < (lm == 2 ? 6 : 4); i++)
                c.lens.k[i] = val(&k, -0.3, 0.3);
            if (lm == 2) {
                c.lens.p1 = val(&k, -1e-3, 1e-3);
                c.lens.p2 = val(&k, -1e-3, 1e-3);
            }
        }
        char *text;
        sensim_rig *rig = round_trip(names[_i], 0, w_cam, &c, &text);
        cam_arg r = {sensim_camera_default_params(), {.model = SENSIM_LENS_PINHOLE}};
        ck_assert_msg(sensim_camera_params_from_yaml(rig->sensors[0].node, &r.p, &r.lens) == SENSIM_OK, "%s",
                      sensim_last_error());
        ck_assert_msg(!memcmp(&c.p, &r.p, sizeof c.p), "camera parameters differ after a round trip:\n%s", text);
        ck_assert(r.lens.model == c.lens.model && r.lens.hfov == c.lens.hfov);
        ck_assert_msg(r.lens.fx == c.lens.fx && r.lens.fy == c.lens.fy && r.lens.cx == c.lens.cx &&
                          r.lens.cy == c.lens.cy && !memcmp(r.lens.k, c.lens.k, sizeof c.lens.k) &&
                          r.lens.p1 == c.lens.p1 && r.lens.p2 == c.lens.p2,
                      "lens differs after a round trip:\n%s", text);
        int fov = -1;
        ck_assert_ptr_nonnull(sensim_camera_sensor_params(&rig->sensors[0], &fov));
        ck_assert_int_eq(fov, c.lens.model != SENSIM_LENS_PINHOLE);
        sensim_rig_free(rig);
        free(text);
    }
}
END_TEST

START_TEST(lidar_round_trip)
{
    unsigned k = (unsigned)_i * 73;
    sensim_lidar_params p = sensim_lidar_default_params();
    p.range_sigma_base = val(&k, 0.005, 0.05);
    p.range_sigma_slope = val(&k, 1e-4, 1e-3);
    p.range_bias = val(&k, -0.01, 0.01);
    p.azimuth_sigma = val(&k, 1e-4, 1e-3);
    p.elevation_sigma = val(&k, 1e-4, 1e-3);
    p.intensity_sigma = val(&k, 0.01, 0.1);
    p.range_resolution = val(&k, 1e-3, 1e-2);
    p.dropoff_general_rate = val(&k, 0, 0.1);
    p.dropoff_intensity_limit = val(&k, 0.5, 1);
    p.dropoff_zero_intensity = val(&k, 0, 0.5);
    p.min_intensity = val(&k, -1, 0.1);
    p.min_range = val(&k, 0.1, 1);
    p.max_range = val(&k, 50, 200);
    char *text;
    sensim_rig *rig = round_trip(names[_i], 0, w_lidar, &p, &text);
    sensim_lidar_params q = sensim_lidar_default_params();
    ck_assert_msg(sensim_lidar_params_from_yaml(rig->sensors[0].node, &q) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_msg(!memcmp(&p, &q, sizeof p), "lidar parameters differ after a round trip:\n%s", text);
    ck_assert(!memcmp(sensim_lidar_sensor_params(&rig->sensors[0]), &p, sizeof p));
    sensim_rig_free(rig);
    free(text);
}
END_TEST

/* The writer refuses what a rig cannot read back: a non-finite number, and
 * an end with nothing open; the error is sticky and close reports it. */
START_TEST(writer_errors)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sensim_ywriter *w = sensim_ywriter_create(f);
    sensim_ywriter_key(w, "x");
    sensim_ywriter_number(w, INFINITY);
    sensim_ywriter_key(w, "y");
    sensim_ywriter_number(w, 1.0);
    ck_assert_int_eq(sensim_ywriter_close(w), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "not a finite number"));
    fclose(f);
    free(buf);
    f = open_memstream(&buf, &len);
    w = sensim_ywriter_create(f);
    sensim_ywriter_map_end(w);
    sensim_ywriter_map_end(w);
    ck_assert_int_eq(sensim_ywriter_close(w), SENSIM_EINVAL);
    fclose(f);
    free(buf);
    ck_assert_int_eq(sensim_ywriter_close(NULL), SENSIM_OK);
}
END_TEST

/* Names the rig accepts and refuses now that writers quote them. */
START_TEST(names_accepted_and_refused)
{
    tu_rig_rejects("sensors:\n  - {name: \"a/b\", type: lidar}\n", "bad.yaml:2", "'a/b'", "without '/'", NULL);
    tu_rig_rejects("sensors:\n  - {name: \" lead\", type: lidar}\n", "leading or trailing space", NULL);
    tu_rig_rejects("sensors:\n  - {name: \"..\", type: lidar}\n", "'..'", NULL);
    tu_rig_rejects("sensors:\n  - {name: \"tab\\there\", type: lidar}\n", "printable", NULL);
    sensim_rig *rig = sensim_rig_load_string("sensors:\n  - {name: 'imu: #1', type: lidar}\n", "ok.yaml");
    ck_assert_msg(rig != NULL, "%s", sensim_last_error());
    ck_assert_str_eq(rig->sensors[0].name, "imu: #1");
    sensim_rig_free(rig);
}
END_TEST

/* Another reader agrees: /usr/bin/python3's yaml module (PyYAML over
 * libyaml, YAML 1.1, where true, 123, 0x1F, 1:30 and null are not strings
 * unless quoted) reads every name back as the same string and every number
 * as the same double. */
START_TEST(pyyaml_reads_the_same)
{
    static const char *const more[] = {"1:30", "1_000", "2001-12-14", "+.5", ".5", "=", "<<", "yes", "Off", "0b101"};
    char *dir = tu_mkdtemp(), *path = tu_path(dir, "rig.yaml"), *want = tu_path(dir, "want.txt");
    FILE *f = fopen(path, "w"), *wf = fopen(want, "w");
    ck_assert(f && wf);
    sensim_ywriter *w = sensim_ywriter_create(f);
    sensim_rig_write_yaml_begin(w, 3, NULL);
    unsigned k = 5;
    const size_t n1 = sizeof names / sizeof names[0], n2 = sizeof more / sizeof more[0];
    for (size_t i = 0; i < n1 + n2; i++) {
        sensim_lidar_params p = sensim_lidar_default_params();
        p.range_sigma_base = val(&k, 1e-3, 1e-1);
        p.range_sigma_slope = val(&k, 1e-5, 1e-3) * 1e-300; /* tiny: 17 digits needed */
        sensim_sensor s;
        sensim_sensor_init(&s, i < n1 ? names[i] : more[i - n1], 0);
        sensim_lidar_write_yaml(w, &s, &p);
        fprintf(wf, "%s\t%a\t%a\n", s.name, p.range_sigma_base, p.range_sigma_slope);
    }
    ck_assert(sensim_ywriter_close(w) == SENSIM_OK);
    fclose(f);
    fclose(wf);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import sys, yaml\n"
             "d = yaml.load(open(sys.argv[1]), Loader=yaml.CSafeLoader)\n"
             "want = [l.rstrip('\\n').split('\\t') for l in open(sys.argv[2])]\n"
             "got = [(s['name'], s['noise']['range_sigma_base'], s['noise']['range_sigma_slope']) for s in d['sensors']]\n"
             "assert len(got) == len(want), (len(got), len(want))\n"
             "for (n, a, b), (wn, wa, wb) in zip(got, want):\n"
             "    assert type(n) is str and n == wn, (n, wn)\n"
             "    assert a == float.fromhex(wa) and b == float.fromhex(wb), (n, a, b, wa, wb)\n"
             "print('ok', len(got))\" '%s' '%s' 2>&1",
             path, want);
    FILE *py = popen(cmd, "r");
    ck_assert_ptr_nonnull(py);
    char out[4096] = "";
    size_t got = fread(out, 1, sizeof out - 1, py);
    out[got] = '\0';
    int rc = pclose(py);
    ck_assert_msg(rc == 0 && !strncmp(out, "ok ", 3), "PyYAML disagrees:\n%s", out);
    tu_rmtree(dir);
    free(dir), free(path), free(want);
}
END_TEST

/* The CLI round trip the issue names: fit imu --name 'imu: #1' writes a
 * rig that inject accepts, and the injected group carries that name. */
START_TEST(cli_fit_imu_name_to_inject)
{
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5"), *still = tu_path(dir, "still.h5"),
         *fit = tu_path(dir, "fit.yaml"), *out = tu_path(dir, "out.h5"), *kal = tu_path(dir, "kalibr.yaml");
    char *rig = tu_src("data/rigs/imu-adis16448.yaml");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "60", "--rate", "200", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("inject", rig, gt, "-o", still, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    const char *name = "imu: #1 \"q\" 'x'";
    r = tu_run("fit", "imu", still, "--sensor", "imu", "--name", name, "-o", fit, "--kalibr", kal, "--rostopic",
               "/vehicle/imu_0", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("inject", fit, gt, "-o", out, NULL);
    ck_assert_msg(r.status == 0, "inject refused the fitted rig: %s", r.err);
    tu_run_free(&r);
    r = tu_run("info", out, "--json", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "imu: #1 \\\"q\\\" 'x'") != NULL, "%s", r.out);
    tu_run_free(&r);
    /* The kalibr file reads back as YAML with the numbers of the fit. */
    sensim_yaml *k = sensim_yaml_load_file(kal);
    ck_assert_msg(k != NULL, "%s", sensim_last_error());
    const char *topic = NULL;
    ck_assert(sensim_ynode_get_string(sensim_yaml_root(k), "rostopic", 1, &topic) == SENSIM_OK);
    ck_assert_str_eq(topic, "/vehicle/imu_0");
    double rate = 0;
    ck_assert(sensim_ynode_get_double(sensim_yaml_root(k), "update_rate", 1, &rate) == SENSIM_OK);
    ck_assert(rate == 200.0);
    sensim_yaml_free(k);
    tu_rmtree(dir);
    free(dir), free(gt), free(still), free(fit), free(out), free(kal), free(rig);
}
END_TEST

Suite *suite_rigwrite(void)
{
    Suite *s = suite_create("rigwrite");
    TCase *tc = tcase_create("round_trip");
    const int n = (int)(sizeof names / sizeof names[0]);
    tcase_add_loop_test(tc, imu_round_trip, 0, n);
    tcase_add_loop_test(tc, gnss_round_trip, 0, n);
    tcase_add_loop_test(tc, odometer_encoder_round_trip, 0, n);
    tcase_add_loop_test(tc, camera_round_trip, 0, n);
    tcase_add_loop_test(tc, lidar_round_trip, 0, n);
    tcase_add_test(tc, writer_errors);
    tcase_add_test(tc, pyyaml_reads_the_same);
    tcase_add_test(tc, names_accepted_and_refused);
    suite_add_tcase(s, tc);
    TCase *cli = tcase_create("cli");
    tcase_set_timeout(cli, 120);
    tcase_add_test(cli, cli_fit_imu_name_to_inject);
    suite_add_tcase(s, cli);
    return s;
}
