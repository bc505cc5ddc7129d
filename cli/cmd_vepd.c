/* sensim vepd - sim2real score (VEPD, seed 004) between a set of real tests
 * and one or more sets of simulated tests. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_gt.h"
#include "progress.h"
#include "sensim/log.h"
#include "sensim/metrics.h"
#include "sensim/stitch.h"
#include "../lib/base_internal.h"

static const cli_opt cmd_vepd_opts[] = {
    {CLI_NOSHORT('r'), "real", "DIR", "the real tests (DIR/*.csv, DIR/*.h5)"},
    {CLI_NOSHORT('s'), "sim", "DIR", "the simulated tests (DIR/*.csv, DIR/*.h5)"},
    {CLI_NOSHORT('e'), "estimate", "NAME", "in logs, score /estimates/NAME (default: the only one)"},
    {CLI_NOSHORT('c'), "csv-layout", "ROOT", "the authors' tree: ROOT/Real/*.csv and\n"
                                             "ROOT/Sim/<model>_results/*.csv; every model is scored.\n"
                                             "A lone ROOT argument with Real/ and Sim/ means the same."},
    {CLI_NOSHORT('j'), "json", NULL, "print one JSON object (see sensim-vepd(1))"},
    {CLI_NOSHORT('Z'), "drop-zeros", NULL, "drop every ground-truth row whose time or speed is\n"
                                           "exactly 0, as the authors' script does (reproduces\n"
                                           "the paper; stops are lost)"},
    {CLI_NOSHORT('P'), "permutations", "N", "add the p-value of a permutation test of \"the real and\n"
                                            "simulated tests come from one distribution\": N\n"
                                            "relabelings, each swapping the real and simulated test\n"
                                            "of a name at random (default 0: none; 999 take ms)"},
    {CLI_NOSHORT('b'), "bootstrap", "N", "add a bootstrap percentile interval of VEPD (N >= 10)"},
    {CLI_NOSHORT('S'), "seed", "S", "seed of the permutations and bootstrap (default 1)"},
    {CLI_NOSHORT('l'), "level", "L", "confidence level of the interval (default 0.95)"},
    {CLI_NOSHORT('p'), "plot", "DIR", "write SVG histograms of the RMSE and flatness sets"},
    {'o', "output", "TABLE.h5", "with the authors' tree: also write a table of the models'\n"
                                "combined scores (/vepd: model, w1, w2, vepd, n_real,\n"
                                "n_sim, p, ci_lo, ci_hi; NaN where not asked for)"},
    {CLI_NOSHORT('H'), "shard", "I/N", "with the authors' tree and -o: only the I-th of N\n"
                                       "contiguous parts of the sorted model list (I from\n"
                                       "0); 'sensim stitch' joins the N tables, bit for bit"},
    {'q', "quiet", NULL, "no progress (shown on stderr only when it is a terminal)"},
    CLI_OPTS_END};

const cli_spec cmd_vepd_spec = {
    .verb = "vepd",
    .head = "usage: sensim vepd --real DIR --sim DIR [options]\n"
            "       sensim vepd --csv-layout ROOT [options]\n"
            "       sensim vepd ROOT [options]\n"
            "\n"
            "Scores how far simulated sensors are from real ones by the Velocity\n"
            "Estimation Performance Difference of \"Quantifying the Sim2real Gap for GPS\n"
            "and IMU Sensors\": per test the RMSE of the judge's speed estimate against\n"
            "ground truth and the difference of their spectral flatness, on a 15 Hz\n"
            "grid; over the tests the 1-D Wasserstein distances W1 (RMSE) and W2\n"
            "(flatness), and VEPD = (W1+W2)/2, per scenario and combined.\n"
            "\n"
            "A test is a CSV file in the authors' layout (header se_time, gt_time,\n"
            "se_vel, gt_vel; shorter columns padded with empty cells) or a sensim log\n"
            "(.h5) holding an estimate (see sensim-judge(1)) and the ground truth. Its\n"
            "scenario is the file name without the trailing _<number> and extension\n"
            "(path_3.csv: path). Trailing ground-truth rows of zeros are padding; a zero\n"
            "speed at a real time is a stop and counts. The scenario rest (the\n"
            "authors' scenario 0) gets its own row and stays out of the combined score\n"
            "and the mean, as in their script; a rest test whose ground-truth speed is\n"
            "0 throughout is listed as unscored (warning), not an error. When the real\n"
            "and simulated sets hold the same test names the permutation test pairs\n"
            "them; sets of other names or sizes are scored too (per scenario where both\n"
            "have tests).\n"
            "\n"
            "Options:\n",
    .opts = cmd_vepd_opts,
    .column = 21,
    .long_flush = 1,
    .tail = "\n"
            "VEPD is a distance between two finite samples, so it is above 0 even for\n"
            "two draws of one model, and a bootstrap interval of a VEPD near 0 lies\n"
            "above it. Whether the sets can be told apart at all is what p answers: a\n"
            "small p (say < 0.05) means they can; a large p means VEPD is no larger\n"
            "than relabeling the tests gives.\n"
            "\n"
            "Exit status: 0 success, 1 bad input (the message names the file, line and\n"
            "column), 2 usage error.\n",
};

typedef struct {
    char *name;     /* file name without .csv */
    char *scenario; /* name without the trailing _<number> */
    const char *ext; /* ".csv" or ".h5" */
    sensim_vepd_test s;
} test_entry;

/* A test of the rest scenario whose ground-truth speed is 0 throughout:
 * listed, not scored (its spectral flatness is undefined). */
typedef struct {
    char *name;
    char *reason;
} skipped_test;

typedef struct {
    char *dir;
    test_entry *t;
    size_t n;
    skipped_test *skip;
    size_t n_skip;
} test_set;

/* The authors' scenario 0: tests at rest. Their script scores scenarios 1-3
 * (path, circle, sine) and leaves it out of the combined score; so does
 * sensim, reporting it on its own row. */
static const char rest_scenario[] = "rest";

static int is_rest(const char *scenario)
{
    return scenario && !strcmp(scenario, rest_scenario);
}

typedef struct {
    char *name;
    test_set set;
} model_entry;

typedef struct {
    int json;
    size_t n_boot;
    size_t n_perm;
    unsigned long long seed;
    double level;
    const char *plot;
    const char *estimate;
    unsigned csv_flags; /* SENSIM_VEPD_DROP_ZEROS with --drop-zeros */
    cli_progress *progress; /* reading and scoring the test files */
    void *combined;         /* when not NULL, run_model leaves its combined score_row here */
} options;

static void set_free(test_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->t[i].name);
        free(s->t[i].scenario);
    }
    for (size_t i = 0; i < s->n_skip; i++) {
        free(s->skip[i].name);
        free(s->skip[i].reason);
    }
    SENSIM_FREE_ALL(s->skip, s->t, s->dir);
    memset(s, 0, sizeof *s);
}

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static char *path_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", a, b);
    return p;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *scenario_of(const char *name)
{
    size_t n = strlen(name), k = n;
    while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
        k--;
    if (k < n && k > 1 && name[k - 1] == '_')
        n = k - 1;
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, name, n);
        s[n] = '\0';
    }
    return s;
}

static int all_zero(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] != 0.0)
            return 0;
    return 1;
}

static int filter_tests(const struct dirent *d)
{
    return d->d_name[0] != '.' && (has_suffix(d->d_name, ".csv") || has_suffix(d->d_name, ".h5"));
}

/* Reads and scores every .csv and .h5 file in DIR (sorted by name). */
static int load_set(const char *dir, const char *estimate, unsigned csv_flags, cli_progress *prog, test_set *out)
{
    memset(out, 0, sizeof *out);
    struct dirent **list = NULL;
    int n = scandir(dir, &list, filter_tests, alphasort);
    if (n < 0)
        return cli_fail("vepd", "%s: cannot read directory: %s", dir, strerror(errno));
    int rc = CLI_OK;
    if (n == 0) {
        rc = cli_fail("vepd", "%s: no test files (*.csv or *.h5)", dir);
        goto done;
    }
    out->dir = strdup(dir);
    out->t = calloc((size_t)n, sizeof *out->t);
    out->skip = calloc((size_t)n, sizeof *out->skip);
    if (!out->dir || !out->t || !out->skip) {
        rc = cli_fail("vepd", "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        char *p = path_join(dir, list[i]->d_name);
        sensim_vepd_series s = {0};
        test_entry *e = &out->t[out->n];
        int h5 = has_suffix(list[i]->d_name, ".h5");
        size_t len = strlen(list[i]->d_name) - (h5 ? 3 : 4);
        char *name = strndup(list[i]->d_name, len), *scen = name ? scenario_of(name) : NULL;
        if (!scen) {
            free(p);
            free(name);
            rc = cli_fail("vepd", "out of memory");
            goto done;
        }
        sensim_status st = !p   ? SENSIM_ENOMEM
                           : h5 ? sensim_vepd_read_log(p, estimate, &s)
                                : sensim_vepd_read_csv_ex(p, csv_flags, &s);
        /* A rest test whose ground-truth speed is 0 throughout (every row
         * padding, or every speed 0) has no spectrum to score: listed and
         * left out, not an error that would stop the other scenarios. */
        const char *zero = NULL;
        if (is_rest(scen)) {
            if (st == SENSIM_EDATA && strstr(sensim_last_error(), "no ground-truth rows besides padding"))
                zero = "ground truth holds only zero rows (padding)";
            else if (!st && all_zero(s.gt_v, s.n_gt))
                zero = "ground-truth speed is 0 throughout";
        }
        if (zero) {
            st = SENSIM_OK;
            out->skip[out->n_skip].name = name;
            out->skip[out->n_skip].reason = strdup(zero);
            out->n_skip++;
            fprintf(stderr, "sensim vepd: warning: %s: %s; a rest test is not scored (not in the combined score)\n", p,
                    zero);
            sensim_vepd_series_free(&s);
            free(scen);
            free(p);
            cli_progress_update(prog, dir, (double)(i + 1) / n);
            continue;
        }
        if (!st && (st = sensim_vepd_score(&s, &e->s)))
            sensim_error_prefix(st, "%s", p);
        sensim_vepd_series_free(&s);
        free(p);
        cli_progress_update(prog, dir, (double)(i + 1) / n);
        if (st) {
            free(name);
            free(scen);
            rc = cli_fail_lib("vepd");
            goto done;
        }
        e->name = name;
        e->ext = h5 ? ".h5" : ".csv";
        e->scenario = scen;
        out->n++;
    }
    if (out->n == 0) {
        rc = cli_fail("vepd", "%s: no test to score (only rest tests at zero speed)", dir);
        goto done;
    }
done:
    cli_progress_done(prog);
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
    if (rc)
        set_free(out);
    return rc;
}

static const test_entry *find_test(const test_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->t[i].name, name))
            return &s->t[i];
    return NULL;
}

/* Whether the two sets hold the same test names: the simulated runs then
 * replicate the real ones and the permutation test pairs them. Sets of
 * other names or sizes are scored too (the 1-D Wasserstein distance needs
 * no pairing); their permutation test relabels across the pooled tests. */
static int sets_paired(const test_set *real, const test_set *sim)
{
    if (real->n != sim->n)
        return 0;
    for (size_t i = 0; i < real->n; i++)
        if (!find_test(sim, real->t[i].name))
            return 0;
    return 1;
}

typedef struct {
    const char *name; /* scenario, or NULL for all but rest (combined) */
    size_t nr, ns;
    sensim_vepd_result r;
    sensim_vepd_ci ci;
    int have_ci;
    sensim_vepd_perm perm;
    int have_p;
} score_row;

static size_t test_index(const test_set *real, const char *name)
{
    return (size_t)(find_test(real, name) - real->t);
}

static int score_subset(const test_set *real, const test_set *sim, const char *scenario, const options *o,
                        score_row *row)
{
    sensim_vepd_test *a = malloc((real->n + sim->n) * sizeof *a), *b = a + real->n;
    /* Stratum of each test for the permutations: the index of the real test
     * of its name when the sets are paired (one stratum otherwise). The
     * simulated test of a name replicates the real one (same maneuver), so
     * only the two are exchangeable under "one distribution": relabeling
     * across a scenario would mix maneuvers that the sets hold once each. */
    size_t *la = malloc((real->n + sim->n) * sizeof *la), *lb = la ? la + real->n : NULL;
    if (!a || !la) {
        free(a);
        free(la);
        return cli_fail("vepd", "out of memory");
    }
    size_t na = 0, nb = 0;
    const int paired = sets_paired(real, sim);
    for (size_t i = 0; i < real->n; i++)
        if (scenario ? !strcmp(real->t[i].scenario, scenario) : !is_rest(real->t[i].scenario)) {
            la[na] = paired ? test_index(real, real->t[i].name) : 0;
            a[na++] = real->t[i].s;
        }
    for (size_t i = 0; i < sim->n; i++)
        if (scenario ? !strcmp(sim->t[i].scenario, scenario) : !is_rest(sim->t[i].scenario)) {
            lb[nb] = paired ? test_index(real, sim->t[i].name) : 0;
            b[nb++] = sim->t[i].s;
        }
    row->name = scenario;
    row->nr = na;
    row->ns = nb;
    row->have_ci = 0;
    row->have_p = 0;
    sensim_status st = sensim_vepd_compare(a, na, b, nb, &row->r);
    if (!st && o->n_boot) {
        st = sensim_vepd_bootstrap(a, na, b, nb, o->n_boot, o->seed, o->level, &row->ci);
        row->have_ci = !st;
    }
    if (!st && o->n_perm) {
        st = sensim_vepd_permutation(a, na, la, b, nb, lb, o->n_perm, o->seed, &row->perm);
        row->have_p = !st;
    }
    free(a);
    free(la);
    return st ? cli_fail_lib("vepd") : CLI_OK;
}

static void json_row(const score_row *r, int indent)
{
    printf("\"w1\": %s, \"w2\": %s, \"vepd\": %s, \"n_real\": %zu, \"n_sim\": %zu", CLI_JSON_G(r->r.w1, 17),
           CLI_JSON_G(r->r.w2, 17), CLI_JSON_G(r->r.vepd, 17), r->nr, r->ns);
    if (r->have_p)
        printf(", \"p\": %s, \"n_perm\": %zu", CLI_JSON_G(r->perm.p, 17), r->perm.n_perm);
    if (r->have_ci)
        printf(",\n%*s\"ci\": {\"level\": %s, \"lo\": %s, \"hi\": %s, \"n_boot\": %zu, \"seed\": %llu}", indent, "",
               CLI_JSON_G(r->ci.level, 17), CLI_JSON_G(r->ci.lo, 17), CLI_JSON_G(r->ci.hi, 17), r->ci.n_boot,
               (unsigned long long)r->ci.seed);
}

static void text_row(const score_row *r)
{
    printf("%-12s %6zu %6zu  %12.6g %12.6g %12.6g", r->name ? r->name : "combined", r->nr, r->ns, r->r.w1, r->r.w2,
           r->r.vepd);
    if (r->have_p)
        printf(" %8.4g", r->perm.p);
    if (r->have_ci)
        printf("  [%.6g, %.6g]", r->ci.lo, r->ci.hi);
    putchar('\n');
}

static int write_plots(const options *o, const char *model, const test_set *real, const test_set *sim)
{
    if (mkdir(o->plot, 0777) != 0 && errno != EEXIST)
        return cli_fail("vepd", "%s: cannot create directory: %s", o->plot, strerror(errno));
    size_t n = real->n + sim->n;
    double *v = malloc(2 * n * sizeof *v);
    if (!v)
        return cli_fail("vepd", "out of memory");
    double *rm = v, *sf = v + n;
    for (size_t i = 0; i < n; i++) {
        const sensim_vepd_test *t = i < real->n ? &real->t[i].s : &sim->t[i - real->n].s;
        rm[i] = t->rmse;
        sf[i] = t->sf_diff;
    }
    int rc = CLI_OK;
    const char *what[2] = {"rmse", "flatness"};
    for (int k = 0; k < 2 && !rc; k++) {
        char file[512], title[512];
        snprintf(file, sizeof file, "%s/%s_%s.svg", o->plot, model, what[k]);
        snprintf(title, sizeof title, "%s: %s", model,
                 k ? "spectral flatness difference |SF(gt) - SF(est)|" : "RMSE of the speed estimate");
        const double *x = k ? sf : rm;
        if (sensim_svg_histogram(file, title, k ? "|SF(gt) - SF(est)|" : "RMSE (m/s)", x, real->n, "real",
                                 x + real->n, sim->n, "sim", 10))
            rc = cli_fail_lib("vepd");
    }
    free(v);
    return rc;
}

/* Scores one model: per scenario (in order of first appearance) and all together. */
static int run_model(const char *model, const test_set *real, const test_set *sim, const options *o, int json,
                     int indent)
{
    int rc = CLI_OK;
    const char **scen = malloc(real->n * sizeof *scen);
    score_row *rows = malloc((real->n + 1) * sizeof *rows);
    size_t ns = 0;
    if (!scen || !rows) {
        free(scen);
        free(rows);
        return cli_fail("vepd", "out of memory");
    }
    /* Scenarios of the real set that the simulated set has too (each side
     * needs a test for a distance); the combined row takes every test. */
    for (size_t i = 0; i < real->n; i++) {
        size_t k = 0;
        while (k < ns && strcmp(scen[k], real->t[i].scenario))
            k++;
        int in_sim = 0;
        for (size_t j = 0; j < sim->n && !in_sim; j++)
            in_sim = !strcmp(sim->t[j].scenario, real->t[i].scenario);
        if (k == ns && in_sim)
            scen[ns++] = real->t[i].scenario;
    }
    size_t nr_comb = 0, ns_comb = 0, n_in = 0;
    for (size_t i = 0; i < real->n; i++)
        nr_comb += !is_rest(real->t[i].scenario);
    for (size_t i = 0; i < sim->n; i++)
        ns_comb += !is_rest(sim->t[i].scenario);
    for (size_t k = 0; k < ns; k++)
        n_in += !is_rest(scen[k]);
    if (!nr_comb || !ns_comb)
        rc = cli_fail("vepd", "%s: no %s test outside the rest scenario (the combined score leaves rest out, as the "
                      "authors' script does)",
                      nr_comb ? sim->dir : real->dir, nr_comb ? "simulated" : "real");
    for (size_t k = 0; k < ns && !rc; k++)
        rc = score_subset(real, sim, scen[k], o, &rows[k]);
    if (!rc)
        rc = score_subset(real, sim, NULL, o, &rows[ns]);
    if (!rc && o->plot)
        rc = write_plots(o, model, real, sim);
    if (!rc) {
        double mean = 0;
        int has_rest = 0;
        for (size_t k = 0; k < ns; k++) {
            if (is_rest(scen[k]))
                has_rest = 1;
            else
                mean += rows[k].r.vepd / (double)n_in;
        }
        if (json) {
            printf("%*s", indent, "");
            json_row(&rows[ns], indent);
            printf(",\n%*s\"scenario_mean_vepd\": %s,\n%*s\"scenarios\": {", indent, "", CLI_JSON_G(mean, 17), indent,
                   "");
            for (size_t k = 0; k < ns; k++) {
                printf("%s\n%*s", k ? "," : "", indent + 2, "");
                cli_json_str(stdout, scen[k]);
                printf(": {");
                json_row(&rows[k], indent + 4);
                printf(", \"in_combined\": %s}", is_rest(scen[k]) ? "false" : "true");
            }
            printf("\n%*s},\n%*s\"tests\": [", indent, "", indent, "");
            for (int set = 0; set < 2; set++) {
                const test_set *ts = set ? sim : real;
                for (size_t i = 0; i < ts->n; i++) {
                    const test_entry *e = &ts->t[i];
                    printf("%s\n%*s{\"set\": \"%s\", \"name\": ", set || i ? "," : "", indent + 2, "",
                           set ? "sim" : "real");
                    cli_json_str(stdout, e->name);
                    printf(", \"scenario\": ");
                    cli_json_str(stdout, e->scenario);
                    printf(", \"rmse\": %s, \"sf_gt\": %s, \"sf_est\": %s, \"sf_diff\": %s, \"n_grid\": %zu}",
                           CLI_JSON_G(e->s.rmse, 17), CLI_JSON_G(e->s.sf_gt, 17), CLI_JSON_G(e->s.sf_est, 17),
                           CLI_JSON_G(e->s.sf_diff, 17), e->s.n_grid);
                }
            }
            printf("\n%*s],\n%*s\"unscored\": [", indent, "", indent, "");
            size_t nu = 0;
            for (int set = 0; set < 2; set++) {
                const test_set *ts = set ? sim : real;
                for (size_t i = 0; i < ts->n_skip; i++) {
                    printf("%s\n%*s{\"set\": \"%s\", \"name\": ", nu++ ? "," : "", indent + 2, "",
                           set ? "sim" : "real");
                    cli_json_str(stdout, ts->skip[i].name);
                    printf(", \"reason\": ");
                    cli_json_str(stdout, ts->skip[i].reason);
                    printf("}");
                }
            }
            printf("%s]", nu ? "\n" : "");
            if (nu)
                printf("%*s", indent, "");
        } else {
            printf("model %s: %zu real tests (%s), %zu simulated (%s)\n", model, real->n, real->dir, sim->n,
                   sim->dir);
            printf("%-12s %6s %6s  %12s %12s %12s%s%s\n", "scenario", "n_real", "n_sim", "W1", "W2", "VEPD",
                   o->n_perm ? "        p" : "", o->n_boot ? "  bootstrap percentile interval" : "");
            for (size_t k = 0; k <= ns; k++)
                text_row(&rows[k]);
            printf("mean of the scenario VEPDs: %.6g\n", mean);
            if (has_rest || real->n_skip || sim->n_skip)
                printf("(rest is reported on its own and left out of combined and the mean, as in the authors'\n"
                       " script; %zu real and %zu simulated rest tests at zero speed are not scored)\n",
                       real->n_skip, sim->n_skip);
            if (o->n_perm)
                printf("(p: paired permutation test of one distribution, %zu relabelings, seed %llu)\n", o->n_perm,
                       o->seed);
            if (o->n_boot)
                printf("(%g%% bootstrap percentile intervals of VEPD, %zu replicates, seed %llu; the interval of a\n"
                       " VEPD near 0 lies above it, see p)\n",
                       100 * o->level, o->n_boot, o->seed);
        }
    }
    if (!rc && o->combined)
        memcpy(o->combined, &rows[ns], sizeof rows[ns]);
    free(scen);
    free(rows);
    return rc;
}

/* The table of the models' combined scores (-o): model i of the whole
 * sorted list in row i - first; the list and the options as attributes, so
 * that sensim stitch refuses a part of another run. */
typedef struct vepd_table {
    const char *path, *created, *root;
    char *all_models; /* every model's name, one a line */
    int64_t index, count, first, end, total;
    int sharded;
} vepd_table;

static int write_table(const vepd_table *t, const score_row *rows, const options *o)
{
    const size_t n = (size_t)(t->end - t->first);
    static const char *const cols[] = {"w1", "w2", "vepd", "p", "ci_lo", "ci_hi"};
    sensim_log *L = sensim_log_create(t->path, t->created);
    uint64_t *u = malloc(3 * (n ? n : 1) * sizeof *u);
    double *v = malloc((n ? n : 1) * sizeof *v);
    sensim_status st = !L ? sensim_last_status() : !u || !v ? sensim_error(SENSIM_ENOMEM, "out of memory") : SENSIM_OK;
    for (size_t i = 0; i < n && u; i++) {
        u[i] = (uint64_t)t->first + i;
        u[n + i] = rows[i].nr;
        u[2 * n + i] = rows[i].ns;
    }
    if (!st && !(st = sensim_log_group(L, "/vepd")) &&
        !(st = sensim_log_write(L, "/vepd/model", SENSIM_U64, n, 0, NULL, u, "")) &&
        !(st = sensim_log_write(L, "/vepd/n_real", SENSIM_U64, n, 0, NULL, u + n, "")))
        st = sensim_log_write(L, "/vepd/n_sim", SENSIM_U64, n, 0, NULL, u + 2 * n, "");
    for (int k = 0; k < 6 && !st; k++) {
        for (size_t i = 0; i < n; i++) {
            const score_row *r = &rows[i];
            v[i] = k == 0 ? r->r.w1 : k == 1 ? r->r.w2 : k == 2 ? r->r.vepd : k == 3 ? (r->have_p ? r->perm.p : NAN)
                 : k == 4 ? (r->have_ci ? r->ci.lo : NAN) : (r->have_ci ? r->ci.hi : NAN);
        }
        char path[64];
        snprintf(path, sizeof path, "/vepd/%s", cols[k]);
        st = sensim_log_write(L, path, SENSIM_F64, n, 0, NULL, v, k < 1 ? "m/s" : "");
    }
    const int64_t opt[3] = {(int64_t)o->n_perm, (int64_t)o->n_boot, (int64_t)o->seed};
    const int64_t sh[2] = {t->index, t->count}, rg[2] = {t->first, t->end};
    if (!st && !(st = sensim_log_set_attr_string(L, "/vepd", "models", t->all_models)) &&
        !(st = sensim_log_set_attr_string(L, "/vepd", "root", t->root)) &&
        !(st = sensim_log_set_attr_i64(L, "/vepd", "n_perm_n_boot_seed", opt, 3)) &&
        !(st = sensim_log_set_attr_f64(L, "/vepd", "level", &o->level, 1)) && t->sharded &&
        !(st = sensim_log_set_attr_string(L, "/", "shard_kind", "rows")) &&
        !(st = sensim_log_set_attr_i64(L, "/", "shard", sh, 2)) &&
        !(st = sensim_log_set_attr_i64(L, "/", "shard_range", rg, 2)))
        st = sensim_log_set_attr_i64(L, "/", "shard_total", &t->total, 1);
    free(u);
    free(v);
    if (!st)
        st = sensim_log_commit(L);
    else
        sensim_log_close(L);
    return st ? cli_fail_lib("vepd") : CLI_OK;
}

static int filter_models(const struct dirent *d) { return d->d_name[0] != '.'; }

/* The model directories of SDIR (sorted), their names joined one a line
 * into t->all_models, and the shard's part [t->first, t->end) of them. */
static int model_dirs(const char *sdir, struct dirent **list, int n, vepd_table *t, int *dirs, int *ndirs)
{
    size_t len = 1;
    *ndirs = 0;
    for (int i = 0; i < n; i++) {
        char *p = path_join(sdir, list[i]->d_name);
        if (p && is_dir(p)) {
            dirs[(*ndirs)++] = i;
            len += strlen(list[i]->d_name) + 1;
        }
        free(p);
    }
    t->total = *ndirs;
    sensim_shard_split(t->total, t->count, t->index, &t->first, &t->end);
    if (t->sharded && t->first == t->end)
        return cli_fail("vepd", "shard %lld of %lld: no model left for it (%d models in %s)", (long long)t->index,
                        (long long)t->count, *ndirs, sdir);
    if (!(t->all_models = malloc(len)))
        return cli_fail("vepd", "out of memory");
    t->all_models[0] = 0;
    for (int k = 0; k < *ndirs; k++) {
        strcat(t->all_models, list[dirs[k]]->d_name);
        strcat(t->all_models, "\n");
    }
    return CLI_OK;
}

static int csv_layout(const char *root, options *o, vepd_table *t)
{
    score_row *rows = NULL;
    int *dirs = NULL, ndirs = 0;
    char *rdir = path_join(root, "Real"), *sdir = path_join(root, "Sim");
    test_set real = {0};
    model_entry *models = NULL;
    size_t nm = 0;
    struct dirent **list = NULL;
    int n = -1, rc = CLI_OK;
    if (!rdir || !sdir) {
        rc = cli_fail("vepd", "out of memory");
        goto done;
    }
    if (!is_dir(rdir) || !is_dir(sdir)) {
        rc = cli_fail("vepd", "%s: not the authors' layout (needs the directories Real/ and Sim/)", root);
        goto done;
    }
    if ((rc = load_set(rdir, o->estimate, o->csv_flags, o->progress, &real)))
        goto done;
    n = scandir(sdir, &list, filter_models, alphasort);
    if (n < 0) {
        rc = cli_fail("vepd", "%s: cannot read directory: %s", sdir, strerror(errno));
        goto done;
    }
    models = calloc((size_t)n + 1, sizeof *models);
    rows = calloc((size_t)n + 1, sizeof *rows);
    dirs = calloc((size_t)n + 1, sizeof *dirs);
    if (!models || !rows || !dirs) {
        rc = cli_fail("vepd", "out of memory");
        goto done;
    }
    if ((rc = model_dirs(sdir, list, n, t, dirs, &ndirs)))
        goto done;
    for (int64_t k = t->first; k < t->end; k++) {
        int i = dirs[k];
        char *p = path_join(sdir, list[i]->d_name);
        if (!p) {
            rc = cli_fail("vepd", "out of memory");
            goto done;
        }
        const char *nm_s = list[i]->d_name;
        size_t len = strlen(nm_s);
        if (has_suffix(nm_s, "_results") && len > 8)
            len -= 8;
        models[nm].name = strndup(nm_s, len);
        rc = load_set(p, o->estimate, o->csv_flags, o->progress, &models[nm].set);
        free(p);
        if (rc)
            goto done;
        nm++;
    }
    if (nm == 0) {
        rc = cli_fail("vepd", "%s: no model directories (<model>_results/ holding *.csv)", sdir);
        goto done;
    }
    /* Everything is read and checked before anything is printed. */
    if (o->json) {
        if (nm == 1) {
            printf("{\n  \"model\": ");
            cli_json_str(stdout, models[0].name);
            printf(",\n");
            o->combined = &rows[0];
            rc = run_model(models[0].name, &real, &models[0].set, o, 1, 2);
            printf("\n}\n");
        } else {
            printf("{\n  \"models\": {");
            for (size_t k = 0; k < nm && !rc; k++) {
                printf("%s\n    ", k ? "," : "");
                cli_json_str(stdout, models[k].name);
                printf(": {\n");
                o->combined = &rows[k];
                rc = run_model(models[k].name, &real, &models[k].set, o, 1, 6);
                printf("\n    }");
            }
            printf("\n  }\n}\n");
        }
    } else {
        for (size_t k = 0; k < nm && !rc; k++) {
            if (k)
                putchar('\n');
            o->combined = &rows[k];
            rc = run_model(models[k].name, &real, &models[k].set, o, 0, 0);
        }
    }
    if (!rc && t->path)
        rc = write_table(t, rows, o);
done:
    free(rows);
    free(dirs);
    free(t->all_models);
    for (size_t k = 0; models && k < nm + 1; k++) {
        free(models[k].name);
        set_free(&models[k].set);
    }
    free(models);
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
    set_free(&real);
    free(rdir);
    free(sdir);
    return rc;
}

int cmd_vepd(int argc, char **argv)
{
    options o = {.seed = 1, .level = 0.95};
    int quiet = 0;
    const char *real = NULL, *sim = NULL, *root = NULL, *shard = NULL;
    vepd_table t = {.count = 1};
    uint64_t n_boot = 0, n_perm = 0, seed = o.seed;
    int c, drop_zeros = 0;
    const cli_to to[] = {
        CLI_STR("real", &real), CLI_STR("sim", &sim), CLI_STR("csv-layout", &root), CLI_FLAG("json", &o.json),
        CLI_FLAG("drop-zeros", &drop_zeros), CLI_STR("plot", &o.plot), CLI_STR("estimate", &o.estimate),
        CLI_COUNT("bootstrap", &n_boot, 10, 100000000), CLI_COUNT("permutations", &n_perm, 0, 100000000),
        CLI_COUNT("seed", &seed, 0, UINT64_MAX), CLI_STR("output", &t.path), CLI_STR("shard", &shard),
        CLI_FLAG("quiet", &quiet), CLI_REAL("level", &o.level, 0, 1, "--level: '%s' is not a number in (0, 1)"), {0}};
    c = cli_parse_all(&cmd_vepd_spec, to, argc, argv);
    if (c)
        return cli_parse_exit(c);
    o.n_boot = (size_t)n_boot;
    o.n_perm = (size_t)n_perm;
    o.seed = seed;
    if (drop_zeros)
        o.csv_flags |= SENSIM_VEPD_DROP_ZEROS;
    if (shard && sensim_shard_parse(shard, &t.index, &t.count))
        return cli_usage_error("vepd", "--shard: %s", sensim_last_error());
    t.sharded = shard != NULL;
    if (optind < argc) {
        if (root || real || sim || optind + 1 < argc)
            return cli_usage_error("vepd", "unexpected argument '%s'", argv[optind]);
        root = argv[optind];
    }
    if (root && (real || sim))
        return cli_usage_error("vepd", "--csv-layout (or ROOT) excludes --real and --sim");
    if (!root && (!real || !sim))
        return cli_usage_error("vepd", "give --real DIR and --sim DIR, or --csv-layout ROOT");
    if ((t.path || shard) && !root)
        return cli_usage_error("vepd", "-o and --shard go with the authors' tree (--csv-layout ROOT)");
    if (shard && !t.path)
        return cli_usage_error("vepd", "--shard needs -o TABLE.h5 (the part's table, for sensim stitch)");
    cli_progress prog;
    cli_progress_init(&prog, "vepd", quiet);
    o.progress = &prog;
    if (root) {
        if (t.path && cli_check_output("vepd", t.path, root, NULL))
            return CLI_FAIL;
        char *created = cli_join_args("sensim", argc, argv);
        t.created = created;
        t.root = root;
        int rc = csv_layout(root, &o, &t);
        free(created);
        return rc;
    }
    test_set rs = {0}, ss = {0};
    int rc = load_set(real, o.estimate, o.csv_flags, o.progress, &rs);
    if (!rc)
        rc = load_set(sim, o.estimate, o.csv_flags, o.progress, &ss);
    if (!rc) {
        if (o.json)
            printf("{\n");
        rc = run_model("sim", &rs, &ss, &o, o.json, 2);
        if (o.json)
            printf("\n}\n");
    }
    set_free(&rs);
    set_free(&ss);
    return rc;
}
