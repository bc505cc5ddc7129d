/* HDF5 logs in the layout of DESIGN.md (see sensim/log.h).
 *
 * HDF5's automatic error printing is turned off: every failure is turned into
 * a sensim message naming the file and the dataset. Writers work on a
 * temporary file beside the target and rename on commit. */
#include "sensim/log.h"

#include "sensim/afile.h"
#include "sensim/guard.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sensim/units.h"
#include "base_internal.h"
#include "log_internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

struct sensim_log {
    hid_t file;
    char *path;     /* the target path as given */
    char *tmp_path; /* writers: the temporary file; NULL for readers */
    int tmp_slot;   /* writers: its slot in the table of live temporaries */
    void (*on_gt_read)(void *ctx, size_t rows_done, size_t rows); /* progress; NULL: none */
    void *on_gt_read_ctx;
};

void sensim_log_on_gt_read(sensim_log *log, void (*fn)(void *ctx, size_t rows_done, size_t rows), void *ctx)
{
    log->on_gt_read = fn;
    log->on_gt_read_ctx = ctx;
}

void sensim_log_report_gt_read(const sensim_log *log, size_t rows_done)
{
    if (!log->on_gt_read)
        return;
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK];
    if (!sensim_log_shape(log, "/ground_truth/t", &rank, dims))
        log->on_gt_read(log->on_gt_read_ctx, rows_done, dims[0]);
}

struct sensim_log_dset {
    sensim_log *log;
    hid_t dset;
    sensim_dtype type;
    int rank;
    hsize_t dims[SENSIM_LOG_MAX_RANK];
    size_t row_elems;
    char *name;
};


size_t sensim_dtype_size(sensim_dtype t)
{
    switch (t) {
    case SENSIM_F64: return 8;
    case SENSIM_F32: return 4;
    case SENSIM_U8: return 1;
    case SENSIM_U16: return 2;
    case SENSIM_U64: return 8;
    case SENSIM_I8: return 1;
    case SENSIM_U32: return 4;
    }
    return 0;
}

static hid_t native_type(sensim_dtype t)
{
    switch (t) {
    case SENSIM_F64: return H5T_NATIVE_DOUBLE;
    case SENSIM_F32: return H5T_NATIVE_FLOAT;
    case SENSIM_U8: return H5T_NATIVE_UINT8;
    case SENSIM_U16: return H5T_NATIVE_UINT16;
    case SENSIM_U64: return H5T_NATIVE_UINT64;
    case SENSIM_I8: return H5T_NATIVE_INT8;
    case SENSIM_U32: return H5T_NATIVE_UINT32;
    }
    return H5T_NATIVE_DOUBLE;
}

/* File storage types: little-endian, as h5py and MATLAB expect. */
static hid_t file_type(sensim_dtype t)
{
    switch (t) {
    case SENSIM_F64: return H5T_IEEE_F64LE;
    case SENSIM_F32: return H5T_IEEE_F32LE;
    case SENSIM_U8: return H5T_STD_U8LE;
    case SENSIM_U16: return H5T_STD_U16LE;
    case SENSIM_U64: return H5T_STD_U64LE;
    case SENSIM_I8: return H5T_STD_I8LE;
    case SENSIM_U32: return H5T_STD_U32LE;
    }
    return H5T_IEEE_F64LE;
}

const char *sensim_log_path(const sensim_log *log) { return log->path; }

sensim_log *sensim_log_open(const char *path)
{
    H5_QUIET_SCOPE();
    /* A regular file this process may read: a FIFO would block HDF5's
     * open, and an unreadable file is not "not an HDF5 file" (EACCES). */
    if (sensim_input_check(path, 0))
        return NULL;
    if (H5Fis_hdf5(path) <= 0) {
        sensim_error(SENSIM_EFORMAT, "%s: not an HDF5 file", path);
        return NULL;
    }
    sensim_log *log = calloc(1, sizeof *log);
    if (!log || !(log->path = strdup(path))) {
        free(log);
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    log->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (log->file < 0) {
        sensim_error(SENSIM_EIO, "%s: HDF5 cannot open the file", path);
        free(log->path);
        free(log);
        return NULL;
    }
    return log;
}

/* Empties a writer's temporary file (its content is being thrown away). */
static void discard_tmp(sensim_log *log)
{
    if (truncate(log->tmp_path, 0) != 0) {
        /* Nothing better to do: the file is unlinked next either way. */
    }
}

void sensim_log_close(sensim_log *log)
{
    H5_QUIET_SCOPE();
    if (!log)
        return;
    /* An uncommitted writer's file is discarded. Empty it first: after a
     * failed write (a full disk) HDF5's closing flush would fail too, and a
     * file HDF5 failed to close crashes its exit handler (H5F__close_cb in
     * H5_term_library, HDF5 1.10). Truncated, the flush finds room for the
     * little metadata it writes and the close completes. */
    if (log->tmp_path && log->file >= 0)
        discard_tmp(log);
    if (log->file >= 0)
        H5Fclose(log->file);
    if (log->tmp_path) {
        unlink(log->tmp_path);
        sensim_tmp_unregister(log->tmp_slot);
    }
    free(log->tmp_path);
    free(log->path);
    free(log);
}

int sensim_log_exists(const sensim_log *log, const char *obj)
{
    H5_QUIET_SCOPE();
    if (!strcmp(obj, "/"))
        return 1;
    /* Check each path component: H5Lexists fails on a missing parent. */
    char buf[1024];
    size_t n = strlen(obj);
    if (n >= sizeof buf || obj[0] != '/')
        return 0;
    memcpy(buf, obj, n + 1);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (H5Lexists(log->file, buf, H5P_DEFAULT) <= 0)
                return 0;
            if (c == '\0')
                break;
            *p = c;
        }
    }
    return H5Oexists_by_name(log->file, obj, H5P_DEFAULT) > 0;
}

/* An existing dataset (dataset: H5Dopen2) or any object (H5Oopen) of the
 * log; -1 with the error set. */
static hid_t open_named(const sensim_log *log, const char *name, int dataset)
{
    if (!sensim_log_exists(log, name)) {
        sensim_error(SENSIM_ENOTFOUND, "%s: %s%s is missing", log->path, dataset ? "dataset " : "", name);
        return -1;
    }
    hid_t h = dataset ? H5Dopen2(log->file, name, H5P_DEFAULT) : H5Oopen(log->file, name, H5P_DEFAULT);
    if (h < 0)
        sensim_error(SENSIM_EFORMAT, dataset ? "%s: %s is not a dataset" : "%s: cannot open %s", log->path, name);
    return h;
}

static hid_t open_dset(const sensim_log *log, const char *dset) { return open_named(log, dset, 1); }

static sensim_status get_dims(const sensim_log *log, hid_t d, const char *name, int *rank, hsize_t *dims)
{
    hid_t sp = H5Dget_space(d);
    int r = H5Sget_simple_extent_ndims(sp);
    if (r < 0 || r > SENSIM_LOG_MAX_RANK) {
        H5Sclose(sp);
        return sensim_error(SENSIM_EFORMAT, "%s: %s: rank %d not supported (at most %d)", log->path, name, r,
                            SENSIM_LOG_MAX_RANK);
    }
    H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
    *rank = r;
    return SENSIM_OK;
}

sensim_status sensim_log_shape(const sensim_log *log, const char *dset, int *rank, size_t dims[SENSIM_LOG_MAX_RANK])
{
    H5_QUIET_SCOPE();
    hid_t d = open_dset(log, dset);
    if (d < 0)
        return sensim_last_status();
    hsize_t hd[SENSIM_LOG_MAX_RANK] = {0};
    sensim_status st = get_dims(log, d, dset, rank, hd);
    /* A declared extent far beyond what the file stores (unwritten chunks
     * read as fill values) would have readers walk, and writers copy,
     * terabytes of nothing: refused. Compression of constant data reaches
     * about 1000:1 (deflate's bound is 1032:1), hence the factor. */
    if (!st) {
        hid_t t = H5Dget_type(d);
        double bytes = t < 0 ? 0 : (double)H5Tget_size(t);
        if (t >= 0)
            H5Tclose(t);
        for (int i = 0; i < *rank; i++)
            bytes *= (double)hd[i];
        double stored = (double)H5Dget_storage_size(d);
        if (bytes > 2048.0 * stored + 1048576.0)
            st = sensim_error(SENSIM_EFORMAT,
                              "%s: %s: declares %llu rows (%.3g bytes) but the file stores %.0f bytes of it: "
                              "damaged, or an extent never written",
                              log->path, dset, (unsigned long long)hd[0], bytes, stored);
    }
    H5Dclose(d);
    for (int i = 0; i < SENSIM_LOG_MAX_RANK; i++)
        dims[i] = (size_t)hd[i];
    return st;
}

sensim_status sensim_log_dtype(const sensim_log *log, const char *dset, sensim_dtype *type)
{
    H5_QUIET_SCOPE();
    hid_t d = open_dset(log, dset);
    if (d < 0)
        return sensim_last_status();
    hid_t t = H5Dget_type(d);
    H5T_class_t c = H5Tget_class(t);
    size_t sz = H5Tget_size(t);
    sensim_status st = SENSIM_OK;
    if (c == H5T_FLOAT)
        *type = sz <= 4 ? SENSIM_F32 : SENSIM_F64;
    else if (c == H5T_INTEGER) {
        int sgn = H5Tget_sign(t) == H5T_SGN_2;
        if (sz == 1)
            *type = sgn ? SENSIM_I8 : SENSIM_U8;
        else if (sz == 2 && !sgn)
            *type = SENSIM_U16;
        else if (sz == 4 && !sgn)
            *type = SENSIM_U32;
        else if (sz == 8 && !sgn)
            *type = SENSIM_U64;
        else
            *type = SENSIM_F64; /* other integers are read converted */
    } else
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: not a numeric dataset", log->path, dset);
    H5Tclose(t);
    H5Dclose(d);
    return st;
}

/* ---- units: a dataset's `units` attribute converted to the layout's unit ---- */

/* The unit DESIGN.md gives each dataset of the layout, by group and name:
 * one unit, or one per column ("deg,deg,m"); "*" converts whatever unit is
 * written to the SI unit of its own dimension (an encoder counts radians or
 * metres). Datasets not listed here (images, extra per-point fields) are
 * read as stored. */
static const struct {
    const char *group, *name, *units;
} layout_units[] = {
    {"/ground_truth", "t", "s"},
    {"/ground_truth", "position", "m"},
    {"/ground_truth", "orientation", "1"},
    {"/ground_truth", "velocity", "m/s"},
    {"/ground_truth", "angular_velocity", "rad/s"},
    {"/ground_truth", "acceleration", "m/s^2"},
    {"/sensors", "t", "s"},
    {"/sensors", "t_sample", "s"},
    {"/sensors", "t_sensor", "s"},
    {"/sensors", "angular_velocity", "rad/s"},
    {"/sensors", "specific_force", "m/s^2"},
    {"/sensors", "magnetic_field", "T"},
    {"/sensors", "lla", "deg,deg,m"},
    {"/sensors", "enu", "m"},
    {"/sensors", "velocity", "m/s"},
    {"/sensors", "hdop", "1"},
    {"/sensors", "position_covariance", "m^2"},
    {"/sensors", "distance", "m"},
    {"/sensors", "position", "*"},
    {"/sensors", "speed", "*"},
    {"/sensors", "points", "m,m,m,1"},
    {"/sensors", "range", "m"},
    {"/sensors", "azimuth", "rad"},
    {"/sensors", "elevation", "rad"},
    {"/sensors", "time_offset", "s"},
    {"/estimates", "t", "s"},
    {"/estimates", "velocity", "m/s"},
    {"/estimates", "speed", "m/s"},
    {"/estimates", "position", "m"},
    {"/estimates", "yaw", "rad"},
};

#define UNITS_MAX_COLS 16

const char *sensim_log_layout_units(const char *dset)
{
    for (size_t i = 0; i < sizeof layout_units / sizeof layout_units[0]; i++) {
        size_t g = strlen(layout_units[i].group);
        if (strncmp(dset, layout_units[i].group, g) || dset[g] != '/')
            continue;
        const char *rest = dset + g + 1, *base = rest;
        if (strcmp(layout_units[i].group, "/ground_truth")) {
            /* /sensors/<name>/<dataset>: exactly one level in between. */
            const char *slash = strchr(rest, '/');
            if (!slash || slash == rest)
                continue;
            base = slash + 1;
        }
        if (!strcmp(base, layout_units[i].name))
            return layout_units[i].units;
    }
    return NULL;
}

/* Spellings of "no unit" that h5py users and sensim itself write. */
static int is_unitless(const char *u)
{
    static const char *const none[] = {"", "1", "-", "none", "unitless", "dimensionless", "[]"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (!strcmp(u, none[i]))
            return 1;
    return 0;
}

/* Splits "a, b, c" at commas into trimmed copies in out[] (each < 64 chars);
 * returns the count, or -1 when there are more than max or one is too long. */
static int split_units(const char *s, char out[][64], int max)
{
    int n = 0;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        while (len && isspace((unsigned char)*s)) {
            s++;
            len--;
        }
        while (len && isspace((unsigned char)s[len - 1]))
            len--;
        if (n == max || len >= 64)
            return -1;
        memcpy(out[n], s, len);
        out[n++][len] = '\0';
        if (!e)
            return n;
        s = e + 1;
    }
}

static sensim_status unit_of(const sensim_log *log, const char *dset, const char *attr, const char *u, double *scale,
                             sensim_dim *dim)
{
    if (is_unitless(u)) {
        *scale = 1.0;
        *dim = SENSIM_DIM_NONE;
        return SENSIM_OK;
    }
    if (sensim_units_unit(u, scale, dim)) {
        char why[256];
        snprintf(why, sizeof why, "%s", sensim_last_error());
        return sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: unknown unit '%s' in its units attribute '%s' (%s)",
                            log->path, dset, u, attr, why);
    }
    return SENSIM_OK;
}

/* The factors that bring each column of dset (ncols columns in its last
 * dimension, 1 for a vector) into the layout's unit; *any = 0 when every
 * factor is 1. */
static sensim_status units_factors(const sensim_log *log, hid_t d, const char *dset, size_t ncols, double *factor,
                                   int *any)
{
    *any = 0;
    const char *want = sensim_log_layout_units(dset);
    if (!want || H5Aexists(d, "units") <= 0)
        return SENSIM_OK;
    char *attr = NULL;
    sensim_status st = sensim_log_get_attr_string(log, dset, "units", &attr);
    if (st)
        return st;
    char have[UNITS_MAX_COLS][64], need[UNITS_MAX_COLS][64];
    int nh = split_units(attr, have, UNITS_MAX_COLS), nw = strcmp(want, "*") ? split_units(want, need, UNITS_MAX_COLS) : 1;
    size_t cols = ncols > UNITS_MAX_COLS ? 1 : ncols;
    if (nh < 1 || (nh > 1 && (size_t)nh != cols)) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: units attribute '%s' names %d units for %zu columns", log->path, dset,
                          attr, nh, ncols);
        goto done;
    }
    for (size_t c = 0; c < cols; c++) {
        const char *h = have[nh == 1 ? 0 : c];
        double hs, ws = 1.0;
        sensim_dim hd, wd;
        if ((st = unit_of(log, dset, attr, h, &hs, &hd)))
            goto done;
        if (!strcmp(want, "*")) {
            factor[c] = hs;
        } else {
            const char *w = need[nw == 1 ? 0 : (c < (size_t)nw ? c : (size_t)nw - 1)];
            if (unit_of(log, dset, want, w, &ws, &wd)) {
                st = sensim_error(SENSIM_EINTERNAL, "%s: layout unit '%s' of %s does not parse", log->path, w, dset);
                goto done;
            }
            if (!sensim_dim_equal(hd, wd)) {
                /* One unit for several columns applies to the columns of its
                 * dimension ("m" on points: x, y, z, not the intensity). */
                if (nh == 1 && nw > 1) {
                    factor[c] = 1.0;
                    continue;
                }
                char a[64], b[64];
                st = sensim_error(SENSIM_EDATA, "%s: %s: units attribute '%s' is %s, but %s holds %s (%s)", log->path,
                                  dset, attr, sensim_dim_format(hd, a, sizeof a), dset, w,
                                  sensim_dim_format(wd, b, sizeof b));
                goto done;
            }
            factor[c] = hs / ws;
        }
        if (factor[c] != 1.0)
            *any = 1;
    }
    for (size_t c = cols; c < ncols && c < UNITS_MAX_COLS; c++)
        factor[c] = factor[0];
done:
    free(attr);
    return st;
}

sensim_status sensim_log_units_factors(const sensim_log *log, const char *dset, size_t ncols, double *factor)
{
    H5_QUIET_SCOPE();
    hid_t d = open_dset(log, dset);
    if (d < 0)
        return sensim_last_status();
    int any;
    for (size_t c = 0; c < ncols; c++)
        factor[c] = 1.0;
    sensim_status st = units_factors(log, d, dset, ncols, factor, &any);
    H5Dclose(d);
    return st;
}

static sensim_status read_rows(const sensim_log *log, const char *dset, sensim_dtype type, size_t row0, size_t nrows,
                               void *buf, int convert)
{
    H5_QUIET_SCOPE();
    hid_t d = open_dset(log, dset);
    if (d < 0)
        return sensim_last_status();
    int rank;
    hsize_t dims[SENSIM_LOG_MAX_RANK] = {0};
    sensim_status st = get_dims(log, d, dset, &rank, dims);
    if (st) {
        H5Dclose(d);
        return st;
    }
    if (rank == 0) {
        H5Dclose(d);
        return sensim_error(SENSIM_EFORMAT, "%s: %s: expected an array, found a scalar", log->path, dset);
    }
    if (row0 + nrows > dims[0]) {
        H5Dclose(d);
        return sensim_error(SENSIM_EFORMAT, "%s: %s: rows %zu..%zu requested, dataset has %llu", log->path, dset,
                            row0, row0 + nrows, (unsigned long long)dims[0]);
    }
    if (nrows == 0) {
        H5Dclose(d);
        return SENSIM_OK;
    }
    hsize_t start[SENSIM_LOG_MAX_RANK] = {0}, count[SENSIM_LOG_MAX_RANK];
    for (int i = 0; i < rank; i++)
        count[i] = dims[i];
    start[0] = row0;
    count[0] = nrows;
    hid_t fs = H5Dget_space(d);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(rank, count, NULL);
    herr_t e = H5Dread(d, native_type(type), ms, fs, H5P_DEFAULT, buf);
    H5Sclose(ms);
    H5Sclose(fs);
    if (e < 0) {
        H5Dclose(d);
        return sensim_error(SENSIM_EFORMAT, "%s: %s: cannot read rows %zu..%zu as numbers", log->path, dset, row0,
                            row0 + nrows);
    }
    /* Floating-point reads come in the layout's units; integer reads
     * (counts, offsets, pixel values) are never scaled. */
    if (convert && (type == SENSIM_F64 || type == SENSIM_F32)) {
        size_t ncols = rank == 2 ? (size_t)dims[1] : 1, total = nrows;
        for (int i = 1; i < rank; i++)
            total *= (size_t)dims[i];
        double f[UNITS_MAX_COLS];
        int any = 0;
        sensim_status us = units_factors(log, d, dset, ncols, f, &any);
        if (us) {
            H5Dclose(d);
            return us;
        }
        if (any) {
            size_t nc = ncols > UNITS_MAX_COLS ? 1 : ncols;
            if (type == SENSIM_F64)
                for (size_t k = 0; k < total; k++)
                    ((double *)buf)[k] *= f[k % nc];
            else
                for (size_t k = 0; k < total; k++)
                    ((float *)buf)[k] = (float)(((float *)buf)[k] * f[k % nc]);
        }
    }
    H5Dclose(d);
    return SENSIM_OK;
}

sensim_status sensim_log_read(const sensim_log *log, const char *dset, sensim_dtype type, size_t row0, size_t nrows,
                              void *buf)
{
    H5_QUIET_SCOPE();
    return read_rows(log, dset, type, row0, nrows, buf, 1);
}

sensim_status sensim_log_read_raw(const sensim_log *log, const char *dset, sensim_dtype type, size_t row0,
                                  size_t nrows, void *buf)
{
    H5_QUIET_SCOPE();
    return read_rows(log, dset, type, row0, nrows, buf, 0);
}

sensim_status sensim_log_read_f64(const sensim_log *log, const char *dset, size_t row0, size_t nrows, double *buf)
{
    H5_QUIET_SCOPE();
    return sensim_log_read(log, dset, SENSIM_F64, row0, nrows, buf);
}

#define LOG_EXTENTS_MAX_CHUNKS 128

sensim_status sensim_log_extents(const sensim_log *log, const char *dset, sensim_log_extent **ext, size_t *next,
                                 int *swap, double *factor, size_t ncols)
{
    H5_QUIET_SCOPE();
    *ext = NULL;
    *next = 0;
    hid_t d = open_dset(log, dset);
    if (d < 0)
        return sensim_last_status();
    hid_t type = H5Dget_type(d), dcpl = H5Dget_create_plist(d), fcpl = H5Fget_create_plist(log->file);
    int rank;
    hsize_t dims[SENSIM_LOG_MAX_RANK] = {0}, cdims[SENSIM_LOG_MAX_RANK] = {0}, ub = 1;
    sensim_status st = get_dims(log, d, dset, &rank, dims);
    size_t cols = 1;
    for (int i = 1; !st && i < rank; i++)
        cols *= (size_t)dims[i];
    /* Plain doubles of either byte order, in the file itself (no user
     * block, external files or filters), as the units say (one factor per
     * column). */
    const uint16_t probe = 1;
    const int host_le = *(const unsigned char *)&probe == 1;
    int le = type >= 0 && H5Tequal(type, H5T_IEEE_F64LE) > 0, be = type >= 0 && !le && H5Tequal(type, H5T_IEEE_F64BE) > 0;
    int native = host_le ? le : be, other = host_le ? be : le;
    if (!st && (rank < 1 || cols != ncols || ncols > UNITS_MAX_COLS || (!native && !other) || dcpl < 0 ||
                fcpl < 0 || H5Pget_userblock(fcpl, &ub) < 0 || ub != 0 || H5Pget_nfilters(dcpl) != 0 ||
                H5Pget_external_count(dcpl) != 0))
        st = sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: not stored as plain doubles", log->path, dset);
    int any = 0;
    if (!st && !(st = units_factors(log, d, dset, ncols, factor, &any)) && !any)
        for (size_t c = 0; c < ncols; c++)
            factor[c] = 1;
    *swap = other;
    const size_t n = (size_t)dims[0], rowb = ncols * sizeof(double);
    H5D_layout_t lay = st ? H5D_LAYOUT_ERROR : H5Pget_layout(dcpl);
    if (!st && lay == H5D_CONTIGUOUS) {
        haddr_t a = H5Dget_offset(d);
        if (n && a == HADDR_UNDEF)
            st = sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: no storage", log->path, dset);
        else if (n && !(*ext = malloc(sizeof **ext)))
            st = sensim_error(SENSIM_ENOMEM, "%s: out of memory", log->path);
        else if (n) {
            (*ext)[0] = (sensim_log_extent){0, n, (uint64_t)a};
            *next = 1;
        }
    } else if (!st && lay == H5D_CHUNKED && H5Pget_chunk(dcpl, rank, cdims) == rank) {
        /* Chunks of whole rows, every one allocated at its full size. */
        const size_t crow = (size_t)cdims[0], nch = crow ? (n + crow - 1) / crow : 0;
        for (int i = 1; i < rank; i++)
            if (cdims[i] != dims[i])
                st = sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: chunks split the rows", log->path, dset);
        if (!st && !crow)
            st = sensim_error(SENSIM_EFORMAT, "%s: %s: empty chunks", log->path, dset);
        /* HDF5 1.10 finds chunk k by walking the index from its start, so
         * n chunks cost n^2 / 2 steps (about 0.3 us n^2: 0.9 s for 1700):
         * beyond a few small ones, reading through HDF5 is quicker. Large
         * chunks (sensim_log_dset_create_sized) pay for more. */
        if (!st && nch > LOG_EXTENTS_MAX_CHUNKS && nch > crow * rowb / 1024)
            st = sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: %zu chunks", log->path, dset, nch);
        if (!st && nch && !(*ext = malloc(nch * sizeof **ext)))
            st = sensim_error(SENSIM_ENOMEM, "%s: out of memory", log->path);
        for (size_t k = 0; k < nch && !st; k++) {
            hsize_t at[SENSIM_LOG_MAX_RANK] = {(hsize_t)(k * crow)};
            unsigned mask = 0;
            haddr_t a = HADDR_UNDEF;
            hsize_t size = 0;
            if (H5Dget_chunk_info_by_coord(d, at, &mask, &a, &size) < 0 || a == HADDR_UNDEF ||
                size != (hsize_t)(crow * rowb))
                st = sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: chunk %zu not stored plainly", log->path, dset, k);
            else
                (*ext)[k] = (sensim_log_extent){k * crow, n - k * crow < crow ? n - k * crow : crow, (uint64_t)a};
        }
        if (!st)
            *next = nch;
    } else if (!st)
        st = sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: neither contiguous nor chunked", log->path, dset);
    if (type >= 0)
        H5Tclose(type);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (fcpl >= 0)
        H5Pclose(fcpl);
    H5Dclose(d);
    if (st) {
        free(*ext);
        *ext = NULL;
        *next = 0;
    }
    return st;
}

int sensim_log_extents_read(int fd, const sensim_log_extent *ext, size_t next, size_t ncols, int swap,
                            const double *factor, size_t row0, size_t nrows, double *buf)
{
    const size_t rowb = ncols * sizeof(double), end = row0 + nrows;
    size_t lo = 0, hi = next;
    while (hi - lo > 1) { /* the last extent starting at or before row0 */
        size_t mid = lo + (hi - lo) / 2;
        if (ext[mid].row0 <= row0)
            lo = mid;
        else
            hi = mid;
    }
    size_t done = 0;
    for (size_t e = lo; e < next && ext[e].row0 < end; e++) {
        size_t r0 = row0 > ext[e].row0 ? row0 : ext[e].row0, r1 = ext[e].row0 + ext[e].nrows;
        r1 = r1 < end ? r1 : end;
        if (r1 <= r0)
            continue;
        char *dst = (char *)(buf + ncols * (r0 - row0));
        size_t want = (r1 - r0) * rowb, got = 0;
        off_t off = (off_t)(ext[e].offset + (r0 - ext[e].row0) * rowb);
        while (got < want) {
            ssize_t r = pread(fd, dst + got, want - got, off + (off_t)got);
            if (r <= 0)
                return 1;
            got += (size_t)r;
        }
        done += r1 - r0;
    }
    if (done != nrows)
        return 1;
    if (swap)
        for (size_t i = 0; i < ncols * nrows; i++) {
            uint64_t b;
            memcpy(&b, &buf[i], sizeof b);
            b = __builtin_bswap64(b);
            memcpy(&buf[i], &b, sizeof b);
        }
    int scaled = 0;
    for (size_t c = 0; c < ncols; c++)
        scaled |= factor[c] != 1;
    if (scaled)
        for (size_t k = 0; k < ncols * nrows; k++)
            buf[k] *= factor[k % ncols];
    return 0;
}

static void format_shape(char *buf, size_t size, int rank, const size_t *dims, int free_first)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, size - k, "[");
    for (int i = 0; i < rank && k < size; i++) {
        if (i == 0 && free_first)
            k += (size_t)snprintf(buf + k, size - k, "N");
        else
            k += (size_t)snprintf(buf + k, size - k, "%zu", dims[i]);
        if (i + 1 < rank && k < size)
            k += (size_t)snprintf(buf + k, size - k, ",");
    }
    if (k < size)
        snprintf(buf + k, size - k, "]");
}

sensim_status sensim_log_check_shape(const sensim_log *log, const char *dset, int ntail, const size_t *tail,
                                     size_t *nrows)
{
    H5_QUIET_SCOPE();
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK];
    sensim_status st = sensim_log_shape(log, dset, &rank, dims);
    if (st)
        return st;
    int ok = rank == ntail + 1;
    for (int i = 0; ok && i < ntail; i++)
        ok = dims[i + 1] == tail[i];
    if (!ok) {
        char found[96], want[96];
        size_t w[SENSIM_LOG_MAX_RANK] = {0};
        for (int i = 0; i < ntail; i++)
            w[i + 1] = tail[i];
        format_shape(found, sizeof found, rank, dims, 0);
        format_shape(want, sizeof want, ntail + 1, w, 1);
        return sensim_error(SENSIM_EFORMAT, "%s: %s: shape %s, expected %s", log->path, dset, found, want);
    }
    if (nrows)
        *nrows = dims[0];
    return SENSIM_OK;
}

/* ---- attributes ---- */

/* Longest fixed-length string attribute read (bytes). */
#define SENSIM_LOG_MAX_STRING (1 << 20)


int sensim_log_has_attr(const sensim_log *log, const char *obj, const char *name)
{
    H5_QUIET_SCOPE();
    if (!sensim_log_exists(log, obj))
        return 0;
    return H5Aexists_by_name(log->file, obj, name, H5P_DEFAULT) > 0;
}

/* ---- variable-length strings, checked before HDF5 reads them ----
 *
 * HDF5 1.10 trusts the global heap: a collection whose object sizes run
 * past its end, or a string whose stored length disagrees with its heap
 * object, makes H5Aread read and write out of bounds (SIGSEGV in H5HG_read
 * on a log with one flipped byte). So before reading a variable-length
 * string attribute its raw message is found in the object header (format
 * spec: version 1 and 2 object headers, attribute messages versions 1 to
 * 3) and the heap collection it points to is walked with every size
 * checked against the collection and the file. Where the message cannot be
 * found this way (dense attribute storage, shared types, unusual address
 * sizes) the check passes and HDF5 reads as before. */

typedef struct {
    FILE *f;
    uint64_t base, fsize;
} rawfile;

static int raw_read(const rawfile *r, uint64_t addr, void *buf, size_t n)
{
    if (addr > r->fsize || n > r->fsize - addr || r->base > r->fsize - addr - n)
        return -1;
    if (fseeko(r->f, (off_t)(r->base + addr), SEEK_SET) != 0 || fread(buf, 1, n, r->f) != n)
        return -1;
    return 0;
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Walks global heap collection `addr` and checks object `idx` holds `len`
 * bytes. 0 good, -1 damaged. */
static int check_gcol(const rawfile *r, uint64_t addr, uint32_t idx, uint32_t len)
{
    unsigned char h[16];
    if (raw_read(r, addr, h, 16) != 0 || memcmp(h, "GCOL", 4) != 0 || h[4] != 1)
        return -1;
    uint64_t size = le(h + 8, 8);
    if (size < 16 || size > ((uint64_t)1 << 30) || size > r->fsize)
        return -1;
    unsigned char *c = malloc((size_t)size);
    if (!c || raw_read(r, addr, c, (size_t)size) != 0) {
        free(c);
        return -1;
    }
    int found = 0, bad = 0;
    uint64_t off = 16;
    while (!bad && size - off >= 16) {
        uint32_t i = (uint32_t)le(c + off, 2);
        uint64_t osz = le(c + off + 8, 8);
        uint64_t need = i == 0 ? osz : 16 + ((osz + 7) & ~(uint64_t)7);
        if (osz > size || need < 16 || need > size - off) {
            bad = 1;
            break;
        }
        if (i == idx && i != 0)
            found = osz == len;
        if (i == 0)
            break; /* free space: the rest of the collection */
        off += need;
    }
    free(c);
    return bad || !found ? -1 : 0;
}

/* Finds attribute `name` in the header messages of [p, p+n) (a v2 header
 * chunk's messages, or v1's) and checks its string; follows continuation
 * messages up to `depth`. 1 checked good, 0 not found, -1 damaged. */
static int scan_messages(const rawfile *r, int v2, int corder, const unsigned char *p, size_t n, const char *name,
                         int depth);

static int scan_chunk(const rawfile *r, int v2, int corder, uint64_t addr, uint64_t len, const char *name, int depth)
{
    if (depth > 16 || len < (v2 ? 8u : 0u) || len > ((uint64_t)1 << 24))
        return -1;
    unsigned char *c = malloc(len ? (size_t)len : 1);
    if (!c || raw_read(r, addr, c, (size_t)len) != 0) {
        free(c);
        return -1;
    }
    int rc;
    if (v2)
        rc = memcmp(c, "OCHK", 4) != 0 ? -1 : scan_messages(r, 1, corder, c + 4, (size_t)len - 8, name, depth);
    else
        rc = scan_messages(r, 0, corder, c, (size_t)len, name, depth);
    free(c);
    return rc;
}

static int check_attr_msg(const rawfile *r, const unsigned char *m, size_t n, const char *name)
{
    if (n < 8)
        return -1;
    int ver = m[0], flags = m[1];
    size_t nsz = (size_t)le(m + 2, 2), tsz = (size_t)le(m + 4, 2), ssz = (size_t)le(m + 6, 2);
    size_t off = ver == 3 ? 9 : 8;
    if (ver < 1 || ver > 3)
        return -1;
#define PAD(x) (ver == 1 ? (((x) + 7) & ~(size_t)7) : (x))
    if (nsz == 0 || off + PAD(nsz) > n)
        return -1;
    const char *an = (const char *)m + off;
    if (strnlen(an, nsz) != strlen(name) || memcmp(an, name, strlen(name)) != 0)
        return 0; /* another attribute */
    if (flags != 0)
        return 1; /* shared datatype or dataspace: not checked here */
    off += PAD(nsz);
    if (tsz > n - off || PAD(tsz) > n - off)
        return -1;
    const unsigned char *dt = m + off;
    off += PAD(tsz);
    if (ssz > n - off || PAD(ssz) > n - off)
        return -1;
    off += PAD(ssz);
#undef PAD
    /* Datatype class 9 (variable length), type 1 (string). */
    if (tsz < 8 || (dt[0] & 0x0f) != 9 || (dt[1] & 0x0f) != 1)
        return 1;
    if (n - off < 16)
        return -1;
    const unsigned char *d = m + off;
    uint32_t len = (uint32_t)le(d, 4), idx = (uint32_t)le(d + 12, 4);
    uint64_t addr = le(d + 4, 8);
    if (addr == UINT64_MAX && len == 0)
        return 1; /* the empty (null) string */
    return check_gcol(r, addr, idx, len) == 0 ? 1 : -1;
}

static int scan_messages(const rawfile *r, int v2, int corder, const unsigned char *p, size_t n, const char *name,
                         int depth)
{
    size_t hdr = v2 ? 4u + (corder ? 2u : 0u) : 8u;
    size_t off = 0;
    while (n - off >= hdr) {
        unsigned type = v2 ? p[off] : (unsigned)le(p + off, 2);
        size_t sz = (size_t)le(p + off + (v2 ? 1 : 2), 2);
        const unsigned char *m = p + off + hdr;
        if (sz > n - off - hdr)
            return -1;
        int rc = 0;
        if (type == 0x0c)
            rc = check_attr_msg(r, m, sz, name);
        else if (type == 0x10 && sz >= 16)
            rc = scan_chunk(r, v2, corder, le(m, 8), le(m + 8, 8), name, depth + 1);
        if (rc != 0)
            return rc;
        off += hdr + sz;
        if (!v2)
            off = (off + 7) & ~(size_t)7;
    }
    return 0;
}

static sensim_status check_vlen_attr(const sensim_log *log, const char *obj, const char *name)
{
    H5O_info_t oi;
    hid_t fcpl = H5Fget_create_plist(log->file);
    size_t sa = 0, ss = 0;
    hsize_t ub = 0;
    if (fcpl < 0 || H5Pget_sizes(fcpl, &sa, &ss) < 0 || H5Pget_userblock(fcpl, &ub) < 0 || sa != 8 || ss != 8 ||
        H5Oget_info_by_name2(log->file, obj, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
        if (fcpl >= 0)
            H5Pclose(fcpl);
        return SENSIM_OK;
    }
    H5Pclose(fcpl);
    rawfile r = {fopen(log->path, "rb"), ub, 0};
    if (!r.f)
        return SENSIM_OK;
    int rc = 0;
    struct stat sb;
    if (fstat(fileno(r.f), &sb) == 0 && (uint64_t)sb.st_size > ub) {
        r.fsize = (uint64_t)sb.st_size - ub;
        unsigned char h[32];
        uint64_t a = (uint64_t)oi.addr;
        if (raw_read(&r, a, h, 16) == 0 && !memcmp(h, "OHDR", 4) && h[4] == 2) {
            int flags = h[5];
            size_t off = 6 + ((flags & 0x20) ? 16 : 0) + ((flags & 0x10) ? 4 : 0);
            int w = 1 << (flags & 3);
            if (raw_read(&r, a, h, off + (size_t)w) == 0) {
                uint64_t len = le(h + off, w);
                /* The chunk: the header fields, len bytes of messages, a checksum. */
                if (len > ((uint64_t)1 << 24))
                    rc = -1;
                else {
                    size_t tot = off + (size_t)w + (size_t)len;
                    unsigned char *c = malloc(tot);
                    if (c && raw_read(&r, a, c, tot) == 0)
                        rc = scan_messages(&r, 1, flags & 0x04, c + off + w, (size_t)len, name, 0);
                    free(c);
                }
            }
        } else if (raw_read(&r, a, h, 16) == 0 && h[0] == 1) {
            uint64_t len = le(h + 8, 4);
            rc = len > ((uint64_t)1 << 24) ? -1 : scan_chunk(&r, 0, 0, a + 16, len, name, 0);
        }
    }
    fclose(r.f);
    if (rc < 0)
        return sensim_error(SENSIM_EFORMAT, "%s: %s: attribute '%s': damaged variable-length string (its heap "
                            "object disagrees with its length or runs past its collection)",
                            log->path, obj, name);
    return SENSIM_OK;
}

/* An attribute opened for reading, with its type and dataspace (either
 * may be -1 in a damaged file). */
typedef struct {
    hid_t a, t, sp;
} attr_handles;

/* Attribute `name` of object `obj` into *h: SENSIM_OK, or the error set
 * with nothing left open. */
static sensim_status attr_open(const sensim_log *log, const char *obj, const char *name, attr_handles *h)
{
    if (!sensim_log_has_attr(log, obj, name))
        return sensim_error(SENSIM_ENOTFOUND, "%s: %s: attribute '%s' is missing", log->path, obj, name);
    if ((h->a = H5Aopen_by_name(log->file, obj, name, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        return sensim_error(SENSIM_EFORMAT, "%s: %s: cannot open attribute '%s'", log->path, obj, name);
    h->t = H5Aget_type(h->a);
    h->sp = H5Aget_space(h->a);
    return SENSIM_OK;
}

static void attr_close(const attr_handles *h)
{
    if (h->sp >= 0)
        H5Sclose(h->sp);
    if (h->t >= 0)
        H5Tclose(h->t);
    H5Aclose(h->a);
}

sensim_status sensim_log_get_attr_string(const sensim_log *log, const char *obj, const char *name, char **out)
{
    H5_QUIET_SCOPE();
    *out = NULL;
    attr_handles h;
    sensim_status st = attr_open(log, obj, name, &h);
    if (st)
        return st;
    /* What the file says is checked before HDF5 copies anything into our
     * buffers: one string (a damaged dataspace would have H5Aread write an
     * array of them), of a sane length. */
    hssize_t np = h.sp < 0 ? -1 : H5Sget_simple_extent_npoints(h.sp);
    if (h.t < 0 || H5Tget_class(h.t) != H5T_STRING) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: attribute '%s' is not a string", log->path, obj, name);
    } else if (np != 1) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: attribute '%s' holds %lld strings, expected one", log->path, obj,
                          name, (long long)np);
    } else if (H5Tis_variable_str(h.t) > 0) {
        if (check_vlen_attr(log, obj, name) != SENSIM_OK) {
            st = sensim_last_status();
        } else {
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, H5T_VARIABLE);
            H5Tset_cset(mt, H5Tget_cset(h.t) == H5T_CSET_UTF8 ? H5T_CSET_UTF8 : H5T_CSET_ASCII);
            char *s = NULL;
            if (H5Aread(h.a, mt, &s) < 0 || !s)
                st = sensim_error(SENSIM_EFORMAT, "%s: %s: cannot read attribute '%s'", log->path, obj, name);
            else if (!(*out = strdup(s)))
                st = sensim_error(SENSIM_ENOMEM, "%s: out of memory", log->path);
            if (s)
                H5free_memory(s);
            H5Tclose(mt);
        }
    } else {
        size_t n = H5Tget_size(h.t);
        char *s = n > 0 && n <= SENSIM_LOG_MAX_STRING ? calloc(n + 1, 1) : NULL;
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, n + 1);
        H5Tset_cset(mt, H5Tget_cset(h.t) == H5T_CSET_UTF8 ? H5T_CSET_UTF8 : H5T_CSET_ASCII);
        if (n == 0 || n > SENSIM_LOG_MAX_STRING)
            st = sensim_error(SENSIM_EFORMAT, "%s: %s: attribute '%s': string of %zu bytes (at most %d)", log->path,
                              obj, name, n, SENSIM_LOG_MAX_STRING);
        else if (!s || H5Aread(h.a, mt, s) < 0) {
            free(s);
            st = sensim_error(SENSIM_EFORMAT, "%s: %s: cannot read attribute '%s'", log->path, obj, name);
        } else
            *out = s;
        H5Tclose(mt);
    }
    attr_close(&h);
    return st;
}

sensim_status sensim_log_get_attr_f64(const sensim_log *log, const char *obj, const char *name, double *out, size_t n)
{
    H5_QUIET_SCOPE();
    attr_handles h;
    sensim_status st = attr_open(log, obj, name, &h);
    if (st)
        return st;
    hssize_t np = H5Sget_simple_extent_npoints(h.sp);
    H5T_class_t c = H5Tget_class(h.t);
    if (c != H5T_FLOAT && c != H5T_INTEGER)
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: attribute '%s' is not numeric", log->path, obj, name);
    else if ((size_t)np != n)
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: attribute '%s' has %lld values, expected %zu", log->path, obj,
                          name, (long long)np, n);
    else if (H5Aread(h.a, H5T_NATIVE_DOUBLE, out) < 0)
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: cannot read attribute '%s'", log->path, obj, name);
    attr_close(&h);
    return st;
}

static sensim_status set_attr(sensim_log *log, const char *obj, const char *name, hid_t ftype, hid_t mtype,
                              hid_t space, const void *buf)
{
    hid_t o = open_named(log, obj, 0);
    if (o < 0)
        return sensim_last_status();
    if (H5Aexists(o, name) > 0)
        H5Adelete(o, name);
    hid_t a = H5Acreate2(o, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = a < 0 ? -1 : H5Awrite(a, mtype, buf);
    if (a >= 0)
        H5Aclose(a);
    H5Oclose(o);
    if (e < 0)
        return sensim_error(SENSIM_EIO, "%s: %s: cannot write attribute '%s'", log->path, obj, name);
    return SENSIM_OK;
}

sensim_status sensim_log_set_attr_string(sensim_log *log, const char *obj, const char *name, const char *value)
{
    H5_QUIET_SCOPE();
    /* Variable-length UTF-8: h5py reads it as str. */
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t sp = H5Screate(H5S_SCALAR);
    sensim_status st = set_attr(log, obj, name, t, t, sp, &value);
    H5Sclose(sp);
    H5Tclose(t);
    return st;
}

/* n numbers as an attribute: a scalar for one, else a 1-D array. */
static sensim_status set_attr_numbers(sensim_log *log, const char *obj, const char *name, hid_t ftype, hid_t mtype,
                                      const void *v, size_t n)
{
    H5_QUIET_SCOPE();
    hsize_t dn = n;
    hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dn, NULL);
    sensim_status st = set_attr(log, obj, name, ftype, mtype, sp, v);
    H5Sclose(sp);
    return st;
}

sensim_status sensim_log_set_attr_f64(sensim_log *log, const char *obj, const char *name, const double *v, size_t n)
{
    return set_attr_numbers(log, obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v, n);
}

sensim_status sensim_log_set_attr_i64(sensim_log *log, const char *obj, const char *name, const int64_t *v, size_t n)
{
    return set_attr_numbers(log, obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, v, n);
}

/* ---- listing ---- */

static herr_t list_cb(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    (void)g;
    (void)info;
    return sensim_namelist_add_(data, name);
}

sensim_status sensim_log_list(const sensim_log *log, const char *group, char ***names, size_t *count)
{
    H5_QUIET_SCOPE();
    *names = NULL;
    *count = 0;
    if (!sensim_log_exists(log, group))
        return sensim_error(SENSIM_ENOTFOUND, "%s: group %s is missing", log->path, group);
    hid_t g = H5Gopen2(log->file, group, H5P_DEFAULT);
    if (g < 0)
        return sensim_error(SENSIM_EFORMAT, "%s: %s is not a group", log->path, group);
    sensim_namelist_ l = {0};
    herr_t e = H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, list_cb, &l);
    H5Gclose(g);
    if (e < 0 || l.oom) {
        sensim_log_free_names(l.names, l.n);
        return sensim_error(l.oom ? SENSIM_ENOMEM : SENSIM_EFORMAT, "%s: cannot list %s", log->path, group);
    }
    *names = l.names;
    *count = l.n;
    return SENSIM_OK;
}

void sensim_log_free_names(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

#define CHECK_BLOCK 65536

/* "int32", "uint64", ... for messages about integer time datasets. */
static void int_type_name(hid_t t, char *buf, size_t size)
{
    snprintf(buf, size, "%sint%zu", H5Tget_sign(t) == H5T_SGN_2 ? "" : "u", 8 * H5Tget_size(t));
}

/* sensim_tcheck_block over all rows of the times dset, in pieces of
 * CHECK_BLOCK read with pread from all threads, each piece checked from the
 * state the pieces before it leave (its first index and the time before
 * it), the pieces' states then joined in order: the same state, verdict
 * and message as one pass (a failing piece is checked again on this
 * thread for its message, the first failing piece as one pass stops
 * there). On one thread too: pread into one piece's buffer costs a
 * fraction of HDF5's read of the same rows through its chunk cache. 0 when
 * it does not apply (a short or not plainly stored t): check through HDF5
 * then; else 1 with *st. */
static int check_time_parallel(const sensim_log *log, const char *dset, size_t rows, sensim_tcheck *c,
                               sensim_status *st)
{
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads();
#endif
    const size_t npiece = (rows + CHECK_BLOCK - 1) / CHECK_BLOCK;
    const char *e = getenv("SENSIM_HDF5_PREAD");
    if (npiece < 2 || (e && !strcmp(e, "0")))
        return 0;
    sensim_log_extent *ext = NULL;
    size_t next = 0;
    int swap = 0, fd = -1;
    double fac[1];
    sensim_tcheck *pc = malloc(npiece * sizeof *pc);
    /* Each thread's piece (and the time before it) on a 64-byte boundary. */
    const size_t stride = (CHECK_BLOCK + 1 + 7) / 8 * 8;
    double *buf = sensim_read_buf_((size_t)nt * stride * sizeof *buf);
    struct stat sb;
    int ok = pc && buf && !sensim_log_extents(log, dset, &ext, &next, &swap, fac, 1) &&
             (fd = open(log->path, O_RDONLY | O_CLOEXEC)) >= 0 && !fstat(fd, &sb);
    for (size_t k = 0; ok && k < next; k++) /* a truncated file is left to HDF5 */
        ok = ext[k].offset + ext[k].nrows * sizeof(double) <= (uint64_t)sb.st_size;
    if (!ok) {
        if (fd >= 0)
            close(fd);
        free(ext);
        free(pc);
        free(buf);
        sensim_error_clear();
        return 0;
    }
    size_t bad = SIZE_MAX;
    int short_read = 0;
#pragma omp parallel num_threads(nt)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        double *b = buf + (size_t)tid * stride;
#pragma omp for schedule(dynamic, 1)
        for (size_t p = 0; p < npiece; p++) {
            const size_t r0 = p * CHECK_BLOCK, k = rows - r0 < CHECK_BLOCK ? rows - r0 : CHECK_BLOCK;
            const size_t lead = r0 ? 1 : 0; /* the time before the piece */
            sensim_tcheck *q = &pc[p];
            *q = *c;
            if (sensim_log_extents_read(fd, ext, next, 1, swap, fac, r0 - lead, k + lead, b)) {
#pragma omp atomic write
                short_read = 1;
                continue;
            }
            q->count = r0;
            q->last = b[0];
            if (sensim_tcheck_block(q, b + lead, k)) {
#pragma omp critical(sensim_log_check_time)
                bad = p < bad ? p : bad;
            }
        }
    }
    close(fd);
    free(ext);
    free(buf);
    if (short_read) {
        free(pc);
        return 0; /* the file changed under us: HDF5 says how */
    }
    /* The pieces joined in order; a longest step is kept where it first
     * occurs, as one pass keeps it. */
    *st = SENSIM_OK;
    for (size_t p = 0; p < npiece && !*st; p++) {
        const sensim_tcheck *q = &pc[p];
        if (p == bad) {
            /* Again here, from the same state, for the message. */
            const size_t r0 = p * CHECK_BLOCK, k = rows - r0 < CHECK_BLOCK ? rows - r0 : CHECK_BLOCK;
            double *t = malloc((k + 1) * sizeof *t);
            if (!t) {
                *st = sensim_error(SENSIM_ENOMEM, "%s: out of memory", log->path);
                break;
            }
            sensim_tcheck r = *c;
            *st = sensim_log_read_f64(log, dset, r0 ? r0 - 1 : 0, k + (r0 ? 1 : 0), t);
            if (!*st) {
                r.count = r0;
                r.last = t[0];
                *st = sensim_tcheck_block(&r, t + (r0 ? 1 : 0), k);
            }
            free(t);
            if (!*st)
                *st = sensim_error(SENSIM_EIO, "%s: %s: rows %zu to %zu read differently twice", log->path, dset, r0,
                                   r0 + k);
            break;
        }
        if (p == 0)
            c->first = q->first;
        c->repeats += q->repeats;
        if (q->max_step > c->max_step) {
            c->max_step = q->max_step;
            c->max_step_at = q->max_step_at;
        }
        c->last = q->last;
        c->count = q->count;
    }
    free(pc);
    return 1;
}

sensim_status sensim_log_check_time(const sensim_log *log, const char *dset, size_t *n)
{
    H5_QUIET_SCOPE();
    size_t rows;
    sensim_status st = sensim_log_check_shape(log, dset, 0, NULL, &rows);
    if (st)
        return st;
    /* Integer stamps are not the layout's f64 seconds: truncated seconds
     * repeat, and nanoseconds read as seconds span centuries. */
    hid_t d = H5Dopen2(log->file, dset, H5P_DEFAULT);
    if (d >= 0) {
        hid_t ty = H5Dget_type(d);
        if (ty >= 0 && H5Tget_class(ty) != H5T_FLOAT) {
            char tn[32] = "not a float";
            if (H5Tget_class(ty) == H5T_INTEGER)
                int_type_name(ty, tn, sizeof tn);
            st = sensim_error(SENSIM_EFORMAT, "%s: %s is %s; timestamps are floating-point seconds (f64)",
                              log->path, dset, tn);
        }
        if (ty >= 0)
            H5Tclose(ty);
        H5Dclose(d);
        if (st)
            return st;
    }
    /* The rate of the group holding t, when it says one, bounds the mean step. */
    char group[512], what[640];
    double rate = 0;
    snprintf(group, sizeof group, "%s", dset);
    char *slash = strrchr(group, '/');
    if (slash && slash != group) {
        *slash = '\0';
        if (sensim_log_has_attr(log, group, "rate_hz") && sensim_log_get_attr_f64(log, group, "rate_hz", &rate, 1))
            rate = 0;
    }
    snprintf(what, sizeof what, "%s: %s", log->path, dset);
    sensim_tcheck c;
    sensim_tcheck_init(&c, what, rate, 0);
    if (check_time_parallel(log, dset, rows, &c, &st)) {
        if (!st)
            st = sensim_tcheck_finish(&c);
        if (!st && n)
            *n = rows;
        return st;
    }
    double *buf = malloc(CHECK_BLOCK * sizeof *buf);
    if (!buf)
        return sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory for a block of %d times", log->path, dset,
                            CHECK_BLOCK);
    for (size_t r0 = 0; r0 < rows && !st; r0 += CHECK_BLOCK) {
        size_t k = rows - r0 < CHECK_BLOCK ? rows - r0 : CHECK_BLOCK;
        if (!(st = sensim_log_read_f64(log, dset, r0, k, buf)))
            st = sensim_tcheck_block(&c, buf, k);
    }
    free(buf);
    if (!st && rows)
        st = sensim_tcheck_finish(&c);
    if (!st && n)
        *n = rows;
    return st;
}

/* ---- writing ---- */

sensim_log *sensim_log_create(const char *path, const char *created_by)
{
    H5_QUIET_SCOPE();
    sensim_log *log = calloc(1, sizeof *log);
    if (log) {
        log->file = -1;
        log->tmp_slot = -1;
    }
    if (!log || !(log->path = strdup(path)) || !(log->tmp_path = sensim_tmp_template(path))) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    int fd = sensim_tmp_create(log->tmp_path, &log->tmp_slot);
    if (fd < 0) {
        sensim_error(SENSIM_EIO, "%s: cannot create a file beside it: %s", path, strerror(errno));
        free(log->tmp_path);
        log->tmp_path = NULL;
        goto fail;
    }
    /* mkstemp makes the file 0600; give it the mode a plain create would. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    close(fd);
    /* The HDF5 1.10 format: datasets growing along time get an extensible
     * array as chunk index instead of a v1 B-tree, whose nodes HDF5 keeps
     * in memory as the log grows (12 MB more for a 2-hour 1 kHz inject with
     * 64 KiB chunks; flat with this). HDF5 1.10 and later read it (h5py,
     * MATLAB R2021a+, HDFView 3). */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110);
    /* The root group too gets no timestamps (1.10 object headers carry
     * them unless told not to), so the bytes depend only on the content. */
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_obj_track_times(fcpl, 0);
    log->file = H5Fcreate(log->tmp_path, H5F_ACC_TRUNC, fcpl, fapl);
    H5Pclose(fcpl);
    H5Pclose(fapl);
    if (log->file < 0) {
        sensim_error(SENSIM_EIO, "%s: HDF5 cannot create the file", path);
        goto fail;
    }
    int64_t ver = SENSIM_LOG_FORMAT_VERSION;
    if (sensim_log_set_attr_string(log, "/", "format", SENSIM_LOG_FORMAT) ||
        sensim_log_set_attr_i64(log, "/", "format_version", &ver, 1) ||
        sensim_log_set_attr_string(log, "/", "created_by", created_by ? created_by : "sensim"))
        goto fail;
    return log;
fail:
    sensim_log_close(log);
    return NULL;
}

sensim_status sensim_log_group(sensim_log *log, const char *group)
{
    H5_QUIET_SCOPE();
    if (sensim_log_exists(log, group))
        return SENSIM_OK;
    /* Parents first, each through this function: HDF5 would create
     * intermediate groups with its default properties, timestamps included. */
    const char *slash = strrchr(group, '/');
    if (slash && slash != group) {
        char parent[1024];
        size_t pn = (size_t)(slash - group);
        if (pn >= sizeof parent)
            return sensim_error(SENSIM_EINVAL, "%s: group path too long: %s", log->path, group);
        memcpy(parent, group, pn);
        parent[pn] = '\0';
        sensim_status st = sensim_log_group(log, parent);
        if (st)
            return st;
    }
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_obj_track_times(gcpl, 0);
    hid_t g = H5Gcreate2(log->file, group, lcpl, gcpl, H5P_DEFAULT);
    H5Pclose(gcpl);
    H5Pclose(lcpl);
    if (g < 0)
        return sensim_error(SENSIM_EIO, "%s: cannot create group %s", log->path, group);
    H5Gclose(g);
    return SENSIM_OK;
}

/* Rows per chunk for rows of row_bytes and about `expect` rows in all (0:
 * unknown): 64 KiB, so that small logs stay small (HDF5 allocates whole
 * chunks) and streamed appends stay cheap, growing with a known size to
 * about a 64th of the dataset, at most 8 MiB: a long series then has few
 * enough chunks to be read with pread from several threads
 * (sensim_log_extents). */
static hsize_t chunk_rows(size_t row_bytes, size_t expect)
{
    if (row_bytes > (4u << 20))
        return 1;
    size_t rows = row_bytes ? (1u << 16) / row_bytes : 1, most = row_bytes ? (8u << 20) / row_bytes : 1;
    size_t want = expect / 64 + (expect % 64 != 0);
    if (want > rows)
        rows = want < most ? want : most;
    return rows < 1 ? 1 : rows;
}

sensim_log_dset *sensim_log_dset_create(sensim_log *log, const char *path, sensim_dtype type, int ntail,
                                        const size_t *tail, const char *units, int compress)
{
    return sensim_log_dset_create_sized(log, path, type, ntail, tail, units, compress, 0);
}

sensim_log_dset *sensim_log_dset_create_sized(sensim_log *log, const char *path, sensim_dtype type, int ntail,
                                              const size_t *tail, const char *units, int compress, size_t expect)
{
    H5_QUIET_SCOPE();
    if (ntail < 0 || ntail + 1 > SENSIM_LOG_MAX_RANK) {
        sensim_error(SENSIM_EINVAL, "%s: %s: rank %d not supported", log->path, path, ntail + 1);
        return NULL;
    }
    sensim_log_dset *d = calloc(1, sizeof *d);
    if (!d || !(d->name = strdup(path))) {
        free(d);
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", log->path);
        return NULL;
    }
    d->log = log;
    d->type = type;
    d->rank = ntail + 1;
    d->row_elems = 1;
    hsize_t maxd[SENSIM_LOG_MAX_RANK], chunk[SENSIM_LOG_MAX_RANK];
    d->dims[0] = 0;
    maxd[0] = H5S_UNLIMITED;
    for (int i = 0; i < ntail; i++) {
        d->dims[i + 1] = maxd[i + 1] = chunk[i + 1] = tail[i];
        d->row_elems *= tail[i];
    }
    chunk[0] = chunk_rows(d->row_elems * sensim_dtype_size(type), expect);

    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        char parent[1024];
        size_t pn = (size_t)(slash - path);
        if (pn >= sizeof parent) {
            sensim_error(SENSIM_EINVAL, "%s: path too long", path);
            goto fail;
        }
        memcpy(parent, path, pn);
        parent[pn] = '\0';
        if (sensim_log_group(log, parent))
            goto fail;
    }
    hid_t sp = H5Screate_simple(d->rank, d->dims, maxd);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, d->rank, chunk);
    /* No object timestamps: the same inputs and seed give the same bytes. */
    H5Pset_obj_track_times(dcpl, 0);
    if (compress > 0) {
        H5Pset_shuffle(dcpl);
        H5Pset_deflate(dcpl, (unsigned)(compress > 9 ? 9 : compress));
    }
    d->dset = H5Dcreate2(log->file, path, file_type(type), sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(sp);
    if (d->dset < 0) {
        sensim_error(SENSIM_EIO, "%s: cannot create dataset %s", log->path, path);
        goto fail;
    }
    if (units && *units && sensim_log_set_attr_string(log, path, "units", units))
        goto fail;
    return d;
fail:
    sensim_log_dset_close(d);
    return NULL;
}

sensim_status sensim_log_dset_append(sensim_log_dset *d, const void *buf, size_t nrows)
{
    H5_QUIET_SCOPE();
    if (nrows == 0)
        return SENSIM_OK;
    hsize_t start[SENSIM_LOG_MAX_RANK] = {0}, count[SENSIM_LOG_MAX_RANK];
    for (int i = 0; i < d->rank; i++)
        count[i] = d->dims[i];
    start[0] = d->dims[0];
    count[0] = nrows;
    d->dims[0] += nrows;
    if (H5Dset_extent(d->dset, d->dims) < 0)
        return sensim_error(SENSIM_EIO, "%s: %s: cannot extend", d->log->path, d->name);
    hid_t fs = H5Dget_space(d->dset);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(d->rank, count, NULL);
    herr_t e = H5Dwrite(d->dset, native_type(d->type), ms, fs, H5P_DEFAULT, buf);
    H5Sclose(ms);
    H5Sclose(fs);
    if (e < 0)
        return sensim_error(SENSIM_EIO, "%s: %s: write failed (disk full?)", d->log->path, d->name);
    return SENSIM_OK;
}

size_t sensim_log_dset_rows(const sensim_log_dset *d) { return (size_t)d->dims[0]; }

void sensim_log_dset_close(sensim_log_dset *d)
{
    H5_QUIET_SCOPE();
    if (!d)
        return;
    if (d->dset > 0)
        H5Dclose(d->dset);
    free(d->name);
    free(d);
}

sensim_status sensim_log_write(sensim_log *log, const char *path, sensim_dtype type, size_t nrows, int ntail,
                               const size_t *tail, const void *buf, const char *units)
{
    H5_QUIET_SCOPE();
    sensim_log_dset *d = sensim_log_dset_create_sized(log, path, type, ntail, tail, units, 0, nrows);
    if (!d)
        return sensim_last_status();
    sensim_status st = sensim_log_dset_append(d, buf, nrows);
    sensim_log_dset_close(d);
    return st;
}

/* ---- copying (streamed, without the H5DS bookkeeping attributes, which
 * hold object references into the source file; commit re-attaches) ---- */

static int is_ds_attr(const char *name)
{
    return !strcmp(name, "DIMENSION_LIST") || !strcmp(name, "REFERENCE_LIST") || !strcmp(name, "CLASS") ||
           !strcmp(name, "NAME") || !strcmp(name, "DIMENSION_LABELS");
}

typedef struct {
    hid_t dst;
    int err;
} attr_copy_ctx;

static herr_t attr_copy_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    attr_copy_ctx *c = data;
    if (is_ds_attr(name))
        return 0;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
    hid_t mt = H5Tget_native_type(ft, H5T_DIR_ASCEND);
    hssize_t np = H5Sget_simple_extent_npoints(sp);
    size_t sz = H5Tget_size(mt);
    void *buf = calloc((size_t)(np > 0 ? np : 1), sz ? sz : 1);
    int ok = buf && H5Aread(a, mt, buf) >= 0;
    if (ok) {
        if (H5Aexists(c->dst, name) > 0)
            H5Adelete(c->dst, name);
        hid_t b = H5Acreate2(c->dst, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT);
        ok = b >= 0 && H5Awrite(b, mt, buf) >= 0;
        if (b >= 0)
            H5Aclose(b);
        if (H5Tdetect_class(mt, H5T_VLEN) > 0 || H5Tis_variable_str(mt) > 0)
            H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
    }
    free(buf);
    H5Tclose(mt);
    H5Tclose(ft);
    H5Sclose(sp);
    H5Aclose(a);
    if (!ok)
        c->err = 1;
    return 0;
}

sensim_status sensim_log_copy_attrs(sensim_log *dst, const sensim_log *src, const char *obj)
{
    H5_QUIET_SCOPE();
    hid_t so = H5Oopen(src->file, obj, H5P_DEFAULT);
    hid_t dob = H5Oopen(dst->file, obj, H5P_DEFAULT);
    attr_copy_ctx c = {dob, 0};
    if (so >= 0 && dob >= 0)
        H5Aiterate2(so, H5_INDEX_NAME, H5_ITER_INC, NULL, attr_copy_cb, &c);
    else
        c.err = 1;
    if (so >= 0)
        H5Oclose(so);
    if (dob >= 0)
        H5Oclose(dob);
    if (c.err)
        return sensim_error(SENSIM_EIO, "%s: cannot copy the attributes of %s from %s", dst->path, obj, src->path);
    return SENSIM_OK;
}

static sensim_status copy_dataset(sensim_log *dst, const sensim_log *src, const char *obj)
{
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK];
    sensim_dtype type;
    sensim_status st = sensim_log_shape(src, obj, &rank, dims);
    if (!st)
        st = sensim_log_dtype(src, obj, &type);
    if (st)
        return st;
    if (rank == 0)
        return sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: scalar datasets are not copied", src->path, obj);
    size_t row = sensim_dtype_size(type);
    for (int i = 1; i < rank; i++)
        row *= dims[i];
    sensim_log_dset *d = sensim_log_dset_create(dst, obj, type, rank - 1, dims + 1, NULL, 0);
    if (!d)
        return sensim_last_status();
    size_t block = row ? (8u << 20) / row : 1;
    if (block < 1)
        block = 1;
    void *buf = malloc((block < dims[0] ? block : dims[0] ? dims[0] : 1) * row + 1);
    if (!buf) {
        sensim_log_dset_close(d);
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", dst->path);
    }
    for (size_t r0 = 0; r0 < dims[0] && !st; r0 += block) {
        size_t c = dims[0] - r0 < block ? dims[0] - r0 : block;
        st = sensim_log_read_raw(src, obj, type, r0, c, buf);
        if (!st)
            st = sensim_log_dset_append(d, buf, c);
    }
    free(buf);
    sensim_log_dset_close(d);
    return st ? st : sensim_log_copy_attrs(dst, src, obj);
}

sensim_status sensim_log_copy(sensim_log *dst, const sensim_log *src, const char *obj)
{
    H5_QUIET_SCOPE();
    if (!sensim_log_exists(src, obj))
        return sensim_error(SENSIM_ENOTFOUND, "%s: %s is missing", src->path, obj);
    H5O_info_t info;
    if (H5Oget_info_by_name(src->file, obj, &info, H5P_DEFAULT) < 0)
        return sensim_error(SENSIM_EFORMAT, "%s: cannot inspect %s", src->path, obj);
    if (info.type == H5O_TYPE_DATASET)
        return copy_dataset(dst, src, obj);
    if (info.type != H5O_TYPE_GROUP)
        return sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: only groups and datasets are copied", src->path, obj);
    sensim_status st = sensim_log_group(dst, obj);
    if (st)
        return st;
    char **names;
    size_t n;
    if ((st = sensim_log_list(src, obj, &names, &n)))
        return st;
    for (size_t i = 0; i < n && !st; i++) {
        size_t len = strlen(obj) + strlen(names[i]) + 2;
        char *child = malloc(len);
        if (!child) {
            st = sensim_error(SENSIM_ENOMEM, "out of memory");
            break;
        }
        snprintf(child, len, "%s/%s", strcmp(obj, "/") ? obj : "", names[i]);
        st = sensim_log_copy(dst, src, child);
        free(child);
    }
    sensim_log_free_names(names, n);
    return st ? st : sensim_log_copy_attrs(dst, src, obj);
}

/* ---- commit: dimension scales, close, rename ---- */

typedef struct {
    int err;
} scale_ctx;

static herr_t scale_visit(hid_t obj, const char *name, const H5O_info_t *info, void *data)
{
    scale_ctx *c = data;
    if (info->type != H5O_TYPE_GROUP)
        return 0;
    hid_t g = H5Gopen2(obj, name, H5P_DEFAULT);
    if (g < 0)
        return 0;
    if (H5Lexists(g, "t", H5P_DEFAULT) > 0) {
        hid_t t = H5Dopen2(g, "t", H5P_DEFAULT);
        hsize_t tn[SENSIM_LOG_MAX_RANK];
        hid_t ts = t >= 0 ? H5Dget_space(t) : -1;
        if (t >= 0 && H5Sget_simple_extent_ndims(ts) == 1) {
            H5Sget_simple_extent_dims(ts, tn, NULL);
            if (H5DSis_scale(t) <= 0 && H5DSset_scale(t, "t") < 0)
                c->err = 1;
            H5G_info_t gi;
            H5Gget_info(g, &gi);
            for (hsize_t i = 0; i < gi.nlinks; i++) {
                char member[256];
                if (H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, member, sizeof member,
                                       H5P_DEFAULT) < 0 ||
                    !strcmp(member, "t"))
                    continue;
                H5O_info_t mi;
                if (H5Oget_info_by_name(g, member, &mi, H5P_DEFAULT) < 0 || mi.type != H5O_TYPE_DATASET)
                    continue;
                hid_t d = H5Dopen2(g, member, H5P_DEFAULT);
                hid_t ds = H5Dget_space(d);
                hsize_t dd[SENSIM_LOG_MAX_RANK];
                int r = H5Sget_simple_extent_ndims(ds);
                if (r >= 1 && r <= SENSIM_LOG_MAX_RANK) {
                    H5Sget_simple_extent_dims(ds, dd, NULL);
                    if (dd[0] == tn[0] && H5DSis_attached(d, t, 0) <= 0 && H5DSattach_scale(d, t, 0) < 0)
                        c->err = 1;
                }
                H5Sclose(ds);
                H5Dclose(d);
            }
        }
        h5_close(ts);
        h5_close(t);
    }
    H5Gclose(g);
    return 0;
}

int sensim_log_attach_scales_(hid_t file)
{
    scale_ctx c = {0};
    H5Ovisit(file, H5_INDEX_NAME, H5_ITER_INC, scale_visit, &c);
    return c.err;
}

sensim_status sensim_log_commit(sensim_log *log)
{
    H5_QUIET_SCOPE();
    if (!log->tmp_path) {
        sensim_log_close(log);
        return sensim_error(SENSIM_EINVAL, "%s: not opened for writing", log->path);
    }
    if (sensim_log_attach_scales_(log->file)) {
        sensim_status st = sensim_error(SENSIM_EIO, "%s: cannot attach dimension scales", log->path);
        sensim_log_close(log);
        return st;
    }
    /* Flush first and close only what flushed: a close that fails (a full
     * disk) leaves HDF5 a file that crashes its exit handler; emptied, the
     * discarded file closes cleanly (see sensim_log_close). */
    herr_t e = H5Fflush(log->file, H5F_SCOPE_GLOBAL);
    if (e < 0)
        discard_tmp(log);
    if (H5Fclose(log->file) < 0)
        e = -1;
    log->file = -1;
    if (e < 0) {
        sensim_status st = sensim_error(SENSIM_EIO, "%s: HDF5 failed to close (disk full?)", log->path);
        sensim_log_close(log);
        return st;
    }
    if (rename(log->tmp_path, log->path) != 0) {
        sensim_status st = sensim_error(SENSIM_EIO, "%s: cannot rename %s into place: %s", log->path,
                                        log->tmp_path, strerror(errno));
        sensim_log_close(log);
        return st;
    }
    sensim_tmp_unregister(log->tmp_slot);
    free(log->tmp_path);
    log->tmp_path = NULL;
    sensim_log_close(log);
    return SENSIM_OK;
}
