/* Reader of the per-test CSV files of seed 004's scoring code: columns
 * se_time, gt_time, se_vel, gt_vel, with columns of unequal length padded by
 * empty cells (and, for ground truth, by trailing rows of exact zeros). */
#include "sensim/metrics.h"

#include "sensim/afile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { C_SE_T, C_GT_T, C_SE_V, C_GT_V, NCOL };
static const char *const colname[NCOL] = {"se_time", "gt_time", "se_vel", "gt_vel"};

typedef struct {
    double *v;
    size_t n, cap;
    size_t pad_line; /* first line with an empty cell in this column, 0 if none */
    double last;     /* last time value kept (time columns), for the order check */
    size_t last_line;
} column;

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    if (e - s >= 2 && s[0] == '"' && e[-1] == '"') {
        e[-1] = '\0';
        s++;
    }
    return s;
}

static int push(column *c, double x)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 1024;
        double *v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return -1;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = x;
    return 0;
}

/* Largest CSV test file read (bytes). */
#define VEPD_CSV_MAX_BYTES 2147483648.0

sensim_status sensim_vepd_read_csv(const char *path, sensim_vepd_series *out)
{
    return sensim_vepd_read_csv_ex(path, 0, out);
}

sensim_status sensim_vepd_read_csv_ex(const char *path, unsigned flags, sensim_vepd_series *out)
{
    if (!path || !out)
        return sensim_error(SENSIM_EINVAL, "vepd csv: NULL argument");
    memset(out, 0, sizeof *out);
    /* Regular files only (a FIFO blocked forever, a link to /dev/zero grew
     * without end), and no larger than a test can be: the score's grid
     * holds at most 2^20 points, a few tens of MB of rows. */
    FILE *f = sensim_input_fopen(path, VEPD_CSV_MAX_BYTES);
    if (!f)
        return sensim_last_status();
    column col[NCOL] = {{0}};
    int where[NCOL] = {-1, -1, -1, -1}; /* field index of each column */
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    int nfields = 0;
    sensim_status st = SENSIM_OK;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        const char *z = memchr(line, '\0', (size_t)len);
        if (z) {
            st = sensim_error(SENSIM_EFORMAT, "%s:%zu: NUL byte at column %zu (binary data, or a file in UTF-16?)",
                              path, lineno, (size_t)(z - line) + 1);
            goto done;
        }
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (lineno == 1) {
            int k = 0;
            char *start = line;
            if (!strncmp(start, "\xEF\xBB\xBF", 3)) /* UTF-8 byte-order mark (spreadsheets write one) */
                start += 3;
            /* strtok_r would merge empty header fields; split by hand. */
            for (char *p = start, *q;; p = q + 1, k++) {
                q = strchr(p, ',');
                if (q)
                    *q = '\0';
                char *name = trim(p);
                for (int c = 0; c < NCOL; c++)
                    if (!strcmp(name, colname[c])) {
                        if (where[c] >= 0) {
                            st = sensim_error(SENSIM_EFORMAT, "%s:1: column '%s' appears twice", path, name);
                            goto done;
                        }
                        where[c] = k;
                    }
                if (!q)
                    break;
            }
            nfields = k + 1;
            for (int c = 0; c < NCOL; c++)
                if (where[c] < 0) {
                    st = sensim_error(SENSIM_EFORMAT,
                                      "%s:1: missing column '%s' (the header must name se_time, gt_time, se_vel, "
                                      "gt_vel)",
                                      path, colname[c]);
                    goto done;
                }
            continue;
        }
        if (len == 0 || strspn(line, " \t") == (size_t)len)
            continue; /* blank line */
        int k = 0;
        for (char *p = line, *q;; p = q + 1, k++) {
            q = strchr(p, ',');
            if (q)
                *q = '\0';
            for (int c = 0; c < NCOL; c++) {
                if (where[c] != k)
                    continue;
                char *cell = trim(p);
                column *cc = &col[c];
                double x = NAN;
                if (*cell) {
                    char *end;
                    errno = 0;
                    x = strtod(cell, &end);
                    if (*end || errno == ERANGE || isinf(x)) {
                        st = sensim_error(SENSIM_EFORMAT, "%s:%zu: column '%s': '%s' is not a finite number", path,
                                          lineno, colname[c], cell);
                        goto done;
                    }
                }
                if (isnan(x)) { /* empty or NaN cell: padding, must run to the end */
                    if (!cc->pad_line)
                        cc->pad_line = lineno;
                    continue;
                }
                if (cc->pad_line) {
                    st = sensim_error(SENSIM_EFORMAT,
                                      "%s:%zu: column '%s': value after an empty cell at line %zu (empty cells are "
                                      "only allowed as padding at the end of a column)",
                                      path, lineno, colname[c], cc->pad_line);
                    goto done;
                }
                /* Times must not decrease; ground-truth zeros are padding
                 * and are dropped below, so they are not compared. */
                if ((c == C_SE_T || (c == C_GT_T && x != 0.0)) && cc->last_line && x < cc->last) {
                    st = sensim_error(SENSIM_EDATA, "%s:%zu: column '%s': time decreases (%.9g after %.9g at line %zu)",
                                      path, lineno, colname[c], x, cc->last, cc->last_line);
                    goto done;
                }
                if ((c == C_SE_T || c == C_GT_T) && (c == C_SE_T || x != 0.0)) {
                    cc->last = x;
                    cc->last_line = lineno;
                }
                if (push(cc, x)) {
                    st = sensim_error(SENSIM_ENOMEM, "%s:%zu: out of memory", path, lineno);
                    goto done;
                }
            }
            if (!q)
                break;
        }
        if (k + 1 < nfields) {
            /* Short rows: the missing trailing cells are empty (padding). */
            for (int c = 0; c < NCOL; c++)
                if (where[c] > k && !col[c].pad_line)
                    col[c].pad_line = lineno;
        }
    }
    if (ferror(f)) {
        st = sensim_error(SENSIM_EIO, "%s: read error after line %zu: %s", path, lineno, strerror(errno));
        goto done;
    }
    if (lineno == 0) {
        st = sensim_error(SENSIM_EFORMAT, "%s: empty file (expected a header se_time, gt_time, se_vel, gt_vel)", path);
        goto done;
    }
    if (col[C_SE_T].n != col[C_SE_V].n) {
        st = sensim_error(SENSIM_EFORMAT, "%s: columns 'se_time' and 'se_vel' have different lengths (%zu and %zu)",
                          path, col[C_SE_T].n, col[C_SE_V].n);
        goto done;
    }
    if (col[C_GT_T].n != col[C_GT_V].n) {
        st = sensim_error(SENSIM_EFORMAT, "%s: columns 'gt_time' and 'gt_vel' have different lengths (%zu and %zu)",
                          path, col[C_GT_T].n, col[C_GT_V].n);
        goto done;
    }
    size_t m = 0;
    if (flags & SENSIM_VEPD_DROP_ZEROS) {
        /* The authors' script: every ground-truth row whose time or speed
         * is exactly 0 goes, row-wise so that time and speed stay paired
         * (real stops go with the padding). */
        for (size_t i = 0; i < col[C_GT_T].n; i++)
            if (col[C_GT_T].v[i] != 0.0 && col[C_GT_V].v[i] != 0.0) {
                col[C_GT_T].v[m] = col[C_GT_T].v[i];
                col[C_GT_V].v[m] = col[C_GT_V].v[i];
                m++;
            }
    } else {
        /* Padding is the run of rows at the end whose time and speed are
         * both 0 (times increase, so a time of 0 after the first row cannot
         * be a sample); a zero speed at a real time is a stop and stays. */
        m = col[C_GT_T].n;
        while (m > 1 && col[C_GT_T].v[m - 1] == 0.0 && col[C_GT_V].v[m - 1] == 0.0)
            m--;
        if (m == 1 && col[C_GT_T].v[0] == 0.0 && col[C_GT_V].v[0] == 0.0 && col[C_GT_T].n > 1)
            m = 0;
        for (size_t i = 1; i < m; i++)
            if (col[C_GT_T].v[i] == 0.0) {
                st = sensim_error(SENSIM_EDATA,
                                  "%s: column 'gt_time': time 0 at ground-truth row %zu, before the end (only "
                                  "trailing zero rows are padding; --drop-zeros drops every zero as the authors' "
                                  "script does)",
                                  path, i + 1);
                goto done;
            }
    }
    col[C_GT_T].n = col[C_GT_V].n = m;
    if (col[C_SE_T].n < 2) {
        st = sensim_error(SENSIM_EDATA, "%s: column 'se_time': %zu values (need at least 2)", path, col[C_SE_T].n);
        goto done;
    }
    if (m < 1) {
        st = sensim_error(SENSIM_EDATA, "%s: column 'gt_time': no ground-truth rows besides padding", path);
        goto done;
    }
    out->n_est = col[C_SE_T].n;
    out->est_t = col[C_SE_T].v;
    out->est_v = col[C_SE_V].v;
    out->n_gt = m;
    out->gt_t = col[C_GT_T].v;
    out->gt_v = col[C_GT_V].v;
    for (int c = 0; c < NCOL; c++)
        col[c].v = NULL;
done:
    for (int c = 0; c < NCOL; c++)
        free(col[c].v);
    free(line);
    fclose(f);
    return st;
}
