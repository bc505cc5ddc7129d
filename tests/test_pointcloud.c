/* PLY and PCD import/export: bit-exact round trips in all four encodings,
 * files written by other tools (extra properties, doubles, faces, no
 * intensity), errors that name the file and line, and the lidar fields
 * (ring, time, return index, reflectivity) as Open3D and PCL read them. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/pointcloud.h"
#include "testutil.h"

START_TEST(cloud_round_trips)
{
    char *dir = tu_mkdtemp();
    const char *names[4] = {"a.ply", "b.ply", "c.pcd", "d.pcd"};
    const sensim_cloud_format fmts[4] = {SENSIM_CLOUD_PLY_ASCII, SENSIM_CLOUD_PLY_BINARY, SENSIM_CLOUD_PCD_ASCII,
                                         SENSIM_CLOUD_PCD_BINARY};
    const size_t n = 1001;
    float *pts = malloc(n * 4 * sizeof *pts);
    for (size_t i = 0; i < 4 * n; i++)
        pts[i] = (float)(sin(i * 0.37) * 100.0 / (1 + i % 7)) + (float)1e-7 * (float)i;
    for (int k = 0; k < 4; k++) {
        char *path = tu_path(dir, names[k]);
        ck_assert_int_eq(sensim_cloud_write(path, fmts[k], pts, n), SENSIM_OK);
        float *back;
        size_t m;
        int hi;
        sensim_cloud_format f;
        ck_assert_int_eq(sensim_cloud_read(path, &back, &m, &hi, &f), SENSIM_OK);
        ck_assert_uint_eq(m, n);
        ck_assert_int_eq(hi, 1);
        ck_assert_int_eq(f, fmts[k]);
        ck_assert(memcmp(back, pts, n * 4 * sizeof *pts) == 0); /* %.9g is exact for float */
        free(back);
        /* Empty clouds too. */
        ck_assert_int_eq(sensim_cloud_write(path, fmts[k], pts, 0), SENSIM_OK);
        ck_assert_int_eq(sensim_cloud_read(path, &back, &m, &hi, NULL), SENSIM_OK);
        ck_assert_uint_eq(m, 0);
        free(back);
        free(path);
    }
    sensim_cloud_format f;
    ck_assert_int_eq(sensim_cloud_format_parse("pcd-ascii", &f), SENSIM_OK);
    ck_assert_int_eq(f, SENSIM_CLOUD_PCD_ASCII);
    ck_assert_int_eq(sensim_cloud_format_parse("las", &f), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "las"));
    free(pts);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cloud_foreign_files)
{
    char *dir = tu_mkdtemp();
    char *p1 = tu_path(dir, "mesh.ply"), *p2 = tu_path(dir, "pcl.pcd"), *p3 = tu_path(dir, "bin.ply");
    /* ASCII PLY with doubles, an extra property, no intensity, and faces. */
    tu_write_file(p1, "ply\r\nformat ascii 1.0\r\ncomment hi\r\nelement vertex 2\r\nproperty double x\r\n"
                      "property uchar red\r\nproperty double y\r\nproperty double z\r\nelement face 1\r\n"
                      "property list uchar int vertex_indices\r\nend_header\r\n1.5 200 2.5 -3.5\r\n4 0 5 6\r\n"
                      "3 0 1 1\r\n");
    float *pts;
    size_t n;
    int hi;
    ck_assert_int_eq(sensim_cloud_read(p1, &pts, &n, &hi, NULL), SENSIM_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(hi, 0);
    float e1[8] = {1.5f, 2.5f, -3.5f, 0, 4, 5, 6, 0};
    ck_assert(memcmp(pts, e1, sizeof e1) == 0);
    free(pts);
    /* PCL-style PCD with rgb and a COUNT 2 field, intensity as uint8. */
    tu_write_file(p2, "# .PCD v.7\nVERSION .7\nFIELDS x y z rgb normal intensity\nSIZE 4 4 4 4 4 1\n"
                      "TYPE F F F F F U\nCOUNT 1 1 1 1 2 1\nWIDTH 2\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\n"
                      "POINTS 2\nDATA ascii\n1 2 3 0 9 9 17\n-1 -2 -3 0 9 9 200\n");
    ck_assert_int_eq(sensim_cloud_read(p2, &pts, &n, &hi, NULL), SENSIM_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(hi, 1);
    float e2[8] = {1, 2, 3, 17, -1, -2, -3, 200};
    ck_assert(memcmp(pts, e2, sizeof e2) == 0);
    free(pts);
    /* Binary PLY with int16 x and a double intensity. */
    FILE *f = fopen(p3, "wb");
    fputs("ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty short x\nproperty float y\n"
          "property float z\nproperty double intensity\nend_header\n", f);
    int16_t x = -7;
    float y = 0.25f, z = 8;
    double in = 0.5;
    fwrite(&x, 2, 1, f);
    fwrite(&y, 4, 1, f);
    fwrite(&z, 4, 1, f);
    fwrite(&in, 8, 1, f);
    fclose(f);
    ck_assert_int_eq(sensim_cloud_read(p3, &pts, &n, &hi, NULL), SENSIM_OK);
    float e3[4] = {-7, 0.25f, 8, 0.5f};
    ck_assert(memcmp(pts, e3, sizeof e3) == 0);
    free(pts);
    free(p1);
    free(p2);
    free(p3);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cloud_errors)
{
    char *dir = tu_mkdtemp();
    char *p = tu_path(dir, "bad.ply");
    float *pts;
    size_t n;
    int hi;
    tu_write_file(p, "ply\nformat binary_big_endian 1.0\nelement vertex 1\nproperty float x\nend_header\n");
    ck_assert_int_eq(sensim_cloud_read(p, &pts, &n, &hi, NULL), SENSIM_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "bad.ply:2:"));
    tu_write_file(p, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                     "property float z\nend_header\n1 2 3\n4 5 6\n");
    ck_assert_int_eq(sensim_cloud_read(p, &pts, &n, &hi, NULL), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "truncated"));
    tu_write_file(p, "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nend_header\n1 2\n");
    ck_assert_int_eq(sensim_cloud_read(p, &pts, &n, &hi, NULL), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "x, y or z"));
    tu_write_file(p, "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
                     "property float z\nend_header\n1 2 oops\n");
    ck_assert_int_eq(sensim_cloud_read(p, &pts, &n, &hi, NULL), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "point 0"));
    char *q = tu_path(dir, "bad.pcd");
    tu_write_file(q, "VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH 1\nHEIGHT 1\n"
                     "POINTS 1\nDATA binary_compressed\n");
    ck_assert_int_eq(sensim_cloud_read(q, &pts, &n, &hi, NULL), SENSIM_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "bad.pcd:9:"));
    tu_write_file(q, "VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH 2\nHEIGHT 1\n"
                     "POINTS 2\nDATA binary\n12345678");
    ck_assert_int_eq(sensim_cloud_read(q, &pts, &n, &hi, NULL), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "truncated"));
    tu_write_file(q, "hello\n");
    ck_assert_int_eq(sensim_cloud_read(q, &pts, &n, &hi, NULL), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "neither"));
    /* A failed write leaves the existing target alone. */
    ck_assert_int_eq(sensim_cloud_write(q, (sensim_cloud_format)9, NULL, 0), SENSIM_EINVAL);
    size_t len;
    char *txt = tu_read_file(q, &len);
    ck_assert_str_eq(txt, "hello\n");
    free(txt);
    free(p);
    free(q);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Declared counts are checked before anything is allocated: POINTS against
 * WIDTH x HEIGHT, products and numbers for overflow, and every count against
 * the bytes after the header (a huge POINTS once allocated a wrapped-around
 * 16 bytes and wrote past them). */
START_TEST(cloud_declared_counts)
{
    char *dir = tu_mkdtemp();
    char *q = tu_path(dir, "big.pcd"), *p = tu_path(dir, "big.ply");
    float *pts = NULL;
    size_t n;
    int hi;
    const char *hdr = "VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\n";
    char text[512];
    snprintf(text, sizeof text, "%sWIDTH 2\nHEIGHT 1\nPOINTS 4611686018427387905\nDATA ascii\n1 2 3\n4 5 6\n", hdr);
    tu_write_file(q, text);
    ck_assert_int_eq(sensim_cloud_read(q, &pts, &n, &hi, NULL), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "big.pcd"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "POINTS 4611686018427387905 disagrees with WIDTH x HEIGHT"));
    snprintf(text, sizeof text, "%sPOINTS 4611686018427387905\nDATA ascii\n1 2 3\n4 5 6\n", hdr);
    tu_write_file(q, text);
    ck_assert_int_eq(sensim_cloud_read(q, &pts, &n, &hi, NULL), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "4611686018427387905 points declared"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "hold at most 2"));
    snprintf(text, sizeof text, "%sWIDTH 4294967296\nHEIGHT 4294967297\nDATA binary\n", hdr);
    tu_write_file(q, text);
    ck_assert_int_eq(sensim_cloud_read(q, &pts, &n, &hi, NULL), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "overflows"));
    snprintf(text, sizeof text, "%sPOINTS 99999999999999999999999999\nDATA binary\n", hdr);
    tu_write_file(q, text);
    ck_assert_int_eq(sensim_cloud_read(q, &pts, &n, &hi, NULL), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "big.pcd:6: bad POINTS"));
    tu_write_file(p, "ply\nformat ascii 1.0\nelement vertex 4611686018427387905\nproperty float x\nproperty float y\n"
                     "property float z\nend_header\n1 2 3\n4 5 6\n");
    ck_assert_int_eq(sensim_cloud_read(p, &pts, &n, &hi, NULL), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "big.ply"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "hold at most"));
    tu_write_file(p, "ply\nformat binary_little_endian 1.0\nelement vertex 18446744073709551616\nproperty float x\n"
                     "property float y\nproperty float z\nend_header\n");
    ck_assert_int_eq(sensim_cloud_read(p, &pts, &n, &hi, NULL), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "big.ply:3: bad vertex count"));
    /* A field of 300 values before x: x is the 301st token of the row. */
    FILE *f = fopen(q, "w");
    fprintf(f, "VERSION 0.7\nFIELDS h x y z\nSIZE 4 4 4 4\nTYPE F F F F\nCOUNT 300 1 1 1\nWIDTH 1\nHEIGHT 1\n"
               "POINTS 1\nDATA ascii\n");
    for (int i = 0; i < 300; i++)
        fprintf(f, "%d ", i);
    fprintf(f, "7.5 -2 3.25\n");
    fclose(f);
    ck_assert_int_eq(sensim_cloud_read(q, &pts, &n, &hi, NULL), SENSIM_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert(pts[0] == 7.5f && pts[1] == -2.0f && pts[2] == 3.25f && pts[3] == 0.0f);
    free(pts);
    free(p);
    free(q);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* The lidar fields (ring, time, return_index, reflectivity) as other
 * software reads them (issue 20): the four encodings written here, and
 * the PLY scans of `sensim render --ply`, loaded by Open3D
 * (python3-open3d's tensor reader, which keeps custom fields) and by PCL's
 * tools (pcl-tools: pcl_ply2pcd reads our PLY, pcl_convert_pcd_ascii_binary
 * reads our PCD; both write ASCII PCD, parsed back by NumPy). Every value
 * is the one written: integers exactly, floats exactly (binary, and %.9g
 * round-trips float32). */
static const char lidar_fields_py[] =
    "import subprocess, sys, os, numpy as np\n"
    "import open3d as o3d\n"
    "o3d.utility.set_verbosity_level(o3d.utility.VerbosityLevel.Error)\n"
    "d = sys.argv[1]; N = 50; i = np.arange(N)\n"
    "want = {'ring': (i % 16).astype(np.uint16), 'time': (i * np.float32(1e-4)).astype(np.float32),\n"
    "        'return_index': (i % 3).astype(np.uint8), 'reflectivity': ((i * 7) % 256).astype(np.uint8),\n"
    "        'intensity': (np.float32(0.01) * i).astype(np.float32)}\n"
    "xyz = np.stack([i * np.float32(0.5), -i.astype(np.float32), np.float32(0.25) * i], 1).astype(np.float32)\n"
    "# rtol: floats as PCL prints them in ASCII PCD, 8 significant digits\n"
    "# (half a unit of the 8th: 5e-7 of the value at most); 0 where read from our bytes.\n"
    "def check(tag, got, rtol=0):\n"
    "    for k, v in want.items():\n"
    "        g = np.asarray(got[k]).reshape(-1)\n"
    "        ok = np.array_equal(g.astype(v.dtype), v) if v.dtype.kind == 'u' or not rtol else \\\n"
    "            np.allclose(g, v, rtol=rtol, atol=0)\n"
    "        assert g.shape == v.shape and ok, (tag, k, g[:5], v[:5])\n"
    "    g = np.asarray(got['xyz']).reshape(-1, 3)\n"
    "    assert np.allclose(g, xyz, rtol=rtol, atol=0) if rtol else np.array_equal(g.astype(np.float32), xyz), tag\n"
    "def o3d_read(path):\n"
    "    p = o3d.t.io.read_point_cloud(path)\n"
    "    got = {k: p.point[k].numpy() for k in want}\n"
    "    got['xyz'] = p.point['positions'].numpy()\n"
    "    for k, dt in (('ring', np.uint16), ('return_index', np.uint8), ('reflectivity', np.uint8)):\n"
    "        assert got[k].dtype == dt, (path, k, got[k].dtype)\n"
    "    return got\n"
    "def pcd_ascii(path):\n"
    "    lines = open(path).read().split('\\n')\n"
    "    fields = next(l for l in lines if l.startswith('FIELDS')).split()[1:]\n"
    "    start = next(n for n, l in enumerate(lines) if l.startswith('DATA')) + 1\n"
    "    a = np.array([[float(x) for x in l.split()] for l in lines[start:] if l.strip()])\n"
    "    got = {f: a[:, n] for n, f in enumerate(fields)}\n"
    "    got['xyz'] = np.stack([got['x'], got['y'], got['z']], 1)\n"
    "    return got\n"
    "def pcl(cmd, out):\n"
    "    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "    a = os.path.join(d, 'ascii.pcd')\n"
    "    subprocess.run(['pcl_convert_pcd_ascii_binary', out, a, '0'], check=True, stdout=subprocess.DEVNULL,\n"
    "                   stderr=subprocess.DEVNULL)\n"
    "    return pcd_ascii(a)\n"
    "for f in ('b.ply', 'a.ply', 'b.pcd', 'a.pcd'):\n"
    "    path = os.path.join(d, f)\n"
    "    check('open3d ' + f, o3d_read(path))\n"
    "    if f.endswith('.ply'):\n"
    "        check('pcl_ply2pcd ' + f, pcl(['pcl_ply2pcd', path, os.path.join(d, 'c.pcd')], os.path.join(d, 'c.pcd')), 5e-7)\n"
    "    else:\n"
    "        check('pcl ' + f, pcl(['true'], path), 5e-7)\n"
    "# A scan of `sensim render --ply`: 32 rings of an HDL-32E, times within\n"
    "# its 0.1 s revolution (fig5's targets span a part of it), reflectivity bytes.\n"
    "scan = os.path.join(d, 'ply', 'hdl32e_00000.ply')\n"
    "p = o3d.t.io.read_point_cloud(scan)\n"
    "ring = p.point['ring'].numpy().ravel(); t = p.point['time'].numpy().ravel()\n"
    "assert len(ring) > 1000 and set(np.unique(ring)) <= set(range(32)) and len(np.unique(ring)) > 16, np.unique(ring)\n"
    "assert t.min() >= 0 and t.max() < 0.1 and t.max() - t.min() > 0.02, (t.min(), t.max())\n"
    "assert p.point['return_index'].numpy().dtype == np.uint8 and p.point['reflectivity'].numpy().max() > 0\n"
    "g = pcl(['pcl_ply2pcd', scan, os.path.join(d, 's.pcd')], os.path.join(d, 's.pcd'))\n"
    "assert np.array_equal(g['ring'].astype(np.uint16), ring) and np.allclose(g['time'], t, rtol=5e-7, atol=0)\n"
    "print('ok')\n";

START_TEST(cloud_lidar_fields_foreign)
{
    enum { N = 50 };
    char *dir = tu_mkdtemp(), cmd[4096];
    float x[4 * N], t[N];
    uint16_t ring[N];
    uint8_t ret[N], refl[N];
    for (int i = 0; i < N; i++) {
        x[4 * i] = i * 0.5f;
        x[4 * i + 1] = (float)-i;
        x[4 * i + 2] = 0.25f * (float)i;
        x[4 * i + 3] = 0.01f * (float)i;
        ring[i] = (uint16_t)(i % 16);
        t[i] = (float)i * 1e-4f;
        ret[i] = (uint8_t)(i % 3);
        refl[i] = (uint8_t)((i * 7) % 256);
    }
    sensim_cloud_fields fl = {ring, t, ret, refl};
    static const char *const names[4] = {"a.ply", "b.ply", "a.pcd", "b.pcd"};
    static const sensim_cloud_format fmts[4] = {SENSIM_CLOUD_PLY_ASCII, SENSIM_CLOUD_PLY_BINARY,
                                                SENSIM_CLOUD_PCD_ASCII, SENSIM_CLOUD_PCD_BINARY};
    for (int k = 0; k < 4; k++) {
        char *p = tu_path(dir, names[k]);
        ck_assert_int_eq(sensim_cloud_write_fields(p, fmts[k], x, &fl, N), SENSIM_OK);
        /* sensim's own reader takes x, y, z, intensity and skips the rest. */
        float *back;
        size_t n;
        int hi;
        ck_assert_int_eq(sensim_cloud_read(p, &back, &n, &hi, NULL), SENSIM_OK);
        ck_assert(n == N && hi && memcmp(back, x, sizeof x) == 0);
        free(back);
        free(p);
    }
    char *gt = tu_path(dir, "gt.h5"), *out = tu_path(dir, "out.h5"), *ply = tu_path(dir, "ply"),
         *scene = tu_src("data/scenes/fig5.yaml"), *py = tu_path(dir, "check.py");
    tu_run_result r = tu_run("trajectory", "--shape", "line", "--duration", "0.5", "--speed", "5", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("render", scene, "-t", gt, "-s", "hdl32e", "-o", out, "-n", "1", "--ply", ply, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    ck_assert_int_eq(tu_write_file(py, lidar_fields_py), 0);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", py, dir);
    ck_assert_msg(system(cmd) == 0, "%s failed: Open3D and PCL come from Debian's python3-open3d and pcl-tools "
                  "(scripts/setup.sh)", cmd);
    free(gt);
    free(out);
    free(ply);
    free(scene);
    free(py);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_pointcloud(void)
{
    Suite *s = suite_create("pointcloud");
    TCase *tc = tcase_create("pointcloud");
    tcase_add_test(tc, cloud_round_trips);
    tcase_add_test(tc, cloud_foreign_files);
    tcase_add_test(tc, cloud_errors);
    tcase_add_test(tc, cloud_declared_counts);
    suite_add_tcase(s, tc);
    tc = tcase_create("foreign");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cloud_lidar_fields_foreign);
    suite_add_tcase(s, tc);
    return s;
}
