/* The one test runner: every suite_NAME() in tests/ (any .c) is registered through
 * the generated suites.h. CK_RUN_SUITE=NAME runs one suite in this process,
 * as Check does. Otherwise the suites run in SENSIM_TEST_JOBS worker
 * processes at once (default: the online CPUs, at most 8), one suite a
 * worker, the longest known first; each suite's Check report is printed
 * whole when it ends, so reports never interleave. Ends with a plain
 * "N passed, N failed" line over all suites. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define SENSIM_SUITE(f) Suite *f(void);
#include "suites.h"
#undef SENSIM_SUITE

typedef struct {
    const char *name; /* without the suite_ prefix */
    Suite *(*make)(void);
} entry;

static const entry suites[] = {
#define SENSIM_SUITE(f) {#f + 6, f},
#include "suites.h"
#undef SENSIM_SUITE
};
enum { NSUITES = sizeof suites / sizeof suites[0] };

/* Suites that take longest (CPU seconds measured on the CI machine's kind),
 * started first so the last worker to finish is not one that began late. */
static const char *const slow_first[] = {"bag_ros1", "bagcli",   "allan_coverage", "demo",   "allan", "bag_ros2",
                                         "fitcli",   "instancing", "render",       "imufit", "inject", "sim2real"};

static int run_one(const entry *e, int *failed)
{
    SRunner *sr = srunner_create(e->make());
    srunner_run_all(sr, CK_NORMAL);
    int run = srunner_ntests_run(sr);
    *failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return run;
}

static int jobs_wanted(void)
{
    const char *j = getenv("SENSIM_TEST_JOBS");
    long n = j && *j ? strtol(j, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

/* Dump a worker's report file to stdout and remove it. */
static void print_report(FILE *f)
{
    char buf[8192];
    size_t k;
    rewind(f);
    while ((k = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, k, stdout);
    fclose(f);
    fflush(stdout);
}

int main(void)
{
    int jobs = jobs_wanted();
    if (getenv("CK_RUN_SUITE") || jobs == 1) {
        /* One process: Check picks the suite named in CK_RUN_SUITE. */
        SRunner *sr = srunner_create(NULL);
        for (int i = 0; i < NSUITES; i++)
            srunner_add_suite(sr, suites[i].make());
        srunner_run_all(sr, CK_NORMAL);
        int run = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        printf("%d passed, %d failed\n", run - failed, failed);
        return failed == 0 && run > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    }
    /* Order: the known slow suites, then the rest as registered. */
    int order[NSUITES], n = 0, taken[NSUITES] = {0};
    for (size_t s = 0; s < sizeof slow_first / sizeof slow_first[0]; s++)
        for (int i = 0; i < NSUITES; i++)
            if (!taken[i] && strcmp(suites[i].name, slow_first[s]) == 0) {
                order[n++] = i;
                taken[i] = 1;
            }
    for (int i = 0; i < NSUITES; i++)
        if (!taken[i])
            order[n++] = i;
    /* Counts come back through shared memory: run and failed per suite,
     * -1 until the worker has written them. */
    int *counts = mmap(NULL, 2 * NSUITES * sizeof *counts, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (counts == MAP_FAILED) {
        perror("runner: mmap");
        return EXIT_FAILURE;
    }
    for (int i = 0; i < 2 * NSUITES; i++)
        counts[i] = -1;
    pid_t pid[NSUITES] = {0};
    FILE *out[NSUITES] = {0};
    int next = 0, running = 0, lost = 0;
    fflush(stdout);
    while (next < n || running > 0) {
        while (next < n && running < jobs) {
            int i = order[next++];
            out[i] = tmpfile();
            if (!out[i]) {
                perror("runner: tmpfile");
                return EXIT_FAILURE;
            }
            pid[i] = fork();
            if (pid[i] < 0) {
                perror("runner: fork");
                return EXIT_FAILURE;
            }
            if (pid[i] == 0) {
                int fd = fileno(out[i]);
                if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
                    _exit(127);
                int failed = 0, run = run_one(&suites[i], &failed);
                fflush(stdout);
                counts[2 * i] = run;
                counts[2 * i + 1] = failed;
                _exit(0);
            }
            running++;
        }
        int status;
        pid_t done = wait(&status);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            perror("runner: wait");
            return EXIT_FAILURE;
        }
        for (int i = 0; i < NSUITES; i++)
            if (pid[i] == done && out[i]) {
                running--;
                print_report(out[i]);
                out[i] = NULL;
                if (counts[2 * i] < 0) {
                    printf("suite %s: worker died (status %d) before reporting\n", suites[i].name, status);
                    lost++;
                }
            }
    }
    int run = 0, failed = 0;
    for (int i = 0; i < NSUITES; i++)
        if (counts[2 * i] >= 0) {
            run += counts[2 * i];
            failed += counts[2 * i + 1];
        }
    printf("%d passed, %d failed%s\n", run - failed, failed, lost ? " (and suites lost: see above)" : "");
    return failed == 0 && lost == 0 && run > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
