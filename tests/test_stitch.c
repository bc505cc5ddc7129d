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

/* A scene of the size: a 16-channel lidar and a small camera with
 * motion blur, driving past posts. */
static const char *SCENE = "seed: 5\n"
                           "materials:\n"
                           "  - {name: post, reflectance: 0.6, albedo: [0.7, 0.5, 0.3]}\n"
                           "  - {name: ground, reflectance: 0.15, albedo: [0.35, 0.33, 0.3]}\n"
                           "meshes:\n"
                           "  - {name: cylinder, cylinder: {radius: 0.5, height: 4, segments: 16}}\n"
                           "  - {name: ground, plane: {size: [200, 60]}}\n"
                           "objects:\n"
                           "  - {mesh: ground, material: ground, position: [50, 0, 0]}\n"
                           "  - {mesh: cylinder, material: post, position: [-10, 4, 0], repeat: {count: 40, step: [3, 0, 0]}}\n"
                           "sun: {direction: [0.3, 0.2, 1], irradiance: [1, 1, 1]}\n"
                           "sensors:\n"
                           "  - {name: lidar, type: lidar, channels: 16, vfov: [-15 deg, 15 deg], columns: 180,\n"
                           "     rate_hz: 20, max_range: 40, mount: {position: [0, 0, 1]}}\n"
                           "  - {name: lidar2, type: lidar, channels: 16, vfov: [-15 deg, 15 deg], columns: 180,\n"
                           "     rate_hz: 20, max_range: 40, mount: {position: [0, 0, 1]}}\n"
                           "  - {name: cam, type: camera, width: 40, height: 24, hfov: 90 deg, samples: 2,\n"
                           "     exposure: 0.01, rate_hz: 20, mount: {position: [0, 0, 1.5]}}\n";
/* the camera's noise and a jittered delivery: timing crosses shard bounds */
static const char *CAMRIG = "seed: 9\n"
                            "sensors:\n"
                            "  - name: cam\n"
                            "    type: camera\n"
                            "    timing: {lag: 0.002, jitter: 0.004}\n"
                            "    noise: {model: intensity, variance_slope: 0.002, variance_intercept: 0.0001}\n";

/* render --shard I/N: 4 shards stitched
 * equal the single-process render bit for bit through h5py, lidar and
 * camera, also after the folder moves; --frames A..B selects a range and
 * splits; bad sets fail naming the shard. */
START_TEST(render_four_shards_equal_single_run)
{
    char *dir = tu_mkdtemp(), *src = tu_src("tests/stitch_check.py");
    char *scene = tu_path(dir, "scene.yaml"), *camrig = tu_path(dir, "cam.yaml");
    ck_assert_int_eq(tu_write_file(scene, SCENE), 0);
    ck_assert_int_eq(tu_write_file(camrig, CAMRIG), 0);
    ck_assert_int_eq(
        sh("cd '%s' && '%s' trajectory --shape line --duration 1.06 --speed 15 -o gt.h5 && mkdir set", dir, bin()), 0);
    /* 21 scans (shards of 6, 5, 5, 5), 22 frames (6, 6, 5, 5) */
    const char *const runs[][4] = {{"lidar", "", "21", "11"}, {"cam", "--rig cam.yaml", "22", "12"}};
    for (int r = 0; r < 2; r++) {
        const char *s = runs[r][0], *extra = runs[r][1];
        ck_assert_int_eq(sh("cd '%s' && '%s' render scene.yaml -t gt.h5 -s %s %s -q -o full-%s.h5 && "
                            "for i in 0 1 2 3; do '%s' render scene.yaml -t gt.h5 -s %s %s -q --shard $i/4 "
                            "-o set/%s-$i.h5 || exit 1; done && '%s' stitch set/%s.h5 set/%s-3.h5 set/%s-1.h5 "
                            "set/%s-0.h5 set/%s-2.h5",
                            dir, bin(), s, extra, s, bin(), s, extra, s, bin(), s, s, s, s, s),
                         0);
        ck_assert_int_eq(sh("cd / && /usr/bin/python3 '%s' compare-log '%s/set/%s.h5' '%s/full-%s.h5' >/dev/null", src,
                            dir, s, dir, s),
                         0);
        ck_assert_int_eq(sh("cd / && /usr/bin/python3 -c \"import h5py,sys; f=h5py.File(sys.argv[1],'r'); "
                            "sys.exit(0 if f['sensors/%s/t'].shape[0]==%s and list(h5py.File(sys.argv[2],'r')"
                            ".attrs['shard_range'])==[6,%s] else 1)\" '%s/set/%s.h5' '%s/set/%s-1.h5'",
                            s, runs[r][2], runs[r][3], dir, s, dir, s),
                         0);
    }
    /* --frames A..B: scans 4..15 in three parts equal rows 4..15 of the run */
    ck_assert_int_eq(sh("cd '%s' && mkdir fr && for i in 0 1 2; do '%s' render scene.yaml -t gt.h5 -s lidar -q "
                        "--frames 4..15 --shard $i/3 -o fr/p-$i.h5 || exit 1; done && '%s' stitch fr/all.h5 "
                        "fr/p-*.h5 && /usr/bin/python3 -c \"import h5py,numpy as np,sys\n"
                        "a=h5py.File('fr/all.h5','r')['sensors/lidar']; f=h5py.File('full-lidar.h5','r')['sensors/lidar']\n"
                        "o=f['scan_offset'][()]\n"
                        "ok=(a['t'][()].tobytes()==f['t'][4:16].tobytes() and "
                        "(a['scan_offset'][()]==o[4:17]-o[4]).all() and "
                        "a['points'][()].tobytes()==f['points'][o[4]:o[16]].tobytes())\n"
                        "sys.exit(0 if ok else 1)\"",
                        dir, bin(), bin()),
                     0);
    /* moved as a folder and read from elsewhere */
    ck_assert_int_eq(sh("cd '%s' && mv set moved && cd / && for s in lidar cam; do /usr/bin/python3 '%s' compare-log "
                        "'%s/moved/'$s.h5 '%s/full-'$s.h5 >/dev/null || exit 1; done && '%s' info '%s/moved/cam.h5' "
                        ">/dev/null",
                        dir, src, dir, dir, bin(), dir),
                     0);

    /* bad sets: another seed, sensor, scene; overlapping frames; missing */
    ck_assert_int_eq(
        sh("cd '%s' && mkdir bad && '%s' render scene.yaml -t gt.h5 -s cam --rig cam.yaml --seed 10 -q --shard 1/4 "
           "-o bad/seed.h5 && '%s' render scene.yaml -t gt.h5 -s lidar2 -q --shard 1/4 -o bad/sensor.h5 && "
           "sed 's/columns: 180/columns: 90/' scene.yaml > other.yaml && '%s' render other.yaml -t gt.h5 -s lidar -q "
           "--shard 1/4 -o bad/scene.h5 && '%s' render scene.yaml -t gt.h5 -s lidar -q --frames 3..20 --shard 0/4 "
           "-o bad/early.h5",
           dir, bin(), bin(), bin(), bin()),
        0);
    char *out = tu_path(dir, "moved/bad.h5");
    char *c0 = tu_path(dir, "moved/cam-0.h5"), *c2 = tu_path(dir, "moved/cam-2.h5"), *c3 = tu_path(dir, "moved/cam-3.h5");
    char *l0 = tu_path(dir, "moved/lidar-0.h5"), *l1 = tu_path(dir, "moved/lidar-1.h5"),
         *l2 = tu_path(dir, "moved/lidar-2.h5"), *l3 = tu_path(dir, "moved/lidar-3.h5");
    char *bseed = tu_path(dir, "bad/seed.h5"), *bsens = tu_path(dir, "bad/sensor.h5"),
         *bscene = tu_path(dir, "bad/scene.h5"), *early = tu_path(dir, "bad/early.h5");
    const char *seed[] = {c0, bseed, c2, c3};
    expect_fail(out, "bad/seed.h5: attribute 'noise_seed' of /sensors/cam differs", seed, 4);
    const char *sensor[] = {l0, bsens, l2, l3};
    expect_fail(out, "bad/sensor.h5: /sensors/lidar is missing", sensor, 4);
    const char *other[] = {l0, bscene, l2, l3};
    expect_fail(out, "bad/scene.h5: attribute 'scene' of /sensors/lidar differs", other, 4);
    const char *overlap[] = {early, l1, l2, l3};
    expect_fail(out, "moved/lidar-1.h5: range [6, 11) overlaps", overlap, 4);
    const char *missing[] = {l0, l1, l3};
    expect_fail(out, "shard 2 of 4 is missing", missing, 3);
    const char *mixed[] = {l0, c0, l2, l3};
    expect_fail(out, "moved/cam-0.h5: shard of another job", mixed, 4);

    /* what cannot be split, or split that far */
    tu_run_result rr = tu_run("render", scene, "-t", "gt.h5", "-s", "lidar", "-o", "x.h5", "--frames", "5..2", NULL);
    ck_assert_int_eq(rr.status, 2);
    ck_assert(strstr(rr.err, "--frames: '5..2'") != NULL);
    tu_run_free(&rr);
    ck_assert_int_eq(sh("cd '%s' && printf 'seed: 1\\nsensors:\\n  - {name: lidar, type: lidar, noise: "
                        "{range_sigma_base: 0.02}}\\n' > lrig.yaml && '%s' render scene.yaml -t gt.h5 -s lidar --rig "
                        "lrig.yaml -q --shard 1/4 -o x.h5 2>err.txt; test $? = 1 && grep -q 'cannot be split' err.txt && "
                        "'%s' render scene.yaml -t gt.h5 -s lidar -q --frames 19..21 -o x.h5 2>err.txt; test $? = 1 && "
                        "grep -q 'frames 19..21: sensor .lidar. has 21 scans (0..20)' err.txt && '%s' render scene.yaml "
                        "-t gt.h5 -s lidar -q --frames 0..1 --shard 2/3 -o x.h5 2>err.txt; test $? = 1 && "
                        "grep -q 'no scans left' err.txt && test ! -e x.h5",
                        dir, bin(), bin(), bin()),
                     0);
    char *all[] = {out, c0, c2, c3, l0, l1, l2, l3, bseed, bsens, bscene, early, scene, camrig, src};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* sim2real --sweep: a 3 x 2 grid in 4 parts (2, 2, 1, 1 points) stitched
 * equals the single run bit for bit through h5py, also moved; the point at
 * the generator's own parameters scores exactly the VEPD that the plain
 * experiment gives the generator's variant (the re-emitted rig reads back
 * bit for bit), and the lowest of the points with that bias drift; bad sets
 * fail naming the part. */
START_TEST(sim2real_sweep_four_shards_equal_single_run)
{
    char *dir = tu_mkdtemp(), *src = tu_src("tests/stitch_check.py"), *data = tu_src("data");
    char *sw = tu_path(dir, "sweep.yaml"), *sw2 = tu_path(dir, "sweep2.yaml");
    ck_assert_int_eq(tu_write_file(sw, "model: ch-gauss\n"
                                       "sweep:\n"
                                       "  gps.position_noise.sigma: [0.01, 0.03, 0.1]\n"
                                       "  imu.gyro.chrono_drift.bias_drift: [1.0e-4, 1.0e-3]\n"),
                     0);
    ck_assert_int_eq(tu_write_file(sw2, "sweep:\n"
                                        "  gps.position_noise.sigma: [0.01, 0.03, 0.2]\n"
                                        "  imu.gyro.chrono_drift.bias_drift: [1.0e-4, 1.0e-3]\n"),
                     0);
    const char *common = "--tests 1 --duration 8 -q --dir work";
    ck_assert_int_eq(sh("cd '%s' && '%s' sim2real --data '%s' %s --sweep sweep.yaml -o single.h5 >single.txt && "
                        "mkdir set && for i in 0 1 2 3; do '%s' sim2real --data '%s' %s --sweep sweep.yaml "
                        "--shard $i/4 -o set/p-$i.h5 >/dev/null || exit 1; done && '%s' stitch set/all.h5 set/p-*.h5 "
                        "&& mv set moved && cd / && /usr/bin/python3 '%s' compare-log '%s/moved/all.h5' "
                        "'%s/single.h5' >/dev/null",
                        dir, bin(), data, common, bin(), data, common, bin(), src, dir, dir),
                     0);
    /* the CSV of the stitched table is the single run's */
    ck_assert_int_eq(sh("cd '%s' && '%s' sim2real --scores moved/all.h5 --csv all.csv --plot all.svg && '%s' sim2real "
                        "--scores single.h5 > single.csv && cmp all.csv single.csv && grep -q '<svg' all.svg && "
                        "test $(wc -l < all.csv) = 7 && head -1 all.csv | grep -q "
                        "'^point,gps.position_noise.sigma,imu.gyro.chrono_drift.bias_drift,w1,w2,vepd,'",
                        dir, bin(), bin()),
                     0);
    /* point 3 (sigma 0.03, bias_drift 1e-3: the presets' own values) is the
     * plain experiment's ch-gauss variant against ch-gauss */
    ck_assert_int_eq(sh("cd '%s' && '%s' sim2real --data '%s' %s --generator ch-gauss --json --permutations 0 "
                        "--bootstrap 0 > plain.json && /usr/bin/python3 -c \"import json,csv,sys\n"
                        "j=json.load(open('plain.json'))['generators'][0]['ranking']\n"
                        "v=[r['vepd'] for r in j if r['model']=='ch-gauss'][0]\n"
                        "rows=list(csv.DictReader(open('all.csv')))\n"
                        "ok=float(rows[3]['vepd'])==v and "
                        "min(float(r['vepd']) for r in rows if r['imu.gyro.chrono_drift.bias_drift']=='0.001')==v\n"
                        "sys.exit(0 if ok else 1)\"",
                        dir, bin(), data, common),
                     0);
    /* bad sets: another grid, another generator, a missing part */
    ck_assert_int_eq(sh("cd '%s' && mkdir bad && '%s' sim2real --data '%s' %s --sweep sweep2.yaml --shard 1/4 "
                        "-o bad/grid.h5 >/dev/null && '%s' sim2real --data '%s' %s --sweep sweep.yaml --generator "
                        "ch-rw --shard 1/4 -o bad/gen.h5 >/dev/null",
                        dir, bin(), data, common, bin(), data, common),
                     0);
    char *out = tu_path(dir, "moved/bad.h5"), *p[4];
    for (int i = 0; i < 4; i++) {
        char n[32];
        snprintf(n, sizeof n, "moved/p-%d.h5", i);
        p[i] = tu_path(dir, n);
    }
    char *grid = tu_path(dir, "bad/grid.h5"), *gen = tu_path(dir, "bad/gen.h5");
    const char *g1[] = {p[0], grid, p[2], p[3]};
    expect_fail(out, "bad/grid.h5: attribute 'sweep' of /sweep differs", g1, 4);
    const char *g2[] = {p[0], gen, p[2], p[3]};
    expect_fail(out, "bad/gen.h5: attribute 'generator' of /sweep differs", g2, 4);
    const char *g3[] = {p[0], p[1], p[3]};
    expect_fail(out, "shard 2 of 4 is missing", g3, 3);
    /* a key no rig has, with the sweep file's line; usage */
    ck_assert_int_eq(sh("cd '%s' && printf 'sweep:\\n  gps.position_noise.sigma: [1]\\n  lidar.noise.x: [1, 2]\\n' > "
                        "k.yaml && '%s' sim2real --data '%s' %s --sweep k.yaml -o k.h5 2>err.txt; test $? = 1 && "
                        "grep -q \"k.yaml:3.*sweep key 'lidar.noise.x': sensor 'lidar' is in neither\" err.txt && "
                        "test ! -e k.h5 && '%s' sim2real --sweep sweep.yaml 2>err.txt; test $? = 2 && "
                        "grep -q 'needs -o' err.txt",
                        dir, bin(), data, common, bin()),
                     0);
    for (int i = 0; i < 4; i++)
        free(p[i]);
    free(grid);
    free(gen);
    free(out);
    free(sw);
    free(sw2);
    free(data);
    free(src);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* vepd over the authors' tree with --shard I/N -o: 5 models (the logs of
 * sim2real --keep) in 4 parts stitched equal the single run's table bit for
 * bit, also moved; each model's VEPD is the one sim2real scored in memory
 * for that variant; bad sets fail naming the part. */
START_TEST(vepd_models_four_shards_equal_single_run)
{
    char *dir = tu_mkdtemp(), *src = tu_src("tests/stitch_check.py"), *data = tu_src("data");
    ck_assert_int_eq(sh("cd '%s' && '%s' sim2real --data '%s' -g ch-gauss -n 1 -t 8 --keep --dir s2r -q "
                        "--permutations 0 --bootstrap 0 --json > s2r.json && mkdir -p tree/Sim && "
                        "mv s2r/real-ch-gauss tree/Real && for m in s2r/sim/*; do mv $m tree/Sim/$(basename $m)_results "
                        "|| exit 1; done",
                        dir, bin(), data),
                     0);
    const char *opts = "-q --permutations 19 --bootstrap 10";
    ck_assert_int_eq(sh("cd '%s' && '%s' vepd tree %s -o single.h5 > single.txt && mkdir set && for i in 0 1 2 3; "
                        "do '%s' vepd tree %s --shard $i/4 -o set/p-$i.h5 > /dev/null || exit 1; done && "
                        "'%s' stitch set/all.h5 set/p-*.h5 && mv set moved && cd / && /usr/bin/python3 '%s' "
                        "compare-log '%s/moved/all.h5' '%s/single.h5' >/dev/null",
                        dir, bin(), opts, bin(), opts, bin(), src, dir, dir),
                     0);
    ck_assert_int_eq(sh("cd '%s' && /usr/bin/python3 -c \"import h5py,json,numpy as np,sys\n"
                        "t=h5py.File('moved/all.h5','r')['vepd']\n"
                        "names=[n[:-8] for n in t.attrs['models'].split()]\n"
                        "j={r['model']: r['vepd'] for r in json.load(open('s2r.json'))['generators'][0]['ranking']}\n"
                        "ok=sorted(names)==sorted(j) and list(t['model'][()])==list(range(5)) and "
                        "all(t['vepd'][i]==j[n] for i,n in enumerate(names)) and (t['n_real'][()]==3).all() and "
                        "np.isfinite(t['p'][()]).all() and (t['ci_lo'][()]<=t['ci_hi'][()]).all()\n"
                        "sys.exit(0 if ok else 1)\"",
                        dir),
                     0);
    /* bad sets: other options, a missing part; usage */
    ck_assert_int_eq(sh("cd '%s' && '%s' vepd tree -q --permutations 19 --bootstrap 10 --seed 2 --shard 1/4 "
                        "-o seed.h5 > /dev/null",
                        dir, bin()),
                     0);
    char *out = tu_path(dir, "moved/bad.h5"), *p[4], *seed = tu_path(dir, "seed.h5");
    for (int i = 0; i < 4; i++) {
        char n[32];
        snprintf(n, sizeof n, "moved/p-%d.h5", i);
        p[i] = tu_path(dir, n);
    }
    const char *g1[] = {p[0], seed, p[2], p[3]};
    expect_fail(out, "seed.h5: attribute 'n_perm_n_boot_seed' of /vepd differs", g1, 4);
    const char *g2[] = {p[0], p[2], p[3]};
    expect_fail(out, "shard 1 of 4 is missing", g2, 3);
    ck_assert_int_eq(sh("cd '%s' && '%s' vepd tree -q --shard 0/2 2>err.txt; test $? = 2 && grep -q 'needs -o' err.txt "
                        "&& '%s' vepd tree -q --shard 5/9 -o x.h5 2>err.txt; test $? = 1 && "
                        "grep -q 'no model left' err.txt && test ! -e x.h5",
                        dir, bin(), bin()),
                     0);
    for (int i = 0; i < 4; i++)
        free(p[i]);
    free(seed);
    free(out);
    free(data);
    free(src);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* fit imu LOG... --table --shard I/N: 6 static logs (inject --seeds) in 4
 * parts stitched equal the single run's table bit for bit, also moved;
 * each row is the fit `fit imu LOG --json` prints for that log (to its 8
 * digits); bad sets fail naming the part. */
START_TEST(fit_imu_logs_four_shards_equal_single_run)
{
    char *dir = tu_mkdtemp(), *src = tu_src("tests/stitch_check.py");
    char *rig = tu_path(dir, "rig.yaml");
    ck_assert_int_eq(tu_write_file(rig, "seed: 7\nsensors:\n  - name: imu\n    type: imu\n    rate_hz: 200\n"
                                        "    gyro:  { noise_density: 1.0e-3, random_walk: 1.0e-5 }\n"
                                        "    accel: { noise_density: 2.0e-3, random_walk: 3.0e-4 }\n"),
                     0);
    ck_assert_int_eq(sh("cd '%s' && '%s' trajectory --shape static --duration 40 --rate 200 -o gt.h5 && '%s' inject "
                        "rig.yaml gt.h5 --seeds 1..6 -q -o 'l-{seed}.h5' && '%s' fit imu l-*.h5 --sensor imu -q "
                        "--table single.h5 > /dev/null && mkdir set && for i in 0 1 2 3; do '%s' fit imu l-*.h5 "
                        "--sensor imu -q --table set/p-$i.h5 --shard $i/4 > /dev/null || exit 1; done && '%s' stitch "
                        "set/all.h5 set/p-*.h5 && mv set moved && cd / && /usr/bin/python3 '%s' compare-log "
                        "'%s/moved/all.h5' '%s/single.h5' >/dev/null",
                        dir, bin(), bin(), bin(), bin(), bin(), src, dir, dir),
                     0);
    ck_assert_int_eq(sh("cd '%s' && for k in 1 2 3 4 5 6; do '%s' fit imu l-$k.h5 --sensor imu -q --json > f-$k.json "
                        "|| exit 1; done && /usr/bin/python3 -c \"import h5py,json,numpy as np,sys\n"
                        "t=h5py.File('moved/all.h5','r')['fits']\n"
                        "terms=['quantization','noise_density','bias_instability','random_walk','rate_ramp']\n"
                        "flags={'ok':0,'upper_bound':1,'unresolved':2}\n"
                        "ok=list(t['log'][()])==list(range(6)) and t.attrs['logs'].split()==['l-%%d.h5'%%k for k in "
                        "range(1,7)]\n"
                        "for r in range(6):\n"
                        "  j=json.load(open('f-%%d.json'%%(r+1)))['instruments']\n"
                        "  for ins in ('gyro','accel'):\n"
                        "    for a in range(3):\n"
                        "      for q,term in enumerate(terms):\n"
                        "        e=j[ins]['axes'][a][term]\n"
                        "        for part,key in (('','value'),('_lo','lo'),('_hi','hi')):\n"
                        "          ok=ok and abs(t[ins+part][r,q,a]-e[key])<=1e-7*abs(e[key])+1e-300\n"
                        "        ok=ok and t[ins+'_flag'][r,q,a]==flags[e['status']]\n"
                        "sys.exit(0 if ok else 1)\"",
                        dir, bin()),
                     0);
    /* bad sets: another list of logs, another confidence, a missing part */
    ck_assert_int_eq(sh("cd '%s' && '%s' fit imu l-1.h5 l-2.h5 l-3.h5 l-4.h5 l-6.h5 l-5.h5 --sensor imu -q "
                        "--table list.h5 --shard 1/4 > /dev/null && '%s' fit imu l-*.h5 --sensor imu -q "
                        "--confidence 0.9 --table conf.h5 --shard 1/4 > /dev/null",
                        dir, bin(), bin()),
                     0);
    char *out = tu_path(dir, "moved/bad.h5"), *p[4], *list = tu_path(dir, "list.h5"), *conf = tu_path(dir, "conf.h5");
    for (int i = 0; i < 4; i++) {
        char n[32];
        snprintf(n, sizeof n, "moved/p-%d.h5", i);
        p[i] = tu_path(dir, n);
    }
    const char *g1[] = {p[0], list, p[2], p[3]};
    expect_fail(out, "list.h5: attribute 'logs' of /fits differs", g1, 4);
    const char *g2[] = {p[0], conf, p[2], p[3]};
    expect_fail(out, "conf.h5: attribute 'confidence' of /fits differs", g2, 4);
    const char *g3[] = {p[0], p[1], p[2]};
    expect_fail(out, "shard 3 of 4 is missing", g3, 3);
    ck_assert_int_eq(sh("cd '%s' && '%s' fit imu l-1.h5 l-2.h5 --sensor imu -q 2>err.txt; test $? = 2 && "
                        "grep -q 'several logs need --table' err.txt && '%s' fit imu l-1.h5 --sensor imu --shard 0/2 "
                        "2>err.txt; test $? = 2 && grep -q 'needs --table' err.txt && '%s' fit imu l-1.h5 l-2.h5 "
                        "--sensor imu -q --table x.h5 --shard 2/3 2>err.txt; test $? = 1 && grep -q 'no log left' "
                        "err.txt && test ! -e x.h5",
                        dir, bin(), bin(), bin()),
                     0);
    for (int i = 0; i < 4; i++)
        free(p[i]);
    free(list);
    free(conf);
    free(out);
    free(rig);
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
    tcase_add_test(tc, render_four_shards_equal_single_run);
    tcase_add_test(tc, sim2real_sweep_four_shards_equal_single_run);
    tcase_add_test(tc, vepd_models_four_shards_equal_single_run);
    tcase_add_test(tc, fit_imu_logs_four_shards_equal_single_run);
    suite_add_tcase(s, tc);
    return s;
}
