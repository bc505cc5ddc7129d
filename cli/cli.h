/* Shared pieces of the sensim command-line program. Every verb lives in
 * cli/cmd_<verb>.c (cli/fit/, cli/demo/ for fit and demo) as `int
 * cmd_<verb>(int argc, char **argv)`, declared below, and is listed
 * in the table in cli/main.c. Exit status: 0 success, 1 failure (with a
 * message on stderr), 2 usage error. */
#ifndef SENSIM_CLI_H
#define SENSIM_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "sensim/status.h"

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2

/* One option of a verb, written once: it makes the getopt_long entry and
 * the option's lines in --help. A table of them ends with an entry whose
 * name and help are both NULL. */
typedef struct cli_opt {
    int key;          /* the short letter; for a long-only option CLI_LONG + n,
                       * or CLI_NOSHORT(letter) to keep a letter as its key */
    const char *name; /* the long name without "--"; NULL: `help` is a line of
                       * text printed as is among the options */
    const char *arg;  /* the argument's name in --help; NULL: the option takes none */
    const char *help; /* the text beside it; each '\n' continues it on the next
                       * line at the same column. NULL: an alias, not listed
                       * (its main option's text names it) */
} cli_opt;
#define CLI_LONG 256
#define CLI_NOSHORT(c) ((c) | 0x10000)
/* The end of a table: every verb's last option, -h/--help, then the
 * terminating entry. */
#define CLI_OPTS_END {'h', "help", NULL, "this text"}, {0}

/* Where cli_parse_next stores a plain option's value itself, so that a
 * verb's switch keeps only the options that need code: a list of these
 * (ending with {0}) beside the spec, each naming an option by its long
 * name and the variable its value goes to. Written with the macros below,
 * which check the variable's type:
 *   CLI_STR(NAME, &v)           const char *v = the argument
 *   CLI_FLAG(NAME, &v)          int v = 1 (the option takes no value)
 *   CLI_COUNT(NAME, &v, lo, hi) uint64_t v, checked as by cli_opt_count
 *   CLI_NUMBER(NAME, &v)        double v, as by cli_opt_number (finite)
 *   CLI_POSITIVE(NAME, &v)      the same, > 0
 *   CLI_SECONDS(NAME, &v)       double v, by cli_parse_seconds ("5 min")
 *   CLI_REAL(NAME, &v, lo, hi, MSG)  double v in the open interval (lo, hi),
 *                               else the usage error MSG, a format given the
 *                               argument ("--rate '%s': expected ...")
 * A bad value is reported as cli_opt_count/cli_opt_number do (under the
 * option's long name) and ends parsing as an option error. */
typedef struct cli_to {
    const char *name; /* the option's long name (for an alias, its main option's) */
    int kind;         /* CLI_TO_STR, ... */
    void *var;
    uint64_t lo, hi;  /* CLI_TO_COUNT: the range; CLI_TO_NUMBER: lo 1 for > 0 */
    double min, max;  /* CLI_TO_REAL: the open range */
    const char *msg;  /* CLI_TO_REAL: the message */
} cli_to;
enum { CLI_TO_STR = 1, CLI_TO_FLAG, CLI_TO_COUNT, CLI_TO_NUMBER, CLI_TO_SECONDS, CLI_TO_REAL };
/* p as a void *, refused at compile time unless it is a `type *`. */
#define CLI_VAR(p, type) ((void *)(1 ? (p) : (type *)0))
#define CLI_STR(name, p) {name, CLI_TO_STR, CLI_VAR(p, const char *), 0, 0, 0, 0, NULL}
#define CLI_FLAG(name, p) {name, CLI_TO_FLAG, CLI_VAR(p, int), 0, 0, 0, 0, NULL}
#define CLI_COUNT(name, p, lo, hi) {name, CLI_TO_COUNT, CLI_VAR(p, uint64_t), (lo), (hi), 0, 0, NULL}
#define CLI_NUMBER(name, p) {name, CLI_TO_NUMBER, CLI_VAR(p, double), 0, 0, 0, 0, NULL}
#define CLI_POSITIVE(name, p) {name, CLI_TO_NUMBER, CLI_VAR(p, double), 1, 0, 0, 0, NULL}
#define CLI_SECONDS(name, p) {name, CLI_TO_SECONDS, CLI_VAR(p, double), 0, 0, 0, 0, NULL}
#define CLI_REAL(name, p, min, max, msg) {name, CLI_TO_REAL, CLI_VAR(p, double), 0, 0, (min), (max), msg}

/* A verb's --help: head, the option lines, tail. An option line is
 * "  -k, --name ARG" (or "      --name ARG", or "  --name ARG" when
 * long_flush) padded to `column`, then the help text. The option named
 * "help" prints this text and ends the verb with status 0. */
typedef struct cli_spec {
    const char *verb;         /* in messages: "inject", "fit camera" */
    const char *head;         /* usage and description, up to the options */
    const cli_opt *opts;
    int column;               /* where the help text of each option starts */
    int long_flush;           /* long-only options at "  --" rather than "      --" */
    const char *tail;         /* after the options (may be NULL) */
    const struct cli_spec *next; /* printed after this one (a second form of the verb) */
} cli_spec;

/* Writes the spec's --help (and that of the specs chained by `next`). */
void cli_help(const cli_spec *s, FILE *f);

/* Option parsing from a spec: getopt_long's array and short-option string
 * are made from the table, and every option error reads the same:
 * "sensim VERB: unknown option '--x' (did you mean --y?)", "option '--x'
 * needs a value", "option '--x' takes no value", each followed by
 * "Try 'sensim VERB --help'." on stderr.
 *
 *     const cli_to to[] = {CLI_STR("output", &output), ..., {0}};
 *     cli_parser p;
 *     cli_parse_begin_to(&p, &spec, to, argc, argv);
 *     while ((c = cli_parse_next(&p)) > 0)
 *         switch (c) { case 'm': ...an option not in `to`... }
 *     if (c)
 *         return cli_parse_exit(c);
 *
 * or, when `to` names every option (but help),
 *
 *     if ((c = cli_parse_all(&spec, to, argc, argv)))
 *         return cli_parse_exit(c);
 *
 * Operands are then argv[optind..argc-1], as with getopt_long. */
#define CLI_OPT_MAX 64
typedef struct cli_parser {
    const cli_spec *spec;
    int argc;
    char **argv;
    struct option lo[CLI_OPT_MAX + 1];
    char shorts[3 * CLI_OPT_MAX + 2];
    const cli_to *to; /* the options stored by cli_parse_next (may be NULL) */
} cli_parser;
#define CLI_OPT_HELP (-1) /* --help was given and printed */
#define CLI_OPT_BAD (-2)  /* an option error, already reported */
void cli_parse_begin(cli_parser *p, const cli_spec *s, int argc, char **argv);
/* The same with a list of options that cli_parse_next stores itself. */
void cli_parse_begin_to(cli_parser *p, const cli_spec *s, const cli_to *to, int argc, char **argv);
/* The next option's key (without CLI_NOSHORT; optarg set as by getopt_long), 0 after the last
 * option, CLI_OPT_HELP or CLI_OPT_BAD. An option named in the parser's
 * `to` is stored and passed over. */
int cli_parse_next(cli_parser *p);
/* All the options, when `to` names each (but help): 0, CLI_OPT_HELP or
 * CLI_OPT_BAD. */
int cli_parse_all(const cli_spec *s, const cli_to *to, int argc, char **argv);
/* The exit status after a nonzero cli_parse_next: CLI_OK for --help,
 * CLI_USAGE for an option error. */
int cli_parse_exit(int c);
/* After the options of a verb that takes one operand: that operand, if
 * any, into *operand (left as it is when there is none); CLI_OK, or
 * CLI_USAGE after the usage error "unexpected argument 'X'" for a second. */
int cli_parse_operand(const char *verb, int argc, char **argv, const char **operand);

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const cli_spec *spec; /* its --help */
} cli_command;

/* The verbs: `sensim VERB` runs cmd_VERB (argv[0] is the verb) and
 * cmd_VERB_spec is its options and --help, both in cli/cmd_VERB.c. */
int cmd_trajectory(int argc, char **argv);
int cmd_inject(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_allan(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_datasheet(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_judge(int argc, char **argv);
int cmd_vepd(int argc, char **argv);
int cmd_sim2real(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_stitch(int argc, char **argv);
extern const cli_spec cmd_trajectory_spec, cmd_inject_spec, cmd_info_spec, cmd_import_spec, cmd_export_spec,
    cmd_allan_spec, cmd_fit_spec, cmd_datasheet_spec, cmd_render_spec, cmd_judge_spec, cmd_vepd_spec,
    cmd_sim2real_spec, cmd_demo_spec, cmd_stitch_spec;

/* Looks a verb up in the table (NULL if unknown). */
const cli_command *cli_find(const char *name);

/* Prints "sensim VERB: <library's last error>" to stderr; returns CLI_FAIL. */
int cli_fail_lib(const char *verb);
/* Prints "sensim VERB: <formatted message>" to stderr; returns CLI_FAIL. */
int cli_fail(const char *verb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prints "sensim VERB: <message>" and "Try 'sensim VERB --help'."; returns CLI_USAGE. */
int cli_usage_error(const char *verb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* First removes temporaries of output left by processes that are gone,
 * saying so on stderr. Then refuses an output that names the same file as
 * one of the inputs (a
 * NULL-terminated list; NULL entries before the end are not allowed, pass
 * "" for an absent one): prints the message and returns CLI_FAIL, or 0. A
 * NULL output is never refused. */
int cli_check_output(const char *verb, const char *output, ...);

/* Prints the verb's help text to f (cli_help of its spec). */
void cli_print_help(const char *verb, FILE *f);
/* The folder of the running program (readlink of /proc/self/exe) into buf
 * (PATH_MAX bytes at least): buf, or NULL when it cannot be told. An
 * installed tree finds its parts from it wherever it was moved. */
char *cli_program_dir(char *buf, size_t size);

/* The name in the NULL-terminated list `names` closest to `word` by edit
 * distance (insertions, deletions, substitutions, adjacent swaps), when it
 * is close enough to be a likely typo (at most 2 edits, and fewer than half
 * of the word's letters); NULL otherwise. */
const char *cli_suggest(const char *word, const char *const *names);

/* What a file holds, from its first bytes: 1 HDF5 (the signature at
 * offset 0, 512, 1024 or 2048), 0 something else, -1 unreadable. */
int cli_is_hdf5(const char *path);

/* Strict number parsing for option values: the whole string must be a
 * finite number. Return 0 on success, -1 otherwise. */
int cli_parse_double(const char *s, double *out);
int cli_parse_u64(const char *s, unsigned long long *out);
/* A duration: seconds, or a number with a time unit ("5 min", "2 h",
 * "90 sec"). */
int cli_parse_seconds(const char *s, double *out);
/* "A..B": two integers, A <= B. Returns 0 on success, -1 otherwise. */
int cli_parse_range(const char *s, unsigned long long *a, unsigned long long *b);

/* An option's argument checked and stored, or the usage error printed:
 * 0, or CLI_USAGE after "sensim VERB: --NAME: 'ARG' is not ...". A count
 * lies in [lo, hi] ("a count from LO to HI", powers of ten from 1e6 written
 * so; "a non-negative integer" or "a positive integer" when hi is
 * UINT64_MAX and lo 0 or 1). A number is finite, and > 0 when `positive`. */
int cli_opt_count(const char *verb, const char *name, const char *arg, uint64_t lo, uint64_t hi, uint64_t *out);
int cli_opt_number(const char *verb, const char *name, const char *arg, int positive, double *out);
/* A library parser's status for an option: 0, or CLI_USAGE after
 * "sensim VERB: --NAME: <the library's message>". */
int cli_opt_lib(const char *verb, const char *name, sensim_status st);

/* The one JSON writer of every --json output (RFC 8259). cli_json_str
 * writes s as a string, escaping '"', '\\' and control characters (NULL
 * as null). cli_json_num formats v with `digits` significant digits into
 * buf (at least CLI_JSON_NUM_MAX bytes) and returns it, or returns "null"
 * for a NaN or an infinity, which JSON cannot hold: the caller then says
 * why beside it (a note or status member). CLI_JSON_G gives each use its
 * own buffer, so several may appear in one printf. */
#define CLI_JSON_NUM_MAX 40
void cli_json_str(FILE *f, const char *s);
const char *cli_json_num(char *buf, double v, int digits);
#define CLI_JSON_G(v, digits) cli_json_num((char[CLI_JSON_NUM_MAX]){0}, (v), (digits))

#endif
