/* sensim datasheet: hand-worked conversions for the ADIS16448 and the MPU-6000
 * (AirSim's defaults), outputs read back through the YAML loader, and the
 * failure paths (exit status, message, outputs untouched). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/datasheet.h"
#include "sensim/yaml.h"
#include "testutil.h"

#define PI 3.14159265358979323846
#define G0 9.80665

#define assert_rel(val, expect)                                                                             \
    ck_assert_msg(fabs((val) - (expect)) <= 1e-12 * fabs(expect), "%s = %.17g, expected %.17g", #val, (val), \
                  (expect))

#define assert_contains(hay, needle) \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' lacks '%s'", (hay), (needle))

static double get(const sensim_ynode *map, const char *key)
{
    double v = NAN;
    ck_assert_msg(sensim_ynode_get_double(map, key, 1, &v) == SENSIM_OK, "%s", sensim_last_error());
    return v;
}

START_TEST(adis16448_by_options)
{
    char *dir = tu_mkdtemp(), *rig = tu_path(dir, "rig.yaml"), *kal = tu_path(dir, "imu.yaml");
    tu_run_result r =
        tu_run("datasheet", "--arw", "0.66 deg/sqrt(h)", "--gyro-noise-density", "0.0135 deg/s/sqrt(Hz)",
               "--gyro-bias-instability", "14.5 deg/h", "--vrw", "0.11 m/s/sqrt(h)", "--accel-noise-density",
               "0.23 mg/sqrt(Hz)", "--accel-bias-instability", "0.25 mg", "--gyro-random-walk",
               "1.9393e-5 rad/s^2/sqrt(Hz)", "--accel-random-walk", "3.0e-3 m/s^3/sqrt(Hz)", "--gyro-range",
               "1000 deg/s", "--accel-range", "18 g", "--gyro-resolution", "0.04 deg/s", "--accel-resolution",
               "0.833 mg", "--rate", "400", "-o", rig, "--kalibr", kal, "--name", "adis", "--seed", "11", NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    /* The table shows figure, SI value, model key and the steps. */
    assert_contains(r.out, "0.66 deg/sqrt(h)");
    assert_contains(r.out, "gyro.noise_density");
    assert_contains(r.out, "1 deg/sqrt(h) = 0.0002908882087 rad/s/sqrt(Hz)   (deg = pi/180 rad; h = 3600 s)");
    assert_contains(r.out, "0.66 deg/sqrt(h) = 0.66 x 0.0002908882087 = 0.0001919862177 rad/s/sqrt(Hz)");
    /* The bias-instability row: the figure is the Allan floor, the key
     * gets B = floor / 0.664 (14.5 deg/h = 7.0298e-5 rad/s, B 1.0587e-4),
     * both labelled as the rig writes them. */
    assert_contains(r.out, "7.0298e-05 rad/s (floor)");
    assert_contains(r.out, "gyro.bias_instability = 0.00010587 (B = floor / 0.664)");
    /* ARW 0.66 deg/sqrt(h) = 1.920e-4 and 0.0135 deg/s/sqrt(Hz) = 2.356e-4
     * rad/sqrt(s) differ by 23% of the ARW; VRW 1.833e-3 and 0.23 mg/sqrt(Hz) =
     * 2.256e-3 m/s^1.5 by 23% too. */
    assert_contains(r.err, "warning: arw 0.66 deg/sqrt(h) (from --arw) = 0.000192 rad/s/sqrt(Hz) and "
                           "gyro-noise-density 0.0135 deg/s/sqrt(Hz) (from --gyro-noise-density)");
    assert_contains(r.err, "differ by 23%; using arw");
    assert_contains(r.err, "differ by 23%; using vrw");
    tu_run_free(&r);
    ck_assert_int_eq(tu_count_entries(dir), 2);

    sensim_yaml *doc = sensim_yaml_load_file(rig);
    ck_assert_msg(doc != NULL, "%s", sensim_last_error());
    const sensim_ynode *root = sensim_yaml_root(doc);
    static const char *const top[] = {"seed", "sensors", NULL};
    ck_assert_int_eq(sensim_ynode_check_keys(root, "rig", top), SENSIM_OK);
    uint64_t seed = 0;
    ck_assert_int_eq(sensim_ynode_get_uint64(root, "seed", 1, &seed), SENSIM_OK);
    ck_assert_uint_eq(seed, 11);
    const sensim_ynode *s = sensim_ynode_item(sensim_ynode_get(root, "sensors"), 0);
    static const char *const sk[] = {"name", "type", "rate_hz", "gyro", "accel", NULL};
    ck_assert_int_eq(sensim_ynode_check_keys(s, "sensor", sk), SENSIM_OK);
    const char *str = NULL;
    ck_assert_int_eq(sensim_ynode_get_string(s, "name", 1, &str), SENSIM_OK);
    ck_assert_str_eq(str, "adis");
    ck_assert_int_eq(sensim_ynode_get_string(s, "type", 1, &str), SENSIM_OK);
    ck_assert_str_eq(str, "imu");
    assert_rel(get(s, "rate_hz"), 400.0);
    const sensim_ynode *g = sensim_ynode_get(s, "gyro"), *a = sensim_ynode_get(s, "accel");
    assert_rel(get(g, "noise_density"), 0.66 * PI / 180 / 60); /* the ARW, not the density */
    assert_rel(get(g, "bias_instability"), 14.5 * PI / 180 / 3600 / 0.664); /* IEEE B = floor / 0.664 */
    assert_rel(get(g, "random_walk"), 1.9393e-5);
    assert_rel(get(g, "range"), 1000 * PI / 180);
    assert_rel(get(g, "quantization"), 0.04 * PI / 180);
    assert_rel(get(a, "noise_density"), 0.11 / 60); /* the VRW */
    assert_rel(get(a, "bias_instability"), 0.25e-3 * G0 / 0.664);
    assert_rel(get(a, "random_walk"), 3.0e-3);
    assert_rel(get(a, "range"), 18 * G0);
    assert_rel(get(a, "quantization"), 0.833e-3 * G0);
    sensim_yaml_free(doc);

    doc = sensim_yaml_load_file(kal);
    ck_assert_msg(doc != NULL, "%s", sensim_last_error());
    root = sensim_yaml_root(doc);
    static const char *const kk[] = {"accelerometer_noise_density", "accelerometer_random_walk",
                                     "gyroscope_noise_density", "gyroscope_random_walk", "rostopic",
                                     "update_rate", NULL};
    ck_assert_int_eq(sensim_ynode_check_keys(root, "kalibr imu", kk), SENSIM_OK);
    assert_rel(get(root, "gyroscope_noise_density"), 0.66 * PI / 180 / 60);
    assert_rel(get(root, "gyroscope_random_walk"), 1.9393e-5);
    assert_rel(get(root, "accelerometer_noise_density"), 0.11 / 60);
    assert_rel(get(root, "accelerometer_random_walk"), 3.0e-3);
    assert_rel(get(root, "update_rate"), 400.0);
    sensim_yaml_free(doc);

    free(rig);
    free(kal);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(mpu6000_by_preset)
{
    /* AirSim's MPU-6000 defaults (MODELS.md): ARW 0.30 deg/sqrt(h), gyro bias
     * stability 4.6 deg/h; VRW 0.24 mg/sqrt(Hz), accel bias stability 36 ug. */
    char *dir = tu_mkdtemp(), *preset = tu_path(dir, "mpu6000.yaml"), *rig = tu_path(dir, "rig.yaml");
    ck_assert_int_eq(tu_write_file(preset, "part: MPU-6000\n"
                                           "datasheet: AirSim ImuSimpleParams defaults\n"
                                           "arw: 0.30 deg/sqrt(h)\n"
                                           "gyro_bias_instability: 4.6 deg/h\n"
                                           "vrw: \"0.24 mg/sqrt(Hz)\"\n"
                                           "accel_bias_instability: 36 ug\n"
                                           "rate: 1 kHz\n"),
                     0);
    tu_run_result r = tu_run("datasheet", "--preset", preset, "--rate", "200 Hz", "-o", rig, "--json", NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_str_eq(r.err, ""); /* one figure per quantity: no warning */
    /* JSON is YAML too, so the loader reads the --json output. */
    sensim_yaml *js = sensim_yaml_load_string(r.out, strlen(r.out), "stdout");
    ck_assert_msg(js != NULL, "%s in %s", sensim_last_error(), r.out);
    const sensim_ynode *m = sensim_ynode_get(sensim_yaml_root(js), "model");
    assert_rel(get(m, "rate_hz"), 200.0); /* the option overrides the preset */
    assert_rel(get(sensim_ynode_get(m, "gyro"), "noise_density"), 0.30 * PI / 180 / 60);
    assert_rel(get(sensim_ynode_get(m, "gyro"), "bias_instability"), 4.6 * PI / 180 / 3600 / 0.664);
    assert_rel(get(sensim_ynode_get(m, "accel"), "noise_density"), 0.24e-3 * G0);
    assert_rel(get(sensim_ynode_get(m, "accel"), "bias_instability"), 36e-6 * G0 / 0.664);
    const sensim_ynode *f0 = sensim_ynode_item(sensim_ynode_get(sensim_yaml_root(js), "figures"), 0);
    const char *src = NULL;
    ck_assert_int_eq(sensim_ynode_get_string(f0, "source", 1, &src), SENSIM_OK);
    char want[600];
    snprintf(want, sizeof want, "%s:3", preset);
    ck_assert_str_eq(src, want);
    sensim_yaml_free(js);
    tu_run_free(&r);

    sensim_yaml *doc = sensim_yaml_load_file(rig);
    ck_assert_msg(doc != NULL, "%s", sensim_last_error());
    const sensim_ynode *s = sensim_ynode_item(sensim_ynode_get(sensim_yaml_root(doc), "sensors"), 0);
    assert_rel(get(s, "rate_hz"), 200.0);
    assert_rel(get(sensim_ynode_get(s, "gyro"), "noise_density"), 0.30 * PI / 180 / 60);
    assert_rel(get(sensim_ynode_get(s, "accel"), "bias_instability"), 36e-6 * G0 / 0.664);
    ck_assert_ptr_null(sensim_ynode_get(sensim_ynode_get(s, "gyro"), "random_walk"));
    ck_assert_ptr_nonnull(strstr(sensim_yaml_text(doc), "MPU-6000"));
    sensim_yaml_free(doc);

    /* Consistent ARW and density (0.81 deg/sqrt(h) = 0.0135 deg/s/sqrt(Hz)): no warning. */
    r = tu_run("datasheet", "--arw", "0.81 deg/sqrt(h)", "--gyro-noise-density", "0.0135 deg/s/sqrt(Hz)", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.err, "");
    tu_run_free(&r);

    free(preset);
    free(rig);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(bare_number_is_the_help_unit)
{
    /* A bare number means the unit --help prints beside the option (issue
     * 13 item 8): --arw 0.66 is 0.66 deg/sqrt(h) = 0.66 pi / 180 / 60
     * rad/s/sqrt(Hz), not 0.66 rad/s/sqrt(Hz); --accel-bias-instability 40
     * is 40 ug. The help shows those units. */
    char *dir = tu_mkdtemp(), *rig = tu_path(dir, "rig.yaml");
    tu_run_result r = tu_run("datasheet", "--arw", "0.66", "--accel-bias-instability", "40", "--gyro-range", "2000",
                             "--rate", "200", "-o", rig, NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tu_run_free(&r);
    sensim_yaml *doc = sensim_yaml_load_file(rig);
    ck_assert_msg(doc != NULL, "%s", sensim_last_error());
    const sensim_ynode *s = sensim_ynode_item(sensim_ynode_get(sensim_yaml_root(doc), "sensors"), 0);
    const sensim_ynode *g = sensim_ynode_get(s, "gyro"), *a = sensim_ynode_get(s, "accel");
    assert_rel(get(g, "noise_density"), 0.66 * PI / 180 / 60);
    assert_rel(get(g, "range"), 2000 * PI / 180);
    assert_rel(get(a, "bias_instability"), 40e-6 * 9.80665 / 0.664);
    sensim_yaml_free(doc);
    r = tu_run("datasheet", "--help", NULL);
    assert_contains(r.out, "--arw Q                      gyro angle random walk (deg/sqrt(h))");
    assert_contains(r.out, "--accel-bias-instability Q   accel in-run bias instability (ug)");
    assert_contains(r.out, "a bare number is in");
    tu_run_free(&r);
    tu_rmtree(dir);
    free(rig);
    free(dir);
}
END_TEST

/* Runs a failing command that names `out` as its -o and checks status,
 * message and that `out` keeps its old content with no temporaries left. */
static void expect_failure(const char *dir, const char *out, int status, const char *msg, tu_run_result r)
{
    ck_assert_msg(r.status == status, "exit %d (expected %d): %s", r.status, status, r.err);
    assert_contains(r.err, msg);
    char *text = tu_read_file(out, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, "old content\n");
    free(text);
    ck_assert_int_eq(tu_count_entries(dir), 2); /* out and the preset */
    tu_run_free(&r);
}

START_TEST(failures_leave_output_untouched)
{
    char *dir = tu_mkdtemp(), *out = tu_path(dir, "rig.yaml"), *preset = tu_path(dir, "p.yaml");
    char *kal = tu_path(dir, "kal.yaml");
    ck_assert_int_eq(tu_write_file(out, "old content\n"), 0);
    ck_assert_int_eq(tu_write_file(preset, "part: X\n"
                                           "arw: 0.66 furlong\n"),
                     0);

    /* Bad input: exit 1 with the message. */
    expect_failure(dir, out, 1, "sensim datasheet: --arw: '0.66 furlong': unknown unit 'furlong'",
                   tu_run("datasheet", "--arw", "0.66 furlong", "--rate", "400", "-o", out, NULL));
    expect_failure(dir, out, 1, "--gyro-bias-instability: '36 ug' is m/s^2 (acceleration), expected rad/s",
                   tu_run("datasheet", "--gyro-bias-instability", "36 ug", "--rate", "400", "-o", out, NULL));
    expect_failure(dir, out, 1, "--vrw: '0.11 m/s' is m/s (velocity), expected m/s^(3/2)",
                   tu_run("datasheet", "--vrw", "0.11 m/s", "--rate", "400", "-o", out, NULL));
    expect_failure(dir, out, 1, "--arw: '-0.66 deg/sqrt(h)': must be >= 0",
                   tu_run("datasheet", "--arw", "-0.66 deg/sqrt(h)", "--rate", "400", "-o", out, NULL));
    expect_failure(dir, out, 1, "--rate: '0': must be > 0", tu_run("datasheet", "--rate", "0", "-o", out, NULL));
    expect_failure(dir, out, 1, "--arw: 'nan': not a finite number",
                   tu_run("datasheet", "--arw", "nan", "--rate", "400", "-o", out, NULL));
    char want[600];
    snprintf(want, sizeof want, "%s:2: key 'arw': '0.66 furlong': unknown unit 'furlong'", preset);
    expect_failure(dir, out, 1, want, tu_run("datasheet", "--preset", preset, "--rate", "400", "-o", out, NULL));
    ck_assert_int_eq(tu_write_file(preset, "part: X\n"
                                           "arw: 0.66 deg/sqrt(h)\n"
                                           "gyro_bias: 4 deg/h\n"),
                     0);
    snprintf(want, sizeof want, "%s:3: unknown key 'gyro_bias' in datasheet preset", preset);
    expect_failure(dir, out, 1, want, tu_run("datasheet", "--preset", preset, "--rate", "400", "-o", out, NULL));
    expect_failure(dir, out, 1, "/nonexistent.yaml: cannot open",
                   tu_run("datasheet", "--preset", "/nonexistent.yaml", "-o", out, NULL));
    /* Outputs that cannot be made from the figures given. */
    expect_failure(dir, out, 1, "-o: the rig needs the sensor's rate",
                   tu_run("datasheet", "--arw", "0.66 deg/sqrt(h)", "-o", out, NULL));
    expect_failure(dir, out, 1, "--kalibr: kalibr's imu.yaml needs --accel-random-walk, --gyro-random-walk",
                   tu_run("datasheet", "--arw", "0.66 deg/sqrt(h)", "--vrw", "0.11 m/s/sqrt(h)", "--rate", "400",
                          "-o", out, "--kalibr", kal, NULL));
    expect_failure(dir, out, 2, "-o and --kalibr name the same file",
                   tu_run("datasheet", "--rate", "400", "-o", out, "--kalibr", out, NULL));

    /* Usage errors: exit 2. */
    expect_failure(dir, out, 2, "unknown option '--bogus'",
                   tu_run("datasheet", "--bogus", "1", "--arw", "0.66 deg/sqrt(h)", "-o", out, NULL));
    expect_failure(dir, out, 2, "Try 'sensim datasheet --help'",
                   tu_run("datasheet", "--arw", "0.66 deg/sqrt(h)", "-o", out, "--bogus", NULL));
    expect_failure(dir, out, 2, "option '--arw' needs a value", tu_run("datasheet", "-o", out, "--arw", NULL));
    expect_failure(dir, out, 2, "no datasheet figures given", tu_run("datasheet", "-o", out, NULL));
    expect_failure(dir, out, 2, "unexpected argument 'extra'",
                   tu_run("datasheet", "--rate", "400", "-o", out, "extra", NULL));
    expect_failure(dir, out, 2, "--seed: '-1' is not an unsigned integer",
                   tu_run("datasheet", "--rate", "400", "--seed", "-1", "-o", out, NULL));

    /* An output directory that does not exist: exit 1, nothing written. */
    char *bad = tu_path(dir, "missing/rig.yaml");
    tu_run_result r = tu_run("datasheet", "--rate", "400", "-o", bad, NULL);
    ck_assert_int_eq(r.status, 1);
    assert_contains(r.err, "missing/rig.yaml: cannot create");
    tu_run_free(&r);
    free(bad);

    free(out);
    free(kal);
    free(preset);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(shipped_presets)
{
    /* The presets in data/ load; the ADIS16448 one carries both ARW and
     * density, so it warns and uses the ARW. */
    char *adis = tu_src("data/presets/adis16448.yaml"), *mpu = tu_src("data/presets/mpu6000-airsim.yaml");
    tu_run_result r = tu_run("datasheet", "--preset", adis, NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    assert_contains(r.out, "(ADIS16448)");
    assert_contains(r.err, "adis16448.yaml:6) = 0.000192 rad/s/sqrt(Hz)");
    tu_run_free(&r);
    r = tu_run("datasheet", "--preset", mpu, "--json", NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    sensim_yaml *js = sensim_yaml_load_string(r.out, strlen(r.out), "stdout");
    ck_assert_msg(js != NULL, "%s", sensim_last_error());
    const sensim_ynode *m = sensim_ynode_get(sensim_yaml_root(js), "model");
    assert_rel(get(sensim_ynode_get(m, "accel"), "noise_density"), 0.24e-3 * G0);
    sensim_yaml_free(js);
    tu_run_free(&r);
    free(adis);
    free(mpu);
}
END_TEST

START_TEST(help)
{
    tu_run_result r = tu_run("datasheet", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    assert_contains(r.out, "usage: sensim datasheet");
    assert_contains(r.out, "--kalibr FILE");
    tu_run_free(&r);
    r = tu_run("help", "datasheet", NULL);
    ck_assert_int_eq(r.status, 0);
    assert_contains(r.out, "--gyro-bias-instability");
    tu_run_free(&r);
}
END_TEST

/* The library call behind the verb (calib/datasheet.c), by hand: ARW
 * 0.66 deg/sqrt(h) = 0.66 (pi/180) / sqrt(3600) rad/s/sqrt(Hz); a bare
 * VRW is m/s/sqrt(h), 0.11 / 60 m/s^2/sqrt(Hz); a bias-instability floor
 * of 14.5 deg/h gives B = 14.5 (pi/180) / 3600 / 0.664 rad/s; of the ARW
 * and a gyro noise density 20 % apart the ARW is used, with a warning. */
START_TEST(library_conversion)
{
    sensim_datasheet d = sensim_datasheet_default();
    ck_assert_str_eq(d.name, "imu");
    ck_assert_uint_eq(d.seed, 1);
    ck_assert_int_eq(sensim_datasheet_set(&d, SENSIM_DATASHEET_ARW, "0.66 deg/sqrt(h)", "--arw"), SENSIM_OK);
    ck_assert_int_eq(sensim_datasheet_set(&d, SENSIM_DATASHEET_VRW, "0.11", "--vrw"), SENSIM_OK);
    ck_assert_int_eq(sensim_datasheet_set(&d, SENSIM_DATASHEET_GYRO_BI, "14.5 deg/h", "--gyro-bias-instability"),
                     SENSIM_OK);
    /* 0.66 deg/sqrt(h) as deg/s/sqrt(Hz) is 0.011; 0.0132 is 20 % above. */
    ck_assert_int_eq(sensim_datasheet_set(&d, SENSIM_DATASHEET_GYRO_ND, "0.0132 deg/s/sqrt(Hz)", "x.yaml:3"),
                     SENSIM_OK);
    ck_assert_within(d.f[SENSIM_DATASHEET_ARW].si, 0.66 * M_PI / 180 / 60, 1e-15);
    ck_assert_within(d.f[SENSIM_DATASHEET_VRW].si, 0.11 / 60, 1e-15);
    ck_assert_str_eq(d.f[SENSIM_DATASHEET_VRW].unit, "m/s/sqrt(h)");
    ck_assert_str_eq(d.f[SENSIM_DATASHEET_ARW].source, "--arw");
    char warn[512] = "";
    ck_assert_int_eq(sensim_datasheet_resolve(&d, warn, sizeof warn), 4);
    ck_assert_msg(strstr(warn, "differ by 20%; using arw\n"), "%s", warn);
    const sensim_datasheet_value *nd = sensim_datasheet_model_value(&d, "gyro", "noise_density");
    ck_assert_ptr_eq(nd, &d.f[SENSIM_DATASHEET_ARW]);
    ck_assert(!d.f[SENSIM_DATASHEET_GYRO_ND].used);
    const sensim_datasheet_value *bi = sensim_datasheet_model_value(&d, "gyro", "bias_instability");
    ck_assert_ptr_nonnull(bi);
    ck_assert_within(sensim_datasheet_model_si("bias_instability", bi->si), 14.5 * M_PI / 180 / 3600 / 0.664,
                     1e-18);
    ck_assert_double_eq(sensim_datasheet_model_si("noise_density", 2.5), 2.5);
    ck_assert_ptr_null(sensim_datasheet_model_value(&d, "accel", "random_walk"));
    /* Refusals name where the figure came from. */
    ck_assert_int_eq(sensim_datasheet_set(&d, SENSIM_DATASHEET_RATE, "0 Hz", "--rate"), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "--rate: '0 Hz': must be > 0"));
    ck_assert_int_ne(sensim_datasheet_set(&d, SENSIM_DATASHEET_ARW, "3 m", "p.yaml:7: key 'arw'"), SENSIM_OK);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "p.yaml:7: key 'arw'"));
}
END_TEST

Suite *suite_datasheet(void)
{
    Suite *s = suite_create("datasheet");
    TCase *tc = tcase_create("cli");
    tcase_add_test(tc, adis16448_by_options);
    tcase_add_test(tc, mpu6000_by_preset);
    tcase_add_test(tc, failures_leave_output_untouched);
    tcase_add_test(tc, shipped_presets);
    tcase_add_test(tc, help);
    tcase_add_test(tc, bare_number_is_the_help_unit);
    tcase_add_test(tc, library_conversion);
    suite_add_tcase(s, tc);
    return s;
}
