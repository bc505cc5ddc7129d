/* One-line progress on a terminal's stderr (see progress.h). */
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_init(cli_progress *p, const char *verb, int quiet)
{
    memset(p, 0, sizeof *p);
    p->on = !quiet && isatty(STDERR_FILENO);
    p->verb = verb;
    p->last_pct = -1;
}

void cli_progress_update(cli_progress *p, const char *part, double fraction)
{
    if (!p->on)
        return;
    if (!(fraction >= 0))
        fraction = 0;
    if (fraction > 1)
        fraction = 1;
    int pct = (int)(100 * fraction);
    double t = now();
    int same_part = !strncmp(part, p->last_part, sizeof p->last_part - 1);
    /* Redraw on a new part, on reaching 100 %, or every 0.2 s. */
    if (same_part && pct == p->last_pct)
        return;
    if (same_part && pct < 100 && t - p->last < 0.2)
        return;
    fprintf(stderr, "\r\033[Ksensim %s: %s %3d%%", p->verb, part, pct);
    fflush(stderr);
    p->drawn = 1;
    p->last = t;
    p->last_pct = pct;
    snprintf(p->last_part, sizeof p->last_part, "%s", part);
}

void cli_progress_fn(void *ctx, const char *part, double fraction) { cli_progress_update(ctx, part, fraction); }

void cli_progress_done(cli_progress *p)
{
    if (p->on && p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->drawn = 0;
}
