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

/* Creates "<path>.tmp-<pid>-XXXXXX" beside path (registered for removal on
 * a signal, see below) with the mode a plain create would
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

/* ---- temporaries: names, signals, stale ones ----
 *
 * Every temporary (this writer's and the HDF5 log writer's) is named
 * "<target>.tmp-<pid>-XXXXXX" and, while it exists, listed in a
 * process-wide table that a signal handler can read. This is the one piece
 * of mutable global state in the library: a signal handler can reach
 * nothing else. Slots are claimed with atomic operations, so any thread may
 * register and unregister. */

/* Largest number of temporaries open at once that a signal removes. */
#define SENSIM_TMP_MAX 64

/* A mkstemp template "<path>.tmp-<pid>-XXXXXX", malloc'd (NULL: no memory).
 * Where that name would pass NAME_MAX (a target name over 233 bytes), the
 * temporary is "<dir>/.sensim-<hash of the name>.tmp-<pid>-XXXXXX", a short
 * hidden name in the same directory. */
char *sensim_tmp_template(const char *path);

/* Lists a live temporary (the name is copied); returns its slot, or -1 when
 * the table is full or the name too long (it is then not removed on a
 * signal). sensim_tmp_unregister(-1) is a no-op. */
int sensim_tmp_register(const char *tmp);
void sensim_tmp_unregister(int slot);

/* mkstemp(tmpl) and sensim_tmp_register in one step, with SIGINT, SIGTERM
 * and SIGHUP held off between the two. Returns the descriptor (-1 with
 * errno set) and the slot in *slot. */
int sensim_tmp_create(char *tmpl, int *slot);

/* For programs: handlers for SIGINT, SIGTERM and SIGHUP (those not ignored)
 * that unlink every listed temporary (unlink is async-signal-safe), then
 * die of the same signal with its default action. */
sensim_status sensim_tmp_install_signal_handlers(void);

/* Removes temporaries of path left by processes that are gone (SIGKILL,
 * power loss): names "<path>.tmp-<pid>-XXXXXX" with no process <pid>.
 * notify (may be NULL) is called with each name and pid as it goes.
 * Returns how many were removed. */
size_t sensim_tmp_remove_stale(const char *path, void (*notify)(const char *tmp, long pid, void *ctx), void *ctx);

/* ---- inputs ----
 *
 * Readers open only regular files: a FIFO named like a test file would block
 * the reader forever, a link to /dev/zero would feed it without end, and a
 * directory fails at the first read with a misleading error. */

/* Checks that path names a regular file (following links) that this process
 * may read, of at most max_bytes bytes (0: no bound). SENSIM_ENOTFOUND,
 * SENSIM_EIO (with strerror, e.g. EACCES), SENSIM_EFORMAT for another kind
 * of file ("is a FIFO", "is a directory") or SENSIM_EDATA for one too big,
 * each naming path. Opens without blocking (O_NONBLOCK) to tell. */
sensim_status sensim_input_check(const char *path, double max_bytes);

/* sensim_input_check, then fopen(path, "rb") (the same file: opened once
 * and checked with fstat). NULL with the error set. */
FILE *sensim_input_fopen(const char *path, double max_bytes);

#ifdef __cplusplus
}
#endif

#endif
