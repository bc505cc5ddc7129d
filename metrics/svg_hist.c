/* A small self-contained SVG histogram writer for the sim2real score
 * distributions (two overlaid samples, shared bins). */
#include "sensim/metrics.h"

#include "sensim/afile.h"
#include "sensim/plot.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    size_t cmax = 1;
    for (size_t i = 0; i < na + nb; i++) {
        int s = i >= na;
        double x = s ? b[i - na] : a[i];
        int k = (int)((x - lo) / (hi - lo) * bins);
        k = k < 0 ? 0 : k >= bins ? bins - 1 : k;
        size_t c = ++count[s * bins + k];
        cmax = c > cmax ? c : cmax;
    }
    sensim_afile *af = sensim_afile_open(path);
    if (!af) {
        free(count);
        return sensim_last_status();
    }
    FILE *f = sensim_afile_stream(af);
    const double W = 640, H = 400, L = 60, R = 20, T = 40, B = 50, pw = W - L - R, ph = H - T - B;
    const char *color[2] = {"#1f77b4", "#ff7f0e"};
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            W, H, W, H);
    fprintf(f, "<text x=\"%g\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">", W / 2);
    sensim_plot_xml_text(f, title);
    fputs("</text>\n", f);
    for (int s = 0; s < (nb ? 2 : 1); s++)
        for (int k = 0; k < bins; k++) {
            size_t c = count[s * bins + k];
            if (!c)
                continue;
            double bw = pw / bins, h = ph * (double)c / (double)cmax;
            fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" fill-opacity=\"0.5\" "
                       "stroke=\"%s\"/>\n",
                    L + k * bw, T + ph - h, bw, h, color[s], color[s]);
        }
    /* Axes, ticks (5 on x, counts on y) and labels. */
    fprintf(f, "<path d=\"M%g %g V%g H%g\" fill=\"none\" stroke=\"black\"/>\n", L, T, T + ph, L + pw);
    for (int i = 0; i <= 4; i++) {
        double x = L + pw * i / 4.0;
        fprintf(f, "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" stroke=\"black\"/>"
                   "<text x=\"%.2f\" y=\"%g\" text-anchor=\"middle\">%.4g</text>\n",
                x, T + ph, x, T + ph + 5, x, T + ph + 18, lo + (hi - lo) * i / 4.0);
    }
    for (int i = 0; i <= 4; i++) {
        double y = T + ph - ph * i / 4.0;
        fprintf(f, "<line x1=\"%g\" y1=\"%.2f\" x2=\"%g\" y2=\"%.2f\" stroke=\"black\"/>"
                   "<text x=\"%g\" y=\"%.2f\" text-anchor=\"end\">%.3g</text>\n",
                L - 5, y, L, y, L - 8, y + 4, (double)cmax * i / 4.0);
    }
    fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">", L + pw / 2, H - 12);
    sensim_plot_xml_text(f, xlabel);
    fprintf(f, "</text>\n<text x=\"16\" y=\"%g\" text-anchor=\"middle\" transform=\"rotate(-90 16 %g)\">tests</text>\n",
            T + ph / 2, T + ph / 2);
    for (int s = 0; s < (nb ? 2 : 1); s++) {
        double y = T + 10 + 18 * s;
        fprintf(f, "<rect x=\"%g\" y=\"%g\" width=\"12\" height=\"12\" fill=\"%s\" fill-opacity=\"0.5\"/>"
                   "<text x=\"%g\" y=\"%g\">",
                L + pw - 150, y - 10, color[s], L + pw - 132, y);
        sensim_plot_xml_text(f, s ? label_b : label_a);
        fprintf(f, " (n=%zu)</text>\n", s ? nb : na);
    }
    fputs("</svg>\n", f);
    free(count);
    return sensim_afile_commit(af);
}
