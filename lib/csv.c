/* CSV import/export of ground truth and a one-column number reader (see
 * sensim/csv.h). */
#include "sensim/csv.h"

#include "sensim/afile.h"
#include "base_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FIELDS 64

static const char *const gt_names[SENSIM_CSV_GT_COLUMNS] = {"t",  "px", "py", "pz", "qw", "qx", "qy", "qz", "vx",
                                                            "vy", "vz", "wx", "wy", "wz", "ax", "ay", "az"};


/* Strips the line end (LF or CRLF) and surrounding blanks; returns the start. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* A NUL byte inside a line would end it early for every string function:
 * the rest of the row (or all of it) silently lost. An error instead. */
static int nul_byte(const char *path, size_t lineno, const char *line, size_t len, sensim_status *st)
{
    const char *z = memchr(line, '\0', len);
    if (!z)
        return 0;
    *st = sensim_error(SENSIM_EFORMAT, "%s:%zu: NUL byte at column %zu (binary data, or a file in UTF-16?)", path,
                       lineno, (size_t)(z - line) + 1);
    return 1;
}

/* 1 for a blank or '#' comment line (after trimming). */
static int skippable(const char *s) { return *s == '\0' || *s == '#'; }

/* Splits a trimmed line in place. Delimiter: ',' if present, else ';', else
 * tab, else runs of spaces. Cells are trimmed. Returns the number of cells
 * (which may exceed max; only the first max are stored). */
static size_t split(char *line, char **cells, size_t max)
{
    char delim = strchr(line, ',') ? ',' : strchr(line, ';') ? ';' : strchr(line, '\t') ? '\t' : ' ';
    return sensim_split_cells_(line, delim, delim == ' ', trim, cells, max);
}

/* Parses one cell. 0 on success; otherwise sets *why to a static reason. */
static int parse_cell(const char *s, double *v, const char **why)
{
    if (!*s) {
        *why = "empty cell";
        return -1;
    }
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end) {
        *why = "not a number";
        return -1;
    }
    if (isnan(x)) {
        *why = "NaN";
        return -1;
    }
    if (!isfinite(x) || errno == ERANGE) {
        if (isfinite(x) && fabs(x) < 1.0) { /* underflow to a subnormal or zero is harmless */
            *v = x;
            return 0;
        }
        *why = "not finite";
        return -1;
    }
    *v = x;
    return 0;
}

/* ---------------------------------------------------------------- reader */

static const char *const track_names[4] = {"t", "x", "y", "z"};

/* Below this horizontal speed (m/s) the heading of a position-only track is
 * held: the direction of a velocity differentiated from noisy positions is
 * noise when the vehicle stands still. */
#define TRACK_MIN_SPEED 0.05
#define RING 4

struct sensim_csv_gt_reader {
    sensim_lines_ in;
    size_t rows;
    int track;                      /* header t,x,y,z: derive the rest */
    int ncols;                      /* 17, or 4 for a track */
    const char *const *names;
    int col[SENSIM_CSV_GT_COLUMNS]; /* position of each named column in a row */
    size_t ncells;
    double prev_t;
    int has_origin;
    double origin[3];
    /* Track state: the last RING raw rows (row g in slot g % RING), how many
     * were read, whether the file ended, the next row to emit, the yaw. */
    double rt[RING], rp[RING][3];
    size_t nraw, next_out;
    int eof, have_yaw;
    double yaw;
};

void sensim_csv_gt_reader_close(sensim_csv_gt_reader *r)
{
    if (r)
        sensim_lines_close_(&r->in);
    free(r);
}

/* The first line without the UTF-8 byte-order mark that Excel and Windows
 * editors put before it (read as part of the first cell, it made an
 * invisible unknown column, or a number taken for a header). */
static char *skip_bom(char *line, size_t lineno)
{
    return lineno == 1 && !strncmp(line, "\xEF\xBB\xBF", 3) ? line + 3 : line;
}

/* Next line that is neither blank nor a comment; NULL at end of file (or a
 * read error, reported through *st). */
static char *next_line(sensim_csv_gt_reader *r, sensim_status *st)
{
    *st = SENSIM_OK;
    for (;;) {
        ssize_t len = sensim_lines_next_(&r->in, st);
        if (len < 0)
            return NULL;
        if (nul_byte(r->in.path, r->in.lineno, r->in.line, (size_t)len, st))
            return NULL;
        char *s = trim(skip_bom(r->in.line, r->in.lineno));
        if (!skippable(s))
            return s;
        /* Before the header, remember an origin comment written by the exporter. */
        if (r->ncells == 0 && !strncmp(s, "# origin_lla:", 13)) {
            double o[3];
            if (sscanf(s + 13, " %lf , %lf , %lf", &o[0], &o[1], &o[2]) == 3 && isfinite(o[0]) && isfinite(o[1]) &&
                isfinite(o[2])) {
                memcpy(r->origin, o, sizeof o);
                r->has_origin = 1;
            }
        }
    }
}

/* Maps header cells to the columns of one layout; 0 if they match it. On a
 * mismatch sets *bad to the first unknown cell or missing name. */
static int match_header(char **cells, size_t n, const char *const *names, int ncols, int *col, const char **bad,
                        int *twice)
{
    *twice = 0;
    for (int k = 0; k < ncols; k++)
        col[k] = -1;
    for (size_t i = 0; i < n; i++) {
        int k = 0;
        while (k < ncols && strcmp(cells[i], names[k]))
            k++;
        if (k == ncols) {
            *bad = cells[i];
            return -1;
        }
        if (col[k] >= 0) {
            *bad = cells[i];
            *twice = 1;
            return -1;
        }
        col[k] = (int)i;
    }
    for (int k = 0; k < ncols; k++)
        if (col[k] < 0) {
            *bad = names[k];
            return -2;
        }
    return 0;
}

static int is_number_cell(const char *s)
{
    char *end;
    strtod(s, &end);
    return *s && end != s && !*end;
}

/* A header that match_header refused (m, bad, twice as it set them): a
 * column twice, or an unknown or missing one with `why` after it. */
static void header_error(const char *path, size_t lineno, int m, const char *bad, int twice, const char *why)
{
    if (twice)
        sensim_error(SENSIM_EFORMAT, "%s:%zu: header: column '%s' appears twice", path, lineno, bad);
    else
        sensim_error(SENSIM_EFORMAT, "%s:%zu: header: %s column '%s' (%s)", path, lineno,
                     m == -1 ? "unknown" : "missing", bad, why);
}

sensim_csv_gt_reader *sensim_csv_gt_reader_open(const char *path)
{
    sensim_csv_gt_reader *r = sensim_new_(sizeof *r, path);
    if (!r || sensim_lines_open_(&r->in, path))
        goto fail;
    sensim_status st;
    char *s = next_line(r, &st);
    if (!s) {
        if (!st)
            sensim_error(SENSIM_EFORMAT, "%s: no header line (expected %s)", path, SENSIM_CSV_GT_HEADER);
        goto fail;
    }
    char *cells[MAX_FIELDS];
    size_t n = split(s, cells, MAX_FIELDS);
    if (n > MAX_FIELDS) {
        sensim_error(SENSIM_EFORMAT, "%s:%zu: header has %zu columns, expected %d (%s)", path, r->in.lineno, n,
                     SENSIM_CSV_GT_COLUMNS, SENSIM_CSV_GT_HEADER);
        goto fail;
    }
    const char *bad = NULL;
    int twice = 0, m, track_like = 0;
    /* A header naming x, y or z means a position-only track: judge it by
     * that layout, so that t,x,y,z,yaw blames yaw, not x. */
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cells[i], "x") || !strcmp(cells[i], "y") || !strcmp(cells[i], "z"))
            track_like = 1;
    if (track_like && (m = match_header(cells, n, track_names, 4, r->col, &bad, &twice)) != 0) {
        header_error(path, r->in.lineno, m, bad, twice,
                     "a position-only track has exactly t,x,y,z; the full state is " SENSIM_CSV_GT_HEADER);
        goto fail;
    }
    if (n == 4 && match_header(cells, n, track_names, 4, r->col, &bad, &twice) == 0) {
        r->track = 1;
        r->ncols = 4;
        r->names = track_names;
    } else if ((m = match_header(cells, n, gt_names, SENSIM_CSV_GT_COLUMNS, r->col, &bad, &twice)) == 0) {
        r->ncols = SENSIM_CSV_GT_COLUMNS;
        r->names = gt_names;
    } else {
        if (!twice && m == -1 && is_number_cell(bad))
            sensim_error(SENSIM_EFORMAT,
                         "%s:%zu: no header line: '%s' is a number, not a column name (a ground-truth CSV starts "
                         "with the header %s, or t,x,y,z for a position-only track; EuRoC, TUM and other CSV "
                         "recordings are read by 'sensim import FILE')",
                         path, r->in.lineno, bad, SENSIM_CSV_GT_HEADER);
        else
            header_error(path, r->in.lineno, m, bad, twice,
                         "a ground-truth CSV names the columns " SENSIM_CSV_GT_HEADER ", or t,x,y,z for a "
                         "position-only track; EuRoC, TUM and other CSV recordings are read by 'sensim import FILE'");
        goto fail;
    }
    r->ncells = n;
    return r;
fail:
    sensim_csv_gt_reader_close(r);
    return NULL;
}

/* Parses and checks the next data row into v (ncols values). *got = 0 at the
 * end of the file. */
static sensim_status next_row(sensim_csv_gt_reader *r, double *v, int *got)
{
    char *cells[MAX_FIELDS];
    sensim_status st;
    *got = 0;
    char *s = next_line(r, &st);
    if (!s)
        return st;
    size_t n = split(s, cells, MAX_FIELDS);
    if (n != r->ncells)
        return sensim_error(SENSIM_EFORMAT, "%s:%zu: expected %zu columns, found %zu", r->in.path, r->in.lineno,
                            r->ncells, n);
    for (int k = 0; k < r->ncols; k++) {
        const char *why;
        const char *cell = cells[r->col[k]];
        if (parse_cell(cell, &v[k], &why))
            return sensim_error(SENSIM_EFORMAT, "%s:%zu: column '%s': '%s' is %s", r->in.path, r->in.lineno,
                                r->names[k], cell, !strcmp(why, "empty cell") ? "empty" : why);
    }
    if (r->rows > 0 && !(v[0] > r->prev_t))
        return sensim_error(SENSIM_EDATA, "%s:%zu: column 't': %.17g does not increase (previous %.17g)", r->in.path,
                            r->in.lineno, v[0], r->prev_t);
    if (!r->track) {
        double qn = sqrt(v[4] * v[4] + v[5] * v[5] + v[6] * v[6] + v[7] * v[7]);
        if (fabs(qn - 1.0) > 1e-3)
            return sensim_error(SENSIM_EDATA, "%s:%zu: columns 'qw','qx','qy','qz': quaternion norm %g is not 1",
                                r->in.path, r->in.lineno, qn);
        /* Rounded files (six digits) are normalized; an exact export is left
         * bit for bit as written. */
        double scale = fabs(qn - 1.0) > 1e-12 ? 1.0 / qn : 1.0;
        for (int c = 4; c < 8; c++)
            v[c] *= scale;
    }
    r->prev_t = v[0];
    r->rows++;
    *got = 1;
    return SENSIM_OK;
}

/* First and second derivative at t of the quadratic through three samples
 * (Lagrange form, times taken relative to t for accuracy). */
static void quad_derivs(const double t3[3], const double *p3[3], double t, double d1[3], double d2[3])
{
    double a = t3[0] - t, b = t3[1] - t, c = t3[2] - t;
    double wa = 1.0 / ((a - b) * (a - c)), wb = 1.0 / ((b - a) * (b - c)), wc = 1.0 / ((c - a) * (c - b));
    /* L'(0) = sum p_i w_i (-(sum of the other two times)), L'' = 2 sum p_i w_i. */
    for (int k = 0; k < 3; k++) {
        d1[k] = -(p3[0][k] * wa * (b + c) + p3[1][k] * wb * (a + c) + p3[2][k] * wc * (a + b));
        d2[k] = 2.0 * (p3[0][k] * wa + p3[1][k] * wb + p3[2][k] * wc);
    }
}

/* Position-only track: emits row next_out from the quadratic through it and
 * its neighbours (the first or last three at the ends). */
static sensim_status read_track(sensim_csv_gt_reader *r, sensim_gt_block *b)
{
    while (b->n < b->capacity) {
        size_t k = r->next_out, need = k == 0 ? 2 : k + 1;
        while (!r->eof && r->nraw <= need) {
            double v[4];
            int got;
            sensim_status st = next_row(r, v, &got);
            if (st)
                return st;
            if (!got) {
                r->eof = 1;
                break;
            }
            size_t slot = r->nraw % RING;
            r->rt[slot] = v[0];
            memcpy(r->rp[slot], v + 1, 3 * sizeof(double));
            r->nraw++;
        }
        if (k >= r->nraw)
            break;
        if (r->nraw < 3)
            return sensim_error(SENSIM_EDATA, "%s: %zu rows; deriving velocities from positions needs at least 3",
                                r->in.path, r->nraw);
        size_t a0 = k == 0 ? 0 : (r->eof && k == r->nraw - 1) ? k - 2 : k - 1;
        double t3[3];
        const double *p3[3];
        for (int j = 0; j < 3; j++) {
            t3[j] = r->rt[(a0 + j) % RING];
            p3[j] = r->rp[(a0 + j) % RING];
        }
        double t = r->rt[k % RING], vel[3], acc[3];
        quad_derivs(t3, p3, t, vel, acc);
        double speed = hypot(vel[0], vel[1]), rate = 0.0;
        if (speed > TRACK_MIN_SPEED) {
            double yaw = atan2(vel[1], vel[0]);
            /* Unwrapped: the quaternion stays continuous through +-180 deg. */
            r->yaw = r->have_yaw ? r->yaw + remainder(yaw - r->yaw, 2 * M_PI) : yaw;
            r->have_yaw = 1;
            rate = (vel[0] * acc[1] - vel[1] * acc[0]) / (speed * speed);
        }
        size_t i = b->n;
        b->t[i] = t;
        memcpy(b->position + 3 * i, r->rp[k % RING], 3 * sizeof(double));
        memcpy(b->velocity + 3 * i, vel, sizeof vel);
        memcpy(b->acceleration + 3 * i, acc, sizeof acc);
        b->orientation[4 * i] = cos(0.5 * r->yaw);
        b->orientation[4 * i + 1] = b->orientation[4 * i + 2] = 0.0;
        b->orientation[4 * i + 3] = sin(0.5 * r->yaw);
        b->angular_velocity[3 * i] = b->angular_velocity[3 * i + 1] = 0.0;
        b->angular_velocity[3 * i + 2] = rate;
        b->n++;
        r->next_out++;
    }
    return SENSIM_OK;
}

sensim_status sensim_csv_gt_reader_read(sensim_csv_gt_reader *r, sensim_gt_block *b)
{
    b->n = 0;
    if (r->track)
        return read_track(r, b);
    while (b->n < b->capacity) {
        double v[SENSIM_CSV_GT_COLUMNS];
        int got;
        sensim_status st = next_row(r, v, &got);
        if (st || !got)
            return st;
        size_t i = b->n;
        b->t[i] = v[0];
        for (int c = 0; c < 3; c++) {
            b->position[3 * i + c] = v[1 + c];
            b->velocity[3 * i + c] = v[8 + c];
            b->angular_velocity[3 * i + c] = v[11 + c];
            b->acceleration[3 * i + c] = v[14 + c];
        }
        memcpy(b->orientation + 4 * i, v + 4, 4 * sizeof(double));
        b->n++;
    }
    return SENSIM_OK;
}

int sensim_csv_gt_reader_origin(const sensim_csv_gt_reader *r, double origin_lla[3])
{
    if (r->has_origin)
        memcpy(origin_lla, r->origin, sizeof r->origin);
    return r->has_origin;
}

size_t sensim_csv_gt_reader_rows(const sensim_csv_gt_reader *r) { return r->rows; }

long long sensim_csv_gt_reader_offset(const sensim_csv_gt_reader *r)
{
    long off = ftell(r->in.f);
    return off < 0 ? -1 : (long long)off;
}

int sensim_csv_gt_reader_is_track(const sensim_csv_gt_reader *r) { return r->track; }

/* ---------------------------------------------------------------- writer */

struct sensim_csv_gt_writer {
    char *path;
    sensim_afile *out; /* NULL when writing to stdout */
    FILE *f;
};

void sensim_csv_gt_writer_close(sensim_csv_gt_writer *w)
{
    if (!w)
        return;
    sensim_afile_abort(w->out);
    free(w->path);
    free(w);
}

sensim_csv_gt_writer *sensim_csv_gt_writer_create(const char *path, const double origin_lla[3])
{
    sensim_csv_gt_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    if (!strcmp(path, "-"))
        w->f = stdout;
    else if ((w->out = sensim_afile_open(path)))
        w->f = sensim_afile_stream(w->out);
    else
        goto fail;
    if (origin_lla)
        fprintf(w->f, "# origin_lla: %.17g,%.17g,%.17g\n", origin_lla[0], origin_lla[1], origin_lla[2]);
    fputs(SENSIM_CSV_GT_HEADER "\n", w->f);
    return w;
fail:
    sensim_csv_gt_writer_close(w);
    return NULL;
}

sensim_status sensim_csv_gt_writer_append(sensim_csv_gt_writer *w, const sensim_gt_block *b)
{
    for (size_t i = 0; i < b->n; i++) {
        const double *p = b->position + 3 * i, *q = b->orientation + 4 * i, *v = b->velocity + 3 * i;
        const double *g = b->angular_velocity + 3 * i, *a = b->acceleration + 3 * i;
        fprintf(w->f,
                "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,"
                "%.17g\n",
                b->t[i], p[0], p[1], p[2], q[0], q[1], q[2], q[3], v[0], v[1], v[2], g[0], g[1], g[2], a[0], a[1],
                a[2]);
    }
    if (ferror(w->f))
        return sensim_error(SENSIM_EIO, "%s: write error: %s", w->path, strerror(errno));
    return SENSIM_OK;
}

sensim_status sensim_csv_gt_writer_commit(sensim_csv_gt_writer *w)
{
    sensim_status st = SENSIM_OK;
    if (!w->out) {
        if (fflush(w->f) || ferror(w->f))
            st = sensim_error(SENSIM_EIO, "standard output: write error: %s", strerror(errno));
    } else {
        st = sensim_afile_commit(w->out);
        w->out = NULL;
    }
    sensim_csv_gt_writer_close(w);
    return st;
}

/* ---------------------------------------------------------------- column */

/* Shared by both column readers: column index, or by name when name != NULL. */
static sensim_status read_column(const char *path, size_t column, const char *name, double **values, size_t *nout)
{
    *values = NULL;
    *nout = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return sensim_error(errno == ENOENT ? SENSIM_ENOTFOUND : SENSIM_EIO, "%s: cannot open: %s", path,
                            strerror(errno));
    char *line = NULL, *cells[MAX_FIELDS * 16];
    const size_t maxc = sizeof cells / sizeof *cells;
    size_t cap = 0, lineno = 0, n = 0, vcap = 0;
    double *v = NULL;
    int first = 1;
    sensim_status st = SENSIM_OK;
    char label[96];
    if (name)
        snprintf(label, sizeof label, "column '%s'", name);
    else
        snprintf(label, sizeof label, "column %zu", column + 1);
    for (;;) {
        ssize_t len = sensim_getline_(&line, &cap, f, path, &lineno, &st);
        if (len < 0)
            break;
        if (nul_byte(path, lineno, line, (size_t)len, &st))
            break;
        char *s = trim(skip_bom(line, lineno));
        if (skippable(s))
            continue;
        size_t nc = split(s, cells, maxc);
        if (first && name) {
            /* The header names the column. */
            size_t i = 0;
            while (i < nc && i < maxc && strcmp(cells[i], name))
                i++;
            if (i >= nc || i >= maxc) {
                st = sensim_error(SENSIM_ENOTFOUND, "%s:%zu: header has no column '%s'", path, lineno, name);
                break;
            }
            column = i;
            first = 0;
            continue;
        }
        if (column >= nc || column >= maxc) {
            st = sensim_error(SENSIM_EFORMAT, "%s:%zu: %s: the line has only %zu columns", path, lineno, label, nc);
            break;
        }
        double x;
        const char *why;
        if (parse_cell(cells[column], &x, &why)) {
            if (first && !strcmp(why, "not a number")) { /* a header line */
                first = 0;
                continue;
            }
            st = sensim_error(SENSIM_EFORMAT, "%s:%zu: %s: '%s' is %s", path, lineno, label, cells[column],
                              !strcmp(why, "empty cell") ? "empty" : why);
            break;
        }
        first = 0;
        if (n == vcap) {
            size_t nc2 = vcap ? 2 * vcap : 1024;
            double *nv = realloc(v, nc2 * sizeof *nv);
            if (!nv) {
                st = sensim_error(SENSIM_ENOMEM, "%s:%zu: out of memory after %zu values", path, lineno, n);
                break;
            }
            v = nv;
            vcap = nc2;
        }
        v[n++] = x;
    }
    free(line);
    fclose(f);
    if (!st && n == 0)
        st = sensim_error(SENSIM_EDATA, "%s: %s: no numbers in the file", path, label);
    if (st) {
        free(v);
        return st;
    }
    *values = v;
    *nout = n;
    return SENSIM_OK;
}

sensim_status sensim_csv_read_column(const char *path, size_t column, double **values, size_t *n)
{
    return read_column(path, column, NULL, values, n);
}

sensim_status sensim_csv_read_column_named(const char *path, const char *name, double **values, size_t *n)
{
    return read_column(path, 0, name, values, n);
}
