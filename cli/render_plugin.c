/* The renderer as a plugin of the program: `sensim render` and the demo's
 * render step run from sensim-render.so (the render/ objects with
 * cli/cmd_render.c and cli/demo/demo_render.c), loaded when one of them is
 * asked for. Embree, Assimp, Draco, meshoptimizer and libstdc++ come with
 * it, so every other verb starts without them: their dynamic linking was a
 * third of the program's start (9 of 21 ms on a 2-core VM). The program is
 * linked with --export-dynamic: the plugin's references to the library and
 * to the program resolve to the program's, one copy of everything.
 *
 * The plugin is $SENSIM_RENDER_PLUGIN when set; else it is looked for
 * beside the program (the build tree), in ../libexec/sensim/ from it (an
 * installed tree, wherever it was moved), then in SENSIM_LIBEXECDIR (the
 * configured install). */
#include <stdlib.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "demo/demo.h"

#define PLUGIN_NAME "sensim-render.so"

/* The plugin's handle, opened once; NULL with *why set when it cannot be
 * loaded from any of the places above. */
static void *plugin(char *why, size_t size)
{
    static void *handle;
    if (handle)
        return handle;
    const char *env = getenv("SENSIM_RENDER_PLUGIN");
    if (env && *env) {
        if (!(handle = dlopen(env, RTLD_NOW | RTLD_LOCAL)))
            snprintf(why, size, "SENSIM_RENDER_PLUGIN: %s", dlerror());
        return handle;
    }
    char exe[PATH_MAX], path[2 * PATH_MAX];
    const char *here = cli_program_dir(exe, sizeof exe);
    /* Beside the program, ../libexec/sensim/ from it, the configured place. */
    const char *const rel[] = {"", "/../libexec/sensim"};
    if (here)
        snprintf(why, size, "%s not found in %s, %s/../libexec/sensim or %s", PLUGIN_NAME, exe, exe,
                 SENSIM_LIBEXECDIR);
    else
        snprintf(why, size, "%s not found in %s", PLUGIN_NAME, SENSIM_LIBEXECDIR);
    for (size_t i = 0; i < 3 && !handle; i++) {
        if (i < 2 && !here)
            continue;
        if (i < 2)
            snprintf(path, sizeof path, "%s%s/%s", exe, rel[i], PLUGIN_NAME);
        else
            snprintf(path, sizeof path, "%s/%s", SENSIM_LIBEXECDIR, PLUGIN_NAME);
        if (access(path, F_OK))
            continue;
        if (!(handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
            snprintf(why, size, "%s", dlerror());
    }
    return handle;
}

/* The plugin's function name, or NULL after saying why on stderr. */
static void *plugin_function(const char *verb, const char *name)
{
    char why[3 * PATH_MAX];
    void *h = plugin(why, sizeof why), *f = h ? dlsym(h, name) : NULL;
    if (!f)
        cli_fail(verb, "cannot load the renderer: %s", h ? dlerror() : why);
    return f;
}

int cmd_render(int argc, char **argv)
{
    int (*run)(int, char **) = (int (*)(int, char **))plugin_function("render", "cmd_render");
    return run ? run(argc, argv) : CLI_FAIL;
}

int demo_render(const char *data, const char *dir, const char *gt)
{
    int (*run)(const char *, const char *, const char *) =
        (int (*)(const char *, const char *, const char *))plugin_function("demo", "demo_render");
    return run ? run(data, dir, gt) : -1;
}
