/* Textured glTF and physically based camera shading (render/texture.c,
 * render/pbr.c, render/gltf.c): glTF assets written by
 * tests/data/texture_ref.py (textures by OpenCV, the glTF and GLB by hand)
 * rendered by `sensim render`, every pixel against the closed form of the
 * glTF 2.0 specification's BRDF (Appendix B, written out here from the
 * specification) with the texture's colours as OpenCV decodes them, and
 * the output PNG checked by the colour statistics of the texture's four
 * quadrants. The ground under the quads has the two-layer surface
 * material, shaded by its BRDF (sensim_material_brdf) per channel.
 *
 * A textured cube written by tests/data/khronos_ref.py (its texture made
 * by NumPy, encoded by OpenCV), and the Khronos sample BoxTextured where
 * it is at hand (../shared/data/khronos/, CC BY 4.0; kept beside the
 * repository, not in it), are rendered as written, with
 * KHR_texture_transform (the extension's own example, and a second texture
 * coordinate set) and Draco-compressed (variants by khronos_ref.py and
 * draco_transcoder); each PNG is checked by the colour statistics of flat
 * regions of its texture, decoded by OpenCV, against the closed form. The
 * Khronos TextureCoordinateTest and data/scenes/khronos.yaml are rendered
 * when ../shared/data/khronos/ has them, and say SKIP otherwise. */
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
    double quad_mr[4][2];  /* each quadrant's metallic and roughness */
} texref;

/* The expected linear radiance of pixel (i, j) and what it sees: 0 the
 * textured quad (quadrant in *q, of base colour quads and metallic and
 * roughness mr), 1 the metal quad, 2 the ground; -1 for a pixel within
 * `margin` m of an edge (of a quad or a texture quadrant). */
static int expected(const sensim_render_camera *c, int i, int j, const double quads[4][3], const double mr[4][2],
                    double out[3], int *q)
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
        const double m = mr[*q][0], r = mr[*q][1];
        for (int k = 0; k < 3; k++) {
            double base = srgb_to_linear(quads[*q][k]), ka = (1 - m) * (0.96 * base + 0.04) + m * base;
            out[k] = ka * AMB[k] + M_PI * gltf_f(base, m, r, n, l, v) * SUN_E[k] * l[2];
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
    for (int q = 0; q < 4; q++) /* quad.gltf's textured material: metallic 0, roughness 1 */
        png->quad_mr[q][0] = jpg->quad_mr[q][0] = 0, png->quad_mr[q][1] = jpg->quad_mr[q][1] = 1;
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

/* quad-mr.gltf's material: the PNG base colour, and metallic and
 * roughness its factors times the blue and green of its
 * metallic-roughness texture (glTF 2.0 sec. 3.9.2), as OpenCV decodes it. */
static void read_mr(const char *dir, const texref *png, texref *mr)
{
    *mr = *png;
    char *p = tu_path(dir, "mr.txt");
    FILE *f = fopen(p, "r");
    double fm, fr;
    ck_assert(f && fscanf(f, "%lf %lf", &fm, &fr) == 2);
    for (int q = 0; q < 4; q++) {
        double g, b;
        ck_assert_int_eq(fscanf(f, "%lf %lf", &g, &b), 2);
        mr->quad_mr[q][0] = fm * b / 255;
        mr->quad_mr[q][1] = fr * g / 255;
    }
    fclose(f);
    free(p);
}

/* Every pixel of the .gltf (PNG texture, file named by a percent-encoded
 * URI), of the .glb (JPEG in a bufferView) and of the .gltf with a
 * metallic-roughness texture against the closed form. */
START_TEST(textured_gltf_pixels)
{
    char *dir = make_assets();
    texref png, jpg, mr;
    read_ref(dir, &png, &jpg);
    read_mr(dir, &png, &mr);
    sensim_render_camera_params cp = sensim_render_camera_default_params();
    cp.width = W;
    cp.height = H;
    cp.hfov = M_PI / 2;
    sensim_render_camera *c = sensim_render_camera_create(&cp);
    static const char *const files[3] = {"quad.gltf", "quad.glb", "quad-mr.gltf"};
    static const char *const outs[3] = {"gltf.h5", "glb.h5", "mr.h5"};
    for (int file = 0; file < 3; file++) {
        float *img = render(dir, files[file], outs[file], 1, NULL);
        const texref *ref = file == 1 ? &jpg : file == 2 ? &mr : &png;
        size_t seen[3] = {0, 0, 0}, quad_seen[4] = {0, 0, 0, 0};
        double worst = 0;
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++) {
                double e[3];
                int q = -1, what = expected(c, i, j, ref->quad_rgb, ref->quad_mr, e, &q);
                if (what < 0)
                    continue;
                seen[what]++;
                if (q >= 0)
                    quad_seen[q]++;
                for (int k = 0; k < 3; k++) {
                    double got = img[3 * ((size_t)j * W + i) + k];
                    /* PNG: exact texels; JPEG: OpenCV's quadrant mean, within
                     * a level of the decoded texels. */
                    double tol = (file == 1 && what == 0 ? 0.012 : 2e-5) * fmax(e[k], 0.05);
                    worst = fmax(worst, fabs(got - e[k]) / fmax(e[k], 0.05));
                    ck_assert_msg(fabs(got - e[k]) <= tol,
                                  "%s pixel (%d, %d) channel %d (sees %d): %.7g, expected %.7g", files[file], i, j, k,
                                  what, got, e[k]);
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
            if (expected(c, i, j, png.quad_rgb, png.quad_mr, e, &q) != 0)
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
        {"quad%20tex.png", "quad%2gtex.png", "images[0].uri: bad percent escape"},
        {"quad%20tex.png", "data:image/png,quad", "images[0].uri: only base64 data: URIs"},
        {"\"source\": 0", "\"source\": 5", "images[5] does not exist"},
        {"\"wrapS\": 33071", "\"wrapS\": 1234", "samplers[0].wrapS"},
        {"\"material\": 1", "\"material\": 9", "materials[9] does not exist"},
        {"\"baseColorTexture\": {",
         "\"baseColorTexture\": {\"extensions\": {\"KHR_texture_transform\": {\"scale\": [2]}},",
         "materials[0].pbrMetallicRoughness.baseColorTexture.extensions.KHR_texture_transform.scale: expected 2"},
        {"\"baseColorTexture\": {", "\"baseColorTexture\": {\"texCoord\": 300,",
         "materials[0].pbrMetallicRoughness.baseColorTexture.texCoord: expected an integer 0..255"},
        {"\"baseColorTexture\": {",
         "\"metallicRoughnessTexture\": {\"index\": 0, \"texCoord\": 1}, \"baseColorTexture\": {",
         "materials[0].pbrMetallicRoughness.metallicRoughnessTexture: texture coordinate set 1, but the "
         "baseColorTexture samples set 0"},
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

/* ---- Textured boxes: our own, and the Khronos sample BoxTextured ---- */

/* Each box test is a loop test over two boxes. Box 0 is a unit cube that
 * tests/data/khronos_ref.py writes from scratch (its texture 4 x 4 flat
 * cells of sixteen colours, made by NumPy and encoded by OpenCV; its
 * positions under a node matrix), so every case runs wherever the tests
 * do. Box 1 is the Khronos sample BoxTextured (CC BY 4.0 Cesium, the
 * reference asset users try), kept beside the repository in
 * ../shared/data/khronos/ (the data of the steering repository, not
 * committed here): without it that iteration says SKIP. Both are laid out
 * alike: seen from 1 m above its top face, the face filling the middle of
 * a 200 x 200 frame. The node matrix and sensim's Y-up conversion put the
 * face at z = 0.5 with texture coordinates (u, v) = (5.5 - y, 0.5 - x)
 * (u in [5, 6], wrapped by the REPEAT sampler), so the camera, whose image
 * up is +x and left +y, sees the texture upright. */
enum { KW = 200, KH = 200 };

#define KHRONOS_DIR "../shared/data/khronos/"

/* The Khronos sample model's .gltf, or NULL (and a SKIP line) when it is
 * absent. */
static char *khronos_model_or_skip(const char *model, const char *test)
{
    char rel[256];
    snprintf(rel, sizeof rel, KHRONOS_DIR "%s/%s.gltf", model, model);
    char *p = tu_src(rel);
    if (tu_file_exists(p))
        return p;
    fprintf(stderr, "SKIP texture:%s: " KHRONOS_DIR "%s/ absent (the Khronos sample models)\n", test, model);
    free(p);
    return NULL;
}

static const char *const KSCENE =
    "sun: {direction: [0.3, 0.2, 1], irradiance: [0.9, 0.85, 0.8]}\n"
    "ambient: {light: [0.15, 0.15, 0.2], sky: [0.5, 0.6, 0.9]}\n"
    "meshes:\n"
    "  - {name: box, file: %s}\n"
    "objects:\n"
    "  - {mesh: box}\n"
    "sensors:\n"
    "  - {name: cam, type: camera, width: 200, height: 200, hfov: 60 deg, shadows: false,\n"
    "     mount: {position: [0, 0, 1.5], orientation: [0.70710678118654752, 0, 0.70710678118654752, 0]}}\n";

enum { MAXREG = 16 };
typedef struct {
    char name[16];
    double box[4]; /* texel box x0 y0 x1 y1 */
    double rgb[3]; /* mean texel, sRGB 0..255, as OpenCV decodes the PNG */
    double sd[3], flat;
} kregion;

/* A box and its references (khronos_ref.py's files) in a temporary
 * directory. */
typedef struct {
    const char *name; /* for messages */
    char *dir, *model;
    int n; /* regions */
    kregion reg[MAXREG];
    double edge; /* the texture's sharpest edge, levels from a texel to the next */
} kbox;

/* How a case maps the face's texture coordinates: which set (0, or 1 =
 * (v0, u0)) and the KHR_texture_transform's offset, rotation, scale. */
typedef struct {
    int set;
    double off[2], rot, scale[2];
} kmap;

/* The extension's map, written from the specification (its example JSON
 * and KhronosGroup/glTF issue 1563 fix the rotation's sense): uv' = T R S
 * uv, R = [cos sin; -sin cos]. */
static void kmap_apply(const kmap *m, double u, double v, double out[2])
{
    double su = m->scale[0] * u, sv = m->scale[1] * v, c = cos(m->rot), s = sin(m->rot);
    out[0] = c * su + s * sv + m->off[0];
    out[1] = -s * su + c * sv + m->off[1];
}

/* Statistics of the rendered PNG over the pixels whose texture lookup
 * falls in each region under map m, beside the closed form's. */
typedef struct {
    size_t n[MAXREG];
    double mean[MAXREG][3], sd[MAXREG][3], emean[MAXREG][3], esd[MAXREG][3];
} kstats;

static void kstats_compute(const sensim_render_camera *c, const uint8_t *px, const kbox *b, const kmap *m, kstats *st)
{
    double s[MAXREG][3] = {{0}}, s2[MAXREG][3] = {{0}}, e[MAXREG][3] = {{0}}, e2[MAXREG][3] = {{0}};
    memset(st, 0, sizeof *st);
    const sensim_quat rot = {M_SQRT1_2, 0, M_SQRT1_2, 0};
    double l[3], ln = sqrt(dot3(SUN, SUN)), n[3] = {0, 0, 1};
    for (int k = 0; k < 3; k++)
        l[k] = SUN[k] / ln;
    for (int j = 0; j < KH; j++)
        for (int i = 0; i < KW; i++) {
            sensim_vec3 d = sensim_quat_rotate(rot, sensim_render_camera_direction(c, i + 0.5, j + 0.5));
            double t = (0.5 - 1.5) / d.z, x = t * d.x, y = t * d.y;
            if (fabs(x) > 0.49 || fabs(y) > 0.49) /* a pixel's footprint is 6 mm: off the face's edges */
                continue;
            double u0 = 5.5 - y, v0 = 0.5 - x, uv[2];
            kmap_apply(m, m->set ? v0 : u0, m->set ? u0 : v0, uv);
            double tx = 256 * (uv[0] - floor(uv[0])), ty = 256 * (uv[1] - floor(uv[1]));
            for (int r = 0; r < b->n; r++) {
                const double *bx = b->reg[r].box;
                if (tx < bx[0] || tx > bx[2] || ty < bx[1] || ty > bx[3])
                    continue;
                double v[3] = {-d.x, -d.y, -d.z};
                st->n[r]++;
                for (int k = 0; k < 3; k++) {
                    /* metallic 0, roughness 1 (both boxes' material) */
                    double base = srgb_to_linear(b->reg[r].rgb[k]);
                    double L = (0.96 * base + 0.04) * AMB[k] + M_PI * gltf_f(base, 0, 1, n, l, v) * SUN_E[k] * l[2];
                    double enc = 255 * (L <= 0.0031308 ? 12.92 * L : 1.055 * pow(L, 1 / 2.4) - 0.055);
                    double g = px[3 * ((size_t)j * KW + i) + k];
                    s[r][k] += g, s2[r][k] += g * g, e[r][k] += enc, e2[r][k] += enc * enc;
                }
            }
        }
    for (int r = 0; r < b->n; r++)
        for (int k = 0; st->n[r] && k < 3; k++) {
            double nn = (double)st->n[r];
            st->mean[r][k] = s[r][k] / nn;
            st->sd[r][k] = sqrt(fmax(s2[r][k] / nn - st->mean[r][k] * st->mean[r][k], 0));
            st->emean[r][k] = e[r][k] / nn;
            st->esd[r][k] = sqrt(fmax(e2[r][k] / nn - st->emean[r][k] * st->emean[r][k], 0));
        }
}

/* Box `which` (0 ours, 1 BoxTextured) and its references; 0 (after a SKIP
 * line naming `test`) when BoxTextured is absent. */
static int kbox_make(int which, const char *test, kbox *b)
{
    memset(b, 0, sizeof *b);
    char *script = tu_src("tests/data/khronos_ref.py"), cmd[8192];
    if (which) {
        b->name = "BoxTextured";
        if (!(b->model = khronos_model_or_skip("BoxTextured", test))) {
            free(script);
            return 0;
        }
        b->dir = tu_mkdtemp();
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s box %s %s", script, b->model, b->dir);
    } else {
        b->name = "our box";
        b->dir = tu_mkdtemp();
        b->model = tu_path(b->dir, "box.gltf");
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s synth %s", script, b->dir);
    }
    ck_assert_msg(system(cmd) == 0, "%s failed (python3-opencv and draco: scripts/setup.sh)", cmd);
    free(script);
    char *p = tu_path(b->dir, "regions.txt");
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    for (;;) {
        kregion r, *g = &r;
        int got =
            fscanf(f, "%15s %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", g->name, &g->box[0], &g->box[1], &g->box[2],
                   &g->box[3], &g->rgb[0], &g->rgb[1], &g->rgb[2], &g->sd[0], &g->sd[1], &g->sd[2], &g->flat);
        if (got == EOF)
            break;
        ck_assert_int_eq(got, 12);
        /* A region is one colour as far as bilinear sampling inside it reads. */
        ck_assert_msg(g->flat <= 1, "%s region %s is not flat (%g)", b->name, g->name, g->flat);
        ck_assert_int_lt(b->n, MAXREG);
        b->reg[b->n++] = r;
    }
    ck_assert_int_eq(b->n, which ? 6 : 16);
    fclose(f);
    free(p);
    p = tu_path(b->dir, "edge.txt");
    f = fopen(p, "r");
    ck_assert(f && fscanf(f, "%lf", &b->edge) == 1);
    fclose(f);
    free(p);
    char *gt = tu_path(b->dir, "gt.h5");
    tu_run_result rr = tu_run("trajectory", "--shape", "static", "--duration", "1", "-o", gt, NULL);
    ck_assert_msg(rr.status == 0, "%s", rr.err);
    tu_run_free(&rr);
    free(gt);
    return 1;
}

static void kbox_free(kbox *b)
{
    tu_rmtree(b->dir);
    free(b->dir), free(b->model);
}

/* Renders model (a path) to an 8-bit PNG and reads it back. */
static uint8_t *khronos_render(const char *dir, const char *model, const char *tag)
{
    char text[2048], name[64];
    snprintf(text, sizeof text, KSCENE, model);
    snprintf(name, sizeof name, "%s.yaml", tag);
    char *scene = tu_path(dir, name), *gt = tu_path(dir, "gt.h5"), *out = tu_path(dir, "out.h5");
    snprintf(name, sizeof name, "png-%s", tag);
    char *pdir = tu_path(dir, name), *file = tu_path(pdir, "cam_00000.png");
    ck_assert_int_eq(tu_write_file(scene, text), 0);
    tu_run_result r = tu_run("render", scene, "-t", gt, "-s", "cam", "-n", "1", "-o", out, "--png", pdir, NULL);
    ck_assert_msg(r.status == 0, "%s: %s", model, r.err);
    tu_run_free(&r);
    sensim_image_info info;
    uint8_t *px = NULL;
    ck_assert_msg(sensim_png_read(file, 0, &info, (void **)&px) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert(info.width == KW && info.height == KH && info.channels == 3 && info.bit_depth == 8);
    free(scene), free(gt), free(out), free(pdir), free(file);
    return px;
}

/* The regions of the rendered PNG against the texture's own texels shaded
 * by the closed form. Every pixel is the closed form's value (the texels
 * of a flat region, then the BRDF and the sRGB curve) rounded to a level,
 * so a region's mean is within 0.5 level of the closed form's, plus the
 * region's flatness, and its spread at most 0.5 level above the closed
 * form's (the view-dependent specular term) and the texels'. At least
 * `want` regions must be seen by 30 pixels or more. */
static void khronos_check(const sensim_render_camera *c, const uint8_t *px, const kbox *b, const kmap *m, int want,
                          const char *what)
{
    kstats st;
    kstats_compute(c, px, b, m, &st);
    int seen = 0;
    for (int r = 0; r < b->n; r++) {
        const kregion *g = &b->reg[r];
        if (st.n[r] < 30)
            continue;
        seen++;
        for (int k = 0; k < 3; k++) {
            double tol = 0.52 + g->flat;
            ck_assert_msg(fabs(st.mean[r][k] - st.emean[r][k]) <= tol,
                          "%s, %s: region %s channel %d (%zu px): mean %.3f, closed form %.3f", b->name, what, g->name,
                          k, st.n[r], st.mean[r][k], st.emean[r][k]);
            ck_assert_msg(st.sd[r][k] <= st.esd[r][k] + g->sd[k] + 0.5,
                          "%s, %s: region %s channel %d: sd %.3f, closed form %.3f, texels %.3f", b->name, what,
                          g->name, k, st.sd[r][k], st.esd[r][k], g->sd[k]);
        }
    }
    ck_assert_msg(seen >= want, "%s, %s: %d regions in view, expected %d", b->name, what, seen, want);
}

/* The test can fail: under a wrong map (no transform, the rotation the
 * other way) some region seen by 30 pixels is 10 levels off. */
static void khronos_refute(const sensim_render_camera *c, const uint8_t *px, const kbox *b, const kmap *m,
                           const char *what)
{
    kstats st;
    kstats_compute(c, px, b, m, &st);
    double worst = 0;
    for (int r = 0; r < b->n; r++)
        for (int k = 0; st.n[r] >= 30 && k < 3; k++)
            worst = fmax(worst, fabs(st.mean[r][k] - st.emean[r][k]));
    ck_assert_msg(worst > 10, "%s, %s: a wrong texture map matches too (worst %.2f levels)", b->name, what, worst);
}

static sensim_render_camera *khronos_camera(void)
{
    sensim_render_camera_params cp = sensim_render_camera_default_params();
    cp.width = KW;
    cp.height = KH;
    cp.hfov = M_PI / 3;
    return sensim_render_camera_create(&cp);
}

/* The box as written: its texture, upright, and its material (metallic 0,
 * roughness 1), region by region. */
START_TEST(box_textured)
{
    kbox b;
    if (!kbox_make(_i, "box_textured", &b))
        return;
    uint8_t *px = khronos_render(b.dir, b.model, "plain");
    sensim_render_camera *c = khronos_camera();
    const kmap id = {0, {0, 0}, 0, {1, 1}};
    khronos_check(c, px, &b, &id, b.n, "as written");
    /* Upside down, other colours would be where each region is (the sky
     * where BoxTextured's hills are). */
    const kmap flip = {0, {0, 1}, 0, {1, -1}};
    khronos_refute(c, px, &b, &flip, "flipped");
    free(px);
    sensim_render_camera_destroy(c);
    kbox_free(&b);
}
END_TEST

/* KHR_texture_transform: the extension's own example (the lower left
 * quadrant, turned), and offset, rotation and non-uniform scale on a
 * second texture coordinate set named by the transform's texCoord. */
START_TEST(box_texture_transform)
{
    kbox b;
    if (!kbox_make(_i, "box_texture_transform", &b))
        return;
    /* Each model: the map it must show (with `want` regions) and two it
     * must not. */
    static const struct {
        const char *file, *tag;
        kmap map, wrong[2];
        int want;
        const char *what[3];
    } cases[2] = {
        {"box-transform.gltf",
         "transform",
         {0, {0, 1}, M_PI / 2, {0.5, 0.5}},
         {{0, {0, 0}, 0, {1, 1}}, {0, {0, 1}, -M_PI / 2, {0.5, 0.5}}},
         2,
         {"spec example", "spec example without the transform", "spec example rotated the other way"}},
        {"box-texcoord1.gltf",
         "texcoord1",
         {1, {0.1, -0.2}, 0.4, {0.8, 1.3}},
         {{0, {0.1, -0.2}, 0.4, {0.8, 1.3}}, {1, {0.1, -0.2}, -0.4, {0.8, 1.3}}},
         4,
         {"texCoord 1", "texCoord 1 read as 0", "texCoord 1 rotated the other way"}},
    };
    sensim_render_camera *c = khronos_camera();
    for (int k = 0; k < 2; k++) {
        char *p = tu_path(b.dir, cases[k].file);
        uint8_t *px = khronos_render(b.dir, p, cases[k].tag);
        khronos_check(c, px, &b, &cases[k].map, cases[k].want, cases[k].what[0]);
        for (int w = 0; w < 2; w++)
            khronos_refute(c, px, &b, &cases[k].wrong[w], cases[k].what[w + 1]);
        free(px), free(p);
    }
    sensim_render_camera_destroy(c);
    kbox_free(&b);
}
END_TEST

/* The Draco-compressed box (draco_transcoder, 16-bit positions and texture
 * coordinates) renders as the plain one: the same regions, and every pixel
 * of the face within a bound of the plain render. A texture coordinate
 * moves by at most half of 6 / 65535 (u spans [0, 6]), 0.0117 texel of a
 * 256-texel texture; at the texture's sharpest edge (`edge` levels from a
 * texel to the next) that is 0.0117 edge levels of texel, and the shading
 * (its linear value times at most 1.1 here, so its sRGB level times at most
 * 1.1^(1 / 2.4) = 1.04) keeps it within 0.0122 edge levels of the PNG; two
 * values that close round to levels less than 1 apart more. The Draco
 * texture coordinates dropped (read as 0) would put one colour on the face
 * and fail the regions. */
START_TEST(box_draco_texcoords)
{
    kbox b;
    if (!kbox_make(_i, "box_draco_texcoords", &b))
        return;
    char *p = tu_path(b.dir, "box-draco.gltf");
    uint8_t *plain = khronos_render(b.dir, b.model, "plain"), *dr = khronos_render(b.dir, p, "draco");
    sensim_render_camera *c = khronos_camera();
    const kmap id = {0, {0, 0}, 0, {1, 1}};
    khronos_check(c, dr, &b, &id, b.n, "Draco");
    int worst = 0, bound = (int)floor(0.5 * 6 / 65535 * 256 * 1.04 * b.edge + 1);
    size_t face = 0;
    const sensim_quat rot = {M_SQRT1_2, 0, M_SQRT1_2, 0};
    for (int j = 0; j < KH; j++)
        for (int i = 0; i < KW; i++) {
            sensim_vec3 d = sensim_quat_rotate(rot, sensim_render_camera_direction(c, i + 0.5, j + 0.5));
            double t = -1 / d.z;
            if (fabs(t * d.x) > 0.49 || fabs(t * d.y) > 0.49)
                continue;
            face++;
            for (int k = 0; k < 3; k++) {
                int diff = abs(plain[3 * ((size_t)j * KW + i) + k] - dr[3 * ((size_t)j * KW + i) + k]);
                worst = diff > worst ? diff : worst;
            }
        }
    ck_assert_uint_gt(face, 20000);
    ck_assert_msg(worst <= bound, "%s: Draco and plain renders differ by %d levels (bound %d, edge %g)", b.name, worst,
                  bound, b.edge);
    free(plain), free(dr), free(p);
    sensim_render_camera_destroy(c);
    kbox_free(&b);
}
END_TEST

/* TextureCoordinateTest (the Khronos sample, CC BY 4.0 AGI): four quads,
 * each a corner of one texture (labels, checkers, crosses on white) tinted
 * by its own baseColorFactor, before a grey back plane. The camera, 2.4 m
 * before the quads on the side the texture reads right (the model is Y-up:
 * glTF (x, y, z) is sensim's (z, x, y), so the quads stand in the plane x =
 * 0 and the camera looks along +x with glTF +x to its left), sees each
 * quad's texels 1:1. A pixel's texel comes from the quad's affine map from
 * position to TEXCOORD_0, which tests/data/khronos_ref.py fits to the
 * model's own vertices; pixels on texels that OpenCV finds black or white
 * over their whole 5 x 5 neighbourhood (the bilinear footprint and a
 * pixel's) must have, quad by quad, the closed form's colour of black or
 * white times the quad's factor (the materials give no metallicFactor:
 * glTF's default, 1, a rough metal): the texture is there, the right way
 * round, and each primitive has its own material. */
enum { TW = 600, TH = 600 };
typedef struct {
    char name[32];
    double factor[3], metallic, rough, x[2], y[2], a[3], b[3], resid;
} tquad;

static void tct_expected(const double base[3], double metallic, double rough, const double n[3], const double v[3],
                         const double sun[3], double enc[3])
{
    double l[3], ln = sqrt(dot3(sun, sun));
    for (int k = 0; k < 3; k++)
        l[k] = sun[k] / ln;
    double nl = dot3(n, l);
    for (int k = 0; k < 3; k++) {
        double ka = (1 - metallic) * (0.96 * base[k] + 0.04) + metallic * base[k];
        double L = ka * AMB[k] + M_PI * gltf_f(base[k], metallic, rough, n, l, v) * SUN_E[k] * nl;
        enc[k] = 255 * (L <= 0.0031308 ? 12.92 * L : 1.055 * pow(L, 1 / 2.4) - 0.055);
    }
}

START_TEST(khronos_texture_coordinates)
{
    char *model = khronos_model_or_skip("TextureCoordinateTest", "khronos_texture_coordinates");
    if (!model)
        return;
    char *dir = tu_mkdtemp(), *script = tu_src("tests/data/khronos_ref.py"), cmd[8192];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s texcoord %s %s", script, model, dir);
    ck_assert_msg(system(cmd) == 0, "%s failed (python3-opencv: scripts/setup.sh)", cmd);
    tquad q[4];
    double back[3], backmr[2], backz;
    char *p = tu_path(dir, "quads.txt"), bname[32];
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 4; i++) {
        tquad *t = &q[i];
        ck_assert_int_eq(fscanf(f, "%31s %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", t->name,
                                &t->factor[0], &t->factor[1], &t->factor[2], &t->metallic, &t->rough, &t->x[0],
                                &t->x[1], &t->y[0], &t->y[1], &t->a[0], &t->a[1], &t->a[2], &t->b[0], &t->b[1],
                                &t->b[2], &t->resid),
                         17);
        ck_assert(t->resid < 1e-6); /* each quad's texture coordinates are affine in x, y */
    }
    ck_assert_int_eq(
        fscanf(f, "%31s %lf %lf %lf %lf %lf %lf", bname, &back[0], &back[1], &back[2], &backmr[0], &backmr[1], &backz),
        7);
    fclose(f);
    free(p);
    p = tu_path(dir, "classes.pgm");
    f = fopen(p, "rb");
    int tw = 0, th = 0;
    ck_assert(f && fscanf(f, "P5 %d %d 255", &tw, &th) == 2 && fgetc(f) == '\n' && tw > 0 && th > 0);
    unsigned char *cls = malloc((size_t)tw * th);
    ck_assert(fread(cls, 1, (size_t)tw * th, f) == (size_t)tw * th && fgetc(f) == EOF);
    fclose(f);
    free(p);
    /* The scene: sun behind the camera. */
    static const double sun[3] = {-1, 0.3, 0.5};
    char text[2048];
    snprintf(text, sizeof text,
             "sun: {direction: [-1, 0.3, 0.5], irradiance: [0.9, 0.85, 0.8]}\n"
             "ambient: {light: [0.15, 0.15, 0.2], sky: [0.5, 0.6, 0.9]}\n"
             "meshes:\n  - {name: m, file: %s}\n"
             "objects:\n  - {mesh: m}\n"
             "sensors:\n  - {name: cam, type: camera, width: %d, height: %d, hfov: 60 deg, shadows: false,\n"
             "     mount: {position: [-2.4, 0, 0]}}\n",
             model, TW, TH);
    char *scene = tu_path(dir, "tct.yaml"), *gt = tu_path(dir, "gt.h5"), *out = tu_path(dir, "out.h5");
    char *pdir = tu_path(dir, "png"), *png = tu_path(pdir, "cam_00000.png");
    ck_assert_int_eq(tu_write_file(scene, text), 0);
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "1", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("render", scene, "-t", gt, "-s", "cam", "-n", "1", "-o", out, "--png", pdir, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    sensim_image_info info;
    uint8_t *px = NULL;
    ck_assert_msg(sensim_png_read(png, 0, &info, (void **)&px) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert(info.width == TW && info.height == TH && info.channels == 3);
    sensim_render_camera_params cp = sensim_render_camera_default_params();
    cp.width = TW;
    cp.height = TH;
    cp.hfov = M_PI / 3;
    sensim_render_camera *c = sensim_render_camera_create(&cp);
    /* Statistics per quad and class (0 black, 1 white), and of the back
     * plane between the quads (index 4, class 1). */
    double s[5][2][3] = {{{0}}}, s2[5][2][3] = {{{0}}}, e[5][2][3] = {{{0}}};
    size_t n[5][2] = {{0}};
    double worst[5][2] = {{0}};
    const double nrm[3] = {-1, 0, 0};
    for (int j = 0; j < TH; j++)
        for (int i = 0; i < TW; i++) {
            sensim_vec3 d = sensim_render_camera_direction(c, i + 0.5, j + 0.5);
            double t = 2.4 / d.x, gx = t * d.y, gy = t * d.z, v[3] = {-d.x, -d.y, -d.z}, base[3], enc[3];
            int qi = -1, cl = 1;
            double metallic, rough;
            for (int k = 0; k < 4; k++)
                if (gx > q[k].x[0] + 0.01 && gx < q[k].x[1] - 0.01 && gy > q[k].y[0] + 0.01 && gy < q[k].y[1] - 0.01)
                    qi = k;
            if (qi >= 0) {
                double u = q[qi].a[0] * gx + q[qi].a[1] * gy + q[qi].a[2];
                double vv = q[qi].b[0] * gx + q[qi].b[1] * gy + q[qi].b[2];
                int tx = (int)floor(u * tw), ty = (int)floor(vv * th);
                ck_assert(tx >= 0 && tx < tw && ty >= 0 && ty < th);
                unsigned c8 = cls[(size_t)ty * tw + tx];
                if (c8 == 128)
                    continue;
                cl = c8 == 255;
                for (int k = 0; k < 3; k++)
                    base[k] = q[qi].factor[k] * cl; /* black 0, white 1 (linear) */
                metallic = q[qi].metallic, rough = q[qi].rough;
            } else if (fabs(gx) < 0.95 && fabs(gy) < 0.95 && (fabs(gx) < 0.18 || fabs(gy) < 0.18)) {
                /* the back plane (|x|, |y| < 1), seen between the quads 5 cm
                 * further: its edge is at 0.98 in the quads' plane */
                qi = 4;
                for (int k = 0; k < 3; k++)
                    base[k] = back[k];
                metallic = backmr[0], rough = backmr[1];
            } else
                continue;
            tct_expected(base, metallic, rough, nrm, v, sun, enc);
            n[qi][cl]++;
            for (int k = 0; k < 3; k++) {
                double g = px[3 * ((size_t)j * TW + i) + k];
                s[qi][cl][k] += g, s2[qi][cl][k] += g * g, e[qi][cl][k] += enc[k];
                worst[qi][cl] = fmax(worst[qi][cl], fabs(g - enc[k]));
            }
        }
    for (int qi = 0; qi < 5; qi++)
        for (int cl = qi == 4; cl < 2; cl++) {
            const char *name = qi < 4 ? q[qi].name : bname;
            ck_assert_msg(n[qi][cl] >= (cl ? 5000u : 100u), "%s %s: %zu pixels", name, cl ? "white" : "black",
                          n[qi][cl]);
            for (int k = 0; k < 3; k++) {
                double m = s[qi][cl][k] / n[qi][cl], sd = sqrt(fmax(s2[qi][cl][k] / n[qi][cl] - m * m, 0));
                double em = e[qi][cl][k] / n[qi][cl];
                /* each pixel the closed form rounded (its view-dependent
                 * specular part varies by < 1 level over a quad) */
                ck_assert_msg(fabs(m - em) <= 0.52, "%s %s channel %d (%zu px): mean %.3f, closed form %.3f", name,
                              cl ? "white" : "black", k, n[qi][cl], m, em);
                ck_assert_msg(sd <= 1.0, "%s %s channel %d: sd %.3f", name, cl ? "white" : "black", k, sd);
            }
            /* and no pixel more than its rounding off (a label read
             * mirrored would put dark text on white texels) */
            ck_assert_msg(worst[qi][cl] <= 0.51, "%s %s: a pixel %.2f levels off", name, cl ? "white" : "black",
                          worst[qi][cl]);
        }
    free(px), free(cls), free(scene), free(gt), free(out), free(pdir), free(png), free(script), free(model);
    sensim_render_camera_destroy(c);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* data/scenes/khronos.yaml shows BoxTextured from
 * ../../../shared/data/khronos/ and renders: each of its three boxes
 * (segmentation ids 1-3) covers thousands of pixels, and on each the
 * logo's sky blue and hill green (the texture, not a flat material) both
 * cover a tenth of the box. */
START_TEST(khronos_scene)
{
    char *model = khronos_model_or_skip("BoxTextured", "khronos_scene");
    if (!model)
        return;
    free(model);
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5"), *out = tu_path(dir, "out.h5");
    char *scene = tu_src("data/scenes/khronos.yaml");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "1", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("render", scene, "-t", gt, "-s", "cam", "-n", "1", "-o", out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    enum { SW = 640, SH = 480 };
    sensim_log *L = sensim_log_open(out);
    ck_assert_ptr_nonnull(L);
    float *img = malloc(SW * SH * 3 * sizeof *img);
    uint32_t *seg = malloc(SW * SH * sizeof *seg);
    ck_assert_int_eq(sensim_log_read(L, "/sensors/cam/image", SENSIM_F32, 0, 1, img), SENSIM_OK);
    ck_assert_int_eq(sensim_log_read(L, "/sensors/cam/segmentation", SENSIM_U32, 0, 1, seg), SENSIM_OK);
    sensim_log_close(L);
    size_t n[4] = {0}, blue[4] = {0}, green[4] = {0};
    for (size_t k = 0; k < (size_t)SW * SH; k++) {
        if (seg[k] < 1 || seg[k] > 3)
            continue;
        const float *p = img + 3 * k;
        n[seg[k]]++;
        blue[seg[k]] += p[2] > 1.5f * p[0] && p[2] > p[1];  /* linear sky (108, 173, 223) */
        green[seg[k]] += p[1] > 1.5f * p[2] && p[1] > p[0]; /* linear hills (92, 135, 39) */
    }
    for (int o = 1; o <= 3; o++) {
        ck_assert_msg(n[o] > 5000, "box %d: %zu pixels", o, n[o]);
        ck_assert_msg(blue[o] > n[o] / 10 && green[o] > n[o] / 10, "box %d: %zu pixels, %zu blue, %zu green", o, n[o],
                      blue[o], green[o]);
    }
    free(img), free(seg), free(scene), free(gt), free(out);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* With the model absent (the scene file copied to a fresh temporary
 * directory, where ../../../shared is not), loading fails naming the scene
 * file's line and the model's path. */
START_TEST(khronos_scene_missing_model)
{
    tu_scene_model_missing("data/scenes/khronos.yaml", "k.yaml", "shared/data/khronos/BoxTextured/BoxTextured.gltf");
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
    /* box 0 ours, box 1 the Khronos BoxTextured (SKIP without it) */
    tcase_add_loop_test(tc, box_textured, 0, 2);
    tcase_add_loop_test(tc, box_texture_transform, 0, 2);
    tcase_add_loop_test(tc, box_draco_texcoords, 0, 2);
    tcase_add_test(tc, khronos_texture_coordinates);
    tcase_add_test(tc, khronos_scene);
    tcase_add_test(tc, khronos_scene_missing_model);
    suite_add_tcase(s, tc);
    return s;
}
