/* Internal helpers for the models' YAML parsers and writers (not installed): quantities
 * that must be strictly positive, and values given either as one number for
 * all three axes or as a list of three. Errors read "file:line: key 'k':
 * ..." like the getters of sensim/yaml.h. */
#ifndef SENSIM_MODEL_YAML_H
#define SENSIM_MODEL_YAML_H

#include <math.h>
#include <stdio.h>

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

#endif
