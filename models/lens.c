/* The lenses calibration tools print: OpenCV's radial-tangential
 * (Brown-Conrady, k1..k6 rational, p1, p2; cv::projectPoints) and the
 * Kannala-Brandt fisheye of cv::fisheye (k1..k4), with intrinsics fx, fy,
 * cx, cy. The forward maps are the formulas of OpenCV 4's documentation
 * (calib3d "Camera Calibration and 3D Reconstruction" and the fisheye
 * module's "Fisheye camera model"); the inverse (a pixel's ray) is Newton's
 * method in normalized coordinates, refused at check time where the model
 * is not invertible across the image. See sensim/camera.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lens_impl.h"
#include "sensim/camera.h"

/* RADTAN's distortion, KB's theta_d and their inverses by Newton's method
 * (lm_radtan_distort, lm_radtan_undistort, lm_kb_theta_d, lm_kb_undistort,
 * lm_lens_undistort): written once in lens_math.h, shared with the
 * renderer's ray generation (render/gpu/sg_raygen.h), here with libm. */
static inline void lm_sincos(double x, double *s, double *c)
{
    *s = sin(x);
    *c = cos(x);
}

#define LM_FN(name) lm_##name
#define LM_QUAL static inline
#define LM_SQRT(x) sqrt(x)
#define LM_HYPOT(x, y) hypot(x, y)
#define LM_FABS(x) fabs(x)
#define LM_FMAX(a, b) fmax(a, b)
#define LM_FINITE(x) isfinite(x)
#define LM_SINCOS(x, s, c) lm_sincos(x, s, c)
#define LM_PI M_PI
#include "lens_math.h"

int lens_intr_undistort(const sensim_lens *l, double u, double v, double dir[3])
{
    return lm_lens_undistort(l->model == SENSIM_LENS_RADTAN, l->k, l->p1, l->p2, l->fx, l->fy, l->cx, l->cy, u, v, dir);
}

int lens_intr_dir_to_pixel(const sensim_lens *l, const double d[3], double *u, double *v)
{
    double xd, yd;
    if (l->model == SENSIM_LENS_RADTAN) {
        if (!(d[2] > 0))
            return 0;
        lm_radtan_distort(l->k, l->p1, l->p2, d[0] / d[2], d[1] / d[2], &xd, &yd, NULL);
    } else {
        double rho = hypot(d[0], d[1]), th = atan2(rho, d[2]);
        if (!(th < M_PI))
            return 0;
        double td = lm_kb_theta_d(l->k, th, NULL);
        xd = rho > 0 ? td * d[0] / rho : 0;
        yd = rho > 0 ? td * d[1] / rho : 0;
    }
    if (!isfinite(xd) || !isfinite(yd))
        return 0;
    *u = l->fx * xd + l->cx + 0.5;
    *v = l->fy * yd + l->cy + 0.5;
    return 1;
}

/* The radial map, strictly increasing at relative steps of 1e-4 from the
 * axis until it passes `need` (and R's denominator positive): 0 and the
 * radius reached in *rmax, or an error. */
static sensim_status radial_reach(const sensim_lens *l, double need, double *rmax)
{
    const int kb = l->model == SENSIM_LENS_KB;
    const double cap = kb ? M_PI : 1e4;
    double r = 0, prev = 0;
    for (;;) {
        double h = 1e-4 * fmax(r, 1e-3), rn = r + h;
        double val;
        if (kb) {
            val = lm_kb_theta_d(l->k, rn, NULL);
        } else {
            const double *k = l->k;
            double r2 = rn * rn, b = 1 + r2 * (k[3] + r2 * (k[4] + r2 * k[5]));
            if (!(b > 0))
                return sensim_error(SENSIM_EINVAL,
                                    "lens: radtan: the denominator 1 + k4 r^2 + k5 r^4 + k6 r^6 reaches 0 at "
                                    "normalized radius r = %.6g, inside the image (farthest corner at distorted "
                                    "radius %.6g): not invertible across the image",
                                    rn, need);
            val = rn * (1 + r2 * (k[0] + r2 * (k[1] + r2 * k[2]))) / b;
        }
        if (!(val > prev) || !isfinite(val))
            return sensim_error(SENSIM_EINVAL,
                                "lens: %s: the distortion folds back at %s = %.6g (distorted %.6g) before the "
                                "image's farthest corner (distorted radius %.6g): not invertible across the image",
                                kb ? "kannala_brandt" : "radtan", kb ? "theta" : "normalized radius r", r, prev, need);
        r = rn;
        prev = val;
        if (val >= need)
            break;
        if (r >= cap)
            return sensim_error(SENSIM_EINVAL,
                                "lens: %s: the image's farthest corner (distorted radius %.6g) lies beyond %s "
                                "(distorted %.6g there): not invertible across the image",
                                kb ? "kannala_brandt" : "radtan", need, kb ? "theta = pi" : "r = 1e4 (89.99 deg)",
                                prev);
    }
    *rmax = r;
    return SENSIM_OK;
}

static sensim_status check_pixel(const sensim_lens *l, double ucv, double vcv, double rmax)
{
    double d[3];
    int n = lens_intr_undistort(l, ucv + 0.5, vcv + 0.5, d);
    int ok = n >= 0;
    if (ok && l->model == SENSIM_LENS_RADTAN) {
        double x = d[0] / d[2], y = d[1] / d[2], xd, yd, J[4];
        lm_radtan_distort(l->k, l->p1, l->p2, x, y, &xd, &yd, J);
        ok = J[0] * J[3] - J[1] * J[2] > 0 && hypot(x, y) <= rmax;
    }
    if (!ok)
        return sensim_error(SENSIM_EINVAL,
                            "lens: %s: no inverse at pixel (%g, %g) (OpenCV coordinates): Newton's method does not "
                            "converge there to a point where the distortion is one-to-one; not invertible across "
                            "the image",
                            l->model == SENSIM_LENS_RADTAN ? "radtan" : "kannala_brandt", ucv, vcv);
    return SENSIM_OK;
}

sensim_status lens_intr_check(const sensim_lens *l)
{
    const char *name = l->model == SENSIM_LENS_RADTAN ? "radtan" : "kannala_brandt";
    if (!(l->fx > 0 && isfinite(l->fx) && l->fy > 0 && isfinite(l->fy)))
        return sensim_error(SENSIM_EINVAL, "lens: %s: fx = %g, fy = %g: must be finite and > 0 (pixels)", name, l->fx,
                            l->fy);
    if (!isfinite(l->cx) || !isfinite(l->cy))
        return sensim_error(SENSIM_EINVAL, "lens: %s: cx = %g, cy = %g: must be finite", name, l->cx, l->cy);
    for (int i = 0; i < 6; i++)
        if (!isfinite(l->k[i]))
            return sensim_error(SENSIM_EINVAL, "lens: %s: k%d = %g: must be finite", name, i + 1, l->k[i]);
    if (!isfinite(l->p1) || !isfinite(l->p2))
        return sensim_error(SENSIM_EINVAL, "lens: %s: p1 = %g, p2 = %g: must be finite", name, l->p1, l->p2);
    if (l->model == SENSIM_LENS_KB && (l->k[4] != 0 || l->k[5] != 0 || l->p1 != 0 || l->p2 != 0))
        return sensim_error(SENSIM_EINVAL, "lens: kannala_brandt takes k1..k4 only (k5, k6, p1, p2 must be 0)");
    /* The distorted normalized radius of the farthest image corner. */
    const double W = (double)l->width, H = (double)l->height;
    const double us[2] = {-0.5, W - 0.5}, vs[2] = {-0.5, H - 0.5};
    double need = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            need = fmax(need, hypot((us[i] - l->cx) / l->fx, (vs[j] - l->cy) / l->fy));
    /* Tangential terms move a point by at most 3 (|p1| + |p2|) r^2; the
     * radial scan goes past the corner by that much (at the corner's
     * radius, bounded by the scan's own end). */
    double rmax, extra = 0;
    sensim_status st = radial_reach(l, need, &rmax);
    if (st)
        return st;
    if (l->model == SENSIM_LENS_RADTAN && (l->p1 != 0 || l->p2 != 0)) {
        extra = 3 * (fabs(l->p1) + fabs(l->p2)) * rmax * rmax;
        double r2;
        if ((st = radial_reach(l, need + extra, &r2)))
            return st;
        rmax = r2;
    }
    /* Newton at every border pixel and on a grid inside. */
    for (size_t i = 0; i < l->width; i++)
        if ((st = check_pixel(l, (double)i, -0.5, rmax)) || (st = check_pixel(l, (double)i, H - 0.5, rmax)))
            return st;
    for (size_t j = 0; j < l->height; j++)
        if ((st = check_pixel(l, -0.5, (double)j, rmax)) || (st = check_pixel(l, W - 0.5, (double)j, rmax)))
            return st;
    for (int i = 0; i <= 64; i++)
        for (int j = 0; j <= 64; j++)
            if ((st = check_pixel(l, -0.5 + W * i / 64.0, -0.5 + H * j / 64.0, rmax)))
                return st;
    return SENSIM_OK;
}

sensim_remap *sensim_lens_remap_from_pinhole(const sensim_lens *lens, size_t width, size_t height)
{
    if (lens->model == SENSIM_LENS_PINHOLE) {
        sensim_error(SENSIM_EINVAL, "lens: a pinhole lens needs no remap");
        return NULL;
    }
    sensim_lens dst = *lens, src = *lens;
    dst.width = src.width = width;
    dst.height = src.height = height;
    if (src.model == SENSIM_LENS_FOV)
        src.model = SENSIM_LENS_PINHOLE;
    else {
        /* A radtan lens without distortion is the pinhole of fx, fy, cx, cy. */
        src.model = SENSIM_LENS_RADTAN;
        memset(src.k, 0, sizeof src.k);
        src.p1 = src.p2 = 0;
    }
    return sensim_remap_create(&src, &dst);
}

/* ---- YAML ---- */

static const char *const lens_keys[] = {"model", "hfov", "fx", "fy", "cx", "cy", "k1",         "k2",
                                        "k3",    "k4",   "k5", "k6", "p1", "p2", "distortion", NULL};
static const char *const kname[6] = {"k1", "k2", "k3", "k4", "k5", "k6"};

sensim_status sensim_lens_from_yaml(const sensim_ynode *ln, sensim_lens *lens)
{
    sensim_status st;
    if ((st = sensim_ynode_check_keys(ln, "camera lens", lens_keys)))
        return st;
    const char *model = "pinhole";
    if ((st = sensim_ynode_get_string(ln, "model", 0, &model)))
        return st;
    sensim_lens_model m;
    if (!strcmp(model, "pinhole"))
        m = SENSIM_LENS_PINHOLE;
    else if (!strcmp(model, "fov"))
        m = SENSIM_LENS_FOV;
    else if (!strcmp(model, "radtan") || !strcmp(model, "plumb_bob") || !strcmp(model, "rational_polynomial"))
        m = SENSIM_LENS_RADTAN;
    else if (!strcmp(model, "kannala_brandt") || !strcmp(model, "equidistant") || !strcmp(model, "fisheye"))
        m = SENSIM_LENS_KB;
    else
        return sensim_ynode_error(sensim_ynode_get(ln, "model"), SENSIM_EINVAL,
                                  "key 'model': unknown lens '%s' (expected pinhole, fov, radtan, kannala_brandt)",
                                  model);
    const int intr = m == SENSIM_LENS_RADTAN || m == SENSIM_LENS_KB;
    static const char *const only_intr[] = {"fx", "fy", "cx", "cy", "k1", "k2",         "k3",
                                            "k4", "k5", "k6", "p1", "p2", "distortion", NULL};
    for (int i = 0; only_intr[i]; i++)
        if (!intr && sensim_ynode_get(ln, only_intr[i]))
            return sensim_ynode_error(sensim_ynode_get(ln, only_intr[i]), SENSIM_EINVAL,
                                      "key '%s': only for a radtan or kannala_brandt lens (this one is %s)",
                                      only_intr[i], model);
    if (intr && sensim_ynode_get(ln, "hfov"))
        return sensim_ynode_error(sensim_ynode_get(ln, "hfov"), SENSIM_EINVAL,
                                  "key 'hfov': a %s lens's field of view follows from fx, fy, cx, cy and the "
                                  "distortion; remove hfov",
                                  model);
    double hfov = lens->hfov;
    if (!intr) {
        if ((st = sensim_ynode_get_quantity_range(ln, "hfov", SENSIM_DIM_ANGLE, m == SENSIM_LENS_FOV, 1e-9, M_PI - 1e-9,
                                                  &hfov)))
            return st;
        lens->model = m;
        lens->hfov = hfov;
        return SENSIM_OK;
    }
    sensim_lens r = *lens;
    r.model = m;
    r.hfov = 0;
    memset(r.k, 0, sizeof r.k);
    r.p1 = r.p2 = 0;
    if ((st = sensim_ynode_get_quantity_range(ln, "fx", SENSIM_DIM_NONE, 1, 1e-300, INFINITY, &r.fx)) ||
        (st = sensim_ynode_get_quantity_range(ln, "fy", SENSIM_DIM_NONE, 1, 1e-300, INFINITY, &r.fy)) ||
        (st = sensim_ynode_get_quantity_range(ln, "cx", SENSIM_DIM_NONE, 1, -INFINITY, INFINITY, &r.cx)) ||
        (st = sensim_ynode_get_quantity_range(ln, "cy", SENSIM_DIM_NONE, 1, -INFINITY, INFINITY, &r.cy)))
        return st;
    const int nk = m == SENSIM_LENS_KB ? 4 : 6;
    const sensim_ynode *dist = sensim_ynode_get(ln, "distortion");
    if (dist) {
        static const char *const named[] = {"k1", "k2", "k3", "k4", "k5", "k6", "p1", "p2", NULL};
        for (int i = 0; named[i]; i++)
            if (sensim_ynode_get(ln, named[i]))
                return sensim_ynode_error(sensim_ynode_get(ln, named[i]), SENSIM_EINVAL,
                                          "key '%s': give the coefficients either by name or as 'distortion', "
                                          "not both",
                                          named[i]);
        size_t n = sensim_ynode_size(dist);
        if (sensim_ynode_kind_of(dist) != SENSIM_YNODE_SEQUENCE ||
            (m == SENSIM_LENS_KB ? n != 4 : (n != 4 && n != 5 && n != 8)))
            return sensim_ynode_error(dist, SENSIM_EINVAL,
                                      "key 'distortion': expected a list of %s in OpenCV's order (%s)",
                                      m == SENSIM_LENS_KB ? "4 numbers" : "4, 5 or 8 numbers",
                                      m == SENSIM_LENS_KB ? "k1, k2, k3, k4" : "k1, k2, p1, p2, k3, k4, k5, k6");
        /* OpenCV's order: radtan k1 k2 p1 p2 k3 k4 k5 k6; fisheye k1..k4. */
        double *slot[8] = {&r.k[0], &r.k[1], &r.p1, &r.p2, &r.k[2], &r.k[3], &r.k[4], &r.k[5]};
        double *kslot[4] = {&r.k[0], &r.k[1], &r.k[2], &r.k[3]};
        for (size_t i = 0; i < n; i++) {
            char what[48];
            snprintf(what, sizeof what, "key 'distortion' item %zu", i + 1);
            if ((st = sensim_ynode_as_quantity(sensim_ynode_item(dist, i), what, SENSIM_DIM_NONE,
                                               m == SENSIM_LENS_KB ? kslot[i] : slot[i])))
                return st;
        }
    } else {
        for (int i = 0; i < 6; i++) {
            if (i >= nk && sensim_ynode_get(ln, kname[i]))
                return sensim_ynode_error(sensim_ynode_get(ln, kname[i]), SENSIM_EINVAL,
                                          "key '%s': a kannala_brandt lens has k1..k4 only", kname[i]);
            if ((st = sensim_ynode_get_quantity(ln, kname[i], SENSIM_DIM_NONE, 0, &r.k[i])))
                return st;
        }
        if (m == SENSIM_LENS_KB && (sensim_ynode_get(ln, "p1") || sensim_ynode_get(ln, "p2")))
            return sensim_ynode_error(sensim_ynode_get(ln, sensim_ynode_get(ln, "p1") ? "p1" : "p2"), SENSIM_EINVAL,
                                      "key '%s': a kannala_brandt lens has no tangential terms",
                                      sensim_ynode_get(ln, "p1") ? "p1" : "p2");
        if ((st = sensim_ynode_get_quantity(ln, "p1", SENSIM_DIM_NONE, 0, &r.p1)) ||
            (st = sensim_ynode_get_quantity(ln, "p2", SENSIM_DIM_NONE, 0, &r.p2)))
            return st;
    }
    *lens = r;
    return SENSIM_OK;
}

void sensim_lens_write_yaml(sensim_ywriter *w, const sensim_lens *l)
{
    static const char *const names[] = {"pinhole", "fov", "radtan", "kannala_brandt"};
    sensim_ywriter_map_begin(w, 0);
    sensim_ywriter_key(w, "model");
    sensim_ywriter_string(w, (unsigned)l->model < 4 ? names[l->model] : "pinhole");
    if (l->model == SENSIM_LENS_RADTAN || l->model == SENSIM_LENS_KB) {
        const double v[4] = {l->fx, l->fy, l->cx, l->cy};
        static const char *const vn[4] = {"fx", "fy", "cx", "cy"};
        for (int i = 0; i < 4; i++) {
            sensim_ywriter_key(w, vn[i]);
            sensim_ywriter_number(w, v[i]);
        }
        for (int i = 0; i < (l->model == SENSIM_LENS_KB ? 4 : 6); i++) {
            sensim_ywriter_key(w, kname[i]);
            sensim_ywriter_number(w, l->k[i]);
        }
        if (l->model == SENSIM_LENS_RADTAN) {
            sensim_ywriter_key(w, "p1");
            sensim_ywriter_number(w, l->p1);
            sensim_ywriter_key(w, "p2");
            sensim_ywriter_number(w, l->p2);
        }
    } else if (l->hfov > 0) {
        sensim_ywriter_key(w, "hfov");
        sensim_ywriter_number(w, l->hfov);
    }
    sensim_ywriter_map_end(w);
}
