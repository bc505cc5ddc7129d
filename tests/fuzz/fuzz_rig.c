/* Rig YAML (sensim_rig_load_string): keys, units, models of every sensor. */
#include "fuzz.h"
#include "sensim/rig.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    sensim_rig_free(sensim_rig_load_string(text, "fuzz.yaml"));
    free(text);
    return 0;
}
