/* One lens check: the camera model (sensim_lens_check) and the renderer
 * (sensim_render_camera_create) take the same lenses. The FOV lens (seed
 * 000 eq. 2) needs tan(r1 tan w) finite up to the image corner, r1 =
 * sqrt(1 + (H/W)^2), so the largest hfov is 2 atan(pi / (2 r1)): at
 * 640x480, r1 = 1.25 and hfov < 2 atan(0.4 pi) = 1.797267 rad. Before, the
 * renderer kept a 0.1 % margin and refused hfov in [1.79677, 1.79727).
 * The calibrated lenses (OpenCV radtan, Kannala-Brandt; models/lens.c):
 * the forward map against the documented formulas and OpenCV's own
 * numbers, every pixel's ray against an independent inverse and back to
 * the pixel, refusals, the YAML forms, the rig's remap. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/camera.h"
#include "sensim/log.h"
#include "sensim/render.h"
#include "sensim/rng.h"
#include "sensim/yaml.h"
#include "testutil.h"

static int lens_ok(int w, int h, double hfov)
{
    sensim_lens l = {.model = SENSIM_LENS_FOV, .width = (size_t)w, .height = (size_t)h, .hfov = hfov};
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

/* ---- calibrated lenses (OpenCV radtan, Kannala-Brandt) ----
 *
 * The lenses below are of the size calibration tools report: a plumb-bob
 * webcam (5 coefficients), a rational wide-angle (8), and a Kannala-Brandt
 * fisheye like the T265's (k1..k4, 848x800, about 170 deg). */

static sensim_lens lens_plumb(void)
{
    sensim_lens l = {.model = SENSIM_LENS_RADTAN,
                     .width = 640,
                     .height = 480,
                     .fx = 601.3,
                     .fy = 598.7,
                     .cx = 319.4,
                     .cy = 241.8,
                     .k = {-0.281, 0.0912, -0.0123},
                     .p1 = 1.2e-3,
                     .p2 = -7e-4};
    return l;
}

static sensim_lens lens_rational(void)
{
    sensim_lens l = {.model = SENSIM_LENS_RADTAN,
                     .width = 1280,
                     .height = 960,
                     .fx = 512.0,
                     .fy = 511.0,
                     .cx = 650.2,
                     .cy = 470.9,
                     .k = {0.82, 0.31, 0.012, 1.13, 0.42, 0.034},
                     .p1 = -3e-4,
                     .p2 = 5e-4};
    return l;
}

static sensim_lens lens_kb(void)
{
    sensim_lens l = {.model = SENSIM_LENS_KB,
                     .width = 848,
                     .height = 800,
                     .fx = 285.72,
                     .fy = 285.93,
                     .cx = 420.12,
                     .cy = 398.71,
                     .k = {-0.00735, 0.04082, -0.03979, 0.00751}};
    return l;
}

static sensim_lens lens_by(int i) { return i == 0 ? lens_plumb() : i == 1 ? lens_rational() : lens_kb(); }

/* The published forward maps, written out as the OpenCV documentation
 * states them (calib3d; fisheye module), in long double. (X, Y, Z) -> OpenCV
 * pixel (u, v). */
static int ref_project(const sensim_lens *l, const double P[3], long double *u, long double *v)
{
    long double X = P[0], Y = P[1], Z = P[2], xpp, ypp;
    if (l->model == SENSIM_LENS_RADTAN) {
        if (Z <= 0)
            return 0;
        long double x = X / Z, y = Y / Z, r2 = x * x + y * y, r4 = r2 * r2, r6 = r4 * r2;
        long double radial =
            (1 + l->k[0] * r2 + l->k[1] * r4 + l->k[2] * r6) / (1 + l->k[3] * r2 + l->k[4] * r4 + l->k[5] * r6);
        xpp = x * radial + 2 * l->p1 * x * y + l->p2 * (r2 + 2 * x * x);
        ypp = y * radial + l->p1 * (r2 + 2 * y * y) + 2 * l->p2 * x * y;
    } else {
        long double rho = sqrtl(X * X + Y * Y), th = atan2l(rho, Z), t2 = th * th;
        long double td =
            th * (1 + l->k[0] * t2 + l->k[1] * t2 * t2 + l->k[2] * t2 * t2 * t2 + l->k[3] * t2 * t2 * t2 * t2);
        xpp = rho > 0 ? td * X / rho : 0;
        ypp = rho > 0 ? td * Y / rho : 0;
    }
    *u = l->fx * xpp + l->cx;
    *v = l->fy * ypp + l->cy;
    return 1;
}

/* An independent inverse: for radtan, OpenCV's own undistortPoints
 * iteration (x = (xd - tangential(x)) / radial(x), a fixed point; long
 * double, until it moves less than 1e-18); for KB, bisection on theta. Returns the unit
 * direction of OpenCV pixel (ucv, vcv). */
static void ref_unproject(const sensim_lens *l, double ucv, double vcv, long double d[3])
{
    long double xd = (ucv - l->cx) / l->fx, yd = (vcv - l->cy) / l->fy, x = xd, y = yd;
    if (l->model == SENSIM_LENS_RADTAN) {
        for (int it = 0; it < 100000; it++) {
            long double r2 = x * x + y * y, r4 = r2 * r2, r6 = r4 * r2;
            long double icdist =
                (1 + l->k[3] * r2 + l->k[4] * r4 + l->k[5] * r6) / (1 + l->k[0] * r2 + l->k[1] * r4 + l->k[2] * r6);
            long double dx = 2 * l->p1 * x * y + l->p2 * (r2 + 2 * x * x);
            long double dy = l->p1 * (r2 + 2 * y * y) + 2 * l->p2 * x * y;
            long double nx = (xd - dx) * icdist, ny = (yd - dy) * icdist;
            int done = fabsl(nx - x) + fabsl(ny - y) < 1e-18L;
            x = nx;
            y = ny;
            if (done)
                break;
        }
        long double n = sqrtl(x * x + y * y + 1);
        d[0] = x / n, d[1] = y / n, d[2] = 1 / n;
        return;
    }
    long double td = sqrtl(xd * xd + yd * yd), lo = 0, hi = M_PI;
    for (int it = 0; it < 200; it++) {
        long double m = 0.5L * (lo + hi), t2 = m * m;
        long double f =
            m * (1 + l->k[0] * t2 + l->k[1] * t2 * t2 + l->k[2] * t2 * t2 * t2 + l->k[3] * t2 * t2 * t2 * t2);
        if (f < td)
            lo = m;
        else
            hi = m;
    }
    long double th = 0.5L * (lo + hi), s = td > 0 ? sinl(th) / td : 0;
    d[0] = xd * s, d[1] = yd * s, d[2] = cosl(th);
}

START_TEST(calibrated_forward_matches_formula)
{
    const sensim_lens l = lens_by(_i);
    ck_assert_msg(sensim_lens_check(&l) == SENSIM_OK, "%s", sensim_last_error());
    sensim_rng r = sensim_rng_make(20, (uint32_t)_i, 0);
    double worst = 0;
    for (uint64_t n = 0; n < 20000; n++) {
        /* Directions up to 60 deg (radtan) or 85 deg (KB) off the axis. */
        double th = (l.model == SENSIM_LENS_KB ? 1.48 : 1.05) * sqrt(sensim_rng_uniform(&r, 2 * n));
        double ph = 2 * M_PI * sensim_rng_uniform(&r, 2 * n + 1), rr = 0.5 + n % 7;
        double P[3] = {rr * sin(th) * cos(ph), rr * sin(th) * sin(ph), rr * cos(th)}, u, v;
        long double ur, vr;
        ck_assert(ref_project(&l, P, &ur, &vr));
        ck_assert(sensim_lens_dir_to_pixel(&l, P, &u, &v));
        /* sensim's continuous coordinate is OpenCV's + 0.5. */
        double e = fmax(fabsl(u - 0.5 - ur), fabsl(v - 0.5 - vr));
        worst = fmax(worst, e / fmax(1.0, fabsl(ur) + fabsl(vr)));
    }
    ck_assert_msg(worst < 1e-13, "lens %d: forward map off the formula by %g (relative)", _i, worst);
    /* Behind the camera: no pixel for radtan; KB takes theta up to pi. */
    const double back[3] = {0.1, 0.2, -1};
    double u, v;
    ck_assert_int_eq(sensim_lens_dir_to_pixel(&l, back, &u, &v), l.model == SENSIM_LENS_KB);
}
END_TEST

/* Every pixel centre's direction: a unit vector within 1e-9 rad of the
 * independent inverse, and mapped back (forward formula) to the pixel
 * within 1e-9 px. */
START_TEST(calibrated_pixels_invert)
{
    const sensim_lens l = lens_by(_i);
    double worst_ang = 0, worst_px = 0, worst_norm = 0;
    int maxit = 0;
    for (size_t j = 0; j < l.height; j += (_i == 1 ? 7 : 4))
        for (size_t i = 0; i < l.width; i += (_i == 1 ? 7 : 4)) {
            double u = i + 0.5, v = j + 0.5, d[3];
            int it = sensim_lens_undistort(&l, u, v, d);
            ck_assert_msg(it >= 0, "lens %d: pixel (%zu, %zu) did not converge", _i, i, j);
            maxit = it > maxit ? it : maxit;
            double d2[3];
            sensim_lens_pixel_to_dir(&l, u, v, d2);
            ck_assert(!memcmp(d, d2, sizeof d));
            worst_norm = fmax(worst_norm, fabs(sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) - 1));
            long double ref[3], ur, vr;
            ref_unproject(&l, (double)i, (double)j, ref);
            long double cx = d[1] * ref[2] - d[2] * ref[1], cy = d[2] * ref[0] - d[0] * ref[2],
                        cz = d[0] * ref[1] - d[1] * ref[0];
            long double dot = d[0] * ref[0] + d[1] * ref[1] + d[2] * ref[2];
            worst_ang = fmax(worst_ang, (double)atan2l(sqrtl(cx * cx + cy * cy + cz * cz), dot));
            ck_assert(ref_project(&l, d, &ur, &vr));
            worst_px = fmax(worst_px, (double)fmaxl(fabsl(ur - (long double)i), fabsl(vr - (long double)j)));
        }
    ck_assert_msg(worst_ang < 1e-9, "lens %d: directions off the reference by %g rad", _i, worst_ang);
    ck_assert_msg(worst_px < 1e-9, "lens %d: directions map back off the pixel by %g px", _i, worst_px);
    ck_assert_msg(worst_norm < 1e-15, "lens %d: directions not unit (%g)", _i, worst_norm);
    ck_assert_int_le(maxit, 20);
    /* The renderer's ray is the same direction in its sensor frame (x
     * forward = optical z, y left = -optical x, z up = -optical y), to
     * rounding: the renderer inverts the lens with the code the CUDA
     * kernels share (render/gpu/sg_raygen.h: no libm, square roots for
     * hypot, its own sin and cos), within 1 ulp of libm's, so a component
     * may differ in its last bits (measured: at most 6.4e-16). */
    sensim_render_camera_params p = sensim_render_camera_default_params();
    p.width = (int)l.width;
    p.height = (int)l.height;
    p.lens = l.model == SENSIM_LENS_KB ? SENSIM_RENDER_LENS_KB : SENSIM_RENDER_LENS_RADTAN;
    p.optics = l;
    sensim_render_camera *c = sensim_render_camera_create(&p);
    ck_assert_msg(c != NULL, "%s", sensim_last_error());
    for (int k = 0; k < 100; k++) {
        double u = 7.3 * k, v = 4.1 * k, d[3];
        sensim_lens_pixel_to_dir(&l, u, v, d);
        sensim_vec3 rd = sensim_render_camera_direction(c, u, v);
        ck_assert_msg(fabs(rd.x - d[2]) <= 1e-15 && fabs(rd.y + d[0]) <= 1e-15 && fabs(rd.z + d[1]) <= 1e-15,
                      "lens %d, pixel (%g, %g): (%.17g %.17g %.17g) vs (%.17g %.17g %.17g)", _i, u, v, rd.x, rd.y,
                      rd.z, d[2], -d[0], -d[1]);
    }
    sensim_render_camera_destroy(c);
}
END_TEST

/* Lenses whose distortion folds back inside the image are refused by the
 * model and the renderer alike, naming the fold. */
START_TEST(calibrated_refusals)
{
    /* r_d = r (1 - 0.5 r^2) peaks at r = sqrt(2/3), r_d = 0.544, but the
     * corner of 640x480 at f = 300 is at r_d = 1.33. */
    sensim_lens l = {.model = SENSIM_LENS_RADTAN,
                     .width = 640,
                     .height = 480,
                     .fx = 300,
                     .fy = 300,
                     .cx = 319.5,
                     .cy = 239.5,
                     .k = {-0.5}};
    ck_assert(sensim_lens_check(&l) != SENSIM_OK);
    ck_assert_msg(strstr(sensim_last_error(), "folds back") && strstr(sensim_last_error(), "not invertible"), "%s",
                  sensim_last_error());
    /* The same lens at f = 1200: the corner is at r_d = 0.333, below the
     * peak, so it is taken. */
    l.fx = l.fy = 1200;
    ck_assert_msg(sensim_lens_check(&l) == SENSIM_OK, "%s", sensim_last_error());
    /* KB: theta_d = theta (1 - 0.1 theta^2) peaks at theta = 1.826; a
     * corner beyond theta_d = 1.217 is refused. */
    sensim_lens f = {.model = SENSIM_LENS_KB,
                     .width = 640,
                     .height = 480,
                     .fx = 150,
                     .fy = 150,
                     .cx = 319.5,
                     .cy = 239.5,
                     .k = {-0.1}};
    ck_assert(sensim_lens_check(&f) != SENSIM_OK);
    ck_assert_msg(strstr(sensim_last_error(), "theta"), "%s", sensim_last_error());
    f.fx = f.fy = 400; /* corner at theta_d = 1.0 */
    ck_assert_msg(sensim_lens_check(&f) == SENSIM_OK, "%s", sensim_last_error());
    /* Plain equidistant past theta = pi at the corners. */
    sensim_lens e = {
        .model = SENSIM_LENS_KB, .width = 640, .height = 480, .fx = 100, .fy = 100, .cx = 319.5, .cy = 239.5};
    ck_assert(sensim_lens_check(&e) != SENSIM_OK);
    ck_assert_msg(strstr(sensim_last_error(), "theta = pi"), "%s", sensim_last_error());
    /* Intrinsics and coefficients. */
    sensim_lens b = lens_plumb();
    b.fx = 0;
    ck_assert(sensim_lens_check(&b) != SENSIM_OK && strstr(sensim_last_error(), "fx"));
    b = lens_plumb();
    b.k[1] = NAN;
    ck_assert(sensim_lens_check(&b) != SENSIM_OK && strstr(sensim_last_error(), "k2"));
    b = lens_kb();
    b.p1 = 1e-3;
    ck_assert(sensim_lens_check(&b) != SENSIM_OK && strstr(sensim_last_error(), "k1..k4"));
    /* The renderer takes what the model takes. */
    sensim_render_camera_params p = sensim_render_camera_default_params();
    p.width = 640;
    p.height = 480;
    p.lens = SENSIM_RENDER_LENS_RADTAN;
    p.optics = l;
    p.optics.fx = p.optics.fy = 300;
    ck_assert(sensim_render_camera_create(&p) == NULL);
    ck_assert_msg(strstr(sensim_last_error(), "camera") && strstr(sensim_last_error(), "folds back"), "%s",
                  sensim_last_error());
}
END_TEST

/* The YAML forms: named coefficients, OpenCV's distortion list, the ROS
 * and Kalibr model names; errors name file, line and key. */
START_TEST(calibrated_yaml)
{
    static const char *const good[] = {
        "lens: {model: radtan, fx: 601.3, fy: 598.7, cx: 319.4, cy: 241.8, k1: -0.281, k2: 0.0912, p1: 0.0012, "
        "p2: -0.0007, k3: -0.0123}\n",
        "lens: {model: plumb_bob, fx: 601.3, fy: 598.7, cx: 319.4, cy: 241.8, "
        "distortion: [-0.281, 0.0912, 0.0012, -0.0007, -0.0123]}\n",
        "lens: {model: rational_polynomial, fx: 601.3, fy: 598.7, cx: 319.4, cy: 241.8, "
        "distortion: [-0.281, 0.0912, 0.0012, -0.0007, -0.0123, 0, 0, 0]}\n",
    };
    for (int i = 0; i < 3; i++) {
        sensim_yaml *doc = sensim_yaml_load_string(good[i], strlen(good[i]), "lens.yaml");
        ck_assert_ptr_nonnull(doc);
        sensim_lens l;
        memset(&l, 0, sizeof l);
        ck_assert_msg(sensim_lens_from_yaml(sensim_ynode_get(sensim_yaml_root(doc), "lens"), &l) == SENSIM_OK, "%s",
                      sensim_last_error());
        sensim_lens ref = lens_plumb();
        ck_assert(l.model == ref.model && l.fx == ref.fx && l.fy == ref.fy && l.cx == ref.cx && l.cy == ref.cy);
        ck_assert(!memcmp(l.k, ref.k, sizeof l.k) && l.p1 == ref.p1 && l.p2 == ref.p2);
        sensim_yaml_free(doc);
    }
    const char *kb = "lens: {model: equidistant, fx: 285.72, fy: 285.93, cx: 420.12, cy: 398.71, "
                     "distortion: [-0.00735, 0.04082, -0.03979, 0.00751]}\n";
    sensim_yaml *doc = sensim_yaml_load_string(kb, strlen(kb), "lens.yaml");
    sensim_lens l;
    memset(&l, 0, sizeof l);
    ck_assert(sensim_lens_from_yaml(sensim_ynode_get(sensim_yaml_root(doc), "lens"), &l) == SENSIM_OK);
    sensim_lens ref = lens_kb();
    ck_assert(l.model == SENSIM_LENS_KB && !memcmp(l.k, ref.k, sizeof l.k) && l.fy == ref.fy);
    sensim_yaml_free(doc);
    static const char *const bad[][2] = {
        {"lens: {model: radtan, fx: 600, fy: 600, cx: 320}\n", "lens.yaml:1: missing key 'cy'"},
        {"lens: {model: radtan, fx: -1, fy: 600, cx: 320, cy: 240}\n", "key 'fx'"},
        {"lens: {model: radtan, fx: 600, fy: 600, cx: 320, cy: 240, k1: 0.1, distortion: [0, 0, 0, 0]}\n", "not both"},
        {"lens: {model: radtan, fx: 600, fy: 600, cx: 320, cy: 240, distortion: [0, 0, 0]}\n", "4, 5 or 8"},
        {"lens: {model: kannala_brandt, fx: 600, fy: 600, cx: 320, cy: 240, k5: 0.1}\n", "k1..k4 only"},
        {"lens: {model: kannala_brandt, fx: 600, fy: 600, cx: 320, cy: 240, p1: 0.1}\n", "no tangential"},
        {"lens: {model: radtan, fx: 600, fy: 600, cx: 320, cy: 240, hfov: 1}\n", "remove hfov"},
        {"lens: {model: fov, hfov: 1, fx: 600}\n", "only for a radtan"},
        {"lens: {model: brown, fx: 600}\n", "unknown lens 'brown'"},
        {"lens: {model: radtan, fx: 600, fy: 600, cx: 320, cy: 240, kk: 1}\n", "unknown key 'kk'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        doc = sensim_yaml_load_string(bad[i][0], strlen(bad[i][0]), "lens.yaml");
        ck_assert(sensim_lens_from_yaml(sensim_ynode_get(sensim_yaml_root(doc), "lens"), &l) != SENSIM_OK);
        ck_assert_msg(strstr(sensim_last_error(), bad[i][1]) && strstr(sensim_last_error(), "lens.yaml:1"),
                      "case %zu: %s", i, sensim_last_error());
        sensim_yaml_free(doc);
    }
    /* A scene's camera takes the same mapping (and still the bare names);
     * a lens that folds inside the image is refused naming the sensor's
     * line. */
    char *dir = tu_mkdtemp(), *scene = tu_path(dir, "scene.yaml");
    ck_assert_int_eq(tu_write_file(scene,
                                   "sensors:\n"
                                   "  - name: cam\n"
                                   "    type: camera\n"
                                   "    width: 640\n"
                                   "    height: 480\n"
                                   "    lens: {model: radtan, fx: 601.3, fy: 598.7, cx: 319.4, cy: 241.8,\n"
                                   "           distortion: [-0.281, 0.0912, 0.0012, -0.0007, -0.0123]}\n"
                                   "  - name: fold\n"
                                   "    type: camera\n"
                                   "    width: 640\n"
                                   "    height: 480\n"
                                   "    lens: {model: radtan, fx: 300, fy: 300, cx: 319.5, cy: 239.5, k1: -0.5}\n"
                                   "  - name: both\n"
                                   "    type: camera\n"
                                   "    hfov: 1.2\n"
                                   "    lens: {model: kannala_brandt, fx: 300, fy: 300, cx: 319.5, cy: 239.5}\n"
                                   "  - name: old\n"
                                   "    type: camera\n"
                                   "    hfov: 1.2\n"
                                   "    lens: fov\n"),
                     0);
    sensim_render_sensor rs;
    ck_assert_msg(sensim_render_sensor_load(scene, "cam", &rs) == SENSIM_OK, "%s", sensim_last_error());
    ref = lens_plumb();
    ck_assert(rs.camera.lens == SENSIM_RENDER_LENS_RADTAN && rs.camera.optics.fx == ref.fx &&
              !memcmp(rs.camera.optics.k, ref.k, sizeof ref.k) && rs.camera.optics.p2 == ref.p2);
    ck_assert(sensim_render_sensor_load(scene, "fold", &rs) != SENSIM_OK);
    ck_assert_msg(strstr(sensim_last_error(), "scene.yaml:8") && strstr(sensim_last_error(), "folds back"), "%s",
                  sensim_last_error());
    ck_assert(sensim_render_sensor_load(scene, "both", &rs) != SENSIM_OK);
    ck_assert_msg(strstr(sensim_last_error(), "scene.yaml:15") && strstr(sensim_last_error(), "remove hfov"), "%s",
                  sensim_last_error());
    ck_assert_msg(sensim_render_sensor_load(scene, "old", &rs) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert(rs.camera.lens == SENSIM_RENDER_LENS_FOV && rs.camera.hfov == 1.2);
    tu_rmtree(dir);
    free(dir), free(scene);
}
END_TEST

/* OpenCV's own numbers (Debian's python3-opencv): cv2.projectPoints and
 * cv2.fisheye.projectPoints for the forward map, cv2.undistortPointsIter
 * and cv2.fisheye.undistortPoints (iterated to 1e-15) for the inverse, by
 * tests/data/lens_ref.py on points written here. */
START_TEST(calibrated_against_opencv)
{
    const sensim_lens l = lens_by(_i);
    char *dir = tu_mkdtemp(), *in = tu_path(dir, "in.txt"), *out = tu_path(dir, "out.txt");
    char *script = tu_src("tests/data/lens_ref.py");
    FILE *f = fopen(in, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%s %.17g %.17g %.17g %.17g", l.model == SENSIM_LENS_KB ? "fisheye" : "radtan", l.fx, l.fy, l.cx, l.cy);
    if (l.model == SENSIM_LENS_KB)
        fprintf(f, " %.17g %.17g %.17g %.17g\n", l.k[0], l.k[1], l.k[2], l.k[3]);
    else
        fprintf(f, " %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", l.k[0], l.k[1], l.p1, l.p2, l.k[2], l.k[3],
                l.k[4], l.k[5]);
    enum { NP = 500, NQ = 500 };
    double P[NP][3], Q[NQ][2];
    sensim_rng r = sensim_rng_make(21, (uint32_t)_i, 0);
    for (int n = 0; n < NP; n++) {
        double th = (l.model == SENSIM_LENS_KB ? 1.45 : 1.0) * sensim_rng_uniform(&r, 2 * n);
        double ph = 2 * M_PI * sensim_rng_uniform(&r, 2 * n + 1);
        P[n][0] = sin(th) * cos(ph), P[n][1] = sin(th) * sin(ph), P[n][2] = cos(th);
        fprintf(f, "P %.17g %.17g %.17g\n", P[n][0], P[n][1], P[n][2]);
    }
    for (int n = 0; n < NQ; n++) {
        /* OpenCV pixels across the whole image. */
        Q[n][0] = -0.5 + l.width * sensim_rng_uniform(&r, 4000 + 2 * n);
        Q[n][1] = -0.5 + l.height * sensim_rng_uniform(&r, 4001 + 2 * n);
        fprintf(f, "Q %.17g %.17g\n", Q[n][0], Q[n][1]);
    }
    fclose(f);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s %s", script, in, out);
    ck_assert_msg(system(cmd) == 0, "%s failed (is python3-opencv installed? scripts/setup.sh)", cmd);
    f = fopen(out, "r");
    ck_assert_ptr_nonnull(f);
    double wp = 0, wa = 0;
    int compared = 0;
    for (int n = 0; n < NP; n++) {
        double ucv, vcv, u, v;
        ck_assert_int_eq(fscanf(f, "%lf %lf", &ucv, &vcv), 2);
        ck_assert(sensim_lens_dir_to_pixel(&l, P[n], &u, &v));
        wp = fmax(wp, fmax(fabs(u - 0.5 - ucv), fabs(v - 0.5 - vcv)));
    }
    for (int n = 0; n < NQ; n++) {
        double c[3], d[3];
        ck_assert_int_eq(fscanf(f, "%lf %lf %lf", &c[0], &c[1], &c[2]), 3);
        sensim_lens_pixel_to_dir(&l, Q[n][0] + 0.5, Q[n][1] + 0.5, d);
        /* cv::fisheye::undistortPoints answers tan(theta) (x, y) / r, a
         * point on z = 1: no direction past 80 deg. */
        if (d[2] < 0.17)
            continue;
        compared++;
        double cx = d[1] * c[2] - d[2] * c[1], cy = d[2] * c[0] - d[0] * c[2], cz = d[0] * c[1] - d[1] * c[0];
        wa = fmax(wa, atan2(sqrt(cx * cx + cy * cy + cz * cz), d[0] * c[0] + d[1] * c[1] + d[2] * c[2]));
    }
    fclose(f);
    ck_assert_msg(wp < 1e-9, "lens %d: forward map differs from OpenCV's by %g px", _i, wp);
    ck_assert_msg(wa < 1e-9, "lens %d: directions differ from OpenCV's by %g rad", _i, wa);
    ck_assert_int_ge(compared, NQ / 2);
    tu_rmtree(dir);
    free(dir), free(in), free(out), free(script);
}
END_TEST

/* A rig's calibrated lens remaps a recorded frame, taken as the pinhole
 * image of the same fx, fy, cx, cy, through the distortion: on a frame
 * whose pixels hold their own column and row (over W and H; bilinear
 * interpolation is exact on it), each output pixel holds the pinhole pixel its direction
 * falls on, fx x + cx + 0.5 and fy y + cy + 0.5 of the undistorted point. */
START_TEST(calibrated_remap)
{
    const sensim_lens dst = _i ? lens_kb() : lens_plumb();
    const size_t W = dst.width, H = dst.height;
    float *in = malloc(W * H * 2 * sizeof *in), *out = malloc(W * H * 2 * sizeof *out);
    for (size_t j = 0; j < H; j++)
        for (size_t i = 0; i < W; i++) {
            in[2 * (j * W + i)] = (float)((double)i / W); /* f32 pixels are clamped to [0, 1] */
            in[2 * (j * W + i) + 1] = (float)((double)j / H);
        }
    sensim_remap *m = sensim_lens_remap_from_pinhole(&dst, W, H);
    ck_assert_msg(m != NULL, "%s", sensim_last_error());
    ck_assert(sensim_remap_apply(m, SENSIM_PIXEL_F32, 2, -1.0, in, out) == SENSIM_OK);
    size_t inside = 0;
    for (size_t j = 0; j < H; j += 5)
        for (size_t i = 0; i < W; i += 5) {
            double d[3];
            sensim_lens_pixel_to_dir(&dst, i + 0.5, j + 0.5, d);
            const float *o = out + 2 * (j * W + i);
            if (d[2] <= 0 || o[0] == -1.0f)
                continue;
            double us = dst.fx * d[0] / d[2] + dst.cx, vs = dst.fy * d[1] / d[2] + dst.cy;
            if (!(us >= 0 && us <= W - 1 && vs >= 0 && vs <= H - 1))
                continue;
            inside++;
            ck_assert_msg(fabs(o[0] * W - us) < 2e-3 && fabs(o[1] * H - vs) < 2e-3, "(%zu, %zu): %g %g, expected %g %g",
                          i, j, o[0] * W, o[1] * H, us, vs);
        }
    ck_assert_uint_gt(inside, W * H / 25 / 3);
    sensim_remap_destroy(m);
    sensim_lens pin = {.model = SENSIM_LENS_PINHOLE, .hfov = 1};
    ck_assert_ptr_null(sensim_lens_remap_from_pinhole(&pin, W, H));
    free(in), free(out);
}
END_TEST

static float *read_image(const char *path, const char *dset, size_t n)
{
    sensim_log *L = sensim_log_open(path);
    ck_assert_msg(L != NULL, "%s", sensim_last_error());
    float *img = malloc(n * sizeof *img);
    ck_assert_msg(sensim_log_read(L, dset, SENSIM_F32, 0, 1, img) == SENSIM_OK, "%s", sensim_last_error());
    sensim_log_close(L);
    return img;
}

/* End to end: a frame rendered through the undistorted intrinsics, then
 * `sensim inject` with a rig whose lens is the plumb-bob webcam, against the
 * same scene rendered straight through that lens: they agree except on the
 * edges the bilinear remap softens, where the undistorted frame differs on
 * posts' widths of pixels. */
START_TEST(calibrated_rig_remap_matches_render)
{
    char *dir = tu_mkdtemp(), *scene = tu_path(dir, "scene.yaml"), *rig = tu_path(dir, "rig.yaml");
    char *gt = tu_path(dir, "gt.h5"), *clean = tu_path(dir, "clean.h5"), *dist = tu_path(dir, "dist.h5");
    char *inj = tu_path(dir, "inj.h5");
    const char *intr = "fx: 601.3, fy: 598.7, cx: 319.4, cy: 241.8";
    const char *coef = "distortion: [-0.281, 0.0912, 0.0012, -0.0007, -0.0123]";
    char text[4096];
    snprintf(text, sizeof text,
             "materials:\n"
             "  - {name: light, albedo: [0.8, 0.8, 0.8]}\n"
             "  - {name: red, albedo: [0.8, 0.1, 0.1]}\n"
             "meshes:\n"
             "  - {name: floor, plane: {size: [60, 60]}}\n"
             "  - {name: post, cylinder: {radius: 0.15, height: 3, segments: 24}}\n"
             "objects:\n"
             "  - {mesh: floor, material: light}\n"
             "  - {mesh: post, material: red, position: [3, -2, 0], repeat: {count: 8, step: [2.5, 0, 0]}}\n"
             "  - {mesh: post, material: red, position: [3, 2, 0], repeat: {count: 8, step: [2.5, 0, 0]}}\n"
             "sensors:\n"
             "  - {name: cam, type: camera, width: 640, height: 480, mount: {position: [0, 0, 1.5]},\n"
             "     lens: {model: radtan, %s}}\n"
             "  - {name: dist, type: camera, width: 640, height: 480, mount: {position: [0, 0, 1.5]},\n"
             "     lens: {model: radtan, %s, %s}}\n",
             intr, intr, coef);
    ck_assert_int_eq(tu_write_file(scene, text), 0);
    snprintf(text, sizeof text,
             "seed: 1\nsensors:\n  - {name: cam, type: camera, noise: {model: none},\n"
             "     lens: {model: plumb_bob, %s, %s}}\n",
             intr, coef);
    ck_assert_int_eq(tu_write_file(rig, text), 0);
    const char *steps[][12] = {
        {"trajectory", "--shape", "static", "--duration", "1", "-o", gt, NULL},
        {"render", scene, "-t", gt, "-s", "cam", "-n", "1", "--float", "-o", clean, NULL},
        {"render", scene, "-t", gt, "-s", "dist", "-n", "1", "--float", "-o", dist, NULL},
        {"inject", rig, clean, "-o", inj, NULL},
    };
    for (int k = 0; k < 4; k++) {
        const char *const *a = steps[k];
        tu_run_result r = tu_run(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
        ck_assert_msg(r.status == 0, "%s: %s", a[0], r.err);
        tu_run_free(&r);
    }
    const size_t W = 640, H = 480, n = W * H * 3;
    float *c = read_image(clean, "/sensors/cam/image", n), *d = read_image(dist, "/sensors/dist/image", n);
    float *j = read_image(inj, "/sensors/cam/image", n);
    sensim_lens l = lens_plumb();
    size_t count = 0, off_inj = 0, off_clean = 0;
    for (size_t y = 0; y < H; y++)
        for (size_t x = 0; x < W; x++) {
            double dir[3];
            sensim_lens_pixel_to_dir(&l, x + 0.5, y + 0.5, dir);
            double us = l.fx * dir[0] / dir[2] + l.cx, vs = l.fy * dir[1] / dir[2] + l.cy;
            if (!(us >= 0 && us <= W - 1 && vs >= 0 && vs <= H - 1))
                continue;
            count++;
            int bi = 0, bc = 0;
            for (int ch = 0; ch < 3; ch++) {
                size_t o = (y * W + x) * 3 + ch;
                bi |= fabsf(j[o] - d[o]) > 0.1f;
                bc |= fabsf(c[o] - d[o]) > 0.1f;
            }
            off_inj += bi;
            off_clean += bc;
        }
    ck_assert_uint_gt(count, W * H / 2);
    ck_assert_msg(off_inj < count / 50 && off_inj * 4 < off_clean,
                  "remapped frame differs from the direct render at %zu of %zu pixels (undistorted frame: %zu)",
                  off_inj, count, off_clean);
    free(c), free(d), free(j);
    tu_rmtree(dir);
    free(dir), free(scene), free(rig), free(gt), free(clean), free(dist), free(inj);
}
END_TEST

Suite *suite_lens(void)
{
    Suite *s = suite_create("lens");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, fov_boundary_is_the_same);
    tcase_add_loop_test(tc, calibrated_forward_matches_formula, 0, 3);
    tcase_add_loop_test(tc, calibrated_pixels_invert, 0, 3);
    tcase_add_test(tc, calibrated_refusals);
    tcase_add_test(tc, calibrated_yaml);
    tcase_add_loop_test(tc, calibrated_against_opencv, 0, 3);
    tcase_add_loop_test(tc, calibrated_remap, 0, 2);
    tcase_add_test(tc, calibrated_rig_remap_matches_render);
    suite_add_tcase(s, tc);
    return s;
}
