/* Datasheet unit strings to SI with dimension checking (see sensim/units.h).
 *
 * Grammar (recursive descent, no allocation):
 *   quantity := ws number ws [expr] ws
 *   expr     := term (('*' | '/') term)*          left-associative: m/s/sqrt(h) = (m/s)/sqrt(h)
 *   term     := factor ['^' power]
 *   factor   := UNIT | '1' | 'sqrt' '(' expr ')' | '(' expr ')'
 *   power    := ['+'|'-'] digits | '(' ['+'|'-'] digits ['/' '2'] ')'
 * The parenthesized half power "^(3/2)" exists so that what
 * sensim_dim_format writes can be read back.
 *
 * Conversion factors: standard gravity 9.80665 m/s^2 (CGPM 1901, as used by
 * IEEE Std 1293 for "g"); deg = pi/180 rad; h = 3600 s so sqrt(h) = 60 sqrt(s)
 * (MODELS.md "Datasheet units"); 1 G (gauss) = 1e-4 T. */
#include "sensim/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PI 3.14159265358979323846
#define G0 9.80665

const sensim_dim SENSIM_DIM_NONE = {0, 0, 0, 0};
const sensim_dim SENSIM_DIM_LENGTH = {2, 0, 0, 0};
const sensim_dim SENSIM_DIM_TIME = {0, 2, 0, 0};
const sensim_dim SENSIM_DIM_FREQUENCY = {0, -2, 0, 0};
const sensim_dim SENSIM_DIM_ANGLE = {0, 0, 2, 0};
const sensim_dim SENSIM_DIM_ANGULAR_RATE = {0, -2, 2, 0};
const sensim_dim SENSIM_DIM_ANGULAR_RATE_DENSITY = {0, -1, 2, 0};
const sensim_dim SENSIM_DIM_ANGULAR_RATE_RW = {0, -3, 2, 0};
const sensim_dim SENSIM_DIM_ANGULAR_RATE_RAMP = {0, -4, 2, 0};
const sensim_dim SENSIM_DIM_ACCEL = {2, -4, 0, 0};
const sensim_dim SENSIM_DIM_ACCEL_DENSITY = {2, -3, 0, 0};
const sensim_dim SENSIM_DIM_ACCEL_RW = {2, -5, 0, 0};
const sensim_dim SENSIM_DIM_ACCEL_RAMP = {2, -6, 0, 0};
const sensim_dim SENSIM_DIM_VELOCITY = {2, -2, 0, 0};
const sensim_dim SENSIM_DIM_MAGNETIC = {0, 0, 0, 2};
const sensim_dim SENSIM_DIM_MAGNETIC_DENSITY = {0, 1, 0, 2};

typedef struct unit_def {
    const char *name;
    double scale; /* SI value of one unit */
    sensim_dim dim;
    const char *definition; /* for sensim_units_explain */
} unit_def;

/* Read-only table; dimensions written out because C11 does not allow the
 * extern consts above in a constant initializer. */
static const unit_def units[] = {
    {"m", 1.0, {2, 0, 0, 0}, "m"},
    {"s", 1.0, {0, 2, 0, 0}, "s"},
    {"sec", 1.0, {0, 2, 0, 0}, "1 s"},
    {"min", 60.0, {0, 2, 0, 0}, "60 s"},
    {"h", 3600.0, {0, 2, 0, 0}, "3600 s"},
    {"hr", 3600.0, {0, 2, 0, 0}, "3600 s"},
    {"Hz", 1.0, {0, -2, 0, 0}, "1/s"},
    {"kHz", 1e3, {0, -2, 0, 0}, "1000/s"},
    {"rad", 1.0, {0, 0, 2, 0}, "rad"},
    {"deg", PI / 180.0, {0, 0, 2, 0}, "pi/180 rad"},
    {"\xc2\xb0", PI / 180.0, {0, 0, 2, 0}, "pi/180 rad"},
    {"degree", PI / 180.0, {0, 0, 2, 0}, "pi/180 rad"},
    {"degrees", PI / 180.0, {0, 0, 2, 0}, "pi/180 rad"},
    /* Datasheet shorthands: degrees per second and per hour, root hertz
     * and root hour. */
    {"dps", PI / 180.0, {0, -2, 2, 0}, "pi/180 rad/s"},
    {"dph", PI / 180.0 / 3600.0, {0, -2, 2, 0}, "pi/648000 rad/s"},
    {"rtHz", 1.0, {0, -1, 0, 0}, "sqrt(Hz)"},
    {"rth", 60.0, {0, 1, 0, 0}, "sqrt(h) = 60 s^(1/2)"},
    {"rthr", 60.0, {0, 1, 0, 0}, "sqrt(h) = 60 s^(1/2)"},
    {"arcmin", PI / 180.0 / 60.0, {0, 0, 2, 0}, "pi/10800 rad"},
    {"arcsec", PI / 180.0 / 3600.0, {0, 0, 2, 0}, "pi/648000 rad"},
    {"g", G0, {2, -4, 0, 0}, "9.80665 m/s^2"},
    {"mg", G0 * 1e-3, {2, -4, 0, 0}, "9.80665e-3 m/s^2"},
    {"ug", G0 * 1e-6, {2, -4, 0, 0}, "9.80665e-6 m/s^2"},
    {"T", 1.0, {0, 0, 0, 2}, "T"},
    {"G", 1e-4, {0, 0, 0, 2}, "1e-4 T"},
    {"gauss", 1e-4, {0, 0, 0, 2}, "1e-4 T"},
    {"mG", 1e-7, {0, 0, 0, 2}, "1e-7 T"},
    {"ppm", 1e-6, {0, 0, 0, 0}, "1e-6"},
    {"%", 1e-2, {0, 0, 0, 0}, "0.01"},
};
#define NUNITS (sizeof units / sizeof units[0])

/* SI prefixes, and the units above that take them: "km" is 1000 m. The
 * prefixed forms of the other units (kHz, mg, mG) are rows of their own,
 * defined in SI. */
static const struct {
    char symbol;
    double factor;
    const char *written; /* the factor as a definition writes it */
} si_prefixes[] = {
    {'k', 1e3, "1000"}, {'c', 1e-2, "0.01"}, {'m', 1e-3, "0.001"}, {'u', 1e-6, "1e-6"}, {'n', 1e-9, "1e-9"}};
static const struct {
    const char *unit, *prefixes;
} prefixed[] = {{"m", "kcmun"}, {"s", "mun"}, {"rad", "mu"}, {"T", "mun"}};

static const unit_def *find_unit(const char *name)
{
    for (size_t i = 0; i < NUNITS; i++)
        if (strcmp(units[i].name, name) == 0)
            return &units[i];
    return NULL;
}

/* name as an SI prefix and a unit that takes it ("km"): 1 with *u set to
 * it and its definition ("1000 m") written into def; else 0. */
static int find_prefixed(const char *name, unit_def *u, char *def, size_t size)
{
    for (size_t i = 0; i < sizeof prefixed / sizeof *prefixed; i++)
        for (size_t k = 0; k < sizeof si_prefixes / sizeof *si_prefixes; k++)
            if (name[0] == si_prefixes[k].symbol && strchr(prefixed[i].prefixes, name[0]) &&
                strcmp(name + 1, prefixed[i].unit) == 0) {
                const unit_def *base = find_unit(prefixed[i].unit);
                snprintf(def, size, "%s %s", si_prefixes[k].written, base->name);
                *u = (unit_def){name, base->scale * si_prefixes[k].factor, base->dim, def};
                return 1;
            }
    return 0;
}

int sensim_dim_equal(sensim_dim a, sensim_dim b)
{
    return a.m2 == b.m2 && a.s2 == b.s2 && a.rad2 == b.rad2 && a.t2 == b.t2;
}

/* Appends "sym", "sym^k" or "sym^(k/2)" for a positive doubled exponent e2. */
static size_t put_factor(char *buf, size_t size, size_t at, const char *sym, int e2, int first, char sep)
{
    char tmp[32];
    if (e2 == 2)
        snprintf(tmp, sizeof tmp, "%s", sym);
    else if (e2 % 2 == 0)
        snprintf(tmp, sizeof tmp, "%s^%d", sym, e2 / 2);
    else
        snprintf(tmp, sizeof tmp, "%s^(%d/2)", sym, e2);
    int k = snprintf(buf + at, at < size ? size - at : 0, "%s%s", first ? "" : (sep == '*' ? "*" : "/"), tmp);
    return at + (k > 0 ? (size_t)k : 0);
}

char *sensim_dim_format(sensim_dim d, char *buf, size_t size)
{
    if (!buf || size == 0)
        return buf;
    buf[0] = '\0';
    const char *sym[4] = {"m", "rad", "T", "s"};
    int e[4] = {d.m2, d.rad2, d.t2, d.s2};
    size_t at = 0;
    int first = 1;
    for (int i = 0; i < 4; i++)
        if (e[i] > 0) {
            at = put_factor(buf, size, at, sym[i], e[i], first, '*');
            first = 0;
        }
    if (first) {
        int k = snprintf(buf, size, "1");
        at = k > 0 ? (size_t)k : 0;
    }
    for (int i = 0; i < 4; i++)
        if (e[i] < 0)
            at = put_factor(buf, size, at, sym[i], -e[i], 0, '/');
    return buf;
}

/* A friendly name and datasheet spelling for the dimensions in the header,
 * so that a mismatch message says what was expected in users' terms. */
static const char *dim_hint(sensim_dim d)
{
    static const struct {
        signed char m2, s2, rad2, t2;
        const char *hint;
    } hints[] = {
        {0, 0, 0, 0, "dimensionless"},
        {2, 0, 0, 0, "length"},
        {0, 2, 0, 0, "time"},
        {0, -2, 0, 0, "frequency"},
        {0, 0, 2, 0, "angle"},
        {0, -2, 2, 0, "angular rate"},
        {0, -1, 2, 0, "angular rate density, e.g. deg/sqrt(h) or rad/s/sqrt(Hz)"},
        {0, -3, 2, 0, "angular rate random walk, e.g. deg/h/sqrt(h) or rad/s^2/sqrt(Hz)"},
        {0, -4, 2, 0, "angular acceleration"},
        {2, -4, 0, 0, "acceleration"},
        {2, -3, 0, 0, "acceleration density, e.g. mg/sqrt(Hz) or m/s/sqrt(h)"},
        {2, -5, 0, 0, "acceleration random walk, e.g. m/s^3/sqrt(Hz)"},
        {2, -6, 0, 0, "jerk"},
        {2, -2, 0, 0, "velocity"},
        {0, 0, 0, 2, "magnetic field"},
        {0, 1, 0, 2, "magnetic field density, e.g. T/sqrt(Hz)"},
    };
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
        if (hints[i].m2 == d.m2 && hints[i].s2 == d.s2 && hints[i].rad2 == d.rad2 && hints[i].t2 == d.t2)
            return hints[i].hint;
    return NULL;
}

/* ---- parser ---- */

typedef struct parser {
    const char *text; /* the whole input, for messages */
    const char *p;
    sensim_status st;
    /* Optional explanation of the units used: "deg = pi/180 rad; h = 3600 s". */
    char *explain;
    size_t explain_size;
    int depth; /* nesting of factors: bounded, the parser recurses */
} parser;

/* Deepest nesting of parentheses and roots accepted ("((((m))))" is 4). */
#define UNITS_MAX_DEPTH 32

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t')
        ps->p++;
}

static int fail(parser *ps, sensim_status st, const char *fmt, const char *arg)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, arg);
    ps->st = sensim_error(st, "'%s': %s", ps->text, msg);
    return -1;
}

static int is_unit_char(unsigned char c)
{
    return isalpha(c) || c == '%' || c >= 0x80;
}

static int dim_scale(sensim_dim *d, int num, int den, parser *ps)
{
    int e[4] = {d->m2, d->s2, d->rad2, d->t2};
    for (int i = 0; i < 4; i++) {
        int v = e[i] * num;
        if (v % den != 0)
            return fail(ps, SENSIM_EFORMAT, "%s gives a quarter power, which is not a physical unit", "sqrt");
        v /= den;
        if (v > 120 || v < -120)
            return fail(ps, SENSIM_EFORMAT, "%s: power too large", "exponent");
        e[i] = v;
    }
    d->m2 = (signed char)e[0];
    d->s2 = (signed char)e[1];
    d->rad2 = (signed char)e[2];
    d->t2 = (signed char)e[3];
    return 0;
}

static int parse_expr(parser *ps, double *scale, sensim_dim *dim);

static void note_unit(parser *ps, const unit_def *u)
{
    if (!ps->explain || strcmp(u->name, u->definition) == 0)
        return;
    char item[64];
    snprintf(item, sizeof item, "%s = %s", u->name, u->definition);
    if (strstr(ps->explain, item))
        return;
    size_t len = strlen(ps->explain);
    snprintf(ps->explain + len, ps->explain_size - len, "%s%s", len ? "; " : "", item);
}

static int parse_factor_body(parser *ps, double *scale, sensim_dim *dim);

/* Each factor may nest another: the depth is bounded so that a hostile
 * "(((((...m" gets an error, not a stack overflow (a fuzzer finding). */
static int parse_factor(parser *ps, double *scale, sensim_dim *dim)
{
    if (ps->depth >= UNITS_MAX_DEPTH)
        return fail(ps, SENSIM_EFORMAT, "more than 32 nested parentheses or roots at '%s'", ps->p);
    ps->depth++;
    int rc = parse_factor_body(ps, scale, dim);
    ps->depth--;
    return rc;
}

/* The ')' that closes a group (after white space). */
static int close_paren(parser *ps)
{
    skip_ws(ps);
    if (*ps->p != ')')
        return fail(ps, SENSIM_EFORMAT, "expected ')' at '%s'", *ps->p ? ps->p : "end");
    ps->p++;
    return 0;
}

/* A parenthesized expression, at its '('. */
static int parse_group(parser *ps, double *scale, sensim_dim *dim)
{
    ps->p++;
    return parse_expr(ps, scale, dim) || close_paren(ps) ? -1 : 0;
}

/* The square root of the unit just parsed (its dimension halved). */
static int take_root(parser *ps, double *scale, sensim_dim *dim)
{
    if (dim_scale(dim, 1, 2, ps))
        return -1;
    *scale = sqrt(*scale);
    return 0;
}

static int parse_factor_body(parser *ps, double *scale, sensim_dim *dim)
{
    skip_ws(ps);
    if (strncmp(ps->p, "\xe2\x88\x9a", 3) == 0) {
        /* The root sign (U+221A) takes the next factor: "√Hz", "√(Hz)". */
        ps->p += 3;
        return parse_factor(ps, scale, dim) || take_root(ps, scale, dim) ? -1 : 0;
    }
    if (*ps->p == '(')
        return parse_group(ps, scale, dim);
    if (*ps->p == '1' && !isdigit((unsigned char)ps->p[1]) && ps->p[1] != '.') {
        ps->p++;
        *scale = 1.0;
        *dim = SENSIM_DIM_NONE;
        return 0;
    }
    const char *start = ps->p;
    while (is_unit_char((unsigned char)*ps->p)) {
        /* '%' stands alone: "%/h" is percent per hour. */
        if (*ps->p == '%') {
            if (ps->p == start)
                ps->p++;
            break;
        }
        ps->p++;
    }
    size_t n = (size_t)(ps->p - start);
    if (n == 0)
        return fail(ps, SENSIM_EFORMAT, "expected a unit at '%s'", *start ? start : "end");
    char name[32];
    if (n >= sizeof name)
        n = sizeof name - 1;
    memcpy(name, start, n);
    name[n] = '\0';
    if (strcmp(name, "sqrt") == 0) {
        skip_ws(ps);
        if (*ps->p != '(')
            return fail(ps, SENSIM_EFORMAT, "expected '(' after %s", "sqrt");
        return parse_group(ps, scale, dim) || take_root(ps, scale, dim) ? -1 : 0;
    }
    /* The Greek mu (U+03BC) and the micro sign (U+00B5) both mean micro;
     * the table has the 'u' spellings. */
    if (!strncmp(name, "\xce\xbc", 2) || !strncmp(name, "\xc2\xb5", 2))
        memmove(name + 1, name + 2, strlen(name + 2) + 1), name[0] = 'u';
    unit_def pu;
    char def[32];
    const unit_def *u = find_unit(name);
    if (!u && find_prefixed(name, &pu, def, sizeof def))
        u = &pu;
    if (!u)
        return fail(ps, SENSIM_EFORMAT, "unknown unit '%s'", name);
    *scale = u->scale;
    *dim = u->dim;
    note_unit(ps, u);
    return 0;
}

static int parse_digits(parser *ps, int *v)
{
    if (!isdigit((unsigned char)*ps->p))
        return fail(ps, SENSIM_EFORMAT, "expected an integer power at '%s'", *ps->p ? ps->p : "end");
    long x = 0;
    while (isdigit((unsigned char)*ps->p)) {
        x = x * 10 + (*ps->p - '0');
        if (x > 60)
            return fail(ps, SENSIM_EFORMAT, "%s: power too large", "exponent");
        ps->p++;
    }
    *v = (int)x;
    return 0;
}

/* Reads a power as a fraction num/den with den 1 or 2. */
static int parse_power(parser *ps, int *num, int *den)
{
    int paren = 0, sign = 1;
    skip_ws(ps);
    if (*ps->p == '(') {
        paren = 1;
        ps->p++;
        skip_ws(ps);
    }
    if (*ps->p == '-' || *ps->p == '+') {
        sign = *ps->p == '-' ? -1 : 1;
        ps->p++;
    }
    if (parse_digits(ps, num))
        return -1;
    *num *= sign;
    *den = 1;
    if (paren) {
        skip_ws(ps);
        if (*ps->p == '/') {
            ps->p++;
            skip_ws(ps);
            if (parse_digits(ps, den))
                return -1;
            if (*den != 1 && *den != 2)
                return fail(ps, SENSIM_EFORMAT, "only integer and half powers are allowed at '%s'", ps->p);
        }
        return close_paren(ps);
    }
    return 0;
}

static int parse_term(parser *ps, double *scale, sensim_dim *dim)
{
    if (parse_factor(ps, scale, dim))
        return -1;
    int num, den = 1;
    if (isdigit((unsigned char)*ps->p)) {
        /* A power written straight after the unit, as in "m/s2". */
        if (parse_digits(ps, &num) || dim_scale(dim, num, 1, ps))
            return -1;
        *scale = pow(*scale, num);
        return 0;
    }
    skip_ws(ps);
    if (*ps->p != '^')
        return 0;
    ps->p++;
    if (parse_power(ps, &num, &den) || dim_scale(dim, num, den, ps))
        return -1;
    *scale = den == 2 ? pow(sqrt(*scale), num) : pow(*scale, num);
    return 0;
}

static int parse_expr(parser *ps, double *scale, sensim_dim *dim)
{
    if (parse_term(ps, scale, dim))
        return -1;
    for (;;) {
        skip_ws(ps);
        char op = *ps->p;
        if (op != '*' && op != '/')
            return 0;
        ps->p++;
        double s2;
        sensim_dim d2;
        if (parse_term(ps, &s2, &d2))
            return -1;
        int sg = op == '*' ? 1 : -1;
        int e[4] = {dim->m2 + sg * d2.m2, dim->s2 + sg * d2.s2, dim->rad2 + sg * d2.rad2, dim->t2 + sg * d2.t2};
        for (int i = 0; i < 4; i++)
            if (e[i] > 120 || e[i] < -120)
                return fail(ps, SENSIM_EFORMAT, "%s: power too large", "exponent");
        dim->m2 = (signed char)e[0];
        dim->s2 = (signed char)e[1];
        dim->rad2 = (signed char)e[2];
        dim->t2 = (signed char)e[3];
        *scale = op == '*' ? *scale * s2 : *scale / s2;
    }
}

/* A whole unit expression (nothing may follow). */
static sensim_status unit_expr(parser *ps, double *scale, sensim_dim *dim)
{
    if (parse_expr(ps, scale, dim))
        return ps->st;
    skip_ws(ps);
    if (*ps->p) {
        fail(ps, SENSIM_EFORMAT, "unexpected '%s' after the unit", ps->p);
        return ps->st;
    }
    return SENSIM_OK;
}

/* Scans [+-]digits[.digits][(e|E)[+-]digits] and converts it. Written out
 * rather than trusting strtod alone, which also takes "nan", "inf" and hex. */
static int parse_number(parser *ps, double *v)
{
    const char *s = ps->p, *q = s;
    if (*q == '+' || *q == '-')
        q++;
    int digits = 0;
    while (isdigit((unsigned char)*q)) {
        q++;
        digits++;
    }
    if (*q == '.') {
        q++;
        while (isdigit((unsigned char)*q)) {
            q++;
            digits++;
        }
    }
    if (!digits) {
        const char *w = *s == '+' || *s == '-' ? s + 1 : s;
        if (!strncasecmp(w, "nan", 3) || !strncasecmp(w, "inf", 3) || !strncasecmp(w, ".nan", 4) ||
            !strncasecmp(w, ".inf", 4))
            return fail(ps, SENSIM_EFORMAT, "%s", "not a finite number");
        return fail(ps, SENSIM_EFORMAT, "%s", *s ? "expected a number" : "empty value");
    }
    if (*q == 'e' || *q == 'E') {
        const char *r = q + 1;
        if (*r == '+' || *r == '-')
            r++;
        if (isdigit((unsigned char)*r)) {
            while (isdigit((unsigned char)*r))
                r++;
            q = r;
        }
    }
    char buf[64];
    size_t n = (size_t)(q - s);
    if (n >= sizeof buf)
        return fail(ps, SENSIM_EFORMAT, "%s", "number too long");
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    double x = strtod(buf, NULL);
    if (!isfinite(x) || (errno == ERANGE && fabs(x) > 1.0))
        return fail(ps, SENSIM_EFORMAT, "%s", "number out of range");
    *v = x;
    ps->p = q;
    return 0;
}

sensim_status sensim_units_parse(const char *text, double *si_value, sensim_dim *dim, int *has_unit)
{
    if (!text)
        return sensim_error(SENSIM_EINVAL, "units: no text");
    parser ps = {text, text, SENSIM_OK, NULL, 0, 0};
    skip_ws(&ps);
    double v;
    if (parse_number(&ps, &v))
        return ps.st;
    skip_ws(&ps);
    double scale = 1.0;
    sensim_dim d = SENSIM_DIM_NONE;
    int unit = *ps.p != '\0';
    if (unit) {
        sensim_status st = unit_expr(&ps, &scale, &d);
        if (st)
            return st;
    }
    double si = v * scale;
    if (!isfinite(si))
        return sensim_error(SENSIM_EFORMAT, "'%s': value out of range", text);
    if (si_value)
        *si_value = si;
    if (dim)
        *dim = d;
    if (has_unit)
        *has_unit = unit;
    return SENSIM_OK;
}

static void describe_dim(sensim_dim d, char *buf, size_t size)
{
    char f[64];
    sensim_dim_format(d, f, sizeof f);
    const char *h = dim_hint(d);
    if (h)
        snprintf(buf, size, "%s (%s)", f, h);
    else
        snprintf(buf, size, "%s", f);
}

/* "<what>'text' is <got>, expected <want>" (what: "" or "unit "). */
static sensim_status dim_error(const char *what, const char *text, sensim_dim d, sensim_dim expected)
{
    char got[160], want[160];
    describe_dim(d, got, sizeof got);
    describe_dim(expected, want, sizeof want);
    return sensim_error(SENSIM_EINVAL, "%s'%s' is %s, expected %s", what, text, got, want);
}

sensim_status sensim_units_convert(const char *text, sensim_dim expected, double *si_value)
{
    double v;
    sensim_dim d;
    int has_unit;
    sensim_status st = sensim_units_parse(text, &v, &d, &has_unit);
    if (st)
        return st;
    if (has_unit && !sensim_dim_equal(d, expected))
        return dim_error("", text, d, expected);
    if (si_value)
        *si_value = v;
    return SENSIM_OK;
}

sensim_status sensim_units_unit(const char *unit, double *scale, sensim_dim *dim)
{
    return sensim_units_explain(unit, scale, dim, NULL, 0);
}

sensim_status sensim_units_explain(const char *unit, double *scale, sensim_dim *dim, char *buf, size_t size)
{
    if (!unit)
        return sensim_error(SENSIM_EINVAL, "units: no unit");
    if (buf && size)
        buf[0] = '\0';
    parser ps = {unit, unit, SENSIM_OK, size ? buf : NULL, size, 0};
    double s = 1.0;
    sensim_dim d = SENSIM_DIM_NONE;
    skip_ws(&ps);
    if (*ps.p) {
        sensim_status st = unit_expr(&ps, &s, &d);
        if (st)
            return st;
    }
    if (!isfinite(s) || s == 0.0)
        return sensim_error(SENSIM_EFORMAT, "'%s': unit out of range", unit);
    if (scale)
        *scale = s;
    if (dim)
        *dim = d;
    return SENSIM_OK;
}

sensim_status sensim_units_from_si(double si_value, const char *unit, double *value)
{
    double s;
    sensim_status st = sensim_units_unit(unit, &s, NULL);
    if (st)
        return st;
    if (value)
        *value = si_value / s;
    return SENSIM_OK;
}

sensim_status sensim_units_from_si_dim(double si_value, sensim_dim dim, const char *unit, double *value)
{
    double s;
    sensim_dim d;
    sensim_status st = sensim_units_unit(unit, &s, &d);
    if (st)
        return st;
    if (!sensim_dim_equal(d, dim))
        return dim_error("unit ", unit, d, dim);
    if (value)
        *value = si_value / s;
    return SENSIM_OK;
}
