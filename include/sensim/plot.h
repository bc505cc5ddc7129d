/* sensim/plot.h - small SVG plots: log-log or linear axes, several series
 * drawn as lines and/or points with optional error bars, a legend and a
 * title. Enough for Allan-deviation plots, photon-transfer curves and
 * metric histories, with no dependency beyond libc.
 *
 *   sensim_plot *p = sensim_plot_create("Allan deviation", "tau (s)", "rad/s");
 *   sensim_plot_add(p, "x", tau, dev, lo, hi, n, SENSIM_PLOT_POINTS | SENSIM_PLOT_ERRORBARS, 0);
 *   sensim_plot_add(p, "fit", tau, fit, NULL, NULL, n, SENSIM_PLOT_LINE | SENSIM_PLOT_DASHED, 0);
 *   sensim_plot_write_svg(p, "adev.svg", 720, 540);
 *   sensim_plot_destroy(p);
 *
 * Log axes span whole decades around the data and carry a tick and label
 * at each decade (with minor ticks at 2..9); points with non-positive or
 * non-finite coordinates are skipped on log axes. Text is XML-escaped.
 * The one SVG writer of the library: Allan deviations (sensim allan, fit
 * imu), the photon-transfer curve (sensim_ptc_plot_svg) and the sim2real
 * histograms (sensim_svg_histogram) all draw through it.
 *
 * Ownership: strings and arrays are copied. Thread safety: a plot is used
 * from one thread; different plots are independent. */
#ifndef SENSIM_PLOT_H
#define SENSIM_PLOT_H

#include <stddef.h>
#include <stdio.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sensim_plot sensim_plot;

enum {
    SENSIM_PLOT_LINE = 1u << 0,      /* polyline through the points */
    SENSIM_PLOT_POINTS = 1u << 1,    /* a marker at each point */
    SENSIM_PLOT_ERRORBARS = 1u << 2, /* vertical bar from lo to hi */
    SENSIM_PLOT_DASHED = 1u << 3,    /* dashed line */
    SENSIM_PLOT_BARS = 1u << 4       /* a translucent bar from 0 (the frame's
                                        bottom on a log axis) up to each y, x
                                        its centre, as wide as the spacing of
                                        x (equally spaced: histogram bins);
                                        bars of height 0 are not drawn. A
                                        linear y axis then starts at 0. */
};

/* Any of the strings may be NULL. Axes are log-log by default. */
sensim_plot *sensim_plot_create(const char *title, const char *xlabel, const char *ylabel);
void sensim_plot_destroy(sensim_plot *p);
/* Log (1, default) or linear (0) scale per axis. */
void sensim_plot_set_log(sensim_plot *p, int xlog, int ylog);

/* Adds a series of n points; lo/hi may be NULL (no error bars). color is
 * 0xRRGGBB, or 0 for the next colour of the built-in palette. label NULL or
 * "" keeps the series out of the legend. */
sensim_status sensim_plot_add(sensim_plot *p, const char *label, const double *x, const double *y, const double *lo,
                              const double *hi, size_t n, unsigned style, unsigned color);

/* Writes the SVG document to a stream. SENSIM_EDATA when no series has a
 * drawable point. */
sensim_status sensim_plot_svg(const sensim_plot *p, FILE *f, int width, int height);
/* Writes to path through a temporary file renamed on success. */
sensim_status sensim_plot_write_svg(const sensim_plot *p, const char *path, int width, int height);

/* Writes s as SVG/XML text or attribute value: <, >, & and " as entities,
 * everything else as is (UTF-8 passes through). NULL writes nothing. The
 * one escaper of every SVG writer in the library. */
void sensim_plot_xml_text(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif
#endif
