/* Atomic whole-file output: a committed file has its content and the mode a
 * plain create gives; an aborted or failed write leaves the target as it was
 * and no temporary file beside it. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sensim/afile.h"
#include "testutil.h"

START_TEST(afile_commit_writes_with_umask_mode)
{
    char *dir = tu_mkdtemp(), *path = tu_path(dir, "out.txt");
    mode_t old = umask(022);
    sensim_afile *a = sensim_afile_open(path);
    ck_assert_ptr_nonnull(a);
    ck_assert(strncmp(sensim_afile_tmp_path(a), path, strlen(path)) == 0);
    ck_assert(!tu_file_exists(path)); /* nothing at the target until commit */
    fputs("hello\n", sensim_afile_stream(a));
    ck_assert_int_eq(sensim_afile_commit(a), SENSIM_OK);
    umask(old);
    size_t len;
    char *text = tu_read_file(path, &len);
    ck_assert_str_eq(text, "hello\n");
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0644);
    ck_assert_int_eq(tu_count_entries(dir), 1);
    free(text);
    tu_rmtree(dir);
    free(path);
    free(dir);
}
END_TEST

START_TEST(afile_abort_keeps_the_old_file)
{
    char *dir = tu_mkdtemp(), *path = tu_path(dir, "keep.txt");
    ck_assert_int_eq(tu_write_file(path, "old\n"), 0);
    sensim_afile *a = sensim_afile_open(path);
    ck_assert_ptr_nonnull(a);
    fputs("new and half-written", sensim_afile_stream(a));
    sensim_afile_abort(a);
    sensim_afile_abort(NULL);
    size_t len;
    char *text = tu_read_file(path, &len);
    ck_assert_str_eq(text, "old\n");
    ck_assert_int_eq(tu_count_entries(dir), 1);
    free(text);
    tu_rmtree(dir);
    free(path);
    free(dir);
}
END_TEST

START_TEST(afile_errors_name_the_path)
{
    char *dir = tu_mkdtemp(), *path = tu_path(dir, "no/such/dir/out.txt");
    ck_assert_ptr_null(sensim_afile_open(path));
    ck_assert_int_eq(sensim_last_status(), SENSIM_EIO);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), path));
    ck_assert_ptr_null(sensim_afile_open(""));
    ck_assert_int_eq(sensim_last_status(), SENSIM_EINVAL);
    /* A write error (the disk-full case) is caught at commit: /dev/full
     * cannot be the target's folder, so fill the buffer of a stream whose
     * flush fails by closing its descriptor underneath. */
    char *p2 = tu_path(dir, "broken.txt");
    ck_assert_int_eq(tu_write_file(p2, "old\n"), 0);
    sensim_afile *a = sensim_afile_open(p2);
    ck_assert_ptr_nonnull(a);
    fputs("data", sensim_afile_stream(a));
    FILE *f = sensim_afile_stream(a);
    close(fileno(f));
    ck_assert_int_eq(sensim_afile_commit(a), SENSIM_EIO);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), p2));
    size_t len;
    char *text = tu_read_file(p2, &len);
    ck_assert_str_eq(text, "old\n");
    ck_assert_int_eq(tu_count_entries(dir), 1);
    free(text);
    free(p2);
    tu_rmtree(dir);
    free(path);
    free(dir);
}
END_TEST

static void count_stale(const char *tmp, long pid, void *ctx)
{
    (void)tmp;
    (void)pid;
    ++*(int *)ctx;
}

/* Temporaries carry the writer's pid; those of processes that are gone are
 * removed (and reported), those of live ones (ours, pid 1) kept, as are
 * other files. */
START_TEST(afile_stale_temporaries)
{
    char *dir = tu_mkdtemp();
    char *out = tu_path(dir, "out.h5");
    sensim_afile *a = sensim_afile_open(out);
    ck_assert_ptr_nonnull(a);
    char want[64];
    snprintf(want, sizeof want, "out.h5.tmp-%ld-", (long)getpid());
    ck_assert_ptr_nonnull(strstr(sensim_afile_tmp_path(a), want));
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0); /* gone: its pid names a stale temporary */
    char dead[600], init[600], other[600];
    snprintf(dead, sizeof dead, "%s/out.h5.tmp-%ld-AbC123", dir, (long)child);
    snprintf(init, sizeof init, "%s/out.h5.tmp-1-AbC123", dir);
    snprintf(other, sizeof other, "%s/out.h5.tmp-%ld-toolong", dir, (long)child);
    ck_assert_int_eq(tu_write_file(dead, "x"), 0);
    ck_assert_int_eq(tu_write_file(init, "x"), 0);
    ck_assert_int_eq(tu_write_file(other, "x"), 0);
    int seen = 0;
    ck_assert_uint_eq(sensim_tmp_remove_stale(out, count_stale, &seen), 1);
    ck_assert_int_eq(seen, 1);
    ck_assert(!tu_file_exists(dead));
    ck_assert(tu_file_exists(init) && tu_file_exists(other) && tu_file_exists(sensim_afile_tmp_path(a)));
    sensim_afile_abort(a);
    ck_assert_int_eq(tu_count_entries(dir), 2);
    tu_rmtree(dir);
    free(dir);
    free(out);
}
END_TEST

Suite *suite_afile(void)
{
    Suite *s = suite_create("afile");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, afile_commit_writes_with_umask_mode);
    tcase_add_test(tc, afile_abort_keeps_the_old_file);
    tcase_add_test(tc, afile_errors_name_the_path);
    tcase_add_test(tc, afile_stale_temporaries);
    suite_add_tcase(s, tc);
    return s;
}
