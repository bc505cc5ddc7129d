/* Shared pieces of `sensim demo`: each step after the IMU summary lives in
 * its own cli/demo/demo_<part>.c as `int demo_<part>(data, dir, gt)` and is listed
 * with its heading in demo_steps in cmd_demo.c. Not thread-safe (the verbs use
 * getopt). */
#ifndef SENSIM_CLI_DEMO_H
#define SENSIM_CLI_DEMO_H

#include <stddef.h>

#include "cli.h" /* the verbs a step may run in-process */
#include "sensim/log.h"

/* Runs a verb with a NULL-terminated argument list (at most 30), echoing it
 * as "$ sensim verb args"; returns the verb's exit status. */
int demo_run(int (*fn)(int, char **), const char *verb, ...);

int demo_dir_exists(const char *d);

/* DIR/NAME, cut at DEMO_PATH_MAX - 1 bytes, in a buffer that lives until
 * the end of the enclosing block (as CLI_JSON_G's): the files of a step. */
#define DEMO_PATH_MAX 1024
#define DEMO_PATH(dir, name) demo_path((char[DEMO_PATH_MAX]){0}, (dir), (name))
const char *demo_path(char buf[DEMO_PATH_MAX], const char *dir, const char *name);

/* Prints a step's heading, numbered in the order the steps run. */
void demo_heading(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The bundled data: `given`, else $SENSIM_DATA, else ./data when
 * ./data/rigs exists, else the folder the program was installed beside
 * (BINDIR/../share/sensim, or ../data for the build tree's program), else the
 * compiled-in SENSIM_DATADIR. Not thread-safe (a static buffer). */
const char *demo_find_data(const char *given);

/* A whole dataset of any rank as doubles (row-major); *n is its first
 * dimension.
 * NULL with the library's error set. The caller frees. */
double *demo_read_col(const sensim_log *log, const char *dset, size_t *n);

/* Step: one GNSS track per bundled model, with its horizontal error. */
int demo_gnss(const char *data, const char *dir, const char *gt);
/* Step: an hour of a static IMU, its N, B, K fitted back beside the truth. */
int demo_imufit(const char *data, const char *dir, const char *gt);

/* Step: seed 004's GNSS experiment in simulation, ranked by VEPD for two
 * generating models. */
int demo_sim2real(const char *data, const char *dir, const char *gt);
/* Step: one camera frame through the EMVA chain (PNG) and the photon-transfer
 * fit of a simulated flat-field stack against the true K, read noise and
 * dark current. */
int demo_camera(const char *data, const char *dir, const char *gt);
/* Step: a lidar scan and a camera frame of data/scenes/outdoor.yaml, with a
 * bird's-eye-view PNG of the scan and the camera PNG. */
int demo_render(const char *data, const char *dir, const char *gt);
/* Step: standstill logs of the Ch:RW and the NEO-M8N (Gauss-Markov +
 * white + outliers) presets through `sensim fit gnss`, the fitted values
 * beside the presets'. */
int demo_gnssfit(const char *data, const char *dir, const char *gt);

#endif
