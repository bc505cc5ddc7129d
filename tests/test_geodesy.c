/* WGS84 geodesy: known points, round trips over a latitude/height grid, ENU
 * axes, normal gravity. */
#include <math.h>
#include <string.h>

#include "sensim/geodesy.h"
#include "testutil.h"

#define DEG (M_PI / 180.0)

/* Independent reference: the textbook closed form written out here again
 * (Hofmann-Wellenhof et al., GNSS, eq. 5.16), so that a typo in the library
 * cannot hide in both. */
static void ref_ecef(double lat_deg, double lon_deg, double h, double out[3])
{
    const double a = 6378137.0, f = 1.0 / 298.257223563;
    const double b = a * (1 - f);
    double lat = lat_deg * DEG, lon = lon_deg * DEG;
    double n = a * a / sqrt(a * a * cos(lat) * cos(lat) + b * b * sin(lat) * sin(lat));
    out[0] = (n + h) * cos(lat) * cos(lon);
    out[1] = (n + h) * cos(lat) * sin(lon);
    out[2] = (b * b / (a * a) * n + h) * sin(lat);
}

START_TEST(known_points)
{
    double e[3];
    sensim_geo_lla_to_ecef((double[3]){0, 0, 0}, e);
    ck_assert_within(e[0], 6378137.0, 1e-9);
    ck_assert_within(e[1], 0.0, 1e-9);
    ck_assert_within(e[2], 0.0, 1e-9);
    sensim_geo_lla_to_ecef((double[3]){0, 90, 100}, e);
    ck_assert_within(e[0], 0.0, 1e-8);
    ck_assert_within(e[1], 6378237.0, 1e-8);
    /* North pole: z = b = a (1 - f) = 6356752.314245 m. */
    sensim_geo_lla_to_ecef((double[3]){90, 0, 0}, e);
    ck_assert_within(e[0], 0.0, 1e-9);
    ck_assert_within(e[2], 6356752.314245179, 1e-6);
    sensim_geo_lla_to_ecef((double[3]){-90, 0, 10}, e);
    ck_assert_within(e[2], -6356762.314245179, 1e-6);

    double lla[3];
    sensim_geo_ecef_to_lla((double[3]){6378137.0, 0, 0}, lla);
    ck_assert_within(lla[0], 0, 1e-12);
    ck_assert_within(lla[1], 0, 1e-12);
    ck_assert_within(lla[2], 0, 1e-8);
    sensim_geo_ecef_to_lla((double[3]){0, 0, 6356752.314245179 + 5}, lla);
    ck_assert_within(lla[0], 90, 1e-12);
    ck_assert_within(lla[2], 5, 1e-8);
    sensim_geo_ecef_to_lla((double[3]){0, 0, -6356752.314245179}, lla);
    ck_assert_within(lla[0], -90, 1e-12);
    ck_assert_within(lla[2], 0, 1e-8);

    /* lat 45, lon 45, h 0 against the reference formula, and by hand:
     * N = a / sqrt(1 - e2/2) = 6388838.2901 m, x = y = N/2. */
    double r[3];
    ref_ecef(45, 45, 0, r);
    sensim_geo_lla_to_ecef((double[3]){45, 45, 0}, e);
    for (int i = 0; i < 3; i++)
        ck_assert_within(e[i], r[i], 1e-8);
    ck_assert_within(e[0], 3194419.145, 1e-3);
    ck_assert_within(e[2], 4487348.409, 1e-3);
}
END_TEST

START_TEST(round_trips_grid)
{
    /* Latitudes -89.9..89.9 and the poles, longitudes all round, heights
     * -100 m to 20 km: LLA -> ECEF matches the reference formula, and
     * ECEF -> LLA returns the input to 1e-9 deg and 1 um. */
    const double lats[] = {-90, -89.9, -75, -45.5, -30, -10, -1e-7, 0, 1e-6, 12.3, 43.0731, 60, 80, 89.9, 90};
    const double lons[] = {-180, -120.5, -89.4012, -1, 0, 0.5, 45, 90, 179.99};
    const double hs[] = {-100, 0, 0.25, 260, 1500, 8848, 20000};
    double worst_h = 0, worst_deg = 0;
    for (size_t i = 0; i < sizeof lats / sizeof *lats; i++)
        for (size_t j = 0; j < sizeof lons / sizeof *lons; j++)
            for (size_t k = 0; k < sizeof hs / sizeof *hs; k++) {
                double in[3] = {lats[i], lons[j], hs[k]}, e[3], r[3], out[3];
                sensim_geo_lla_to_ecef(in, e);
                ref_ecef(in[0], in[1], in[2], r);
                for (int c = 0; c < 3; c++)
                    ck_assert_within(e[c], r[c], 1e-8);
                sensim_geo_ecef_to_lla(e, out);
                worst_deg = fmax(worst_deg, fabs(out[0] - in[0]));
                if (fabs(in[0]) < 90) /* longitude is undefined on the axis */
                    worst_deg = fmax(worst_deg, fabs(remainder(out[1] - in[1], 360.0)));
                worst_h = fmax(worst_h, fabs(out[2] - in[2]));
            }
    ck_assert_msg(worst_deg < 1e-9, "worst angle error %g deg", worst_deg);
    ck_assert_msg(worst_h < 1e-6, "worst height error %g m", worst_h);
}
END_TEST

START_TEST(enu_round_trip_and_axes)
{
    const double lats[] = {-89.9, -45, 0, 43.0731, 89.9};
    for (size_t i = 0; i < 5; i++) {
        double o[3] = {lats[i], -89.4012, 260};
        sensim_geo_enu f;
        ck_assert_int_eq(sensim_geo_enu_init(&f, o), SENSIM_OK);
        /* The origin maps to zero. */
        double enu[3], lla[3];
        sensim_geo_lla_to_enu(&f, o, enu);
        for (int c = 0; c < 3; c++)
            ck_assert_within(enu[c], 0, 1e-8);
        /* Points kilometres away, in all directions and heights, round trip. */
        for (double e = -5000; e <= 5000; e += 2500)
            for (double n = -5000; n <= 5000; n += 2500)
                for (double u = -100; u <= 20000; u += 10050) {
                    double p[3] = {e, n, u}, back[3];
                    sensim_geo_enu_to_lla(&f, p, lla);
                    sensim_geo_lla_to_enu(&f, lla, back);
                    for (int c = 0; c < 3; c++)
                        ck_assert_within(back[c], p[c], 1e-6);
                }
        /* Axes: +longitude is east, +latitude north, +height up. Over 1e-6 deg
         * the frame is flat to ~1e-9 of the step. */
        double step = 1e-6;
        double p_e[3] = {o[0], o[1] + step, o[2]}, p_n[3] = {o[0] + step, o[1], o[2]}, p_u[3] = {o[0], o[1], o[2] + 1};
        sensim_geo_lla_to_enu(&f, p_e, enu);
        ck_assert(enu[0] > 0);
        ck_assert_within(enu[1], 0, 1e-6 * fabs(enu[0]) + 1e-9);
        sensim_geo_lla_to_enu(&f, p_n, enu);
        ck_assert(enu[1] > 0);
        ck_assert_within(enu[0], 0, 1e-9);
        ck_assert_within(enu[2], 0, 1e-3);
        sensim_geo_lla_to_enu(&f, p_u, enu);
        ck_assert_within(enu[2], 1, 1e-9);
        ck_assert_within(enu[0], 0, 1e-9);
        ck_assert_within(enu[1], 0, 1e-9);
        /* The matrix is orthonormal with determinant +1 (right-handed). */
        sensim_mat3 r = f.r;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                double d = r.m[a][0] * r.m[b][0] + r.m[a][1] * r.m[b][1] + r.m[a][2] * r.m[b][2];
                ck_assert_within(d, a == b, 1e-15);
            }
        sensim_vec3 x = sensim_vec3_load(r.m[0]), y = sensim_vec3_load(r.m[1]), z = sensim_vec3_load(r.m[2]);
        ck_assert_within(sensim_vec3_dot(sensim_vec3_cross(x, y), z), 1, 1e-15);
    }
    /* At lat 0, lon 0: east = +y ECEF, north = +z, up = +x. */
    sensim_mat3 r = sensim_geo_enu_rotation(0, 0);
    ck_assert_within(r.m[0][1], 1, 0);
    ck_assert_within(r.m[1][2], 1, 0);
    ck_assert_within(r.m[2][0], 1, 0);
}
END_TEST

START_TEST(bad_origin)
{
    sensim_geo_enu f;
    ck_assert_int_eq(sensim_geo_enu_init(&f, (double[3]){91, 0, 0}), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "latitude 91"));
    ck_assert_int_eq(sensim_geo_enu_init(&f, (double[3]){0, NAN, 0}), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "longitude"));
}
END_TEST

START_TEST(normal_gravity)
{
    /* TR8350.2 table 3.3: equator and poles. At 45 deg, eq. 4-1 evaluated
     * separately (Python, double precision) gives 9.80619776934; the 1980
     * series formula 9.780327 (1 + 0.0053024 sin^2 - 0.0000058 sin^2 2phi)
     * gives 9.8061992, its truncation being about 1.5e-6. */
    ck_assert_within(sensim_geo_normal_gravity(0, 0), 9.7803253359, 1e-10);
    ck_assert_within(sensim_geo_normal_gravity(90, 0), 9.8321849378, 1e-9);
    ck_assert_within(sensim_geo_normal_gravity(-90, 0), 9.8321849378, 1e-9);
    ck_assert_within(sensim_geo_normal_gravity(45, 0), 9.80619776934, 1e-10);
    ck_assert_within(sensim_geo_normal_gravity(45, 0), 9.8061992, 2e-6);
    /* Free-air gradient near the surface is about -3.086e-6 s^-2. */
    double grad = (sensim_geo_normal_gravity(45, 1000) - sensim_geo_normal_gravity(45, 0)) / 1000;
    ck_assert_within(grad, -3.086e-6, 0.01e-6);
}
END_TEST

Suite *suite_geodesy(void)
{
    Suite *s = suite_create("geodesy");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, known_points);
    tcase_add_test(tc, round_trips_grid);
    tcase_add_test(tc, enu_round_trip_and_axes);
    tcase_add_test(tc, bad_origin);
    tcase_add_test(tc, normal_gravity);
    suite_add_tcase(s, tc);
    return s;
}
