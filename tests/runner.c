/* The one test runner: every suite_NAME() in tests/ (any .c) is registered through
 * the generated suites.h. CK_RUN_SUITE=NAME runs one suite. Ends with Check's
 * summary and a plain "N passed, N failed" line. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#define SENSIM_SUITE(f) Suite *f(void);
#include "suites.h"
#undef SENSIM_SUITE

int main(void)
{
    SRunner *sr = srunner_create(NULL);
#define SENSIM_SUITE(f) srunner_add_suite(sr, f());
#include "suites.h"
#undef SENSIM_SUITE
    srunner_run_all(sr, CK_NORMAL);
    int run = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    printf("%d passed, %d failed\n", run - failed, failed);
    return failed == 0 && run > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
