/* CSV: ground-truth write/read round trip, streaming in small blocks,
 * validation messages with file, line and column, the one-column reader, and
 * the import/export verbs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sensim/csv.h"
#include "sensim/log.h"
#include "sensim/trajectory.h"
#include "testutil.h"

#define HDR SENSIM_CSV_GT_HEADER "\n"
#define ROW0 "0,1,2,3,1,0,0,0,4,5,6,0,0,0.5,7,8,9\n"
#define ROW1 "0.5,1.5,2,3,0.70710678118654757,0,0,0.70710678118654757,4,5,6,0,0,0.5,7,8,9\n"

static char *write_tmp(const char *dir, const char *name, const char *text)
{
    char *p = tu_path(dir, name);
    ck_assert_int_eq(tu_write_file(p, text), 0);
    return p;
}

START_TEST(gt_round_trip_streamed)
{
    /* A figure-8 written in blocks of 100 and read back in blocks of 7: every
     * value identical (17 significant digits round trip exactly). */
    char *dir = tu_mkdtemp(), *p = tu_path(dir, "gt.csv");
    sensim_trajectory_params tp = sensim_trajectory_default_params();
    tp.shape = SENSIM_TRAJ_FIGURE8;
    tp.yaw = 0.3;
    sensim_trajectory *tr = sensim_trajectory_create(&tp);
    sensim_gt_block all, b;
    ck_assert_int_eq(sensim_gt_block_init(&all, 1000), SENSIM_OK);
    ck_assert_int_eq(sensim_gt_block_init(&b, 7), SENSIM_OK);
    ck_assert_int_eq(sensim_trajectory_fill(tr, 0.1, 100, 0, 1000, &all), SENSIM_OK);
    double origin[3] = {-33.5, 151.25, 12.125};
    sensim_csv_gt_writer *w = sensim_csv_gt_writer_create(p, origin);
    ck_assert_ptr_nonnull(w);
    for (size_t k = 0; k < 1000; k += 100) {
        sensim_gt_block part = all;
        part.n = 100;
        part.t += k, part.position += 3 * k, part.orientation += 4 * k, part.velocity += 3 * k;
        part.angular_velocity += 3 * k, part.acceleration += 3 * k;
        ck_assert_int_eq(sensim_csv_gt_writer_append(w, &part), SENSIM_OK);
    }
    ck_assert_int_eq(tu_count_entries(dir), 1); /* only the temporary so far */
    ck_assert(!tu_file_exists(p));
    ck_assert_int_eq(sensim_csv_gt_writer_commit(w), SENSIM_OK);
    ck_assert_int_eq(tu_count_entries(dir), 1);

    sensim_csv_gt_reader *r = sensim_csv_gt_reader_open(p);
    ck_assert_msg(r != NULL, "%s", sensim_last_error());
    double o[3];
    ck_assert_int_eq(sensim_csv_gt_reader_origin(r, o), 1);
    ck_assert(o[0] == origin[0] && o[1] == origin[1] && o[2] == origin[2]);
    size_t got = 0;
    for (;;) {
        ck_assert_int_eq(sensim_csv_gt_reader_read(r, &b), SENSIM_OK);
        if (b.n == 0)
            break;
        ck_assert(memcmp(b.t, all.t + got, b.n * sizeof(double)) == 0);
        ck_assert(memcmp(b.position, all.position + 3 * got, 3 * b.n * sizeof(double)) == 0);
        ck_assert(memcmp(b.orientation, all.orientation + 4 * got, 4 * b.n * sizeof(double)) == 0);
        ck_assert(memcmp(b.velocity, all.velocity + 3 * got, 3 * b.n * sizeof(double)) == 0);
        ck_assert(memcmp(b.angular_velocity, all.angular_velocity + 3 * got, 3 * b.n * sizeof(double)) == 0);
        ck_assert(memcmp(b.acceleration, all.acceleration + 3 * got, 3 * b.n * sizeof(double)) == 0);
        got += b.n;
    }
    ck_assert_uint_eq(got, 1000);
    ck_assert_uint_eq(sensim_csv_gt_reader_rows(r), 1000);
    sensim_csv_gt_reader_close(r);
    sensim_csv_gt_reader_close(NULL);
    sensim_csv_gt_writer_close(NULL);
    /* An abandoned writer leaves nothing. */
    w = sensim_csv_gt_writer_create(p, NULL);
    sensim_csv_gt_writer_close(w);
    ck_assert_int_eq(tu_count_entries(dir), 1);
    sensim_gt_block_free(&all);
    sensim_gt_block_free(&b);
    sensim_trajectory_destroy(tr);
    tu_rmtree(dir);
    free(p);
    free(dir);
}
END_TEST

START_TEST(gt_reader_tolerates_layout)
{
    /* Comments, blank lines, CRLF, spaces, columns in another order, a
     * rounded quaternion (normalized). */
    char *dir = tu_mkdtemp();
    char *p = write_tmp(dir, "a.csv",
                        "# made by hand\r\n\r\n"
                        "t, qw,qx,qy,qz, px,py,pz, vx,vy,vz, wx,wy,wz, ax,ay,az\r\n"
                        "0, 1,0,0,0, 1,2,3, 4,5,6, 0,0,0.5, 7,8,9\r\n"
                        "# a comment between rows\n"
                        "1e-1, 0.707107,0,0,0.707107, 1,2,3, 4,5,6, 0,0,0.5, 7,8,9\n");
    sensim_csv_gt_reader *r = sensim_csv_gt_reader_open(p);
    ck_assert_msg(r != NULL, "%s", sensim_last_error());
    double o[3];
    ck_assert_int_eq(sensim_csv_gt_reader_origin(r, o), 0);
    sensim_gt_block b;
    sensim_gt_block_init(&b, 10);
    ck_assert_msg(sensim_csv_gt_reader_read(r, &b) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_uint_eq(b.n, 2);
    ck_assert_within(b.t[1], 0.1, 0);
    ck_assert_within(b.position[0], 1, 0);
    ck_assert_within(b.acceleration[5], 9, 0);
    ck_assert_within(b.orientation[4], sqrt(0.5), 1e-15);
    ck_assert_within(b.orientation[7], sqrt(0.5), 1e-15);
    sensim_gt_block_free(&b);
    sensim_csv_gt_reader_close(r);
    tu_rmtree(dir);
    free(p);
    free(dir);
}
END_TEST

/* Opens text and reads it all; expects failure with a message containing
 * each of the needles. */
static void expect_bad(const char *dir, const char *text, const char *n1, const char *n2)
{
    char *p = write_tmp(dir, "bad.csv", text);
    sensim_csv_gt_reader *r = sensim_csv_gt_reader_open(p);
    sensim_status st = SENSIM_OK;
    if (r) {
        sensim_gt_block b;
        sensim_gt_block_init(&b, 2);
        do
            st = sensim_csv_gt_reader_read(r, &b);
        while (!st && b.n > 0);
        sensim_gt_block_free(&b);
        sensim_csv_gt_reader_close(r);
    }
    ck_assert_msg(!r || st, "accepted: %s", text);
    const char *m = sensim_last_error();
    ck_assert_msg(strstr(m, n1) && (!n2 || strstr(m, n2)), "message '%s' lacks '%s' or '%s'", m, n1, n2 ? n2 : "");
    ck_assert_msg(strstr(m, "bad.csv:"), "message '%s' lacks the file", m);
    free(p);
}

START_TEST(gt_reader_errors)
{
    char *dir = tu_mkdtemp();
    expect_bad(dir, HDR ROW0 "0.5,1,2,3,1,0,0,0,4,5,6,0,0,0.5,7,8\n", "bad.csv:3:", "expected 17 columns, found 16");
    expect_bad(dir, HDR ROW0 "0.5,1,2,3,1,abc,0,0,4,5,6,0,0,0.5,7,8,9\n", "bad.csv:3: column 'qx': 'abc'",
               "not a number");
    expect_bad(dir, HDR ROW0 "0.5,1,2,nan,1,0,0,0,4,5,6,0,0,0.5,7,8,9\n", "bad.csv:3: column 'pz'", "NaN");
    expect_bad(dir, HDR ROW0 "0.5,1,2,3,1,0,0,0,4,5,inf,0,0,0.5,7,8,9\n", "column 'vz'", "not finite");
    expect_bad(dir, HDR ROW0 "0.5,1,2,3,1,0,0,0,4,5,6,0,,0.5,7,8,9\n", "column 'wy'", "empty");
    expect_bad(dir, HDR ROW0 "# c\n" ROW0, "bad.csv:4: column 't'", "does not increase");
    expect_bad(dir, HDR ROW1 ROW0, "bad.csv:3: column 't': 0 does not increase (previous 0.5)", NULL);
    expect_bad(dir, HDR "0,1,2,3,1,0,0.5,0,4,5,6,0,0,0.5,7,8,9\n", "bad.csv:2:", "quaternion norm 1.11803");
    expect_bad(dir, "t,px,py,pz,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,ax,ay\n", "bad.csv:1: header: missing column 'az'",
               NULL);
    expect_bad(dir, "t,px,py,pz,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,ax,ay,az,speed\n", "unknown column 'speed'", NULL);
    expect_bad(dir, "t,px,py,pz,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,ax,ay,t\n", "column 't' appears twice", NULL);
    expect_bad(dir, "# only a comment\n", "no header line", NULL);
    tu_rmtree(dir);
    free(dir);
    ck_assert_ptr_null(sensim_csv_gt_reader_open("/nonexistent/x.csv"));
    ck_assert_int_eq(sensim_last_status(), SENSIM_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "/nonexistent/x.csv"));
}
END_TEST

START_TEST(read_column)
{
    char *dir = tu_mkdtemp();
    double *v = NULL;
    size_t n = 0;
    /* Header skipped, comments skipped, commas. */
    char *p = write_tmp(dir, "c.csv", "# gyro log\ntime,gx,gy\n0,0.5,1\n\n1,-2.5e-3,2\n# end\n2,7,3\n");
    ck_assert_int_eq(sensim_csv_read_column(p, 1, &v, &n), SENSIM_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert(v[0] == 0.5 && v[1] == -2.5e-3 && v[2] == 7);
    free(v);
    ck_assert_int_eq(sensim_csv_read_column_named(p, "gy", &v, &n), SENSIM_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert(v[2] == 3);
    free(v);
    ck_assert_int_eq(sensim_csv_read_column_named(p, "gz", &v, &n), SENSIM_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "c.csv:2: header has no column 'gz'"));
    ck_assert_ptr_null(v);
    ck_assert_int_eq(sensim_csv_read_column(p, 3, &v, &n), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "c.csv:2: column 4: the line has only 3 columns"));
    free(p);
    /* No header, whitespace separated, one column. */
    p = write_tmp(dir, "w.txt", "1.5   2\n  3\t4\n");
    ck_assert_int_eq(sensim_csv_read_column(p, 0, &v, &n), SENSIM_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert(v[0] == 1.5 && v[1] == 3);
    free(v);
    free(p);
    /* A bad cell after the first line is an error with line and column. */
    p = write_tmp(dir, "b.csv", "x\n1\n2\nfoo\n");
    ck_assert_int_eq(sensim_csv_read_column(p, 0, &v, &n), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "b.csv:4: column 1: 'foo' is not a number"));
    free(p);
    p = write_tmp(dir, "nan.csv", "1\nNaN\n");
    ck_assert_int_eq(sensim_csv_read_column(p, 0, &v, &n), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "nan.csv:2: column 1: 'NaN' is NaN"));
    free(p);
    p = write_tmp(dir, "e.csv", "# nothing\nvalue\n");
    ck_assert_int_eq(sensim_csv_read_column(p, 0, &v, &n), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "no numbers"));
    free(p);
    /* Many values: the array grows. */
    p = tu_path(dir, "big.csv");
    FILE *f = fopen(p, "w");
    for (int i = 0; i < 5000; i++)
        fprintf(f, "%d\n", i);
    fclose(f);
    ck_assert_int_eq(sensim_csv_read_column(p, 0, &v, &n), SENSIM_OK);
    ck_assert_uint_eq(n, 5000);
    ck_assert(v[4999] == 4999);
    free(v);
    free(p);
    ck_assert_int_eq(sensim_csv_read_column("/nonexistent.csv", 0, &v, &n), SENSIM_ENOTFOUND);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_round_trip)
{
    /* trajectory -> export -> import: every dataset equal (to 1e-12, in
     * fact bit for bit), origin kept through the CSV comment. */
    char *dir = tu_mkdtemp(), *a = tu_path(dir, "a.h5"), *csv = tu_path(dir, "a.csv"), *b = tu_path(dir, "b.h5");
    tu_run_result r = tu_run("trajectory", "--shape", "sine", "--duration", "20", "--rate", "50", "--speed", "5",
                             "--origin", "48.1,11.5,520", "--heading", "30", "-o", a, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("export", "--ground-truth", a, "-o", csv, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("import", "--ground-truth", csv, "-o", b, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    sensim_log *la = sensim_log_open(a), *lb = sensim_log_open(b);
    ck_assert_ptr_nonnull(la);
    ck_assert_ptr_nonnull(lb);
    size_t na, nb;
    double oa[3], ob[3];
    ck_assert_int_eq(sensim_gt_check(la, &na, oa), SENSIM_OK);
    ck_assert_int_eq(sensim_gt_check(lb, &nb, ob), SENSIM_OK);
    ck_assert_uint_eq(na, 1001);
    ck_assert_uint_eq(nb, na);
    for (int i = 0; i < 3; i++)
        ck_assert(oa[i] == ob[i]);
    sensim_gt_block ba, bb;
    sensim_gt_block_init(&ba, na);
    sensim_gt_block_init(&bb, na);
    ck_assert_int_eq(sensim_gt_read(la, 0, na, &ba), SENSIM_OK);
    ck_assert_int_eq(sensim_gt_read(lb, 0, nb, &bb), SENSIM_OK);
    double worst = 0;
    for (size_t i = 0; i < na; i++) {
        worst = fmax(worst, fabs(ba.t[i] - bb.t[i]));
        for (int c = 0; c < 3; c++) {
            worst = fmax(worst, fabs(ba.position[3 * i + c] - bb.position[3 * i + c]));
            worst = fmax(worst, fabs(ba.velocity[3 * i + c] - bb.velocity[3 * i + c]));
            worst = fmax(worst, fabs(ba.angular_velocity[3 * i + c] - bb.angular_velocity[3 * i + c]));
            worst = fmax(worst, fabs(ba.acceleration[3 * i + c] - bb.acceleration[3 * i + c]));
        }
        for (int c = 0; c < 4; c++)
            worst = fmax(worst, fabs(ba.orientation[4 * i + c] - bb.orientation[4 * i + c]));
    }
    ck_assert_msg(worst <= 1e-12, "worst difference %g", worst);
    /* --origin overrides the comment. */
    r = tu_run("import", "-g", csv, "-o", b, "--origin", "1,2,3", NULL);
    ck_assert_int_eq(r.status, 0);
    tu_run_free(&r);
    sensim_log_close(lb);
    lb = sensim_log_open(b);
    ck_assert_int_eq(sensim_gt_check(lb, &nb, ob), SENSIM_OK);
    ck_assert(ob[0] == 1 && ob[1] == 2 && ob[2] == 3);
    /* A position-only track imports with derived kinematics. */
    char *trk = write_tmp(dir, "trk.csv", "t,x,y,z\n0,0,0,0\n1,1,0,0\n2,2,0,0\n3,3,0,0\n");
    r = tu_run("import", "-g", trk, "-o", b, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    sensim_log_close(lb);
    lb = sensim_log_open(b);
    ck_assert_int_eq(sensim_gt_check(lb, &nb, ob), SENSIM_OK);
    ck_assert_uint_eq(nb, 4);
    double vel[12];
    ck_assert_int_eq(sensim_log_read_f64(lb, "/ground_truth/velocity", 0, 4, vel), SENSIM_OK);
    ck_assert_within(vel[0], 1, 1e-15);
    ck_assert_within(vel[9], 1, 1e-15);
    unlink(trk);
    free(trk);
    /* Export to standard output. */
    r = tu_run("export", "-g", a, "-o", "-", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "# origin_lla: 48.1"));
    ck_assert_ptr_nonnull(strstr(r.out, SENSIM_CSV_GT_HEADER "\n0,"));
    tu_run_free(&r);
    sensim_gt_block_free(&ba);
    sensim_gt_block_free(&bb);
    sensim_log_close(la);
    sensim_log_close(lb);
    ck_assert_int_eq(tu_count_entries(dir), 3);
    tu_rmtree(dir);
    free(a);
    free(b);
    free(csv);
    free(dir);
}
END_TEST

START_TEST(cli_bad_input)
{
    char *dir = tu_mkdtemp(), *out = tu_path(dir, "out.h5"), *outcsv = tu_path(dir, "out.csv");
    ck_assert_int_eq(tu_write_file(out, "precious h5"), 0);
    ck_assert_int_eq(tu_write_file(outcsv, "precious csv"), 0);
    char *bad = write_tmp(dir, "bad.csv", HDR ROW0 ROW1 "1.0,1,2,3,1,0,0,oops,4,5,6,0,0,0.5,7,8,9\n");
    /* A bad CSV line: exit 1, file and line named, output untouched. */
    tu_run_result r = tu_run("import", "--ground-truth", bad, "-o", out, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "bad.csv:4: column 'qz': 'oops' is not a number"), "stderr: %s", r.err);
    tu_run_free(&r);
    char *one = write_tmp(dir, "one.csv", HDR ROW0);
    r = tu_run("import", "--ground-truth", one, "-o", out, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "1 data rows, need at least 2"), "stderr: %s", r.err);
    tu_run_free(&r);
    /* Export of something that is not a ground-truth log. */
    r = tu_run("export", "--ground-truth", bad, "-o", outcsv, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "bad.csv"));
    tu_run_free(&r);
    /* Usage errors. */
    r = tu_run("import", "--ground-truth", bad, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--output is required"));
    tu_run_free(&r);
    r = tu_run("export", "-o", outcsv, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--ground-truth is required"));
    tu_run_free(&r);
    r = tu_run("import", "-g", bad, "-o", out, "--origin", "north", NULL);
    ck_assert_int_eq(r.status, 2);
    tu_run_free(&r);
    char *t1 = tu_read_file(out, NULL), *t2 = tu_read_file(outcsv, NULL);
    ck_assert_str_eq(t1, "precious h5");
    ck_assert_str_eq(t2, "precious csv");
    free(t1);
    free(t2);
    ck_assert_int_eq(tu_count_entries(dir), 4);
    tu_rmtree(dir);
    free(out);
    free(outcsv);
    free(bad);
    free(one);
    free(dir);
}
END_TEST

/* Reads a whole file with blocks of the given capacity into one big block. */
static size_t read_all(const char *path, size_t cap, sensim_gt_block *all)
{
    sensim_csv_gt_reader *r = sensim_csv_gt_reader_open(path);
    ck_assert_msg(r != NULL, "%s", sensim_last_error());
    sensim_gt_block b;
    sensim_gt_block_init(&b, cap);
    size_t n = 0;
    for (;;) {
        ck_assert_msg(sensim_csv_gt_reader_read(r, &b) == SENSIM_OK, "%s", sensim_last_error());
        if (b.n == 0)
            break;
        ck_assert(n + b.n <= all->capacity);
        memcpy(all->t + n, b.t, b.n * sizeof(double));
        memcpy(all->position + 3 * n, b.position, 3 * b.n * sizeof(double));
        memcpy(all->orientation + 4 * n, b.orientation, 4 * b.n * sizeof(double));
        memcpy(all->velocity + 3 * n, b.velocity, 3 * b.n * sizeof(double));
        memcpy(all->angular_velocity + 3 * n, b.angular_velocity, 3 * b.n * sizeof(double));
        memcpy(all->acceleration + 3 * n, b.acceleration, 3 * b.n * sizeof(double));
        n += b.n;
    }
    ck_assert_int_eq(sensim_csv_gt_reader_is_track(r), 1);
    sensim_gt_block_free(&b);
    sensim_csv_gt_reader_close(r);
    all->n = n;
    return n;
}

START_TEST(track_derivation)
{
    /* Three laps of a circle (r 10 m, 2 m/s, left) sampled at uneven times
     * around 100 Hz, written as t,x,y,z. Derived from quadratics through
     * neighbours: velocity error ~ h^2/6 |p'''| = 1.3e-6 m/s (tolerance 1e-5);
     * acceleration and yaw rate are first order on an uneven grid,
     * ~ |h+ - h-|/3 |p'''| <= 1e-4 (tolerance 2e-4). */
    char *dir = tu_mkdtemp(), *p = tu_path(dir, "track.csv");
    sensim_trajectory_params tp = sensim_trajectory_default_params();
    tp.shape = SENSIM_TRAJ_CIRCLE;
    tp.speed = 2;
    tp.radius = 10;
    tp.yaw = 3.0; /* the heading crosses +-180 deg at once */
    sensim_trajectory *tr = sensim_trajectory_create(&tp);
    const size_t n = 9500;
    FILE *f = fopen(p, "w");
    fprintf(f, "# track\nx,y,t,z\n");
    for (size_t k = 0; k < n; k++) {
        double t = 0.01 * (double)k + 0.002 * sin((double)k);
        sensim_trajectory_state s;
        sensim_trajectory_eval(tr, t, &s);
        fprintf(f, "%.17g,%.17g,%.17g,%.17g\n", s.position.x, s.position.y, t, s.position.z);
    }
    fclose(f);
    sensim_gt_block big, big1;
    sensim_gt_block_init(&big, n);
    sensim_gt_block_init(&big1, n);
    ck_assert_uint_eq(read_all(p, 1000, &big), n);
    double ev = 0, ea = 0, ew = 0, eq = 0;
    for (size_t i = 0; i < n; i++) {
        sensim_trajectory_state s;
        sensim_trajectory_eval(tr, big.t[i], &s);
        ck_assert(big.position[3 * i] == s.position.x);
        ev = fmax(ev, hypot(big.velocity[3 * i] - s.velocity.x, big.velocity[3 * i + 1] - s.velocity.y));
        if (i > 0 && i + 1 < n) /* the end rows extrapolate the quadratic: first order */
            ea = fmax(ea, hypot(big.acceleration[3 * i] - s.acceleration.x,
                                big.acceleration[3 * i + 1] - s.acceleration.y));
        ew = fmax(ew, fabs(big.angular_velocity[3 * i + 2] - s.angular_velocity.z));
        /* The unwrapped yaw reproduces the analytic quaternion, sign included. */
        eq = fmax(eq, fabs(big.orientation[4 * i] - s.orientation.w) +
                          fabs(big.orientation[4 * i + 3] - s.orientation.z));
    }
    ck_assert_msg(ev < 1e-5, "velocity error %g", ev);
    ck_assert_msg(ea < 2e-4, "acceleration error %g", ea);
    ck_assert_msg(ew < 2e-4, "yaw rate error %g", ew);
    ck_assert_msg(eq < 1e-7, "orientation error %g", eq);
    /* Blocks of one row give the same numbers. */
    ck_assert_uint_eq(read_all(p, 1, &big1), n);
    ck_assert(memcmp(big.velocity, big1.velocity, 3 * n * sizeof(double)) == 0);
    ck_assert(memcmp(big.orientation, big1.orientation, 4 * n * sizeof(double)) == 0);
    ck_assert(memcmp(big.angular_velocity, big1.angular_velocity, 3 * n * sizeof(double)) == 0);
    free(p);

    /* Standing still: heading held (east), no yaw rate. */
    p = write_tmp(dir, "still.csv", "t,x,y,z\n0,5,5,0\n0.1,5,5,0\n0.2,5,5,0\n0.3,5,5,0\n");
    ck_assert_uint_eq(read_all(p, 3, &big), 4);
    for (size_t i = 0; i < 4; i++) {
        ck_assert(big.orientation[4 * i] == 1 && big.orientation[4 * i + 3] == 0);
        ck_assert(big.velocity[3 * i] == 0 && big.angular_velocity[3 * i + 2] == 0);
    }
    free(p);
    /* Too short, and a bad row, are errors with the file (and line). */
    p = write_tmp(dir, "short.csv", "t,x,y,z\n0,0,0,0\n1,1,0,0\n");
    sensim_csv_gt_reader *r = sensim_csv_gt_reader_open(p);
    ck_assert_int_eq(sensim_csv_gt_reader_read(r, &big), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "short.csv: 2 rows"));
    sensim_csv_gt_reader_close(r);
    free(p);
    p = write_tmp(dir, "bad.csv", "t,x,y,z\n0,0,0,0\n1,1,0,0\n2,2,zz,0\n");
    r = sensim_csv_gt_reader_open(p);
    ck_assert_int_eq(sensim_csv_gt_reader_read(r, &big), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "bad.csv:4: column 'y': 'zz' is not a number"));
    sensim_csv_gt_reader_close(r);
    free(p);
    sensim_gt_block_free(&big);
    sensim_gt_block_free(&big1);
    sensim_trajectory_destroy(tr);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_csv(void)
{
    Suite *s = suite_create("csv");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, gt_round_trip_streamed);
    tcase_add_test(tc, gt_reader_tolerates_layout);
    tcase_add_test(tc, gt_reader_errors);
    tcase_add_test(tc, read_column);
    tcase_add_test(tc, track_derivation);
    suite_add_tcase(s, tc);
    TCase *cli = tcase_create("cli");
    tcase_add_test(cli, cli_round_trip);
    tcase_add_test(cli, cli_bad_input);
    suite_add_tcase(s, cli);
    return s;
}
