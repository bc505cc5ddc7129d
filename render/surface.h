/* Internal: what a camera sees of a surface beyond the scene material:
 * glTF textures (texture.c: PNG through libpng, JPEG through
 * libjpeg-turbo, decoded to linear RGB) and metallic-roughness materials
 * (gltf.c reads them, pbr.c shades them). Not installed. */
#ifndef SENSIM_RENDER_SURFACE_H
#define SENSIM_RENDER_SURFACE_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/linalg.h"

#pragma GCC visibility push(hidden)

/* glTF sampler wrap modes (glTF 2.0 sec. 5.26). */
enum { TEX_REPEAT = 10497, TEX_CLAMP = 33071, TEX_MIRROR = 33648 };

/* The largest texture decoded, in pixels (2^26: 64 Mpx, 768 MiB as floats). */
#define SENSIM_TEXTURE_MAX_PIXELS ((size_t)1 << 26)

typedef struct sensim_texture {
    size_t width, height;
    float *rgb;         /* [height * width * 3], linear (the sRGB curve undone, for colour), top row first */
    int wrap_s, wrap_t; /* TEX_REPEAT, TEX_CLAMP or TEX_MIRROR */
    int nearest;        /* magFilter NEAREST (9728): no bilinear filtering */
} sensim_texture;

/* Decodes a PNG (any libpng colour type and depth) or a JPEG (by their
 * magic bytes) into t->rgb: with srgb, colour whose sRGB curve is undone
 * (glTF's base colour); else data, each 8-bit value v as v / 255 (glTF's
 * metallic-roughness). `what` names the image in errors. Wrap modes are
 * left to the caller (set to REPEAT). 0, or -1 with the error set. */
int sensim_texture_decode(const unsigned char *data, size_t len, int srgb, const char *what, sensim_texture *t);
/* Samples at texture coordinates (u, v) (glTF: (0, 0) is the first
 * pixel's outer corner, v down the rows), bilinearly between pixel centres
 * unless nearest, with the wrap modes. Linear RGB. */
void sensim_texture_sample(const sensim_texture *t, double u, double v, double rgb[3]);
void sensim_texture_free(sensim_texture *t);

/* A glTF metallic-roughness material (glTF 2.0 sec. 3.9.2): factors, the
 * optional base colour texture and the optional metallic-roughness texture
 * (its blue channel scales metallicFactor, its green roughnessFactor), each
 * with its KHR_texture_transform. Both sample the primitive's one set of
 * texture coordinates (scene_surface.uv). */
typedef struct surface_material {
    double base[3];   /* baseColorFactor, linear RGB (alpha ignored: opaque) */
    double metallic;  /* metallicFactor, [0, 1] */
    double roughness; /* roughnessFactor, [0, 1]; GGX alpha = roughness^2 */
    int texture;      /* baseColorTexture: index in tex, -1 none */
    double uvt[6];    /* its KHR_texture_transform: u' = uvt[0] u + uvt[1] v + uvt[2], v' = uvt[3] u +
                         uvt[4] v + uvt[5] (identity without one) */
    int mr_texture;   /* metallicRoughnessTexture: index in tex (linear data), -1 none */
    double mr_uvt[6]; /* its KHR_texture_transform, as uvt */
} surface_material;

/* A mesh's glTF surface: per-vertex texture coordinates (of each
 * primitive, the set its material's base colour texture samples) and
 * per-triangle material (in the mesh's own triangle order, after
 * degenerate ones are dropped). */
typedef struct scene_surface {
    float *uv;        /* [nv * 2]; NULL when no primitive has texture coordinates */
    int32_t *tri_mat; /* [nt]: index in mat, -1: the scene material */
    surface_material *mat;
    size_t nmat;
    sensim_texture *tex;
    size_t ntex;
} scene_surface;

void scene_surface_free(scene_surface *s);

/* The glTF 2.0 BRDF (Appendix B, the reference form): a dielectric (F0 =
 * 0.04, ior 1.5) Fresnel-mixing a Lambert base over a GGX specular layer,
 * mixed by `metallic` with a metal (Schlick Fresnel to the base colour) of
 * the same GGX layer, alpha = roughness^2, the height-correlated Smith
 * visibility. f(l, v) per channel (1/sr), 0 below the surface. */
void sensim_gltf_brdf(const double base[3], double metallic, double roughness, sensim_vec3 n, sensim_vec3 l,
                      sensim_vec3 v, double f[3]);

#pragma GCC visibility pop

#endif
