/* What every folder of the library (and the program) shares beyond the
 * public API: small helpers of the base layer. Not installed; header-only,
 * so nothing here is exported. Other folders include it as
 * "../lib/base_internal.h" (a downward include, tests/layering.py). */
#ifndef SENSIM_BASE_INTERNAL_H
#define SENSIM_BASE_INTERNAL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

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

/* A buffer for pread: n bytes (at least one) on a 64-byte boundary, freed
 * with free(), or NULL. The kernel copies from the page cache with rep
 * movsb, which on some CPUs (AMD Zen 3) runs at a third of its speed into
 * a destination that is not 32-byte aligned: malloc's large blocks start
 * 16 bytes into a page. */
static inline void *sensim_read_buf_(size_t n)
{
    size_t r = n ? (n + 63) / 64 * 64 : 64;
    return r < n ? NULL : aligned_alloc(64, r);
}

/* The next line of f into *line (getline's buffer and capacity), counted
 * in *lineno: its length, or -1 at the end of the file, or on a read error
 * with *st set to "path:N: read error: ..." (N the line it was reading). */
static inline ssize_t sensim_getline_(char **line, size_t *cap, FILE *f, const char *path, size_t *lineno,
                                      sensim_status *st)
{
    errno = 0;
    ssize_t n = getline(line, cap, f);
    if (n < 0) {
        if (ferror(f))
            *st = sensim_error(SENSIM_EIO, "%s:%zu: read error: %s", path, *lineno + 1, strerror(errno));
        return -1;
    }
    ++*lineno;
    return n;
}

/* A text file read a line at a time: its path (a copy, for messages), the
 * stream, getline's buffer and the number of lines read. */
typedef struct {
    char *path;
    FILE *f;
    char *line;
    size_t cap, lineno;
} sensim_lines_;

/* Opens path for reading line by line into the zeroed *l: SENSIM_OK, or
 * the error "<path>: out of memory" or "<path>: cannot open: <reason>"
 * set. sensim_lines_close_ it either way. */
static inline sensim_status sensim_lines_open_(sensim_lines_ *l, const char *path)
{
    if (!(l->path = strdup(path)))
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
    if (!(l->f = fopen(path, "r")))
        return sensim_error(errno == ENOENT ? SENSIM_ENOTFOUND : SENSIM_EIO, "%s: cannot open: %s", path,
                            strerror(errno));
    return SENSIM_OK;
}

/* The next line into l->line (sensim_getline_): its length, or -1 at the
 * end of the file or on a read error (*st set). */
static inline ssize_t sensim_lines_next_(sensim_lines_ *l, sensim_status *st)
{
    return sensim_getline_(&l->line, &l->cap, l->f, l->path, &l->lineno, st);
}

static inline void sensim_lines_close_(sensim_lines_ *l)
{
    if (l->f)
        fclose(l->f);
    free(l->line);
    free(l->path);
}

/* Room for need elements of size bytes in the array whose pointer is at
 * arrp (its capacity *cap, in elements, doubled from first when 0): 0, or
 * -1 with the array and *cap unchanged when realloc fails. */
static inline int sensim_reserve_(void *arrp, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : first;
    while (c < need)
        c *= 2;
    void *a;
    memcpy(&a, arrp, sizeof a);
    if (!(a = realloc(a, c * size)))
        return -1;
    memcpy(arrp, &a, sizeof a);
    *cap = c;
    return 0;
}

/* A growing list of copies of strings ({0} when empty; free with
 * sensim_namelist_free_): the names an HDF5 iteration lists. */
typedef struct {
    char **names;
    size_t n, cap;
    int oom; /* an add ran out of memory (the list holds the names before) */
} sensim_namelist_;

/* Appends a copy of s: 0, or -1 with l->oom set when out of memory. */
static inline int sensim_namelist_add_(sensim_namelist_ *l, const char *s)
{
    char *c = NULL;
    if (sensim_reserve_(&l->names, &l->cap, l->n + 1, sizeof *l->names, 16) || !(c = strdup(s))) {
        l->oom = 1;
        return -1;
    }
    l->names[l->n++] = c;
    return 0;
}

static inline void sensim_namelist_free_(sensim_namelist_ *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}

/* The directory part of path into buf: "." for a bare name, "/" for a
 * name in the root (truncated to size). */
static inline void sensim_path_dir_(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, size, ".");
    else if (slash == path)
        snprintf(buf, size, "/");
    else
        snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

/* Splits the text s in place at each delim (with runs: at each run of
 * delims, leading and trailing ones ignored) and stores trim(cell) for the
 * first max cells. Returns the number of cells, which may exceed max. */
static inline size_t sensim_split_cells_(char *s, char delim, int runs, char *(*trim)(char *), char **cells,
                                         size_t max)
{
    size_t n = 0;
    char *p = s;
    for (;;) {
        if (runs)
            while (*p == delim)
                p++;
        char *end = strchr(p, delim);
        if (end)
            *end = '\0';
        if (n < max)
            cells[n] = trim(p);
        n++;
        if (!end)
            break;
        p = end + 1;
        if (runs) {
            while (*p == delim)
                p++;
            if (!*p)
                break;
        }
    }
    return n;
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
