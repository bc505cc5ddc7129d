/* Scratch files and in-process CLI calls for the fuzz targets (fuzz.h). */
#include "fuzz.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sensim_cli_main(int argc, char **argv); /* cli/main.c built with -Dmain=sensim_cli_main */

static char dir[256];
static char buf[512];

void fuzz_clean(const char *keep)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || (keep && !strcmp(e->d_name, keep)))
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
}

static void cleanup(void)
{
    fuzz_clean(NULL);
    rmdir(dir);
}

const char *fuzz_dir(void)
{
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        struct stat sb;
        if (!t || !*t)
            t = stat("/dev/shm", &sb) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof dir, "%s/sensim-fuzz-%ld", t, (long)getpid());
        mkdir(dir, 0700);
        atexit(cleanup);
    }
    return dir;
}

const char *fuzz_path(const char *name)
{
    snprintf(buf, sizeof buf, "%s/%s", fuzz_dir(), name);
    return buf;
}

const char *fuzz_write(const char *name, const uint8_t *data, size_t size)
{
    const char *p = fuzz_path(name);
    FILE *f = fopen(p, "wb");
    if (!f)
        abort(); /* the harness itself is broken: say so loudly */
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    return p;
}

char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

int fuzz_cli(const char *arg, ...)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = "sensim";
    va_list ap;
    va_start(ap, arg);
    for (const char *a = arg; a && argc < 31; a = va_arg(ap, const char *))
        argv[argc++] = strdup(a);
    va_end(ap);
    argv[argc] = NULL;
    fflush(stdout);
    int saved = dup(1), devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    close(devnull);
    optind = 0; /* glibc: a full re-initialisation of getopt */
    int rc = sensim_cli_main(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    for (int i = 1; i < argc; i++)
        free(argv[i]);
    return rc;
}
