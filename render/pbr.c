/* Camera shading beyond Lambert: glTF 2.0 metallic-roughness materials
 * (the BRDF of the glTF 2.0 specification's Appendix B, "BRDF
 * Implementation", in its reference form) with the base colour and
 * metallic-roughness textures, and the two-layer surface BRDF the lidar
 * uses (seed 002 eq. 12, brdf.c) evaluated per colour channel with the
 * albedo as the diffuse reflectance.
 *
 * A pixel's radiance is ka * ambient + ks * sun * (n.l) where the sun is
 * seen: ks = pi f(l, v), so that a Lambertian albedo rho (f = rho / pi)
 * gives the Lambert shading of camera.c, rho (ambient + sun n.l). Ambient
 * light, uniform over the sky, is reflected with the BRDF's directional
 * albedo, approximated by the diffuse albedo plus the specular reflectance
 * at normal incidence (the split-sum approximation of Karis, "Real Shading
 * in Unreal Engine 4", SIGGRAPH 2013, with its environment term taken as
 * F0): glTF (1 - metallic) (0.96 base + 0.04) + metallic base; surface
 * (1 - F(0)) albedo + F(0). */
#include <math.h>

#include "render_internal.h"
#include "surface.h"

void sensim_gltf_brdf(const double base[3], double metallic, double roughness, sensim_vec3 n, sensim_vec3 l,
                      sensim_vec3 v, double f[3])
{
    f[0] = f[1] = f[2] = 0;
    double nl = sensim_vec3_dot(n, l), nv = sensim_vec3_dot(n, v);
    if (!(nl > 0) || !(nv > 0))
        return;
    sensim_vec3 h = sensim_vec3_add(l, v);
    double hn = sensim_vec3_norm(h);
    h = hn > 0 ? sensim_vec3_scale(h, 1 / hn) : n;
    double nh = sensim_vec3_dot(n, h), vh = fabs(sensim_vec3_dot(v, h));
    /* alpha = roughness^2, at least 1e-3 (a mirror's delta peak is no
     * function). */
    double a = fmax(roughness * roughness, 1e-3), a2 = a * a;
    double dd = nh * nh * (a2 - 1) + 1;
    double D = nh > 0 ? a2 / (M_PI * dd * dd) : 0;
    double V = 1 / ((nl + sqrt(a2 + (1 - a2) * nl * nl)) * (nv + sqrt(a2 + (1 - a2) * nv * nv)));
    double spec = V * D, S = pow(1 - (vh > 1 ? 1 : vh), 5);
    /* dielectric_brdf = fresnel_mix(ior 1.5, diffuse, specular):
     * mix(base / pi, spec, 0.04 + 0.96 S); metal_brdf = spec (base + (1 -
     * base) S); material = mix(dielectric, metal, metallic). */
    double fr = 0.04 + 0.96 * S;
    for (int c = 0; c < 3; c++) {
        double diel = (1 - fr) * base[c] / M_PI + fr * spec;
        double metal = spec * (base[c] + (1 - base[c]) * S);
        f[c] = (1 - metallic) * diel + metallic * metal;
    }
}

int sensim_camera_surface(const sensim_scene *s, int obj, unsigned prim, float bu, float bv, sensim_vec3 n,
                          sensim_vec3 l, sensim_vec3 v, double ka[3], double ks[3])
{
    const scene_object *o = &s->obj[obj];
    const scene_mesh *m = &s->mesh[o->mesh];
    const sensim_material *sm = &s->mat[o->material];
    const scene_surface *sf = m->surf;
    const int gi = sf && prim < m->nt ? sf->tri_mat[prim] : -1;
    if (gi >= 0) {
        const surface_material *g = &sf->mat[gi];
        double base[3] = {g->base[0], g->base[1], g->base[2]}, metallic = g->metallic, rough = g->roughness;
        if ((g->texture >= 0 || g->mr_texture >= 0) && sf->uv) {
            /* Embree's barycentrics: u weights vertex 1, v vertex 2. */
            const uint32_t *t = m->tri + 3 * (size_t)prim;
            const double w0 = 1.0 - bu - bv, w1 = bu, w2 = bv;
            double tu = w0 * sf->uv[2 * t[0]] + w1 * sf->uv[2 * t[1]] + w2 * sf->uv[2 * t[2]];
            double tv = w0 * sf->uv[2 * t[0] + 1] + w1 * sf->uv[2 * t[1] + 1] + w2 * sf->uv[2 * t[2] + 1];
            double tex[3];
            if (g->texture >= 0) {
                const double *M = g->uvt;
                sensim_texture_sample(&sf->tex[g->texture], M[0] * tu + M[1] * tv + M[2],
                                      M[3] * tu + M[4] * tv + M[5], tex);
                for (int c = 0; c < 3; c++)
                    base[c] *= tex[c];
            }
            if (g->mr_texture >= 0) { /* glTF 2.0 sec. 3.9.2: roughness in green, metalness in blue */
                const double *M = g->mr_uvt;
                sensim_texture_sample(&sf->tex[g->mr_texture], M[0] * tu + M[1] * tv + M[2],
                                      M[3] * tu + M[4] * tv + M[5], tex);
                rough *= tex[1];
                metallic *= tex[2];
            }
        }
        double f[3];
        sensim_gltf_brdf(base, metallic, rough, n, l, v, f);
        for (int c = 0; c < 3; c++) {
            ka[c] = (1 - metallic) * (0.96 * base[c] + 0.04) + metallic * base[c];
            ks[c] = M_PI * f[c];
        }
        return 1;
    }
    if (sm->brdf == SENSIM_BRDF_SURFACE) {
        sensim_material c = *sm;
        const double F0 = sensim_brdf_fresnel(sm->ior, sm->ior_k, 1.0);
        for (int i = 0; i < 3; i++) {
            c.reflectance = sm->albedo[i];
            ks[i] = M_PI * sensim_material_brdf(&c, n, l, v);
            ka[i] = (1 - F0) * sm->albedo[i] + F0;
        }
        return 1;
    }
    return 0;
}
