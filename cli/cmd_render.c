/* sensim render: lidar scans or camera frames of a scene along a trajectory
 * (the pipeline is sensim_render_log; this file parses and prints). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_gt.h"
#include "progress.h"
#include "sensim/render.h"
#include "sensim/rig.h"
#include "sensim/stitch.h"

/* Loads the sensor, the scene and the rig, says on stderr which backend
 * runs (--backend cuda or auto) and which zero-area triangles the meshes
 * dropped, renders. */
static int render(const char *name, sensim_render_log_opts *ro, const char *gt_path, const char *out_path, int quiet,
                  int argc, char **argv)
{
    sensim_render_sensor rs;
    sensim_scene *scene = NULL;
    sensim_rig *rig = NULL;
    char *created = NULL;
    const char *note = "", *m;
    cli_progress prog;
    int rc;
    if (sensim_render_sensor_load(ro->scene_path, name, &rs) || !(scene = sensim_scene_load(ro->scene_path)) ||
        (ro->rig_path && !(rig = sensim_rig_load(ro->rig_path)))) {
        rc = cli_fail_lib("render");
        goto done;
    }
    if (ro->bev_dir && rs.type != SENSIM_SENSOR_LIDAR) {
        rc = cli_usage_error("render", "--bev: '%s' is a camera; a bird's-eye view needs a lidar", name);
        goto done;
    }
    if (sensim_scene_prepare_backend(scene, ro->backend)) {
        m = sensim_last_error(); /* "cuda: libcuda.so.1 not found (...)" reads as the option's */
        rc = cli_fail("render", "--backend %s: %s", sensim_render_backend_name(ro->backend),
                      strncmp(m, "cuda: ", 6) ? m : m + 6);
        goto done;
    }
    if (!quiet && (ro->backend == SENSIM_RENDER_BACKEND_CUDA || ro->backend == SENSIM_RENDER_BACKEND_AUTO)) {
        sensim_render_backend b = sensim_scene_backend(scene, ro->backend, &note);
        fprintf(stderr, "sensim render: --backend %s: %s%s%s%s\n", sensim_render_backend_name(ro->backend),
                sensim_render_backend_name(b), *note ? " (" : "", note, *note ? ")" : "");
    }
    for (size_t i = 0; i < sensim_scene_mesh_count(scene); i++) {
        size_t nd = sensim_scene_mesh_dropped(scene, (int)i), nt = 0;
        sensim_scene_mesh_info(scene, (int)i, NULL, &nt, NULL, NULL);
        if (nd)
            fprintf(stderr, "sensim render: %s: mesh '%s': dropped %zu degenerate (zero-area) triangle%s, %zu kept\n",
                    ro->scene_path, sensim_scene_mesh_name(scene, (int)i), nd, nd == 1 ? "" : "s", nt);
    }
    ro->created_by = created = cli_join_args("sensim", argc, argv);
    ro->progress = cli_progress_fn;
    ro->progress_ctx = &prog;
    cli_progress_init(&prog, "render", quiet);
    sensim_status st = sensim_render_log(&rs, scene, rig, ro, gt_path, out_path);
    cli_progress_done(&prog);
    rc = st ? cli_fail_lib("render") : CLI_OK;
done:
    free(created);
    sensim_rig_free(rig);
    sensim_scene_destroy(scene);
    return rc;
}

int cmd_render(int argc, char **argv)
{
    const char *V = "render", *gt_path = NULL, *name = NULL, *out_path = NULL, *frames = NULL;
    sensim_render_log_opts ro = sensim_render_log_default_opts();
    uint64_t threads = 0, bev_size = 512, rows = 65536;
    unsigned long long a, b;
    int c, quiet = 0, st = 0;
    const cli_to to[] = {
        CLI_STR("trajectory", &gt_path), CLI_STR("sensor", &name), CLI_STR("output", &out_path),
        CLI_STR("ply", &ro.ply_dir), CLI_STR("png", &ro.png_dir), CLI_FLAG("float", &ro.as_float),
        CLI_STR("bev", &ro.bev_dir), CLI_STR("rig", &ro.rig_path), CLI_STR("frames", &frames),
        CLI_FLAG("quiet", &quiet), CLI_POSITIVE("bev-extent", &ro.bev_extent),
        CLI_COUNT("bev-size", &bev_size, 1, 16384), CLI_COUNT("gt-window", &rows, 2, (uint64_t)1 << 40),
        CLI_NUMBER("start", &ro.start), CLI_NUMBER("end", &ro.end), CLI_COUNT("count", &ro.count, 1, UINT64_MAX),
        CLI_COUNT("threads", &threads, 1, 1024), {0}};
    cli_parser op;
    cli_parse_begin_to(&op, &cmd_render_spec, to, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case 'D': ro.have_seed = 1, st = cli_opt_count(V, "seed", optarg, 0, UINT64_MAX, &ro.seed); break;
        case 'C': st = cli_opt_lib(V, "bev-color", sensim_bev_color_parse(optarg, &ro.bev_color)); break;
        case 'K': st = cli_opt_lib(V, "backend", sensim_render_backend_parse(optarg, &ro.backend)); break;
        case 'H': st = cli_opt_lib(V, "shard", sensim_shard_parse(optarg, &ro.shard_index, &ro.shard_count)); break;
        }
        if (st)
            return st;
    }
    if (c)
        return cli_parse_exit(c);
    if (optind != argc - 1)
        return cli_usage_error(V, "need exactly one SCENE.yaml");
    if (!gt_path || !name || !out_path)
        return cli_usage_error(V, "--trajectory, --sensor and -o are required");
    if (frames && (cli_parse_range(frames, &a, &b) || b >= UINT64_MAX - 1))
        return cli_usage_error(V, "--frames: '%s' is not A..B with 0 <= A <= B", frames);
    if (ro.have_seed && !ro.rig_path)
        return cli_usage_error(V, "--seed sets the seed of --rig's noise; give --rig");
    ro.scene_path = argv[optind];
    if (cli_check_output(V, out_path, ro.scene_path, gt_path, ro.rig_path ? ro.rig_path : "", NULL))
        return CLI_FAIL;
    if (threads)
        omp_set_num_threads((int)threads);
    if (frames) {
        ro.frames_first = a; /* A..B as the half-open [first, end) */
        ro.frames_end = b + 1;
    }
    ro.bev_size = (int)bev_size;
    ro.gt_window = (size_t)rows;
    return render(name, &ro, gt_path, out_path, quiet, argc, argv);
}
