/* sensim render: lidar scans or camera frames of a scene along a trajectory. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_gt.h"
#include "sensim/log.h"
#include "sensim/png.h"
#include "sensim/pointcloud.h"
#include "sensim/render.h"

const char cmd_render_usage[] =
    "usage: sensim render SCENE.yaml --trajectory GT.h5 --sensor NAME -o OUT.h5\n"
    "                     [--ply DIR] [--png DIR] [--start T] [--end T] [--count N]\n"
    "                     [--float] [--threads N]\n"
    "\n"
    "Renders the lidar or camera NAME defined under 'sensors:' in SCENE.yaml\n"
    "along the ground truth of GT.h5 (the body pose; the sensor's mount is\n"
    "applied). Each lidar beam and each camera sample is cast from the pose at\n"
    "its own time, so motion distorts scans and blurs frames as in a real\n"
    "sensor. OUT.h5 receives /ground_truth (copied) and /sensors/NAME in the\n"
    "layout of sensim(1): points, range, azimuth, elevation, channel,\n"
    "return_index, time_offset, scan_offset and t per scan for a lidar; image\n"
    "[N,H,W,3] and t for a camera. No noise is added here (see sensim inject).\n"
    "\n"
    "  -t, --trajectory GT.h5  ground-truth log (required)\n"
    "  -s, --sensor NAME       sensor to render (required)\n"
    "  -o, --output OUT.h5     output log (required; written atomically)\n"
    "      --ply DIR           also write each scan as DIR/NAME_NNNNN.ply\n"
    "      --png DIR           also write each frame as DIR/NAME_NNNNN.png\n"
    "      --start T           first scan/frame time, s (default: trajectory start)\n"
    "      --end T             no scan/frame ends after T, s (default: trajectory end)\n"
    "  -n, --count N           at most N scans/frames\n"
    "      --float             camera images as linear f32 instead of sRGB u8\n"
    "  -j, --threads N         OpenMP threads (default: all; output is identical)\n"
    "  -h, --help              this text\n"
    "\n"
    "Progress goes to stderr when it is a terminal.\n";

static int ensure_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST)
        return 0;
    return -1;
}

typedef struct {
    sensim_log *log;
    sensim_log_dset *points, *range, *az, *el, *ch, *ret, *toff, *t, *image;
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
    sensim_log_dset_close(o->t);
    sensim_log_dset_close(o->image);
}

int cmd_render(int argc, char **argv)
{
    static const struct option opts[] = {{"trajectory", required_argument, NULL, 't'},
                                         {"sensor", required_argument, NULL, 's'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"ply", required_argument, NULL, 'P'},
                                         {"png", required_argument, NULL, 'G'},
                                         {"start", required_argument, NULL, 'S'},
                                         {"end", required_argument, NULL, 'E'},
                                         {"count", required_argument, NULL, 'n'},
                                         {"float", no_argument, NULL, 'F'},
                                         {"threads", required_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *gt_path = NULL, *name = NULL, *out_path = NULL, *ply_dir = NULL, *png_dir = NULL;
    double t_start = NAN, t_end = NAN;
    unsigned long long count = ~0ull, threads = 0;
    int as_float = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:s:o:n:j:h", opts, NULL)) != -1) {
        switch (c) {
        case 't': gt_path = optarg; break;
        case 's': name = optarg; break;
        case 'o': out_path = optarg; break;
        case 'P': ply_dir = optarg; break;
        case 'G': png_dir = optarg; break;
        case 'F': as_float = 1; break;
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
        case 'h': cli_print_help("render", stdout); return CLI_OK;
        default: return cli_usage_error("render", "unknown option");
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("render", "need exactly one SCENE.yaml");
    if (!gt_path || !name || !out_path)
        return cli_usage_error("render", "--trajectory, --sensor and -o are required");
    const char *scene_path = argv[optind];
    if (threads)
        omp_set_num_threads((int)threads);

    int rc = CLI_FAIL;
    sensim_render_sensor rs;
    sensim_scene *scene = NULL;
    sensim_log *gt = NULL;
    sensim_gt_block blk;
    memset(&blk, 0, sizeof blk);
    sensim_pose_track *track = NULL;
    sensim_render_lidar *lidar = NULL;
    sensim_render_lidar_points *pts = NULL;
    sensim_render_camera *cam = NULL;
    float *img = NULL;
    uint8_t *img8 = NULL;
    uint64_t *scan_offset = NULL;
    outsets o;
    memset(&o, 0, sizeof o);
    char *created = NULL;

    if (sensim_render_sensor_load(scene_path, name, &rs) || !(scene = sensim_scene_load(scene_path)))
        goto lib_fail;
    /* Ground truth: poses are needed at arbitrary times, so the whole track
     * is read (7 doubles per sample). */
    size_t n;
    double origin[3];
    if (!(gt = sensim_log_open(gt_path)) || sensim_gt_check(gt, &n, origin) || sensim_gt_block_init(&blk, n) ||
        sensim_gt_read(gt, 0, n, &blk))
        goto lib_fail;
    if (!(track = sensim_pose_track_create(blk.t, blk.position, blk.orientation, n, &rs.mount)))
        goto lib_fail;
    double t0 = isnan(t_start) ? blk.t[0] : t_start, t1 = isnan(t_end) ? blk.t[n - 1] : t_end;
    double period = 1.0 / rs.rate_hz;
    double span = rs.type == SENSIM_SENSOR_LIDAR ? period : rs.camera.exposure;
    uint64_t nframes = 0;
    while (nframes < count && t0 + nframes * period + span <= t1 + 1e-9)
        nframes++;
    if (nframes == 0) {
        cli_fail("render", "%s: no whole %s fits between t = %g and %g s", gt_path,
                 rs.type == SENSIM_SENSOR_LIDAR ? "scan" : "frame", t0, t1);
        goto done;
    }
    if ((ply_dir && ensure_dir(ply_dir)) || (png_dir && ensure_dir(png_dir))) {
        cli_fail("render", "%s: cannot create directory: %s", ply_dir ? ply_dir : png_dir, strerror(errno));
        goto done;
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
    int tty = isatty(2);
    if (rs.type == SENSIM_SENSOR_LIDAR) {
        size_t four = 4;
        if (!(lidar = sensim_render_lidar_create(&rs.lidar)) || !(pts = sensim_render_lidar_points_create(lidar)))
            goto lib_fail;
        DS(points, "points", SENSIM_F32, 1, &four, "m");
        DS(range, "range", SENSIM_F32, 0, NULL, "m");
        DS(az, "azimuth", SENSIM_F32, 0, NULL, "rad");
        DS(el, "elevation", SENSIM_F32, 0, NULL, "rad");
        DS(ch, "channel", SENSIM_U16, 0, NULL, "");
        DS(ret, "return_index", SENSIM_U8, 0, NULL, "");
        DS(toff, "time_offset", SENSIM_F32, 0, NULL, "s");
        scan_offset = calloc(nframes + 1, sizeof *scan_offset);
        if (!scan_offset) {
            cli_fail("render", "out of memory");
            goto done;
        }
        for (uint64_t k = 0; k < nframes; k++) {
            double ts = t0 + k * period;
            if (sensim_render_lidar_scan(lidar, scene, sensim_pose_track_eval, track, ts, k, pts))
                goto lib_fail;
            if (sensim_log_dset_append(o.points, pts->xyzi, pts->count) ||
                sensim_log_dset_append(o.range, pts->range, pts->count) ||
                sensim_log_dset_append(o.az, pts->azimuth, pts->count) ||
                sensim_log_dset_append(o.el, pts->elevation, pts->count) ||
                sensim_log_dset_append(o.ch, pts->channel, pts->count) ||
                sensim_log_dset_append(o.ret, pts->return_index, pts->count) ||
                sensim_log_dset_append(o.toff, pts->time_offset, pts->count) || sensim_log_dset_append(o.t, &ts, 1))
                goto lib_fail;
            scan_offset[k + 1] = scan_offset[k] + pts->count;
            if (ply_dir) {
                char f[4096];
                snprintf(f, sizeof f, "%s/%s_%05llu.ply", ply_dir, name, (unsigned long long)k);
                if (sensim_cloud_write(f, SENSIM_CLOUD_PLY_BINARY, pts->xyzi, pts->count))
                    goto lib_fail;
            }
            if (tty)
                fprintf(stderr, "\rsensim render: scan %llu/%llu (%zu points)", (unsigned long long)k + 1,
                        (unsigned long long)nframes, pts->count);
        }
        snprintf(path, sizeof path, "%s/scan_offset", grp);
        if (sensim_log_write(o.log, path, SENSIM_U64, nframes + 1, 0, NULL, scan_offset, ""))
            goto lib_fail;
    } else {
        const int W = rs.camera.width, H = rs.camera.height;
        size_t tail[3] = {(size_t)H, (size_t)W, 3};
        if (!(cam = sensim_render_camera_create(&rs.camera)))
            goto lib_fail;
        img = malloc((size_t)W * H * 3 * sizeof *img);
        img8 = malloc((size_t)W * H * 3);
        if (!img || !img8) {
            cli_fail("render", "out of memory for a %dx%d image", W, H);
            goto done;
        }
        DS(image, "image", as_float ? SENSIM_F32 : SENSIM_U8, 3, tail, as_float ? "1" : "sRGB");
        for (uint64_t k = 0; k < nframes; k++) {
            double ts = t0 + k * period;
            if (sensim_render_camera_render(cam, scene, sensim_pose_track_eval, track, ts, k, img))
                goto lib_fail;
            sensim_image_to_u8(img, (size_t)W * H * 3, img8);
            if (sensim_log_dset_append(o.image, as_float ? (void *)img : (void *)img8, 1) ||
                sensim_log_dset_append(o.t, &ts, 1))
                goto lib_fail;
            if (png_dir) {
                char f[4096];
                snprintf(f, sizeof f, "%s/%s_%05llu.png", png_dir, name, (unsigned long long)k);
                sensim_image_info info = {(size_t)W, (size_t)H, 3, 8};
                if (sensim_png_write(f, &info, img8))
                    goto lib_fail;
            }
            if (tty)
                fprintf(stderr, "\rsensim render: frame %llu/%llu", (unsigned long long)k + 1,
                        (unsigned long long)nframes);
        }
    }
    if (tty)
        fputc('\n', stderr);
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
    free(img);
    free(img8);
    free(created);
    sensim_render_camera_destroy(cam);
    sensim_render_lidar_points_destroy(pts);
    sensim_render_lidar_destroy(lidar);
    sensim_pose_track_destroy(track);
    sensim_gt_block_free(&blk);
    sensim_log_close(gt);
    sensim_scene_destroy(scene);
    return rc;
}
