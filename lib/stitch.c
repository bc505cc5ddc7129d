/* Shards of one job and the virtual-dataset file that stitches them
 * (sensim/stitch.h). HDF5 1.10 resolves a relative VDS source name against
 * the directory of the virtual file, so a stitched set moves as a whole. */
#include <errno.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/afile.h"
#include "sensim/log.h"
#include "sensim/stitch.h"
#include "base_internal.h"
#include "log_internal.h"


void sensim_shard_split(int64_t total, int64_t count, int64_t index, int64_t *first, int64_t *end)
{
    int64_t q = total / count, r = total % count;
    *first = index * q + (index < r ? index : r);
    *end = *first + q + (index < r ? 1 : 0);
}

sensim_status sensim_shard_parse(const char *text, int64_t *index, int64_t *count)
{
    char *e1, *e2;
    errno = 0;
    long long i = strtoll(text, &e1, 10);
    if (e1 == text || *e1 != '/' || text[0] == '-' || text[0] == '+')
        goto bad;
    long long n = strtoll(e1 + 1, &e2, 10);
    if (e2 == e1 + 1 || *e2 || e1[1] == '-' || e1[1] == '+' || errno || n < 1 || n > 1000000 || i < 0 || i >= n)
        goto bad;
    *index = i;
    *count = n;
    return SENSIM_OK;
bad:
    return sensim_error(SENSIM_EINVAL, "'%s' is not a shard I/N with 0 <= I < N <= 1000000", text);
}

static int set_i64(hid_t obj, const char *name, const int64_t *v, hsize_t n)
{
    if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0)
        return -1;
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t a = H5Acreate2(obj, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    int bad = a < 0 || H5Awrite(a, H5T_NATIVE_INT64, v) < 0;
    h5_close(a);
    H5Sclose(sp);
    return bad ? -1 : 0;
}

static int set_str(hid_t obj, const char *name, const char *v)
{
    if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0)
        return -1;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    int bad = a < 0 || H5Awrite(a, t, &v) < 0;
    h5_close(a);
    H5Sclose(sp);
    H5Tclose(t);
    return bad ? -1 : 0;
}

sensim_status sensim_shard_tag(const char *path, const sensim_shard *s)
{
    H5_QUIET_SCOPE();
    if (!s || !s->kind || (strcmp(s->kind, "rows") && strcmp(s->kind, "seeds")) || s->count < 1 || s->index < 0 ||
        s->index >= s->count || s->first > s->end || s->end > s->total)
        return sensim_error(SENSIM_EINVAL, "%s: bad shard description", path);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return sensim_error(SENSIM_EIO, "%s: cannot open to record its shard", path);
    int64_t sh[2] = {s->index, s->count}, rg[2] = {s->first, s->end};
    int bad = set_str(f, "shard_kind", s->kind) || set_i64(f, "shard", sh, 2) || set_i64(f, "shard_range", rg, 2) ||
              set_i64(f, "shard_total", &s->total, 1) || (s->shared && set_str(f, "shard_shared", s->shared));
    if (H5Fclose(f) < 0)
        bad = 1;
    return bad ? sensim_error(SENSIM_EIO, "%s: cannot write the shard attributes (disk full?)", path) : SENSIM_OK;
}

/* ---- attributes: load, compare, copy ---- */

typedef struct {
    hid_t ft, mt, sp;
    hssize_t np;
    void *buf;
    int vlen;
} attrval;

static void attrval_free(attrval *v)
{
    if (v->buf && v->vlen)
        H5Dvlen_reclaim(v->mt, v->sp, H5P_DEFAULT, v->buf);
    free(v->buf);
    h5_close(v->mt);
    h5_close(v->ft);
    h5_close(v->sp);
    memset(v, 0, sizeof *v);
    v->ft = v->mt = v->sp = -1;
}

static int attrval_load(hid_t obj, const char *name, attrval *v)
{
    memset(v, 0, sizeof *v);
    v->ft = v->mt = v->sp = -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0)
        return -1;
    v->ft = H5Aget_type(a);
    v->sp = H5Aget_space(a);
    v->mt = v->ft >= 0 ? H5Tget_native_type(v->ft, H5T_DIR_ASCEND) : -1;
    v->np = v->sp >= 0 ? H5Sget_simple_extent_npoints(v->sp) : -1;
    size_t sz = v->mt >= 0 ? H5Tget_size(v->mt) : 0;
    int ok = v->mt >= 0 && v->np >= 0 && sz;
    if (ok) {
        v->vlen = H5Tdetect_class(v->mt, H5T_VLEN) > 0 || H5Tis_variable_str(v->mt) > 0;
        v->buf = calloc((size_t)(v->np ? v->np : 1), sz);
        ok = v->buf && H5Aread(a, v->mt, v->buf) >= 0;
        if (!ok) {
            free(v->buf);
            v->buf = NULL;
        }
    }
    H5Aclose(a);
    if (!ok)
        attrval_free(v);
    return ok ? 0 : -1;
}

static int attrval_equal(const attrval *a, const attrval *b)
{
    if (a->np != b->np || H5Tequal(a->ft, b->ft) <= 0)
        return 0;
    if (H5Tis_variable_str(a->mt) > 0) {
        for (hssize_t i = 0; i < a->np; i++) {
            const char *x = ((char **)a->buf)[i], *y = ((char **)b->buf)[i];
            if ((x == NULL) != (y == NULL) || (x && strcmp(x, y)))
                return 0;
        }
        return 1;
    }
    if (a->vlen)
        return 1; /* other variable-length types: not compared */
    return !memcmp(a->buf, b->buf, (size_t)a->np * H5Tget_size(a->mt));
}

static int is_ds_attr(const char *name)
{
    return !strcmp(name, "DIMENSION_LIST") || !strcmp(name, "REFERENCE_LIST") || !strcmp(name, "CLASS") ||
           !strcmp(name, "NAME") || !strcmp(name, "DIMENSION_LABELS");
}

static int is_shard_attr(const char *name)
{
    return !strncmp(name, "shard_", 6) || !strcmp(name, "shard");
}

typedef struct {
    sensim_namelist_ *l;
    int skip_seed;
} attr_list_ctx;

static herr_t attr_list_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)loc;
    (void)info;
    attr_list_ctx *c = data;
    if (is_ds_attr(name) || is_shard_attr(name) || (c->skip_seed && !strcmp(name, "seed")))
        return 0;
    sensim_namelist_add_(c->l, name); /* running out of memory: c->l->oom */
    return 0;
}

static int attr_names(hid_t obj, int skip_seed, sensim_namelist_ *l)
{
    attr_list_ctx c = {l, skip_seed};
    hsize_t idx = 0;
    if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_list_cb, &c) < 0 || l->oom)
        return -1;
    return 0;
}

static int copy_attrs(hid_t dst, hid_t src, int skip_seed)
{
    sensim_namelist_ l = {0};
    int bad = attr_names(src, skip_seed, &l);
    for (size_t i = 0; i < l.n && !bad; i++) {
        attrval v;
        if (attrval_load(src, l.names[i], &v)) {
            bad = 1;
            break;
        }
        if (H5Aexists(dst, l.names[i]) > 0)
            H5Adelete(dst, l.names[i]);
        hid_t a = H5Acreate2(dst, l.names[i], v.ft, v.sp, H5P_DEFAULT, H5P_DEFAULT);
        bad = a < 0 || H5Awrite(a, v.mt, v.buf) < 0;
        h5_close(a);
        attrval_free(&v);
    }
    sensim_namelist_free_(&l);
    return bad ? -1 : 0;
}

/* ---- the shards ---- */

typedef struct {
    const char *path; /* as given */
    char *rel;        /* relative to the output's directory */
    hid_t f;
    char kind[8];
    char *shared;
    int64_t index, count, first, end, total;
} shard;

typedef struct {
    sensim_namelist_ objs; /* paths (with leading '/'), groups and datasets, sorted */
    sensim_namelist_ types; /* "g" or "d" per object */
} tree;

static herr_t tree_cb(hid_t obj, const char *name, const H5O_info_t *info, void *data)
{
    (void)obj;
    tree *t = data;
    if (!strcmp(name, "."))
        return 0;
    if (info->type != H5O_TYPE_GROUP && info->type != H5O_TYPE_DATASET)
        return 0;
    char p[PATH_MAX];
    snprintf(p, sizeof p, "/%s", name);
    if (sensim_namelist_add_(&t->objs, p) || sensim_namelist_add_(&t->types, info->type == H5O_TYPE_GROUP ? "g" : "d"))
        return -1;
    return 0;
}

static void tree_free(tree *t)
{
    sensim_namelist_free_(&t->objs);
    sensim_namelist_free_(&t->types);
}

static char *read_str_attr(hid_t obj, const char *name)
{
    attrval v;
    if (H5Aexists(obj, name) <= 0 || attrval_load(obj, name, &v))
        return NULL;
    char *out = NULL;
    if (H5Tget_class(v.mt) == H5T_STRING && v.np == 1) {
        const char *s;
        size_t len;
        if (H5Tis_variable_str(v.mt) > 0) {
            s = ((char **)v.buf)[0];
            len = s ? strlen(s) : 0;
        } else {
            s = v.buf;
            len = strnlen(s, H5Tget_size(v.mt));
        }
        if (s && (out = malloc(len + 1))) {
            memcpy(out, s, len);
            out[len] = 0;
        }
    }
    attrval_free(&v);
    return out;
}

static int read_i64_attr(hid_t obj, const char *name, int64_t *out, hssize_t n)
{
    if (H5Aexists(obj, name) <= 0)
        return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t sp = a >= 0 ? H5Aget_space(a) : -1;
    hid_t t = a >= 0 ? H5Aget_type(a) : -1;
    int ok = sp >= 0 && t >= 0 && H5Tget_class(t) == H5T_INTEGER && H5Sget_simple_extent_npoints(sp) == n &&
             H5Aread(a, H5T_NATIVE_INT64, out) >= 0;
    h5_close(t);
    h5_close(sp);
    h5_close(a);
    return ok ? 0 : -1;
}

static sensim_status shard_open(shard *s)
{
    s->f = H5Fopen(s->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (s->f < 0)
        return sensim_error(SENSIM_EIO, "%s: cannot open as HDF5", s->path);
    char *kind = read_str_attr(s->f, "shard_kind");
    int64_t sh[2], rg[2];
    if (!kind || read_i64_attr(s->f, "shard", sh, 2) || read_i64_attr(s->f, "shard_range", rg, 2) ||
        read_i64_attr(s->f, "shard_total", &s->total, 1)) {
        free(kind);
        return sensim_error(SENSIM_EFORMAT,
                            "%s: not a shard (no shard_kind, shard, shard_range and shard_total attributes on /; "
                            "shards are written by --shard or --seeds)",
                            s->path);
    }
    snprintf(s->kind, sizeof s->kind, "%s", kind);
    int known = !strcmp(kind, "rows") || !strcmp(kind, "seeds");
    free(kind);
    s->index = sh[0];
    s->count = sh[1];
    s->first = rg[0];
    s->end = rg[1];
    if (!known || s->count < 1 || s->index < 0 || s->index >= s->count || s->first > s->end || s->end > s->total)
        return sensim_error(SENSIM_EFORMAT, "%s: inconsistent shard attributes (kind %s, shard %" PRId64 "/%" PRId64
                                            ", range [%" PRId64 ", %" PRId64 ") of %" PRId64 ")",
                            s->path, s->kind, s->index, s->count, s->first, s->end, s->total);
    s->shared = read_str_attr(s->f, "shard_shared");
    return SENSIM_OK;
}

static int in_shared(const char *shared, const char *path)
{
    if (!shared)
        return 0;
    const char *p = shared;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k && !strncmp(path, p, k) && (path[k] == 0 || path[k] == '/'))
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

/* A path relative to the real directory dir naming the real file file. */
static char *relpath(const char *dir, const char *file)
{
    size_t i = 0, common = 0;
    if (!strcmp(dir, "/")) {
        char *o = malloc(strlen(file));
        if (o)
            strcpy(o, file + 1);
        return o;
    }
    while (dir[i] && file[i] && dir[i] == file[i]) {
        i++;
        if (file[i] == '/' && (dir[i] == '/' || dir[i] == 0))
            common = i;
    }
    if (!dir[i] && file[i] == '/')
        common = i;
    size_t ups = 0;
    for (const char *p = dir + common; *p; p++)
        if (*p == '/')
            ups++;
    const char *rest = file + common + 1;
    char *out = malloc(3 * ups + strlen(rest) + 1);
    if (!out)
        return NULL;
    out[0] = 0;
    for (size_t k = 0; k < ups; k++)
        strcat(out, "../");
    strcat(out, rest);
    return out;
}

static int dset_shape(hid_t f, const char *path, int *rank, hsize_t dims[H5S_MAX_RANK], hid_t *type)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0)
        return -1;
    hid_t sp = H5Dget_space(d);
    *rank = H5Sget_simple_extent_ndims(sp);
    if (*rank >= 0)
        H5Sget_simple_extent_dims(sp, dims, NULL);
    if (type)
        *type = H5Dget_type(d);
    H5Sclose(sp);
    H5Dclose(d);
    return *rank < 0 ? -1 : 0;
}

static int cmp_index(const void *a, const void *b)
{
    const shard *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Every shard against the first: kind, count, total, objects, types, trailing
 * dimensions and attributes. */
static sensim_status check_together(shard *sh, size_t n, tree *t0)
{
    shard *a = &sh[0];
    int seeds = !strcmp(a->kind, "seeds");
    for (size_t i = 1; i < n; i++) {
        shard *b = &sh[i];
        if (strcmp(a->kind, b->kind) || a->count != b->count || a->total != b->total)
            return sensim_error(SENSIM_EDATA,
                                "%s: shard of another job (kind %s, %" PRId64 " shards, range ending at %" PRId64
                                "; %s has kind %s, %" PRId64 " shards, %" PRId64 ")",
                                b->path, b->kind, b->count, b->total, a->path, a->kind, a->count, a->total);
        if ((a->shared == NULL) != (b->shared == NULL) || (a->shared && strcmp(a->shared, b->shared)))
            return sensim_error(SENSIM_EDATA, "%s: shard_shared differs from %s's", b->path, a->path);
    }
    qsort(sh, n, sizeof *sh, cmp_index);
    a = &sh[0];
    for (size_t i = 1; i < n; i++)
        if (sh[i].index == sh[i - 1].index)
            return sensim_error(SENSIM_EDATA, "%s and %s are both shard %" PRId64 " of %" PRId64 " (overlapping)",
                                sh[i - 1].path, sh[i].path, sh[i].index, sh[i].count);
    for (int64_t k = 0; k < a->count; k++)
        if ((size_t)k >= n || sh[k].index != k)
            return sensim_error(SENSIM_EDATA, "shard %" PRId64 " of %" PRId64 " is missing (%zu shard%s given)", k,
                                a->count, n, n == 1 ? "" : "s");
    /* seeds: one a shard, ending at total; rows: from 0, or from the start
     * of the range asked for (render --frames A..B), which the job's total
     * and contiguity pin down with the other shards */
    int64_t start = seeds ? a->total - a->count : a->first;
    if (a->first != start)
        return sensim_error(SENSIM_EDATA, "%s: shard 0 starts at %" PRId64 ", not %" PRId64, a->path, a->first,
                            start);
    for (size_t i = 1; i < n; i++) {
        if (sh[i].first < sh[i - 1].end)
            return sensim_error(SENSIM_EDATA,
                                "%s: range [%" PRId64 ", %" PRId64 ") overlaps %s's [%" PRId64 ", %" PRId64 ")",
                                sh[i].path, sh[i].first, sh[i].end, sh[i - 1].path, sh[i - 1].first, sh[i - 1].end);
        if (sh[i].first > sh[i - 1].end)
            return sensim_error(SENSIM_EDATA, "%s: range starts at %" PRId64 " but %s ends at %" PRId64 " (a gap)",
                                sh[i].path, sh[i].first, sh[i - 1].path, sh[i - 1].end);
        if (seeds && sh[i].end - sh[i].first != 1)
            return sensim_error(SENSIM_EDATA, "%s: a seeds shard covers one seed", sh[i].path);
    }
    if (sh[n - 1].end != a->total)
        return sensim_error(SENSIM_EDATA, "%s: the last shard ends at %" PRId64 ", not %" PRId64, sh[n - 1].path,
                            sh[n - 1].end, a->total);
    for (size_t i = 0; i < n; i++) {
        shard *b = &sh[i];
        tree tb = {{0}, {0}};
        if (H5Ovisit(b->f, H5_INDEX_NAME, H5_ITER_INC, tree_cb, &tb) < 0) {
            tree_free(&tb);
            return sensim_error(SENSIM_EIO, "%s: cannot list its objects", b->path);
        }
        sensim_status st = SENSIM_OK;
        for (size_t k = 0; k < t0->objs.n && !st; k++) {
            const char *p = t0->objs.names[k];
            size_t j = 0;
            while (j < tb.objs.n && strcmp(tb.objs.names[j], p))
                j++;
            if (j == tb.objs.n || strcmp(tb.types.names[j], t0->types.names[k]))
                st = sensim_error(SENSIM_EDATA, "%s: %s is missing (present in %s)", b->path, p, sh[0].path);
        }
        for (size_t j = 0; j < tb.objs.n && !st; j++) {
            size_t k = 0;
            while (k < t0->objs.n && strcmp(tb.objs.names[j], t0->objs.names[k]))
                k++;
            if (k == t0->objs.n)
                st = sensim_error(SENSIM_EDATA, "%s: %s is not in %s (another rig?)", b->path, tb.objs.names[j],
                                  sh[0].path);
        }
        tree_free(&tb);
        if (st)
            return st;
        /* attributes of the root and every group; datasets' types and shapes */
        for (size_t k = 0; k <= t0->objs.n && !st; k++) {
            const char *p = k == t0->objs.n ? "/" : t0->objs.names[k];
            if (k < t0->objs.n && t0->types.names[k][0] == 'd') {
                int ra, rb;
                hsize_t da[H5S_MAX_RANK], db[H5S_MAX_RANK];
                hid_t ta = -1, tb2 = -1;
                if (dset_shape(sh[0].f, p, &ra, da, &ta) || dset_shape(b->f, p, &rb, db, &tb2)) {
                    st = sensim_error(SENSIM_EIO, "%s: %s: cannot read its shape", b->path, p);
                } else {
                    int same = ra == rb && H5Tequal(ta, tb2) > 0;
                    for (int r = 1; same && r < ra; r++)
                        same = da[r] == db[r];
                    const char *whole = seeds && !sh[0].shared ? "/ground_truth" : sh[0].shared;
                    if (same && ra > 0 && da[0] != db[0] && in_shared(whole, p))
                        same = 0;
                    if (!same)
                        st = sensim_error(SENSIM_EDATA, "%s: %s has another type or shape than in %s", b->path, p,
                                          sh[0].path);
                }
                h5_close(ta);
                h5_close(tb2);
                continue;
            }
            hid_t ga = H5Oopen(sh[0].f, p, H5P_DEFAULT), gb = H5Oopen(b->f, p, H5P_DEFAULT);
            sensim_namelist_ la = {0}, lb = {0};
            if (ga < 0 || gb < 0 || attr_names(ga, seeds, &la) || attr_names(gb, seeds, &lb))
                st = sensim_error(SENSIM_EIO, "%s: %s: cannot read its attributes", b->path, p);
            for (size_t j = 0; j < la.n && !st; j++) {
                attrval va, vb;
                /* the command line that made each shard names its part */
                if (k == t0->objs.n && !strcmp(la.names[j], "created_by") && H5Aexists(gb, la.names[j]) > 0)
                    continue;
                if (H5Aexists(gb, la.names[j]) <= 0) {
                    st = sensim_error(SENSIM_EDATA, "%s: %s has no attribute '%s' (%s has)", b->path, p,
                                      la.names[j], sh[0].path);
                    break;
                }
                if (attrval_load(ga, la.names[j], &va)) {
                    st = sensim_error(SENSIM_EIO, "%s: %s: cannot read attribute '%s'", sh[0].path, p, la.names[j]);
                    break;
                }
                if (attrval_load(gb, la.names[j], &vb)) {
                    attrval_free(&va);
                    st = sensim_error(SENSIM_EIO, "%s: %s: cannot read attribute '%s'", b->path, p, la.names[j]);
                    break;
                }
                if (!attrval_equal(&va, &vb))
                    st = sensim_error(SENSIM_EDATA,
                                      "%s: attribute '%s' of %s differs from %s's (another rig, model or seed?)",
                                      b->path, la.names[j], p, sh[0].path);
                attrval_free(&va);
                attrval_free(&vb);
            }
            if (!st && lb.n != la.n)
                st = sensim_error(SENSIM_EDATA, "%s: %s has %zu attributes, %s has %zu (another rig?)", b->path, p,
                                  lb.n, sh[0].path, la.n);
            sensim_namelist_free_(&la);
            sensim_namelist_free_(&lb);
            h5_close(ga);
            h5_close(gb);
        }
        if (st)
            return st;
    }
    return SENSIM_OK;
}

/* ---- writing ---- */

static hid_t lcpl_parents(void)
{
    hid_t l = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(l, 1);
    return l;
}

static int make_group(hid_t out, const char *path, hid_t src, int skip_seed)
{
    hid_t g;
    if (H5Lexists(out, path, H5P_DEFAULT) > 0) {
        g = H5Gopen2(out, path, H5P_DEFAULT);
    } else {
        hid_t l = lcpl_parents();
        g = H5Gcreate2(out, path, l, H5P_DEFAULT, H5P_DEFAULT);
        H5Pclose(l);
    }
    if (g < 0)
        return -1;
    int bad = copy_attrs(g, src, skip_seed);
    H5Gclose(g);
    return bad;
}

/* One virtual dataset at out_path over `m` sources: source k is dataset
 * src_path of shard sh[k] (all rows), stacked along axis 0 in order. */
static sensim_status make_vds(hid_t out, const char *out_path, shard *const *sh, size_t m, const char *src_path)
{
    int rank = 0;
    hsize_t dims[H5S_MAX_RANK], total = 0;
    hid_t type = -1;
    hsize_t rows[1024];
    hsize_t *r = m <= 1024 ? rows : malloc(m * sizeof *r);
    if (!r)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    for (size_t k = 0; k < m; k++) {
        int rk;
        hsize_t dk[H5S_MAX_RANK];
        if (dset_shape(sh[k]->f, src_path, &rk, dk, k ? NULL : &type)) {
            if (r != rows)
                free(r);
            return sensim_error(SENSIM_EIO, "%s: %s: cannot read its shape", sh[k]->path, src_path);
        }
        if (!k)
            memcpy(dims, dk, sizeof dims), rank = rk;
        r[k] = rk ? dk[0] : 1;
        total += r[k];
    }
    sensim_status st = SENSIM_OK;
    hid_t src = H5Dopen2(sh[0]->f, src_path, H5P_DEFAULT);
    if (rank == 0) {
        /* a scalar: copied from the first shard */
        hid_t l = lcpl_parents();
        if (H5Ocopy(sh[0]->f, src_path, out, out_path, H5P_DEFAULT, l) < 0)
            st = sensim_error(SENSIM_EIO, "%s: %s: cannot copy", sh[0]->path, src_path);
        H5Pclose(l);
    } else {
        dims[0] = total;
        hid_t vs = H5Screate_simple(rank, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
        /* HDF5 reads a source it cannot find as the fill value: NaN makes a
         * shard left behind show, where 0 would pass for data. */
        if (H5Tget_class(type) == H5T_FLOAT) {
            const double nan = NAN;
            H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &nan);
        }
        hsize_t off = 0;
        for (size_t k = 0; k < m && !st; k++) {
            if (!r[k])
                continue;
            hsize_t start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
            memcpy(count, dims, sizeof count);
            start[0] = off;
            count[0] = r[k];
            hid_t ss = H5Screate_simple(rank, count, NULL);
            if (H5Sselect_hyperslab(vs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
                H5Pset_virtual(dcpl, vs, sh[k]->rel, src_path, ss) < 0)
                st = sensim_error(SENSIM_EINTERNAL, "%s: %s: cannot map it into a virtual dataset", sh[k]->path,
                                  src_path);
            H5Sclose(ss);
            off += r[k];
        }
        H5Sselect_all(vs);
        if (!st) {
            hid_t l = lcpl_parents();
            hid_t d = H5Dcreate2(out, out_path, type, vs, l, dcpl, H5P_DEFAULT);
            H5Pclose(l);
            if (d < 0 || (src >= 0 && copy_attrs(d, src, 0)))
                st = sensim_error(SENSIM_EIO, "%s: cannot create virtual dataset %s", sh[0]->path, out_path);
            h5_close(d);
        }
        H5Pclose(dcpl);
        H5Sclose(vs);
    }
    h5_close(src);
    H5Tclose(type);
    if (r != rows)
        free(r);
    return st;
}

/* Lidar scan_offset (u64[S+1], cumulative): each shard's starts at 0; the
 * stitched one continues each from the points before it. */
static sensim_status make_scan_offset(hid_t out, const char *path, shard *sh, size_t n)
{
    size_t cap = 1, len = 1;
    uint64_t *all = malloc(sizeof *all), base = 0;
    if (!all)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    all[0] = 0;
    sensim_status st = SENSIM_OK;
    for (size_t k = 0; k < n && !st; k++) {
        int rank;
        hsize_t dims[H5S_MAX_RANK];
        if (dset_shape(sh[k].f, path, &rank, dims, NULL) || rank != 1 || dims[0] < 1) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s: not a vector of at least one offset", sh[k].path, path);
            break;
        }
        uint64_t *v = malloc(dims[0] * sizeof *v);
        hid_t d = H5Dopen2(sh[k].f, path, H5P_DEFAULT);
        if (!v || d < 0 || H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
            st = sensim_error(SENSIM_EIO, "%s: %s: cannot read", sh[k].path, path);
        else if (v[0] != 0)
            st = sensim_error(SENSIM_EDATA, "%s: %s: a shard's offsets start at 0, this one at %" PRIu64, sh[k].path,
                              path, v[0]);
        h5_close(d);
        if (!st && len + dims[0] - 1 > cap) {
            cap = 2 * (len + dims[0]);
            uint64_t *p = realloc(all, cap * sizeof *p);
            if (!p)
                st = sensim_error(SENSIM_ENOMEM, "out of memory");
            else
                all = p;
        }
        for (hsize_t i = 1; !st && i < dims[0]; i++)
            all[len++] = base + v[i];
        if (!st)
            base += v[dims[0] - 1];
        free(v);
    }
    if (!st) {
        hsize_t dl = len;
        hid_t sp = H5Screate_simple(1, &dl, NULL), l = lcpl_parents();
        hid_t d = H5Dcreate2(out, path, H5T_STD_U64LE, sp, l, H5P_DEFAULT, H5P_DEFAULT);
        hid_t src = H5Dopen2(sh[0].f, path, H5P_DEFAULT);
        if (d < 0 || H5Dwrite(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) < 0 ||
            (src >= 0 && copy_attrs(d, src, 0)))
            st = sensim_error(SENSIM_EIO, "cannot write %s", path);
        h5_close(src);
        h5_close(d);
        H5Pclose(l);
        H5Sclose(sp);
    }
    free(all);
    return st;
}

/* Each group's t becomes the dimension scale of the datasets beside it with
 * as many rows (as sensim_log_commit does). */
static sensim_status write_rows(hid_t out, shard *sh, size_t n, tree *t0)
{
    shard **ptr = malloc(n * sizeof *ptr);
    if (!ptr)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    for (size_t k = 0; k < n; k++)
        ptr[k] = &sh[k];
    sensim_status st = SENSIM_OK;
    for (size_t k = 0; k < t0->objs.n && !st; k++) {
        const char *p = t0->objs.names[k];
        if (t0->types.names[k][0] == 'g') {
            hid_t g = H5Gopen2(sh[0].f, p, H5P_DEFAULT);
            if (g < 0 || make_group(out, p, g, 0))
                st = sensim_error(SENSIM_EIO, "cannot write group %s", p);
            h5_close(g);
        } else if (in_shared(sh[0].shared, p)) {
            st = make_vds(out, p, ptr, 1, p);
        } else {
            size_t L = strlen(p);
            if (L >= 12 && !strcmp(p + L - 12, "/scan_offset"))
                st = make_scan_offset(out, p, sh, n);
            else
                st = make_vds(out, p, ptr, n, p);
        }
    }
    free(ptr);
    return st;
}

static sensim_status write_seeds(hid_t out, shard *sh, size_t n, tree *t0)
{
    const char *shared = sh[0].shared ? sh[0].shared : "/ground_truth";
    sensim_status st = SENSIM_OK;
    for (size_t s = 0; s < n && !st; s++) {
        shard *ps = &sh[s];
        char prefix[64];
        snprintf(prefix, sizeof prefix, "/seeds/%" PRId64, sh[s].first);
        if (make_group(out, prefix, sh[s].f, 1)) {
            st = sensim_error(SENSIM_EIO, "cannot write group %s", prefix);
            break;
        }
        int64_t seed = sh[s].first;
        hid_t g = H5Gopen2(out, prefix, H5P_DEFAULT);
        if (g < 0 || set_i64(g, "seed", &seed, 1))
            st = sensim_error(SENSIM_EIO, "cannot write %s's seed", prefix);
        h5_close(g);
        for (size_t k = 0; k < t0->objs.n && !st; k++) {
            const char *p = t0->objs.names[k];
            int sharedp = in_shared(shared, p);
            if (sharedp && s > 0)
                continue;
            char q[PATH_MAX];
            snprintf(q, sizeof q, "%s%s", sharedp ? "" : prefix, p);
            if (t0->types.names[k][0] == 'g') {
                hid_t src = H5Gopen2(sh[s].f, p, H5P_DEFAULT);
                if (src < 0 || make_group(out, q, src, 0))
                    st = sensim_error(SENSIM_EIO, "cannot write group %s", q);
                h5_close(src);
            } else {
                st = make_vds(out, q, &ps, 1, p);
            }
        }
    }
    if (!st) {
        int64_t r[2] = {sh[0].first, sh[n - 1].end};
        if (set_i64(out, "seeds", r, 2))
            st = sensim_error(SENSIM_EIO, "cannot write the seeds attribute");
    }
    return st;
}

sensim_status sensim_stitch(const char *out_path, const char *const *paths, size_t n, const char *created_by)
{
    H5_QUIET_SCOPE();
    if (!n)
        return sensim_error(SENSIM_EINVAL, "no shards to stitch");
    shard *sh = calloc(n, sizeof *sh);
    if (!sh)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        sh[i].f = -1;
    sensim_status st = SENSIM_OK;
    tree t0 = {{0}, {0}};
    sensim_afile *af = NULL;
    hid_t out = -1;
    /* the output's real directory, for relative source names */
    char *dir = NULL;
    {
        char d[PATH_MAX];
        sensim_path_dir_(out_path, d, sizeof d);
        if (!(dir = realpath(d, NULL))) {
            st = sensim_error(SENSIM_EIO, "%s: directory %s: %s", out_path, d, strerror(errno));
            goto done;
        }
    }
    for (size_t i = 0; i < n && !st; i++) {
        sh[i].path = paths[i];
        if ((st = sensim_afile_check_distinct(out_path, paths[i])))
            break;
        char *real = realpath(paths[i], NULL);
        if (!real) {
            st = sensim_error(SENSIM_EIO, "%s: %s", paths[i], strerror(errno));
            break;
        }
        sh[i].rel = relpath(dir, real);
        free(real);
        if (!sh[i].rel) {
            st = sensim_error(SENSIM_ENOMEM, "out of memory");
            break;
        }
        st = shard_open(&sh[i]);
    }
    if (st)
        goto done;
    if (H5Ovisit(sh[0].f, H5_INDEX_NAME, H5_ITER_INC, tree_cb, &t0) < 0) {
        st = sensim_error(SENSIM_EIO, "%s: cannot list its objects", sh[0].path);
        goto done;
    }
    if ((st = check_together(sh, n, &t0)))
        goto done;
    if (!(af = sensim_afile_open(out_path))) {
        st = sensim_last_status();
        goto done;
    }
    out = H5Fcreate(sensim_afile_tmp_path(af), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (out < 0) {
        st = sensim_error(SENSIM_EIO, "%s: cannot create", out_path);
        goto done;
    }
    int seeds = !strcmp(sh[0].kind, "seeds");
    int64_t cnt = (int64_t)n;
    if (copy_attrs(out, sh[0].f, seeds) || set_i64(out, "stitched_shards", &cnt, 1) ||
        (created_by && set_str(out, "created_by", created_by))) {
        st = sensim_error(SENSIM_EIO, "%s: cannot write the root attributes", out_path);
        goto done;
    }
    if ((st = seeds ? write_seeds(out, sh, n, &t0) : write_rows(out, sh, n, &t0)))
        goto done;
    if (sensim_log_attach_scales_(out)) {
        st = sensim_error(SENSIM_EIO, "%s: cannot attach dimension scales", out_path);
        goto done;
    }
    herr_t ce = H5Fclose(out);
    out = -1;
    if (ce < 0) {
        st = sensim_error(SENSIM_EIO, "%s: cannot close (disk full?)", out_path);
        goto done;
    }
    st = sensim_afile_commit(af);
    af = NULL;
done:
    h5_close(out);
    if (af)
        sensim_afile_abort(af);
    tree_free(&t0);
    for (size_t i = 0; i < n; i++) {
        h5_close(sh[i].f);
        free(sh[i].rel);
        free(sh[i].shared);
    }
    free(sh);
    free(dir);
    return st;
}
