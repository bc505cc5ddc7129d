/* sensim demo end to end: the README's first command must work. */
#include <stdlib.h>
#include <string.h>

#include "sensim/png.h"
#include "testutil.h"

/* Column col (0-based) of the numbers after label in the demo's output. */
static double demo_value(const char *out, const char *label, int col)
{
    const char *p = strstr(out, label);
    ck_assert_msg(p != NULL, "no '%s' in the demo's output", label);
    char *end = (char *)p + strlen(label);
    double v = 0;
    for (int i = 0; i <= col; i++)
        v = strtod(end, &end);
    return v;
}

/* The whole demo once: every step's summary line is present and checked
 * against the value its model promises, and the files it names exist. */
START_TEST(demo_runs_every_step)
{
    char *dir = tu_mkdtemp(), *data = tu_src("data"), *out = tu_path(dir, "demo");
    tu_run_result r = tu_run("demo", "--dir", out, "--data", data, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    /* Step headings are numbered in run order. */
    ck_assert_ptr_nonnull(strstr(r.out, "1. A ground-truth circle"));
    ck_assert_ptr_nonnull(strstr(r.out, ". The same circle seen by each bundled GNSS model"));
    ck_assert_ptr_nonnull(strstr(r.out, ". Seed 004's GNSS experiment in simulation"));
    ck_assert_ptr_nonnull(strstr(r.out, "Ch:RW ranks first"));
    ck_assert_ptr_nonnull(strstr(r.out, "Ch:Gauss ranks first"));
    ck_assert_ptr_nonnull(strstr(r.out, ". Calibration: an hour of the same IMU lying still"));
    /* The IMU fit's table: every row has a verdict, and the gyro's bias
     * instability (the term the hour is long enough for) is inside on each
     * axis (fixed seed: the output is the same on every run). */
    /* The accelerometer's N as well: its floor is high and meets N near
     * 0.5 s, so a simulated floor that is not flat down to one sample would
     * pull the fitted N low and out of its interval on every axis. */
    static const char *const rows[] = {"gyro B (rad/s)", "accel N (m/s^2/sqrt(Hz))"};
    for (int k = 0; k < 2; k++) {
        const char *row = strstr(r.out, rows[k]);
        ck_assert_ptr_nonnull(row);
        for (int line = 0; line < 3; line++) {
            const char *eol = strchr(row, '\n');
            ck_assert_ptr_nonnull(eol);
            ck_assert_msg(eol - row > 4 && !strncmp(eol - 4, " yes", 4), "%s row %d: %.*s", rows[k], line,
                          (int)(eol - row), row);
            row = eol + 1;
        }
    }
    ck_assert_ptr_nonnull(strstr(r.out, "intervals hold the rig's value"));
    ck_assert_ptr_nonnull(strstr(r.out, ". A 16-bit camera through the EMVA 1288 chain"));
    ck_assert_ptr_nonnull(strstr(r.out, ". One lidar scan and one camera frame"));
    /* The camera step's fitted gain, read noise and dark current lie inside
     * their confidence intervals (the "inside" column). */
    const char *cam = strstr(r.out, "gain K (DN/e-)");
    ck_assert_ptr_nonnull(cam);
    ck_assert_ptr_null(strstr(cam, " no\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "camera image                             800 x 450"));
    ck_assert_ptr_nonnull(strstr(r.out, "range noise of the noisy scan            0.01"));
    /* GNSS fitted back: the presets' values (read from data/) and the fits.
     * The Ch:RW sigma's interval is about +-1% on 9000 epochs, the white
     * sigma's +-3% on 4500 (5% allowed for both). */
    ck_assert_ptr_nonnull(strstr(r.out, ". GNSS noise fitted back from 15 minutes standing still"));
    ck_assert_within(demo_value(r.out, "random-walk sigma (m/s^2)", 0), 0.047, 1e-12);
    ck_assert_within(demo_value(r.out, "up Gauss-Markov sigma (m)", 0), 4.24, 1e-12);
    ck_assert_within(demo_value(r.out, "random-walk sigma (m/s^2)", 1), 0.047, 0.05 * 0.047);
    ck_assert_within(demo_value(r.out, "east white sigma (m)", 1), 0.3, 0.05 * 0.3);
    ck_assert(demo_value(r.out, "outlier probability (per epoch)", 1) > 0);
    tu_run_free(&r);
    static const char *const pngs[] = {"vlp16_00000.png", "front_00000.png"};
    char *rd = tu_path(out, "render");
    for (int i = 0; i < 2; i++) {
        char *f = tu_path(rd, pngs[i]);
        sensim_image_info info;
        void *px = NULL;
        ck_assert_msg(sensim_png_read(f, 0, &info, &px) == SENSIM_OK, "%s", sensim_last_error());
        ck_assert_uint_eq(info.width, i ? 800 : 512);
        free(px);
        free(f);
    }
    free(rd);
    free(out);
    free(data);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_demo(void)
{
    Suite *s = suite_create("demo");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, demo_runs_every_step);
    suite_add_tcase(s, tc);
    return s;
}
