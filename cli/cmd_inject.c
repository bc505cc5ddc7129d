/* sensim inject: apply a rig's models to a ground-truth log, or add noise to
 * recorded clean sensor data. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "sensim/afile.h"
#include "sensim/rig.h"
#include "sensim/stitch.h"

static const cli_opt opts[] = {
    {'o', "output", "FILE", "output log (written to a temporary name, then renamed)"},
    {'s', "seed", "N", "seed for every random stream (default: the rig's seed)"},
    {'j', "threads", "N", "OpenMP threads (default: all cores)"},
    {'b', "block", "N", "samples per streamed block (default 65536)"},
    {CLI_NOSHORT('S'), "seeds", "A..B", "one realisation per seed A to B (inclusive), each a log\n"
                                        "named by -o with {seed} replaced; each records its seed\n"
                                        "and range so that 'sensim stitch' joins them"},
    {CLI_NOSHORT('P'), "shard", "I/N", "with --seeds: only the I-th of N contiguous parts of the\n"
                                       "seeds (I from 0), for job arrays; the union of the N\n"
                                       "shards is the run of all the seeds, bit for bit"},
    {'q', "quiet", NULL, "no progress on stderr (shown only on a terminal)"},
    CLI_OPTS_END};

const cli_spec cmd_inject_spec = {
    .verb = "inject",
    .head = "usage: sensim inject RIG.yaml IN.h5 -o OUT.h5 [--seed N] [--threads N] [--block N]\n"
            "       sensim inject RIG.yaml IN.h5 -o 'OUT-{seed}.h5' --seeds A..B [--shard I/N]\n"
            "\n"
            "Applies every sensor of the rig to IN.h5 and writes OUT.h5: the ground truth\n"
            "copied through and /sensors/<name>/ for each sensor. A sensor whose group\n"
            "already exists in IN.h5 (recorded clean data) gets noise added to that data;\n"
            "otherwise it is simulated from /ground_truth. Output is bit-identical for a\n"
            "seed at any thread count and block size.\n"
            "\n",
    .opts = opts,
    .column = 22,
    .tail = "\n"
            "See sensim-inject(1) for the rig format.\n",
};

static void print_warning(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "sensim inject: warning: %s\n", msg);
}

/* -o with {seed} replaced by seed (the first occurrence). */
static char *seed_path(const char *pattern, unsigned long long seed)
{
    const char *k = strstr(pattern, "{seed}");
    size_t n = strlen(pattern) + 32;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%.*s%llu%s", (int)(k - pattern), pattern, seed, k + 6);
    return p;
}

/* --seeds A..B [--shard I/N]: one complete log per seed, tagged as a shard
 * of kind "seeds" (sensim/stitch.h). Realisations are independent (every
 * stream is keyed by the seed), so any split gives the same files. */
static int inject_seeds(const char *output, const char *rig_path, const char *in_path, const char *seeds_arg,
                        const char *shard_arg, int have_seed, int threads, size_t block, int quiet)
{
    unsigned long long a, b;
    if (!seeds_arg)
        return cli_usage_error("inject", "--shard needs --seeds A..B: inject splits realisations, not time (a time "
                                         "split would restart the bias random walks at every shard boundary)");
    if (have_seed)
        return cli_usage_error("inject", "--seed and --seeds exclude each other");
    if (cli_parse_range(seeds_arg, &a, &b) || b - a >= 1000000)
        return cli_usage_error("inject", "--seeds: '%s' is not A..B with 0 <= A <= B and at most 1000000 seeds",
                               seeds_arg);
    if (!strstr(output, "{seed}"))
        return cli_usage_error("inject", "with --seeds, -o names one file per seed and must contain {seed} (got '%s')",
                               output);
    int64_t index = 0, count = 1, first, end;
    if (shard_arg && sensim_shard_parse(shard_arg, &index, &count)) {
        return cli_usage_error("inject", "--shard: %s", sensim_last_error());
    }
    const int64_t nseeds = (int64_t)(b - a + 1);
    sensim_shard_split(nseeds, count, index, &first, &end);
    sensim_rig *rig = sensim_rig_load(rig_path);
    if (!rig)
        return cli_fail_lib("inject");
    if (threads)
        omp_set_num_threads(threads);
    int rc = CLI_OK;
    for (int64_t k = first; k < end && rc == CLI_OK; k++) {
        unsigned long long seed = a + (unsigned long long)k;
        char *path = seed_path(output, seed);
        if (!path) {
            rc = cli_fail("inject", "out of memory");
            break;
        }
        if (cli_check_output("inject", path, rig_path, in_path, NULL)) {
            free(path);
            rc = CLI_FAIL;
            break;
        }
        sensim_inject_opts o = {seed, threads, block, print_warning, NULL};
        sensim_shard tag = {"seeds", k, nseeds, (int64_t)seed, (int64_t)seed + 1, (int64_t)b + 1, NULL};
        cli_progress prog;
        cli_progress_init(&prog, "inject", quiet);
        sensim_afile *af = sensim_afile_open(path);
        sensim_status st = af ? SENSIM_OK : sensim_last_status();
        if (!st)
            st = sensim_rig_inject_progress(rig, &o, in_path, sensim_afile_tmp_path(af), cli_progress_fn, &prog);
        cli_progress_done(&prog);
        if (!st)
            st = sensim_shard_tag(sensim_afile_tmp_path(af), &tag);
        if (!st) {
            st = sensim_afile_commit(af);
            af = NULL;
        }
        sensim_afile_abort(af);
        if (st)
            rc = cli_fail_lib("inject");
        free(path);
    }
    sensim_rig_free(rig);
    return rc;
}

int cmd_inject(int argc, char **argv)
{
    const char *output = NULL;
    uint64_t seed = 0, threads = 0, block = 0;
    int have_seed = 0, quiet = 0, c, bad = 0;
    const char *seeds_arg = NULL, *shard_arg = NULL;
    const cli_to to[] = {CLI_STR("output", &output), CLI_COUNT("threads", &threads, 1, 1024),
                         CLI_COUNT("block", &block, 1, (uint64_t)1 << 26), CLI_FLAG("quiet", &quiet),
                         CLI_STR("seeds", &seeds_arg), CLI_STR("shard", &shard_arg), {0}};
    cli_parser p;
    cli_parse_begin_to(&p, &cmd_inject_spec, to, argc, argv);
    while ((c = cli_parse_next(&p)) > 0) {
        switch (c) {
        case 's': have_seed = 1, bad = cli_opt_count("inject", "seed", optarg, 0, UINT64_MAX, &seed); break;
        }
        if (bad)
            return bad;
    }
    if (c)
        return cli_parse_exit(c);
    if (argc - optind != 2)
        return cli_usage_error("inject", "expected RIG.yaml and IN.h5");
    if (!output)
        return cli_usage_error("inject", "missing -o OUT.h5");
    const char *rig_path = argv[optind], *in_path = argv[optind + 1];
    /* RIG and IN swapped is a common slip; the YAML parser would only say
     * the first byte of an HDF5 file is not UTF-8. */
    if (cli_is_hdf5(rig_path) == 1) {
        if (cli_is_hdf5(in_path) == 0)
            return cli_usage_error("inject", "%s is an HDF5 log and %s looks like a YAML file: did you swap RIG and IN? "
                                             "(sensim inject RIG.yaml IN.h5 -o OUT.h5)",
                                   rig_path, in_path);
        return cli_usage_error("inject", "%s is an HDF5 log, not a rig: the first argument is the rig (YAML)",
                               rig_path);
    }
    if (seeds_arg || shard_arg)
        return inject_seeds(output, rig_path, in_path, seeds_arg, shard_arg, have_seed, (int)threads, (size_t)block,
                            quiet);
    if (cli_check_output("inject", output, rig_path, in_path, NULL))
        return CLI_FAIL;
    sensim_rig *rig = sensim_rig_load(rig_path);
    if (!rig)
        return cli_fail_lib("inject");
    sensim_inject_opts o = {have_seed ? seed : rig->seed, (int)threads, (size_t)block, print_warning, NULL};
    if (threads)
        omp_set_num_threads((int)threads);
    cli_progress prog;
    cli_progress_init(&prog, "inject", quiet);
    sensim_status st = sensim_rig_inject_progress(rig, &o, in_path, output, cli_progress_fn, &prog);
    cli_progress_done(&prog);
    sensim_rig_free(rig);
    if (st)
        return cli_fail_lib("inject");
    return CLI_OK;
}
