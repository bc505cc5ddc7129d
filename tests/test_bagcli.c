/* Recordings on the command line: sensim import, info, fit, allan and
 * export against ROS 1 bags written by Debian's python3-rosbag and read
 * back with it (tests/data/bagcli_ref.py), and sensim's own MCAP and db3
 * files. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/bag.h"
#include "sensim/log.h"
#include "sensim/rosmsg.h"
#include "testutil.h"

static char *script(void) { return tu_src("tests/data/bagcli_ref.py"); }

static void py(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void py(const char *fmt, ...)
{
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *s = script();
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", s, args);
    free(s);
    ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

/* The same, returning its standard output (malloc'd). */
static char *py_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *py_out(const char *fmt, ...)
{
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *s = script();
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", s, args);
    free(s);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    for (size_t k; (k = fread(out + n, 1, cap - 1 - n, p)) > 0;) {
        n += k;
        if (n + 1 == cap)
            out = realloc(out, cap *= 2);
    }
    out[n] = '\0';
    ck_assert_msg(pclose(p) == 0, "failed: %s", cmd);
    return out;
}

static double json_num(const char *s, const char *key, int i)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(s, pat);
    ck_assert_msg(p != NULL, "no %s in %s", key, s);
    p += strlen(pat);
    if (*p == '[')
        for (p++; i > 0; i--)
            p = strchr(p, ',') + 1;
    return strtod(p, NULL);
}

static void expect_ok(tu_run_result *r)
{
    ck_assert_msg(r->status == 0, "exit %d: %s", r->status, r->err);
}

static void expect_fail(tu_run_result *r, const char *const *needles)
{
    ck_assert_msg(r->status == 1, "exit %d (expected 1): %s", r->status, r->err);
    for (; *needles; needles++)
        ck_assert_msg(strstr(r->err, *needles), "stderr lacks '%s': %s", *needles, r->err);
}

/* "value", "lo", "hi" of a term of one axis of `fit imu --json`. */
static void fit_term(const char *json, const char *instr, int axis, const char *term, double v[3])
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\": {", instr);
    const char *p = strstr(json, key);
    ck_assert_msg(p != NULL, "no %s in %s", instr, json);
    for (int a = 0; a <= axis; a++) {
        p = strstr(p + 1, "\"axis\": ");
        ck_assert_ptr_nonnull(p);
    }
    snprintf(key, sizeof key, "\"%s\": {\"value\": ", term);
    p = strstr(p, key);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(sscanf(p + strlen(key), "%lf, \"lo\": %lf, \"hi\": %lf", &v[0], &v[1], &v[2]), 3);
}

static const char *after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    ck_assert_msg(p != NULL, "no '%s' in %s", key, s);
    return p;
}

/* Rows of a dataset of a log, as doubles (malloc'd). */
static double *read_all(const char *path, const char *dset, size_t *rows, size_t *width)
{
    sensim_log *log = sensim_log_open(path);
    ck_assert_msg(log != NULL, "%s", sensim_last_error());
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK];
    ck_assert_msg(sensim_log_shape(log, dset, &rank, dims) == SENSIM_OK, "%s", sensim_last_error());
    size_t w = 1;
    for (int i = 1; i < rank; i++)
        w *= dims[i];
    double *x = malloc(dims[0] * w * sizeof *x + 1);
    ck_assert_int_eq(sensim_log_read_f64(log, dset, 0, dims[0], x), SENSIM_OK);
    sensim_log_close(log);
    *rows = dims[0];
    if (width)
        *width = w;
    return x;
}

static double attr_num(const char *path, const char *obj, const char *name, double *v, size_t n)
{
    sensim_log *log = sensim_log_open(path);
    ck_assert_ptr_nonnull(log);
    ck_assert_msg(sensim_log_get_attr_f64(log, obj, name, v, n) == SENSIM_OK, "%s", sensim_last_error());
    sensim_log_close(log);
    return v[0];
}

static char *attr_text(const char *path, const char *obj, const char *name)
{
    sensim_log *log = sensim_log_open(path);
    ck_assert_ptr_nonnull(log);
    char *s = NULL;
    ck_assert_msg(sensim_log_get_attr_string(log, obj, name, &s) == SENSIM_OK, "%s", sensim_last_error());
    sensim_log_close(log);
    return s;
}

/* The noise bagcli_ref.py's static recording carries (TRUTH there). */
static const double truth[2][3] = {{1.0e-4, 1.0e-4, 2.5e-5}, {2.0e-4, 2.0e-4, 5.0e-5}};
static const char *const instr[2] = {"gyro", "accel"};
static const char *const terms[3] = {"noise_density", "bias_instability", "random_walk"};

/* A static IMU recorded 20 minutes at 100 Hz with known N, B, K (white,
 * a sum of Gauss-Markov terms with the flat Allan floor of B between 0.3
 * and 300 s, random walk), written by python3-rosbag. sensim fit imu BAG
 * --topic gives the truth back within the 95% intervals: N and B on every
 * axis; of the 18 intervals at most 3 may miss (binomial tail 1.1%: K is
 * barely resolved in 20 minutes). The same data through sensim's MCAP and
 * db3 writers fit to the same digits, and allan --topic equals allan on
 * the imported log. */
START_TEST(fit_imu_from_bag_recovers_noise)
{
    char *dir = tu_mkdtemp(), *bag = tu_path(dir, "still.bag"), *kal = tu_path(dir, "imu.yaml");
    py("static %s 1200 100 7", bag);
    tu_run_result r = tu_run("fit", "imu", bag, "--topic", "/imu", "--kalibr", kal, "--json", NULL);
    expect_ok(&r);
    int misses = 0;
    for (int i = 0; i < 2; i++)
        for (int a = 0; a < 3; a++)
            for (int k = 0; k < 3; k++) {
                double v[3];
                fit_term(r.out, instr[i], a, terms[k], v);
                int in = v[1] <= truth[i][k] && truth[i][k] <= v[2];
                misses += !in;
                if (k < 2) {
                    ck_assert_msg(in, "%s axis %d %s %g not in [%g, %g]", instr[i], a, terms[k], truth[i][k], v[1],
                                  v[2]);
                    ck_assert_within(v[0], truth[i][k], (k == 0 ? 0.03 : 0.15) * truth[i][k]);
                }
            }
    ck_assert_msg(misses <= 3, "%d of 18 intervals miss the truth:\n%s", misses, r.out);
    char *k = tu_read_file(kal, NULL);
    ck_assert_ptr_nonnull(k);
    ck_assert_ptr_nonnull(strstr(k, "rostopic: /imu\n"));
    ck_assert_ptr_nonnull(strstr(k, "update_rate: 100\n"));
    double gnd = strtod(after(k, "\ngyroscope_noise_density: ") + strlen("\ngyroscope_noise_density: "), NULL);
    ck_assert_within(gnd, truth[0][0], 0.03 * truth[0][0]);
    free(k);

    /* The same messages from sensim's MCAP and db3 writers. */
    char *h5 = tu_path(dir, "still.h5"), *mcap = tu_path(dir, "still.mcap"), *db3 = tu_path(dir, "still.db3");
    tu_run_result q = tu_run("import", bag, "--topic", "/imu", "-o", h5, NULL);
    expect_ok(&q);
    ck_assert_ptr_nonnull(strstr(q.err, "/imu -> /sensors/imu: 120000 messages, 100 Hz, 0 reordered"));
    tu_run_free(&q);
    const char *fmts[2][2] = {{"mcap", mcap}, {"db3", db3}};
    const char *instruments = after(r.out, "\"instruments\"");
    for (int f = 0; f < 2; f++) {
        q = tu_run("export", h5, "-g", "imu", "--format", fmts[f][0], "-o", fmts[f][1], NULL);
        expect_ok(&q);
        tu_run_free(&q);
        q = tu_run("fit", "imu", fmts[f][1], "--topic", "/imu", "--json", NULL);
        expect_ok(&q);
        ck_assert_str_eq(after(q.out, "\"instruments\""), instruments);
        tu_run_free(&q);
    }
    /* allan --topic reads the stream as import does. */
    q = tu_run("allan", bag, "--topic", "/imu", "--quantity", "specific_force", "--csv", NULL);
    expect_ok(&q);
    tu_run_result h = tu_run("allan", h5, "--sensor", "imu", "--quantity", "specific_force", "--csv", NULL);
    expect_ok(&h);
    ck_assert_str_eq(q.out, h.out);
    ck_assert_ptr_nonnull(strstr(q.out, "axis,tau,dev,lo,hi,n\nx,0.01,"));
    tu_run_free(&q);
    tu_run_free(&h);
    tu_run_free(&r);
    tu_rmtree(dir);
    free(dir), free(bag), free(kal), free(h5), free(mcap), free(db3);
}
END_TEST

/* bag -> import -> inject (white noise onto the recorded data) -> export ->
 * python3-rosbag: the same type, md5sum and definition, message count,
 * header stamps (to the ns) and frames, values moved by noise of the rig's
 * white sigma N sqrt(rate) (6000 samples: the sample deviation is within 5%,
 * 5.5 standard errors; the mean within 5 sigma / sqrt(n)), the fields sensim
 * does not noise (orientation, covariances) as recorded. The noised log's
 * MCAP imports back to the same doubles. */
START_TEST(import_inject_export_round_trip)
{
    char *dir = tu_mkdtemp(), *bag = tu_path(dir, "clean.bag"), *h5 = tu_path(dir, "clean.h5"),
         *rig = tu_path(dir, "rig.yaml"), *noised = tu_path(dir, "noised.h5"), *out = tu_path(dir, "noised.bag"),
         *mcap = tu_path(dir, "noised.mcap"), *back = tu_path(dir, "back.h5");
    py("static %s 60 100 3", bag);
    tu_run_result r = tu_run("import", bag, "--topic", "/imu", "-o", h5, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    char *src = attr_text(h5, "/sensors/imu", "source");
    ck_assert_str_eq(src, bag);
    free(src);
    ck_assert_int_eq(tu_write_file(rig, "seed: 5\nsensors:\n  - name: imu\n    type: imu\n    rate_hz: 100\n"
                                        "    gyro:  { noise_density: 1.0e-3 }\n"
                                        "    accel: { noise_density: 2.0e-3 }\n"),
                     0);
    r = tu_run("inject", rig, h5, "-o", noised, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    r = tu_run("export", noised, "-g", "/sensors/imu", "--format", "bag", "-o", out, NULL);
    expect_ok(&r);
    ck_assert_ptr_nonnull(strstr(r.err, "/sensors/imu -> /imu (sensor_msgs/Imu): 6000 messages"));
    tu_run_free(&r);
    char *d = py_out("diff %s %s /imu", bag, out);
    ck_assert_int_eq(json_num(d, "count_a", 0), 6000);
    ck_assert_int_eq(json_num(d, "count_b", 0), 6000);
    static const char *const same[] = {"\"type_b\": \"sensor_msgs/Imu\"",
                                       "\"md5sum_b\": \"6a62c6daae103f4ff57a132d6f95cec2\"",
                                       "\"definition_b\": true", "\"stamps_equal\": true",
                                       "\"frames_equal\": true", "\"orientation_equal\": true",
                                       "\"covariance_equal\": true"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        ck_assert_msg(strstr(d, same[i]), "%s not in %s", same[i], d);
    for (int i = 0; i < 3; i++) {
        const double sw = 1.0e-3 * 10, sa = 2.0e-3 * 10;
        ck_assert_within(json_num(d, "dw_std", i), sw, 0.05 * sw);
        ck_assert_within(json_num(d, "da_std", i), sa, 0.05 * sa);
        ck_assert_within(json_num(d, "dw_mean", i), 0, 5 * sw / sqrt(6000));
        ck_assert_within(json_num(d, "da_mean", i), 0, 5 * sa / sqrt(6000));
    }
    free(d);
    /* MCAP (CDR) and back: the noised doubles and the stamps, exactly. */
    r = tu_run("export", noised, "-g", "imu", "--format", "mcap", "-o", mcap, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    r = tu_run("import", mcap, "--topic", "/imu", "-o", back, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    static const char *const ds[] = {"/sensors/imu/t", "/sensors/imu/angular_velocity",
                                     "/sensors/imu/specific_force"};
    for (int i = 0; i < 3; i++) {
        size_t n1, n2, w1, w2;
        double *x = read_all(noised, ds[i], &n1, &w1), *y = read_all(back, ds[i], &n2, &w2);
        ck_assert_uint_eq(n1, 6000);
        ck_assert_uint_eq(n1, n2);
        ck_assert_uint_eq(w1, w2);
        ck_assert_int_eq(memcmp(x, y, n1 * w1 * sizeof *x), 0);
        free(x), free(y);
    }
    double o1, o2;
    ck_assert(attr_num(noised, "/sensors/imu", "time_epoch_ns", &o1, 1) == 1700000000e9);
    ck_assert(attr_num(back, "/sensors/imu", "time_epoch_ns", &o2, 1) == 1700000000e9);
    char *sf = attr_text(back, "/sensors/imu", "source_format");
    ck_assert_str_eq(sf, "mcap");
    free(sf);
    char *f = attr_text(back, "/sensors/imu", "ros_frame_id");
    ck_assert_str_eq(f, "imu_link");
    free(f);
    /* The same time origin as text recordings: EuRoC export of the imported
     * IMU has the bag's header stamps to the ns. */
    char *eu = tu_path(dir, "data.csv");
    r = tu_run("export", h5, "-g", "/sensors/imu", "--format", "euroc", "-o", eu, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    char *csv = tu_read_file(eu, NULL);
    ck_assert_ptr_nonnull(csv);
    ck_assert_ptr_nonnull(strstr(csv, "\n1700000000250000000,"));
    ck_assert_ptr_nonnull(strstr(csv, "\n1700000060240000000,"));
    free(csv);
    free(eu);
    tu_rmtree(dir);
    free(dir), free(bag), free(h5), free(rig), free(noised), free(out), free(mcap), free(back);
}
END_TEST

/* Every type sensim imports, from one bz2-compressed bag written by
 * python3-rosbag (bagcli_ref.py mixed), against the values written. */
START_TEST(import_every_type)
{
    char *dir = tu_mkdtemp(), *bag = tu_path(dir, "mixed.bag"), *h5 = tu_path(dir, "m.h5"), *tf = tu_path(dir, "tf.h5");
    py("mixed %s", bag);
    tu_run_result r = tu_run("import", bag, "--topic", "/imu", "--topic", "/gps", "--topic", "/mag", "--topic",
                             "/odom", "--topic", "/points:lidar", "--topic", "/cam", "--topic", "/bgr", "--topic",
                             "/depth", "-o", h5, NULL);
    expect_ok(&r);
    /* Message 10 came before 9, message 20 repeated 19's stamp. */
    ck_assert_ptr_nonnull(strstr(r.err, "/imu -> /sensors/imu: 49 messages, 100 Hz, 1 reordered, 1 duplicate "
                                        "stamps dropped, 1 gaps"));
    ck_assert_ptr_nonnull(strstr(r.err, "/points -> /sensors/lidar: 10 messages"));
    ck_assert_ptr_nonnull(strstr(r.err, "1 points without a return dropped"));
    tu_run_free(&r);

    size_t n, w;
    double *t = read_all(h5, "/sensors/imu/t", &n, NULL), *av = read_all(h5, "/sensors/imu/angular_velocity", &n, &w),
           *sf = read_all(h5, "/sensors/imu/specific_force", &n, &w);
    ck_assert_uint_eq(n, 49);
    for (size_t j = 0, k = 0; j < n; j++, k++) {
        size_t msg = j == 9 ? 10 : j == 10 ? 9 : j >= 20 ? j + 1 : j; /* stamp order, 20 dropped */
        size_t slot = j >= 20 ? j + 1 : j;                            /* its stamp's 10 ms step */
        (void)k;
        ck_assert_within(t[j], 0.25 + 0.01 * (double)slot, 1e-12);
        ck_assert_within(av[3 * j], 0.001 * (double)msg, 1e-15);
        ck_assert_within(sf[3 * j + 2], 9.8 + 0.001 * (double)msg, 1e-12);
    }
    free(t), free(av), free(sf);
    double q[4], cov[9], v;
    attr_num(h5, "/sensors/imu", "orientation", q, 4); /* constant: an attribute, w x y z */
    ck_assert_within(q[0], cos(0.1), 1e-15);
    ck_assert_within(q[3], sin(0.1), 1e-15);
    attr_num(h5, "/sensors/imu", "angular_velocity_covariance", cov, 9);
    ck_assert(cov[0] == 1e-6 && cov[1] == 0 && cov[8] == 1e-6);
    ck_assert_within(attr_num(h5, "/sensors/imu", "rate_hz", &v, 1), 100, 1e-9);
    ck_assert(attr_num(h5, "/sensors/imu", "time_epoch_ns", &v, 1) == 1700000000e9);
    ck_assert(attr_num(h5, "/", "time_epoch_ns", &v, 1) == 1700000000e9);
    static const struct {
        const char *obj, *attr, *want;
    } texts[] = {{"/sensors/imu", "type", "imu"},          {"/sensors/imu", "ros_topic", "/imu"},
                 {"/sensors/imu", "ros_type", "sensor_msgs/Imu"}, {"/sensors/imu", "ros_frame_id", "imu_link"},
                 {"/sensors/imu", "ros_time", "header"},  {"/sensors/gps", "type", "gnss"},
                 {"/sensors/imu", "source_format", "rosbag"},
                 {"/sensors/mag", "type", "imu"},          {"/sensors/lidar", "type", "lidar"},
                 {"/sensors/lidar", "ros_frame_id", "velodyne"}, {"/sensors/cam", "type", "camera"},
                 {"/sensors/cam", "ros_encoding", "mono8"}, {"/ground_truth", "ros_frame_id", "map"},
                 {"/ground_truth", "ros_child_frame_id", "base_link"}, {"/", "format", "sensim-log"}};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char *s = attr_text(h5, texts[i].obj, texts[i].attr);
        ck_assert_msg(!strcmp(s, texts[i].want), "%s %s = '%s', expected '%s'", texts[i].obj, texts[i].attr, s,
                      texts[i].want);
        free(s);
    }

    double *lla = read_all(h5, "/sensors/gps/lla", &n, &w), *pc = read_all(h5, "/sensors/gps/position_covariance",
                                                                              &n, &w),
           *fix = read_all(h5, "/sensors/gps/fix", &n, NULL);
    ck_assert_uint_eq(n, 10);
    for (size_t k = 0; k < 10; k++) {
        ck_assert_within(lla[3 * k], 43.0 + 1e-6 * (double)k, 1e-12);
        ck_assert_within(lla[3 * k + 1], -89.0 - 1e-6 * (double)k, 1e-12);
        ck_assert_within(lla[3 * k + 2], 260.0 + 0.1 * (double)k, 1e-12);
        ck_assert_within(pc[9 * k + 4], 0.25 * (double)(k + 1), 1e-15);
        ck_assert_int_eq(fix[k], k ? 0 : -1);
    }
    ck_assert_int_eq(attr_num(h5, "/sensors/gps", "position_covariance_type", &v, 1), 2);
    free(lla), free(pc), free(fix);
    double *mf = read_all(h5, "/sensors/mag/magnetic_field", &n, &w);
    ck_assert_uint_eq(n, 10);
    ck_assert(mf[3 * 7] == 2e-5 && mf[3 * 7 + 1] == 7e-6 && mf[3 * 7 + 2] == -4e-5);
    free(mf);

    /* Lidar: scans of 4 points, the NaN point of scan 3 dropped; fields
     * found by name in a cloud that lists ring first. */
    double *pts = read_all(h5, "/sensors/lidar/points", &n, &w), *so = read_all(h5, "/sensors/lidar/scan_offset", &n,
                                                                                  NULL),
           *ch = read_all(h5, "/sensors/lidar/channel", &n, NULL), *to = read_all(h5, "/sensors/lidar/time_offset",
                                                                                   &n, NULL);
    ck_assert_uint_eq(n, 39);
    for (size_t s = 0, i = 0; s < 10; s++) {
        ck_assert_int_eq(so[s], (double)i);
        for (size_t j = 0; j < 4; j++) {
            if (s == 3 && j == 2)
                continue;
            ck_assert(pts[4 * i] == 1.0 + (double)j && pts[4 * i + 1] == 0.5 * (double)j);
            ck_assert(pts[4 * i + 2] == -0.25 * (double)s && pts[4 * i + 3] == 10.0 * (double)j);
            ck_assert(ch[i] == (double)j);
            ck_assert(to[i] == (double)(float)(1e-4 * (double)j));
            i++;
        }
    }
    ck_assert_int_eq(so[10], 39);
    free(pts), free(so), free(ch), free(to);
    /* Camera: 2x3 mono8 frames with a 4-byte step; the padding is gone. */
    double *img = read_all(h5, "/sensors/cam/image", &n, &w);
    ck_assert_uint_eq(n, 10);
    ck_assert_uint_eq(w, 6);
    for (size_t k = 0; k < 10; k++) {
        const double want[6] = {(double)k, 1, 2, 3, 4, 5};
        ck_assert_int_eq(memcmp(img + 6 * k, want, sizeof want), 0);
    }
    free(img);
    /* bgr8 with padded rows becomes RGB; big-endian mono16 native u16. */
    img = read_all(h5, "/sensors/bgr/image", &n, &w);
    ck_assert_uint_eq(w, 12);
    const double rgb[12] = {30, 20, 10 + 4, 60, 50, 40, 90, 80, 70, 120, 110, 100};
    ck_assert_int_eq(memcmp(img + 12 * 4, rgb, sizeof rgb), 0);
    free(img);
    img = read_all(h5, "/sensors/depth/image", &n, &w);
    ck_assert(img[4 * 7] == 1007 && img[4 * 7 + 1] == 2000 && img[4 * 7 + 3] == 65535);
    free(img);
    char *enc = attr_text(h5, "/sensors/bgr", "ros_encoding");
    ck_assert_str_eq(enc, "bgr8");
    free(enc);
    /* Ground truth from Odometry on a 2 m circle at 0.5 rad/s, heading along
     * the track, 10 Hz: speed 2 sin(0.05)/0.1 (quadratic through
     * neighbours), body yaw rate 0.5 exactly, centripetal 0.5 m/s^2. */
    double *vel = read_all(h5, "/ground_truth/velocity", &n, &w), *wb = read_all(h5, "/ground_truth/angular_velocity",
                                                                                  &n, &w),
           *acc = read_all(h5, "/ground_truth/acceleration", &n, &w);
    ck_assert_uint_eq(n, 10);
    for (size_t k = 0; k < 10; k++) {
        ck_assert_within(hypot(vel[3 * k], vel[3 * k + 1]), 1.0, 2e-3);
        ck_assert_within(wb[3 * k + 2], 0.5, 1e-9);
        ck_assert_within(hypot(acc[3 * k], acc[3 * k + 1]), 0.5, 2e-3);
    }
    free(vel), free(wb), free(acc);

    /* Back to a bag, read by python3-rosbag: every group with its topic,
     * type, frames, stamps and values. */
    char *ob = tu_path(dir, "out.bag"), *js = tu_path(dir, "out.json");
    r = tu_run("export", h5, "-g", "lidar", "-g", "cam", "-g", "bgr", "-g", "depth", "-g", "gps", "-g", "mag", "-g",
               "/ground_truth", "--format", "bag", "-o", ob, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    py("dump %s %s", ob, js);
    char *dj = tu_read_file(js, NULL);
    static const char *const want[] = {
        "\"/points\": {\"type\": \"sensor_msgs/PointCloud2\", \"count\": 10",
        "\"/cam\": {\"type\": \"sensor_msgs/Image\", \"count\": 10",
        "\"/gps\": {\"type\": \"sensor_msgs/NavSatFix\", \"count\": 10",
        "\"/mag\": {\"type\": \"sensor_msgs/MagneticField\", \"count\": 10",
        "\"/odom\": {\"type\": \"nav_msgs/Odometry\", \"count\": 10",
        "\"stamp_ns\": 1700000001150000000, \"frame_id\": \"velodyne\", \"width\": 4, \"fields\": [\"x\", \"y\", "
        "\"z\", \"intensity\", \"ring\", \"time\"], \"points\": [[1.0, 0.0, -2.25, 0.0], [2.0, 0.5, -2.25, 10.0]",
        "\"width\": 3, \"fields\"",
        "\"stamp_ns\": 1700000000250000000, \"frame_id\": \"cam\", \"encoding\": \"bgr8\", \"size\": [2, 2, 6, 0], "
        "\"data\": [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120]",
        "\"frame_id\": \"cam\", \"encoding\": \"mono8\", \"size\": [2, 3, 3, 0], \"data\": [9, 1, 2, 3, 4, 5]",
        "\"frame_id\": \"depth\", \"encoding\": \"mono16\", \"size\": [2, 2, 4, 0], \"data\": [232, 3, 208, 7, 184, "
        "11, 255, 255]",
        "\"frame_id\": \"gps\", \"lla\": [43.0, -89.0, 260.0], \"status\": -1, \"cov\": [0.25, 0.0, 0.0, 0.0, 0.25, "
        "0.0, 0.0, 0.0, 0.25], \"cov_type\": 2",
        "\"stamp_ns\": 1700000000250000000, \"frame_id\": \"map\", \"p\": [2.0, 0.0, 0.0], \"child\": "
        "\"base_link\""};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(dj, want[i]), "'%s' not in %s", want[i], dj);
    free(dj);
    free(ob), free(js);

    /* One pair of a TFMessage topic. */
    r = tu_run("import", bag, "--topic", "/tf", "--tf", "world:body", "-o", tf, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    double *pos = read_all(tf, "/ground_truth/position", &n, &w);
    vel = read_all(tf, "/ground_truth/velocity", &n, &w);
    ck_assert_uint_eq(n, 10);
    for (size_t k = 0; k < 10; k++) {
        ck_assert(pos[3 * k] == (double)k);
        ck_assert_within(vel[3 * k], 10.0, 1e-9);
    }
    free(pos), free(vel);
    char *child = attr_text(tf, "/ground_truth", "ros_child_frame_id");
    ck_assert_str_eq(child, "body");
    free(child);
    tu_rmtree(dir);
    free(dir), free(bag), free(h5), free(tf);
}
END_TEST

START_TEST(info_lists_topics)
{
    char *dir = tu_mkdtemp(), *bag = tu_path(dir, "mixed.bag");
    py("mixed %s", bag);
    tu_run_result r = tu_run("info", bag, NULL);
    expect_ok(&r);
    ck_assert_ptr_nonnull(strstr(r.out, "ROS 1 bag, 10 topics, 140 messages, 1700000000.251000000 s to "
                                        "1700000001.151000000 s (0.9 s)"));
    const char *imu = after(r.out, "  /imu ");
    ck_assert_ptr_nonnull(strstr(imu, "sensor_msgs/Imu"));
    ck_assert_ptr_nonnull(strstr(imu, "50 msgs"));
    ck_assert_ptr_nonnull(strstr(imu, "100 Hz"));
    const char *chat = after(r.out, "  /chatter ");
    ck_assert_ptr_nonnull(strstr(chat, "std_msgs/String"));
    ck_assert_ptr_nonnull(strstr(chat, "(not read by sensim)"));
    tu_run_free(&r);
    r = tu_run("info", bag, "--json", NULL);
    expect_ok(&r);
    ck_assert_ptr_nonnull(strstr(r.out, "\"format\": \"ROS 1 bag\", \"messages\": 140"));
    ck_assert_ptr_nonnull(strstr(r.out, "{\"name\": \"/gps\", \"type\": \"sensor_msgs/NavSatFix\", \"encoding\": "
                                        "\"ros1\", \"count\": 10, \"rate_hz\": 10,"));
    tu_run_free(&r);
    tu_rmtree(dir);
    free(dir), free(bag);
}
END_TEST

/* Bad inputs: exit 1, the message names file, topic and message index,
 * and nothing is left beside the inputs. */
START_TEST(bad_inputs_named_nothing_left)
{
    char *dir = tu_mkdtemp(), *bag = tu_path(dir, "mixed.bag"), *bad = tu_path(dir, "bad.bag"),
         *cut = tu_path(dir, "cut.bag"), *out = tu_path(dir, "out.h5"), *h5 = tu_path(dir, "m.h5"),
         *ob = tu_path(dir, "out.bag");
    py("mixed %s", bag);
    py("badmsg %s", bad);
    size_t len;
    char *whole = tu_read_file(bag, &len);
    FILE *f = fopen(cut, "wb");
    ck_assert_ptr_nonnull(f);
    FILE *in = fopen(bag, "rb");
    char buf[16000];
    size_t k = fread(buf, 1, sizeof buf, in);
    fclose(in);
    ck_assert_uint_eq(fwrite(buf, 1, k, f), k);
    fclose(f);
    free(whole);
    int entries = tu_count_entries(dir);

    tu_run_result r = tu_run("import", bag, "--topic", "/nope", "-o", out, NULL);
    expect_fail(&r, (const char *[]){"mixed.bag", "'/nope'", "/imu (sensor_msgs/Imu)", "/chatter (std_msgs/String)",
                                     NULL});
    tu_run_free(&r);
    r = tu_run("import", bag, "--topic", "/imu", "--topic", "/chatter", "-o", out, NULL);
    expect_fail(&r, (const char *[]){"mixed.bag", "topic '/chatter'", "std_msgs/String is not supported",
                                     "sensor_msgs/Imu", NULL});
    tu_run_free(&r);
    r = tu_run("import", bad, "--topic", "/imu", "-o", out, NULL);
    expect_fail(&r, (const char *[]){"bad.bag", "topic '/imu'", "message 2", "Imu.", "past the end", NULL});
    tu_run_free(&r);
    r = tu_run("import", cut, "--topic", "/imu", "-o", out, NULL);
    expect_fail(&r, (const char *[]){"cut.bag", NULL});
    tu_run_free(&r);
    r = tu_run("import", bag, "--topic", "/tf", "-o", out, NULL);
    expect_fail(&r, (const char *[]){"topic '/tf'", "--tf PARENT:CHILD", NULL});
    tu_run_free(&r);
    r = tu_run("import", bag, "--topic", "/tf", "--tf", "world:nowhere", "-o", out, NULL);
    expect_fail(&r, (const char *[]){"topic '/tf'", "world -> nowhere", NULL});
    tu_run_free(&r);
    r = tu_run("fit", "imu", bad, "--topic", "/imu", NULL);
    expect_fail(&r, (const char *[]){"bad.bag", "topic '/imu'", "message 2", NULL});
    tu_run_free(&r);
    r = tu_run("fit", "imu", bag, "--topic", "/gps", NULL);
    expect_fail(&r, (const char *[]){"topic '/gps'", "sensor_msgs/NavSatFix", NULL});
    tu_run_free(&r);
    r = tu_run("allan", bag, "--topic", "/nope", NULL);
    expect_fail(&r, (const char *[]){"'/nope'", "/imu (sensor_msgs/Imu)", NULL});
    tu_run_free(&r);
    ck_assert_int_eq(tu_count_entries(dir), entries);
    /* Usage: a recording without --topic. */
    r = tu_run("fit", "imu", bag, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "is a recording"));
    tu_run_free(&r);
    r = tu_run("import", bag, "-o", out, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--topic is required"));
    tu_run_free(&r);
    /* Export: a group that is not there, one without a ROS message. */
    r = tu_run("import", bag, "--topic", "/imu", "-o", h5, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    entries = tu_count_entries(dir);
    r = tu_run("export", h5, "-g", "/sensors/nope", "--format", "bag", "-o", ob, NULL);
    expect_fail(&r, (const char *[]){"m.h5", "/sensors/nope", NULL});
    tu_run_free(&r);
    ck_assert_int_eq(tu_count_entries(dir), entries);
    tu_rmtree(dir);
    free(dir), free(bag), free(bad), free(cut), free(out), free(h5), free(ob);
}
END_TEST

/* A receiver standing still, white ENU errors of 1.2, 0.8, 2.0 m at 1 Hz
 * for 15 minutes (python3-rosbag): fit gnss --topic finds each axis white
 * with the sigma inside its 95% interval, the same numbers as fitting the
 * imported log. */
START_TEST(fit_gnss_from_bag)
{
    char *dir = tu_mkdtemp(), *bag = tu_path(dir, "gps.bag"), *y = tu_path(dir, "g.yaml"), *h5 = tu_path(dir, "g.h5");
    py("gnss %s 900 11", bag);
    tu_run_result r = tu_run("fit", "gnss", bag, "--topic", "/gps", "-o", y, "--json", NULL);
    expect_ok(&r);
    ck_assert_ptr_nonnull(strstr(r.out, "\"sensor\": \"gps\", \"epochs\": 900"));
    ck_assert_ptr_nonnull(strstr(r.out, "\"model\": \"gaussian\""));
    ck_assert_ptr_nonnull(strstr(r.out, bag));
    static const char *const axes[3] = {"east", "north", "up"};
    const double sigma[3] = {1.2, 0.8, 2.0};
    for (int a = 0; a < 3; a++) {
        char key[64];
        snprintf(key, sizeof key, "\"axis\": \"%s\"", axes[a]);
        const char *p = after(after(r.out, key), "\"white_sigma\": {\"value\": ");
        double v, lo, hi;
        ck_assert_int_eq(sscanf(p + strlen("\"white_sigma\": {\"value\": "), "%lf, \"lo\": %lf, \"hi\": %lf", &v,
                                &lo, &hi),
                         3);
        ck_assert_msg(lo <= sigma[a] && sigma[a] <= hi, "%s: %g not in [%g, %g]", axes[a], sigma[a], lo, hi);
        ck_assert_ptr_nonnull(strstr(after(r.out, key), "\"white\": true"));
    }
    ck_assert(tu_file_exists(y));
    tu_run_result q = tu_run("import", bag, "--topic", "/gps", "-o", h5, NULL);
    expect_ok(&q);
    tu_run_free(&q);
    q = tu_run("fit", "gnss", h5, "--sensor", "gps", "-o", y, "--json", NULL);
    expect_ok(&q);
    ck_assert_str_eq(after(q.out, "\"epochs\""), after(r.out, "\"epochs\""));
    tu_run_free(&q);
    tu_run_free(&r);
    tu_rmtree(dir);
    free(dir), free(bag), free(y), free(h5);
}
END_TEST

/* An MCAP file (sensim's writer) of n Imu messages on /imu whose header
 * stamps are T0 + 10 ms * stamp_of(i) for the i-th message written (receive
 * times in write order); angular_velocity carries (stamp index, write
 * index, 0) and frame_id is "imu" plus i % 7 underscores, so that payload
 * sizes vary. */
static void reorder_mcap(const char *path, size_t n, size_t (*stamp_of)(size_t))
{
    const int64_t t0 = 1700000000LL * 1000000000LL;
    sensim_bag_writer *w = sensim_bag_writer_create(path, SENSIM_BAG_MCAP, SENSIM_BAG_COMPRESS_NONE);
    ck_assert_msg(w != NULL, "%s", sensim_last_error());
    size_t topic;
    ck_assert_int_eq(sensim_bag_writer_add_topic(w, "/imu", "sensor_msgs/msg/Imu", "", &topic), SENSIM_OK);
    sensim_msg_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        sensim_msg_imu m;
        memset(&m, 0, sizeof m);
        m.header.stamp_ns = t0 + (int64_t)stamp_of(i) * 10000000;
        snprintf(m.header.frame_id, sizeof m.header.frame_id, "imu%.*s", (int)(i % 7), "______");
        m.orientation[3] = 1;
        m.angular_velocity[0] = (double)stamp_of(i);
        m.angular_velocity[1] = (double)i;
        m.linear_acceleration[2] = 9.81;
        b.len = 0;
        ck_assert_int_eq(sensim_msg_encode_imu(SENSIM_ENC_CDR, &m, &b), SENSIM_OK);
        ck_assert_int_eq(sensim_bag_writer_write(w, topic, t0 + (int64_t)i * 10000000, b.data, b.len), SENSIM_OK);
    }
    sensim_msg_buf_free(&b);
    ck_assert_int_eq(sensim_bag_writer_commit(w), SENSIM_OK);
    sensim_bag_writer_close(w);
}

/* Blocks of 1000 messages written newest first: 999 of each block arrive
 * older than one before them. */
static size_t reversed_blocks(size_t i) { return i / 1000 * 1000 + 999 - i % 1000; }
/* Message 9000 carries stamp 100: 8900 messages late, past the window. */
static size_t one_late(size_t i) { return i == 9000 ? 100 : i < 100 ? i : i < 9000 ? i + 1 : i; }

/* The reorder window (cli/bag_stream.c) sorts header stamps that arrive out
 * of order by up to 4096 messages, counts the messages that arrived older
 * than one before them, keeps each payload with its stamp, and refuses a
 * message later than the window, naming it; nothing is left behind. */
START_TEST(import_sorts_within_window)
{
    char *dir = tu_mkdtemp(), *rec = tu_path(dir, "shuffled.mcap"), *late = tu_path(dir, "late.mcap"),
         *h5 = tu_path(dir, "s.h5"), *out = tu_path(dir, "late.h5");
    const size_t n = 20000;
    reorder_mcap(rec, n, reversed_blocks);
    tu_run_result r = tu_run("import", rec, "--topic", "/imu", "-o", h5, NULL);
    expect_ok(&r);
    /* Frames: every message whose i % 7 != 0 differs from the first's. */
    size_t changed = n - (n + 6) / 7;
    char want[256];
    snprintf(want, sizeof want, "/imu -> /sensors/imu: %zu messages, 100 Hz, %zu reordered, 0 duplicate stamps "
             "dropped, 0 gaps, frame_id changed %zu times (kept 'imu')", n, n / 1000 * 999, changed);
    ck_assert_msg(strstr(r.err, want), "%s", r.err);
    tu_run_free(&r);
    size_t rows, w;
    double *t = read_all(h5, "/sensors/imu/t", &rows, NULL), *av = read_all(h5, "/sensors/imu/angular_velocity", &rows, &w);
    ck_assert_uint_eq(rows, n);
    /* The time origin is the whole second of the first stamp read (9.99 s). */
    for (size_t j = 0; j < n; j++) {
        ck_assert_msg(fabs(t[j] - (0.01 * (double)j - 9)) < 1e-9, "t[%zu] = %.9f", j, t[j]);
        ck_assert_msg(av[3 * j] == (double)j, "row %zu holds stamp %g", j, av[3 * j]);
        ck_assert_msg(av[3 * j + 1] == (double)reversed_blocks(j), "row %zu holds message %g", j, av[3 * j + 1]);
    }
    free(t), free(av);

    reorder_mcap(late, 10000, one_late);
    int entries = tu_count_entries(dir);
    r = tu_run("import", late, "--topic", "/imu", "-o", out, NULL);
    expect_fail(&r, (const char *[]){"late.mcap", "topic '/imu'", "message 9000", "4096-message reorder window",
                                     "--time receive", NULL});
    tu_run_free(&r);
    ck_assert_int_eq(tu_count_entries(dir), entries);
    r = tu_run("import", late, "--topic", "/imu", "--time", "receive", "-o", out, NULL);
    expect_ok(&r);
    ck_assert_ptr_nonnull(strstr(r.err, "10000 messages, 100 Hz, 0 reordered"));
    tu_run_free(&r);
    tu_rmtree(dir);
    free(dir), free(rec), free(late), free(h5), free(out);
}
END_TEST

/* An MCAP file of an IMU and its magnetometer (sensim's writer): n
 * messages on /imu/data and on /imu/mag; the magnetometer publishes every
 * `every`-th sample, with the IMU's header stamp T0 + 10 ms i. */
static void imu_mag_mcap(const char *path, size_t n, size_t every)
{
    const int64_t t0 = 1700000000LL * 1000000000LL;
    sensim_bag_writer *w = sensim_bag_writer_create(path, SENSIM_BAG_MCAP, SENSIM_BAG_COMPRESS_NONE);
    ck_assert_msg(w != NULL, "%s", sensim_last_error());
    size_t ti, tm;
    ck_assert_int_eq(sensim_bag_writer_add_topic(w, "/imu/data", "sensor_msgs/msg/Imu", "", &ti), SENSIM_OK);
    ck_assert_int_eq(sensim_bag_writer_add_topic(w, "/imu/mag", "sensor_msgs/msg/MagneticField", "", &tm), SENSIM_OK);
    sensim_msg_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        int64_t t = t0 + (int64_t)i * 10000000;
        sensim_msg_imu m;
        memset(&m, 0, sizeof m);
        m.header.stamp_ns = t;
        snprintf(m.header.frame_id, sizeof m.header.frame_id, "imu_link");
        m.orientation[3] = 1;
        m.angular_velocity[0] = (double)i;
        m.linear_acceleration[2] = 9.81;
        b.len = 0;
        ck_assert_int_eq(sensim_msg_encode_imu(SENSIM_ENC_CDR, &m, &b), SENSIM_OK);
        ck_assert_int_eq(sensim_bag_writer_write(w, ti, t + 1000, b.data, b.len), SENSIM_OK);
        if (i % every)
            continue;
        sensim_msg_magnetic_field f;
        memset(&f, 0, sizeof f);
        f.header.stamp_ns = t;
        snprintf(f.header.frame_id, sizeof f.header.frame_id, "mag_link");
        f.magnetic_field[0] = 2e-5;
        f.magnetic_field[1] = (double)i * 1e-9;
        f.magnetic_field_covariance[0] = 1e-12;
        b.len = 0;
        ck_assert_int_eq(sensim_msg_encode_magnetic_field(SENSIM_ENC_CDR, &f, &b), SENSIM_OK);
        ck_assert_int_eq(sensim_bag_writer_write(w, tm, t + 2000, b.data, b.len), SENSIM_OK);
    }
    sensim_msg_buf_free(&b);
    ck_assert_int_eq(sensim_bag_writer_commit(w), SENSIM_OK);
    sensim_bag_writer_close(w);
}

/* An IMU and its magnetometer given one NAME land in one imu group, as
 * docs/DESIGN.md lays it out (angular_velocity, specific_force and
 * magnetic_field on one t), whichever topic is named first; export gives
 * both topics back with their frames and the shared stamps, which
 * python3-rosbag reads (bagcli_ref.py imumag). A magnetometer at a quarter
 * of the rate cannot share the group: exit 1 naming the message and the
 * stamps, nothing written; it imports under a name of its own. Two Imu
 * topics under one name stay a usage error. */
START_TEST(import_imu_and_magnetometer)
{
    char *dir = tu_mkdtemp(), *rec = tu_path(dir, "imu.mcap"), *slow = tu_path(dir, "slow.mcap"),
         *h5 = tu_path(dir, "imu.h5"), *h5b = tu_path(dir, "imu2.h5"), *bag = tu_path(dir, "imu.bag"),
         *out = tu_path(dir, "slow.h5");
    const size_t n = 6000;
    imu_mag_mcap(rec, n, 1);
    const char *orders[2][2] = {{"/imu/mag:imu", "/imu/data:imu"}, {"/imu/data:imu", "/imu/mag:imu"}};
    for (int o = 0; o < 2; o++) {
        tu_run_result r = tu_run("import", rec, "--topic", orders[o][0], "--topic", orders[o][1], "-o",
                                 o ? h5b : h5, NULL);
        expect_ok(&r);
        ck_assert_ptr_nonnull(strstr(r.err, "/imu/mag -> /sensors/imu: 6000 messages"));
        ck_assert_ptr_nonnull(strstr(r.err, "/imu/data -> /sensors/imu: 6000 messages"));
        tu_run_free(&r);
        size_t rows, w;
        const char *f = o ? h5b : h5;
        double *t = read_all(f, "/sensors/imu/t", &rows, NULL), *av = read_all(f, "/sensors/imu/angular_velocity", &rows, &w),
               *mf = read_all(f, "/sensors/imu/magnetic_field", &rows, &w);
        ck_assert_uint_eq(rows, n);
        for (size_t i = 0; i < n; i++) {
            ck_assert(fabs(t[i] - 0.01 * (double)i) < 1e-9);
            ck_assert(av[3 * i] == (double)i);
            ck_assert(mf[3 * i] == 2e-5 && mf[3 * i + 1] == (double)i * 1e-9 && mf[3 * i + 2] == 0);
        }
        free(t), free(av), free(mf);
        char *a = attr_text(f, "/sensors/imu", "ros_magnetic_field_topic");
        ck_assert_str_eq(a, "/imu/mag");
        free(a);
        a = attr_text(f, "/sensors/imu", "ros_magnetic_field_frame_id");
        ck_assert_str_eq(a, "mag_link");
        free(a);
        a = attr_text(f, "/sensors/imu", "ros_topic");
        ck_assert_str_eq(a, "/imu/data");
        free(a);
        a = attr_text(f, "/sensors/imu", "type");
        ck_assert_str_eq(a, "imu");
        free(a);
    }
    tu_run_result r = tu_run("export", h5, "-g", "imu", "--format", "bag", "-o", bag, NULL);
    expect_ok(&r);
    ck_assert_ptr_nonnull(strstr(r.err, "/sensors/imu -> /imu/mag (sensor_msgs/MagneticField): 6000 messages"));
    tu_run_free(&r);
    py("imumag %s %zu", bag, n);

    imu_mag_mcap(slow, 400, 4);
    int entries = tu_count_entries(dir);
    r = tu_run("import", slow, "--topic", "/imu/data:imu", "--topic", "/imu/mag:imu", "-o", out, NULL);
    expect_fail(&r, (const char *[]){"slow.mcap", "topic '/imu/", "1700000000010000000 ns",
                                     "1700000000040000000 ns", "--topic /imu/", NULL});
    tu_run_free(&r);
    ck_assert_int_eq(tu_count_entries(dir), entries);
    r = tu_run("import", slow, "--topic", "/imu/data:imu", "--topic", "/imu/mag:mag", "-o", out, NULL);
    expect_ok(&r);
    ck_assert_ptr_nonnull(strstr(r.err, "/imu/mag -> /sensors/mag: 100 messages, 25 Hz"));
    tu_run_free(&r);
    char *mixed = tu_path(dir, "mixed.bag");
    py("mixed %s", mixed);
    entries = tu_count_entries(dir);
    r = tu_run("import", mixed, "--topic", "/imu:a", "--topic", "/gps:a", "-o", h5b, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "only a sensor_msgs/Imu and a MagneticField topic may share a name"));
    tu_run_free(&r);
    ck_assert_int_eq(tu_count_entries(dir), entries);
    tu_rmtree(dir);
    free(dir), free(rec), free(slow), free(h5), free(h5b), free(bag), free(out), free(mixed);
}
END_TEST

/* import sizes an IMU topic's chunks to its message count (from the
 * recording's summary), so a long recording is read back in parallel
 * (sensim_log_extents); values come back as written. 400000 messages
 * through sensim's MCAP writer: angular_velocity in chunks of 6250 rows
 * (a 64th) where a short topic keeps 64 KiB (2730 rows of 24 bytes). */
START_TEST(import_sizes_chunks_to_topic)
{
    char *dir = tu_mkdtemp(), *h5 = tu_path(dir, "big.h5"), *mcap = tu_path(dir, "big.mcap"),
         *back = tu_path(dir, "back.h5");
    const size_t n = 400000, three = 3;
    double *t = malloc(n * sizeof *t), *g = malloc(3 * n * sizeof *g), rate = 200;
    ck_assert(t && g);
    for (size_t i = 0; i < n; i++) {
        t[i] = 10 + (double)i / rate;
        for (int k = 0; k < 3; k++)
            g[3 * i + (size_t)k] = 1e-3 * sin(0.001 * (double)i + k);
    }
    sensim_log *log = sensim_log_create(h5, "test");
    ck_assert_ptr_nonnull(log);
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/t", SENSIM_F64, n, 0, NULL, t, "s"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/angular_velocity", SENSIM_F64, n, 1, &three, g, "rad/s"),
                     SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/specific_force", SENSIM_F64, n, 1, &three, g, "m/s^2"),
                     SENSIM_OK);
    ck_assert_int_eq(sensim_log_set_attr_f64(log, "/sensors/imu", "rate_hz", &rate, 1), SENSIM_OK);
    ck_assert_int_eq(sensim_log_set_attr_string(log, "/sensors/imu", "type", "imu"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_commit(log), SENSIM_OK);
    tu_run_result r = tu_run("export", h5, "-g", "imu", "--format", "mcap", "-o", mcap, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    r = tu_run("import", mcap, "--topic", "/imu", "-o", back, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    ck_assert_uint_eq(tu_chunk_rows(back, "/sensors/imu/angular_velocity"), (n + 63) / 64);
    size_t next = 0;
    double fac[3];
    sensim_log_extent *ext = tu_extents(back, "/sensors/imu/angular_velocity", 3, &next, fac);
    ck_assert_uint_eq(next, 64);
    log = sensim_log_open(back);
    ck_assert_ptr_nonnull(log);
    double *v = malloc(3 * n * sizeof *v);
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(sensim_log_read_f64(log, "/sensors/imu/angular_velocity", 0, n, v), SENSIM_OK);
    for (size_t i = 0; i < 3 * n; i++)
        ck_assert_double_eq(v[i], g[i]);
    free(ext);
    free(v);
    sensim_log_close(log);
    free(t);
    free(g);
    tu_rmtree(dir);
    free(dir), free(h5), free(mcap), free(back);
}
END_TEST

Suite *suite_bagcli(void)
{
    Suite *s = suite_create("bagcli");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, fit_imu_from_bag_recovers_noise);
    tcase_add_test(tc, import_inject_export_round_trip);
    tcase_add_test(tc, import_every_type);
    tcase_add_test(tc, info_lists_topics);
    tcase_add_test(tc, bad_inputs_named_nothing_left);
    tcase_add_test(tc, fit_gnss_from_bag);
    tcase_add_test(tc, import_sorts_within_window);
    tcase_add_test(tc, import_imu_and_magnetometer);
    tcase_add_test(tc, import_sizes_chunks_to_topic);
    suite_add_tcase(s, tc);
    return s;
}
