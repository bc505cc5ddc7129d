/* Mesh files as a scene loads them: .ply. */
#include "fuzz.h"
#include "sensim/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sensim_scene *s = sensim_scene_create();
    if (s)
        sensim_scene_load_mesh_up(s, "m", fuzz_write("mesh.ply", data, size), (sensim_mesh_up)(size % 2));
    sensim_scene_destroy(s);
    return 0;
}
