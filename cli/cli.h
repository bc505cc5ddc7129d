/* Shared pieces of the sensim command-line program. Every verb lives in
 * cli/cmd_<verb>.c as `int cmd_<verb>(int argc, char **argv)` and is listed
 * in the table in cli/main.c. Exit status: 0 success, 1 failure (with a
 * message on stderr), 2 usage error. */
#ifndef SENSIM_CLI_H
#define SENSIM_CLI_H

#include <stdio.h>

#include "sensim/status.h"

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    const char *usage; /* the full --help text */
} cli_command;

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

/* Prints the verb's help text to f. */
void cli_print_help(const char *verb, FILE *f);

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
