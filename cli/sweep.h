/* sensim sim2real --sweep and --scores (cli/sweep.c). */
#ifndef SENSIM_CLI_SWEEP_H
#define SENSIM_CLI_SWEEP_H

#include "sensim/metrics.h"

/* Scores the grid points of SWEEP (its part --shard I/N when shard is not
 * NULL) and writes their table to out; prints the rows. */
int cli_sweep_run(const sensim_sim2real_opts *base, int generator, const char *sweep, const char *shard,
                  const char *out, int quiet, const char *created);
/* A table back as CSV (csv NULL or "-": standard output) and, with plot, an
 * SVG of VEPD against the first key. */
int cli_sweep_scores(const char *table, const char *csv, const char *plot);

#endif
