/* SVG plots: structure of the document, decade ticks, skipped points on log
 * axes, escaping, legend, the temporary-file write and errors; and every
 * SVG writer of the library (plots, PTC curve, histograms) read back by
 * Python's xml.etree (tests/data/svgcheck.py). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/metrics.h"
#include "sensim/plot.h"
#include "sensim/ptc.h"
#include "testutil.h"

static size_t count(const char *hay, const char *needle)
{
    size_t c = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        c++;
    return c;
}

START_TEST(loglog_document)
{
    double x[5] = {1, 10, 100, 1000, 0}, y[5] = {1e-3, 3e-4, 1e-4, 3e-4, 5e-4};
    double lo[5], hi[5];
    for (int i = 0; i < 5; i++) {
        lo[i] = y[i] * 0.8;
        hi[i] = y[i] * 1.25;
    }
    sensim_plot *p = sensim_plot_create("ADEV <x & y>", "tau (s)", "rad/s");
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(sensim_plot_add(p, "gyro x", x, y, lo, hi, 5, SENSIM_PLOT_POINTS | SENSIM_PLOT_ERRORBARS, 0), 0);
    ck_assert_int_eq(sensim_plot_add(p, "fit", x, y, NULL, NULL, 4, SENSIM_PLOT_LINE | SENSIM_PLOT_DASHED, 0xff0000), 0);
    ck_assert_int_eq(sensim_plot_add(p, "", x, y, NULL, NULL, 4, SENSIM_PLOT_LINE, 0), 0);
    char *dir = tu_mkdtemp(), *path = tu_path(dir, "a.svg");
    ck_assert_int_eq(sensim_plot_write_svg(p, path, 640, 480), SENSIM_OK);
    char *svg = tu_read_file(path, NULL);
    ck_assert_ptr_nonnull(svg);
    ck_assert_ptr_nonnull(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    ck_assert_ptr_nonnull(strstr(svg, "</svg>"));
    ck_assert_ptr_nonnull(strstr(svg, "ADEV &lt;x &amp; y&gt;"));
    /* x = 0 cannot be drawn on a log axis: 4 markers and 4 bars, not 5. */
    ck_assert_uint_eq(count(svg, "<circle"), 4 + 1); /* + the legend marker */
    ck_assert_uint_eq(count(svg, "<path d="), 4);
    /* x decades 1..1000 and y decades 1e-4..1e-3 are labelled. */
    ck_assert_ptr_nonnull(strstr(svg, ">1000</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">1e-4</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">1e-3</text>"));
    ck_assert_ptr_nonnull(strstr(svg, "stroke-dasharray"));
    ck_assert_ptr_nonnull(strstr(svg, "#FF0000"));
    ck_assert_uint_eq(count(svg, "class=\"legend\""), 2); /* the unlabelled series stays out */
    /* The legend lies right of the frame, clear of the data; the data
     * (every marker) inside it. */
    double fx, fy, fw, fh;
    const char *frame = strstr(svg, "<rect x=\"");
    ck_assert_ptr_nonnull(frame);
    ck_assert_int_eq(sscanf(frame, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\"", &fx, &fy, &fw, &fh), 4);
    ck_assert(fx + fw < 640 - 100);
    size_t legends = 0;
    for (const char *g = strstr(svg, "class=\"legend\""); g; g = strstr(g + 1, "class=\"legend\"")) {
        double lx;
        const char *line = strstr(g, "<line x1=\""), *text = strstr(g, "<text x=\"");
        ck_assert_ptr_nonnull(text);
        ck_assert_int_eq(sscanf(text, "<text x=\"%lf\"", &lx), 1);
        ck_assert_msg(lx > fx + fw, "legend text at x %g, frame ends at %g", lx, fx + fw);
        if (line && line < text) {
            ck_assert_int_eq(sscanf(line, "<line x1=\"%lf\"", &lx), 1);
            ck_assert_msg(lx > fx + fw, "legend line at x %g, frame ends at %g", lx, fx + fw);
        }
        legends++;
    }
    ck_assert_uint_eq(legends, 2);
    for (const char *c = strstr(svg, "<circle cx=\""); c; c = strstr(c + 1, "<circle cx=\"")) {
        double cx;
        ck_assert_int_eq(sscanf(c, "<circle cx=\"%lf\"", &cx), 1);
        if (c < strstr(svg, "class=\"legend\""))
            ck_assert_msg(cx >= fx && cx <= fx + fw, "marker at x %g outside the frame", cx);
    }
    free(svg);
    sensim_plot_destroy(p);
    tu_rmtree(dir);
    free(path);
    free(dir);
}
END_TEST

START_TEST(linear_axes)
{
    double x[3] = {-1, 0, 2}, y[3] = {-5, 0, 5};
    sensim_plot *p = sensim_plot_create(NULL, NULL, NULL);
    sensim_plot_set_log(p, 0, 0);
    ck_assert_int_eq(sensim_plot_add(p, "line", x, y, NULL, NULL, 3, 0, 0), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(sensim_plot_svg(p, f, 400, 300), SENSIM_OK);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "<polyline"));
    ck_assert_ptr_nonnull(strstr(buf, ">0</text>"));
    free(buf);
    sensim_plot_destroy(p);
    sensim_plot_destroy(NULL);
}
END_TEST

START_TEST(errors_leave_no_file)
{
    double x[2] = {-1, 0}, y[2] = {1, 2};
    sensim_plot *p = sensim_plot_create("empty", "x", "y");
    ck_assert_int_eq(sensim_plot_add(p, "neg", x, y, NULL, NULL, 2, SENSIM_PLOT_LINE, 0), 0);
    char *dir = tu_mkdtemp(), *path = tu_path(dir, "b.svg");
    ck_assert_int_eq(sensim_plot_write_svg(p, path, 640, 480), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "b.svg"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "no drawable points"));
    ck_assert(!tu_file_exists(path));
    ck_assert_int_eq(sensim_plot_add(p, "bars", x, y, NULL, NULL, 2, SENSIM_PLOT_ERRORBARS, 0), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "'bars'"));
    ck_assert_int_eq(sensim_plot_write_svg(p, "/nonexistent-dir/c.svg", 640, 480), SENSIM_EIO);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "/nonexistent-dir/c.svg"));
    sensim_plot_destroy(p);
    tu_rmtree(dir);
    free(path);
    free(dir);
}
END_TEST

/* svgcheck.py on path with the arguments; its exit status. */
static int svgcheck(const char *path, const char *args)
{
    char *script = tu_src("tests/data/svgcheck.py");
    size_t n = strlen(script) + strlen(path) + strlen(args) + 64;
    char *cmd = malloc(n);
    snprintf(cmd, n, "/usr/bin/python3 %s '%s' %s", script, path, args);
    int st = system(cmd);
    free(cmd);
    free(script);
    return st;
}

/* The three SVG writers through the one plotting module, parsed by an
 * independent XML parser: a log-log plot with error bars, the sim2real
 * histogram (bar heights proportional to the counts, worked out by hand),
 * and the photon-transfer curve of exact levels (variance = K mean, so
 * every level lies on the fitted line in the picture). */
START_TEST(svg_writers_parse)
{
    char *dir = tu_mkdtemp(), *a = tu_path(dir, "adev.svg"), *h = tu_path(dir, "hist.svg"),
         *c = tu_path(dir, "ptc.svg");
    /* Allan-like: 5 points with error bars and a dashed fit. */
    double tau[5] = {0.01, 0.1, 1, 10, 100}, dev[5], lo[5], hi[5];
    for (int k = 0; k < 5; k++) {
        dev[k] = 1e-3 / sqrt(tau[k]);
        lo[k] = 0.8 * dev[k];
        hi[k] = 1.2 * dev[k];
    }
    sensim_plot *p = sensim_plot_create("Allan deviation & \"fit\"", "tau (s)", "rad/s");
    ck_assert_int_eq(sensim_plot_add(p, "x <gyro>", tau, dev, lo, hi, 5, SENSIM_PLOT_POINTS | SENSIM_PLOT_ERRORBARS, 0),
                     SENSIM_OK);
    ck_assert_int_eq(sensim_plot_add(p, "fit", tau, dev, NULL, NULL, 5, SENSIM_PLOT_DASHED, 0), SENSIM_OK);
    ck_assert_int_eq(sensim_plot_write_svg(p, a, 640, 480), SENSIM_OK);
    sensim_plot_destroy(p);
    ck_assert_int_eq(svgcheck(a, "--size 640x480 --text 'Allan deviation & \"fit\"' --text 'x <gyro>' "
                                 "--text 'tau (s)' --text rad/s --series 0:5:0,0:0:1 --collinear 0:1"),
                     0);
    /* Histogram: 4 bins of width 2.5 over [0, 10]: a counts 3, 1, 0, 2 and
     * b 1, 2, 2, 0. */
    const double va[6] = {0, 1, 2, 3, 9, 10}, vb[5] = {2.4, 4, 4.5, 6, 7};
    ck_assert_int_eq(sensim_svg_histogram(h, "scores <M>", "RMSE (m/s)", va, 6, "real", vb, 5, "sim", 4), SENSIM_OK);
    ck_assert_int_eq(svgcheck(h, "--size 640x400 --text 'scores <M>' --text 'RMSE (m/s)' --text tests "
                                 "--text 'real (n=6)' --text 'sim (n=5)' --series 3:0:0,3:0:0 "
                                 "--bars 0:3,1,0,2 --bars 1:1,2,2,0"),
                     0);
    /* PTC: exact levels var = K mu, K = 0.25, the last two beyond 70 % of
     * the saturation at 8000 DN. */
    sensim_ptc_level lv[8];
    memset(lv, 0, sizeof lv);
    for (int k = 0; k < 8; k++) {
        lv[k].mu_y = 100 + 1000.0 * (k + 1);
        lv[k].mu_dark = 100;
        lv[k].var_y = 0.25 * 1000.0 * (k + 1) + 4;
        lv[k].var_dark = 4;
    }
    sensim_ptc_result r;
    memset(&r, 0, sizeof r);
    r.gain = 0.25;
    r.read_noise = 8;
    r.saturation_dn = 8000;
    r.saturation_capacity = 32000;
    ck_assert_int_eq(sensim_ptc_plot_svg(c, lv, 8, &r), SENSIM_OK);
    ck_assert_int_eq(svgcheck(c, "--text 'Photon transfer: K = 0.25 DN/e-, read noise 8 e-, saturation 32000 e-' "
                                 "--text 'mean - dark (DN)' --text 'temporal variance - dark variance (DN^2)' "
                                 "--series 0:0:1,0:5:0,0:3:0 --collinear 1:0 --collinear 2:0"),
                     0);
    tu_rmtree(dir);
    free(a);
    free(h);
    free(c);
    free(dir);
}
END_TEST

Suite *suite_plot(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = tcase_create("svg");
    tcase_add_test(tc, loglog_document);
    tcase_add_test(tc, linear_axes);
    tcase_add_test(tc, errors_leave_no_file);
    tcase_add_test(tc, svg_writers_parse);
    suite_add_tcase(s, tc);
    return s;
}
