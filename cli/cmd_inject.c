/* sensim inject: apply a rig's models to a ground-truth log, or add noise to
 * recorded clean sensor data. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "sensim/rig.h"

static const cli_opt opts[] = {
    {'o', "output", "FILE", "output log (written to a temporary name, then renamed)"},
    {'s', "seed", "N", "seed for every random stream (default: the rig's seed)"},
    {'j', "threads", "N", "OpenMP threads (default: all cores)"},
    {'b', "block", "N", "samples per streamed block (default 65536)"},
    {'q', "quiet", NULL, "no progress on stderr (shown only on a terminal)"},
    {'h', "help", NULL, "this text"},
    {0}};

const cli_spec cmd_inject_spec = {
    .verb = "inject",
    .head = "usage: sensim inject RIG.yaml IN.h5 -o OUT.h5 [--seed N] [--threads N] [--block N]\n"
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

int cmd_inject(int argc, char **argv)
{
    const char *output = NULL;
    unsigned long long seed = 0, threads = 0, block = 0;
    int have_seed = 0, quiet = 0, c;
    cli_parser p;
    cli_parse_begin(&p, &cmd_inject_spec, argc, argv);
    while ((c = cli_parse_next(&p)) > 0) {
        switch (c) {
        case 'o': output = optarg; break;
        case 's':
            if (cli_parse_u64(optarg, &seed))
                return cli_usage_error("inject", "--seed: '%s' is not a non-negative integer", optarg);
            have_seed = 1;
            break;
        case 'j':
            if (cli_parse_u64(optarg, &threads) || threads == 0 || threads > 1024)
                return cli_usage_error("inject", "--threads: '%s' is not 1..1024", optarg);
            break;
        case 'b':
            if (cli_parse_u64(optarg, &block) || block == 0 || block > (1ull << 26))
                return cli_usage_error("inject", "--block: '%s' is not 1..67108864", optarg);
            break;
        case 'q': quiet = 1; break;
        }
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
