/* sensim/afile.h: files written under a temporary name beside the target and
 * renamed into place only when complete, so that a failure never leaves a
 * broken file and never touches an existing one.
 *
 * Ownership: sensim_afile_open returns a handle the caller must pass to
 * exactly one of sensim_afile_commit or sensim_afile_abort; both free it.
 * The FILE* belongs to the handle: never fclose it yourself.
 * Thread safety: a handle is used by one thread at a time; distinct handles
 * are independent. */
#ifndef SENSIM_AFILE_H
#define SENSIM_AFILE_H

#include <stdio.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sensim_afile sensim_afile;

/* Creates "<path>.tmp-XXXXXX" beside path with the mode a plain create would
 * give (0666 less the umask). NULL with the error set when it cannot. */
sensim_afile *sensim_afile_open(const char *path);

/* The stream to write to (binary; "w" semantics). */
FILE *sensim_afile_stream(const sensim_afile *a);

/* The temporary name, for writers that need a path (HDF5, libpng). */
const char *sensim_afile_tmp_path(const sensim_afile *a);

/* Flushes, checks for write errors, closes and renames into place. On any
 * failure the temporary file is removed, path is untouched and the error
 * names path. Frees a in every case. */
sensim_status sensim_afile_commit(sensim_afile *a);

/* Closes and removes the temporary file; path is untouched. NULL is a no-op. */
void sensim_afile_abort(sensim_afile *a);

/* Refuses to write over an input: SENSIM_EINVAL, naming both, when output
 * and input name the same file (same device and inode, so symbolic and
 * hard links count). SENSIM_OK when they differ, when output does not exist
 * yet or input is NULL. Called by every verb that writes, before it reads,
 * for each of its inputs. */
sensim_status sensim_afile_check_distinct(const char *output, const char *input);

#ifdef __cplusplus
}
#endif

#endif
