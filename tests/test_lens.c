/* One lens check: the camera model (sensim_lens_check) and the renderer
 * (sensim_render_camera_create) take the same lenses. The FOV lens (seed
 * 000 eq. 2) needs tan(r1 tan w) finite up to the image corner, r1 =
 * sqrt(1 + (H/W)^2), so the largest hfov is 2 atan(pi / (2 r1)): at
 * 640x480, r1 = 1.25 and hfov < 2 atan(0.4 pi) = 1.797267 rad. Before, the
 * renderer kept a 0.1 % margin and refused hfov in [1.79677, 1.79727). */
#include <check.h>
#include <math.h>

#include "sensim/camera.h"
#include "sensim/render.h"
#include "testutil.h"

static int lens_ok(int w, int h, double hfov)
{
    sensim_lens l = {SENSIM_LENS_FOV, (size_t)w, (size_t)h, hfov};
    return sensim_lens_check(&l) == SENSIM_OK;
}

static int render_ok(int w, int h, double hfov)
{
    sensim_render_camera_params p = sensim_render_camera_default_params();
    p.width = w;
    p.height = h;
    p.hfov = hfov;
    p.lens = SENSIM_RENDER_LENS_FOV;
    sensim_render_camera *c = sensim_render_camera_create(&p);
    sensim_render_camera_destroy(c);
    return c != NULL;
}

START_TEST(fov_boundary_is_the_same)
{
    static const int sizes[][2] = {{640, 480}, {1920, 1080}, {64, 64}, {100, 300}};
    for (size_t k = 0; k < 4; k++) {
        int w = sizes[k][0], h = sizes[k][1];
        double r1 = sqrt(1.0 + ((double)h / w) * ((double)h / w)), hmax = 2 * atan(M_PI / (2 * r1));
        for (int i = -40; i <= 40; i++) {
            /* Steps of 1e-5 rad around the boundary, and the boundary +-
             * a few ulp-scaled steps. */
            double hfov = hmax + i * 1e-5;
            ck_assert_msg(lens_ok(w, h, hfov) == render_ok(w, h, hfov), "%dx%d hfov %.9f: model %d, renderer %d", w,
                          h, hfov, lens_ok(w, h, hfov), render_ok(w, h, hfov));
            ck_assert_int_eq(lens_ok(w, h, hfov), hfov < hmax);
        }
        ck_assert(lens_ok(w, h, hmax * (1 - 1e-12)) && render_ok(w, h, hmax * (1 - 1e-12)));
        ck_assert(!lens_ok(w, h, hmax * (1 + 1e-12)) && !render_ok(w, h, hmax * (1 + 1e-12)));
    }
    /* The span the two copies disagreed on at 640x480. */
    ck_assert(lens_ok(640, 480, 1.7970) && render_ok(640, 480, 1.7970));
    ck_assert(!lens_ok(640, 480, 1.7973) && !render_ok(640, 480, 1.7973));
    /* The field of view itself, any lens. */
    ck_assert(!render_ok(640, 480, 0) && !render_ok(640, 480, M_PI));
}
END_TEST

Suite *suite_lens(void)
{
    Suite *s = suite_create("lens");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, fov_boundary_is_the_same);
    suite_add_tcase(s, tc);
    return s;
}
