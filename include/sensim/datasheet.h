/* sensim/datasheet.h - IMU datasheet figures, written with their units, to
 * the parameters of sensim's IMU model (what `sensim datasheet` shows).
 *
 * Conversions are those of MODELS.md "Datasheet units": ARW in deg/sqrt(h)
 * and a noise density in deg/s/sqrt(Hz) are both rad/sqrt(s) (the Allan N
 * coefficient, IEEE Std 952 annex C); VRW in m/s/sqrt(h) is an acceleration
 * density m/s^2/sqrt(Hz); the bias random walk K is rad/s^2/sqrt(Hz) or
 * m/s^3/sqrt(Hz). A datasheet's bias instability is the floor of its Allan
 * deviation, 0.664 B for the IEEE coefficient B the model takes.
 *
 * A sensim_datasheet is a plain value: figures are set from text (a number
 * and a unit; a bare number is in the figure's datasheet unit), from a
 * preset YAML, then resolved (of two equivalent figures one goes into the
 * model). Errors name where the text came from (an option, file:line:key). */
#ifndef SENSIM_DATASHEET_H
#define SENSIM_DATASHEET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sensim_datasheet_fig {
    SENSIM_DATASHEET_ARW,        /* gyro angle random walk */
    SENSIM_DATASHEET_GYRO_ND,    /* gyro noise density */
    SENSIM_DATASHEET_GYRO_BI,    /* gyro bias instability (Allan floor) */
    SENSIM_DATASHEET_GYRO_RW,    /* gyro rate random walk */
    SENSIM_DATASHEET_GYRO_RANGE, /* gyro full-scale range */
    SENSIM_DATASHEET_GYRO_RES,   /* gyro quantization step */
    /* The accel's figures are the gyro's, in the same order, from VRW on. */
    SENSIM_DATASHEET_VRW,                                                              /* velocity random walk */
    SENSIM_DATASHEET_ACCEL_ND = SENSIM_DATASHEET_VRW + SENSIM_DATASHEET_GYRO_ND,       /* accel noise density */
    SENSIM_DATASHEET_ACCEL_BI = SENSIM_DATASHEET_VRW + SENSIM_DATASHEET_GYRO_BI,       /* accel bias instability */
    SENSIM_DATASHEET_ACCEL_RW = SENSIM_DATASHEET_VRW + SENSIM_DATASHEET_GYRO_RW,       /* accel bias random walk */
    SENSIM_DATASHEET_ACCEL_RANGE = SENSIM_DATASHEET_VRW + SENSIM_DATASHEET_GYRO_RANGE, /* accel full-scale range */
    SENSIM_DATASHEET_ACCEL_RES = SENSIM_DATASHEET_VRW + SENSIM_DATASHEET_GYRO_RES,     /* accel quantization step */
    SENSIM_DATASHEET_RATE,                                                             /* output data rate */
    SENSIM_DATASHEET_NFIG
} sensim_datasheet_fig;

/* What a figure is: its option name (the preset key has '_' for '-'), its
 * label, the model block ("gyro", "accel" or NULL for the rate) and key it
 * sets, how its SI value is written, whether it must be > 0 (else >= 0),
 * and the datasheet unit a bare number is in. */
typedef struct sensim_datasheet_figure_def {
    const char *opt, *key, *label, *block, *model_key, *si_unit;
    int positive;
    const char *unit;
} sensim_datasheet_figure_def;

/* The table, indexed by sensim_datasheet_fig. */
extern const sensim_datasheet_figure_def sensim_datasheet_figures[SENSIM_DATASHEET_NFIG];

/* One figure as given and converted. */
typedef struct sensim_datasheet_value {
    int set;
    int used;          /* goes into the model (one of two equivalent figures may not) */
    char given[128];   /* the text as converted ("0.66 deg/sqrt(h)") */
    char source[320];  /* where it came from: "--arw" or "preset.yaml:4" */
    double si;         /* SI value of the figure itself */
    double number;     /* the number as written */
    double scale;      /* SI value of one of the written unit */
    char unit[96];     /* the unit as written, "" if none */
    char explain[256]; /* "deg = pi/180 rad; h = 3600 s" */
} sensim_datasheet_value;

typedef struct sensim_datasheet {
    sensim_datasheet_value f[SENSIM_DATASHEET_NFIG];
    char name[64];       /* the sensor's name in a rig */
    char part[128];      /* the part number */
    char datasheet[256]; /* the document */
    uint64_t seed;       /* the rig's seed */
} sensim_datasheet;

/* No figure, name "imu", seed 1. */
sensim_datasheet sensim_datasheet_default(void);
/* Converts `text` for figure `fig`; `where` names its origin in errors and
 * becomes the figure's source. EINVAL for a wrong dimension, a negative
 * value (or zero where the figure must be positive), text too long. */
sensim_status sensim_datasheet_set(sensim_datasheet *d, sensim_datasheet_fig fig, const char *text,
                                   const char *where);
/* Reads a preset: keys name, part, datasheet, notes, seed and the figures'
 * keys (each a number with a unit). Errors name file, line and key. */
sensim_status sensim_datasheet_load_preset(sensim_datasheet *d, const char *path);
/* Marks the figures that go into the model: all set ones, except that of
 * the ARW and the gyro noise density (the VRW and the accel noise density)
 * the random-walk figure wins, being the Allan N coefficient over the long
 * averaging times a simulation runs for. When both are given and differ by
 * more than 10 %, a line ending in '\n' is appended to warn (size bytes,
 * NUL-terminated; may be NULL). Returns the number of figures set. */
int sensim_datasheet_resolve(sensim_datasheet *d, char *warn, size_t size);
/* The figure that gives the model's block.key (block "gyro" or "accel";
 * key noise_density, bias_instability, random_walk, range or quantization),
 * or NULL. Borrowed from d. */
const sensim_datasheet_value *sensim_datasheet_model_value(const sensim_datasheet *d, const char *block,
                                                           const char *key);
/* The model key's value from a figure's SI value: the figure itself, but
 * B = floor / 0.664 for bias_instability. */
double sensim_datasheet_model_si(const char *key, double si);
/* Writes a rig YAML with one imu sensor (d->name, d->seed, the rate) whose
 * gyro and accel blocks hold the figures resolved into the model, each
 * named in a comment beside the figure it came from (what `sensim
 * datasheet -o` writes). Needs the rate (EINVAL without it); EIO on a
 * write error. Call sensim_datasheet_resolve first. */
sensim_status sensim_datasheet_write_rig(const sensim_datasheet *d, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
