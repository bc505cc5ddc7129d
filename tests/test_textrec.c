/* Text recordings and point clouds in and out, and units that travel:
 * files written by NumPy and h5py (/usr/bin/python3, Debian's numpy and
 * h5py) in EuRoC, TUM and CSV layouts, KITTI .bin, PLY and PCD, are imported
 * by `sensim import` and checked against what the script put in; the
 * EuRoC-layout IMU file and an h5py log of the same samples (in rad/s, and
 * in deg/s and g with a units attribute) fit to the same numbers; clouds are
 * noised by `sensim inject` with the rig's range sigma; bad inputs name the
 * file, line and column, exit 1 and leave nothing behind. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/log.h"
#include "sensim/textrec.h"
#include "testutil.h"

/* Runs a Python script (text) with the directory as its argument. */
static void py(const char *dir, const char *script)
{
    char *p = tu_path(dir, "gen.py");
    ck_assert_int_eq(tu_write_file(p, script), 0);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", p, dir);
    ck_assert_msg(system(cmd) == 0, "python failed: %s", cmd);
    free(p);
}

static void expect_ok(tu_run_result *r)
{
    ck_assert_msg(r->status == 0, "exit %d; stderr: %s", r->status, r->err);
}

/* A run that must fail with exit status 1, its message holding each needle. */
static void expect_fail(tu_run_result *r, const char *const *needles)
{
    ck_assert_msg(r->status == 1, "exit %d, expected 1; stderr: %s", r->status, r->err);
    for (; *needles; needles++)
        ck_assert_msg(strstr(r->err, *needles) != NULL, "stderr lacks '%s': %s", *needles, r->err);
}

/* Every number in a JSON text after its "source" field (which names the
 * input), compared pairwise within a relative 1e-9. */
static void same_numbers(const char *a, const char *b)
{
    const char *pa = strstr(a, "\"sensor\""), *pb = strstr(b, "\"sensor\"");
    ck_assert_ptr_nonnull(pa);
    ck_assert_ptr_nonnull(pb);
    size_t count = 0;
    for (;;) {
        while (*pa && !(*pa == '-' || (*pa >= '0' && *pa <= '9')))
            pa++;
        while (*pb && !(*pb == '-' || (*pb >= '0' && *pb <= '9')))
            pb++;
        if (!*pa || !*pb) {
            ck_assert_msg(!*pa && !*pb, "one JSON has more numbers than the other");
            break;
        }
        char *ea, *eb;
        double x = strtod(pa, &ea), y = strtod(pb, &eb);
        ck_assert_msg(fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y)) + 1e-300, "number %zu: %.17g vs %.17g", count, x,
                      y);
        pa = ea;
        pb = eb;
        count++;
    }
    ck_assert_uint_gt(count, 50);
}

/* The JSON number after "key": at or after p. */
static double json_after(const char **p, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *q = strstr(*p, pat);
    ck_assert_msg(q != NULL, "no %s", key);
    *p = q + strlen(pat);
    return strtod(*p, NULL);
}

/* ---- EuRoC IMU file vs h5py logs ---- */

/* 60 s of white noise at 200 Hz (N_g = 1e-3 rad/s/sqrt(Hz), N_a = 2e-3
 * m/s^2/sqrt(Hz)) with EuRoC's ns stamps: imu0/data.csv (CRLF, as the
 * dataset ships it), the same samples in rad/s (si.h5), in deg/s and g
 * (deg.h5), and with an unknown unit, a misspelt dps (dps.h5). */
static const char gen_imu[] =
    "import sys, os, numpy as np, h5py\n"
    "d = sys.argv[1]; rng = np.random.default_rng(11)\n"
    "n = 12000; rate = 200.0\n"
    "t = 1403636579758555392 + np.arange(n, dtype=np.int64) * 5000000\n"
    "w = rng.normal(0, 1e-3 * np.sqrt(rate), (n, 3))\n"
    "a = rng.normal(0, 2e-3 * np.sqrt(rate), (n, 3)) + [0.1, -0.2, 9.80665]\n"
    "os.makedirs(d + '/mav0/imu0')\n"
    "with open(d + '/mav0/imu0/data.csv', 'w', newline='') as f:\n"
    "    f.write('#timestamp [ns],w_RS_S_x [rad s^-1],w_RS_S_y [rad s^-1],w_RS_S_z [rad s^-1],'\n"
    "            'a_RS_S_x [m s^-2],a_RS_S_y [m s^-2],a_RS_S_z [m s^-2]\\r\\n')\n"
    "    for i in range(n):\n"
    "        f.write('%d,' % t[i] + ','.join(repr(float(x)) for x in (*w[i], *a[i])) + '\\r\\n')\n"
    "def log(name, wu, au, ws, as_):\n"
    "    with h5py.File(d + '/' + name, 'w') as f:\n"
    "        g = f.create_group('sensors/imu'); g.attrs['type'] = 'imu'; g.attrs['rate_hz'] = rate\n"
    "        g['t'] = t / 1e9; g['t'].attrs['units'] = 's'\n"
    "        g['angular_velocity'] = w * ws; g['angular_velocity'].attrs['units'] = wu\n"
    "        g['specific_force'] = a * as_; g['specific_force'].attrs['units'] = au\n"
    "log('si.h5', 'rad/s', 'm/s^2', 1.0, 1.0)\n"
    "log('deg.h5', 'deg/s', 'g', 180 / np.pi, 1 / 9.80665)\n"
    "log('dps.h5', 'dpz', 'm/s^2', 180 / np.pi, 1.0)\n";

START_TEST(euroc_imu_fits_like_h5py)
{
    char *dir = tu_mkdtemp();
    py(dir, gen_imu);
    char *csv = tu_path(dir, "mav0/imu0/data.csv"), *imp = tu_path(dir, "euroc.h5");
    char *si = tu_path(dir, "si.h5"), *deg = tu_path(dir, "deg.h5"), *dps = tu_path(dir, "dps.h5");
    tu_run_result r = tu_run("import", csv, "-o", imp, NULL);
    expect_ok(&r);
    ck_assert_ptr_nonnull(strstr(r.err, "times in ns"));
    tu_run_free(&r);

    /* The stamps: exact ns after the recorded epoch, 200 Hz. */
    sensim_log *log = sensim_log_open(imp);
    ck_assert_ptr_nonnull(log);
    double epoch, rate, t[3];
    ck_assert_int_eq(sensim_log_get_attr_f64(log, "/sensors/imu", "time_epoch_ns", &epoch, 1), SENSIM_OK);
    ck_assert(epoch == 1403636579e9);
    ck_assert_int_eq(sensim_log_get_attr_f64(log, "/sensors/imu", "rate_hz", &rate, 1), SENSIM_OK);
    ck_assert(rate == 200.0);
    ck_assert_int_eq(sensim_log_read_f64(log, "/sensors/imu/t", 11997, 3, t), SENSIM_OK);
    ck_assert_within(t[2], 0.758555392 + 11999 * 0.005, 1e-12);
    sensim_log_close(log);

    tu_run_result a = tu_run("fit", "imu", imp, "--sensor", "imu", "--json", NULL);
    tu_run_result b = tu_run("fit", "imu", si, "--sensor", "imu", "--json", NULL);
    tu_run_result c = tu_run("fit", "imu", deg, "--sensor", "imu", "--json", NULL);
    expect_ok(&a);
    expect_ok(&b);
    expect_ok(&c);
    same_numbers(a.out, b.out);
    same_numbers(c.out, b.out);
    /* And the numbers are right: each N within two 95 % half-widths of the
     * truth (about 4 standard errors). */
    const char *p = a.out;
    for (int k = 0; k < 6; k++) {
        double truth = k < 3 ? 1e-3 : 2e-3;
        const char *q = strstr(p, "\"noise_density\"");
        ck_assert_ptr_nonnull(q);
        double v = json_after(&q, "value"), lo = json_after(&q, "lo"), hi = json_after(&q, "hi");
        ck_assert_msg(fabs(v - truth) <= (hi - lo), "axis %d: N %g [%g, %g], truth %g", k, v, lo, hi, truth);
        p = q;
    }
    tu_run_free(&a);
    tu_run_free(&b);
    tu_run_free(&c);

    /* An unknown unit is refused, naming file, dataset and unit. */
    r = tu_run("fit", "imu", dps, "--sensor", "imu", "--json", NULL);
    expect_fail(&r, (const char *[]){"dps.h5", "/sensors/imu/angular_velocity", "unknown unit 'dpz'", NULL});
    tu_run_free(&r);

    /* EuRoC export gives the file back: the same stamps, the same values. */
    char *back = tu_path(dir, "back.csv");
    r = tu_run("export", imp, "-g", "/sensors/imu", "--format", "euroc", "-o", back, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import numpy as np; a=np.loadtxt('%s',delimiter=',',dtype=object);"
             "b=np.loadtxt('%s',delimiter=',',dtype=object); assert a.shape==b.shape==(12000,7);"
             "assert (a[:,0]==b[:,0]).all(); assert (a[:,1:].astype(float)==b[:,1:].astype(float)).all()\"",
             csv, back);
    ck_assert_int_eq(system(cmd), 0);
    /* import -> inject (noise onto the recorded samples) -> export keeps the
     * stamps exactly and adds white noise of the rig's density: the sample sd
     * of 36000 differences within 5 standard errors (sd / sqrt(2 n)). */
    char *rig = tu_path(dir, "rig.yaml"), *noised = tu_path(dir, "noised.h5");
    ck_assert_int_eq(tu_write_file(rig, "seed: 1\nsensors:\n  - name: imu\n    type: imu\n    rate_hz: 200\n"
                                        "    gyro: {noise_density: 1.0e-3}\n    accel: {noise_density: 2.0e-3}\n"),
                     0);
    r = tu_run("inject", rig, imp, "-o", noised, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    r = tu_run("export", noised, "-g", "/sensors/imu", "--format", "euroc", "-o", back, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import numpy as np; a=np.loadtxt('%s',delimiter=',',dtype=object);"
             "b=np.loadtxt('%s',delimiter=',',dtype=object); assert (a[:,0]==b[:,0]).all();"
             "d=b[:,1:4].astype(float)-a[:,1:4].astype(float); s=1e-3*np.sqrt(200);"
             "assert abs(d.std()/s-1)<5/np.sqrt(2*d.size), d.std()\"",
             csv, back);
    ck_assert_int_eq(system(cmd), 0);
    free(rig);
    free(noised);
    free(back);
    tu_rmtree(dir);
    free(dir);
    free(csv);
    free(imp);
    free(si);
    free(deg);
    free(dps);
}
END_TEST

/* Units travel through every reader of the layout: per-column units, one
 * unit for the length columns of points, and refusals. */
START_TEST(units_attribute_converts_on_read)
{
    char *dir = tu_mkdtemp();
    py(dir, "import sys, h5py, numpy as np\n"
            "with h5py.File(sys.argv[1] + '/u.h5', 'w') as f:\n"
            "    g = f.create_group('sensors/gps'); g['lla'] = [[43.0, -89.0, 0.26]]\n"
            "    g['lla'].attrs['units'] = 'deg, deg, km'\n"
            "    g['t'] = np.array([1500.0]); g['t'].attrs['units'] = 'ms'\n"
            "    l = f.create_group('sensors/lid'); l['points'] = np.array([[1000, 2000, 3000, 0.5]], 'f4')\n"
            "    l['points'].attrs['units'] = 'mm'\n"
            "    l['azimuth'] = np.array([90.0], 'f4'); l['azimuth'].attrs['units'] = 'deg'\n"
            "    m = f.create_group('sensors/mag'); m['magnetic_field'] = [[1.0, 2.0, 3.0]]\n"
            "    m['magnetic_field'].attrs['units'] = 'gauss'\n"
            "    m['specific_force'] = [[1.0, 2.0, 3.0]]; m['specific_force'].attrs['units'] = 'm/s'\n");
    char *p = tu_path(dir, "u.h5");
    sensim_log *log = sensim_log_open(p);
    ck_assert_ptr_nonnull(log);
    double v[3], t;
    ck_assert_int_eq(sensim_log_read_f64(log, "/sensors/gps/lla", 0, 1, v), SENSIM_OK);
    ck_assert(v[0] == 43.0 && v[1] == -89.0);
    ck_assert_within(v[2], 260.0, 1e-12);
    ck_assert_int_eq(sensim_log_read_f64(log, "/sensors/gps/t", 0, 1, &t), SENSIM_OK);
    ck_assert_within(t, 1.5, 1e-15);
    float pt[4], az;
    ck_assert_int_eq(sensim_log_read(log, "/sensors/lid/points", SENSIM_F32, 0, 1, pt), SENSIM_OK);
    ck_assert(pt[0] == 1.0f && pt[1] == 2.0f && pt[2] == 3.0f && pt[3] == 0.5f);
    ck_assert_int_eq(sensim_log_read_raw(log, "/sensors/lid/points", SENSIM_F32, 0, 1, pt), SENSIM_OK);
    ck_assert(pt[0] == 1000.0f);
    ck_assert_int_eq(sensim_log_read(log, "/sensors/lid/azimuth", SENSIM_F32, 0, 1, &az), SENSIM_OK);
    ck_assert_within(az, M_PI / 2, 1e-6);
    ck_assert_int_eq(sensim_log_read_f64(log, "/sensors/mag/magnetic_field", 0, 1, v), SENSIM_OK);
    ck_assert_within(v[2], 3e-4, 1e-18);
    /* The wrong dimension is refused with file, dataset and unit. */
    ck_assert_int_ne(sensim_log_read_f64(log, "/sensors/mag/specific_force", 0, 1, v), SENSIM_OK);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "u.h5"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "/sensors/mag/specific_force"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "'m/s'"));
    sensim_log_close(log);
    tu_rmtree(dir);
    free(dir);
    free(p);
}
END_TEST

/* ---- poses ---- */

/* A helix at 100 Hz: position (R cos wt, R sin wt, c t), yaw = wt + pi/2
 * (heading along the path), 1.5 s of it: the TUM file in seconds with 6
 * decimals as TUM writes them, and the EuRoC ground truth with ns stamps
 * and velocity. */
static const char gen_pose[] =
    "import sys, numpy as np\n"
    "d = sys.argv[1]; R, w, c = 10.0, 0.5, 0.2\n"
    "n = 150; s = np.arange(n) * 0.01; t = 1305031102.175304 + s\n"
    "p = np.c_[R * np.cos(w * s), R * np.sin(w * s), c * s]\n"
    "yaw = w * s + np.pi / 2\n"
    "q = np.c_[np.cos(yaw / 2), 0 * s, 0 * s, np.sin(yaw / 2)]\n"
    "v = np.c_[-R * w * np.sin(w * s), R * w * np.cos(w * s), c + 0 * s]\n"
    "with open(d + '/traj.txt', 'w') as f:\n"
    "    f.write('# ground truth trajectory\\n# timestamp tx ty tz qx qy qz qw\\n')\n"
    "    for i in range(n):\n"
    "        f.write('%.6f %.9f %.9f %.9f %.12f %.12f %.12f %.12f\\n' % (t[i], *p[i], *q[i, 1:], q[i, 0]))\n"
    "ns = 1403636580838555648 + np.arange(n, dtype=np.int64) * 10000000\n"
    "with open(d + '/gt.csv', 'w') as f:\n"
    "    f.write('#timestamp, p_RS_R_x [m], p_RS_R_y [m], p_RS_R_z [m], q_RS_w [], q_RS_x [], q_RS_y [], '\n"
    "            'q_RS_z [], v_RS_R_x [m s^-1], v_RS_R_y [m s^-1], v_RS_R_z [m s^-1], b_w_RS_S_x [rad s^-1], '\n"
    "            'b_w_RS_S_y [rad s^-1], b_w_RS_S_z [rad s^-1], b_a_RS_S_x [m s^-2], b_a_RS_S_y [m s^-2], '\n"
    "            'b_a_RS_S_z [m s^-2]\\n')\n"
    "    for i in range(n):\n"
    "        f.write('%d,' % ns[i] + ','.join('%.9f' % x for x in (*p[i], *q[i], *v[i])) + ',0.1,0.2,0.3,0.4,0.5,0.6\\n')\n";

/* Checks /ground_truth of a helix log against the closed forms. Derivatives
 * of the 3-point quadratic are exact to O(h^2): v error R w^3 h^2 / 6 ~ 2e-5
 * m/s, acceleration error R w^4 h^2 / 12 ~ 5e-6 m/s^2 (ends twice that);
 * the rates from relative rotations carry the 1e-12 rounding of the file's
 * quaternions over h = 0.01 s. */
static void check_helix(const char *path, double t0, double epoch_want)
{
    const double R = 10, w = 0.5, c = 0.2;
    sensim_log *log = sensim_log_open(path);
    ck_assert_ptr_nonnull(log);
    size_t n;
    double origin[3], epoch;
    ck_assert_int_eq(sensim_gt_check(log, &n, origin), SENSIM_OK);
    ck_assert_uint_eq(n, 150);
    ck_assert_int_eq(sensim_log_get_attr_f64(log, "/ground_truth", "time_epoch_ns", &epoch, 1), SENSIM_OK);
    ck_assert(epoch == epoch_want);
    sensim_gt_block b;
    ck_assert_int_eq(sensim_gt_block_init(&b, n), SENSIM_OK);
    ck_assert_int_eq(sensim_gt_read(log, 0, n, &b), SENSIM_OK);
    for (size_t i = 0; i < n; i++) {
        double s = 0.01 * (double)i, yaw = w * s + M_PI / 2;
        ck_assert_within(b.t[i], t0 + s, 1e-9);
        ck_assert_within(b.position[3 * i], R * cos(w * s), 1e-9);
        ck_assert_within(b.position[3 * i + 1], R * sin(w * s), 1e-9);
        ck_assert_within(b.position[3 * i + 2], c * s, 1e-9);
        ck_assert_within(b.orientation[4 * i], cos(yaw / 2), 1e-8);
        ck_assert_within(b.orientation[4 * i + 3], sin(yaw / 2), 1e-8);
        ck_assert_within(b.velocity[3 * i], -R * w * sin(w * s), 5e-5);
        ck_assert_within(b.velocity[3 * i + 1], R * w * cos(w * s), 5e-5);
        ck_assert_within(b.velocity[3 * i + 2], c, 5e-5);
        /* From positions alone, the quadratic's second derivative at the
         * first and last sample is first order: R w^3 h = 0.0125 m/s^2. */
        double atol = i == 0 || i == n - 1 ? 2 * R * w * w * w * 0.01 : 2e-4;
        ck_assert_within(b.acceleration[3 * i], -R * w * w * cos(w * s), atol);
        ck_assert_within(b.acceleration[3 * i + 1], -R * w * w * sin(w * s), atol);
        ck_assert_within(b.acceleration[3 * i + 2], 0, atol);
        ck_assert_within(b.angular_velocity[3 * i], 0, 1e-6);
        ck_assert_within(b.angular_velocity[3 * i + 1], 0, 1e-6);
        ck_assert_within(b.angular_velocity[3 * i + 2], w, 1e-6);
    }
    sensim_gt_block_free(&b);
    sensim_log_close(log);
}

START_TEST(tum_and_euroc_poses)
{
    char *dir = tu_mkdtemp();
    py(dir, gen_pose);
    char *tum = tu_path(dir, "traj.txt"), *gt = tu_path(dir, "gt.csv");
    char *o1 = tu_path(dir, "tum.h5"), *o2 = tu_path(dir, "euroc.h5");
    tu_run_result r = tu_run("import", tum, "-o", o1, NULL);
    expect_ok(&r);
    ck_assert_ptr_nonnull(strstr(r.err, "tum poses"));
    tu_run_free(&r);
    check_helix(o1, 0.175304, 1305031102e9);
    r = tu_run("import", gt, "-o", o2, NULL);
    expect_ok(&r);
    ck_assert_ptr_nonnull(strstr(r.err, "euroc poses"));
    tu_run_free(&r);
    check_helix(o2, 0.838555648, 1403636580e9);

    /* TUM export: the stamps come back exactly as written. */
    char *back = tu_path(dir, "back.txt");
    r = tu_run("export", o1, "--format", "tum", "-o", back, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    char *text = tu_read_file(back, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(strstr(text, "\n1305031102.175304000 10 0 0 0 0 0.70710678"));
    ck_assert_ptr_nonnull(strstr(text, "\n1305031103.665304000 "));
    free(text);
    /* EuRoC ground-truth export: integer ns stamps, velocity as recorded. */
    r = tu_run("export", o2, "-g", "/ground_truth", "--format", "euroc", "-o", back, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    text = tu_read_file(back, NULL);
    ck_assert_ptr_nonnull(strstr(text, "#timestamp, p_RS_R_x [m]"));
    ck_assert_ptr_nonnull(strstr(text, "\n1403636580838555648,10,0,0,"));
    ck_assert_ptr_nonnull(strstr(text, "\n1403636582328555648,"));
    free(text);
    free(back);
    tu_rmtree(dir);
    free(dir);
    free(tum);
    free(gt);
    free(o1);
    free(o2);
}
END_TEST

/* ---- generic CSV and time units ---- */

/* 100 Hz samples from t = 2 s written in unit u, with header units for the
 * gyro (deg/s) and accel (mg). */
static void write_generic(const char *dir, const char *name, double per_s, int integer)
{
    char script[2048];
    snprintf(script, sizeof script,
             "import sys, numpy as np\n"
             "d = sys.argv[1]; n = 50\n"
             "t = (2.0 + np.arange(n) * 0.01) * %.17g\n"
             "with open(d + '/%s', 'w') as f:\n"
             "    f.write('seq;stamp;gx [deg/s];gy [deg/s];gz [deg/s];acx [mg];acy [mg];acz [mg]\\n')\n"
             "    for i in range(n):\n"
             "        f.write(('%%d;' + ('%%d' if %d else '%%.9f') + ';%%g;%%g;%%g;%%g;%%g;%%g\\n') %%\n"
             "                (i, round(t[i]) if %d else t[i], 90, -180, i, 1000, 0, -500))\n",
             per_s, name, integer, integer);
    py(dir, script);
}

START_TEST(generic_csv_columns_and_time_units)
{
    char *dir = tu_mkdtemp();
    static const struct {
        const char *unit;
        double per_s;
    } units[4] = {{"s", 1}, {"ms", 1e3}, {"us", 1e6}, {"ns", 1e9}};
    const char *map = "t=stamp,wx=gx,wy=gy,wz=gz,ax=acx,ay=acy,az=acz";
    for (int k = 0; k < 4; k++) {
        char name[32], out[32];
        snprintf(name, sizeof name, "g_%s.csv", units[k].unit);
        snprintf(out, sizeof out, "g_%s.h5", units[k].unit);
        write_generic(dir, name, units[k].per_s, k > 0);
        char *in = tu_path(dir, name), *o = tu_path(dir, out);
        tu_run_result r =
            tu_run("import", in, "--columns", map, "--time-unit", units[k].unit, "--name", "acc", "-o", o, NULL);
        expect_ok(&r);
        tu_run_free(&r);
        sensim_log *log = sensim_log_open(o);
        ck_assert_ptr_nonnull(log);
        double t[50], w[150], a[150], rate;
        ck_assert_int_eq(sensim_log_read_f64(log, "/sensors/acc/t", 0, 50, t), SENSIM_OK);
        ck_assert_int_eq(sensim_log_read_f64(log, "/sensors/acc/angular_velocity", 0, 50, w), SENSIM_OK);
        ck_assert_int_eq(sensim_log_read_f64(log, "/sensors/acc/specific_force", 0, 50, a), SENSIM_OK);
        ck_assert_int_eq(sensim_log_get_attr_f64(log, "/sensors/acc", "rate_hz", &rate, 1), SENSIM_OK);
        ck_assert_within(rate, 100.0, 1e-9);
        for (int i = 0; i < 50; i++)
            ck_assert_within(t[i], 2.0 + 0.01 * i, 1e-9);
        ck_assert_within(w[0], M_PI / 2, 1e-12);
        ck_assert_within(w[1], -M_PI, 1e-12);
        ck_assert_within(w[3 * 7 + 2], 7 * M_PI / 180, 1e-12);
        ck_assert_within(a[0], 9.80665, 1e-12);
        ck_assert_within(a[2], -0.5 * 9.80665, 1e-12);
        sensim_log_close(log);
        free(in);
        free(o);
    }
    /* Without --time-unit, integer stamps from 2 s at 100 Hz in ns: only ns
     * is plausible (us would be 0.1 Hz), so it is told and said. */
    char *in = tu_path(dir, "g_ns.csv"), *o = tu_path(dir, "auto.h5");
    tu_run_result r = tu_run("import", in, "--columns", map, "-o", o, NULL);
    expect_ok(&r);
    ck_assert_ptr_nonnull(strstr(r.err, "times in ns: told from the stamps"));
    tu_run_free(&r);
    free(in);
    /* Integer stamps 1000 apart from 0: ms at 1 Hz or us at 1 kHz are both
     * plausible: refused, naming both, never read as seconds. */
    py(dir, "import sys\n"
            "with open(sys.argv[1] + '/amb.csv', 'w') as f:\n"
            "    f.write('t,x,y,z,qw,qx,qy,qz\\n')\n"
            "    for i in range(10): f.write('%d,%d,0,0,1,0,0,0\\n' % (1000 * i, i))\n");
    in = tu_path(dir, "amb.csv");
    char *o2 = tu_path(dir, "never.h5");
    r = tu_run("import", in, "-o", o2, NULL);
    expect_fail(&r, (const char *[]){"amb.csv:2", "cannot tell the time unit", "ms (1 Hz) or us (1000 Hz)",
                                     "--time-unit", NULL});
    tu_run_free(&r);
    ck_assert(!tu_file_exists(o2));
    /* Said to be seconds, ns epoch stamps are refused naming ns. */
    free(in);
    py(dir, "import sys\n"
            "with open(sys.argv[1] + '/epoch.csv', 'w') as f:\n"
            "    f.write('t,wx,wy,wz\\n')\n"
            "    for i in range(20): f.write('%d,0,0,0\\n' % (1700000000000000000 + i * 5000000))\n");
    in = tu_path(dir, "epoch.csv");
    r = tu_run("import", in, "--time-unit", "s", "-o", o2, NULL);
    expect_fail(&r, (const char *[]){"epoch.csv:2", "past the year 2286", "ns (200 Hz)", NULL});
    tu_run_free(&r);
    ck_assert(!tu_file_exists(o2));
    r = tu_run("import", in, "-o", o2, NULL);
    expect_ok(&r);
    ck_assert_ptr_nonnull(strstr(r.err, "times in ns: told"));
    tu_run_free(&r);
    free(in);
    /* A pose CSV named by its common spellings (x, y, z: once refused as
     * "unknown column 'x'"), seconds with fractions, ordered as written. */
    in = tu_path(dir, "pose.csv");
    ck_assert_int_eq(tu_write_file(in, "time,x,y,z,qw,qx,qy,qz\n0.00,0,0,0,1,0,0,0\n0.10,1,0,0,1,0,0,0\n"
                                       "0.20,2,0,0,1,0,0,0\n0.30,3,0,0,1,0,0,0\n"),
                     0);
    r = tu_run("import", in, "-o", o2, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    sensim_log *log = sensim_log_open(o2);
    ck_assert_ptr_nonnull(log);
    double v[12];
    ck_assert_int_eq(sensim_log_read_f64(log, "/ground_truth/velocity", 0, 4, v), SENSIM_OK);
    for (int i = 0; i < 4; i++)
        ck_assert_within(v[3 * i], 10.0, 1e-12);
    sensim_log_close(log);
    free(in);
    free(o);
    free(o2);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- point clouds ---- */

/* Three scans of 20000 points on a sphere of radius 5 m: KITTI .bin
 * (float32 x,y,z,reflectance), CARLA-style ascii PLY (property I) and a
 * binary PCD. */
static const char gen_clouds[] =
    "import sys, struct, numpy as np\n"
    "d = sys.argv[1]; rng = np.random.default_rng(5)\n"
    "def sphere(n):\n"
    "    u = rng.normal(size=(n, 3)); u /= np.linalg.norm(u, axis=1)[:, None]\n"
    "    return np.c_[5.0 * u, rng.uniform(0, 1, n)].astype('<f4')\n"
    "for k in range(3): sphere(20000).tofile(d + '/%06d.bin' % k)\n"
    "p = sphere(100)\n"
    "with open(d + '/carla.ply', 'w') as f:\n"
    "    f.write('ply\\nformat ascii 1.0\\nelement vertex 100\\nproperty float32 x\\nproperty float32 y\\n'\n"
    "            'property float32 z\\nproperty float32 I\\nend_header\\n')\n"
    "    for r in p: f.write('%r %r %r %r\\n' % tuple(float(x) for x in r))\n"
    "with open(d + '/scan.pcd', 'wb') as f:\n"
    "    f.write(b'# .PCD v0.7\\nVERSION 0.7\\nFIELDS x y z intensity\\nSIZE 4 4 4 4\\nTYPE F F F F\\n'\n"
    "            b'COUNT 1 1 1 1\\nWIDTH 100\\nHEIGHT 1\\nVIEWPOINT 0 0 0 1 0 0 0\\nPOINTS 100\\nDATA binary\\n')\n"
    "    f.write(p.tobytes())\n"
    "p.tofile(d + '/ref.f32')\n";

START_TEST(clouds_import_and_inject)
{
    char *dir = tu_mkdtemp();
    py(dir, gen_clouds);
    char *b0 = tu_path(dir, "000000.bin"), *b1 = tu_path(dir, "000001.bin"), *b2 = tu_path(dir, "000002.bin");
    char *scans = tu_path(dir, "scans.h5"), *rig = tu_path(dir, "rig.yaml"), *noised = tu_path(dir, "noised.h5");
    tu_run_result r = tu_run("import", b0, b1, b2, "--rate", "10", "--name", "velo", "-o", scans, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    sensim_log *log = sensim_log_open(scans);
    ck_assert_ptr_nonnull(log);
    uint64_t off[4];
    double t[3];
    float *rg = malloc(60000 * sizeof *rg);
    ck_assert_int_eq(sensim_log_read(log, "/sensors/velo/scan_offset", SENSIM_U64, 0, 4, off), SENSIM_OK);
    ck_assert(off[0] == 0 && off[1] == 20000 && off[3] == 60000);
    ck_assert_int_eq(sensim_log_read_f64(log, "/sensors/velo/t", 0, 3, t), SENSIM_OK);
    ck_assert_within(t[2], 0.2, 1e-12);
    ck_assert_int_eq(sensim_log_read(log, "/sensors/velo/range", SENSIM_F32, 0, 60000, rg), SENSIM_OK);
    for (int i = 0; i < 60000; i++)
        ck_assert_within(rg[i], 5.0, 1e-5);
    sensim_log_close(log);

    /* inject noises them: sigma = 0.02 + 0.001 r = 0.025 m at 5 m; the
     * sample sd of 60000 differences has SE sigma / sqrt(2 n). */
    ck_assert_int_eq(tu_write_file(rig, "seed: 3\nsensors:\n  - name: velo\n    type: lidar\n    rate_hz: 10\n"
                                        "    noise: {range_sigma_base: 0.02, range_sigma_slope: 0.001}\n"),
                     0);
    r = tu_run("inject", rig, scans, "-o", noised, NULL);
    expect_ok(&r);
    tu_run_free(&r);
    log = sensim_log_open(noised);
    ck_assert_ptr_nonnull(log);
    float *rn = malloc(60000 * sizeof *rn);
    ck_assert_int_eq(sensim_log_read(log, "/sensors/velo/range", SENSIM_F32, 0, 60000, rn), SENSIM_OK);
    double *d = malloc(60000 * sizeof *d);
    for (int i = 0; i < 60000; i++)
        d[i] = (double)rn[i] - rg[i];
    double sigma = 0.025, n = 60000;
    ck_assert_within(sqrt(tu_var(d, 60000, 1)), sigma, 5 * sigma / sqrt(2 * n));
    ck_assert_within(tu_mean(d, 60000, 1), 0, 5 * sigma / sqrt(n));
    char *src = NULL;
    ck_assert_int_eq(sensim_log_get_attr_string(log, "/sensors/velo", "source_format", &src), SENSIM_OK);
    ck_assert_str_eq(src, "bin");
    free(src);
    sensim_log_close(log);
    free(rn);
    free(d);
    free(rg);

    /* PLY (CARLA's I) and PCD: the same 100 points as written. */
    char *ref_path = tu_path(dir, "ref.f32");
    float ref[400];
    FILE *rf = fopen(ref_path, "rb");
    ck_assert_ptr_nonnull(rf);
    ck_assert_uint_eq(fread(ref, sizeof ref, 1, rf), 1);
    fclose(rf);
    const char *files[2] = {"carla.ply", "scan.pcd"};
    for (int k = 0; k < 2; k++) {
        char *in = tu_path(dir, files[k]), *o = tu_path(dir, "one.h5");
        r = tu_run("import", in, "-o", o, NULL);
        expect_ok(&r);
        tu_run_free(&r);
        log = sensim_log_open(o);
        float pts[400];
        ck_assert_int_eq(sensim_log_read(log, "/sensors/lidar/points", SENSIM_F32, 0, 100, pts), SENSIM_OK);
        ck_assert(memcmp(pts, ref, sizeof pts) == 0);
        sensim_log_close(log);
        free(in);
        free(o);
    }
    free(ref_path);
    tu_rmtree(dir);
    free(dir);
    free(b0);
    free(b1);
    free(b2);
    free(scans);
    free(rig);
    free(noised);
}
END_TEST

/* ---- bad inputs ---- */

START_TEST(bad_inputs_name_file_line_column)
{
    char *dir = tu_mkdtemp();
    char *out = tu_path(dir, "out.h5");
    ck_assert_int_eq(tu_write_file(out, "previous contents\n"), 0);
    static const struct {
        const char *name, *text;
        const char *needles[4];
    } cases[] = {
        {"num.csv",
         "#timestamp [ns],w_RS_S_x [rad s^-1],w_RS_S_y [rad s^-1],w_RS_S_z [rad s^-1],a_RS_S_x [m s^-2],"
         "a_RS_S_y [m s^-2],a_RS_S_z [m s^-2]\n1403636579758555392,0,0,0,0,0,9.8\n"
         "1403636579763555392,0,abc,0,0,0,9.8\n",
         {"num.csv:3: column 3 ('w_RS_S_y [rad s^-1]')", "'abc' is not a number", NULL}},
        {"order.csv", "t,wx,wy,wz\n0.0,0,0,0\n0.01,0,0,0\n0.01,0,0,0\n",
         {"order.csv:4: column 1 ('t')", "does not increase", NULL}},
        {"pose.csv", "t,x,y,z,roll\n0,1,2,3,0\n0.1,1,2,3,0\n",
         {"pose.csv:1", "no inertial or pose columns", "qw,qx,qy,qz", NULL}},
        {"tum.txt", "1.0 0 0 0 0 0 0 1\n1.1 0 0 0 0 0 0 2\n1.2 0 0 0 0 0 0 1\n",
         {"tum.txt:2", "has norm 2", NULL}},
        {"short.csv", "t,wx,wy,wz\n0,0,0,0\n0.01,0,0\n", {"short.csv:3: 3 columns, need at least 4", NULL}},
        {"unit.csv", "t [s],wx [furlong],wy,wz\n0,0,0,0\n1,0,0,0\n",
         {"unit.csv:1: column 2 ('wx [furlong]')", "unit 'furlong'", NULL}},
        {"kitti.bin", "0123456789", {"kitti.bin", "not a multiple of 16", NULL}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *in = tu_path(dir, cases[k].name);
        ck_assert_int_eq(tu_write_file(in, cases[k].text), 0);
        tu_run_result r = tu_run("import", in, "-o", out, NULL);
        expect_fail(&r, cases[k].needles);
        tu_run_free(&r);
        char *text = tu_read_file(out, NULL);
        ck_assert_str_eq(text, "previous contents\n");
        free(text);
        free(in);
    }
    /* No temporary file left: the inputs and out.h5 only. */
    ck_assert_int_eq(tu_count_entries(dir), (int)(sizeof cases / sizeof cases[0]) + 1);
    /* The legacy reader's message on an EuRoC file lists what a header may hold. */
    char *in = tu_path(dir, "num.csv");
    tu_run_result r = tu_run("import", "--ground-truth", in, "-o", out, NULL);
    expect_fail(&r, (const char *[]){"num.csv:2", "is a number", "sensim import FILE", NULL});
    tu_run_free(&r);
    free(in);
    /* Usage errors exit 2. */
    r = tu_run("import", "x.csv", "--time-unit", "fortnights", "-o", out, NULL);
    ck_assert_int_eq(r.status, 2);
    tu_run_free(&r);
    r = tu_run("export", out, "-g", "/sensors/imu", "-o", "-", NULL);
    ck_assert_int_eq(r.status, 2);
    tu_run_free(&r);
    free(out);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_textrec(void)
{
    Suite *s = suite_create("textrec");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, euroc_imu_fits_like_h5py);
    tcase_add_test(tc, units_attribute_converts_on_read);
    tcase_add_test(tc, tum_and_euroc_poses);
    tcase_add_test(tc, generic_csv_columns_and_time_units);
    tcase_add_test(tc, clouds_import_and_inject);
    tcase_add_test(tc, bad_inputs_name_file_line_column);
    suite_add_tcase(s, tc);
    return s;
}
