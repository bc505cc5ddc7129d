/* Shared pieces of the demo steps: running a verb in-process with its
 * command echoed, and reading whole datasets back for the summaries. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demo.h"

#ifndef SENSIM_DATADIR
#define SENSIM_DATADIR "/usr/local/share/sensim"
#endif

/* Runs a verb in-process with a NULL-terminated argument list, echoing it. */
int demo_run(int (*fn)(int, char **), const char *verb, ...)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)verb;
    va_list ap;
    va_start(ap, verb);
    for (char *a = va_arg(ap, char *); a && argc < 31; a = va_arg(ap, char *))
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    printf("\n$ sensim");
    for (int i = 0; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\n");
    fflush(stdout);
    return fn(argc, argv);
}

const char *demo_path(char buf[DEMO_PATH_MAX], const char *dir, const char *name)
{
    snprintf(buf, DEMO_PATH_MAX, "%s/%s", dir, name);
    return buf;
}

/* DIR/rigs exists: the folder holds sensim's data. */
static int has_rigs(const char *dir)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s/rigs", dir) >= (int)sizeof p)
        return 0;
    return demo_dir_exists(p);
}

/* The bundled data from the program's folder, so that an installed tree
 * works wherever it was put: BINDIR/../share/sensim. */
static const char *exe_relative(char *buf, size_t size)
{
    char exe[PATH_MAX];
    if (!cli_program_dir(exe, sizeof exe))
        return NULL;
    /* Installed: PREFIX/bin/sensim with PREFIX/share/sensim; built: BUILD/sensim
     * with the source tree's data/ beside BUILD. */
    static const char *const rel[] = {"../share/sensim", "../data"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof p, "%s/%s", exe, rel[i]);
        if (has_rigs(p) && size >= PATH_MAX && realpath(p, buf))
            return buf;
    }
    return NULL;
}

const char *demo_find_data(const char *given)
{
    static char found[PATH_MAX];
    if (given)
        return given;
    const char *env = getenv("SENSIM_DATA");
    if (env && *env)
        return env;
    if (has_rigs("data"))
        return "data";
    const char *rel = exe_relative(found, sizeof found);
    if (rel)
        return rel;
    return SENSIM_DATADIR;
}

int demo_dir_exists(const char *d)
{
    struct stat st;
    return stat(d, &st) == 0 && S_ISDIR(st.st_mode);
}

double *demo_read_col(const sensim_log *log, const char *dset, size_t *n)
{
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK];
    if (sensim_log_shape(log, dset, &rank, dims))
        return NULL;
    size_t cols = 1;
    for (int r = 1; r < rank; r++)
        cols *= dims[r];
    double *x = malloc(dims[0] * cols * sizeof *x);
    if (x && sensim_log_read_f64(log, dset, 0, dims[0], x)) {
        free(x);
        return NULL;
    }
    *n = dims[0];
    return x;
}

static int demo_step_no;

void demo_heading(const char *fmt, ...)
{
    printf("\n%d. ", ++demo_step_no);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}
