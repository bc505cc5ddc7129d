/* A sensor series read in blocks for allan and fit imu: the 3 or 6 axes of
 * an HDF5 log's sensor (hyperslabs of its datasets) or of a recording's
 * topic (streamed once through cli_bag_stream into an unlinked temporary
 * file), as a sensim_allan_source, so memory does not grow with the log. */
#ifndef SENSIM_SERIES_STREAM_H
#define SENSIM_SERIES_STREAM_H

#include <stddef.h>

#include "sensim/allan.h"
#include "sensim/status.h"

typedef struct cli_stream cli_stream;

/* quantities[0..nq) (nq 1 or 2), each 3 axes, as 3 * nq axes; the rate as
 * cli_series_h5 / cli_bag_series_rate take it (given, checked, or found). The
 * open reads everything a bag holds (stamps, order); a log's samples are
 * read, and checked for NaN/Inf, when the computation asks for them. */
sensim_status cli_stream_open_h5(const char *path, const char *sensor, const char *const *quantities, size_t nq,
                                 double rate, cli_stream **out);
sensim_status cli_stream_open_bag(const char *path, const char *topic, const char *const *quantities, size_t nq,
                                  double rate, cli_stream **out);
size_t cli_stream_n(const cli_stream *s);
double cli_stream_rate(const cli_stream *s);
const char *cli_stream_units(const cli_stream *s); /* of the first quantity */
/* The source for sensim_allan_compute_stream. */
sensim_allan_source cli_stream_source(cli_stream *s);
/* Whether the last error came from reading the file (its message names the
 * file and dataset already). */
int cli_stream_failed(const cli_stream *s);
void cli_stream_close(cli_stream *s);
/* The memory budget for sensim_allan_compute_stream: $SENSIM_ALLAN_MB
 * (MiB) when set to a positive number, else 0 (the library's default). */
size_t cli_stream_budget(void);

#endif
