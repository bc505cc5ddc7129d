/* What the benches share (not installed): their clocks. */
#ifndef SENSIM_BENCH_H
#define SENSIM_BENCH_H

#include <stdio.h>
#include <time.h>

#include "sensim/status.h"

/* Wall seconds (monotonic). */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of all threads of the process: a rate per CPU second is what
 * a loaded (shared) machine still measures fairly, the wall clock is not. */
static inline double bench_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Prints "NAME: <the library's last error>" on stderr; returns 1, main's
 * exit status. */
static inline int bench_fail(const char *name)
{
    fprintf(stderr, "%s: %s\n", name, sensim_last_error());
    return 1;
}

#endif
