/* PLY and PCD point clouds. See sensim/pointcloud.h.
 * PLY: Greg Turk's format as written by most tools (header, then vertices);
 * PCD: the Point Cloud Library's v0.7 format. */
#include "sensim/pointcloud.h"

#include "sensim/afile.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef enum { K_INT, K_UINT, K_FLOAT } kind_t;

typedef struct prop {
    char name[32];
    kind_t kind;
    int size;    /* bytes of one value */
    int count;   /* values (PCD COUNT) */
    size_t offset; /* byte offset in a binary record */
    size_t token;  /* first token in an ascii record */
} prop;

#define MAXPROP 64
#define PCD_MAXCOUNT 65536 /* values in one PCD field (PCL's FPFH has 33, VFH 308) */

typedef struct layout {
    prop p[MAXPROP];
    int np;
    size_t record; /* bytes per binary record */
    size_t tokens; /* tokens per ascii record */
    int ix, iy, iz, ii; /* property indices, -1 when absent */
} layout;

sensim_status sensim_cloud_format_parse(const char *name, sensim_cloud_format *fmt)
{
    if (!strcmp(name, "ply") || !strcmp(name, "ply-binary"))
        *fmt = SENSIM_CLOUD_PLY_BINARY;
    else if (!strcmp(name, "ply-ascii"))
        *fmt = SENSIM_CLOUD_PLY_ASCII;
    else if (!strcmp(name, "pcd") || !strcmp(name, "pcd-binary"))
        *fmt = SENSIM_CLOUD_PCD_BINARY;
    else if (!strcmp(name, "pcd-ascii"))
        *fmt = SENSIM_CLOUD_PCD_ASCII;
    else
        return sensim_error(SENSIM_EINVAL,
                            "unknown point cloud format '%s' (expected ply, ply-ascii, ply-binary, pcd, pcd-ascii, "
                            "pcd-binary)",
                            name);
    return SENSIM_OK;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sensim_error(SENSIM_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *nb = realloc(buf, 2 * cap + 1);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (!buf) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    if (err) {
        free(buf);
        sensim_error(SENSIM_EIO, "%s: read error", path);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Next header line: NUL-terminates it in place (also stripping '\r'),
 * returns it and advances *pos past the newline; NULL at the end. */
static char *next_line(char *buf, size_t len, size_t *pos)
{
    if (*pos >= len)
        return NULL;
    char *s = buf + *pos, *nl = memchr(s, '\n', len - *pos);
    if (!nl)
        return NULL;
    *nl = '\0';
    if (nl > s && nl[-1] == '\r')
        nl[-1] = '\0';
    *pos = (size_t)(nl - buf) + 1;
    return s;
}

static int ply_type(const char *t, kind_t *k, int *size)
{
    static const struct {
        const char *name;
        kind_t k;
        int size;
    } tab[] = {{"char", K_INT, 1},   {"int8", K_INT, 1},     {"uchar", K_UINT, 1},  {"uint8", K_UINT, 1},
               {"short", K_INT, 2},  {"int16", K_INT, 2},    {"ushort", K_UINT, 2}, {"uint16", K_UINT, 2},
               {"int", K_INT, 4},    {"int32", K_INT, 4},    {"uint", K_UINT, 4},   {"uint32", K_UINT, 4},
               {"float", K_FLOAT, 4}, {"float32", K_FLOAT, 4}, {"double", K_FLOAT, 8}, {"float64", K_FLOAT, 8}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (!strcmp(t, tab[i].name)) {
            *k = tab[i].k;
            *size = tab[i].size;
            return 1;
        }
    return 0;
}

static double get_value(const unsigned char *p, kind_t k, int size)
{
    switch (k) {
    case K_FLOAT:
        if (size == 4) {
            float f;
            memcpy(&f, p, 4);
            return f;
        } else {
            double d;
            memcpy(&d, p, 8);
            return d;
        }
    case K_INT:
        switch (size) {
        case 1: return (int8_t)p[0];
        case 2: { int16_t v; memcpy(&v, p, 2); return v; }
        case 4: { int32_t v; memcpy(&v, p, 4); return v; }
        default: { int64_t v; memcpy(&v, p, 8); return (double)v; }
        }
    default:
        switch (size) {
        case 1: return p[0];
        case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
        case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
        default: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
        }
    }
}

static void finish_layout(layout *L)
{
    L->ix = L->iy = L->iz = L->ii = -1;
    L->record = L->tokens = 0;
    for (int i = 0; i < L->np; i++) {
        prop *q = &L->p[i];
        q->offset = L->record;
        q->token = L->tokens;
        L->record += (size_t)q->size * (size_t)q->count;
        L->tokens += (size_t)q->count;
        if (!strcmp(q->name, "x") && L->ix < 0)
            L->ix = i;
        else if (!strcmp(q->name, "y") && L->iy < 0)
            L->iy = i;
        else if (!strcmp(q->name, "z") && L->iz < 0)
            L->iz = i;
        else if ((!strcmp(q->name, "intensity") || !strcmp(q->name, "scalar_intensity") || !strcmp(q->name, "I")) &&
                 L->ii < 0) /* CARLA's save_to_disk names it I */
            L->ii = i;
    }
}

/* Decodes n records (binary or ascii) after the header. */
static sensim_status decode(const char *path, const layout *L, int binary, const char *data, size_t avail, size_t n,
                            float *out)
{
    const int idx[4] = {L->ix, L->iy, L->iz, L->ii};
    if (binary) {
        if (L->record == 0 || avail / L->record < n)
            return sensim_error(SENSIM_EFORMAT, "%s: truncated data: %zu points of %zu bytes declared, %zu bytes present",
                                path, n, L->record, avail);
        for (size_t i = 0; i < n; i++) {
            const unsigned char *rec = (const unsigned char *)data + i * L->record;
            for (int c = 0; c < 4; c++)
                out[4 * i + c] = idx[c] < 0 ? 0.0f
                                            : (float)get_value(rec + L->p[idx[c]].offset, L->p[idx[c]].kind,
                                                               L->p[idx[c]].size);
        }
        return SENSIM_OK;
    }
    const char *s = data, *end = data + avail;
    size_t want[4];
    for (int c = 0; c < 4; c++)
        want[c] = idx[c] < 0 ? SIZE_MAX : L->p[idx[c]].token;
    for (size_t i = 0; i < n; i++) {
        double v4[4] = {0, 0, 0, 0};
        for (size_t t = 0; t < L->tokens; t++) {
            while (s < end && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
                s++;
            if (s >= end)
                return sensim_error(SENSIM_EFORMAT, "%s: truncated data: %zu points declared, %zu found", path, n, i);
            /* strtod needs a terminator the buffer may lack at its end: copy
             * the token (numbers are short; a longer token is not one). */
            char num[64];
            size_t k = 0;
            while (s + k < end && k < sizeof num - 1 && !strchr(" \t\r\n", s[k]) && s[k])
                k++;
            memcpy(num, s, k);
            num[k] = '\0';
            char *e;
            double v = strtod(num, &e);
            if (k == 0 || *e)
                return sensim_error(SENSIM_EFORMAT, "%s: point %zu: value %zu is not a number", path, i, t);
            for (int c = 0; c < 4; c++)
                if (want[c] == t)
                    v4[c] = v;
            s += k;
        }
        for (int c = 0; c < 4; c++)
            out[4 * i + c] = (float)v4[c];
    }
    return SENSIM_OK;
}

/* Refuses a declared point count the data cannot hold, before anything is
 * allocated for it: a binary record is L->record bytes, an ascii one at
 * least one character and one separator per value. */
static sensim_status check_count(const char *path, const layout *L, int binary, size_t avail, size_t n)
{
    size_t per = binary ? L->record : 2 * L->tokens;
    if (per == 0)
        return sensim_error(SENSIM_EFORMAT, "%s: records of zero size", path);
    if (n > (avail + 1) / per)
        return sensim_error(SENSIM_EFORMAT,
                            "%s: truncated data: %zu points declared, the %zu bytes after the header hold at most %zu",
                            path, n, avail, (avail + 1) / per);
    return SENSIM_OK;
}

/* A header count: decimal digits only, no overflow. */
static int parse_count(const char *tok, size_t *v)
{
    if (!tok || !*tok)
        return 0;
    unsigned long long r = 0;
    for (const char *p = tok; *p; p++) {
        if (*p < '0' || *p > '9' || r > (ULLONG_MAX - 9) / 10 || r * 10 + (unsigned)(*p - '0') > SIZE_MAX)
            return 0;
        r = r * 10 + (unsigned)(*p - '0');
    }
    *v = (size_t)r;
    return 1;
}

/* Header text for a message: at most 40 bytes, each byte outside printable
 * ASCII as \xNN, so a binary file's bytes never reach the terminal raw.
 * Returns buf (size >= 4 * 40 + 8). */
static const char *shown(const char *s, char *buf, size_t size)
{
    size_t k = 0, i = 0;
    for (; s && s[i] && i < 40 && k + 5 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\'')
            buf[k++] = (char)c;
        else
            k += (size_t)snprintf(buf + k, size - k, "\\x%02X", c);
    }
    if (s && s[i] && k + 4 < size)
        k += (size_t)snprintf(buf + k, size - k, "...");
    buf[k] = '\0';
    return buf;
}

/* The points after a PLY or PCD header (what: "<the header part naming
 * the fields> lack(s)", for the error): the layout completed and checked for x, y
 * and z, the size checked, n points decoded into *xyzi (malloc'd). */
static sensim_status read_points(const char *path, layout *L, const char *what, int binary, const char *data,
                                 size_t avail, size_t n, float **xyzi, size_t *count, int *has_i)
{
    finish_layout(L);
    if (L->ix < 0 || L->iy < 0 || L->iz < 0)
        return sensim_error(SENSIM_EFORMAT, "%s: %s x, y or z", path, what);
    sensim_status st = check_count(path, L, binary, avail, n);
    if (st != SENSIM_OK)
        return st;
    float *out = malloc((n ? n : 1) * 4 * sizeof *out);
    if (!out)
        return sensim_error(SENSIM_ENOMEM, "%s: cannot allocate %zu points", path, n);
    if ((st = decode(path, L, binary, data, avail, n, out)) != SENSIM_OK) {
        free(out);
        return st;
    }
    *xyzi = out;
    *count = n;
    *has_i = L->ii >= 0;
    return SENSIM_OK;
}

static sensim_status read_ply(const char *path, char *buf, size_t len, float **xyzi, size_t *n, int *has_i,
                              sensim_cloud_format *fmt)
{
    layout L;
    memset(&L, 0, sizeof L);
    size_t pos = 0, nv = 0;
    int line = 0, binary = -1, in_vertex = 0, seen_vertex = 0, after_vertex = 0;
    char *s, sh[176];
    while ((s = next_line(buf, len, &pos))) {
        line++;
        char w1[64] = "", w2[64] = "", w3[64] = "";
        int nw = sscanf(s, "%63s %63s %63s", w1, w2, w3);
        if (line == 1)
            continue; /* "ply" */
        if (nw <= 0 || !strcmp(w1, "comment") || !strcmp(w1, "obj_info"))
            continue;
        if (!strcmp(w1, "end_header"))
            break;
        if (!strcmp(w1, "format")) {
            if (!strcmp(w2, "ascii"))
                binary = 0;
            else if (!strcmp(w2, "binary_little_endian"))
                binary = 1;
            else
                return sensim_error(SENSIM_EUNSUPPORTED, "%s:%d: PLY format '%s' not supported (ascii or "
                                    "binary_little_endian)", path, line, shown(w2, sh, sizeof sh));
        } else if (!strcmp(w1, "element")) {
            in_vertex = !strcmp(w2, "vertex");
            if (in_vertex) {
                if (seen_vertex)
                    return sensim_error(SENSIM_EFORMAT, "%s:%d: second vertex element", path, line);
                if (after_vertex)
                    return sensim_error(SENSIM_EUNSUPPORTED, "%s:%d: the vertex element must come first", path, line);
                if (nw < 3 || !parse_count(w3, &nv))
                    return sensim_error(SENSIM_EFORMAT, "%s:%d: bad vertex count '%s'", path, line, shown(w3, sh, sizeof sh));
                seen_vertex = 1;
            } else {
                after_vertex = 1;
            }
        } else if (!strcmp(w1, "property")) {
            if (!in_vertex)
                continue;
            if (!strcmp(w2, "list"))
                return sensim_error(SENSIM_EUNSUPPORTED, "%s:%d: list property in vertex element", path, line);
            if (L.np >= MAXPROP)
                return sensim_error(SENSIM_EUNSUPPORTED, "%s:%d: more than %d vertex properties", path, line, MAXPROP);
            prop *q = &L.p[L.np];
            if (nw < 3 || !ply_type(w2, &q->kind, &q->size))
                return sensim_error(SENSIM_EFORMAT, "%s:%d: bad property '%s'", path, line, shown(s, sh, sizeof sh));
            snprintf(q->name, sizeof q->name, "%s", w3);
            q->count = 1;
            L.np++;
        } else {
            return sensim_error(SENSIM_EFORMAT, "%s:%d: unexpected header line '%s'", path, line, shown(s, sh, sizeof sh));
        }
    }
    if (!s)
        return sensim_error(SENSIM_EFORMAT, "%s: PLY header has no end_header", path);
    if (binary < 0)
        return sensim_error(SENSIM_EFORMAT, "%s: PLY header has no format line", path);
    if (!seen_vertex)
        return sensim_error(SENSIM_EFORMAT, "%s: PLY header has no vertex element", path);
    sensim_status st = read_points(path, &L, "vertex element lacks", binary, buf + pos, len - pos, nv, xyzi, n, has_i);
    if (!st && fmt)
        *fmt = binary ? SENSIM_CLOUD_PLY_BINARY : SENSIM_CLOUD_PLY_ASCII;
    return st;
}

static sensim_status read_pcd(const char *path, char *buf, size_t len, float **xyzi, size_t *n, int *has_i,
                              sensim_cloud_format *fmt)
{
    layout L;
    memset(&L, 0, sizeof L);
    size_t pos = 0, npoints = 0, width = 0, height = 1;
    int line = 0, binary = -1, have_points = 0, have_width = 0, nsize = 0, ntype = 0, ncount = 0;
    char *s, sh[176];
    while (binary < 0 && (s = next_line(buf, len, &pos))) {
        line++;
        if (s[0] == '#' || s[0] == '\0')
            continue;
        char *save = NULL, *key = strtok_r(s, " \t", &save), *tok;
        if (!key)
            continue;
        if (!strcmp(key, "VERSION") || !strcmp(key, "VIEWPOINT"))
            continue;
        if (!strcmp(key, "FIELDS")) {
            while ((tok = strtok_r(NULL, " \t", &save))) {
                if (L.np >= MAXPROP)
                    return sensim_error(SENSIM_EUNSUPPORTED, "%s:%d: more than %d fields", path, line, MAXPROP);
                snprintf(L.p[L.np].name, sizeof L.p[L.np].name, "%s", tok);
                L.p[L.np].count = 1;
                L.np++;
            }
        } else if (!strcmp(key, "SIZE")) {
            while ((tok = strtok_r(NULL, " \t", &save)) && nsize < L.np)
                L.p[nsize++].size = atoi(tok);
        } else if (!strcmp(key, "TYPE")) {
            while ((tok = strtok_r(NULL, " \t", &save)) && ntype < L.np) {
                prop *q = &L.p[ntype++];
                q->kind = tok[0] == 'F' ? K_FLOAT : tok[0] == 'U' ? K_UINT : K_INT;
                if (tok[1] || !strchr("FUI", tok[0]))
                    return sensim_error(SENSIM_EFORMAT, "%s:%d: bad TYPE '%s'", path, line, shown(tok, sh, sizeof sh));
            }
        } else if (!strcmp(key, "COUNT")) {
            while ((tok = strtok_r(NULL, " \t", &save)) && ncount < L.np) {
                size_t c;
                if (!parse_count(tok, &c) || c < 1 || c > PCD_MAXCOUNT)
                    return sensim_error(SENSIM_EFORMAT, "%s:%d: bad COUNT '%s' (1 to %d)", path, line, shown(tok, sh, sizeof sh),
                                        PCD_MAXCOUNT);
                L.p[ncount++].count = (int)c;
            }
        } else if (!strcmp(key, "WIDTH") || !strcmp(key, "HEIGHT") || !strcmp(key, "POINTS")) {
            tok = strtok_r(NULL, " \t", &save);
            size_t v;
            if (!parse_count(tok, &v))
                return sensim_error(SENSIM_EFORMAT, "%s:%d: bad %s '%s'", path, line, key, shown(tok, sh, sizeof sh));
            if (key[0] == 'W')
                width = v, have_width = 1;
            else if (key[0] == 'H')
                height = v;
            else
                npoints = v, have_points = 1;
        } else if (!strcmp(key, "DATA")) {
            tok = strtok_r(NULL, " \t", &save);
            if (tok && !strcmp(tok, "ascii"))
                binary = 0;
            else if (tok && !strcmp(tok, "binary"))
                binary = 1;
            else
                return sensim_error(SENSIM_EUNSUPPORTED, "%s:%d: DATA '%s' not supported (ascii or binary)", path,
                                    line, shown(tok, sh, sizeof sh));
        } else {
            return sensim_error(SENSIM_EFORMAT, "%s:%d: unknown PCD header key '%s'", path, line, shown(key, sh, sizeof sh));
        }
    }
    if (binary < 0)
        return sensim_error(SENSIM_EFORMAT, "%s: PCD header has no DATA line", path);
    if (L.np == 0 || nsize != L.np || ntype != L.np)
        return sensim_error(SENSIM_EFORMAT, "%s: PCD header: FIELDS, SIZE and TYPE must have the same length", path);
    for (int i = 0; i < L.np; i++) {
        prop *q = &L.p[i];
        int ok = q->count >= 1 && (q->kind == K_FLOAT ? (q->size == 4 || q->size == 8)
                                                      : (q->size == 1 || q->size == 2 || q->size == 4 || q->size == 8));
        if (!ok)
            return sensim_error(SENSIM_EFORMAT, "%s: PCD field '%s': bad size %d or count %d", path, shown(q->name, sh, sizeof sh), q->size,
                                q->count);
    }
    /* PCL: POINTS is the total, WIDTH x HEIGHT the organisation; they must
     * agree (multiplied without overflow). */
    if (have_width) {
        if (height != 0 && width > SIZE_MAX / height)
            return sensim_error(SENSIM_EFORMAT, "%s: PCD WIDTH %zu x HEIGHT %zu overflows", path, width, height);
        if (have_points && npoints != width * height)
            return sensim_error(SENSIM_EFORMAT, "%s: PCD POINTS %zu disagrees with WIDTH x HEIGHT = %zu x %zu", path,
                                npoints, width, height);
        npoints = width * height;
    }
    sensim_status st = read_points(path, &L, "PCD fields lack", binary, buf + pos, len - pos, npoints, xyzi, n, has_i);
    if (!st && fmt)
        *fmt = binary ? SENSIM_CLOUD_PCD_BINARY : SENSIM_CLOUD_PCD_ASCII;
    return st;
}

sensim_status sensim_cloud_read(const char *path, float **xyzi, size_t *n, int *has_intensity, sensim_cloud_format *fmt)
{
    *xyzi = NULL;
    *n = 0;
    size_t len;
    char *buf = slurp(path, &len);
    if (!buf)
        return sensim_last_status();
    sensim_status st;
    int dummy;
    if (!has_intensity)
        has_intensity = &dummy;
    if (len >= 4 && !memcmp(buf, "ply", 3) && (buf[3] == '\n' || buf[3] == '\r'))
        st = read_ply(path, buf, len, xyzi, n, has_intensity, fmt);
    else if (len >= 1 && (buf[0] == '#' || !strncmp(buf, "VERSION", 7) || !strncmp(buf, "FIELDS", 6)))
        st = read_pcd(path, buf, len, xyzi, n, has_intensity, fmt);
    else
        st = sensim_error(SENSIM_EFORMAT, "%s: neither a PLY nor a PCD file", path);
    free(buf);
    return st;
}

sensim_status sensim_cloud_write(const char *path, sensim_cloud_format fmt, const float *xyzi, size_t n)
{
    return sensim_cloud_write_fields(path, fmt, xyzi, NULL, n);
}

/* The lidar fields, in the names and types of the drivers whose PCL point
 * types users load them with (velodyne_pointcloud's PointXYZIR: ring u16,
 * time f32 s; return index and reflectivity as u8). PLY's ring is spelled
 * "uint16", not "ushort": Open3D 0.16 reads only the former. */
static const struct {
    const char *name, *ply, *pcd_type;
    int size;
} lidar_field[4] = {{"ring", "uint16", "U", 2},
                    {"time", "float", "F", 4},
                    {"return_index", "uchar", "U", 1},
                    {"reflectivity", "uchar", "U", 1}};

static const void *field_data(const sensim_cloud_fields *fl, int k)
{
    if (!fl)
        return NULL;
    return k == 0 ? (const void *)fl->ring : k == 1 ? (const void *)fl->time
                                 : k == 2 ? (const void *)fl->return_index : (const void *)fl->reflectivity;
}

sensim_status sensim_cloud_write_fields(const char *path, sensim_cloud_format fmt, const float *xyzi,
                                        const sensim_cloud_fields *fields, size_t n)
{
    if (!xyzi && n > 0)
        return sensim_error(SENSIM_EINVAL, "%s: NULL points", path);
    if (fmt != SENSIM_CLOUD_PLY_ASCII && fmt != SENSIM_CLOUD_PLY_BINARY && fmt != SENSIM_CLOUD_PCD_ASCII &&
        fmt != SENSIM_CLOUD_PCD_BINARY)
        return sensim_error(SENSIM_EINVAL, "%s: unknown point cloud format %d", path, (int)fmt);
    int has[4], nf = 0;
    size_t record = 16;
    for (int k = 0; k < 4; k++) {
        has[k] = field_data(fields, k) != NULL && n > 0;
        nf += has[k];
        record += has[k] ? (size_t)lidar_field[k].size : 0;
    }
    sensim_afile *af = sensim_afile_open(path);
    if (!af)
        return sensim_last_status();
    FILE *f = sensim_afile_stream(af);
    int binary = fmt == SENSIM_CLOUD_PLY_BINARY || fmt == SENSIM_CLOUD_PCD_BINARY;
    if (fmt == SENSIM_CLOUD_PLY_ASCII || fmt == SENSIM_CLOUD_PLY_BINARY) {
        fprintf(f,
                "ply\nformat %s 1.0\ncomment written by sensim\nelement vertex %zu\nproperty float x\n"
                "property float y\nproperty float z\nproperty float intensity\n",
                binary ? "binary_little_endian" : "ascii", n);
        for (int k = 0; k < 4; k++)
            if (has[k])
                fprintf(f, "property %s %s\n", lidar_field[k].ply, lidar_field[k].name);
        fprintf(f, "end_header\n");
    } else {
        fprintf(f, "# .PCD v0.7 - Point Cloud Data file format (written by sensim)\nVERSION 0.7\nFIELDS x y z intensity");
        for (int k = 0; k < 4; k++)
            if (has[k])
                fprintf(f, " %s", lidar_field[k].name);
        fprintf(f, "\nSIZE 4 4 4 4");
        for (int k = 0; k < 4; k++)
            if (has[k])
                fprintf(f, " %d", lidar_field[k].size);
        fprintf(f, "\nTYPE F F F F");
        for (int k = 0; k < 4; k++)
            if (has[k])
                fprintf(f, " %s", lidar_field[k].pcd_type);
        fprintf(f, "\nCOUNT 1 1 1 1%s\nWIDTH %zu\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS %zu\nDATA %s\n",
                nf == 0 ? "" : nf == 1 ? " 1" : nf == 2 ? " 1 1" : nf == 3 ? " 1 1 1" : " 1 1 1 1", n, n,
                binary ? "binary" : "ascii");
    }
    int bad = 0;
    if (binary && nf == 0) {
        /* Little-endian hosts: the float rows are the records. */
        bad = n && fwrite(xyzi, 4 * sizeof *xyzi, n, f) != n;
    } else if (binary) {
        unsigned char rec[32];
        for (size_t i = 0; i < n && !bad; i++) {
            memcpy(rec, xyzi + 4 * i, 16);
            size_t at = 16;
            for (int k = 0; k < 4; k++)
                if (has[k]) {
                    memcpy(rec + at, (const unsigned char *)field_data(fields, k) + i * (size_t)lidar_field[k].size,
                           (size_t)lidar_field[k].size);
                    at += (size_t)lidar_field[k].size;
                }
            bad = fwrite(rec, record, 1, f) != 1;
        }
    } else
        for (size_t i = 0; i < n; i++) {
            fprintf(f, "%.9g %.9g %.9g %.9g", xyzi[4 * i], xyzi[4 * i + 1], xyzi[4 * i + 2], xyzi[4 * i + 3]);
            if (has[0])
                fprintf(f, " %u", (unsigned)fields->ring[i]);
            if (has[1])
                fprintf(f, " %.9g", fields->time[i]);
            if (has[2])
                fprintf(f, " %u", (unsigned)fields->return_index[i]);
            if (has[3])
                fprintf(f, " %u", (unsigned)fields->reflectivity[i]);
            fputc('\n', f);
        }
    if (bad) {
        sensim_status st = sensim_error(SENSIM_EIO, "%s: write failed: %s", path, strerror(errno));
        sensim_afile_abort(af);
        return st;
    }
    return sensim_afile_commit(af);
}
