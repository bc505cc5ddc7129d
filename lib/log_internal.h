/* What lib/gt.c and lib/stitch.c need of a log beyond the public API. Not
 * installed; hidden from the shared library's exports. */
#ifndef SENSIM_LOG_INTERNAL_H
#define SENSIM_LOG_INTERNAL_H

#include <hdf5.h>

#include "sensim/log.h"

#pragma GCC visibility push(hidden)

/* Tells the log's sensim_log_on_gt_read function (if any) that a reader has
 * read the ground truth up to row rows_done. */
void sensim_log_report_gt_read(const sensim_log *log, size_t rows_done);

/* Makes every group's 1-D `t` a dimension scale (H5DS) and attaches it to
 * dimension 0 of each dataset beside it with as many rows (once: scales and
 * attachments already there are kept). Non-zero when HDF5 refused one. */
int sensim_log_attach_scales_(hid_t file);

/* HDF5 prints its error stack to stderr unless told not to, and the setting
 * belongs to the host program too (one per thread in a thread-safe HDF5,
 * else one per process). sensim reports HDF5's failures itself, so each
 * public function that calls HDF5 switches the printing off for its own
 * calls and puts the caller's setting back when it returns (nested calls
 * save and restore the same way): H5_QUIET_SCOPE() at its top. */
typedef struct {
    H5E_auto2_t func;
    void *data;
    int saved;
} h5_quiet;

static inline h5_quiet h5_quiet_begin(void)
{
    h5_quiet q = {NULL, NULL, 0};
    if (H5Eget_auto2(H5E_DEFAULT, &q.func, &q.data) >= 0) {
        q.saved = 1;
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    }
    return q;
}

static inline void h5_quiet_end(h5_quiet *q)
{
    if (q->saved)
        H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

#define H5_QUIET_SCOPE() h5_quiet h5_quiet_ __attribute__((cleanup(h5_quiet_end), unused)) = h5_quiet_begin()

/* Closes id, whatever kind of HDF5 object it names, by that kind's close
 * call; a negative id (an open or get that failed) is skipped, so cleanup
 * paths need no test per handle. */
static inline void h5_close(hid_t id)
{
    switch (id < 0 ? H5I_BADID : H5Iget_type(id)) {
    case H5I_FILE: H5Fclose(id); break;
    case H5I_GROUP: H5Gclose(id); break;
    case H5I_DATATYPE: H5Tclose(id); break;
    case H5I_DATASPACE: H5Sclose(id); break;
    case H5I_DATASET: H5Dclose(id); break;
    case H5I_ATTR: H5Aclose(id); break;
    case H5I_GENPROP_LST: H5Pclose(id); break;
    default: break;
    }
}

#pragma GCC visibility pop

#endif
