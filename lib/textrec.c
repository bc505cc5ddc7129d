/* Text recordings: EuRoC/ASL, TUM and generic CSVs (see sensim/textrec.h). */
#include "sensim/textrec.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sensim/linalg.h"
#include "sensim/units.h"
#include "base_internal.h"

#define MAX_CELLS 256
#define DETECT_ROWS 64
#define NKEYS (1 + SENSIM_TF_N) /* t and the fields */

/* Plausibility windows of the time-unit detection (sensim/textrec.h). */
#define EPOCH_MIN_S 1e8
#define EPOCH_MAX_S 1e10
#define RELATIVE_MAX_S 1e7
#define RATE_MIN_HZ 0.5
#define RATE_MAX_HZ 1e5

static const char *const key_names[NKEYS] = {"t",  "wx", "wy", "wz", "ax", "ay", "az", "mx", "my", "mz", "px",
                                             "py", "pz", "qw", "qx", "qy", "qz", "vx", "vy", "vz"};

/* Header spellings of each field (lower case, '%c' = the axis letter), as
 * EuRoC, ROS-derived CSVs and simulators write them. */
static const char *const alias_t[] = {"t", "time", "timestamp", "stamp", "time_s", "sec", NULL};
static const char *const alias_w[] = {"w%c", "w_%c", "gyro_%c", "gyr_%c", "omega_%c", "angular_velocity_%c",
                                      "w_rs_s_%c", NULL};
static const char *const alias_a[] = {"a%c",       "a_%c", "acc_%c", "accel_%c", "acceleration_%c",
                                      "linear_acceleration_%c", "specific_force_%c", "a_rs_s_%c", NULL};
static const char *const alias_m[] = {"m%c", "m_%c", "mag_%c", "magnetic_field_%c", NULL};
static const char *const alias_p[] = {"p%c", "%c", "t%c", "p_%c", "pos_%c", "position_%c", "p_rs_r_%c", NULL};
static const char *const alias_q[] = {"q%c", "q_%c", "orientation_%c", "q_rs_%c", NULL};
static const char *const alias_v[] = {"v%c", "v_%c", "vel_%c", "velocity_%c", "v_rs_r_%c", NULL};

struct sensim_text_reader {
    sensim_lines_ in;
    sensim_text_format format;
    sensim_text_kind kind;
    unsigned fields;
    char delim; /* ',', ';', '\t', or ' ' for runs of blanks */
    int col[NKEYS];  /* 0-based column of each key, -1 if absent */
    char *colname[NKEYS];
    double scale[SENSIM_TF_N]; /* header unit to SI */
    int ncols_min;   /* cells a row needs */
    sensim_time_unit unit;
    int64_t unit_ns;
    char note[256];
    /* Lines read ahead at open (the first data rows), replayed by read. */
    char *ahead[DETECT_ROWS];
    size_t ahead_line[DETECT_ROWS];
    size_t nahead, next_ahead;
    size_t rows;
    int64_t first_ns, prev_ns;
    int have_prev;
};


sensim_text_opts sensim_text_default_opts(void)
{
    sensim_text_opts o = {SENSIM_TEXT_AUTO, SENSIM_TIME_AUTO, NULL};
    return o;
}

/* By sensim_time_unit: its name and the nanoseconds in one of it. */
static const struct {
    const char *name;
    int64_t ns;
} time_units[] = {{"auto", 0}, {"s", 1000000000}, {"ms", 1000000}, {"us", 1000}, {"ns", 1}};

sensim_status sensim_time_unit_parse(const char *name, sensim_time_unit *unit)
{
    for (int i = 1; i <= SENSIM_TIME_NS; i++)
        if (!strcmp(name, time_units[i].name)) {
            *unit = (sensim_time_unit)i;
            return SENSIM_OK;
        }
    return sensim_error(SENSIM_EINVAL, "time unit '%s': expected s, ms, us or ns", name);
}

const char *sensim_time_unit_name(sensim_time_unit unit)
{
    return (unsigned)unit <= SENSIM_TIME_NS ? time_units[unit].name : "?";
}

static const char *const format_names[] = {"auto", "euroc", "tum", "csv"};

sensim_status sensim_text_format_parse(const char *name, sensim_text_format *format)
{
    for (int i = 1; i <= SENSIM_TEXT_CSV; i++)
        if (!strcmp(name, format_names[i])) {
            *format = (sensim_text_format)i;
            return SENSIM_OK;
        }
    return sensim_error(SENSIM_EINVAL, "format '%s': expected euroc, tum or csv", name);
}

const char *sensim_text_format_name(sensim_text_format format)
{
    return (unsigned)format <= SENSIM_TEXT_CSV ? format_names[format] : "?";
}

void sensim_text_close(sensim_text_reader *r)
{
    if (!r)
        return;
    sensim_lines_close_(&r->in);
    for (size_t i = 0; i < r->nahead; i++)
        free(r->ahead[i]);
    for (int k = 0; k < NKEYS; k++)
        free(r->colname[k]);
    free(r);
}

sensim_text_format sensim_text_get_format(const sensim_text_reader *r) { return r->format; }
sensim_text_kind sensim_text_get_kind(const sensim_text_reader *r) { return r->kind; }
unsigned sensim_text_fields(const sensim_text_reader *r) { return r->fields; }
sensim_time_unit sensim_text_time_unit(const sensim_text_reader *r) { return r->unit; }
const char *sensim_text_time_note(const sensim_text_reader *r) { return r->note; }
int64_t sensim_text_first_ns(const sensim_text_reader *r) { return r->first_ns; }
size_t sensim_text_rows(const sensim_text_reader *r) { return r->rows; }

/* ---- lines and cells ---- */

/* The next line without its end (CR LF or LF), or NULL at the end of the
 * file (*st set on a read error). */
static char *read_line(sensim_text_reader *r, sensim_status *st)
{
    *st = SENSIM_OK;
    ssize_t n = sensim_lines_next_(&r->in, st);
    if (n < 0)
        return NULL;
    while (n > 0 && (r->in.line[n - 1] == '\n' || r->in.line[n - 1] == '\r'))
        r->in.line[--n] = '\0';
    if (memchr(r->in.line, '\0', (size_t)n)) {
        *st = sensim_error(SENSIM_EFORMAT, "%s:%zu: a NUL byte: not a text file", r->in.path, r->in.lineno);
        return NULL;
    }
    return r->in.line;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static int is_blank(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return !*s;
}

static char pick_delim(const char *s)
{
    if (strchr(s, ','))
        return ',';
    if (strchr(s, ';'))
        return ';';
    if (strchr(s, '\t'))
        return '\t';
    return ' ';
}

/* Splits s in place; returns the number of cells (may exceed max: only max
 * are stored). */
static size_t split(char *s, char delim, char **cells, size_t max)
{
    size_t n = 0;
    if (delim == ' ') {
        char *p = s;
        for (;;) {
            while (*p == ' ' || *p == '\t')
                p++;
            if (!*p)
                break;
            if (n < max)
                cells[n] = p;
            n++;
            while (*p && *p != ' ' && *p != '\t')
                p++;
            if (*p)
                *p++ = '\0';
        }
        return n;
    }
    return sensim_split_cells_(s, delim, 0, trim, cells, max);
}

static int is_number(const char *s)
{
    if (!*s)
        return 0;
    char *end;
    errno = 0;
    strtod(s, &end);
    return end != s && !*end;
}

/* EuRoC writes units as "rad s^-1", "m s^-2" and "[]": blanks between two
 * factors are products. */
static void normalize_unit(const char *in, char *out, size_t size)
{
    size_t k = 0;
    const char *p = in;
    while (*p && k + 2 < size) {
        if (isspace((unsigned char)*p)) {
            const char *q = p;
            while (isspace((unsigned char)*q))
                q++;
            char prev = k ? out[k - 1] : '\0';
            if (k && *q && !strchr("*/(^", prev) && !strchr("*/)^", *q))
                out[k++] = '*';
            p = q;
            continue;
        }
        out[k++] = *p++;
    }
    out[k] = '\0';
}

/* Splits a header cell "name [unit]" (or "name (unit)") into a lower-case
 * name (leading '#' dropped) and the unit text ("" when none, "-" for an
 * empty bracket). */
static void header_cell(const char *cell, char *name, size_t nsize, char *unit, size_t usize)
{
    while (*cell == '#' || isspace((unsigned char)*cell))
        cell++;
    const char *br = strchr(cell, '[');
    const char *end = br ? br : cell + strlen(cell);
    char close = ']';
    if (!br && (br = strchr(cell, '(')) != NULL) {
        end = br;
        close = ')';
    }
    size_t n = (size_t)(end - cell);
    while (n && isspace((unsigned char)cell[n - 1]))
        n--;
    if (n >= nsize)
        n = nsize - 1;
    for (size_t i = 0; i < n; i++)
        name[i] = (char)tolower((unsigned char)cell[i]);
    name[n] = '\0';
    unit[0] = '\0';
    if (br) {
        const char *e = strchr(br + 1, close);
        size_t m = e ? (size_t)(e - br - 1) : strlen(br + 1);
        char raw[128];
        if (m >= sizeof raw)
            m = sizeof raw - 1;
        memcpy(raw, br + 1, m);
        raw[m] = '\0';
        char *t = trim(raw);
        if (!*t)
            snprintf(unit, usize, "-");
        else
            normalize_unit(t, unit, usize);
    }
}

/* The key (0 = t, 1 + SENSIM_TF_*) a header name stands for, or -1. A time
 * name may carry its unit as a suffix ("time_ns"): *tunit is set then. */
static int alias_key(const char *name, sensim_time_unit *tunit)
{
    for (int i = 0; alias_t[i]; i++)
        if (!strcmp(name, alias_t[i]))
            return 0;
    static const char *const sfx[] = {"_ns", "_us", "_ms", "_s"};
    static const sensim_time_unit su[] = {SENSIM_TIME_NS, SENSIM_TIME_US, SENSIM_TIME_MS, SENSIM_TIME_S};
    size_t n = strlen(name);
    for (int s = 0; s < 4; s++) {
        size_t m = strlen(sfx[s]);
        if (n > m && !strcmp(name + n - m, sfx[s])) {
            char base[64];
            snprintf(base, sizeof base, "%.*s", (int)(n - m), name);
            for (int i = 0; alias_t[i]; i++)
                if (!strcmp(base, alias_t[i])) {
                    *tunit = su[s];
                    return 0;
                }
        }
    }
    static const char *const *const tables[] = {alias_w, alias_a, alias_m, alias_p, alias_q, alias_v};
    static const int first[] = {SENSIM_TF_WX, SENSIM_TF_AX, SENSIM_TF_MX, SENSIM_TF_PX, SENSIM_TF_QW, SENSIM_TF_VX};
    for (int g = 0; g < 6; g++) {
        const char *axes = g == 4 ? "wxyz" : "xyz";
        for (int a = 0; axes[a]; a++)
            for (int i = 0; tables[g][i]; i++) {
                char want[64];
                snprintf(want, sizeof want, tables[g][i], axes[a]);
                if (!strcmp(name, want))
                    return 1 + first[g] + a;
            }
    }
    return -1;
}

static const char header_help[] =
    "a header names t and either wx,wy,wz / ax,ay,az / mx,my,mz (an IMU) or px,py,pz and qw,qx,qy,qz "
    "[vx,vy,vz] (poses), directly or as x,y,z / tx,ty,tz, gyro_x, acc_x, mag_x, w_RS_S_x (EuRoC), with an "
    "optional unit in brackets ('gyro_x [deg/s]'); or map them with --columns t=NAME,wx=NAME,...";

static sensim_dim field_dim(int field)
{
    if (field <= SENSIM_TF_WZ)
        return SENSIM_DIM_ANGULAR_RATE;
    if (field <= SENSIM_TF_AZ)
        return SENSIM_DIM_ACCEL;
    if (field <= SENSIM_TF_MZ)
        return SENSIM_DIM_MAGNETIC;
    if (field <= SENSIM_TF_PZ)
        return SENSIM_DIM_LENGTH;
    if (field <= SENSIM_TF_QZ)
        return SENSIM_DIM_NONE;
    return SENSIM_DIM_VELOCITY;
}

/* Applies a header unit to a key: the time unit for t, a scale for fields. */
static sensim_status apply_unit(sensim_text_reader *r, int key, const char *unit, size_t hline, int col,
                                sensim_time_unit *hdr_time)
{
    if (!*unit)
        return SENSIM_OK;
    double s = 1.0;
    sensim_dim d = SENSIM_DIM_NONE;
    if (strcmp(unit, "-") && sensim_units_unit(unit, &s, &d)) {
        char why[200];
        snprintf(why, sizeof why, "%s", sensim_last_error());
        return sensim_error(SENSIM_EFORMAT, "%s:%zu: column %d ('%s'): unit '%s' not understood (%s)", r->in.path,
                            hline, col + 1, r->colname[key], unit, why);
    }
    if (key == 0) {
        if (!sensim_dim_equal(d, SENSIM_DIM_TIME))
            return sensim_error(SENSIM_EFORMAT, "%s:%zu: column %d ('%s'): unit '%s' is not a time", r->in.path, hline,
                                col + 1, r->colname[key], unit);
        for (int u = SENSIM_TIME_S; u <= SENSIM_TIME_NS; u++)
            if (fabs(s * 1e9 / (double)time_units[u].ns - 1) < 1e-9) {
                *hdr_time = (sensim_time_unit)u;
                return SENSIM_OK;
            }
        return sensim_error(SENSIM_EUNSUPPORTED, "%s:%zu: column %d ('%s'): time unit '%s' (use s, ms, us or ns)",
                            r->in.path, hline, col + 1, r->colname[key], unit);
    }
    sensim_dim want = field_dim(key - 1);
    if (!strcmp(unit, "-"))
        d = SENSIM_DIM_NONE;
    if (!sensim_dim_equal(d, want)) {
        char a[64], b[64];
        return sensim_error(SENSIM_EFORMAT, "%s:%zu: column %d ('%s'): unit '%s' is %s, expected %s for %s", r->in.path,
                            hline, col + 1, r->colname[key], unit, sensim_dim_format(d, a, sizeof a),
                            sensim_dim_format(want, b, sizeof b), key_names[key]);
    }
    r->scale[key - 1] = s;
    return SENSIM_OK;
}

static int key_index(const char *k)
{
    for (int i = 0; i < NKEYS; i++)
        if (!strcmp(k, key_names[i]))
            return i;
    return -1;
}

/* Maps columns from --columns "key=NAME,..." (NAME a header name, or a
 * 1-based column number). */
static sensim_status map_columns(sensim_text_reader *r, const char *spec, char **hcells, size_t nh, size_t hline,
                                 sensim_time_unit *hdr_time)
{
    char *copy = strdup(spec);
    if (!copy)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    sensim_status st = SENSIM_OK;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && !st; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            st = sensim_error(SENSIM_EINVAL, "--columns: '%s' is not KEY=NAME (keys: %s)", tok, SENSIM_TEXT_KEYS);
            break;
        }
        *eq = '\0';
        char *key = trim(tok), *name = trim(eq + 1);
        int k = key_index(key);
        if (k < 0) {
            st = sensim_error(SENSIM_EINVAL, "--columns: unknown key '%s' (keys: %s)", key, SENSIM_TEXT_KEYS);
            break;
        }
        if (r->col[k] >= 0) {
            st = sensim_error(SENSIM_EINVAL, "--columns: key '%s' given twice", key);
            break;
        }
        char *end;
        long num = strtol(name, &end, 10);
        int found = -1;
        char unit[64] = "";
        if (*name && !*end) {
            if (num < 1 || num > MAX_CELLS) {
                st = sensim_error(SENSIM_EINVAL, "--columns: %s=%s: column numbers count from 1", key, name);
                break;
            }
            found = (int)num - 1;
        } else {
            char want[128], wu[64];
            header_cell(name, want, sizeof want, wu, sizeof wu);
            for (size_t i = 0; i < nh && found < 0; i++) {
                char hn[128];
                header_cell(hcells[i], hn, sizeof hn, unit, sizeof unit);
                if (!strcmp(hn, want) || !strcasecmp(hcells[i], name))
                    found = (int)i;
            }
            if (found < 0) {
                char list[1024] = "";
                for (size_t i = 0; i < nh; i++)
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", i ? ", " : "", hcells[i]);
                st = nh ? sensim_error(SENSIM_ENOTFOUND, "%s:%zu: --columns %s=%s: the header has no column '%s' (it has %s)",
                                       r->in.path, hline, key, name, name, list)
                        : sensim_error(SENSIM_ENOTFOUND, "%s: --columns %s=%s: the file has no header; give column numbers (%s=1)",
                                       r->in.path, key, name, key);
                break;
            }
        }
        r->col[k] = found;
        r->colname[k] = strdup((size_t)found < nh ? hcells[found] : name);
        st = apply_unit(r, k, unit, hline, found, hdr_time);
    }
    free(copy);
    return st;
}

static sensim_status map_aliases(sensim_text_reader *r, char **hcells, size_t nh, size_t hline,
                                 sensim_time_unit *hdr_time)
{
    for (size_t i = 0; i < nh && i < MAX_CELLS; i++) {
        char name[128], unit[64];
        header_cell(hcells[i], name, sizeof name, unit, sizeof unit);
        sensim_time_unit tu = SENSIM_TIME_AUTO;
        int k = alias_key(name, &tu);
        if (k < 0)
            continue; /* EuRoC's biases, a sequence number, ... */
        if (r->col[k] >= 0)
            return sensim_error(SENSIM_EFORMAT, "%s:%zu: columns %d ('%s') and %zu ('%s') are both %s", r->in.path,
                                hline, r->col[k] + 1, hcells[r->col[k]], i + 1, hcells[i], key_names[k]);
        r->col[k] = (int)i;
        r->colname[k] = strdup(hcells[i]);
        if (tu != SENSIM_TIME_AUTO)
            *hdr_time = tu;
        sensim_status st = apply_unit(r, k, unit, hline, (int)i, hdr_time);
        if (st)
            return st;
    }
    return SENSIM_OK;
}

/* Checks that the mapped keys make one IMU or one pose stream. */
static sensim_status check_fields(sensim_text_reader *r, size_t hline, char **hcells, size_t nh)
{
    r->fields = 0;
    for (int f = 0; f < SENSIM_TF_N; f++)
        if (r->col[1 + f] >= 0)
            r->fields |= 1u << f;
    char list[1024] = "";
    for (size_t i = 0; i < nh; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", i ? ", " : "", hcells[i]);
    const char *where = nh ? list : "no header";
    if (r->col[0] < 0)
        return sensim_error(SENSIM_EFORMAT, "%s:%zu: no time column among %s; %s", r->in.path, hline, where,
                            header_help);
    static const unsigned triads[] = {SENSIM_TF_GYRO, SENSIM_TF_ACCEL, SENSIM_TF_MAG, SENSIM_TF_POS, SENSIM_TF_QUAT,
                                      SENSIM_TF_VEL};
    static const char *const tnames[] = {"wx,wy,wz", "ax,ay,az", "mx,my,mz", "px,py,pz", "qw,qx,qy,qz", "vx,vy,vz"};
    for (int g = 0; g < 6; g++) {
        unsigned have = r->fields & triads[g];
        if (have && have != triads[g])
            return sensim_error(SENSIM_EFORMAT, "%s:%zu: %s must be given together (columns: %s)", r->in.path, hline,
                                tnames[g], where);
    }
    unsigned imu = r->fields & (SENSIM_TF_GYRO | SENSIM_TF_ACCEL | SENSIM_TF_MAG);
    unsigned pose = r->fields & (SENSIM_TF_POS | SENSIM_TF_QUAT | SENSIM_TF_VEL);
    if (imu && pose)
        return sensim_error(SENSIM_EFORMAT, "%s:%zu: both inertial and pose columns; import them from separate files",
                            r->in.path, hline);
    if (imu) {
        r->kind = SENSIM_TEXT_IMU;
        return SENSIM_OK;
    }
    if ((pose & SENSIM_TF_POS) && (pose & SENSIM_TF_QUAT)) {
        r->kind = SENSIM_TEXT_POSE;
        return SENSIM_OK;
    }
    return sensim_error(SENSIM_EFORMAT, "%s:%zu: no inertial or pose columns among %s; %s", r->in.path, hline, where,
                        header_help);
}

/* ---- stamps ---- */

/* Parses a stamp in units of unit_ns nanoseconds into exact integer ns:
 * digits are taken as written, not through a double (1.4e18 ns has 19
 * digits). 0 ok, -1 not a number, -2 out of range. */
static int parse_stamp(const char *s, int64_t unit_ns, int64_t *out)
{
    const char *p = s;
    int neg = 0;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    const char *ip = p;
    while (isdigit((unsigned char)*p))
        p++;
    size_t ni = (size_t)(p - ip);
    const char *fp = NULL;
    size_t nf = 0;
    if (*p == '.') {
        fp = ++p;
        while (isdigit((unsigned char)*p))
            p++;
        nf = (size_t)(p - fp);
    }
    if (!ni && !nf)
        return -1;
    if (*p == 'e' || *p == 'E' || ni > 19) {
        char *end;
        errno = 0;
        long double v = strtold(s, &end);
        if (end == s || *end || !isfinite((double)v))
            return -1;
        v *= (long double)unit_ns;
        if (fabsl(v) >= 9.2e18L)
            return -2;
        *out = (int64_t)llroundl(v);
        return 0;
    }
    if (*p)
        return -1;
    unsigned long long iv = 0;
    for (size_t i = 0; i < ni; i++) {
        unsigned d = (unsigned)(ip[i] - '0');
        if (iv > (9200000000000000000ull - d) / 10)
            return -2;
        iv = iv * 10 + d;
    }
    if (iv && (unsigned long long)unit_ns > 9200000000000000000ull / iv)
        return -2;
    unsigned long long total = iv * (unsigned long long)unit_ns;
    if (nf) {
        char buf[48] = "0.";
        size_t m = nf < 40 ? nf : 40;
        memcpy(buf + 2, fp, m);
        buf[2 + m] = '\0';
        long double frac = strtold(buf, NULL) * (long double)unit_ns;
        total += (unsigned long long)llroundl(frac);
        if (total > 9200000000000000000ull)
            return -2;
    }
    *out = neg ? -(int64_t)total : (int64_t)total;
    return 0;
}

sensim_status sensim_text_parse_stamp(const char *text, sensim_time_unit unit, int64_t *ns)
{
    if (unit < SENSIM_TIME_S || unit > SENSIM_TIME_NS)
        return sensim_error(SENSIM_EINVAL, "stamp '%s': no time unit", text);
    int e = parse_stamp(text, time_units[unit].ns, ns);
    if (e)
        return sensim_error(SENSIM_EFORMAT, "'%s' is %s", text, e == -1 ? "not a number" : "out of range as a time in ns");
    return SENSIM_OK;
}

static int cmp_ld(const void *a, const void *b)
{
    long double x = *(const long double *)a, y = *(const long double *)b;
    return x < y ? -1 : x > y;
}

static int plausible(long double t0_s, long double step_s)
{
    long double a = fabsl(t0_s);
    int when = (a >= EPOCH_MIN_S && a <= EPOCH_MAX_S) || a < RELATIVE_MAX_S;
    long double rate = step_s > 0 ? 1.0L / step_s : 0;
    return when && rate >= RATE_MIN_HZ && rate <= RATE_MAX_HZ;
}

/* Tells the time unit from the stamps read ahead (raw numbers). `prefer_s`
 * (TUM) takes seconds whenever they are plausible. */
static sensim_status detect_unit(sensim_text_reader *r, const long double *v, size_t n, int has_fraction, int prefer_s,
                                 sensim_time_unit given, const char *given_from)
{
    if (n < 2) {
        if (given != SENSIM_TIME_AUTO) {
            r->unit = given;
            return SENSIM_OK;
        }
        return sensim_error(SENSIM_EDATA, "%s: %zu data row%s: too few to tell the time unit; give --time-unit",
                            r->in.path, n, n == 1 ? "" : "s");
    }
    long double *d = malloc((n - 1) * sizeof *d);
    if (!d)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    /* The median of the positive steps (a repeated stamp is reported by the
     * read, with its line). */
    size_t nd = 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (v[i + 1] > v[i])
            d[nd++] = v[i + 1] - v[i];
    long double step = 0;
    if (nd) {
        qsort(d, nd, sizeof *d, cmp_ld);
        step = d[(nd - 1) / 2];
    }
    free(d);
    int ok[SENSIM_TIME_NS + 1] = {0}, nok = 0;
    for (int u = SENSIM_TIME_S; u <= SENSIM_TIME_NS; u++) {
        long double sc = (long double)time_units[u].ns * 1e-9L;
        ok[u] = plausible(v[0] * sc, step * sc);
        nok += ok[u];
    }
    char cand[160] = "";
    for (int u = SENSIM_TIME_S; u <= SENSIM_TIME_NS; u++)
        if (ok[u]) {
            long double sc = (long double)time_units[u].ns * 1e-9L;
            snprintf(cand + strlen(cand), sizeof cand - strlen(cand), "%s%s (%.4g Hz)", *cand ? " or " : "",
                     time_units[u].name, (double)(1.0L / (step * sc)));
        }
    if (given != SENSIM_TIME_AUTO) {
        /* A given unit is used unless it puts the recording past 2286. */
        long double sc = (long double)time_units[given].ns * 1e-9L;
        if (fabsl(v[0] * sc) > EPOCH_MAX_S)
            return sensim_error(SENSIM_EDATA,
                                "%s:%zu: the first stamp %.19Lg read in %s (%s) is %.3Lg s, past the year 2286; "
                                "the stamps look like %s",
                                r->in.path, r->ahead_line[0], v[0], time_units[given].name, given_from, v[0] * sc,
                                nok ? cand : "another unit");
        r->unit = given;
        snprintf(r->note, sizeof r->note, "times in %s (%s)", time_units[given].name, given_from);
        return SENSIM_OK;
    }
    int pick = 0;
    if (prefer_s && ok[SENSIM_TIME_S])
        pick = SENSIM_TIME_S;
    else if (nok == 1)
        for (int u = SENSIM_TIME_S; u <= SENSIM_TIME_NS; u++)
            if (ok[u])
                pick = u;
    if (!pick && nok > 1 && ok[SENSIM_TIME_S] && has_fraction)
        pick = SENSIM_TIME_S; /* fractional stamps are seconds; ms/us/ns clocks count integers */
    if (!pick) {
        if (nok)
            return sensim_error(SENSIM_EDATA,
                                "%s:%zu: cannot tell the time unit of column '%s' (first stamp %.19Lg, median step "
                                "%.6Lg): it could be %s; give --time-unit",
                                r->in.path, r->ahead_line[0], r->colname[0], v[0], step, cand);
        return sensim_error(SENSIM_EDATA,
                            "%s:%zu: column '%s' (first stamp %.19Lg, median step %.6Lg) is no plausible clock in "
                            "s, ms, us or ns (an epoch in 1973..2286 or a start under 1e7 s, at 0.5 Hz..100 kHz); "
                            "give --time-unit",
                            r->in.path, r->ahead_line[0], r->colname[0], v[0], step);
    }
    r->unit = (sensim_time_unit)pick;
    long double sc = (long double)time_units[pick].ns * 1e-9L;
    snprintf(r->note, sizeof r->note, "times in %s: told from the stamps (first %.6Lg, median step %.6Lg: %.6g Hz)%s",
             time_units[pick].name, v[0], step, (double)(1.0L / (step * sc)),
             prefer_s && pick == SENSIM_TIME_S ? "" : "; --time-unit overrides");
    return SENSIM_OK;
}

/* ---- open ---- */

sensim_text_reader *sensim_text_open(const char *path, const sensim_text_opts *opts)
{
    sensim_text_opts o = opts ? *opts : sensim_text_default_opts();
    sensim_text_reader *r = sensim_new_(sizeof *r, path);
    char *hline_text = NULL;
    long double *tv = NULL;
    if (!r || sensim_lines_open_(&r->in, path))
        goto fail;
    for (int k = 0; k < NKEYS; k++)
        r->col[k] = -1;
    for (int f = 0; f < SENSIM_TF_N; f++)
        r->scale[f] = 1.0;
    /* The header: a non-comment line whose first cell is not a number, or
     * the last '#' comment before the data (EuRoC writes "#timestamp ..."). */
    sensim_status st;
    char *s;
    size_t hline = 0, comment_line = 0;
    char *comment = NULL;
    int header_is_comment = 0;
    while ((s = read_line(r, &st)) != NULL) {
        if (is_blank(s))
            continue;
        if (s[0] == '#' || s[0] == '%') {
            free(comment);
            if (!(comment = strdup(s))) {
                sensim_error(SENSIM_ENOMEM, "out of memory");
                goto fail;
            }
            comment_line = r->in.lineno;
            continue;
        }
        break;
    }
    if (!s) {
        free(comment);
        if (!st)
            sensim_error(SENSIM_EDATA, "%s: no data rows", path);
        goto fail;
    }
    char first_cells_buf[64];
    {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%s", s);
        char *c[1];
        split(tmp, pick_delim(s), c, 1);
        snprintf(first_cells_buf, sizeof first_cells_buf, "%s", c[0] ? c[0] : "");
    }
    if (!is_number(first_cells_buf)) {
        hline_text = strdup(s);
        hline = r->in.lineno;
        free(comment);
        comment = NULL;
        s = NULL; /* data starts on the next line */
    } else if (comment) {
        hline_text = comment;
        hline = comment_line;
        header_is_comment = 1;
        comment = NULL;
    }
    /* Read ahead the first data rows. */
    if (s) {
        if (!(r->ahead[0] = strdup(s))) {
            sensim_error(SENSIM_ENOMEM, "out of memory");
            goto fail;
        }
        r->ahead_line[0] = r->in.lineno;
        r->nahead = 1;
    }
    while (r->nahead < DETECT_ROWS && (s = read_line(r, &st)) != NULL) {
        if (is_blank(s) || s[0] == '#' || s[0] == '%')
            continue;
        if (!(r->ahead[r->nahead] = strdup(s))) {
            sensim_error(SENSIM_ENOMEM, "out of memory");
            goto fail;
        }
        r->ahead_line[r->nahead++] = r->in.lineno;
    }
    if (st)
        goto fail;
    if (!r->nahead) {
        sensim_error(SENSIM_EDATA, "%s: no data rows after the header", path);
        goto fail;
    }
    r->delim = pick_delim(r->ahead[0]);
    char *dc[MAX_CELLS];
    char *tmp0 = strdup(r->ahead[0]);
    if (!tmp0) {
        sensim_error(SENSIM_ENOMEM, "out of memory");
        goto fail;
    }
    size_t ndata = split(tmp0, r->delim, dc, MAX_CELLS);
    free(tmp0);
    char *hc[MAX_CELLS];
    size_t nh = 0;
    char *hcopy = NULL;
    if (hline_text) {
        char *h = hline_text;
        while (*h == '#' || *h == '%')
            h++;
        hcopy = h;
        nh = split(hcopy, r->delim, hc, MAX_CELLS);
        if (nh > MAX_CELLS)
            nh = MAX_CELLS;
        /* A comment line is the header only when it has the data's shape. */
        if (header_is_comment && nh != ndata)
            nh = 0;
    }
    int euroc_names = 0;
    for (size_t i = 0; i < nh; i++) {
        char nm[128], un[64];
        header_cell(hc[i], nm, sizeof nm, un, sizeof un);
        if (!strncmp(nm, "w_rs_s_", 7) || !strncmp(nm, "a_rs_s_", 7) || !strncmp(nm, "p_rs_r_", 7))
            euroc_names = 1;
    }
    sensim_text_format fmt = o.format;
    if (fmt == SENSIM_TEXT_AUTO) {
        if (euroc_names)
            fmt = SENSIM_TEXT_EUROC;
        else if ((!nh || header_is_comment) && ndata == 8 && !o.columns)
            fmt = SENSIM_TEXT_TUM;
        else
            fmt = SENSIM_TEXT_CSV;
    }
    if (fmt == SENSIM_TEXT_EUROC && !euroc_names) {
        sensim_error(SENSIM_EFORMAT, "%s:%zu: not an EuRoC/ASL header (expected '#timestamp [ns],w_RS_S_x [rad s^-1],...' "
                     "or '#timestamp, p_RS_R_x [m], ...')", path, hline ? hline : r->ahead_line[0]);
        goto fail;
    }
    r->format = fmt;
    sensim_time_unit hdr_time = SENSIM_TIME_AUTO;
    size_t where = hline ? hline : r->ahead_line[0];
    if (fmt == SENSIM_TEXT_TUM && !o.columns) {
        /* timestamp tx ty tz qx qy qz qw */
        static const int tum_keys[8] = {0,
                                        1 + SENSIM_TF_PX,
                                        1 + SENSIM_TF_PY,
                                        1 + SENSIM_TF_PZ,
                                        1 + SENSIM_TF_QX,
                                        1 + SENSIM_TF_QY,
                                        1 + SENSIM_TF_QZ,
                                        1 + SENSIM_TF_QW};
        static const char *const tum_names[8] = {"timestamp", "tx", "ty", "tz", "qx", "qy", "qz", "qw"};
        if (ndata < 8) {
            sensim_error(SENSIM_EFORMAT, "%s:%zu: %zu columns; a TUM trajectory has 8 (timestamp tx ty tz qx qy qz qw)",
                         path, r->ahead_line[0], ndata);
            goto fail;
        }
        for (int i = 0; i < 8; i++) {
            r->col[tum_keys[i]] = i;
            r->colname[tum_keys[i]] = strdup(tum_names[i]);
        }
        st = check_fields(r, where, hc, nh);
    } else if (o.columns) {
        st = map_columns(r, o.columns, hc, nh, where, &hdr_time);
        if (!st)
            st = check_fields(r, where, hc, nh);
    } else if (!nh) {
        st = sensim_error(SENSIM_EFORMAT, "%s:%zu: no header line naming the columns (%zu per row); %s", path,
                          r->ahead_line[0], ndata, header_help);
    } else {
        st = map_aliases(r, hc, nh, where, &hdr_time);
        if (!st)
            st = check_fields(r, where, hc, nh);
    }
    if (st)
        goto fail;
    r->ncols_min = 0;
    for (int k = 0; k < NKEYS; k++)
        if (r->col[k] + 1 > r->ncols_min)
            r->ncols_min = r->col[k] + 1;
    /* The time unit. */
    sensim_time_unit given = o.time_unit;
    const char *given_from = "--time-unit";
    if (given == SENSIM_TIME_AUTO && hdr_time != SENSIM_TIME_AUTO) {
        given = hdr_time;
        given_from = "from the header";
    }
    if (given == SENSIM_TIME_AUTO && fmt == SENSIM_TEXT_EUROC) {
        given = SENSIM_TIME_NS;
        given_from = "EuRoC stamps are ns";
    }
    if (!(tv = malloc(r->nahead * sizeof *tv))) {
        sensim_error(SENSIM_ENOMEM, "out of memory");
        goto fail;
    }
    size_t nt = 0;
    int has_fraction = 0;
    for (size_t i = 0; i < r->nahead; i++) {
        char *c[MAX_CELLS], *cp = strdup(r->ahead[i]);
        if (!cp) {
            sensim_error(SENSIM_ENOMEM, "out of memory");
            goto fail;
        }
        size_t m = split(cp, r->delim, c, MAX_CELLS);
        if ((int)m > r->col[0]) {
            char *end;
            long double x = strtold(c[r->col[0]], &end);
            if (end != c[r->col[0]] && !*end && isfinite((double)x)) {
                tv[nt++] = x;
                if (strchr(c[r->col[0]], '.') && x != floorl(x))
                    has_fraction = 1;
            }
        }
        free(cp);
    }
    if ((st = detect_unit(r, tv, nt, has_fraction, fmt == SENSIM_TEXT_TUM, given, given_from)))
        goto fail;
    r->unit_ns = time_units[r->unit].ns;
    {
        /* The first stamp, so that callers can choose a time origin before
         * reading (a malformed first row is reported by the read). */
        char *c[MAX_CELLS], *cp = strdup(r->ahead[0]);
        if (cp && (int)split(cp, r->delim, c, MAX_CELLS) > r->col[0])
            parse_stamp(c[r->col[0]], r->unit_ns, &r->first_ns);
        free(cp);
    }
    free(tv);
    free(hline_text);
    return r;
fail:
    free(tv);
    free(hline_text);
    sensim_text_close(r);
    return NULL;
}

/* ---- rows ---- */

static sensim_status parse_row(sensim_text_reader *r, char *s, size_t lineno, int64_t *t_ns, double *v)
{
    char *c[MAX_CELLS];
    size_t m = split(s, r->delim, c, MAX_CELLS);
    if ((int)m < r->ncols_min)
        return sensim_error(SENSIM_EFORMAT, "%s:%zu: %zu column%s, need at least %d", r->in.path, lineno, m,
                            m == 1 ? "" : "s", r->ncols_min);
    int col = r->col[0];
    int e = parse_stamp(c[col], r->unit_ns, t_ns);
    if (e)
        return sensim_error(SENSIM_EFORMAT, "%s:%zu: column %d ('%s'): '%s' is %s", r->in.path, lineno, col + 1,
                            r->colname[0], c[col], e == -1 ? "not a number" : "out of range as a time in ns");
    if (r->have_prev && *t_ns <= r->prev_ns)
        return sensim_error(SENSIM_EDATA, "%s:%zu: column %d ('%s'): %s does not increase (previous stamp %lld ns, this %lld ns)",
                            r->in.path, lineno, col + 1, r->colname[0], c[col], (long long)r->prev_ns,
                            (long long)*t_ns);
    for (int f = 0; f < SENSIM_TF_N; f++) {
        v[f] = 0.0;
        if (!(r->fields & (1u << f)))
            continue;
        col = r->col[1 + f];
        char *end;
        errno = 0;
        double x = strtod(c[col], &end);
        if (end == c[col] || *end || !isfinite(x))
            return sensim_error(SENSIM_EFORMAT, "%s:%zu: column %d ('%s'): '%s' is %s", r->in.path, lineno, col + 1,
                                r->colname[1 + f], c[col], end == c[col] || *end ? "not a number" : "not finite");
        v[f] = x * r->scale[f];
    }
    if (r->fields & SENSIM_TF_QUAT) {
        double *q = v + SENSIM_TF_QW, nq = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (!(fabs(nq - 1.0) <= 1e-3))
            return sensim_error(SENSIM_EDATA, "%s:%zu: columns %d..: the quaternion (%g, %g, %g, %g) has norm %g, not 1",
                                r->in.path, lineno, r->col[1 + SENSIM_TF_QW] + 1, q[0], q[1], q[2], q[3], nq);
        for (int i = 0; i < 4; i++)
            q[i] /= nq;
    }
    if (!r->have_prev)
        r->first_ns = *t_ns;
    r->prev_ns = *t_ns;
    r->have_prev = 1;
    return SENSIM_OK;
}

sensim_status sensim_text_read(sensim_text_reader *r, int64_t *t_ns, double *v, size_t cap, size_t *n)
{
    *n = 0;
    sensim_status st = SENSIM_OK;
    while (*n < cap) {
        char *s;
        size_t lineno;
        if (r->next_ahead < r->nahead) {
            s = r->ahead[r->next_ahead];
            lineno = r->ahead_line[r->next_ahead++];
        } else {
            s = read_line(r, &st);
            if (!s)
                return st;
            lineno = r->in.lineno;
            if (is_blank(s) || s[0] == '#' || s[0] == '%')
                continue;
        }
        if ((st = parse_row(r, s, lineno, t_ns + *n, v + *n * SENSIM_TF_N)))
            return st;
        (*n)++;
        r->rows++;
    }
    return SENSIM_OK;
}

/* ---- poses to ground truth ---- */

typedef struct pose_row {
    double t, p[3], q[4], v[3];
} pose_row;

struct sensim_pose_gt {
    int have_v;
    pose_row w[3]; /* the last three poses, oldest first */
    size_t count;
};

sensim_pose_gt *sensim_pose_gt_create(int have_velocity)
{
    sensim_pose_gt *g = sensim_new_(sizeof *g, NULL);
    if (!g)
        return NULL;
    g->have_v = have_velocity;
    return g;
}

void sensim_pose_gt_destroy(sensim_pose_gt *g) { free(g); }

/* Weights of the derivative at node j (0, 1, 2) of the quadratic through
 * (t0, t1, t2): f'(t_j) = c0 f0 + c1 f1 + c2 f2. */
static void d1_weights(double h1, double h2, int j, double c[3])
{
    if (j == 0) {
        c[0] = -(2 * h1 + h2) / (h1 * (h1 + h2));
        c[1] = (h1 + h2) / (h1 * h2);
        c[2] = -h1 / (h2 * (h1 + h2));
    } else if (j == 1) {
        c[0] = -h2 / (h1 * (h1 + h2));
        c[1] = (h2 - h1) / (h1 * h2);
        c[2] = h1 / (h2 * (h1 + h2));
    } else {
        c[0] = h2 / (h1 * (h1 + h2));
        c[1] = -(h1 + h2) / (h1 * h2);
        c[2] = (h1 + 2 * h2) / (h2 * (h1 + h2));
    }
}

/* Rotation vector of a unit quaternion (the shorter way round). */
static sensim_vec3 quat_log(sensim_quat q)
{
    if (q.w < 0)
        q = sensim_quat_make(-q.w, -q.x, -q.y, -q.z);
    double s = sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
    double angle = 2 * atan2(s, q.w);
    double k = s > 1e-12 ? angle / s : 2.0;
    return sensim_vec3_make(k * q.x, k * q.y, k * q.z);
}

static void emit(sensim_pose_gt *g, int j, sensim_gt_block *out)
{
    const pose_row *a = &g->w[0], *b = &g->w[1], *c = &g->w[2], *me = &g->w[j];
    double h1 = b->t - a->t, h2 = c->t - b->t, w1[3];
    d1_weights(h1, h2, j, w1);
    /* Second derivative of the quadratic: the same at every node. */
    double w2[3] = {2 / (h1 * (h1 + h2)), -2 / (h1 * h2), 2 / (h2 * (h1 + h2))};
    size_t k = out->n++;
    out->t[k] = me->t;
    for (int i = 0; i < 3; i++) {
        out->position[3 * k + i] = me->p[i];
        if (g->have_v) {
            out->velocity[3 * k + i] = me->v[i];
            out->acceleration[3 * k + i] = w1[0] * a->v[i] + w1[1] * b->v[i] + w1[2] * c->v[i];
        } else {
            out->velocity[3 * k + i] = w1[0] * a->p[i] + w1[1] * b->p[i] + w1[2] * c->p[i];
            out->acceleration[3 * k + i] = w2[0] * a->p[i] + w2[1] * b->p[i] + w2[2] * c->p[i];
        }
    }
    for (int i = 0; i < 4; i++)
        out->orientation[4 * k + i] = me->q[i];
    sensim_quat qa = sensim_quat_load(a->q), qb = sensim_quat_load(b->q), qc = sensim_quat_load(c->q);
    sensim_vec3 r1 = sensim_vec3_scale(quat_log(sensim_quat_mul(sensim_quat_conj(qa), qb)), 1 / h1);
    sensim_vec3 r2 = sensim_vec3_scale(quat_log(sensim_quat_mul(sensim_quat_conj(qb), qc)), 1 / h2);
    /* r1 is the mean rate over [t0, t1], r2 over [t1, t2]: a line through
     * them at the interval midpoints, evaluated at node j. */
    double x = j == 0 ? -h1 / 2 : j == 1 ? h1 / 2 : h1 + h2 / 2;
    double f = x / ((h1 + h2) / 2);
    sensim_vec3 wv = sensim_vec3_add(r1, sensim_vec3_scale(sensim_vec3_sub(r2, r1), f));
    sensim_vec3_store(wv, out->angular_velocity + 3 * k);
}

sensim_status sensim_pose_gt_push(sensim_pose_gt *g, size_t n, const double *t, const double *p, const double *q,
                                  const double *v, sensim_gt_block *out)
{
    for (size_t i = 0; i < n; i++) {
        if (out->n >= out->capacity)
            return sensim_error(SENSIM_EINVAL, "ground-truth block of %zu rows is full", out->capacity);
        pose_row row;
        row.t = t[i];
        memcpy(row.p, p + 3 * i, sizeof row.p);
        memcpy(row.q, q + 4 * i, sizeof row.q);
        if (v)
            memcpy(row.v, v + 3 * i, sizeof row.v);
        else
            memset(row.v, 0, sizeof row.v);
        /* Keep successive quaternions in one hemisphere (q and -q are the
         * same rotation; a recording may flip between them). */
        if (g->count) {
            const double *pq = g->w[g->count < 3 ? g->count - 1 : 2].q;
            if (pq[0] * row.q[0] + pq[1] * row.q[1] + pq[2] * row.q[2] + pq[3] * row.q[3] < 0)
                for (int k = 0; k < 4; k++)
                    row.q[k] = -row.q[k];
        }
        if (g->count < 3) {
            g->w[g->count++] = row;
            if (g->count == 3) {
                if (out->n + 2 > out->capacity)
                    return sensim_error(SENSIM_EINVAL, "ground-truth block of %zu rows is full", out->capacity);
                emit(g, 0, out);
                emit(g, 1, out);
            }
            continue;
        }
        g->w[0] = g->w[1];
        g->w[1] = g->w[2];
        g->w[2] = row;
        g->count++;
        emit(g, 1, out);
    }
    return SENSIM_OK;
}

sensim_status sensim_pose_gt_finish(sensim_pose_gt *g, sensim_gt_block *out)
{
    if (g->count < 3)
        return sensim_error(SENSIM_EDATA, "%zu poses: at least 3 are needed to derive velocity and rates", g->count);
    if (out->n >= out->capacity)
        return sensim_error(SENSIM_EINVAL, "ground-truth block of %zu rows is full", out->capacity);
    emit(g, 2, out);
    return SENSIM_OK;
}

/* ---- KITTI velodyne scans ---- */

sensim_status sensim_kitti_read(const char *path, float **xyzi, size_t *n)
{
    *xyzi = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sensim_error(errno == ENOENT ? SENSIM_ENOTFOUND : SENSIM_EIO, "%s: cannot open: %s", path,
                            strerror(errno));
    sensim_status st = SENSIM_OK;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return sensim_error(SENSIM_EIO, "%s: cannot tell its size", path);
    }
    if (size % 16) {
        fclose(f);
        return sensim_error(SENSIM_EFORMAT,
                            "%s: %ld bytes, not a multiple of 16 (a KITTI scan is float32 x, y, z, reflectance per point)",
                            path, size);
    }
    size_t m = (size_t)size / 16;
    unsigned char *raw = malloc(m ? (size_t)size : 1);
    float *out = malloc((m ? m : 1) * 4 * sizeof *out);
    if (!raw || !out) {
        st = sensim_error(SENSIM_ENOMEM, "%s: out of memory for %zu points", path, m);
        goto done;
    }
    if (m && fread(raw, 16, m, f) != m) {
        st = sensim_error(SENSIM_EIO, "%s: short read", path);
        goto done;
    }
    for (size_t i = 0; i < 4 * m; i++) {
        const unsigned char *b = raw + 4 * i;
        uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        float x;
        memcpy(&x, &u, sizeof x);
        if (!isfinite(x)) {
            st = sensim_error(SENSIM_EDATA, "%s: point %zu (byte %zu): %s is not finite", path, i / 4, 4 * i,
                              (const char *[]){"x", "y", "z", "reflectance"}[i % 4]);
            goto done;
        }
        out[i] = x;
    }
    *xyzi = out;
    *n = m;
    out = NULL;
done:
    free(raw);
    free(out);
    fclose(f);
    return st;
}
