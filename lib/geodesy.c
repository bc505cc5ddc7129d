/* WGS84 geodesy (see sensim/geodesy.h). */
#include "sensim/geodesy.h"

#include <math.h>

#define DEG (M_PI / 180.0)

/* Derived WGS84 constants. */
#define WGS_B (SENSIM_WGS84_A * (1.0 - SENSIM_WGS84_F))                 /* semi-minor axis */
#define WGS_E2 (SENSIM_WGS84_F * (2.0 - SENSIM_WGS84_F))               /* first eccentricity^2 */
#define WGS_EP2 (WGS_E2 / ((1.0 - SENSIM_WGS84_F) * (1.0 - SENSIM_WGS84_F))) /* second eccentricity^2 */

void sensim_geo_lla_to_ecef(const double lla[3], double ecef[3])
{
    double lat = lla[0] * DEG, lon = lla[1] * DEG, h = lla[2];
    double sl = sin(lat), cl = cos(lat);
    /* Prime vertical radius of curvature. */
    double n = SENSIM_WGS84_A / sqrt(1.0 - WGS_E2 * sl * sl);
    double x = (n + h) * cl * cos(lon), y = (n + h) * cl * sin(lon);
    double z = (n * (1.0 - WGS_E2) + h) * sl;
    ecef[0] = x;
    ecef[1] = y;
    ecef[2] = z;
}

void sensim_geo_ecef_to_lla(const double ecef[3], double lla[3])
{
    const double a = SENSIM_WGS84_A, b = WGS_B, e2 = WGS_E2;
    double x = ecef[0], y = ecef[1], z = ecef[2];
    double p = hypot(x, y);
    double lon = (p > 0) ? atan2(y, x) : 0.0;
    double lat;
    if (p < 1e-9 * a) {
        /* On the polar axis the formula below divides by p. */
        lat = (z >= 0 ? 90.0 : -90.0) * DEG;
    } else {
        /* Heikkinen (1982), as given by Zhu (1994), "Conversion of Earth-centered
         * Earth-fixed coordinates to geodetic coordinates", IEEE TAES 30(3). */
        double z2 = z * z, p2 = p * p;
        double F = 54.0 * b * b * z2;
        double G = p2 + (1.0 - e2) * z2 - e2 * (a * a - b * b);
        double c = e2 * e2 * F * p2 / (G * G * G);
        double s = cbrt(1.0 + c + sqrt(c * c + 2.0 * c));
        double k = s + 1.0 + 1.0 / s;
        double P = F / (3.0 * k * k * G * G);
        double Q = sqrt(1.0 + 2.0 * e2 * e2 * P);
        double arg = 0.5 * a * a * (1.0 + 1.0 / Q) - P * (1.0 - e2) * z2 / (Q * (1.0 + Q)) - 0.5 * P * p2;
        double r0 = -P * e2 * p / (1.0 + Q) + sqrt(arg > 0 ? arg : 0.0);
        double d = p - e2 * r0;
        double V = sqrt(d * d + (1.0 - e2) * z2);
        double z0 = b * b * z / (a * V);
        lat = atan2(z + WGS_EP2 * z0, p);
    }
    double sl = sin(lat), cl = cos(lat);
    /* Height along the normal, well conditioned at every latitude. */
    double h = p * cl + z * sl - a * sqrt(1.0 - e2 * sl * sl);
    lla[0] = lat / DEG;
    lla[1] = lon / DEG;
    lla[2] = h;
}

sensim_mat3 sensim_geo_enu_rotation(double lat_deg, double lon_deg)
{
    double sl = sin(lat_deg * DEG), cl = cos(lat_deg * DEG);
    double so = sin(lon_deg * DEG), co = cos(lon_deg * DEG);
    sensim_mat3 r = {{{-so, co, 0.0}, {-sl * co, -sl * so, cl}, {cl * co, cl * so, sl}}};
    return r;
}

sensim_status sensim_geo_enu_init(sensim_geo_enu *frame, const double origin_lla[3])
{
    static const char *names[3] = {"latitude", "longitude", "altitude"};
    for (int i = 0; i < 3; i++)
        if (!isfinite(origin_lla[i]))
            return sensim_error(SENSIM_EINVAL, "origin %s is not a finite number", names[i]);
    if (fabs(origin_lla[0]) > 90.0)
        return sensim_error(SENSIM_EINVAL, "origin latitude %g deg is outside [-90, 90]", origin_lla[0]);
    for (int i = 0; i < 3; i++)
        frame->origin_lla[i] = origin_lla[i];
    sensim_geo_lla_to_ecef(origin_lla, frame->origin_ecef);
    frame->r = sensim_geo_enu_rotation(origin_lla[0], origin_lla[1]);
    return SENSIM_OK;
}

void sensim_geo_ecef_to_enu(const sensim_geo_enu *frame, const double ecef[3], double enu[3])
{
    sensim_vec3 d = sensim_vec3_make(ecef[0] - frame->origin_ecef[0], ecef[1] - frame->origin_ecef[1],
                                     ecef[2] - frame->origin_ecef[2]);
    sensim_vec3_store(sensim_mat3_apply(&frame->r, d), enu);
}

void sensim_geo_enu_vec_to_ecef(const sensim_geo_enu *frame, const double enu[3], double ecef[3])
{
    const double(*r)[3] = frame->r.m;
    double e = enu[0], n = enu[1], u = enu[2];
    ecef[0] = r[0][0] * e + r[1][0] * n + r[2][0] * u;
    ecef[1] = r[0][1] * e + r[1][1] * n + r[2][1] * u;
    ecef[2] = r[0][2] * e + r[1][2] * n + r[2][2] * u;
}

void sensim_geo_enu_to_ecef(const sensim_geo_enu *frame, const double enu[3], double ecef[3])
{
    double d[3];
    sensim_geo_enu_vec_to_ecef(frame, enu, d);
    for (int i = 0; i < 3; i++)
        ecef[i] = frame->origin_ecef[i] + d[i];
}

void sensim_geo_lla_to_enu(const sensim_geo_enu *frame, const double lla[3], double enu[3])
{
    double ecef[3];
    sensim_geo_lla_to_ecef(lla, ecef);
    sensim_geo_ecef_to_enu(frame, ecef, enu);
}

void sensim_geo_enu_to_lla(const sensim_geo_enu *frame, const double enu[3], double lla[3])
{
    double ecef[3];
    sensim_geo_enu_to_ecef(frame, enu, ecef);
    sensim_geo_ecef_to_lla(ecef, lla);
}

double sensim_geo_normal_gravity(double lat_deg, double height_m)
{
    const double a = SENSIM_WGS84_A, b = WGS_B, f = SENSIM_WGS84_F;
    double s2 = sin(lat_deg * DEG);
    s2 *= s2;
    /* Somigliana: gamma = gamma_e (1 + k sin^2) / sqrt(1 - e^2 sin^2),
     * k = (b gamma_p - a gamma_e) / (a gamma_e)  (TR8350.2 eq. 4-1). */
    double k = (b * SENSIM_WGS84_GAMMA_P - a * SENSIM_WGS84_GAMMA_E) / (a * SENSIM_WGS84_GAMMA_E);
    double g0 = SENSIM_WGS84_GAMMA_E * (1.0 + k * s2) / sqrt(1.0 - WGS_E2 * s2);
    /* Height correction, eq. 4-3, with m = omega^2 a^2 b / GM. */
    double m = SENSIM_WGS84_OMEGA * SENSIM_WGS84_OMEGA * a * a * b / SENSIM_WGS84_GM;
    double h = height_m;
    return g0 * (1.0 - 2.0 / a * (1.0 + f + m - 2.0 * f * s2) * h + 3.0 * h * h / (a * a));
}
