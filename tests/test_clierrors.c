/* The common mistakes get messages that say what is likely wrong: RIG and
 * IN swapped, a misspelt shape or verb, a track header with an extra
 * column; and logs made elsewhere (sensor groups without a type
 * attribute) still find their IMU and GNSS. */
#include <check.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define ASSERT_IN(hay, needle) ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' not in: %s", (needle), (hay))

START_TEST(inject_swapped_arguments_say_so)
{
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5"), *rig = tu_src("data/rigs/imu-adis16448.yaml");
    char *out = tu_path(dir, "out.h5");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "1", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("inject", gt, rig, "-o", out, NULL);
    ck_assert_int_eq(r.status, 2);
    ASSERT_IN(r.err, "gt.h5 is an HDF5 log and ");
    ASSERT_IN(r.err, "imu-adis16448.yaml looks like a YAML file: did you swap RIG and IN?");
    ck_assert(!tu_file_exists(out));
    tu_run_free(&r);
    /* Two logs: the first is no rig, whatever the second. */
    r = tu_run("inject", gt, gt, "-o", out, NULL);
    ck_assert_int_eq(r.status, 2);
    ASSERT_IN(r.err, "gt.h5 is an HDF5 log, not a rig");
    tu_run_free(&r);
    ck_assert_int_eq(tu_count_entries(dir), 1);
    tu_rmtree(dir);
    free(dir);
    free(gt);
    free(rig);
    free(out);
}
END_TEST

START_TEST(misspelt_shape_and_verb_get_a_suggestion)
{
    /* No --duration: the shape is what is wrong. */
    tu_run_result r = tu_run("trajectory", "--shape", "circel", "-o", "never.h5", NULL);
    ck_assert_int_eq(r.status, 2);
    ASSERT_IN(r.err, "unknown shape 'circel' (did you mean circle?)");
    ck_assert_ptr_null(strstr(r.err, "--duration"));
    tu_run_free(&r);
    r = tu_run("trajectory", "--shape", "figure-8", "--duration", "1", "-o", "never.h5", NULL);
    ck_assert_int_eq(r.status, 2);
    ASSERT_IN(r.err, "did you mean figure8?");
    tu_run_free(&r);
    /* Nothing close: the list, no guess. */
    r = tu_run("trajectory", "--shape", "zigzag", "--duration", "1", "-o", "never.h5", NULL);
    ck_assert_int_eq(r.status, 2);
    ASSERT_IN(r.err, "static, line, circle, sine, figure8");
    ck_assert_ptr_null(strstr(r.err, "did you mean"));
    tu_run_free(&r);
    r = tu_run("injcet", NULL);
    ck_assert_int_eq(r.status, 2);
    ASSERT_IN(r.err, "unknown verb 'injcet' (did you mean inject?)");
    tu_run_free(&r);
    r = tu_run("frobnicate", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_null(strstr(r.err, "did you mean"));
    tu_run_free(&r);
    ck_assert(!tu_file_exists("never.h5"));
}
END_TEST

START_TEST(track_header_blames_the_extra_column)
{
    char *dir = tu_mkdtemp(), *csv = tu_path(dir, "track.csv"), *out = tu_path(dir, "track.h5");
    ck_assert_int_eq(tu_write_file(csv, "t,x,y,z,yaw\n0,0,0,0,0\n1,1,0,0,0\n2,2,0,0,0\n"), 0);
    tu_run_result r = tu_run("import", "-g", csv, "-o", out, NULL);
    ck_assert_int_eq(r.status, 1);
    ASSERT_IN(r.err, "track.csv:1: header: unknown column 'yaw'");
    ASSERT_IN(r.err, "exactly t,x,y,z");
    ASSERT_IN(r.err, "t,px,py,pz,qw");
    tu_run_free(&r);
    ck_assert_int_eq(tu_write_file(csv, "t,x,z\n0,0,0\n1,1,0\n"), 0);
    r = tu_run("import", "-g", csv, "-o", out, NULL);
    ck_assert_int_eq(r.status, 1);
    ASSERT_IN(r.err, "missing column 'y'");
    tu_run_free(&r);
    ck_assert_int_eq(tu_count_entries(dir), 1);
    tu_rmtree(dir);
    free(dir);
    free(csv);
    free(out);
}
END_TEST

/* A log whose sensor groups carry no type attribute (as a converter might
 * write it), named imu and gnss: the judge finds them without --imu/--gnss. */
START_TEST(judge_finds_untyped_imu_and_gnss_groups)
{
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5"), *imu = tu_path(dir, "imu.h5");
    char *run = tu_path(dir, "run.h5"), *out = tu_path(dir, "judged.h5");
    char *imu_rig = tu_src("data/rigs/imu-seed004.yaml"), *gnss_rig = tu_src("data/gnss-chrono-gauss.yaml");
    tu_run_result r = tu_run("trajectory", "--shape", "line", "--duration", "20", "--rate", "200", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("inject", imu_rig, gt, "-o", imu, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("inject", gnss_rig, imu, "-o", run, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    hid_t f = H5Fopen(run, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    ck_assert_int_ge(H5Adelete_by_name(f, "/sensors/imu", "type", H5P_DEFAULT), 0);
    ck_assert_int_ge(H5Adelete_by_name(f, "/sensors/gps", "type", H5P_DEFAULT), 0);
    ck_assert_int_ge(H5Lmove(f, "/sensors/gps", f, "/sensors/gnss", H5P_DEFAULT, H5P_DEFAULT), 0);
    H5Fclose(f);
    r = tu_run("judge", run, "-o", out, NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ASSERT_IN(r.err, "GNSS 20");
    tu_run_free(&r);
    /* Not named after the type either: the message says how to choose. */
    f = H5Fopen(run, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(H5Lmove(f, "/sensors/gnss", f, "/sensors/rx", H5P_DEFAULT, H5P_DEFAULT), 0);
    H5Fclose(f);
    r = tu_run("judge", run, "-o", out, NULL);
    ck_assert_int_eq(r.status, 1);
    ASSERT_IN(r.err, "no gnss sensor under /sensors");
    ASSERT_IN(r.err, "--gnss NAME");
    tu_run_free(&r);
    r = tu_run("judge", run, "-o", out, "--gnss", "rx", "--quiet", NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_str_eq(r.err, "");
    tu_run_free(&r);
    tu_rmtree(dir);
    free(dir);
    free(gt);
    free(imu);
    free(run);
    free(out);
    free(imu_rig);
    free(gnss_rig);
}
END_TEST

/* Options the help must show: judge's --quiet, fit camera's --plot (the
 * name every other verb uses; --svg stays as an alias). */
START_TEST(help_lists_quiet_and_plot)
{
    tu_run_result r = tu_run("judge", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    ASSERT_IN(r.out, "--quiet");
    tu_run_free(&r);
    r = tu_run("fit", "camera", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    ASSERT_IN(r.out, "--plot FILE");
    tu_run_free(&r);
}
END_TEST

/* The renderer is a plugin the program loads for render (and the demo's
 * render step): found from the program's own directory, so a copied tree
 * works; missing, render says what it tried and exits 1, and the help,
 * which the program holds itself, still prints. (The sanitizer builds link
 * the renderer into the program: no plugin there to test.) */
START_TEST(render_plugin_found_beside_the_program)
{
    const char *orig = getenv("SENSIM_BIN");
    ck_assert_ptr_nonnull(orig);
    char *built = strdup(orig), *slash = strrchr(built, '/');
    ck_assert_ptr_nonnull(slash);
    *slash = '\0';
    char *built_plugin = tu_path(built, "sensim-render.so");
    int have = tu_file_exists(built_plugin);
    free(built_plugin);
    if (!have) {
        fprintf(stderr, "SKIP clierrors:render_plugin_found_beside_the_program: no %s/sensim-render.so (a build "
                        "with the renderer in the program)\n",
                built);
        free(built);
        return;
    }
    char *dir = tu_mkdtemp(), *bin = tu_path(dir, "bin"), *lib = tu_path(dir, "libexec/sensim"), cmd[4096];
    char *copy = tu_path(bin, "sensim"), *plugin = tu_path(lib, "sensim-render.so");
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s' && cp '%s' '%s' && ln -s '%s/sensim-render.so' '%s'", bin, lib, orig,
             copy, built, plugin);
    ck_assert_int_eq(system(cmd), 0);
    setenv("SENSIM_BIN", copy, 1);
    /* Installed layout: bin/sensim and libexec/sensim/sensim-render.so. */
    tu_run_result r = tu_run("render", "no-scene.yaml", "-t", "no-gt.h5", "-s", "vlp16", "-o", "out.h5", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_null(strstr(r.err, "cannot load the renderer"));
    ASSERT_IN(r.err, "no-scene.yaml");
    tu_run_free(&r);
    setenv("SENSIM_RENDER_PLUGIN", "/nonexistent/sensim-render.so", 1);
    r = tu_run("render", "no-scene.yaml", "-t", "no-gt.h5", "-s", "vlp16", "-o", "out.h5", NULL);
    ck_assert_int_eq(r.status, 1);
    ASSERT_IN(r.err, "sensim render: cannot load the renderer: SENSIM_RENDER_PLUGIN: /nonexistent/sensim-render.so");
    tu_run_free(&r);
    r = tu_run("help", "render", NULL);
    ck_assert_int_eq(r.status, 0);
    ASSERT_IN(r.out, "--trajectory GT.h5");
    tu_run_free(&r);
    unsetenv("SENSIM_RENDER_PLUGIN");
    setenv("SENSIM_BIN", orig, 1);
    tu_rmtree(dir);
    free(built);
    free(plugin);
    free(copy);
    free(lib);
    free(bin);
    free(dir);
}
END_TEST

Suite *suite_clierrors(void)
{
    Suite *s = suite_create("clierrors");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, inject_swapped_arguments_say_so);
    tcase_add_test(tc, misspelt_shape_and_verb_get_a_suggestion);
    tcase_add_test(tc, track_header_blames_the_extra_column);
    tcase_add_test(tc, judge_finds_untyped_imu_and_gnss_groups);
    tcase_add_test(tc, help_lists_quiet_and_plot);
    tcase_add_test(tc, render_plugin_found_beside_the_program);
    suite_add_tcase(s, tc);
    return s;
}
