/* SVG plots: structure of the document, decade ticks, skipped points on log
 * axes, escaping, legend, the temporary-file write and errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/plot.h"
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

Suite *suite_plot(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = tcase_create("svg");
    tcase_add_test(tc, loglog_document);
    tcase_add_test(tc, linear_axes);
    tcase_add_test(tc, errors_leave_no_file);
    suite_add_tcase(s, tc);
    return s;
}
