/* Progress of a long job on stderr, only when stderr is a terminal and the
 * verb was not given --quiet: one line, "sensim VERB: PART  42%", redrawn
 * in place at most every 0.2 s and cleared when done, so logs and pipes
 * never see it. One per job; not thread-safe (call from the main thread). */
#ifndef SENSIM_CLI_PROGRESS_H
#define SENSIM_CLI_PROGRESS_H

typedef struct cli_progress {
    int on;            /* stderr is a terminal and not --quiet */
    const char *verb;
    double last;       /* monotonic time of the last redraw, s */
    int drawn;         /* a line is on the screen */
    int last_pct;
    char last_part[64];
} cli_progress;

/* Starts a job's progress (quiet: never print). */
void cli_progress_init(cli_progress *p, const char *verb, int quiet);
/* The job is at `fraction` (0..1) of `part` (a sensor, "scan 3 of 10", ...). */
void cli_progress_update(cli_progress *p, const char *part, double fraction);
/* The same as a sensim_progress_fn (ctx is the cli_progress). */
void cli_progress_fn(void *ctx, const char *part, double fraction);
/* Clears the line. */
void cli_progress_done(cli_progress *p);

#endif
