/* sensim/log.h - HDF5 logs in the layout of DESIGN.md ("sensim-log", v1).
 *
 * Reading: sensim_log_open() then row-range reads of any dataset, converted
 * to double (or read raw), so callers stream hours of kHz data in blocks with
 * bounded memory. Writing: sensim_log_create() writes to a temporary name
 * beside the target ("<path>.tmp-XXXXXX"); sensim_log_commit() attaches
 * each group's `t` as the dimension scale of the datasets beside it (H5DS),
 * closes and renames over the target. sensim_log_close() on an uncommitted
 * writer removes the temporary file, so a failure never leaves a broken file
 * and never touches an existing one.
 *
 * Errors name the file and dataset: "gt.h5: /ground_truth/t: ...".
 *
 * A full disk: the write or commit fails with SENSIM_EIO ("disk full?") and
 * the temporary file is removed. HDF5 1.10 keeps a file whose flush failed
 * in a state that crashes its exit handler; programs that may meet a full
 * disk call H5dont_atexit() before any other HDF5 call, as sensim does.
 *
 * Thread safety: HDF5 (Debian's serial build) is not thread-safe; use a log
 * from one thread at a time, and do parallel work on buffers. */
#ifndef SENSIM_LOG_H
#define SENSIM_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/gt.h"
#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SENSIM_LOG_FORMAT "sensim-log"
#define SENSIM_LOG_FORMAT_VERSION 1
#define SENSIM_LOG_MAX_RANK 4

typedef struct sensim_log sensim_log;
typedef struct sensim_log_dset sensim_log_dset;

typedef enum sensim_dtype {
    SENSIM_F64,
    SENSIM_F32,
    SENSIM_U8,
    SENSIM_U16,
    SENSIM_U64,
    SENSIM_I8,
    SENSIM_U32
} sensim_dtype;

size_t sensim_dtype_size(sensim_dtype t);

/* ---- reading ---- */

/* Opens an existing file read-only. A file without the format attribute is
 * accepted (logs made by h5py by hand) as long as the datasets are laid out
 * as DESIGN.md says. */
sensim_log *sensim_log_open(const char *path);
/* Closes a log; for an uncommitted writer also removes its temporary file.
 * NULL is a no-op. */
void sensim_log_close(sensim_log *log);
/* The path given at open/create (borrowed). */
const char *sensim_log_path(const sensim_log *log);

/* 1 if the object (group or dataset) exists, else 0. */
int sensim_log_exists(const sensim_log *log, const char *obj);
/* Rank and dims of a dataset; SENSIM_ENOTFOUND names it when missing. */
sensim_status sensim_log_shape(const sensim_log *log, const char *dset, int *rank, size_t dims[SENSIM_LOG_MAX_RANK]);
/* Native element type of a dataset (integer/float types map to the nearest
 * sensim_dtype; others are SENSIM_EFORMAT). */
sensim_status sensim_log_dtype(const sensim_log *log, const char *dset, sensim_dtype *type);
/* Reads rows [row0, row0 + nrows) of a dataset (all trailing dimensions) and
 * converts to double: buf holds nrows * (product of trailing dims) values.
 *
 * Units travel: for the datasets of the layout (DESIGN.md; see
 * sensim_log_layout_units) the dataset's `units` attribute is honoured, so a
 * log written by h5py in deg/s, g, mg, deg, uT, gauss, km or ns reads in
 * rad/s, m/s^2, rad, T, m and s. The attribute may give one unit or one per
 * column ("deg, deg, m"); one unit on a dataset whose columns differ applies
 * to the columns of its dimension (a points dataset in "mm": x, y, z, not the
 * intensity). An unknown unit is SENSIM_EUNSUPPORTED and a unit of the wrong
 * dimension SENSIM_EDATA, both naming the file, dataset and unit. */
sensim_status sensim_log_read_f64(const sensim_log *log, const char *dset, size_t row0, size_t nrows, double *buf);
/* Same, converting to `type` (buf sized accordingly); units are honoured for
 * F64 and F32 reads only (integer reads are counts and codes). */
sensim_status sensim_log_read(const sensim_log *log, const char *dset, sensim_dtype type, size_t row0, size_t nrows,
                              void *buf);
/* Same, without unit conversion: values as stored (for copying a dataset
 * together with its units attribute). */
sensim_status sensim_log_read_raw(const sensim_log *log, const char *dset, sensim_dtype type, size_t row0,
                                  size_t nrows, void *buf);
/* Where dataset `dset` (rows of ncols doubles) lies in the file, for reads
 * without HDF5 (from several threads at once): *next extents of rows, each
 * stored as raw rows at a byte offset, byte-swapped when *swap, times
 * factor[c] per column (the unit conversion of sensim_log_read_f64; ncols
 * at most 16). SENSIM_EUNSUPPORTED when it is not stored that way
 * (filters, compact or external storage, another type, unallocated
 * chunks, a user block) or when finding the chunks costs more than reading
 * them (over 128 chunks and over one per KiB of a chunk: HDF5 1.10 walks
 * its chunk index from the start for each): read it with
 * sensim_log_read_f64. *ext is
 * freed with free(). */
typedef struct sensim_log_extent {
    size_t row0, nrows;
    uint64_t offset;
} sensim_log_extent;
sensim_status sensim_log_extents(const sensim_log *log, const char *dset, sensim_log_extent **ext, size_t *next,
                                 int *swap, double *factor, size_t ncols);
/* Rows [row0, row0 + nrows) of ncols doubles from the extents ext[0..next)
 * of sensim_log_extents, with pread on fd (the log's file, opened by the
 * caller) into buf, byte-swapped and scaled as those extents say: what
 * sensim_log_read_f64 gives. Safe from any number of threads. Nonzero when a
 * read comes short (the file changed): read with HDF5 then for its
 * message. Sets no error. */
int sensim_log_extents_read(int fd, const sensim_log_extent *ext, size_t next, size_t ncols, int swap,
                            const double *factor, size_t row0, size_t nrows, double *buf);
/* The unit the layout gives dataset `dset` ("rad/s", "deg,deg,m" per column,
 * "*" for any unit converted to SI), or NULL for datasets outside the
 * layout's list (images, extra fields), which are read as stored. */
const char *sensim_log_layout_units(const char *dset);
/* The factors read conversion applies to each of the ncols columns (1 for a
 * vector) of dset: 1 where no conversion happens. Errors as for reads. */
sensim_status sensim_log_units_factors(const sensim_log *log, const char *dset, size_t ncols, double *factor);
/* Checks a dataset's shape: rank and each trailing dim (dims[0] free; pass
 * trailing dims in `tail`, ntail = rank - 1). Sets *nrows. The message names
 * the file, dataset, and the shape found and expected. */
sensim_status sensim_log_check_shape(const sensim_log *log, const char *dset, int ntail, const size_t *tail,
                                     size_t *nrows);

/* Attributes of a group or dataset. Strings are malloc'd (caller frees). */
int sensim_log_has_attr(const sensim_log *log, const char *obj, const char *name);
sensim_status sensim_log_get_attr_string(const sensim_log *log, const char *obj, const char *name, char **out);
/* Reads exactly n numbers (any numeric type) into out. */
sensim_status sensim_log_get_attr_f64(const sensim_log *log, const char *obj, const char *name, double *out, size_t n);

/* Names of the members of a group (sorted), malloc'd array of malloc'd
 * strings; free with sensim_log_free_names. */
sensim_status sensim_log_list(const sensim_log *log, const char *group, char ***names, size_t *count);
void sensim_log_free_names(char **names, size_t count);

/* Checks a time vector in blocks with sensim_tcheck (sensim/guard.h):
 * floating-point, finite, strictly increasing, magnitudes and steps that can
 * be seconds, and a mean step that agrees with the rate_hz attribute of the
 * group holding it (when it has one). The error names file, dataset and
 * first bad index. Sets *n. */
sensim_status sensim_log_check_time(const sensim_log *log, const char *dset, size_t *n);

/* ---- writing ---- */

/* Creates a new log at a temporary name beside `path`, with the root
 * attributes format, format_version and created_by. */
sensim_log *sensim_log_create(const char *path, const char *created_by);
/* Attaches dimension scales, closes, renames over `path`, frees the log.
 * On failure the temporary file is removed and the target left untouched. */
sensim_status sensim_log_commit(sensim_log *log);

/* Creates a group and its parents (like mkdir -p); OK if it exists. */
sensim_status sensim_log_group(sensim_log *log, const char *group);
sensim_status sensim_log_set_attr_string(sensim_log *log, const char *obj, const char *name, const char *value);
sensim_status sensim_log_set_attr_f64(sensim_log *log, const char *obj, const char *name, const double *v, size_t n);
sensim_status sensim_log_set_attr_i64(sensim_log *log, const char *obj, const char *name, const int64_t *v, size_t n);

/* An extendible dataset with rows of shape `tail` (ntail trailing dims, 0
 * for a vector), chunked along rows (64 KiB chunks), with a `units`
 * attribute (NULL or "" for none). Parent groups are created. Rows are added
 * with sensim_log_dset_append. compress: deflate level 0 (off) to 9. */
sensim_log_dset *sensim_log_dset_create(sensim_log *log, const char *path, sensim_dtype type, int ntail,
                                        const size_t *tail, const char *units, int compress);
/* Same, for about `expect` rows in all (a hint; any number may be
 * appended): chunks grow with it to about a 64th of the dataset (64 KiB to
 * 8 MiB), so that a long series is read from several threads at once
 * (sensim_log_extents) rather than through HDF5 one block at a time.
 * expect 0 is sensim_log_dset_create. sensim_log_write passes its rows. */
sensim_log_dset *sensim_log_dset_create_sized(sensim_log *log, const char *path, sensim_dtype type, int ntail,
                                              const size_t *tail, const char *units, int compress, size_t expect);
/* Appends nrows rows from buf (type as created). */
sensim_status sensim_log_dset_append(sensim_log_dset *d, const void *buf, size_t nrows);
size_t sensim_log_dset_rows(const sensim_log_dset *d);
/* Closes the dataset handle (the data stays). NULL is a no-op. */
void sensim_log_dset_close(sensim_log_dset *d);

/* Writes a whole dataset in one call: rows x tail. */
sensim_status sensim_log_write(sensim_log *log, const char *path, sensim_dtype type, size_t nrows, int ntail,
                               const size_t *tail, const void *buf, const char *units);

/* Copies an object (group or dataset, recursively, with attributes) from
 * another log into this one at the same path. */
sensim_status sensim_log_copy(sensim_log *dst, const sensim_log *src, const char *obj);
/* Copies every attribute of obj (a group or dataset present in both logs;
 * the H5DS bookkeeping ones excepted), replacing those of the same name. */
sensim_status sensim_log_copy_attrs(sensim_log *dst, const sensim_log *src, const char *obj);

/* ---- ground truth (DESIGN.md /ground_truth) ----
 * Its rows are read, checked, written and interpolated by sensim/gt.h
 * (included above, so that a log's users have it). */

/* Progress of ground-truth reads: after each sensim_gt_read of a reader,
 * fn(ctx, row0 + count, rows of /ground_truth/t) on the reading thread.
 * Readers stream the truth forward, so this is how far along a job is. The
 * function and ctx are borrowed for the log's lifetime; NULL turns it off. */
void sensim_log_on_gt_read(sensim_log *log, void (*fn)(void *ctx, size_t rows_done, size_t rows), void *ctx);

#ifdef __cplusplus
}
#endif
#endif
