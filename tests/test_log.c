/* HDF5 log I/O: round trips, dimension scales readable by h5py, temporary
 * files, and errors that name the file and dataset. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "sensim/log.h"
#include "testutil.h"

static void fill_gt(sensim_gt_block *b, size_t n, double t0)
{
    b->n = n;
    for (size_t i = 0; i < n; i++) {
        double t = t0 + 0.01 * (double)i;
        b->t[i] = t;
        for (int k = 0; k < 3; k++) {
            b->position[3 * i + k] = t * (k + 1);
            b->velocity[3 * i + k] = k + 1;
            b->angular_velocity[3 * i + k] = 0;
            b->acceleration[3 * i + k] = 0;
        }
        b->orientation[4 * i] = 1;
        b->orientation[4 * i + 1] = b->orientation[4 * i + 2] = b->orientation[4 * i + 3] = 0;
    }
}

static char *write_gt(const char *dir, const char *name, size_t nblocks, size_t n)
{
    char *p = tu_path(dir, name);
    sensim_log *log = sensim_log_create(p, "test");
    ck_assert_msg(log != NULL, "%s", sensim_last_error());
    double lla[3] = {43.0, -89.0, 260.0};
    sensim_gt_writer *w = sensim_gt_writer_create(log, lla);
    ck_assert_ptr_nonnull(w);
    sensim_gt_block b;
    ck_assert_int_eq(sensim_gt_block_init(&b, n), SENSIM_OK);
    for (size_t k = 0; k < nblocks; k++) {
        fill_gt(&b, n, 0.01 * (double)(k * n));
        ck_assert_int_eq(sensim_gt_writer_append(w, &b), SENSIM_OK);
    }
    sensim_gt_block_free(&b);
    sensim_gt_writer_close(w);
    ck_assert_msg(sensim_log_commit(log) == SENSIM_OK, "%s", sensim_last_error());
    return p;
}

START_TEST(gt_round_trip)
{
    char *dir = tu_mkdtemp();
    char *p = write_gt(dir, "gt.h5", 3, 1000);
    sensim_log *log = sensim_log_open(p);
    ck_assert_ptr_nonnull(log);
    size_t n;
    double lla[3];
    ck_assert_msg(sensim_gt_check(log, &n, lla) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_uint_eq(n, 3000);
    ck_assert_double_eq(lla[0], 43.0);
    sensim_gt_block b;
    sensim_gt_block_init(&b, 10);
    ck_assert_int_eq(sensim_gt_read(log, 2990, 10, &b), SENSIM_OK);
    ck_assert_double_eq_tol(b.t[9], 29.99, 1e-12);
    ck_assert_double_eq_tol(b.position[3 * 9 + 2], 3 * 29.99, 1e-12);
    sensim_gt_block_free(&b);
    char *s = NULL;
    ck_assert_int_eq(sensim_log_get_attr_string(log, "/", "format", &s), SENSIM_OK);
    ck_assert_str_eq(s, "sensim-log");
    free(s);
    ck_assert_int_eq(sensim_log_get_attr_string(log, "/ground_truth/velocity", "units", &s), SENSIM_OK);
    ck_assert_str_eq(s, "m/s");
    free(s);
    /* Reading past the end names the dataset. */
    double x[4];
    ck_assert_int_ne(sensim_log_read_f64(log, "/ground_truth/t", 2999, 4, x), SENSIM_OK);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "/ground_truth/t"));
    ck_assert_int_eq(sensim_log_read_f64(log, "/ground_truth/nope", 0, 1, x), SENSIM_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "gt.h5"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "/ground_truth/nope"));
    sensim_log_close(log);

    /* h5py reads it, with t attached as the dimension scale. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import h5py,sys; f=h5py.File('%s','r'); p=f['ground_truth/position'];"
             "assert p.shape==(3000,3); assert p.dims[0][0].name=='/ground_truth/t';"
             "assert f.attrs['format']=='sensim-log'; assert abs(p[2999,2]-3*29.99)<1e-9\"",
             p);
    ck_assert_int_eq(system(cmd), 0);
    tu_rmtree(dir);
    free(dir);
    free(p);
}
END_TEST

START_TEST(abort_leaves_target_untouched)
{
    char *dir = tu_mkdtemp();
    char *p = tu_path(dir, "keep.h5");
    ck_assert_int_eq(tu_write_file(p, "precious"), 0);
    sensim_log *log = sensim_log_create(p, "test");
    ck_assert_ptr_nonnull(log);
    double v[3] = {1, 2, 3};
    size_t three = 3;
    ck_assert_int_eq(sensim_log_write(log, "/a/b", SENSIM_F64, 1, 1, &three, v, "m"), SENSIM_OK);
    sensim_log_close(log); /* not committed */
    char *text = tu_read_file(p, NULL);
    ck_assert_str_eq(text, "precious");
    free(text);
    /* No temporary file is left behind. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "test $(ls %s | wc -l) -eq 1", dir);
    ck_assert_int_eq(system(cmd), 0);
    tu_rmtree(dir);
    free(dir);
    free(p);
}
END_TEST

START_TEST(bad_time_and_shapes)
{
    char *dir = tu_mkdtemp();
    char *p = tu_path(dir, "bad.h5");
    sensim_log *log = sensim_log_create(p, "test");
    double t[5] = {0, 1, 2, 2, 3};
    ck_assert_int_eq(sensim_log_write(log, "/x/t", SENSIM_F64, 5, 0, NULL, t, "s"), SENSIM_OK);
    double tn[3] = {0, NAN, 2};
    ck_assert_int_eq(sensim_log_write(log, "/y/t", SENSIM_F64, 3, 0, NULL, tn, "s"), SENSIM_OK);
    size_t two = 2;
    double m[6] = {0};
    ck_assert_int_eq(sensim_log_write(log, "/y/v", SENSIM_F64, 3, 1, &two, m, "m"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_commit(log), SENSIM_OK);
    log = sensim_log_open(p);
    size_t n;
    ck_assert_int_eq(sensim_log_check_time(log, "/x/t", &n), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "not increasing at index 3"));
    ck_assert_int_eq(sensim_log_check_time(log, "/y/t", &n), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "/y/t: timestamp 1 is not finite"));
    size_t three = 3;
    ck_assert_int_eq(sensim_log_check_shape(log, "/y/v", 1, &three, &n), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "shape [3,2], expected [N,3]"));
    double lla[3];
    ck_assert_int_eq(sensim_gt_check(log, &n, lla), SENSIM_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "/ground_truth"));
    char **names;
    size_t count;
    ck_assert_int_eq(sensim_log_list(log, "/y", &names, &count), SENSIM_OK);
    ck_assert_uint_eq(count, 2);
    ck_assert_str_eq(names[0], "t");
    sensim_log_free_names(names, count);
    sensim_log_close(log);
    ck_assert_ptr_null(sensim_log_open("/nonexistent/x.h5"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "/nonexistent/x.h5"));
    ck_assert_ptr_null(sensim_log_create("/nonexistent/dir/x.h5", "t"));
    tu_rmtree(dir);
    free(dir);
    free(p);
}
END_TEST

START_TEST(copy_group)
{
    char *dir = tu_mkdtemp();
    char *src = write_gt(dir, "src.h5", 1, 500);
    char *dst = tu_path(dir, "dst.h5");
    sensim_log *in = sensim_log_open(src);
    sensim_log *out = sensim_log_create(dst, "test");
    ck_assert_msg(sensim_log_copy(out, in, "/ground_truth") == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_int_eq(sensim_log_commit(out), SENSIM_OK);
    sensim_log_close(in);
    out = sensim_log_open(dst);
    size_t n;
    double lla[3];
    ck_assert_msg(sensim_gt_check(out, &n, lla) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_uint_eq(n, 500);
    ck_assert_double_eq(lla[1], -89.0);
    sensim_log_close(out);
    tu_rmtree(dir);
    free(dir);
    free(src);
    free(dst);
}
END_TEST

/* No object carries a timestamp (HDF5 1.10 object headers store four of
 * them unless told not to, intermediate groups included), so the same
 * content gives the same bytes whenever it is written. */
START_TEST(no_object_timestamps)
{
    char *dir = tu_mkdtemp(), *path = tu_path(dir, "t.h5");
    sensim_log *log = sensim_log_create(path, "test");
    ck_assert_ptr_nonnull(log);
    const double x[4] = {0, 1, 2, 3};
    ck_assert_int_eq(sensim_log_write(log, "/a/b/x", SENSIM_F64, 4, 0, NULL, x, "s"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_commit(log), SENSIM_OK);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert(f >= 0);
    static const char *const objs[] = {"/", "/a", "/a/b", "/a/b/x"};
    for (int i = 0; i < 4; i++) {
        H5O_info_t info;
        ck_assert(H5Oget_info_by_name(f, objs[i], &info, H5P_DEFAULT) >= 0);
        ck_assert_msg(info.atime == 0 && info.mtime == 0 && info.ctime == 0 && info.btime == 0,
                      "%s carries timestamps", objs[i]);
    }
    H5Fclose(f);
    tu_rmtree(dir);
    free(path);
    free(dir);
}
END_TEST

/* Chunks grow with the rows a dataset is written with (sensim_log_write)
 * or expects (sensim_log_dset_create_sized): 64 KiB when small or unknown,
 * about a 64th of the dataset when large, at most 8 MiB, so that a long
 * series lies in few enough chunks for sensim_log_extents (reads with
 * pread from several threads), and the extents give back the rows. */
START_TEST(chunks_grow_with_size)
{
    char *dir = tu_mkdtemp(), *path = tu_path(dir, "c.h5");
    sensim_log *log = sensim_log_create(path, "test");
    ck_assert_ptr_nonnull(log);
    const size_t n = 400000, three = 3; /* 9.6 MB of rows of 24 bytes */
    double *x = malloc(3 * n * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (size_t i = 0; i < 3 * n; i++)
        x[i] = (double)i * 0.5;
    ck_assert_int_eq(sensim_log_write(log, "/s/big", SENSIM_F64, n, 1, &three, x, "rad/s"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(log, "/s/small", SENSIM_F64, 100, 1, &three, x, "rad/s"), SENSIM_OK);
    sensim_log_dset *d = sensim_log_dset_create_sized(log, "/s/streamed", SENSIM_F64, 1, &three, "rad/s", 0,
                                                      (size_t)400000000);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(sensim_log_dset_append(d, x, 1000), SENSIM_OK);
    sensim_log_dset_close(d);
    d = sensim_log_dset_create(log, "/s/plain", SENSIM_F64, 1, &three, "rad/s", 0);
    ck_assert_ptr_nonnull(d);
    sensim_log_dset_close(d);
    ck_assert_int_eq(sensim_log_commit(log), SENSIM_OK);
    ck_assert_uint_eq(tu_chunk_rows(path, "/s/big"), (n + 63) / 64);       /* 6250 rows, 64 chunks */
    ck_assert_uint_eq(tu_chunk_rows(path, "/s/small"), (1u << 16) / 24);   /* 2730 rows, 64 KiB */
    ck_assert_uint_eq(tu_chunk_rows(path, "/s/streamed"), (8u << 20) / 24); /* the 8 MiB cap */
    ck_assert_uint_eq(tu_chunk_rows(path, "/s/plain"), (1u << 16) / 24);
    size_t next = 0;
    double fac[3];
    sensim_log_extent *ext = tu_extents(path, "/s/big", 3, &next, fac);
    ck_assert_uint_eq(next, 64);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t rows = 0;
    for (size_t k = 0; k < next; k++) {
        ck_assert_uint_eq(ext[k].row0, rows);
        double v[3];
        ck_assert_int_eq(fseek(f, (long)(ext[k].offset + (ext[k].nrows - 1) * sizeof v), SEEK_SET), 0);
        ck_assert_uint_eq(fread(v, sizeof v[0], 3, f), 3);
        size_t last = ext[k].row0 + ext[k].nrows - 1;
        for (int c = 0; c < 3; c++)
            ck_assert_double_eq(v[c] * fac[c], x[3 * last + (size_t)c]);
        rows += ext[k].nrows;
    }
    ck_assert_uint_eq(rows, n);
    fclose(f);
    free(ext);
    free(x);
    tu_rmtree(dir);
    free(path);
    free(dir);
}
END_TEST

/* sensim_log_check_time on a long t reads it with pread from several
 * threads and checks it in pieces: the verdict and the message are those of
 * the one serial pass through HDF5 (SENSIM_HDF5_PREAD=0), for faults in a
 * late piece, at a piece boundary, a gap named where it first occurs, and a
 * clean t. */
START_TEST(check_time_in_pieces)
{
    char *dir = tu_mkdtemp(), *path = tu_path(dir, "t.h5");
    const size_t n = 300000; /* five pieces of 65536 */
    double *t = malloc(n * sizeof *t);
#ifdef _OPENMP
    const int threads = omp_get_max_threads();
    omp_set_num_threads(3); /* the pieces on several threads, whatever the machine */
#endif
    ck_assert_ptr_nonnull(t);
    for (int fault = 0; fault < 5; fault++) {
        for (size_t i = 0; i < n; i++)
            t[i] = 100 + 0.005 * (double)i;
        if (fault == 1)
            t[200001] = t[200000]; /* a repeated time, late */
        if (fault == 2)
            t[131072] = t[131071] - 1e-3; /* going back, at a boundary */
        if (fault == 3)
            for (size_t i = 70000; i < n; i++)
                t[i] += (i >= 250000 ? 2 * 4000.0 : 4000.0); /* two gaps of 4000 s: the first is named */
        if (fault == 4)
            t[65536] = NAN;
        sensim_log *log = sensim_log_create(path, "test");
        ck_assert_ptr_nonnull(log);
        ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/t", SENSIM_F64, n, 0, NULL, t, "s"), SENSIM_OK);
        ck_assert_int_eq(sensim_log_commit(log), SENSIM_OK);
        char msg[2][600];
        sensim_status st[2];
        size_t rows[2] = {0, 0};
        for (int serial = 0; serial < 2; serial++) {
            if (serial)
                setenv("SENSIM_HDF5_PREAD", "0", 1);
            else
                unsetenv("SENSIM_HDF5_PREAD");
            log = sensim_log_open(path);
            ck_assert_ptr_nonnull(log);
            sensim_error_clear();
            st[serial] = sensim_log_check_time(log, "/sensors/imu/t", &rows[serial]);
            snprintf(msg[serial], sizeof msg[serial], "%s", st[serial] ? sensim_last_error() : "");
            sensim_log_close(log);
        }
        unsetenv("SENSIM_HDF5_PREAD");
        ck_assert_int_eq(st[0], st[1]);
        ck_assert_str_eq(msg[0], msg[1]);
        ck_assert_msg((st[0] != SENSIM_OK) == (fault != 0), "fault %d: %s", fault, msg[0]);
        if (!fault)
            ck_assert_uint_eq(rows[0], n);
        if (fault == 1)
            ck_assert_msg(strstr(msg[0], "index 200001") != NULL, "%s", msg[0]);
        if (fault == 2)
            ck_assert_msg(strstr(msg[0], "index 131072") != NULL, "%s", msg[0]);
        if (fault == 3)
            ck_assert_msg(strstr(msg[0], "index 69999 and 70000") != NULL, "%s", msg[0]);
        if (fault == 4)
            ck_assert_msg(strstr(msg[0], "timestamp 65536 is not finite") != NULL, "%s", msg[0]);
    }
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    free(t);
    tu_rmtree(dir);
    free(path);
    free(dir);
}
END_TEST

Suite *suite_log(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, gt_round_trip);
    tcase_add_test(tc, abort_leaves_target_untouched);
    tcase_add_test(tc, bad_time_and_shapes);
    tcase_add_test(tc, copy_group);
    tcase_add_test(tc, no_object_timestamps);
    tcase_add_test(tc, chunks_grow_with_size);
    tcase_add_test(tc, check_time_in_pieces);
    suite_add_tcase(s, tc);
    return s;
}
