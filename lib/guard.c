/* Guards against runaway output (sensim/guard.h). */
#include "sensim/guard.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

/* The unit that times of this magnitude look like, as seconds since 1970
 * span 1e9..1e10 for the years 2001..2286. */
static const char *epoch_unit(double t)
{
    t = fabs(t);
    return t >= 1e17 ? "epoch nanoseconds" : t >= 1e14 ? "epoch microseconds" : "epoch milliseconds";
}

sensim_status sensim_guard_times(double t_first, double t_last, size_t rows, const char *what)
{
    const double big = fmax(fabs(t_first), fabs(t_last));
    if (big >= 1e11) {
        const char *u = epoch_unit(big);
        const double div = big >= 1e17 ? 1e9 : big >= 1e14 ? 1e6 : 1e3;
        return sensim_error(SENSIM_EDATA,
                            "%s: times reach %.6g, which as seconds is %.3g years: they look like %s; convert them "
                            "to seconds (divide by %.0e)",
                            what, big, big / 3.15576e7, u, div);
    }
    if (rows >= 2) {
        const double step = (t_last - t_first) / (double)(rows - 1);
        if (step > SENSIM_GUARD_MAX_STEP) {
            const double rate = 1.0 / step;
            return sensim_error(SENSIM_EDATA,
                                "%s: %zu rows over %.6g s, a mean step of %.6g s (%.3g Hz): not a trajectory in "
                                "seconds; if the times are in milliseconds, microseconds or nanoseconds (rate "
                                "%.3g, %.3g or %.3g Hz), convert them to seconds",
                                what, rows, t_last - t_first, step, rate, rate * 1e3, rate * 1e6, rate * 1e9);
        }
    }
    return SENSIM_OK;
}

double sensim_guard_free_bytes(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    struct statvfs v;
    if (statvfs(dir, &v))
        return INFINITY;
    return (double)v.f_bavail * (double)v.f_frsize;
}

sensim_status sensim_guard_output(const char *path, double bytes, const char *figure)
{
    const double avail = sensim_guard_free_bytes(path);
    if (bytes > SENSIM_GUARD_MAX_BYTES)
        return sensim_error(SENSIM_EIO, "%s: the output %s would be about %.3g bytes (%.3g GB), above the %.3g GB sensim "
                                        "writes at most; nothing written",
                            figure, path, bytes, bytes / 1e9, SENSIM_GUARD_MAX_BYTES / 1e9);
    if (bytes > avail)
        return sensim_error(SENSIM_EIO, "%s: the output %s would be about %.3g bytes (%.3g GB), more than the %.3g GB "
                                        "free there; nothing written",
                            figure, path, bytes, bytes / 1e9, avail / 1e9);
    return SENSIM_OK;
}
