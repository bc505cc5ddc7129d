/* Analytic ground-truth trajectories (see sensim/trajectory.h). Each shape
 * gives, in a local frame starting at the origin facing +x, the planar
 * position and its first three time derivatives and the unwrapped heading;
 * the common code rotates by the yaw, translates to the start and derives
 * yaw rate and yaw acceleration from the curvature:
 *   psi'  = (x' y'' - y' x'') / (x'^2 + y'^2)
 *   psi'' = ((x' y''' - y' x''') d - (x' y'' - y' x'') d') / d^2,
 *           d = x'^2 + y'^2, d' = 2 (x' x'' + y' y''). */
#include "sensim/trajectory.h"
#include "base_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sensim_trajectory {
    sensim_trajectory_params p;
};

/* Local planar kinematics: d[k] = k-th time derivative of (x, y). */
typedef struct {
    double x[4], y[4];
    double psi;      /* unwrapped heading in the local frame */
    int fixed_psi;   /* heading not from the velocity (rest, straight line) */
} local_path;

static const struct {
    const char *name;
    sensim_trajectory_shape shape;
} shape_names[] = {
    {"static", SENSIM_TRAJ_STATIC}, {"line", SENSIM_TRAJ_LINE},       {"circle", SENSIM_TRAJ_CIRCLE},
    {"sine", SENSIM_TRAJ_SINE},     {"figure8", SENSIM_TRAJ_FIGURE8}, {"figure-eight", SENSIM_TRAJ_FIGURE8},
};

sensim_trajectory_params sensim_trajectory_default_params(void)
{
    /* Static storage: the padding is zero, so copies compare equal with memcmp. */
    static const sensim_trajectory_params defaults = {
        .shape = SENSIM_TRAJ_LINE,
        .speed = 1.0,
        .radius = 10.0,
        .direction = 1,
        .width = 3.5,
        .length = 30.0,
        .lead = 20.0,
        .size = 20.0,
        .period = 60.0,
    };
    return defaults;
}

sensim_status sensim_trajectory_shape_parse(const char *name, sensim_trajectory_shape *shape)
{
    for (size_t i = 0; i < sizeof shape_names / sizeof *shape_names; i++)
        if (strcmp(name, shape_names[i].name) == 0) {
            *shape = shape_names[i].shape;
            return SENSIM_OK;
        }
    return sensim_error(SENSIM_EINVAL, "unknown trajectory shape '%s' (static, line, circle, sine, figure8)", name);
}

const char *sensim_trajectory_shape_name(sensim_trajectory_shape shape)
{
    for (size_t i = 0; i < sizeof shape_names / sizeof *shape_names; i++)
        if (shape_names[i].shape == shape)
            return shape_names[i].name;
    return "unknown";
}

static sensim_status validate(const sensim_trajectory_params *p)
{
    const char *sh = sensim_trajectory_shape_name(p->shape);
    if (!strcmp(sh, "unknown"))
        return sensim_error(SENSIM_EINVAL, "trajectory: unknown shape %d", (int)p->shape);
#define ON(shape) (1u << SENSIM_TRAJ_##shape)
    /* Every number finite; then, in this order, those the shape needs positive. */
    const struct {
        const char *name;
        double v;
        unsigned positive; /* the shapes that need it > 0 */
    } all[] = {{"t0", p->t0, 0},
               {"start x", p->start[0], 0},
               {"start y", p->start[1], 0},
               {"start z", p->start[2], 0},
               {"yaw", p->yaw, 0},
               {"speed", p->speed, ON(LINE) | ON(CIRCLE) | ON(SINE)},
               {"accel", p->accel, 0},
               {"radius", p->radius, ON(CIRCLE)},
               {"width", p->width, 0},
               {"length", p->length, ON(SINE)},
               {"lead", p->lead, 0},
               {"size", p->size, ON(FIGURE8)},
               {"period", p->period, ON(FIGURE8)}};
#undef ON
    const size_t n = sizeof all / sizeof *all;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(all[i].v))
            return sensim_error(SENSIM_EINVAL, "%s trajectory: %s is not a finite number", sh, all[i].name);
    for (size_t i = 0; i < n; i++)
        if ((all[i].positive >> p->shape & 1) && !(all[i].v > 0))
            return sensim_error(SENSIM_EINVAL, "%s trajectory: %s must be a positive finite number, got %g", sh,
                                all[i].name, all[i].v);
    if (p->shape == SENSIM_TRAJ_LINE && p->accel < 0)
        return sensim_error(SENSIM_EINVAL, "line trajectory: accel must be >= 0, got %g", p->accel);
    if (p->shape == SENSIM_TRAJ_CIRCLE && p->direction != 1 && p->direction != -1)
        return sensim_error(SENSIM_EINVAL, "circle trajectory: direction must be +1 (left) or -1 (right), got %d",
                            p->direction);
    if (p->shape == SENSIM_TRAJ_SINE && p->lead < 0)
        return sensim_error(SENSIM_EINVAL, "sine trajectory: lead must be >= 0, got %g", p->lead);
    return SENSIM_OK;
}

sensim_trajectory *sensim_trajectory_create(const sensim_trajectory_params *params)
{
    if (!params) {
        sensim_error(SENSIM_EINVAL, "trajectory: no parameters");
        return NULL;
    }
    if (validate(params))
        return NULL;
    sensim_trajectory *tr = sensim_new_(sizeof *tr, "trajectory");
    if (tr)
        tr->p = *params;
    return tr;
}

void sensim_trajectory_destroy(sensim_trajectory *traj) { free(traj); }

const sensim_trajectory_params *sensim_trajectory_params_of(const sensim_trajectory *traj) { return &traj->p; }

static void path_line(const sensim_trajectory_params *p, double tau, local_path *lp)
{
    lp->fixed_psi = 1;
    lp->psi = 0;
    double v = p->speed, a = p->accel;
    if (a > 0) {
        /* From rest at tau = 0: s = a tau^2/2 until tau1 = v/a, then cruise. */
        double tau1 = v / a;
        if (tau <= 0)
            return;
        if (tau < tau1) {
            lp->x[0] = 0.5 * a * tau * tau;
            lp->x[1] = a * tau;
            lp->x[2] = a;
            return;
        }
        lp->x[0] = 0.5 * v * tau1 + v * (tau - tau1);
        lp->x[1] = v;
        return;
    }
    lp->x[0] = v * tau;
    lp->x[1] = v;
}

static void path_circle(const sensim_trajectory_params *p, double tau, local_path *lp)
{
    /* Centre at (0, dir R): x = R sin(w tau), y = dir R (1 - cos(w tau)), w = v/R. */
    double r = p->radius, w = p->speed / r, dir = p->direction;
    double s = sin(w * tau), c = cos(w * tau);
    lp->x[0] = r * s;
    lp->y[0] = dir * r * (1 - c);
    lp->x[1] = r * w * c;
    lp->y[1] = dir * r * w * s;
    lp->x[2] = -r * w * w * s;
    lp->y[2] = dir * r * w * w * c;
    lp->x[3] = -r * w * w * w * c;
    lp->y[3] = -dir * r * w * w * w * s;
    lp->psi = dir * w * tau;
}

static void path_sine(const sensim_trajectory_params *p, double tau, local_path *lp)
{
    /* Along-track x = v tau; y = f(x - lead) with the cycloidal lane change
     * f(s) = W (s/L - sin(k s)/(2 pi)), k = 2 pi/L, on [0, L]. */
    double v = p->speed, W = p->width, L = p->length, k = 2 * M_PI / L;
    double x = v * tau, s = x - p->lead;
    double f0 = 0, f1 = 0, f2 = 0, f3 = 0;
    if (s >= L) {
        f0 = W;
    } else if (s > 0) {
        f0 = W * (s / L - sin(k * s) / (2 * M_PI));
        f1 = W / L * (1 - cos(k * s));
        f2 = W / L * k * sin(k * s);
        f3 = W / L * k * k * cos(k * s);
    }
    lp->x[0] = x;
    lp->x[1] = v;
    lp->y[0] = f0;
    lp->y[1] = f1 * v;
    lp->y[2] = f2 * v * v;
    lp->y[3] = f3 * v * v * v;
    lp->psi = atan(f1); /* the along-track speed is positive: never wraps */
}

static void path_figure8(const sensim_trajectory_params *p, double tau, local_path *lp)
{
    /* Lemniscate of Gerono, x = A sin th, y = (A/2) sin 2th. */
    double A = 0.5 * p->size, w = 2 * M_PI / p->period, th = w * tau;
    double s1 = sin(th), c1 = cos(th), s2 = sin(2 * th), c2 = cos(2 * th);
    lp->x[0] = A * s1;
    lp->y[0] = 0.5 * A * s2;
    lp->x[1] = A * w * c1;
    lp->y[1] = A * w * c2;
    lp->x[2] = -A * w * w * s1;
    lp->y[2] = -2 * A * w * w * s2;
    lp->x[3] = -A * w * w * w * c1;
    lp->y[3] = -4 * A * w * w * w * c2;
    /* The heading stays within [-225, 45] deg: it never points along +y
     * (x' = 0 only where y' = -A w). Measured from -90 deg it lies in
     * (-180, 180), so atan2 there gives the unwrapped value. */
    lp->psi = -0.5 * M_PI + atan2(lp->x[1], -lp->y[1]);
}

void sensim_trajectory_eval(const sensim_trajectory *traj, double t, sensim_trajectory_state *st)
{
    const sensim_trajectory_params *p = &traj->p;
    double tau = t - p->t0;
    local_path lp;
    memset(&lp, 0, sizeof lp);
    switch (p->shape) {
    case SENSIM_TRAJ_STATIC: lp.fixed_psi = 1; break;
    case SENSIM_TRAJ_LINE: path_line(p, tau, &lp); break;
    case SENSIM_TRAJ_CIRCLE: path_circle(p, tau, &lp); break;
    case SENSIM_TRAJ_SINE: path_sine(p, tau, &lp); break;
    case SENSIM_TRAJ_FIGURE8: path_figure8(p, tau, &lp); break;
    }
    double rate = 0, racc = 0;
    if (!lp.fixed_psi) {
        double d = lp.x[1] * lp.x[1] + lp.y[1] * lp.y[1];
        double c = lp.x[1] * lp.y[2] - lp.y[1] * lp.x[2];
        double dc = lp.x[1] * lp.y[3] - lp.y[1] * lp.x[3];
        double dd = 2 * (lp.x[1] * lp.x[2] + lp.y[1] * lp.y[2]);
        rate = c / d;
        racc = (dc * d - c * dd) / (d * d);
    }
    double cy = cos(p->yaw), sy = sin(p->yaw);
#define ROT_X(i) (cy * lp.x[i] - sy * lp.y[i])
#define ROT_Y(i) (sy * lp.x[i] + cy * lp.y[i])
    st->t = t;
    st->position = sensim_vec3_make(p->start[0] + ROT_X(0), p->start[1] + ROT_Y(0), p->start[2]);
    st->velocity = sensim_vec3_make(ROT_X(1), ROT_Y(1), 0);
    st->acceleration = sensim_vec3_make(ROT_X(2), ROT_Y(2), 0);
#undef ROT_X
#undef ROT_Y
    st->yaw = p->yaw + lp.psi;
    st->orientation = sensim_quat_make(cos(0.5 * st->yaw), 0, 0, sin(0.5 * st->yaw));
    st->angular_velocity = sensim_vec3_make(0, 0, rate);
    st->angular_acceleration = sensim_vec3_make(0, 0, racc);
}

sensim_status sensim_trajectory_fill(const sensim_trajectory *traj, double t_start, double rate_hz, uint64_t k0,
                                     size_t n, sensim_gt_block *b)
{
    if (n > b->capacity)
        return sensim_error(SENSIM_EINVAL, "trajectory fill: %zu rows do not fit a block of %zu", n, b->capacity);
    if (!(rate_hz > 0) || !isfinite(rate_hz))
        return sensim_error(SENSIM_EINVAL, "trajectory fill: rate must be a positive finite number, got %g", rate_hz);
    if (!isfinite(t_start))
        return sensim_error(SENSIM_EINVAL, "trajectory fill: start time is not a finite number");
    for (size_t i = 0; i < n; i++) {
        sensim_trajectory_state s;
        double t = t_start + (double)(k0 + i) / rate_hz;
        sensim_trajectory_eval(traj, t, &s);
        b->t[i] = t;
        sensim_vec3_store(s.position, b->position + 3 * i);
        sensim_quat_store(s.orientation, b->orientation + 4 * i);
        sensim_vec3_store(s.velocity, b->velocity + 3 * i);
        sensim_vec3_store(s.angular_velocity, b->angular_velocity + 3 * i);
        sensim_vec3_store(s.acceleration, b->acceleration + 3 * i);
    }
    b->n = n;
    return SENSIM_OK;
}

void sensim_trajectory_describe(const sensim_trajectory_params *p, double rate_hz, double heading_deg, char *buf,
                                size_t size)
{
    int len = snprintf(buf, size, "shape=%s rate_hz=%.17g start_time=%.17g start=%.17g,%.17g,%.17g heading_deg=%.17g",
                       sensim_trajectory_shape_name(p->shape), rate_hz, p->t0, p->start[0], p->start[1], p->start[2],
                       heading_deg);
    if (len < 0 || (size_t)len >= size)
        return;
    size_t room = size - (size_t)len;
    switch (p->shape) {
    case SENSIM_TRAJ_STATIC: break;
    case SENSIM_TRAJ_LINE: snprintf(buf + len, room, " speed=%.17g accel=%.17g", p->speed, p->accel); break;
    case SENSIM_TRAJ_CIRCLE:
        snprintf(buf + len, room, " speed=%.17g radius=%.17g direction=%s", p->speed, p->radius,
                 p->direction > 0 ? "left" : "right");
        break;
    case SENSIM_TRAJ_SINE:
        snprintf(buf + len, room, " speed=%.17g width=%.17g length=%.17g lead=%.17g", p->speed, p->width, p->length,
                 p->lead);
        break;
    case SENSIM_TRAJ_FIGURE8: snprintf(buf + len, room, " size=%.17g period=%.17g", p->size, p->period); break;
    }
}

/* Rows per block of sensim_trajectory_write. */
#define WRITE_BLOCK 4096

sensim_status sensim_trajectory_write(const sensim_trajectory *traj, double rate_hz, uint64_t rows,
                                      const double origin_lla[3], const char *desc, sensim_log *log,
                                      void (*progress)(void *ctx, uint64_t done, uint64_t rows), void *ctx)
{
    sensim_gt_block b = {0};
    sensim_gt_writer *w = NULL;
    sensim_status st = sensim_gt_block_init(&b, WRITE_BLOCK);
    if (!st && !(w = sensim_gt_writer_create(log, origin_lla)))
        st = sensim_last_status();
    if (!st && desc)
        st = sensim_log_set_attr_string(log, "/ground_truth", "trajectory", desc);
    const double t0 = sensim_trajectory_params_of(traj)->t0;
    for (uint64_t k0 = 0; !st && k0 < rows; k0 += WRITE_BLOCK) {
        size_t m = rows - k0 < WRITE_BLOCK ? (size_t)(rows - k0) : WRITE_BLOCK;
        if (!(st = sensim_trajectory_fill(traj, t0, rate_hz, k0, m, &b)) && !(st = sensim_gt_writer_append(w, &b)) &&
            progress)
            progress(ctx, k0 + m, rows);
    }
    sensim_gt_writer_close(w);
    sensim_gt_block_free(&b);
    return st;
}
