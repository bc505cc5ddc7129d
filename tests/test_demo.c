/* sensim demo end to end: the README's first command must work. */
#include <stdlib.h>
#include <string.h>

#include "sensim/png.h"
#include "testutil.h"

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
    ck_assert_ptr_nonnull(strstr(r.out, ". A 16-bit camera through the EMVA 1288 chain"));
    ck_assert_ptr_nonnull(strstr(r.out, ". One lidar scan and one camera frame"));
    /* The camera step's fitted gain, read noise and dark current lie inside
     * their confidence intervals (the "inside" column). */
    const char *cam = strstr(r.out, "gain K (DN/e-)");
    ck_assert_ptr_nonnull(cam);
    ck_assert_ptr_null(strstr(cam, " no\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "camera image                             800 x 450"));
    ck_assert_ptr_nonnull(strstr(r.out, "range noise of the noisy scan            0.01"));
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
