/* Camera: pinhole, the FOV wide-angle lens of seed 000 (eqs. 1-2), or the
 * calibrated OpenCV radtan and Kannala-Brandt lenses (models/lens.c) applied
 * to ray directions; supersampling with random positions in the pixel and
 * random times in the exposure (motion blur, seed 000 sec. 3.2) from the
 * counter-based RNG; Lambert shading with sun (and shadow rays), ambient
 * light and sky, or glTF metallic-roughness materials with base colour
 * textures and the two-layer surface BRDF (pbr.c); Beer-Lambert fog
 * towards the sky colour. Rays are traced in coherent packets of 16 (4 x 4
 * pixel tiles). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_loader.h"
#include "gpu/sg_shade.h"
#include "render_internal.h"
#include "sensim/camera.h"
#include "sensim/rng.h"
#include "../lib/base_internal.h"

enum { STREAM_PX = 0, STREAM_PY = 1, STREAM_TIME = 2 };

struct sensim_render_camera {
    sensim_render_camera_params p;
    double tw;     /* tan(w), w = half the horizontal field of view */
    double s_norm; /* FOV lens normalization s = tan(tan w) / tan w */
    sensim_lens lens; /* RADTAN, KB */
    sg_camera g;      /* the shared ray generation's view (render/gpu/sg_raygen.h), frame fields unset */
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
    if (p->samples < 1 || p->samples > 4096) {
        sensim_error(SENSIM_EINVAL, "camera: samples must be 1..4096 (got %d)", p->samples);
        return NULL;
    }
    if (!(p->exposure >= 0 && isfinite(p->exposure))) {
        sensim_error(SENSIM_EINVAL, "camera: exposure must be finite and >= 0 s (got %g)", p->exposure);
        return NULL;
    }
    if ((unsigned)p->backend > SENSIM_RENDER_BACKEND_AUTO) {
        sensim_error(SENSIM_EINVAL, "camera: unknown backend %d", (int)p->backend);
        return NULL;
    }
    if (p->depth != SENSIM_RENDER_DEPTH_NONE && p->depth != SENSIM_RENDER_DEPTH_Z &&
        p->depth != SENSIM_RENDER_DEPTH_RANGE) {
        sensim_error(SENSIM_EINVAL, "camera: unknown depth kind %d", (int)p->depth);
        return NULL;
    }
    if (p->lens != SENSIM_RENDER_LENS_PINHOLE && p->lens != SENSIM_RENDER_LENS_FOV &&
        p->lens != SENSIM_RENDER_LENS_RADTAN && p->lens != SENSIM_RENDER_LENS_KB) {
        sensim_error(SENSIM_EINVAL, "camera: unknown lens %d", (int)p->lens);
        return NULL;
    }
    /* The field of view and, for the FOV lens, tan(r1 tan w) below its
     * pole up to the image corner; for RADTAN and KB, invertible across the
     * image: the lens model's own check, so that a lens the camera model
     * takes is one the renderer takes. */
    static const sensim_lens_model models[] = {SENSIM_LENS_PINHOLE, SENSIM_LENS_FOV, SENSIM_LENS_RADTAN,
                                               SENSIM_LENS_KB};
    const int intr = p->lens == SENSIM_RENDER_LENS_RADTAN || p->lens == SENSIM_RENDER_LENS_KB;
    sensim_lens lens = p->optics;
    if (!intr)
        memset(&lens, 0, sizeof lens);
    lens.model = models[p->lens];
    lens.width = (size_t)p->width;
    lens.height = (size_t)p->height;
    lens.hfov = p->hfov;
    sensim_status st = sensim_lens_check(&lens);
    if (st) {
        sensim_error_prefix(st, "camera");
        return NULL;
    }
    double tw = tan(0.5 * p->hfov);
    sensim_render_camera *c = sensim_new_(sizeof *c, "camera");
    if (!c)
        return NULL;
    c->p = *p;
    c->lens = lens;
    c->tw = tw;
    c->s_norm = tan(tw) / tw;
    sg_camera *g = &c->g;
    g->width = (uint32_t)p->width;
    g->height = (uint32_t)p->height;
    g->spp = (uint32_t)p->samples;
    g->lens = p->lens == SENSIM_RENDER_LENS_FOV      ? SG_LENS_FOV
              : p->lens == SENSIM_RENDER_LENS_RADTAN ? SG_LENS_RADTAN
              : p->lens == SENSIM_RENDER_LENS_KB     ? SG_LENS_KB
                                                     : SG_LENS_PINHOLE;
    g->tw = c->tw;
    g->s_norm = c->s_norm;
    g->fx = lens.fx;
    g->fy = lens.fy;
    g->cx = lens.cx;
    g->cy = lens.cy;
    memcpy(g->k, lens.k, sizeof g->k);
    g->p1 = lens.p1;
    g->p2 = lens.p2;
    g->exposure = p->exposure;
    return c;
bad_size:
    sensim_error(SENSIM_EINVAL, "camera: width and height must be 1..65536 (got %d x %d)", p->width, p->height);
    return NULL;
}

void sensim_render_camera_destroy(sensim_render_camera *c) { free(c); }
const sensim_render_camera_params *sensim_render_camera_params_of(const sensim_render_camera *c) { return &c->p; }

sensim_vec3 sensim_render_camera_direction(const sensim_render_camera *c, double px, double py)
{
    double d[3];
    sg_camera_direction(&c->g, px, py, d); /* shared with the CUDA kernels */
    return sensim_vec3_make(d[0], d[1], d[2]);
}

/* Pixels are traced in 4 x 4 tiles: one coherent packet of 16 primary rays
 * per sample (rtcIntersect16) and one packet of shadow rays
 * (rtcOccluded16), about twice the single-ray rate on coherent views. A
 * pixel's samples, jitter and times are the same whatever the tiling:
 * sample k of pixel p uses index (frame * W * H + p) * spp + k. */
#define TILE 4

static void trace_tile(const sensim_render_camera *c, const sensim_scene *s, const sg_camera *G, const sg_shade *sh,
                       int cuda, int tx, int ty, float *rgb, float *depth, uint32_t *object)
{
    const int W = c->p.width, H = c->p.height, spp = c->p.samples;
    double acc[16][3];
    size_t pix[16];
    int first = -1;
    _Alignas(64) int inside[16];
    for (int j = 0; j < 16; j++) {
        int x = tx * TILE + j % TILE, y = ty * TILE + j / TILE;
        inside[j] = x < W && y < H ? -1 : 0;
        pix[j] = inside[j] ? (size_t)y * W + x : 0;
        if (inside[j] && first < 0)
            first = j;
        acc[j][0] = acc[j][1] = acc[j][2] = 0;
    }
    struct RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    ctx.flags = RTC_INTERSECT_CONTEXT_FLAG_COHERENT;
    for (int k = 0; k < spp; k++) {
        struct RTCRayHit16 rh;
        struct RTCRay16 sr;
        _Alignas(64) int shadow[16];
        double org[16][3], dir[16][3], cdir[16], ts[16];
        for (int j = 0; j < 16; j++) {
            /* Lanes outside the image repeat a valid ray (masked off). */
            int jj = inside[j] ? j : first;
            /* The sample's place in the frame: its slot in the CUDA
             * backend's batch; Embree and the twin ignore it. */
            const unsigned id = (unsigned)(pix[jj] * (size_t)spp + (size_t)k);
            sg_ray r;
            if (cuda && id < s->cuda->batch.n && s->cuda->batch.hits[id].geom == SG_INVALID) {
                /* A miss on the device: the sky, whatever the ray. */
                static const float o0[3] = {0, 0, 0}, d0[3] = {1, 0, 0};
                packet_ray16(&rh, j, o0, d0, INFINITY, 0);
                rh.ray.id[j] = id;
                continue;
            }
            /* The shared ray generation (render/gpu/sg_raygen.h). */
            double cd[3];
            sg_camera_ray_world(G, pix[jj], (uint32_t)k, &r, org[j], dir[j], cd, &ts[j]);
            cdir[j] = cd[0];
            packet_ray16(&rh, j, r.org, r.dir, INFINITY, r.time);
            rh.ray.id[j] = id;
        }
        sensim_scene_intersect16(s, c->p.backend, inside, &ctx, &rh);
        double lit[16], ka[16][3], ks[16][3];
        int pbr[16];
        const sensim_material *mat[16];
        for (int j = 0; j < 16; j++) {
            shadow[j] = 0;
            lit[j] = 0;
            pbr[j] = 0;
            mat[j] = NULL;
            if (!inside[j] || rh.hit.geomID[j] == RTC_INVALID_GEOMETRY_ID)
                continue;
            /* The shading normal (render/gpu/sg_shade.h, as the CUDA
             * kernel computes it for its shadow rays). */
            const float ng[3] = {rh.hit.Ng_x[j], rh.hit.Ng_y[j], rh.hit.Ng_z[j]};
            const float rd[3] = {rh.ray.dir_x[j], rh.ray.dir_y[j], rh.ray.dir_z[j]};
            double n[3];
            const int obj = (int)sg_shade_normal(sh, rh.hit.geomID[j], rh.hit.instID[0][j], ng, rd, ts[j], n);
            const sensim_vec3 nrm = sensim_vec3_make(n[0], n[1], n[2]);
            mat[j] = &s->mat[s->obj[obj].material];
            if (k == 0 && object)
                object[pix[j]] = (uint32_t)obj;
            if (k == 0 && depth) /* cdir.x: the ray's cosine to the optical axis */
                depth[pix[j]] = (float)(rh.ray.tfar[j] * (c->p.depth == SENSIM_RENDER_DEPTH_RANGE ? 1 : cdir[j]));
            /* glTF materials and textures, or the two-layer surface BRDF
             * (pbr.c); else the Lambert albedo below. */
            pbr[j] = sensim_camera_surface(s, obj, rh.hit.primID[j], rh.hit.u[j], rh.hit.v[j], nrm, s->sun_dir,
                                           sensim_vec3_scale(sensim_vec3_make(dir[j][0], dir[j][1], dir[j][2]), -1),
                                           ka[j], ks[j]);
            const double ndl = sg_shade_ndl(sh, n);
            if (ndl > 0) {
                lit[j] = ndl;
                if (c->p.shadows && cuda) {
                    /* Traced on the device with the primary ray. */
                    const sensim_cuda_batch *b = &s->cuda->batch;
                    if (rh.ray.id[j] < b->n && b->occ[rh.ray.id[j]])
                        lit[j] = 0;
                } else if (c->p.shadows) {
                    sg_ray q;
                    sg_shade_shadow_ray(sh, org[j], dir[j], rh.ray.tfar[j], n, 0.0f, &q);
                    shadow[j] = -1;
                    sr.org_x[j] = q.org[0];
                    sr.org_y[j] = q.org[1];
                    sr.org_z[j] = q.org[2];
                }
            }
        }
        if (c->p.shadows && !cuda) {
            for (int j = 0; j < 16; j++) {
                if (!shadow[j])
                    sr.org_x[j] = sr.org_y[j] = sr.org_z[j] = 0;
                sr.dir_x[j] = (float)s->sun_dir.x;
                sr.dir_y[j] = (float)s->sun_dir.y;
                sr.dir_z[j] = (float)s->sun_dir.z;
                sr.tnear[j] = 0;
                sr.tfar[j] = INFINITY;
                sr.time[j] = rh.ray.time[j];
                sr.mask[j] = 0xFFFFFFFFu;
                sr.id[j] = rh.ray.id[j];
                sr.flags[j] = 0;
            }
            sensim_scene_occluded16(s, c->p.backend, shadow, &ctx, &sr);
            for (int j = 0; j < 16; j++)
                if (shadow[j] && sr.tfar[j] < 0)
                    lit[j] = 0;
        }
        for (int j = 0; j < 16; j++) {
            if (!inside[j])
                continue;
            if (!mat[j]) {
                if (k == 0 && object)
                    object[pix[j]] = SENSIM_RENDER_NO_OBJECT;
                if (k == 0 && depth)
                    depth[pix[j]] = INFINITY;
                for (int i = 0; i < 3; i++)
                    acc[j][i] += s->sky[i];
                continue;
            }
            double tr = exp(-(s->extinction + s->weather_alpha) * rh.ray.tfar[j]);
            for (int i = 0; i < 3; i++) {
                double surf = pbr[j] ? ka[j][i] * s->ambient[i] + ks[j][i] * s->sun[i] * lit[j]
                                     : mat[j]->albedo[i] * (s->ambient[i] + s->sun[i] * lit[j]);
                acc[j][i] += tr * surf + (1 - tr) * s->sky[i];
            }
        }
    }
    for (int j = 0; j < 16; j++)
        if (inside[j])
            for (int i = 0; i < 3; i++)
                rgb[3 * pix[j] + i] = (float)(acc[j][i] / spp);
}

sensim_status sensim_render_camera_render(const sensim_render_camera *c, const sensim_scene *s, sensim_pose_fn pose,
                                   const void *pose_user, double t, uint64_t frame, float *rgb)
{
    return sensim_render_camera_render_images(c, s, pose, pose_user, t, frame, rgb, NULL, NULL);
}

sensim_status sensim_render_camera_render_images(const sensim_render_camera *c, const sensim_scene *s,
                                                 sensim_pose_fn pose, const void *pose_user, double t, uint64_t frame,
                                                 float *rgb, float *depth, uint32_t *object)
{
    if (!s->committed)
        return sensim_error(SENSIM_EINVAL, "camera: scene not committed");
    sensim_status bst = sensim_scene_backend_check(s, c->p.backend, "camera");
    if (bst)
        return bst;
    if (!isfinite(t))
        return sensim_error(SENSIM_EINVAL, "camera: frame time not finite");
    sg_camera G = c->g;
    G.t = t;
    G.frame = frame;
    /* The poses the exposure is sampled at (sg_camera_pose). */
    sg_pose knot[SG_CAMERA_KNOTS];
    G.nknot = c->p.exposure > 0 ? SG_CAMERA_KNOTS : 1;
    for (uint32_t i = 0; i < G.nknot; i++) {
        sensim_pose q;
        pose(pose_user, G.nknot > 1 ? t + c->p.exposure * i / (G.nknot - 1) : t, &q);
        const sg_pose x = {{q.p.x, q.p.y, q.p.z}, {q.q.w, q.q.x, q.q.y, q.q.z}};
        knot[i] = x;
    }
    G.knot = knot;
    G.has_motion = (uint32_t)s->has_motion;
    G.t0 = s->t0;
    G.t1 = s->t1;
    const sensim_rng rx = sensim_rng_make(c->p.seed, c->p.sensor, STREAM_PX);
    const sensim_rng ry = sensim_rng_make(c->p.seed, c->p.sensor, STREAM_PY);
    const sensim_rng rt = sensim_rng_make(c->p.seed, c->p.sensor, STREAM_TIME);
    const sensim_rng *rg[3] = {&rx, &ry, &rt};
    sg_rng *gg[3] = {&G.rx, &G.ry, &G.rt};
    for (int i = 0; i < 3; i++) {
        gg[i]->key[0] = rg[i]->key[0];
        gg[i]->key[1] = rg[i]->key[1];
        gg[i]->stream = rg[i]->stream;
        gg[i]->sensor = rg[i]->sensor;
    }
    const int ntx = (c->p.width + TILE - 1) / TILE, nty = (c->p.height + TILE - 1) / TILE;
    const long ntiles = (long)ntx * nty;
    /* What the shading normal needs of the scene (sg_shade.h). */
    size_t nkey = 0;
    for (size_t i = 0; i < s->nobj; i++)
        nkey += s->obj[i].nkey;
    sg_shade sh = {NULL, NULL, NULL, (uint32_t)s->nobj, (uint32_t)(c->p.shadows != 0),
                   {s->sun_dir.x, s->sun_dir.y, s->sun_dir.z}};
    sg_shade_obj *so = malloc((s->nobj ? s->nobj : 1) * sizeof *so);
    double *kt = malloc((nkey ? nkey : 1) * sizeof *kt), *kq = malloc((nkey ? nkey : 1) * 4 * sizeof *kq);
    if (!so || !kt || !kq) {
        free(so);
        free(kt);
        free(kq);
        return sensim_error(SENSIM_ENOMEM, "camera: out of memory");
    }
    nkey = 0;
    for (size_t i = 0; i < s->nobj; i++) {
        const scene_object *o = &s->obj[i];
        memcpy(so[i].scale, o->scale, sizeof so[i].scale);
        sensim_quat_store(o->pose.q, so[i].q);
        so[i].nkey = (uint32_t)o->nkey;
        so[i].key = (uint32_t)nkey;
        for (size_t k = 0; k < o->nkey; k++, nkey++) {
            kt[nkey] = o->kt[k];
            sensim_quat_store(o->kpose[k].q, kq + 4 * nkey);
        }
    }
    sh.obj = so;
    sh.kt = kt;
    sh.kq = kq;
    /* The CUDA backend: the primary rays made and traced on the GPU (the
     * same sg_raygen.h code as below), and with shadows each lit hit's
     * shadow ray made (sg_shade.h, as below) and traced there too; the
     * hits and an occluded flag per sample are downloaded into batch 0,
     * which the one pass below replays to shade (cuda_loader.h). */
    const int cuda = sensim_scene_backend(s, c->p.backend, NULL) == SENSIM_RENDER_BACKEND_CUDA;
    sensim_status st = cuda ? sensim_cuda_camera_trace(s->cuda, &G, &sh, nkey) : SENSIM_OK;
    if (!st) {
#pragma omp parallel for schedule(dynamic, 16)
        for (long i = 0; i < ntiles; i++)
            trace_tile(c, s, &G, &sh, cuda, (int)(i % ntx), (int)(i / ntx), rgb, depth, object);
    }
    if (cuda) {
        if (!st && s->cuda->batch.bad_id)
            st = sensim_error(SENSIM_EINTERNAL, "camera: a sample's slot lay outside the frame's %zu samples",
                              s->cuda->batch.n);
        sensim_cuda_batch_end(s->cuda);
    }
    free(so);
    free(kt);
    free(kq);
    if (st)
        return st;
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
