/* sensim/geodesy.h - WGS84 ellipsoid: geodetic (LLA) <-> ECEF <-> local ENU,
 * and normal gravity.
 *
 * Conventions: LLA is {latitude deg, longitude deg, ellipsoidal height m};
 * ECEF and ENU are metres. The ENU frame at an origin has x east (towards
 * +longitude), y north (towards +latitude), z up along the ellipsoid normal;
 * it is the world frame of /ground_truth (DESIGN.md). Constants from NIMA
 * TR8350.2 (WGS84), 3rd edition, tables 3.1 and 3.3.
 *
 * Ownership: all arguments are borrowed for the call; the functions keep
 * nothing. Input and output arrays may alias.
 * Thread safety: all functions are pure (no state). */
#ifndef SENSIM_GEODESY_H
#define SENSIM_GEODESY_H

#include "sensim/linalg.h"
#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SENSIM_WGS84_A 6378137.0                 /* semi-major axis, m */
#define SENSIM_WGS84_F (1.0 / 298.257223563)     /* flattening */
#define SENSIM_WGS84_GM 3.986004418e14           /* m^3/s^2 */
#define SENSIM_WGS84_OMEGA 7.292115e-5           /* Earth rotation rate, rad/s */
#define SENSIM_WGS84_GAMMA_E 9.7803253359        /* normal gravity at the equator, m/s^2 */
#define SENSIM_WGS84_GAMMA_P 9.8321849378        /* normal gravity at the poles, m/s^2 */

/* Geodetic to Earth-centred Earth-fixed (closed form). */
void sensim_geo_lla_to_ecef(const double lla[3], double ecef[3]);
/* ECEF to geodetic: Heikkinen's closed form (Zhu 1994) for latitude, the
 * height from the well-conditioned h = p cos(lat) + z sin(lat) - a^2/N.
 * Round trips agree to well under a micrometre for heights from the Earth's
 * centre region out to orbit; longitude is 0 on the polar axis. */
void sensim_geo_ecef_to_lla(const double ecef[3], double lla[3]);

/* The rotation from ECEF to ENU at a latitude/longitude (deg): rows are the
 * east, north and up unit vectors expressed in ECEF, so enu = R (ecef - ecef0)
 * and the transpose maps back. */
sensim_mat3 sensim_geo_enu_rotation(double lat_deg, double lon_deg);

/* A local ENU frame at an origin, precomputed once. */
typedef struct sensim_geo_enu {
    double origin_lla[3];
    double origin_ecef[3];
    sensim_mat3 r; /* ECEF to ENU */
} sensim_geo_enu;

/* Validates the origin (finite, |lat| <= 90, the message names which value is
 * wrong) and fills the frame. */
sensim_status sensim_geo_enu_init(sensim_geo_enu *frame, const double origin_lla[3]);
void sensim_geo_ecef_to_enu(const sensim_geo_enu *frame, const double ecef[3], double enu[3]);
void sensim_geo_enu_to_ecef(const sensim_geo_enu *frame, const double enu[3], double ecef[3]);
void sensim_geo_lla_to_enu(const sensim_geo_enu *frame, const double lla[3], double enu[3]);
void sensim_geo_enu_to_lla(const sensim_geo_enu *frame, const double enu[3], double lla[3]);
/* Rotates a vector (velocity, acceleration) between the frames, no offset. */
void sensim_geo_enu_vec_to_ecef(const sensim_geo_enu *frame, const double enu[3], double ecef[3]);

/* Magnitude of normal gravity (m/s^2) at a geodetic latitude (deg) and
 * ellipsoidal height (m): Somigliana's closed formula on the ellipsoid
 * (TR8350.2 eq. 4-1) with the second-order height correction (eq. 4-3),
 * valid for heights up to some 20 km. */
double sensim_geo_normal_gravity(double lat_deg, double height_m);

#ifdef __cplusplus
}
#endif
#endif
