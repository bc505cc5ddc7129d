/* Atomic whole-file output: write beside the target, rename when complete
 * (the same discipline lib/log.c follows for HDF5 logs). */
#include "sensim/afile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sensim_afile {
    FILE *f;
    char *path;
    char *tmp;
};

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
        a->tmp = malloc(len + 12);
    }
    if (!a || !a->path || !a->tmp) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    memcpy(a->path, path, len + 1);
    snprintf(a->tmp, len + 12, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(a->tmp);
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

static void afile_free(sensim_afile *a)
{
    free(a->path);
    free(a->tmp);
    free(a);
}

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
    afile_free(a);
    return st;
}

void sensim_afile_abort(sensim_afile *a)
{
    if (!a)
        return;
    fclose(a->f);
    unlink(a->tmp);
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
