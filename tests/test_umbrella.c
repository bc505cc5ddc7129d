/* Every public header compiles together through the umbrella (no clashing
 * names), and the status strings are there. */
#include "sensim/sensim.h"
#include "testutil.h"

START_TEST(umbrella_and_strerror)
{
    ck_assert_str_eq(sensim_strerror(SENSIM_OK), "success");
    ck_assert_str_eq(sensim_strerror(SENSIM_EINVAL), "invalid parameter");
    sensim_error(SENSIM_EDATA, "x.h5: %s", "/t");
    ck_assert_str_eq(sensim_last_error(), "x.h5: /t");
    sensim_error_prefix(SENSIM_EDATA, "sensor '%s'", "imu");
    ck_assert_str_eq(sensim_last_error(), "sensor 'imu': x.h5: /t");
    ck_assert_int_eq(sensim_last_status(), SENSIM_EDATA);
    sensim_error_clear();
    ck_assert_str_eq(sensim_last_error(), "");
}
END_TEST

Suite *suite_umbrella(void)
{
    Suite *s = suite_create("umbrella");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, umbrella_and_strerror);
    suite_add_tcase(s, tc);
    return s;
}
