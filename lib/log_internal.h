/* What lib/gt.c needs of a log beyond the public API. Not installed; hidden
 * from the shared library's exports. */
#ifndef SENSIM_LOG_INTERNAL_H
#define SENSIM_LOG_INTERNAL_H

#include "sensim/log.h"

#pragma GCC visibility push(hidden)

/* Tells the log's sensim_log_on_gt_read function (if any) that a reader has
 * read the ground truth up to row rows_done. */
void sensim_log_report_gt_read(const sensim_log *log, size_t rows_done);

#pragma GCC visibility pop

#endif
