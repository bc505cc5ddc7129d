/* `sensim import FILE...`: text recordings (EuRoC, TUM, CSV) and point
 * clouds (KITTI .bin, PLY, PCD) into one new log. */
#ifndef SENSIM_CLI_IMPORT_TEXT_H
#define SENSIM_CLI_IMPORT_TEXT_H

#include "sensim/textrec.h"

typedef struct import_text_opts {
    sensim_text_opts text;  /* --format (text formats), --time-unit, --columns */
    const char *format;     /* --format as given (euroc, tum, csv, kitti, ply, pcd) or NULL */
    const char *name;       /* --name: the sensor group of an IMU or lidar input */
    double rate;            /* --rate: scans per second for clouds (0: unset) */
    const char *times;      /* --times: one stamp per scan */
    double origin[3];       /* --origin (ground truth) */
    const char *created_by; /* the command line */
} import_text_opts;

/* Imports every file into `out`; CLI_OK or CLI_FAIL (message printed). */
int import_files(const char *verb, char **files, int nfiles, const char *out, const import_text_opts *o);

#endif
