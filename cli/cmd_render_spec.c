/* sensim render's options and help, in the program itself (`sensim help
 * render` and the verb table need them); the verb runs from the render
 * plugin (cli/render_plugin.c, cli/cmd_render.c). */
#include "cli.h"

static const cli_opt cmd_render_opts[] = {
    {'t', "trajectory", "GT.h5", "ground-truth log (required)"},
    {'s', "sensor", "NAME", "sensor to render (required)"},
    {'o', "output", "OUT.h5", "output log (required; written atomically)"},
    {CLI_NOSHORT('P'), "ply", "DIR", "also write each scan as DIR/NAME_NNNNN.ply"},
    {CLI_NOSHORT('G'), "png", "DIR", "also write each frame as DIR/NAME_NNNNN.png"},
    {CLI_NOSHORT('S'), "start", "T", "first scan/frame time, s (default: trajectory start)"},
    {CLI_NOSHORT('E'), "end", "T", "no scan/frame ends after T, s (default: trajectory end)"},
    {'n', "count", "N", "at most N scans/frames"},
    {CLI_NOSHORT('A'), "frames", "A..B", "only scans/frames A to B (inclusive, counted from 0),\n"
                                         "rendered bit for bit as in the whole run; the log\n"
                                         "records the range so that 'sensim stitch' joins parts"},
    {CLI_NOSHORT('H'), "shard", "I/N", "only the I-th of N contiguous parts (I from 0) of the\n"
                                       "scans/frames (of --frames A..B if given), for job\n"
                                       "arrays; 'sensim stitch' joins the N logs into the\n"
                                       "whole run, bit for bit (not a lidar with --rig)"},
    {CLI_NOSHORT('B'), "bev", "DIR", "also write a bird's-eye view of each scan as\n"
                                     "DIR/NAME_NNNNN.png (top-down, +x up the image)"},
    {CLI_NOSHORT('X'), "bev-extent", "M", "half-width of the view, m (default 40)"},
    {CLI_NOSHORT('Z'), "bev-size", "PX", "view side in pixels (default 512)"},
    {CLI_NOSHORT('C'), "bev-color", "WHAT", "height (default; -2..4 m in the sensor frame) or\n"
                                            "intensity (0..the scan's largest)"},
    {CLI_NOSHORT('F'), "float", NULL, "camera images as linear f32 instead of sRGB u8"},
    {'j', "threads", "N", "OpenMP threads (default: all; output is identical)"},
    {CLI_NOSHORT('K'), "backend", "NAME", "ray caster: embree (default), twin (sensim's own\n"
                                          "BVH traversal, the CPU twin of the CUDA path: same\n"
                                          "primitive hit, distances within float rounding),\n"
                                          "cuda (the twin's code on an NVIDIA GPU, bit-identical\n"
                                          "to twin; needs only the driver) or auto (cuda when it\n"
                                          "works here, else embree; says which on stderr)"},
    {CLI_NOSHORT('W'), "gt-window", "ROWS", "ground-truth rows held in memory at a time (default\n"
                                            "65536, at least 2; grows to one frame's rows if a\n"
                                            "frame needs more); the output does not depend on it"},
    {CLI_NOSHORT('R'), "rig", "RIG.yaml", "noise and timing from the sensor of the same NAME\n"
                                          "in the rig file of sensim inject (type lidar or\n"
                                          "camera; its noise:, dropout: and timing: keys,\n"
                                          "drawn from the rig's seed exactly as inject\n"
                                          "would on the clean log)"},
    {CLI_NOSHORT('D'), "seed", "N", "seed of the rig's noise (default: the rig's)"},
    {'q', "quiet", NULL, "no progress (shown on stderr only on a terminal)"},
    CLI_OPTS_END};

const cli_spec cmd_render_spec = {
    .verb = "render",
    .head = "usage: sensim render SCENE.yaml --trajectory GT.h5 --sensor NAME -o OUT.h5\n"
            "                     [--ply DIR] [--png DIR] [--start T] [--end T] [--count N]\n"
            "                     [--float] [--threads N] [--rig RIG.yaml [--seed N]]\n"
            "                     [--gt-window ROWS] [--backend embree|twin|cuda|auto]\n"
            "                     [--frames A..B] [--shard I/N]\n"
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
