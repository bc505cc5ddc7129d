/* A sensor's pose as a pure function of time, then the mount: on a log's
 * ground truth through its one interpolation (sensim/gt.h, what
 * sensim_render_log casts from), or on poses given as arrays without
 * velocities (binary search, linear position, slerp). No state changes
 * while rays are cast, so many threads may evaluate poses at once (MAVS
 * updates a shared pose inside its parallel loop: a data race). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render_internal.h"
#include "sensim/render.h"
#include "../lib/base_internal.h"

struct sensim_pose_track {
    size_t n;
    double *t, *p, *q;
    sensim_pose mount;
};

sensim_pose_track *sensim_pose_track_create(const double *t, const double *position, const double *orientation,
                                            size_t n, const sensim_pose *mount)
{
    if (n < 1) {
        sensim_error(SENSIM_EINVAL, "pose track: no samples");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(t[i]) || (i > 0 && !(t[i] > t[i - 1]))) {
            sensim_error(SENSIM_EDATA, "pose track: times must be finite and strictly increasing (sample %zu)", i);
            return NULL;
        }
        double qn = 0;
        for (int k = 0; k < 4; k++)
            qn += orientation[4 * i + k] * orientation[4 * i + k];
        if (!isfinite(position[3 * i] + position[3 * i + 1] + position[3 * i + 2]) || !(fabs(sqrt(qn) - 1) < 1e-3)) {
            sensim_error(SENSIM_EDATA, "pose track: sample %zu: position not finite or orientation not a unit "
                         "quaternion", i);
            return NULL;
        }
    }
    sensim_pose_track *tr = calloc(1, sizeof *tr);
    if (tr) {
        tr->t = malloc(n * sizeof *tr->t);
        tr->p = malloc(3 * n * sizeof *tr->p);
        tr->q = malloc(4 * n * sizeof *tr->q);
    }
    if (!tr || !tr->t || !tr->p || !tr->q) {
        sensim_pose_track_destroy(tr);
        sensim_error(SENSIM_ENOMEM, "pose track: out of memory");
        return NULL;
    }
    tr->n = n;
    memcpy(tr->t, t, n * sizeof *t);
    memcpy(tr->p, position, 3 * n * sizeof *position);
    memcpy(tr->q, orientation, 4 * n * sizeof *orientation);
    tr->mount = mount ? *mount : sensim_pose_identity();
    return tr;
}

void sensim_pose_track_destroy(sensim_pose_track *tr)
{
    if (!tr)
        return;
    SENSIM_FREE_ALL(tr->t, tr->p, tr->q, tr);
}

double sensim_pose_track_start(const sensim_pose_track *tr) { return tr->t[0]; }
double sensim_pose_track_end(const sensim_pose_track *tr) { return tr->t[tr->n - 1]; }

void sensim_pose_track_eval(const void *user, double t, sensim_pose *out)
{
    const sensim_pose_track *tr = user;
    sensim_pose b;
    if (tr->n == 1 || t <= tr->t[0]) {
        b.p = sensim_vec3_load(tr->p);
        b.q = sensim_quat_normalize(sensim_quat_load(tr->q));
    } else if (t >= tr->t[tr->n - 1]) {
        b.p = sensim_vec3_load(tr->p + 3 * (tr->n - 1));
        b.q = sensim_quat_normalize(sensim_quat_load(tr->q + 4 * (tr->n - 1)));
    } else {
        size_t lo = render_interval(tr->t, 0, tr->n - 1, t), hi = lo + 1;
        double u = (t - tr->t[lo]) / (tr->t[hi] - tr->t[lo]);
        sensim_vec3 a = sensim_vec3_load(tr->p + 3 * lo), c = sensim_vec3_load(tr->p + 3 * hi);
        b.p = sensim_vec3_add(sensim_vec3_scale(a, 1 - u), sensim_vec3_scale(c, u));
        b.q = sensim_quat_normalize(
            sensim_quat_slerp(sensim_quat_load(tr->q + 4 * lo), sensim_quat_load(tr->q + 4 * hi), u));
    }
    *out = sensim_pose_mul(b, tr->mount);
}

/* ---- a sensor on a log's ground truth ---- */

void sensim_gt_track_eval(const void *user, double t, sensim_pose *out)
{
    const sensim_gt_track *tr = user;
    sensim_gt_state s;
    sensim_gt_window_at(tr->gt, t, &s);
    sensim_pose b;
    b.p = sensim_vec3_load(s.position);
    /* slerp keeps unit length only to rounding; a pose wants it exact. */
    b.q = sensim_quat_normalize(sensim_quat_load(s.orientation));
    *out = sensim_pose_mul(b, tr->mount);
}
