/* sensim/csv.h - CSV import and export of ground truth, and a one-column
 * number reader.
 *
 * Ground-truth CSV: a header line naming the 17 columns of
 * SENSIM_CSV_GT_HEADER (any order; every one exactly once, nothing else),
 * then one row per sample, units as in /ground_truth (DESIGN.md). Lines
 * starting with '#' and blank lines are skipped; CRLF line ends are
 * accepted. The writer emits "# origin_lla: LAT,LON,ALT" before the header
 * and the reader reports it, so an export/import round trip keeps the
 * origin. Values are written with 17 significant digits, so a round trip is
 * exact.
 *
 * Errors name the file, line and column:
 *   "in.csv:12: column 'qx': 'abc' is not a number"
 *   "in.csv:40: column 't': 3.5 does not increase (previous 3.5)"
 *
 * Ownership: paths are copied; blocks are borrowed for the call.
 * Thread safety: readers and writers are used from one thread at a time;
 * distinct objects are independent. */
#ifndef SENSIM_CSV_H
#define SENSIM_CSV_H

#include <stddef.h>

#include "sensim/log.h"
#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SENSIM_CSV_GT_HEADER "t,px,py,pz,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,ax,ay,az"
#define SENSIM_CSV_GT_COLUMNS 17

/* ---- ground-truth reader (streaming) ---- */

typedef struct sensim_csv_gt_reader sensim_csv_gt_reader;

/* Opens a file and reads up to its header (comments before it are allowed,
 * an "# origin_lla: a,b,c" comment is remembered). NULL with a message if
 * the file cannot be read or the header is neither the ground-truth header
 * nor a position-only track's t,x,y,z. */
sensim_csv_gt_reader *sensim_csv_gt_reader_open(const char *path);
/* Reads up to b->capacity rows into b and sets b->n; b->n == 0 means the
 * end of the file. Each row is checked: 17 cells, every one a finite number,
 * t strictly increasing (across calls too), quaternion norm within 1e-3 of 1
 * (normalized when it is off by more than 1e-12, so that six-digit files
 * work and exact ones stay exact). */
sensim_status sensim_csv_gt_reader_read(sensim_csv_gt_reader *r, sensim_gt_block *b);
/* 1 and the origin if the file carried an "# origin_lla:" comment before
 * its header, else 0. */
int sensim_csv_gt_reader_origin(const sensim_csv_gt_reader *r, double origin_lla[3]);
/* 1 if the file is a position-only track (header t,x,y,z in any order):
 * the reader then derives the rest. Velocity and acceleration are the first
 * and second derivatives of the quadratic through each sample and its two
 * neighbours (the first or last three at the ends; second-order accurate on
 * uneven time steps); yaw is the heading of the horizontal velocity,
 * unwrapped, and held while the horizontal speed is at most 0.05 m/s (0 =
 * east until the track first moves); body yaw rate = (vx ay - vy ax) /
 * (vx^2 + vy^2), 0 while held; roll and pitch 0. Derivatives amplify noise:
 * smooth measured tracks first. Needs at least 3 rows. */
int sensim_csv_gt_reader_is_track(const sensim_csv_gt_reader *r);
/* Rows read so far. */
size_t sensim_csv_gt_reader_rows(const sensim_csv_gt_reader *r);
/* Bytes of the file read so far (for progress); -1 when the stream cannot
 * tell (a pipe). */
long long sensim_csv_gt_reader_offset(const sensim_csv_gt_reader *r);
void sensim_csv_gt_reader_close(sensim_csv_gt_reader *r);

/* ---- ground-truth writer ---- */

typedef struct sensim_csv_gt_writer sensim_csv_gt_writer;

/* Writes to a temporary file beside path ("<path>.tmp-PID-N", mode 0666
 * less the umask), or to standard output when path is "-". origin_lla
 * (may be NULL) goes into a comment line before the header. */
sensim_csv_gt_writer *sensim_csv_gt_writer_create(const char *path, const double origin_lla[3]);
sensim_status sensim_csv_gt_writer_append(sensim_csv_gt_writer *w, const sensim_gt_block *b);
/* Flushes, closes and renames over path; frees the writer either way. On
 * failure the temporary file is removed and path left untouched. */
sensim_status sensim_csv_gt_writer_commit(sensim_csv_gt_writer *w);
/* Abandons an uncommitted writer: removes its temporary file. NULL is a no-op. */
void sensim_csv_gt_writer_close(sensim_csv_gt_writer *w);

/* ---- one column of numbers ---- */

/* Reads one column (0-based) of a delimited text file into a malloc'd array
 * (*values, caller frees; NULL when *n == 0 is impossible: an empty column is
 * an error). Cells are separated by commas, or else semicolons, or else tabs,
 * or else runs of spaces, chosen per line. '#' comment lines and blank lines
 * are skipped; the first other line is skipped as a header when its cell in
 * that column is not a number. Every later cell must be a finite number.
 * Messages count columns from 1 ("data.csv:9: column 2: ..."). */
sensim_status sensim_csv_read_column(const char *path, size_t column, double **values, size_t *n);
/* The same, choosing the column by its name in the header line. */
sensim_status sensim_csv_read_column_named(const char *path, const char *name, double **values, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
