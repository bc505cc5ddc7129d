/* Textured glTF and physically based camera shading (render/texture.c,
 * render/pbr.c, render/gltf.c): glTF assets written by
 * tests/data/texture_ref.py (textures by OpenCV, the glTF and GLB by hand)
 * rendered by `sensim render`, every pixel against the closed form of the
 * glTF 2.0 specification's BRDF (Appendix B, written out here from the
 * specification) with the texture's colours as OpenCV decodes them, and
 * the output PNG checked by the colour statistics of the texture's four
 * quadrants. The ground under the quads has the two-layer surface
 * material, shaded by its BRDF (sensim_material_brdf) per channel. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/log.h"
#include "sensim/png.h"
#include "sensim/render.h"
#include "testutil.h"

enum { W = 160, H = 120 };

static const double SUN[3] = {0.3, 0.2, 1}, SUN_E[3] = {0.9, 0.85, 0.8}, AMB[3] = {0.15, 0.15, 0.2};
static const double CAM[3] = {3, 0, 10};

static const char *const SCENE =
    "sun: {direction: [0.3, 0.2, 1], irradiance: [0.9, 0.85, 0.8]}\n"
    "ambient: {light: [0.15, 0.15, 0.2], sky: [0.5, 0.6, 0.9]}\n"
    "materials:\n"
    "  - {name: coat, brdf: surface, reflectance: 0.4, albedo: [0.3, 0.5, 0.2], ior: 1.5,\n"
    "     specular_roughness: 0.2, diffuse_roughness: 0.3}\n"
    "meshes:\n"
    "  - {name: quad, file: %s, up: z}\n"
    "  - {name: ground, plane: {size: [400, 400]}}\n"
    "objects:\n"
    "  - {mesh: quad}\n"
    "  - {mesh: ground, material: coat, position: [0, 0, -0.5]}\n"
    "sensors:\n"
    "  - {name: cam, type: camera, width: 160, height: 120, hfov: 90 deg, shadows: false,\n"
    "     mount: {position: [3, 0, 10], orientation: [0.70710678118654752, 0, 0.70710678118654752, 0]}}\n";

static double srgb_to_linear(double c)
{
    c /= 255;
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* glTF 2.0 Appendix B: material = mix(dielectric_brdf, metal_brdf,
 * metallic), dielectric = fresnel_mix(ior 1.5, base / pi, specular),
 * metal = conductor_fresnel(base, specular), specular = V D with
 * alpha = roughness^2, D = alpha^2 / (pi ((n.h)^2 (alpha^2 - 1) + 1)^2),
 * V = 1 / ((n.l + sqrt(alpha^2 + (1 - alpha^2)(n.l)^2)) (n.v + ...)). */
static double gltf_f(double base, double metallic, double rough, const double n[3], const double l[3],
                     const double v[3])
{
    double h[3] = {l[0] + v[0], l[1] + v[1], l[2] + v[2]}, hn = sqrt(dot3(h, h));
    for (int i = 0; i < 3; i++)
        h[i] /= hn;
    double a2 = pow(rough, 4), nl = dot3(n, l), nv = dot3(n, v), nh = dot3(n, h), vh = dot3(v, h);
    double D = a2 / (M_PI * pow(nh * nh * (a2 - 1) + 1, 2));
    double V = 1 / ((nl + sqrt(a2 + (1 - a2) * nl * nl)) * (nv + sqrt(a2 + (1 - a2) * nv * nv)));
    double f0 = 0.04, S = pow(1 - vh, 5);
    double fresnel_diel = f0 + (1 - f0) * S;
    double dielectric = (1 - fresnel_diel) * base / M_PI + fresnel_diel * V * D;
    double metal = V * D * (base + (1 - base) * S);
    return (1 - metallic) * dielectric + metallic * metal;
}

typedef struct {
    double quad_rgb[4][3]; /* the texture's quadrants as OpenCV decodes the file, 0..255 */
} texref;

/* The expected linear radiance of pixel (i, j) and what it sees: 0 the
 * textured quad (quadrant in *q), 1 the metal quad, 2 the ground; -1 for a
 * pixel within `margin` m of an edge (of a quad or a texture quadrant). */
static int expected(const sensim_render_camera *c, int i, int j, const double quads[4][3], double out[3], int *q)
{
    sensim_vec3 ds = sensim_render_camera_direction(c, i + 0.5, j + 0.5);
    const sensim_quat rot = {M_SQRT1_2, 0, M_SQRT1_2, 0};
    sensim_vec3 d = sensim_quat_rotate(rot, ds);
    double v[3] = {-d.x, -d.y, -d.z}, n[3] = {0, 0, 1}, l[3], ln = sqrt(dot3(SUN, SUN));
    for (int k = 0; k < 3; k++)
        l[k] = SUN[k] / ln;
    double t0 = -CAM[2] / d.z, x = CAM[0] + t0 * d.x, y = CAM[1] + t0 * d.y;
    const double margin = 0.08;
    int what = 2;
    if (fabs(x) < 2 + margin && fabs(y) < 2 + margin)
        what = 0;
    else if (fabs(x - 6) < 2 + margin && fabs(y) < 2 + margin)
        what = 1;
    if (what < 2 && (fabs(fabs(y) - 2) < margin || fabs(fabs(x - 6 * what) - 2) < margin))
        return -1;
    if (what == 0) {
        double u = (2 - y) / 4, vv = (2 - x) / 4;
        if (fabs(u - 0.5) < margin / 4 + 1.5 / 64 || fabs(vv - 0.5) < margin / 4 + 1.5 / 64)
            return -1;
        *q = (vv >= 0.5) * 2 + (u >= 0.5);
        for (int k = 0; k < 3; k++) {
            double base = srgb_to_linear(quads[*q][k]);
            out[k] = (0.96 * base + 0.04) * AMB[k] + M_PI * gltf_f(base, 0, 1, n, l, v) * SUN_E[k] * l[2];
        }
    } else if (what == 1) {
        const double base[3] = {0.9, 0.6, 0.2};
        for (int k = 0; k < 3; k++)
            out[k] = base[k] * AMB[k] + M_PI * gltf_f(base[k], 1, 0.4, n, l, v) * SUN_E[k] * l[2];
    } else {
        sensim_material m = sensim_material_default();
        m.brdf = SENSIM_BRDF_SURFACE;
        m.ior = 1.5;
        m.ior_k = 0;
        m.specular_roughness = 0.2;
        m.diffuse_roughness = 0.3;
        const double alb[3] = {0.3, 0.5, 0.2}, F0 = sensim_brdf_fresnel(1.5, 0, 1);
        sensim_vec3 N = {0, 0, 1}, L = {l[0], l[1], l[2]}, V = {v[0], v[1], v[2]};
        for (int k = 0; k < 3; k++) {
            m.reflectance = alb[k];
            out[k] = ((1 - F0) * alb[k] + F0) * AMB[k] + M_PI * sensim_material_brdf(&m, N, L, V) * SUN_E[k] * l[2];
        }
    }
    return what;
}

static void read_ref(const char *dir, texref *png, texref *jpg)
{
    char *p = tu_path(dir, "quadrants.txt");
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    for (int k = 0; k < 8; k++) {
        char kind[8];
        texref *r = k < 4 ? png : jpg;
        ck_assert_int_eq(
            fscanf(f, "%7s %lf %lf %lf", kind, &r->quad_rgb[k % 4][0], &r->quad_rgb[k % 4][1], &r->quad_rgb[k % 4][2]),
            4);
    }
    fclose(f);
    free(p);
}

static float *render(const char *dir, const char *mesh, const char *name, int as_float, const char *png_dir)
{
    char text[4096], scene_name[64];
    snprintf(scene_name, sizeof scene_name, "scene-%s.yaml", name);
    snprintf(text, sizeof text, SCENE, mesh);
    char *scene = tu_path(dir, scene_name), *gt = tu_path(dir, "gt.h5"), *out = tu_path(dir, name);
    ck_assert_int_eq(tu_write_file(scene, text), 0);
    tu_run_result r =
        as_float ? tu_run("render", scene, "-t", gt, "-s", "cam", "-n", "1", "-o", out, "--float", NULL)
                 : tu_run("render", scene, "-t", gt, "-s", "cam", "-n", "1", "-o", out, "--png", png_dir, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    float *img = NULL;
    if (as_float) {
        sensim_log *L = sensim_log_open(out);
        ck_assert_ptr_nonnull(L);
        img = malloc(W * H * 3 * sizeof *img);
        ck_assert_int_eq(sensim_log_read(L, "/sensors/cam/image", SENSIM_F32, 0, 1, img), SENSIM_OK);
        sensim_log_close(L);
    }
    free(scene), free(gt), free(out);
    return img;
}

static char *make_assets(void)
{
    char *dir = tu_mkdtemp(), *script = tu_src("tests/data/texture_ref.py"), cmd[8192];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", script, dir);
    ck_assert_msg(system(cmd) == 0, "%s failed (python3-opencv, scripts/setup.sh)", cmd);
    free(script);
    char *gt = tu_path(dir, "gt.h5");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "1", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    free(gt);
    return dir;
}

/* Every pixel of the .gltf (PNG texture, file named by a percent-encoded
 * URI) and of the .glb (JPEG in a bufferView) against the closed form. */
START_TEST(textured_gltf_pixels)
{
    char *dir = make_assets();
    texref png, jpg;
    read_ref(dir, &png, &jpg);
    sensim_render_camera_params cp = sensim_render_camera_default_params();
    cp.width = W;
    cp.height = H;
    cp.hfov = M_PI / 2;
    sensim_render_camera *c = sensim_render_camera_create(&cp);
    for (int file = 0; file < 2; file++) {
        float *img = render(dir, file ? "quad.glb" : "quad.gltf", file ? "glb.h5" : "gltf.h5", 1, NULL);
        const texref *ref = file ? &jpg : &png;
        size_t seen[3] = {0, 0, 0}, quad_seen[4] = {0, 0, 0, 0};
        double worst = 0;
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++) {
                double e[3];
                int q = -1, what = expected(c, i, j, ref->quad_rgb, e, &q);
                if (what < 0)
                    continue;
                seen[what]++;
                if (q >= 0)
                    quad_seen[q]++;
                for (int k = 0; k < 3; k++) {
                    double got = img[3 * ((size_t)j * W + i) + k];
                    /* PNG: exact texels; JPEG: OpenCV's quadrant mean, within
                     * a level of the decoded texels. */
                    double tol = (file && what == 0 ? 0.012 : 2e-5) * fmax(e[k], 0.05);
                    worst = fmax(worst, fabs(got - e[k]) / fmax(e[k], 0.05));
                    ck_assert_msg(fabs(got - e[k]) <= tol,
                                  "%s pixel (%d, %d) channel %d (sees %d): %.7g, expected %.7g", file ? "glb" : "gltf",
                                  i, j, k, what, got, e[k]);
                }
            }
        ck_assert_msg(seen[0] > 500 && seen[1] > 500 && seen[2] > 5000, "%zu %zu %zu", seen[0], seen[1], seen[2]);
        for (int q = 0; q < 4; q++)
            ck_assert_uint_gt(quad_seen[q], 150);
        free(img);
    }
    sensim_render_camera_destroy(c);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* The 8-bit PNG that `sensim render --png` writes: in each quadrant of the
 * texture, the mean colour is the sRGB encoding of the closed form (within
 * a level) and the region is flat; the four quadrants differ as the
 * texture's colours do (the texture is there, unflipped, unrotated). */
START_TEST(textured_png_regions)
{
    char *dir = make_assets();
    texref png, jpg;
    read_ref(dir, &png, &jpg);
    char *pdir = tu_path(dir, "png");
    render(dir, "quad.gltf", "png.h5", 0, pdir);
    char *file = tu_path(pdir, "cam_00000.png");
    sensim_image_info info;
    uint8_t *px = NULL;
    ck_assert_msg(sensim_png_read(file, 0, &info, (void **)&px) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert(info.width == W && info.height == H && info.channels == 3 && info.bit_depth == 8);
    sensim_render_camera_params cp = sensim_render_camera_default_params();
    cp.width = W;
    cp.height = H;
    cp.hfov = M_PI / 2;
    sensim_render_camera *c = sensim_render_camera_create(&cp);
    double sum[4][3] = {{0}}, sum2[4][3] = {{0}}, esum[4][3] = {{0}};
    size_t n[4] = {0};
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) {
            double e[3];
            int q = -1;
            if (expected(c, i, j, png.quad_rgb, e, &q) != 0)
                continue;
            n[q]++;
            for (int k = 0; k < 3; k++) {
                double s = e[k] <= 0.0031308 ? 12.92 * e[k] : 1.055 * pow(e[k], 1 / 2.4) - 0.055;
                double g = px[3 * ((size_t)j * W + i) + k];
                sum[q][k] += g;
                sum2[q][k] += g * g;
                esum[q][k] += 255 * fmin(fmax(s, 0), 1);
            }
        }
    for (int q = 0; q < 4; q++) {
        ck_assert_uint_gt(n[q], 150);
        for (int k = 0; k < 3; k++) {
            double mean = sum[q][k] / n[q], sd = sqrt(fmax(sum2[q][k] / n[q] - mean * mean, 0));
            ck_assert_msg(fabs(mean - esum[q][k] / n[q]) < 1.0, "quadrant %d channel %d: mean %g, expected %g", q, k,
                          mean, esum[q][k] / n[q]);
            ck_assert_msg(sd < 2.0, "quadrant %d channel %d: not flat (sd %g)", q, k, sd);
        }
    }
    /* Top left red, top right green, bottom left blue, bottom right yellow. */
    ck_assert(sum[0][0] > 2 * sum[0][1] && sum[1][1] > 2 * sum[1][0] && sum[2][2] > 2 * sum[2][0] &&
              sum[3][0] > 2 * sum[3][2] && sum[3][1] > 2 * sum[3][2]);
    free(px);
    sensim_render_camera_destroy(c);
    tu_rmtree(dir);
    free(dir), free(pdir), free(file);
}
END_TEST

/* Broken texture references are refused naming the file and JSON path. */
START_TEST(texture_errors)
{
    char *dir = make_assets(), *g = tu_path(dir, "quad.gltf");
    size_t len;
    char *text = tu_read_file(g, &len);
    ck_assert_ptr_nonnull(text);
    static const char *const cases[][3] = {
        {"quad%20tex.png", "missing.png", "images[0].uri"},
        {"\"source\": 0", "\"source\": 5", "images[5] does not exist"},
        {"\"wrapS\": 33071", "\"wrapS\": 1234", "samplers[0].wrapS"},
        {"\"material\": 1", "\"material\": 9", "materials[9] does not exist"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *at = strstr(text, cases[k][0]);
        ck_assert_msg(at != NULL, "%s", cases[k][0]);
        size_t pre = (size_t)(at - text), ol = strlen(cases[k][0]), nl = strlen(cases[k][1]);
        char *bad = malloc(len + nl + 1);
        memcpy(bad, text, pre);
        memcpy(bad + pre, cases[k][1], nl);
        strcpy(bad + pre + nl, at + ol);
        char *b = tu_path(dir, "bad.gltf");
        ck_assert_int_eq(tu_write_file(b, bad), 0);
        sensim_scene *s = sensim_scene_create();
        ck_assert_int_lt(sensim_scene_load_mesh(s, "q", b), 0);
        ck_assert_msg(strstr(sensim_last_error(), "bad.gltf") && strstr(sensim_last_error(), cases[k][2]),
                      "case %zu: %s", k, sensim_last_error());
        sensim_scene_destroy(s);
        free(bad), free(b);
    }
    /* Not a PNG or JPEG. */
    char *png = tu_path(dir, "quad tex.png");
    ck_assert_int_eq(tu_write_file(png, "GIF89a not an image"), 0);
    sensim_scene *s = sensim_scene_create();
    ck_assert_int_lt(sensim_scene_load_mesh(s, "q", g), 0);
    ck_assert_msg(strstr(sensim_last_error(), "images[0]") && strstr(sensim_last_error(), "not a PNG or JPEG"), "%s",
                  sensim_last_error());
    /* A PNG cut short. */
    ck_assert_int_eq(tu_write_file(png, "\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), 0);
    ck_assert_int_lt(sensim_scene_load_mesh(s, "q2", g), 0);
    ck_assert_msg(strstr(sensim_last_error(), "PNG"), "%s", sensim_last_error());
    sensim_scene_destroy(s);
    free(text), free(png), free(g);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_texture(void)
{
    Suite *s = suite_create("texture");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, textured_gltf_pixels);
    tcase_add_test(tc, textured_png_regions);
    tcase_add_test(tc, texture_errors);
    suite_add_tcase(s, tc);
    return s;
}
