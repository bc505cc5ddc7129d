/* Bird's-eye views of lidar scans: a top-down projection for looking at a
 * scan as an image (sensim render --bev, the demo). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/render.h"

sensim_status sensim_bev_color_parse(const char *name, sensim_bev_color *out)
{
    if (name && (!strcmp(name, "height") || !strcmp(name, "intensity"))) {
        *out = !strcmp(name, "height") ? SENSIM_BEV_HEIGHT : SENSIM_BEV_INTENSITY;
        return SENSIM_OK;
    }
    return sensim_error(SENSIM_EINVAL, "unknown colouring '%s' (known: height, intensity)", name ? name : "(null)");
}

void sensim_bev_ramp(double v, uint8_t rgb[3])
{
    /* Piecewise-linear blue -> cyan -> green -> yellow -> red: monotone in
     * hue, so low and high are told apart without a legend. */
    static const double stops[5][3] = {{0.15, 0.25, 1.0}, {0.0, 0.85, 0.95}, {0.1, 0.9, 0.2}, {1.0, 0.9, 0.1},
                                       {1.0, 0.15, 0.1}};
    if (!(v > 0))
        v = 0;
    if (v > 1)
        v = 1;
    double f = v * 4;
    int i = (int)f;
    if (i > 3)
        i = 3;
    f -= i;
    for (int c = 0; c < 3; c++)
        rgb[c] = (uint8_t)lround(255.0 * (stops[i][c] + f * (stops[i + 1][c] - stops[i][c])));
}

sensim_status sensim_render_bev(const float *xyzi, size_t n, double extent, int size, sensim_bev_color by,
                                double lo, double hi, uint8_t *rgb, size_t *drawn)
{
    if (!rgb || (n && !xyzi))
        return sensim_error(SENSIM_EINVAL, "bev: NULL buffer");
    if (!(extent > 0) || !isfinite(extent))
        return sensim_error(SENSIM_EINVAL, "bev: extent must be a positive number of metres, got %g", extent);
    if (size < 1 || size > 16384)
        return sensim_error(SENSIM_EINVAL, "bev: size must be 1..16384 pixels, got %d", size);
    if (!(hi > lo) || !isfinite(lo) || !isfinite(hi))
        return sensim_error(SENSIM_EINVAL, "bev: colour range [%g, %g] is empty or not finite", lo, hi);
    if (by != SENSIM_BEV_HEIGHT && by != SENSIM_BEV_INTENSITY)
        return sensim_error(SENSIM_EINVAL, "bev: unknown colouring %d", (int)by);
    size_t np = (size_t)size * size;
    float *top = malloc(np * sizeof *top);
    if (!top)
        return sensim_error(SENSIM_ENOMEM, "bev: out of memory for a %dx%d image", size, size);
    for (size_t i = 0; i < np; i++)
        top[i] = -INFINITY;
    memset(rgb, 0, np * 3);
    const double scale = size / (2.0 * extent);
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const float *q = xyzi + 4 * i;
        if (!isfinite(q[0]) || !isfinite(q[1]) || !isfinite(q[2]) || !isfinite(q[3]))
            continue;
        /* Row 0 is +extent on x, column 0 is +extent on y. */
        double row = floor((extent - q[0]) * scale), col = floor((extent - q[1]) * scale);
        if (row < 0 || row >= size || col < 0 || col >= size)
            continue;
        count++;
        size_t p = (size_t)row * size + (size_t)col;
        if (q[2] <= top[p])
            continue;
        top[p] = q[2];
        double v = ((by == SENSIM_BEV_HEIGHT ? q[2] : q[3]) - lo) / (hi - lo);
        sensim_bev_ramp(v, rgb + 3 * p);
    }
    free(top);
    if (drawn)
        *drawn = count;
    return SENSIM_OK;
}
