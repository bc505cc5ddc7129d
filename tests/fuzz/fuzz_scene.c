/* Scene YAML read from a file, as `render` does: the scene itself
 * (sensim_scene_load) and its sensors (sensim_render_sensor_load, lidar
 * tables, rosettes and definition files included) under the names the
 * corpus uses. */
#include "fuzz.h"
#include "sensim/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"vlp16", "hdl32e", "cam", "lidar", "rosette", "t"};
    const char *path = fuzz_write("scene.yaml", data, size);
    sensim_scene_destroy(sensim_scene_load(path));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        sensim_render_sensor rs;
        (void)sensim_render_sensor_load(path, names[i], &rs);
    }
    return 0;
}
