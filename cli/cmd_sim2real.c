/* sensim sim2real - seed 004's GNSS experiment reproduced in simulation:
 * "real" logs from one GNSS model (the generator), simulated logs from each
 * of the paper's five variants, the judge on every log, VEPD of each
 * variant's set against the real set, and the ranking. A sound score ranks
 * the generator first. Orchestration only: trajectory, inject, judge and the
 * VEPD functions of the library do the work. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
#include "demo/demo.h"
#include "judge_log.h"
#include "sensim/judge.h"
#include "sensim/metrics.h"
#include "sensim/rig.h"

#ifndef SENSIM_DATADIR
#define SENSIM_DATADIR "/usr/local/share/sensim"
#endif

enum { O_REAL_SEED = CLI_LONG, O_MODE, O_IMU, O_BOOT, O_DIR, O_DATA, O_KEEP, O_JSON, O_PERM };

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
    {'q', "quiet", NULL, "no progress (shown on stderr only when it is a\n"
                         "terminal)"},
    {'h', "help", NULL, "this text"},
    {0}};

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
            "Exit status: 0 success (whatever the ranking), 1 failure, 2 usage error.\n",
};

/* The five GNSS variants of seed 004, section III-B, in the paper's order. */
typedef struct {
    const char *id, *preset, *label;
} model_def;

static const model_def models[] = {
    {"ch-gauss", "gnss-chrono-gauss", "Ch:Gauss"},
    {"ch-rw", "gnss-chrono-rw", "Ch:RW"},
    {"airsim", "gnss-airsim", "AirSim"},
    {"ch-gauss+airsim", "gnss-chrono-gauss-airsim", "Ch:Gauss+AirSim"},
    {"ch-rw+airsim", "gnss-chrono-rw-airsim", "Ch:RW+AirSim"},
};
#define NMODELS ((int)(sizeof models / sizeof models[0]))

static const char *const scenarios[] = {"line", "circle", "sine"};
#define NSCEN 3

typedef struct {
    const char *data, *dir, *imu, *mode;
    int gen[NMODELS], ngen;
    size_t tests;
    double duration;
    unsigned long long real_seed;
    size_t n_boot, n_perm;
    int keep, json, quiet;
} config;

/* One variant's standing against one real set. */
typedef struct {
    int model;
    sensim_vepd_result all, scen[NSCEN];
    int scen_rank[NSCEN];
    sensim_vepd_ci ci;
    sensim_vepd_perm perm, scen_perm[NSCEN];
} standing;

static int model_find(const char *name, size_t len)
{
    for (int m = 0; m < NMODELS; m++)
        if ((strlen(models[m].id) == len && !strncasecmp(models[m].id, name, len)) ||
            (strlen(models[m].label) == len && !strncasecmp(models[m].label, name, len)))
            return m;
    return -1;
}

static int make_dir(const char *d)
{
    if (mkdir(d, 0777) != 0 && errno != EEXIST)
        return cli_fail("sim2real", "%s: cannot create the directory: %s", d, strerror(errno));
    return CLI_OK;
}

/* Runs a verb in-process on an argument list (NULL-terminated, < 32). */
static int run_verb(int (*fn)(int, char **), const char *verb, const char *const *args)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)verb;
    for (; *args && argc < 31; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    return fn(argc, argv);
}

/* Injects a loaded rig onto a log with a seed (one thread: the logs are
 * short and many). */
static int inject(const sensim_rig *rig, unsigned long long seed, const char *in, const char *out)
{
    sensim_inject_opts o = {seed, 1, 0, NULL, NULL};
    return sensim_rig_inject(rig, &o, in, out) ? cli_fail_lib("sim2real") : CLI_OK;
}

/* The judge's times and speeds, collected block by block. */
typedef struct {
    double *t, *v;
    size_t n, cap;
} est_buf;

static sensim_status collect(void *ctx, const sensim_judge_output *b)
{
    est_buf *e = ctx;
    if (e->n + b->n > e->cap) {
        size_t cap = 2 * (e->n + b->n);
        double *t = realloc(e->t, cap * sizeof *t);
        if (t)
            e->t = t;
        double *v = t ? realloc(e->v, cap * sizeof *v) : NULL;
        if (!v)
            return sensim_error(SENSIM_ENOMEM, "out of memory for %zu estimates", cap);
        e->v = v;
        e->cap = cap;
    }
    memcpy(e->t + e->n, b->t, b->n * sizeof *b->t);
    memcpy(e->v + e->n, b->speed, b->n * sizeof *b->speed);
    e->n += b->n;
    return SENSIM_OK;
}

/* The judge on a log and the scores of the test, in memory: the same
 * estimate `sensim judge` writes (same options) scored as `sensim vepd`
 * scores the written log, without writing it. */
static int score_in_memory(const config *c, const char *log_path, sensim_vepd_test *out)
{
    sensim_judge_options o = sensim_judge_default_options((sensim_judge_mode)sensim_judge_mode_parse(c->mode));
    sensim_log *log = sensim_log_open(log_path);
    if (!log)
        return cli_fail_lib("sim2real");
    cli_judge_input ji;
    int rc = cli_judge_prepare("sim2real", log, NULL, NULL, 1, &o, &ji);
    if (rc) {
        sensim_log_close(log);
        return rc;
    }
    est_buf e = {0};
    sensim_judge_output counts;
    sensim_status st = cli_judge_stream(&ji, &o, collect, &e, &counts);
    cli_judge_input_free(&ji);
    sensim_log_close(log);
    sensim_vepd_series s = {.n_est = e.n, .est_t = e.t, .est_v = e.v};
    double t0 = 0;
    if (!st)
        st = sensim_vepd_read_truth(log_path, &s, &t0);
    if (!st) {
        for (size_t i = 0; i < s.n_est; i++)
            s.est_t[i] -= t0;
        if ((st = sensim_vepd_score(&s, out)))
            sensim_error_prefix(st, "%s", log_path);
    }
    sensim_vepd_series_free(&s);
    return st ? cli_fail_lib("sim2real") : CLI_OK;
}

/* GNSS onto an IMU log, the judge, and the scores of one test. The judged
 * log is written to `keep_as` when given (scores come from memory either
 * way). */
static int judge_and_score(const config *c, const sensim_rig *gnss, unsigned long long seed, const char *imu_log,
                           const char *work, const char *keep_as, sensim_vepd_test *out)
{
    char with_gnss[1200];
    snprintf(with_gnss, sizeof with_gnss, "%s/gnss.h5", work);
    int rc = inject(gnss, seed, imu_log, with_gnss);
    if (!rc)
        rc = score_in_memory(c, with_gnss, out);
    if (!rc && keep_as) {
        const char *args[] = {with_gnss, "-o", keep_as, "--mode", c->mode, "--quiet", NULL};
        rc = run_verb(cmd_judge, "judge", args);
    }
    unlink(with_gnss);
    return rc;
}

static int cmp_standing(const void *a, const void *b)
{
    const standing *x = a, *y = b;
    return x->all.vepd < y->all.vepd ? -1 : x->all.vepd > y->all.vepd ? 1 : x->model - y->model;
}

/* Scores every variant against one real set and sorts them by VEPD. */
static int rank(const config *c, const sensim_vepd_test *real, sensim_vepd_test *const sim[NMODELS],
                standing st[NMODELS])
{
    size_t n = c->tests, nall = NSCEN * n;
    /* Real test i and simulated test i share path and speed: the design is
     * paired, and only the two tests of a pair are exchangeable under "one
     * model". The permutations swap labels within pairs (stratum i). Within
     * whole scenarios instead, each set would keep one test of each speed
     * while relabelings mix them, and the generator's p came out 1 for three
     * real seeds out of three (measured at the paper's size). */
    size_t *strata = malloc(nall * sizeof *strata);
    if (!strata)
        return cli_fail("sim2real", "out of memory");
    for (size_t i = 0; i < nall; i++)
        strata[i] = i;
    sensim_status e = SENSIM_OK;
    for (int m = 0; m < NMODELS && !e; m++) {
        st[m].model = m;
        memset(&st[m].ci, 0, sizeof st[m].ci);
        memset(&st[m].perm, 0, sizeof st[m].perm);
        memset(st[m].scen_perm, 0, sizeof st[m].scen_perm);
        e = sensim_vepd_compare(real, nall, sim[m], nall, &st[m].all);
        for (int k = 0; k < NSCEN && !e; k++)
            e = sensim_vepd_compare(real + k * n, n, sim[m] + k * n, n, &st[m].scen[k]);
        if (!e && c->n_boot)
            e = sensim_vepd_bootstrap(real, nall, sim[m], nall, c->n_boot, 1, 0.95, &st[m].ci);
        if (!e && c->n_perm)
            e = sensim_vepd_permutation(real, nall, strata, sim[m], nall, strata, c->n_perm, 1, &st[m].perm);
        for (int k = 0; k < NSCEN && !e && c->n_perm; k++)
            e = sensim_vepd_permutation(real + k * n, n, strata + k * n, sim[m] + k * n, n, strata + k * n, c->n_perm,
                                        1, &st[m].scen_perm[k]);
    }
    free(strata);
    if (e)
        return cli_fail_lib("sim2real");
    /* Rank within each scenario (1 = lowest VEPD), as the paper's Table II. */
    for (int k = 0; k < NSCEN; k++)
        for (int m = 0; m < NMODELS; m++) {
            st[m].scen_rank[k] = 1;
            for (int q = 0; q < NMODELS; q++)
                if (st[q].scen[k].vepd < st[m].scen[k].vepd ||
                    (st[q].scen[k].vepd == st[m].scen[k].vepd && q < m))
                    st[m].scen_rank[k]++;
        }
    qsort(st, NMODELS, sizeof *st, cmp_standing);
    return CLI_OK;
}

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

/* Builds the sets and prints the rankings. */
static int experiment(const config *c)
{
    size_t n = c->tests, nall = NSCEN * n;
    sensim_rig *imu_rig = NULL, *rigs[NMODELS] = {0};
    sensim_vepd_test *buf = calloc((size_t)(NMODELS + c->ngen) * nall, sizeof *buf);
    sensim_vepd_test *sim[NMODELS], *real[NMODELS];
    standing st[NMODELS];
    char work[1100], gt[1200], imu_sim[1200], imu_real[1200], kept[1300], p[1200];
    int rc = CLI_OK;
    if (!buf)
        return cli_fail("sim2real", "out of memory");
    for (int m = 0; m < NMODELS; m++)
        sim[m] = buf + (size_t)m * nall;
    for (int g = 0; g < c->ngen; g++)
        real[g] = buf + (size_t)(NMODELS + g) * nall;
    if (!(imu_rig = sensim_rig_load(c->imu))) {
        rc = cli_fail_lib("sim2real");
        goto done;
    }
    for (int m = 0; m < NMODELS; m++) {
        snprintf(p, sizeof p, "%s/%s.yaml", c->data, models[m].preset);
        if (!(rigs[m] = sensim_rig_load(p))) {
            rc = cli_fail_lib("sim2real");
            goto done;
        }
    }
    snprintf(work, sizeof work, "%s/work", c->dir);
    if ((rc = make_dir(c->dir)) || (rc = make_dir(work)))
        goto done;
    if (c->keep) {
        snprintf(p, sizeof p, "%s/sim", c->dir);
        if ((rc = make_dir(p)))
            goto done;
        for (int m = 0; m < NMODELS && !rc; m++) {
            snprintf(p, sizeof p, "%s/sim/%s", c->dir, models[m].id);
            rc = make_dir(p);
        }
        for (int g = 0; g < c->ngen && !rc; g++) {
            snprintf(p, sizeof p, "%s/real-%s", c->dir, models[c->gen[g]].id);
            rc = make_dir(p);
        }
        if (rc)
            goto done;
    }
    cli_progress prog;
    cli_progress_init(&prog, "sim2real", c->quiet);
    for (int k = 0; k < NSCEN; k++) {
        for (size_t i = 0; i < n; i++) {
            size_t idx = (size_t)k * n + i;
            unsigned long long s_sim = 1 + idx, s_real = c->real_seed + idx;
            cli_progress_update(&prog, "tests", (double)idx / (double)nall);
            /* The tests of a scenario differ in speed, as the paper's runs
             * differ; real test i and simulated test i share the path. */
            char dur[32], speed[32];
            snprintf(dur, sizeof dur, "%.17g", c->duration);
            snprintf(speed, sizeof speed, "%.2f", 1.5 + 0.1 * (double)(i % 10));
            snprintf(gt, sizeof gt, "%s/gt.h5", work);
            snprintf(imu_sim, sizeof imu_sim, "%s/imu-sim.h5", work);
            snprintf(imu_real, sizeof imu_real, "%s/imu-real.h5", work);
            const char *targs[] = {"--shape", scenarios[k], "--duration", dur, "--rate", "100", "--speed", speed,
                                   "-o",      gt,           NULL};
            if ((rc = run_verb(cmd_trajectory, "trajectory", targs)) ||
                (rc = inject(imu_rig, s_sim, gt, imu_sim)) || (rc = inject(imu_rig, s_real, gt, imu_real)))
                goto done;
            for (int m = 0; m < NMODELS && !rc; m++) {
                snprintf(kept, sizeof kept, "%s/sim/%s/%s_%zu.h5", c->dir, models[m].id, scenarios[k], i + 1);
                rc = judge_and_score(c, rigs[m], s_sim, imu_sim, work, c->keep ? kept : NULL, &sim[m][idx]);
            }
            for (int g = 0; g < c->ngen && !rc; g++) {
                snprintf(kept, sizeof kept, "%s/real-%s/%s_%zu.h5", c->dir, models[c->gen[g]].id, scenarios[k],
                         i + 1);
                rc = judge_and_score(c, rigs[c->gen[g]], s_real, imu_real, work, c->keep ? kept : NULL,
                                     &real[g][idx]);
            }
            if (rc)
                goto done;
        }
    }
    cli_progress_done(&prog);

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
        if ((rc = rank(c, real[g], sim, st)))
            goto done;
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
done:
    /* The per-test ground truth and IMU logs are scratch (the kept judged
     * logs carry copies). */
    snprintf(p, sizeof p, "%s/gt.h5", work);
    unlink(p);
    snprintf(p, sizeof p, "%s/imu-sim.h5", work);
    unlink(p);
    snprintf(p, sizeof p, "%s/imu-real.h5", work);
    unlink(p);
    rmdir(work);
    sensim_rig_free(imu_rig);
    for (int m = 0; m < NMODELS; m++)
        sensim_rig_free(rigs[m]);
    free(buf);
    return rc;
}

int cmd_sim2real(int argc, char **argv)
{
    config c = {.dir = "sensim-sim2real", .mode = "robot_localization", .tests = 10, .duration = 60,
                .real_seed = 1001, .n_boot = 200, .n_perm = 999};
    const char *gens = "ch-gauss,ch-rw", *data = NULL;
    char imu[1100];
    unsigned long long u;
    int ch;
    cli_parser op;
    cli_parse_begin(&op, &cmd_sim2real_spec, argc, argv);
    while ((ch = cli_parse_next(&op)) > 0) {
        switch (ch) {
        case 'g': gens = optarg; break;
        case 'n':
            if (cli_parse_u64(optarg, &u) || u < 1 || u > 100000)
                return cli_usage_error("sim2real", "--tests: '%s' is not a count from 1 to 100000", optarg);
            c.tests = (size_t)u;
            break;
        case 't':
            if (cli_parse_seconds(optarg, &c.duration) || !(c.duration >= 1 && c.duration <= 86400))
                return cli_usage_error("sim2real", "--duration: '%s' is not a duration from 1 s to 24 h", optarg);
            break;
        case O_REAL_SEED:
            if (cli_parse_u64(optarg, &c.real_seed))
                return cli_usage_error("sim2real", "--real-seed: '%s' is not a non-negative integer", optarg);
            break;
        case O_MODE:
            if (sensim_judge_mode_parse(optarg) < 0)
                return cli_usage_error("sim2real", "--mode: '%s' is not robot_localization, rl or corrected",
                                       optarg);
            c.mode = sensim_judge_mode_name((sensim_judge_mode)sensim_judge_mode_parse(optarg));
            break;
        case O_IMU: c.imu = optarg; break;
        case O_BOOT:
            if (cli_parse_u64(optarg, &u) || (u != 0 && u < 10) || u > 1000000)
                return cli_usage_error("sim2real", "--bootstrap: '%s' is not 0 or a count from 10 to 1e6", optarg);
            c.n_boot = (size_t)u;
            break;
        case O_PERM:
            if (cli_parse_u64(optarg, &u) || u > 100000000ULL)
                return cli_usage_error("sim2real", "--permutations: '%s' is not a count from 0 to 1e8", optarg);
            c.n_perm = (size_t)u;
            break;
        case O_DIR: c.dir = optarg; break;
        case O_DATA: data = optarg; break;
        case O_KEEP: c.keep = 1; break;
        case O_JSON: c.json = 1; break;
        case 'q': c.quiet = 1; break;
        }
    }
    if (ch)
        return cli_parse_exit(ch);
    if (optind != argc)
        return cli_usage_error("sim2real", "unexpected argument '%s'", argv[optind]);
    for (const char *s = gens; *s;) {
        size_t len = strcspn(s, ",");
        int m = model_find(s, len);
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
    return experiment(&c);
}
