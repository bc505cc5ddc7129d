/* Units: datasheet figures converted by hand (MODELS.md "Datasheet units"),
 * dimension checks, error messages and the inverse conversion. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sensim/units.h"
#include "testutil.h"

#define PI 3.14159265358979323846
#define G0 9.80665

/* The conversions are a handful of exact multiplications, so 1e-12 relative
 * leaves room only for rounding. */
#define assert_rel(val, expect)                                                                             \
    ck_assert_msg(fabs((val) - (expect)) <= 1e-12 * fabs(expect), "%s = %.17g, expected %.17g", #val, (val), \
                  (expect))

static double conv(const char *text, sensim_dim dim)
{
    double v = NAN;
    sensim_status st = sensim_units_convert(text, dim, &v);
    ck_assert_msg(st == SENSIM_OK, "'%s': %s", text, sensim_last_error());
    return v;
}

static void assert_msg_contains(const char *needle)
{
    ck_assert_msg(strstr(sensim_last_error(), needle) != NULL, "message '%s' lacks '%s'", sensim_last_error(),
                  needle);
}

START_TEST(adis16448_figures)
{
    /* ARW 0.66 deg/sqrt(h): x pi/180 (deg -> rad), / 60 (sqrt(h) = 60 sqrt(s)). */
    assert_rel(conv("0.66 deg/sqrt(h)", SENSIM_DIM_ANGULAR_RATE_DENSITY), 0.66 * PI / 180 / 60);
    /* Noise density 0.0135 deg/s/sqrt(Hz): same dimension as ARW, x pi/180. */
    assert_rel(conv("0.0135 deg/s/sqrt(Hz)", SENSIM_DIM_ANGULAR_RATE_DENSITY), 0.0135 * PI / 180);
    /* VRW 0.11 m/s/sqrt(h) = 0.11/60 m/s^2/sqrt(Hz). */
    assert_rel(conv("0.11 m/s/sqrt(h)", SENSIM_DIM_ACCEL_DENSITY), 0.11 / 60);
    /* Accel noise density 0.23 mg/sqrt(Hz) = 0.23e-3 * 9.80665 m/s^2/sqrt(Hz). */
    assert_rel(conv("0.23 mg/sqrt(Hz)", SENSIM_DIM_ACCEL_DENSITY), 0.23e-3 * G0);
}
END_TEST

START_TEST(mpu6000_airsim_defaults)
{
    assert_rel(conv("0.30 deg/sqrt(h)", SENSIM_DIM_ANGULAR_RATE_DENSITY), 0.30 * PI / 180 / 60);
    assert_rel(conv("4.6 deg/h", SENSIM_DIM_ANGULAR_RATE), 4.6 * PI / 180 / 3600);
    assert_rel(conv("0.24 mg/sqrt(Hz)", SENSIM_DIM_ACCEL_DENSITY), 0.24e-3 * G0);
    assert_rel(conv("36 ug", SENSIM_DIM_ACCEL), 36e-6 * G0);
}
END_TEST

START_TEST(other_figures)
{
    /* Rate random walk deg/h/sqrt(h) -> rad/s^(3/2): pi/180 / 3600 / 60. */
    assert_rel(conv("2.5 deg/h/sqrt(h)", SENSIM_DIM_ANGULAR_RATE_RW), 2.5 * PI / 180 / 3600 / 60);
    assert_rel(conv("50 uT", SENSIM_DIM_MAGNETIC), 50e-6);
    assert_rel(conv("200 ppm", SENSIM_DIM_NONE), 200e-6);
    assert_rel(conv("0.5 %", SENSIM_DIM_NONE), 0.005);
    assert_rel(conv("1.5e-3 rad/s^2/sqrt(Hz)", SENSIM_DIM_ANGULAR_RATE_RW), 1.5e-3);
    assert_rel(conv("3.0e-3 m/s^3/sqrt(Hz)", SENSIM_DIM_ACCEL_RW), 3.0e-3);
    assert_rel(conv("1000 deg/s", SENSIM_DIM_ANGULAR_RATE), 1000 * PI / 180);
    assert_rel(conv("18 g", SENSIM_DIM_ACCEL), 18 * G0);
    assert_rel(conv("2 mG", SENSIM_DIM_MAGNETIC), 2e-7);
    assert_rel(conv("1 kHz", SENSIM_DIM_FREQUENCY), 1000.0);
    assert_rel(conv("30 arcsec", SENSIM_DIM_ANGLE), 30 * PI / 180 / 3600);
    assert_rel(conv("2 min", SENSIM_DIM_TIME), 120.0);
    assert_rel(conv("12 nT/sqrt(Hz)", SENSIM_DIM_MAGNETIC_DENSITY), 12e-9);
}
END_TEST

START_TEST(syntax_variants)
{
    /* Space or nothing between number and unit; '*', '^', '^-1', parentheses. */
    assert_rel(conv("5cm", SENSIM_DIM_LENGTH), 0.05);
    assert_rel(conv("  5 cm  ", SENSIM_DIM_LENGTH), 0.05);
    assert_rel(conv("9.81 m*s^-2", SENSIM_DIM_ACCEL), 9.81);
    assert_rel(conv("9.81 m*s^(-2)", SENSIM_DIM_ACCEL), 9.81);
    assert_rel(conv("3 1/s", SENSIM_DIM_FREQUENCY), 3.0);
    assert_rel(conv("3 s^-1", SENSIM_DIM_FREQUENCY), 3.0);
    assert_rel(conv("2 (km/h)", SENSIM_DIM_VELOCITY), 2000.0 / 3600);
    assert_rel(conv("4 (mm/s)^2/(m/s^2)", SENSIM_DIM_LENGTH), 4e-6);
    assert_rel(conv("0.23 mg*Hz^(-1/2)", SENSIM_DIM_ACCEL_DENSITY), 0.23e-3 * G0);
    assert_rel(conv("0.66 deg / sqrt( h )", SENSIM_DIM_ANGULAR_RATE_DENSITY), 0.66 * PI / 180 / 60);
    assert_rel(conv("-1.25e+2 mrad", SENSIM_DIM_ANGLE), -0.125);
    assert_rel(conv("+.5 \xc2\xb5T", SENSIM_DIM_MAGNETIC), 0.5e-6);
    assert_rel(conv("10 \xc2\xb0/s", SENSIM_DIM_ANGULAR_RATE), 10 * PI / 180);

    /* A plain number is SI and matches any dimension. */
    double v;
    sensim_dim d;
    int has_unit = -1;
    ck_assert_int_eq(sensim_units_parse("400", &v, &d, &has_unit), SENSIM_OK);
    ck_assert_int_eq(has_unit, 0);
    ck_assert(sensim_dim_equal(d, SENSIM_DIM_NONE));
    assert_rel(v, 400.0);
    assert_rel(conv("1.6968e-4", SENSIM_DIM_ANGULAR_RATE_DENSITY), 1.6968e-4);
    ck_assert_int_eq(sensim_units_parse("0.66 deg/sqrt(h)", &v, &d, &has_unit), SENSIM_OK);
    ck_assert_int_eq(has_unit, 1);
    ck_assert(sensim_dim_equal(d, SENSIM_DIM_ANGULAR_RATE_DENSITY));
    ck_assert_int_eq(d.rad2, 2);
    ck_assert_int_eq(d.s2, -1);
}
END_TEST

START_TEST(dim_format_round_trip)
{
    char buf[64];
    ck_assert_str_eq(sensim_dim_format(SENSIM_DIM_ANGULAR_RATE_DENSITY, buf, sizeof buf), "rad/s^(1/2)");
    ck_assert_str_eq(sensim_dim_format(SENSIM_DIM_ACCEL, buf, sizeof buf), "m/s^2");
    ck_assert_str_eq(sensim_dim_format(SENSIM_DIM_ACCEL_RW, buf, sizeof buf), "m/s^(5/2)");
    ck_assert_str_eq(sensim_dim_format(SENSIM_DIM_NONE, buf, sizeof buf), "1");
    ck_assert_str_eq(sensim_dim_format(SENSIM_DIM_FREQUENCY, buf, sizeof buf), "1/s");
    ck_assert_str_eq(sensim_dim_format(SENSIM_DIM_MAGNETIC_DENSITY, buf, sizeof buf), "T*s^(1/2)");
    /* Whatever sensim_dim_format writes reads back as a unit of that dimension. */
    const sensim_dim *all[] = {&SENSIM_DIM_NONE, &SENSIM_DIM_LENGTH, &SENSIM_DIM_TIME, &SENSIM_DIM_FREQUENCY,
                               &SENSIM_DIM_ANGLE, &SENSIM_DIM_ANGULAR_RATE, &SENSIM_DIM_ANGULAR_RATE_DENSITY,
                               &SENSIM_DIM_ANGULAR_RATE_RW, &SENSIM_DIM_ANGULAR_RATE_RAMP, &SENSIM_DIM_ACCEL,
                               &SENSIM_DIM_ACCEL_DENSITY, &SENSIM_DIM_ACCEL_RW, &SENSIM_DIM_ACCEL_RAMP,
                               &SENSIM_DIM_VELOCITY, &SENSIM_DIM_MAGNETIC, &SENSIM_DIM_MAGNETIC_DENSITY};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        char text[80];
        snprintf(text, sizeof text, "2.5 %s", sensim_dim_format(*all[i], buf, sizeof buf));
        assert_rel(conv(text, *all[i]), 2.5);
    }
    /* A short buffer is truncated, not overrun. */
    char small[4];
    sensim_dim_format(SENSIM_DIM_ACCEL_RW, small, sizeof small);
    ck_assert_str_eq(small, "m/s");
}
END_TEST

START_TEST(from_si_round_trips)
{
    static const struct {
        const char *text, *unit;
        double value;
    } cases[] = {
        {"0.66 deg/sqrt(h)", "deg/sqrt(h)", 0.66},   {"0.0135 deg/s/sqrt(Hz)", "deg/s/sqrt(Hz)", 0.0135},
        {"0.11 m/s/sqrt(h)", "m/s/sqrt(h)", 0.11},   {"0.23 mg/sqrt(Hz)", "mg/sqrt(Hz)", 0.23},
        {"4.6 deg/h", "deg/h", 4.6},                 {"36 ug", "ug", 36.0},
        {"2.5 deg/h/sqrt(h)", "deg/h/sqrt(h)", 2.5}, {"50 uT", "uT", 50.0},
        {"200 ppm", "ppm", 200.0},                   {"0.5 %", "%", 0.5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double si, back;
        sensim_dim d, du;
        ck_assert_int_eq(sensim_units_parse(cases[i].text, &si, &d, NULL), SENSIM_OK);
        ck_assert_int_eq(sensim_units_from_si(si, cases[i].unit, &back), SENSIM_OK);
        assert_rel(back, cases[i].value);
        ck_assert_int_eq(sensim_units_from_si_dim(si, d, cases[i].unit, &back), SENSIM_OK);
        assert_rel(back, cases[i].value);
        ck_assert_int_eq(sensim_units_unit(cases[i].unit, NULL, &du), SENSIM_OK);
        ck_assert(sensim_dim_equal(d, du));
    }
    /* Across units of one dimension: ARW given in deg/sqrt(h), shown in deg/s/sqrt(Hz). */
    double v;
    ck_assert_int_eq(sensim_units_from_si(0.66 * PI / 180 / 60, "deg/s/sqrt(Hz)", &v), SENSIM_OK);
    assert_rel(v, 0.011);
    ck_assert_int_eq(sensim_units_from_si_dim(1.0, SENSIM_DIM_ANGULAR_RATE, "mg", &v), SENSIM_EINVAL);
    assert_msg_contains("unit 'mg' is m/s^2");
    assert_msg_contains("expected rad/s");
    ck_assert_int_eq(sensim_units_from_si(1.0, "furlong", &v), SENSIM_EFORMAT);
    assert_msg_contains("unknown unit 'furlong'");
}
END_TEST

START_TEST(explain_lists_units)
{
    char buf[128];
    double s;
    ck_assert_int_eq(sensim_units_explain("deg/h/sqrt(h)", &s, NULL, buf, sizeof buf), SENSIM_OK);
    ck_assert_str_eq(buf, "deg = pi/180 rad; h = 3600 s");
    assert_rel(s, PI / 180 / 3600 / 60);
    ck_assert_int_eq(sensim_units_explain("rad/s", &s, NULL, buf, sizeof buf), SENSIM_OK);
    ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(datasheet_spellings)
{
    /* The spellings datasheets and people use (issue 13 item 8), each
     * against its value from the definitions: deg = pi/180 rad, h = 3600 s,
     * g0 = 9.80665 m/s^2. */
    static const struct {
        const char *text;
        double si;
        sensim_dim dim;
    } ok[] = {
        {"10 dps", 10 * PI / 180, {0, -2, 2, 0}},
        {"10 deg/s", 10 * PI / 180, {0, -2, 2, 0}},
        {"10 \xc2\xb0/s", 10 * PI / 180, {0, -2, 2, 0}},
        {"10 degrees/s", 10 * PI / 180, {0, -2, 2, 0}},
        {"3 deg/hr", 3 * PI / 180 / 3600, {0, -2, 2, 0}},
        {"3 dph", 3 * PI / 180 / 3600, {0, -2, 2, 0}},
        {"3 \xc2\xb0/h", 3 * PI / 180 / 3600, {0, -2, 2, 0}},
        {"0.01 deg/s/\xe2\x88\x9aHz", 0.01 * PI / 180, {0, -1, 2, 0}},
        {"0.01 deg/s/rtHz", 0.01 * PI / 180, {0, -1, 2, 0}},
        {"0.01 deg/s/sqrt(Hz)", 0.01 * PI / 180, {0, -1, 2, 0}},
        {"0.01 dps/\xe2\x88\x9a(Hz)", 0.01 * PI / 180, {0, -1, 2, 0}},
        {"0.66 deg/\xe2\x88\x9ah", 0.66 * PI / 180 / 60, {0, -1, 2, 0}},
        {"0.66 deg/rthr", 0.66 * PI / 180 / 60, {0, -1, 2, 0}},
        {"0.66 \xc2\xb0/\xe2\x88\x9ahr", 0.66 * PI / 180 / 60, {0, -1, 2, 0}},
        {"9.81 m/s2", 9.81, {2, -4, 0, 0}},
        {"9.81 m/s^2", 9.81, {2, -4, 0, 0}},
        {"40 \xce\xbcg", 40e-6 * 9.80665, {2, -4, 0, 0}},
        {"40 \xc2\xb5g", 40e-6 * 9.80665, {2, -4, 0, 0}},
        {"40 ug", 40e-6 * 9.80665, {2, -4, 0, 0}},
        {"60 \xce\xbcg/\xe2\x88\x9aHz", 60e-6 * 9.80665, {2, -3, 0, 0}},
        {"5 min", 300, {0, 2, 0, 0}},
        {"90 sec", 90, {0, 2, 0, 0}},
        {"2 hr", 7200, {0, 2, 0, 0}},
        {"50 \xce\xbcT", 50e-6, {0, 0, 0, 2}},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        double v = 0;
        sensim_dim d;
        int has = 0;
        ck_assert_msg(sensim_units_parse(ok[i].text, &v, &d, &has) == SENSIM_OK, "%s: %s", ok[i].text,
                      sensim_last_error());
        ck_assert_msg(has && sensim_dim_equal(d, ok[i].dim), "%s: wrong dimension", ok[i].text);
        ck_assert_msg(fabs(v - ok[i].si) <= 1e-12 * fabs(ok[i].si), "%s: %.17g, expected %.17g", ok[i].text, v,
                      ok[i].si);
    }
}
END_TEST

START_TEST(errors)
{
    double v = 123.0;
    ck_assert_int_eq(sensim_units_convert("0.66 furlong", SENSIM_DIM_ANGULAR_RATE, &v), SENSIM_EFORMAT);
    assert_msg_contains("'0.66 furlong': unknown unit 'furlong'");
    ck_assert_int_eq(sensim_units_convert("36 ug", SENSIM_DIM_ANGULAR_RATE, &v), SENSIM_EINVAL);
    assert_msg_contains("'36 ug' is m/s^2");
    assert_msg_contains("expected rad/s");
    ck_assert_int_eq(sensim_units_convert("0.66 deg/h", SENSIM_DIM_ANGULAR_RATE_DENSITY, &v), SENSIM_EINVAL);
    assert_msg_contains("'0.66 deg/h' is rad/s (angular rate), expected rad/s^(1/2)");
    ck_assert_int_eq(sensim_units_convert("0.23 mg", SENSIM_DIM_ACCEL_DENSITY, &v), SENSIM_EINVAL);
    assert_msg_contains("expected m/s^(3/2)");
    ck_assert(v == 123.0); /* untouched on failure */

    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"", "empty value"},
        {"   ", "empty value"},
        {"abc", "'abc': expected a number"},
        {"nan", "not a finite number"},
        {"NaN rad", "not a finite number"},
        {"inf", "not a finite number"},
        {"-inf deg", "not a finite number"},
        {".nan", "not a finite number"},
        {"1e999", "out of range"},
        {"1e300 km^9", "out of range"},
        {"5 m/", "expected a unit at 'end'"},
        {"5 (m", "expected ')'"},
        {"5 m)", "unexpected ')'"},
        {"5 m^x", "expected an integer power"},
        {"5 m^(1/3)", "only integer and half powers"},
        {"5 sqrt(sqrt(m))", "quarter power"},
        {"5 sqrt m", "expected '(' after sqrt"},
        {"5 m 3", "unexpected '3'"},
        {"0x10", "unknown unit 'x'"},
        {"5 mm%", "unexpected '%'"},
        {"5 m^999", "power too large"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sensim_dim d;
        int hu;
        ck_assert_msg(sensim_units_parse(bad[i].text, &v, &d, &hu) == SENSIM_EFORMAT, "'%s' accepted", bad[i].text);
        assert_msg_contains(bad[i].msg);
    }
    ck_assert_int_eq(sensim_units_parse(NULL, &v, NULL, NULL), SENSIM_EINVAL);
}
END_TEST

Suite *suite_units(void)
{
    Suite *s = suite_create("units");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, adis16448_figures);
    tcase_add_test(tc, mpu6000_airsim_defaults);
    tcase_add_test(tc, other_figures);
    tcase_add_test(tc, syntax_variants);
    tcase_add_test(tc, dim_format_round_trip);
    tcase_add_test(tc, from_si_round_trips);
    tcase_add_test(tc, explain_lists_units);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, datasheet_spellings);
    suite_add_tcase(s, tc);
    return s;
}
