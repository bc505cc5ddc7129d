/* glTF 2.0 meshes (Khronos glTF 2.0 specification): .gltf (JSON, buffers
 * in external files relative to the .gltf or in base64 data: URIs) and .glb
 * (12-byte header, a JSON chunk and an optional BIN chunk). Only what a ray
 * caster needs is read: triangle primitives (mode 4, and strips and fans,
 * modes 5 and 6), VEC3 POSITION accessors, optional u8/u16/u32 indices,
 * bufferView byteStride, and the node hierarchy (matrix or TRS) of the
 * default scene (else scene 0, else every root node; with no nodes at
 * all, every mesh untransformed). Every instance of every primitive becomes
 * part of one sensim mesh, in glTF's own axes (meshio.c converts Y-up).
 *
 * The meshes tools ship (gltfpack's default output among them) are read
 * too: KHR_mesh_quantization (8/16-bit integer attributes, normalized or
 * not, dequantized by the node transform gltfpack writes), sparse
 * accessors (and accessors without a bufferView: zeros), bufferViews
 * compressed by EXT_meshopt_compression (decoded by Debian's
 * libmeshoptimizer, with its OCTAHEDRAL, QUATERNION and EXPONENTIAL
 * filters) and KHR_draco_mesh_compression primitives (decoded by Debian's
 * libdraco through render/draco.cc, the library's one C++ file).
 *
 * The JSON parser below stays the project's own: no Debian C library
 * parses glTF (cgltf is not packaged; tinygltf is C++ and reads neither
 * extension), and this one keeps the byte offset, line and column of
 * every value, which the error messages and the untrusted-input checks
 * use. What libraries do well, decompression, they do here.
 *
 * The file is untrusted: every offset, length, stride and index is checked
 * (in 64-bit arithmetic, against overflow) before a byte is read, and JSON
 * nesting is bounded; every parameter the meshoptimizer decoders assert
 * on is checked before the call. Errors name the file and the JSON path
 * ("accessors[3].componentType") or the byte offset of a syntax error. Any
 * extensionsRequired other than those above and KHR_texture_transform is
 * rejected, not guessed at.
 *
 * For the camera, each primitive's material and the texture coordinates
 * its textures sample (TEXCOORD_n, decoded from the Draco stream for a
 * Draco primitive) are kept, and the metallic-roughness factors, base
 * colour and metallic-roughness textures (PNG or JPEG, by file, data: URI
 * or bufferView) and their KHR_texture_transforms of the materials used
 * (surface.h). */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <meshoptimizer.h>

#include "draco.h"
#include "render_internal.h"
#include "surface.h"

/* ---- a small strict JSON parser (RFC 8259) ---- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype t;
    size_t off; /* byte offset of the value in the JSON text */
    double num;
    char *str;
    size_t n;
    struct jval *item; /* arrays and objects */
    char **key;        /* objects */
} jval;

typedef struct {
    const char *s;
    size_t len, pos;
    const char *path;
    int depth;
} jparser;

#define JSON_MAX_DEPTH 64

static void jfree(jval *v)
{
    if (!v)
        return;
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        jfree(&v->item[i]);
        if (v->key)
            free(v->key[i]);
    }
    free(v->item);
    free(v->key);
}

static int jerr(const jparser *p, size_t off, const char *what)
{
    int line = 1;
    size_t col = 1;
    for (size_t i = 0; i < off && i < p->len; i++) {
        if (p->s[i] == '\n') {
            line++;
            col = 1;
        } else
            col++;
    }
    sensim_error(SENSIM_EFORMAT, "%s: JSON byte %zu (line %d, column %zu): %s", p->path, off, line, col, what);
    return -1;
}

static void jskip(jparser *p)
{
    while (p->pos < p->len &&
           (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static int jvalue(jparser *p, jval *v);

static int hex4(const jparser *p, size_t at, unsigned *out)
{
    unsigned u = 0;
    if (at + 4 > p->len)
        return -1;
    for (int i = 0; i < 4; i++) {
        char c = p->s[at + i];
        u <<= 4;
        if (c >= '0' && c <= '9')
            u |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            u |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            u |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = u;
    return 0;
}

/* A string at p->pos (the opening quote); unescaped into *out (malloc'd). */
static int jstring(jparser *p, char **out)
{
    size_t start = p->pos++;
    /* The unescaped string is never longer than the escaped one. */
    size_t end = p->pos;
    while (end < p->len && p->s[end] != '"')
        end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->len)
        return jerr(p, start, "unterminated string");
    char *o = malloc(end - p->pos + 1);
    if (!o) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", p->path);
        return -1;
    }
    size_t k = 0;
    while (p->s[p->pos] != '"') {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c < 0x20) {
            free(o);
            return jerr(p, p->pos, "control character in a string");
        }
        if (c != '\\') {
            o[k++] = (char)c;
            p->pos++;
            continue;
        }
        char e = p->s[p->pos + 1];
        const char *map = "\"\"\\\\//b\bf\fn\nr\rt\t";
        const char *m = NULL;
        for (int i = 0; map[i]; i += 2)
            if (map[i] == e)
                m = map + i + 1;
        if (m) {
            o[k++] = *m;
            p->pos += 2;
            continue;
        }
        unsigned u, u2;
        if (e != 'u' || hex4(p, p->pos + 2, &u) < 0) {
            free(o);
            return jerr(p, p->pos, "bad escape in a string");
        }
        p->pos += 6;
        if (u >= 0xD800 && u < 0xDC00) {
            if (p->pos + 6 > p->len || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u' ||
                hex4(p, p->pos + 2, &u2) < 0 || u2 < 0xDC00 || u2 >= 0xE000) {
                free(o);
                return jerr(p, p->pos - 6, "unpaired surrogate in a string");
            }
            p->pos += 6;
            u = 0x10000 + ((u - 0xD800) << 10) + (u2 - 0xDC00);
        } else if (u >= 0xDC00 && u < 0xE000) {
            free(o);
            return jerr(p, p->pos - 6, "unpaired surrogate in a string");
        }
        /* UTF-8 of u takes at most 4 bytes; its escape took at least 6. */
        if (u < 0x80)
            o[k++] = (char)u;
        else if (u < 0x800) {
            o[k++] = (char)(0xC0 | (u >> 6));
            o[k++] = (char)(0x80 | (u & 0x3F));
        } else if (u < 0x10000) {
            o[k++] = (char)(0xE0 | (u >> 12));
            o[k++] = (char)(0x80 | ((u >> 6) & 0x3F));
            o[k++] = (char)(0x80 | (u & 0x3F));
        } else {
            o[k++] = (char)(0xF0 | (u >> 18));
            o[k++] = (char)(0x80 | ((u >> 12) & 0x3F));
            o[k++] = (char)(0x80 | ((u >> 6) & 0x3F));
            o[k++] = (char)(0x80 | (u & 0x3F));
        }
    }
    o[k] = 0;
    p->pos++;
    *out = o;
    return 0;
}

static int isdig(char c) { return c >= '0' && c <= '9'; }

static int jnumber(jparser *p, jval *v)
{
    size_t i = p->pos;
    if (i < p->len && p->s[i] == '-')
        i++;
    if (i < p->len && p->s[i] == '0')
        i++;
    else if (i < p->len && isdig(p->s[i]))
        while (i < p->len && isdig(p->s[i]))
            i++;
    else
        return jerr(p, p->pos, "bad number");
    if (i < p->len && p->s[i] == '.') {
        if (++i >= p->len || !isdig(p->s[i]))
            return jerr(p, p->pos, "bad number (digits must follow '.')");
        while (i < p->len && isdig(p->s[i]))
            i++;
    }
    if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
        i++;
        if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
            i++;
        if (i >= p->len || !isdig(p->s[i]))
            return jerr(p, p->pos, "bad number (exponent without digits)");
        while (i < p->len && isdig(p->s[i]))
            i++;
    }
    char buf[64];
    if (i - p->pos >= sizeof buf)
        return jerr(p, p->pos, "number too long");
    memcpy(buf, p->s + p->pos, i - p->pos);
    buf[i - p->pos] = 0;
    v->t = J_NUM;
    v->num = strtod(buf, NULL);
    p->pos = i;
    return 0;
}

static int jpush(jparser *p, jval *v, size_t *cap)
{
    if (v->n == *cap) {
        size_t c = *cap ? 2 * *cap : 4;
        jval *it = realloc(v->item, c * sizeof *it);
        if (it)
            v->item = it;
        if (v->t == J_OBJ) {
            char **k = realloc(v->key, c * sizeof *k);
            if (k)
                v->key = k;
            if (!k)
                it = NULL;
        }
        if (!it) {
            sensim_error(SENSIM_ENOMEM, "%s: out of memory", p->path);
            return -1;
        }
        *cap = c;
    }
    memset(&v->item[v->n], 0, sizeof v->item[v->n]);
    if (v->key)
        v->key[v->n] = NULL;
    v->n++;
    return 0;
}

static int jcontainer(jparser *p, jval *v, char close)
{
    size_t cap = 0;
    v->t = close == '}' ? J_OBJ : J_ARR;
    p->pos++;
    if (++p->depth > JSON_MAX_DEPTH)
        return jerr(p, v->off, "nested too deeply");
    jskip(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        p->depth--;
        return 0;
    }
    for (;;) {
        jskip(p);
        if (jpush(p, v, &cap) < 0)
            return -1;
        if (v->t == J_OBJ) {
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return jerr(p, p->pos, "expected a member name (a string)");
            size_t koff = p->pos;
            if (jstring(p, &v->key[v->n - 1]) < 0)
                return -1;
            for (size_t i = 0; i + 1 < v->n; i++)
                if (strcmp(v->key[i], v->key[v->n - 1]) == 0)
                    return jerr(p, koff, "duplicate member name");
            jskip(p);
            if (p->pos >= p->len || p->s[p->pos] != ':')
                return jerr(p, p->pos, "expected ':'");
            p->pos++;
        }
        if (jvalue(p, &v->item[v->n - 1]) < 0)
            return -1;
        jskip(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
            p->depth--;
            return 0;
        }
        return jerr(p, p->pos, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int jvalue(jparser *p, jval *v)
{
    jskip(p);
    v->off = p->pos;
    if (p->pos >= p->len)
        return jerr(p, p->pos, "unexpected end of JSON");
    char c = p->s[p->pos];
    static const struct {
        const char *word;
        jtype t;
        int b;
    } lit[] = {{"true", J_BOOL, 1}, {"false", J_BOOL, 0}, {"null", J_NULL, 0}};
    for (int i = 0; i < 3; i++) {
        size_t l = strlen(lit[i].word);
        if (c == lit[i].word[0]) {
            if (p->len - p->pos < l || memcmp(p->s + p->pos, lit[i].word, l) != 0)
                return jerr(p, p->pos, "unexpected word");
            v->t = lit[i].t;
            v->num = lit[i].b;
            p->pos += l;
            return 0;
        }
    }
    if (c == '{')
        return jcontainer(p, v, '}');
    if (c == '[')
        return jcontainer(p, v, ']');
    if (c == '"') {
        v->t = J_STR;
        return jstring(p, &v->str);
    }
    if (c == '-' || isdig(c))
        return jnumber(p, v);
    return jerr(p, p->pos, "expected a value");
}

static int json_parse(const char *path, const char *s, size_t len, jval *root)
{
    jparser p = {s, len, 0, path, 0};
    memset(root, 0, sizeof *root);
    if (jvalue(&p, root) < 0)
        return -1;
    jskip(&p);
    if (p.pos != len)
        return jerr(&p, p.pos, "trailing characters after the JSON value");
    if (root->t != J_OBJ)
        return jerr(&p, 0, "a glTF document is a JSON object");
    return 0;
}

static const jval *jget(const jval *o, const char *key)
{
    if (!o || o->t != J_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->key[i], key) == 0)
            return &o->item[i];
    return NULL;
}

/* ---- glTF ---- */

typedef struct {
    const char *path;
    char dir[4096];
    const jval *root;
    const unsigned char *bin; /* GLB BIN chunk, or NULL */
    size_t bin_len;
    unsigned char **buf; /* loaded buffers [nbuffers] */
    size_t *buf_len;
    size_t nbuf;
    size_t file_len;
    int quantized;         /* KHR_mesh_quantization in extensionsUsed */
    unsigned char **view;  /* bufferViews decoded from EXT_meshopt_compression [nview] */
    size_t nview;
    void **owned;          /* materialized accessors (sparse, zeros, Draco) */
    size_t nowned, cowned;
    const char *attr;      /* a vertex attribute to collect as well ("NORMAL"), or NULL */
    float *a;              /* its values, 4 floats a vertex, parallel to v */
    size_t ca;
    int acomp;
    float *v;
    size_t nv, cv;
    uint32_t *t;
    size_t nt, ct;
    float *uv;   /* TEXCOORD_0 [nuv * 2], parallel to v once a primitive has one */
    size_t nuv, cuv;
    int32_t *tm; /* material of each triangle, -1 none [nt] */
    size_t ctm;
    int any_mat;
} gltf;

/* Checks and returns a non-negative integer member; `required` 0 leaves
 * *out as is when the member is absent. */
static int gint(const gltf *g, const jval *o, const char *where, const char *key, int required, uint64_t max,
                uint64_t *out)
{
    const jval *v = jget(o, key);
    if (!v) {
        if (required) {
            sensim_error(SENSIM_EFORMAT, "%s: %s: missing '%s'", g->path, where, key);
            return -1;
        }
        return 0;
    }
    if (v->t != J_NUM || !(v->num >= 0) || v->num != floor(v->num) || v->num > (double)max) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.%s: expected an integer 0..%llu", g->path, where, key,
                     (unsigned long long)max);
        return -1;
    }
    *out = (uint64_t)v->num;
    return 0;
}

/* Element `index` of top-level array `name` (an object), else an error;
 * `where` (may be NULL) gets its path, "name[index]". */
static const jval *gitem(const gltf *g, const char *name, uint64_t index, const char *from, char where[64])
{
    const jval *a = jget(g->root, name);
    if (where)
        snprintf(where, 64, "%s[%llu]", name, (unsigned long long)index);
    if (!a || a->t != J_ARR || index >= a->n || a->item[index].t != J_OBJ) {
        sensim_error(SENSIM_EFORMAT, "%s: %s: %s[%llu] does not exist (%zu %s)", g->path, from, name,
                     (unsigned long long)index, a && a->t == J_ARR ? a->n : 0, name);
        return NULL;
    }
    return &a->item[index];
}

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Strict base64 (RFC 4648, '=' padding optional at the end only). */
static int b64decode(const char *s, unsigned char **out, size_t *outlen)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '=')
        n--;
    if (strlen(s) - n > 2 || n % 4 == 1)
        return -1;
    unsigned char *o = malloc(n / 4 * 3 + 3);
    if (!o)
        return -2;
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64val((unsigned char)s[i]);
        if (v < 0) {
            free(o);
            return -1;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[k++] = (unsigned char)(acc >> bits);
        }
    }
    *out = o;
    *outlen = k;
    return 0;
}

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sensim_error(SENSIM_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    unsigned char *d = NULL;
    size_t n = 0, cap = 0;
    /* A regular file's size first: one allocation, no doubling copies. */
    struct stat st;
    size_t hint = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 0;
    for (;;) {
        if (n == cap) {
            size_t c = cap ? 2 * cap : hint ? hint : 65536;
            unsigned char *x = realloc(d, c);
            if (!x) {
                free(d);
                fclose(f);
                sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
                return NULL;
            }
            d = x;
            cap = c;
        }
        size_t r = fread(d + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(d);
        sensim_error(SENSIM_EIO, "%s: read error", path);
        return NULL;
    }
    *len = n;
    return d;
}

/* The bytes a uri names (where: its owner, "buffers[i]" or "images[i]"):
 * a base64 data: URI decoded, or a relative file name (percent-decoded as
 * RFC 3986, relative to the .gltf) read whole. Malloc'd; NULL with the
 * error set. */
static unsigned char *guri_bytes(gltf *g, const char *uri, const char *where, size_t *len)
{
    unsigned char *data = NULL;
    if (strncmp(uri, "data:", 5) == 0) {
        const char *comma = strchr(uri, ',');
        if (!comma || comma - uri < 12 || strncmp(comma - 7, ";base64", 7) != 0) {
            sensim_error(SENSIM_EUNSUPPORTED, "%s: %s.uri: only base64 data: URIs are supported", g->path, where);
            return NULL;
        }
        int r = b64decode(comma + 1, &data, len);
        if (r < 0) {
            sensim_error(r == -2 ? SENSIM_ENOMEM : SENSIM_EFORMAT, "%s: %s.uri: %s", g->path, where,
                         r == -2 ? "out of memory" : "bad base64");
            return NULL;
        }
        return data;
    }
    if (strstr(uri, "://") || uri[0] == '/' || !uri[0]) {
        sensim_error(SENSIM_EUNSUPPORTED, "%s: %s.uri: '%s' is not a relative file name", g->path, where, uri);
        return NULL;
    }
    char name[4096], full[8192];
    size_t k = 0;
    for (const char *c = uri; *c && k + 1 < sizeof name; c++) {
        unsigned h;
        char hx[5] = {'0', '0', 0, 0, 0};
        if (*c == '%' && c[1] && c[2]) {
            hx[2] = c[1];
            hx[3] = c[2];
            jparser jp = {hx, 4, 0, g->path, 0};
            if (hex4(&jp, 0, &h) < 0 || h == 0) {
                sensim_error(SENSIM_EFORMAT, "%s: %s.uri: bad percent escape", g->path, where);
                return NULL;
            }
            name[k++] = (char)h;
            c += 2;
        } else
            name[k++] = *c;
    }
    name[k] = 0;
    snprintf(full, sizeof full, "%s%s%s", g->dir, g->dir[0] ? "/" : "", name);
    if (!(data = read_all(full, len)))
        sensim_error_prefix(sensim_last_status(), "%s: %s.uri", g->path, where);
    return data;
}

/* Buffer i's bytes (at least its byteLength), loaded on first use. */
static const unsigned char *gbuffer(gltf *g, uint64_t i, size_t *len, const char *from)
{
    char where[64];
    const jval *b = gitem(g, "buffers", i, from, where);
    if (!b)
        return NULL;
    uint64_t blen = 0;
    if (gint(g, b, where, "byteLength", 1, UINT64_MAX >> 12, &blen) < 0)
        return NULL;
    if (g->buf[i]) {
        *len = (size_t)blen;
        return g->buf[i];
    }
    const jval *uri = jget(b, "uri");
    unsigned char *data = NULL;
    size_t have = 0;
    if (!uri) {
        if (i != 0 || !g->bin) {
            sensim_error(SENSIM_ENOTFOUND, "%s: %s: no uri and no GLB BIN chunk", g->path, where);
            return NULL;
        }
        if (g->bin_len < blen) {
            sensim_error(SENSIM_EFORMAT, "%s: %s.byteLength: %llu bytes but the BIN chunk has %zu", g->path, where,
                         (unsigned long long)blen, g->bin_len);
            return NULL;
        }
        *len = (size_t)blen;
        return g->bin;
    }
    if (uri->t != J_STR) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.uri: expected a string", g->path, where);
        return NULL;
    }
    if (!(data = guri_bytes(g, uri->str, where, &have)))
        return NULL;
    if (have < blen) {
        free(data);
        sensim_error(SENSIM_EFORMAT, "%s: %s: byteLength is %llu but the data has %zu bytes", g->path, where,
                     (unsigned long long)blen, have);
        return NULL;
    }
    g->buf[i] = data;
    *len = (size_t)blen;
    return data;
}

/* Bytes [off, off + len) of buffer bi, checked to lie inside it; NULL with
 * the error set (where: the bufferView asking, for the message). */
static const unsigned char *gbuffer_span(gltf *g, uint64_t bi, uint64_t off, uint64_t len, const char *where)
{
    size_t have;
    const unsigned char *buf = gbuffer(g, bi, &have, where);
    if (!buf)
        return NULL;
    if (off > have || len > have - off) {
        sensim_error(SENSIM_EFORMAT, "%s: %s: bytes %llu..%llu are past the end of buffers[%llu] (%zu bytes)", g->path,
                     where, (unsigned long long)off, (unsigned long long)(off + len), (unsigned long long)bi, have);
        return NULL;
    }
    return buf + off;
}

/* An accessor as read: where element 0 starts, the stride, the count, the
 * component type and count, and whether integers are normalized. Sparse
 * and Draco accessors are materialized (owned by the gltf) and read the
 * same way. */
typedef struct {
    const unsigned char *p;
    size_t stride, count;
    unsigned ctype;
    int ncomp, normalized;
} gview;

static size_t csize(unsigned ctype)
{
    switch (ctype) {
    case 5120: case 5121: return 1;
    case 5122: case 5123: return 2;
    case 5125: case 5126: return 4;
    default: return 0;
    }
}

/* Keeps p (malloc'd, may be NULL) until the load ends; -1 (p freed) when
 * out of memory. */
static int gown(gltf *g, void *p)
{
    if (sensim_render_grow((void **)&g->owned, &g->cowned, g->nowned + 1, sizeof *g->owned) < 0) {
        free(p);
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", g->path);
        return -1;
    }
    g->owned[g->nowned++] = p;
    return 0;
}

/* A string member among `n` allowed values: its index, `dflt` when absent
 * (-1: required), -1 with an error otherwise. */
static int genum(const gltf *g, const jval *o, const char *where, const char *key, const char *const *names, int n,
                 int dflt)
{
    const jval *v = jget(o, key);
    if (!v && dflt >= 0)
        return dflt;
    for (int i = 0; v && v->t == J_STR && i < n; i++)
        if (strcmp(v->str, names[i]) == 0)
            return i;
    char list[160] = "";
    for (int i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
    sensim_error(SENSIM_EFORMAT, "%s: %s.%s: %s (expected one of %s)", g->path, where, key,
                 v ? "unknown value" : "missing", list);
    return -1;
}

/* EXT_meshopt_compression (its specification, and meshoptimizer's codec):
 * bufferViews[bvi]'s data is decoded from the compressed slice the
 * extension names, by meshopt_decodeVertexBuffer (ATTRIBUTES, then the
 * filter), meshopt_decodeIndexBuffer (TRIANGLES) or
 * meshopt_decodeIndexSequence (INDICES), into count x byteStride bytes,
 * kept for later accessors of the same view. Every parameter the decoders
 * assert on is checked first. */
static const unsigned char *gmeshopt(gltf *g, uint64_t bvi, const jval *mo, const char *bwhere, uint64_t blen,
                                     size_t *len)
{
    if (g->view[bvi]) {
        *len = (size_t)blen;
        return g->view[bvi];
    }
    char where[128];
    snprintf(where, sizeof where, "%s.extensions.EXT_meshopt_compression", bwhere);
    static const char *const modes[] = {"ATTRIBUTES", "TRIANGLES", "INDICES"};
    static const char *const filters[] = {"NONE", "OCTAHEDRAL", "QUATERNION", "EXPONENTIAL"};
    uint64_t bi = 0, off = 0, clen = 0, stride = 0, count = 0;
    if (gint(g, mo, where, "buffer", 1, UINT32_MAX, &bi) < 0 || gint(g, mo, where, "byteOffset", 0, UINT64_MAX >> 12, &off) < 0 ||
        gint(g, mo, where, "byteLength", 1, UINT64_MAX >> 12, &clen) < 0 ||
        gint(g, mo, where, "byteStride", 1, 256, &stride) < 0 || gint(g, mo, where, "count", 1, UINT32_MAX, &count) < 0)
        return NULL;
    int mode = genum(g, mo, where, "mode", modes, 3, -1), filter = genum(g, mo, where, "filter", filters, 4, 0);
    if (mode < 0 || filter < 0)
        return NULL;
    const char *bad = NULL;
    if (mode == 0 && (stride == 0 || stride % 4))
        bad = "byteStride of ATTRIBUTES must be a multiple of 4 in 4..256";
    else if (mode > 0 && stride != 2 && stride != 4)
        bad = "byteStride of TRIANGLES or INDICES must be 2 or 4";
    else if (mode == 1 && count % 3)
        bad = "count of TRIANGLES must be a multiple of 3";
    else if (filter && mode != 0)
        bad = "a filter applies to ATTRIBUTES only";
    else if (filter == 1 && stride != 4 && stride != 8)
        bad = "byteStride of OCTAHEDRAL must be 4 or 8";
    else if (filter == 2 && stride != 8)
        bad = "byteStride of QUATERNION must be 8";
    else if (count * stride != blen)
        bad = "count x byteStride differs from the bufferView's byteLength";
    if (bad) {
        sensim_error(SENSIM_EFORMAT, "%s: %s: %s", g->path, where, bad);
        return NULL;
    }
    const unsigned char *src = gbuffer_span(g, bi, off, clen, where);
    if (!src)
        return NULL;
    unsigned char *dst = malloc((size_t)blen);
    if (!dst) {
        sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory (%llu bytes decoded)", g->path, where,
                     (unsigned long long)blen);
        return NULL;
    }
    int rc = mode == 0   ? meshopt_decodeVertexBuffer(dst, (size_t)count, (size_t)stride, src, (size_t)clen)
             : mode == 1 ? meshopt_decodeIndexBuffer(dst, (size_t)count, (size_t)stride, src, (size_t)clen)
                         : meshopt_decodeIndexSequence(dst, (size_t)count, (size_t)stride, src, (size_t)clen);
    if (rc != 0) {
        free(dst);
        sensim_error(SENSIM_EFORMAT, "%s: %s: meshoptimizer cannot decode the %s data (error %d: malformed or "
                     "truncated)", g->path, where, modes[mode], rc);
        return NULL;
    }
    if (filter == 1)
        meshopt_decodeFilterOct(dst, (size_t)count, (size_t)stride);
    else if (filter == 2)
        meshopt_decodeFilterQuat(dst, (size_t)count, (size_t)stride);
    else if (filter == 3)
        meshopt_decodeFilterExp(dst, (size_t)count, (size_t)stride);
    g->view[bvi] = dst;
    *len = (size_t)blen;
    return dst;
}

/* The bytes of bufferViews[bvi] (its slice of a buffer, or its meshopt
 * decoding) and its byteStride (0 when absent); `bwhere` gets its path. */
static const unsigned char *gbufview(gltf *g, uint64_t bvi, const char *from, size_t *len, uint64_t *stride,
                                     char bwhere[64])
{
    const jval *bv = gitem(g, "bufferViews", bvi, from, bwhere);
    if (!bv)
        return NULL;
    uint64_t bi = 0, boff = 0, blen = 0;
    *stride = 0;
    if (gint(g, bv, bwhere, "buffer", 1, UINT32_MAX, &bi) < 0 || gint(g, bv, bwhere, "byteOffset", 0, UINT64_MAX >> 12, &boff) < 0 ||
        gint(g, bv, bwhere, "byteLength", 1, UINT64_MAX >> 12, &blen) < 0 ||
        gint(g, bv, bwhere, "byteStride", 0, 252, stride) < 0)
        return NULL;
    if (jget(bv, "byteStride") && (*stride < 4 || *stride % 4)) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.byteStride: %llu is not a multiple of 4 in 4..252", g->path, bwhere,
                     (unsigned long long)*stride);
        return NULL;
    }
    const jval *mo = jget(jget(bv, "extensions"), "EXT_meshopt_compression");
    if (mo)
        return gmeshopt(g, bvi, mo, bwhere, blen, len);
    const unsigned char *buf = gbuffer_span(g, bi, boff, blen, bwhere);
    if (buf)
        *len = (size_t)blen;
    return buf;
}

typedef enum { GA_POSITION, GA_INDEX, GA_ATTRIBUTE } gause;

/* The n items of `size` bytes from byteOffset off of bufferViews[bvi]
 * (for a sparse accessor's part w, holding `what`), checked to lie inside
 * it; NULL with the error set. */
static const unsigned char *gsparse_span(gltf *g, uint64_t bvi, uint64_t off, uint64_t n, size_t size, const char *w,
                                         const char *what)
{
    char bw[64];
    size_t len;
    uint64_t st;
    const unsigned char *p = gbufview(g, bvi, w, &len, &st, bw);
    if (!p)
        return NULL;
    if (off > len || n * size > len - off) {
        sensim_error(SENSIM_EFORMAT, "%s: %s: %llu %s from byteOffset %llu are past the end of %s (%zu bytes)", g->path,
                     w, (unsigned long long)n, what, (unsigned long long)off, bw, len);
        return NULL;
    }
    return p + off;
}

/* Sparse substitution (glTF 2.0 section 3.6.2.3) into the materialized,
 * tightly packed elements d of accessor `where`. */
static int gsparse(gltf *g, const jval *sp, const char *where, unsigned char *d, size_t elem, uint64_t count)
{
    char sw[96], iw[112], vw[112];
    snprintf(sw, sizeof sw, "%s.sparse", where);
    snprintf(iw, sizeof iw, "%s.indices", sw);
    snprintf(vw, sizeof vw, "%s.values", sw);
    const jval *ix = jget(sp, "indices"), *vx = jget(sp, "values");
    uint64_t n = 0, ibv = 0, ioff = 0, ict = 0, vbv = 0, voff = 0;
    if (gint(g, sp, sw, "count", 1, count, &n) < 0)
        return -1;
    if (!ix || ix->t != J_OBJ || !vx || vx->t != J_OBJ) {
        sensim_error(SENSIM_EFORMAT, "%s: %s: needs 'indices' and 'values' objects", g->path, sw);
        return -1;
    }
    if (n == 0) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.count: must be at least 1", g->path, sw);
        return -1;
    }
    if (gint(g, ix, iw, "bufferView", 1, UINT32_MAX, &ibv) < 0 || gint(g, ix, iw, "byteOffset", 0, UINT32_MAX, &ioff) < 0 ||
        gint(g, ix, iw, "componentType", 1, 100000, &ict) < 0 || gint(g, vx, vw, "bufferView", 1, UINT32_MAX, &vbv) < 0 ||
        gint(g, vx, vw, "byteOffset", 0, UINT32_MAX, &voff) < 0)
        return -1;
    if (ict != 5121 && ict != 5123 && ict != 5125) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.componentType: %llu is not an index type (5121, 5123 or 5125)", g->path,
                     iw, (unsigned long long)ict);
        return -1;
    }
    size_t is = csize((unsigned)ict);
    const unsigned char *ip = gsparse_span(g, ibv, ioff, n, is, iw, "indices");
    const unsigned char *vp = ip ? gsparse_span(g, vbv, voff, n, elem, vw, "values") : NULL;
    if (!vp)
        return -1;
    uint64_t prev = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t at;
        if (is == 1)
            at = ip[k];
        else if (is == 2) {
            uint16_t x;
            memcpy(&x, ip + 2 * k, 2);
            at = x;
        } else {
            uint32_t x;
            memcpy(&x, ip + 4 * k, 4);
            at = x;
        }
        if (at >= count || (k > 0 && at <= prev)) {
            sensim_error(SENSIM_EDATA, "%s: %s element %zu: index %llu is %s", g->path, iw, k,
                         (unsigned long long)at, at >= count ? "out of range" : "not above the one before");
            return -1;
        }
        prev = at;
        memcpy(d + at * elem, vp + k * elem, elem);
    }
    return 0;
}

/* Reads accessors[ai] for `use`: POSITION (VEC3 of float, or the integer
 * types KHR_mesh_quantization allows, normalized or not), indices (SCALAR
 * u8/u16/u32) or any other vertex attribute (SCALAR..VEC4, float or
 * 8/16-bit integers). A sparse accessor, or one without a bufferView
 * (zeros), is materialized; a bufferView may be meshopt-compressed. */
static int gaccessor(gltf *g, uint64_t ai, gause use, const char *from, gview *out)
{
    char where[64];
    const jval *a = gitem(g, "accessors", ai, from, where);
    if (!a)
        return -1;
    uint64_t ct = 0, count = 0, aoff = 0, bvi = 0;
    static const char *const types[] = {"SCALAR", "VEC2", "VEC3", "VEC4"};
    const jval *ty = jget(a, "type");
    int ncomp = 0;
    for (int i = 0; ty && ty->t == J_STR && i < 4; i++)
        if (strcmp(ty->str, types[i]) == 0)
            ncomp = i + 1;
    if ((use == GA_POSITION && ncomp != 3) || (use == GA_INDEX && ncomp != 1) || ncomp == 0) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.type: expected %s (for %s)", g->path, where,
                     use == GA_POSITION ? "\"VEC3\"" : use == GA_INDEX ? "\"SCALAR\"" : "SCALAR, VEC2, VEC3 or VEC4",
                     from);
        return -1;
    }
    if (gint(g, a, where, "componentType", 1, 100000, &ct) < 0 || gint(g, a, where, "count", 1, UINT32_MAX, &count) < 0 ||
        gint(g, a, where, "byteOffset", 0, UINT32_MAX, &aoff) < 0)
        return -1;
    if (count == 0) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.count: must be at least 1", g->path, where);
        return -1;
    }
    const jval *nz = jget(a, "normalized");
    if (nz && nz->t != J_BOOL) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.normalized: expected true or false", g->path, where);
        return -1;
    }
    int normalized = nz && nz->num != 0;
    if (use == GA_INDEX && (ct != 5121 && ct != 5123 && ct != 5125)) {
        sensim_error(SENSIM_EUNSUPPORTED, "%s: %s.componentType: %llu is not a supported index type (5121, 5123 "
                     "or 5125)", g->path, where, (unsigned long long)ct);
        return -1;
    }
    if (use != GA_INDEX && (ct < 5120 || ct > 5126 || ct == 5124 || ct == 5125)) {
        sensim_error(SENSIM_EUNSUPPORTED, "%s: %s.componentType: %llu is not a supported %s type (5126 float, or "
                     "5120, 5121, 5122, 5123 for 8- and 16-bit integers)", g->path, where, (unsigned long long)ct,
                     use == GA_POSITION ? "position" : "attribute");
        return -1;
    }
    if (normalized && (use == GA_INDEX || ct == 5126)) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.normalized: only integer vertex attributes can be normalized", g->path,
                     where);
        return -1;
    }
    if (use == GA_POSITION && ct != 5126 && !g->quantized) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.componentType: integer positions need KHR_mesh_quantization in "
                     "extensionsUsed", g->path, where);
        return -1;
    }
    size_t elem = csize((unsigned)ct) * (size_t)ncomp;
    const unsigned char *base = NULL;
    uint64_t stride = 0;
    if (jget(a, "bufferView")) {
        char bwhere[64];
        size_t blen;
        if (gint(g, a, where, "bufferView", 1, UINT32_MAX, &bvi) < 0 ||
            !(base = gbufview(g, bvi, where, &blen, &stride, bwhere)))
            return -1;
        if (stride && stride < elem) {
            sensim_error(SENSIM_EFORMAT, "%s: %s.byteStride: %llu is less than the %zu-byte element of %s", g->path,
                         bwhere, (unsigned long long)stride, elem, where);
            return -1;
        }
        if (!stride)
            stride = elem;
        /* Last byte read: aoff + stride (count - 1) + elem; all < 2^53. */
        uint64_t need = aoff + stride * (count - 1) + elem;
        if (need > blen) {
            sensim_error(SENSIM_EFORMAT, "%s: %s: %llu elements from byteOffset %llu need %llu bytes, past the end "
                         "of %s (%zu bytes)", g->path, where, (unsigned long long)count, (unsigned long long)aoff,
                         (unsigned long long)need, bwhere, blen);
            return -1;
        }
        base += aoff;
    } else if (count > g->file_len) {
        /* Zeros cost no bytes of the file: bound them by it, as a PLY
         * element count is bounded, before anything is allocated. */
        sensim_error(SENSIM_EFORMAT, "%s: %s: %llu elements without a bufferView, more than the file's %zu bytes",
                     g->path, where, (unsigned long long)count, g->file_len);
        return -1;
    }
    const jval *sp = jget(a, "sparse");
    if (sp || !base) {
        unsigned char *d = calloc((size_t)count, elem);
        if (gown(g, d) < 0)
            return -1;
        if (!d) {
            sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory", g->path, where);
            return -1;
        }
        for (size_t i = 0; base && i < count; i++)
            memcpy(d + i * elem, base + i * stride, elem);
        if (sp && (sp->t != J_OBJ || gsparse(g, sp, where, d, elem, count) < 0)) {
            if (sp->t != J_OBJ)
                sensim_error(SENSIM_EFORMAT, "%s: %s.sparse: expected an object", g->path, where);
            return -1;
        }
        base = d;
        stride = elem;
    }
    out->p = base;
    out->stride = (size_t)stride;
    out->count = (size_t)count;
    out->ctype = (unsigned)ct;
    out->ncomp = ncomp;
    out->normalized = normalized;
    return 0;
}

static uint32_t gindex(const gview *v, size_t i)
{
    const unsigned char *p = v->p + i * v->stride;
    if (v->ctype == 5121)
        return *p;
    if (v->ctype == 5123) {
        uint16_t x;
        memcpy(&x, p, 2);
        return x;
    }
    uint32_t x;
    memcpy(&x, p, 4);
    return x;
}

/* Element i of a vertex attribute as floats; normalized integers mapped
 * by the specification's formulas (max(c / 127, -1), c / 255,
 * max(c / 32767, -1), c / 65535), others as their value. */
static void gelem(const gview *v, size_t i, float *out)
{
    const unsigned char *p = v->p + i * v->stride;
    for (int c = 0; c < v->ncomp; c++) {
        switch (v->ctype) {
        case 5126:
            memcpy(&out[c], p + 4 * c, 4);
            break;
        case 5120: {
            int8_t x = (int8_t)p[c];
            out[c] = v->normalized ? (x < -127 ? -1.0f : (float)(x / 127.0)) : (float)x;
            break;
        }
        case 5121:
            out[c] = v->normalized ? (float)(p[c] / 255.0) : (float)p[c];
            break;
        case 5122: {
            int16_t x;
            memcpy(&x, p + 2 * c, 2);
            out[c] = v->normalized ? (x < -32767 ? -1.0f : (float)(x / 32767.0)) : (float)x;
            break;
        }
        default: {
            uint16_t x;
            memcpy(&x, p + 2 * c, 2);
            out[c] = v->normalized ? (float)(x / 65535.0) : (float)x;
            break;
        }
        }
    }
}

/* KHR_draco_mesh_compression: the primitive's POSITION, its triangles,
 * and, when both the primitive and the Draco data name them, g->attr (into
 * *av, bit 0 of the result) and the texture coordinate set `uvname` its
 * material samples (into *uvv, bit 1), decoded by libdraco into views read
 * like any other. */
static int gdraco(gltf *g, const jval *pr, const jval *dr, const char *where, const char *uvname, gview *pv,
                  gview *iv, gview *av, gview *uvv)
{
    char dw[160], bw[64];
    snprintf(dw, sizeof dw, "%s.extensions.KHR_draco_mesh_compression", where);
    const jval *da = jget(dr, "attributes"), *pa = jget(pr, "attributes");
    uint64_t bvi = 0, pid = 0, st;
    char aw[192];
    snprintf(aw, sizeof aw, "%s.attributes", dw);
    if (gint(g, dr, dw, "bufferView", 1, UINT32_MAX, &bvi) < 0 || !da || da->t != J_OBJ ||
        gint(g, da, aw, "POSITION", 1, INT32_MAX, &pid) < 0) {
        if (!da || da->t != J_OBJ)
            sensim_error(SENSIM_EFORMAT, "%s: %s: missing attributes", g->path, dw);
        return -1;
    }
    int ids[3] = {(int)pid, -1, -1}, nids = 1, ka = -1, kuv = -1;
    const char *want[2] = {g->attr, uvname};
    int *slot[2] = {&ka, &kuv};
    for (int w = 0; w < 2; w++)
        if (want[w] && jget(pa, want[w]) && jget(da, want[w])) {
            uint64_t id = 0;
            if (gint(g, da, aw, want[w], 1, INT32_MAX, &id) < 0)
                return -1;
            *slot[w] = nids;
            ids[nids++] = (int)id;
        }
    size_t len;
    const unsigned char *d = gbufview(g, bvi, dw, &len, &st, bw);
    if (!d)
        return -1;
    float *attr[3] = {NULL, NULL, NULL};
    int ncomp[3] = {0, 0, 0};
    uint32_t *tri;
    size_t np, nt;
    char err[256];
    if (sensim_draco_decode(d, len, ids, nids, attr, ncomp, &np, &tri, &nt, err, sizeof err) < 0) {
        sensim_error(SENSIM_EFORMAT, "%s: %s: Draco: %s", g->path, dw, err);
        return -1;
    }
    if (sensim_render_grow((void **)&g->owned, &g->cowned, g->nowned + 4, sizeof *g->owned) < 0) {
        for (int k = 0; k < 3; k++)
            free(attr[k]);
        free(tri);
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", g->path);
        return -1;
    }
    for (int k = 0; k < 3; k++)
        g->owned[g->nowned++] = attr[k];
    g->owned[g->nowned++] = tri;
    if (ncomp[0] != 3 || np == 0 || nt == 0 || np > UINT32_MAX || nt > UINT32_MAX / 3) {
        sensim_error(SENSIM_EFORMAT, "%s: %s: Draco data has %d-component positions, %zu points and %zu triangles",
                     g->path, dw, ncomp[0], np, nt);
        return -1;
    }
    *pv = (gview){(const unsigned char *)attr[0], 12, np, 5126, 3, 0};
    *iv = (gview){(const unsigned char *)tri, 4, 3 * nt, 5125, 1, 0};
    if (ka > 0)
        *av = (gview){(const unsigned char *)attr[ka], 4 * (size_t)ncomp[ka], np, 5126, ncomp[ka], 0};
    if (kuv > 0)
        *uvv = (gview){(const unsigned char *)attr[kuv], 4 * (size_t)ncomp[kuv], np, 5126, ncomp[kuv], 0};
    return (ka > 0) | (kuv > 0) << 1;
}

/* Appends the vertices of g->attr for one primitive of pv.count vertices:
 * from av when present, else zeros. */
static int gattr_append(gltf *g, const gview *av, size_t nvert, const char *where)
{
    if (av && g->acomp && av->ncomp != g->acomp) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.%s: %d components, but an earlier primitive had %d", g->path, where,
                     g->attr, av->ncomp, g->acomp);
        return -1;
    }
    if (av && av->count != nvert) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.%s: %zu elements for %zu positions", g->path, where, g->attr,
                     av->count, nvert);
        return -1;
    }
    if (av)
        g->acomp = av->ncomp;
    size_t base = g->nv - nvert;
    if (sensim_render_grow((void **)&g->a, &g->ca, g->nv, 4 * sizeof *g->a) < 0) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", g->path);
        return -1;
    }
    for (size_t i = 0; i < nvert; i++) {
        float *o = g->a + 4 * (base + i);
        o[0] = o[1] = o[2] = o[3] = 0;
        if (av)
            gelem(av, i, o);
    }
    return 0;
}

static int guvset(gltf *g, const jval *pr, char name[24]);
static int gsurface_prim(gltf *g, const jval *pr, const jval *attr, const char *awhere, const char *where,
                         size_t nvert, size_t ntri, const char *uvname, const gview *duv);

/* Appends the triangles of meshes[mi] transformed by the column-major 4x4 m. */
static int gmesh(gltf *g, uint64_t mi, const double m[16], const char *from)
{
    const jval *mesh = gitem(g, "meshes", mi, from, NULL);
    if (!mesh)
        return -1;
    const jval *prims = jget(mesh, "primitives");
    if (!prims || prims->t != J_ARR || prims->n == 0) {
        sensim_error(SENSIM_EFORMAT, "%s: meshes[%llu].primitives: expected a non-empty array", g->path,
                     (unsigned long long)mi);
        return -1;
    }
    for (size_t pi = 0; pi < prims->n; pi++) {
        const jval *pr = &prims->item[pi];
        char where[96];
        snprintf(where, sizeof where, "meshes[%llu].primitives[%zu]", (unsigned long long)mi, pi);
        if (pr->t != J_OBJ) {
            sensim_error(SENSIM_EFORMAT, "%s: %s: expected an object", g->path, where);
            return -1;
        }
        uint64_t mode = 4, pos = 0, idx = 0;
        if (gint(g, pr, where, "mode", 0, 6, &mode) < 0)
            return -1;
        if (mode < 4) {
            sensim_error(SENSIM_EUNSUPPORTED, "%s: %s.mode: %llu (points or lines) cannot be ray cast; only "
                         "triangles (4, 5, 6)", g->path, where, (unsigned long long)mode);
            return -1;
        }
        const jval *attr = jget(pr, "attributes");
        char awhere[128];
        snprintf(awhere, sizeof awhere, "%s.attributes", where);
        if (!attr || attr->t != J_OBJ || gint(g, attr, awhere, "POSITION", 1, UINT32_MAX, &pos) < 0) {
            if (!attr || attr->t != J_OBJ)
                sensim_error(SENSIM_EFORMAT, "%s: %s: missing attributes", g->path, where);
            return -1;
        }
        char pwhere[160];
        snprintf(pwhere, sizeof pwhere, "%s.POSITION", awhere);
        gview pv, iv, av, duv;
        int indexed, has_a = 0, has_uv = 0;
        char uvname[24];
        if (guvset(g, pr, uvname) < 0)
            return -1;
        char iwhere[128];
        snprintf(iwhere, sizeof iwhere, "%s.indices", where);
        const jval *dr = jget(jget(pr, "extensions"), "KHR_draco_mesh_compression");
        if (dr) {
            /* Draco data is a triangle list whatever the mode says. */
            int got = gdraco(g, pr, dr, where, uvname, &pv, &iv, &av, &duv);
            if (got < 0)
                return -1;
            has_a = got & 1;
            has_uv = got >> 1 & 1;
            indexed = 1;
            mode = 4;
        } else {
            if (gaccessor(g, pos, GA_POSITION, pwhere, &pv) < 0)
                return -1;
            indexed = jget(pr, "indices") != NULL;
            if (indexed && (gint(g, pr, where, "indices", 1, UINT32_MAX, &idx) < 0 ||
                            gaccessor(g, idx, GA_INDEX, iwhere, &iv) < 0))
                return -1;
            uint64_t ai;
            if (g->attr && jget(attr, g->attr)) {
                char xwhere[160];
                snprintf(xwhere, sizeof xwhere, "%s.%s", awhere, g->attr);
                if (gint(g, attr, awhere, g->attr, 1, UINT32_MAX, &ai) < 0 ||
                    gaccessor(g, ai, GA_ATTRIBUTE, xwhere, &av) < 0)
                    return -1;
                has_a = 1;
            }
        }
        size_t n = indexed ? iv.count : pv.count;
        if ((mode == 4 && n % 3) || n < 3) {
            sensim_error(SENSIM_EFORMAT, "%s: %s: %zu %s do not make whole triangles", g->path, where, n,
                         indexed ? "indices" : "vertices");
            return -1;
        }
        size_t ntri = mode == 4 ? n / 3 : n - 2;
        size_t base = g->nv;
        if (pv.count > UINT32_MAX - base || sensim_render_grow((void **)&g->v, &g->cv, base + pv.count, 3 * sizeof *g->v) < 0 ||
            sensim_render_grow((void **)&g->t, &g->ct, g->nt + ntri, 3 * sizeof *g->t) < 0) {
            sensim_error(SENSIM_ENOMEM, "%s: out of memory (or more than 2^32 vertices)", g->path);
            return -1;
        }
        for (size_t i = 0; i < pv.count; i++) {
            float x[3];
            gelem(&pv, i, x);
            if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2])) {
                sensim_error(SENSIM_EDATA, "%s: %s (accessors[%llu]) element %zu is not finite", g->path, pwhere,
                             (unsigned long long)pos, i);
                return -1;
            }
            float *o = g->v + 3 * (base + i);
            for (int r = 0; r < 3; r++) {
                double w = m[r] * x[0] + m[4 + r] * x[1] + m[8 + r] * x[2] + m[12 + r];
                if (!(fabs(w) <= FLT_MAX)) {
                    sensim_error(SENSIM_EDATA, "%s: %s (accessors[%llu]) element %zu is out of float range after the "
                                 "node transform (%s)", g->path, pwhere, (unsigned long long)pos, i, from);
                    return -1;
                }
                o[r] = (float)w;
            }
        }
        g->nv += pv.count;
        if (g->attr && gattr_append(g, has_a ? &av : NULL, pv.count, awhere) < 0)
            return -1;
        for (size_t k = 0; k < ntri; k++) {
            size_t c[3];
            if (mode == 4)
                c[0] = 3 * k, c[1] = 3 * k + 1, c[2] = 3 * k + 2;
            else if (mode == 5) /* strip: keep the winding of every other triangle */
                c[0] = k + (k & 1), c[1] = k + 1 - (k & 1), c[2] = k + 2;
            else /* fan */
                c[0] = 0, c[1] = k + 1, c[2] = k + 2;
            uint32_t *t = g->t + 3 * g->nt;
            for (int r = 0; r < 3; r++) {
                uint32_t x = indexed ? gindex(&iv, c[r]) : (uint32_t)c[r];
                if (x >= pv.count) {
                    sensim_error(SENSIM_EDATA, "%s: %s (accessors[%llu]) element %zu: index %u out of range (%zu "
                                 "vertices)", g->path, iwhere, (unsigned long long)idx, c[r], x, pv.count);
                    return -1;
                }
                t[r] = (uint32_t)base + x;
            }
            /* Zero-area triangles are dropped and counted where the mesh is
             * added (sensim_scene_mesh_add_owned). */
            g->nt++;
        }
        if (gsurface_prim(g, pr, attr, awhere, where, pv.count, ntri, uvname, dr ? (has_uv ? &duv : NULL) : NULL) < 0)
            return -1;
    }
    return 0;
}

static void mat_mul(const double a[16], const double b[16], double c[16])
{
    for (int col = 0; col < 4; col++)
        for (int r = 0; r < 4; r++) {
            double s = 0;
            for (int k = 0; k < 4; k++)
                s += a[4 * k + r] * b[4 * col + k];
            c[4 * col + r] = s;
        }
}

static int gnumbers(const gltf *g, const jval *o, const char *where, const char *key, int n, double *out)
{
    const jval *v = jget(o, key);
    if (!v)
        return 0;
    if (v->t != J_ARR || v->n != (size_t)n) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.%s: expected %d numbers", g->path, where, key, n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (v->item[i].t != J_NUM || !isfinite(v->item[i].num)) {
            sensim_error(SENSIM_EFORMAT, "%s: %s.%s[%d]: expected a finite number", g->path, where, key, i);
            return -1;
        }
        out[i] = v->item[i].num;
    }
    return 1;
}

/* The local transform of a node: matrix (column-major) or T * R * S. */
static int node_matrix(const gltf *g, const jval *node, const char *where, double m[16])
{
    double t[3] = {0, 0, 0}, q[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1};
    int has_m = gnumbers(g, node, where, "matrix", 16, m);
    if (has_m < 0)
        return -1;
    int ht = gnumbers(g, node, where, "translation", 3, t), hr = gnumbers(g, node, where, "rotation", 4, q),
        hs = gnumbers(g, node, where, "scale", 3, s);
    if (ht < 0 || hr < 0 || hs < 0)
        return -1;
    if (has_m) {
        if (ht || hr || hs) {
            sensim_error(SENSIM_EFORMAT, "%s: %s: matrix excludes translation, rotation and scale", g->path, where);
            return -1;
        }
        return 0;
    }
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(n > 1e-9)) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.rotation: not a unit quaternion (x, y, z, w)", g->path, where);
        return -1;
    }
    double x = q[0] / n, y = q[1] / n, z = q[2] / n, w = q[3] / n;
    double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w), /* column 0 */
                   2 * (x * y - z * w), 1 - 2 * (x * x + z * z), 2 * (y * z + x * w), /* column 1 */
                   2 * (x * z + y * w), 2 * (y * z - x * w), 1 - 2 * (x * x + y * y)};
    memset(m, 0, 16 * sizeof *m);
    for (int c = 0; c < 3; c++)
        for (int r = 0; r < 3; r++)
            m[4 * c + r] = R[3 * c + r] * s[c];
    m[12] = t[0];
    m[13] = t[1];
    m[14] = t[2];
    m[15] = 1;
    return 0;
}

static int gnode(gltf *g, uint64_t ni, const double parent[16], unsigned char *seen, int depth)
{
    char where[64];
    const jval *node = gitem(g, "nodes", ni, "node hierarchy", where);
    if (!node)
        return -1;
    if (seen[ni]) {
        sensim_error(SENSIM_EFORMAT, "%s: %s: appears twice in the node hierarchy (not a tree)", g->path, where);
        return -1;
    }
    /* Recursion depth bound: a chain of untrusted children must not exhaust
     * the stack. */
    if (depth > 1000) {
        sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: node hierarchy deeper than 1000", g->path, where);
        return -1;
    }
    seen[ni] = 1;
    double local[16], m[16];
    if (node_matrix(g, node, where, local) < 0)
        return -1;
    mat_mul(parent, local, m);
    uint64_t mi;
    if (jget(node, "mesh")) {
        if (gint(g, node, where, "mesh", 1, UINT32_MAX, &mi) < 0 || gmesh(g, mi, m, where) < 0)
            return -1;
    }
    const jval *ch = jget(node, "children");
    if (ch) {
        if (ch->t != J_ARR) {
            sensim_error(SENSIM_EFORMAT, "%s: %s.children: expected an array", g->path, where);
            return -1;
        }
        for (size_t i = 0; i < ch->n; i++) {
            if (ch->item[i].t != J_NUM || !(ch->item[i].num >= 0) || ch->item[i].num != floor(ch->item[i].num) ||
                ch->item[i].num > UINT32_MAX) {
                sensim_error(SENSIM_EFORMAT, "%s: %s.children[%zu]: expected a node index", g->path, where, i);
                return -1;
            }
            if (gnode(g, (uint64_t)ch->item[i].num, m, seen, depth + 1) < 0)
                return -1;
        }
    }
    return 0;
}

static int gscene(gltf *g)
{
    static const double I[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    const jval *asset = jget(g->root, "asset"), *ver = jget(asset, "version");
    if (!ver || ver->t != J_STR) {
        sensim_error(SENSIM_EFORMAT, "%s: asset.version: missing (not a glTF 2.0 file?)", g->path);
        return -1;
    }
    if (strncmp(ver->str, "2.", 2) != 0) {
        sensim_error(SENSIM_EUNSUPPORTED, "%s: asset.version: '%s' is not glTF 2.x", g->path, ver->str);
        return -1;
    }
    /* Extensions a file may require: those decoded here (the camera applies
     * KHR_texture_transform). Any other is refused, not guessed at. */
    static const char *const known[] = {"KHR_mesh_quantization", "EXT_meshopt_compression",
                                        "KHR_draco_mesh_compression", "KHR_texture_transform"};
    const jval *req = jget(g->root, "extensionsRequired");
    for (size_t i = 0; req && req->t == J_ARR && i < req->n; i++) {
        int ok = 0;
        for (size_t k = 0; k < sizeof known / sizeof *known && req->item[i].t == J_STR; k++)
            ok |= strcmp(req->item[i].str, known[k]) == 0;
        if (!ok) {
            sensim_error(SENSIM_EUNSUPPORTED, "%s: extensionsRequired[%zu]: extension '%s' is not supported", g->path,
                         i, req->item[i].t == J_STR ? req->item[i].str : "?");
            return -1;
        }
    }
    const jval *used = jget(g->root, "extensionsUsed");
    for (size_t i = 0; used && used->t == J_ARR && i < used->n; i++)
        g->quantized |= used->item[i].t == J_STR && strcmp(used->item[i].str, "KHR_mesh_quantization") == 0;
    /* Decoded bufferViews and loaded buffers, filled on first use (freed
     * by the caller, also when one of them could not be allocated). */
    const jval *views = jget(g->root, "bufferViews"), *bufs = jget(g->root, "buffers");
    g->nview = views && views->t == J_ARR ? views->n : 0;
    g->nbuf = bufs && bufs->t == J_ARR ? bufs->n : 0;
    g->view = calloc(g->nview + 1, sizeof *g->view);
    g->buf = calloc(g->nbuf + 1, sizeof *g->buf);
    if (!g->view || !g->buf) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", g->path);
        return -1;
    }
    const jval *nodes = jget(g->root, "nodes"), *scenes = jget(g->root, "scenes");
    size_t nn = nodes && nodes->t == J_ARR ? nodes->n : 0;
    if (nn == 0) {
        const jval *meshes = jget(g->root, "meshes");
        for (size_t i = 0; meshes && meshes->t == J_ARR && i < meshes->n; i++)
            if (gmesh(g, i, I, "meshes") < 0)
                return -1;
        return 0;
    }
    unsigned char *seen = calloc(nn, 1), *child = calloc(nn, 1);
    int rc = -1;
    if (!seen || !child) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", g->path);
        goto done;
    }
    uint64_t si = 0;
    if (gint(g, g->root, "glTF", "scene", 0, UINT32_MAX, &si) < 0)
        goto done;
    if (scenes && scenes->t == J_ARR && scenes->n > 0) {
        char where[64];
        const jval *sc = gitem(g, "scenes", si, "scene", where);
        if (!sc)
            goto done;
        const jval *roots = jget(sc, "nodes");
        for (size_t i = 0; roots && roots->t == J_ARR && i < roots->n; i++) {
            const jval *r = &roots->item[i];
            if (r->t != J_NUM || !(r->num >= 0) || r->num != floor(r->num) || r->num > UINT32_MAX) {
                sensim_error(SENSIM_EFORMAT, "%s: %s.nodes[%zu]: expected a node index", g->path, where, i);
                goto done;
            }
            if (gnode(g, (uint64_t)r->num, I, seen, 0) < 0)
                goto done;
        }
    } else {
        /* No scenes: every node that is nobody's child is a root. */
        for (size_t i = 0; i < nn; i++) {
            const jval *ch = jget(&nodes->item[i], "children");
            for (size_t k = 0; ch && ch->t == J_ARR && k < ch->n; k++)
                if (ch->item[k].t == J_NUM && ch->item[k].num >= 0 && ch->item[k].num < (double)nn)
                    child[(size_t)ch->item[k].num] = 1;
        }
        for (size_t i = 0; i < nn; i++)
            if (!child[i] && gnode(g, i, I, seen, 0) < 0)
                goto done;
    }
    rc = 0;
done:
    free(seen);
    free(child);
    return rc;
}

/* ---- texture coordinates and materials, for the camera ---- */

/* A textureInfo's texture coordinate set and KHR_texture_transform (the
 * extension's offset, rotation and scale, and its texCoord, which
 * overrides the textureInfo's) as the affine map uvt: u' = uvt[0] u +
 * uvt[1] v + uvt[2], v' = uvt[3] u + uvt[4] v + uvt[5]. The map is
 * T(offset) R(rotation) S(scale) with R = [cos sin; -sin cos]: the
 * rotation of the implementations and the Khronos sample
 * TextureTransformTest, and of the extension's own example (offset [0, 1],
 * rotation pi/2, scale [0.5, 0.5] reads the lower left quadrant), which
 * the GLSL listing of the extension's README gets the wrong way round
 * (KhronosGroup/glTF issue 1563). */
static int gtexinfo(const gltf *g, const jval *ti, const char *where, uint64_t *set, double uvt[6])
{
    static const double I[6] = {1, 0, 0, 0, 1, 0};
    memcpy(uvt, I, sizeof I);
    *set = 0;
    if (gint(g, ti, where, "texCoord", 0, 255, set) < 0)
        return -1;
    const jval *tt = jget(jget(ti, "extensions"), "KHR_texture_transform");
    if (!tt)
        return 0;
    char tw[192];
    snprintf(tw, sizeof tw, "%s.extensions.KHR_texture_transform", where);
    if (tt->t != J_OBJ) {
        sensim_error(SENSIM_EFORMAT, "%s: %s: expected an object", g->path, tw);
        return -1;
    }
    double off[2] = {0, 0}, sc[2] = {1, 1}, rot = 0;
    const jval *r = jget(tt, "rotation");
    if (r && (r->t != J_NUM || !isfinite(r->num))) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.rotation: expected a finite number (radians)", g->path, tw);
        return -1;
    }
    if (r)
        rot = r->num;
    if (gnumbers(g, tt, tw, "offset", 2, off) < 0 || gnumbers(g, tt, tw, "scale", 2, sc) < 0 ||
        gint(g, tt, tw, "texCoord", 0, 255, set) < 0)
        return -1;
    const double c = cos(rot), sn = sin(rot);
    const double m[6] = {c * sc[0], sn * sc[1], off[0], -sn * sc[0], c * sc[1], off[1]};
    memcpy(uvt, m, sizeof m);
    return 0;
}

/* The name of the texture coordinate set ("TEXCOORD_1") the textures of
 * primitive pr's material sample: the base colour texture's (else the
 * metallic-roughness texture's), TEXCOORD_0 unless its textureInfo or
 * KHR_texture_transform says otherwise. A material that does not exist,
 * or whose two textures want different sets, is reported by gmaterial. */
static int guvset(gltf *g, const jval *pr, char name[24])
{
    uint64_t set = 0;
    const jval *mats = jget(g->root, "materials"), *mv = jget(pr, "material");
    if (mv && mv->t == J_NUM && mv->num >= 0 && mv->num == floor(mv->num) && mats && mats->t == J_ARR &&
        mv->num < (double)mats->n) {
        const size_t mi = (size_t)mv->num;
        const jval *pbr = jget(&mats->item[mi], "pbrMetallicRoughness");
        static const char *const slot[2] = {"baseColorTexture", "metallicRoughnessTexture"};
        for (int k = 0; k < 2; k++) {
            const jval *ti = jget(pbr, slot[k]);
            char where[112];
            double uvt[6];
            snprintf(where, sizeof where, "materials[%zu].pbrMetallicRoughness.%s", mi, slot[k]);
            if (ti && ti->t == J_OBJ) {
                if (gtexinfo(g, ti, where, &set, uvt) < 0)
                    return -1;
                break;
            }
        }
    }
    snprintf(name, 24, "TEXCOORD_%u", (unsigned)set);
    return 0;
}

/* The primitive just appended (nvert vertices, ntri triangles): its
 * material into g->tm, its texture coordinates (set uvname: float, or
 * normalized unsigned byte or short; for a Draco primitive, duv, decoded
 * from its stream) into g->uv. */
static int gsurface_prim(gltf *g, const jval *pr, const jval *attr, const char *awhere, const char *where,
                         size_t nvert, size_t ntri, const char *uvname, const gview *duv)
{
    uint64_t mat = 0;
    const int has_mat = jget(pr, "material") != NULL;
    if (has_mat && gint(g, pr, where, "material", 1, INT32_MAX, &mat) < 0)
        return -1;
    g->any_mat |= has_mat;
    if (sensim_render_grow((void **)&g->tm, &g->ctm, g->nt, sizeof *g->tm) < 0) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", g->path);
        return -1;
    }
    for (size_t k = g->nt - ntri; k < g->nt; k++)
        g->tm[k] = has_mat ? (int32_t)mat : -1;
    const int draco = jget(jget(pr, "extensions"), "KHR_draco_mesh_compression") != NULL;
    const int has_uv = draco ? duv != NULL : jget(attr, uvname) != NULL;
    if (!has_uv && !g->uv)
        return 0;
    if (sensim_render_grow((void **)&g->uv, &g->cuv, g->nv, 2 * sizeof *g->uv) < 0) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", g->path);
        return -1;
    }
    /* Vertices of primitives without texture coordinates get (0, 0). */
    memset(g->uv + 2 * g->nuv, 0, (g->nv - g->nuv) * 2 * sizeof *g->uv);
    g->nuv = g->nv;
    if (!has_uv)
        return 0;
    char twhere[224];
    uint64_t ai = 0;
    gview tv;
    if (draco) {
        snprintf(twhere, sizeof twhere, "%s.extensions.KHR_draco_mesh_compression.attributes.%s", where, uvname);
        tv = *duv;
    } else {
        snprintf(twhere, sizeof twhere, "%s.%s", awhere, uvname);
        if (gint(g, attr, awhere, uvname, 1, UINT32_MAX, &ai) < 0 || gaccessor(g, ai, GA_ATTRIBUTE, twhere, &tv) < 0)
            return -1;
    }
    if (tv.ncomp != 2) {
        sensim_error(SENSIM_EFORMAT, "%s: %s (accessors[%llu]): texture coordinates must be VEC2", g->path, twhere,
                     (unsigned long long)ai);
        return -1;
    }
    if (tv.count != nvert) {
        sensim_error(SENSIM_EFORMAT, "%s: %s (accessors[%llu]): %zu elements for %zu positions", g->path, twhere,
                     (unsigned long long)ai, tv.count, nvert);
        return -1;
    }
    /* Float, or integers (normalized or not, KHR_mesh_quantization) by the
     * specification's formulas, as every other attribute. */
    float *o = g->uv + 2 * (g->nv - nvert);
    for (size_t i = 0; i < nvert; i++) {
        gelem(&tv, i, o + 2 * i);
        if (!isfinite(o[2 * i]) || !isfinite(o[2 * i + 1])) {
            sensim_error(SENSIM_EDATA, "%s: %s (accessors[%llu]) element %zu is not finite", g->path, twhere,
                         (unsigned long long)ai, i);
            return -1;
        }
    }
    return 0;
}

/* The bytes of images[ii]: a relative file, a base64 data: URI, or a
 * bufferView. *owned is set when the caller must free them. */
static const unsigned char *gimage_bytes(gltf *g, uint64_t ii, const char *from, size_t *len, unsigned char **owned,
                                         char where[64])
{
    *owned = NULL;
    const jval *im = gitem(g, "images", ii, from, where);
    if (!im)
        return NULL;
    const jval *uri = jget(im, "uri");
    if (uri) {
        if (uri->t != J_STR || !uri->str[0]) {
            sensim_error(SENSIM_EFORMAT, "%s: %s.uri: expected a non-empty string", g->path, where);
            return NULL;
        }
        return *owned = guri_bytes(g, uri->str, where, len);
    }
    uint64_t bvi = 0, bi = 0, boff = 0, blen = 0;
    char bwhere[64];
    const jval *bv;
    if (gint(g, im, where, "bufferView", 1, UINT32_MAX, &bvi) < 0 || !(bv = gitem(g, "bufferViews", bvi, where, bwhere)) ||
        gint(g, bv, bwhere, "buffer", 1, UINT32_MAX, &bi) < 0 ||
        gint(g, bv, bwhere, "byteOffset", 0, UINT64_MAX >> 12, &boff) < 0 ||
        gint(g, bv, bwhere, "byteLength", 1, UINT64_MAX >> 12, &blen) < 0)
        return NULL;
    const unsigned char *buf = gbuffer_span(g, bi, boff, blen, bwhere);
    if (buf)
        *len = (size_t)blen;
    return buf;
}

/* textures[ti] decoded (srgb: colour; else data), with its sampler's wrap
 * modes and filter. */
static int gtexture(gltf *g, uint64_t ti, const char *from, int srgb, sensim_texture *t)
{
    char where[64], iwhere[64];
    const jval *tx = gitem(g, "textures", ti, from, where);
    if (!tx)
        return -1;
    uint64_t src = 0, smp = 0;
    if (!jget(tx, "source")) {
        sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: no 'source' image (only PNG and JPEG textures are supported)",
                     g->path, where);
        return -1;
    }
    if (gint(g, tx, where, "source", 1, UINT32_MAX, &src) < 0)
        return -1;
    size_t len = 0;
    unsigned char *owned = NULL;
    const unsigned char *data = gimage_bytes(g, src, where, &len, &owned, iwhere);
    if (!data)
        return -1;
    char what[4300];
    snprintf(what, sizeof what, "%s: %s", g->path, iwhere);
    int rc = sensim_texture_decode(data, len, srgb, what, t);
    free(owned);
    if (rc < 0)
        return -1;
    if (jget(tx, "sampler")) {
        char swhere[64];
        const jval *sm;
        uint64_t ws = TEX_REPEAT, wt = TEX_REPEAT, mag = 9729;
        if (gint(g, tx, where, "sampler", 1, UINT32_MAX, &smp) < 0 || !(sm = gitem(g, "samplers", smp, where, swhere)) ||
            gint(g, sm, swhere, "wrapS", 0, 100000, &ws) < 0 || gint(g, sm, swhere, "wrapT", 0, 100000, &wt) < 0 ||
            gint(g, sm, swhere, "magFilter", 0, 100000, &mag) < 0) {
            sensim_texture_free(t);
            return -1;
        }
        const uint64_t w2[2] = {ws, wt};
        for (int k = 0; k < 2; k++)
            if (w2[k] != TEX_REPEAT && w2[k] != TEX_CLAMP && w2[k] != TEX_MIRROR) {
                sensim_error(SENSIM_EFORMAT, "%s: %s.%s: %llu is not a wrap mode (10497, 33071, 33648)", g->path,
                             swhere, k ? "wrapT" : "wrapS", (unsigned long long)w2[k]);
                sensim_texture_free(t);
                return -1;
            }
        t->wrap_s = (int)ws;
        t->wrap_t = (int)wt;
        t->nearest = mag == 9728;
    }
    return 0;
}

/* A material's textureInfo `slot` of pbr (at pwhere), if present: its
 * texture decoded once into sf->tex (srgb: colour, else data;
 * tex_of[2 * texture index + !srgb] caches the slot) into *tex, its
 * texture coordinate set into *set and its KHR_texture_transform into
 * uvt. */
static int gmaterial_texture(gltf *g, const jval *pbr, const char *pwhere, const char *slot, int srgb,
                             scene_surface *sf, int *tex_of, size_t ntextures, int *tex, uint64_t *set, double uvt[6])
{
    const jval *ti = jget(pbr, slot);
    if (!ti)
        return 0;
    char twhere[160];
    snprintf(twhere, sizeof twhere, "%s.%s", pwhere, slot);
    uint64_t k = 0;
    if (ti->t != J_OBJ || gint(g, ti, twhere, "index", 1, UINT32_MAX, &k) < 0 || gtexinfo(g, ti, twhere, set, uvt) < 0) {
        if (ti->t != J_OBJ)
            sensim_error(SENSIM_EFORMAT, "%s: %s: expected an object", g->path, twhere);
        return -1;
    }
    if (k >= ntextures) {
        sensim_error(SENSIM_EFORMAT, "%s: %s.index: textures[%llu] does not exist (%zu textures)", g->path, twhere,
                     (unsigned long long)k, ntextures);
        return -1;
    }
    int *c = &tex_of[2 * k + !srgb];
    if (*c < 0) {
        if (gtexture(g, k, twhere, srgb, &sf->tex[sf->ntex]) < 0)
            return -1;
        *c = (int)sf->ntex++;
    }
    *tex = *c;
    return 0;
}

/* materials[mi] into m, its textures decoded once into sf->tex. */
static int gmaterial(gltf *g, uint64_t mi, scene_surface *sf, int *tex_of, size_t ntextures, surface_material *m)
{
    char where[64], pwhere[96];
    const jval *ma = gitem(g, "materials", mi, "meshes", where);
    if (!ma)
        return -1;
    m->base[0] = m->base[1] = m->base[2] = 1;
    m->metallic = m->roughness = 1;
    m->texture = m->mr_texture = -1;
    static const double I[6] = {1, 0, 0, 0, 1, 0};
    memcpy(m->uvt, I, sizeof I);
    memcpy(m->mr_uvt, I, sizeof I);
    const jval *pbr = jget(ma, "pbrMetallicRoughness");
    if (!pbr)
        return 0;
    snprintf(pwhere, sizeof pwhere, "%s.pbrMetallicRoughness", where);
    double bc[4] = {1, 1, 1, 1};
    if (gnumbers(g, pbr, pwhere, "baseColorFactor", 4, bc) < 0)
        return -1;
    const char *fk[2] = {"metallicFactor", "roughnessFactor"};
    double fv[2] = {1, 1};
    for (int k = 0; k < 2; k++) {
        const jval *f = jget(pbr, fk[k]);
        if (f && (f->t != J_NUM || !(f->num >= 0 && f->num <= 1))) {
            sensim_error(SENSIM_EFORMAT, "%s: %s.%s: expected a number in [0, 1]", g->path, pwhere, fk[k]);
            return -1;
        }
        if (f)
            fv[k] = f->num;
    }
    for (int c = 0; c < 4; c++)
        if (!(bc[c] >= 0 && bc[c] <= 1)) {
            sensim_error(SENSIM_EFORMAT, "%s: %s.baseColorFactor[%d]: %g is not in [0, 1]", g->path, pwhere, c, bc[c]);
            return -1;
        }
    memcpy(m->base, bc, sizeof m->base);
    m->metallic = fv[0];
    m->roughness = fv[1];
    uint64_t bset = 0, mset = 0;
    if (gmaterial_texture(g, pbr, pwhere, "baseColorTexture", 1, sf, tex_of, ntextures, &m->texture, &bset,
                          m->uvt) < 0 ||
        gmaterial_texture(g, pbr, pwhere, "metallicRoughnessTexture", 0, sf, tex_of, ntextures, &m->mr_texture,
                          &mset, m->mr_uvt) < 0)
        return -1;
    /* A primitive keeps one set of texture coordinates (guvset). */
    if (m->texture >= 0 && m->mr_texture >= 0 && bset != mset) {
        sensim_error(SENSIM_EUNSUPPORTED, "%s: %s.metallicRoughnessTexture: texture coordinate set %llu, but the "
                     "baseColorTexture samples set %llu (one set per material is supported)", g->path, pwhere,
                     (unsigned long long)mset, (unsigned long long)bset);
        return -1;
    }
    return 0;
}

/* The surface of the loaded triangles (NULL and 0 when no primitive has a
 * material): every material, the textures they use, the texture
 * coordinates and per-triangle materials. Takes g->uv and g->tm. */
static int gsurface(gltf *g, scene_surface **out)
{
    *out = NULL;
    if (!g->any_mat)
        return 0;
    const jval *mats = jget(g->root, "materials"), *texs = jget(g->root, "textures");
    size_t nm = mats && mats->t == J_ARR ? mats->n : 0, ntx = texs && texs->t == J_ARR ? texs->n : 0;
    for (size_t k = 0; k < g->nt; k++)
        if (g->tm[k] >= 0 && (size_t)g->tm[k] >= nm) {
            sensim_error(SENSIM_EFORMAT, "%s: a primitive's material: materials[%d] does not exist (%zu materials)",
                         g->path, g->tm[k], nm);
            return -1;
        }
    scene_surface *sf = calloc(1, sizeof *sf);
    int *tex_of = malloc((2 * ntx + 1) * sizeof *tex_of);
    if (!sf || !tex_of || !(sf->mat = calloc(nm, sizeof *sf->mat)) ||
        !(sf->tex = calloc(2 * ntx + 1, sizeof *sf->tex))) {
        free(tex_of);
        scene_surface_free(sf);
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", g->path);
        return -1;
    }
    for (size_t i = 0; i < 2 * ntx; i++)
        tex_of[i] = -1;
    for (size_t i = 0; i < nm; i++)
        if (gmaterial(g, i, sf, tex_of, ntx, &sf->mat[i]) < 0) {
            free(tex_of);
            scene_surface_free(sf);
            return -1;
        }
    free(tex_of);
    sf->nmat = nm;
    if (g->uv && g->nuv < g->nv)
        memset(g->uv + 2 * g->nuv, 0, (g->nv - g->nuv) * 2 * sizeof *g->uv);
    sf->uv = g->uv;
    sf->tri_mat = g->tm;
    g->uv = NULL;
    g->tm = NULL;
    *out = sf;
    return 0;
}

static uint32_t le32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

int sensim_gltf_load_attribute(sensim_scene *s, const char *name, const char *path, int glb, int up_y,
                               const char *attribute, float **values, int *ncomp)
{
    gltf g;
    memset(&g, 0, sizeof g);
    g.path = path;
    g.attr = attribute;
    snprintf(g.dir, sizeof g.dir, "%s", path);
    char *slash = strrchr(g.dir, '/');
    if (slash)
        *slash = 0;
    else
        g.dir[0] = 0;
    size_t len;
    unsigned char *file = read_all(path, &len);
    if (!file)
        return -1;
    g.file_len = len;
    const char *json = (const char *)file;
    size_t jlen = len;
    jval root;
    memset(&root, 0, sizeof root);
    int id = -1;
    if (len >= 4 && memcmp(file, "glTF", 4) == 0) {
        /* GLB: magic, version 2, total length; chunks of (length, type, data). */
        if (len < 20) {
            sensim_error(SENSIM_EFORMAT, "%s: truncated GLB (%zu bytes, header and JSON chunk need 20)", path, len);
            goto done;
        }
        if (le32(file + 4) != 2) {
            sensim_error(SENSIM_EUNSUPPORTED, "%s: GLB version %u (expected 2)", path, le32(file + 4));
            goto done;
        }
        if (le32(file + 8) != len) {
            sensim_error(SENSIM_EFORMAT, "%s: GLB header says %u bytes but the file has %zu (truncated?)", path,
                         le32(file + 8), len);
            goto done;
        }
        size_t at = 12;
        json = NULL;
        while (at < len) {
            if (len - at < 8) {
                sensim_error(SENSIM_EFORMAT, "%s: GLB byte %zu: truncated chunk header", path, at);
                goto done;
            }
            uint32_t clen = le32(file + at), ctype = le32(file + at + 4);
            if (clen > len - at - 8) {
                sensim_error(SENSIM_EFORMAT, "%s: GLB byte %zu: chunk of %u bytes runs past the end of the file",
                             path, at, clen);
                goto done;
            }
            if (at == 12 && ctype != 0x4E4F534Au) {
                sensim_error(SENSIM_EFORMAT, "%s: GLB byte 12: the first chunk is not JSON", path);
                goto done;
            }
            if (ctype == 0x4E4F534Au && at == 12) {
                json = (const char *)file + at + 8;
                jlen = clen;
            } else if (ctype == 0x004E4942u && !g.bin) {
                g.bin = file + at + 8;
                g.bin_len = clen;
            }
            at += 8 + (size_t)clen;
        }
    } else if (glb) {
        sensim_error(SENSIM_EFORMAT, "%s: bad GLB magic (a .glb file starts with \"glTF\")", path);
        goto done;
    }
    if (json_parse(path, json, jlen, &root) < 0)
        goto done;
    g.root = &root;
    if (gscene(&g) < 0)
        goto done;
    if (g.nt == 0) {
        sensim_error(SENSIM_EDATA, "%s: the scene has no triangles", path);
        goto done;
    }
    if (up_y)
        mesh_y_up_to_z_up(g.v, g.nv);
    scene_surface *surf = NULL;
    if (gsurface(&g, &surf) < 0)
        goto done;
    if (surf) /* per-triangle materials follow the triangles the mesh keeps */
        for (size_t i = 0, k = 0; i < g.nt; i++) {
            const uint32_t *t = g.t + 3 * i;
            if (!sensim_scene_triangle_degenerate(g.v + 3 * t[0], g.v + 3 * t[1], g.v + 3 * t[2]))
                surf->tri_mat[k++] = surf->tri_mat[i];
        }
    size_t nv = g.nv;
    id = sensim_scene_mesh_add_owned(s, name, g.v, g.nv, g.t, g.nt, path, NULL, NULL);
    g.v = NULL;
    g.t = NULL;
    if (id >= 0)
        s->mesh[id].surf = surf;
    else
        scene_surface_free(surf);
    if (id >= 0 && attribute) {
        *values = g.a;
        *ncomp = g.acomp;
        g.a = NULL;
        if (!*values) {
            *values = calloc(4 * nv + 1, sizeof **values);
            if (!*values) {
                sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
                id = -1;
            }
        }
    }
done:
    for (size_t i = 0; g.buf && i < g.nbuf; i++)
        free(g.buf[i]);
    free(g.buf);
    for (size_t i = 0; g.view && i < g.nview; i++)
        free(g.view[i]);
    free(g.view);
    for (size_t i = 0; i < g.nowned; i++)
        free(g.owned[i]);
    free(g.owned);
    free(g.a);
    free(g.v);
    free(g.t);
    free(g.uv);
    free(g.tm);
    jfree(&root);
    free(file);
    return id;
}

int sensim_gltf_load(sensim_scene *s, const char *name, const char *path, int glb, int up_y)
{
    return sensim_gltf_load_attribute(s, name, path, glb, up_y, NULL, NULL, NULL);
}
