/* sensim/render.h - the Embree ray caster: scenes, lidar scans, camera frames.
 *
 * Plan, then execute (DESIGN.md): a scene is built (meshes, materials,
 * objects, lights, atmosphere) and committed once; lidars and cameras are
 * created once from validated parameters; then scans and frames are traced in
 * parallel (OpenMP) loops that never allocate, print or touch shared mutable
 * state. The sensor pose is a pure function of time (sensim_pose_fn), called
 * per beam / per sample at the ray's own time, so moving sensors and moving
 * objects distort the data the way real ones do (seed 000 Fig. 5), and the
 * output is bit-identical at any thread count.
 *
 * Frames: world is ENU. A sensor frame has x forward, y left, z up (the lidar
 * and the camera alike: the camera looks along +x, image right is -y, image
 * up is +z). Azimuth is measured from +x towards +y, elevation up from the
 * x-y plane.
 *
 * Ownership: add/set functions copy what they are given (mesh arrays,
 * keyframes, names, elevation tables). A committed scene is immutable and may
 * be traced from several threads at once; building it is single-threaded.
 * Lidar and camera objects are immutable after create (thread-safe to use).
 * Errors go to the per-thread message of sensim/status.h; Embree device
 * errors are routed there too, never printed. */
#ifndef SENSIM_RENDER_H
#define SENSIM_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/camera.h"
#include "sensim/gt.h"
#include "sensim/lidar.h"
#include "sensim/linalg.h"
#include "sensim/rig.h"
#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A rigid pose: x_world = q * x_local + p. */
typedef struct sensim_pose {
    sensim_vec3 p;
    sensim_quat q;
} sensim_pose;

static inline sensim_pose sensim_pose_identity(void)
{
    sensim_pose a = {{0, 0, 0}, {1, 0, 0, 0}};
    return a;
}
/* a * b: b expressed in a's frame, returned in a's parent frame. */
static inline sensim_pose sensim_pose_mul(sensim_pose a, sensim_pose b)
{
    sensim_pose c;
    c.q = sensim_quat_normalize(sensim_quat_mul(a.q, b.q));
    c.p = sensim_vec3_add(a.p, sensim_quat_rotate(a.q, b.p));
    return c;
}

/* The pose of a body at time t (s). Must be a pure function of (user, t):
 * it is called from many threads at once. */
typedef void (*sensim_pose_fn)(const void *user, double t, sensim_pose *out);

/* ---- a sensor's pose from the ground truth of a log ---- */

/* A sensor riding a log's ground truth: the body pose of sensim_gt_window_at
 * (cubic Hermite position, slerp orientation: what every injected sensor
 * sees, sensim/gt.h) with `mount`, the sensor pose in the body frame,
 * composed on the right. What sensim_render_log casts from. Borrows the
 * window; covering it (between parallel loops) changes what it answers. */
typedef struct sensim_gt_track {
    const sensim_gt_window *gt;
    sensim_pose mount;
} sensim_gt_track;
/* A sensim_pose_fn; `user` is a const sensim_gt_track *. Pure between
 * covers of its window: many threads may call it at once. */
void sensim_gt_track_eval(const void *user, double t, sensim_pose *out);

/* ---- poses given as arrays ---- */

/* Poses sampled at increasing times without velocities, interpolated
 * linearly (position) and by slerp (orientation); held constant outside
 * [t[0], t[n-1]]. Arrays copied. For a log's ground truth, which has
 * velocities, use sensim_gt_track: every sensor on a log interpolates it
 * alike. */
typedef struct sensim_pose_track sensim_pose_track;
/* position [n*3], orientation [n*4] (w,x,y,z, body to world); t strictly
 * increasing and finite. `mount` (may be NULL) is the sensor pose in the body
 * frame, composed on the right. */
sensim_pose_track *sensim_pose_track_create(const double *t, const double *position, const double *orientation,
                                            size_t n, const sensim_pose *mount);
void sensim_pose_track_destroy(sensim_pose_track *tr);
double sensim_pose_track_start(const sensim_pose_track *tr);
double sensim_pose_track_end(const sensim_pose_track *tr);
/* A sensim_pose_fn; `user` is a const sensim_pose_track *. */
void sensim_pose_track_eval(const void *user, double t, sensim_pose *out);

/* ---- materials ---- */

typedef enum sensim_brdf {
    SENSIM_BRDF_LAMBERT = 0, /* rho cos(theta) / pi (seed 002 eq. 4) */
    SENSIM_BRDF_RETRO,       /* retroreflector: rho, independent of incidence */
    SENSIM_BRDF_SURFACE      /* two-layer GGX coat over Oren-Nayar diffuse (seed 002 eqs. 5-12) */
} sensim_brdf;

typedef struct sensim_material {
    char name[64];
    sensim_brdf brdf;
    double reflectance; /* lidar reflectance at the laser wavelength, [0, 1] */
    double albedo[3];   /* camera albedo, linear RGB, [0, 1] */
    /* SENSIM_BRDF_SURFACE only (seed 002 sec. 2.2.2): the coat's complex
     * refractive index ior + i ior_k (from air), its Beckmann roughness
     * sigma (rms microfacet slope; GGX alpha = sqrt(2) sigma), and the
     * Oren-Nayar roughness of the diffuse layer (rad, std of the facet
     * angles) whose diffuse reflectance is `reflectance`. */
    double ior, ior_k, specular_roughness, diffuse_roughness;
} sensim_material;

/* Grey Lambertian, reflectance 0.5, albedo 0.5, named "default"; surface
 * parameters ior 1.5, ior_k 0, specular_roughness 0.3, diffuse_roughness 0. */
sensim_material sensim_material_default(void);

/* ---- BRDFs (seed 002 sec. 2.2); pure functions ---- */

/* Unpolarized Fresnel power reflectance (eqs. 5-6) from air into a medium
 * of complex index n + i k, at incidence cosine cos_i (clamped to [0, 1]). */
double sensim_brdf_fresnel(double n, double k, double cos_i);
/* GGX microfacet distribution (eq. 7): alpha^2 / (pi ((alpha^2 - 1) c^2 + 1)^2)
 * for c = n.h > 0, else 0. Normalized: the integral of D(h) (n.h) over the
 * hemisphere is 1. */
double sensim_brdf_ggx_d(double alpha, double cos_h);
/* Smith's Lambda for GGX (eq. 9): (-1 + sqrt(1 + 1/a^2)) / 2 with
 * a = c / (alpha sqrt(1 - c^2)), c = n.v; G1 = 1 / (1 + Lambda). */
double sensim_brdf_ggx_lambda(double alpha, double cos_v);
/* Oren-Nayar diffuse BRDF (1/sr) in Fujii's form (eq. 11): rho/pi (A + B s/t),
 * A = 1 - 0.5 s2/(s2 + 0.33) + 0.17 rho s2/(s2 + 0.13), B = 0.45 s2/(s2 + 0.09),
 * s2 = sigma^2, s = l.v - (n.l)(n.v), t = 1 if s <= 0 else max(n.l, n.v).
 * sigma = 0 is Lambert. Unit vectors; 0 when l or v is below the surface. */
double sensim_brdf_oren_nayar(double rho, double sigma, sensim_vec3 n, sensim_vec3 l, sensim_vec3 v);
/* A material's BRDF f(l, v) (1/sr); n, l, v unit, l and v pointing away
 * from the surface. Lambert: rho/pi. Retro: rho/(pi n.l), so that a lidar
 * sees rho at any incidence. Surface (eq. 12): F(l.h) G2 D(h) / (4 (n.l)(n.v))
 * + (1 - F(l.h)) f_OrenNayar, h = (l + v)/|l + v|, G2 = 1/(1 + Lambda(l) +
 * Lambda(v)) (height-correlated Smith, eq. 10). 0 below the surface. */
double sensim_material_brdf(const sensim_material *m, sensim_vec3 n, sensim_vec3 l, sensim_vec3 v);

/* ---- scenes ---- */

typedef struct sensim_scene sensim_scene;

typedef struct sensim_hit {
    double distance;    /* m along the unit direction; INFINITY on a miss */
    sensim_vec3 normal; /* unit geometric normal, world, facing the ray */
    int object;         /* object index, -1 on a miss */
    int material;       /* material index, -1 on a miss */
} sensim_hit;

/* An empty scene with material 0 = sensim_material_default(), sun from
 * straight above (irradiance 1), ambient 0.2, sky 0.6, no atmosphere.
 * NULL on failure (Embree device creation). */
sensim_scene *sensim_scene_create(void);
void sensim_scene_destroy(sensim_scene *s);

/* Meshes are templates placed in the world by objects. Each returns the mesh
 * index (>= 0) or -1 with the error set. Vertices are checked (finite) and
 * indices range-checked, with a message naming the mesh and triangle;
 * triangles with zero area (collinear or repeated vertices) are dropped and
 * counted (sensim_scene_mesh_dropped), a mesh left with none refused.
 * `name` may be NULL. */
int sensim_scene_add_mesh(sensim_scene *s, const char *name, const float *vertices, size_t nvertices,
                          const uint32_t *triangles, size_t ntriangles);
/* Wavefront OBJ (v and f lines; polygons fanned) or PLY (ascii or
 * binary_little_endian; vertex x y z and a face list or tristrips), and
 * any other format assimp reads (STL, Collada, FBX, ...: triangulated,
 * node transforms applied). Errors name the file and line (assimp: the
 * file and assimp's message). */
int sensim_scene_load_mesh(sensim_scene *s, const char *name, const char *path);
/* Up axis of a mesh file. Y-up files are turned Z-up by the rotation
 * (x, y, z) -> (z, x, y): file +Y (up) becomes +z, file +Z (glTF's
 * forward, where an asset faces) becomes +x (forward) and file +X (glTF's
 * left) becomes +y (left). AUTO: Y-up for glTF, Z-up (as is) for OBJ and
 * PLY. */
typedef enum sensim_mesh_up {
    SENSIM_MESH_UP_AUTO = 0,
    SENSIM_MESH_UP_Z,
    SENSIM_MESH_UP_Y
} sensim_mesh_up;
/* sensim_scene_load_mesh with an up axis; also reads glTF 2.0 (.gltf with
 * external or base64 buffers, .glb): triangle primitives (modes 4, 5, 6)
 * with VEC3 positions (float, or the 8/16-bit integers of
 * KHR_mesh_quantization, normalized or not) and u8/u16/u32 indices, sparse
 * accessors, EXT_meshopt_compression and KHR_draco_mesh_compression, of
 * every mesh placed by the node hierarchy (matrix or TRS) of the default
 * scene (else scene 0, else all root nodes), merged into one mesh. Other
 * required extensions are rejected. Errors name the file and the JSON path
 * (accessors[3].componentType) or byte offset. */
int sensim_scene_load_mesh_up(sensim_scene *s, const char *name, const char *path, sensim_mesh_up up);
/* Size and axis-aligned bounds (local frame) of mesh `mesh`; any output
 * may be NULL. */
sensim_status sensim_scene_mesh_info(const sensim_scene *s, int mesh, size_t *nvertices, size_t *ntriangles,
                                     double lo[3], double hi[3]);
/* Meshes in the scene; the name of mesh `mesh` (borrowed, NULL if none);
 * the zero-area triangles dropped from it at load. */
size_t sensim_scene_mesh_count(const sensim_scene *s);
const char *sensim_scene_mesh_name(const sensim_scene *s, int mesh);
size_t sensim_scene_mesh_dropped(const sensim_scene *s, int mesh);
/* Primitive generators, tessellated into triangles. Plane: size_x by size_y
 * in the local x-y plane, centred, normal +z, nx by ny cells. Box: centred.
 * Cylinder: axis +z from z = 0 to height, closed, `segments` around. Sphere:
 * centred, `segments` around (and segments/2 from pole to pole). */
int sensim_scene_add_plane(sensim_scene *s, const char *name, double size_x, double size_y, int nx, int ny);
int sensim_scene_add_box(sensim_scene *s, const char *name, double size_x, double size_y, double size_z);
int sensim_scene_add_cylinder(sensim_scene *s, const char *name, double radius, double height, int segments);
int sensim_scene_add_sphere(sensim_scene *s, const char *name, double radius, int segments);
/* A height field over size_x by size_y centred at the origin, nx by ny cells,
 * z = amplitude * (sum of a few fixed sinusoids), for terrain and benchmarks. */
int sensim_scene_add_terrain(sensim_scene *s, const char *name, double size_x, double size_y, int nx, int ny,
                             double amplitude);

/* Returns the material index or -1 (reflectance and albedo in [0, 1]; a
 * name already used is an error). */
int sensim_scene_add_material(sensim_scene *s, const sensim_material *m);
int sensim_scene_find_material(const sensim_scene *s, const char *name);
int sensim_scene_find_mesh(const sensim_scene *s, const char *name);
const sensim_material *sensim_scene_material(const sensim_scene *s, int index);

/* A static object: mesh placed at pose. Returns the object index or -1. */
int sensim_scene_add_object(sensim_scene *s, int mesh, int material, sensim_pose pose);
/* A moving object with n >= 2 keyframes (times strictly increasing); the
 * pose is interpolated between keyframes (lerp + slerp) and held outside. It
 * is traced with Embree motion blur: `steps` (2..129) uniform time steps over
 * the scene's keyframe window; 0 picks max(2, min(129, 4 * keyframes)). */
int sensim_scene_add_moving_object(sensim_scene *s, int mesh, int material, const double *t,
                                   const sensim_pose *poses, size_t n, int steps);

/* Scales object i along its own axes by (sx, sy, sz) (each finite and > 0)
 * before its pose is applied: a vertex v of the mesh goes to
 * R (S v) + p. Normals follow the inverse transpose. */
sensim_status sensim_scene_set_object_scale(sensim_scene *s, int object, double sx, double sy, double sz);

/* How static objects are traced. Baked: every object's triangles are copied
 * into world space (one BVH over all of them: the fastest traversal, memory
 * proportional to the number of copies). Instanced: the mesh is built once
 * and each object is an Embree instance of it (a transform and a small top
 * level tree: memory of one copy). Hits are the same primitives; distances
 * agree to float rounding (the ray is transformed instead of the vertices).
 * AUTO (the default) instances a mesh of at least
 * SENSIM_INSTANCING_MIN_TRIANGLES triangles used by two or more static
 * objects and bakes the rest. Moving objects are always instances. */
typedef enum { SENSIM_INSTANCING_AUTO, SENSIM_INSTANCING_ALWAYS, SENSIM_INSTANCING_NEVER } sensim_instancing;
#define SENSIM_INSTANCING_MIN_TRIANGLES 1024
sensim_status sensim_scene_set_instancing(sensim_scene *s, sensim_instancing mode);
/* Bytes the scene holds: its meshes and objects plus what Embree allocated
 * for the committed BVHs and geometry buffers (Embree's memory monitor).
 * peak: the most at any time, builds included (may be NULL). */
size_t sensim_scene_memory(const sensim_scene *s, size_t *peak);

/* Lights for the camera. direction points from the scene to the sun. */
sensim_status sensim_scene_set_sun(sensim_scene *s, sensim_vec3 direction, const double irradiance[3]);
sensim_status sensim_scene_set_ambient(sensim_scene *s, const double ambient[3], const double sky[3]);
/* Beer-Lambert extinction coefficient alpha (1/m) of the air, seed 002
 * eq. 13: a lidar return is attenuated by exp(-2 alpha r), a camera ray by
 * exp(-alpha r) towards the sky colour. */
sensim_status sensim_scene_set_atmosphere(sensim_scene *s, double extinction);
/* Extinction from the meteorological visibility V (m): Koschmieder's
 * alpha = 3.912 / V at 550 nm (2 % contrast threshold, ln 50 = 3.912) with
 * the wavelength dependence of Kim, Bruce & Korevaar (2001, Proc. SPIE 4214,
 * eq. 2-3): alpha(lambda) = 3.912 / V (lambda / 550 nm)^-q, q = 1.6 for
 * V > 50 km, 1.3 for 6 < V <= 50 km, 0.16 V + 0.34 (V in km) for
 * 1 < V <= 6 km, V - 0.5 for 0.5 < V <= 1 km, 0 below. V > 0 and finite;
 * wavelength (m) > 0. NAN for bad arguments. */
double sensim_visibility_extinction(double visibility, double wavelength);
/* Sets the atmosphere from a visibility V (m, > 0): each lidar uses
 * sensim_visibility_extinction(V, its wavelength), the camera that at
 * 550 nm. Replaces an extinction set before, and the reverse. */
sensim_status sensim_scene_set_visibility(sensim_scene *s, double visibility);
/* The visibility set (m), or 0 when the atmosphere is an extinction. */
double sensim_scene_visibility(const sensim_scene *s);
/* Extinction (1/m) at the camera (550 nm, or the fixed coefficient), plus
 * the weather's (rain and snow, sensim_scene_set_weather). */
double sensim_scene_extinction(const sensim_scene *s);
/* Extinction (1/m) at a wavelength (m): from the visibility if one is set,
 * else the fixed coefficient; plus the weather's. */
double sensim_scene_extinction_at(const sensim_scene *s, double wavelength);
/* Atmospheric returns (seed 002 eq. 14): each lidar beam, with probability
 * `probability`, gets an echo from the air at a range drawn from
 * Gamma(shape k, scale theta) (m), with the intensity of a Lambertian
 * target of `reflectance` seen head-on at that range (same falloff and
 * two-way Beer-Lambert). probability 0 (the default) turns them off. The
 * draws come from the lidar's seed and sensor id, streams
 * SENSIM_RENDER_STREAM_ATMO_HIT and _RANGE, indexed by scan * beams + beam. */
sensim_status sensim_scene_set_atmospheric_returns(sensim_scene *s, double probability, double shape, double scale,
                                                   double reflectance);
#define SENSIM_RENDER_STREAM_ATMO_HIT 0x41544d01u
#define SENSIM_RENDER_STREAM_ATMO_RANGE 0x41544d02u

/* ---- weather: rain and snow (render/weather.c) ----
 *
 * Precipitation of rate R (mm/h; snow as melted water) attenuates lidar and
 * camera alike (drops and flakes are far larger than the wavelengths, so
 * the extinction alpha does not depend on them) and, for a lidar, puts
 * particles in the beam that echo. The extinction (1/m):
 *   MAVS (default; Goodin et al. 2019, Electronics 8(1) 89, as MAVS codes
 *   it in src/sensors/lidar/lidar.cpp Lidar::Update):
 *     rain alpha = 0.01 R^0.6;
 *   snow (MAVS src/mavs_core/environment/snow/snow.cpp Snow::Initialize,
 *   after Rasshofer et al. 2011, eqs. 25-26, with MAVS's factor 1/10):
 *     dry (T <= -1 C) alpha = (15 R + 1) / 1e4, wet alpha = (2 R - 0.1) / 1e4
 *     (0 below R = 0.05);
 *   DSD: geometric optics (extinction efficiency 2) over the particle size
 *     distribution N(D) = N0 exp(-Lambda D) (D in mm, N in m^-3 mm^-1):
 *     alpha = 2 int (pi D^2 / 4) N(D) dD = pi N0 / Lambda^3 (mm^2/m^3).
 * Size distributions: rain, Marshall & Palmer (1948): N0 = 8000,
 * Lambda = 4.1 R^-0.21; snow, Gunn & Marshall (1958): N0 = 3800 R^-0.87,
 * Lambda = 2.55 R^-0.48 (D the melted diameter, taken as the flake's).
 * Lidar particle echoes: see sensim-render(1) and render/weather.c. */
typedef enum sensim_weather_extinction_model {
    SENSIM_WEATHER_EXTINCTION_MAVS = 0,
    SENSIM_WEATHER_EXTINCTION_DSD
} sensim_weather_extinction_model;
typedef enum sensim_precipitation { SENSIM_PRECIPITATION_RAIN = 0, SENSIM_PRECIPITATION_SNOW } sensim_precipitation;
typedef struct sensim_weather {
    double rain_rate;        /* mm/h, 0..500; 0: no rain */
    double snow_rate;        /* mm/h of melted water, 0..50; 0: no snow */
    double snow_temperature; /* deg C: dry snow at or below -1, wet above (MAVS) */
    /* Backscatter of a particle as the reflectance of a Lambertian disc of
     * its cross-section seen head-on: 2 pi / S for a lidar ratio S (sr);
     * default 2 pi / 18.8 sr (water spheres) for both. */
    double rain_reflectance, snow_reflectance;
    sensim_weather_extinction_model extinction;
    int false_returns; /* 1 (default): particles in a lidar beam echo */
} sensim_weather;
/* No rain, no snow, -5 C, reflectances 2 pi / 18.8, MAVS extinction,
 * false returns on. */
sensim_weather sensim_weather_default(void);
/* Size distribution N(D) = n0 exp(-lambda D) of a precipitation at rate
 * (mm/h, > 0): n0 in m^-3 mm^-1, lambda in 1/mm. */
sensim_status sensim_weather_size_distribution(sensim_precipitation kind, double rate, double *n0, double *lambda);
/* Extinction (1/m) of the weather, rain plus snow, by its model. */
double sensim_weather_extinction(const sensim_weather *w);
/* Sets (replaces) the scene's weather; checks the ranges above. Its
 * extinction adds to the atmosphere's in sensim_scene_extinction and
 * sensim_scene_extinction_at. */
sensim_status sensim_scene_set_weather(sensim_scene *s, const sensim_weather *w);
/* The scene's weather (sensim_weather_default() when none was set). */
sensim_weather sensim_scene_weather(const sensim_scene *s);
/* Draws of the lidar particle echoes: from the lidar's seed and sensor id,
 * stream base + 16 * precipitation + (0: count, 1: range, 2: size),
 * indexed by scan * beams + beam (count) and that times
 * SENSIM_WEATHER_MAX_ECHOES plus the particle (range, size). */
#define SENSIM_RENDER_STREAM_WEATHER 0x57545200u
/* At most this many echoing particles of each precipitation in one beam
 * (a Poisson count above it is clamped). */
#define SENSIM_WEATHER_MAX_ECHOES 16

/* Builds the Embree scene. After this the scene is read-only; adding to a
 * committed scene is an error. */
sensim_status sensim_scene_commit(sensim_scene *s);
size_t sensim_scene_triangle_count(const sensim_scene *s);
size_t sensim_scene_object_count(const sensim_scene *s);
/* The pose of object i at time t (moving objects interpolated). */
sensim_status sensim_scene_object_pose(const sensim_scene *s, int object, double t, sensim_pose *out);

/* Closest hit along origin + d * dir (dir need not be unit; distance is
 * along the unit direction) for d in [tnear, tfar], at time t (s). */
sensim_status sensim_scene_intersect(const sensim_scene *s, sensim_vec3 origin, sensim_vec3 dir, double t,
                                     double tnear, double tfar, sensim_hit *hit);

/* Loads a scene file (YAML; see sensim-render(1) for the keys): meshes,
 * materials, objects, lights, atmosphere. Relative mesh paths are relative to
 * the file. The scene is committed. Errors name the file, line and key.
 * Sensors defined under `sensors:` are read by sensim_render_sensors_load. */
sensim_scene *sensim_scene_load(const char *path);

/* ---- ray-casting backends (issue 18) ---- */

/* Who finds the closest hit of the renderer's rays. Everything after the
 * hit (returns, intensity, shading, noise) is the same code for all, so
 * identical hits give bit-identical output.
 *  EMBREE: Embree's packet traversal (rtcIntersect16), the default.
 *  TWIN:   sensim's own flattened BVH (built with Embree's rtcBuildBVH) and
 *          watertight traversal, the C11 compilation of the render/gpu/
 *          headers that the CUDA kernels compile too: the GPU path's
 *          reference on every machine. Same primitive as Embree for every
 *          ray except ties (two triangles at the same distance), distances
 *          within float rounding. Needs sensim_scene_prepare_backend.
 *  CUDA:   the same headers compiled for NVIDIA GPUs (PTX embedded in the
 *          library, run through the driver's libcuda.so.1, loaded at run
 *          time: no CUDA toolkit needed): bit-identical to TWIN. The
 *          scene's BVH is uploaded by sensim_scene_prepare_backend; each
 *          scan's or frame's rays are made on the host as for TWIN, traced
 *          on the device in one batch and their hits handed back to the
 *          same host code. A scene traces one scan or frame at a time on it.
 *          Without a driver, a device or PTX in this build, preparing it
 *          fails with SENSIM_EUNSUPPORTED saying what is missing.
 *  AUTO:   CUDA when it works here (sensim_scene_prepare_backend tries it),
 *          else EMBREE. */
typedef enum sensim_render_backend {
    SENSIM_RENDER_BACKEND_EMBREE = 0,
    SENSIM_RENDER_BACKEND_TWIN,
    SENSIM_RENDER_BACKEND_CUDA,
    SENSIM_RENDER_BACKEND_AUTO
} sensim_render_backend;

/* "embree", "twin", "cuda", "auto" to *out; SENSIM_EINVAL naming the value
 * and the known ones otherwise. */
sensim_status sensim_render_backend_parse(const char *name, sensim_render_backend *out);
/* The name of b ("embree", ...), "unknown" for a value out of range. */
const char *sensim_render_backend_name(sensim_render_backend b);
/* The backend AUTO stands for on this machine: CUDA when
 * sensim_render_cuda_probe passes (it opens the GPU: not free), else
 * EMBREE; other values as given. */
sensim_render_backend sensim_render_backend_resolve(sensim_render_backend b);
/* Builds what backend b needs to trace committed scene s: for TWIN the
 * flattened BVH (once; later calls keep it), for CUDA that BVH uploaded to
 * the GPU, for EMBREE nothing; for AUTO, CUDA's if it can be built (the
 * driver, a device whose arithmetic passes the probe, PTX in this build),
 * else nothing, AUTO then standing for EMBREE on s (sensim_scene_backend
 * says which and why). Single-threaded like the commit; not while the scene
 * is being traced. Errors: EINVAL (not committed, unknown backend), ENOMEM,
 * EINTERNAL (Embree's builder, the CUDA driver), EUNSUPPORTED (CUDA: no
 * driver, device or PTX; the message says which). */
sensim_status sensim_scene_prepare_backend(sensim_scene *s, sensim_render_backend b);
/* The backend b stands for on scene s: AUTO as sensim_scene_prepare_backend
 * resolved it (EMBREE before that call), others as given. If note is not
 * NULL, *note is set to a line saying more (borrowed from s, valid while s
 * is): for CUDA the device and PTX target ("NVIDIA H100 80GB HBM3, sm_90"),
 * for AUTO resolved to EMBREE why CUDA was not used (the CUDA error
 * message), else "". */
sensim_render_backend sensim_scene_backend(const sensim_scene *s, sensim_render_backend b, const char **note);

/* ---- lidar ---- */

typedef struct sensim_render_lidar_points sensim_render_lidar_points;

typedef enum sensim_return_mode {
    SENSIM_RETURN_STRONGEST = 0,
    SENSIM_RETURN_FIRST,
    SENSIM_RETURN_LAST,
    SENSIM_RETURN_MEAN, /* one point at the intensity-weighted mean range */
    SENSIM_RETURN_DUAL  /* strongest and last (second strongest when they coincide) */
} sensim_return_mode;

typedef enum sensim_beam_pattern {
    SENSIM_BEAM_GRID = 0,  /* n x n rays over the square around the footprint (Chrono) */
    SENSIM_BEAM_SUNFLOWER  /* n rays on a Vogel spiral over the footprint disc */
} sensim_beam_pattern;

typedef enum sensim_falloff {
    SENSIM_FALLOFF_NONE = 0,      /* intensity independent of range */
    SENSIM_FALLOFF_INVERSE_SQUARE,/* (reference_range / r)^2 */
    SENSIM_FALLOFF_GAUSSIAN_BEAM  /* detected power of seed 002 eq. 21 */
} sensim_falloff;

/* How the beams sweep the scene. SPIN: a spinning head, `columns` firings
 * of `channels` beams a turn (the geometry of the fields below). ROSETTE:
 * the non-repetitive pattern of Risley-prism lidars (Livox Mid-40, Mid-70)
 * in the first-order two-prism model HELIOS++ uses for them: two wedges
 * turning at rosette_hz[0] and rosette_hz[1] each deflect the beam by a
 * quarter of the cone angle, so the beam's angular offset from the
 * boresight (+x) is (rosette_fov / 4) (e^(i 2 pi f1 t) + e^(i 2 pi f2 t)),
 * a rose of off-axis angle (rosette_fov / 2) |cos(pi (f1 - f2) t)| whose
 * petals precess. One channel; `columns` points a scan at rate_hz scans a
 * second; the prisms run on across scans (t = scan / rate_hz +
 * column / (rate_hz columns)), so successive scans fill the cone. */
typedef enum sensim_lidar_scan {
    SENSIM_SCAN_SPIN = 0,
    SENSIM_SCAN_ROSETTE
} sensim_lidar_scan;

#define SENSIM_RENDER_LIDAR_MAX_CHANNELS 256
#define SENSIM_RENDER_LIDAR_MAX_RAYS 256

typedef struct sensim_render_lidar_params {
    sensim_lidar_scan scan;
    /* Ray caster (EMBREE or TWIN; the scene prepared for it); default
     * EMBREE. */
    sensim_render_backend backend;
    double rosette_fov;   /* ROSETTE: full cone angle (rad), (0, pi) */
    double rosette_hz[2]; /* ROSETTE: prism rotation rates (Hz), finite, f1 != f2 */
    int channels;
    /* Per-channel elevation (rad), azimuth offset (rad) and firing offset
     * within a column (s). When `has_table` is 0 the elevations are uniform
     * from vfov_min to vfov_max and the offsets zero. */
    int has_table;
    double elevation[SENSIM_RENDER_LIDAR_MAX_CHANNELS];
    double azimuth_offset[SENSIM_RENDER_LIDAR_MAX_CHANNELS];
    double time_offset[SENSIM_RENDER_LIDAR_MAX_CHANNELS];
    double vfov_min, vfov_max; /* rad */
    int columns;               /* firings per revolution */
    double rate_hz;            /* revolutions (scans) per second */
    double hfov;               /* rad swept per scan (2 pi for a spinning sensor) */
    double azimuth0;           /* rad, azimuth of column 0 */
    int direction;             /* +1 counter-clockwise seen from above, -1 clockwise */
    double min_range, max_range;
    double divergence;         /* full beam divergence angle (1/e^2), rad; 0: one ray */
    /* Vertical full divergence (rad) of an elliptical beam; 0: round (the
     * horizontal `divergence` both ways). The footprint rays spread over
     * the ellipse, weighted by exp(-2 (a^2 / A^2 + b^2 / B^2)) with A, B
     * the tangents of the half-angles. Not with the gaussian_beam falloff
     * (seed 002 eq. 21 is for a round beam). */
    double divergence_v;
    sensim_beam_pattern pattern;
    int pattern_n;             /* grid side or sunflower count */
    sensim_return_mode returns;
    double echo_separation;    /* m: sub-ray hits closer than this form one echo */
    double threshold;          /* minimum echo intensity to report */
    sensim_falloff falloff;
    double reference_range;    /* m, for SENSIM_FALLOFF_INVERSE_SQUARE */
    /* Seed 002 eq. 21: beam waist w(x) = x tan(divergence/2) + waist, detector
     * radius receiver_radius, detector offset receiver_offset (m). */
    double waist, receiver_radius, receiver_offset;
    /* Laser wavelength (m), 200 nm..20 um; default 905 nm. Picks the
     * extinction of a scene whose atmosphere is given as a visibility. */
    double wavelength;
    /* s per column firing cycle (presets); when > 0 a loader that changes
     * rate_hz recomputes columns = round(1 / (rate_hz * firing_cycle)). */
    double firing_cycle;
    /* Random streams (atmospheric returns): seed and sensor id. */
    uint64_t seed;
    uint32_t sensor;
    /* Noise hook: applied to each scan after the geometric points are made
     * (the noise models live elsewhere; the caller wires them). NULL: none. */
    sensim_status (*noise)(void *user, struct sensim_render_lidar_points *pts, uint64_t scan);
    void *noise_user;
} sensim_render_lidar_params;

/* A 32-channel uniform sensor at 10 Hz, 1024 columns, +-15 deg, ranges
 * 0.5..120 m, one ray per beam, strongest return, inverse-square falloff with
 * reference 10 m, threshold 0. */
sensim_render_lidar_params sensim_render_lidar_default_params(void);
/* Presets: "vlp16", "hdl32e" (elevation tables and firing times from the
 * Velodyne manuals), "os128" (uniform 128 channels, +-22.5 deg, 2048
 * columns, simultaneous firing). Each is the data file
 * data/lidars/NAME.yaml (the keys of a scene file's lidar, a `table:` of
 * per-channel elevation, azimuth offset and firing time among them),
 * embedded in the library at build time and read as a scene file's lidar
 * is. SENSIM_ENOTFOUND for another name. */
sensim_status sensim_render_lidar_preset(const char *name, sensim_render_lidar_params *out);

/* Checks p as sensim_render_lidar_create does (SENSIM_EINVAL naming the
 * parameter) without building the lidar's tables: a scene file's lidar is
 * checked at load, before any output is planned. */
sensim_status sensim_render_lidar_params_check(const sensim_render_lidar_params *p);

typedef struct sensim_render_lidar sensim_render_lidar;
/* NULL on bad parameters (sensim_render_lidar_params_check's error) or
 * out of memory; the beam direction tables (channels x columns) are built
 * here. */
sensim_render_lidar *sensim_render_lidar_create(const sensim_render_lidar_params *p);
void sensim_render_lidar_destroy(sensim_render_lidar *l);
const sensim_render_lidar_params *sensim_render_lidar_params_of(const sensim_render_lidar *l);
/* Rays traced per beam; counted by the loop that makes them. */
int sensim_render_lidar_rays_per_beam(const sensim_render_lidar *l);
/* Beam offsets from the beam axis: tangent-plane (a, b) offsets (rad-ish:
 * tan of the angle) and weights summing to one; n = rays per beam. */
void sensim_render_lidar_beam_rays(const sensim_render_lidar *l, double *a, double *b, double *w);
/* Most points one scan can produce (beams x returns per beam). */
size_t sensim_render_lidar_max_points(const sensim_render_lidar *l);
/* Firing time of (column, channel) relative to the scan start (s). */
double sensim_render_lidar_fire_time(const sensim_render_lidar *l, int column, int channel);
/* The range falloff of the intensity at range r (m): 1 for none,
 * (reference_range / r)^2, or seed 002 eq. 21's detected power. */
double sensim_render_lidar_falloff(const sensim_render_lidar *l, double r);
/* Calibrated reflectivity, the 0..255 byte Velodyne and Ouster report beside
 * (or instead of) raw intensity: the apparent reflectance a = intensity /
 * falloff(range), which a sensor computes from its own range calibration
 * (atmospheric extinction is not undone, as a sensor cannot know it),
 * mapped as Velodyne's calibrated reflectivity: diffuse targets
 * round(100 a) for a in [0, 1] (percent of a white Lambertian target seen
 * head-on), brighter returns 101 + round(154 (1 - 1/a)) up to 255.
 * Non-finite or negative input gives 0. */
uint8_t sensim_render_lidar_reflectivity(const sensim_render_lidar *l, double intensity, double range);

/* One scan's points, DESIGN.md lidar layout, sensor frame at each point's
 * own firing time. Buffers sized by sensim_render_lidar_max_points. */
struct sensim_render_lidar_points {
    size_t count, capacity;
    float *xyzi;        /* [count*4] x, y, z (m), intensity: received power relative to
                         * a white Lambertian target seen head-on (at reference_range
                         * with the inverse-square falloff), after two-way extinction;
                         * dimensionless, above 1 nearer than the reference range */
    float *range, *azimuth, *elevation; /* m, rad, rad */
    uint16_t *channel;
    uint8_t *return_index;
    float *time_offset; /* s since the scan start */
    /* Scene object the return came from: its index among the scene's
     * objects (the order of the scene file's `objects:` list, an entry with
     * `repeat: {count: n}` taking n consecutive numbers; see
     * sensim_scene_object_count), that of the brightest sub-ray when an echo
     * merges several, SENSIM_RENDER_NO_OBJECT for an atmospheric return. */
    uint32_t *object;
};
#define SENSIM_RENDER_NO_OBJECT UINT32_C(0xFFFFFFFF)

sensim_render_lidar_points *sensim_render_lidar_points_create(const sensim_render_lidar *l);
void sensim_render_lidar_points_destroy(sensim_render_lidar_points *pts);

/* Unit direction of beam (column, channel) in the sensor frame (of scan 0
 * for a rosette, whose directions change from scan to scan). */
sensim_vec3 sensim_render_lidar_beam_direction(const sensim_render_lidar *l, int column, int channel);

/* Traces scan number `scan` starting at t_start (s): beam (column c,
 * channel k) is cast from pose(t_start + fire_time(c, k)) at that time.
 * Points come out in beam order (column, channel, return), identical at any
 * thread count; then params.noise (if set) is called from this thread. */
sensim_status sensim_render_lidar_scan(const sensim_render_lidar *l, const sensim_scene *s, sensim_pose_fn pose,
                                const void *pose_user, double t_start, uint64_t scan, sensim_render_lidar_points *out);

/* Applies the lidar noise of sensim/lidar.h (range, angle and intensity
 * noise, quantization, dropouts) to a rendered scan in place: point i takes
 * the draws of global index first + i, its row in a log of the clean scans,
 * so the result equals `sensim inject` on that log. Dropped points are
 * removed, the order kept. keep: scratch of at least pts->count bytes.
 * Never allocates; *kept (may be NULL) gets the points left. */
sensim_status sensim_render_lidar_points_noise(sensim_render_lidar_points *pts, const sensim_lidar *m,
                                               uint64_t first, uint8_t *keep, size_t *kept);

/* ---- bird's-eye view of a scan ---- */

typedef enum sensim_bev_color {
    SENSIM_BEV_HEIGHT = 0, /* colour by z */
    SENSIM_BEV_INTENSITY   /* colour by intensity */
} sensim_bev_color;

/* "height" or "intensity" to *out; SENSIM_EINVAL naming the value and the
 * known ones otherwise. */
sensim_status sensim_bev_color_parse(const char *name, sensim_bev_color *out);

/* Projects points (x, y, z, intensity; sensor frame) straight down into a
 * size x size RGB image covering [-extent, extent] m on x and y around the
 * sensor, +x up the image and +y to the left (a map seen from above with the
 * sensor looking up). Each pixel shows the highest point that falls in it,
 * coloured on a blue-green-yellow-red ramp by its height (or intensity)
 * mapped from [lo, hi] to [0, 1] and clamped; empty pixels are black.
 * Non-finite points are skipped. rgb[size*size*3]; *drawn (may be NULL):
 * points inside the square. Allocates a size*size height buffer. */
sensim_status sensim_render_bev(const float *xyzi, size_t n, double extent, int size, sensim_bev_color by,
                                double lo, double hi, uint8_t *rgb, size_t *drawn);
/* The ramp: v in [0, 1] (clamped) to 8-bit RGB. */
void sensim_bev_ramp(double v, uint8_t rgb[3]);

/* ---- camera ---- */

typedef enum sensim_render_lens {
    SENSIM_RENDER_LENS_PINHOLE = 0,
    SENSIM_RENDER_LENS_FOV,    /* seed 000 eqs. 1-2 */
    SENSIM_RENDER_LENS_RADTAN, /* OpenCV radial-tangential, from `optics` (sensim/camera.h) */
    SENSIM_RENDER_LENS_KB      /* Kannala-Brandt fisheye (cv::fisheye), from `optics` */
} sensim_render_lens;

/* A camera's depth image (sensim_render_camera_render_images). */
typedef enum sensim_render_depth {
    SENSIM_RENDER_DEPTH_NONE = 0,
    SENSIM_RENDER_DEPTH_Z,    /* along the optical axis, as ROS REP 118 depth images */
    SENSIM_RENDER_DEPTH_RANGE /* along the pixel's ray, from the camera centre */
} sensim_render_depth;

typedef struct sensim_render_camera_params {
    /* Ray caster (EMBREE or TWIN; the scene prepared for it); default
     * EMBREE. */
    sensim_render_backend backend;
    int width, height;
    double hfov; /* rad, full horizontal field of view (PINHOLE, FOV) */
    sensim_render_lens lens;
    /* RADTAN and KB: intrinsics fx, fy, cx, cy and coefficients k, p1, p2
     * (OpenCV's pixel convention; sensim_lens); its model, width and height
     * are taken from lens, width and height. */
    sensim_lens optics;
    int samples;      /* per pixel, random position in the pixel and time in the exposure */
    double exposure;  /* s; 0 for an instant */
    int shadows;      /* cast shadow rays to the sun */
    /* Images beside the colour (sensim_render_log writes them as the
     * group's depth and segmentation datasets). */
    sensim_render_depth depth;
    int segmentation;
    uint64_t seed;
    uint32_t sensor;  /* sensor id for the random streams */
    /* Noise hook: applied to each rendered frame (linear RGB) before it is
     * returned; the camera noise models live elsewhere. NULL: none. */
    sensim_status (*noise)(void *user, float *rgb, int width, int height, uint64_t frame);
    void *noise_user;
} sensim_render_camera_params;

/* 640x480, 90 deg, pinhole, 1 sample, no exposure, shadows on, seed 0. */
sensim_render_camera_params sensim_render_camera_default_params(void);

typedef struct sensim_render_camera sensim_render_camera;
sensim_render_camera *sensim_render_camera_create(const sensim_render_camera_params *p);
void sensim_render_camera_destroy(sensim_render_camera *c);
const sensim_render_camera_params *sensim_render_camera_params_of(const sensim_render_camera *c);
/* Unit ray direction in the camera frame through image point (px, py)
 * (pixels, origin top-left corner, px in [0, width]). RADTAN and KB:
 * sensim_lens_pixel_to_dir's (Newton) inverse, turned from the optical
 * frame (z forward, x right, y down) into the sensor frame. */
sensim_vec3 sensim_render_camera_direction(const sensim_render_camera *c, double px, double py);

/* Renders frame `frame` with the exposure starting at t: rgb[height*width*3]
 * linear radiance (row-major, top row first). Random streams keyed by
 * (seed, sensor, stream) and indexed by (frame, pixel, sample). */
sensim_status sensim_render_camera_render(const sensim_render_camera *c, const sensim_scene *s, sensim_pose_fn pose,
                                   const void *pose_user, double t, uint64_t frame, float *rgb);
/* The same, with the depth (metres, as p.depth says; Z when it is NONE) and
 * the segmentation (the scene object hit, as a lidar's `object`;
 * SENSIM_RENDER_NO_OBJECT for the sky) of each pixel's first sample (the
 * pixel's centre when samples is 1) into depth[height*width] and
 * object[height*width], each skipped when NULL. The sky's depth is
 * +infinity; depth is geometric (fog does not shorten it). */
sensim_status sensim_render_camera_render_images(const sensim_render_camera *c, const sensim_scene *s,
                                                 sensim_pose_fn pose, const void *pose_user, double t, uint64_t frame,
                                                 float *rgb, float *depth, uint32_t *object);
/* Linear [0, 1] to 8 bits with the sRGB transfer curve, clamped. */
void sensim_image_to_u8(const float *in, size_t n, uint8_t *out);

/* ---- sensors of a scene file ---- */

typedef enum sensim_render_sensor_type {
    SENSIM_SENSOR_LIDAR = 1,
    SENSIM_SENSOR_CAMERA
} sensim_render_sensor_type;

typedef struct sensim_render_sensor {
    char name[64];
    sensim_render_sensor_type type;
    double rate_hz;     /* scans or frames per second */
    sensim_pose mount;  /* sensor pose in the body frame */
    uint64_t seed;      /* the sensor's seed (or the file's) */
    sensim_render_lidar_params lidar;
    sensim_render_camera_params camera;
} sensim_render_sensor;

/* Reads sensor `name` from the `sensors:` list of a scene file (type lidar
 * or camera, a mount, and the parameters; see sensim-render(1)). The
 * parameters are validated. Errors name the file, line and key. */
sensim_status sensim_render_sensor_load(const char *path, const char *name, sensim_render_sensor *out);

/* ---- rendering a trajectory into a log (what sensim render does) ---- */

typedef struct sensim_render_log_opts {
    double start, end;  /* s: the first scan/frame starts at `start`, none ends
                           after `end` (NAN: the ground truth's first / last
                           time; outside the ground truth is an error) */
    uint64_t count;     /* at most this many scans/frames; 0: no limit */
    /* Ray caster for every scan/frame (the sensor's own setting is
     * replaced); the scene must be prepared for it
     * (sensim_scene_prepare_backend). Default EMBREE. */
    sensim_render_backend backend;
    /* Only frames [frames_first, frames_end) of the run, counted from 0
     * (frames_end 0: to the last); with shard_count > 0, only part
     * shard_index of shard_count contiguous parts of those (sizes differ by at
     * most one, sensim_shard_split). Either makes the output a shard of kind
     * "rows" (sensim/stitch.h: shard attributes on /, the ground truth shared)
     * that sensim_stitch joins; the frames are bit for bit those of the whole
     * run. A lidar with a rig cannot be split (its noise is indexed by the
     * point's row in the clean log, unknown to a shard): EINVAL. */
    uint64_t frames_first, frames_end;
    int64_t shard_index, shard_count;
    int as_float;       /* camera: linear f32 images instead of sRGB u8 */
    size_t gt_window;   /* ground-truth rows held at a time (at least 2;
                           grows to one frame's rows); the output does not
                           depend on it */
    int have_seed;      /* with a rig: draw its noise from `seed` ... */
    uint64_t seed;      /* ... instead of the rig's seed */
    /* Also written, when not NULL (directories created if missing): each
     * scan as DIR/NAME_NNNNN.ply, each frame as DIR/NAME_NNNNN.png, each
     * scan's bird's-eye view (bev_extent m, bev_size px, bev_color) as
     * DIR/NAME_NNNNN.png. */
    const char *ply_dir, *png_dir, *bev_dir;
    double bev_extent;
    int bev_size;
    sensim_bev_color bev_color;
    /* Recorded in the output: created_by (NULL: "sensim render"), the
     * group's `scene` attribute (NULL: none) and, with a rig, `noise_rig`
     * (NULL: "rig"), which also names the rig in errors. */
    const char *created_by, *scene_path, *rig_path;
    /* Progress: ("scans" or "frames", fraction done) after each; NULL: none. */
    sensim_progress_fn progress;
    void *progress_ctx;
} sensim_render_log_opts;

/* start and end NAN, count 0, u8 images, gt_window 65536, the rig's seed,
 * no extra files, bev 40 m / 512 px / height, no progress, the Embree
 * backend. */
sensim_render_log_opts sensim_render_log_default_opts(void);

/* Renders scene sensor `sensor` (its type, rate, mount and parameters; from
 * sensim_render_sensor_load) of `scene` (committed) along the ground truth of
 * the log at gt_path and writes out_path (atomically; nothing is left behind
 * on failure): /ground_truth copied and /sensors/NAME in the layout of
 * sensim(1). A lidar's scan k starts at sample time k of its timing and its
 * beams are cast from the pose at their own fire times; a camera's samples
 * at random times in the exposure. Poses come from the ground truth's one
 * interpolation (sensim/gt.h) with the sensor's mount.
 *
 * Per scan: t (delivery: the end of the scan or exposure plus the lag, kept
 * increasing), t_sample (true start), t_sensor (the sensor clock's stamp),
 * all s; per point of a lidar: points [x y z intensity] (m), range (m),
 * azimuth and elevation (rad), channel, return_index, time_offset (s from
 * t_sample), object (the hit's scene object, 4294967295 for the air),
 * reflectivity, and scan_offset [scans + 1]; a camera's image [N,H,W,3].
 *
 * rig (may be NULL: noise-free, no lag): its sensor of the same name, of
 * the same type, without a lens of its own and at the scene's rate (or none),
 * gives the noise and the timing (clock, start delay, lag, jitter) exactly as
 * sensim_rig_inject would draw them on the clean log. scene, sensor and rig
 * are borrowed for the call. Errors: EINVAL (start/end outside the ground
 * truth, no whole frame in the span, a rig sensor that does not fit, bev_dir
 * for a camera), the ground truth's (file, dataset, row), ENOSPC-style guard
 * errors before anything is written (sensim/guard.h), I/O. */
sensim_status sensim_render_log(const sensim_render_sensor *sensor, const sensim_scene *scene, const sensim_rig *rig,
                                const sensim_render_log_opts *opts, const char *gt_path, const char *out_path);

/* Whether the CUDA backend can run on this machine: SENSIM_OK when the
 * NVIDIA driver's libcuda.so.1 (no CUDA toolkit is needed; the environment
 * variable SENSIM_LIBCUDA names another file) loads, device 0 answers, this
 * build holds the kernels' PTX (clang-16 present at build time) and the
 * device's arithmetic gives the CPU's bits on a probe of products, sums,
 * quotients, roots and subnormals; then, if info is not NULL, "DEVICE NAME,
 * sm_XY" (the PTX target loaded) is written to it (at most len bytes).
 * Otherwise SENSIM_EUNSUPPORTED (SENSIM_EINTERNAL when the driver fails)
 * with the reason as the message: "cuda: libcuda.so.1 not found (the NVIDIA
 * driver is needed; no CUDA toolkit)". */
sensim_status sensim_render_cuda_probe(char *info, size_t len);

#ifdef __cplusplus
}
#endif
#endif
