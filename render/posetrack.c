/* A sensor's pose as a pure function of time, from the ground truth's one
 * interpolation (sensim/gt.h) and the mount. No state changes between
 * covers of the window, so many threads may evaluate poses at once (MAVS
 * updates a shared pose inside its parallel loop: a data race). */
#include "sensim/render.h"

void sensim_pose_track_eval(const void *user, double t, sensim_pose *out)
{
    const sensim_pose_track *tr = user;
    sensim_gt_state s;
    sensim_gt_window_at(tr->gt, t, &s);
    sensim_pose b;
    b.p = sensim_vec3_load(s.position);
    /* slerp keeps unit length only to rounding; a pose wants it exact. */
    b.q = sensim_quat_normalize(sensim_quat_load(s.orientation));
    *out = sensim_pose_mul(b, tr->mount);
}
