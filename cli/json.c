/* The JSON writer shared by every --json output (see cli.h). */
#include <math.h>
#include <stdio.h>

#include "cli.h"

void cli_json_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

const char *cli_json_num(char *buf, double v, int digits)
{
    if (!isfinite(v))
        return "null";
    snprintf(buf, CLI_JSON_NUM_MAX, "%.*g", digits, v);
    return buf;
}
