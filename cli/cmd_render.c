/* sensim render: lidar scans or camera frames of a scene along a trajectory. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
#include "cli_gt.h"
#include "sensim/guard.h"
#include "sensim/log.h"
#include "sensim/png.h"
#include "sensim/camera.h"
#include "sensim/lidar.h"
#include "sensim/pointcloud.h"
#include "sensim/rig.h"
#include "sensim/render.h"

static const cli_opt cmd_render_opts[] = {
    {'t', "trajectory", "GT.h5", "ground-truth log (required)"},
    {'s', "sensor", "NAME", "sensor to render (required)"},
    {'o', "output", "OUT.h5", "output log (required; written atomically)"},
    {CLI_NOSHORT('P'), "ply", "DIR", "also write each scan as DIR/NAME_NNNNN.ply"},
    {CLI_NOSHORT('G'), "png", "DIR", "also write each frame as DIR/NAME_NNNNN.png"},
    {CLI_NOSHORT('S'), "start", "T", "first scan/frame time, s (default: trajectory start)"},
    {CLI_NOSHORT('E'), "end", "T", "no scan/frame ends after T, s (default: trajectory end)"},
    {'n', "count", "N", "at most N scans/frames"},
    {CLI_NOSHORT('B'), "bev", "DIR", "also write a bird's-eye view of each scan as\n"
                                     "DIR/NAME_NNNNN.png (top-down, +x up the image)"},
    {CLI_NOSHORT('X'), "bev-extent", "M", "half-width of the view, m (default 40)"},
    {CLI_NOSHORT('Z'), "bev-size", "PX", "view side in pixels (default 512)"},
    {CLI_NOSHORT('C'), "bev-color", "WHAT", "height (default; -2..4 m in the sensor frame) or\n"
                                            "intensity (0..the scan's largest)"},
    {CLI_NOSHORT('F'), "float", NULL, "camera images as linear f32 instead of sRGB u8"},
    {'j', "threads", "N", "OpenMP threads (default: all; output is identical)"},
    {CLI_NOSHORT('W'), "gt-window", "ROWS", "ground-truth rows held in memory at a time (default\n"
                                            "65536, at least 2; grows to one frame's rows if a\n"
                                            "frame needs more); the output does not depend on it"},
    {CLI_NOSHORT('R'), "rig", "RIG.yaml", "noise and timing from the sensor of the same NAME\n"
                                          "in the rig file of sensim inject (type lidar or\n"
                                          "camera; its noise:, dropout: and timing: keys,\n"
                                          "drawn from the rig's seed exactly as inject\n"
                                          "would on the clean log)"},
    {CLI_NOSHORT('D'), "seed", "N", "seed of the rig's noise (default: the rig's)"},
    {'q', "quiet", NULL, "no progress (shown on stderr only when it is a\n"
                         "terminal)"},
    {'h', "help", NULL, "this text"},
    {0}};

const cli_spec cmd_render_spec = {
    .verb = "render",
    .head = "usage: sensim render SCENE.yaml --trajectory GT.h5 --sensor NAME -o OUT.h5\n"
            "                     [--ply DIR] [--png DIR] [--start T] [--end T] [--count N]\n"
            "                     [--float] [--threads N] [--rig RIG.yaml [--seed N]]\n"
            "                     [--gt-window ROWS]\n"
            "                     [--bev DIR [--bev-extent M] [--bev-size PX] [--bev-color WHAT]]\n"
            "\n"
            "Renders the lidar or camera NAME defined under 'sensors:' in SCENE.yaml\n"
            "along the ground truth of GT.h5 (the body pose; the sensor's mount is\n"
            "applied). Each lidar beam and each camera sample is cast from the pose at\n"
            "its own time, so motion distorts scans and blurs frames as in a real\n"
            "sensor. OUT.h5 receives /ground_truth (copied) and /sensors/NAME in the\n"
            "layout of sensim(1): points, range, azimuth, elevation, channel,\n"
            "return_index, time_offset, object, scan_offset, and t, t_sample and\n"
            "t_sensor per scan for a lidar; image [N,H,W,3], t, t_sample and t_sensor for a camera.\n"
            "t is the delivery time (the end of the scan or exposure plus the lag),\n"
            "t_sample the true time the scan or exposure began, t_sensor the sensor\n"
            "clock's stamp of it. A lidar's object (u32 per point) is the scene object\n"
            "the return hit: its place in the scene's objects: list counted from 0 (an\n"
            "entry with repeat: {count: n} takes n numbers), 4294967295 for a return\n"
            "from the air.\n"
            "Without --rig the data are noise-free and the lag is zero.\n"
            "\n",
    .opts = cmd_render_opts,
    .column = 26,
};

/* The bird's-eye view of one scan as an 8-bit RGB PNG (written atomically
 * by sensim_png_write). */
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

/* When scans and frames start and when they are delivered. Without a rig
 * sensor: every 1/rate from t0, delivered at the end of the scan or exposure.
 * With one: its timing (clock offset and drift, start delay; lag and jitter
 * on delivery, kept in order) as sensim inject applies it, on the scene
 * sensor's rate. The scan's t_sample is when it began (its points add
 * time_offset), t the delivery, t_sensor the sensor clock's stamp. */
typedef struct frame_clock {
    const sensim_sensor *rig; /* NULL: no timing */
    sensim_sensor local;      /* the rig sensor at the scene's rate */
    uint64_t seed;
    double t0, period, span, last;
} frame_clock;

static double frame_start(const frame_clock *fc, uint64_t k)
{
    return fc->rig ? sensim_sensor_sample_time(&fc->local, fc->t0, k) : fc->t0 + k * fc->period;
}

/* Delivery keeps order: a scan never overtakes the previous one (as
 * sensim_sampler_next). */
static double frame_delivery(frame_clock *fc, uint64_t k, double start)
{
    double d = fc->rig ? sensim_sensor_delivery_time(&fc->local, fc->seed, k, start + fc->span) : start + fc->span;
    if (!(d > fc->last))
        d = nextafter(fc->last, INFINITY);
    fc->last = d;
    return d;
}

/* The sensor clock's stamp of a scan or frame that began at true time t. */
static double frame_stamp(const frame_clock *fc, double t)
{
    return fc->rig ? sensim_sensor_clock(&fc->local, t) : t;
}

/* The ground truth as a window of rows (DESIGN.md: stream, don't slurp):
 * a pose track over rows [r0, r0 + n) of /ground_truth, rebuilt when a
 * frame's poses leave it, so memory does not grow with the log's length.
 * The track interpolates between the two rows bracketing a time and clamps
 * at its ends; a window holding a row strictly before a frame's first query
 * (or the log's first row) and one strictly after its last (or the log's
 * last) brackets every query by the same two rows as the whole log would,
 * so the poses are bit-identical. sensim_gt_check has validated every row
 * (increasing t, finite values, unit quaternions) before the first window. */
typedef struct gt_window {
    const sensim_log *log;
    const sensim_pose *mount;
    size_t rows, cap; /* rows in the log; rows a window holds (at least one frame's) */
    size_t r0, n;     /* the window */
    double *t, *p, *q;
    sensim_pose_track *track;
} gt_window;

static void gt_window_free(gt_window *w)
{
    sensim_pose_track_destroy(w->track);
    free(w->t);
    free(w->p);
    free(w->q);
    memset(w, 0, sizeof *w);
}

/* The first row whose t exceeds x (strict: t > x) or reaches it (t >= x),
 * or rows when none does: a binary search reading single values of t. */
static sensim_status gt_search(const gt_window *w, double x, int strict, size_t *out)
{
    size_t lo = 0, hi = w->rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        double v;
        sensim_status st = sensim_log_read_f64(w->log, "/ground_truth/t", mid, 1, &v);
        if (st)
            return st;
        if (strict ? v <= x : v < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    *out = lo;
    return SENSIM_OK;
}

/* Makes the window's track answer every time in [tmin, tmax] as the whole
 * log's track would; loads a new window (starting one row before tmin) only
 * when the current one does not. */
static sensim_status gt_window_cover(gt_window *w, double tmin, double tmax)
{
    if (w->track && (w->r0 == 0 || w->t[0] < tmin) && (w->r0 + w->n == w->rows || w->t[w->n - 1] > tmax))
        return SENSIM_OK;
    size_t a, b;
    sensim_status st;
    if ((st = gt_search(w, tmin, 0, &a)) || (st = gt_search(w, tmax, 1, &b)))
        return st;
    a = a > 0 ? a - 1 : 0;          /* the last row before tmin */
    b = b < w->rows ? b : w->rows - 1; /* the first row after tmax */
    if (b < a + w->cap - 1)
        b = a + w->cap - 1 < w->rows - 1 ? a + w->cap - 1 : w->rows - 1;
    size_t n = b - a + 1;
    sensim_pose_track_destroy(w->track);
    w->track = NULL;
    if (n > w->cap || !w->t) {
        /* A frame longer than the window: hold that frame's rows. */
        size_t cap = n > w->cap ? n : w->cap;
        double *t = realloc(w->t, cap * sizeof *t), *p, *q;
        if (t)
            w->t = t;
        p = t ? realloc(w->p, 3 * cap * sizeof *p) : NULL;
        if (p)
            w->p = p;
        q = p ? realloc(w->q, 4 * cap * sizeof *q) : NULL;
        if (!q)
            return sensim_error(SENSIM_ENOMEM, "%s: out of memory for %zu ground-truth rows",
                                sensim_log_path(w->log), cap);
        w->q = q;
        w->cap = cap;
    }
    if ((st = sensim_log_read_f64(w->log, "/ground_truth/t", a, n, w->t)) ||
        (st = sensim_log_read_f64(w->log, "/ground_truth/position", a, n, w->p)) ||
        (st = sensim_log_read_f64(w->log, "/ground_truth/orientation", a, n, w->q)))
        return st;
    if (!(w->track = sensim_pose_track_create(w->t, w->p, w->q, n, w->mount))) {
        char why[256];
        snprintf(why, sizeof why, "%s", sensim_last_error());
        return sensim_error(SENSIM_EDATA, "%s: /ground_truth rows %zu..%zu: %s", sensim_log_path(w->log), a, b, why);
    }
    w->r0 = a;
    w->n = n;
    return SENSIM_OK;
}

/* Slack around a frame's query span so that rounding in the renderers'
 * time arithmetic never leaves the window (a wider window changes nothing). */
static double qpad(double t) { return 1e-9 * (1 + fabs(t)); }

/* The calibrated reflectivity of a scan's points (after the noise, from the
 * intensity and range the sensor measured). */
static const uint8_t *fill_reflectivity(const sensim_render_lidar *l, const sensim_render_lidar_points *pt,
                                        uint8_t *out)
{
    for (size_t i = 0; i < pt->count; i++)
        out[i] = sensim_render_lidar_reflectivity(l, pt->xyzi[4 * i + 3], pt->range[i]);
    return out;
}

static int ensure_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST)
        return 0;
    return -1;
}

typedef struct {
    sensim_log *log;
    sensim_log_dset *points, *range, *az, *el, *ch, *ret, *toff, *obj, *refl, *t, *t_sample, *t_sensor, *image;
    uint64_t npoints;
} outsets;

static void outsets_close(outsets *o)
{
    sensim_log_dset_close(o->points);
    sensim_log_dset_close(o->range);
    sensim_log_dset_close(o->az);
    sensim_log_dset_close(o->el);
    sensim_log_dset_close(o->ch);
    sensim_log_dset_close(o->ret);
    sensim_log_dset_close(o->toff);
    sensim_log_dset_close(o->obj);
    sensim_log_dset_close(o->refl);
    sensim_log_dset_close(o->t);
    sensim_log_dset_close(o->t_sample);
    sensim_log_dset_close(o->t_sensor);
    sensim_log_dset_close(o->image);
}

int cmd_render(int argc, char **argv)
{
    const char *gt_path = NULL, *name = NULL, *out_path = NULL, *ply_dir = NULL, *png_dir = NULL;
    double t_start = NAN, t_end = NAN;
    unsigned long long count = ~0ull, threads = 0;
    int as_float = 0, c;
    const char *bev_dir = NULL, *rig_path = NULL;
    unsigned long long noise_seed = 0;
    int have_seed = 0, quiet = 0;
    double bev_extent = 40;
    unsigned long long bev_size = 512;
    unsigned long long gt_window_rows = 65536;
    sensim_bev_color bev_by = SENSIM_BEV_HEIGHT;
    cli_parser op;
    cli_parse_begin(&op, &cmd_render_spec, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case 't': gt_path = optarg; break;
        case 's': name = optarg; break;
        case 'o': out_path = optarg; break;
        case 'P': ply_dir = optarg; break;
        case 'G': png_dir = optarg; break;
        case 'F': as_float = 1; break;
        case 'B': bev_dir = optarg; break;
        case 'R': rig_path = optarg; break;
        case 'D':
            if (cli_parse_u64(optarg, &noise_seed))
                return cli_usage_error("render", "--seed: need a non-negative integer, got '%s'", optarg);
            have_seed = 1;
            break;
        case 'X':
            if (cli_parse_double(optarg, &bev_extent) || !(bev_extent > 0) || !isfinite(bev_extent))
                return cli_usage_error("render", "--bev-extent: need a positive number of metres, got '%s'", optarg);
            break;
        case 'Z':
            if (cli_parse_u64(optarg, &bev_size) || bev_size == 0 || bev_size > 16384)
                return cli_usage_error("render", "--bev-size: need 1..16384 pixels, got '%s'", optarg);
            break;
        case 'C':
            if (!strcmp(optarg, "height"))
                bev_by = SENSIM_BEV_HEIGHT;
            else if (!strcmp(optarg, "intensity"))
                bev_by = SENSIM_BEV_INTENSITY;
            else
                return cli_usage_error("render", "--bev-color: height or intensity, got '%s'", optarg);
            break;
        case 'W':
            if (cli_parse_u64(optarg, &gt_window_rows) || gt_window_rows < 2 || gt_window_rows > ((size_t)1 << 40))
                return cli_usage_error("render", "--gt-window: need at least 2 rows, got '%s'", optarg);
            break;
        case 'S':
            if (cli_parse_double(optarg, &t_start))
                return cli_usage_error("render", "--start: not a number: '%s'", optarg);
            break;
        case 'E':
            if (cli_parse_double(optarg, &t_end))
                return cli_usage_error("render", "--end: not a number: '%s'", optarg);
            break;
        case 'n':
            if (cli_parse_u64(optarg, &count) || count == 0)
                return cli_usage_error("render", "--count: need a positive integer, got '%s'", optarg);
            break;
        case 'j':
            if (cli_parse_u64(optarg, &threads) || threads == 0 || threads > 1024)
                return cli_usage_error("render", "--threads: need 1..1024, got '%s'", optarg);
            break;
        case 'q': quiet = 1; break;
        }
    }
    if (c)
        return cli_parse_exit(c);
    if (optind != argc - 1)
        return cli_usage_error("render", "need exactly one SCENE.yaml");
    if (!gt_path || !name || !out_path)
        return cli_usage_error("render", "--trajectory, --sensor and -o are required");
    if (have_seed && !rig_path)
        return cli_usage_error("render", "--seed sets the seed of --rig's noise; give --rig");
    const char *scene_path = argv[optind];
    if (cli_check_output("render", out_path, scene_path, gt_path, rig_path ? rig_path : "", NULL))
        return CLI_FAIL;
    if (threads)
        omp_set_num_threads((int)threads);

    int rc = CLI_FAIL;
    sensim_render_sensor rs;
    sensim_scene *scene = NULL;
    sensim_log *gt = NULL;
    gt_window win;
    memset(&win, 0, sizeof win);
    sensim_render_lidar *lidar = NULL;
    sensim_render_lidar_points *pts = NULL;
    sensim_render_camera *cam = NULL;
    float *img = NULL;
    uint8_t *img8 = NULL, *bev = NULL;
    uint64_t *scan_offset = NULL;
    sensim_rig *rig = NULL;
    sensim_lidar *lnoise = NULL;
    sensim_camera *cnoise = NULL;
    uint8_t *keep = NULL, *refl = NULL;
    frame_clock fc;
    memset(&fc, 0, sizeof fc);
    outsets o;
    memset(&o, 0, sizeof o);
    char *created = NULL;

    if (sensim_render_sensor_load(scene_path, name, &rs) || !(scene = sensim_scene_load(scene_path)))
        goto lib_fail;
    /* The scene summary: zero-area triangles dropped from its meshes. */
    for (size_t i = 0; i < sensim_scene_mesh_count(scene); i++) {
        size_t nd = sensim_scene_mesh_dropped(scene, (int)i), nt = 0;
        sensim_scene_mesh_info(scene, (int)i, NULL, &nt, NULL, NULL);
        if (nd)
            fprintf(stderr, "sensim render: %s: mesh '%s': dropped %zu degenerate (zero-area) triangle%s, %zu kept\n",
                    scene_path, sensim_scene_mesh_name(scene, (int)i), nd, nd == 1 ? "" : "s", nt);
    }
    /* Ground truth: checked whole (streamed), then read a window of rows at
     * a time (gt_window). */
    size_t n;
    double origin[3], t_first, t_last;
    if (!(gt = sensim_log_open(gt_path)) || sensim_gt_check(gt, &n, origin) ||
        sensim_log_read_f64(gt, "/ground_truth/t", 0, 1, &t_first) ||
        sensim_log_read_f64(gt, "/ground_truth/t", n - 1, 1, &t_last))
        goto lib_fail;
    win.log = gt;
    win.mount = &rs.mount;
    win.rows = n;
    win.cap = gt_window_rows < n ? (size_t)gt_window_rows : n; /* no more than the log */
    /* Outside the log there is no pose: the sensor would freeze at an end
     * pose, so a window reaching out of it is refused. */
    const double tol = 1e-9 * fmax(1.0, fmax(fabs(t_first), fabs(t_last)));
    const char *opt_bad = !isnan(t_start) && (t_start < t_first - tol || t_start > t_last + tol) ? "--start"
                          : !isnan(t_end) && (t_end < t_first - tol || t_end > t_last + tol) ? "--end"
                                                                                             : NULL;
    if (opt_bad) {
        cli_fail("render", "%s %.9g s is outside the ground truth of %s, which covers t = %.9g .. %.9g s", opt_bad,
                 opt_bad[2] == 's' ? t_start : t_end, gt_path, t_first, t_last);
        goto done;
    }
    double t0 = isnan(t_start) ? t_first : t_start, t1 = isnan(t_end) ? t_last : t_end;
    fc.t0 = t0;
    fc.period = 1.0 / rs.rate_hz;
    fc.span = rs.type == SENSIM_SENSOR_LIDAR ? fc.period : rs.camera.exposure;
    fc.last = -INFINITY;
    if (rig_path) {
        /* The rig's sensor of the same name brings the noise and timing;
         * the scene keeps the optics, the rate and the mount. */
        if (!(rig = sensim_rig_load(rig_path)))
            goto lib_fail;
        const sensim_sensor *sr = sensim_rig_find(rig, name);
        if (!sr) {
            cli_fail("render", "%s: no sensor named '%s' (the rig's sensor of the scene sensor's name gives the noise)",
                     rig_path, name);
            goto done;
        }
        const char *want = rs.type == SENSIM_SENSOR_LIDAR ? "lidar" : "camera";
        int fov = 0;
        if ((rs.type == SENSIM_SENSOR_LIDAR && !sensim_lidar_sensor_params(sr)) ||
            (rs.type == SENSIM_SENSOR_CAMERA && !sensim_camera_sensor_params(sr, &fov))) {
            cli_fail("render", "%s: sensor '%s' is of type %s but the scene's '%s' is a %s", rig_path, name,
                     sr->type->type, name, want);
            goto done;
        }
        if (fov) {
            cli_fail("render", "%s: sensor '%s': key 'lens': the rendered camera's lens comes from the scene; "
                     "drop the rig's lens", rig_path, name);
            goto done;
        }
        if (sr->rate_hz > 0 && fabs(sr->rate_hz - rs.rate_hz) > 1e-9 * rs.rate_hz) {
            cli_fail("render", "%s: sensor '%s': rate_hz %g differs from the scene's %g", rig_path, name, sr->rate_hz,
                     rs.rate_hz);
            goto done;
        }
        fc.rig = sr;
        fc.local = *sr;
        fc.local.rate_hz = rs.rate_hz;
        fc.seed = have_seed ? (uint64_t)noise_seed : rig->seed;
    }
    {
        /* Times that cannot be seconds, then the output estimated before
         * anything is written: the ground truth copied and, per scan, every
         * beam's returns (40 bytes a point: points, range, azimuth,
         * elevation, channel, return_index, time_offset, object,
         * reflectivity) or, per frame, the 8-bit image. */
        char what[600];
        snprintf(what, sizeof what, "%s: /ground_truth/t", gt_path);
        if (sensim_guard_times(t_first, t_last, n, what))
            goto lib_fail;
        double est = floor((t1 - t0 - fc.span) * rs.rate_hz + 1e-9) + 1;
        est = est < 0 ? 0 : est > (double)count ? (double)count : est;
        const double per = rs.type == SENSIM_SENSOR_LIDAR
                               ? (double)rs.lidar.channels * rs.lidar.columns *
                                     (rs.lidar.returns == SENSIM_RETURN_DUAL ? 2 : 1) * 40.0
                               : (double)rs.camera.width * rs.camera.height * 3.0;
        snprintf(what, sizeof what, "sensor '%s': %.3g %s (%g Hz over %.6g s) of up to %.3g bytes each", name, est,
                 rs.type == SENSIM_SENSOR_LIDAR ? "scans" : "frames", rs.rate_hz, t1 - t0, per);
        if (sensim_guard_output(out_path, est * per + (double)n * 17 * 8, what))
            goto lib_fail;
    }
    uint64_t nframes = 0;
    while (nframes < count && frame_start(&fc, nframes) + fc.span <= t1 + 1e-9)
        nframes++;
    if (nframes == 0) {
        cli_fail("render", "%s: no whole %s fits between t = %g and %g s", gt_path,
                 rs.type == SENSIM_SENSOR_LIDAR ? "scan" : "frame", t0, t1);
        goto done;
    }
    if (bev_dir && rs.type != SENSIM_SENSOR_LIDAR) {
        rc = cli_usage_error("render", "--bev: '%s' is a camera; a bird's-eye view needs a lidar", name);
        goto done;
    }
    {
        const char *dirs[3] = {ply_dir, png_dir, bev_dir};
        for (int d = 0; d < 3; d++)
            if (dirs[d] && ensure_dir(dirs[d])) {
                cli_fail("render", "%s: cannot create directory: %s", dirs[d], strerror(errno));
                goto done;
            }
    }
    created = cli_join_args("sensim", argc, argv);
    if (!(o.log = sensim_log_create(out_path, created ? created : "sensim render")) ||
        sensim_log_copy(o.log, gt, "/ground_truth"))
        goto lib_fail;
    char grp[160], path[256];
    snprintf(grp, sizeof grp, "/sensors/%s", name);
    double mount[7] = {rs.mount.p.x, rs.mount.p.y, rs.mount.p.z, rs.mount.q.w, rs.mount.q.x, rs.mount.q.y, rs.mount.q.z};
    int64_t seed = (int64_t)rs.seed;
    if (sensim_log_group(o.log, grp) ||
        sensim_log_set_attr_string(o.log, grp, "type", rs.type == SENSIM_SENSOR_LIDAR ? "lidar" : "camera") ||
        sensim_log_set_attr_f64(o.log, grp, "rate_hz", &rs.rate_hz, 1) ||
        sensim_log_set_attr_f64(o.log, grp, "mount", mount, 7) || sensim_log_set_attr_i64(o.log, grp, "seed", &seed, 1) ||
        sensim_log_set_attr_string(o.log, grp, "scene", scene_path))
        goto lib_fail;
#define DS(field, nm, type, ntail, tail, units)                                                       \
    do {                                                                                              \
        snprintf(path, sizeof path, "%s/%s", grp, nm);                                                \
        if (!(o.field = sensim_log_dset_create(o.log, path, type, ntail, tail, units, 0)))            \
            goto lib_fail;                                                                            \
    } while (0)
    DS(t, "t", SENSIM_F64, 0, NULL, "s");
    DS(t_sample, "t_sample", SENSIM_F64, 0, NULL, "s");
    DS(t_sensor, "t_sensor", SENSIM_F64, 0, NULL, "s");
    if (rig) {
        int64_t nseed = (int64_t)fc.seed;
        if (sensim_log_set_attr_string(o.log, grp, "noise_rig", rig_path) ||
            sensim_log_set_attr_i64(o.log, grp, "noise_seed", &nseed, 1))
            goto lib_fail;
    }
    cli_progress prog;
    cli_progress_init(&prog, "render", quiet);
    double qspan = 0; /* poses are queried over [ts, ts + qspan] for a frame starting at ts */
    if (rs.type == SENSIM_SENSOR_LIDAR) {
        size_t four = 4;
        if (!(lidar = sensim_render_lidar_create(&rs.lidar)) || !(pts = sensim_render_lidar_points_create(lidar)))
            goto lib_fail;
        /* A scan's beams fire from its start to the last column's latest
         * channel (render/lidar.c casts each from the pose at that time). */
        for (int k = 0; k < rs.lidar.channels; k++) {
            double f = sensim_render_lidar_fire_time(lidar, rs.lidar.columns - 1, k);
            if (f > qspan)
                qspan = f;
        }
        if (rig) {
            if (!(lnoise = sensim_lidar_create(sensim_lidar_sensor_params(fc.rig), fc.seed, fc.rig->id)))
                goto lib_fail;
            if (!(keep = malloc(sensim_render_lidar_max_points(lidar)))) {
                cli_fail("render", "out of memory");
                goto done;
            }
        }
        uint64_t clean_rows = 0; /* the rows a log of clean scans would have: the noise index */
        DS(points, "points", SENSIM_F32, 1, &four, "m");
        DS(range, "range", SENSIM_F32, 0, NULL, "m");
        DS(az, "azimuth", SENSIM_F32, 0, NULL, "rad");
        DS(el, "elevation", SENSIM_F32, 0, NULL, "rad");
        DS(ch, "channel", SENSIM_U16, 0, NULL, "");
        DS(ret, "return_index", SENSIM_U8, 0, NULL, "");
        DS(toff, "time_offset", SENSIM_F32, 0, NULL, "s");
        DS(obj, "object", SENSIM_U32, 0, NULL, "");
        DS(refl, "reflectivity", SENSIM_U8, 0, NULL, "");
        if (!(refl = malloc(sensim_render_lidar_max_points(lidar)))) {
            cli_fail("render", "out of memory");
            goto done;
        }
        scan_offset = calloc(nframes + 1, sizeof *scan_offset);
        if (!scan_offset) {
            cli_fail("render", "out of memory");
            goto done;
        }
        for (uint64_t k = 0; k < nframes; k++) {
            double ts = frame_start(&fc, k), td = frame_delivery(&fc, k, ts), tc = frame_stamp(&fc, ts);
            if (gt_window_cover(&win, ts - qpad(ts), ts + qspan + qpad(ts)) ||
                sensim_render_lidar_scan(lidar, scene, sensim_pose_track_eval, win.track, ts, k, pts))
                goto lib_fail;
            if (lnoise) {
                size_t clean = pts->count;
                if (sensim_render_lidar_points_noise(pts, lnoise, clean_rows, keep, NULL))
                    goto lib_fail;
                clean_rows += clean;
            }
            if (sensim_log_dset_append(o.points, pts->xyzi, pts->count) ||
                sensim_log_dset_append(o.range, pts->range, pts->count) ||
                sensim_log_dset_append(o.az, pts->azimuth, pts->count) ||
                sensim_log_dset_append(o.el, pts->elevation, pts->count) ||
                sensim_log_dset_append(o.ch, pts->channel, pts->count) ||
                sensim_log_dset_append(o.ret, pts->return_index, pts->count) ||
                sensim_log_dset_append(o.toff, pts->time_offset, pts->count) ||
                sensim_log_dset_append(o.obj, pts->object, pts->count) ||
                sensim_log_dset_append(o.refl, fill_reflectivity(lidar, pts, refl), pts->count) ||
                sensim_log_dset_append(o.t, &td, 1) ||
                sensim_log_dset_append(o.t_sample, &ts, 1) || sensim_log_dset_append(o.t_sensor, &tc, 1))
                goto lib_fail;
            scan_offset[k + 1] = scan_offset[k] + pts->count;
            if (ply_dir) {
                char f[4096];
                snprintf(f, sizeof f, "%s/%s_%05llu.ply", ply_dir, name, (unsigned long long)k);
                if (sensim_cloud_write(f, SENSIM_CLOUD_PLY_BINARY, pts->xyzi, pts->count))
                    goto lib_fail;
            }
            if (bev_dir) {
                char f[4096];
                snprintf(f, sizeof f, "%s/%s_%05llu.png", bev_dir, name, (unsigned long long)k);
                if (!bev && !(bev = malloc((size_t)bev_size * bev_size * 3))) {
                    cli_fail("render", "out of memory for a %llux%llu view", bev_size, bev_size);
                    goto done;
                }
                if (write_bev(f, pts, bev_extent, (int)bev_size, bev_by, bev))
                    goto lib_fail;
            }
            cli_progress_update(&prog, "scans", (double)(k + 1) / (double)nframes);
        }
        snprintf(path, sizeof path, "%s/scan_offset", grp);
        if (sensim_log_write(o.log, path, SENSIM_U64, nframes + 1, 0, NULL, scan_offset, ""))
            goto lib_fail;
    } else {
        const int W = rs.camera.width, H = rs.camera.height;
        size_t tail[3] = {(size_t)H, (size_t)W, 3};
        if (!(cam = sensim_render_camera_create(&rs.camera)))
            goto lib_fail;
        /* Samples are cast at random times in the exposure (motion blur). */
        qspan = rs.camera.exposure;
        if (rig) {
            /* Noise on the linear intensity, before the sRGB encoding, as
             * a sensor adds it (EMVA 1288 is linear in photons). */
            sensim_camera_params cp = *sensim_camera_sensor_params(fc.rig, NULL);
            cp.width = (size_t)W;
            cp.height = (size_t)H;
            cp.channels = 3;
            if (!(cnoise = sensim_camera_create(&cp, fc.seed, fc.rig->id)))
                goto lib_fail;
        }
        img = malloc((size_t)W * H * 3 * sizeof *img);
        img8 = malloc((size_t)W * H * 3);
        if (!img || !img8) {
            cli_fail("render", "out of memory for a %dx%d image", W, H);
            goto done;
        }
        DS(image, "image", as_float ? SENSIM_F32 : SENSIM_U8, 3, tail, as_float ? "1" : "sRGB");
        for (uint64_t k = 0; k < nframes; k++) {
            double ts = frame_start(&fc, k), td = frame_delivery(&fc, k, ts), tc = frame_stamp(&fc, ts);
            if (gt_window_cover(&win, ts - qpad(ts), ts + qspan + qpad(ts)) ||
                sensim_render_camera_render(cam, scene, sensim_pose_track_eval, win.track, ts, k, img) ||
                (cnoise && sensim_camera_apply(cnoise, k, SENSIM_PIXEL_F32, img, img)))
                goto lib_fail;
            sensim_image_to_u8(img, (size_t)W * H * 3, img8);
            if (sensim_log_dset_append(o.image, as_float ? (void *)img : (void *)img8, 1) ||
                sensim_log_dset_append(o.t, &td, 1) || sensim_log_dset_append(o.t_sample, &ts, 1) ||
                sensim_log_dset_append(o.t_sensor, &tc, 1))
                goto lib_fail;
            if (png_dir) {
                char f[4096];
                snprintf(f, sizeof f, "%s/%s_%05llu.png", png_dir, name, (unsigned long long)k);
                sensim_image_info info = {(size_t)W, (size_t)H, 3, 8};
                if (sensim_png_write(f, &info, img8))
                    goto lib_fail;
            }
            cli_progress_update(&prog, "frames", (double)(k + 1) / (double)nframes);
        }
    }
    cli_progress_done(&prog);
    outsets_close(&o);
    {
        sensim_log *keep = o.log;
        memset(&o, 0, sizeof o);
        o.log = keep;
    }
    {
        sensim_log *lg = o.log;
        o.log = NULL;
        if (sensim_log_commit(lg))
            goto lib_fail;
    }
    rc = CLI_OK;
    goto done;
lib_fail:
    rc = cli_fail_lib("render");
done:
    outsets_close(&o);
    sensim_log_close(o.log);
    free(scan_offset);
    free(refl);
    free(img);
    free(img8);
    free(bev);
    free(keep);
    sensim_lidar_destroy(lnoise);
    sensim_camera_destroy(cnoise);
    sensim_rig_free(rig);
    free(created);
    sensim_render_camera_destroy(cam);
    sensim_render_lidar_points_destroy(pts);
    sensim_render_lidar_destroy(lidar);
    gt_window_free(&win);
    sensim_log_close(gt);
    sensim_scene_destroy(scene);
    return rc;
}
