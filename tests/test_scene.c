/* Scenes: ranges to planes and spheres against geometry, moving objects at
 * their own time, mesh files (OBJ, PLY) and the errors for bad ones. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/render.h"
#include "testutil.h"

/* Float geometry: vertices and ranges are float32, so ranges agree to a few
 * ulps of the largest coordinate involved (~1e-6 relative); 1e-5 m at 10 m. */
#define RTOL 2e-6

static sensim_scene *plane_scene(void)
{
    sensim_scene *s = sensim_scene_create();
    ck_assert_ptr_nonnull(s);
    int m = sensim_scene_add_plane(s, "ground", 200, 200, 4, 4);
    ck_assert_int_ge(m, 0);
    ck_assert_int_ge(sensim_scene_add_object(s, m, 0, sensim_pose_identity()), 0);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    return s;
}

START_TEST(plane_ranges)
{
    sensim_scene *s = plane_scene();
    sensim_vec3 o = sensim_vec3_make(1, 2, 5);
    for (int i = 0; i < 50; i++) {
        double az = 0.3 * i, el = -0.1 - 1.4 * i / 50.0;
        sensim_vec3 d = sensim_vec3_make(cos(el) * cos(az), cos(el) * sin(az), sin(el));
        sensim_hit h;
        ck_assert_int_eq(sensim_scene_intersect(s, o, d, 0, 0, 1e4, &h), SENSIM_OK);
        double expect = 5 / -sin(el);
        ck_assert_within(h.distance, expect, RTOL * 100 + 1e-6 * expect);
        ck_assert_within(h.normal.z, 1.0, 1e-6);
        ck_assert_int_eq(h.object, 0);
    }
    sensim_hit h;
    sensim_scene_intersect(s, o, sensim_vec3_make(0, 0, 1), 0, 0, 1e4, &h);
    ck_assert(isinf(h.distance) && h.object == -1);
    sensim_scene_destroy(s);
}
END_TEST

START_TEST(sphere_ranges)
{
    sensim_scene *s = sensim_scene_create();
    const double R = 2, D = 10;
    const int N = 64;
    int m = sensim_scene_add_sphere(s, "ball", R, N);
    ck_assert_int_ge(m, 0);
    sensim_pose at = sensim_pose_identity();
    at.p = sensim_vec3_make(D, 0, 0);
    ck_assert_int_ge(sensim_scene_add_object(s, m, 0, at), 0);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    /* Rays from the sphere centre's side through tessellation vertices hit
     * them exactly: range = |v - o|. Aim from o at vertex (ring r, index i). */
    sensim_vec3 o = sensim_vec3_make(0, 0, 0);
    for (int r = 1; r < N / 2; r += 3)
        for (int i = 0; i < N; i += 5) {
            double th = -M_PI / 2 + M_PI * r / (N / 2), a = 2 * M_PI * i / N;
            sensim_vec3 v = sensim_vec3_make(D + R * cos(th) * cos(a), R * cos(th) * sin(a), R * sin(th));
            sensim_vec3 nv = sensim_vec3_sub(v, sensim_vec3_make(D, 0, 0));
            if (sensim_vec3_dot(nv, sensim_vec3_scale(v, -1)) < 0.5)
                continue; /* only vertices facing the origin are visible */
            sensim_hit h;
            sensim_scene_intersect(s, o, v, 0, 0, 100, &h);
            ck_assert_within(h.distance, sensim_vec3_norm(v), 2e-5);
        }
    /* Any ray: the inscribed mesh lies inside the sphere by at most
     * R (1 - cos(delta)), delta = sqrt(2) pi / N the half-diagonal angle of a
     * facet; along a ray at incidence i that is a range error / cos(i). */
    double sag = R * (1 - cos(sqrt(2.0) * M_PI / N));
    for (int k = 0; k < 40; k++) {
        double y = -1.5 + 3.0 * k / 40, z = 0.7 * sin(k);
        sensim_vec3 d = sensim_vec3_make(D, y, z);
        d = sensim_vec3_scale(d, 1 / sensim_vec3_norm(d));
        double b = sensim_vec3_dot(d, sensim_vec3_make(D, 0, 0)), c = D * D - R * R;
        double expect = b - sqrt(b * b - c), cos_i = sqrt(b * b - c) / R;
        sensim_hit h;
        sensim_scene_intersect(s, o, d, 0, 0, 100, &h);
        ck_assert(h.distance >= expect - 1e-5);
        ck_assert_within(h.distance, expect, sag / cos_i + 1e-5);
        /* The normal points back towards the sensor side. */
        ck_assert(h.normal.x < 0);
    }
    ck_assert_uint_eq(sensim_scene_triangle_count(s), (size_t)N * (N / 2 - 1) * 2);
    sensim_scene_destroy(s);
}
END_TEST

START_TEST(moving_object_own_time)
{
    sensim_scene *s = sensim_scene_create();
    int m = sensim_scene_add_box(s, "car", 1, 1, 1);
    double t[2] = {0, 1};
    sensim_pose kp[2] = {sensim_pose_identity(), sensim_pose_identity()};
    kp[0].p = sensim_vec3_make(10, 0, 0);
    kp[1].p = sensim_vec3_make(20, 0, 0);
    ck_assert_int_ge(sensim_scene_add_moving_object(s, m, 0, t, kp, 2, 0), 0);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    for (int i = 0; i <= 10; i++) {
        double ti = -0.2 + 0.14 * i, x = 10 + 10 * fmin(1, fmax(0, ti));
        sensim_hit h;
        sensim_scene_intersect(s, sensim_vec3_make(0, 0, 0), sensim_vec3_make(1, 0, 0), ti, 0, 100, &h);
        ck_assert_within(h.distance, x - 0.5, 1e-4);
        ck_assert_within(h.normal.x, -1, 1e-6);
    }
    sensim_pose p;
    ck_assert_int_eq(sensim_scene_object_pose(s, 0, 0.5, &p), SENSIM_OK);
    ck_assert_within(p.p.x, 15, 1e-12);
    sensim_scene_destroy(s);
}
END_TEST

START_TEST(rotating_object_normal)
{
    /* A plate spinning about z: at t = 0.25 s it has turned 45 deg and the
     * world normal seen by the ray must say so (instance hits report normals
     * in object space; the scene rotates them). */
    sensim_scene *s = sensim_scene_create();
    int m = sensim_scene_add_box(s, "plate", 0.1, 4, 4);
    double t[3] = {0, 0.25, 0.5};
    sensim_pose kp[3];
    for (int i = 0; i < 3; i++) {
        kp[i].p = sensim_vec3_make(10, 0, 0);
        kp[i].q = sensim_quat_axis_angle(sensim_vec3_make(0, 0, 1), M_PI / 4 * i);
    }
    ck_assert_int_ge(sensim_scene_add_moving_object(s, m, 0, t, kp, 3, 129), 0);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    sensim_hit h;
    sensim_scene_intersect(s, sensim_vec3_make(0, 0, 0), sensim_vec3_make(1, 0, 0), 0.25, 0, 100, &h);
    ck_assert_within(h.normal.x, -cos(M_PI / 4), 1e-3);
    ck_assert_within(fabs(h.normal.y), sin(M_PI / 4), 1e-3);
    ck_assert_within(h.distance, 10 - 0.05 / cos(M_PI / 4), 2e-3);
    sensim_scene_destroy(s);
}
END_TEST

START_TEST(mesh_files)
{
    char *dir = tu_mkdtemp();
    char *obj = tu_path(dir, "quad.obj"), *ply = tu_path(dir, "quad.ply"), *bply = tu_path(dir, "b.ply");
    ck_assert_int_eq(tu_write_file(obj, "# a quad facing -x at x = 7\nv 7 -1 -1\nv 7 1 -1\nv 7 1 1\nv 7 -1 1\n"
                                        "vn 1 0 0\nf 1//1 2//1 3//1 4//1\n"),
                     0);
    ck_assert_int_eq(tu_write_file(ply, "ply\nformat ascii 1.0\ncomment x\nelement vertex 3\nproperty float x\n"
                                        "property float y\nproperty float z\nelement face 1\n"
                                        "property list uchar int vertex_indices\nend_header\n"
                                        "0 -1 3\n0 1 3\n0 0 5\n3 0 1 2\n"),
                     0);
    /* Binary little-endian PLY: one triangle at z = 6. */
    {
        const char *hdr = "ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\n"
                          "property float y\nproperty float z\nelement face 1\n"
                          "property list uchar int vertex_indices\nend_header\n";
        float v[9] = {-1, -1, 6, 1, -1, 6, 0, 2, 6};
        unsigned char cnt = 3;
        int idx[3] = {0, 1, 2};
        FILE *f = fopen(bply, "wb");
        fwrite(hdr, 1, strlen(hdr), f);
        fwrite(v, sizeof v, 1, f);
        fwrite(&cnt, 1, 1, f);
        fwrite(idx, sizeof idx, 1, f);
        fclose(f);
    }
    sensim_scene *s = sensim_scene_create();
    int a = sensim_scene_load_mesh(s, "quad", obj), b = sensim_scene_load_mesh(s, "tri", ply);
    int c = sensim_scene_load_mesh(s, "btri", bply);
    ck_assert_msg(a >= 0 && b >= 0 && c >= 0, "%s", sensim_last_error());
    sensim_scene_add_object(s, a, 0, sensim_pose_identity());
    sensim_scene_add_object(s, b, 0, sensim_pose_identity());
    sensim_scene_add_object(s, c, 0, sensim_pose_identity());
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    sensim_hit h;
    sensim_scene_intersect(s, sensim_vec3_make(0, 0, 0), sensim_vec3_make(1, 0.1, 0.1), 0, 0, 100, &h);
    ck_assert_within(h.distance, 7 * sqrt(1.02), 1e-5);
    sensim_scene_intersect(s, sensim_vec3_make(-5, 0, 4), sensim_vec3_make(1, 0, 0), 0, 0, 100, &h);
    ck_assert_within(h.distance, 5, 1e-5);
    sensim_scene_intersect(s, sensim_vec3_make(0, 0, 0), sensim_vec3_make(0, 0, 1), 0, 0, 100, &h);
    ck_assert_within(h.distance, 6, 1e-5);
    ck_assert_uint_eq(sensim_scene_triangle_count(s), 4);
    sensim_scene_destroy(s);
    free(obj);
    free(ply);
    free(bply);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Loads `text` as a mesh file named `name` and checks the error mentions
 * `expect`. */
static void expect_mesh_error(const char *name, const char *text, const char *expect)
{
    char *dir = tu_mkdtemp(), *p = tu_path(dir, name);
    ck_assert_int_eq(tu_write_file(p, text), 0);
    sensim_scene *s = sensim_scene_create();
    ck_assert_int_lt(sensim_scene_load_mesh(s, "m", p), 0);
    ck_assert_msg(strstr(sensim_last_error(), expect) != NULL, "message '%s' lacks '%s'", sensim_last_error(),
                  expect);
    ck_assert_msg(strstr(sensim_last_error(), name) != NULL, "message '%s' lacks the file name",
                  sensim_last_error());
    sensim_scene_destroy(s);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

START_TEST(degenerate_triangles_dropped)
{
    /* An OBJ of a 10 x 10 grid (200 triangles) with 4 collinear and repeated
     * faces among them loads: the 4 are dropped and counted, the 200 kept,
     * and a ray still hits the grid (what the whole mesh was refused for). */
    char *dir = tu_mkdtemp(), *p = tu_path(dir, "grid.obj");
    size_t cap = 64 * 1024, len = 0;
    char *text = malloc(cap);
    for (int j = 0; j <= 10; j++)
        for (int i = 0; i <= 10; i++)
            len += (size_t)snprintf(text + len, cap - len, "v %d %d 0\n", i, j);
    for (int j = 0; j < 10; j++)
        for (int i = 0; i < 10; i++) {
            int a = j * 11 + i + 1, b = a + 1, c = a + 11, d = c + 1;
            len += (size_t)snprintf(text + len, cap - len, "f %d %d %d\nf %d %d %d\n", a, b, d, a, d, c);
            if (i == 3 && j < 4) /* collinear along a row, or a repeated vertex */
                len += (size_t)snprintf(text + len, cap - len, j % 2 ? "f %d %d %d\n" : "f %d %d %d\n", a, b,
                                        j % 2 ? a : b + 1);
        }
    ck_assert_int_eq(tu_write_file(p, text), 0);
    sensim_scene *s = sensim_scene_create();
    int m = sensim_scene_load_mesh(s, "grid", p);
    ck_assert_msg(m >= 0, "%s", sensim_last_error());
    size_t nt = 0;
    ck_assert_int_eq(sensim_scene_mesh_info(s, m, NULL, &nt, NULL, NULL), SENSIM_OK);
    ck_assert_uint_eq(nt, 200);
    ck_assert_uint_eq(sensim_scene_mesh_dropped(s, m), 4);
    ck_assert_str_eq(sensim_scene_mesh_name(s, m), "grid");
    ck_assert_uint_eq(sensim_scene_mesh_count(s), 1);
    ck_assert_int_ge(sensim_scene_add_object(s, m, 0, sensim_pose_identity()), 0);
    ck_assert_int_eq(sensim_scene_commit(s), SENSIM_OK);
    sensim_hit h;
    ck_assert_int_eq(sensim_scene_intersect(s, sensim_vec3_make(3.5, 2.5, 5), sensim_vec3_make(0, 0, -1), 0, 0, 100, &h),
                     SENSIM_OK);
    ck_assert_within(h.distance, 5.0, 1e-5);
    sensim_scene_destroy(s);
    free(text);
    free(p);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(bad_meshes)
{
    expect_mesh_error("nan.obj", "v 0 0 0\nv nan 1 0\nv 0 0 1\nf 1 2 3\n", ":2: vertex 2 is not finite");
    /* Only degenerate triangles: nothing usable is left. */
    expect_mesh_error("degen.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nf 1 2 3\nf 1 1 4\n",
                      ":5: no usable triangle: all 2 are degenerate");
    expect_mesh_error("range.obj", "v 0 0 0\nv 1 0 0\nf 1 2 3\n", ":3: vertex index 3 out of range");
    expect_mesh_error("short.obj", "v 0 0\n", ":1: vertex needs three numbers");
    expect_mesh_error("bad.ply", "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                                 "property float z\nelement face 1\nproperty list uchar int vertex_indices\n"
                                 "end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n",
                      ":13: vertex index 7 out of range");
    expect_mesh_error("trunc.ply", "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                                   "property float z\nend_header\n0 0 0\n",
                      "file ends inside element 'vertex'");
    expect_mesh_error("x.mesh3", "solid\n", "unknown mesh format");
    sensim_scene *s = sensim_scene_create();
    ck_assert_int_lt(sensim_scene_load_mesh(s, "m", "/nonexistent/dir/tree.obj"), 0);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "/nonexistent/dir/tree.obj: cannot open mesh"));
    /* Programmatic meshes: the message names the mesh and triangle. */
    float v[9] = {0, 0, 0, 1, 0, 0, 1, 0, 0};
    uint32_t t[3] = {0, 1, 2};
    ck_assert_int_lt(sensim_scene_add_mesh(s, "flat", v, 3, t, 1), 0);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "mesh 'flat': no usable triangle"));
    v[4] = NAN;
    ck_assert_int_lt(sensim_scene_add_mesh(s, "nan", v, 3, t, 1), 0);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "mesh 'nan': vertex 1 is not finite"));
    ck_assert_int_lt(sensim_scene_add_sphere(s, "s", -1, 8), 0);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "sphere 's'"));
    sensim_material mat = sensim_material_default();
    mat.reflectance = 1.5;
    snprintf(mat.name, sizeof mat.name, "shiny");
    ck_assert_int_lt(sensim_scene_add_material(s, &mat), 0);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "material 'shiny': reflectance"));
    ck_assert_int_lt(sensim_scene_add_object(s, 0, 0, sensim_pose_identity()), 0);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "no mesh 0"));
    ck_assert_int_ne(sensim_scene_commit(s), SENSIM_OK);
    sensim_scene_destroy(s);
    sensim_scene_destroy(NULL);
}
END_TEST

START_TEST(committed_is_frozen)
{
    sensim_scene *s = plane_scene();
    ck_assert_int_lt(sensim_scene_add_box(s, "late", 1, 1, 1), 0);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "already committed"));
    ck_assert_int_ne(sensim_scene_commit(s), SENSIM_OK);
    sensim_scene_destroy(s);
}
END_TEST

START_TEST(yaml_scenes_load)
{
    char *fig5 = tu_src("data/scenes/fig5.yaml"), *outdoor = tu_src("data/scenes/outdoor.yaml");
    sensim_scene *s = sensim_scene_load(fig5);
    ck_assert_msg(s != NULL, "%s", sensim_last_error());
    ck_assert_uint_eq(sensim_scene_object_count(s), 1 + 2 * 131);
    /* A cylinder of the left row at x = 0: the ray along +y from the path
     * hits its surface at y = 3.5. */
    sensim_hit h;
    sensim_scene_intersect(s, sensim_vec3_make(0, 0, 1), sensim_vec3_make(0, 1, 0), 0, 0, 100, &h);
    ck_assert_within(h.distance, 3.5, 1e-5);
    ck_assert_str_eq(sensim_scene_material(s, h.material)->name, "post");
    sensim_scene_destroy(s);
    sensim_render_sensor rs;
    ck_assert_int_eq(sensim_render_sensor_load(fig5, "hdl32e", &rs), SENSIM_OK);
    ck_assert_int_eq(rs.type, SENSIM_SENSOR_LIDAR);
    ck_assert_int_eq(rs.lidar.columns, 1085);
    ck_assert_within(rs.mount.p.z, 1.0, 0);
    ck_assert_int_eq(sensim_render_sensor_load(fig5, "hdl32e_wide", &rs), SENSIM_OK);
    ck_assert_within(rs.lidar.divergence, 3e-3, 1e-15);
    ck_assert_int_eq(rs.lidar.returns, SENSIM_RETURN_DUAL);
    ck_assert_int_eq(sensim_render_sensor_load(fig5, "cam", &rs), SENSIM_OK);
    ck_assert_int_eq(rs.type, SENSIM_SENSOR_CAMERA);
    ck_assert_within(rs.camera.hfov, M_PI / 2, 1e-12);
    ck_assert_int_eq(rs.camera.lens, SENSIM_RENDER_LENS_FOV);
    ck_assert_int_eq(sensim_render_sensor_load(fig5, "nope", &rs), SENSIM_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "no sensor named 'nope'"));
    s = sensim_scene_load(outdoor);
    ck_assert_msg(s != NULL, "%s", sensim_last_error());
    /* The car drives off between t = 2 s and 6 s. */
    sensim_scene_intersect(s, sensim_vec3_make(12, -10, 1), sensim_vec3_make(0, 1, 0), 1.0, 0, 100, &h);
    ck_assert_within(h.distance, 6 - 0.9, 1e-4);
    sensim_scene_intersect(s, sensim_vec3_make(12, -10, 1), sensim_vec3_make(0, 1, 0), 5.0, 0, 100, &h);
    ck_assert(h.distance > 6);
    sensim_scene_destroy(s);
    ck_assert_int_eq(sensim_render_sensor_load(outdoor, "vlp16", &rs), SENSIM_OK);
    ck_assert_int_eq(rs.lidar.pattern, SENSIM_BEAM_SUNFLOWER);
    free(fig5);
    free(outdoor);
}
END_TEST

/* Writes `text` as scene.yaml (plus a bad OBJ beside it) and checks that
 * loading fails with a message containing `expect`. */
static void expect_scene_error(const char *text, const char *expect)
{
    char *dir = tu_mkdtemp(), *p = tu_path(dir, "scene.yaml"), *obj = tu_path(dir, "nan.obj");
    ck_assert_int_eq(tu_write_file(p, text), 0);
    ck_assert_int_eq(tu_write_file(obj, "v 0 0 0\nv 1 0 0\nv 0 nan 0\nf 1 2 3\n"), 0);
    sensim_scene *s = sensim_scene_load(p);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(sensim_last_error(), expect) != NULL, "message '%s' lacks '%s'", sensim_last_error(),
                  expect);
    free(p);
    free(obj);
    tu_rmtree(dir);
    free(dir);
}

START_TEST(yaml_bad_scenes)
{
    expect_scene_error("meshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - {mesh: b, material: gold}\n",
                       "scene.yaml:4: unknown material 'gold'");
    expect_scene_error("meshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - {mesh: c}\n",
                       "scene.yaml:4: unknown mesh 'c'");
    expect_scene_error("meshes:\n  - {name: t, file: tree.obj}\nobjects:\n  - {mesh: t}\n",
                       "tree.obj: cannot open mesh");
    expect_scene_error("meshes:\n  - {name: t, file: nan.obj}\nobjects:\n  - {mesh: t}\n",
                       "nan.obj:3: vertex 3 is not finite");
    expect_scene_error("meshes:\n  - {name: b, box: {size: [1, 1, 1]}, colour: red}\nobjects: []\n",
                       "scene.yaml:2: unknown key 'colour'");
    expect_scene_error("meshes:\n  - {name: b, box: {size: [1, -1, 1]}}\nobjects: []\n",
                       "scene.yaml:2: mesh 'b'");
    expect_scene_error("materials:\n  - {name: m, reflectance: 2}\nmeshes: []\nobjects: []\n", "scene.yaml:2");
    expect_scene_error("meshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - mesh: b\n    keyframes:\n"
                       "      - {t: 1}\n      - {t: 0}\n",
                       "scene.yaml:7: keyframe times must increase");
    expect_scene_error("materials:\n  - {name: m, ior: 1.5}\nmeshes: []\nobjects: []\n",
                       "scene.yaml:2: key 'ior': only for brdf: surface");
    expect_scene_error("materials:\n  - {name: m, brdf: surface, specular_roughness: 0}\nmeshes: []\nobjects: []\n",
                       "scene.yaml:2");
    expect_scene_error("materials:\n  - {name: m, brdf: velvet}\nmeshes: []\nobjects: []\n",
                       "expected lambert, retro or surface");
    expect_scene_error("meshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - {mesh: b}\n"
                       "atmosphere: {extinction: 0.01, returns: {probability: 0.5, scale: 3}}\n",
                       "scene.yaml:5");
    expect_scene_error("meshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - {mesh: b}\n"
                       "atmosphere: {extinction: 0.01, returns: {probability: 1.5, shape: 2, scale: 3}}\n",
                       "scene.yaml:5");
    /* Lights: the setter's complaint at the map's line, key checks. */
    expect_scene_error("meshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - {mesh: b}\n"
                       "sun: {direction: [0, 0, 0]}\n",
                       "scene.yaml:5: sun: direction must be a finite non-zero vector");
    expect_scene_error("meshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - {mesh: b}\n"
                       "sun: {direction: [0, 0, 1], bogus: 1}\n",
                       "scene.yaml:5: unknown key 'bogus' in sun");
    expect_scene_error("meshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - {mesh: b}\n"
                       "sun: {irradiance: [1, 1, 1]}\nambient: {sky: [0.5, -1, 0.5]}\n",
                       "scene.yaml:6: ambient: light and sky must be finite and >= 0");
    expect_scene_error("meshes:\n  - {name: b, box: {size: [1, 1, 1]}}\nobjects:\n  - {mesh: b}\n"
                       "ambient: {light: [1, 2]}\n",
                       "scene.yaml:5: key 'light': expected 3 numbers, got 2");
    expect_scene_error("meshes: []\nobjects: []\n", "no objects");
    expect_scene_error("objects: []\n", "missing key 'meshes'");
}
END_TEST

/* PLY element counts are checked against the file before any row is read:
 * an element of no properties declared with 2^63 rows once spun for ever in
 * a binary file. */
START_TEST(scene_ply_counts_bounded)
{
    char *dir = tu_mkdtemp();
    char *p = tu_path(dir, "big.ply");
    sensim_scene *s = sensim_scene_create();
    tu_write_file(p, "ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                     "property float z\nelement pad 9223372036854775807\nend_header\n");
    ck_assert_int_lt(sensim_scene_load_mesh(s, "m", p), 0);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "big.ply:7: element 'pad' declares 9223372036854775807 rows"));
    tu_write_file(p, "ply\nformat ascii 1.0\nelement vertex 99999999999999999999999\nproperty float x\nend_header\n");
    ck_assert_int_lt(sensim_scene_load_mesh(s, "m", p), 0);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "big.ply:3: bad element line"));
    sensim_scene_destroy(s);
    /* Generated meshes: a terrain of 10^10 cells asked for 120 GB. */
    char *y = tu_path(dir, "huge.yaml");
    tu_write_file(y, "meshes:\n  - name: ground\n    terrain: {size: [100, 100], cells: [100000, 100000]}\n");
    ck_assert_ptr_null(sensim_scene_load(y));
    ck_assert_msg(strstr(sensim_last_error(), "huge.yaml:3:") && strstr(sensim_last_error(), "at most 67108864"), "%s",
                  sensim_last_error());
    tu_write_file(y, "meshes:\n  - name: ball\n    sphere: {radius: 1, segments: 100000}\n");
    ck_assert_ptr_null(sensim_scene_load(y));
    ck_assert_msg(strstr(sensim_last_error(), "huge.yaml:3:") && strstr(sensim_last_error(), "segments"), "%s",
                  sensim_last_error());
    free(y);
    tu_rmtree(dir);
    free(dir);
    free(p);
}
END_TEST

Suite *suite_scene(void)
{
    Suite *su = suite_create("scene");
    TCase *tc = tcase_create("scene");
    tcase_add_test(tc, plane_ranges);
    tcase_add_test(tc, sphere_ranges);
    tcase_add_test(tc, moving_object_own_time);
    tcase_add_test(tc, rotating_object_normal);
    tcase_add_test(tc, mesh_files);
    tcase_add_test(tc, bad_meshes);
    tcase_add_test(tc, degenerate_triangles_dropped);
    tcase_add_test(tc, committed_is_frozen);
    tcase_add_test(tc, yaml_scenes_load);
    tcase_add_test(tc, yaml_bad_scenes);
    suite_add_tcase(su, tc);
    /* Its own case with a short timeout: the bug it guards against hangs. */
    TCase *tl = tcase_create("scene_limits");
    tcase_set_timeout(tl, 60);
    tcase_add_test(tl, scene_ply_counts_bounded);
    suite_add_tcase(su, tl);
    return su;
}
