/* Datasheet quantities ("0.66 deg/sqrt(h)"): parsing and unit lookup. */
#include "fuzz.h"
#include "sensim/units.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    double v, scale;
    sensim_dim dim;
    int has;
    char buf[256];
    sensim_units_parse(text, &v, &dim, &has);
    sensim_units_explain(text, &scale, &dim, buf, sizeof buf);
    sensim_units_from_si(1.5, text, &v);
    free(text);
    return 0;
}
