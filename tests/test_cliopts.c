/* Option parsing of every verb comes from one table per verb (cli/opt.c):
 * --help lists exactly the options the verb accepts, option errors read
 * the same everywhere, and `sensim help VERB WORDS` is `sensim VERB WORDS
 * --help`. The program is run as a user would; its --help text is read
 * back and each option probed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#define ASSERT_IN(hay, needle) ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' not in: %s", (needle), (hay))

/* Every verb (and fit kind) with its own options; the third word, when
 * given, selects the verb's second form (a recording rather than text),
 * whose options its --help lists after the first form's. */
static const char *const forms[][3] = {
    {"trajectory", NULL, NULL}, {"inject", NULL, NULL},      {"info", NULL, NULL},
    {"import", NULL, "--topic=/x"}, {"export", NULL, "--format=bag"}, {"allan", NULL, NULL},
    {"fit", "imu", NULL},       {"fit", "camera", NULL},     {"fit", "lidar", NULL},
    {"fit", "gnss", NULL},      {"datasheet", NULL, NULL},   {"render", NULL, NULL},
    {"judge", NULL, NULL},      {"vepd", NULL, NULL},        {"sim2real", NULL, NULL},
    {"demo", NULL, NULL},
};
#define NFORMS (sizeof forms / sizeof forms[0])

/* Options often given to the wrong verb: each verb must refuse those its
 * --help does not name. */
static const char *const common[] = {"json", "output", "quiet", "seed", "rate", "sensor", "topic", "name",
                                     "plot", "threads", "format", "dir", "data", "confidence", "csv", NULL};

static tu_run_result run_form(size_t f, const char *a, const char *b)
{
    if (forms[f][1])
        return tu_run(forms[f][0], forms[f][1], a, b, NULL);
    return tu_run(forms[f][0], a, b, NULL);
}

/* Runs the verb with `opt` then an unknown option, in each of its forms:
 * 1 when some form takes `opt` (its error is about something else: the
 * unknown option or opt's value), 0 when each says "unknown option
 * '--NAME'". Every run must be a usage error (status 2). */
static int accepted(size_t f, const char *what, const char *opt, const char *name)
{
    char unknown[128];
    snprintf(unknown, sizeof unknown, "unknown option '--%.60s'", name);
    int any = 0;
    for (int form = 0; form < (forms[f][2] ? 2 : 1); form++) {
        tu_run_result r = form ? run_form(f, forms[f][2], opt) : run_form(f, opt, "--zz-no-such-option");
        ck_assert_msg(r.status == 2, "sensim %s %s: status %d: %s", what, opt, r.status, r.err);
        ASSERT_IN(r.err, "Try 'sensim ");
        any |= !strstr(r.err, unknown);
        tu_run_free(&r);
    }
    return any;
}

/* The long names of the option lines of a --help text ("  -o, --output",
 * "      --json", "  --mode"), each once; returns the count. */
static size_t listed_options(const char *help, char names[][40], size_t max)
{
    size_t n = 0;
    for (const char *l = help; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *p = l;
        while (*p == ' ')
            p++;
        if (p - l < 2 || p[0] != '-')
            continue;
        if (p[1] != '-' && p[2] == ',' && p[3] == ' ')
            p += 4;
        if (p[0] != '-' || p[1] != '-')
            continue;
        size_t k = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
        if (!k || k >= 40 || n == max)
            continue;
        int dup = 0;
        for (size_t i = 0; i < n; i++)
            dup |= strlen(names[i]) == k && !strncmp(names[i], p + 2, k);
        if (!dup) {
            memcpy(names[n], p + 2, k);
            names[n++][k] = '\0';
        }
    }
    return n;
}

/* 1 when the help text names --name anywhere (an option line, or an alias
 * in another option's text). */
static int help_names(const char *help, const char *name)
{
    size_t k = strlen(name);
    for (const char *p = strstr(help, "--"); p; p = strstr(p + 2, "--"))
        if (!strncmp(p + 2, name, k) && !strchr("abcdefghijklmnopqrstuvwxyz0123456789-", p[2 + k]))
            return 1;
    return 0;
}

START_TEST(help_lists_exactly_the_options)
{
    for (size_t f = 0; f < NFORMS; f++) {
        char what[64];
        snprintf(what, sizeof what, "%s%s%s", forms[f][0], forms[f][1] ? " " : "", forms[f][1] ? forms[f][1] : "");
        tu_run_result h = run_form(f, "--help", NULL);
        ck_assert_msg(h.status == 0, "sensim %s --help: status %d", what, h.status);
        static char names[96][40];
        size_t n = listed_options(h.out, names, 96);
        ck_assert_msg(n >= 2, "sensim %s --help lists %zu options", what, n);
        /* Every listed option is accepted: given with a value and then an
         * unknown option, the error is about the unknown one (or about the
         * value), never "unknown option '--NAME'". */
        for (size_t i = 0; i < n; i++) {
            char opt[128];
            snprintf(opt, sizeof opt, "--%.60s=1", names[i]);
            ck_assert_msg(accepted(f, what, opt, names[i]), "sensim %s: --help lists --%s, which it refuses", what,
                          names[i]);
        }
        /* Options of other verbs that this help does not name are refused,
         * with the same message everywhere. */
        for (size_t c = 0; common[c]; c++) {
            /* getopt_long takes an unambiguous abbreviation (--dir for
             * --direction). */
            int abbrev = 0;
            for (size_t i = 0; i < n; i++)
                abbrev |= !strncmp(names[i], common[c], strlen(common[c]));
            if (abbrev || help_names(h.out, common[c]))
                continue;
            char opt[128];
            snprintf(opt, sizeof opt, "--%s=1", common[c]);
            ck_assert_msg(!accepted(f, what, opt, common[c]), "sensim %s accepts --%s, which its --help does not list",
                          what, common[c]);
        }
        tu_run_free(&h);
    }
}
END_TEST

/* `sensim render -o` printed getopt's own message, then "unknown option". */
START_TEST(missing_value_is_one_message)
{
    tu_run_result r = tu_run("render", "-o", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "sensim render: option '-o' (--output) needs a value\nTry 'sensim render --help'.\n");
    tu_run_free(&r);
    r = tu_run("inject", "--output", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "sensim inject: option '--output' needs a value\nTry 'sensim inject --help'.\n");
    tu_run_free(&r);
    r = tu_run("info", "--json=yes", "x.h5", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "sensim info: option '--json' takes no value\nTry 'sensim info --help'.\n");
    tu_run_free(&r);
    r = tu_run("allan", "--confidnce", "0.9", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err,
                     "sensim allan: unknown option '--confidnce' (did you mean --confidence?)\nTry 'sensim allan --help'.\n");
    tu_run_free(&r);
    r = tu_run("trajectory", "-Z", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "sensim trajectory: unknown option '-Z'\nTry 'sensim trajectory --help'.\n");
    tu_run_free(&r);
}
END_TEST

/* `fit camera --output` (no value) called a real option unknown. */
START_TEST(fit_camera_output_without_value)
{
    tu_run_result r = tu_run("fit", "camera", "stack.h5", "--output", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "sensim fit camera: option '--output' needs a value\nTry 'sensim fit camera --help'.\n");
    tu_run_free(&r);
}
END_TEST

/* `sensim help fit camera` printed the general fit help. */
START_TEST(help_of_a_fit_kind)
{
    static const char *const kinds[] = {"imu", "camera", "lidar", "gnss"};
    tu_run_result all = tu_run("help", "fit", NULL);
    ck_assert_int_eq(all.status, 0);
    for (size_t k = 0; k < 4; k++) {
        tu_run_result a = tu_run("help", "fit", kinds[k], NULL), b = tu_run("fit", kinds[k], "--help", NULL);
        ck_assert_int_eq(a.status, 0);
        ck_assert_int_eq(b.status, 0);
        ck_assert_str_eq(a.out, b.out);
        if (strcmp(kinds[k], "imu")) {
            char usage[64];
            snprintf(usage, sizeof usage, "usage: sensim fit %s ", kinds[k]);
            ck_assert_msg(!strncmp(a.out, usage, strlen(usage)), "sensim help fit %s: %.80s", kinds[k], a.out);
            ck_assert_str_ne(a.out, all.out);
        }
        tu_run_free(&a);
        tu_run_free(&b);
    }
    tu_run_free(&all);
    tu_run_result r = tu_run("help", "fit", "sonar", NULL);
    ck_assert_int_eq(r.status, 2);
    ASSERT_IN(r.err, "unknown kind 'sonar'");
    tu_run_free(&r);
    /* A verb's help is the same by either road, for each verb. */
    for (size_t f = 0; f < NFORMS; f++) {
        if (forms[f][1])
            continue;
        tu_run_result a = tu_run("help", forms[f][0], NULL), b = tu_run(forms[f][0], "--help", NULL);
        ck_assert_str_eq(a.out, b.out);
        tu_run_free(&a);
        tu_run_free(&b);
    }
}
END_TEST

/* Every --json output is strict JSON (tu_run checks it with Python's json
 * module when the run succeeds) also when the paths it names hold quotes
 * and backslashes: info (log and recording), allan, fit imu (log and
 * recording), fit gnss, datasheet, sim2real and vepd. fit camera and fit
 * lidar print no input-derived strings. */
static void run_json_ok(const char *what, tu_run_result r)
{
    ck_assert_msg(r.status == 0, "%s: status %d: %s", what, r.status, r.err);
    ck_assert_msg(r.out[0] == '{', "%s: %.200s", what, r.out);
    tu_run_free(&r);
}

START_TEST(json_with_quotes_in_paths)
{
    char *top = tu_mkdtemp(), *dir = tu_path(top, "q\"d\\ir");
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    char *gt = tu_path(dir, "g\"t.h5"), *imu = tu_path(dir, "i\\mu.h5"), *gnss = tu_path(dir, "gn\"ss.h5");
    char *bag = tu_path(dir, "r\"ec.bag"), *yaml = tu_path(dir, "fit.yaml"), *preset = tu_path(dir, "p\"re.yaml");
    char *runs = tu_path(dir, "s\"2r"), *data = tu_src("data"), *rig = tu_src("data/rigs/imu-adis16448.yaml");
    char *grig = tu_src("data/gnss-chrono-gauss.yaml"), *src_preset = tu_src("data/presets/adis16448.yaml");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "120", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("inject", rig, gt, "-o", imu, "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("inject", grig, gt, "-o", gnss, "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("export", imu, "-g", "/sensors/imu", "--format", "bag", "-o", bag, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    size_t len;
    char *text = tu_read_file(src_preset, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(tu_write_file(preset, text), 0);
    free(text);

    run_json_ok("info log", tu_run("info", imu, "--json", NULL));
    run_json_ok("info bag", tu_run("info", bag, "--json", NULL));
    run_json_ok("allan", tu_run("allan", "-i", imu, "--sensor", "imu", "--json", NULL));
    run_json_ok("fit imu log", tu_run("fit", "imu", imu, "--sensor", "imu", "--json", "-q", NULL));
    run_json_ok("fit imu bag", tu_run("fit", "imu", bag, "--topic", "/imu", "--json", "-q", NULL));
    run_json_ok("fit gnss", tu_run("fit", "gnss", gnss, "--sensor", "gps", "-o", yaml, "--json", NULL));
    run_json_ok("datasheet", tu_run("datasheet", "--preset", preset, "--json", NULL));
    run_json_ok("sim2real", tu_run("sim2real", "--generator", "ch-gauss", "--tests", "2", "--duration", "15",
                                   "--bootstrap", "0", "--permutations", "0", "--data", data, "--dir", runs, "--keep",
                                   "--json", "-q", NULL));
    char *real = tu_path(runs, "real-ch-gauss"), *sim = tu_path(runs, "sim/ch-rw");
    run_json_ok("vepd", tu_run("vepd", "--real", real, "--sim", sim, "--json", NULL));
    tu_rmtree(top);
    free(top);
    free(dir);
    free(gt);
    free(imu);
    free(gnss);
    free(bag);
    free(yaml);
    free(preset);
    free(runs);
    free(data);
    free(rig);
    free(grig);
    free(src_preset);
    free(real);
    free(sim);
}
END_TEST

Suite *suite_cliopts(void)
{
    Suite *s = suite_create("cliopts");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, help_lists_exactly_the_options);
    tcase_add_test(tc, missing_value_is_one_message);
    tcase_add_test(tc, fit_camera_output_without_value);
    tcase_add_test(tc, help_of_a_fit_kind);
    tcase_add_test(tc, json_with_quotes_in_paths);
    suite_add_tcase(s, tc);
    return s;
}
