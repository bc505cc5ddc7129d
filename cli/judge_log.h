/* The judge's input side shared by `sensim judge` and `sensim sim2real`.
 * Not thread-safe across calls sharing one cli_judge_input (one scratch
 * buffer); the log is borrowed. */
#ifndef SENSIM_CLI_JUDGE_LOG_H
#define SENSIM_CLI_JUDGE_LOG_H

#include <stddef.h>

#include "sensim/judge.h"
#include "sensim/log.h"

/* Rows read per block (and the scratch's capacity in rows of 9 values):
 * memory stays bounded for logs of any length; results do not depend on it. */
#define CLI_JUDGE_BLOCK 65536

typedef struct cli_judge_input {
    const sensim_log *log;
    char imu[512], gnss[512]; /* the sensor groups */
    char it[520], iw[560], isf[560], gt[520], genu[560], gcov[580];
    size_t n_imu, n_gnss;
    int has_cov;
    double *scratch; /* CLI_JUDGE_BLOCK * 9 values; sinks may use it between reads */
    struct cli_progress *progress; /* NULL, or told how far the IMU reads are */
} cli_judge_input;

/* Finds the IMU and GNSS (named, or the only one of each type), checks the
 * shapes of their datasets and, when align is set and the log has ground
 * truth, starts o from the truth's heading, velocity and position at the
 * first IMU sample. Prints the error under `verb` and returns its exit
 * status (CLI_OK on success; free with cli_judge_input_free). */
int cli_judge_prepare(const char *verb, const sensim_log *log, const char *imu_name, const char *gnss_name, int align,
                      sensim_judge_options *o, cli_judge_input *io);

/* Runs sensim_judge_stream over the log in blocks; errors are prefixed with
 * the log's path (not printed). */
sensim_status cli_judge_stream(cli_judge_input *io, const sensim_judge_options *o, sensim_judge_sink sink, void *ctx,
                               sensim_judge_output *counts);

void cli_judge_input_free(cli_judge_input *io);

#endif
