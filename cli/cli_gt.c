/* Helpers shared by the ground-truth verbs (see cli_gt.h). */
#include "cli_gt.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_parse_triple(const char *s, double out[3])
{
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    char *parts[3], *save = NULL, *tok = strtok_r(buf, ",", &save);
    int n = 0;
    while (tok && n < 3) {
        parts[n++] = tok;
        tok = strtok_r(NULL, ",", &save);
    }
    if (n != 3 || tok)
        return -1;
    double v[3];
    for (int i = 0; i < 3; i++)
        if (cli_parse_double(parts[i], &v[i]))
            return -1;
    memcpy(out, v, sizeof v);
    return 0;
}

char *cli_join_args(const char *prefix, int argc, char **argv)
{
    size_t len = strlen(prefix) + 1;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *s = malloc(len);
    if (!s)
        return NULL;
    strcpy(s, prefix);
    for (int i = 0; i < argc; i++) {
        strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}
