/* Inertial kinematics (sensim/imu.h): the specific force an accelerometer
 * at a lever arm senses. The noise pipeline is sensim_triax (triax.c); the
 * rig's imu sensor is imu_rig.c. */
#include "sensim/imu.h"

void sensim_imu_specific_force(const double q[4], const double a_world[3], const double w_body[3],
                               const double alpha_body[3], const double r_body[3], double g, double f_body[3])
{
    /* Rotate world to body with the conjugate quaternion. */
    double qw = q[0], qx = -q[1], qy = -q[2], qz = -q[3];
    double v[3] = {a_world[0], a_world[1], a_world[2] + g};
    double tx = 2 * (qy * v[2] - qz * v[1]), ty = 2 * (qz * v[0] - qx * v[2]), tz = 2 * (qx * v[1] - qy * v[0]);
    double fb[3] = {v[0] + qw * tx + (qy * tz - qz * ty), v[1] + qw * ty + (qz * tx - qx * tz),
                    v[2] + qw * tz + (qx * ty - qy * tx)};
    const double *w = w_body, *al = alpha_body, *r = r_body;
    double wxr[3] = {w[1] * r[2] - w[2] * r[1], w[2] * r[0] - w[0] * r[2], w[0] * r[1] - w[1] * r[0]};
    double wwr[3] = {w[1] * wxr[2] - w[2] * wxr[1], w[2] * wxr[0] - w[0] * wxr[2], w[0] * wxr[1] - w[1] * wxr[0]};
    double axr[3] = {al[1] * r[2] - al[2] * r[1], al[2] * r[0] - al[0] * r[2], al[0] * r[1] - al[1] * r[0]};
    for (int i = 0; i < 3; i++)
        f_body[i] = fb[i] + axr[i] + wwr[i];
}
