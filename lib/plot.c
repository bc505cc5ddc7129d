/* Small SVG plotting: see include/sensim/plot.h. */
#include "sensim/plot.h"

#include "sensim/afile.h"
#include "base_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct series {
    char *label;
    double *x, *y, *lo, *hi;
    size_t n;
    unsigned style, color;
} series;

struct sensim_plot {
    char *title, *xlabel, *ylabel;
    int xlog, ylog;
    series *s;
    size_t ns;
};

/* A colour-blind-safe palette (Okabe & Ito 2008). */
static const unsigned palette[] = {0x0072B2, 0xD55E00, 0x009E73, 0xCC79A7, 0xE69F00, 0x56B4E9, 0x000000, 0xF0E442};


sensim_plot *sensim_plot_create(const char *title, const char *xlabel, const char *ylabel)
{
    sensim_plot *p = calloc(1, sizeof *p);
    if (!p)
        goto fail;
    p->xlog = p->ylog = 1;
    p->title = strdup(title ? title : "");
    p->xlabel = strdup(xlabel ? xlabel : "");
    p->ylabel = strdup(ylabel ? ylabel : "");
    if (!p->title || !p->xlabel || !p->ylabel)
        goto fail;
    return p;
fail:
    sensim_plot_destroy(p);
    sensim_error(SENSIM_ENOMEM, "plot: out of memory");
    return NULL;
}

/* Frees what the n series at s hold, not the array itself. */
static void series_free(series *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        SENSIM_FREE_ALL(s[i].label, s[i].x, s[i].y, s[i].lo, s[i].hi);
}

void sensim_plot_destroy(sensim_plot *p)
{
    if (!p)
        return;
    series_free(p->s, p->ns);
    SENSIM_FREE_ALL(p->s, p->title, p->xlabel, p->ylabel, p);
}

void sensim_plot_set_log(sensim_plot *p, int xlog, int ylog)
{
    p->xlog = xlog != 0;
    p->ylog = ylog != 0;
}

static double *dup_arr(const double *a, size_t n)
{
    if (!a)
        return NULL;
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (d && n)
        memcpy(d, a, n * sizeof *d);
    return d;
}

sensim_status sensim_plot_add(sensim_plot *p, const char *label, const double *x, const double *y, const double *lo,
                              const double *hi, size_t n, unsigned style, unsigned color)
{
    if (!p || !x || !y)
        return sensim_error(SENSIM_EINVAL, "plot: series '%s' needs x and y arrays", label ? label : "");
    if ((style & SENSIM_PLOT_ERRORBARS) && (!lo || !hi))
        return sensim_error(SENSIM_EINVAL, "plot: series '%s' asks for error bars without lo/hi arrays",
                            label ? label : "");
    series *ns = realloc(p->s, (p->ns + 1) * sizeof *ns);
    if (!ns)
        return sensim_error(SENSIM_ENOMEM, "plot: out of memory");
    p->s = ns;
    series *s = &p->s[p->ns];
    memset(s, 0, sizeof *s);
    s->label = strdup(label ? label : "");
    s->x = dup_arr(x, n);
    s->y = dup_arr(y, n);
    s->lo = dup_arr(lo, n);
    s->hi = dup_arr(hi, n);
    if (!s->label || !s->x || !s->y || (lo && !s->lo) || (hi && !s->hi)) {
        series_free(s, 1);
        return sensim_error(SENSIM_ENOMEM, "plot: out of memory");
    }
    s->n = n;
    s->style = style ? style : SENSIM_PLOT_LINE;
    s->color = color ? color : palette[p->ns % (sizeof palette / sizeof palette[0])];
    p->ns++;
    return SENSIM_OK;
}

static int usable(double v, int lg)
{
    return isfinite(v) && (!lg || v > 0);
}

/* Half the width of a series' bars: half the mean spacing of its x (0.5
 * for a single point). */
static double bar_half(const series *s)
{
    return s->n > 1 && s->x[s->n - 1] != s->x[0] ? fabs(s->x[s->n - 1] - s->x[0]) / (double)(s->n - 1) / 2 : 0.5;
}

void sensim_plot_xml_text(FILE *f, const char *s)
{
    for (; s && *s; s++)
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}

typedef struct axis {
    int lg;
    double lo, hi;       /* data units */
    double p0, p1;       /* pixels for lo and hi */
} axis;

static double map(const axis *a, double v)
{
    double t = a->lg ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo)) : (v - a->lo) / (a->hi - a->lo);
    return a->p0 + t * (a->p1 - a->p0);
}

/* Whole decades for log axes; a 5% margin and "nice" limits for linear. */
static void axis_limits(axis *a, double mn, double mx)
{
    if (a->lg) {
        a->lo = pow(10, floor(log10(mn) + 1e-9));
        a->hi = pow(10, ceil(log10(mx) - 1e-9));
        if (a->hi <= a->lo)
            a->hi = a->lo * 10;
    } else {
        double span = mx - mn;
        if (span <= 0)
            span = fabs(mx) > 0 ? fabs(mx) : 1;
        double step = pow(10, floor(log10(span / 5)));
        a->lo = floor((mn - 0.05 * span) / step) * step;
        a->hi = ceil((mx + 0.05 * span) / step) * step;
    }
}

static void tick_label(char *buf, size_t n, double v, int lg)
{
    if (lg) {
        int e = (int)lround(log10(v));
        if (e >= -2 && e <= 3)
            snprintf(buf, n, "%g", pow(10, e));
        else
            snprintf(buf, n, "1e%d", e);
    } else
        snprintf(buf, n, "%g", fabs(v) < 1e-12 ? 0.0 : v);
}

static void draw_ticks(FILE *f, const axis *a, int vertical, double fixed, double gridfrom, double gridto)
{
    char buf[32];
    if (a->lg) {
        int e0 = (int)lround(log10(a->lo)), e1 = (int)lround(log10(a->hi));
        int every = (e1 - e0 + 9) / 10; /* at most about 10 labelled decades */
        if (every < 1)
            every = 1;
        for (int e = e0; e <= e1; e++) {
            for (int k = 1; k <= 9; k++) {
                double v = k * pow(10, e), q;
                if (v < a->lo * (1 - 1e-9) || v > a->hi * (1 + 1e-9) || (e == e1 && k > 1))
                    continue;
                q = map(a, v);
                int major = k == 1, lab = major && (e - e0) % every == 0;
                if (vertical)
                    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", gridfrom, q,
                            gridto, q, major ? "#ccc" : "#eee");
                else
                    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", q, gridfrom, q,
                            gridto, major ? "#ccc" : "#eee");
                if (lab) {
                    tick_label(buf, sizeof buf, v, 1);
                    if (vertical)
                        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" dominant-baseline=\"middle\">%s</text>\n",
                                fixed - 6, q, buf);
                    else
                        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", q, fixed + 18, buf);
                }
            }
        }
    } else {
        /* Ticks 1, 2 or 5 times a power of ten apart, at most about 10. */
        static const double ladder[] = {2, 2.5, 2};
        double span = a->hi - a->lo, step = pow(10, floor(log10(span / 5)));
        for (int i = 0; i < 3 && span / step > 10 + 1e-9; i++)
            step *= ladder[i];
        for (double v = ceil(a->lo / step) * step; v <= a->hi + 1e-9 * span; v += step) {
            double q = map(a, v);
            tick_label(buf, sizeof buf, v, 0);
            if (vertical) {
                fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", gridfrom, q,
                        gridto, q);
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" dominant-baseline=\"middle\">%s</text>\n",
                        fixed - 6, q, buf);
            } else {
                fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", q, gridfrom, q,
                        gridto);
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", q, fixed + 18, buf);
            }
        }
    }
}

sensim_status sensim_plot_svg(const sensim_plot *p, FILE *f, int width, int height)
{
    if (width < 200 || height < 150)
        return sensim_error(SENSIM_EINVAL, "plot: size %dx%d is too small (at least 200x150)", width, height);
    errno = 0; /* what a failed write leaves here is the cause reported */
    double xmn = INFINITY, xmx = -INFINITY, ymn = INFINITY, ymx = -INFINITY;
    int bars = 0;
    for (size_t i = 0; i < p->ns; i++) {
        const series *s = &p->s[i];
        const double half = s->style & SENSIM_PLOT_BARS ? bar_half(s) : 0;
        for (size_t k = 0; k < s->n; k++) {
            if (!usable(s->x[k], p->xlog) || !usable(s->y[k], p->ylog))
                continue;
            if (s->style & SENSIM_PLOT_BARS) {
                bars = 1;
                if (!p->ylog)
                    ymn = fmin(ymn, 0);
            }
            xmn = fmin(xmn, usable(s->x[k] - half, p->xlog) ? s->x[k] - half : s->x[k]);
            xmx = fmax(xmx, s->x[k] + half);
            ymn = fmin(ymn, s->y[k]);
            ymx = fmax(ymx, s->y[k]);
            if (s->lo && usable(s->lo[k], p->ylog))
                ymn = fmin(ymn, s->lo[k]);
            if (s->hi && usable(s->hi[k], p->ylog))
                ymx = fmax(ymx, s->hi[k]);
        }
    }
    if (!(xmn <= xmx))
        return sensim_error(SENSIM_EDATA, "plot '%s': no drawable points%s", p->title,
                            p->xlog || p->ylog ? " (log axes need positive values)" : "");
    /* The legend goes right of the frame, never over the data: the frame
     * gives up the width of the longest label (about 7 px a character at
     * 12 px), at most a third of the picture. */
    size_t longest = 0;
    for (size_t i = 0; i < p->ns; i++)
        if (strlen(p->s[i].label) > longest)
            longest = strlen(p->s[i].label);
    double legend_w = longest ? fmin(44 + 7.0 * (double)longest, width / 3.0) : 0;
    double L = 90, R = 20 + legend_w, T = 44, B = 56;
    axis ax = {p->xlog, 0, 0, L, width - R}, ay = {p->ylog, 0, 0, height - B, T};
    axis_limits(&ax, xmn, xmx);
    axis_limits(&ay, ymn, ymx);
    if (bars && !p->ylog && ymn >= 0)
        ay.lo = 0; /* bars stand on the frame */
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            width, height, width, height);
    fprintf(f, "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">", (L + width - R) / 2);
    sensim_plot_xml_text(f, p->title);
    fputs("</text>\n", f);
    draw_ticks(f, &ax, 0, height - B, T, height - B);
    draw_ticks(f, &ay, 1, L, L, width - R);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", L, T,
            width - R - L, height - B - T);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", (L + width - R) / 2, height - 14);
    sensim_plot_xml_text(f, p->xlabel);
    fprintf(f, "</text>\n<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\">",
            (T + height - B) / 2);
    sensim_plot_xml_text(f, p->ylabel);
    fputs("</text>\n", f);
    fprintf(f, "<clipPath id=\"area\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/></clipPath>\n", L, T,
            width - R - L, height - B - T);
    fputs("<g clip-path=\"url(#area)\">\n", f);
    for (size_t i = 0; i < p->ns; i++) {
        const series *s = &p->s[i];
        fprintf(f, "<g class=\"series\" stroke=\"#%06X\" fill=\"#%06X\">\n", s->color, s->color);
        if (s->style & SENSIM_PLOT_BARS) {
            const double half = bar_half(s), base = map(&ay, p->ylog ? ay.lo : fmax(0, ay.lo));
            for (size_t k = 0; k < s->n; k++) {
                if (!usable(s->x[k], p->xlog) || !usable(s->y[k], p->ylog) || s->y[k] == 0)
                    continue;
                double q0 = map(&ax, usable(s->x[k] - half, p->xlog) ? s->x[k] - half : ax.lo),
                       q1 = map(&ax, s->x[k] + half), top = map(&ay, s->y[k]);
                fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill-opacity=\"0.5\" "
                           "stroke-width=\"1\"/>\n",
                        q0, fmin(top, base), q1 - q0, fabs(base - top));
            }
        }
        if (s->style & SENSIM_PLOT_ERRORBARS)
            for (size_t k = 0; k < s->n; k++) {
                if (!usable(s->x[k], p->xlog) || !usable(s->lo[k], p->ylog) || !usable(s->hi[k], p->ylog))
                    continue;
                double q = map(&ax, s->x[k]), a = map(&ay, s->lo[k]), b = map(&ay, s->hi[k]);
                fprintf(f,
                        "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh6M%.1f %.1fh6\" fill=\"none\" stroke-width=\"1\"/>\n", q,
                        a, b, q - 3, a, q - 3, b);
            }
        if (s->style & (SENSIM_PLOT_LINE | SENSIM_PLOT_DASHED)) {
            int open = 0;
            for (size_t k = 0; k < s->n; k++) {
                if (!usable(s->x[k], p->xlog) || !usable(s->y[k], p->ylog)) {
                    if (open)
                        fputs("\"/>\n", f);
                    open = 0;
                    continue;
                }
                if (!open)
                    fprintf(f, "<polyline fill=\"none\" stroke-width=\"1.6\"%s points=\"",
                            s->style & SENSIM_PLOT_DASHED ? " stroke-dasharray=\"6 4\"" : "");
                fprintf(f, "%s%.1f,%.1f", open ? " " : "", map(&ax, s->x[k]), map(&ay, s->y[k]));
                open = 1;
            }
            if (open)
                fputs("\"/>\n", f);
        }
        if (s->style & SENSIM_PLOT_POINTS)
            for (size_t k = 0; k < s->n; k++)
                if (usable(s->x[k], p->xlog) && usable(s->y[k], p->ylog))
                    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" stroke=\"none\"/>\n", map(&ax, s->x[k]),
                            map(&ay, s->y[k]));
        fputs("</g>\n", f);
    }
    fputs("</g>\n", f);
    /* Legend, right of the frame, from its top. */
    double ly = T + 12;
    for (size_t i = 0; i < p->ns; i++) {
        const series *s = &p->s[i];
        if (!*s->label)
            continue;
        double lx = width - R + 12;
        fprintf(f, "<g class=\"legend\" stroke=\"#%06X\" fill=\"#%06X\">", s->color, s->color);
        if (s->style & (SENSIM_PLOT_LINE | SENSIM_PLOT_DASHED))
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-width=\"1.6\"%s/>", lx, ly - 4,
                    lx + 24, ly - 4, s->style & SENSIM_PLOT_DASHED ? " stroke-dasharray=\"6 4\"" : "");
        if (s->style & SENSIM_PLOT_POINTS)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" stroke=\"none\"/>", lx + 12, ly - 4);
        if (s->style & SENSIM_PLOT_BARS)
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" stroke=\"none\" fill-opacity=\"0.5\"/>",
                    lx + 6, ly - 10);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" stroke=\"none\" fill=\"black\">", lx + 30, ly);
        sensim_plot_xml_text(f, s->label);
        fputs("</text></g>\n", f);
        ly += 16;
    }
    fputs("</svg>\n", f);
    if (ferror(f))
        return sensim_error(SENSIM_EIO, "SVG plot: write error: %s", errno ? strerror(errno) : "unknown cause");
    return SENSIM_OK;
}

sensim_status sensim_plot_write_svg(const sensim_plot *p, const char *path, int width, int height)
{
    sensim_afile *a = sensim_afile_open(path);
    if (!a)
        return sensim_last_status();
    sensim_status st = sensim_plot_svg(p, sensim_afile_stream(a), width, height);
    if (st) {
        sensim_afile_abort(a);
        sensim_error_prefix(st, "%s", path);
        return st;
    }
    return sensim_afile_commit(a);
}
