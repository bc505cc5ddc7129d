/* Helpers shared by the ground-truth verbs (trajectory, import, export). */
#ifndef SENSIM_CLI_GT_H
#define SENSIM_CLI_GT_H

/* Madison, Wisconsin (the SBEL test field of seed 004), 260 m. */
#define CLI_DEFAULT_ORIGIN 43.0731, -89.4012, 260.0

/* Parses "A,B,C" (three finite numbers); 0 on success, -1 otherwise. */
int cli_parse_triple(const char *s, double out[3]);
/* "prefix argv[0] argv[1] ..." joined with spaces, malloc'd (NULL on OOM);
 * recorded as created_by so a log says how it was made. */
char *cli_join_args(const char *prefix, int argc, char **argv);

#endif
