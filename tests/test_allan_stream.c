/* Allan deviations streamed from a block reader (sensim_allan_compute_stream)
 * against the in-memory path, on awkward lengths, every estimator, both
 * kinds of data, 1/3/6 axes, in groups and fully streamed; the errors; and
 * peak memory of a long stream measured in a child process. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sensim/allan.h"
#include "sensim/log.h"
#include "sensim/rng.h"
#include "testutil.h"

typedef struct arr_src {
    const double *x;
    size_t n, na;
    size_t reads;
    size_t fail_at; /* a read touching this row fails (SIZE_MAX: never) */
} arr_src;

static sensim_status arr_read(void *ctx, size_t start, size_t count, size_t a0, size_t a1, double *buf)
{
    arr_src *s = ctx;
    ck_assert(count > 0 && start + count <= s->n && a0 < a1 && a1 <= s->na);
    s->reads++;
    if (s->fail_at >= start && s->fail_at < start + count)
        return sensim_error(SENSIM_EIO, "test source: row %zu unreadable", s->fail_at);
    for (size_t i = 0; i < count; i++)
        for (size_t a = a0; a < a1; a++)
            buf[i * (a1 - a0) + (a - a0)] = s->x[(start + i) * s->na + a];
    return SENSIM_OK;
}

/* White noise plus a random walk of a different size per axis (several
 * noise types along the taus); phase data: integrated white FM plus white
 * PM, which R(m) has to tell apart. */
static double *make_series(size_t n, size_t na, int phase, uint32_t seed)
{
    double *x = malloc(n * na * sizeof *x);
    for (size_t a = 0; a < na; a++) {
        sensim_rng r = sensim_rng_make(11, seed, (uint32_t)a);
        double rw = 0, ph = 0;
        for (size_t i = 0; i < n; i++) {
            double w = sensim_rng_normal(&r, 2 * i), u = sensim_rng_normal(&r, 2 * i + 1);
            rw += 1e-3 * (double)(a + 1) * u;
            if (phase) {
                ph += (a % 2 ? 0.01 : 1.0) * w;
                x[i * na + a] = 5 + ph + (a % 2 ? 3.0 : 0.05) * u + 1e-3 * (double)i;
            } else
                x[i * na + a] = 0.3 * (double)a + (double)(a + 1) * w + rw;
        }
    }
    return x;
}

static void compare(const sensim_allan_point *p, const sensim_allan_point *q, size_t cnt, const char *what)
{
    for (size_t k = 0; k < cnt; k++) {
        const double v[4][2] = {{p[k].dev, q[k].dev}, {p[k].lo, q[k].lo}, {p[k].hi, q[k].hi}, {p[k].edf, q[k].edf}};
        for (int j = 0; j < 4; j++)
            ck_assert_msg(v[j][0] == v[j][1] || fabs(v[j][0] - v[j][1]) <= 1e-12 * fabs(v[j][1]),
                          "%s: point %zu (m %zu) field %d: streamed %.17g, in memory %.17g", what, k, q[k].m, j,
                          v[j][0], v[j][1]);
        ck_assert_msg(p[k].n == q[k].n && p[k].m == q[k].m && p[k].alpha == q[k].alpha,
                      "%s: point %zu: n %zu/%zu m %zu/%zu alpha %d/%d", what, k, p[k].n, q[k].n, p[k].m, q[k].m,
                      p[k].alpha, q[k].alpha);
    }
}

START_TEST(stream_equals_memory)
{
    /* Lengths around the 65536-row read and checkpoint blocks and the 32768
     * chunks of the overlapping sums; budgets that force groups of axes and
     * full streaming (below one axis's phase). */
    static const size_t lens[] = {1000, 65535, 65537, 131073};
    static const size_t axes[] = {1, 3, 6};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        for (int phase = 0; phase < 2; phase++)
            for (size_t ai = 0; ai < 3; ai++) {
                const size_t n = lens[li], na = axes[ai];
                /* The longer cases on fewer axis counts (time): 3 axes
                 * around the 65536-row blocks, 1 (rate) or 3 (phase) axes
                 * over two blocks. */
                if (n > 1000 && n < 100000 && na != 3)
                    continue;
                if (n > 100000 && na != (phase ? 3u : 1u))
                    continue;
                double *x = make_series(n, na, phase, (uint32_t)(li + 1));
                for (int d = 0; d < SENSIM_ALLAN_NDEV; d++) {
                    sensim_allan_opts o = sensim_allan_default_opts();
                    o.dev = (sensim_allan_dev)d;
                    o.data = phase ? SENSIM_ALLAN_PHASE : SENSIM_ALLAN_FREQ;
                    o.tau0 = 0.01;
                    size_t *m, nm;
                    ck_assert_int_eq(sensim_allan_taus(n > 70000 ? SENSIM_TAUS_OCTAVE : SENSIM_TAUS_LOG, 4, o.dev,
                                                       o.data, n, &m, &nm),
                                     SENSIM_OK);
                    sensim_allan_point *ref = malloc(na * nm * sizeof *ref), *got = malloc(na * nm * sizeof *got);
                    ck_assert_int_eq(sensim_allan_compute_axes(x, n, na, &o, m, nm, ref), SENSIM_OK);
                    const size_t budgets[3] = {0, 2 * (n + 1) * sizeof(double), (n + 1) * sizeof(double) / 2};
                    /* b = 3: streamed without the phase spool (no usable
                     * temporary directory), re-reading the source. */
                    for (int b = 0; b < 4; b++) {
                        arr_src as = {x, n, na, 0, SIZE_MAX};
                        sensim_allan_source src = {arr_read, &as, n, na, 0};
                        char what[160];
                        snprintf(what, sizeof what, "n %zu, %zu axes, %s, %s, budget %d", n, na,
                                 phase ? "phase" : "freq", sensim_allan_dev_name(o.dev), b);
                        memset(got, 0, na * nm * sizeof *got);
                        char *tmpdir = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
                        if (b == 3)
                            setenv("TMPDIR", "/nonexistent/sensim-no-tmp", 1);
                        sensim_status rc = sensim_allan_compute_stream(&src, &o, m, nm, budgets[b < 3 ? b : 2], got);
                        if (b == 3) {
                            if (tmpdir)
                                setenv("TMPDIR", tmpdir, 1);
                            else
                                unsetenv("TMPDIR");
                        }
                        free(tmpdir);
                        ck_assert_msg(rc == SENSIM_OK, "%s: %s", what, sensim_last_error());
                        compare(got, ref, na * nm, what);
                        /* Streamed with the spool, the source is read in
                         * two passes of 65536-row blocks, whatever the taus
                         * and the estimator. */
                        const size_t blocks = (n + 65535) / 65536;
                        if (b == 2)
                            ck_assert_msg(as.reads <= 2 * blocks, "%s: %zu reads of the source, 2 passes are %zu", what,
                                          as.reads, 2 * blocks);
                        else if (b == 3)
                            ck_assert_msg(as.reads > 2 * blocks, "%s: without the spool only %zu reads", what, as.reads);
                    }
                    free(ref);
                    free(got);
                    free(m);
                }
                free(x);
            }
}
END_TEST

START_TEST(stream_ring_and_cursors)
{
    /* Overlapping sums streamed with the short lags from a ring of rows and
     * the long ones from cursors of their own (6 axes, 8 MB of windows: a
     * ring of 65536 rows, the lags 65536 and up by cursor), with the phase
     * spool and without: the in-memory numbers to 1e-12. */
    const size_t n = 300001, na = 6;
    double *x = make_series(n, na, 0, 21);
    for (int d = 0; d < 2; d++) {
        sensim_allan_opts o = sensim_allan_default_opts();
        o.dev = d ? SENSIM_OHDEV : SENSIM_OADEV;
        o.tau0 = 0.005;
        size_t *m, nm;
        ck_assert_int_eq(sensim_allan_taus(SENSIM_TAUS_OCTAVE, 0, o.dev, o.data, n, &m, &nm), SENSIM_OK);
        sensim_allan_point *ref = malloc(na * nm * sizeof *ref), *got = malloc(na * nm * sizeof *got);
        ck_assert_int_eq(sensim_allan_compute_axes(x, n, na, &o, m, nm, ref), SENSIM_OK);
        for (int spool = 1; spool >= 0; spool--) {
            arr_src as = {x, n, na, 0, SIZE_MAX};
            sensim_allan_source src = {arr_read, &as, n, na, 0};
            char *tmpdir = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
            if (!spool)
                setenv("TMPDIR", "/nonexistent/sensim-no-tmp", 1);
            sensim_status rc = sensim_allan_compute_stream(&src, &o, m, nm, (size_t)1 << 20, got);
            if (tmpdir)
                setenv("TMPDIR", tmpdir, 1);
            else
                unsetenv("TMPDIR");
            free(tmpdir);
            ck_assert_msg(rc == SENSIM_OK, "%s", sensim_last_error());
            char what[96];
            snprintf(what, sizeof what, "%s, %s the spool", sensim_allan_dev_name(o.dev), spool ? "with" : "without");
            compare(got, ref, na * nm, what);
        }
        free(ref);
        free(got);
        free(m);
    }
    free(x);
}
END_TEST

START_TEST(stream_errors)
{
    const size_t n = 70001;
    double *x = make_series(n, 3, 0, 7);
    sensim_allan_opts o = sensim_allan_default_opts();
    size_t *m, nm;
    ck_assert_int_eq(sensim_allan_taus(SENSIM_TAUS_OCTAVE, 0, o.dev, o.data, n, &m, &nm), SENSIM_OK);
    sensim_allan_point *p = malloc(3 * nm * sizeof *p);
    const size_t budgets[2] = {0, 1000};
    for (int b = 0; b < 2; b++) {
        /* A NaN names the axis and the sample, as in memory. */
        x[3 * 66000 + 2] = NAN;
        arr_src as = {x, n, 3, 0, SIZE_MAX};
        sensim_allan_source src = {arr_read, &as, n, 3, 0};
        ck_assert_int_eq(sensim_allan_compute_stream(&src, &o, m, nm, budgets[b], p), SENSIM_EDATA);
        ck_assert_msg(strstr(sensim_last_error(), "axis 2") && strstr(sensim_last_error(), "sample 66000 is NaN"),
                      "%s", sensim_last_error());
        x[3 * 66000 + 2] = 0.5;
        /* The source's own error comes through unchanged. */
        as.fail_at = 69999;
        ck_assert_int_eq(sensim_allan_compute_stream(&src, &o, m, nm, budgets[b], p), SENSIM_EIO);
        ck_assert_str_eq(sensim_last_error(), "test source: row 69999 unreadable");
        /* Constant data. */
        double *c = malloc(n * sizeof *c);
        for (size_t i = 0; i < n; i++)
            c[i] = 2.5;
        arr_src cs = {c, n, 1, 0, SIZE_MAX};
        sensim_allan_source csrc = {arr_read, &cs, n, 1, 0};
        ck_assert_int_eq(sensim_allan_compute_stream(&csrc, &o, m, 1, budgets[b], p), SENSIM_EDATA);
        ck_assert_msg(strstr(sensim_last_error(), "constant"), "%s", sensim_last_error());
        free(c);
    }
    /* A tau beyond the data. */
    arr_src as = {x, n, 3, 0, SIZE_MAX};
    sensim_allan_source src = {arr_read, &as, n, 3, 0};
    size_t big = n;
    ck_assert_int_eq(sensim_allan_compute_stream(&src, &o, &big, 1, 0, p), SENSIM_EDATA);
    free(p);
    free(m);
    free(x);
}
END_TEST

/* A series generated on the fly (hash of the index): nothing held. */
static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static sensim_status gen_read(void *ctx, size_t start, size_t count, size_t a0, size_t a1, double *buf)
{
    (void)ctx;
    for (size_t i = 0; i < count; i++)
        for (size_t a = a0; a < a1; a++)
            buf[i * (a1 - a0) + a - a0] = (double)(mix((start + i) * 8 + a) >> 11) * 0x1p-53 - 0.5;
    return SENSIM_OK;
}

static long maxrss_kb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

START_TEST(stream_memory_bounded)
{
    /* 3e6 samples of 2 axes: in memory their phase alone is 48 MB. Streamed
     * with a 4 MB budget, the peak resident size of the process grows by
     * less than 24 MB (cursor windows, checkpoints, the decimated phase of
     * the noise identification). Measured in a child, whose high-water mark
     * starts at its size after fork. */
    const size_t n = 3000000, na = 2;
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        long before = maxrss_kb();
        sensim_allan_opts o = sensim_allan_default_opts();
        size_t *m, nm;
        sensim_allan_point *p = malloc(64 * na * sizeof *p);
        long grow = -1;
        if (!sensim_allan_taus(SENSIM_TAUS_OCTAVE, 0, o.dev, o.data, n, &m, &nm) && nm <= 64) {
            sensim_allan_source src = {gen_read, NULL, n, na, 0};
            if (!sensim_allan_compute_stream(&src, &o, m, nm, (size_t)4 << 20, p) && fabs(p[0].dev / sqrt(1.0 / 12) - 1) < 0.01)
                grow = maxrss_kb() - before;
        }
        ssize_t w = write(fd[1], &grow, sizeof grow);
        _exit(w == (ssize_t)sizeof grow ? 0 : 1);
    }
    close(fd[1]);
    long grow = -2;
    ck_assert_int_eq(read(fd[0], &grow, sizeof grow), (ssize_t)sizeof grow);
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    ck_assert_msg(grow >= 0, "the streamed computation failed in the child");
#if !defined(__SANITIZE_ADDRESS__)
    /* (AddressSanitizer's shadow and quarantine make the size meaningless.) */
    ck_assert_msg(grow < 24 * 1024, "peak memory grew by %ld kB", grow);
#endif
}
END_TEST

/* An IMU log at h5: n rows at `rate` Hz of two independent 3-axis series
 * (make_series with seeds sg and sa), with its time column, units and the
 * group's rate and type; with bad_row > 0, specific_force's axis 1 is
 * `bad` at that row. */
static void write_imu_log(const char *h5, size_t n, double rate, uint32_t sg, uint32_t sa, size_t bad_row, double bad)
{
    double *t = malloc(n * sizeof *t), *g = make_series(n, 3, 0, sg), *a = make_series(n, 3, 0, sa);
    ck_assert(t && g && a);
    if (bad_row)
        a[3 * bad_row + 1] = bad;
    for (size_t i = 0; i < n; i++)
        t[i] = (double)i / rate;
    sensim_log *log = sensim_log_create(h5, "test_allan_stream");
    ck_assert_ptr_nonnull(log);
    const size_t tail[1] = {3};
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/t", SENSIM_F64, n, 0, NULL, t, "s"), 0);
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/angular_velocity", SENSIM_F64, n, 1, tail, g, "rad/s"), 0);
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/specific_force", SENSIM_F64, n, 1, tail, a, "m/s^2"), 0);
    ck_assert_int_eq(sensim_log_set_attr_f64(log, "/sensors/imu", "rate_hz", &rate, 1), 0);
    ck_assert_int_eq(sensim_log_set_attr_string(log, "/sensors/imu", "type", "imu"), 0);
    ck_assert_int_eq(sensim_log_commit(log), 0);
    free(t);
    free(g);
    free(a);
}

START_TEST(cli_streams_the_same_numbers)
{
    /* `allan --quantity imu` and `fit imu` on a log of an awkward length,
     * from a recording made of it too: the budget that holds all axes, one
     * that splits them into groups, and one that streams every axis
     * (SENSIM_ALLAN_MB) print the same text. */
    char *dir = tu_mkdtemp(), *h5 = tu_path(dir, "imu.h5"), *bag = tu_path(dir, "imu.bag");
    const size_t n = 70001;
    write_imu_log(h5, n, 200.0, 21, 22, 0, 0);
    tu_run_result ex = tu_run("export", h5, "-g", "imu", "--format", "bag", "-o", bag, NULL);
    ck_assert_msg(ex.status == 0, "%s", ex.err);
    tu_run_free(&ex);
    static const char *const mb[3] = {"", "1.2", "0.3"}; /* 3 axes 1.68 MB: all, 2 per group, streamed */
    char *ref[4] = {0};
    for (int b = 0; b < 3; b++) {
        if (*mb[b])
            setenv("SENSIM_ALLAN_MB", mb[b], 1);
        else
            unsetenv("SENSIM_ALLAN_MB");
        tu_run_result r[4] = {
            tu_run("allan", h5, "--sensor", "imu", "--quantity", "imu", "--taus", "log:5", "--csv", NULL),
            tu_run("allan", h5, "--sensor", "imu", "--dev", "totdev", "--json", NULL),
            tu_run("fit", "imu", h5, "--sensor", "imu", "--json", "--quiet", NULL),
            tu_run("allan", bag, "--topic", "/imu", "--quantity", "imu", "--dev", "mdev", "--csv", NULL)};
        for (int k = 0; k < 4; k++) {
            ck_assert_msg(r[k].status == 0, "case %d budget '%s': %s", k, mb[b], r[k].err);
            if (b == 0)
                ref[k] = strdup(r[k].out);
            else
                ck_assert_msg(!strcmp(ref[k], r[k].out), "case %d: budget %s MiB changed the output", k, mb[b]);
            tu_run_free(&r[k]);
        }
    }
    unsetenv("SENSIM_ALLAN_MB");
    /* The log and the recording of it agree where the export kept the
     * values exactly (the bag stores doubles). */
    tu_run_result hb = tu_run("allan", h5, "--sensor", "imu", "--quantity", "imu", "--dev", "mdev", "--csv", NULL);
    ck_assert_int_eq(hb.status, 0);
    ck_assert_str_eq(hb.out, ref[3]);
    tu_run_free(&hb);
    /* A NaN or an infinity in the log is named by dataset, row and axis,
     * streamed or not. */
    char *bad = tu_path(dir, "nan.h5");
    static const struct {
        size_t row;
        double v;
        const char *what;
    } badv[2] = {{66000, NAN, "/sensors/imu/specific_force: row 66000 axis 1 is NaN"},
                 {4099, -INFINITY, "/sensors/imu/specific_force: row 4099 axis 1 is infinite"}};
    for (int v = 0; v < 2; v++) {
        write_imu_log(bad, n, 200.0, 21, 22, badv[v].row, badv[v].v);
        for (int b = 0; b < 3; b++) {
            if (*mb[b])
                setenv("SENSIM_ALLAN_MB", mb[b], 1);
            tu_run_result r = tu_run("allan", bad, "--sensor", "imu", "--quantity", "imu", "--csv", NULL);
            ck_assert_int_eq(r.status, 1);
            ck_assert_msg(strstr(r.err, badv[v].what) && !*r.out, "%s", r.err);
            tu_run_free(&r);
        }
        unsetenv("SENSIM_ALLAN_MB");
    }
    unsetenv("SENSIM_ALLAN_MB");
    free(bad);
    for (int k = 0; k < 4; k++)
        free(ref[k]);
    tu_rmtree(dir);
    free(dir);
    free(h5);
    free(bag);
}
END_TEST

START_TEST(cli_imu_second_quantity_checked)
{
    /* --quantity imu reads and validates the sensor's t once, with the first
     * quantity; the second is checked against it by shape: a specific_force
     * one row short, or missing, is refused with both datasets named. */
    char *dir = tu_mkdtemp(), *h5 = tu_path(dir, "imu.h5");
    const size_t n = 5000;
    double *t = malloc(n * sizeof *t), *g = make_series(n, 3, 0, 31);
    for (size_t i = 0; i < n; i++)
        t[i] = (double)i / 100;
    const size_t tail[1] = {3};
    const double rate = 100;
    for (int c = 0; c < 2; c++) {
        sensim_log *log = sensim_log_create(h5, "test_allan_stream");
        ck_assert_ptr_nonnull(log);
        ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/t", SENSIM_F64, n, 0, NULL, t, "s"), 0);
        ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/angular_velocity", SENSIM_F64, n, 1, tail, g, "rad/s"), 0);
        if (c == 0)
            ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/specific_force", SENSIM_F64, n - 1, 1, tail, g, "m/s^2"),
                             0);
        ck_assert_int_eq(sensim_log_set_attr_f64(log, "/sensors/imu", "rate_hz", &rate, 1), 0);
        ck_assert_int_eq(sensim_log_commit(log), 0);
        tu_run_result r = tu_run("allan", h5, "--sensor", "imu", "--quantity", "imu", "--csv", NULL);
        ck_assert_int_eq(r.status, 1);
        if (c == 0)
            ck_assert_msg(strstr(r.err, "angular_velocity has 5000 samples, specific_force 4999") && !*r.out, "%s",
                          r.err);
        else
            ck_assert_msg(strstr(r.err, h5) && strstr(r.err, "/sensors/imu/specific_force") && !*r.out, "%s", r.err);
        tu_run_free(&r);
    }
    free(t);
    free(g);
    tu_rmtree(dir);
    free(dir);
    free(h5);
}
END_TEST

/* Copies of a sensim log written by h5py in other layouts (run by
 * /usr/bin/python3): chunks of 1000 rows, more chunks than pread is used
 * for, contiguous big-endian with angular_velocity in deg/s, gzip; then a
 * NaN written over the bytes of row 5007 axis 1 of specific_force in the
 * chunked copy. */
static const char layouts_py[] =
    "import h5py, numpy as np, sys\n"
    "s = h5py.File(sys.argv[1], 'r'); d = sys.argv[2]\n"
    "def make(name, dtype='<f8', deg=False, **kw):\n"
    "    with h5py.File(d + '/' + name, 'w') as f:\n"
    "        for a, v in s.attrs.items(): f.attrs[a] = v\n"
    "        g = f.create_group('sensors/imu')\n"
    "        for a, v in s['sensors/imu'].attrs.items(): g.attrs[a] = v\n"
    "        for k in ('t', 'angular_velocity', 'specific_force'):\n"
    "            x = s['sensors/imu/' + k]\n"
    "            v = np.degrees(x[...]) if deg and k == 'angular_velocity' else x[...]\n"
    "            y = g.create_dataset(k, data=v.astype(dtype), **({} if k == 't' else kw))\n"
    "            for a, u in x.attrs.items():\n"
    "                if a != 'DIMENSION_LIST': y.attrs[a] = u\n"
    "            if deg and k == 'angular_velocity': y.attrs['units'] = 'deg/s'\n"
    "make('chunked.h5', chunks=(1000, 3))\n"
    "make('many.h5', chunks=(300, 3))\n"
    "make('contig.h5', dtype='>f8', deg=True)\n"
    "make('gzip.h5', chunks=(1000, 3), compression='gzip')\n"
    "import shutil; shutil.copy(d + '/chunked.h5', d + '/nan.h5')\n"
    "with h5py.File(d + '/nan.h5', 'r') as f:\n"
    "    off = f['sensors/imu/specific_force'].id.get_chunk_info_by_coord((5000, 0)).byte_offset\n"
    "with open(d + '/nan.h5', 'r+b') as f:\n"
    "    f.seek(off + (7 * 3 + 1) * 8); f.write(b'\\xff' * 8)\n";

START_TEST(cli_pread_equals_hdf5)
{
    /* HDF5 datasets stored plainly are read with pread from all threads;
     * the same commands with SENSIM_HDF5_PREAD=0 (HDF5 only) print the same
     * bytes and fail with the same message, whatever the layout, byte
     * order, units, filter, budget, or damage to the file. */
    char *dir = tu_mkdtemp(), *h5 = tu_path(dir, "imu.h5"), *py = tu_path(dir, "layouts.py");
    const size_t n = 40003;
    write_imu_log(h5, n, 100.0, 41, 42, 0, 0);
    ck_assert_int_eq(tu_write_file(py, layouts_py), 0);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' '%s'", py, h5, dir);
    ck_assert_int_eq(system(cmd), 0);
    /* A truncated copy of the contiguous log: HDF5 refuses it at open. */
    char *cut = tu_path(dir, "cut.h5"), *contig = tu_path(dir, "contig.h5");
    size_t len = 0;
    char *bytes = tu_read_file(contig, &len);
    ck_assert_ptr_nonnull(bytes);
    FILE *f = fopen(cut, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, len * 2 / 3, f), len * 2 / 3);
    ck_assert_int_eq(fclose(f), 0);
    free(bytes);
    static const char *const files[] = {"imu.h5", "chunked.h5", "many.h5", "contig.h5", "gzip.h5", "nan.h5", "cut.h5"};
    static const char *const mb[2] = {"", "0.5"}; /* all axes at once; streamed */
    char *first[2] = {0};
    for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
        char *p = tu_path(dir, files[k]);
        for (int b = 0; b < 2; b++) {
            if (*mb[b])
                setenv("SENSIM_ALLAN_MB", mb[b], 1);
            else
                unsetenv("SENSIM_ALLAN_MB");
            tu_run_result r[2][2];
            for (int way = 0; way < 2; way++) {
                setenv("SENSIM_HDF5_PREAD", way ? "0" : "1", 1);
                r[way][0] = tu_run("allan", p, "--sensor", "imu", "--quantity", "imu", "--taus", "octave", "--csv", NULL);
                r[way][1] = tu_run("allan", p, "--sensor", "imu", "--taus", "log:10", "--json", NULL);
            }
            unsetenv("SENSIM_HDF5_PREAD");
            for (int c = 0; c < 2; c++) {
                ck_assert_msg(r[0][c].status == r[1][c].status && !strcmp(r[0][c].out, r[1][c].out) &&
                                  !strcmp(r[0][c].err, r[1][c].err),
                              "%s case %d budget '%s': pread gives %d '%s', HDF5 %d '%s'", files[k], c, mb[b],
                              r[0][c].status, r[0][c].err, r[1][c].status, r[1][c].err);
                if (k < 5 && k != 3) {
                    /* Same values in every layout but the deg/s one. */
                    ck_assert_msg(r[0][c].status == 0, "%s: %s", files[k], r[0][c].err);
                    if (k == 0 && b == 0)
                        first[c] = strdup(r[0][c].out);
                    else
                        ck_assert_msg(!strcmp(first[c], r[0][c].out), "%s case %d differs from imu.h5", files[k], c);
                } else if (k == 3) {
                    ck_assert_msg(r[0][c].status == 0, "%s: %s", files[k], r[0][c].err);
                } else if (k == 5) {
                    /* (case 1 reads angular_velocity only) */
                    ck_assert_int_eq(r[0][c].status, c == 0);
                    if (c == 0)
                        ck_assert_msg(strstr(r[0][c].err, "/sensors/imu/specific_force: row 5007 axis 1 is NaN"), "%s",
                                      r[0][c].err);
                } else {
                    ck_assert_int_eq(r[0][c].status, 1);
                    ck_assert_msg(strstr(r[0][c].err, "cut.h5") && !*r[0][c].out, "%s", r[0][c].err);
                }
                tu_run_free(&r[0][c]);
                tu_run_free(&r[1][c]);
            }
        }
        free(p);
    }
    unsetenv("SENSIM_ALLAN_MB");
    free(first[0]);
    free(first[1]);
    free(cut);
    free(contig);
    free(py);
    free(h5);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_allan_stream(void)
{
    Suite *s = suite_create("allan_stream");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, stream_equals_memory);
    tcase_add_test(tc, stream_ring_and_cursors);
    tcase_add_test(tc, stream_errors);
    tcase_add_test(tc, stream_memory_bounded);
    tcase_add_test(tc, cli_streams_the_same_numbers);
    tcase_add_test(tc, cli_imu_second_quantity_checked);
    tcase_add_test(tc, cli_pread_equals_hdf5);
    suite_add_tcase(s, tc);
    return s;
}
