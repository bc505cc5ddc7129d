/* BRDFs of seed 002 sec. 2.2: Lambert (eq. 4), and the two-layer surface
 * material: a GGX microfacet coat with complex Fresnel reflectance and the
 * height-correlated Smith masking-shadowing (eqs. 5-10) over an Oren-Nayar
 * diffuse layer in Fujii's form (eq. 11), combined as eq. 12. Pure
 * functions, safe from any thread. */
#include <complex.h>
#include <math.h>

#include "sensim/render.h"

double sensim_brdf_fresnel(double n, double k, double cos_i)
{
    double ci = cos_i < 0 ? 0 : cos_i > 1 ? 1 : cos_i;
    double complex n2 = n + k * I;
    /* Snell with n1 = 1: sin_t = sin_i / n2; the principal root keeps the
     * transmitted wave decaying for k >= 0. */
    double complex ct = csqrt(1.0 - (1.0 - ci * ci) / (n2 * n2));
    double complex rs = (ci - n2 * ct) / (ci + n2 * ct);
    double complex rp = (n2 * ci - ct) / (n2 * ci + ct);
    double a = cabs(rs), b = cabs(rp);
    return 0.5 * (a * a + b * b);
}

double sensim_brdf_ggx_d(double alpha, double cos_h)
{
    if (!(cos_h > 0))
        return 0;
    double a2 = alpha * alpha, c2 = cos_h > 1 ? 1 : cos_h * cos_h;
    double d = (a2 - 1) * c2 + 1;
    return a2 / (M_PI * d * d);
}

double sensim_brdf_ggx_lambda(double alpha, double cos_v)
{
    double c = cos_v > 1 ? 1 : cos_v;
    if (!(c > 0))
        return INFINITY;
    /* 1/a^2 = alpha^2 tan^2 = alpha^2 (1 - c^2) / c^2. */
    double inv_a2 = alpha * alpha * (1 - c * c) / (c * c);
    return 0.5 * (-1 + sqrt(1 + inv_a2));
}

double sensim_brdf_oren_nayar(double rho, double sigma, sensim_vec3 n, sensim_vec3 l, sensim_vec3 v)
{
    double nl = sensim_vec3_dot(n, l), nv = sensim_vec3_dot(n, v);
    if (!(nl > 0) || !(nv > 0))
        return 0;
    if (sigma == 0)
        return rho / M_PI;
    double s2 = sigma * sigma;
    double A = 1 - 0.5 * s2 / (s2 + 0.33) + 0.17 * rho * s2 / (s2 + 0.13);
    double B = 0.45 * s2 / (s2 + 0.09);
    double s = sensim_vec3_dot(l, v) - nl * nv;
    double t = s <= 0 ? 1 : fmax(nl, nv);
    return rho / M_PI * (A + B * s / t);
}

double sensim_material_brdf(const sensim_material *m, sensim_vec3 n, sensim_vec3 l, sensim_vec3 v)
{
    double nl = sensim_vec3_dot(n, l), nv = sensim_vec3_dot(n, v);
    if (!(nl > 0) || !(nv > 0))
        return 0;
    switch (m->brdf) {
    case SENSIM_BRDF_RETRO:
        return m->reflectance / (M_PI * nl);
    case SENSIM_BRDF_SURFACE: {
        sensim_vec3 h = sensim_vec3_add(l, v);
        double hl = sensim_vec3_norm(h);
        h = hl > 0 ? sensim_vec3_scale(h, 1 / hl) : n;
        double alpha = M_SQRT2 * m->specular_roughness;
        double F = sensim_brdf_fresnel(m->ior, m->ior_k, sensim_vec3_dot(l, h));
        double G = 1 / (1 + sensim_brdf_ggx_lambda(alpha, nl) + sensim_brdf_ggx_lambda(alpha, nv));
        double spec = F * G * sensim_brdf_ggx_d(alpha, sensim_vec3_dot(n, h)) / (4 * nl * nv);
        return spec + (1 - F) * sensim_brdf_oren_nayar(m->reflectance, m->diffuse_roughness, n, l, v);
    }
    default:
        return m->reflectance / M_PI;
    }
}
