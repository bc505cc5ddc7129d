/* glTF 2.0 meshes: .gltf with a base64 buffer, the same as .glb, an external
 * .bin with an interleaved (strided) position view and a node hierarchy
 * with TRS; bounds and triangle counts exact, Y-up to Z-up as documented,
 * ranges to a glTF plane against geometry, and the errors for bad files
 * (truncated GLB, bad JSON with its byte offset, out-of-range index and
 * accessor, unknown componentType, bad sparse, NaN, degenerate, missing
 * buffer). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/render.h"
#include "testutil.h"

/* A box [0,1] x [0,2] x [0,3] in glTF axes: 8 float VEC3 positions (96
 * bytes) then 36 u16 indices (72 bytes), 12 triangles. */
static size_t box_buffer(unsigned char *buf)
{
    float v[8][3];
    for (int i = 0; i < 8; i++) {
        v[i][0] = (float)(i & 1);
        v[i][1] = (float)(2 * ((i >> 1) & 1));
        v[i][2] = (float)(3 * ((i >> 2) & 1));
    }
    static const uint16_t f[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                      {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    memcpy(buf, v, sizeof v);
    memcpy(buf + 96, f, sizeof f);
    return 168;
}

static char *b64(const unsigned char *d, size_t n)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = malloc(4 * (n / 3 + 1) + 1), *p = o;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t x = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
        *p++ = a[x >> 18];
        *p++ = a[(x >> 12) & 63];
        *p++ = i + 1 < n ? a[(x >> 6) & 63] : '=';
        *p++ = i + 2 < n ? a[x & 63] : '=';
    }
    *p = 0;
    return o;
}

/* The JSON of the box; %s is the buffer object's uri member (or nothing),
 * the index componentType and accessor counts substitutable. */
static char *box_json(const char *uri_member, int index_type, int index_count, int pos_count)
{
    char *j = malloc(4096);
    snprintf(j, 4096,
             "{\"asset\": {\"version\": \"2.0\"}, \"scene\": 0, \"scenes\": [{\"nodes\": [0]}],\n"
             " \"nodes\": [{\"mesh\": 0}],\n"
             " \"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 0}, \"indices\": 1}]}],\n"
             " \"accessors\": [{\"bufferView\": 0, \"componentType\": 5126, \"count\": %d, \"type\": \"VEC3\"},\n"
             "   {\"bufferView\": 1, \"componentType\": %d, \"count\": %d, \"type\": \"SCALAR\"}],\n"
             " \"bufferViews\": [{\"buffer\": 0, \"byteOffset\": 0, \"byteLength\": 96},\n"
             "   {\"buffer\": 0, \"byteOffset\": 96, \"byteLength\": 72}],\n"
             " \"buffers\": [{%s\"byteLength\": 168}]}\n",
             pos_count, index_type, index_count, uri_member);
    return j;
}

static void write_bytes(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(d, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* A GLB of json and bin (padded to 4 bytes as the format requires); returns
 * its length. */
static size_t make_glb(unsigned char *out, const char *json, const unsigned char *bin, size_t nbin)
{
    size_t jl = strlen(json), jp = (jl + 3) & ~(size_t)3, bp = (nbin + 3) & ~(size_t)3;
    size_t total = 12 + 8 + jp + (nbin ? 8 + bp : 0);
    uint32_t h[3] = {0x46546C67u, 2, (uint32_t)total}, c[2] = {(uint32_t)jp, 0x4E4F534Au};
    memcpy(out, h, 12);
    memcpy(out + 12, c, 8);
    memset(out + 20, ' ', jp);
    memcpy(out + 20, json, jl);
    if (nbin) {
        uint32_t b[2] = {(uint32_t)bp, 0x004E4942u};
        memcpy(out + 20 + jp, b, 8);
        memset(out + 28 + jp, 0, bp);
        memcpy(out + 28 + jp, bin, nbin);
    }
    return total;
}

static int load(const char *path, sensim_mesh_up up, size_t *nt, double lo[3], double hi[3])
{
    sensim_scene *s = sensim_scene_create();
    ck_assert_ptr_nonnull(s);
    int m = sensim_scene_load_mesh_up(s, "m", path, up);
    if (m >= 0)
        ck_assert_int_eq(sensim_scene_mesh_info(s, m, NULL, nt, lo, hi), SENSIM_OK);
    sensim_scene_destroy(s);
    return m;
}

static void expect_bounds(const double lo[3], const double hi[3], double x0, double x1, double y0, double y1,
                          double z0, double z1)
{
    /* Float32 vertices through a double transform: a few ulps of 30 m. */
    const double tol = 1e-5;
    ck_assert_within(lo[0], x0, tol);
    ck_assert_within(hi[0], x1, tol);
    ck_assert_within(lo[1], y0, tol);
    ck_assert_within(hi[1], y1, tol);
    ck_assert_within(lo[2], z0, tol);
    ck_assert_within(hi[2], z1, tol);
}

START_TEST(box_gltf_glb)
{
    char *dir = tu_mkdtemp(), *pg = tu_path(dir, "box.gltf"), *pb = tu_path(dir, "box.glb");
    unsigned char buf[256], glb[4096];
    size_t n = box_buffer(buf);
    char *enc = b64(buf, n), member[1024];
    snprintf(member, sizeof member, "\"uri\": \"data:application/octet-stream;base64,%s\", ", enc);
    char *j = box_json(member, 5123, 36, 8);
    ck_assert_int_eq(tu_write_file(pg, j), 0);
    size_t nt;
    double lo[3], hi[3];
    /* glTF +Y up -> +z, +Z (forward) -> +x, +X (left) -> +y. */
    ck_assert_int_ge(load(pg, SENSIM_MESH_UP_AUTO, &nt, lo, hi), 0);
    ck_assert_uint_eq(nt, 12);
    expect_bounds(lo, hi, 0, 3, 0, 1, 0, 2);
    ck_assert_int_ge(load(pg, SENSIM_MESH_UP_Z, &nt, lo, hi), 0);
    expect_bounds(lo, hi, 0, 1, 0, 2, 0, 3);
    free(j);
    j = box_json("", 5123, 36, 8);
    write_bytes(pb, glb, make_glb(glb, j, buf, n));
    ck_assert_int_ge(load(pb, SENSIM_MESH_UP_AUTO, &nt, lo, hi), 0);
    ck_assert_uint_eq(nt, 12);
    expect_bounds(lo, hi, 0, 3, 0, 1, 0, 2);
    free(j);
    free(enc);
    free(pg);
    free(pb);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(external_bin_nodes)
{
    char *dir = tu_mkdtemp(), *pg = tu_path(dir, "tree.gltf"), *pbin = tu_path(dir, "tree data.bin");
    unsigned char box[256], buf[512];
    box_buffer(box);
    /* Positions interleaved with 4 bytes of padding: byteStride 16. */
    memset(buf, 0xAB, sizeof buf);
    for (int i = 0; i < 8; i++)
        memcpy(buf + 16 * i, box + 12 * i, 12);
    memcpy(buf + 128, box + 96, 72);
    write_bytes(pbin, buf, 200);
    /* Root: translation (10, 20, 30); child: rotation +90 deg about +Y, scale
     * 2. Box [0,2]x[0,4]x[0,6] -> (z, y, -x) = [0,6]x[0,4]x[-2,0] -> +T =
     * [10,16]x[20,24]x[28,30] (glTF) -> Z-up (z, x, y): [28,30]x[10,16]x[20,24]. */
    const char *j =
        "{\"asset\": {\"version\": \"2.0\", \"generator\": \"caf\\u00e9 \\ud83d\\ude00\"},\n"
        " \"nodes\": [{\"children\": [1], \"translation\": [10, 20, 30]},\n"
        "   {\"mesh\": 0, \"rotation\": [0, 0.7071067811865476, 0, 0.7071067811865476], \"scale\": [2, 2, 2]}],\n"
        " \"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 0}, \"indices\": 1, \"mode\": 4}]}],\n"
        " \"accessors\": [{\"bufferView\": 0, \"componentType\": 5126, \"count\": 8, \"type\": \"VEC3\"},\n"
        "   {\"bufferView\": 1, \"componentType\": 5123, \"count\": 36, \"type\": \"SCALAR\"}],\n"
        " \"bufferViews\": [{\"buffer\": 0, \"byteLength\": 128, \"byteStride\": 16},\n"
        "   {\"buffer\": 0, \"byteOffset\": 128, \"byteLength\": 72}],\n"
        " \"buffers\": [{\"uri\": \"tree%20data.bin\", \"byteLength\": 200}]}\n";
    ck_assert_int_eq(tu_write_file(pg, j), 0);
    size_t nt;
    double lo[3], hi[3];
    ck_assert_int_ge(load(pg, SENSIM_MESH_UP_AUTO, &nt, lo, hi), 0);
    ck_assert_uint_eq(nt, 12);
    expect_bounds(lo, hi, 28, 30, 10, 16, 20, 24);
    /* From a scene file, placed by an object with a yaw. */
    char *sp = tu_path(dir, "scene.yaml");
    ck_assert_int_eq(tu_write_file(sp, "meshes:\n  - {name: t, file: tree.gltf, up: z}\nobjects:\n  - {mesh: t}\n"), 0);
    sensim_scene *s = sensim_scene_load(sp);
    ck_assert_msg(s != NULL, "%s", sensim_last_error());
    ck_assert_uint_eq(sensim_scene_triangle_count(s), 12);
    sensim_scene_destroy(s);
    free(sp);
    free(pg);
    free(pbin);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A 100 m square ground plane (two triangles, u8 indices, glTF y = 0) under
 * a node 1.5 m down; rays from the origin hit z = -1.5 at 1.5 / sin(-el). */
START_TEST(plane_ranges)
{
    char *dir = tu_mkdtemp(), *pg = tu_path(dir, "ground.glb"), *sp = tu_path(dir, "scene.yaml");
    unsigned char buf[64], glb[4096];
    float v[4][3] = {{-50, 0, -50}, {50, 0, -50}, {50, 0, 50}, {-50, 0, 50}};
    static const uint8_t f[6] = {0, 2, 1, 0, 3, 2};
    memcpy(buf, v, 48);
    memcpy(buf + 48, f, 6);
    const char *j = "{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [{\"mesh\": 0, \"translation\": [0, -1.5, 0]}],"
                    "\"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 0}, \"indices\": 1}]}],"
                    "\"accessors\": [{\"bufferView\": 0, \"componentType\": 5126, \"count\": 4, \"type\": \"VEC3\"},"
                    "{\"bufferView\": 0, \"byteOffset\": 48, \"componentType\": 5121, \"count\": 6, \"type\": "
                    "\"SCALAR\"}], \"bufferViews\": [{\"buffer\": 0, \"byteLength\": 54}],"
                    "\"buffers\": [{\"byteLength\": 54}]}";
    write_bytes(pg, glb, make_glb(glb, j, buf, 54));
    ck_assert_int_eq(tu_write_file(sp, "meshes:\n  - {name: g, file: ground.glb}\nobjects:\n  - {mesh: g}\n"), 0);
    sensim_scene *s = sensim_scene_load(sp);
    ck_assert_msg(s != NULL, "%s", sensim_last_error());
    for (int i = 0; i < 40; i++) {
        double az = 0.41 * i, el = -0.05 - 1.4 * i / 40.0;
        sensim_vec3 d = sensim_vec3_make(cos(el) * cos(az), cos(el) * sin(az), sin(el));
        sensim_hit h;
        ck_assert_int_eq(sensim_scene_intersect(s, sensim_vec3_make(0, 0, 0), d, 0, 0, 1e4, &h), SENSIM_OK);
        double expect = 1.5 / -sin(el);
        if (expect * cos(el) * fmax(fabs(cos(az)), fabs(sin(az))) > 49.9)
            continue; /* beyond the plane's edge */
        /* float32 geometry: ~1e-6 relative of 50 m coordinates. */
        ck_assert_within(h.distance, expect, 1e-4 + 1e-6 * expect);
        ck_assert_within(h.normal.z, 1.0, 1e-6);
    }
    sensim_scene_destroy(s);
    free(pg);
    free(sp);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Writes `text` (len bytes; 0: strlen) as `name` in a fresh directory and
 * checks that loading it fails with a message containing `expect`. */
static void expect_error(const char *name, const void *text, size_t len, const char *expect)
{
    char *dir = tu_mkdtemp(), *p = tu_path(dir, name);
    write_bytes(p, text, len ? len : strlen(text));
    sensim_scene *s = sensim_scene_create();
    ck_assert_int_lt(sensim_scene_load_mesh(s, "m", p), 0);
    ck_assert_msg(strstr(sensim_last_error(), expect) != NULL, "message '%s' lacks '%s'", sensim_last_error(),
                  expect);
    ck_assert_msg(strstr(sensim_last_error(), name) != NULL, "message '%s' lacks the file", sensim_last_error());
    sensim_scene_destroy(s);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

/* The box as a .glb with the JSON `j` (NULL: the good one) and the buffer
 * patched by `patch` (may be NULL). */
static size_t bad_glb(unsigned char *out, const char *j, void (*patch)(unsigned char *))
{
    unsigned char buf[256];
    size_t n = box_buffer(buf);
    if (patch)
        patch(buf);
    char *good = box_json("", 5123, 36, 8);
    size_t len = make_glb(out, j ? j : good, buf, n);
    free(good);
    return len;
}

static void index_nine(unsigned char *b)
{
    uint16_t nine = 9;
    memcpy(b + 96 + 10, &nine, 2);
}
static void nan_vertex(unsigned char *b)
{
    float x = NAN;
    memcpy(b + 12 * 5 + 4, &x, 4);
}
static void degenerate(unsigned char *b)
{
    static const uint16_t z[3] = {0, 0, 0}; /* triangle 3 becomes 0 0 0 */
    memcpy(b + 96 + 6 * 3, z, 6);
}

START_TEST(bad_files)
{
    unsigned char g[8192];
    size_t n = bad_glb(g, NULL, NULL);
    expect_error("cut.glb", g, n - 10, "GLB header says");
    unsigned char h[8192];
    memcpy(h, g, n);
    memcpy(h, "gLTF", 4);
    expect_error("magic.glb", h, n, "bad GLB magic");
    memcpy(h, g, n);
    h[4] = 1;
    expect_error("v1.glb", h, n, "GLB version 1");
    expect_error("tiny.glb", g, 14, "truncated GLB");
    memcpy(h, g, n);
    h[12] = 0xff; /* JSON chunk length past the end */
    expect_error("chunk.glb", h, n, "runs past the end");
    expect_error("json.gltf", "{\"asset\": {\"version\": \"2.0\"},\n \"nodes\": [1,, 2]}", 0,
                 "json.gltf: JSON byte 43 (line 2, column 14): expected a value");
    expect_error("trail.gltf", "{\"asset\": {\"version\": \"2.0\"}} x", 0, "trailing characters");
    expect_error("dup.gltf", "{\"asset\": {\"version\": \"2.0\"}, \"asset\": 1}", 0, "duplicate member name");
    expect_error("str.gltf", "{\"asset\": {\"version\": \"2.0\"}, \"x\": \"\\ud800\"}", 0, "unpaired surrogate");
    expect_error("deep.gltf",
                 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]"
                 "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
                 0, "nested too deeply");
    expect_error("ver.gltf", "{\"asset\": {\"version\": \"1.0\"}}", 0, "asset.version: '1.0' is not glTF 2.x");
    n = bad_glb(g, NULL, index_nine);
    expect_error("index.glb", g, n, "meshes[0].primitives[0].indices (accessors[1]) element 5: index 9 out of range");
    n = bad_glb(g, NULL, nan_vertex);
    expect_error("nan.glb", g, n, "element 5 is not finite");
    /* A degenerate triangle is dropped and counted, not a refusal. */
    n = bad_glb(g, NULL, degenerate);
    {
        char *dir = tu_mkdtemp(), *p = tu_path(dir, "degen.glb");
        write_bytes(p, g, n);
        sensim_scene *s = sensim_scene_create();
        int m = sensim_scene_load_mesh(s, "m", p);
        ck_assert_msg(m >= 0, "%s", sensim_last_error());
        size_t nt = 0;
        sensim_scene_mesh_info(s, m, NULL, &nt, NULL, NULL);
        ck_assert_uint_eq(nt, 11);
        ck_assert_uint_eq(sensim_scene_mesh_dropped(s, m), 1);
        sensim_scene_destroy(s);
        free(p);
        tu_rmtree(dir);
        free(dir);
    }
    char *j = box_json("", 5130, 36, 8);
    n = bad_glb(g, j, NULL);
    free(j);
    expect_error("ctype.glb", g, n, "accessors[1].componentType: 5130 is not a supported index type");
    j = box_json("", 5123, 36, 9);
    n = bad_glb(g, j, NULL);
    free(j);
    expect_error("past.glb", g, n, "accessors[0]: 9 elements from byteOffset 0 need 108 bytes, past the end of "
                                   "bufferViews[0] (96 bytes)");
    j = box_json("", 5123, 35, 8);
    n = bad_glb(g, j, NULL);
    free(j);
    expect_error("whole.glb", g, n, "35 indices do not make whole triangles");
    j = box_json("\"uri\": \"missing.bin\", ", 5123, 36, 8);
    expect_error("nobin.gltf", j, 0, "missing.bin: cannot open");
    free(j);
    j = box_json("\"uri\": \"data:application/octet-stream;base64,AAA*\", ", 5123, 36, 8);
    expect_error("b64.gltf", j, 0, "buffers[0].uri: bad base64");
    free(j);
    j = box_json("\"uri\": \"data:application/octet-stream;base64,AAAA\", ", 5123, 36, 8);
    expect_error("short.gltf", j, 0, "buffers[0]: byteLength is 168 but the data has 3 bytes");
    free(j);
    j = box_json("", 5123, 36, 8);
    expect_error("nobuf.gltf", j, 0, "buffers[0]: no uri and no GLB BIN chunk");
    free(j);
    {
        /* A finite scale that overflows float32. */
        char *good = box_json("", 5123, 36, 8), big[4096];
        const char *at = strstr(good, "{\"mesh\": 0}");
        ck_assert_ptr_nonnull(at);
        snprintf(big, sizeof big, "%.*s{\"mesh\": 0, \"scale\": [1e39, 1, 1]}%s", (int)(at - good), good,
                 at + strlen("{\"mesh\": 0}"));
        unsigned char buf[256];
        size_t nb = box_buffer(buf);
        expect_error("huge.glb", g, make_glb(g, big, buf, nb),
                     "element 1 is out of float range after the node transform (nodes[0])");
        free(good);
    }
    expect_error("sparse.gltf",
                 "{\"asset\": {\"version\": \"2.0\"}, \"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 0}}]}],"
                 "\"accessors\": [{\"componentType\": 5126, \"count\": 3, \"type\": \"VEC3\", "
                 "\"sparse\": {\"count\": 1}}]}",
                 0, "accessors[0].sparse: needs 'indices' and 'values' objects");
    expect_error("ext.gltf", "{\"asset\": {\"version\": \"2.0\"}, \"extensionsRequired\": [\"KHR_mesh_quantization\", \"EXT_mesh_gpu_instancing\"]}",
                 0, "extensionsRequired[1]: extension 'EXT_mesh_gpu_instancing' is not supported");
    expect_error("lines.gltf",
                 "{\"asset\": {\"version\": \"2.0\"}, \"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 0}, "
                 "\"mode\": 1}]}]}",
                 0, "meshes[0].primitives[0].mode: 1 (points or lines) cannot be ray cast");
    expect_error("cycle.gltf",
                 "{\"asset\": {\"version\": \"2.0\"}, \"scenes\": [{\"nodes\": [0]}], \"nodes\": [{\"children\": [1]}, "
                 "{\"children\": [0]}]}",
                 0, "nodes[0]: appears twice in the node hierarchy");
    {
        /* A chain of 1100 nodes: bounded recursion, not a stack overflow. */
        size_t cap = 1100 * 24 + 200, k = 0;
        char *deep = malloc(cap);
        k += (size_t)snprintf(deep + k, cap - k, "{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [");
        for (int i = 0; i < 1100; i++)
            k += (size_t)snprintf(deep + k, cap - k, i < 1099 ? "{\"children\": [%d]}," : "{}", i + 1);
        snprintf(deep + k, cap - k, "]}");
        expect_error("deep2.gltf", deep, 0, "node hierarchy deeper than 1000");
        free(deep);
    }
    expect_error("noacc.gltf",
                 "{\"asset\": {\"version\": \"2.0\"}, \"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 4}}]}]}",
                 0, "accessors[4] does not exist");
}
END_TEST

START_TEST(yaml_up_key)
{
    char *dir = tu_mkdtemp(), *sp = tu_path(dir, "scene.yaml");
    ck_assert_int_eq(tu_write_file(sp, "meshes:\n  - {name: b, box: {size: [1, 1, 1]}, up: y}\nobjects:\n  - {mesh: b}\n"), 0);
    ck_assert_ptr_null(sensim_scene_load(sp));
    ck_assert_msg(strstr(sensim_last_error(), "scene.yaml:2: key 'up': only for a mesh file"), "%s", sensim_last_error());
    ck_assert_int_eq(tu_write_file(sp, "meshes:\n  - {name: b, file: x.gltf, up: x}\nobjects:\n  - {mesh: b}\n"), 0);
    ck_assert_ptr_null(sensim_scene_load(sp));
    ck_assert_msg(strstr(sensim_last_error(), "scene.yaml:2: key 'up': unknown 'x' (expected y or z)"), "%s",
                  sensim_last_error());
    /* An OBJ is Z-up by default; up: y turns it. */
    char *obj = tu_path(dir, "t.obj");
    ck_assert_int_eq(tu_write_file(obj, "v 0 0 0\nv 1 0 0\nv 0 2 0\nf 1 2 3\n"), 0);
    size_t nt;
    double lo[3], hi[3];
    ck_assert_int_ge(load(obj, SENSIM_MESH_UP_AUTO, &nt, lo, hi), 0);
    expect_bounds(lo, hi, 0, 1, 0, 2, 0, 0);
    ck_assert_int_ge(load(obj, SENSIM_MESH_UP_Y, &nt, lo, hi), 0);
    expect_bounds(lo, hi, 0, 0, 0, 1, 0, 2);
    free(obj);
    free(sp);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* The shipped example: data/scenes/fog.yaml places data/scenes/cone.gltf
 * (one mesh of two primitives under a parent node) eight times. */
START_TEST(shipped_scene)
{
    char *cone = tu_src("data/scenes/cone.gltf"), *fog = tu_src("data/scenes/fog.yaml");
    size_t nt;
    double lo[3], hi[3];
    ck_assert_int_ge(load(cone, SENSIM_MESH_UP_AUTO, &nt, lo, hi), 0);
    ck_assert_uint_eq(nt, 12 + 32);
    expect_bounds(lo, hi, -0.2, 0.2, -0.2, 0.2, 0, 0.73);
    sensim_scene *s = sensim_scene_load(fog);
    ck_assert_msg(s != NULL, "%s", sensim_last_error());
    ck_assert_uint_eq(sensim_scene_object_count(s), 9);
    ck_assert_within(sensim_scene_visibility(s), 300, 0);
    /* Below 500 m visibility q = 0: the same extinction at every wavelength. */
    ck_assert_within(sensim_scene_extinction_at(s, 905e-9), 3.912 / 300, 1e-15);
    /* A ray along the row at 0.3 m height hits the first cone's side. */
    sensim_hit h;
    ck_assert_int_eq(sensim_scene_intersect(s, sensim_vec3_make(0, -2, 0.3), sensim_vec3_make(1, 0, 0), 0, 0, 100, &h),
                     SENSIM_OK);
    /* Cone radius at height 0.3: 0.15 (0.73 - 0.3) / 0.7; the 16-gon's
     * vertex points at -x, so the hit is within its chord sagitta. */
    double r = 0.15 * (0.73 - 0.3) / 0.7;
    ck_assert_within(h.distance, 6 - r, r * (1 - cos(M_PI / 16)) + 1e-5);
    sensim_render_sensor rs;
    ck_assert_int_eq(sensim_render_sensor_load(fog, "vlp16", &rs), SENSIM_OK);
    ck_assert_within(rs.lidar.wavelength, 905e-9, 1e-20);
    sensim_scene_destroy(s);
    free(cone);
    free(fog);
}
END_TEST

Suite *suite_gltf(void)
{
    Suite *s = suite_create("gltf");
    TCase *tc = tcase_create("gltf");
    tcase_add_test(tc, box_gltf_glb);
    tcase_add_test(tc, external_bin_nodes);
    tcase_add_test(tc, plane_ranges);
    tcase_add_test(tc, bad_files);
    tcase_add_test(tc, yaml_up_key);
    tcase_add_test(tc, shipped_scene);
    suite_add_tcase(s, tc);
    return s;
}
