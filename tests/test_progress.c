/* Progress lines: on stderr when it is a terminal (a pseudo-terminal
 * here), redrawn in place and cleared at the end; nothing with --quiet,
 * nothing when stderr is a pipe. */
#include <check.h>
#include <errno.h>
#include <pty.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* Runs "$SENSIM_BIN args..." with stdout and stderr on a pseudo-terminal;
 * returns what the terminal received (malloc'd) and sets *status. */
static char *run_on_tty(int *status, const char *const *args)
{
    const char *bin = getenv("SENSIM_BIN");
    ck_assert_msg(bin != NULL, "SENSIM_BIN is not set");
    const char *argv[32];
    int n = 0;
    argv[n++] = "sensim";
    for (; args[n - 1] && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 4096 > cap)
            buf = realloc(buf, cap *= 2);
        ssize_t r = read(master, buf + len, cap - len - 1);
        if (r > 0)
            len += (size_t)r;
        else if (r < 0 && errno == EINTR)
            continue;
        else
            break; /* EIO once the child has closed the terminal */
    }
    buf[len] = '\0';
    close(master);
    int ws;
    waitpid(pid, &ws, 0);
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    return buf;
}

#define ASSERT_IN(hay, needle) ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' not in: %s", (needle), (hay))

START_TEST(inject_judge_import_render_show_progress_on_a_terminal_only)
{
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5"), *imu = tu_path(dir, "imu.h5");
    char *run = tu_path(dir, "run.h5"), *judged = tu_path(dir, "judged.h5"), *csv = tu_path(dir, "gt.csv");
    char *gt2 = tu_path(dir, "gt2.h5"), *scans = tu_path(dir, "scans.h5");
    char *imu_rig = tu_src("data/rigs/imu-seed004.yaml"), *gnss_rig = tu_src("data/gnss-chrono-gauss.yaml");
    char *scene = tu_src("data/scenes/walls.yaml");
    int st;
    tu_run_result r = tu_run("trajectory", "--shape", "circle", "--duration", "30", "--rate", "200", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);

    /* inject: the sensor's name and its fraction, cleared at the end. */
    const char *inj[] = {"inject", imu_rig, gt, "-o", imu, NULL};
    char *tty = run_on_tty(&st, inj);
    ck_assert_msg(st == 0, "exit %d: %s", st, tty);
    ASSERT_IN(tty, "\r\033[Ksensim inject: imu   0%");
    ASSERT_IN(tty, "\r\033[Ksensim inject: imu 100%");
    ck_assert_msg(strlen(tty) >= 4 && !strcmp(tty + strlen(tty) - 4, "\r\033[K"), "not cleared: %s", tty);
    free(tty);
    const char *inj_q[] = {"inject", "--quiet", imu_rig, gt, "-o", imu, NULL};
    tty = run_on_tty(&st, inj_q);
    ck_assert_int_eq(st, 0);
    ck_assert_str_eq(tty, "");
    free(tty);
    /* A pipe: nothing on stderr. */
    r = tu_run("inject", gnss_rig, imu, "-o", run, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_str_eq(r.err, "");
    tu_run_free(&r);

    /* judge: the IMU and GNSS read, then its summary line. */
    const char *jud[] = {"judge", run, "-o", judged, NULL};
    tty = run_on_tty(&st, jud);
    ck_assert_msg(st == 0, "exit %d: %s", st, tty);
    ASSERT_IN(tty, "sensim judge: IMU and GNSS 100%");
    ASSERT_IN(tty, "\r\033[Ksensim judge: 1051 estimates");
    free(tty);

    /* import: the bytes of the CSV read. */
    r = tu_run("export", "-g", gt, "-o", csv, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    const char *imp[] = {"import", "-g", csv, "-o", gt2, NULL};
    tty = run_on_tty(&st, imp);
    ck_assert_msg(st == 0, "exit %d: %s", st, tty);
    ASSERT_IN(tty, "gt.csv 100%");
    free(tty);

    /* render: the scans. */
    const char *ren[] = {"render", scene, "-t", gt, "-s", "lidar", "-n", "2", "-o", scans, NULL};
    tty = run_on_tty(&st, ren);
    ck_assert_msg(st == 0, "exit %d: %s", st, tty);
    ASSERT_IN(tty, "sensim render: scans  50%");
    ASSERT_IN(tty, "sensim render: scans 100%");
    free(tty);
    const char *ren_q[] = {"render", scene, "-t", gt, "-s", "lidar", "-n", "2", "-o", scans, "-q", NULL};
    tty = run_on_tty(&st, ren_q);
    ck_assert_int_eq(st, 0);
    ck_assert_ptr_null(strstr(tty, "scans"));
    free(tty);

    tu_rmtree(dir);
    free(dir);
    free(gt);
    free(imu);
    free(run);
    free(judged);
    free(csv);
    free(gt2);
    free(scans);
    free(imu_rig);
    free(gnss_rig);
    free(scene);
}
END_TEST

Suite *suite_progress(void)
{
    Suite *s = suite_create("progress");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, inject_judge_import_render_show_progress_on_a_terminal_only);
    suite_add_tcase(s, tc);
    return s;
}
