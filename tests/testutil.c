#define _XOPEN_SOURCE 700
#include "testutil.h"

#include "sensim/camera.h"
#include "sensim/log.h"
#include "sensim/render.h"
#include "sensim/rig.h"

#include <dirent.h>
#include <hdf5.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

char *tu_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    char *t = tu_path(base && *base ? base : "/tmp", "sensim-test-XXXXXX");
    if (!mkdtemp(t)) {
        free(t);
        return NULL;
    }
    return t;
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

void tu_rmtree(const char *dir)
{
    if (dir)
        nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

char *tu_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

char *tu_src(const char *rel)
{
    const char *s = getenv("SENSIM_SRCDIR");
    return tu_path(s && *s ? s : ".", rel);
}

static char *slurp_fd(int fd)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    lseek(fd, 0, SEEK_SET);
    for (;;) {
        if (len + 1024 > cap)
            buf = realloc(buf, cap *= 2);
        ssize_t k = read(fd, buf + len, cap - len - 1);
        if (k <= 0)
            break;
        len += (size_t)k;
    }
    buf[len] = '\0';
    return buf;
}

tu_run_result tu_run(const char *arg0, ...)
{
    tu_run_result r = {-1, NULL, NULL};
    const char *argv[64];
    const char *bin = getenv("SENSIM_BIN");
    int n = 0;
    argv[n++] = bin && *bin ? bin : "build/sensim";
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && n < 63; a = va_arg(ap, const char *))
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;

    FILE *fo = tmpfile(), *fe = tmpfile();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fileno(fo), 1);
    posix_spawn_file_actions_adddup2(&fa, fileno(fe), 2);
    pid_t pid;
    if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) == 0) {
        int st;
        waitpid(pid, &st, 0);
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    posix_spawn_file_actions_destroy(&fa);
    r.out = slurp_fd(fileno(fo));
    r.err = slurp_fd(fileno(fe));
    fclose(fo);
    fclose(fe);
    int json = 0;
    for (int i = 1; i < n; i++)
        json |= !strcmp(argv[i], "--json");
    if (json && r.status == 0)
        tu_assert_strict_json(r.out, argv[1]);
    return r;
}

void tu_assert_strict_json(const char *text, const char *what)
{
    /* Python's json module accepts NaN and Infinity unless parse_constant
     * refuses them; a bare inf or nan fails as a syntax error. */
    static const char prog[] = "import json, sys\n"
                               "def bad(c): raise ValueError('non-finite number ' + c + ' is not JSON')\n"
                               "try:\n"
                               "    json.loads(open(sys.argv[1], encoding='utf-8').read(), parse_constant=bad)\n"
                               "except ValueError as e:\n"
                               "    print(e)\n"
                               "    sys.exit(1)\n";
    char *dir = tu_mkdtemp(), *doc = tu_path(dir, "out.json"), *py = tu_path(dir, "check.py");
    ck_assert_int_eq(tu_write_file(doc, text), 0);
    ck_assert_int_eq(tu_write_file(py, prog), 0);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' 2>&1", py, doc);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char msg[512] = "";
    size_t got = fread(msg, 1, sizeof msg - 1, p);
    msg[got] = 0;
    int st = pclose(p);
    tu_rmtree(dir);
    free(doc);
    free(py);
    free(dir);
    ck_assert_msg(st == 0, "sensim %s --json: not strict JSON: %s\n--- output (first 600 bytes):\n%.600s", what, msg,
                  text);
}

void tu_run_free(tu_run_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

int tu_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f) == 0 ? 0 : -1;
}

char *tu_read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    char *s = slurp_fd(fd);
    close(fd);
    if (len)
        *len = strlen(s);
    return s;
}

int tu_file_exists(const char *path) { return access(path, F_OK) == 0; }

int tu_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

double tu_mean(const double *x, size_t n, size_t stride)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i * stride];
    return s / (double)n;
}

double tu_var(const double *x, size_t n, size_t stride)
{
    double m = tu_mean(x, n, stride), s = 0;
    for (size_t i = 0; i < n; i++)
        s += (x[i * stride] - m) * (x[i * stride] - m);
    return s / (double)(n - 1);
}

double tu_acf1(const double *x, size_t n, size_t stride)
{
    double m = tu_mean(x, n, stride), num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = x[i * stride] - m;
        den += d * d;
        if (i + 1 < n)
            num += d * (x[(i + 1) * stride] - m);
    }
    return num / den;
}

double tu_avar(const double *x, size_t n, size_t m)
{
    size_t k = n / m;
    double prev = 0, s = 0;
    for (size_t j = 0; j < k; j++) {
        double a = 0;
        for (size_t i = 0; i < m; i++)
            a += x[j * m + i];
        a /= (double)m;
        if (j > 0)
            s += (a - prev) * (a - prev);
        prev = a;
    }
    return s / (2.0 * (double)(k - 1));
}

sensim_camera_params tu_camera_cmos(size_t width, size_t height, double exposure)
{
    char *path = tu_src("data/rigs/camera-cmos.yaml");
    sensim_rig *rig = sensim_rig_load(path);
    ck_assert_msg(rig != NULL, "%s", sensim_last_error());
    int fov;
    const sensim_camera_params *cp = sensim_camera_sensor_params(sensim_rig_find(rig, "cam"), &fov);
    ck_assert_ptr_nonnull(cp);
    sensim_camera_params p = *cp;
    sensim_rig_free(rig);
    free(path);
    p.width = width;
    p.height = height;
    p.exposure_time = exposure;
    return p;
}

void tu_rig_rejects(const char *yaml, ...)
{
    sensim_rig *rig = sensim_rig_load_string(yaml, "bad.yaml");
    ck_assert_msg(rig == NULL, "rig accepted:\n%s", yaml);
    va_list ap;
    va_start(ap, yaml);
    for (const char *needle = va_arg(ap, const char *); needle; needle = va_arg(ap, const char *))
        ck_assert_msg(strstr(sensim_last_error(), needle) != NULL, "'%s' not in: %s", needle, sensim_last_error());
    va_end(ap);
}

void tu_scene_model_missing(const char *scene_rel, const char *copy_name, const char *model)
{
    char *src = tu_src(scene_rel), *dir = tu_mkdtemp(), *copy = tu_path(dir, copy_name), want[256];
    size_t len = 0;
    char *text = tu_read_file(src, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(tu_write_file(copy, text), 0);
    sensim_scene *s = sensim_scene_load(copy);
    ck_assert_ptr_null(s);
    const char *m = sensim_last_error();
    snprintf(want, sizeof want, "%s:", copy_name);
    ck_assert_msg(strstr(m, want) && strstr(m, model), "message: %s", m);
    free(text);
    tu_rmtree(dir);
    free(src);
    free(dir);
    free(copy);
}

size_t tu_chunk_rows(const char *path, const char *dset)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_msg(f >= 0, "%s: cannot open", path);
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT), dcpl = H5Dget_create_plist(d);
    hsize_t c[2] = {0, 0};
    ck_assert_int_ge(H5Pget_chunk(dcpl, 2, c), 1);
    H5Pclose(dcpl);
    H5Dclose(d);
    H5Fclose(f);
    return (size_t)c[0];
}

struct sensim_log_extent *tu_extents(const char *path, const char *dset, size_t ncols, size_t *next, double *fac)
{
    sensim_log *log = sensim_log_open(path);
    ck_assert_msg(log != NULL, "%s", sensim_last_error());
    sensim_log_extent *ext = NULL;
    int swap = 1;
    ck_assert_msg(sensim_log_extents(log, dset, &ext, next, &swap, fac, ncols) == SENSIM_OK, "%s",
                  sensim_last_error());
    ck_assert_int_eq(swap, 0);
    sensim_log_close(log);
    return ext;
}
