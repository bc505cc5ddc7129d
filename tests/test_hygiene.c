/* Library hygiene: sensim leaves a host program's GSL error handler and
 * HDF5 error printing as it found them. Both are process (or thread) wide;
 * sensim switches them off only while its own calls run. */
#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_log.h>
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>

#include "sensim/allan.h"
#include "sensim/imu.h"
#include "sensim/log.h"
#include "sensim/status.h"
#include "testutil.h"

static int gsl_calls;
static void host_gsl_handler(const char *reason, const char *file, int line, int gsl_errno)
{
    (void)reason;
    (void)file;
    (void)line;
    (void)gsl_errno;
    gsl_calls++;
}

/* The host installs its handler; sensim's GSL users (the bias-instability
 * fit of an IMU model, a chi-squared interval) run; the handler is still
 * the host's, and a GSL error the host makes afterwards reaches it. */
START_TEST(gsl_handler_is_the_hosts_after_sensim_calls)
{
    gsl_set_error_handler(host_gsl_handler);
    gsl_calls = 0;
    sensim_triax_params p = sensim_triax_default_params();
    for (int a = 0; a < 3; a++) {
        p.noise_density[a] = 1.92e-4;
        p.bias_instability[a] = 1.06e-4;
    }
    sensim_triax *g = sensim_triax_create(&p, SENSIM_GYRO, 200.0, 1, 1, "hygiene gyro");
    ck_assert_msg(g != NULL, "%s", sensim_last_error());
    sensim_triax_destroy(g);
    double lo, hi;
    sensim_allan_ci(1.0, 10.0, 0.95, &lo, &hi);
    ck_assert(lo < 1.0 && hi > 1.0);
    ck_assert_ptr_eq(gsl_set_error_handler(host_gsl_handler), host_gsl_handler);
    ck_assert_int_eq(gsl_calls, 0);
    gsl_sf_result r;
    ck_assert_int_eq(gsl_sf_log_e(-1.0, &r), GSL_EDOM); /* through the handler */
    ck_assert_int_eq(gsl_calls, 1);
    /* Nested begin/end from sensim's own scopes restore only at the last end. */
    sensim_gsl_quiet_begin();
    sensim_gsl_quiet_begin();
    sensim_gsl_quiet_end();
    ck_assert_ptr_ne(gsl_set_error_handler_off(), host_gsl_handler); /* still off */
    sensim_gsl_quiet_end();
    ck_assert_ptr_eq(gsl_set_error_handler(NULL), host_gsl_handler);
}
END_TEST

static int h5_calls;
static herr_t host_h5_auto(hid_t stack, void *data)
{
    (void)stack;
    ++*(int *)data;
    return 0;
}

/* The host's HDF5 automatic error function stays installed, is not called
 * for the HDF5 failures sensim provokes and handles itself (a missing
 * dataset, a missing attribute, a file that is not HDF5), and is called for
 * the host's own failure afterwards. */
START_TEST(hdf5_error_printing_is_the_hosts_after_sensim_calls)
{
    char *dir = tu_mkdtemp(), *h5 = tu_path(dir, "a.h5"), *txt = tu_path(dir, "not.h5");
    h5_calls = 0;
    ck_assert_int_ge(H5Eset_auto2(H5E_DEFAULT, host_h5_auto, &h5_calls), 0);
    sensim_log *w = sensim_log_create(h5, "test_hygiene");
    ck_assert_msg(w != NULL, "%s", sensim_last_error());
    const double x[3] = {1, 2, 3};
    ck_assert_int_eq(sensim_log_write(w, "/a/x", SENSIM_F64, 3, 0, NULL, x, "m"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_commit(w), SENSIM_OK); /* frees w */
    sensim_log *r = sensim_log_open(h5);
    ck_assert_msg(r != NULL, "%s", sensim_last_error());
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK];
    ck_assert_int_ne(sensim_log_shape(r, "/a/missing", &rank, dims), SENSIM_OK);
    ck_assert_int_eq(sensim_log_exists(r, "/b/c"), 0);
    double v;
    ck_assert_int_ne(sensim_log_get_attr_f64(r, "/a/x", "nope", &v, 1), SENSIM_OK);
    sensim_log_close(r);
    ck_assert_int_eq(tu_write_file(txt, "seed: 1\n"), 0);
    ck_assert_ptr_null(sensim_log_open(txt));
    ck_assert_int_eq(h5_calls, 0);
    H5E_auto2_t f = NULL;
    void *data = NULL;
    ck_assert_int_ge(H5Eget_auto2(H5E_DEFAULT, &f, &data), 0);
    ck_assert_ptr_eq((void *)f, (void *)host_h5_auto);
    ck_assert_ptr_eq(data, &h5_calls);
    hid_t file = H5Fopen(h5, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(file, 0);
    ck_assert_int_lt(H5Dopen2(file, "/a/missing", H5P_DEFAULT), 0);
    ck_assert_int_eq(h5_calls, 1);
    H5Fclose(file);
    tu_rmtree(dir);
    free(dir);
    free(h5);
    free(txt);
}
END_TEST

Suite *suite_hygiene(void)
{
    Suite *s = suite_create("hygiene");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, gsl_handler_is_the_hosts_after_sensim_calls);
    tcase_add_test(tc, hdf5_error_printing_is_the_hosts_after_sensim_calls);
    suite_add_tcase(s, tc);
    return s;
}
