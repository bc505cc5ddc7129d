/* Atomic whole-file output: write beside the target, rename when complete
 * (the same discipline lib/log.c follows for HDF5 logs). */
#include "sensim/afile.h"
#include "base_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sensim_afile {
    FILE *f;
    char *path;
    char *tmp;
    int slot; /* in the table of live temporaries, or -1 */
};

/* ---- the table of live temporaries (see afile.h) ----
 * Slot states: 0 free, 1 being filled, 2 live (the handler unlinks it). */
static atomic_int tmp_state[SENSIM_TMP_MAX];
static char tmp_name[SENSIM_TMP_MAX][PATH_MAX];

/* Room for ".tmp-<pid>-XXXXXX" (a pid has at most 10 digits). */
#define TMP_SUFFIX_MAX 22

/* The start of path's temporaries' names, stem[size >= 32]: the base name,
 * or, where the suffix would push the name past NAME_MAX (a target name of
 * 234 to 255 bytes, valid on ext4), a short hidden name derived from it
 * (".sensim-" and its 64-bit FNV-1a hash), so that any name that can be
 * written can be written atomically. */
static void tmp_stem(const char *base, char *stem, size_t size)
{
    size_t blen = strlen(base);
    if (blen + TMP_SUFFIX_MAX <= NAME_MAX) {
        snprintf(stem, size, "%s", base);
        return;
    }
    unsigned long long h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)base; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    snprintf(stem, size, ".sensim-%016llx", h);
}

char *sensim_tmp_template(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dlen = (size_t)(base - path);
    char stem[NAME_MAX + 1];
    tmp_stem(base, stem, sizeof stem);
    size_t n = dlen + strlen(stem) + 40;
    char *t = malloc(n);
    if (t)
        snprintf(t, n, "%.*s%s.tmp-%ld-XXXXXX", (int)dlen, path, stem, (long)getpid());
    return t;
}

int sensim_tmp_register(const char *tmp)
{
    size_t n = strlen(tmp);
    if (n >= PATH_MAX)
        return -1;
    for (int i = 0; i < SENSIM_TMP_MAX; i++) {
        int expect = 0;
        if (atomic_compare_exchange_strong(&tmp_state[i], &expect, 1)) {
            memcpy(tmp_name[i], tmp, n + 1);
            atomic_store(&tmp_state[i], 2);
            return i;
        }
    }
    return -1;
}

int sensim_tmp_create(char *tmpl, int *slot)
{
    /* Signals that remove temporaries are held off between creating the
     * file and listing it, so that none is created unlisted. */
    sigset_t hold, old;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    sigaddset(&hold, SIGTERM);
    sigaddset(&hold, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &hold, &old);
    int fd = mkstemp(tmpl);
    *slot = fd >= 0 ? sensim_tmp_register(tmpl) : -1;
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return fd;
}

void sensim_tmp_unregister(int slot)
{
    if (slot >= 0 && slot < SENSIM_TMP_MAX)
        atomic_store(&tmp_state[slot], 0);
}

/* Async-signal-safe: atomic loads, unlink, raise. The handler was
 * installed with SA_RESETHAND, so the re-raised signal (pending until this
 * returns) takes its default action: the process dies of it. */
static void on_signal(int sig)
{
    int saved = errno;
    for (int i = 0; i < SENSIM_TMP_MAX; i++)
        if (atomic_load(&tmp_state[i]) == 2)
            unlink(tmp_name[i]);
    raise(sig);
    errno = saved;
}

sensim_status sensim_tmp_install_signal_handlers(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0)
            return sensim_error(SENSIM_EINTERNAL, "sigaction: %s", strerror(errno));
        if (old.sa_handler == SIG_IGN)
            continue; /* nohup and friends: leave it ignored */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;
        if (sigaction(sigs[i], &sa, NULL) != 0)
            return sensim_error(SENSIM_EINTERNAL, "sigaction: %s", strerror(errno));
    }
    return SENSIM_OK;
}

size_t sensim_tmp_remove_stale(const char *path, void (*notify)(const char *tmp, long pid, void *ctx), void *ctx)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dlen = slash ? (size_t)(slash - path) : 0;
    char dir[PATH_MAX], full[PATH_MAX], stem[NAME_MAX + 1];
    if (dlen + 2 > sizeof dir || !*base)
        return 0;
    tmp_stem(base, stem, sizeof stem);
    size_t blen = strlen(stem);
    if (slash)
        memcpy(dir, path, dlen ? dlen : 1), dir[dlen ? dlen : 1] = '\0';
    else
        strcpy(dir, ".");
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *s = e->d_name;
        if (strncmp(s, stem, blen) != 0 || strncmp(s + blen, ".tmp-", 5) != 0)
            continue;
        s += blen + 5;
        long pid = 0;
        const char *p = s;
        while (*p >= '0' && *p <= '9' && pid < 100000000)
            pid = pid * 10 + (*p++ - '0');
        if (p == s || *p != '-' || strlen(p + 1) != 6 || pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* alive, or not ours to judge */
        if ((size_t)snprintf(full, sizeof full, "%s%s%s", slash ? dir : "", slash ? "/" : "", e->d_name) >=
            sizeof full)
            continue;
        if (unlink(full) == 0) {
            removed++;
            if (notify)
                notify(full, pid, ctx);
        }
    }
    closedir(d);
    return removed;
}

sensim_afile *sensim_afile_open(const char *path)
{
    if (!path || !*path) {
        sensim_error(SENSIM_EINVAL, "output: empty file name");
        return NULL;
    }
    size_t len = strlen(path);
    sensim_afile *a = calloc(1, sizeof *a);
    if (a) {
        a->path = malloc(len + 1);
        a->tmp = sensim_tmp_template(path);
        a->slot = -1;
    }
    if (!a || !a->path || !a->tmp) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    memcpy(a->path, path, len + 1);
    int fd = sensim_tmp_create(a->tmp, &a->slot);
    if (fd < 0) {
        sensim_error(SENSIM_EIO, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        goto fail;
    }
    /* mkstemp makes the file 0600; give it the mode a plain create would.
     * umask can only be read by setting it, so set it straight back. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || !(a->f = fdopen(fd, "wb"))) {
        sensim_error(SENSIM_EIO, "%s: cannot open %s: %s", path, a->tmp, strerror(errno));
        close(fd);
        unlink(a->tmp);
        sensim_tmp_unregister(a->slot);
        goto fail;
    }
    return a;
fail:
    if (a) {
        free(a->path);
        free(a->tmp);
        free(a);
    }
    return NULL;
}

FILE *sensim_afile_stream(const sensim_afile *a)
{
    return a->f;
}

const char *sensim_afile_tmp_path(const sensim_afile *a)
{
    return a->tmp;
}

static void afile_free(sensim_afile *a) { SENSIM_FREE_ALL(a->path, a->tmp, a); }

sensim_status sensim_afile_commit(sensim_afile *a)
{
    sensim_status st = SENSIM_OK;
    int bad = fflush(a->f) != 0 || ferror(a->f);
    int e = errno;
    if (fclose(a->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad)
        st = sensim_error(SENSIM_EIO, "%s: write error: %s", a->path, strerror(e));
    else if (rename(a->tmp, a->path) != 0)
        st = sensim_error(SENSIM_EIO, "%s: cannot rename the finished file into place: %s", a->path,
                          strerror(errno));
    if (st)
        unlink(a->tmp);
    sensim_tmp_unregister(a->slot);
    afile_free(a);
    return st;
}

void sensim_afile_abort(sensim_afile *a)
{
    if (!a)
        return;
    fclose(a->f);
    unlink(a->tmp);
    sensim_tmp_unregister(a->slot);
    afile_free(a);
}

sensim_status sensim_afile_check_distinct(const char *output, const char *input)
{
    struct stat so, si;
    if (!output || !input || stat(output, &so) != 0 || stat(input, &si) != 0)
        return SENSIM_OK; /* a missing input is reported by whoever opens it */
    if (so.st_dev == si.st_dev && so.st_ino == si.st_ino)
        return sensim_error(SENSIM_EINVAL, "%s: the output is the input %s (the same file); write to another name",
                            output, input);
    return SENSIM_OK;
}

/* ---- inputs ---- */

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a FIFO (named pipe)"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

/* Opens path read-only without blocking and checks what it is; returns the
 * descriptor (blocking again) or -1 with the error set. */
static int input_open(const char *path, double max_bytes)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        if (e == EISDIR) /* a directory opened for reading does not fail on every system; said the same way */
            sensim_error(SENSIM_EFORMAT, "%s: is a directory, not a file", path);
        else
            sensim_error(e == ENOENT || e == ENOTDIR ? SENSIM_ENOTFOUND : SENSIM_EIO, "%s: cannot open: %s", path,
                         strerror(e));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        sensim_error(SENSIM_EIO, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        sensim_error(SENSIM_EFORMAT, "%s: is %s, not a regular file", path, file_kind(st.st_mode));
        close(fd);
        return -1;
    }
    if (max_bytes > 0 && (double)st.st_size > max_bytes) {
        sensim_error(SENSIM_EDATA, "%s: %.0f bytes, more than the %.0f this input may have", path,
                     (double)st.st_size, max_bytes);
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

sensim_status sensim_input_check(const char *path, double max_bytes)
{
    int fd = input_open(path, max_bytes);
    if (fd < 0)
        return sensim_last_status();
    close(fd);
    return SENSIM_OK;
}

FILE *sensim_input_fopen(const char *path, double max_bytes)
{
    int fd = input_open(path, max_bytes);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        sensim_error(SENSIM_EIO, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}
