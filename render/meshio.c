/* Mesh files: Wavefront OBJ (v and f records; polygons fanned into
 * triangles; texture/normal indices ignored) and PLY (ascii and
 * binary_little_endian; vertex x, y, z, a face index list and the
 * tristrips element some scanners write); glTF 2.0 is in gltf.c. Every
 * other extension Debian's assimp reads (STL, Collada DAE, FBX, 3DS, ...)
 * goes through assimp's C API. Coordinates are taken as Z-up unless the
 * caller says Y-up. Every vertex and triangle of OBJ and PLY remembers its
 * source line, so a NaN or a degenerate face is reported as
 * "file:line: ..." (assimp gives no lines: its meshes are named instead). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "render_internal.h"
#include "../lib/base_internal.h"

typedef struct {
    float *v;
    int *vline;
    size_t nv, cv;
    uint32_t *t;
    int *tline;
    size_t nt, ct;
    const char *path; /* the file, for errors */
} mbuild;

static int mb_nomem(const mbuild *b)
{
    sensim_error(SENSIM_ENOMEM, "%s: out of memory", b->path);
    return -1;
}

static void mb_free(mbuild *b) { SENSIM_FREE_ALL(b->v, b->vline, b->t, b->tline); }

/* Grows an array of rows (row_size bytes each) and its line numbers to
 * hold `want` rows; nothing when they already do. */
static int grow_rows(void **rows, size_t row_size, int **line, size_t *cap, size_t want)
{
    if (want <= *cap)
        return 0;
    void *r = realloc(*rows, want * row_size);
    if (r)
        *rows = r;
    int *l = realloc(*line, want * sizeof *l);
    if (l)
        *line = l;
    if (!r || !l)
        return -1;
    *cap = want;
    return 0;
}

/* Room for nv vertices and nt triangles, in one allocation each where a
 * file declares its sizes (PLY): no doubling, no copies, no slack. This and
 * what calls it (mb_vertex, mb_tri) return -1 with the error set. */
static int mb_reserve(mbuild *b, size_t nv, size_t nt)
{
    void *v = b->v, *t = b->t;
    int r = grow_rows(&v, 3 * sizeof *b->v, &b->vline, &b->cv, nv);
    b->v = v;
    if (r == 0)
        r = grow_rows(&t, 3 * sizeof *b->t, &b->tline, &b->ct, nt);
    b->t = t;
    return r ? mb_nomem(b) : 0;
}

static int mb_vertex(mbuild *b, double x, double y, double z, int line)
{
    if (b->nv == b->cv && mb_reserve(b, b->cv ? 2 * b->cv : 1024, 0) < 0)
        return -1;
    b->v[3 * b->nv] = (float)x;
    b->v[3 * b->nv + 1] = (float)y;
    b->v[3 * b->nv + 2] = (float)z;
    b->vline[b->nv++] = line;
    return 0;
}

static int mb_tri(mbuild *b, uint32_t i, uint32_t j, uint32_t k, int line)
{
    if (b->nt == b->ct && mb_reserve(b, 0, b->ct ? 2 * b->ct : 1024) < 0)
        return -1;
    b->t[3 * b->nt] = i;
    b->t[3 * b->nt + 1] = j;
    b->t[3 * b->nt + 2] = k;
    b->tline[b->nt++] = line;
    return 0;
}

/* A polygon of n corners as a fan of triangles; -1 with the error set. */
static int mb_fan(mbuild *b, const uint32_t *poly, size_t n, int line)
{
    if (n < 3) {
        sensim_error(SENSIM_EFORMAT, "%s:%d: face needs at least 3 vertices (got %zu)", b->path, line, n);
        return -1;
    }
    for (size_t k = 1; k + 1 < n; k++)
        if (mb_tri(b, poly[0], poly[k], poly[k + 1], line) < 0)
            return -1;
    return 0;
}

static int mb_finish(sensim_scene *s, const char *name, const char *path, mbuild *b, int up_y)
{
    if (up_y)
        mesh_y_up_to_z_up(b->v, b->nv);
    int id = sensim_scene_mesh_add_owned(s, name, b->v, b->nv, b->t, b->nt, path, b->vline, b->tline);
    free(b->vline);
    free(b->tline);
    return id;
}

/* A text loader's end: frees its line and scratch buffers, then adds the
 * mesh to the scene when ok (returning its id), else frees the builder and
 * returns -1 (the error already set). */
static int mb_end(sensim_scene *s, const char *name, mbuild *b, int up_y, int ok, char *line, void *scratch)
{
    free(line);
    free(scratch);
    if (ok)
        return mb_finish(s, name, b->path, b, up_y);
    mb_free(b);
    return -1;
}

/* A decimal number without exponent of at most 19 digits, as mesh files
 * print them, by Clinger's fast path: the digits as an exact integer m <
 * 2^53 divided by an exact power of ten 10^k, k <= 22, is the correctly
 * rounded double, so the result is strtod's to the bit; anything else
 * (exponents, more digits, inf, nan) goes to strtod. About 5x faster than
 * strtod, which dominated OBJ parsing. */
static double parse_decimal(const char *p, char **end)
{
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *s = p;
    int neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    uint64_t m = 0;
    int nd = 0, frac = 0;
    for (; *s >= '0' && *s <= '9'; s++, nd++)
        m = m * 10 + (uint64_t)(*s - '0');
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, nd++, frac++)
            m = m * 10 + (uint64_t)(*s - '0');
    if (nd == 0 || nd > 19 || frac > 22 || m > (1ull << 53) || *s == 'e' || *s == 'E')
        return strtod(p, end);
    *end = (char *)s;
    double v = (double)m / p10[frac];
    return neg ? -v : v;
}

/* Strict double parse of one whitespace-delimited token; *p advances. */
static int next_double(char **p, double *out)
{
    char *e;
    while (**p == ' ' || **p == '\t')
        (*p)++;
    if (!**p || **p == '\n' || **p == '\r')
        return -1;
    *out = parse_decimal(*p, &e);
    if (e == *p || (*e && !isspace((unsigned char)*e)))
        return -1;
    *p = e;
    return 0;
}

static int load_obj(sensim_scene *s, const char *name, const char *path, FILE *f, int up_y)
{
    mbuild b = {.path = path};
    char *line = NULL;
    size_t cap = 0;
    int ln = 0, ok = 0;
    uint32_t *poly = NULL;
    size_t cpoly = 0;
    while (getline(&line, &cap, f) >= 0) {
        ln++;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (p[0] == 'v' && (p[1] == ' ' || p[1] == '\t')) {
            double x[3];
            p++;
            for (int k = 0; k < 3; k++)
                if (next_double(&p, &x[k]) < 0) {
                    sensim_error(SENSIM_EFORMAT, "%s:%d: vertex needs three numbers", path, ln);
                    goto fail;
                }
            if (mb_vertex(&b, x[0], x[1], x[2], ln) < 0)
                goto fail;
        } else if (p[0] == 'f' && (p[1] == ' ' || p[1] == '\t')) {
            size_t n = 0;
            p++;
            for (;;) {
                while (*p == ' ' || *p == '\t')
                    p++;
                if (!*p || *p == '\n' || *p == '\r' || *p == '#')
                    break;
                char *e;
                errno = 0;
                long idx = strtol(p, &e, 10);
                if (e == p || errno) {
                    sensim_error(SENSIM_EFORMAT, "%s:%d: bad face index", path, ln);
                    goto fail;
                }
                while (*e && !isspace((unsigned char)*e))
                    e++; /* skip /vt/vn */
                p = e;
                long r = idx < 0 ? (long)b.nv + idx : idx - 1;
                if (idx == 0 || r < 0 || r >= (long)b.nv) {
                    sensim_error(SENSIM_EDATA, "%s:%d: vertex index %ld out of range (%zu vertices so far)", path,
                                 ln, idx, b.nv);
                    goto fail;
                }
                if (n == cpoly) {
                    size_t c = cpoly ? 2 * cpoly : 16;
                    uint32_t *q = realloc(poly, c * sizeof *q);
                    if (!q) {
                        mb_nomem(&b);
                        goto fail;
                    }
                    poly = q;
                    cpoly = c;
                }
                poly[n++] = (uint32_t)r;
            }
            if (mb_fan(&b, poly, n, ln) < 0)
                goto fail;
        }
        /* vt, vn, o, g, s, usemtl, mtllib, comments: not needed for ray casting. */
    }
    ok = 1;
fail:
    return mb_end(s, name, &b, up_y, ok, line, poly);
}

/* ---- PLY ---- */

typedef enum { P_I8, P_U8, P_I16, P_U16, P_I32, P_U32, P_F32, P_F64, P_BAD } ptype;

static ptype ply_type(const char *t)
{
    static const char *names[][2] = {{"char", "int8"},   {"uchar", "uint8"},  {"short", "int16"},
                                     {"ushort", "uint16"}, {"int", "int32"},   {"uint", "uint32"},
                                     {"float", "float32"}, {"double", "float64"}};
    for (int i = 0; i < 8; i++)
        if (strcmp(t, names[i][0]) == 0 || strcmp(t, names[i][1]) == 0)
            return (ptype)i;
    return P_BAD;
}
static size_t ptype_size(ptype t)
{
    static const size_t sz[] = {1, 1, 2, 2, 4, 4, 4, 8};
    return sz[t];
}

typedef struct {
    char name[32];
    ptype type, count_type; /* count_type != P_BAD: a list */
} pprop;

typedef struct {
    char name[32];
    size_t count;
    pprop prop[16];
    int nprop;
} pelem;

static double bin_value(const unsigned char *p, ptype t)
{
    switch (t) {
    case P_I8: return (double)*(const int8_t *)p;
    case P_U8: return (double)*p;
    case P_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case P_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case P_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case P_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case P_F32: { float v; memcpy(&v, p, 4); return v; }
    case P_F64: { double v; memcpy(&v, p, 8); return v; }
    default: return NAN;
    }
}

/* Binary PLY data through a buffer of our own: one fread per 1 MiB, not
 * one per value (the per-call locking of stdio dominated binary loads). */
typedef struct {
    FILE *f;
    unsigned char buf[1 << 20];
    size_t pos, len;
} pbuf;

/* Reads one value (ascii token or little-endian binary). */
static int ply_read(pbuf *rb, int binary, ptype t, char **cursor, double *out)
{
    if (binary) {
        size_t n = ptype_size(t);
        if (rb->len - rb->pos < n) {
            memmove(rb->buf, rb->buf + rb->pos, rb->len - rb->pos);
            rb->len -= rb->pos;
            rb->pos = 0;
            rb->len += fread(rb->buf + rb->len, 1, sizeof rb->buf - rb->len, rb->f);
            if (rb->len < n)
                return -1;
        }
        *out = bin_value(rb->buf + rb->pos, t);
        rb->pos += n;
        return 0;
    }
    return next_double(cursor, out);
}

/* A tristrips list (the PLY convention of Stanford's scanners and
 * Cyberware: vertex indices, -1 ending a strip): triangle k of a strip is
 * (s[k], s[k+1], s[k+2]), its winding flipped on odd k so all face one
 * way. Triangles repeating an index are the zero-area joints strips use to
 * turn corners, not geometry: skipped. */
static int ply_strips(pbuf *rb, int binary, ptype t, char **cur, size_t n, mbuild *b, const char *path, int where)
{
    uint32_t w[2];
    size_t have = 0;
    for (size_t m = 0; m < n; m++) {
        double v;
        if (ply_read(rb, binary, t, cur, &v) < 0) {
            sensim_error(SENSIM_EFORMAT, "%s:%d: tristrips list: too few values (%zu of %zu)", path, where, m, n);
            return -1;
        }
        if (v == -1) {
            have = 0;
            continue;
        }
        if (!(v >= 0 && v < (double)b->nv) || v != floor(v)) {
            sensim_error(SENSIM_EDATA, "%s:%d: tristrips value %zu: vertex index %g out of range (%zu vertices)",
                         path, where, m, v, b->nv);
            return -1;
        }
        uint32_t x = (uint32_t)v;
        if (have >= 2 && w[0] != w[1] && w[1] != x && w[0] != x) {
            int odd = (have & 1) == 1;
            if (mb_tri(b, odd ? w[1] : w[0], odd ? w[0] : w[1], x, where) < 0)
                return -1;
        }
        if (have >= 2) {
            w[0] = w[1];
            w[1] = x;
        } else
            w[have] = x;
        have++;
    }
    return 0;
}

static int load_ply(sensim_scene *s, const char *name, const char *path, FILE *f, int up_y)
{
    mbuild b = {.path = path};
    pbuf *rb = NULL;
    char *line = NULL;
    size_t cap = 0;
    int ln = 0, binary = -1, ok = 0;
    pelem el[8];
    int nel = 0;
    struct stat sb;
    unsigned long long fsize = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) ? (unsigned long long)sb.st_size
                                                                                  : ULLONG_MAX;
    if (getline(&line, &cap, f) < 0 || strncmp(line, "ply", 3) != 0) {
        sensim_error(SENSIM_EFORMAT, "%s:1: not a PLY file (no 'ply' magic)", path);
        goto fail;
    }
    ln = 1;
    for (;;) {
        if (getline(&line, &cap, f) < 0) {
            sensim_error(SENSIM_EFORMAT, "%s:%d: header ends without end_header", path, ln);
            goto fail;
        }
        ln++;
        char a[32] = "", c[32] = "", d[32] = "", e[32] = "", g[32] = "";
        int n = sscanf(line, "%31s %31s %31s %31s %31s", a, c, d, e, g);
        if (n <= 0 || strcmp(a, "comment") == 0 || strcmp(a, "obj_info") == 0)
            continue;
        if (strcmp(a, "end_header") == 0)
            break;
        if (strcmp(a, "format") == 0) {
            if (strcmp(c, "ascii") == 0)
                binary = 0;
            else if (strcmp(c, "binary_little_endian") == 0)
                binary = 1;
            else {
                sensim_error(SENSIM_EUNSUPPORTED, "%s:%d: PLY format '%s' not supported (ascii or "
                             "binary_little_endian)", path, ln, c);
                goto fail;
            }
        } else if (strcmp(a, "element") == 0) {
            char *endp;
            errno = 0;
            unsigned long long cnt = strtoull(d, &endp, 10);
            if (nel == 8 || n < 3 || *endp || errno || !isdigit((unsigned char)d[0])) {
                sensim_error(SENSIM_EFORMAT, "%s:%d: bad element line", path, ln);
                goto fail;
            }
            /* Every row takes at least one byte (a value, or a line in
             * ascii): a count the file cannot hold is refused here, before
             * a loop runs over it. */
            if (cnt > fsize) {
                sensim_error(SENSIM_EFORMAT, "%s:%d: element '%s' declares %llu rows but the file has %llu bytes",
                             path, ln, c, cnt, fsize);
                goto fail;
            }
            memset(&el[nel], 0, sizeof el[nel]);
            snprintf(el[nel].name, sizeof el[nel].name, "%s", c);
            el[nel++].count = (size_t)cnt;
        } else if (strcmp(a, "property") == 0) {
            if (nel == 0 || el[nel - 1].nprop == 16) {
                sensim_error(SENSIM_EFORMAT, "%s:%d: property outside an element (or too many)", path, ln);
                goto fail;
            }
            pprop *pp = &el[nel - 1].prop[el[nel - 1].nprop++];
            if (strcmp(c, "list") == 0) {
                pp->count_type = ply_type(d);
                pp->type = ply_type(e);
                snprintf(pp->name, sizeof pp->name, "%s", g);
                if (n < 5 || pp->count_type == P_BAD || pp->type == P_BAD) {
                    sensim_error(SENSIM_EFORMAT, "%s:%d: bad list property", path, ln);
                    goto fail;
                }
            } else {
                pp->count_type = P_BAD;
                pp->type = ply_type(c);
                snprintf(pp->name, sizeof pp->name, "%s", d);
                if (n < 3 || pp->type == P_BAD) {
                    sensim_error(SENSIM_EFORMAT, "%s:%d: bad property type '%s'", path, ln, c);
                    goto fail;
                }
            }
        } else {
            sensim_error(SENSIM_EFORMAT, "%s:%d: unexpected header line '%s'", path, ln, a);
            goto fail;
        }
    }
    if (binary < 0) {
        sensim_error(SENSIM_EFORMAT, "%s: PLY header has no format line", path);
        goto fail;
    }
    if (binary) {
        if (!(rb = malloc(sizeof *rb))) {
            mb_nomem(&b);
            goto fail;
        }
        rb->f = f;
        rb->pos = rb->len = 0;
    }
    /* The declared vertex and face counts, each no more rows than the
     * file's bytes can hold (a binary row takes its fixed-size values, an
     * ascii one at least two bytes), reserved at once. */
    for (int ei = 0; ei < nel; ei++) {
        size_t row = binary ? 0 : 2;
        for (int k = 0; binary && k < el[ei].nprop; k++)
            row += ptype_size(el[ei].prop[k].count_type != P_BAD ? el[ei].prop[k].count_type : el[ei].prop[k].type);
        size_t most = row ? (size_t)(fsize / row) : el[ei].count, n = el[ei].count < most ? el[ei].count : most;
        if ((strcmp(el[ei].name, "vertex") == 0 && mb_reserve(&b, n, 0) < 0) ||
            (strcmp(el[ei].name, "face") == 0 && mb_reserve(&b, 0, n) < 0))
            goto fail;
    }
    for (int ei = 0; ei < nel; ei++) {
        pelem *E = &el[ei];
        int is_v = strcmp(E->name, "vertex") == 0, is_f = strcmp(E->name, "face") == 0,
            is_s = strcmp(E->name, "tristrips") == 0;
        int ix = -1, iy = -1, iz = -1, il = -1;
        for (int k = 0; k < E->nprop; k++) {
            if (strcmp(E->prop[k].name, "x") == 0) ix = k;
            if (strcmp(E->prop[k].name, "y") == 0) iy = k;
            if (strcmp(E->prop[k].name, "z") == 0) iz = k;
            if (E->prop[k].count_type != P_BAD &&
                (strcmp(E->prop[k].name, "vertex_indices") == 0 || strcmp(E->prop[k].name, "vertex_index") == 0))
                il = k;
        }
        if (is_v && (ix < 0 || iy < 0 || iz < 0)) {
            sensim_error(SENSIM_EFORMAT, "%s: vertex element lacks x, y or z", path);
            goto fail;
        }
        if ((is_f || is_s) && il < 0) {
            sensim_error(SENSIM_EFORMAT, "%s: %s element lacks a vertex_indices list", path, E->name);
            goto fail;
        }
        for (size_t r = 0; r < E->count; r++) {
            char *cur = NULL;
            if (!binary) {
                if (getline(&line, &cap, f) < 0) {
                    sensim_error(SENSIM_EFORMAT, "%s:%d: file ends inside element '%s' (%zu of %zu)", path, ln,
                                 E->name, r, E->count);
                    goto fail;
                }
                ln++;
                cur = line;
            }
            int where = binary ? (int)r + 1 : ln;
            double xyz[3] = {0, 0, 0};
            uint32_t poly[64];
            size_t npoly = 0;
            for (int k = 0; k < E->nprop; k++) {
                pprop *pp = &E->prop[k];
                double v;
                if (pp->count_type == P_BAD) {
                    if (ply_read(rb, binary, pp->type, &cur, &v) < 0)
                        goto short_read;
                    if (k == ix) xyz[0] = v;
                    if (k == iy) xyz[1] = v;
                    if (k == iz) xyz[2] = v;
                    continue;
                }
                double cnt;
                /* A face has a few corners; a strip list holds a whole
                 * mesh, bounded like an element count by the file size. */
                double maxcnt = is_s && k == il ? (double)fsize : 64;
                if (ply_read(rb, binary, pp->count_type, &cur, &cnt) < 0 || !(cnt >= 0 && cnt <= maxcnt) ||
                    cnt != floor(cnt)) {
                    sensim_error(SENSIM_EFORMAT, "%s:%d: bad list length", path, where);
                    goto fail;
                }
                if (is_s && k == il) {
                    if (ply_strips(rb, binary, pp->type, &cur, (size_t)cnt, &b, path, where) < 0)
                        goto fail;
                    continue;
                }
                for (size_t m = 0; m < (size_t)cnt; m++) {
                    if (ply_read(rb, binary, pp->type, &cur, &v) < 0)
                        goto short_read;
                    if (k == il) {
                        if (!(v >= 0 && v < (double)b.nv) || v != floor(v)) {
                            sensim_error(SENSIM_EDATA, "%s:%d: vertex index %g out of range (%zu vertices)", path,
                                         where, v, b.nv);
                            goto fail;
                        }
                        poly[npoly++] = (uint32_t)v;
                    }
                }
            }
            if (is_v && mb_vertex(&b, xyz[0], xyz[1], xyz[2], where) < 0)
                goto fail;
            if (is_f && mb_fan(&b, poly, npoly, where) < 0)
                goto fail;
            continue;
        short_read:
            sensim_error(SENSIM_EFORMAT, "%s:%d: element '%s' %zu: too few values", path, where, E->name, r);
            goto fail;
        }
    }
    ok = 1;
fail:
    return mb_end(s, name, &b, up_y, ok, line, rb);
}

/* Any format Debian's assimp reads, through its C API: triangulated, node
 * transforms baked in (aiProcess_PreTransformVertices), identical positions
 * joined (STL repeats them per facet), point and line primitives left
 * out. Collada's up_axis is not applied (assimp would turn a Z_UP file
 * Y-up): like OBJ and PLY, coordinates are taken as written. */
static int load_assimp(sensim_scene *s, const char *name, const char *path, int up_y)
{
    struct aiPropertyStore *props = aiCreatePropertyStore();
    if (!props) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        return -1;
    }
    aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, 1);
    aiSetImportPropertyInteger(props, AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    /* Only positions are used: dropping the rest first lets vertices that
     * differ by a facet normal (STL) or a UV seam join. */
    aiSetImportPropertyInteger(props, AI_CONFIG_PP_RVC_FLAGS,
                               aiComponent_NORMALS | aiComponent_TANGENTS_AND_BITANGENTS | aiComponent_COLORS |
                                   aiComponent_TEXCOORDS | aiComponent_BONEWEIGHTS);
    const struct aiScene *sc = aiImportFileExWithProperties(
        path, aiProcess_RemoveComponent | aiProcess_Triangulate | aiProcess_PreTransformVertices |
                  aiProcess_JoinIdenticalVertices | aiProcess_SortByPType,
        NULL, props);
    aiReleasePropertyStore(props);
    if (!sc) {
        sensim_error(SENSIM_EFORMAT, "%s: assimp: %s", path, aiGetErrorString());
        return -1;
    }
    mbuild b = {.path = path};
    for (unsigned mi = 0; mi < sc->mNumMeshes; mi++) {
        const struct aiMesh *m = sc->mMeshes[mi];
        if (!(m->mPrimitiveTypes & aiPrimitiveType_TRIANGLE))
            continue;
        size_t base = b.nv;
        if (m->mNumVertices > UINT32_MAX - base) {
            sensim_error(SENSIM_EUNSUPPORTED, "%s: more than 2^32 vertices", path);
            goto fail;
        }
        for (unsigned i = 0; i < m->mNumVertices; i++) {
            const struct aiVector3D *p = &m->mVertices[i];
            if (!isfinite(p->x) || !isfinite(p->y) || !isfinite(p->z)) {
                sensim_error(SENSIM_EDATA, "%s: mesh %u ('%s') vertex %u is not finite", path, mi, m->mName.data, i);
                goto fail;
            }
            if (mb_vertex(&b, p->x, p->y, p->z, 0) < 0)
                goto fail;
        }
        for (unsigned k = 0; k < m->mNumFaces; k++) {
            const struct aiFace *fc = &m->mFaces[k];
            if (fc->mNumIndices != 3)
                continue;
            for (int r = 0; r < 3; r++)
                if (fc->mIndices[r] >= m->mNumVertices) {
                    sensim_error(SENSIM_EDATA, "%s: mesh %u ('%s') face %u: vertex index %u out of range", path, mi,
                                 m->mName.data, k, fc->mIndices[r]);
                    goto fail;
                }
            if (mb_tri(&b, (uint32_t)(base + fc->mIndices[0]), (uint32_t)(base + fc->mIndices[1]),
                       (uint32_t)(base + fc->mIndices[2]), 0) < 0)
                goto fail;
        }
    }
    aiReleaseImport(sc);
    if (b.nt == 0) {
        mb_free(&b);
        sensim_error(SENSIM_EDATA, "%s: assimp found no triangles in the file", path);
        return -1;
    }
    free(b.vline);
    free(b.tline);
    b.vline = b.tline = NULL;
    return mb_finish(s, name, path, &b, up_y);
fail:
    aiReleaseImport(sc);
    mb_free(&b);
    return -1;
}

int sensim_scene_load_mesh_up(sensim_scene *s, const char *name, const char *path, sensim_mesh_up up)
{
    const char *dot = strrchr(path, '.');
    enum { OBJ, PLY, GLTF, GLB, ASSIMP } kind;
    if (dot && strcasecmp(dot, ".obj") == 0)
        kind = OBJ;
    else if (dot && strcasecmp(dot, ".ply") == 0)
        kind = PLY;
    else if (dot && strcasecmp(dot, ".gltf") == 0)
        kind = GLTF;
    else if (dot && strcasecmp(dot, ".glb") == 0)
        kind = GLB;
    else if (dot && aiIsExtensionSupported(dot))
        kind = ASSIMP;
    else {
        sensim_error(SENSIM_EUNSUPPORTED, "%s: unknown mesh format (expected .obj, .ply, .gltf, .glb, or one "
                     "assimp reads: .stl, .dae, .fbx, .3ds, ...)", path);
        return -1;
    }
    if (up != SENSIM_MESH_UP_AUTO && up != SENSIM_MESH_UP_Y && up != SENSIM_MESH_UP_Z) {
        sensim_error(SENSIM_EINVAL, "%s: bad up axis %d", path, (int)up);
        return -1;
    }
    /* glTF is Y-up by its specification; OBJ, PLY and the formats assimp
     * reads are taken as they are (Z-up) unless told otherwise. */
    int up_y = up == SENSIM_MESH_UP_Y || (up == SENSIM_MESH_UP_AUTO && (kind == GLTF || kind == GLB));
    if (kind == GLTF || kind == GLB)
        return sensim_gltf_load(s, name, path, kind == GLB, up_y);
    if (kind == ASSIMP) {
        /* assimp opens the file itself: say plainly when it cannot. */
        FILE *f = fopen(path, "rb");
        if (!f) {
            sensim_error(SENSIM_EIO, "%s: cannot open mesh: %s", path, strerror(errno));
            return -1;
        }
        fclose(f);
        return load_assimp(s, name, path, up_y);
    }
    FILE *f = fopen(path, kind == PLY ? "rb" : "r");
    if (!f) {
        sensim_error(SENSIM_EIO, "%s: cannot open mesh: %s", path, strerror(errno));
        return -1;
    }
    int id = kind == PLY ? load_ply(s, name, path, f, up_y) : load_obj(s, name, path, f, up_y);
    fclose(f);
    return id;
}

int sensim_scene_load_mesh(sensim_scene *s, const char *name, const char *path)
{
    return sensim_scene_load_mesh_up(s, name, path, SENSIM_MESH_UP_AUTO);
}
