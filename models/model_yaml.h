/* Internal helpers for the models' YAML parsers and writers and their rig
 * adapters (not installed): quantities that must be strictly positive,
 * values given either as one number for all three axes or as a list of
 * three, names chosen from a list. Errors read "file:line: key 'k': ..."
 * like the getters of sensim/yaml.h. */
#ifndef SENSIM_MODEL_YAML_H
#define SENSIM_MODEL_YAML_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sensim/rig.h"
#include "sensim/yaml.h"

/* Optional key, value > 0 (lo_open) or >= 0; *out unchanged when absent. */
static inline sensim_status my_get_bounded(const sensim_ynode *map, const char *key, sensim_dim dim, int required,
                                           int strict, double *out)
{
    const sensim_ynode *v = sensim_ynode_get(map, key);
    if (!v)
        return required ? sensim_ynode_error(map, SENSIM_ENOTFOUND, "missing key '%s'", key) : SENSIM_OK;
    char what[96];
    snprintf(what, sizeof what, "key '%s'", key);
    double x;
    sensim_status st = sensim_ynode_as_quantity(v, what, dim, &x);
    if (st)
        return st;
    if (strict ? !(x > 0.0) : !(x >= 0.0))
        return sensim_ynode_error(v, SENSIM_EINVAL, "key '%s': must be %s 0 (got %g)", key, strict ? ">" : ">=", x);
    if (!isfinite(x))
        return sensim_ynode_error(v, SENSIM_EINVAL, "key '%s': must be finite (got %g)", key, x);
    *out = x;
    return SENSIM_OK;
}

/* One number for all axes or a list of three, each >= 0 (> 0 if strict). */
static inline sensim_status my_get_axes(const sensim_ynode *map, const char *key, sensim_dim dim, int required,
                                        int strict, double out[3])
{
    const sensim_ynode *v = sensim_ynode_get(map, key);
    if (!v)
        return required ? sensim_ynode_error(map, SENSIM_ENOTFOUND, "missing key '%s'", key) : SENSIM_OK;
    if (sensim_ynode_kind_of(v) == SENSIM_YNODE_SCALAR) {
        double x = 0;
        sensim_status st = my_get_bounded(map, key, dim, 1, strict, &x);
        if (st)
            return st;
        out[0] = out[1] = out[2] = x;
        return SENSIM_OK;
    }
    double x[3];
    sensim_status st = sensim_ynode_get_vector(map, key, dim, 1, 3, x);
    if (st)
        return st;
    for (int a = 0; a < 3; a++)
        if (strict ? !(x[a] > 0.0) : !(x[a] >= 0.0))
            return sensim_ynode_error(sensim_ynode_item(v, (size_t)a) ? sensim_ynode_item(v, (size_t)a) : v,
                                      SENSIM_EINVAL, "key '%s': item %d must be %s 0 (got %g)", key, a,
                                      strict ? ">" : ">=", x[a]);
    for (int a = 0; a < 3; a++)
        out[a] = x[a];
    return SENSIM_OK;
}

/* The string at key as its index in names[n]; *index unchanged when the
 * key is absent. Another string is refused with "key 'k': unknown <what>
 * 'v' (expected <lead>names, comma-separated)". */
static inline sensim_status my_get_name(const sensim_ynode *map, const char *key, int required, const char *what,
                                        const char *lead, const char *const *names, size_t n, int *index)
{
    const char *v = NULL;
    sensim_status st = sensim_ynode_get_string(map, key, required, &v);
    if (st || !v)
        return st;
    char expected[256] = "";
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(v, names[i])) {
            *index = (int)i;
            return SENSIM_OK;
        }
        snprintf(expected + strlen(expected), sizeof expected - strlen(expected), "%s%s", i ? ", " : lead, names[i]);
    }
    return sensim_ynode_error(sensim_ynode_get(map, key), SENSIM_EINVAL, "key '%s': unknown %s '%s' (expected %s)", key,
                              what, v, expected);
}

/* A mapping-valued key: NULL when absent; an error when not a mapping. */
static inline sensim_status my_get_map(const sensim_ynode *map, const char *key, const char *const *allowed,
                                       const sensim_ynode **out)
{
    *out = sensim_ynode_get(map, key);
    if (!*out)
        return SENSIM_OK;
    char what[96];
    snprintf(what, sizeof what, "'%s'", key);
    return sensim_ynode_check_keys(*out, what, allowed);
}

/* Writes key: v unless v equals the default dflt (the writers of the
 * *_rig.c files leave defaults out). */
static inline void put_if(sensim_ywriter *w, const char *key, double v, double dflt)
{
    if (v == dflt)
        return;
    sensim_ywriter_key(w, key);
    sensim_ywriter_number(w, v);
}

/* One member of a parameter struct as a YAML key, for the parser and the
 * writer of a flat mapping to share (sensim_<type>_params_from_yaml and
 * sensim_<type>_write_yaml): a double (or with MY_INT an int) at offset,
 * read as a quantity of dimension dim within [lo, hi], written when it
 * differs from the default. A table ends with a NULL key. */
enum {
    MY_FREE = 1u << 0,   /* any finite value (lo, hi unused) */
    MY_PLAIN = 1u << 1,  /* a plain number, without a unit */
    MY_INT = 1u << 2,    /* an int member, integer in [lo, hi] */
    MY_ALWAYS = 1u << 3  /* written even at its default (fitted terms) */
};

typedef struct my_field {
    const char *key;
    size_t offset;
    const sensim_dim *dim; /* SENSIM_DIM_* (a pointer: those are objects) */
    double lo, hi;
    unsigned flags;
} my_field;

/* The mapping's keys: extra (NULL for none) and the table's. */
static inline sensim_status my_check_fields(const sensim_ynode *map, const char *what, const char *extra,
                                            const my_field *f)
{
    const char *keys[64];
    size_t n = 0;
    if (extra)
        keys[n++] = extra;
    for (; f->key && n + 1 < sizeof keys / sizeof *keys; f++)
        keys[n++] = f->key;
    keys[n] = NULL;
    return sensim_ynode_check_keys(map, what, keys);
}

/* Reads the table's keys present in map into the struct at params, in
 * table order; absent keys leave their member as it is. */
static inline sensim_status my_get_fields(const sensim_ynode *map, const my_field *f, void *params)
{
    sensim_status st = SENSIM_OK;
    for (; f->key && !st; f++) {
        double *v = (double *)(void *)((char *)params + f->offset);
        if (f->flags & MY_INT) {
            int *iv = (int *)(void *)((char *)params + f->offset);
            long long x = *iv;
            if ((st = sensim_ynode_get_int(map, f->key, 0, &x)))
                break;
            if (!((double)x >= f->lo && (double)x <= f->hi))
                return sensim_ynode_error(sensim_ynode_get(map, f->key), SENSIM_EINVAL,
                                          "key '%s': %lld must be in %.0f..%.0f", f->key, x, f->lo, f->hi);
            *iv = (int)x;
        } else if (f->flags & MY_PLAIN)
            st = sensim_ynode_get_double(map, f->key, 0, v);
        else if (f->flags & MY_FREE)
            st = sensim_ynode_get_quantity(map, f->key, *f->dim, 0, v);
        else
            st = sensim_ynode_get_quantity_range(map, f->key, *f->dim, 0, f->lo, f->hi, v);
    }
    return st;
}

/* The member of f in the struct at params, as a double (an int one
 * converted). */
static inline double my_field_value(const my_field *f, const void *params)
{
    const char *p = (const char *)params + f->offset;
    if (f->flags & MY_INT) {
        int v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    double v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Writes the table's members of params that differ from dflt (all of the
 * MY_ALWAYS ones), in table order. */
static inline void my_put_fields(sensim_ywriter *w, const my_field *f, const void *params, const void *dflt)
{
    for (; f->key; f++) {
        double v = my_field_value(f, params), d = my_field_value(f, dflt);
        if (f->flags & MY_INT) {
            if (v != d) {
                sensim_ywriter_key(w, f->key);
                sensim_ywriter_int(w, (long long)v);
            }
        } else if (f->flags & MY_ALWAYS) {
            sensim_ywriter_key(w, f->key);
            sensim_ywriter_number(w, v);
        } else
            put_if(w, f->key, v, d);
    }
}

/* Whether any of the table's members differs from the default. */
static inline int my_fields_set(const my_field *f, const void *params, const void *dflt)
{
    for (; f->key; f++)
        if (my_field_value(f, params) != my_field_value(f, dflt))
            return 1;
    return 0;
}

/* Opens the block mapping of key. */
static inline void my_block_begin(sensim_ywriter *w, const char *key)
{
    sensim_ywriter_key(w, key);
    sensim_ywriter_map_begin(w, 0);
}

/* Opens a block mapping that starts with `model: name`, the key the
 * parsers choose a model block by. */
static inline void my_model_begin(sensim_ywriter *w, const char *name)
{
    sensim_ywriter_map_begin(w, 0);
    sensim_ywriter_key(w, "model");
    sensim_ywriter_string(w, name);
}

/* A rig adapter's error for parameters its model refused (the model's
 * create failed): "file:line: sensor 'name': <the model's message>". */
static inline sensim_status my_refused(const sensim_sensor *s)
{
    return sensim_ynode_error(s->node, sensim_last_status(), "sensor '%s': %s", s->name, sensim_last_error());
}

/* The simulate of the camera and lidar types: their frames and scans are
 * made by `sensim render`; inject only adds noise to recorded ones
 * (noise_clean). */
static inline sensim_status my_render_only(const sensim_sensor *s, const sensim_inject_opts *o, const sensim_log *in,
                                           sensim_log *out)
{
    (void)o;
    (void)out;
    const int camera = !strcmp(s->type->type, "camera");
    return sensim_error(SENSIM_EUNSUPPORTED, "%s: no /sensors/%s/%s to add noise to; %s are made by `sensim render`",
                        sensim_log_path(in), s->name, camera ? "image" : "points",
                        camera ? "camera frames" : "lidar scans");
}

#endif
