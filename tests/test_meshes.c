/* The meshes people ship (issue 20): one torus written as OBJ (read by
 * sensim's own OBJ parser: the reference triangles) and turned by other
 * software into the glTF variants users have: gltfpack -noq (plain float),
 * gltfpack's default KHR_mesh_quantization (integer positions under a
 * dequantizing node transform, normalized byte normals), -vpn (normalized
 * positions), -c and -cc (EXT_meshopt_compression, -cc with the OCTAHEDRAL
 * filter), a .glb, and draco_transcoder's KHR_draco_mesh_compression;
 * sparse accessors and the EXPONENTIAL, QUATERNION and INDICES paths of
 * meshopt are written here by meshoptimizer's own encoder. Each loads to
 * the reference triangles (same count, same vertex indices and winding
 * after matching vertices) within the quantization step of its encoding,
 * and its normals to the analytic ones within theirs. Then the errors for
 * corrupt compressed data. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <meshoptimizer.h>

#include "../render/render_internal.h"
#include "testutil.h"

/* The torus: radii R, r about centre C, NU x NV vertices, 2 NU NV
 * triangles, no degenerate one. */
#define NU 32
#define NV 16
#define NVERT (NU * NV)
#define NTRI (2 * NU * NV)
static const double TR = 2.0, Tr = 0.6, TC[3] = {1, -3, 0.5};

static void torus_vertex(int k, double p[3], double n[3])
{
    double u = 2 * M_PI * (k / NV) / NU, v = 2 * M_PI * (k % NV) / NV;
    double c[3] = {cos(u), sin(u), 0};
    for (int a = 0; a < 3; a++) {
        n[a] = cos(v) * c[a] + (a == 2 ? sin(v) : 0);
        p[a] = TR * c[a] + Tr * n[a] + TC[a];
    }
}

/* Triangle t of the torus: quad (a, b, c, d) of rings i, i+1 and
 * columns j, j+1 split along a-d ((a, b, d), (a, d, c)), or with `strip`
 * along b-c as a triangle strip a_0 b_0 a_1 b_1 ... makes it ((a, b, c),
 * (c, b, d)); both wind the same way. */
static void torus_triangle_split(int t, uint32_t f[3], int strip)
{
    int q = t / 2, i = q / NV, j = q % NV;
    uint32_t a = (uint32_t)(i * NV + j), b = (uint32_t)(((i + 1) % NU) * NV + j),
             c = (uint32_t)(i * NV + (j + 1) % NV), d = (uint32_t)(((i + 1) % NU) * NV + (j + 1) % NV);
    if (strip && t % 2 == 0)
        f[0] = a, f[1] = b, f[2] = c;
    else if (strip)
        f[0] = c, f[1] = b, f[2] = d;
    else if (t % 2 == 0)
        f[0] = a, f[1] = b, f[2] = d;
    else
        f[0] = a, f[1] = d, f[2] = c;
}

static void torus_triangle(int t, uint32_t f[3]) { torus_triangle_split(t, f, 0); }

/* The largest extent of the torus's bounding box: what 14-bit (gltfpack)
 * and 11-bit (Draco) position grids divide. */
static double torus_extent(void) { return 2 * (TR + Tr); }

static void write_obj_split(const char *path, int strip)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    double p[3], n[3];
    for (int k = 0; k < NVERT; k++) {
        torus_vertex(k, p, n);
        fprintf(f, "v %.9f %.9f %.9f\n", p[0], p[1], p[2]);
    }
    for (int k = 0; k < NVERT; k++) {
        torus_vertex(k, p, n);
        fprintf(f, "vn %.9f %.9f %.9f\n", n[0], n[1], n[2]);
    }
    for (int t = 0; t < NTRI; t++) {
        uint32_t v[3];
        torus_triangle_split(t, v, strip);
        fprintf(f, "f %u//%u %u//%u %u//%u\n", v[0] + 1, v[0] + 1, v[1] + 1, v[1] + 1, v[2] + 1, v[2] + 1);
    }
    ck_assert_int_eq(fclose(f), 0);
}

static void write_obj(const char *path) { write_obj_split(path, 0); }

typedef struct {
    float *v, *n; /* [nv*3], normals [nv*4] (may be NULL) */
    uint32_t *t;
    size_t nv, nt;
    int ncomp;
} tmesh;

static void tmesh_free(tmesh *m)
{
    free(m->v);
    free(m->n);
    free(m->t);
}

/* A mesh file as sensim loads it (Z-up as written, no axis change), with
 * its NORMAL attribute for glTF; NULL message on success, else the error. */
static const char *load_mesh(const char *path, tmesh *m)
{
    memset(m, 0, sizeof *m);
    sensim_scene *s = sensim_scene_create();
    ck_assert_ptr_nonnull(s);
    size_t l = strlen(path);
    int gltf = l > 5 && (strcmp(path + l - 5, ".gltf") == 0 || strcmp(path + l - 4, ".glb") == 0);
    int id = gltf ? sensim_gltf_load_attribute(s, "m", path, strcmp(path + l - 4, ".glb") == 0, 0, "NORMAL", &m->n,
                                               &m->ncomp)
                  : sensim_scene_load_mesh_up(s, "m", path, SENSIM_MESH_UP_Z);
    if (id < 0) {
        sensim_scene_destroy(s);
        return sensim_last_error();
    }
    const scene_mesh *sm = &s->mesh[id];
    m->nv = sm->nv;
    m->nt = sm->nt;
    m->v = malloc(sm->nv * 3 * sizeof *m->v);
    m->t = malloc(sm->nt * 3 * sizeof *m->t);
    memcpy(m->v, sm->v, sm->nv * 3 * sizeof *m->v);
    memcpy(m->t, sm->tri, sm->nt * 3 * sizeof *m->t);
    sensim_scene_destroy(s);
    return NULL;
}

static int tri_cmp(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    for (int r = 0; r < 3; r++)
        if (x[r] != y[r])
            return x[r] < y[r] ? -1 : 1;
    return 0;
}

/* Rotates a triangle so its smallest index comes first (winding kept). */
static void tri_canon(uint32_t t[3])
{
    while (t[0] > t[1] || t[0] > t[2]) {
        uint32_t x = t[0];
        t[0] = t[1];
        t[1] = t[2];
        t[2] = x;
    }
}

/* Asserts that m has the reference's triangles: every vertex of m within
 * pos_tol (Euclidean, metres) of a distinct reference vertex, and the
 * triangles, mapped through that matching, the same set with the same
 * windings; each normal within nrm_tol of the analytic one (nrm_tol < 0:
 * no normals to check). */
static void expect_same(const char *what, const tmesh *ref, const tmesh *m, double pos_tol, double nrm_tol)
{
    ck_assert_msg(m->nv == ref->nv && m->nt == ref->nt, "%s: %zu vertices, %zu triangles (expected %zu, %zu)", what,
                  m->nv, m->nt, ref->nv, ref->nt);
    uint32_t *map = malloc(m->nv * sizeof *map);
    unsigned char *used = calloc(ref->nv, 1);
    double worst = 0, worst_n = 0;
    for (size_t i = 0; i < m->nv; i++) {
        double best = INFINITY;
        size_t bj = 0;
        for (size_t j = 0; j < ref->nv; j++) {
            double d2 = 0;
            for (int a = 0; a < 3; a++) {
                double d = (double)m->v[3 * i + a] - ref->v[3 * j + a];
                d2 += d * d;
            }
            if (d2 < best)
                best = d2, bj = j;
        }
        ck_assert_msg(!used[bj], "%s: vertices %zu and another match reference vertex %zu", what, i, bj);
        used[bj] = 1;
        map[i] = (uint32_t)bj;
        worst = fmax(worst, sqrt(best));
        if (nrm_tol >= 0) {
            ck_assert_msg(m->n && m->ncomp == 3, "%s: no 3-component NORMAL (%d)", what, m->ncomp);
            double p[3], n[3], d2 = 0;
            torus_vertex((int)bj, p, n);
            for (int a = 0; a < 3; a++)
                d2 += (m->n[4 * i + a] - n[a]) * (m->n[4 * i + a] - n[a]);
            worst_n = fmax(worst_n, sqrt(d2));
        }
    }
    ck_assert_msg(worst <= pos_tol, "%s: a vertex is %.3g m from the reference (tolerance %.3g)", what, worst,
                  pos_tol);
    ck_assert_msg(nrm_tol < 0 || worst_n <= nrm_tol, "%s: a normal is %.3g from the analytic one (tolerance %.3g)",
                  what, worst_n, nrm_tol);
    uint32_t *a = malloc(m->nt * 3 * sizeof *a), *b = malloc(m->nt * 3 * sizeof *b);
    for (size_t k = 0; k < m->nt; k++) {
        for (int r = 0; r < 3; r++) {
            a[3 * k + r] = map[m->t[3 * k + r]];
            b[3 * k + r] = ref->t[3 * k + r];
        }
        tri_canon(a + 3 * k);
        tri_canon(b + 3 * k);
    }
    qsort(a, m->nt, 3 * sizeof *a, tri_cmp);
    qsort(b, m->nt, 3 * sizeof *b, tri_cmp);
    ck_assert_msg(memcmp(a, b, m->nt * 3 * sizeof *a) == 0, "%s: the triangles differ from the reference", what);
    free(a);
    free(b);
    free(map);
    free(used);
}

/* A whole file, binary (tu_read_file stops at a NUL). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    char *d = NULL;
    size_t n = 0, r;
    do {
        d = realloc(d, n + 65536 + 1);
        r = fread(d + n, 1, 65536, f);
        n += r;
    } while (r > 0);
    fclose(f);
    d[n] = 0;
    *len = n;
    return d;
}

static void run_tool(const char *cmd)
{
    int rc = system(cmd);
    ck_assert_msg(rc == 0, "'%s' failed (%d): gltfpack and draco_transcoder come from Debian's gltfpack and draco "
                  "(scripts/setup.sh)", cmd, rc);
}

/* Quantization bounds. A b-bit unsigned grid over extent E rounds each
 * coordinate by at most half a step, E / (2^b - 1) / 2: sqrt(3) / 2 steps
 * in 3-D. Normals quantized per component to 8-bit snorm (c / 127) are off
 * by at most 0.5 / 127 a component: sqrt(3) * 0.5 / 127 = 0.0068. An 8-bit
 * octahedral code (gltfpack -cc, Draco -qn 8) rounds the two octahedron
 * coordinates by 1 / 127 / 2 each (L-inf), and projecting the L1 sphere on
 * the L2 sphere stretches by at most sqrt(3) (|p|_2 >= 1 / sqrt(3)) plus the
 * projection's own radial factor 2: 2 sqrt(3) sqrt(2) / 2 / 127 = 0.0193. */
static double grid_tol(int bits) { return sqrt(3.0) / 2 * torus_extent() / ((1 << bits) - 1) * 1.001 + 2e-6; }
#define SNORM8_TOL (sqrt(3.0) * 0.5 / 127 + 2e-6)
#define OCT8_TOL (2 * sqrt(3.0) * sqrt(2.0) / 2 / 127)

START_TEST(gltf_variants)
{
    char *dir = tu_mkdtemp(), *obj = tu_path(dir, "torus.obj"), cmd[2048];
    write_obj(obj);
    tmesh ref, m;
    ck_assert_ptr_null(load_mesh(obj, &ref));
    ck_assert_uint_eq(ref.nv, NVERT);
    ck_assert_uint_eq(ref.nt, NTRI);
    static const struct {
        const char *file, *tool;
        int bits;        /* position grid (0: float) */
        double nrm_tol;  /* normal tolerance */
        const char *has; /* a string the file must hold (that the variant is what it claims) */
    } v[] = {
        {"plain.gltf", "gltfpack -noq", 0, 1e-6, "\"componentType\":5126"},
        {"quant.gltf", "gltfpack", 14, SNORM8_TOL, "KHR_mesh_quantization"},
        {"quantn.gltf", "gltfpack -vpn", 14, SNORM8_TOL, "\"normalized\":true"},
        {"meshopt.gltf", "gltfpack -c", 14, SNORM8_TOL, "\"mode\":\"TRIANGLES\""},
        {"meshopt_oct.gltf", "gltfpack -cc", 14, OCT8_TOL, "\"filter\":\"OCTAHEDRAL\""},
        {"meshopt.glb", "gltfpack -c", 14, SNORM8_TOL, "EXT_meshopt_compression"},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        char *out = tu_path(dir, v[i].file);
        snprintf(cmd, sizeof cmd, "%s -i '%s' -o '%s' >/dev/null 2>&1", v[i].tool, obj, out);
        run_tool(cmd);
        size_t len;
        char *text = slurp(out, &len);
        ck_assert_ptr_nonnull(text);
        int found = 0;
        for (size_t k = 0; !found && k + strlen(v[i].has) <= len; k++)
            found = memcmp(text + k, v[i].has, strlen(v[i].has)) == 0;
        ck_assert_msg(found, "%s has no %s", v[i].file, v[i].has);
        free(text);
        const char *err = load_mesh(out, &m);
        ck_assert_msg(err == NULL, "%s: %s", v[i].file, err);
        expect_same(v[i].file, &ref, &m, v[i].bits ? grid_tol(v[i].bits) : 1e-6, v[i].nrm_tol);
        tmesh_free(&m);
        free(out);
    }
    /* Draco, from the plain glTF, with its default 11-bit positions and
     * 8-bit (octahedral) normals said explicitly. */
    char *plain = tu_path(dir, "plain.gltf"), *dr = tu_path(dir, "draco.gltf");
    snprintf(cmd, sizeof cmd, "draco_transcoder -qp 11 -qn 8 -i '%s' -o '%s' >/dev/null 2>&1", plain, dr);
    run_tool(cmd);
    size_t len;
    char *text = slurp(dr, &len);
    ck_assert_ptr_nonnull(strstr(text, "KHR_draco_mesh_compression"));
    free(text);
    const char *err = load_mesh(dr, &m);
    ck_assert_msg(err == NULL, "draco.gltf: %s", err);
    expect_same("draco.gltf", &ref, &m, grid_tol(11), OCT8_TOL);
    tmesh_free(&m);
    /* A corrupt Draco stream: the decoder's refusal, with the JSON path. */
    char *bin = tu_path(dir, "draco.bin");
    text = slurp(bin, &len);
    ck_assert_ptr_nonnull(text);
    memset(text, 'x', len < 16 ? len : 16);
    FILE *f = fopen(bin, "wb");
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    free(text);
    err = load_mesh(dr, &m);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, "draco.gltf: meshes[0].primitives[0].extensions.KHR_draco_mesh_compression: Draco:"),
                  "%s", err);
    free(bin);
    free(plain);
    free(dr);
    tmesh_free(&ref);
    free(obj);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- glTF written here ---- */

typedef struct {
    unsigned char *d;
    size_t n;
} bytes;

/* Appends x (4-byte aligned) and returns its offset. */
static size_t put(bytes *b, const void *x, size_t n)
{
    size_t at = (b->n + 3) & ~(size_t)3;
    b->d = realloc(b->d, at + n + 4);
    memset(b->d + b->n, 0, at - b->n);
    memcpy(b->d + at, x, n);
    b->n = at + n;
    return at;
}

static void write_bin(const char *path, const bytes *b)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b->d, 1, b->n, f), b->n);
    ck_assert_int_eq(fclose(f), 0);
}

/* Sparse accessors (glTF 2.0 3.6.2.3): positions whose bufferView holds
 * every third vertex moved to the origin, a sparse block of u16 indices
 * and float values putting them back; normals with no bufferView at all
 * (zeros) and a sparse block of u32 indices giving every one of them;
 * u32 triangle indices. */
START_TEST(gltf_sparse)
{
    char *dir = tu_mkdtemp(), *obj = tu_path(dir, "torus.obj"), *gl = tu_path(dir, "sparse.gltf"),
         *bin = tu_path(dir, "sparse.bin");
    write_obj(obj);
    tmesh ref, m;
    ck_assert_ptr_null(load_mesh(obj, &ref));
    float pos[NVERT][3], nrm[NVERT][3], moved[NVERT / 3 + 1][3];
    uint16_t sidx[NVERT / 3 + 1];
    uint32_t nidx[NVERT], tri[NTRI][3];
    int ns = 0;
    for (int k = 0; k < NVERT; k++) {
        double p[3], n[3];
        torus_vertex(k, p, n);
        for (int a = 0; a < 3; a++) {
            nrm[k][a] = (float)n[a];
            pos[k][a] = k % 3 ? (float)p[a] : 0.0f;
            if (k % 3 == 0)
                moved[ns][a] = (float)p[a];
        }
        if (k % 3 == 0)
            sidx[ns++] = (uint16_t)k;
        nidx[k] = (uint32_t)k;
    }
    for (int t = 0; t < NTRI; t++)
        torus_triangle(t, tri[t]);
    bytes b = {NULL, 0};
    size_t o_pos = put(&b, pos, sizeof pos), o_sidx = put(&b, sidx, ns * sizeof *sidx),
           o_moved = put(&b, moved, ns * sizeof *moved), o_nidx = put(&b, nidx, sizeof nidx),
           o_nrm = put(&b, nrm, sizeof nrm), o_tri = put(&b, tri, sizeof tri);
    write_bin(bin, &b);
    char json[4096];
    snprintf(json, sizeof json,
             "{\"asset\": {\"version\": \"2.0\"}, \"scenes\": [{\"nodes\": [0]}], \"nodes\": [{\"mesh\": 0}],\n"
             "\"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 0, \"NORMAL\": 1}, \"indices\": 2}]}],\n"
             "\"accessors\": [\n"
             " {\"bufferView\": 0, \"componentType\": 5126, \"count\": %d, \"type\": \"VEC3\", \"sparse\": {\"count\": "
             "%d, \"indices\": {\"bufferView\": 1, \"componentType\": 5123}, \"values\": {\"bufferView\": 2}}},\n"
             " {\"componentType\": 5126, \"count\": %d, \"type\": \"VEC3\", \"sparse\": {\"count\": %d, \"indices\": "
             "{\"bufferView\": 3, \"componentType\": 5125}, \"values\": {\"bufferView\": 4, \"byteOffset\": 0}}},\n"
             " {\"bufferView\": 5, \"componentType\": 5125, \"count\": %d, \"type\": \"SCALAR\"}],\n"
             "\"bufferViews\": [{\"buffer\": 0, \"byteOffset\": %zu, \"byteLength\": %zu},"
             " {\"buffer\": 0, \"byteOffset\": %zu, \"byteLength\": %zu}, {\"buffer\": 0, \"byteOffset\": %zu, "
             "\"byteLength\": %zu},\n {\"buffer\": 0, \"byteOffset\": %zu, \"byteLength\": %zu}, {\"buffer\": 0, "
             "\"byteOffset\": %zu, \"byteLength\": %zu}, {\"buffer\": 0, \"byteOffset\": %zu, \"byteLength\": %zu}],\n"
             "\"buffers\": [{\"uri\": \"sparse.bin\", \"byteLength\": %zu}]}\n",
             NVERT, ns, NVERT, NVERT, 3 * NTRI, o_pos, sizeof pos, o_sidx, ns * sizeof *sidx, o_moved,
             ns * sizeof *moved, o_nidx, sizeof nidx, o_nrm, sizeof nrm, o_tri, sizeof tri, b.n);
    ck_assert_int_eq(tu_write_file(gl, json), 0);
    const char *err = load_mesh(gl, &m);
    ck_assert_msg(err == NULL, "%s", err);
    /* Float32 of the same doubles the OBJ printed to 9 decimals. */
    expect_same("sparse.gltf", &ref, &m, 1e-6, 1e-6);
    tmesh_free(&m);
    /* Without the sparse block the moved vertices stay at the origin: the
     * substitution, not the base view, made the match above. */
    char *nosparse = strdup(json), *sp = strstr(nosparse, ", \"sparse\": {\"count\": ");
    char *end = strstr(sp, "}}},\n") + 3;
    memmove(sp, end - 1, strlen(end - 1) + 1);
    ck_assert_int_eq(tu_write_file(gl, nosparse), 0);
    ck_assert_ptr_null(load_mesh(gl, &m));
    ck_assert_uint_lt(m.nt, NTRI);
    ck_assert(m.v[0] == 0.0f && m.v[1] == 0.0f && m.v[2] == 0.0f);
    tmesh_free(&m);
    free(nosparse);
    /* Sparse indices must increase. */
    sidx[1] = sidx[0];
    memcpy(b.d + o_sidx, sidx, ns * sizeof *sidx);
    write_bin(bin, &b);
    ck_assert_int_eq(tu_write_file(gl, json), 0);
    err = load_mesh(gl, &m);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, "sparse.gltf: accessors[0].sparse.indices element 1: index 0 is not above the one "
                              "before"), "%s", err);
    free(b.d);
    tmesh_free(&ref);
    free(obj);
    free(gl);
    free(bin);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* EXT_meshopt_compression paths gltfpack 0.18 does not write for a static
 * mesh, encoded here by meshoptimizer's own encoder: float positions with
 * the EXPONENTIAL filter (15-bit mantissa shared by the three components),
 * u32 indices as an INDICES sequence, 16-bit OCTAHEDRAL normals at stride
 * 8 and a VEC4 QUATERNION attribute (12 bits). Then corrupt and
 * inconsistent compressed views. */
START_TEST(gltf_meshopt_filters)
{
    char *dir = tu_mkdtemp(), *obj = tu_path(dir, "torus.obj"), *gl = tu_path(dir, "f.gltf"),
         *bin = tu_path(dir, "f.bin");
    write_obj(obj);
    tmesh ref, m;
    ck_assert_ptr_null(load_mesh(obj, &ref));
    float pos[NVERT][3], nrm4[NVERT][4], quat[NVERT][4];
    uint32_t tri[NTRI][3];
    double pmax = 0;
    for (int k = 0; k < NVERT; k++) {
        double p[3], n[3];
        torus_vertex(k, p, n);
        /* A unit quaternion of the vertex's angles (the filter's input). */
        double h = 0.5 * atan2(p[1] - TC[1], p[0] - TC[0]), q[4] = {sin(h) * n[2], 0.3 * sin(h), cos(h), 0.1};
        double qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        for (int a = 0; a < 3; a++) {
            pos[k][a] = (float)p[a];
            nrm4[k][a] = (float)n[a];
            pmax = fmax(pmax, fabs(p[a]));
        }
        nrm4[k][3] = 0;
        for (int a = 0; a < 4; a++)
            quat[k][a] = (float)(q[a] / qn);
    }
    for (int t = 0; t < NTRI; t++)
        torus_triangle(t, tri[t]);
    uint32_t pe[NVERT][3];
    int16_t ne[NVERT][4], qe[NVERT][4];
    meshopt_encodeFilterExp(pe, NVERT, 12, 15, &pos[0][0]);
    meshopt_encodeFilterOct(ne, NVERT, 8, 16, &nrm4[0][0]);
    meshopt_encodeFilterQuat(qe, NVERT, 8, 12, &quat[0][0]);
    size_t cap = meshopt_encodeVertexBufferBound(NVERT, 12) + meshopt_encodeVertexBufferBound(NVERT, 8) * 2 +
                 meshopt_encodeIndexSequenceBound(3 * NTRI, NVERT);
    unsigned char *enc = malloc(cap);
    bytes b = {NULL, 0};
    size_t len[4], off[4];
    len[0] = meshopt_encodeVertexBuffer(enc, cap, pe, NVERT, 12);
    off[0] = put(&b, enc, len[0]);
    len[1] = meshopt_encodeVertexBuffer(enc, cap, ne, NVERT, 8);
    off[1] = put(&b, enc, len[1]);
    len[2] = meshopt_encodeVertexBuffer(enc, cap, qe, NVERT, 8);
    off[2] = put(&b, enc, len[2]);
    len[3] = meshopt_encodeIndexSequence(enc, cap, &tri[0][0], 3 * NTRI);
    off[3] = put(&b, enc, len[3]);
    ck_assert(len[0] && len[1] && len[2] && len[3]);
    write_bin(bin, &b);
    char json[4096];
    const char *fmt =
        "{\"asset\": {\"version\": \"2.0\"}, \"extensionsUsed\": [\"EXT_meshopt_compression\"],"
        " \"extensionsRequired\": [\"EXT_meshopt_compression\"], \"nodes\": [{\"mesh\": 0}],\n"
        "\"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 0, \"NORMAL\": 1, \"_ROT\": 2}, "
        "\"indices\": 3}]}],\n"
        "\"accessors\": [{\"bufferView\": 0, \"componentType\": 5126, \"count\": %d, \"type\": \"VEC3\"},"
        " {\"bufferView\": 1, \"componentType\": 5122, \"normalized\": true, \"count\": %d, \"type\": \"VEC3\"},"
        " {\"bufferView\": 2, \"componentType\": 5122, \"normalized\": true, \"count\": %d, \"type\": \"VEC4\"},"
        " {\"bufferView\": 3, \"componentType\": 5125, \"count\": %d, \"type\": \"SCALAR\"}],\n"
        "\"bufferViews\": ["
        "{\"buffer\": 1, \"byteLength\": %d, \"byteStride\": 12, \"extensions\": {\"EXT_meshopt_compression\": "
        "{\"buffer\": 0, \"byteOffset\": %zu, \"byteLength\": %zu, \"byteStride\": %d, \"mode\": \"ATTRIBUTES\", "
        "\"filter\": \"EXPONENTIAL\", \"count\": %d}}},\n"
        "{\"buffer\": 1, \"byteLength\": %d, \"byteStride\": 8, \"extensions\": {\"EXT_meshopt_compression\": "
        "{\"buffer\": 0, \"byteOffset\": %zu, \"byteLength\": %zu, \"byteStride\": 8, \"mode\": \"ATTRIBUTES\", "
        "\"filter\": \"OCTAHEDRAL\", \"count\": %d}}},\n"
        "{\"buffer\": 1, \"byteLength\": %d, \"byteStride\": 8, \"extensions\": {\"EXT_meshopt_compression\": "
        "{\"buffer\": 0, \"byteOffset\": %zu, \"byteLength\": %zu, \"byteStride\": 8, \"mode\": \"ATTRIBUTES\", "
        "\"filter\": \"QUATERNION\", \"count\": %d}}},\n"
        "{\"buffer\": 1, \"byteLength\": %d, \"extensions\": {\"EXT_meshopt_compression\": "
        "{\"buffer\": 0, \"byteOffset\": %zu, \"byteLength\": %zu, \"byteStride\": 4, \"mode\": \"%s\", "
        "\"count\": %d}}}],\n"
        "\"buffers\": [{\"uri\": \"f.bin\", \"byteLength\": %zu}, {\"byteLength\": %d, \"extensions\": "
        "{\"EXT_meshopt_compression\": {\"fallback\": true}}}]}\n";
#define FILTER_JSON(stride0, mode)                                                                                 \
    snprintf(json, sizeof json, fmt, NVERT, NVERT, NVERT, 3 * NTRI, 12 * NVERT, off[0], len[0], stride0, NVERT,   \
             8 * NVERT, off[1], len[1], NVERT, 8 * NVERT, off[2], len[2], NVERT, 12 * NTRI, off[3], len[3], mode, \
             3 * NTRI, b.n, 12 * NVERT + 16 * NVERT + 12 * NTRI)
    FILTER_JSON(12, "INDICES");
    ck_assert_int_eq(tu_write_file(gl, json), 0);
    const char *err = load_mesh(gl, &m);
    ck_assert_msg(err == NULL, "%s", err);
    /* Exponential: one exponent for the vector's largest component, a
     * 15-bit signed mantissa: error <= 2^(e - 15) <= 2 pmax 2^-15 a
     * component (rounded), sqrt(3) of that in 3-D. Octahedral 16-bit: steps
     * of 1 / 32767, stretched as above: 2 sqrt(6) / 2 / 32767. */
    expect_same("f.gltf", &ref, &m, sqrt(3.0) * 2 * pmax / 32768, 2 * sqrt(6.0) / 2 / 32767);
    tmesh_free(&m);
    /* The quaternions: 12-bit components of the three smallest, the
     * largest rebuilt; each component within 1 / (2^11 - 1) (scaled by
     * 1 / sqrt(2), the largest possible smallest component) plus the
     * rebuilt one's error; q and -q are one rotation. */
    sensim_scene *s = sensim_scene_create();
    float *qv = NULL;
    int nc = 0;
    ck_assert_int_ge(sensim_gltf_load_attribute(s, "q", gl, 0, 0, "_ROT", &qv, &nc), 0);
    ck_assert_int_eq(nc, 4);
    double qworst = 0;
    for (int k = 0; k < NVERT; k++) {
        double dp = 0, dm = 0;
        for (int a = 0; a < 4; a++) {
            dp = fmax(dp, fabs(qv[4 * k + a] - quat[k][a]));
            dm = fmax(dm, fabs(qv[4 * k + a] + quat[k][a]));
        }
        qworst = fmax(qworst, fmin(dp, dm));
    }
    ck_assert_msg(qworst <= 2.0 / 2047, "a quaternion component is %.3g off", qworst);
    free(qv);
    sensim_scene_destroy(s);
    /* TRIANGLES mode on a stream encoded as a sequence, a stride the codec
     * cannot have, and truncated data: errors naming the bufferView. */
    FILTER_JSON(12, "TRIANGLES");
    ck_assert_int_eq(tu_write_file(gl, json), 0);
    err = load_mesh(gl, &m);
    ck_assert_msg(err && strstr(err, "f.gltf: bufferViews[3].extensions.EXT_meshopt_compression: meshoptimizer cannot "
                                     "decode the TRIANGLES data"), "%s", err);
    FILTER_JSON(6, "INDICES");
    ck_assert_int_eq(tu_write_file(gl, json), 0);
    err = load_mesh(gl, &m);
    ck_assert_msg(err && strstr(err, "bufferViews[0].extensions.EXT_meshopt_compression: byteStride of ATTRIBUTES must "
                                     "be a multiple of 4"), "%s", err);
    len[0] -= 40;
    FILTER_JSON(12, "INDICES");
    ck_assert_int_eq(tu_write_file(gl, json), 0);
    err = load_mesh(gl, &m);
    ck_assert_msg(err && strstr(err, "bufferViews[0].extensions.EXT_meshopt_compression: meshoptimizer cannot decode "
                                     "the ATTRIBUTES data"), "%s", err);
#undef FILTER_JSON
    free(enc);
    free(b.d);
    tmesh_free(&ref);
    free(obj);
    free(gl);
    free(bin);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Integer positions are KHR_mesh_quantization's; without it in
 * extensionsUsed they are refused, as are normalized floats. */
START_TEST(gltf_quantization_errors)
{
    char *dir = tu_mkdtemp(), *gl = tu_path(dir, "q.gltf");
    const char *body = "\"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 0}}]}],"
                       "\"accessors\": [{\"bufferView\": 0, \"componentType\": %d, %s\"count\": 3, \"type\": "
                       "\"VEC3\"}], \"bufferViews\": [{\"buffer\": 0, \"byteLength\": 36}],"
                       "\"buffers\": [{\"uri\": \"data:application/octet-stream;base64,"
                       "AAAAAAAA6AMAAAAAAADQBwMAAAAAAAAAAAAAAAAAAAAAAAAA\", \"byteLength\": 36}]}";
    char json[2048], fmt[1024];
    snprintf(fmt, sizeof fmt, "{\"asset\": {\"version\": \"2.0\"}, %s", body);
    snprintf(json, sizeof json, fmt, 5123, "");
    ck_assert_int_eq(tu_write_file(gl, json), 0);
    tmesh m;
    const char *err = load_mesh(gl, &m);
    ck_assert_msg(err && strstr(err, "q.gltf: accessors[0].componentType: integer positions need "
                                     "KHR_mesh_quantization in extensionsUsed"), "%s", err);
    snprintf(json, sizeof json, fmt, 5126, "\"normalized\": true, ");
    ck_assert_int_eq(tu_write_file(gl, json), 0);
    err = load_mesh(gl, &m);
    ck_assert_msg(err && strstr(err, "accessors[0].normalized: only integer vertex attributes can be normalized"),
                  "%s", err);
    /* The same data with the extension: u16 (0, 0, 0), (1000, 0, 0),
     * (0, 2000, 3), read as the integers they are. */
    snprintf(fmt, sizeof fmt, "{\"asset\": {\"version\": \"2.0\"}, \"extensionsUsed\": [\"KHR_mesh_quantization\"], "
             "\"extensionsRequired\": [\"KHR_mesh_quantization\"], %s", body);
    snprintf(json, sizeof json, fmt, 5123, "");
    ck_assert_int_eq(tu_write_file(gl, json), 0);
    err = load_mesh(gl, &m);
    ck_assert_msg(err == NULL, "%s", err);
    ck_assert_uint_eq(m.nv, 3);
    ck_assert_float_eq(m.v[3], 1000.0f);
    ck_assert_float_eq(m.v[7], 2000.0f);
    ck_assert_float_eq(m.v[8], 3.0f);
    tmesh_free(&m);
    free(gl);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* PLY triangle strips (the tristrips element of Stanford's and
 * Cyberware's scanners): one list of all the torus's bands, a_0 b_0 a_1
 * b_1 ... a_NV b_NV per band and -1 between bands, ascii and binary; the
 * triangles are the strip triangulation of the same torus written as OBJ.
 * A strip turning a corner through a repeated index adds no triangle. */
START_TEST(ply_tristrips)
{
    char *dir = tu_mkdtemp(), *obj = tu_path(dir, "strip.obj"), *pa = tu_path(dir, "a.ply"),
         *pb = tu_path(dir, "b.ply");
    write_obj_split(obj, 1);
    tmesh ref, m;
    ck_assert_ptr_null(load_mesh(obj, &ref));
    int32_t list[NU * (2 * (NV + 1) + 1) + 2];
    int n = 0;
    for (int i = 0; i < NU; i++) {
        for (int j = 0; j <= NV; j++) {
            list[n++] = i * NV + j % NV;
            list[n++] = ((i + 1) % NU) * NV + j % NV;
        }
        if (i == 0) { /* a zero-area joint: b_NV repeated, then -1 */
            list[n] = list[n - 1];
            n++;
        }
        list[n++] = -1;
    }
    for (int binary = 0; binary < 2; binary++) {
        FILE *f = fopen(binary ? pb : pa, "wb");
        fprintf(f, "ply\nformat %s 1.0\ncomment strips as scanners write them\nelement vertex %d\n"
                   "property float x\nproperty float y\nproperty float z\nelement tristrips 1\n"
                   "property list int int vertex_indices\nend_header\n",
                binary ? "binary_little_endian" : "ascii", NVERT);
        for (int k = 0; k < NVERT; k++) {
            double p[3], nn[3];
            torus_vertex(k, p, nn);
            float x[3] = {(float)p[0], (float)p[1], (float)p[2]};
            if (binary)
                fwrite(x, sizeof x, 1, f);
            else
                fprintf(f, "%.9g %.9g %.9g\n", x[0], x[1], x[2]);
        }
        int32_t cnt = n;
        if (binary) {
            fwrite(&cnt, 4, 1, f);
            fwrite(list, 4, (size_t)n, f);
        } else {
            fprintf(f, "%d", n);
            for (int k = 0; k < n; k++)
                fprintf(f, " %d", list[k]);
            fprintf(f, "\n");
        }
        ck_assert_int_eq(fclose(f), 0);
        const char *err = load_mesh(binary ? pb : pa, &m);
        ck_assert_msg(err == NULL, "%s", err);
        expect_same(binary ? "b.ply" : "a.ply", &ref, &m, 1e-6, -1);
        tmesh_free(&m);
    }
    /* An index past the vertices, with the list's position. */
    FILE *f = fopen(pa, "w");
    fprintf(f, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
               "element tristrips 1\nproperty list int int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n"
               "5 0 1 2 -1 3\n");
    fclose(f);
    const char *err = load_mesh(pa, &m);
    ck_assert_msg(err && strstr(err, "a.ply:13: tristrips value 4: vertex index 3 out of range (3 vertices)"), "%s",
                  err);
    tmesh_free(&ref);
    free(obj);
    free(pa);
    free(pb);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* Formats from game engines and CAD through assimp: the torus OBJ
 * exported by assimp-utils (`assimp export`, its own OBJ reader and
 * writers) to Collada, ASCII FBX and ASCII and binary STL, an ASCII
 * STL written here, and a Collada file written here with Z_UP and the
 * torus's centre as a node translation (taken as written: no up-axis
 * turn; the node transform baked in). Text formats print floats to 6 or
 * more significant digits: 0.5 units of the 6th digit of |x| <= 5.6 is
 * 5e-6 a coordinate, 9e-6 in 3-D. (assimp 5.2's binary FBX writer makes
 * files its own reader refuses, "block offset is out of range": the ASCII
 * one is used. Its 3DS writer turns the coordinates to 3DS's Z-up, which
 * its reader keeps, so 3DS is not among these.) */
START_TEST(assimp_formats)
{
    char *dir = tu_mkdtemp(), *obj = tu_path(dir, "torus.obj"), cmd[2048];
    write_obj(obj);
    tmesh ref, m;
    ck_assert_ptr_null(load_mesh(obj, &ref));
    static const struct {
        const char *file, *format;
    } ex[] = {{"x.dae", "collada"}, {"x.fbx", "fbxa"}, {"x.stl", "stl"}, {"xb.stl", "stlb"}};
    for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
        char *out = tu_path(dir, ex[i].file);
        snprintf(cmd, sizeof cmd, "assimp export '%s' '%s' -f%s >/dev/null 2>&1", obj, out, ex[i].format);
        ck_assert_msg(system(cmd) == 0, "'%s' failed: assimp comes from Debian's assimp-utils", cmd);
        const char *err = load_mesh(out, &m);
        ck_assert_msg(err == NULL, "%s: %s", ex[i].file, err);
        expect_same(ex[i].file, &ref, &m, 9e-6, -1);
        tmesh_free(&m);
        free(out);
    }
    /* ASCII STL and Collada as the test writes them. */
    char *stl = tu_path(dir, "w.stl"), *dae = tu_path(dir, "w.dae");
    FILE *f = fopen(stl, "w");
    fprintf(f, "solid torus\n");
    for (int t = 0; t < NTRI; t++) {
        uint32_t v[3];
        torus_triangle(t, v);
        fprintf(f, " facet normal 0 0 0\n  outer loop\n");
        for (int r = 0; r < 3; r++) {
            double p[3], nn[3];
            torus_vertex((int)v[r], p, nn);
            fprintf(f, "   vertex %.9g %.9g %.9g\n", p[0], p[1], p[2]);
        }
        fprintf(f, "  endloop\n endfacet\n");
    }
    fprintf(f, "endsolid torus\n");
    ck_assert_int_eq(fclose(f), 0);
    const char *err = load_mesh(stl, &m);
    ck_assert_msg(err == NULL, "w.stl: %s", err);
    expect_same("w.stl", &ref, &m, 1e-6, -1);
    tmesh_free(&m);
    f = fopen(dae, "w");
    fprintf(f, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<COLLADA xmlns=\"http://www.collada.org/2005/11/"
               "COLLADASchema\" version=\"1.4.1\">\n<asset><unit name=\"meter\" meter=\"1\"/><up_axis>Z_UP</up_axis>"
               "</asset>\n<library_geometries><geometry id=\"g\"><mesh>\n<source id=\"p\"><float_array id=\"pa\" "
               "count=\"%d\">",
            3 * NVERT);
    for (int k = 0; k < NVERT; k++) {
        double p[3], nn[3];
        torus_vertex(k, p, nn);
        fprintf(f, "%.9g %.9g %.9g ", p[0] - TC[0], p[1] - TC[1], p[2] - TC[2]);
    }
    fprintf(f, "</float_array><technique_common><accessor source=\"#pa\" count=\"%d\" stride=\"3\"><param name=\"X\" "
               "type=\"float\"/><param name=\"Y\" type=\"float\"/><param name=\"Z\" type=\"float\"/></accessor>"
               "</technique_common></source>\n<vertices id=\"v\"><input semantic=\"POSITION\" source=\"#p\"/>"
               "</vertices>\n<triangles count=\"%d\"><input semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>",
            NVERT, NTRI);
    for (int t = 0; t < NTRI; t++) {
        uint32_t v[3];
        torus_triangle(t, v);
        fprintf(f, "%u %u %u ", v[0], v[1], v[2]);
    }
    fprintf(f, "</p></triangles>\n</mesh></geometry></library_geometries>\n<library_visual_scenes><visual_scene "
               "id=\"s\"><node id=\"n\"><translate>%g %g %g</translate><instance_geometry url=\"#g\"/></node>"
               "</visual_scene></library_visual_scenes>\n<scene><instance_visual_scene url=\"#s\"/></scene>\n"
               "</COLLADA>\n",
            TC[0], TC[1], TC[2]);
    ck_assert_int_eq(fclose(f), 0);
    err = load_mesh(dae, &m);
    ck_assert_msg(err == NULL, "w.dae: %s", err);
    expect_same("w.dae", &ref, &m, 2e-6, -1);
    tmesh_free(&m);
    /* A broken file: assimp's reason, with the file name. */
    ck_assert_int_eq(tu_write_file(stl, "solid x\n facet normal 0 0 1\n  outer loop\n   vertex 0 0\n"), 0);
    err = load_mesh(stl, &m);
    ck_assert_msg(err && strstr(err, "w.stl: assimp: "), "%s", err);
    char *xyz = tu_path(dir, "m.xyz1");
    ck_assert_int_eq(tu_write_file(xyz, "0 0 0\n"), 0);
    err = load_mesh(xyz, &m);
    ck_assert_msg(err && strstr(err, "m.xyz1: unknown mesh format"), "%s", err);
    free(xyz);
    free(stl);
    free(dae);
    tmesh_free(&ref);
    free(obj);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* data/scenes/compressed.yaml: the shipped cone as gltfpack -cc and
 * draco_transcoder wrote it loads to the plain cone's bounds within the
 * position grids (gltfpack 14 bits, Draco 11 bits over the cone's 0.73 m
 * height: half a step, 2.2e-5 and 1.8e-4 m), and a ray along each row hits
 * its first cone's side where the plain row's ray does. */
START_TEST(shipped_compressed_scene)
{
    char *path = tu_src("data/scenes/compressed.yaml");
    sensim_scene *s = sensim_scene_load(path);
    ck_assert_msg(s != NULL, "%s", sensim_last_error());
    double lo[3][3], hi[3][3];
    size_t nt[3];
    static const char *const names[3] = {"plain", "meshopt", "draco"};
    static const double tol[3] = {0, 0.73 / 16383 / 2 + 1e-6, 0.73 / 2047 / 2 + 1e-6};
    for (int k = 0; k < 3; k++) {
        int m = sensim_scene_find_mesh(s, names[k]);
        ck_assert_int_ge(m, 0);
        ck_assert_int_eq(sensim_scene_mesh_info(s, m, NULL, &nt[k], lo[k], hi[k]), SENSIM_OK);
        ck_assert_uint_eq(nt[k], nt[0]);
        for (int a = 0; a < 3; a++) {
            ck_assert_within(lo[k][a], lo[0][a], tol[k]);
            ck_assert_within(hi[k][a], hi[0][a], tol[k]);
        }
    }
    sensim_hit h[3];
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(sensim_scene_intersect(s, sensim_vec3_make(0, -2 + 2 * k, 0.3), sensim_vec3_make(1, 0, 0), 0,
                                                0, 100, &h[k]),
                         SENSIM_OK);
    ck_assert(h[0].distance > 5.5 && h[0].distance < 6);
    ck_assert_within(h[1].distance, h[0].distance, 2 * tol[1]);
    ck_assert_within(h[2].distance, h[0].distance, 2 * tol[2]);
    sensim_scene_destroy(s);
    free(path);
}
END_TEST

Suite *suite_meshes(void)
{
    Suite *s = suite_create("meshes");
    TCase *tc = tcase_create("gltf");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, gltf_variants);
    tcase_add_test(tc, gltf_sparse);
    tcase_add_test(tc, gltf_meshopt_filters);
    tcase_add_test(tc, gltf_quantization_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("formats");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, ply_tristrips);
    tcase_add_test(tc, assimp_formats);
    tcase_add_test(tc, shipped_compressed_scene);
    suite_add_tcase(s, tc);
    return s;
}
