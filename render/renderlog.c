/* Rendering a trajectory into a log: the pipeline of `sensim render` as one
 * library call. The ground truth is streamed through a window (DESIGN.md:
 * stream, don't slurp), frames are timed by sensim_sampler exactly as inject
 * times a sensor, and every scan or frame is appended as it is made. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sensim/camera.h"
#include "sensim/guard.h"
#include "sensim/lidar.h"
#include "sensim/log.h"
#include "sensim/png.h"
#include "sensim/pointcloud.h"
#include "sensim/render.h"
#include "render_internal.h"
#include "sensim/stitch.h"
#include "../lib/base_internal.h"

sensim_render_log_opts sensim_render_log_default_opts(void)
{
    sensim_render_log_opts o;
    memset(&o, 0, sizeof o);
    o.start = o.end = NAN;
    o.gt_window = 65536;
    o.bev_extent = 40;
    o.bev_size = 512;
    o.bev_color = SENSIM_BEV_HEIGHT;
    return o;
}

/* The datasets of /sensors/NAME. */
typedef struct outsets {
    sensim_log_dset *points, *range, *az, *el, *ch, *ret, *toff, *obj, *refl, *t, *t_sample, *t_sensor, *image;
    sensim_log_dset *depth, *seg; /* a camera's depth and segmentation images */
} outsets;

typedef struct job {
    const sensim_render_sensor *rs;
    const sensim_scene *scene;
    const sensim_render_log_opts *o;
    sensim_log *gt, *out;
    sensim_gt_window *win;
    sensim_gt_track track;
    /* Frame timing: the rig's sensor at the scene's rate, or a bare sensor
     * (no clock error, no lag) when there is no rig. */
    sensim_sensor clock;
    const sensim_sensor *rig; /* NULL: no noise */
    uint64_t seed;
    double t0, t1;   /* the span asked for */
    double span;     /* a scan's period or a frame's exposure, s */
    double qspan;    /* poses are queried over [ts, ts + qspan] for a frame at ts */
    double last;     /* the previous delivery */
    uint64_t nframes;
    uint64_t first, end; /* the frames rendered: [first, end) of the run's */
    uint64_t run_first, run_end; /* the frames asked for, which a shard is part of */
    char grp[96];
    outsets d;
} job;

static void outsets_close(outsets *o)
{
    sensim_log_dset *all[] = {o->points, o->range, o->az,  o->el,       o->ch,       o->ret,  o->toff,
                              o->obj,    o->refl,  o->t,   o->t_sample, o->t_sensor, o->image,
                              o->depth,  o->seg};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        sensim_log_dset_close(all[i]);
    memset(o, 0, sizeof *o);
}

/* One scan or frame: sample k of the sampler starts it at t_sample (stamped
 * t_sensor by the sensor's clock); it reaches a consumer span later than
 * the sample would, never before (or with) the previous one. */
typedef struct frame {
    uint64_t k;
    double t_sample, t_sensor, t;
} frame;

static int next_frame(job *j, sensim_sampler *sp, frame *f)
{
    sensim_sample smp;
    if (!sensim_sampler_next(sp, &smp))
        return 0;
    f->k = smp.k;
    f->t_sample = smp.t;
    f->t_sensor = smp.t_sensor;
    f->t = smp.t_delivery + j->span;
    if (!(f->t > j->last))
        f->t = nextafter(j->last, INFINITY);
    j->last = f->t;
    return 1;
}

/* The next frame of the run, [first, end) of the sampler's: 1 and the
 * frame, or 0 after the last. Those before first are timed (delivery times
 * stay increasing) but not cast or rendered. */
static int next_run_frame(job *j, sensim_sampler *sp, frame *f)
{
    while (sp->k < j->end && next_frame(j, sp, f))
        if (f->k >= j->first)
            return 1;
    return 0;
}

/* The sampler of the frames: the last may end at t1 (to a rounding). */
static void frame_sampler(const job *j, sensim_sampler *sp)
{
    sensim_sampler_init(sp, &j->clock, j->seed, j->t0, j->t1 + 1e-9 - j->span);
}

/* Opens and checks the ground truth at gt_path; the span asked for must lie
 * in it: outside the log there is no pose (the sensor would freeze at an
 * end). */
static sensim_status open_truth(job *j, const char *gt_path)
{
    const sensim_render_log_opts *o = j->o;
    if (!(j->gt = sensim_log_open(gt_path)) || !(j->win = sensim_gt_window_create(j->gt, o->gt_window)))
        return sensim_last_status();
    const double t_first = sensim_gt_window_t_first(j->win), t_last = sensim_gt_window_t_last(j->win);
    const double tol = 1e-9 * fmax(1.0, fmax(fabs(t_first), fabs(t_last)));
    const int bad_start = !isnan(o->start) && (o->start < t_first - tol || o->start > t_last + tol);
    const int bad_end = !isnan(o->end) && (o->end < t_first - tol || o->end > t_last + tol);
    if (bad_start || bad_end)
        return sensim_error(SENSIM_EINVAL,
                            "%s %.9g s is outside the ground truth of %s, which covers t = %.9g .. %.9g s",
                            bad_start ? "start" : "end", bad_start ? o->start : o->end, gt_path, t_first, t_last);
    char what[600];
    snprintf(what, sizeof what, "%s: /ground_truth/t", gt_path);
    sensim_status st = sensim_guard_times(t_first, t_last, sensim_gt_window_rows(j->win), what);
    if (st)
        return st;
    j->t0 = isnan(o->start) ? t_first : o->start;
    j->t1 = isnan(o->end) ? t_last : o->end;
    j->track.gt = j->win;
    j->track.mount = j->rs->mount;
    return SENSIM_OK;
}

/* The rig's sensor of the same name brings the noise and the timing; the
 * scene keeps the optics, the rate and the mount. */
static sensim_status take_rig(job *j, const sensim_rig *rig)
{
    const sensim_render_sensor *rs = j->rs;
    memset(&j->clock, 0, sizeof j->clock);
    j->clock.rate_hz = rs->rate_hz;
    j->clock.mount_orientation = sensim_quat_make(1, 0, 0, 0);
    snprintf(j->clock.name, sizeof j->clock.name, "%s", rs->name);
    if (!rig)
        return SENSIM_OK;
    const char *rp = j->o->rig_path ? j->o->rig_path : "rig", *name = rs->name;
    const sensim_sensor *sr = sensim_rig_find(rig, name);
    if (!sr)
        return sensim_error(SENSIM_ENOTFOUND,
                            "%s: no sensor named '%s' (the rig's sensor of the scene sensor's name gives the noise)",
                            rp, name);
    const int lidar = rs->type == SENSIM_SENSOR_LIDAR;
    int fov = 0;
    if ((lidar && !sensim_lidar_sensor_params(sr)) || (!lidar && !sensim_camera_sensor_params(sr, &fov)))
        return sensim_error(SENSIM_EINVAL, "%s: sensor '%s' is of type %s but the scene's '%s' is a %s", rp, name,
                            sr->type->type, name, lidar ? "lidar" : "camera");
    if (fov)
        return sensim_error(SENSIM_EINVAL,
                            "%s: sensor '%s': key 'lens': the rendered camera's lens comes from the scene; "
                            "drop the rig's lens",
                            rp, name);
    if (sr->rate_hz > 0 && fabs(sr->rate_hz - rs->rate_hz) > 1e-9 * rs->rate_hz)
        return sensim_error(SENSIM_EINVAL, "%s: sensor '%s': rate_hz %g differs from the scene's %g", rp, name,
                            sr->rate_hz, rs->rate_hz);
    j->rig = sr;
    j->clock = *sr;
    j->clock.rate_hz = rs->rate_hz;
    j->seed = j->o->have_seed ? j->o->seed : rig->seed;
    return SENSIM_OK;
}

/* Frames [first, end) of the run's nframes: those asked for, or a shard's
 * part of them. A lidar's noise is indexed by the point's row in the clean
 * log, which a shard would know only by casting every scan before it. */
static sensim_status select_frames(job *j)
{
    const sensim_render_log_opts *o = j->o;
    const int split = o->frames_first || o->frames_end || o->shard_count;
    j->run_first = o->frames_first;
    j->run_end = o->frames_end ? o->frames_end : j->nframes;
    if (!split || j->nframes == 0) { /* none: plan_frames says why */
        j->first = j->run_first;
        j->end = j->run_end;
        return SENSIM_OK;
    }
    const char *what = j->rs->type == SENSIM_SENSOR_LIDAR ? "scans" : "frames";
    if (j->run_first >= j->run_end || j->run_end > j->nframes)
        return sensim_error(SENSIM_EINVAL,
                            "frames %llu..%llu: sensor '%s' has %llu %s (0..%llu) between t = %.9g and %.9g s",
                            (unsigned long long)j->run_first, (unsigned long long)j->run_end - 1, j->rs->name,
                            (unsigned long long)j->nframes, what, (unsigned long long)j->nframes - 1, j->t0, j->t1);
    if (o->shard_count && (o->shard_count < 0 || o->shard_index < 0 || o->shard_index >= o->shard_count))
        return sensim_error(SENSIM_EINVAL, "shard %lld of %lld: need 0 <= index < count", (long long)o->shard_index,
                            (long long)o->shard_count);
    if (j->rig && j->rs->type == SENSIM_SENSOR_LIDAR)
        return sensim_error(SENSIM_EINVAL,
                            "sensor '%s': a lidar rendered with a rig's noise cannot be split into frame ranges (its "
                            "noise is indexed by each point's row in the clean log, which a part cannot know); "
                            "render the parts clean, stitch them, then add the noise with sensim inject",
                            j->rs->name);
    int64_t a = 0, b = (int64_t)(j->run_end - j->run_first);
    if (o->shard_count)
        sensim_shard_split(b, o->shard_count, o->shard_index, &a, &b);
    j->first = j->run_first + (uint64_t)a;
    j->end = j->run_first + (uint64_t)b;
    if (j->first == j->end)
        return sensim_error(SENSIM_EINVAL, "shard %lld of %lld: no %s left for it (%llu %s for %lld shards)",
                            (long long)o->shard_index, (long long)o->shard_count, what,
                            (unsigned long long)(j->run_end - j->run_first), what, (long long)o->shard_count);
    return SENSIM_OK;
}

/* Counts the frames, then estimates the output before anything is written:
 * the ground truth copied and, per scan, every beam's returns (40 bytes a
 * point: points, range, azimuth, elevation, channel, return_index,
 * time_offset, object, reflectivity) or, per frame, the 8-bit image and
 * 4 bytes a pixel for each of the depth and segmentation images. */
static sensim_status plan_frames(job *j, const char *out_path)
{
    const sensim_render_sensor *rs = j->rs;
    const int lidar = rs->type == SENSIM_SENSOR_LIDAR;
    j->span = lidar ? 1.0 / rs->rate_hz : rs->camera.exposure;
    const uint64_t count = j->o->count ? j->o->count : UINT64_MAX;
    sensim_sampler sp;
    frame f;
    frame_sampler(j, &sp);
    for (j->nframes = 0; j->nframes < count && next_frame(j, &sp, &f);)
        j->nframes++;
    j->last = -INFINITY;
    sensim_status st = select_frames(j);
    if (st)
        return st;
    char what[600];
    const double per = lidar ? (double)rs->lidar.channels * rs->lidar.columns *
                                   (rs->lidar.returns == SENSIM_RETURN_DUAL ? 2 : 1) * 40.0
                             : (double)rs->camera.width * rs->camera.height *
                                   (3.0 + 4.0 * (rs->camera.depth != SENSIM_RENDER_DEPTH_NONE) +
                                    4.0 * (rs->camera.segmentation != 0));
    const uint64_t nout = j->end - j->first;
    snprintf(what, sizeof what, "sensor '%s': %.3g %s (%g Hz over %.6g s) of up to %.3g bytes each", rs->name,
             (double)nout, lidar ? "scans" : "frames", rs->rate_hz, j->t1 - j->t0, per);
    st = sensim_guard_output(out_path, (double)nout * per + (double)sensim_gt_window_rows(j->win) * 17 * 8, what);
    if (st)
        return st;
    if (j->nframes == 0)
        return sensim_error(SENSIM_EINVAL, "%s: no whole %s fits between t = %g and %g s", sensim_log_path(j->gt),
                            lidar ? "scan" : "frame", j->t0, j->t1);
    if (j->o->bev_dir && !lidar)
        return sensim_error(SENSIM_EINVAL, "bird's-eye view: '%s' is a camera; it needs a lidar", rs->name);
    const char *dirs[3] = {j->o->ply_dir, j->o->png_dir, j->o->bev_dir};
    for (int d = 0; d < 3; d++)
        if (dirs[d] && mkdir(dirs[d], 0777) && errno != EEXIST)
            return sensim_error(SENSIM_EIO, "%s: cannot create directory: %s", dirs[d], strerror(errno));
    return SENSIM_OK;
}

/* Creates dataset NAME of the sensor's group, appended to frame by frame. */
static sensim_status add_dset(job *j, sensim_log_dset **d, const char *name, sensim_dtype type, int ntail,
                              const size_t *tail, const char *units)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", j->grp, name);
    return (*d = sensim_log_dset_create(j->out, path, type, ntail, tail, units, 0)) ? SENSIM_OK : sensim_last_status();
}

/* A part of the run records itself as a shard of kind "rows" (sensim/stitch.h):
 * frames [first, end) of [run_first, run_end), the ground truth whole. */
static sensim_status tag_shard(job *j)
{
    const sensim_render_log_opts *o = j->o;
    if (!o->frames_first && !o->frames_end && !o->shard_count)
        return SENSIM_OK;
    const int64_t sh[2] = {o->shard_count ? o->shard_index : 0, o->shard_count ? o->shard_count : 1},
                  rg[2] = {(int64_t)j->first, (int64_t)j->end}, total = (int64_t)j->run_end;
    sensim_status st;
    if ((st = sensim_log_set_attr_string(j->out, "/", "shard_kind", "rows")) ||
        (st = sensim_log_set_attr_i64(j->out, "/", "shard", sh, 2)) ||
        (st = sensim_log_set_attr_i64(j->out, "/", "shard_range", rg, 2)) ||
        (st = sensim_log_set_attr_i64(j->out, "/", "shard_total", &total, 1)))
        return st;
    return sensim_log_set_attr_string(j->out, "/", "shard_shared", "/ground_truth");
}

/* The output log: the ground truth copied, the sensor's group and its
 * attributes, the per-frame time datasets. */
static sensim_status open_output(job *j, const char *out_path)
{
    const sensim_render_sensor *rs = j->rs;
    const sensim_render_log_opts *o = j->o;
    if (!(j->out = sensim_log_create(out_path, o->created_by ? o->created_by : "sensim render")))
        return sensim_last_status();
    sensim_log *L = j->out;
    snprintf(j->grp, sizeof j->grp, "/sensors/%s", rs->name);
    double mount[7] = {rs->mount.p.x, rs->mount.p.y, rs->mount.p.z, rs->mount.q.w,
                       rs->mount.q.x, rs->mount.q.y, rs->mount.q.z};
    int64_t seed = (int64_t)rs->seed, nseed = (int64_t)j->seed;
    sensim_status st;
    if ((st = sensim_log_copy(L, j->gt, "/ground_truth")) || (st = sensim_log_group(L, j->grp)) ||
        (st = sensim_log_set_attr_string(L, j->grp, "type", rs->type == SENSIM_SENSOR_LIDAR ? "lidar" : "camera")) ||
        (st = sensim_log_set_attr_f64(L, j->grp, "rate_hz", &rs->rate_hz, 1)) ||
        (st = sensim_log_set_attr_f64(L, j->grp, "mount", mount, 7)) ||
        (st = sensim_log_set_attr_i64(L, j->grp, "seed", &seed, 1)) ||
        (o->scene_path && (st = sensim_log_set_attr_string(L, j->grp, "scene", o->scene_path))) ||
        (st = add_dset(j, &j->d.t, "t", SENSIM_F64, 0, NULL, "s")) ||
        (st = add_dset(j, &j->d.t_sample, "t_sample", SENSIM_F64, 0, NULL, "s")) ||
        (st = add_dset(j, &j->d.t_sensor, "t_sensor", SENSIM_F64, 0, NULL, "s")))
        return st;
    if (j->rig && ((st = sensim_log_set_attr_string(L, j->grp, "noise_rig", o->rig_path ? o->rig_path : "rig")) ||
                   (st = sensim_log_set_attr_i64(L, j->grp, "noise_seed", &nseed, 1))))
        return st;
    return tag_shard(j);
}

/* Slack around a frame's query span so that rounding in the renderers'
 * time arithmetic never leaves the window (a wider window changes nothing). */
static double qpad(double t) { return 1e-9 * (1 + fabs(t)); }

/* The frame's times appended, and its poses made available. */
static sensim_status frame_begin(job *j, const frame *f)
{
    return sensim_gt_window_cover(j->win, f->t_sample - qpad(f->t_sample), f->t_sample + j->qspan + qpad(f->t_sample));
}

static sensim_status frame_times(job *j, const frame *f)
{
    sensim_status st;
    if ((st = sensim_log_dset_append(j->d.t, &f->t, 1)) || (st = sensim_log_dset_append(j->d.t_sample, &f->t_sample, 1)))
        return st;
    return sensim_log_dset_append(j->d.t_sensor, &f->t_sensor, 1);
}

static void frame_progress(const job *j, const char *part, uint64_t k)
{
    if (j->o->progress)
        j->o->progress(j->o->progress_ctx, part, (double)(k + 1 - j->first) / (double)(j->end - j->first));
}

/* DIR/NAME_NNNNN.EXT */
static void frame_file(char *buf, size_t size, const char *dir, const char *name, uint64_t k, const char *ext)
{
    snprintf(buf, size, "%s/%s_%05llu.%s", dir, name, (unsigned long long)k, ext);
}

/* The bird's-eye view of one scan as an 8-bit RGB PNG (written atomically
 * by sensim_png_write): height over -2..4 m, or intensity over 0..the
 * scan's largest. */
static sensim_status write_bev(const char *path, const sensim_render_lidar_points *pt, double extent, int size,
                               sensim_bev_color by, uint8_t *rgb)
{
    double lo = -2, hi = 4;
    if (by == SENSIM_BEV_INTENSITY) {
        lo = 0;
        hi = 0;
        for (size_t i = 0; i < pt->count; i++)
            if (pt->xyzi[4 * i + 3] > hi)
                hi = pt->xyzi[4 * i + 3];
        if (!(hi > 0))
            hi = 1;
    }
    sensim_status st = sensim_render_bev(pt->xyzi, pt->count, extent, size, by, lo, hi, rgb, NULL);
    if (st)
        return st;
    sensim_image_info info = {(size_t)size, (size_t)size, 3, 8};
    return sensim_png_write(path, &info, rgb);
}

/* What a lidar run holds beyond the job. */
typedef struct lidar_run {
    sensim_render_lidar *lidar;
    sensim_render_lidar_points *pts;
    sensim_lidar *noise;          /* NULL: clean */
    uint8_t *keep, *refl, *bev;   /* noise scratch, reflectivity, bird's-eye view */
    uint64_t *scan_offset;        /* [nframes + 1] */
    uint64_t clean_rows;          /* the rows a log of clean scans would have: the noise index */
} lidar_run;

static void lidar_run_free(lidar_run *r)
{
    sensim_render_lidar_points_destroy(r->pts);
    sensim_render_lidar_destroy(r->lidar);
    sensim_lidar_destroy(r->noise);
    SENSIM_FREE_ALL(r->keep, r->refl, r->bev, r->scan_offset);
}

static sensim_status lidar_setup(job *j, lidar_run *r)
{
    const sensim_render_lidar_params *p = &j->rs->lidar;
    sensim_render_lidar_params lp = *p;
    lp.backend = j->o->backend;
    sensim_status st;
    if (!(r->lidar = sensim_render_lidar_create(&lp)) || !(r->pts = sensim_render_lidar_points_create(r->lidar)))
        return sensim_last_status();
    /* A scan's beams fire from its start to the last column's latest
     * channel (render/lidar.c casts each from the pose at that time). */
    for (int k = 0; k < p->channels; k++) {
        double f = sensim_render_lidar_fire_time(r->lidar, p->columns - 1, k);
        if (f > j->qspan)
            j->qspan = f;
    }
    const size_t maxp = sensim_render_lidar_max_points(r->lidar);
    if (j->rig && !(r->noise = sensim_lidar_create(sensim_lidar_sensor_params(j->rig), j->seed, j->rig->id)))
        return sensim_last_status();
    r->keep = j->rig ? malloc(maxp) : NULL;
    r->refl = malloc(maxp);
    r->scan_offset = calloc(j->end - j->first + 1, sizeof *r->scan_offset);
    if (!r->refl || !r->scan_offset || (j->rig && !r->keep))
        return sensim_error(SENSIM_ENOMEM, "out of memory for scans of %zu points", maxp);
    if (j->o->bev_dir && !(r->bev = malloc((size_t)j->o->bev_size * j->o->bev_size * 3)))
        return sensim_error(SENSIM_ENOMEM, "out of memory for a %dx%d view", j->o->bev_size, j->o->bev_size);
    size_t four = 4;
    if ((st = add_dset(j, &j->d.points, "points", SENSIM_F32, 1, &four, "m")) ||
        (st = add_dset(j, &j->d.range, "range", SENSIM_F32, 0, NULL, "m")) ||
        (st = add_dset(j, &j->d.az, "azimuth", SENSIM_F32, 0, NULL, "rad")) ||
        (st = add_dset(j, &j->d.el, "elevation", SENSIM_F32, 0, NULL, "rad")) ||
        (st = add_dset(j, &j->d.ch, "channel", SENSIM_U16, 0, NULL, "")) ||
        (st = add_dset(j, &j->d.ret, "return_index", SENSIM_U8, 0, NULL, "")) ||
        (st = add_dset(j, &j->d.toff, "time_offset", SENSIM_F32, 0, NULL, "s")) ||
        (st = add_dset(j, &j->d.obj, "object", SENSIM_U32, 0, NULL, "")))
        return st;
    return add_dset(j, &j->d.refl, "reflectivity", SENSIM_U8, 0, NULL, "");
}

/* One scan's points appended (after the noise), with the calibrated
 * reflectivity from the intensity and range the sensor measured. */
static sensim_status lidar_append(job *j, lidar_run *r)
{
    const sensim_render_lidar_points *pt = r->pts;
    for (size_t i = 0; i < pt->count; i++)
        r->refl[i] = sensim_render_lidar_reflectivity(r->lidar, pt->xyzi[4 * i + 3], pt->range[i]);
    const outsets *d = &j->d;
    sensim_status st;
    if ((st = sensim_log_dset_append(d->points, pt->xyzi, pt->count)) ||
        (st = sensim_log_dset_append(d->range, pt->range, pt->count)) ||
        (st = sensim_log_dset_append(d->az, pt->azimuth, pt->count)) ||
        (st = sensim_log_dset_append(d->el, pt->elevation, pt->count)) ||
        (st = sensim_log_dset_append(d->ch, pt->channel, pt->count)) ||
        (st = sensim_log_dset_append(d->ret, pt->return_index, pt->count)) ||
        (st = sensim_log_dset_append(d->toff, pt->time_offset, pt->count)) ||
        (st = sensim_log_dset_append(d->obj, pt->object, pt->count)))
        return st;
    return sensim_log_dset_append(d->refl, r->refl, pt->count);
}

static sensim_status lidar_frame(job *j, lidar_run *r, const frame *f)
{
    const sensim_render_log_opts *o = j->o;
    sensim_status st;
    if ((st = frame_begin(j, f)) ||
        (st = sensim_render_lidar_scan(r->lidar, j->scene, sensim_gt_track_eval, &j->track, f->t_sample, f->k,
                                       r->pts)))
        return st;
    if (r->noise) {
        size_t clean = r->pts->count;
        if ((st = sensim_render_lidar_points_noise(r->pts, r->noise, r->clean_rows, r->keep, NULL)))
            return st;
        r->clean_rows += clean;
    }
    if ((st = lidar_append(j, r)) || (st = frame_times(j, f)))
        return st;
    const uint64_t i = f->k - j->first;
    r->scan_offset[i + 1] = r->scan_offset[i] + r->pts->count;
    char file[4096];
    if (o->ply_dir) {
        frame_file(file, sizeof file, o->ply_dir, j->rs->name, f->k, "ply");
        /* Ring, time, return index and reflectivity beside x, y, z,
         * intensity, as the HDF5 log has them (r->refl: lidar_append). */
        sensim_cloud_fields fl = {r->pts->channel, r->pts->time_offset, r->pts->return_index, r->refl};
        if ((st = sensim_cloud_write_fields(file, SENSIM_CLOUD_PLY_BINARY, r->pts->xyzi, &fl, r->pts->count)))
            return st;
    }
    if (o->bev_dir) {
        frame_file(file, sizeof file, o->bev_dir, j->rs->name, f->k, "png");
        if ((st = write_bev(file, r->pts, o->bev_extent, o->bev_size, o->bev_color, r->bev)))
            return st;
    }
    return SENSIM_OK;
}

static sensim_status render_lidar(job *j)
{
    lidar_run r;
    memset(&r, 0, sizeof r);
    sensim_status st = lidar_setup(j, &r);
    sensim_sampler sp;
    frame f;
    frame_sampler(j, &sp);
    while (!st && next_run_frame(j, &sp, &f)) {
        st = lidar_frame(j, &r, &f);
        frame_progress(j, "scans", f.k);
    }
    if (!st) {
        char path[160];
        snprintf(path, sizeof path, "%s/scan_offset", j->grp);
        st = sensim_log_write(j->out, path, SENSIM_U64, j->end - j->first + 1, 0, NULL, r.scan_offset, "");
    }
    lidar_run_free(&r);
    return st;
}

/* Camera frames: samples cast at random times in the exposure (motion
 * blur); with a rig, noise on the linear intensity before the sRGB
 * encoding, as a sensor adds it (EMVA 1288 is linear in photons). */
static sensim_status render_camera(job *j)
{
    const sensim_render_camera_params *p = &j->rs->camera;
    const size_t W = (size_t)p->width, H = (size_t)p->height, tail[3] = {H, W, 3};
    const sensim_render_log_opts *o = j->o;
    sensim_render_camera_params cp0 = *p;
    cp0.backend = o->backend;
    sensim_render_camera *cam = sensim_render_camera_create(&cp0);
    sensim_camera *noise = NULL;
    float *img = malloc(W * H * 3 * sizeof *img);
    uint8_t *img8 = malloc(W * H * 3);
    float *depth = p->depth != SENSIM_RENDER_DEPTH_NONE ? malloc(W * H * sizeof *depth) : NULL;
    uint32_t *seg = p->segmentation ? malloc(W * H * sizeof *seg) : NULL;
    sensim_status st = cam ? SENSIM_OK : sensim_last_status();
    if (!st && (!img || !img8 || (p->depth != SENSIM_RENDER_DEPTH_NONE && !depth) || (p->segmentation && !seg)))
        st = sensim_error(SENSIM_ENOMEM, "out of memory for a %zux%zu image", W, H);
    if (!st && j->rig) {
        sensim_camera_params cp = *sensim_camera_sensor_params(j->rig, NULL);
        cp.width = W;
        cp.height = H;
        cp.channels = 3;
        if (!(noise = sensim_camera_create(&cp, j->seed, j->rig->id)))
            st = sensim_last_status();
    }
    if (!st)
        st = add_dset(j, &j->d.image, "image", o->as_float ? SENSIM_F32 : SENSIM_U8, 3, tail,
                      o->as_float ? "1" : "sRGB");
    if (!st && depth)
        st = add_dset(j, &j->d.depth, "depth", SENSIM_F32, 2, tail, "m");
    if (!st && seg)
        st = add_dset(j, &j->d.seg, "segmentation", SENSIM_U32, 2, tail, "1");
    j->qspan = p->exposure;
    sensim_sampler sp;
    frame f;
    frame_sampler(j, &sp);
    while (!st && next_run_frame(j, &sp, &f)) {
        if ((st = frame_begin(j, &f)) ||
            (st = sensim_render_camera_render_images(cam, j->scene, sensim_gt_track_eval, &j->track, f.t_sample, f.k,
                                                     img, depth, seg)) ||
            (noise && (st = sensim_camera_apply(noise, f.k, SENSIM_PIXEL_F32, img, img))))
            break;
        sensim_image_to_u8(img, W * H * 3, img8);
        if ((st = sensim_log_dset_append(j->d.image, o->as_float ? (void *)img : (void *)img8, 1)) ||
            (depth && (st = sensim_log_dset_append(j->d.depth, depth, 1))) ||
            (seg && (st = sensim_log_dset_append(j->d.seg, seg, 1))) || (st = frame_times(j, &f)))
            break;
        if (o->png_dir) {
            char file[4096];
            frame_file(file, sizeof file, o->png_dir, j->rs->name, f.k, "png");
            sensim_image_info info = {W, H, 3, 8};
            if ((st = sensim_png_write(file, &info, img8)))
                break;
        }
        frame_progress(j, "frames", f.k);
    }
    free(img);
    free(img8);
    free(depth);
    free(seg);
    sensim_camera_destroy(noise);
    sensim_render_camera_destroy(cam);
    return st;
}

sensim_status sensim_render_log(const sensim_render_sensor *sensor, const sensim_scene *scene, const sensim_rig *rig,
                                const sensim_render_log_opts *opts, const char *gt_path, const char *out_path)
{
    if (!sensor || !scene || !opts || !gt_path || !out_path)
        return sensim_error(SENSIM_EINVAL, "sensim_render_log: sensor, scene, opts and both paths are required");
    if (opts->gt_window < 2)
        return sensim_error(SENSIM_EINVAL, "gt_window: need at least 2 rows, got %zu", opts->gt_window);
    sensim_status bst = sensim_scene_backend_check(scene, opts->backend, "render");
    if (bst)
        return bst;
    job j;
    memset(&j, 0, sizeof j);
    j.rs = sensor;
    j.scene = scene;
    j.o = opts;
    j.last = -INFINITY;
    sensim_status st;
    if (!(st = open_truth(&j, gt_path)) && !(st = take_rig(&j, rig)) && !(st = plan_frames(&j, out_path)) &&
        !(st = open_output(&j, out_path)))
        st = sensor->type == SENSIM_SENSOR_LIDAR ? render_lidar(&j) : render_camera(&j);
    outsets_close(&j.d);
    if (!st) {
        st = sensim_log_commit(j.out);
        j.out = NULL; /* committed or discarded by the commit */
    }
    sensim_log_close(j.out);
    sensim_gt_window_destroy(j.win);
    sensim_log_close(j.gt);
    return st;
}
