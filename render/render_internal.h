/* Internal view of a committed scene, shared by scene.c, lidar.c and
 * camera.c. Not installed. */
#ifndef SENSIM_RENDER_INTERNAL_H
#define SENSIM_RENDER_INTERNAL_H

#include <embree3/rtcore.h>

#include "sensim/render.h"

/* Shared between the render files only: kept out of libsensim.so's exports. */
#pragma GCC visibility push(hidden)

typedef struct scene_mesh {
    char name[64];
    float *v;       /* [nv*3] */
    uint32_t *tri;  /* [nt*3] */
    size_t nv, nt;
    size_t dropped; /* zero-area triangles dropped at load */
    RTCScene proto; /* for moving and instanced objects, built at commit */
    size_t nstatic; /* static objects using this mesh (instancing: auto) */
    struct scene_surface *surf; /* glTF texture coordinates and materials (surface.h), or NULL */
} scene_mesh;

typedef struct scene_object {
    int mesh, material;
    sensim_pose pose;   /* static pose, or the first keyframe */
    size_t nkey;        /* 0 for static */
    double *kt;         /* [nkey] */
    sensim_pose *kpose; /* [nkey] */
    int steps;
    double scale[3];    /* per-axis scale in the object frame, applied before the pose */
    int instanced;      /* static object traced as an instance (set at commit) */
} scene_object;

struct sensim_scene {
    RTCDevice dev;
    RTCScene top;
    int committed;
    /* First Embree error seen by the device callback; checked after each
     * Embree call that can fail. */
    int rtc_error;
    char rtc_message[256];

    scene_mesh *mesh;
    size_t nmesh, cap_mesh;
    sensim_material *mat;
    size_t nmat, cap_mat;
    scene_object *obj;
    size_t nobj, cap_obj;
    int *geom_object; /* Embree geomID -> object */
    int instancing;   /* sensim_instancing */
    /* Bytes Embree holds for this scene's device now and at most (its
     * memory monitor; updated from Embree's build threads). */
    _Atomic long long rtc_bytes, rtc_peak;
    size_t ngeom;
    size_t ntriangles;

    double t0, t1;    /* keyframe window mapped to ray time [0, 1] */
    int has_motion;

    sensim_vec3 sun_dir;
    double sun[3], ambient[3], sky[3];
    double extinction;
    double visibility; /* m; 0: extinction is fixed, else from visibility */
    /* Atmospheric returns (seed 002 eq. 14); probability 0: off. */
    double atmo_probability, atmo_shape, atmo_scale, atmo_reflectance;
    /* Rain and snow (weather.c); weather_alpha: their extinction, 1/m. */
    sensim_weather weather;
    double weather_alpha;
    /* The CPU twin's flattened BVH (twin_bvh.c), built by
     * sensim_scene_prepare_backend; NULL until then. */
    struct sensim_twin *twin;
    /* The twin's BVH on the GPU (cuda.c), built by
     * sensim_scene_prepare_backend for CUDA (or AUTO when it works); NULL
     * until then. auto_backend: what AUTO stands for on this scene;
     * auto_note: the device, or why CUDA was not used. */
    struct sensim_cuda_scene *cuda;
    sensim_render_backend auto_backend;
    char auto_note[512];
};

/* Ray time in [0, 1] for scene time t. */
static inline float scene_ray_time(const sensim_scene *s, double t)
{
    if (!s->has_motion)
        return 0.0f;
    double u = (t - s->t0) / (s->t1 - s->t0);
    return (float)(u < 0 ? 0 : u > 1 ? 1 : u);
}

/* Sets lane j of a packet of 16 rays: origin o, direction d, [0, tfar], ray
 * time, no hit yet. */
static inline void packet_ray16(struct RTCRayHit16 *rh, int j, const float o[3], const float d[3], float tfar,
                                float time)
{
    rh->ray.org_x[j] = o[0];
    rh->ray.org_y[j] = o[1];
    rh->ray.org_z[j] = o[2];
    rh->ray.dir_x[j] = d[0];
    rh->ray.dir_y[j] = d[1];
    rh->ray.dir_z[j] = d[2];
    rh->ray.tnear[j] = 0.0f;
    rh->ray.tfar[j] = tfar;
    rh->ray.time[j] = time;
    rh->ray.mask[j] = 0xFFFFFFFFu;
    rh->ray.id[j] = (unsigned)j;
    rh->ray.flags[j] = 0;
    rh->hit.geomID[j] = RTC_INVALID_GEOMETRY_ID;
    rh->hit.instID[0][j] = RTC_INVALID_GEOMETRY_ID;
}

/* Moves point src of a scan to slot dst (compaction, dst <= src). */
void sensim_lidar_points_move(sensim_render_lidar_points *pt, size_t dst, size_t src);

/* Pose of a (possibly moving) object at time t. */
sensim_pose sensim_scene_object_pose_at(const scene_object *o, double t);

/* Completes a hit from Embree's ray-hit record at time t: world normal
 * facing the ray, object, material. */
void sensim_scene_fill_hit(const sensim_scene *s, const struct RTCRayHit *rh, double t, sensim_hit *hit);
/* The same from component values (for packets). */
void sensim_scene_fill_hit_parts(const sensim_scene *s, unsigned geom, unsigned inst, float ngx, float ngy, float ngz,
                          sensim_vec3 dir, double t, sensim_vec3 *normal, int *object);

/* Mesh m's vertices under pose and per-axis scale, in world space: double
 * arithmetic rounded once to float (what Embree gets for a static object).
 * v[m->nv * 3]. */
void sensim_scene_bake_vertices(const scene_mesh *m, const sensim_pose *pose, const double scale[3], float *v);
/* Transform time steps of object o (1 for a static one) and the 3x4
 * object-to-world transform of step k over the scene's keyframe window,
 * column-major as Embree's RTC_FORMAT_FLOAT3X4_COLUMN_MAJOR. */
int sensim_scene_object_steps(const scene_object *o);
void sensim_scene_object_xfm(const sensim_scene *s, const scene_object *o, int k, float x[12]);

/* SENSIM_OK when backend b (resolved) can trace s now: a known value and,
 * for TWIN, the scene prepared; else EINVAL naming `who`. */
sensim_status sensim_scene_backend_check(const sensim_scene *s, sensim_render_backend b, const char *who);
/* rtcIntersect16 / rtcOccluded16 on s by backend b (EMBREE or TWIN, the
 * scene prepared for it; for CUDA, intersect16 replays the hits of a
 * camera frame traced on the device, and occluded16 is not called): the
 * one place the lidar and camera loops call for hits, so that everything
 * after the hit is the same code. */
void sensim_scene_intersect16(const sensim_scene *s, sensim_render_backend b, const int *valid,
                              struct RTCIntersectContext *ctx, struct RTCRayHit16 *rh);
void sensim_scene_occluded16(const sensim_scene *s, sensim_render_backend b, const int *valid,
                             struct RTCIntersectContext *ctx, struct RTCRay16 *r);

/* Adds a mesh, taking ownership of v and tri (freed on failure); `where`
 * names the source in messages, vline/tline (may be NULL) the source line of
 * each vertex and triangle. Returns the mesh index or -1. */
int sensim_scene_mesh_add_owned(sensim_scene *s, const char *name, float *v, size_t nv, uint32_t *tri, size_t nt,
                         const char *where, const int *vline, const int *tline);

/* Grows *p (of *cap elements of elem bytes, doubling) to hold at least
 * need elements; -1 when out of memory. */
int sensim_render_grow(void **p, size_t *cap, size_t need, size_t elem);

/* 1 if triangle (a, b, c) has (numerically) zero area. */
int sensim_scene_triangle_degenerate(const float *a, const float *b, const float *c);

/* The i in [lo, hi) with t[i] <= x < t[i + 1], given t increasing and
 * t[lo] <= x < t[hi] (binary search): the keyframe interval or table cell
 * holding x. */
static inline size_t render_interval(const double *t, size_t lo, size_t hi, double x)
{
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (t[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Y-up to Z-up in place: (x, y, z) -> (z, x, y), a proper rotation taking
 * glTF's up (+Y) to +z, its forward (+Z, where an asset faces) to +x and
 * its left (+X) to +y: sensim's x forward, y left, z up. */
static inline void mesh_y_up_to_z_up(float *v, size_t nv)
{
    for (size_t i = 0; i < nv; i++) {
        float x = v[3 * i], y = v[3 * i + 1], z = v[3 * i + 2];
        v[3 * i] = z;
        v[3 * i + 1] = x;
        v[3 * i + 2] = y;
    }
}

/* A lidar's rain and snow for one scan (weather.c): per precipitation the
 * expected number of echoing particles in the beam from min_range to each
 * range node, cum[k] at x[k] = min + (max - min) (k / K)^2. */
#define SENSIM_WEATHER_NODES 257
typedef struct sensim_weather_table {
    int on; /* particle echoes to draw */
    struct {
        int on;
        double rho, n0, lambda; /* reflectance; N(D) = n0 exp(-lambda D) */
        double cum[SENSIM_WEATHER_NODES];
    } pop[2];
    double x0, x1;       /* min and max range */
    double alpha;        /* total extinction at the lidar's wavelength */
    double thr;          /* weakest echo detected */
    double th, tv, w0;   /* tan of the half divergences, waist */
    const sensim_render_lidar *l;
} sensim_weather_table;
/* Fills t for lidar l in scene s (t->on = 0 when nothing echoes). */
void sensim_weather_table_make(const sensim_scene *s, const sensim_render_lidar *l, sensim_weather_table *t);
/* Particle echoes of beam `beam` (scan * beams + beam index) lit up to
 * `reach` (m; INFINITY: to max_range): ranges and intensities into r, in
 * (room for 2 * SENSIM_WEATHER_MAX_ECHOES); returns how many. */
int sensim_weather_beam(const sensim_weather_table *t, uint64_t beam, double reach, float *r, float *in);

/* Camera shading at a hit (pbr.c): radiance = ka * ambient + ks * sun *
 * (n.l) where the sun is seen. Returns 0 for the plain Lambert albedo of
 * the object's material (ka and ks untouched), 1 with ka and ks set: a
 * glTF metallic-roughness material of the hit triangle (its base colour
 * times its texture at the hit's interpolated TEXCOORD_0), or the scene
 * material's two-layer surface BRDF. prim, bu, bv: Embree's primitive and
 * barycentrics; n, l, v unit (normal facing the ray, to the sun, to the
 * camera). */
int sensim_camera_surface(const sensim_scene *s, int obj, unsigned prim, float bu, float bv, sensim_vec3 n,
                          sensim_vec3 l, sensim_vec3 v, double ka[3], double ks[3]);

/* glTF 2.0 (.gltf, or .glb when glb is 1) into one mesh (gltf.c). */
int sensim_gltf_load(sensim_scene *s, const char *name, const char *path, int glb, int up_y);
/* The same, also collecting vertex attribute `attribute` ("NORMAL",
 * "TEXCOORD_0", ...) of every primitive: *values (malloc'd, the caller
 * frees) gets 4 floats a vertex of the mesh, in the mesh's vertex order,
 * the first *ncomp of them set (normalized integers mapped to [0, 1] or
 * [-1, 1]; meshopt filters and Draco decoded), zeros where a primitive
 * lacks it; in the accessor's own space (no node transform, no up axis). */
int sensim_gltf_load_attribute(sensim_scene *s, const char *name, const char *path, int glb, int up_y,
                               const char *attribute, float **values, int *ncomp);

#pragma GCC visibility pop

#endif
