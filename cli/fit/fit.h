/* The camera, lidar and gnss parts of `sensim fit`, for cli/fit/cmd_fit.c to dispatch
 * to (`sensim fit camera ...`, `sensim fit lidar ...`, `sensim fit gnss ...`).
 * argv[0] is the sub-verb ("camera", "lidar" or "gnss"); options are parsed with getopt_long.
 * Exit status 0 success, 1 failure, 2 usage error; the output YAML is
 * written to a temporary name and renamed. */
#ifndef SENSIM_CLI_FIT_H
#define SENSIM_CLI_FIT_H

#include "cli.h"

int cli_fit_camera(int argc, char **argv);
int cli_fit_lidar(int argc, char **argv);
int cli_fit_gnss(int argc, char **argv);
extern const cli_spec cli_fit_camera_spec, cli_fit_lidar_spec, cli_fit_gnss_spec;

/* After the options of a kind that reads one file and writes -o OUTPUT.yaml
 * (camera, lidar): the file in *in, `what` naming it in the usage error
 * ("STACK.h5"). Returns CLI_OK, or the exit status of the usage error or of
 * cli_check_output's refusal. */
int cli_fit_input(const char *verb, int argc, char **argv, const char *what, const char *out, const char **in);

#endif
