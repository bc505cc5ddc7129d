/* sensim/textrec.h - text recordings in and out: EuRoC/ASL CSVs
 * (mav0/imu0/data.csv, mav0/state_groundtruth_estimate0/data.csv), TUM
 * trajectories (`timestamp tx ty tz qx qy qz qw`), generic CSVs with a
 * header, and KITTI velodyne scans (.bin: float32 x, y, z, reflectance).
 *
 * Reading is streaming: sensim_text_open() reads the header and the first
 * rows (to tell the time unit), sensim_text_read() hands out blocks of rows
 * with stamps as exact integer nanoseconds and values in SI, in the order of
 * the SENSIM_TF_* fields. Units in the header ("gyro_x [deg/s]", EuRoC's
 * "[rad s^-1]") are honoured through sensim/units.h.
 *
 * Time units. A stamp is never read as seconds by accident: the unit is the
 * one given, or the header's ("#timestamp [ns]", "t [ms]", "time_us"), or
 * EuRoC's (ns) or TUM's (s, unless the stamps say otherwise), or else told
 * from the first rows: a unit is plausible when its first stamp is an epoch
 * between 1973 and 2286 (1e8..1e10 s) or under 1e7 s (a clock started at
 * the recording's start), and its median step a rate between 0.5 Hz and
 * 100 kHz. One plausible unit is used (and said in sensim_text_time_note);
 * several (integer stamps, e.g. a 1 Hz log in ms or us) or none are refused
 * with a message naming the candidates. A given unit whose first stamp is
 * beyond 1e10 s is refused too, naming the likely unit.
 *
 * Errors name the file, line and column: "data.csv:12: column 3
 * ('w_RS_S_y [rad s^-1]'): 'abc' is not a number".
 *
 * Ownership: paths and options are copied. Thread safety: a reader is used
 * from one thread at a time; readers are independent. */
#ifndef SENSIM_TEXTREC_H
#define SENSIM_TEXTREC_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/log.h"
#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sensim_text_format {
    SENSIM_TEXT_AUTO, /* told from the header: EuRoC names, else 8 numeric columns (TUM), else CSV */
    SENSIM_TEXT_EUROC,
    SENSIM_TEXT_TUM,
    SENSIM_TEXT_CSV
} sensim_text_format;

typedef enum sensim_time_unit {
    SENSIM_TIME_AUTO,
    SENSIM_TIME_S,
    SENSIM_TIME_MS,
    SENSIM_TIME_US,
    SENSIM_TIME_NS
} sensim_time_unit;

/* What the rows hold: inertial samples (a sensor group) or poses (ground truth). */
typedef enum sensim_text_kind {
    SENSIM_TEXT_IMU,
    SENSIM_TEXT_POSE
} sensim_text_kind;

/* Fields of a row, SI units: angular velocity rad/s (body), specific force
 * m/s^2, magnetic field T; position m, orientation (w,x,y,z) body to world,
 * velocity m/s (world). */
enum {
    SENSIM_TF_WX, SENSIM_TF_WY, SENSIM_TF_WZ,
    SENSIM_TF_AX, SENSIM_TF_AY, SENSIM_TF_AZ,
    SENSIM_TF_MX, SENSIM_TF_MY, SENSIM_TF_MZ,
    SENSIM_TF_PX, SENSIM_TF_PY, SENSIM_TF_PZ,
    SENSIM_TF_QW, SENSIM_TF_QX, SENSIM_TF_QY, SENSIM_TF_QZ,
    SENSIM_TF_VX, SENSIM_TF_VY, SENSIM_TF_VZ,
    SENSIM_TF_N
};
/* Bits of sensim_text_fields(). */
#define SENSIM_TF_GYRO (7u << SENSIM_TF_WX)
#define SENSIM_TF_ACCEL (7u << SENSIM_TF_AX)
#define SENSIM_TF_MAG (7u << SENSIM_TF_MX)
#define SENSIM_TF_POS (7u << SENSIM_TF_PX)
#define SENSIM_TF_QUAT (15u << SENSIM_TF_QW)
#define SENSIM_TF_VEL (7u << SENSIM_TF_VX)

/* The keys of a generic CSV's --columns ("t=timestamp,wx=gyro_x,...") and
 * of a header that names them directly: t, then the fields in SENSIM_TF_*
 * order. A header may also use the aliases listed in the error message of
 * an unknown header (x, y, z for px, py, pz; tx, ty, tz; gyro_x, acc_x, ...). */
#define SENSIM_TEXT_KEYS "t,wx,wy,wz,ax,ay,az,mx,my,mz,px,py,pz,qw,qx,qy,qz,vx,vy,vz"

typedef struct sensim_text_opts {
    sensim_text_format format;
    sensim_time_unit time_unit;
    const char *columns; /* "key=header name,..." (CSV), or NULL */
} sensim_text_opts;

sensim_text_opts sensim_text_default_opts(void);
/* Parses "s", "ms", "us", "ns". SENSIM_EINVAL for others. */
sensim_status sensim_time_unit_parse(const char *name, sensim_time_unit *unit);
const char *sensim_time_unit_name(sensim_time_unit unit);
/* Parses "euroc", "tum", "csv". */
sensim_status sensim_text_format_parse(const char *name, sensim_text_format *format);
const char *sensim_text_format_name(sensim_text_format format);

typedef struct sensim_text_reader sensim_text_reader;

/* Opens a recording and reads its header and first rows. NULL with a
 * message when the format, the columns or the time unit cannot be told. */
sensim_text_reader *sensim_text_open(const char *path, const sensim_text_opts *opts);
void sensim_text_close(sensim_text_reader *r);
sensim_text_format sensim_text_get_format(const sensim_text_reader *r);
sensim_text_kind sensim_text_get_kind(const sensim_text_reader *r);
/* Bit mask of the SENSIM_TF_* fields present (the others read as 0). */
unsigned sensim_text_fields(const sensim_text_reader *r);
sensim_time_unit sensim_text_time_unit(const sensim_text_reader *r);
/* How the time unit was chosen, for telling the user ("times in ns: told
 * from the stamps (first 1.4e+18, median step 5e+06: 200 Hz)"). */
const char *sensim_text_time_note(const sensim_text_reader *r);
/* The first stamp (ns), available after open. */
int64_t sensim_text_first_ns(const sensim_text_reader *r);
/* Reads up to cap rows: t_ns[cap] stamps, v[cap * SENSIM_TF_N] values; sets
 * *n (0 at the end). Stamps must increase strictly; quaternions must have a
 * norm within 1e-3 of 1 (they are normalized). */
sensim_status sensim_text_read(sensim_text_reader *r, int64_t *t_ns, double *v, size_t cap, size_t *n);
/* Parses one stamp written in `unit` into exact integer ns ("1305031102.175304"
 * s is 1305031102175304000 ns; digits are not rounded through a double). */
sensim_status sensim_text_parse_stamp(const char *text, sensim_time_unit unit, int64_t *ns);
/* Data rows read so far. */
size_t sensim_text_rows(const sensim_text_reader *r);

/* ---- poses to ground truth ---- */

/* Derives the whole /ground_truth from a stream of poses (and velocities
 * when the recording has them), as `sensim import` does for a position-only
 * track: velocity and acceleration are the first and second derivatives of
 * the quadratic through each sample and its two neighbours (the first or
 * last three at the ends; second order on uneven steps, except the
 * acceleration from positions at the first and last sample, which is first
 * order), or, when velocity
 * is recorded, the velocity is kept and the acceleration is its derivative;
 * the body angular velocity interpolates the rotation vectors of successive
 * relative rotations, log(q_{i-1}^-1 q_i) / h, linearly in time (exact for a
 * constant rate). Output lags input by one row. */
typedef struct sensim_pose_gt sensim_pose_gt;
sensim_pose_gt *sensim_pose_gt_create(int have_velocity);
void sensim_pose_gt_destroy(sensim_pose_gt *g);
/* Adds n poses: t[n] s, p[n*3], q[n*4] (w,x,y,z), v[n*3] (NULL when not
 * recorded); appends the rows now known to out (capacity at least
 * out->n + n + 1). */
sensim_status sensim_pose_gt_push(sensim_pose_gt *g, size_t n, const double *t, const double *p, const double *q,
                                  const double *v, sensim_gt_block *out);
/* Appends the last row; SENSIM_EDATA when fewer than 3 poses came in. */
sensim_status sensim_pose_gt_finish(sensim_pose_gt *g, sensim_gt_block *out);

/* ---- KITTI velodyne scans ---- */

/* Reads a KITTI .bin scan (little-endian float32 x, y, z, reflectance per
 * point; the size must be a multiple of 16 bytes). *xyzi: n*4 floats,
 * malloc'd. Errors name the file and, for non-finite coordinates, the point. */
sensim_status sensim_kitti_read(const char *path, float **xyzi, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
