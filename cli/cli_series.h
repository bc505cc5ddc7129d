/* Helpers shared by the calibration verbs (allan, fit): reading a series of
 * samples from a one-column CSV or an HDF5 sensor group, with its rate. */
#ifndef SENSIM_CLI_SERIES_H
#define SENSIM_CLI_SERIES_H

#include <stddef.h>

#include "sensim/status.h"

typedef struct cli_series {
    double *x;      /* n * naxes, interleaved (malloc'd) */
    size_t n;       /* samples per axis */
    size_t naxes;   /* 1 (CSV) or 3 (HDF5 vector quantity) */
    double rate;    /* Hz */
    char units[32]; /* from the dataset's units attribute, or "" */
} cli_series;

void cli_series_free(cli_series *s);

/* Reads column `column` (0-based) of a CSV file; rate must be given (> 0). */
sensim_status cli_series_csv(const char *path, size_t column, double rate, cli_series *s);

/* Reads /sensors/<sensor>/<quantity> (N x 3) of a log. The rate is, in order:
 * `rate` if > 0, the group's rate_hz attribute, 1 / median spacing of t.
 * A given rate or the rate_hz attribute must agree with the timestamps, when
 * there are any, within 1% (SENSIM_EDATA; the message names both). Missing sensor or quantity: SENSIM_ENOTFOUND
 * naming file and dataset, listing the sensors present. */
sensim_status cli_series_h5(const char *path, const char *sensor, const char *quantity, double rate, cli_series *s);

/* The same checks, rate and units without reading the samples: s->x stays
 * NULL (cli_series_stream.h reads them in blocks). */
sensim_status cli_series_h5_info(const char *path, const char *sensor, const char *quantity, double rate,
                                 cli_series *s);

#endif
