/* sensim - git-style dispatch: `sensim VERB [options]`, `sensim help VERB`
 * equals `sensim VERB --help`. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "cli.h"
#include "sensim/units.h"
#include "sensim/afile.h"

/* A verb's line of the table: name, entry point, summary, options and help
 * (declared in cli.h). */
#define VERB(name, summary) {#name, cmd_##name, summary, &cmd_##name##_spec},

static const cli_command commands[] = {
    /* VERB lines, in the order `sensim --help` lists them */
    VERB(trajectory, "make an analytic ground-truth log (static, line, circle, sine, figure8)")
    VERB(inject, "apply a rig's noise models to a ground-truth log or to recorded clean data")
    VERB(info, "describe a log or a ROS recording")
    VERB(import, "ROS bags, EuRoC, TUM, CSV recordings and point clouds into a log")
    VERB(export, "ground truth and sensor groups to CSV, EuRoC, TUM or ROS bags")
    VERB(allan, "Allan-family deviations with confidence intervals; table, CSV, JSON, SVG plot")
    VERB(fit, "fit noise-model parameters from stationary logs (imu, camera, lidar, gnss)")
    VERB(datasheet, "datasheet figures to model parameters")
    VERB(render, "lidar scans and camera frames of a scene along a trajectory")
    VERB(judge, "run the velocity estimator (EKF judge) on a log")
    VERB(vepd, "sim2real score (VEPD) between real and simulated test sets")
    VERB(sim2real, "seed 004's GNSS experiment in simulation: rank five models by VEPD")
    VERB(stitch, "one log of HDF5 virtual datasets over the shards of a job (--shard, --seeds)")
    VERB(demo, "run the whole pipeline on the bundled data")


    {NULL, NULL, NULL, NULL},
};


const cli_command *cli_find(const char *name)
{
    for (size_t i = 0; commands[i].name; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

int cli_fail_lib(const char *verb)
{
    const char *m = sensim_last_error();
    fprintf(stderr, "sensim %s: %s\n", verb, *m ? m : sensim_strerror(sensim_last_status()));
    return CLI_FAIL;
}

/* "sensim VERB: message" on stderr, without the line end. */
static void say(const char *verb, const char *fmt, va_list ap)
{
    fprintf(stderr, "sensim %s: ", verb);
    vfprintf(stderr, fmt, ap);
}

int cli_fail(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(verb, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_FAIL;
}

int cli_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(verb, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'sensim %s --help'.\n", verb);
    return CLI_USAGE;
}

static void say_stale(const char *tmp, long pid, void *verb)
{
    fprintf(stderr, "sensim %s: removed %s, a temporary left by process %ld, which is gone\n", (const char *)verb, tmp,
            pid);
}

int cli_check_output(const char *verb, const char *output, ...)
{
    if (output)
        sensim_tmp_remove_stale(output, say_stale, (void *)verb);
    va_list ap;
    va_start(ap, output);
    int rc = 0;
    for (const char *in = va_arg(ap, const char *); in && !rc; in = va_arg(ap, const char *))
        if (*in && sensim_afile_check_distinct(output, in) != SENSIM_OK)
            rc = cli_fail_lib(verb);
    va_end(ap);
    return rc;
}

void cli_print_help(const char *verb, FILE *f)
{
    const cli_command *c = cli_find(verb);
    if (c)
        cli_help(c->spec, f);
}

char *cli_program_dir(char *buf, size_t size)
{
    ssize_t n = size > 1 ? readlink("/proc/self/exe", buf, size - 1) : -1;
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    return buf;
}

/* Damerau-Levenshtein (optimal string alignment) distance, for short words. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63)
        return (size_t)-1;
    size_t d[64][64];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1], v = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

const char *cli_suggest(const char *word, const char *const *names)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; names[i]; i++) {
        size_t d = edit_distance(word, names[i]);
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    return best && best_d > 0 && best_d <= 2 && 2 * best_d < strlen(word) ? best : NULL;
}

int cli_is_hdf5(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    int found = 0;
    for (long off = 0; off <= 2048 && !found; off = off ? 2 * off : 512) {
        unsigned char b[8];
        if (fseek(f, off, SEEK_SET) || fread(b, 1, 8, f) != 8)
            break;
        found = !memcmp(b, sig, 8);
    }
    fclose(f);
    return found;
}

int cli_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int cli_parse_seconds(const char *s, double *out)
{
    double v;
    if (sensim_units_convert(s, SENSIM_DIM_TIME, &v) || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int cli_parse_u64(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (*s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end || errno)
        return -1;
    *out = v;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: sensim [--version] [--help] VERB [options]\n\n"
               "sensim makes simulated sensors behave like real ones.\n\nVerbs:\n");
    for (size_t i = 0; commands[i].name; i++)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'sensim help VERB' or 'sensim VERB --help' describes a verb; man sensim-VERB.\n");
}

int main(int argc, char **argv)
{
    /* HDF5 1.10 crashes in its exit handler (H5F__close_cb) on a file whose
     * flush failed, as on a full disk, after sensim has reported the error
     * and discarded the file. Every log is closed explicitly, so the handler
     * has nothing to do: do without it. Must precede any other HDF5 call. */
    H5dont_atexit();
    /* Ctrl-C, SIGTERM, SIGHUP: remove the temporaries being written. */
    sensim_tmp_install_signal_handlers();
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *verb = argv[1];
    if (!strcmp(verb, "--help") || !strcmp(verb, "-h")) {
        usage(stdout);
        return CLI_OK;
    }
    if (!strcmp(verb, "--version")) {
        printf("sensim %s\n", SENSIM_VERSION);
        return CLI_OK;
    }
    if (!strcmp(verb, "help")) {
        if (argc < 3) {
            usage(stdout);
            return CLI_OK;
        }
        const cli_command *c = cli_find(argv[2]);
        if (!c) {
            fprintf(stderr, "sensim: unknown verb '%s'\n", argv[2]);
            return CLI_USAGE;
        }
        if (argc == 3) {
            cli_help(c->spec, stdout);
            return CLI_OK;
        }
        /* `sensim help fit camera` is `sensim fit camera --help`. */
        char **av = malloc((size_t)argc * sizeof *av);
        if (!av)
            return CLI_FAIL;
        for (int i = 2; i < argc; i++)
            av[i - 2] = argv[i];
        av[argc - 2] = "--help";
        av[argc - 1] = NULL;
        int rc = c->run(argc - 1, av);
        free(av);
        return rc;
    }
    const cli_command *c = cli_find(verb);
    if (!c) {
        const char *names[sizeof commands / sizeof commands[0]];
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            names[i] = commands[i].name;
        const char *s = cli_suggest(verb, names);
        if (s) {
            fprintf(stderr, "sensim: unknown verb '%s' (did you mean %s?)\n", verb, s);
            return CLI_USAGE;
        }
        fprintf(stderr, "sensim: unknown verb '%s'\n", verb);
        usage(stderr);
        return CLI_USAGE;
    }
    /* `sensim fit KIND --help` is the kind's own help: fit dispatches it. */
    for (int i = 2; i < argc && strcmp(verb, "fit"); i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            cli_help(c->spec, stdout);
            return CLI_OK;
        }
    return c->run(argc - 1, argv + 1);
}
