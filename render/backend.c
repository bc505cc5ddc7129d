/* Ray-casting backends (issue 18): names, AUTO, and what a scene needs
 * before a backend can trace it. */
#include <string.h>

#include "render_internal.h"
#include "twin.h"

static const char *const backend_names[] = {"embree", "twin", "auto"};
#define NBACKEND (sizeof backend_names / sizeof *backend_names)

sensim_status sensim_render_backend_parse(const char *name, sensim_render_backend *out)
{
    for (size_t i = 0; name && i < NBACKEND; i++)
        if (!strcmp(name, backend_names[i])) {
            *out = (sensim_render_backend)i;
            return SENSIM_OK;
        }
    return sensim_error(SENSIM_EINVAL, "unknown backend '%s' (known: embree, twin, auto)", name ? name : "(null)");
}

const char *sensim_render_backend_name(sensim_render_backend b)
{
    return (unsigned)b < NBACKEND ? backend_names[b] : "unknown";
}

sensim_render_backend sensim_render_backend_resolve(sensim_render_backend b)
{
    return b == SENSIM_RENDER_BACKEND_AUTO ? SENSIM_RENDER_BACKEND_EMBREE : b;
}

sensim_status sensim_scene_prepare_backend(sensim_scene *s, sensim_render_backend b)
{
    if (!s)
        return sensim_error(SENSIM_EINVAL, "scene: NULL argument");
    if ((unsigned)b >= NBACKEND)
        return sensim_error(SENSIM_EINVAL, "scene: unknown backend %d", (int)b);
    if (!s->committed)
        return sensim_error(SENSIM_EINVAL, "scene: commit the scene before preparing a backend");
    b = sensim_render_backend_resolve(b);
    if (b == SENSIM_RENDER_BACKEND_TWIN && !s->twin && !(s->twin = sensim_twin_build(s, 0)))
        return sensim_last_status();
    return SENSIM_OK;
}

sensim_status sensim_scene_backend_check(const sensim_scene *s, sensim_render_backend b, const char *who)
{
    if ((unsigned)b >= NBACKEND)
        return sensim_error(SENSIM_EINVAL, "%s: unknown backend %d", who, (int)b);
    b = sensim_render_backend_resolve(b);
    if (b == SENSIM_RENDER_BACKEND_TWIN && !s->twin)
        return sensim_error(SENSIM_EINVAL,
                            "%s: the scene is not prepared for the twin backend "
                            "(sensim_scene_prepare_backend)",
                            who);
    return SENSIM_OK;
}

void sensim_scene_intersect16(const sensim_scene *s, sensim_render_backend b, const int *valid,
                              struct RTCIntersectContext *ctx, struct RTCRayHit16 *rh)
{
    if (b == SENSIM_RENDER_BACKEND_TWIN)
        sensim_twin_intersect16(s->twin, valid, rh);
    else
        rtcIntersect16(valid, s->top, ctx, rh);
}

void sensim_scene_occluded16(const sensim_scene *s, sensim_render_backend b, const int *valid,
                             struct RTCIntersectContext *ctx, struct RTCRay16 *r)
{
    if (b == SENSIM_RENDER_BACKEND_TWIN)
        sensim_twin_occluded16(s->twin, valid, r);
    else
        rtcOccluded16(valid, s->top, ctx, r);
}
