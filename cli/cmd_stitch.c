/* sensim stitch: one log of HDF5 virtual datasets over the shards of a job
 * (sensim/stitch.h does the work). */
#include <stdio.h>

#include "cli.h"
#include "sensim/stitch.h"

static const cli_opt cmd_stitch_opts[] = {CLI_OPTS_END};

const cli_spec cmd_stitch_spec = {
    .verb = "stitch",
    .head = "usage: sensim stitch OUT.h5 SHARD.h5...\n"
    "\n"
    "Writes OUT.h5: a small log of HDF5 virtual datasets over the shards of one job\n"
    "(outputs of --shard I/N or --seeds A..B), read by h5py and sensim as one log.\n"
    "Source paths are relative to OUT.h5's directory: move OUT.h5 and the shards\n"
    "together. Shards written by --shard are concatenated along their first axis\n"
    "(lidar scan_offset recomputed); realisations of --seeds go under /seeds/<seed>/\n"
    "with the shared ground truth once. The shards must belong together (same kind\n"
    "and count, every index once, contiguous ranges, the same datasets and the same\n"
    "rig, model and seed attributes); the first one that does not is named.\n"
    "\n",
    .opts = cmd_stitch_opts,
    .column = 15,
    .tail = "\n"
            "See sensim-stitch(1).\n",
};

int cmd_stitch(int argc, char **argv)
{
    int c = cli_parse_all(&cmd_stitch_spec, NULL, argc, argv);
    if (c)
        return cli_parse_exit(c);
    if (argc - optind < 2)
        return cli_usage_error("stitch", "expected OUT.h5 and at least one SHARD.h5");
    const char *out = argv[optind];
    for (int i = optind + 1; i < argc; i++)
        if (cli_check_output("stitch", out, argv[i], NULL))
            return CLI_FAIL;
    if (sensim_stitch(out, (const char *const *)(argv + optind + 1), (size_t)(argc - optind - 1), "sensim stitch"))
        return cli_fail_lib("stitch");
    return CLI_OK;
}
