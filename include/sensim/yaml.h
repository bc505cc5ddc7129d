/* sensim/yaml.h - YAML documents (libyaml) as a read-only tree that keeps the
 * file name and line of every node, for error messages of the form
 * "rig.yaml:12: key 'sigma': must be >= 0".
 *
 * Ownership: a sensim_yaml owns all its nodes and strings; nodes and strings
 * returned by accessors are borrowed until sensim_yaml_free. The tree is
 * immutable after loading, so several threads may read it at once.
 *
 * Anchors and aliases are resolved; merge keys ("<<") are not supported and
 * are reported. Duplicate keys in one mapping are errors. */
#ifndef SENSIM_YAML_H
#define SENSIM_YAML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sensim/status.h"
#include "sensim/units.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sensim_yaml sensim_yaml;
typedef struct sensim_ynode sensim_ynode;

typedef enum sensim_ynode_kind {
    SENSIM_YNODE_SCALAR,
    SENSIM_YNODE_SEQUENCE,
    SENSIM_YNODE_MAPPING
} sensim_ynode_kind;

/* Loads the first document of a file; NULL on error, with "file:line:col:
 * message" for syntax errors and the file named for I/O. Only regular files
 * of at most SENSIM_YAML_MAX_BYTES are read (a FIFO, a device or a
 * directory is refused, see sensim_input_check). */
#define SENSIM_YAML_MAX_BYTES (64.0 * 1024 * 1024)
sensim_yaml *sensim_yaml_load_file(const char *path);
/* Same from memory; `name` stands for the file name in messages. */
sensim_yaml *sensim_yaml_load_string(const char *text, size_t len, const char *name);
void sensim_yaml_free(sensim_yaml *doc);
/* The document's text as read (for recording a model in an output file). */
const char *sensim_yaml_text(const sensim_yaml *doc);
const char *sensim_yaml_name(const sensim_yaml *doc);
const sensim_ynode *sensim_yaml_root(const sensim_yaml *doc);

sensim_ynode_kind sensim_ynode_kind_of(const sensim_ynode *n);
int sensim_ynode_line(const sensim_ynode *n); /* 1-based */
const char *sensim_ynode_file(const sensim_ynode *n);
/* Scalar text, or NULL for a non-scalar. */
const char *sensim_ynode_scalar(const sensim_ynode *n);
/* Number of items (sequence) or pairs (mapping); 0 for a scalar. */
size_t sensim_ynode_size(const sensim_ynode *n);
/* Sequence item i, or NULL. */
const sensim_ynode *sensim_ynode_item(const sensim_ynode *n, size_t i);
/* Mapping pair i: key text and value node. */
const char *sensim_ynode_key_at(const sensim_ynode *n, size_t i);
const sensim_ynode *sensim_ynode_value_at(const sensim_ynode *n, size_t i);
/* Value of `key` in a mapping, or NULL when absent (or n not a mapping). */
const sensim_ynode *sensim_ynode_get(const sensim_ynode *n, const char *key);

/* Every key of mapping n must be in the NULL-terminated list `allowed`;
 * otherwise SENSIM_EINVAL "file:line: unknown key 'x' in <what> (expected one
 * of: a, b, c)". Also fails if n is not a mapping. */
sensim_status sensim_ynode_check_keys(const sensim_ynode *n, const char *what, const char *const *allowed);

/* Typed getters on mapping `map`. If the key is absent: when `required`, an
 * error "file:line: missing key 'k'" (line of the mapping); otherwise *out is
 * left unchanged and SENSIM_OK returned (so callers preset defaults). Type
 * errors name file, line and key. A NULL `map` (an absent optional block)
 * holds no keys. Null values ("k:" or "k: ~") are type errors. */
sensim_status sensim_ynode_get_double(const sensim_ynode *map, const char *key, int required, double *out);
/* A quantity with optional unit string, converted to SI and checked against
 * `dim` (see sensim/units.h): "0.66 deg/sqrt(h)" for an ARW key. */
sensim_status sensim_ynode_get_quantity(const sensim_ynode *map, const char *key, sensim_dim dim, int required,
                                        double *out);
/* Same with a range check: lo <= value <= hi (use -INFINITY/INFINITY). */
sensim_status sensim_ynode_get_quantity_range(const sensim_ynode *map, const char *key, sensim_dim dim,
                                              int required, double lo, double hi, double *out);
sensim_status sensim_ynode_get_int(const sensim_ynode *map, const char *key, int required, long long *out);
sensim_status sensim_ynode_get_uint64(const sensim_ynode *map, const char *key, int required, uint64_t *out);
sensim_status sensim_ynode_get_bool(const sensim_ynode *map, const char *key, int required, int *out);
/* Borrowed string. */
sensim_status sensim_ynode_get_string(const sensim_ynode *map, const char *key, int required, const char **out);
/* A sequence of exactly n quantities (each may carry a unit), e.g. a lever
 * arm [0.1, 0, "5 cm"] or a 3x3 matrix given as 9 numbers or 3 rows of 3. */
sensim_status sensim_ynode_get_vector(const sensim_ynode *map, const char *key, sensim_dim dim, int required,
                                      size_t n, double *out);
/* Same for a node rather than a key. */
sensim_status sensim_ynode_as_quantity(const sensim_ynode *n, const char *what, sensim_dim dim, double *out);

/* Formats "file:line: " for node n into an error; returns status. */
sensim_status sensim_ynode_error(const sensim_ynode *n, sensim_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- writing ----
 * A YAML document written with libyaml's emitter, so that every string is
 * quoted as YAML needs (a sensor named "imu: #1" comes back as that name).
 * The root is a block mapping. Calls append to the innermost open mapping
 * or sequence: in a mapping, a key then its value. Errors are sticky: after
 * the first, calls do nothing and sensim_ywriter_close returns it.
 * Numbers are written with 17 significant digits, so a finite double reads
 * back bit for bit; a non-finite one is an error (sensim's getters refuse
 * them). Comments cannot be emitted: write them to the FILE before
 * sensim_ywriter_create.
 * Ownership: the FILE is borrowed (left open); one writer per thread. */
typedef struct sensim_ywriter sensim_ywriter;

/* Starts a document on f; NULL on error (out of memory). */
sensim_ywriter *sensim_ywriter_create(FILE *f);
/* Ends the open collections and the document, flushes, frees w and returns
 * the first error of any call (SENSIM_EIO for a failed write). NULL: OK. */
sensim_status sensim_ywriter_close(sensim_ywriter *w);
void sensim_ywriter_key(sensim_ywriter *w, const char *key);
void sensim_ywriter_string(sensim_ywriter *w, const char *s);
void sensim_ywriter_number(sensim_ywriter *w, double x);
void sensim_ywriter_uint(sensim_ywriter *w, uint64_t x);
void sensim_ywriter_int(sensim_ywriter *w, long long x);
void sensim_ywriter_bool(sensim_ywriter *w, int x);
/* n numbers as a flow sequence "[a, b, c]". */
void sensim_ywriter_numbers(sensim_ywriter *w, const double *x, size_t n);
/* A nested mapping or sequence; flow: on one line ({a: 1} or [1, 2]). */
void sensim_ywriter_map_begin(sensim_ywriter *w, int flow);
void sensim_ywriter_map_end(sensim_ywriter *w);
void sensim_ywriter_seq_begin(sensim_ywriter *w, int flow);
void sensim_ywriter_seq_end(sensim_ywriter *w);

#ifdef __cplusplus
}
#endif
#endif
