/* Scene YAML (sensim_scene_load) read from a file, as `render` does. */
#include "fuzz.h"
#include "sensim/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sensim_scene_destroy(sensim_scene_load(fuzz_write("scene.yaml", data, size)));
    return 0;
}
