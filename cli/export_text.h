/* `sensim export LOG -g GROUP --format euroc|tum`: text recordings out. */
#ifndef SENSIM_CLI_EXPORT_TEXT_H
#define SENSIM_CLI_EXPORT_TEXT_H

/* Writes GROUP of log `in` (an IMU group or /ground_truth) as `format`
 * ("euroc" or "tum") to `out` (a file, a directory for data.csv or
 * trajectory.txt, or "-"); stamps are exact integer ns (time_epoch_ns +
 * round(t * 1e9)). Returns CLI_OK or CLI_FAIL (message printed). */
int export_text(const char *verb, const char *in, const char *group, const char *format, const char *out);

#endif
