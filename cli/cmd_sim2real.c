/* sensim sim2real - seed 004's GNSS experiment reproduced in simulation:
 * "real" logs from one GNSS model (the generator), simulated logs from each
 * of the paper's five variants, the judge on every log, VEPD of each
 * variant's set against the real set, and the ranking. A sound score ranks
 * the generator first. The experiment is sensim_sim2real_run; this file
 * parses and prints. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_gt.h"
#include "progress.h"
#include "demo/demo.h"
#include "sensim/judge.h"
#include "sensim/metrics.h"
#include "sensim/rig.h"
#include "sweep.h"

#ifndef SENSIM_DATADIR
#define SENSIM_DATADIR "/usr/local/share/sensim"
#endif

enum { O_REAL_SEED = CLI_LONG, O_MODE, O_IMU, O_BOOT, O_DIR, O_DATA, O_KEEP, O_JSON, O_PERM, O_SWEEP, O_SHARD, O_SCORES,
       O_CSV, O_PLOT };

static const cli_opt cmd_sim2real_opts[] = {
    {'g', "generator", "LIST", "the models that make the real logs, comma-separated\n"
                               "(default ch-gauss,ch-rw); models: ch-gauss, ch-rw,\n"
                               "airsim, ch-gauss+airsim, ch-rw+airsim (or the\n"
                               "paper's names Ch:Gauss, ...)"},
    {'n', "tests", "N", "tests per scenario (default 10, as the paper)"},
    {'t', "duration", "S", "seconds per test, or e.g. '2 min' (default 60)"},
    {O_REAL_SEED, "real-seed", "S", "first seed of the real tests (default 1001; must not\n"
                                    "overlap 1..3N)"},
    {O_MODE, "mode", "MODE", "judge mode: robot_localization (default) or corrected"},
    {O_IMU, "imu", "RIG", "the IMU rig (default DATA/rigs/imu-seed004.yaml)"},
    {O_PERM, "permutations", "N", "relabelings of the permutation test whose p says\n"
                                  "whether a variant's set can be told from the real set\n"
                                  "(default 999; 0: none)"},
    {O_BOOT, "bootstrap", "N", "replicates of the VEPD bootstrap percentile intervals\n"
                               "(default 200; 0: none)"},
    {O_DIR, "dir", "DIR", "where the logs go (default ./sensim-sim2real)"},
    {O_DATA, "data", "DIR", "the bundled presets (default: $SENSIM_DATA, ./data, the\n"
                            "program's ../share/sensim, or " SENSIM_DATADIR ")"},
    {O_KEEP, "keep", NULL, "also write the judged logs: DIR/real-<generator>/ and\n"
                           "DIR/sim/<model>/ then hold the tests for sensim vepd\n"
                           "(by default the estimates are scored in memory)"},
    {O_JSON, "json", NULL, "print one JSON object instead of the tables"},
    {O_SWEEP, "sweep", "SWEEP.yaml", "score a grid of noise parameters instead (see below);\n"
                                     "needs -o"},
    {'o', "output", "TABLE.h5", "with --sweep: the table of scores (/sweep: point, the\n"
                                "keys, w1, w2, vepd, vepd_line, vepd_circle, vepd_sine)"},
    {O_SHARD, "shard", "I/N", "with --sweep: only the I-th of N contiguous parts of the\n"
                              "grid (I from 0); 'sensim stitch' joins the N tables\n"
                              "into the table of the whole grid, bit for bit"},
    {O_SCORES, "scores", "TABLE.h5", "print a sweep's table (a part's or the stitched one) as\n"
                                     "CSV, or write it to --csv"},
    {O_CSV, "csv", "FILE", "with --scores: the CSV file ('-': standard output)"},
    {O_PLOT, "plot", "FILE.svg", "with --scores: VEPD against the first key, one line\n"
                                 "per value of the other keys"},
    {'q', "quiet", NULL, "no progress (shown on stderr only when it is a\n"
                         "terminal)"},
    CLI_OPTS_END};

const cli_spec cmd_sim2real_spec = {
    .verb = "sim2real",
    .head = "usage: sensim sim2real [options]\n"
            "\n"
            "Reproduces the GNSS experiment of \"Quantifying the Sim2real Gap for GPS and\n"
            "IMU Sensors\" in simulation. For each generator, \"real\" logs are made with\n"
            "that GNSS model (plus the IMU rig); simulated logs are made with each of\n"
            "the paper's five variants: Ch:Gauss, Ch:RW, AirSim, Ch:Gauss+AirSim and\n"
            "Ch:RW+AirSim. Every log is a line, circle or sine trajectory (N tests\n"
            "each, speeds 1.5 to 2.4 m/s); the judge runs on every log, each variant's\n"
            "set is scored against the real set by VEPD (see sensim-vepd(1)), and the\n"
            "variants are ranked. A score that works ranks the generator first.\n"
            "\n"
            "The simulated tests use seeds 1..3N and the real tests seeds from\n"
            "--real-seed on: the generator's own simulated set is an independent draw\n"
            "of the same model, not a copy of the real logs. All variants share the\n"
            "simulated IMU logs (common random numbers), so they differ only in GNSS.\n"
            "\n"
            "Options:\n",
    .opts = cmd_sim2real_opts,
    .column = 24,
    .tail = "\n"
            "p is the permutation test of \"this variant's tests and the real tests\n"
            "come from one distribution\": the real and simulated test of each pair\n"
            "(same path and speed) swap labels at random, and p is the fraction of\n"
            "relabelings scoring a VEPD at least the observed one. The generator should show a "
            "large p, the other variants a small one.\n"
            "VEPD is above 0 even between two draws of one model, so the bootstrap\n"
            "percentile interval of a VEPD near 0 lies above it; p, not the interval,\n"
            "says whether two sets are indistinguishable.\n"
            "\n"
            "\n"
            "A sweep (--sweep SWEEP.yaml -o TABLE.h5) scores a grid of noise parameters:\n"
            "  model: ch-gauss                      # the variant to start from (default:\n"
            "                                       # the generator, one with --sweep)\n"
            "  sweep:                               # SENSOR.KEY[.KEY...]: values\n"
            "    gps.position_noise.sigma: [0.01, 0.03, 0.1]\n"
            "    imu.gyro.chrono_drift.bias_drift: [1.0e-4, 1.0e-3]\n"
            "A key names a sensor of the IMU rig or of the model's GNSS preset and a key\n"
            "path in it (a missing last key is added). Every combination is a point (the\n"
            "last key changing fastest); each point's simulated set (seeds 1..3N) is\n"
            "scored by VEPD against the generator's real set. --shard I/N takes a part\n"
            "of the points; sensim stitch joins the parts' tables.\n"
            "\n"
            "Exit status: 0 success (whatever the ranking), 1 failure, 2 usage error.\n",
};

/* The experiment is sensim_sim2real_run's; these are its names here. */
#define NMODELS SENSIM_SIM2REAL_NMODELS
#define NSCEN SENSIM_SIM2REAL_NSCEN
static const sensim_sim2real_model *const models = sensim_sim2real_models;
static const char *const *const scenarios = sensim_sim2real_scenarios;
typedef sensim_sim2real_standing standing;
typedef sensim_sim2real_model model_def;

typedef struct {
    const char *data, *dir, *imu, *mode;
    int gen[NMODELS], ngen;
    size_t tests;
    double duration;
    unsigned long long real_seed;
    size_t n_boot, n_perm;
    int keep, json, quiet;
} config;

static void print_text(const config *c, int g, const standing st[NMODELS])
{
    const model_def *gen = &models[c->gen[g]];
    printf("\n\"Real\" logs from %s (%s), %zu tests:\n", gen->label, gen->preset, NSCEN * c->tests);
    printf("   %4s  %-16s %10s %10s %10s", "rank", "model", "W1 (m/s)", "W2", "VEPD");
    if (c->n_perm)
        printf(" %7s", "p");
    if (c->n_boot)
        printf("  %-22s", "95% bootstrap interval");
    for (int k = 0; k < NSCEN; k++)
        printf("  %13s", scenarios[k]);
    printf("\n");
    for (int r = 0; r < NMODELS; r++) {
        const standing *s = &st[r];
        printf("   %4d  %-16s %10.4g %10.4g %10.4g", r + 1, models[s->model].label, s->all.w1, s->all.w2, s->all.vepd);
        if (c->n_perm)
            printf(" %7.3g", s->perm.p);
        if (c->n_boot)
            printf("  [%8.3g, %8.3g] ", s->ci.lo, s->ci.hi);
        for (int k = 0; k < NSCEN; k++)
            printf("  %9.3g (%d)", s->scen[k].vepd, s->scen_rank[k]);
        printf("%s\n", s->model == c->gen[g] ? "  <- generator" : "");
    }
    if (c->n_perm || c->n_boot)
        printf("   (%s%s%s)\n", c->n_perm ? "p: paired permutation test, large = indistinguishable" : "",
               c->n_perm && c->n_boot ? ";\n    " : "",
               c->n_boot ? "interval: bootstrap percentile interval of VEPD, above a VEPD near 0" : "");
    const standing *a = &st[0], *b = &st[1];
    if (a->model == c->gen[g]) {
        printf("   %s ranks first; the runner-up, %s, scores %.3g times its VEPD", gen->label,
               models[b->model].label, a->all.vepd > 0 ? b->all.vepd / a->all.vepd : INFINITY);
        if (c->n_boot)
            printf(",\n   and the bootstrap intervals %s", a->ci.hi < b->ci.lo ? "do not overlap" : "overlap");
        printf(".\n");
        if (c->n_perm) {
            /* How many variants the test tells apart from the real set at 5%
             * (the generator should not be one of them). */
            int apart = 0;
            for (int r = 0; r < NMODELS; r++)
                apart += st[r].model != c->gen[g] && st[r].perm.p < 0.05;
            printf("   Permutation test: the generator's tests are %s from the real ones\n"
                   "   (p = %.3g); %d of the %d other variants are told apart (p < 0.05).\n",
                   a->perm.p < 0.05 ? "told apart" : "indistinguishable", a->perm.p, apart, NMODELS - 1);
        }
    } else {
        printf("   %s does NOT rank first: %s scores lower.\n", gen->label, models[a->model].label);
    }
}

static void print_json_standing(const config *c, const standing *s, int last)
{
    printf("        {\"model\": \"%s\", \"label\": \"%s\", \"w1\": %s, \"w2\": %s, \"vepd\": %s", models[s->model].id,
           models[s->model].label, CLI_JSON_G(s->all.w1, 17), CLI_JSON_G(s->all.w2, 17), CLI_JSON_G(s->all.vepd, 17));
    if (c->n_perm)
        printf(", \"p\": %s, \"n_perm\": %zu", CLI_JSON_G(s->perm.p, 17), c->n_perm);
    if (c->n_boot)
        printf(", \"ci\": {\"level\": 0.95, \"lo\": %s, \"hi\": %s, \"n_boot\": %zu, \"seed\": 1}",
               CLI_JSON_G(s->ci.lo, 17), CLI_JSON_G(s->ci.hi, 17), c->n_boot);
    printf(",\n         \"scenarios\": {");
    for (int k = 0; k < NSCEN; k++) {
        printf("%s\"%s\": {\"w1\": %s, \"w2\": %s, \"vepd\": %s, \"rank\": %d", k ? ", " : "", scenarios[k],
               CLI_JSON_G(s->scen[k].w1, 17), CLI_JSON_G(s->scen[k].w2, 17), CLI_JSON_G(s->scen[k].vepd, 17),
               s->scen_rank[k]);
        if (c->n_perm)
            printf(", \"p\": %s", CLI_JSON_G(s->scen_perm[k].p, 17));
        printf("}");
    }
    printf("}}%s\n", last ? "" : ",");
}

/* Runs the experiment and prints the rankings. */
static int experiment(const config *c)
{
    const size_t n = c->tests, nall = NSCEN * n;
    sensim_sim2real_opts o = {.data = c->data, .imu_rig = c->imu, .dir = c->dir,
                              .judge_mode = sensim_judge_mode_parse(c->mode), .ngen = c->ngen, .tests = n,
                              .duration = c->duration, .real_seed = c->real_seed, .n_boot = c->n_boot,
                              .n_perm = c->n_perm, .keep = c->keep, .progress = cli_progress_fn};
    memcpy(o.generators, c->gen, sizeof o.generators);
    cli_progress prog;
    cli_progress_init(&prog, "sim2real", c->quiet);
    o.progress_ctx = &prog;
    sensim_sim2real_result *res_p = malloc(sizeof *res_p);
    if (!res_p)
        return cli_fail("sim2real", "out of memory");
    sensim_status e = sensim_sim2real_run(&o, res_p);
    cli_progress_done(&prog);
    if (e) {
        free(res_p);
        return cli_fail_lib("sim2real");
    }
    const sensim_sim2real_result res = *res_p;
    free(res_p);
    if (c->json) {
        printf("{\n  \"tests_per_scenario\": %zu, \"duration_s\": %s, \"judge\": \"%s\",\n", n,
               CLI_JSON_G(c->duration, 17), c->mode);
        printf("  \"scenarios\": [\"line\", \"circle\", \"sine\"],\n");
        printf("  \"sim_seeds\": [1, %zu], \"real_seeds\": [%llu, %llu],\n", nall, c->real_seed,
               c->real_seed + nall - 1);
        printf("  \"generators\": [\n");
    } else {
        printf("sim2real: %d GNSS variants against \"real\" logs; %zu tests per scenario\n"
               "(line, circle, sine) of %g s, IMU %s, judge %s.\n"
               "Seeds differ: simulated tests use seeds 1..%zu, real tests %llu..%llu.\n",
               NMODELS, n, c->duration, c->imu, c->mode, nall, c->real_seed, c->real_seed + nall - 1);
        printf("VEPD over all tests (the paper's Table I) and per scenario with its rank (Table II).\n");
    }
    for (int g = 0; g < c->ngen; g++) {
        const standing *st = res.standings[g];
        if (c->json) {
            const standing *a = &st[0], *b = &st[1];
            /* margin: the runner-up's VEPD over the first's (null when the
             * first scores exactly 0). */
            printf("    {\"generator\": \"%s\", \"first\": \"%s\", \"generator_first\": %s, \"margin\": ",
                   models[c->gen[g]].id, models[a->model].id, a->model == c->gen[g] ? "true" : "false");
            if (a->all.vepd > 0)
                printf("%s,\n", CLI_JSON_G(b->all.vepd / a->all.vepd, 17));
            else
                printf("null,\n");
            printf("     \"ranking\": [\n");
            for (int r = 0; r < NMODELS; r++)
                print_json_standing(c, &st[r], r == NMODELS - 1);
            printf("     ]}%s\n", g + 1 < c->ngen ? "," : "");
        } else {
            print_text(c, g, st);
        }
    }
    if (c->json)
        printf("  ]\n}\n");
    else if (c->keep)
        printf("\nLogs kept: sensim vepd --real %s/real-%s --sim %s/sim/MODEL scores one pair.\n", c->dir,
               models[c->gen[0]].id, c->dir);
    return CLI_OK;
}

/* --sweep: the grid's points against one generator (cli/sweep.c). */
static int run_sweep(const config *c, const char *sweep, const char *shard, const char *out, int argc, char **argv)
{
    if (c->ngen != 1)
        return cli_usage_error("sim2real", "--sweep scores against one generator; --generator names %d", c->ngen);
    sensim_sim2real_opts o = {.data = c->data, .imu_rig = c->imu, .dir = c->dir,
                              .judge_mode = sensim_judge_mode_parse(c->mode), .tests = c->tests,
                              .duration = c->duration, .real_seed = c->real_seed};
    char *created = cli_join_args("sensim", argc, argv);
    int rc = cli_sweep_run(&o, c->gen[0], sweep, shard, out, c->quiet, created);
    free(created);
    return rc;
}

int cmd_sim2real(int argc, char **argv)
{
    config c = {.dir = "sensim-sim2real", .mode = "robot_localization", .tests = 10, .duration = 60,
                .real_seed = 1001, .n_boot = 200, .n_perm = 999};
    const char *gens = NULL, *data = NULL, *sweep = NULL, *out = NULL, *shard = NULL, *scores = NULL,
               *csv = NULL, *plot = NULL;
    char imu[1100];
    unsigned long long u;
    uint64_t tests = c.tests, real_seed = c.real_seed, n_perm = c.n_perm;
    int ch;
    const cli_to to[] = {
        CLI_STR("generator", &gens), CLI_STR("sweep", &sweep), CLI_STR("output", &out), CLI_STR("shard", &shard),
        CLI_STR("scores", &scores), CLI_STR("csv", &csv), CLI_STR("plot", &plot),
        CLI_COUNT("tests", &tests, 1, 100000), CLI_COUNT("real-seed", &real_seed, 0, UINT64_MAX),
        CLI_STR("imu", &c.imu), CLI_COUNT("permutations", &n_perm, 0, 100000000), CLI_STR("dir", &c.dir),
        CLI_STR("data", &data), CLI_FLAG("keep", &c.keep), CLI_FLAG("json", &c.json), CLI_FLAG("quiet", &c.quiet),
        {0}};
    cli_parser op;
    cli_parse_begin_to(&op, &cmd_sim2real_spec, to, argc, argv);
    while ((ch = cli_parse_next(&op)) > 0) {
        switch (ch) {
        case 't':
            if (cli_parse_seconds(optarg, &c.duration) || !(c.duration >= 1 && c.duration <= 86400))
                return cli_usage_error("sim2real", "--duration: '%s' is not a duration from 1 s to 24 h", optarg);
            break;
        case O_MODE:
            if (sensim_judge_mode_parse(optarg) < 0)
                return cli_usage_error("sim2real", "--mode: '%s' is not robot_localization, rl or corrected",
                                       optarg);
            c.mode = sensim_judge_mode_name((sensim_judge_mode)sensim_judge_mode_parse(optarg));
            break;
        case O_BOOT:
            if (cli_parse_u64(optarg, &u) || (u != 0 && u < 10) || u > 1000000)
                return cli_usage_error("sim2real", "--bootstrap: '%s' is not 0 or a count from 10 to 1e6", optarg);
            c.n_boot = (size_t)u;
            break;
        }
    }
    if (ch)
        return cli_parse_exit(ch);
    c.tests = (size_t)tests;
    c.real_seed = real_seed;
    c.n_perm = (size_t)n_perm;
    if (optind != argc)
        return cli_usage_error("sim2real", "unexpected argument '%s'", argv[optind]);
    if (scores) {
        if (sweep || out || shard)
            return cli_usage_error("sim2real", "--scores reads a table; it takes --csv and --plot only");
        return cli_sweep_scores(scores, csv, plot);
    }
    if (csv || plot)
        return cli_usage_error("sim2real", "--csv and --plot go with --scores TABLE.h5");
    if ((out || shard) && !sweep)
        return cli_usage_error("sim2real", "-o and --shard go with --sweep SWEEP.yaml");
    if (sweep && !out)
        return cli_usage_error("sim2real", "--sweep needs -o TABLE.h5");
    if (!gens)
        gens = sweep ? "ch-gauss" : "ch-gauss,ch-rw";
    for (const char *s = gens; *s;) {
        size_t len = strcspn(s, ",");
        int m = sensim_sim2real_model_find(s, len);
        if (m < 0)
            return cli_usage_error("sim2real", "--generator: '%.*s' is not one of ch-gauss, ch-rw, airsim, "
                                               "ch-gauss+airsim, ch-rw+airsim", (int)len, s);
        for (int g = 0; g < c.ngen; g++)
            if (c.gen[g] == m)
                return cli_usage_error("sim2real", "--generator: '%s' is named twice", models[m].id);
        c.gen[c.ngen++] = m;
        s += len;
        if (*s == ',' && *++s == '\0')
            return cli_usage_error("sim2real", "--generator: empty name after ','");
    }
    if (c.ngen == 0)
        return cli_usage_error("sim2real", "--generator: no model named");
    /* Identical seeds would copy the generator's set into the real set and
     * score it 0 by construction. */
    unsigned long long nall = NSCEN * (unsigned long long)c.tests;
    if (c.real_seed <= nall && c.real_seed + nall - 1 >= 1)
        return cli_usage_error("sim2real", "--real-seed: %llu..%llu overlaps the simulated seeds 1..%llu", c.real_seed,
                               c.real_seed + nall - 1, nall);
    c.data = demo_find_data(data);
    if (!c.imu) {
        snprintf(imu, sizeof imu, "%s/rigs/imu-seed004.yaml", c.data);
        c.imu = imu;
    }
    if (access(c.imu, R_OK) != 0)
        return cli_fail("sim2real", "%s: cannot read the IMU rig (%s); give --data DIR or --imu RIG", c.imu,
                        strerror(errno));
    if (sweep)
        return run_sweep(&c, sweep, shard, out, argc, argv);
    return experiment(&c);
}
