/* Issue 21, "every input checked before it is trusted": one timestamp
 * validator for every reader of t, damaged inputs refused with a message
 * naming the file and dataset, exit 1, and nothing written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/guard.h"
#include "sensim/status.h"
#include "testutil.h"

static const char rig_text[] = "seed: 5\n"
                               "sensors:\n"
                               "  - name: imu\n"
                               "    type: imu\n"
                               "    rate_hz: 100\n"
                               "    gyro: { noise_density: 1.0e-3 }\n"
                               "    accel: { noise_density: 2.0e-3 }\n"
                               "  - name: gnss\n"
                               "    type: gnss\n"
                               "    rate_hz: 5\n"
                               "    origin_lla: [43.0731, -89.4012, 260.0]\n"
                               "    position_noise: { model: gaussian, sigma: 0.3 }\n";

/* The IMU alone: inject adds noise to a recorded IMU group in place. */
static const char rig_imu_text[] = "seed: 5\n"
                                   "sensors:\n"
                                   "  - name: imu\n"
                                   "    type: imu\n"
                                   "    rate_hz: 100\n"
                                   "    gyro: { noise_density: 1.0e-3 }\n";

static const char *const mutations[] = {"allnan", "onenan", "inf",     "big",     "reversed",
                                        "constant", "duplicated", "swapped", "shifted", "int32"};
#define NMUT (sizeof mutations / sizeof *mutations)

/* ---- the validator itself, block by block ---- */

static sensim_status check_blocks(const double *t, size_t n, size_t block, double rate, unsigned flags)
{
    sensim_tcheck c;
    sensim_tcheck_init(&c, "x.h5: /sensors/s/t", rate, flags);
    for (size_t i = 0; i < n; i += block) {
        sensim_status st = sensim_tcheck_block(&c, t + i, n - i < block ? n - i : block);
        if (st)
            return st;
    }
    return sensim_tcheck_finish(&c);
}

/* Each damage is found at the same index whatever the block size: the state
 * carries the previous sample across blocks. */
START_TEST(tcheck_blocks)
{
    enum { N = 1000 };
    double t[N], m[N];
    for (int i = 0; i < N; i++)
        t[i] = 100.0 + i * 0.01;
    for (size_t block = 1; block <= N; block = block * 3 + 1) {
        ck_assert_int_eq(check_blocks(t, N, block, 100, 0), SENSIM_OK);
        for (size_t mu = 0; mu + 1 < NMUT; mu++) { /* int32 is a type, checked by the log reader */
            memcpy(m, t, sizeof t);
            size_t k = N / 2, expect = k;
            const char *name = mutations[mu];
            if (!strcmp(name, "allnan")) {
                for (int i = 0; i < N; i++)
                    m[i] = NAN;
                expect = 0;
            } else if (!strcmp(name, "onenan"))
                m[k] = NAN;
            else if (!strcmp(name, "inf"))
                m[k] = INFINITY;
            else if (!strcmp(name, "big"))
                m[k] = 1e300;
            else if (!strcmp(name, "reversed")) {
                for (int i = 0; i < N; i++)
                    m[i] = t[N - 1 - i];
                expect = 1;
            } else if (!strcmp(name, "constant")) {
                for (int i = 0; i < N; i++)
                    m[i] = t[0];
                expect = 1;
            } else if (!strcmp(name, "duplicated"))
                m[k] = m[k - 1];
            else if (!strcmp(name, "swapped")) {
                m[k] = t[k + 1];
                m[k + 1] = t[k];
                expect = k + 1;
            } else if (!strcmp(name, "shifted")) {
                for (int i = 0; i < N; i++)
                    m[i] -= 1e9;
                expect = 0;
            }
            ck_assert_msg(check_blocks(m, N, block, 100, 0) == SENSIM_EDATA, "%s, block %zu accepted", name, block);
            char needle[64];
            snprintf(needle, sizeof needle, "x.h5: /sensors/s/t: ");
            ck_assert_msg(strstr(sensim_last_error(), needle), "%s: %s", name, sensim_last_error());
            snprintf(needle, sizeof needle, " %zu ", expect);
            ck_assert_msg(strstr(sensim_last_error(), needle), "%s (index %zu expected): %s", name, expect,
                          sensim_last_error());
        }
    }
    /* Repeats allowed and counted where a reader asks for it. */
    memcpy(m, t, sizeof t);
    m[10] = m[9];
    m[700] = m[699];
    sensim_tcheck c;
    sensim_tcheck_init(&c, "x", 100, SENSIM_TCHECK_ALLOW_REPEATS);
    ck_assert_int_eq(sensim_tcheck_block(&c, m, 500), SENSIM_OK);
    ck_assert_int_eq(sensim_tcheck_block(&c, m + 500, 500), SENSIM_OK);
    ck_assert_int_eq(sensim_tcheck_finish(&c), SENSIM_OK);
    ck_assert_uint_eq(c.repeats, 2);
    ck_assert_uint_eq(c.count, N);
    ck_assert(c.first == t[0] && c.last == t[N - 1]);
    /* Span scaled by 1e6 against rate_hz; a 1e7 s gap. */
    for (int i = 0; i < N; i++)
        m[i] = t[i] * 1e6;
    ck_assert_int_eq(check_blocks(m, N, 100, 100, 0), SENSIM_EDATA);
    ck_assert_msg(strstr(sensim_last_error(), "a gap of 10000 s between index 0 and 1"), "%s", sensim_last_error());
    for (int i = 0; i < N; i++)
        m[i] = t[i] * 1e3;
    ck_assert_int_eq(check_blocks(m, N, 100, 100, 0), SENSIM_EDATA);
    ck_assert_msg(strstr(sensim_last_error(), "rate_hz 100 says 0.01 s (a factor 1000)"), "%s", sensim_last_error());
    ck_assert_int_eq(check_blocks(m, N, 100, 0, 0), SENSIM_OK); /* no rate: 10 s steps are a slow sensor */
    memcpy(m, t, sizeof t);
    for (int i = 600; i < N; i++)
        m[i] += 1e7;
    ck_assert_int_eq(check_blocks(m, N, 100, 0, 0), SENSIM_EDATA);
    ck_assert_msg(strstr(sensim_last_error(), "a gap of 1e+07 s between index 599 and 600"), "%s",
                  sensim_last_error());
    sensim_tcheck_init(&c, "x", 0, 0);
    ck_assert_int_eq(sensim_tcheck_finish(&c), SENSIM_EDATA);
}
END_TEST

/* ---- every command that reads t ---- */

typedef struct {
    char *dir, *rig, *rig_imu, *gt, *log, *bad, *out, *yaml, *csv;
} fixture;

static void fixture_make(fixture *f)
{
    f->dir = tu_mkdtemp();
    f->rig = tu_path(f->dir, "rig.yaml");
    f->gt = tu_path(f->dir, "gt.h5");
    f->rig_imu = tu_path(f->dir, "rig_imu.yaml");
    ck_assert_int_eq(tu_write_file(f->rig_imu, rig_imu_text), 0);
    f->log = tu_path(f->dir, "log.h5");
    f->bad = tu_path(f->dir, "bad.h5");
    f->out = tu_path(f->dir, "out.h5");
    f->yaml = tu_path(f->dir, "fit.yaml");
    f->csv = tu_path(f->dir, "out.csv");
    ck_assert_int_eq(tu_write_file(f->rig, rig_text), 0);
    tu_run_result r = tu_run("trajectory", "--shape", "circle", "--duration", "60", "--rate", "100", "-o", f->gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("inject", f->rig, f->gt, "-o", f->log, "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
}

static void fixture_free(fixture *f)
{
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->rig);
    free(f->gt);
    free(f->rig_imu);
    free(f->log);
    free(f->bad);
    free(f->out);
    free(f->yaml);
    free(f->csv);
}

static void mutate(const fixture *f, const char *src, const char *dset, const char *how)
{
    char *script = tu_src("tests/data/mutate_t.py");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s %s %s %s", script, src, f->bad, dset, how);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    free(script);
}

/* One command line, the log in place of "@"; outputs must not appear. */
typedef struct {
    const char *name;
    const char *args[10];
} command;

static tu_run_result run_cmd(const fixture *f, const command *c, const char *log)
{
    const char *a[10];
    for (int i = 0; i < 10; i++) {
        const char *s = c->args[i];
        a[i] = !s                 ? NULL
               : !strcmp(s, "@")   ? log
               : !strcmp(s, "RIG") ? f->rig
               : !strcmp(s, "RIGIMU") ? f->rig_imu
               : !strcmp(s, "OUT") ? f->out
               : !strcmp(s, "YAML") ? f->yaml
               : !strcmp(s, "CSV") ? f->csv
                                   : s;
    }
    return tu_run(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], NULL);
}

/* Every mutation of dset in src, for every command: exit 1, a message
 * naming the file and the dataset, no output. The unmutated input passes,
 * so the test can fail. */
static void all_mutations(fixture *f, const char *src, const char *dset, const command *cmds, size_t ncmd)
{
    for (size_t c = 0; c < ncmd; c++) {
        tu_run_result r = run_cmd(f, &cmds[c], src);
        ck_assert_msg(r.status == 0, "%s on the good log: exit %d, %s", cmds[c].name, r.status, r.err);
        tu_run_free(&r);
        remove(f->out);
        remove(f->yaml);
        remove(f->csv);
    }
    char needle[256];
    snprintf(needle, sizeof needle, "bad.h5: %s", dset);
    for (size_t m = 0; m < NMUT; m++) {
        mutate(f, src, dset, mutations[m]);
        for (size_t c = 0; c < ncmd; c++) {
            tu_run_result r = run_cmd(f, &cmds[c], f->bad);
            ck_assert_msg(r.status == 1 && strstr(r.err, needle), "%s with %s %s: exit %d, %s", cmds[c].name, dset,
                          mutations[m], r.status, r.err);
            ck_assert_msg(!tu_file_exists(f->out) && !tu_file_exists(f->yaml) && !tu_file_exists(f->csv),
                          "%s with %s %s left an output", cmds[c].name, dset, mutations[m]);
            tu_run_free(&r);
        }
    }
}

START_TEST(imu_t_mutations)
{
    fixture f;
    fixture_make(&f);
    const command cmds[] = {
        {"allan", {"allan", "--input", "@", "--sensor", "imu"}},
        {"fit imu", {"fit", "imu", "@", "--sensor", "imu", "-o", "YAML"}},
        {"inject (recorded)", {"inject", "RIGIMU", "@", "-o", "OUT", "-q"}},
        {"judge", {"judge", "@", "-o", "OUT"}},
        {"export euroc", {"export", "@", "-g", "/sensors/imu", "--format", "euroc", "-o", "CSV"}},
    };
    all_mutations(&f, f.log, "/sensors/imu/t", cmds, sizeof cmds / sizeof *cmds);
    fixture_free(&f);
}
END_TEST

START_TEST(gnss_t_mutations)
{
    fixture f;
    fixture_make(&f);
    const command cmds[] = {
        {"fit gnss", {"fit", "gnss", "@", "--sensor", "gnss", "-o", "YAML"}},
        {"judge", {"judge", "@", "-o", "OUT"}},
    };
    all_mutations(&f, f.log, "/sensors/gnss/t", cmds, sizeof cmds / sizeof *cmds);
    fixture_free(&f);
}
END_TEST

START_TEST(ground_truth_t_mutations)
{
    fixture f;
    fixture_make(&f);
    const command cmds[] = {
        {"inject", {"inject", "RIG", "@", "-o", "OUT", "-q"}},
        {"export", {"export", "--ground-truth", "@", "-o", "CSV"}},
        {"judge", {"judge", "@", "-o", "OUT"}},
    };
    all_mutations(&f, f.gt, "/ground_truth/t", cmds, 2);
    all_mutations(&f, f.log, "/ground_truth/t", cmds + 2, 1);
    fixture_free(&f);
}
END_TEST

Suite *suite_validate(void)
{
    Suite *s = suite_create("validate");
    TCase *tc = tcase_create("tcheck");
    tcase_add_test(tc, tcheck_blocks);
    suite_add_tcase(s, tc);
    TCase *tm = tcase_create("mutations");
    tcase_set_timeout(tm, 600);
    tcase_add_test(tm, imu_t_mutations);
    tcase_add_test(tm, gnss_t_mutations);
    tcase_add_test(tm, ground_truth_t_mutations);
    suite_add_tcase(s, tm);
    return s;
}
