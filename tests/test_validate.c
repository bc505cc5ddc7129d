/* Issue 21, "every input checked before it is trusted": one timestamp
 * validator for every reader of t, damaged inputs refused with a message
 * naming the file and dataset, exit 1, and nothing written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sensim/afile.h"
#include "sensim/guard.h"
#include "sensim/log.h"
#include "sensim/plot.h"
#include "sensim/rng.h"
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

/* Issue 21's damages; int32 (a type, not values) stays last. */
static const char *const mutations[] = {"allnan",  "onenan",  "inf",     "big",    "reversed", "constant",
                                        "duplicated", "swapped", "shifted", "scaled", "gap",      "int32"};
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
            } else if (!strcmp(name, "scaled")) {
                for (int i = 0; i < N; i++)
                    m[i] *= 1e6;
                expect = 1;
            } else if (!strcmp(name, "gap")) {
                for (int i = N / 2; i < N; i++)
                    m[i] += 1e7;
            }
            ck_assert_msg(check_blocks(m, N, block, 100, 0) == SENSIM_EDATA, "%s, block %zu accepted", name, block);
            char needle[64];
            snprintf(needle, sizeof needle, "x.h5: /sensors/s/t: ");
            ck_assert_msg(strstr(sensim_last_error(), needle), "%s: %s", name, sensim_last_error());
            if (!strcmp(name, "scaled")) /* long steps throughout: another unit */
                snprintf(needle, sizeof needle, "a mean step of 10000 s");
            else if (!strcmp(name, "gap"))
                snprintf(needle, sizeof needle, "a gap of 1e+07 s between index %zu and %zu", expect - 1, expect);
            else
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
    ck_assert_msg(strstr(sensim_last_error(), "a mean step of 10000 s") && strstr(sensim_last_error(), "nanoseconds"),
                  "%s", sensim_last_error());
    for (int i = 0; i < N; i++)
        m[i] = t[i] * 1e3;
    ck_assert_int_eq(check_blocks(m, N, 100, 100, 0), SENSIM_EDATA);
    ck_assert_msg(strstr(sensim_last_error(), "rate_hz 100 says 0.01 s (a factor 1000)"), "%s", sensim_last_error());
    ck_assert_int_eq(check_blocks(m, N, 100, 0, 0), SENSIM_OK); /* no rate: 10 s steps are a slow sensor */
    memcpy(m, t, sizeof t);
    for (int i = 600; i < N; i++)
        m[i] += 1e7;
    ck_assert_int_eq(check_blocks(m, N, 100, 0, 0), SENSIM_EDATA);
    ck_assert_msg(strstr(sensim_last_error(), "a gap of 1e+07 s between index 599 and 600: more than 3600 s"), "%s",
                  sensim_last_error());
    sensim_tcheck_init(&c, "x", 0, 0);
    ck_assert_int_eq(sensim_tcheck_finish(&c), SENSIM_EDATA);
}
END_TEST

/* The checks run on whole pieces of times at once (vector lanes of two,
 * unrolled by eight, pieces of 4096) and one time after another only where
 * a piece fails: on a jittered series longer than a piece, the longest step
 * is found where it first occurs, and a damage at every offset around lane,
 * unroll and piece boundaries is reported at its index, as a plain loop
 * over the times (written here) finds them. */
START_TEST(tcheck_pieces_as_one_pass)
{
    enum { N = 3 * 4096 + 37 };
    double *t = malloc(N * sizeof *t), *m = malloc(N * sizeof *m);
    ck_assert(t && m);
    const sensim_rng r = sensim_rng_make(11, 0, 0);
    t[0] = 5.0;
    for (int i = 1; i < N; i++) /* 400 Hz, jitter of 10 % */
        t[i] = t[i - 1] + 0.0025 * (1 + 0.1 * (sensim_rng_uniform(&r, (uint64_t)i) - 0.5));
    t[9000] = t[8999] + 0.004; /* the longest step, twice */
    for (int i = 9001; i < N; i++)
        t[i] += 0.004 - 0.0025;
    t[10000] = t[9999] + 0.004;
    double top = 0;
    size_t at = 0;
    for (int i = 1; i < N; i++)
        if (t[i] - t[i - 1] > top) {
            top = t[i] - t[i - 1];
            at = (size_t)i;
        }
    ck_assert_uint_eq(at, 9000);
    const size_t blocks[] = {1, 7, 8, 9, 100, 4095, 4096, 4097, 65536};
    for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
        sensim_tcheck c;
        sensim_tcheck_init(&c, "x", 400, 0);
        for (size_t i = 0; i < N; i += blocks[b])
            ck_assert_int_eq(sensim_tcheck_block(&c, t + i, N - i < blocks[b] ? N - i : blocks[b]), SENSIM_OK);
        ck_assert_msg(c.max_step == top && c.max_step_at == at, "block %zu: %.17g at %zu", blocks[b], c.max_step,
                      c.max_step_at);
        ck_assert_uint_eq(c.count, N);
        ck_assert(c.last == t[N - 1] && c.first == t[0]);
    }
    const size_t where[] = {1, 2, 3, 7, 8, 9, 10, 15, 16, 17, 4095, 4096, 4097, 4098, 8191, 8192, N - 2, N - 1};
    const double bad[] = {NAN, INFINITY, -INFINITY, 1e300, -1e6, 0};
    for (size_t w = 0; w < sizeof where / sizeof *where; w++)
        for (size_t d = 0; d < sizeof bad / sizeof *bad; d++) {
            memcpy(m, t, N * sizeof *t);
            const size_t k = where[w];
            m[k] = bad[d] == 0 ? m[k - 1] : bad[d]; /* 0: a repeated time */
            /* The first index a plain loop refuses. */
            size_t expect = 0;
            for (size_t i = 1; i < N && !expect; i++)
                if (!isfinite(m[i]) || fabs(m[i]) >= 1e11 || m[i] < SENSIM_TCHECK_MIN_TIME || !(m[i] > m[i - 1]))
                    expect = i;
            for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
                ck_assert_int_eq(check_blocks(m, N, blocks[b], 400, 0), SENSIM_EDATA);
                char needle[64];
                snprintf(needle, sizeof needle, " %zu ", expect);
                ck_assert_msg(strstr(sensim_last_error(), needle), "%g at %zu, block %zu (index %zu expected): %s",
                              bad[d], k, blocks[b], expect, sensim_last_error());
            }
        }
    free(t);
    free(m);
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
        {"export bag", {"export", "@", "-g", "/sensors/imu", "--format", "bag", "-o", "CSV"}},
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

/* Lidar noise on recorded scans: the per-scan t through the validator, and a
 * dataset neither per point nor per scan refused before anything is copied. */
START_TEST(lidar_recorded_checked)
{
    fixture f;
    fixture_make(&f);
    char *scene = tu_src("data/scenes/walls.yaml"), *lrig = tu_src("data/rigs/lidar-walls.yaml");
    char *sgt = tu_path(f.dir, "static.h5"), *lid = tu_path(f.dir, "lidar.h5");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "1", "--rate", "100", "-o", sgt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("render", scene, "--trajectory", sgt, "--sensor", "lidar", "-o", lid, "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("inject", lrig, lid, "-o", f.out, "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    remove(f.out);
    for (size_t m = 0; m < NMUT; m++) {
        mutate(&f, lid, "/sensors/lidar/t", mutations[m]);
        r = tu_run("inject", lrig, f.bad, "-o", f.out, "-q", NULL);
        ck_assert_msg(r.status == 1 && strstr(r.err, "bad.h5: /sensors/lidar/t"), "lidar t %s: exit %d, %s",
                      mutations[m], r.status, r.err);
        ck_assert(!tu_file_exists(f.out));
        tu_run_free(&r);
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import h5py, shutil; shutil.copyfile('%s', '%s'); f = h5py.File('%s', 'r+'); "
             "f['sensors/lidar/extra'] = list(range(7)); f.close()\"",
             lid, f.bad, f.bad);
    ck_assert_int_eq(system(cmd), 0);
    r = tu_run("inject", lrig, f.bad, "-o", f.out, "-q", NULL);
    ck_assert_msg(r.status == 1 && strstr(r.err, "bad.h5: /sensors/lidar/extra has 7 rows") &&
                      strstr(r.err, "(one per point)") && strstr(r.err, "/sensors/lidar/scan_offset 11 (one per scan)"),
                  "exit %d, %s", r.status, r.err);
    ck_assert(!tu_file_exists(f.out));
    tu_run_free(&r);
    free(scene);
    free(lrig);
    free(sgt);
    free(lid);
    fixture_free(&f);
}
END_TEST

/* A declared extent of 1e10 rows (never written) in a small file, for every
 * command that reads the dataset: exit 1 naming it, no output, and no
 * walk over the fill values (the run takes well under a second; timed in
 * the report, not here). */
START_TEST(huge_declared_datasets)
{
    fixture f;
    fixture_make(&f);
    static const struct {
        const char *dset;
        const char *args[10];
    } cases[] = {
        {"/sensors/imu/t", {"allan", "--input", "@", "--sensor", "imu"}},
        {"/sensors/imu/t", {"fit", "imu", "@", "--sensor", "imu", "-o", "YAML"}},
        {"/sensors/imu/angular_velocity", {"allan", "--input", "@", "--sensor", "imu"}},
        {"/sensors/imu/specific_force", {"fit", "imu", "@", "--sensor", "imu", "-o", "YAML"}},
        {"/sensors/imu/t", {"judge", "@", "-o", "OUT"}},
        {"/sensors/gnss/enu", {"judge", "@", "-o", "OUT"}},
        {"/sensors/gnss/hdop", {"judge", "@", "-o", "OUT"}},
        {"/sensors/gnss/t", {"fit", "gnss", "@", "--sensor", "gnss", "-o", "YAML"}},
        {"/ground_truth/velocity", {"judge", "@", "-o", "OUT"}},
        {"/ground_truth/t", {"inject", "RIG", "@", "-o", "OUT", "-q"}},
        {"/ground_truth/position", {"export", "--ground-truth", "@", "-o", "CSV"}},
        {"/sensors/imu/t", {"inject", "RIGIMU", "@", "-o", "OUT", "-q"}},
        {"/sensors/imu/t", {"export", "@", "-g", "/sensors/imu", "--format", "euroc", "-o", "CSV"}},
        {"/sensors/imu/t", {"info", "@"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -c \"import h5py, shutil; shutil.copyfile('%s', '%s'); f = h5py.File('%s', 'r+'); "
                 "d = f['%s']; d.resize((10**10,) + d.shape[1:]); f.close()\"",
                 f.log, f.bad, f.bad, cases[i].dset);
        ck_assert_int_eq(system(cmd), 0);
        command c = {cases[i].args[0], {0}};
        memcpy(c.args, cases[i].args, sizeof c.args);
        tu_run_result r = run_cmd(&f, &c, f.bad);
        char needle[256];
        snprintf(needle, sizeof needle, "bad.h5: %s: declares 10000000000 rows", cases[i].dset);
        ck_assert_msg(r.status == 1 && strstr(r.err, needle), "%s with %s: exit %d, %s", c.name, cases[i].dset,
                      r.status, r.err);
        ck_assert(!tu_file_exists(f.out) && !tu_file_exists(f.yaml) && !tu_file_exists(f.csv));
        tu_run_free(&r);
    }
    fixture_free(&f);
}
END_TEST

/* Camera noise on recorded frames: 3 frames for 2 times, and an f32 frame
 * that is all NaN, refused naming the datasets; the good stack passes. */
START_TEST(camera_recorded_checked)
{
    fixture f;
    fixture_make(&f);
    char *crig = tu_src("data/rigs/camera-cmos.yaml"), *cam = tu_path(f.dir, "cam.h5");
    static const struct {
        const char *py;
        const char *needle;
    } cases[] = {
        {"pass", NULL},
        {"g['t'].resize((2,))", "cam.h5: /sensors/cam/image has 3 frames but /sensors/cam/t has 2 rows"},
        {"del g['image']; g['image'] = np.full((3, 4, 5), np.nan, np.float32)",
         "cam.h5: /sensors/cam/image: frame 0, row 0, column 0 is NaN"},
        {"del g['image']; im = np.full((3, 4, 5), 0.25, np.float32); im[2, 3, 1] = np.inf; g['image'] = im",
         "cam.h5: /sensors/cam/image: frame 2, row 3, column 1 is infinite"},
        {"g['t'][1] = g['t'][0]", "cam.h5: /sensors/cam/t: timestamps not increasing at index 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -c \"import h5py, numpy as np; f = h5py.File('%s', 'w'); g = f.create_group('sensors/cam');\n"
                 "g.attrs['type'] = 'camera'; g.attrs['rate_hz'] = 30.0\n"
                 "g.create_dataset('t', data=np.arange(3) / 30.0, maxshape=(None,))\n"
                 "g['image'] = np.full((3, 4, 5), 0.25, np.float32)\n"
                 "%s\n"
                 "f.close()\"",
                 cam, cases[i].py);
        ck_assert_int_eq(system(cmd), 0);
        tu_run_result r = tu_run("inject", crig, cam, "-o", f.out, "-q", NULL);
        if (!cases[i].needle)
            ck_assert_msg(r.status == 0, "good frames: %s", r.err);
        else {
            ck_assert_msg(r.status == 1 && strstr(r.err, cases[i].needle), "%s: exit %d, %s", cases[i].py, r.status,
                          r.err);
            ck_assert(!tu_file_exists(f.out));
        }
        remove(f.out);
        tu_run_free(&r);
    }
    free(crig);
    free(cam);
    fixture_free(&f);
}
END_TEST

/* fit camera on a photon-transfer stack (Poisson electrons, K 0.25 DN/e-,
 * read noise 8 e-, dark current 300 e-/s) whose exposures are listed
 * backwards: the dark current came out -296 e-/s, exit 0. Now refused; the
 * same stack in order fits. */
START_TEST(fit_camera_exposure_order)
{
    fixture f;
    fixture_make(&f);
    char *stack = tu_path(f.dir, "stack.h5");
    for (int rev = 0; rev < 2; rev++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -c \"import h5py, numpy as np; r = np.random.default_rng(4); L = 12; H = W = 48\n"
                 "exp = 0.002 * (1 + np.arange(L)); K = 0.25; sig = lambda e, s: r.poisson(s + 300 * e, (2, H, W)) * K + 100 + r.normal(0, 8 * K, (2, H, W))\n"
                 "light = np.stack([sig(e, 4000 * e / 0.002) for e in exp]).clip(0, 65535).astype(np.uint16)\n"
                 "dark = np.stack([sig(e, 0) for e in exp]).clip(0, 65535).astype(np.uint16)\n"
                 "f = h5py.File('%s', 'w'); f['stack/exposure'] = exp[::-1] if %d else exp\n"
                 "f['stack/light'] = light; f['stack/dark'] = dark; f.close()\"",
                 stack, rev);
        ck_assert_int_eq(system(cmd), 0);
        tu_run_result r = tu_run("fit", "camera", stack, "-o", f.yaml, NULL);
        if (!rev)
            ck_assert_msg(r.status == 0, "in order: %s", r.err);
        else
            ck_assert_msg(r.status == 1 && strstr(r.err, "stack.h5: /stack/exposure[1] is 0.022 s after a longer or "
                                                         "equal one"),
                          "backwards: exit %d, %s", r.status, r.err);
        ck_assert(tu_file_exists(f.yaml) == !rev);
        remove(f.yaml);
        tu_run_free(&r);
    }
    free(stack);
    fixture_free(&f);
}
END_TEST

/* A test of 10 s at 30 Hz; a non-zero spike replaces one ground-truth speed. */
static void write_vepd_csv(const char *dir, const char *name, double speed, double spike)
{
    char *p = tu_path(dir, name);
    FILE *fp = fopen(p, "w");
    ck_assert_ptr_nonnull(fp);
    fprintf(fp, "se_time,gt_time,se_vel,gt_vel\n");
    for (int i = 0; i < 300; i++)
        fprintf(fp, "%.6f,%.6f,%.6f,%.6g\n", i / 30.0, i / 30.0, speed + 0.1 * sin(i * 0.37),
                spike != 0 && i == 150 ? spike : speed);
    fclose(fp);
    free(p);
}

/* vepd opens only regular files: a FIFO named x_1.csv hung it, a link to
 * /dev/zero grew its memory without end, a directory gave 'read error after
 * line 0'. Each is now refused by type, naming the file. */
START_TEST(vepd_regular_files_only)
{
    char *dir = tu_mkdtemp();
    char *real = tu_path(dir, "real"), *sim = tu_path(dir, "sim");
    ck_assert_int_eq(mkdir(real, 0777), 0);
    ck_assert_int_eq(mkdir(sim, 0777), 0);
    write_vepd_csv(real, "path_1.csv", 2.0, 0);
    write_vepd_csv(real, "path_2.csv", 2.0, 0);
    write_vepd_csv(sim, "path_1.csv", 2.1, 0);
    write_vepd_csv(sim, "path_2.csv", 2.1, 0);
    tu_run_result r = tu_run("vepd", "--real", real, "--sim", sim, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    char *bad = tu_path(sim, "x_1.csv");
    static const char *const kinds[3] = {"a FIFO (named pipe)", "a character device", "a directory"};
    for (int k = 0; k < 3; k++) {
        if (k == 0)
            ck_assert_int_eq(mkfifo(bad, 0666), 0);
        else if (k == 1)
            ck_assert_int_eq(symlink("/dev/zero", bad), 0);
        else
            ck_assert_int_eq(mkdir(bad, 0777), 0);
        r = tu_run("vepd", "--real", real, "--sim", sim, NULL);
        char needle[256];
        snprintf(needle, sizeof needle, "sim/x_1.csv: is %s, not a regular file", kinds[k]);
        ck_assert_msg(r.status == 1 && strstr(r.err, needle), "%s: exit %d, %s", kinds[k], r.status, r.err);
        tu_run_free(&r);
        ck_assert_int_eq(k == 2 ? rmdir(bad) : unlink(bad), 0);
    }
    /* The same for a log: a FIFO named x_1.h5 would block HDF5's open. */
    char *h5 = tu_path(sim, "x_1.h5");
    ck_assert_int_eq(mkfifo(h5, 0666), 0);
    r = tu_run("info", h5, NULL);
    ck_assert_msg(r.status == 1 && strstr(r.err, "x_1.h5: is a FIFO (named pipe), not a regular file"), "exit %d, %s",
                  r.status, r.err);
    tu_run_free(&r);
    free(h5);
    free(bad);
    free(real);
    free(sim);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* An HDF5 input without read permission said 'not an HDF5 file': now the
 * errno. Root reads anything, so the open runs as nobody when root. */
START_TEST(unreadable_log_says_eacces)
{
    fixture f;
    fixture_make(&f);
    ck_assert_int_eq(chmod(f.log, 0), 0);
    ck_assert_int_eq(chmod(f.dir, 0755), 0);
    pid_t pid = fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
            _exit(3);
        sensim_log *log = sensim_log_open(f.log);
        _exit(!log && sensim_last_status() == SENSIM_EIO && strstr(sensim_last_error(), "log.h5: cannot open: Permission denied") ? 0 : 1);
    }
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "child status %d", ws);
    chmod(f.log, 0644);
    fixture_free(&f);
}
END_TEST

/* Output names of 245-255 bytes (valid on ext4) were refused: the
 * temporary suffix pushed them past NAME_MAX. Both writers (the HDF5 log
 * and sensim_afile) now take a short hidden temporary name; nothing is left
 * beside the output, and stale ones are still found. */
START_TEST(long_output_names)
{
    char *dir = tu_mkdtemp();
    char *gt = tu_path(dir, "gt.h5");
    tu_run_result r = tu_run("trajectory", "--shape", "line", "--duration", "1", "--rate", "10", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    for (size_t len = 245; len <= 255; len += 5) {
        char name[256];
        memset(name, 'n', len - 4);
        memcpy(name + len - 4, ".out", 5);
        char *out = tu_path(dir, name);
        r = tu_run("trajectory", "--shape", "line", "--duration", "1", "--rate", "10", "-o", out, NULL);
        ck_assert_msg(r.status == 0, "log named %zu bytes: %s", len, r.err);
        tu_run_free(&r);
        ck_assert(tu_file_exists(out));
        remove(out);
        r = tu_run("export", "--ground-truth", gt, "-o", out, NULL);
        ck_assert_msg(r.status == 0, "CSV named %zu bytes: %s", len, r.err);
        tu_run_free(&r);
        ck_assert(tu_file_exists(out));
        ck_assert_int_eq(tu_count_entries(dir), 2);
        /* A temporary of a run that died, under the short name: removed. */
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        char *tmpl = sensim_tmp_template(out);
        ck_assert_ptr_nonnull(tmpl);
        char *slash = strrchr(tmpl, '/');
        ck_assert_msg(slash[1] == '.' && strlen(slash + 1) < 64, "%s", slash + 1);
        char stale[512];
        snprintf(stale, sizeof stale, "%.*s.tmp-%ld-abcdef", (int)(strstr(tmpl, ".tmp-") - tmpl), tmpl, (long)pid);
        ck_assert_int_eq(tu_write_file(stale, "x"), 0);
        ck_assert_uint_eq(sensim_tmp_remove_stale(out, NULL, NULL), 1);
        ck_assert(!tu_file_exists(stale));
        free(tmpl);
        remove(out);
        free(out);
    }
    tu_rmtree(dir);
    free(dir);
    free(gt);
}
END_TEST

/* A UTF-8 byte-order mark before the first line: the ground-truth reader
 * saw an invisible unknown column, and allan on a one-column file dropped
 * the first value as a header. Both now read the file as without it. */
START_TEST(utf8_bom)
{
    char *dir = tu_mkdtemp();
    char *gt = tu_path(dir, "gt.h5"), *csv = tu_path(dir, "gt.csv"), *bom = tu_path(dir, "bom.csv");
    char *a = tu_path(dir, "a.h5"), *b = tu_path(dir, "b.h5"), *ca = tu_path(dir, "a.csv"), *cb = tu_path(dir, "b.csv");
    tu_run_result r = tu_run("trajectory", "--shape", "circle", "--duration", "2", "--rate", "50", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("export", "--ground-truth", gt, "-o", csv, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    size_t len;
    char *text = tu_read_file(csv, &len);
    ck_assert_ptr_nonnull(text);
    /* Without the exporter's origin comment, so the header is the first line. */
    const char *body = text[0] == '#' ? strchr(text, '\n') + 1 : text;
    char *with = malloc(strlen(body) + 4);
    snprintf(with, strlen(body) + 4, "\xEF\xBB\xBF%s", body);
    ck_assert_int_eq(tu_write_file(bom, with), 0);
    ck_assert_int_eq(tu_write_file(csv, body), 0);
    r = tu_run("import", csv, "-o", a, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("import", bom, "-o", b, NULL);
    ck_assert_msg(r.status == 0, "with a BOM: %s", r.err);
    tu_run_free(&r);
    r = tu_run("export", "--ground-truth", a, "-o", ca, NULL);
    tu_run_free(&r);
    r = tu_run("export", "--ground-truth", b, "-o", cb, NULL);
    tu_run_free(&r);
    char *ta = tu_read_file(ca, &len), *tb = tu_read_file(cb, &len);
    ck_assert_ptr_nonnull(ta);
    ck_assert_ptr_nonnull(tb);
    ck_assert_str_eq(ta, tb);
    /* One column of numbers, with and without the mark: the same deviations
     * from the same 4000 values. */
    size_t cap = 4000 * 24 + 8, k = 3;
    char *col = malloc(cap);
    memcpy(col, "\xEF\xBB\xBF", 3);
    for (int i = 0; i < 4000; i++)
        k += (size_t)snprintf(col + k, cap - k, "%.9f\n", sin(i * 1.7) + 0.001 * i);
    ck_assert_int_eq(tu_write_file(bom, col), 0);
    ck_assert_int_eq(tu_write_file(csv, col + 3), 0);
    tu_run_result r1 = tu_run("allan", "--input", csv, "--rate", "100", "--json", NULL);
    tu_run_result r2 = tu_run("allan", "--input", bom, "--rate", "100", "--json", NULL);
    ck_assert_msg(r1.status == 0 && r2.status == 0, "%s %s", r1.err, r2.err);
    ck_assert_msg(strstr(r1.out, "\"n\": 3999,"), "%s", r1.out);
    ck_assert_str_eq(r1.out, r2.out);
    tu_run_free(&r1);
    tu_run_free(&r2);
    free(col);
    free(ta);
    free(tb);
    free(with);
    free(text);
    tu_rmtree(dir);
    free(dir);
    free(gt);
    free(csv);
    free(bom);
    free(a);
    free(b);
    free(ca);
    free(cb);
}
END_TEST

/* The error texts issue 21 listed, each now naming what is wrong. */
START_TEST(error_texts)
{
    fixture f;
    fixture_make(&f);
    /* judge --rate 0 said "0: '0' is not a positive number". */
    tu_run_result r = tu_run("judge", f.log, "-o", f.out, "--rate", "0", NULL);
    ck_assert_msg(r.status == 2 && strstr(r.err, "--rate: '0' is not a positive number"), "exit %d, %s", r.status,
                  r.err);
    tu_run_free(&r);
    r = tu_run("judge", f.log, "-o", f.out, "--gyro-sigma=-1", NULL);
    ck_assert_msg(r.status == 2 && strstr(r.err, "--gyro-sigma: '-1' is not a positive number"), "exit %d, %s",
                  r.status, r.err);
    tu_run_free(&r);
    /* Usage errors exit 2, naming the option. */
    static const char *const bad_values[][2] = {{"--duration", "-5"}, {"--rate", "0"}, {"--duration", "x"}};
    for (int i = 0; i < 3; i++) {
        r = tu_run("trajectory", "--shape", "line", "--duration", "1", bad_values[i][0], bad_values[i][1], "-o",
                   f.out, NULL);
        ck_assert_msg(r.status == 2 && strstr(r.err, bad_values[i][0]), "trajectory %s %s: exit %d, %s",
                      bad_values[i][0], bad_values[i][1], r.status, r.err);
        ck_assert(!tu_file_exists(f.out));
        tu_run_free(&r);
    }
    /* A t one row longer than the data said "rows 0..2002 requested,
     * dataset has 2001": now which datasets disagree. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import h5py, numpy as np, shutil; shutil.copyfile('%s', '%s'); f = h5py.File('%s', "
             "'r+'); g = f['sensors/imu']; t = g['t'][...]; del g['t']; g['t'] = np.append(t, t[-1] + 0.01); f.close()\"",
             f.log, f.bad, f.bad);
    ck_assert_int_eq(system(cmd), 0);
    r = tu_run("allan", "--input", f.bad, "--sensor", "imu", NULL);
    ck_assert_msg(r.status == 1 && strstr(r.err, "bad.h5: /sensors/imu/t has 6002 rows but "
                                                 "/sensors/imu/angular_velocity has 6001: the datasets disagree"),
                  "exit %d, %s", r.status, r.err);
    tu_run_free(&r);
    r = tu_run("fit", "imu", f.bad, "--sensor", "imu", "-o", f.yaml, NULL);
    ck_assert_msg(r.status == 1 && strstr(r.err, "/sensors/imu/t has 6002 rows but"), "exit %d, %s", r.status, r.err);
    ck_assert(!tu_file_exists(f.yaml));
    tu_run_free(&r);
    /* An SVG that cannot be written: the errno, and the path where there is one. */
    double x[3] = {1, 2, 3}, y[3] = {1, 4, 9};
    sensim_plot *p = sensim_plot_create("t", "x", "y");
    ck_assert_int_eq(sensim_plot_add(p, "y", x, y, NULL, NULL, 3, SENSIM_PLOT_LINE, 0), SENSIM_OK);
    FILE *full = fopen("/dev/full", "w");
    ck_assert_ptr_nonnull(full);
    setvbuf(full, NULL, _IONBF, 0);
    ck_assert_int_eq(sensim_plot_svg(p, full, 400, 300), SENSIM_EIO);
    ck_assert_msg(strstr(sensim_last_error(), "SVG plot: write error: No space left on device"), "%s",
                  sensim_last_error());
    fclose(full);
    char *nodir = tu_path(f.dir, "missing/plot.svg");
    ck_assert_int_ne(sensim_plot_write_svg(p, nodir, 400, 300), SENSIM_OK);
    ck_assert_msg(strstr(sensim_last_error(), "missing/plot.svg") && strstr(sensim_last_error(), "No such file"), "%s",
                  sensim_last_error());
    free(nodir);
    sensim_plot_destroy(p);
    fixture_free(&f);
}
END_TEST

/* vepd on a test whose speeds reach 1e300 said "wasserstein: second value
 * 0 is not finite": now the file and what overflowed. */
START_TEST(vepd_overflow_names_test)
{
    char *dir = tu_mkdtemp();
    char *real = tu_path(dir, "real"), *sim = tu_path(dir, "sim");
    ck_assert_int_eq(mkdir(real, 0777), 0);
    ck_assert_int_eq(mkdir(sim, 0777), 0);
    write_vepd_csv(real, "path_1.csv", 2.0, 0);
    write_vepd_csv(real, "path_2.csv", 2.0, 0);
    write_vepd_csv(sim, "path_1.csv", 2.1, 0);
    write_vepd_csv(sim, "path_2.csv", 2.1, 1e300);
    tu_run_result r = tu_run("vepd", "--real", real, "--sim", sim, NULL);
    ck_assert_msg(r.status == 1 && strstr(r.err, "sim/path_2.csv: vepd: the RMSE of the test overflows: speeds reach "
                                                 "1e+300 m/s"),
                  "exit %d, %s", r.status, r.err);
    tu_run_free(&r);
    free(real);
    free(sim);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* fit lidar sized its buffers from scan_offset's last value and said only
 * "out of memory" when that promised 1e10 returns. */
START_TEST(fit_lidar_offsets_checked)
{
    fixture f;
    fixture_make(&f);
    char *scene = tu_src("data/scenes/walls.yaml"), *sgt = tu_path(f.dir, "static.h5"), *lid = tu_path(f.dir, "l.h5");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "0.5", "--rate", "100", "-o", sgt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("render", scene, "--trajectory", sgt, "--sensor", "lidar", "-o", lid, "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import h5py, shutil; shutil.copyfile('%s', '%s'); f = h5py.File('%s', 'r+'); "
             "d = f['sensors/lidar/scan_offset']; d[...] = d[...] * 100000; f.close()\"",
             lid, f.bad, f.bad);
    ck_assert_int_eq(system(cmd), 0);
    r = tu_run("fit", "lidar", f.bad, "--sensor", "lidar", "-o", f.yaml, NULL);
    ck_assert_msg(r.status == 1 && strstr(r.err, "bad.h5: /sensors/lidar/range has ") &&
                      strstr(r.err, "rows, scan_offset ends at "),
                  "exit %d, %s", r.status, r.err);
    ck_assert(!tu_file_exists(f.yaml));
    tu_run_free(&r);
    free(scene);
    free(sgt);
    free(lid);
    fixture_free(&f);
}
END_TEST

/* PLY and PCD header errors echoed the file's raw bytes (escape sequences
 * reached the terminal): now \xNN. */
START_TEST(point_cloud_header_bytes_escaped)
{
    char *dir = tu_mkdtemp();
    char *ply = tu_path(dir, "bad.ply"), *pcd = tu_path(dir, "bad.pcd"), *out = tu_path(dir, "out.h5");
    ck_assert_int_eq(tu_write_file(ply, "ply\nformat binary_\xff\x1b[31m_endian 1.0\nend_header\n"), 0);
    ck_assert_int_eq(tu_write_file(pcd, "# .PCD\nVERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F \x1b[2J\n"), 0);
    tu_run_result r = tu_run("import", ply, "-o", out, NULL);
    ck_assert_msg(r.status == 1 && strstr(r.err, "bad.ply:2: PLY format 'binary_\\xFF\\x1B[31m_endian' not supported"),
                  "exit %d, %s", r.status, r.err);
    ck_assert_ptr_null(strchr(r.err, '\x1b'));
    tu_run_free(&r);
    r = tu_run("import", pcd, "-o", out, NULL);
    ck_assert_msg(r.status == 1 && strstr(r.err, "bad.pcd:5: bad TYPE '\\x1B[2J'"), "exit %d, %s", r.status, r.err);
    ck_assert_ptr_null(strchr(r.err, '\x1b'));
    tu_run_free(&r);
    ck_assert(!tu_file_exists(out));
    tu_rmtree(dir);
    free(dir);
    free(ply);
    free(pcd);
    free(out);
}
END_TEST

/* vepd on logs: the estimate's and the ground truth's t through the
 * validator, the error naming the test's file and dataset. */
START_TEST(vepd_log_t_mutations)
{
    fixture f;
    fixture_make(&f);
    char *real = tu_path(f.dir, "real"), *sim = tu_path(f.dir, "sim");
    ck_assert_int_eq(mkdir(real, 0777), 0);
    ck_assert_int_eq(mkdir(sim, 0777), 0);
    char *judged = tu_path(f.dir, "judged.h5"), *p1 = tu_path(real, "path_1.h5"), *p2 = tu_path(real, "path_2.h5");
    char *s1 = tu_path(sim, "path_1.h5"), *s2 = tu_path(sim, "path_2.h5");
    tu_run_result r = tu_run("judge", f.log, "-o", judged, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cp %s %s && cp %s %s && cp %s %s && cp %s %s", judged, p1, judged, p2, judged, s1, judged,
             s2);
    ck_assert_int_eq(system(cmd), 0);
    r = tu_run("vepd", "--real", real, "--sim", sim, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    static const char *const dsets[2] = {"/estimates/judge/t", "/ground_truth/t"};
    for (int d = 0; d < 2; d++)
        for (size_t m = 0; m < NMUT; m++) {
            mutate(&f, judged, dsets[d], mutations[m]);
            ck_assert_int_eq(rename(f.bad, s2), 0);
            r = tu_run("vepd", "--real", real, "--sim", sim, NULL);
            char needle[512];
            snprintf(needle, sizeof needle, "sim/path_2.h5: %s", dsets[d]);
            ck_assert_msg(r.status == 1 && strstr(r.err, needle), "%s %s: exit %d, %s", dsets[d], mutations[m],
                          r.status, r.err);
            tu_run_free(&r);
        }
    free(real);
    free(sim);
    free(judged);
    free(p1);
    free(p2);
    free(s1);
    free(s2);
    fixture_free(&f);
}
END_TEST

Suite *suite_validate(void)
{
    Suite *s = suite_create("validate");
    TCase *tc = tcase_create("tcheck");
    tcase_add_test(tc, tcheck_blocks);
    tcase_add_test(tc, tcheck_pieces_as_one_pass);
    tcase_add_test(tc, long_output_names);
    tcase_add_test(tc, utf8_bom);
    tcase_add_test(tc, vepd_overflow_names_test);
    tcase_add_test(tc, point_cloud_header_bytes_escaped);
    suite_add_tcase(s, tc);
    TCase *tm = tcase_create("mutations");
    tcase_set_timeout(tm, 600);
    tcase_add_test(tm, imu_t_mutations);
    tcase_add_test(tm, gnss_t_mutations);
    tcase_add_test(tm, ground_truth_t_mutations);
    tcase_add_test(tm, lidar_recorded_checked);
    tcase_add_test(tm, huge_declared_datasets);
    tcase_add_test(tm, camera_recorded_checked);
    tcase_add_test(tm, fit_camera_exposure_order);
    tcase_add_test(tm, vepd_regular_files_only);
    tcase_add_test(tm, unreadable_log_says_eacces);
    tcase_add_test(tm, error_texts);
    tcase_add_test(tm, fit_lidar_offsets_checked);
    tcase_add_test(tm, vepd_log_t_mutations);
    suite_add_tcase(s, tm);
    return s;
}
