/* The SVG histogram of the sim2real score distributions (two overlaid
 * samples, shared bins), drawn by the plotting module (sensim/plot.h). */
#include "sensim/metrics.h"

#include "sensim/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

sensim_status sensim_svg_histogram(const char *path, const char *title, const char *xlabel, const double *a,
                                   size_t na, const char *label_a, const double *b, size_t nb, const char *label_b,
                                   int bins)
{
    if (!path || !a || na == 0 || (nb && !b))
        return sensim_error(SENSIM_EINVAL, "svg histogram %s: no data", path ? path : "(null)");
    if (bins < 1 || bins > 1000)
        return sensim_error(SENSIM_EINVAL, "svg histogram %s: %d bins (1 to 1000)", path, bins);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < na + nb; i++) {
        double x = i < na ? a[i] : b[i - na];
        if (!isfinite(x))
            return sensim_error(SENSIM_EDATA, "svg histogram %s: value %zu is not finite", path, i);
        lo = fmin(lo, x);
        hi = fmax(hi, x);
    }
    if (hi - lo < 1e-12 * fmax(1.0, fabs(hi))) {
        lo -= 0.5;
        hi += 0.5;
    }
    size_t *count = calloc(2 * (size_t)bins, sizeof *count);
    if (!count)
        return sensim_error(SENSIM_ENOMEM, "svg histogram %s: out of memory", path);
    for (size_t i = 0; i < na + nb; i++) {
        int s = i >= na;
        double x = s ? b[i - na] : a[i];
        int k = (int)((x - lo) / (hi - lo) * bins);
        k = k < 0 ? 0 : k >= bins ? bins - 1 : k;
        count[s * bins + k]++;
    }
    /* Bars at the bins' centres through the plotting module: linear axes,
     * the counts of each sample translucent over the other. */
    double *x = malloc((size_t)bins * sizeof *x), *y = malloc(2 * (size_t)bins * sizeof *y);
    sensim_plot *pl = sensim_plot_create(title, xlabel, "tests");
    sensim_status st = x && y && pl ? SENSIM_OK : sensim_error(SENSIM_ENOMEM, "svg histogram %s: out of memory", path);
    for (int k = 0; k < bins && !st; k++) {
        x[k] = lo + (hi - lo) * (k + 0.5) / bins;
        y[k] = (double)count[k];
        y[bins + k] = (double)count[bins + k];
    }
    const unsigned color[2] = {0x1F77B4, 0xFF7F0E};
    for (int s = 0; s < (nb ? 2 : 1) && !st; s++) {
        char label[300];
        snprintf(label, sizeof label, "%.250s (n=%zu)", (s ? label_b : label_a) ? (s ? label_b : label_a) : "",
                 s ? nb : na);
        st = sensim_plot_add(pl, label, x, y + s * bins, NULL, NULL, (size_t)bins, SENSIM_PLOT_BARS, color[s]);
    }
    if (!st) {
        sensim_plot_set_log(pl, 0, 0);
        st = sensim_plot_write_svg(pl, path, 640, 400);
    }
    sensim_plot_destroy(pl);
    free(x);
    free(y);
    free(count);
    return st;
}
