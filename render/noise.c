/* The sensor noise models applied to rendered data: a rendered scan goes
 * through the lidar noise of models/lidar.c exactly as a recorded one does in
 * `sensim inject`, indexed by the point's row in the clean log. */
#include "render_internal.h"
#include "sensim/lidar.h"

sensim_status sensim_render_lidar_points_noise(sensim_render_lidar_points *pts, const sensim_lidar *m,
                                               uint64_t first, uint8_t *keep, size_t *kept)
{
    if (!pts || !m || (pts->count && !keep))
        return sensim_error(SENSIM_EINVAL, "lidar noise: NULL argument");
    size_t n = pts->count;
    if (n) {
        sensim_lidar_block b = {n,          first,      pts->xyzi,      pts->range, pts->azimuth, pts->elevation,
                                pts->xyzi, pts->range, pts->azimuth, pts->elevation, keep};
        sensim_status st = sensim_lidar_apply(m, &b, NULL);
        if (st)
            return st;
    }
    /* Compaction in place: the destination never passes the source. */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!keep[i])
            continue;
        if (k != i)
            sensim_lidar_points_move(pts, k, i);
        k++;
    }
    pts->count = k;
    if (kept)
        *kept = k;
    return SENSIM_OK;
}
