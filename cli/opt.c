/* Option tables (see cli.h): one per verb, from which both getopt_long's
 * array and the option lines of --help are made. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int is_alias(const cli_opt *o) { return o->name && !o->help; }

static void help_line(const cli_spec *s, const cli_opt *o, FILE *f)
{
    char pre[160];
    int n;
    if (o->key < CLI_LONG)
        n = snprintf(pre, sizeof pre, "  -%c, --%s", o->key, o->name);
    else
        n = snprintf(pre, sizeof pre, "%s--%s", s->long_flush ? "  " : "      ", o->name);
    if (o->arg && n < (int)sizeof pre)
        n += snprintf(pre + n, sizeof pre - (size_t)n, " %s", o->arg);
    /* A name longer than the column gets two spaces before its text, or
     * its text starts on the next line (help beginning with '\n'). */
    if (o->help[0] == '\n')
        fputs(pre, f);
    else
        fprintf(f, "%-*s%s", s->column, pre, n >= s->column ? "  " : "");
    for (const char *h = o->help; *h; h++) {
        fputc(*h, f);
        if (*h == '\n')
            fprintf(f, "%*s", s->column, "");
    }
    fputc('\n', f);
}

void cli_help(const cli_spec *s, FILE *f)
{
    for (; s; s = s->next) {
        if (s->head)
            fputs(s->head, f);
        for (const cli_opt *o = s->opts; o && (o->name || o->help); o++) {
            if (!o->name)
                fputs(o->help, f);
            else if (!is_alias(o))
                help_line(s, o, f);
        }
        if (s->tail)
            fputs(s->tail, f);
    }
}

void cli_parse_begin(cli_parser *p, const cli_spec *s, int argc, char **argv)
{
    cli_parse_begin_to(p, s, NULL, argc, argv);
}

void cli_parse_begin_to(cli_parser *p, const cli_spec *s, const cli_to *to, int argc, char **argv)
{
    size_t n = 0, k = 0;
    p->spec = s;
    p->to = to;
    p->argc = argc;
    p->argv = argv;
    /* ':' first: a missing argument is told apart from an unknown option. */
    memset(p->shorts, 0, sizeof p->shorts); /* strchr below reads what is built so far */
    p->shorts[k++] = ':';
    for (const cli_opt *o = s->opts; o && (o->name || o->help) && n < CLI_OPT_MAX; o++) {
        if (!o->name)
            continue;
        p->lo[n++] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL, o->key};
        if (o->key < CLI_LONG && !strchr(p->shorts + 1, o->key)) {
            p->shorts[k++] = (char)o->key;
            if (o->arg)
                p->shorts[k++] = ':';
        }
    }
    p->lo[n] = (struct option){NULL, 0, NULL, 0};
    p->shorts[k] = '\0';
    optind = 1;
    opterr = 0;
}

/* The table entry a long name given on the command line means: an exact
 * match, else the one option it abbreviates (as getopt_long takes it). */
static const cli_opt *find_long(const cli_spec *s, const char *name, size_t len, int *ambiguous)
{
    const cli_opt *hit = NULL;
    *ambiguous = 0;
    for (const cli_opt *o = s->opts; o && (o->name || o->help); o++) {
        if (!o->name || strncmp(o->name, name, len))
            continue;
        if (strlen(o->name) == len)
            return o;
        if (hit && hit->key != o->key)
            *ambiguous = 1;
        hit = o;
    }
    return *ambiguous ? NULL : hit;
}

static const cli_opt *find_short(const cli_spec *s, int key)
{
    for (const cli_opt *o = s->opts; o && (o->name || o->help); o++)
        if (o->name && o->key == key && key < CLI_LONG)
            return o;
    return NULL;
}

/* "unknown option '--x'", with the closest option name when it is a
 * likely typo. */
static void unknown_long(const cli_spec *s, const char *word, size_t len)
{
    const char *names[CLI_OPT_MAX + 1];
    size_t n = 0;
    for (const cli_opt *o = s->opts; o && (o->name || o->help) && n < CLI_OPT_MAX; o++)
        if (o->name)
            names[n++] = o->name;
    names[n] = NULL;
    char w[64];
    snprintf(w, sizeof w, "%.*s", (int)(len < sizeof w ? len : sizeof w - 1), word);
    const char *near = cli_suggest(w, names);
    if (near)
        cli_usage_error(s->verb, "unknown option '--%.*s' (did you mean --%s?)", (int)len, word, near);
    else
        cli_usage_error(s->verb, "unknown option '--%.*s'", (int)len, word);
}

/* Reports the option error getopt_long found. optopt is 0 for an unknown
 * long option, else the key of the option at fault (for a long one, the
 * element just consumed names it). */
static int option_error(cli_parser *p, int c)
{
    const cli_spec *s = p->spec;
    const char *a = optind > 1 && optind - 1 < p->argc ? p->argv[optind - 1] : "";
    if (!strncmp(a, "--", 2)) {
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int amb;
        const cli_opt *o = find_long(s, name, len, &amb);
        if (optopt == 0 || (o && o->key == optopt)) {
            if (amb)
                cli_usage_error(s->verb, "option '--%.*s' is ambiguous", (int)len, name);
            else if (!o)
                unknown_long(s, name, len);
            else if (o->arg)
                cli_usage_error(s->verb, "option '--%s' needs a value", o->name);
            else
                cli_usage_error(s->verb, "option '--%s' takes no value", o->name);
            return CLI_OPT_BAD;
        }
    }
    const cli_opt *o = find_short(s, optopt);
    if (c == ':' && o)
        cli_usage_error(s->verb, "option '-%c' (--%s) needs a value", optopt, o->name);
    else if (optopt > 32 && optopt < 127)
        cli_usage_error(s->verb, "unknown option '-%c'", optopt);
    else
        cli_usage_error(s->verb, "unknown option '%s'", a);
    return CLI_OPT_BAD;
}

/* Stores the argument of option o where the parser's `to` says: 0, -1
 * when `to` does not name it, or CLI_USAGE after the message. */
static int store(const cli_parser *p, const cli_opt *o)
{
    const cli_to *t = p->to;
    while (t && t->name && strcmp(t->name, o->name))
        t++;
    if (!t || !t->name)
        return -1;
    const char *verb = p->spec->verb;
    switch (t->kind) {
    case CLI_TO_STR: *(const char **)t->var = optarg; return 0;
    case CLI_TO_FLAG: *(int *)t->var = 1; return 0;
    case CLI_TO_COUNT: return cli_opt_count(verb, o->name, optarg, t->lo, t->hi, t->var);
    case CLI_TO_NUMBER: return cli_opt_number(verb, o->name, optarg, t->lo != 0, t->var);
    case CLI_TO_REAL: {
        double v;
        if (cli_parse_double(optarg, &v) || !(v > t->min && v < t->max))
            return cli_usage_error(verb, t->msg, optarg);
        *(double *)t->var = v;
        return 0;
    }
    default:
        if (!cli_parse_seconds(optarg, t->var))
            return 0;
        return cli_usage_error(verb, "--%s: '%s' is not a duration (seconds, or e.g. '5 min')", o->name, optarg);
    }
}

int cli_parse_next(cli_parser *p)
{
    for (;;) {
        int c = getopt_long(p->argc, p->argv, p->shorts, p->lo, NULL);
        if (c == -1)
            return 0;
        if (c == '?' || c == ':')
            return option_error(p, c);
        const cli_opt *o = p->spec->opts;
        while (o && (o->name || o->help) && (!o->name || o->key != c))
            o++;
        const char *name = o ? o->name : NULL;
        if (name && !strcmp(name, "help")) {
            /* The whole verb's help, also from a second form's parser
             * (import BAG, export --format bag). */
            const cli_command *cmd = cli_find(p->spec->verb);
            cli_help(cmd ? cmd->spec : p->spec, stdout);
            return CLI_OPT_HELP;
        }
        int st = name ? store(p, o) : -1;
        if (st < 0)
            return c & 0xffff;
        if (st)
            return CLI_OPT_BAD;
    }
}

int cli_parse_all(const cli_spec *s, const cli_to *to, int argc, char **argv)
{
    cli_parser p;
    cli_parse_begin_to(&p, s, to, argc, argv);
    return cli_parse_next(&p);
}

int cli_parse_exit(int c) { return c == CLI_OPT_HELP ? CLI_OK : CLI_USAGE; }

int cli_parse_operand(const char *verb, int argc, char **argv, const char **operand)
{
    if (optind < argc)
        *operand = argv[optind++];
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    return CLI_OK;
}

int cli_parse_range(const char *s, unsigned long long *a, unsigned long long *b)
{
    const char *dots = strstr(s, "..");
    char first[32];
    if (!dots || dots == s || (size_t)(dots - s) >= sizeof first)
        return -1;
    memcpy(first, s, (size_t)(dots - s));
    first[dots - s] = 0;
    return cli_parse_u64(first, a) || cli_parse_u64(dots + 2, b) || *a > *b ? -1 : 0;
}

/* n as an option's bound: 1e8 for a power of ten from 1e6, else digits. */
static const char *bound(char *buf, size_t size, unsigned long long n)
{
    int k = 0;
    unsigned long long m = n;
    while (m >= 10 && m % 10 == 0) {
        m /= 10;
        k++;
    }
    if (m == 1 && k >= 6)
        snprintf(buf, size, "1e%d", k);
    else
        snprintf(buf, size, "%llu", n);
    return buf;
}

int cli_opt_count(const char *verb, const char *name, const char *arg, uint64_t lo, uint64_t hi, uint64_t *out)
{
    unsigned long long v;
    if (!cli_parse_u64(arg, &v) && v >= lo && v <= hi) {
        *out = (uint64_t)v;
        return 0;
    }
    if (hi == UINT64_MAX && lo <= 1)
        return cli_usage_error(verb, "--%s: '%s' is not a %s integer", name, arg, lo ? "positive" : "non-negative");
    char b0[24], b1[24];
    return cli_usage_error(verb, "--%s: '%s' is not a count from %s to %s", name, arg, bound(b0, sizeof b0, lo),
                           bound(b1, sizeof b1, hi));
}

int cli_opt_lib(const char *verb, const char *name, sensim_status st)
{
    return st ? cli_usage_error(verb, "--%s: %s", name, sensim_last_error()) : 0;
}

int cli_opt_number(const char *verb, const char *name, const char *arg, int positive, double *out)
{
    double v;
    if (!cli_parse_double(arg, &v) && (!positive || v > 0)) {
        *out = v;
        return 0;
    }
    return cli_usage_error(verb, "--%s: '%s' is not a %snumber", name, arg, positive ? "positive " : "");
}
