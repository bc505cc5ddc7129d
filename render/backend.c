/* Ray-casting backends (issue 18): names, AUTO, and what a scene needs
 * before a backend can trace it. */
#include <stdio.h>
#include <string.h>

#include "cuda_loader.h"
#include "render_internal.h"
#include "twin.h"

static const char *const backend_names[] = {"embree", "twin", "cuda", "auto"};
#define NBACKEND (sizeof backend_names / sizeof *backend_names)

sensim_status sensim_render_backend_parse(const char *name, sensim_render_backend *out)
{
    for (size_t i = 0; name && i < NBACKEND; i++)
        if (!strcmp(name, backend_names[i])) {
            *out = (sensim_render_backend)i;
            return SENSIM_OK;
        }
    return sensim_error(SENSIM_EINVAL, "unknown backend '%s' (known: embree, twin, cuda, auto)", name ? name : "(null)");
}

const char *sensim_render_backend_name(sensim_render_backend b)
{
    return (unsigned)b < NBACKEND ? backend_names[b] : "unknown";
}

sensim_render_backend sensim_render_backend_resolve(sensim_render_backend b)
{
    if (b != SENSIM_RENDER_BACKEND_AUTO)
        return b;
    return sensim_render_cuda_probe(NULL, 0) == SENSIM_OK ? SENSIM_RENDER_BACKEND_CUDA : SENSIM_RENDER_BACKEND_EMBREE;
}

sensim_render_backend sensim_scene_backend(const sensim_scene *s, sensim_render_backend b, const char **note)
{
    if (b == SENSIM_RENDER_BACKEND_AUTO)
        b = s->auto_backend;
    if (note)
        *note = b == SENSIM_RENDER_BACKEND_CUDA && s->cuda ? s->cuda->info
                : b == SENSIM_RENDER_BACKEND_EMBREE ? s->auto_note
                                                    : "";
    return b;
}

/* The twin's BVH on the GPU: the device opened (and its arithmetic
 * checked) first, so that a machine without one fails before the build. */
static sensim_status prepare_cuda(sensim_scene *s)
{
    if (s->cuda)
        return SENSIM_OK;
    sensim_cuda *cu = sensim_cuda_open();
    if (!cu)
        return sensim_last_status();
    if (!s->twin && !(s->twin = sensim_twin_build(s, 0))) {
        sensim_cuda_destroy(cu);
        return sensim_last_status();
    }
    if (!(s->cuda = sensim_cuda_scene_create(cu, &s->twin->view)))
        return sensim_last_status();
    return SENSIM_OK;
}

sensim_status sensim_scene_prepare_backend(sensim_scene *s, sensim_render_backend b)
{
    if (!s)
        return sensim_error(SENSIM_EINVAL, "scene: NULL argument");
    if ((unsigned)b >= NBACKEND)
        return sensim_error(SENSIM_EINVAL, "scene: unknown backend %d", (int)b);
    if (!s->committed)
        return sensim_error(SENSIM_EINVAL, "scene: commit the scene before preparing a backend");
    if (b == SENSIM_RENDER_BACKEND_TWIN && !s->twin && !(s->twin = sensim_twin_build(s, 0)))
        return sensim_last_status();
    if (b == SENSIM_RENDER_BACKEND_CUDA)
        return prepare_cuda(s);
    if (b == SENSIM_RENDER_BACKEND_AUTO && s->auto_backend != SENSIM_RENDER_BACKEND_CUDA) {
        /* CUDA when it works; else Embree, the reason kept for the caller. */
        if (prepare_cuda(s) == SENSIM_OK) {
            s->auto_backend = SENSIM_RENDER_BACKEND_CUDA;
            s->auto_note[0] = 0;
        } else {
            s->auto_backend = SENSIM_RENDER_BACKEND_EMBREE;
            snprintf(s->auto_note, sizeof s->auto_note, "%s", sensim_last_error());
            sensim_error_clear();
        }
    }
    return SENSIM_OK;
}

sensim_status sensim_scene_backend_check(const sensim_scene *s, sensim_render_backend b, const char *who)
{
    if ((unsigned)b >= NBACKEND)
        return sensim_error(SENSIM_EINVAL, "%s: unknown backend %d", who, (int)b);
    b = sensim_scene_backend(s, b, NULL);
    if ((b == SENSIM_RENDER_BACKEND_TWIN && !s->twin) || (b == SENSIM_RENDER_BACKEND_CUDA && !s->cuda))
        return sensim_error(SENSIM_EINVAL, "%s: the scene is not prepared for the %s backend "
                                           "(sensim_scene_prepare_backend)", who, backend_names[b]);
    return SENSIM_OK;
}

void sensim_scene_intersect16(const sensim_scene *s, sensim_render_backend b, const int *valid,
                              struct RTCIntersectContext *ctx, struct RTCRayHit16 *rh)
{
    b = sensim_scene_backend(s, b, NULL);
    if (b == SENSIM_RENDER_BACKEND_TWIN)
        sensim_twin_intersect16(s->twin, valid, rh);
    else if (b == SENSIM_RENDER_BACKEND_CUDA)
        sensim_cuda_intersect16(s->cuda, valid, rh);
    else
        rtcIntersect16(valid, s->top, ctx, rh);
}

void sensim_scene_occluded16(const sensim_scene *s, sensim_render_backend b, const int *valid,
                             struct RTCIntersectContext *ctx, struct RTCRay16 *r)
{
    /* The CUDA camera traces its shadow rays in its own kernel
     * (render/gpu/sg_shade.h) and never comes here. */
    b = sensim_scene_backend(s, b, NULL);
    if (b == SENSIM_RENDER_BACKEND_TWIN)
        sensim_twin_occluded16(s->twin, valid, r);
    else
        rtcOccluded16(valid, s->top, ctx, r);
}
