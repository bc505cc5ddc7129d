/* sensim stitch and the shards it joins (issue 19): inject --seeds split
 * into 4 shards and stitched equals the single-process runs bit for bit
 * (read back by h5py), and still reads after the directory moves; a lidar
 * log split by scans (by NumPy, tests/stitch_check.py) stitches back to the
 * original, scan_offset recomputed; bad sets fail naming the shard and leave
 * no output. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "sensim/stitch.h"
#include "testutil.h"

static const char *RIG_A = "seed: 7\n"
                           "sensors:\n"
                           "  - name: imu\n"
                           "    type: imu\n"
                           "    rate_hz: 400\n"
                           "    gyro:  { noise_density: 1.0e-3, bias_instability: 2.0e-5, random_walk: 1.0e-5 }\n"
                           "    accel: { noise_density: 2.0e-3, random_walk: 3.0e-3 }\n";
static const char *RIG_B = "seed: 7\n"
                           "sensors:\n"
                           "  - name: imu\n"
                           "    type: imu\n"
                           "    rate_hz: 400\n"
                           "    gyro:  { noise_density: 2.0e-3, bias_instability: 2.0e-5, random_walk: 1.0e-5 }\n"
                           "    accel: { noise_density: 2.0e-3, random_walk: 3.0e-3 }\n";

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static const char *bin(void)
{
    return getenv("SENSIM_BIN") ? getenv("SENSIM_BIN") : "build/sensim";
}

/* the failure's stderr must name `needle`; the output must not exist */
static void expect_fail(const char *out, const char *needle, const char **shards, int n)
{
    const char *argv[16] = {"stitch", out};
    for (int i = 0; i < n; i++)
        argv[2 + i] = shards[i];
    tu_run_result r = tu_run(argv[0], argv[1], n > 0 ? argv[2] : NULL, n > 1 ? argv[3] : NULL,
                             n > 2 ? argv[4] : NULL, n > 3 ? argv[5] : NULL, n > 4 ? argv[6] : NULL, NULL);
    ck_assert_msg(r.status == 1, "exit %d, stderr %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, needle) != NULL, "'%s' not in: %s", needle, r.err);
    ck_assert(!tu_file_exists(out));
    tu_run_free(&r);
}

START_TEST(inject_seeds_four_shards_equal_single_runs)
{
    char *dir = tu_mkdtemp(), *src = tu_src("tests/stitch_check.py");
    ck_assert_int_eq(sh("cd '%s' && '%s' trajectory --shape figure8 --duration 10 --rate 200 -o gt.h5", dir, bin()),
                     0);
    char *rig = tu_path(dir, "rig.yaml"), *rigb = tu_path(dir, "rigb.yaml");
    ck_assert_int_eq(tu_write_file(rig, RIG_A), 0);
    ck_assert_int_eq(tu_write_file(rigb, RIG_B), 0);
    /* the single-process runs, one per seed */
    for (int k = 20; k <= 25; k++)
        ck_assert_int_eq(sh("cd '%s' && '%s' inject rig.yaml gt.h5 --seed %d -q -o single-%d.h5", dir, bin(), k, k),
                         0);
    /* 4 shards of seeds 20..25 (sizes 2, 2, 1, 1), stitched in their folder */
    ck_assert_int_eq(sh("cd '%s' && mkdir set && for i in 0 1 2 3; do '%s' inject rig.yaml gt.h5 -q --seeds 20..25 "
                        "--shard $i/4 -o 'set/r-{seed}.h5' || exit 1; done && '%s' stitch set/all.h5 set/r-*.h5",
                        dir, bin(), bin()),
                     0);
    /* any split gives the same files: one shard of all the seeds */
    ck_assert_int_eq(sh("cd '%s' && mkdir one && '%s' inject rig.yaml gt.h5 -q --seeds 20..25 -o 'one/r-{seed}.h5' "
                        "&& for k in 20 21 22 23 24 25; do cmp -s one/r-$k.h5 set/r-$k.h5 || exit 1; done",
                        dir, bin()),
                     0);
    ck_assert_int_eq(sh("cd / && /usr/bin/python3 '%s' compare-seeds '%s/set/all.h5' '%s/single-{seed}.h5' 20 25 "
                        "'%s/gt.h5' >/dev/null",
                        src, dir, dir, dir),
                     0);
    /* moved: the whole folder, read from elsewhere */
    ck_assert_int_eq(sh("cd '%s' && mv set moved && cd / && /usr/bin/python3 '%s' compare-seeds '%s/moved/all.h5' "
                        "'%s/single-{seed}.h5' 20 25 '%s/gt.h5' >/dev/null",
                        dir, src, dir, dir, dir),
                     0);
    /* sensim reads the stitched log too */
    ck_assert_int_eq(sh("cd / && '%s' info '%s/moved/all.h5' >/dev/null", bin(), dir), 0);

    /* bad sets */
    char *out = tu_path(dir, "moved/bad.h5");
    char *s20 = tu_path(dir, "moved/r-20.h5"), *s21 = tu_path(dir, "moved/r-21.h5"),
         *s22 = tu_path(dir, "moved/r-22.h5"), *s23 = tu_path(dir, "moved/r-23.h5"),
         *s24 = tu_path(dir, "moved/r-24.h5"), *s25 = tu_path(dir, "moved/r-25.h5");
    const char *missing[] = {s20, s21, s23, s24, s25};
    expect_fail(out, "shard 2 of 6 is missing", missing, 5);
    const char *twice[] = {s20, s21, s21, s23, s24};
    expect_fail(out, "r-21.h5 are both shard 1 of 6", twice, 5);
    /* another seed range: seeds 21..25 is a job of 5 */
    ck_assert_int_eq(sh("cd '%s' && mkdir other && '%s' inject rig.yaml gt.h5 -q --seeds 21..21 "
                        "-o 'other/s-{seed}.h5' && '%s' inject rigb.yaml gt.h5 -q --seeds 20..25 --shard 1/6 "
                        "-o 'other/b-{seed}.h5'",
                        dir, bin(), bin()),
                     0);
    char *o21 = tu_path(dir, "other/s-21.h5"), *b21 = tu_path(dir, "other/b-21.h5");
    const char *seedjob[] = {s20, o21, s22, s23, s24};
    expect_fail(out, "other/s-21.h5: shard of another job", seedjob, 5);
    /* another rig: the model attribute differs */
    char *b = tu_path(dir, "other");
    ck_assert_int_eq(sh("cd '%s' && '%s' stitch bad.h5 moved/r-20.h5 other/b-21.h5 moved/r-22.h5 moved/r-23.h5 "
                        "moved/r-24.h5 moved/r-25.h5 2>err.txt; test $? = 1 && grep -q \"other/b-21.h5: attribute "
                        "'model' of /sensors/imu differs\" err.txt && test ! -e bad.h5",
                        dir, bin()),
                     0);
    (void)b21;
    free(b);
    free(o21);
    free(b21);
    free(out);
    free(s20);
    free(s21);
    free(s22);
    free(s23);
    free(s24);
    free(s25);
    free(rig);
    free(rigb);
    free(src);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(lidar_rows_split_by_numpy_stitch_back)
{
    char *dir = tu_mkdtemp(), *src = tu_src("tests/stitch_check.py");
    ck_assert_int_eq(sh("cd '%s' && mkdir parts && /usr/bin/python3 '%s' make-rows full.h5 parts 4 >/dev/null && "
                        "'%s' stitch parts/all.h5 parts/part-3.h5 parts/part-1.h5 parts/part-0.h5 parts/part-2.h5 && "
                        "mv parts elsewhere && cd / && /usr/bin/python3 '%s' compare-rows '%s/elsewhere/all.h5' "
                        "'%s/full.h5' >/dev/null",
                        dir, src, bin(), src, dir, dir),
                     0);
    /* overlapping ranges, another seed, a missing shard */
    ck_assert_int_eq(sh("cd '%s' && mkdir ov sd && /usr/bin/python3 '%s' make-rows f2.h5 ov 4 overlap && "
                        "/usr/bin/python3 '%s' make-rows f3.h5 sd 4 seed",
                        dir, src, src),
                     0);
    char *out = tu_path(dir, "bad.h5");
    char *p[4], *q[4], *e[4];
    for (int i = 0; i < 4; i++) {
        char n[32];
        snprintf(n, sizeof n, "ov/part-%d.h5", i);
        p[i] = tu_path(dir, n);
        snprintf(n, sizeof n, "sd/part-%d.h5", i);
        q[i] = tu_path(dir, n);
        snprintf(n, sizeof n, "elsewhere/part-%d.h5", i);
        e[i] = tu_path(dir, n);
    }
    const char *ov[] = {p[0], p[1], p[2], p[3]};
    expect_fail(out, "ov/part-2.h5: range [", ov, 4);
    const char *sd[] = {q[0], q[1], q[2], q[3]};
    expect_fail(out, "sd/part-1.h5: attribute 'seed' of / differs", sd, 4);
    const char *miss[] = {e[0], e[1], e[3]};
    expect_fail(out, "shard 2 of 4 is missing", miss, 3);
    const char *notshard[] = {e[0], e[1], e[2], e[3], tu_path(dir, "full.h5")};
    expect_fail(out, "full.h5: not a shard", notshard, 5);
    free((void *)notshard[4]);
    for (int i = 0; i < 4; i++)
        free(p[i]), free(q[i]), free(e[i]);
    free(out);
    free(src);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(shard_split_and_parse)
{
    /* the parts cover [0, total) in order, sizes differ by at most one */
    for (int64_t total = 0; total < 40; total++)
        for (int64_t n = 1; n <= 9; n++) {
            int64_t prev = 0;
            for (int64_t i = 0; i < n; i++) {
                int64_t a, b;
                sensim_shard_split(total, n, i, &a, &b);
                ck_assert_int_eq(a, prev);
                ck_assert(b - a == total / n || b - a == total / n + 1);
                prev = b;
            }
            ck_assert_int_eq(prev, total);
        }
    int64_t i, n;
    ck_assert_int_eq(sensim_shard_parse("3/4", &i, &n), SENSIM_OK);
    ck_assert(i == 3 && n == 4);
    const char *bad[] = {"4/4", "-1/4", "1/0", "1", "1/", "/4", "a/4", "1/4x", "1/+4", "1/2000000"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        ck_assert_msg(sensim_shard_parse(bad[k], &i, &n) == SENSIM_EINVAL, "%s accepted", bad[k]);
    ck_assert(strstr(sensim_last_error(), "1/2000000") != NULL);
    /* inject's usage errors */
    tu_run_result r = tu_run("inject", "x.yaml", "y.h5", "-o", "o.h5", "--shard", "0/2", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert(strstr(r.err, "--shard needs --seeds") != NULL);
    tu_run_free(&r);
    r = tu_run("inject", "x.yaml", "y.h5", "-o", "o.h5", "--seeds", "1..3", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert(strstr(r.err, "{seed}") != NULL);
    tu_run_free(&r);
    r = tu_run("inject", "x.yaml", "y.h5", "-o", "o-{seed}.h5", "--seeds", "5..3", NULL);
    ck_assert_int_eq(r.status, 2);
    tu_run_free(&r);
    r = tu_run("stitch", "o.h5", NULL);
    ck_assert_int_eq(r.status, 2);
    tu_run_free(&r);
}
END_TEST

Suite *suite_stitch(void)
{
    Suite *s = suite_create("stitch");
    TCase *tc = tcase_create("stitch");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, shard_split_and_parse);
    tcase_add_test(tc, inject_seeds_four_shards_equal_single_runs);
    tcase_add_test(tc, lidar_rows_split_by_numpy_stitch_back);
    suite_add_tcase(s, tc);
    return s;
}
