/* sensim/linalg.h - 3-vectors, unit quaternions and 3x3 matrices.
 *
 * Plain structs passed by value; all functions are pure and inline.
 * Quaternions are (w, x, y, z), Hamilton convention; q rotates body vectors
 * into the world: v_world = q * v_body * conj(q). Matrices are row-major. */
#ifndef SENSIM_LINALG_H
#define SENSIM_LINALG_H

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct { double x, y, z; } sensim_vec3;
typedef struct { double w, x, y, z; } sensim_quat;
typedef struct { double m[3][3]; } sensim_mat3;

static inline sensim_vec3 sensim_vec3_make(double x, double y, double z)
{
    sensim_vec3 v = {x, y, z};
    return v;
}
static inline sensim_vec3 sensim_vec3_add(sensim_vec3 a, sensim_vec3 b)
{
    return sensim_vec3_make(a.x + b.x, a.y + b.y, a.z + b.z);
}
static inline sensim_vec3 sensim_vec3_sub(sensim_vec3 a, sensim_vec3 b)
{
    return sensim_vec3_make(a.x - b.x, a.y - b.y, a.z - b.z);
}
static inline sensim_vec3 sensim_vec3_scale(sensim_vec3 a, double s)
{
    return sensim_vec3_make(a.x * s, a.y * s, a.z * s);
}
static inline double sensim_vec3_dot(sensim_vec3 a, sensim_vec3 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline sensim_vec3 sensim_vec3_cross(sensim_vec3 a, sensim_vec3 b)
{
    return sensim_vec3_make(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double sensim_vec3_norm(sensim_vec3 a) { return sqrt(sensim_vec3_dot(a, a)); }
static inline sensim_vec3 sensim_vec3_load(const double *p) { return sensim_vec3_make(p[0], p[1], p[2]); }
static inline void sensim_vec3_store(sensim_vec3 v, double *p)
{
    p[0] = v.x;
    p[1] = v.y;
    p[2] = v.z;
}

static inline sensim_quat sensim_quat_make(double w, double x, double y, double z)
{
    sensim_quat q = {w, x, y, z};
    return q;
}
static inline sensim_quat sensim_quat_identity(void) { return sensim_quat_make(1, 0, 0, 0); }
static inline sensim_quat sensim_quat_mul(sensim_quat a, sensim_quat b)
{
    return sensim_quat_make(a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                            a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                            a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                            a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w);
}
static inline sensim_quat sensim_quat_conj(sensim_quat q) { return sensim_quat_make(q.w, -q.x, -q.y, -q.z); }
static inline double sensim_quat_norm(sensim_quat q)
{
    return sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
}
static inline sensim_quat sensim_quat_normalize(sensim_quat q)
{
    double n = sensim_quat_norm(q);
    return sensim_quat_make(q.w / n, q.x / n, q.y / n, q.z / n);
}
/* Rotation by angle (rad) about a unit axis. */
static inline sensim_quat sensim_quat_axis_angle(sensim_vec3 axis, double angle)
{
    double s = sin(0.5 * angle);
    return sensim_quat_make(cos(0.5 * angle), axis.x * s, axis.y * s, axis.z * s);
}
/* Z-Y-X (yaw, pitch, roll) Euler angles in radians to a quaternion. */
static inline sensim_quat sensim_quat_from_euler(double roll, double pitch, double yaw)
{
    double cr = cos(roll / 2), sr = sin(roll / 2), cp = cos(pitch / 2), sp = sin(pitch / 2);
    double cy = cos(yaw / 2), sy = sin(yaw / 2);
    return sensim_quat_make(cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
                            cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy);
}
/* v' = q v q^*: body to world for a body-to-world q. */
static inline sensim_vec3 sensim_quat_rotate(sensim_quat q, sensim_vec3 v)
{
    sensim_vec3 u = sensim_vec3_make(q.x, q.y, q.z);
    sensim_vec3 t = sensim_vec3_scale(sensim_vec3_cross(u, v), 2.0);
    return sensim_vec3_add(sensim_vec3_add(v, sensim_vec3_scale(t, q.w)), sensim_vec3_cross(u, t));
}
/* q^* v q: world to body. */
static inline sensim_vec3 sensim_quat_rotate_inv(sensim_quat q, sensim_vec3 v)
{
    return sensim_quat_rotate(sensim_quat_conj(q), v);
}
/* Normalized linear interpolation, taking the shorter arc; exact at s = 0, 1. */
static inline sensim_quat sensim_quat_nlerp(sensim_quat a, sensim_quat b, double s)
{
    double d = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z;
    double sb = d < 0 ? -s : s;
    return sensim_quat_normalize(sensim_quat_make(a.w * (1 - s) + b.w * sb, a.x * (1 - s) + b.x * sb,
                                                  a.y * (1 - s) + b.y * sb, a.z * (1 - s) + b.z * sb));
}
/* Spherical linear interpolation. */
static inline sensim_quat sensim_quat_slerp(sensim_quat a, sensim_quat b, double s)
{
    double d = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z;
    if (d < 0) {
        b = sensim_quat_make(-b.w, -b.x, -b.y, -b.z);
        d = -d;
    }
    if (d > 0.9995)
        return sensim_quat_nlerp(a, b, s);
    double th = acos(d), st = sin(th);
    double wa = sin((1 - s) * th) / st, wb = sin(s * th) / st;
    return sensim_quat_make(wa * a.w + wb * b.w, wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z);
}
static inline sensim_quat sensim_quat_load(const double *p) { return sensim_quat_make(p[0], p[1], p[2], p[3]); }
static inline void sensim_quat_store(sensim_quat q, double *p)
{
    p[0] = q.w;
    p[1] = q.x;
    p[2] = q.y;
    p[3] = q.z;
}

static inline sensim_mat3 sensim_mat3_identity(void)
{
    sensim_mat3 a = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    return a;
}
static inline sensim_vec3 sensim_mat3_apply(const sensim_mat3 *a, sensim_vec3 v)
{
    return sensim_vec3_make(a->m[0][0] * v.x + a->m[0][1] * v.y + a->m[0][2] * v.z,
                            a->m[1][0] * v.x + a->m[1][1] * v.y + a->m[1][2] * v.z,
                            a->m[2][0] * v.x + a->m[2][1] * v.y + a->m[2][2] * v.z);
}
static inline sensim_mat3 sensim_mat3_mul(const sensim_mat3 *a, const sensim_mat3 *b)
{
    sensim_mat3 c;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            c.m[i][j] = a->m[i][0] * b->m[0][j] + a->m[i][1] * b->m[1][j] + a->m[i][2] * b->m[2][j];
    return c;
}
/* The rotation matrix of a unit quaternion (body to world). */
static inline sensim_mat3 sensim_mat3_from_quat(sensim_quat q)
{
    sensim_mat3 r = {{{1 - 2 * (q.y * q.y + q.z * q.z), 2 * (q.x * q.y - q.w * q.z), 2 * (q.x * q.z + q.w * q.y)},
                      {2 * (q.x * q.y + q.w * q.z), 1 - 2 * (q.x * q.x + q.z * q.z), 2 * (q.y * q.z - q.w * q.x)},
                      {2 * (q.x * q.z - q.w * q.y), 2 * (q.y * q.z + q.w * q.x), 1 - 2 * (q.x * q.x + q.y * q.y)}}};
    return r;
}

#ifdef __cplusplus
}
#endif
#endif
