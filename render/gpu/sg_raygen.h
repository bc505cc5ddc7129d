/* sg_raygen.h - ray generation of the lidar and the camera, shared by the
 * Embree and twin backends (render/lidar.c, render/camera.c, compiled as
 * C11) and the CUDA kernels (sg_kernels.cu), so that every backend traces
 * the very same rays, bit for bit (rules in sg_types.h: no libm, no
 * contraction, double where the host code has always used double).
 *
 * Lidar (render/lidar.c has the model): a spinning head's beam axes are
 * tables in the sensor frame made once per lidar on the host (per-channel
 * elevations and azimuth offsets, the presets' tables, the spin's azimuth
 * at each firing time); a rosette's axis is made here from the scan's time
 * (two counter-rotating prisms); each beam is cast from the sensor pose at
 * its own firing time (motion distortion) and split into the footprint's
 * sub-rays (grid or sunflower offsets a, b and their Gaussian weights, made
 * once per lidar; round or elliptical divergence). The pose at a time is
 * the caller's function (a host callback): the CPU backends call it per
 * beam, the CUDA backend tabulates it at the firing times on the host
 * (one pose per column when a column fires at once, else per beam) and
 * the kernel reads the table; either way the same doubles reach the same
 * code below.
 *
 * Camera (render/camera.c): pinhole, the FOV lens (seed 000 eqs. 1-2),
 * OpenCV radtan and Kannala-Brandt inverted by Newton's method as
 * models/lens.c does, and a sample's jitter and exposure time from the
 * Philox streams of sensim_rng (sg_math.h). */
#ifndef SENSIM_SG_RAYGEN_H
#define SENSIM_SG_RAYGEN_H

#include "sg_math.h"

/* A rigid pose, sensim_pose's layout: x_world = q x + p, q = (w, x, y, z). */
typedef struct sg_pose {
    double p[3];
    double q[4];
} sg_pose;

/* q v q^*, as sensim_quat_rotate (sensim/linalg.h), operation for operation:
 * t = 2 (u x v), v + w t + u x t. */
SENSIM_HD static inline void sg_quat_rotate(const double *q, const double *v, double *out)
{
    const double ux = q[1], uy = q[2], uz = q[3];
    const double tx = (uy * v[2] - uz * v[1]) * 2.0, ty = (uz * v[0] - ux * v[2]) * 2.0,
                 tz = (ux * v[1] - uy * v[0]) * 2.0;
    out[0] = (v[0] + tx * q[0]) + (uy * tz - uz * ty);
    out[1] = (v[1] + ty * q[0]) + (uz * tx - ux * tz);
    out[2] = (v[2] + tz * q[0]) + (ux * ty - uy * tx);
}

/* Ray time in [0, 1] over the scene's keyframe window [t0, t1] (0 for a
 * scene without motion), as scene_ray_time. */
SENSIM_HD static inline float sg_ray_time(int has_motion, double t0, double t1, double t)
{
    if (!has_motion)
        return 0.0f;
    const double u = (t - t0) / (t1 - t0);
    return (float)(u < 0 ? 0 : u > 1 ? 1 : u);
}

/* ---- lidar ---- */

#define SG_LIDAR_MAX_RAYS 256 /* SENSIM_RENDER_LIDAR_MAX_RAYS */

/* What the rays of one scan need. Pointers are host or device addresses
 * (the CUDA launcher fills a copy with device ones). */
typedef struct sg_lidar {
    const float *dir;           /* spin: [columns * channels * 3] beam axes, sensor frame */
    const double *toff;         /* [channels] firing time offsets, s */
    const double *ra, *rb, *rn; /* [nrays] footprint offsets (tangents) and 1 / sqrt(1 + a^2 + b^2) */
    const sg_pose *pose;        /* CUDA: poses at the firing times (per column if same_time, else per beam) */
    uint32_t channels, columns, nrays;
    uint32_t rosette;   /* 0: spinning tables, 1: rosette */
    uint32_t same_time; /* every channel of a column fires at once */
    uint32_t has_motion;
    double period;      /* s per column */
    double t_start;     /* scan start, s */
    double scan_t;      /* rosette: the scan's start on the prisms' clock, scan / rate_hz */
    double w1, w2, rq;  /* rosette: prism rates 2 pi hz, rad/s; cone angle / 4 */
    double t0, t1;      /* the scene's keyframe window (ray time) */
    float tfar;         /* max_range */
} sg_lidar;

/* Firing time of (column, channel) after the scan start. */
SENSIM_HD static inline double sg_lidar_fire_time(const sg_lidar *L, int column, int channel)
{
    return column * L->period + L->toff[channel];
}

/* The rosette's beam at prism time t: unit direction (float, as the
 * spinning tables), azimuth and elevation. The offset (X, Y) = (fov / 4)
 * (cos w1 t + cos w2 t, sin w1 t + sin w2 t) is the beam's angle off +x (its
 * length) towards +y (X) and +z (Y). */
SENSIM_HD static inline void sg_rosette_beam(const sg_lidar *L, double t, float d[3], float *az, float *el)
{
    double s1, c1, s2, c2;
    sg_sincos(L->w1 * t, &s1, &c1);
    sg_sincos(L->w2 * t, &s2, &c2);
    const double X = L->rq * (c1 + c2), Y = L->rq * (s1 + s2);
    const double th = sg_sqrt(X * X + Y * Y);
    double sth, cth;
    sg_sincos(th, &sth, &cth);
    const double st = th > 0 ? sth / th : 1;
    const double dx = cth, dy = X * st, dz = Y * st;
    d[0] = (float)dx;
    d[1] = (float)dy;
    d[2] = (float)dz;
    *az = (float)sg_atan2(dy, dx);
    *el = (float)sg_asin(sg_fmax(-1.0, sg_fmin(1.0, dz)));
}

/* Prism time of a rosette's column. */
SENSIM_HD static inline double sg_rosette_time(const sg_lidar *L, int column)
{
    return L->scan_t + sg_lidar_fire_time(L, column, 0);
}

/* A beam in the world: its axis e and, for several rays a beam, the
 * footprint axes u (horizontal) and v (up), orthogonal to the axis, all
 * rotated by the pose's q. e0: the axis in the sensor frame. */
typedef struct sg_beam {
    double e[3], u[3], v[3];
} sg_beam;

SENSIM_HD static inline void sg_lidar_beam(const double *q, const float e0[3], uint32_t nrays, sg_beam *b)
{
    const double e[3] = {e0[0], e0[1], e0[2]};
    if (nrays > 1) {
        const double ch = sg_sqrt(e[0] * e[0] + e[1] * e[1]);
        double u[3], v[3];
        if (ch > 1e-9) {
            u[0] = -e[1] / ch;
            u[1] = e[0] / ch;
            u[2] = 0;
        } else {
            u[0] = 0;
            u[1] = 1;
            u[2] = 0;
        }
        v[0] = e[1] * u[2] - e[2] * u[1];
        v[1] = e[2] * u[0] - e[0] * u[2];
        v[2] = e[0] * u[1] - e[1] * u[0];
        sg_quat_rotate(q, u, b->u);
        sg_quat_rotate(q, v, b->v);
    }
    sg_quat_rotate(q, e, b->e);
}

/* Sub-ray j of beam b: (e + a_j u + b_j v) / sqrt(1 + a_j^2 + b_j^2). */
SENSIM_HD static inline void sg_lidar_subray(const sg_lidar *L, const sg_beam *b, uint32_t j, float d[3])
{
    if (L->nrays <= 1) {
        d[0] = (float)b->e[0];
        d[1] = (float)b->e[1];
        d[2] = (float)b->e[2];
        return;
    }
    const double a = L->ra[j], bb = L->rb[j], in = L->rn[j];
    for (int c = 0; c < 3; c++)
        d[c] = (float)((b->e[c] + a * b->u[c] + bb * b->v[c]) * in);
}

/* Ray i of the scan (beam i / nrays = column * channels + channel, sub-ray
 * i % nrays) from the pose table: what a kernel thread makes. */
SENSIM_HD static inline void sg_lidar_ray(const sg_lidar *L, uint64_t i, sg_ray *r)
{
    const uint64_t beam = i / L->nrays;
    const uint32_t j = (uint32_t)(i - beam * L->nrays);
    const int column = (int)(beam / L->channels), k = (int)(beam - (uint64_t)column * L->channels);
    float e0[3];
    if (L->rosette) {
        float az, el;
        sg_rosette_beam(L, sg_rosette_time(L, column), e0, &az, &el);
    } else {
        for (int c = 0; c < 3; c++)
            e0[c] = L->dir[3 * beam + c];
    }
    const sg_pose *p = &L->pose[L->same_time ? (uint64_t)column : beam];
    sg_beam b;
    sg_lidar_beam(p->q, e0, L->nrays, &b);
    sg_lidar_subray(L, &b, j, r->dir);
    r->org[0] = (float)p->p[0];
    r->org[1] = (float)p->p[1];
    r->org[2] = (float)p->p[2];
    r->tnear = 0.0f;
    r->tfar = L->tfar;
    r->time = sg_ray_time((int)L->has_motion, L->t0, L->t1, L->t_start + sg_lidar_fire_time(L, column, k));
}

/* ---- camera ---- */

enum { SG_LENS_PINHOLE = 0, SG_LENS_FOV = 1, SG_LENS_RADTAN = 2, SG_LENS_KB = 3 };

typedef struct sg_camera {
    uint32_t width, height, spp, lens;
    double tw;     /* tan(w), w = half the horizontal field of view */
    double s_norm; /* FOV lens: tan(tan w) / tan w */
    double fx, fy, cx, cy, k[6], p1, p2; /* RADTAN, KB (sensim_lens) */
    double t, exposure;                  /* frame time and exposure, s */
    uint64_t frame;
    sg_rng rx, ry, rt;   /* jitter in x, y, and time in the exposure */
    const sg_pose *knot; /* the pose at t + exposure i / (nknot - 1), i < nknot */
    uint32_t nknot;      /* 1 when exposure is 0, else SG_CAMERA_KNOTS */
    uint32_t has_motion; /* the scene's keyframe window, for ray times */
    double t0, t1;
} sg_camera;

/* Poses a frame's exposure is sampled at: a sample's pose is interpolated
 * between the two around its time (positions linearly, orientations by
 * normalized linear interpolation on the shorter arc), so that the pose
 * callback runs 33 times a frame, on the host, whatever the backend. */
#define SG_CAMERA_KNOTS 33

/* The calibrated lenses, radtan and Kannala-Brandt (sg_radtan_distort,
 * sg_radtan_undistort, sg_kb_theta_d, sg_kb_undistort, sg_lens_undistort):
 * the lens model's own code (models/lens.c includes the same template with
 * libm), here with sg_math.h's functions. */
SENSIM_HD static inline double sg_hypot(double x, double y) { return sg_sqrt(x * x + y * y); }

#define LM_FN(name) sg_##name
#define LM_QUAL SENSIM_HD static inline
#define LM_SQRT(x) sg_sqrt(x)
#define LM_HYPOT(x, y) sg_hypot(x, y)
#define LM_FABS(x) sg_fabs(x)
#define LM_FMAX(a, b) sg_fmax(a, b)
#define LM_FINITE(x) sg_finite(x)
#define LM_SINCOS(x, s, c) sg_sincos(x, s, c)
#define LM_PI SG_PI
#include "../../models/lens_math.h"

/* The unit ray of continuous pixel coordinate (px, py) in the sensor frame
 * (x forward, y left, z up), as sensim_render_camera_direction. */
SENSIM_HD static inline void sg_camera_direction(const sg_camera *c, double px, double py, double out[3])
{
    if (c->lens == SG_LENS_RADTAN || c->lens == SG_LENS_KB) {
        /* Optical frame (z forward, x right, y down), then the sensor's. */
        double d[3];
        (void)sg_lens_undistort(c->lens == SG_LENS_RADTAN, c->k, c->p1, c->p2, c->fx, c->fy, c->cx, c->cy, px, py, d);
        out[0] = d[2];
        out[1] = -d[0];
        out[2] = -d[1];
        return;
    }
    /* Normalized image coordinates: x1 in [-1, 1] across the width, y1 with
     * the same scale (square pixels), up positive. */
    double x1 = 2 * px / c->width - 1, y1 = (c->height - 2 * py) / c->width;
    if (c->lens == SG_LENS_FOV) {
        /* Seed 000 eqs. 1-2: r2 = tan(r1 tan w) / tan w, normalized by s so
         * that the edge of the image keeps the field of view. */
        const double r1 = sg_hypot(x1, y1);
        if (r1 > 0) {
            const double r2 = sg_tan(r1 * c->tw) / c->tw, f = r2 / (r1 * c->s_norm);
            x1 *= f;
            y1 *= f;
        }
    }
    const double d[3] = {1, -x1 * c->tw, y1 * c->tw};
    const double in = 1 / sg_sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    out[0] = d[0] * in;
    out[1] = d[1] * in;
    out[2] = d[2] * in;
}

/* Sample k of pixel pix: its position in the image (jittered when spp >
 * 1) and its time (random in the exposure), from counter
 * (frame W H + pix) spp + k whatever the tiling. */
SENSIM_HD static inline void sg_camera_sample(const sg_camera *c, uint64_t pix, uint32_t k, double *px, double *py,
                                              double *ts)
{
    const uint64_t idx = (c->frame * (uint64_t)c->width * c->height + pix) * (uint64_t)c->spp + k;
    const double jx = c->spp == 1 ? 0.5 : sg_rng_uniform(&c->rx, idx);
    const double jy = c->spp == 1 ? 0.5 : sg_rng_uniform(&c->ry, idx);
    *ts = c->t + (c->exposure > 0 ? c->exposure * sg_rng_uniform(&c->rt, idx) : 0);
    *px = (double)(pix % c->width) + jx;
    *py = (double)(pix / c->width) + jy;
}

/* The camera's pose at time ts of the frame's exposure (from the knots). */
SENSIM_HD static inline void sg_camera_pose(const sg_camera *c, double ts, sg_pose *out)
{
    if (c->nknot <= 1 || !(c->exposure > 0)) {
        *out = c->knot[0];
        return;
    }
    double f = (ts - c->t) / c->exposure * (double)(c->nknot - 1);
    f = f < 0 ? 0 : f;
    uint32_t i = (uint32_t)f;
    if (i > c->nknot - 2)
        i = c->nknot - 2;
    const double w = f - (double)i, v = 1.0 - w;
    const sg_pose *a = &c->knot[i], *b = &c->knot[i + 1];
    for (int k = 0; k < 3; k++)
        out->p[k] = a->p[k] * v + b->p[k] * w;
    const double d = a->q[0] * b->q[0] + a->q[1] * b->q[1] + a->q[2] * b->q[2] + a->q[3] * b->q[3];
    const double wb = d < 0 ? -w : w;
    double q[4], n2 = 0;
    for (int k = 0; k < 4; k++) {
        q[k] = a->q[k] * v + b->q[k] * wb;
        n2 += q[k] * q[k];
    }
    const double in = 1.0 / sg_sqrt(n2);
    for (int k = 0; k < 4; k++)
        out->q[k] = q[k] * in;
}

/* Sample k of pixel pix: the world ray (origin and direction as traced,
 * float; org and wd: the same in double, before rounding), the
 * sensor-frame direction cd (double) and the sample's time. */
SENSIM_HD static inline void sg_camera_ray_world(const sg_camera *c, uint64_t pix, uint32_t k, sg_ray *r,
                                                 double org[3], double wd[3], double cd[3], double *ts)
{
    double px, py;
    sg_pose pose;
    sg_camera_sample(c, pix, k, &px, &py, ts);
    sg_camera_pose(c, *ts, &pose);
    sg_camera_direction(c, px, py, cd);
    sg_quat_rotate(pose.q, cd, wd);
    for (int a = 0; a < 3; a++) {
        org[a] = pose.p[a];
        r->org[a] = (float)pose.p[a];
        r->dir[a] = (float)wd[a];
    }
    r->tnear = 0.0f;
    r->tfar = __builtin_inff();
    r->time = sg_ray_time((int)c->has_motion, c->t0, c->t1, *ts);
}

/* sg_camera_ray_world without the doubles of the world ray. */
SENSIM_HD static inline void sg_camera_ray(const sg_camera *c, uint64_t pix, uint32_t k, sg_ray *r, double cd[3],
                                           double *ts)
{
    double org[3], wd[3];
    sg_camera_ray_world(c, pix, k, r, org, wd, cd, ts);
}

#endif
