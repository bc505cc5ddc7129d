/* Camera: pinhole or the FOV wide-angle lens of seed 000 (eqs. 1-2) applied
 * to ray directions; supersampling with random positions in the pixel and
 * random times in the exposure (motion blur, seed 000 sec. 3.2) from the
 * counter-based RNG; Lambert shading with sun (and shadow rays), ambient
 * light and sky; Beer-Lambert fog towards the sky colour. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render_internal.h"
#include "sensim/rng.h"

enum { STREAM_PX = 0, STREAM_PY = 1, STREAM_TIME = 2 };

struct sensim_render_camera {
    sensim_render_camera_params p;
    double tw;     /* tan(w), w = half the horizontal field of view */
    double s_norm; /* FOV lens normalization s = tan(tan w) / tan w */
};

sensim_render_camera_params sensim_render_camera_default_params(void)
{
    sensim_render_camera_params p;
    memset(&p, 0, sizeof p);
    p.width = 640;
    p.height = 480;
    p.hfov = M_PI / 2;
    p.lens = SENSIM_RENDER_LENS_PINHOLE;
    p.samples = 1;
    p.shadows = 1;
    return p;
}

sensim_render_camera *sensim_render_camera_create(const sensim_render_camera_params *p)
{
    if (p->width < 1 || p->height < 1 || p->width > 65536 || p->height > 65536)
        goto bad_size;
    if (!(p->hfov > 0 && p->hfov < M_PI)) {
        sensim_error(SENSIM_EINVAL, "camera: hfov must be in (0, pi) rad (got %g)", p->hfov);
        return NULL;
    }
    if (p->samples < 1 || p->samples > 4096) {
        sensim_error(SENSIM_EINVAL, "camera: samples must be 1..4096 (got %d)", p->samples);
        return NULL;
    }
    if (!(p->exposure >= 0 && isfinite(p->exposure))) {
        sensim_error(SENSIM_EINVAL, "camera: exposure must be finite and >= 0 s (got %g)", p->exposure);
        return NULL;
    }
    if (p->lens != SENSIM_RENDER_LENS_PINHOLE && p->lens != SENSIM_RENDER_LENS_FOV) {
        sensim_error(SENSIM_EINVAL, "camera: unknown lens %d", (int)p->lens);
        return NULL;
    }
    double tw = tan(0.5 * p->hfov);
    if (p->lens == SENSIM_RENDER_LENS_FOV) {
        /* tan(r1 tan w) must stay below its pole over the whole image: the
         * corner has r1 = sqrt(1 + (H/W)^2). */
        double rmax = hypot(1.0, (double)p->height / p->width);
        if (!(rmax * tw < M_PI / 2 * 0.999) || !(tw < M_PI / 2 * 0.999)) {
            sensim_error(SENSIM_EINVAL, "camera: the FOV lens is undefined at hfov %g deg for a %dx%d image "
                         "(needs r1 tan(w) < pi/2 at the corners)", p->hfov * 180 / M_PI, p->width, p->height);
            return NULL;
        }
    }
    sensim_render_camera *c = calloc(1, sizeof *c);
    if (!c) {
        sensim_error(SENSIM_ENOMEM, "camera: out of memory");
        return NULL;
    }
    c->p = *p;
    c->tw = tw;
    c->s_norm = tan(tw) / tw;
    return c;
bad_size:
    sensim_error(SENSIM_EINVAL, "camera: width and height must be 1..65536 (got %d x %d)", p->width, p->height);
    return NULL;
}

void sensim_render_camera_destroy(sensim_render_camera *c) { free(c); }
const sensim_render_camera_params *sensim_render_camera_params_of(const sensim_render_camera *c) { return &c->p; }

sensim_vec3 sensim_render_camera_direction(const sensim_render_camera *c, double px, double py)
{
    /* Normalized image coordinates: x1 in [-1, 1] across the width, y1 with
     * the same scale (square pixels), up positive. */
    double x1 = 2 * px / c->p.width - 1, y1 = (c->p.height - 2 * py) / c->p.width;
    if (c->p.lens == SENSIM_RENDER_LENS_FOV) {
        /* Seed 000 eqs. 1-2: r2 = tan(r1 tan w) / tan w, normalized by s so
         * that the edge of the image keeps the field of view. */
        double r1 = hypot(x1, y1);
        if (r1 > 0) {
            double r2 = tan(r1 * c->tw) / c->tw, f = r2 / (r1 * c->s_norm);
            x1 *= f;
            y1 *= f;
        }
    }
    sensim_vec3 d = sensim_vec3_make(1, -x1 * c->tw, y1 * c->tw);
    return sensim_vec3_scale(d, 1 / sensim_vec3_norm(d));
}

static void trace_pixel(const sensim_render_camera *c, const sensim_scene *s, sensim_pose_fn posefn, const void *user,
                        double t, uint64_t frame, size_t pix, const sensim_rng *rx, const sensim_rng *ry,
                        const sensim_rng *rt, float *rgb)
{
    const int W = c->p.width, spp = c->p.samples;
    double acc[3] = {0, 0, 0};
    struct RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    uint64_t base = (frame * (uint64_t)W * c->p.height + pix) * (uint64_t)spp;
    for (int k = 0; k < spp; k++) {
        double jx = spp == 1 ? 0.5 : sensim_rng_uniform(rx, base + k);
        double jy = spp == 1 ? 0.5 : sensim_rng_uniform(ry, base + k);
        double ts = t + (c->p.exposure > 0 ? c->p.exposure * sensim_rng_uniform(rt, base + k) : 0);
        sensim_pose pose;
        posefn(user, ts, &pose);
        sensim_vec3 d = sensim_quat_rotate(pose.q, sensim_render_camera_direction(c, (double)(pix % W) + jx,
                                                                        (double)(pix / W) + jy));
        struct RTCRayHit rh;
        rh.ray.org_x = (float)pose.p.x;
        rh.ray.org_y = (float)pose.p.y;
        rh.ray.org_z = (float)pose.p.z;
        rh.ray.dir_x = (float)d.x;
        rh.ray.dir_y = (float)d.y;
        rh.ray.dir_z = (float)d.z;
        rh.ray.tnear = 0;
        rh.ray.tfar = INFINITY;
        rh.ray.time = scene_ray_time(s, ts);
        rh.ray.mask = 0xFFFFFFFFu;
        rh.ray.id = 0;
        rh.ray.flags = 0;
        rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
        rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
        rtcIntersect1(s->top, &ctx, &rh);
        sensim_hit hit;
        scene_fill_hit(s, &rh, ts, &hit);
        if (hit.object < 0) {
            for (int i = 0; i < 3; i++)
                acc[i] += s->sky[i];
            continue;
        }
        const sensim_material *m = &s->mat[hit.material];
        double ndl = sensim_vec3_dot(hit.normal, s->sun_dir), lit = 0;
        if (ndl > 0) {
            lit = ndl;
            if (c->p.shadows) {
                sensim_vec3 o = sensim_vec3_add(pose.p, sensim_vec3_scale(d, hit.distance));
                struct RTCRay sr;
                double eps = 1e-4 * fmax(1.0, hit.distance);
                sr.org_x = (float)(o.x + hit.normal.x * eps);
                sr.org_y = (float)(o.y + hit.normal.y * eps);
                sr.org_z = (float)(o.z + hit.normal.z * eps);
                sr.dir_x = (float)s->sun_dir.x;
                sr.dir_y = (float)s->sun_dir.y;
                sr.dir_z = (float)s->sun_dir.z;
                sr.tnear = 0;
                sr.tfar = INFINITY;
                sr.time = rh.ray.time;
                sr.mask = 0xFFFFFFFFu;
                sr.id = 0;
                sr.flags = 0;
                rtcOccluded1(s->top, &ctx, &sr);
                if (sr.tfar < 0)
                    lit = 0;
            }
        }
        double tr = exp(-s->extinction * hit.distance);
        for (int i = 0; i < 3; i++) {
            double surf = m->albedo[i] * (s->ambient[i] + s->sun[i] * lit);
            acc[i] += tr * surf + (1 - tr) * s->sky[i];
        }
    }
    for (int i = 0; i < 3; i++)
        rgb[i] = (float)(acc[i] / spp);
}

sensim_status sensim_render_camera_render(const sensim_render_camera *c, const sensim_scene *s, sensim_pose_fn pose,
                                   const void *pose_user, double t, uint64_t frame, float *rgb)
{
    if (!s->committed)
        return sensim_error(SENSIM_EINVAL, "camera: scene not committed");
    if (!isfinite(t))
        return sensim_error(SENSIM_EINVAL, "camera: frame time not finite");
    const sensim_rng rx = sensim_rng_make(c->p.seed, c->p.sensor, STREAM_PX);
    const sensim_rng ry = sensim_rng_make(c->p.seed, c->p.sensor, STREAM_PY);
    const sensim_rng rt = sensim_rng_make(c->p.seed, c->p.sensor, STREAM_TIME);
    const long n = (long)c->p.width * c->p.height;
#pragma omp parallel for schedule(dynamic, 256)
    for (long i = 0; i < n; i++)
        trace_pixel(c, s, pose, pose_user, t, frame, (size_t)i, &rx, &ry, &rt, rgb + 3 * i);
    if (c->p.noise)
        return c->p.noise(c->p.noise_user, rgb, c->p.width, c->p.height, frame);
    return SENSIM_OK;
}

void sensim_image_to_u8(const float *in, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++) {
        double v = in[i];
        v = v > 0 ? (v < 1 ? v : 1) : 0; /* also maps NaN to 0 */
        v = v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055;
        out[i] = (uint8_t)lrint(v * 255);
    }
}
