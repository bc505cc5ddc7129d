/* Scenes: meshes, primitives, materials, static and moving objects, lights,
 * atmosphere; built into one Embree scene.
 *
 * Static objects are baked into world-space triangle geometries (no instance
 * indirection on the hot path). Moving objects are Embree instances of a
 * per-mesh prototype scene with a transform per uniform time step over the
 * scene's keyframe window, so a ray with time t sees each moving object at
 * its own pose at t (Embree motion blur, RTCRay.time in [0, 1]). */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "render_internal.h"
#include "cuda_loader.h"
#include "twin.h"
#include "surface.h"
#include "../lib/base_internal.h"

static void rtc_error_cb(void *user, enum RTCError code, const char *str)
{
    sensim_scene *s = user;
    if (!s->rtc_error) {
        s->rtc_error = (int)code;
        snprintf(s->rtc_message, sizeof s->rtc_message, "%s", str ? str : "unknown error");
    }
}

static sensim_status rtc_check(sensim_scene *s, const char *what)
{
    if (s->rtc_error == 0 && rtcGetDeviceError(s->dev) == RTC_ERROR_NONE)
        return SENSIM_OK;
    int code = s->rtc_error;
    s->rtc_error = 0;
    return sensim_error(code == RTC_ERROR_OUT_OF_MEMORY ? SENSIM_ENOMEM : SENSIM_EINTERNAL, "embree: %s: %s", what,
                        s->rtc_message[0] ? s->rtc_message : "device error");
}

sensim_material sensim_material_default(void)
{
    sensim_material m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "default");
    m.brdf = SENSIM_BRDF_LAMBERT;
    m.reflectance = 0.5;
    m.albedo[0] = m.albedo[1] = m.albedo[2] = 0.5;
    m.ior = 1.5;
    m.specular_roughness = 0.3;
    return m;
}

/* Embree's memory monitor: called from build threads with the bytes about
 * to be allocated (> 0) or freed (< 0); returning true lets it proceed. */
static bool rtc_memory_cb(void *user, ssize_t bytes, bool post)
{
    (void)post;
    sensim_scene *s = user;
    long long now = atomic_fetch_add(&s->rtc_bytes, (long long)bytes) + (long long)bytes;
    long long peak = atomic_load(&s->rtc_peak);
    while (now > peak && !atomic_compare_exchange_weak(&s->rtc_peak, &peak, now))
        ;
    return true;
}

sensim_scene *sensim_scene_create(void)
{
    sensim_scene *s = sensim_new_(sizeof *s, "scene");
    if (!s)
        return NULL;
    s->dev = rtcNewDevice("verbose=0");
    if (!s->dev) {
        sensim_error(SENSIM_EINTERNAL, "embree: cannot create a device (error %d)", (int)rtcGetDeviceError(NULL));
        free(s);
        return NULL;
    }
    rtcSetDeviceErrorFunction(s->dev, rtc_error_cb, s);
    rtcSetDeviceMemoryMonitorFunction(s->dev, rtc_memory_cb, s);
    s->weather = sensim_weather_default();
    sensim_material d = sensim_material_default();
    if (sensim_scene_add_material(s, &d) < 0) {
        sensim_scene_destroy(s);
        return NULL;
    }
    s->sun_dir = sensim_vec3_make(0, 0, 1);
    for (int i = 0; i < 3; i++) {
        s->sun[i] = 1.0;
        s->ambient[i] = 0.2;
        s->sky[i] = 0.6;
    }
    return s;
}

void sensim_scene_destroy(sensim_scene *s)
{
    if (!s)
        return;
    /* Embree first: its geometries may share the meshes' arrays. */
    if (s->top)
        rtcReleaseScene(s->top);
    for (size_t i = 0; i < s->nmesh; i++)
        if (s->mesh[i].proto)
            rtcReleaseScene(s->mesh[i].proto);
    if (s->dev)
        rtcReleaseDevice(s->dev);
    for (size_t i = 0; i < s->nmesh; i++) {
        free(s->mesh[i].v);
        free(s->mesh[i].tri);
        scene_surface_free(s->mesh[i].surf);
    }
    for (size_t i = 0; i < s->nobj; i++) {
        free(s->obj[i].kt);
        free(s->obj[i].kpose);
    }
    sensim_twin_destroy(s->twin);
    sensim_cuda_scene_destroy(s->cuda);
    SENSIM_FREE_ALL(s->mesh, s->mat, s->obj, s->geom_object, s);
}

int sensim_render_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 8;
    while (c < need)
        c *= 2;
    if (c > SIZE_MAX / elem)
        return -1;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int check_open(sensim_scene *s, const char *what)
{
    if (s->committed) {
        sensim_error(SENSIM_EINVAL, "scene: cannot add %s: the scene is already committed", what);
        return -1;
    }
    return 0;
}

/* Zero-area test relative to the triangle's size, so that collinear
 * vertices are caught as well as repeated ones. */
int sensim_scene_triangle_degenerate(const float *a, const float *b, const float *c)
{
    double e1[3], e2[3], e3[3];
    for (int k = 0; k < 3; k++) {
        e1[k] = (double)b[k] - a[k];
        e2[k] = (double)c[k] - a[k];
        e3[k] = (double)c[k] - b[k];
    }
    double cx = e1[1] * e2[2] - e1[2] * e2[1], cy = e1[2] * e2[0] - e1[0] * e2[2], cz = e1[0] * e2[1] - e1[1] * e2[0];
    double area2 = sqrt(cx * cx + cy * cy + cz * cz);
    double l = fmax(fmax(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2], e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2]),
                    e3[0] * e3[0] + e3[1] * e3[1] + e3[2] * e3[2]);
    return !(area2 > 1e-9 * l);
}

/* Adds a mesh taking ownership of v and tri (freed on failure). `where`
 * names the source for messages ("mesh 'pole'" or "file.obj"); vline/tline
 * (optional) give the source line of each vertex/triangle. */
int sensim_scene_mesh_add_owned(sensim_scene *s, const char *name, float *v, size_t nv, uint32_t *tri, size_t nt,
                          const char *where, const int *vline, const int *tline)
{
    if (check_open(s, "a mesh") < 0)
        goto fail;
    if (nv == 0 || nt == 0) {
        sensim_error(SENSIM_EDATA, "%s: mesh has no %s", where, nv == 0 ? "vertices" : "triangles");
        goto fail;
    }
    for (size_t i = 0; i < nv; i++)
        if (!isfinite(v[3 * i]) || !isfinite(v[3 * i + 1]) || !isfinite(v[3 * i + 2])) {
            if (vline)
                sensim_error(SENSIM_EDATA, "%s:%d: vertex %zu is not finite", where, vline[i], i + 1);
            else
                sensim_error(SENSIM_EDATA, "%s: vertex %zu is not finite (%g, %g, %g)", where, i, v[3 * i],
                             v[3 * i + 1], v[3 * i + 2]);
            goto fail;
        }
    for (size_t i = 0; i < nt; i++) {
        const uint32_t *t = tri + 3 * i;
        if (t[0] >= nv || t[1] >= nv || t[2] >= nv) {
            if (tline)
                sensim_error(SENSIM_EDATA, "%s:%d: vertex index out of range (%zu vertices)", where, tline[i], nv);
            else
                sensim_error(SENSIM_EDATA, "%s: triangle %zu: vertex index out of range (%zu vertices)", where, i,
                             nv);
            goto fail;
        }
    }
    /* Zero-area triangles (collinear or repeated vertices, common in
     * exported meshes) cannot be hit: dropped and counted, so that a few of
     * them do not refuse a whole mesh. A mesh left with none is unusable. */
    size_t kept = 0, first_bad = nt;
    for (size_t i = 0; i < nt; i++) {
        const uint32_t *t = tri + 3 * i;
        if (sensim_scene_triangle_degenerate(v + 3 * t[0], v + 3 * t[1], v + 3 * t[2])) {
            if (first_bad == nt)
                first_bad = i;
            continue;
        }
        memmove(tri + 3 * kept++, t, 3 * sizeof *t);
    }
    if (kept == 0) {
        if (tline)
            sensim_error(SENSIM_EDATA, "%s:%d: no usable triangle: all %zu are degenerate (zero area)", where,
                         tline[first_bad], nt);
        else
            sensim_error(SENSIM_EDATA, "%s: no usable triangle: all %zu are degenerate (zero area)", where, nt);
        goto fail;
    }
    if (name && sensim_scene_find_mesh(s, name) >= 0) {
        sensim_error(SENSIM_EINVAL, "%s: a mesh named '%s' already exists", where, name);
        goto fail;
    }
    if (sensim_render_grow((void **)&s->mesh, &s->cap_mesh, s->nmesh + 1, sizeof *s->mesh) < 0) {
        sensim_error(SENSIM_ENOMEM, "scene: out of memory");
        goto fail;
    }
    /* One float of padding after the last vertex, so that Embree can use
     * the array itself (its SSE loads read 16 bytes of a float3); the
     * triangles trimmed to those kept. */
    float *pv = realloc(v, (3 * nv + 1) * sizeof *v);
    if (!pv) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", where);
        goto fail;
    }
    v = pv;
    v[3 * nv] = 0;
    uint32_t *pt = realloc(tri, 3 * kept * sizeof *tri);
    if (pt)
        tri = pt;
    scene_mesh *m = &s->mesh[s->nmesh];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name ? name : "");
    m->v = v;
    m->tri = tri;
    m->nv = nv;
    m->nt = kept;
    m->dropped = nt - kept;
    return (int)s->nmesh++;
fail:
    free(v);
    free(tri);
    return -1;
}

size_t sensim_scene_mesh_count(const sensim_scene *s) { return s ? s->nmesh : 0; }

const char *sensim_scene_mesh_name(const sensim_scene *s, int mesh)
{
    return s && mesh >= 0 && (size_t)mesh < s->nmesh ? s->mesh[mesh].name : NULL;
}

size_t sensim_scene_mesh_dropped(const sensim_scene *s, int mesh)
{
    return s && mesh >= 0 && (size_t)mesh < s->nmesh ? s->mesh[mesh].dropped : 0;
}

sensim_status sensim_scene_mesh_info(const sensim_scene *s, int mesh, size_t *nvertices, size_t *ntriangles,
                                     double lo[3], double hi[3])
{
    if (!s || mesh < 0 || (size_t)mesh >= s->nmesh)
        return sensim_error(SENSIM_EINVAL, "scene: no mesh %d (%zu meshes)", mesh, s ? s->nmesh : 0);
    const scene_mesh *m = &s->mesh[mesh];
    if (nvertices)
        *nvertices = m->nv;
    if (ntriangles)
        *ntriangles = m->nt;
    for (int k = 0; k < 3; k++) {
        double a = INFINITY, b = -INFINITY;
        for (size_t i = 0; i < m->nv; i++) {
            a = fmin(a, m->v[3 * i + k]);
            b = fmax(b, m->v[3 * i + k]);
        }
        if (lo)
            lo[k] = a;
        if (hi)
            hi[k] = b;
    }
    return SENSIM_OK;
}

int sensim_scene_add_mesh(sensim_scene *s, const char *name, const float *vertices, size_t nvertices,
                          const uint32_t *triangles, size_t ntriangles)
{
    char where[96];
    snprintf(where, sizeof where, "mesh '%s'", name ? name : "");
    if (!vertices || !triangles) {
        sensim_error(SENSIM_EINVAL, "%s: NULL vertex or triangle array", where);
        return -1;
    }
    float *v = malloc(nvertices * 3 * sizeof *v + 1);
    uint32_t *t = malloc(ntriangles * 3 * sizeof *t + 1);
    if (!v || !t) {
        free(v);
        free(t);
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", where);
        return -1;
    }
    memcpy(v, vertices, nvertices * 3 * sizeof *v);
    memcpy(t, triangles, ntriangles * 3 * sizeof *t);
    return sensim_scene_mesh_add_owned(s, name, v, nvertices, t, ntriangles, where, NULL, NULL);
}

/* ---- primitives ---- */

typedef struct {
    float *v;
    uint32_t *t;
    size_t nv, nt;
} meshbuf;

static int meshbuf_alloc(meshbuf *m, size_t nv, size_t nt)
{
    m->v = malloc(nv * 3 * sizeof *m->v + 1);
    m->t = malloc(nt * 3 * sizeof *m->t + 1);
    m->nv = m->nt = 0;
    if (!m->v || !m->t) {
        free(m->v);
        free(m->t);
        return -1;
    }
    return 0;
}
static uint32_t mb_v(meshbuf *m, double x, double y, double z)
{
    m->v[3 * m->nv] = (float)x;
    m->v[3 * m->nv + 1] = (float)y;
    m->v[3 * m->nv + 2] = (float)z;
    return (uint32_t)m->nv++;
}
static void mb_t(meshbuf *m, uint32_t a, uint32_t b, uint32_t c)
{
    m->t[3 * m->nt] = a;
    m->t[3 * m->nt + 1] = b;
    m->t[3 * m->nt + 2] = c;
    m->nt++;
}

static int prim_finish(sensim_scene *s, const char *name, const char *kind, meshbuf *m)
{
    char where[96];
    snprintf(where, sizeof where, "%s '%s'", kind, name ? name : "");
    return sensim_scene_mesh_add_owned(s, name, m->v, m->nv, m->t, m->nt, where, NULL, NULL);
}

static int prim_alloc(meshbuf *m, size_t nv, size_t nt, const char *kind)
{
    if (meshbuf_alloc(m, nv, nt) < 0) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", kind);
        return -1;
    }
    return 0;
}

static int grid_heightfield(sensim_scene *s, const char *name, const char *kind, double sx, double sy, int nx,
                            int ny, double amp)
{
    if (!(sx > 0) || !(sy > 0) || !isfinite(sx) || !isfinite(sy) || nx < 1 || ny < 1 || nx > 100000 ||
        ny > 100000 || (size_t)nx * (size_t)ny > 100000000u || !isfinite(amp)) {
        sensim_error(SENSIM_EINVAL, "%s '%s': need positive size and 1..1e8 cells (got %g x %g, %d x %d)", kind,
                     name ? name : "", sx, sy, nx, ny);
        return -1;
    }
    meshbuf m;
    if (prim_alloc(&m, (size_t)(nx + 1) * (ny + 1), 2 * (size_t)nx * ny, kind) < 0)
        return -1;
    for (int j = 0; j <= ny; j++)
        for (int i = 0; i <= nx; i++) {
            double x = -sx / 2 + sx * i / nx, y = -sy / 2 + sy * j / ny;
            double z = amp == 0 ? 0
                                : amp *
                                      (sin(0.11 * x + 0.3) * cos(0.07 * y) + 0.5 * sin(0.31 * x + 0.23 * y) +
                                       0.25 * cos(0.9 * x - 0.7 * y)) /
                                      1.75;
            mb_v(&m, x, y, z);
        }
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            uint32_t a = (uint32_t)(j * (nx + 1) + i), b = a + 1, c = a + (uint32_t)(nx + 1), d = c + 1;
            mb_t(&m, a, b, d);
            mb_t(&m, a, d, c);
        }
    return prim_finish(s, name, kind, &m);
}

int sensim_scene_add_plane(sensim_scene *s, const char *name, double size_x, double size_y, int nx, int ny)
{
    return grid_heightfield(s, name, "plane", size_x, size_y, nx, ny, 0.0);
}

int sensim_scene_add_terrain(sensim_scene *s, const char *name, double size_x, double size_y, int nx, int ny,
                             double amplitude)
{
    return grid_heightfield(s, name, "terrain", size_x, size_y, nx, ny, amplitude);
}

int sensim_scene_add_box(sensim_scene *s, const char *name, double sx, double sy, double sz)
{
    if (!(sx > 0 && sy > 0 && sz > 0 && isfinite(sx + sy + sz))) {
        sensim_error(SENSIM_EINVAL, "box '%s': sizes must be positive (got %g, %g, %g)", name ? name : "", sx, sy,
                     sz);
        return -1;
    }
    meshbuf m;
    if (prim_alloc(&m, 8, 12, "box") < 0)
        return -1;
    for (int k = 0; k < 8; k++)
        mb_v(&m, (k & 1 ? 0.5 : -0.5) * sx, (k & 2 ? 0.5 : -0.5) * sy, (k & 4 ? 0.5 : -0.5) * sz);
    /* Outward counter-clockwise faces: -z, +z, -y, +y, -x, +x. */
    static const uint32_t f[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    for (int k = 0; k < 6; k++) {
        mb_t(&m, f[k][0], f[k][1], f[k][2]);
        mb_t(&m, f[k][0], f[k][2], f[k][3]);
    }
    return prim_finish(s, name, "box", &m);
}

int sensim_scene_add_cylinder(sensim_scene *s, const char *name, double radius, double height, int segments)
{
    if (!(radius > 0 && height > 0 && isfinite(radius + height)) || segments < 3 || segments > 1000000) {
        sensim_error(SENSIM_EINVAL, "cylinder '%s': need radius > 0, height > 0, 3 or more segments (got %g, %g, %d)",
                     name ? name : "", radius, height, segments);
        return -1;
    }
    meshbuf m;
    size_t n = (size_t)segments;
    if (prim_alloc(&m, 2 * n + 2, 4 * n, "cylinder") < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        double a = 2 * M_PI * (double)i / (double)n;
        mb_v(&m, radius * cos(a), radius * sin(a), 0);
        mb_v(&m, radius * cos(a), radius * sin(a), height);
    }
    uint32_t cb = mb_v(&m, 0, 0, 0), ct = mb_v(&m, 0, 0, height);
    for (size_t i = 0; i < n; i++) {
        uint32_t b0 = (uint32_t)(2 * i), t0 = b0 + 1, b1 = (uint32_t)(2 * ((i + 1) % n)), t1 = b1 + 1;
        mb_t(&m, b0, b1, t1);
        mb_t(&m, b0, t1, t0);
        mb_t(&m, cb, b1, b0);
        mb_t(&m, ct, t0, t1);
    }
    return prim_finish(s, name, "cylinder", &m);
}

int sensim_scene_add_sphere(sensim_scene *s, const char *name, double radius, int segments)
{
    if (!(radius > 0 && isfinite(radius)) || segments < 4 || segments > 100000) {
        sensim_error(SENSIM_EINVAL, "sphere '%s': need radius > 0 and 4 or more segments (got %g, %d)",
                     name ? name : "", radius, segments);
        return -1;
    }
    size_t n = (size_t)segments, rings = n / 2; /* latitude bands */
    meshbuf m;
    if (prim_alloc(&m, 2 + (rings - 1) * n, 2 * n * (rings - 1), "sphere") < 0)
        return -1;
    uint32_t south = mb_v(&m, 0, 0, -radius), north = mb_v(&m, 0, 0, radius);
    for (size_t r = 1; r < rings; r++) {
        double th = -M_PI / 2 + M_PI * (double)r / (double)rings;
        for (size_t i = 0; i < n; i++) {
            double a = 2 * M_PI * (double)i / (double)n;
            mb_v(&m, radius * cos(th) * cos(a), radius * cos(th) * sin(a), radius * sin(th));
        }
    }
#define SV(r, i) ((uint32_t)(2 + ((r)-1) * n + ((i) % n)))
    for (size_t i = 0; i < n; i++) {
        mb_t(&m, south, SV(1, i + 1), SV(1, i));
        mb_t(&m, north, SV(rings - 1, i), SV(rings - 1, i + 1));
        for (size_t r = 1; r + 1 < rings; r++) {
            mb_t(&m, SV(r, i), SV(r, i + 1), SV(r + 1, i + 1));
            mb_t(&m, SV(r, i), SV(r + 1, i + 1), SV(r + 1, i));
        }
    }
#undef SV
    return prim_finish(s, name, "sphere", &m);
}

/* ---- materials ---- */

int sensim_scene_add_material(sensim_scene *s, const sensim_material *m)
{
    if (check_open(s, "a material") < 0)
        return -1;
    if (!m->name[0] || memchr(m->name, 0, sizeof m->name) == NULL) {
        sensim_error(SENSIM_EINVAL, "material: needs a name");
        return -1;
    }
    if (!(m->reflectance >= 0 && m->reflectance <= 1)) {
        sensim_error(SENSIM_EINVAL, "material '%s': reflectance must be in [0, 1] (got %g)", m->name, m->reflectance);
        return -1;
    }
    for (int i = 0; i < 3; i++)
        if (!(m->albedo[i] >= 0 && m->albedo[i] <= 1)) {
            sensim_error(SENSIM_EINVAL, "material '%s': albedo must be in [0, 1] (got %g)", m->name, m->albedo[i]);
            return -1;
        }
    if (m->brdf != SENSIM_BRDF_LAMBERT && m->brdf != SENSIM_BRDF_RETRO && m->brdf != SENSIM_BRDF_SURFACE) {
        sensim_error(SENSIM_EINVAL, "material '%s': unknown BRDF %d", m->name, (int)m->brdf);
        return -1;
    }
    if (m->brdf == SENSIM_BRDF_SURFACE) {
        /* GGX needs alpha > 0 (alpha = 0 is a mirror, a delta the lidar
         * would never see); Oren-Nayar loses energy conservation past
         * reflectance 0.97 (seed 002), which is allowed but noted there. */
        if (!(m->ior > 0 && isfinite(m->ior)) || !(m->ior_k >= 0 && isfinite(m->ior_k))) {
            sensim_error(SENSIM_EINVAL, "material '%s': ior must be > 0 and ior_k >= 0 (got %g + %gi)", m->name,
                         m->ior, m->ior_k);
            return -1;
        }
        if (!(m->specular_roughness > 0 && m->specular_roughness <= 10)) {
            sensim_error(SENSIM_EINVAL, "material '%s': specular_roughness must be in (0, 10] (got %g)", m->name,
                         m->specular_roughness);
            return -1;
        }
        if (!(m->diffuse_roughness >= 0 && m->diffuse_roughness <= M_PI / 2)) {
            sensim_error(SENSIM_EINVAL, "material '%s': diffuse_roughness must be in [0, pi/2] rad (got %g)", m->name,
                         m->diffuse_roughness);
            return -1;
        }
    }
    if (sensim_scene_find_material(s, m->name) >= 0) {
        sensim_error(SENSIM_EINVAL, "material '%s' defined twice", m->name);
        return -1;
    }
    if (sensim_render_grow((void **)&s->mat, &s->cap_mat, s->nmat + 1, sizeof *s->mat) < 0) {
        sensim_error(SENSIM_ENOMEM, "scene: out of memory");
        return -1;
    }
    s->mat[s->nmat] = *m;
    return (int)s->nmat++;
}

int sensim_scene_find_material(const sensim_scene *s, const char *name)
{
    for (size_t i = 0; i < s->nmat; i++)
        if (strcmp(s->mat[i].name, name) == 0)
            return (int)i;
    return -1;
}

int sensim_scene_find_mesh(const sensim_scene *s, const char *name)
{
    for (size_t i = 0; i < s->nmesh; i++)
        if (s->mesh[i].name[0] && strcmp(s->mesh[i].name, name) == 0)
            return (int)i;
    return -1;
}

const sensim_material *sensim_scene_material(const sensim_scene *s, int index)
{
    return index >= 0 && (size_t)index < s->nmat ? &s->mat[index] : NULL;
}

/* ---- objects ---- */

static int pose_ok(sensim_pose p)
{
    double n = sensim_quat_norm(p.q);
    return isfinite(p.p.x) && isfinite(p.p.y) && isfinite(p.p.z) && isfinite(n) && fabs(n - 1) < 1e-6;
}

static int object_new(sensim_scene *s, int mesh, int material)
{
    if (check_open(s, "an object") < 0)
        return -1;
    if (mesh < 0 || (size_t)mesh >= s->nmesh) {
        sensim_error(SENSIM_EINVAL, "object: no mesh %d (scene has %zu)", mesh, s->nmesh);
        return -1;
    }
    if (material < 0 || (size_t)material >= s->nmat) {
        sensim_error(SENSIM_EINVAL, "object: no material %d (scene has %zu)", material, s->nmat);
        return -1;
    }
    if (sensim_render_grow((void **)&s->obj, &s->cap_obj, s->nobj + 1, sizeof *s->obj) < 0) {
        sensim_error(SENSIM_ENOMEM, "scene: out of memory");
        return -1;
    }
    scene_object *o = &s->obj[s->nobj];
    memset(o, 0, sizeof *o);
    o->mesh = mesh;
    o->material = material;
    o->scale[0] = o->scale[1] = o->scale[2] = 1;
    return (int)s->nobj;
}

int sensim_scene_add_object(sensim_scene *s, int mesh, int material, sensim_pose pose)
{
    if (!pose_ok(pose)) {
        sensim_error(SENSIM_EINVAL, "object: pose must be finite with a unit quaternion");
        return -1;
    }
    int i = object_new(s, mesh, material);
    if (i < 0)
        return -1;
    s->obj[i].pose = pose;
    s->nobj++;
    return i;
}

int sensim_scene_add_moving_object(sensim_scene *s, int mesh, int material, const double *t,
                                   const sensim_pose *poses, size_t n, int steps)
{
    if (n < 2) {
        sensim_error(SENSIM_EINVAL, "moving object: needs at least 2 keyframes (got %zu)", n);
        return -1;
    }
    if (steps != 0 && (steps < 2 || steps > RTC_MAX_TIME_STEP_COUNT)) {
        sensim_error(SENSIM_EINVAL, "moving object: steps must be 0 or 2..%d (got %d)", RTC_MAX_TIME_STEP_COUNT,
                     steps);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(t[k]) || (k > 0 && !(t[k] > t[k - 1]))) {
            sensim_error(SENSIM_EINVAL, "moving object: keyframe times must be finite and increasing (keyframe %zu)",
                         k);
            return -1;
        }
        if (!pose_ok(poses[k])) {
            sensim_error(SENSIM_EINVAL, "moving object: keyframe %zu: pose must be finite with a unit quaternion", k);
            return -1;
        }
    }
    int i = object_new(s, mesh, material);
    if (i < 0)
        return -1;
    scene_object *o = &s->obj[i];
    o->kt = malloc(n * sizeof *o->kt);
    o->kpose = malloc(n * sizeof *o->kpose);
    if (!o->kt || !o->kpose) {
        free(o->kt);
        free(o->kpose);
        sensim_error(SENSIM_ENOMEM, "scene: out of memory");
        return -1;
    }
    memcpy(o->kt, t, n * sizeof *t);
    memcpy(o->kpose, poses, n * sizeof *poses);
    o->nkey = n;
    o->pose = poses[0];
    o->steps = steps ? steps : (int)fmax(2, fmin(RTC_MAX_TIME_STEP_COUNT, 4.0 * (double)n));
    s->nobj++;
    return i;
}

sensim_status sensim_scene_set_object_scale(sensim_scene *s, int object, double sx, double sy, double sz)
{
    if (!s)
        return sensim_error(SENSIM_EINVAL, "scene: NULL argument");
    if (check_open(s, "a scale") < 0)
        return sensim_last_status();
    if (object < 0 || (size_t)object >= s->nobj)
        return sensim_error(SENSIM_EINVAL, "scene: no object %d (scene has %zu)", object, s->nobj);
    const double k[3] = {sx, sy, sz};
    for (int i = 0; i < 3; i++)
        if (!(k[i] > 0 && isfinite(k[i])))
            return sensim_error(SENSIM_EINVAL, "object %d: scale must be finite and > 0 (got %g along %c)", object,
                                k[i], "xyz"[i]);
    memcpy(s->obj[object].scale, k, sizeof k);
    return SENSIM_OK;
}

sensim_status sensim_scene_set_instancing(sensim_scene *s, sensim_instancing mode)
{
    if (!s)
        return sensim_error(SENSIM_EINVAL, "scene: NULL argument");
    if (check_open(s, "an instancing mode") < 0)
        return sensim_last_status();
    if (mode != SENSIM_INSTANCING_AUTO && mode != SENSIM_INSTANCING_ALWAYS && mode != SENSIM_INSTANCING_NEVER)
        return sensim_error(SENSIM_EINVAL, "scene: unknown instancing mode %d", (int)mode);
    s->instancing = mode;
    return SENSIM_OK;
}

size_t sensim_scene_memory(const sensim_scene *s, size_t *peak)
{
    size_t own = sizeof *s + s->cap_mesh * sizeof *s->mesh + s->cap_mat * sizeof *s->mat +
                 s->cap_obj * sizeof *s->obj + s->ngeom * sizeof *s->geom_object;
    for (size_t i = 0; i < s->nmesh; i++)
        own += s->mesh[i].nv * 3 * sizeof(float) + s->mesh[i].nt * 3 * sizeof(uint32_t);
    for (size_t i = 0; i < s->nobj; i++)
        own += s->obj[i].nkey * (sizeof(double) + sizeof(sensim_pose));
    long long now = atomic_load(&((sensim_scene *)s)->rtc_bytes), top = atomic_load(&((sensim_scene *)s)->rtc_peak);
    if (peak)
        *peak = own + (size_t)(top > 0 ? top : 0);
    return own + (size_t)(now > 0 ? now : 0);
}

sensim_pose sensim_scene_object_pose_at(const scene_object *o, double t)
{
    if (o->nkey == 0 || t <= o->kt[0])
        return o->nkey ? o->kpose[0] : o->pose;
    if (t >= o->kt[o->nkey - 1])
        return o->kpose[o->nkey - 1];
    size_t lo = render_interval(o->kt, 0, o->nkey - 1, t), hi = lo + 1;
    double u = (t - o->kt[lo]) / (o->kt[hi] - o->kt[lo]);
    sensim_pose a = o->kpose[lo], b = o->kpose[hi], r;
    r.p = sensim_vec3_add(sensim_vec3_scale(a.p, 1 - u), sensim_vec3_scale(b.p, u));
    r.q = sensim_quat_slerp(a.q, b.q, u);
    return r;
}

sensim_status sensim_scene_object_pose(const sensim_scene *s, int object, double t, sensim_pose *out)
{
    if (object < 0 || (size_t)object >= s->nobj)
        return sensim_error(SENSIM_EINVAL, "scene: no object %d (scene has %zu)", object, s->nobj);
    *out = sensim_scene_object_pose_at(&s->obj[object], t);
    return SENSIM_OK;
}

/* ---- lights and atmosphere ---- */

sensim_status sensim_scene_set_sun(sensim_scene *s, sensim_vec3 direction, const double irradiance[3])
{
    double n = sensim_vec3_norm(direction);
    if (!(n > 0) || !isfinite(n))
        return sensim_error(SENSIM_EINVAL, "sun: direction must be a finite non-zero vector");
    for (int i = 0; i < 3; i++)
        if (!(irradiance[i] >= 0 && isfinite(irradiance[i])))
            return sensim_error(SENSIM_EINVAL, "sun: irradiance must be finite and >= 0 (got %g)", irradiance[i]);
    s->sun_dir = sensim_vec3_scale(direction, 1 / n);
    memcpy(s->sun, irradiance, sizeof s->sun);
    return SENSIM_OK;
}

sensim_status sensim_scene_set_ambient(sensim_scene *s, const double ambient[3], const double sky[3])
{
    for (int i = 0; i < 3; i++)
        if (!(ambient[i] >= 0 && isfinite(ambient[i])) || !(sky[i] >= 0 && isfinite(sky[i])))
            return sensim_error(SENSIM_EINVAL, "ambient: light and sky must be finite and >= 0");
    memcpy(s->ambient, ambient, sizeof s->ambient);
    memcpy(s->sky, sky, sizeof s->sky);
    return SENSIM_OK;
}

sensim_status sensim_scene_set_atmosphere(sensim_scene *s, double extinction)
{
    if (!(extinction >= 0 && isfinite(extinction)))
        return sensim_error(SENSIM_EINVAL, "atmosphere: extinction must be finite and >= 0 1/m (got %g)", extinction);
    s->extinction = extinction;
    s->visibility = 0;
    return SENSIM_OK;
}

double sensim_scene_extinction(const sensim_scene *s) { return s->extinction + s->weather_alpha; }

double sensim_visibility_extinction(double visibility, double wavelength)
{
    if (!(visibility > 0 && isfinite(visibility) && wavelength > 0 && isfinite(wavelength)))
        return NAN;
    /* Kim, Bruce & Korevaar 2001, eq. 3 (V in km). */
    double vk = visibility / 1000, q;
    if (vk > 50)
        q = 1.6;
    else if (vk > 6)
        q = 1.3;
    else if (vk > 1)
        q = 0.16 * vk + 0.34;
    else if (vk > 0.5)
        q = vk - 0.5;
    else
        q = 0;
    return 3.912 / visibility * pow(wavelength / 550e-9, -q);
}

sensim_status sensim_scene_set_visibility(sensim_scene *s, double visibility)
{
    if (!(visibility > 0 && isfinite(visibility)))
        return sensim_error(SENSIM_EINVAL, "atmosphere: visibility must be finite and > 0 m (got %g)", visibility);
    s->visibility = visibility;
    s->extinction = sensim_visibility_extinction(visibility, 550e-9);
    return SENSIM_OK;
}

double sensim_scene_visibility(const sensim_scene *s) { return s->visibility; }

double sensim_scene_extinction_at(const sensim_scene *s, double wavelength)
{
    return (s->visibility > 0 ? sensim_visibility_extinction(s->visibility, wavelength) : s->extinction) +
           s->weather_alpha;
}

sensim_status sensim_scene_set_atmospheric_returns(sensim_scene *s, double probability, double shape, double scale,
                                                   double reflectance)
{
    if (!(probability >= 0 && probability <= 1))
        return sensim_error(SENSIM_EINVAL, "atmosphere: return probability must be in [0, 1] (got %g)", probability);
    if (probability > 0 && (!(shape > 0 && isfinite(shape)) || !(scale > 0 && isfinite(scale))))
        return sensim_error(SENSIM_EINVAL, "atmosphere: gamma shape and scale must be finite and > 0 (got %g, %g)",
                            shape, scale);
    if (!(reflectance >= 0 && reflectance <= 1))
        return sensim_error(SENSIM_EINVAL, "atmosphere: return reflectance must be in [0, 1] (got %g)", reflectance);
    s->atmo_probability = probability;
    s->atmo_shape = shape;
    s->atmo_scale = scale;
    s->atmo_reflectance = reflectance;
    return SENSIM_OK;
}

/* ---- commit ---- */

/* The 3x4 transform R S | p in Embree's column-major layout. */
static void xfm_column_major(sensim_pose p, const double scale[3], float x[12])
{
    sensim_mat3 r = sensim_mat3_from_quat(p.q);
    for (int c = 0; c < 3; c++)
        for (int row = 0; row < 3; row++)
            x[3 * c + row] = (float)(r.m[row][c] * scale[c]);
    x[9] = (float)p.p.x;
    x[10] = (float)p.p.y;
    x[11] = (float)p.p.z;
}

void sensim_scene_bake_vertices(const scene_mesh *m, const sensim_pose *pose, const double scale[3], float *v)
{
    /* Vertices to world space in double, rounded once. */
    sensim_mat3 r = sensim_mat3_from_quat(pose->q);
    for (size_t i = 0; i < m->nv; i++) {
        sensim_vec3 a = sensim_vec3_make(m->v[3 * i] * scale[0], m->v[3 * i + 1] * scale[1], m->v[3 * i + 2] * scale[2]);
        sensim_vec3 b = sensim_vec3_add(sensim_mat3_apply(&r, a), pose->p);
        v[3 * i] = (float)b.x;
        v[3 * i + 1] = (float)b.y;
        v[3 * i + 2] = (float)b.z;
    }
}

int sensim_scene_object_steps(const scene_object *o) { return o->nkey ? o->steps : 1; }

void sensim_scene_object_xfm(const sensim_scene *s, const scene_object *o, int k, float x[12])
{
    int steps = sensim_scene_object_steps(o);
    double tk = o->nkey ? s->t0 + (s->t1 - s->t0) * k / (steps - 1) : 0;
    xfm_column_major(sensim_scene_object_pose_at(o, tk), o->scale, x);
}

static RTCGeometry triangles_geometry(sensim_scene *s, const scene_mesh *m, const sensim_pose *pose,
                                      const double scale[3])
{
    RTCGeometry g = rtcNewGeometry(s->dev, RTC_GEOMETRY_TYPE_TRIANGLE);
    if (!g)
        return NULL;
    /* Untransformed (an instance prototype, or a static object at the
     * origin unscaled, as a large terrain or scan usually is): Embree reads
     * the mesh's own arrays, which live as long as the scene, instead of a
     * copy (for a 10 M-triangle mesh, 180 MB less). */
    if (!pose || (pose->p.x == 0 && pose->p.y == 0 && pose->p.z == 0 && pose->q.w == 1 && pose->q.x == 0 &&
                  pose->q.y == 0 && pose->q.z == 0 && scale[0] == 1 && scale[1] == 1 && scale[2] == 1)) {
        rtcSetSharedGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, m->v, 0, 3 * sizeof(float), m->nv);
        rtcSetSharedGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, m->tri, 0, 3 * sizeof(unsigned),
                                   m->nt);
        rtcCommitGeometry(g);
        return g;
    }
    float *v = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), m->nv);
    unsigned *t = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(unsigned), m->nt);
    if (!v || !t) {
        rtcReleaseGeometry(g);
        return NULL;
    }
    if (pose)
        sensim_scene_bake_vertices(m, pose, scale, v);
    else
        memcpy(v, m->v, m->nv * 3 * sizeof(float));
    memcpy(t, m->tri, m->nt * 3 * sizeof(unsigned));
    rtcCommitGeometry(g);
    return g;
}

/* An instance of mesh m for object o: the mesh's own scene (built once, the
 * first time a moving or instanced object uses it) under o's transform, one
 * time step for a static object, `steps` over the keyframe window for a
 * moving one (Embree interpolates the transforms per ray). */
static RTCGeometry instance_geometry(sensim_scene *s, const scene_object *o, scene_mesh *m)
{
    if (!m->proto) {
        m->proto = rtcNewScene(s->dev);
        if (!m->proto)
            return NULL;
        rtcSetSceneFlags(m->proto, RTC_SCENE_FLAG_ROBUST);
        RTCGeometry pg = triangles_geometry(s, m, NULL, NULL);
        if (!pg)
            return NULL;
        rtcAttachGeometry(m->proto, pg);
        rtcReleaseGeometry(pg);
        rtcCommitScene(m->proto);
    }
    RTCGeometry g = rtcNewGeometry(s->dev, RTC_GEOMETRY_TYPE_INSTANCE);
    if (!g)
        return NULL;
    rtcSetGeometryInstancedScene(g, m->proto);
    int steps = sensim_scene_object_steps(o);
    rtcSetGeometryTimeStepCount(g, (unsigned)steps);
    for (int k = 0; k < steps; k++) {
        float x[12];
        sensim_scene_object_xfm(s, o, k, x);
        rtcSetGeometryTransform(g, (unsigned)k, RTC_FORMAT_FLOAT3X4_COLUMN_MAJOR, x);
    }
    rtcCommitGeometry(g);
    return g;
}

sensim_status sensim_scene_commit(sensim_scene *s)
{
    if (s->committed || s->top)
        return sensim_error(SENSIM_EINVAL, "scene: already committed (or a commit failed)");
    if (s->nobj == 0)
        return sensim_error(SENSIM_EINVAL, "scene: no objects to commit");
    s->has_motion = 0;
    for (size_t i = 0; i < s->nobj; i++) {
        const scene_object *o = &s->obj[i];
        if (!o->nkey)
            continue;
        if (!s->has_motion || o->kt[0] < s->t0)
            s->t0 = o->kt[0];
        if (!s->has_motion || o->kt[o->nkey - 1] > s->t1)
            s->t1 = o->kt[o->nkey - 1];
        s->has_motion = 1;
    }
    s->geom_object = malloc(s->nobj * sizeof *s->geom_object);
    if (!s->geom_object)
        return sensim_error(SENSIM_ENOMEM, "scene: out of memory");
    s->top = rtcNewScene(s->dev);
    if (!s->top)
        return rtc_check(s, "new scene");
    /* Robust (watertight) traversal: a ray through a shared edge or vertex
     * must not slip between triangles, or lidar scans get holes. */
    rtcSetSceneFlags(s->top, RTC_SCENE_FLAG_ROBUST);
    s->ntriangles = 0;
    for (size_t i = 0; i < s->nmesh; i++)
        s->mesh[i].nstatic = 0;
    for (size_t i = 0; i < s->nobj; i++)
        if (!s->obj[i].nkey)
            s->mesh[s->obj[i].mesh].nstatic++;
    for (size_t i = 0; i < s->nobj; i++) {
        scene_object *o = &s->obj[i];
        scene_mesh *m = &s->mesh[o->mesh];
        o->instanced = !o->nkey && (s->instancing == SENSIM_INSTANCING_ALWAYS ||
                                    (s->instancing == SENSIM_INSTANCING_AUTO && m->nstatic >= 2 &&
                                     m->nt >= SENSIM_INSTANCING_MIN_TRIANGLES));
        RTCGeometry g = !o->nkey && !o->instanced ? triangles_geometry(s, m, &o->pose, o->scale)
                                                  : instance_geometry(s, o, m);
        if (!g)
            return rtc_check(s, "geometry");
        rtcAttachGeometryByID(s->top, g, (unsigned)i);
        rtcReleaseGeometry(g);
        s->geom_object[i] = (int)i;
        s->ntriangles += m->nt;
        sensim_status st = rtc_check(s, "geometry");
        if (st)
            return st;
    }
    s->ngeom = s->nobj;
    rtcCommitScene(s->top);
    sensim_status st = rtc_check(s, "commit scene");
    if (st)
        return st;
    s->committed = 1;
    return SENSIM_OK;
}

size_t sensim_scene_triangle_count(const sensim_scene *s) { return s->ntriangles; }
size_t sensim_scene_object_count(const sensim_scene *s) { return s->nobj; }

/* ---- queries ---- */

void sensim_scene_fill_hit_parts(const sensim_scene *s, unsigned geom, unsigned inst, float ngx, float ngy, float ngz,
                          sensim_vec3 dir, double t, sensim_vec3 *normal, int *object)
{
    sensim_vec3 n = sensim_vec3_make(ngx, ngy, ngz);
    int obj;
    if (inst != RTC_INVALID_GEOMETRY_ID) {
        /* Instance hits report the normal in object space: to the world by
         * the inverse transpose of R S, that is R S^-1. */
        obj = s->geom_object[inst];
        const double *k = s->obj[obj].scale;
        n = sensim_vec3_make(n.x / k[0], n.y / k[1], n.z / k[2]);
        n = sensim_quat_rotate(sensim_scene_object_pose_at(&s->obj[obj], t).q, n);
    } else {
        obj = s->geom_object[geom];
    }
    double l = sensim_vec3_norm(n);
    n = l > 0 ? sensim_vec3_scale(n, 1 / l) : sensim_vec3_scale(dir, -1);
    if (sensim_vec3_dot(n, dir) > 0)
        n = sensim_vec3_scale(n, -1);
    *normal = n;
    *object = obj;
}

void sensim_scene_fill_hit(const sensim_scene *s, const struct RTCRayHit *rh, double t, sensim_hit *hit)
{
    if (rh->hit.geomID == RTC_INVALID_GEOMETRY_ID) {
        hit->distance = INFINITY;
        hit->object = hit->material = -1;
        hit->normal = sensim_vec3_make(0, 0, 0);
        return;
    }
    sensim_vec3 d = sensim_vec3_make(rh->ray.dir_x, rh->ray.dir_y, rh->ray.dir_z);
    sensim_scene_fill_hit_parts(s, rh->hit.geomID, rh->hit.instID[0], rh->hit.Ng_x, rh->hit.Ng_y, rh->hit.Ng_z, d, t,
                         &hit->normal, &hit->object);
    hit->material = s->obj[hit->object].material;
    hit->distance = rh->ray.tfar;
}

sensim_status sensim_scene_intersect(const sensim_scene *s, sensim_vec3 origin, sensim_vec3 dir, double t,
                                     double tnear, double tfar, sensim_hit *hit)
{
    if (!s->committed)
        return sensim_error(SENSIM_EINVAL, "scene: not committed");
    double l = sensim_vec3_norm(dir);
    if (!(l > 0) || !isfinite(l))
        return sensim_error(SENSIM_EINVAL, "intersect: direction must be finite and non-zero");
    dir = sensim_vec3_scale(dir, 1 / l);
    struct RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    struct RTCRayHit rh;
    rh.ray.org_x = (float)origin.x;
    rh.ray.org_y = (float)origin.y;
    rh.ray.org_z = (float)origin.z;
    rh.ray.dir_x = (float)dir.x;
    rh.ray.dir_y = (float)dir.y;
    rh.ray.dir_z = (float)dir.z;
    rh.ray.tnear = (float)tnear;
    rh.ray.tfar = (float)fmin(tfar, 3.0e38);
    rh.ray.time = scene_ray_time(s, t);
    rh.ray.mask = 0xFFFFFFFFu;
    rh.ray.id = 0;
    rh.ray.flags = 0;
    rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(s->top, &ctx, &rh);
    sensim_scene_fill_hit(s, &rh, t, hit);
    return SENSIM_OK;
}
