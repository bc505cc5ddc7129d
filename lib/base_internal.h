/* What every folder of the library (and the program) shares beyond the
 * public API: small helpers of the base layer. Not installed; header-only,
 * so nothing here is exported. Other folders include it as
 * "../lib/base_internal.h" (a downward include, tests/layering.py). */
#ifndef SENSIM_BASE_INTERNAL_H
#define SENSIM_BASE_INTERNAL_H

#include <stdlib.h>

#include "sensim/status.h"

/* A zeroed object for a constructor: calloc(1, size), or NULL with the error
 * "<what>: out of memory" set ("out of memory" when what is NULL). */
static inline void *sensim_new_(size_t size, const char *what)
{
    void *p = calloc(1, size);
    if (!p && what)
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", what);
    else if (!p)
        sensim_error(SENSIM_ENOMEM, "out of memory");
    return p;
}

/* free()s p[0] .. p[n-1] in order. */
static inline void sensim_free_all_(void *const *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i]);
}

/* Frees each pointer argument in order, for destroy functions that release
 * an object's buffers and then the object: SENSIM_FREE_ALL(o->a, o->b, o).
 * Every argument is read into the array before the first free, so the
 * object itself may come last. NULL arguments are no-ops, as for free(). */
#define SENSIM_FREE_ALL(...) \
    sensim_free_all_((void *[]){__VA_ARGS__}, sizeof((void *[]){__VA_ARGS__}) / sizeof(void *))

#endif
