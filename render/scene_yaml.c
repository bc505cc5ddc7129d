/* Scene files (YAML): materials, meshes (files or primitives), objects
 * (static, repeated, keyframed), sun, ambient light, atmosphere, and the
 * lidar and camera sensors under `sensors:`. Every error names the file and
 * line (and key) through the YAML tree's node positions. Unknown keys are
 * errors. See man/sensim-render.1 for the format. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_internal.h"
#include "sensim/rng.h"
#include "sensim/yaml.h"

/* Reads position [3] and orientation [4] (w, x, y, z; normalized) from a
 * mapping that may also hold other keys; both optional. */
static sensim_status read_pose(const sensim_ynode *map, sensim_pose *out)
{
    double p[3] = {0, 0, 0}, q[4] = {1, 0, 0, 0};
    SENSIM_TRY(sensim_ynode_get_vector(map, "position", SENSIM_DIM_LENGTH, 0, 3, p));
    SENSIM_TRY(sensim_ynode_get_vector(map, "orientation", SENSIM_DIM_NONE, 0, 4, q));
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(n > 1e-9) || !isfinite(n))
        return sensim_ynode_error(sensim_ynode_get(map, "orientation"), SENSIM_EINVAL,
                                  "key 'orientation': not a usable quaternion (w, x, y, z)");
    /* yaw (about +z), a convenience for placing objects on the ground. */
    double yaw = 0;
    SENSIM_TRY(sensim_ynode_get_quantity(map, "yaw", SENSIM_DIM_ANGLE, 0, &yaw));
    sensim_quat qq = sensim_quat_make(q[0] / n, q[1] / n, q[2] / n, q[3] / n);
    out->q = sensim_quat_normalize(sensim_quat_mul(sensim_quat_axis_angle(sensim_vec3_make(0, 0, 1), yaw), qq));
    out->p = sensim_vec3_make(p[0], p[1], p[2]);
    return SENSIM_OK;
}

/* The last error (a scene call's) prefixed with node n's file and line. */
static sensim_status at_node(const sensim_ynode *n)
{
    return sensim_error_prefix(sensim_last_status(), "%s:%d", sensim_ynode_file(n), sensim_ynode_line(n));
}

static sensim_status get_int_range(const sensim_ynode *map, const char *key, int required, long long lo,
                                   long long hi, int *out)
{
    long long v = *out;
    if (!sensim_ynode_get(map, key) && !required)
        return SENSIM_OK;
    SENSIM_TRY(sensim_ynode_get_int(map, key, required, &v));
    if (v < lo || v > hi)
        return sensim_ynode_error(sensim_ynode_get(map, key), SENSIM_EINVAL, "key '%s': must be %lld..%lld (got %lld)",
                                  key, lo, hi, v);
    *out = (int)v;
    return SENSIM_OK;
}

static sensim_status load_material(sensim_scene *s, const sensim_ynode *n)
{
    static const char *const keys[] = {"name", "reflectance", "albedo", "brdf", "ior", "specular_roughness",
                                       "diffuse_roughness", NULL};
    SENSIM_TRY(sensim_ynode_check_keys(n, "material", keys));
    sensim_material m = sensim_material_default();
    const char *name = NULL, *brdf = "lambert";
    SENSIM_TRY(sensim_ynode_get_string(n, "name", 1, &name));
    if (strlen(name) >= sizeof m.name)
        return sensim_ynode_error(n, SENSIM_EINVAL, "material name '%s' too long", name);
    snprintf(m.name, sizeof m.name, "%s", name);
    SENSIM_TRY(sensim_ynode_get_quantity_range(n, "reflectance", SENSIM_DIM_NONE, 0, 0, 1, &m.reflectance));
    const sensim_ynode *alb = sensim_ynode_get(n, "albedo");
    if (alb && sensim_ynode_kind_of(alb) == SENSIM_YNODE_SCALAR) {
        SENSIM_TRY(sensim_ynode_as_quantity(alb, "albedo", SENSIM_DIM_NONE, &m.albedo[0]));
        m.albedo[1] = m.albedo[2] = m.albedo[0];
    } else {
        SENSIM_TRY(sensim_ynode_get_vector(n, "albedo", SENSIM_DIM_NONE, 0, 3, m.albedo));
    }
    SENSIM_TRY(sensim_ynode_get_string(n, "brdf", 0, &brdf));
    if (strcmp(brdf, "lambert") == 0)
        m.brdf = SENSIM_BRDF_LAMBERT;
    else if (strcmp(brdf, "retro") == 0)
        m.brdf = SENSIM_BRDF_RETRO;
    else if (strcmp(brdf, "surface") == 0)
        m.brdf = SENSIM_BRDF_SURFACE;
    else
        return sensim_ynode_error(sensim_ynode_get(n, "brdf"), SENSIM_EINVAL,
                                  "key 'brdf': unknown '%s' (expected lambert, retro or surface)", brdf);
    /* The surface keys: ior (n or [n, k]), specular_roughness (Beckmann
     * sigma), diffuse_roughness (Oren-Nayar sigma, an angle). */
    const sensim_ynode *ior = sensim_ynode_get(n, "ior");
    static const char *const skeys[] = {"ior", "specular_roughness", "diffuse_roughness"};
    for (int i = 0; i < 3; i++)
        if (m.brdf != SENSIM_BRDF_SURFACE && sensim_ynode_get(n, skeys[i]))
            return sensim_ynode_error(sensim_ynode_get(n, skeys[i]), SENSIM_EINVAL,
                                      "key '%s': only for brdf: surface", skeys[i]);
    if (ior && sensim_ynode_kind_of(ior) == SENSIM_YNODE_SCALAR) {
        SENSIM_TRY(sensim_ynode_as_quantity(ior, "ior", SENSIM_DIM_NONE, &m.ior));
        m.ior_k = 0;
    } else if (ior) {
        double nk[2];
        SENSIM_TRY(sensim_ynode_get_vector(n, "ior", SENSIM_DIM_NONE, 1, 2, nk));
        m.ior = nk[0];
        m.ior_k = nk[1];
    }
    SENSIM_TRY(sensim_ynode_get_quantity_range(n, "specular_roughness", SENSIM_DIM_NONE, 0, 1e-6, 10, &m.specular_roughness));
    SENSIM_TRY(sensim_ynode_get_quantity_range(n, "diffuse_roughness", SENSIM_DIM_ANGLE, 0, 0, M_PI / 2,
                                        &m.diffuse_roughness));
    if (sensim_scene_add_material(s, &m) < 0)
        return at_node(n);
    return SENSIM_OK;
}

/* A path of a scene file's key: as given when absolute (or when the scene
 * file has no directory part), else relative to the scene file's directory. */
static void relative_to(const char *dir, const char *file, char *out, size_t size)
{
    if (file[0] == '/' || !dir[0])
        snprintf(out, size, "%s", file);
    else
        snprintf(out, size, "%s/%s", dir, file);
}

static sensim_status load_mesh(sensim_scene *s, const sensim_ynode *n, const char *dir)
{
    static const char *const keys[] = {"name", "up", "file", "plane", "box", "cylinder", "sphere", "terrain", NULL};
    SENSIM_TRY(sensim_ynode_check_keys(n, "mesh", keys));
    const char *name = NULL, *upk = NULL;
    SENSIM_TRY(sensim_ynode_get_string(n, "name", 1, &name));
    SENSIM_TRY(sensim_ynode_get_string(n, "up", 0, &upk));
    sensim_mesh_up up = SENSIM_MESH_UP_AUTO;
    if (upk && strcmp(upk, "y") == 0)
        up = SENSIM_MESH_UP_Y;
    else if (upk && strcmp(upk, "z") == 0)
        up = SENSIM_MESH_UP_Z;
    else if (upk)
        return sensim_ynode_error(sensim_ynode_get(n, "up"), SENSIM_EINVAL, "key 'up': unknown '%s' (expected y or z)",
                                  upk);
    if (sensim_scene_find_mesh(s, name) >= 0)
        return sensim_ynode_error(n, SENSIM_EINVAL, "mesh '%s' defined twice", name);
    int kinds = 0;
    for (int i = 2; keys[i]; i++)
        kinds += sensim_ynode_get(n, keys[i]) != NULL;
    if (kinds != 1)
        return sensim_ynode_error(n, SENSIM_EINVAL, "mesh '%s': give exactly one of file, plane, box, cylinder, "
                                  "sphere, terrain", name);
    int id = -1;
    const sensim_ynode *g;
    const char *file = NULL;
    SENSIM_TRY(sensim_ynode_get_string(n, "file", 0, &file));
    if (upk && !file)
        return sensim_ynode_error(sensim_ynode_get(n, "up"), SENSIM_EINVAL, "key 'up': only for a mesh file");
    if (file) {
        char path[4096];
        relative_to(dir, file, path, sizeof path);
        id = sensim_scene_load_mesh_up(s, name, path, up);
    } else if ((g = sensim_ynode_get(n, "plane")) || (g = sensim_ynode_get(n, "terrain"))) {
        static const char *const pk[] = {"size", "cells", "amplitude", NULL};
        int terrain = sensim_ynode_get(n, "terrain") != NULL;
        SENSIM_TRY(sensim_ynode_check_keys(g, terrain ? "terrain" : "plane", pk));
        double size[2], cells[2] = {1, 1}, amp = 0;
        SENSIM_TRY(sensim_ynode_get_vector(g, "size", SENSIM_DIM_LENGTH, 1, 2, size));
        SENSIM_TRY(sensim_ynode_get_vector(g, "cells", SENSIM_DIM_NONE, 0, 2, cells));
        SENSIM_TRY(sensim_ynode_get_quantity(g, "amplitude", SENSIM_DIM_LENGTH, 0, &amp));
        if (!terrain && amp != 0)
            return sensim_ynode_error(g, SENSIM_EINVAL, "plane: use terrain for a non-zero amplitude");
        if (!(cells[0] >= 1 && cells[1] >= 1 && cells[0] <= 1e5 && cells[1] <= 1e5))
            return sensim_ynode_error(g, SENSIM_EINVAL, "key 'cells': need 1..100000 cells each way");
        /* Two triangles a cell: a bound on the total before allocating
         * (2^26 cells: 1.6 GB of vertices and triangles). */
        if (floor(cells[0]) * floor(cells[1]) > (double)(1 << 26))
            return sensim_ynode_error(g, SENSIM_EINVAL, "key 'cells': %.0f x %.0f cells; at most %d in all",
                                      floor(cells[0]), floor(cells[1]), 1 << 26);
        id = sensim_scene_add_terrain(s, name, size[0], size[1], (int)cells[0], (int)cells[1], amp);
    } else if ((g = sensim_ynode_get(n, "box"))) {
        static const char *const bk[] = {"size", NULL};
        SENSIM_TRY(sensim_ynode_check_keys(g, "box", bk));
        double size[3];
        SENSIM_TRY(sensim_ynode_get_vector(g, "size", SENSIM_DIM_LENGTH, 1, 3, size));
        id = sensim_scene_add_box(s, name, size[0], size[1], size[2]);
    } else if ((g = sensim_ynode_get(n, "cylinder"))) {
        static const char *const ck[] = {"radius", "height", "segments", NULL};
        SENSIM_TRY(sensim_ynode_check_keys(g, "cylinder", ck));
        double r, h;
        int seg = 32;
        SENSIM_TRY(sensim_ynode_get_quantity(g, "radius", SENSIM_DIM_LENGTH, 1, &r));
        SENSIM_TRY(sensim_ynode_get_quantity(g, "height", SENSIM_DIM_LENGTH, 1, &h));
        SENSIM_TRY(get_int_range(g, "segments", 0, 3, 1000000, &seg));
        id = sensim_scene_add_cylinder(s, name, r, h, seg);
    } else if ((g = sensim_ynode_get(n, "sphere"))) {
        static const char *const sk[] = {"radius", "segments", NULL};
        SENSIM_TRY(sensim_ynode_check_keys(g, "sphere", sk));
        double r;
        int seg = 32;
        SENSIM_TRY(sensim_ynode_get_quantity(g, "radius", SENSIM_DIM_LENGTH, 1, &r));
        SENSIM_TRY(get_int_range(g, "segments", 0, 4, 8192, &seg)); /* ~seg^2 triangles */
        id = sensim_scene_add_sphere(s, name, r, seg);
    }
    if (id < 0)
        return sensim_error_prefix(sensim_last_status(), "%s:%d: mesh '%s'", sensim_ynode_file(n),
                                   sensim_ynode_line(n), name);
    return SENSIM_OK;
}

static sensim_status enum_key(const sensim_ynode *n, const char *key, const char *const *names, int *out);

/* `scale:` of an object: one factor for all axes or [sx, sy, sz], each > 0. */
static sensim_status read_scale(const sensim_ynode *n, double k[3])
{
    k[0] = k[1] = k[2] = 1;
    const sensim_ynode *v = sensim_ynode_get(n, "scale");
    if (!v)
        return SENSIM_OK;
    if (sensim_ynode_kind_of(v) == SENSIM_YNODE_SEQUENCE)
        SENSIM_TRY(sensim_ynode_get_vector(n, "scale", SENSIM_DIM_NONE, 1, 3, k));
    else {
        SENSIM_TRY(sensim_ynode_get_quantity(n, "scale", SENSIM_DIM_NONE, 1, &k[0]));
        k[1] = k[2] = k[0];
    }
    for (int i = 0; i < 3; i++)
        if (!(k[i] > 0 && k[i] <= 1e6))
            return sensim_ynode_error(v, SENSIM_EINVAL, "key 'scale': factors must be in (0, 1e6] (got %g)", k[i]);
    return SENSIM_OK;
}

/* Applies the object's scale to object i, naming the object's line. */
static sensim_status scale_object(sensim_scene *s, const sensim_ynode *n, int i, const double k[3])
{
    if (i < 0)
        return at_node(n);
    if ((k[0] != 1 || k[1] != 1 || k[2] != 1) && sensim_scene_set_object_scale(s, i, k[0], k[1], k[2]))
        return at_node(n);
    return SENSIM_OK;
}

static sensim_status load_object(sensim_scene *s, const sensim_ynode *n)
{
    static const char *const keys[] = {"mesh", "material", "position", "orientation", "yaw",
                                       "repeat", "keyframes", "motion_steps", "scale", NULL};
    SENSIM_TRY(sensim_ynode_check_keys(n, "object", keys));
    const char *mesh = NULL, *mat = "default";
    SENSIM_TRY(sensim_ynode_get_string(n, "mesh", 1, &mesh));
    SENSIM_TRY(sensim_ynode_get_string(n, "material", 0, &mat));
    int mi = sensim_scene_find_mesh(s, mesh);
    if (mi < 0)
        return sensim_ynode_error(sensim_ynode_get(n, "mesh"), SENSIM_ENOTFOUND, "unknown mesh '%s'", mesh);
    int ma = sensim_scene_find_material(s, mat);
    if (ma < 0)
        return sensim_ynode_error(sensim_ynode_get(n, "material"), SENSIM_ENOTFOUND, "unknown material '%s'", mat);
    double k[3];
    SENSIM_TRY(read_scale(n, k));
    const sensim_ynode *kf = sensim_ynode_get(n, "keyframes");
    if (kf) {
        if (sensim_ynode_get(n, "repeat") || sensim_ynode_get(n, "position") || sensim_ynode_get(n, "orientation"))
            return sensim_ynode_error(n, SENSIM_EINVAL, "object: keyframes exclude position, orientation and repeat");
        if (sensim_ynode_kind_of(kf) != SENSIM_YNODE_SEQUENCE || sensim_ynode_size(kf) < 2)
            return sensim_ynode_error(kf, SENSIM_EINVAL, "key 'keyframes': need a list of at least 2 keyframes");
        size_t nk = sensim_ynode_size(kf);
        double *t = malloc(nk * sizeof *t);
        sensim_pose *p = malloc(nk * sizeof *p);
        sensim_status st = (!t || !p) ? sensim_error(SENSIM_ENOMEM, "out of memory") : SENSIM_OK;
        static const char *const kk[] = {"t", "position", "orientation", "yaw", NULL};
        for (size_t i = 0; i < nk && !st; i++) {
            const sensim_ynode *k = sensim_ynode_item(kf, i);
            if (!(st = sensim_ynode_check_keys(k, "keyframe", kk)) &&
                !(st = sensim_ynode_get_quantity(k, "t", SENSIM_DIM_TIME, 1, &t[i])) && !(st = read_pose(k, &p[i])) &&
                i > 0 && !(t[i] > t[i - 1]))
                st = sensim_ynode_error(k, SENSIM_EINVAL, "keyframe times must increase");
        }
        int steps = 0;
        if (!st)
            st = get_int_range(n, "motion_steps", 0, 2, 129, &steps);
        if (!st)
            st = scale_object(s, n, sensim_scene_add_moving_object(s, mi, ma, t, p, nk, steps), k);
        free(t);
        free(p);
        return st;
    }
    sensim_pose pose = sensim_pose_identity();
    SENSIM_TRY(read_pose(n, &pose));
    int count = 1;
    double step[3] = {0, 0, 0};
    const sensim_ynode *rep = sensim_ynode_get(n, "repeat");
    if (rep) {
        static const char *const rk[] = {"count", "step", NULL};
        SENSIM_TRY(sensim_ynode_check_keys(rep, "repeat", rk));
        SENSIM_TRY(get_int_range(rep, "count", 1, 1, 1000000, &count));
        SENSIM_TRY(sensim_ynode_get_vector(rep, "step", SENSIM_DIM_LENGTH, 1, 3, step));
    }
    for (int i = 0; i < count; i++) {
        sensim_pose pi = pose;
        pi.p = sensim_vec3_add(pose.p, sensim_vec3_make(step[0] * i, step[1] * i, step[2] * i));
        SENSIM_TRY(scale_object(s, n, sensim_scene_add_object(s, mi, ma, pi), k));
    }
    return SENSIM_OK;
}

/* The map `name` of root holding the unitless 3-vectors keys[0] and
 * keys[1] (each kept as given when absent): *n the map, NULL (a and b
 * untouched) when root has none. */
static sensim_status get_vector_pair(const sensim_ynode *root, const char *name, const char *const keys[3], double a[3],
                                     double b[3], const sensim_ynode **n)
{
    if (!(*n = sensim_ynode_get(root, name)))
        return SENSIM_OK;
    SENSIM_TRY(sensim_ynode_check_keys(*n, name, keys));
    SENSIM_TRY(sensim_ynode_get_vector(*n, keys[0], SENSIM_DIM_NONE, 0, 3, a));
    return sensim_ynode_get_vector(*n, keys[1], SENSIM_DIM_NONE, 0, 3, b);
}

static sensim_status load_lights(sensim_scene *s, const sensim_ynode *root)
{
    static const char *const sun_keys[] = {"direction", "irradiance", NULL};
    static const char *const ambient_keys[] = {"light", "sky", NULL};
    double d[3] = {0, 0, 1}, irr[3] = {1, 1, 1}, a[3] = {0.2, 0.2, 0.2}, sky[3] = {0.6, 0.6, 0.6};
    const sensim_ynode *n;
    SENSIM_TRY(get_vector_pair(root, "sun", sun_keys, d, irr, &n));
    if (n && sensim_scene_set_sun(s, sensim_vec3_make(d[0], d[1], d[2]), irr))
        return at_node(n);
    SENSIM_TRY(get_vector_pair(root, "ambient", ambient_keys, a, sky, &n));
    if (n && sensim_scene_set_ambient(s, a, sky))
        return at_node(n);
    if ((n = sensim_ynode_get(root, "atmosphere"))) {
        static const char *const k[] = {"extinction", "visibility", "returns", NULL};
        SENSIM_TRY(sensim_ynode_check_keys(n, "atmosphere", k));
        double a = 0, vis = 0;
        const sensim_ynode *ext = sensim_ynode_get(n, "extinction"), *vn = sensim_ynode_get(n, "visibility");
        if (ext && vn)
            return sensim_ynode_error(vn, SENSIM_EINVAL, "atmosphere: give extinction or visibility, not both");
        if (!ext && !vn)
            return sensim_ynode_error(n, SENSIM_ENOTFOUND, "atmosphere: missing key 'extinction' or 'visibility'");
        if (ext) {
            SENSIM_TRY(sensim_ynode_get_quantity_range(n, "extinction", SENSIM_DIM_NONE, 1, 0, INFINITY, &a));
            SENSIM_TRY(sensim_scene_set_atmosphere(s, a));
        } else {
            /* Koschmieder and Kim et al. (2001); see sensim_visibility_extinction. */
            SENSIM_TRY(sensim_ynode_get_quantity_range(n, "visibility", SENSIM_DIM_LENGTH, 1, 1e-3, 1e9, &vis));
            SENSIM_TRY(sensim_scene_set_visibility(s, vis));
        }
        const sensim_ynode *r = sensim_ynode_get(n, "returns");
        if (r) {
            /* Seed 002 eq. 14: probability, gamma shape k and scale theta. */
            static const char *const rk[] = {"probability", "shape", "scale", "reflectance", NULL};
            double p = 0, shape = 0, scale = 0, rho = 0.1;
            SENSIM_TRY(sensim_ynode_check_keys(r, "atmosphere returns", rk));
            SENSIM_TRY(sensim_ynode_get_quantity_range(r, "probability", SENSIM_DIM_NONE, 1, 0, 1, &p));
            SENSIM_TRY(sensim_ynode_get_quantity_range(r, "shape", SENSIM_DIM_NONE, 1, 1e-9, 1e6, &shape));
            SENSIM_TRY(sensim_ynode_get_quantity_range(r, "scale", SENSIM_DIM_LENGTH, 1, 1e-9, 1e6, &scale));
            SENSIM_TRY(sensim_ynode_get_quantity_range(r, "reflectance", SENSIM_DIM_NONE, 0, 0, 1, &rho));
            if (sensim_scene_set_atmospheric_returns(s, p, shape, scale, rho))
                return at_node(r);
        }
    }
    return SENSIM_OK;
}

/* A precipitation rate: a plain number is mm/h (as weather services give
 * it), or a speed with its unit ("10 mm/h"). */
static sensim_status get_rate(const sensim_ynode *n, const char *key, double hi, double *out)
{
    const sensim_ynode *v = sensim_ynode_get(n, key);
    const char *text = NULL;
    char *end;
    if (!v)
        return SENSIM_OK;
    SENSIM_TRY(sensim_ynode_get_string(n, key, 1, &text));
    double x = strtod(text, &end);
    while (end != text && (*end == ' ' || *end == '\t'))
        end++;
    if (end == text || *end) {
        SENSIM_TRY(sensim_ynode_get_quantity(n, key, SENSIM_DIM_VELOCITY, 1, &x));
        x *= 3.6e6; /* m/s to mm/h */
    }
    if (!(x >= 0 && x <= hi))
        return sensim_ynode_error(v, SENSIM_EINVAL, "weather: key '%s': must be 0..%g mm/h (got %g mm/h)", key, hi, x);
    *out = x;
    return SENSIM_OK;
}

/* `weather:` rain and snow (weather.c; sensim-render(1)). */
static sensim_status load_weather(sensim_scene *s, const sensim_ynode *root)
{
    static const char *const k[] = {"rain_rate",        "snow_rate",  "snow_temperature", "rain_reflectance",
                                    "snow_reflectance", "extinction", "false_returns",    NULL};
    static const char *const models[] = {"mavs", "dsd", NULL};
    const sensim_ynode *n = sensim_ynode_get(root, "weather");
    if (!n)
        return SENSIM_OK;
    SENSIM_TRY(sensim_ynode_check_keys(n, "weather", k));
    if (!sensim_ynode_get(n, "rain_rate") && !sensim_ynode_get(n, "snow_rate"))
        return sensim_ynode_error(n, SENSIM_ENOTFOUND, "weather: missing key 'rain_rate' or 'snow_rate'");
    sensim_weather w = sensim_weather_default();
    int model = (int)w.extinction;
    SENSIM_TRY(get_rate(n, "rain_rate", 500, &w.rain_rate));
    SENSIM_TRY(get_rate(n, "snow_rate", 50, &w.snow_rate));
    SENSIM_TRY(sensim_ynode_get_quantity_range(n, "snow_temperature", SENSIM_DIM_NONE, 0, -60, 10, &w.snow_temperature));
    SENSIM_TRY(sensim_ynode_get_quantity_range(n, "rain_reflectance", SENSIM_DIM_NONE, 0, 0, 1, &w.rain_reflectance));
    SENSIM_TRY(sensim_ynode_get_quantity_range(n, "snow_reflectance", SENSIM_DIM_NONE, 0, 0, 1, &w.snow_reflectance));
    SENSIM_TRY(enum_key(n, "extinction", models, &model));
    SENSIM_TRY(sensim_ynode_get_bool(n, "false_returns", 0, &w.false_returns));
    w.extinction = (sensim_weather_extinction_model)model;
    if (sensim_scene_set_weather(s, &w))
        return at_node(n);
    return SENSIM_OK;
}

static sensim_status for_each(const sensim_ynode *root, const char *key, int required,
                              sensim_status (*fn)(sensim_scene *, const sensim_ynode *, const char *), sensim_scene *s,
                              const char *dir)
{
    const sensim_ynode *seq = sensim_ynode_get(root, key);
    if (!seq) {
        if (required)
            return sensim_ynode_error(root, SENSIM_ENOTFOUND, "missing key '%s'", key);
        return SENSIM_OK;
    }
    if (sensim_ynode_kind_of(seq) != SENSIM_YNODE_SEQUENCE)
        return sensim_ynode_error(seq, SENSIM_EFORMAT, "key '%s': expected a list", key);
    for (size_t i = 0; i < sensim_ynode_size(seq); i++)
        SENSIM_TRY(fn(s, sensim_ynode_item(seq, i), dir));
    return SENSIM_OK;
}

static sensim_status mat_cb(sensim_scene *s, const sensim_ynode *n, const char *dir)
{
    (void)dir;
    return load_material(s, n);
}
static sensim_status obj_cb(sensim_scene *s, const sensim_ynode *n, const char *dir)
{
    (void)dir;
    return load_object(s, n);
}

static void dir_of(const char *path, char *dir, size_t size)
{
    snprintf(dir, size, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        dir[0] = 0;
}

sensim_scene *sensim_scene_load(const char *path)
{
    static const char *const keys[] = {"seed", "materials", "meshes", "objects", "sun", "ambient",
                                       "atmosphere", "weather", "sensors", "instancing", NULL};
    static const char *const modes[] = {"auto", "always", "never", NULL};
    sensim_yaml *doc = sensim_yaml_load_file(path);
    if (!doc)
        return NULL;
    const sensim_ynode *root = sensim_yaml_root(doc);
    sensim_scene *s = NULL;
    char dir[4096];
    dir_of(path, dir, sizeof dir);
    if (!root || sensim_ynode_kind_of(root) != SENSIM_YNODE_MAPPING) {
        sensim_error(SENSIM_EFORMAT, "%s: a scene file is a mapping (materials, meshes, objects, ...)", path);
        goto fail;
    }
    if (sensim_ynode_check_keys(root, "scene", keys))
        goto fail;
    s = sensim_scene_create();
    int mode = SENSIM_INSTANCING_AUTO;
    if (!s || enum_key(root, "instancing", modes, &mode) || sensim_scene_set_instancing(s, (sensim_instancing)mode) ||
        for_each(root, "materials", 0, mat_cb, s, dir) || for_each(root, "meshes", 1, load_mesh, s, dir) ||
        for_each(root, "objects", 1, obj_cb, s, dir) || load_lights(s, root) || load_weather(s, root))
        goto fail;
    if (sensim_scene_commit(s)) {
        sensim_error_prefix(sensim_last_status(), "%s", path);
        goto fail;
    }
    sensim_yaml_free(doc);
    return s;
fail:
    sensim_scene_destroy(s);
    sensim_yaml_free(doc);
    return NULL;
}

/* ---- sensors ---- */

static sensim_status enum_key(const sensim_ynode *n, const char *key, const char *const *names, int *out)
{
    const char *v = NULL;
    SENSIM_TRY(sensim_ynode_get_string(n, key, 0, &v));
    if (!v)
        return SENSIM_OK;
    for (int i = 0; names[i]; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return SENSIM_OK;
        }
    char list[256] = "";
    for (int i = 0; names[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
    return sensim_ynode_error(sensim_ynode_get(n, key), SENSIM_EINVAL, "key '%s': unknown '%s' (expected %s)", key, v,
                              list);
}

/* `table:` of a lidar: per-channel lists of the same length (1..256),
 * elevation required, azimuth_offset and time_offset optional (zeros). Each
 * item is a quantity (plain numbers in rad and s, or "1.33 deg", "2.304 us"). */
static sensim_status lidar_table(const sensim_ynode *t, sensim_render_lidar_params *p)
{
    static const char *const tk[] = {"elevation", "azimuth_offset", "time_offset", NULL};
    static const char *const what[] = {"table elevation", "table azimuth_offset", "table time_offset"};
    SENSIM_TRY(sensim_ynode_check_keys(t, "table", tk));
    const sensim_ynode *col[3];
    size_t nch = 0;
    for (int c = 0; c < 3; c++) {
        col[c] = sensim_ynode_get(t, tk[c]);
        if (!col[c]) {
            if (c == 0)
                return sensim_ynode_error(t, SENSIM_EINVAL, "table: missing key 'elevation'");
            continue;
        }
        size_t k = sensim_ynode_size(col[c]);
        if (sensim_ynode_kind_of(col[c]) != SENSIM_YNODE_SEQUENCE || k < 1 || k > SENSIM_RENDER_LIDAR_MAX_CHANNELS)
            return sensim_ynode_error(col[c], SENSIM_EINVAL, "key '%s': a list of 1..%d values, one a channel",
                                      tk[c], SENSIM_RENDER_LIDAR_MAX_CHANNELS);
        if (c == 0)
            nch = k;
        else if (k != nch)
            return sensim_ynode_error(col[c], SENSIM_EINVAL, "key '%s': %zu values for %zu channels (elevation)",
                                      tk[c], k, nch);
    }
    double *dst[3] = {p->elevation, p->azimuth_offset, p->time_offset};
    const sensim_dim dim[3] = {SENSIM_DIM_ANGLE, SENSIM_DIM_ANGLE, SENSIM_DIM_TIME};
    for (int c = 0; c < 3; c++)
        for (size_t k = 0; k < nch; k++) {
            dst[c][k] = 0;
            if (col[c])
                SENSIM_TRY(sensim_ynode_as_quantity(sensim_ynode_item(col[c], k), what[c], dim[c], &dst[c][k]));
        }
    p->channels = (int)nch;
    p->has_table = 1;
    return SENSIM_OK;
}

/* The keys that describe a lidar (all but name, type, mount, seed, preset
 * and definition), applied over *p. */
static sensim_status apply_lidar_keys(const sensim_ynode *n, sensim_render_lidar_params *p)
{
    static const char *const scans[] = {"spin", "rosette", NULL};
    int sk = (int)p->scan;
    SENSIM_TRY(enum_key(n, "scan", scans, &sk));
    if (sk == SENSIM_SCAN_ROSETTE && p->scan != SENSIM_SCAN_ROSETTE)
        p->channels = 1;
    p->scan = (sensim_lidar_scan)sk;
    SENSIM_TRY(sensim_ynode_get_quantity(n, "rosette_fov", SENSIM_DIM_ANGLE, 0, &p->rosette_fov));
    SENSIM_TRY(sensim_ynode_get_vector(n, "rosette_hz", SENSIM_DIM_FREQUENCY, 0, 2, p->rosette_hz));
    double old_rate = p->rate_hz, old_cycle = p->firing_cycle;
    SENSIM_TRY(sensim_ynode_get_quantity_range(n, "rate_hz", SENSIM_DIM_FREQUENCY, 0, 1e-6, 1e6, &p->rate_hz));
    SENSIM_TRY(sensim_ynode_get_quantity_range(n, "firing_cycle", SENSIM_DIM_TIME, 0, 1e-9, 1, &p->firing_cycle));
    if (p->firing_cycle > 0 && (p->rate_hz != old_rate || p->firing_cycle != old_cycle) &&
        !sensim_ynode_get(n, "columns"))
        p->columns = (int)lround(1 / (p->rate_hz * p->firing_cycle));
    const sensim_ynode *table = sensim_ynode_get(n, "table");
    if (table && sensim_ynode_get(n, "channels"))
        return sensim_ynode_error(sensim_ynode_get(n, "channels"), SENSIM_EINVAL,
                                  "key 'channels': a table gives one row a channel; drop 'channels'");
    if (table)
        SENSIM_TRY(lidar_table(table, p));
    else if (sensim_ynode_get(n, "channels")) {
        if (p->has_table)
            return sensim_ynode_error(sensim_ynode_get(n, "channels"), SENSIM_EINVAL,
                                      "key 'channels': a preset with an elevation table fixes the channels");
        SENSIM_TRY(get_int_range(n, "channels", 0, 1, SENSIM_RENDER_LIDAR_MAX_CHANNELS, &p->channels));
    }
    double vf[2] = {p->vfov_min, p->vfov_max};
    SENSIM_TRY(sensim_ynode_get_vector(n, "vfov", SENSIM_DIM_ANGLE, 0, 2, vf));
    p->vfov_min = vf[0];
    p->vfov_max = vf[1];
    SENSIM_TRY(get_int_range(n, "columns", 0, 1, 1000000, &p->columns));
    SENSIM_TRY(sensim_ynode_get_quantity(n, "hfov", SENSIM_DIM_ANGLE, 0, &p->hfov));
    SENSIM_TRY(sensim_ynode_get_quantity(n, "azimuth0", SENSIM_DIM_ANGLE, 0, &p->azimuth0));
    static const char *const dirs[] = {"cw", "ccw", NULL};
    int d = p->direction > 0;
    SENSIM_TRY(enum_key(n, "direction", dirs, &d));
    p->direction = d ? 1 : -1;
    SENSIM_TRY(sensim_ynode_get_quantity(n, "min_range", SENSIM_DIM_LENGTH, 0, &p->min_range));
    SENSIM_TRY(sensim_ynode_get_quantity(n, "max_range", SENSIM_DIM_LENGTH, 0, &p->max_range));
    const sensim_ynode *dv = sensim_ynode_get(n, "divergence");
    if (dv && sensim_ynode_kind_of(dv) == SENSIM_YNODE_SEQUENCE) {
        /* Elliptical: [horizontal, vertical]. */
        double hv[2];
        SENSIM_TRY(sensim_ynode_get_vector(n, "divergence", SENSIM_DIM_ANGLE, 1, 2, hv));
        p->divergence = hv[0];
        p->divergence_v = hv[1];
    } else if (dv) {
        SENSIM_TRY(sensim_ynode_get_quantity(n, "divergence", SENSIM_DIM_ANGLE, 0, &p->divergence));
        p->divergence_v = 0;
    }
    const sensim_ynode *beam = sensim_ynode_get(n, "beam");
    if (beam) {
        static const char *const bk[] = {"pattern", "n", NULL};
        static const char *const pats[] = {"grid", "sunflower", NULL};
        SENSIM_TRY(sensim_ynode_check_keys(beam, "beam", bk));
        int pat = (int)p->pattern;
        SENSIM_TRY(enum_key(beam, "pattern", pats, &pat));
        p->pattern = (sensim_beam_pattern)pat;
        SENSIM_TRY(get_int_range(beam, "n", 0, 1, SENSIM_RENDER_LIDAR_MAX_RAYS, &p->pattern_n));
    }
    static const char *const rets[] = {"strongest", "first", "last", "mean", "dual", NULL};
    int r = (int)p->returns;
    SENSIM_TRY(enum_key(n, "returns", rets, &r));
    p->returns = (sensim_return_mode)r;
    SENSIM_TRY(sensim_ynode_get_quantity(n, "echo_separation", SENSIM_DIM_LENGTH, 0, &p->echo_separation));
    SENSIM_TRY(sensim_ynode_get_quantity(n, "threshold", SENSIM_DIM_NONE, 0, &p->threshold));
    static const char *const fall[] = {"none", "inverse_square", "gaussian_beam", NULL};
    int f = (int)p->falloff;
    SENSIM_TRY(enum_key(n, "falloff", fall, &f));
    p->falloff = (sensim_falloff)f;
    SENSIM_TRY(sensim_ynode_get_quantity(n, "reference_range", SENSIM_DIM_LENGTH, 0, &p->reference_range));
    SENSIM_TRY(sensim_ynode_get_quantity(n, "waist", SENSIM_DIM_LENGTH, 0, &p->waist));
    SENSIM_TRY(sensim_ynode_get_quantity(n, "receiver_radius", SENSIM_DIM_LENGTH, 0, &p->receiver_radius));
    SENSIM_TRY(sensim_ynode_get_quantity(n, "receiver_offset", SENSIM_DIM_LENGTH, 0, &p->receiver_offset));
    SENSIM_TRY(sensim_ynode_get_quantity_range(n, "wavelength", SENSIM_DIM_LENGTH, 0, 200e-9, 20e-6, &p->wavelength));
    return SENSIM_OK;
}

/* Keys of a lidar definition (a data/lidars/ file, or a preset). */
static const char *const lidar_def_keys[] = {
    "rate_hz",   "firing_cycle", "table",     "channels",        "vfov",      "columns",  "hfov",
    "azimuth0",  "direction",    "min_range", "max_range",       "divergence", "beam",    "returns",
    "echo_separation", "threshold", "falloff", "reference_range", "waist",    "receiver_radius",
    "receiver_offset", "wavelength", "scan", "rosette_fov", "rosette_hz", NULL};

/* Reads a lidar definition document (file or embedded preset) over the
 * defaults. */
static sensim_status lidar_definition(sensim_yaml *doc, sensim_render_lidar_params *p)
{
    const sensim_ynode *root = sensim_yaml_root(doc);
    if (!root || sensim_ynode_kind_of(root) != SENSIM_YNODE_MAPPING)
        return sensim_error(SENSIM_EFORMAT, "%s: a lidar definition is a mapping of lidar keys",
                            sensim_yaml_name(doc));
    SENSIM_TRY(sensim_ynode_check_keys(root, "lidar definition", lidar_def_keys));
    *p = sensim_render_lidar_default_params();
    return apply_lidar_keys(root, p);
}

#include "lidar_presets.h"

sensim_status sensim_render_lidar_preset(const char *name, sensim_render_lidar_params *out)
{
    for (int i = 0; lidar_presets[i].name; i++)
        if (strcmp(name, lidar_presets[i].name) == 0) {
            char what[64];
            snprintf(what, sizeof what, "lidar preset %s", name);
            sensim_yaml *doc =
                sensim_yaml_load_string(lidar_presets[i].text, strlen(lidar_presets[i].text), what);
            if (!doc)
                return sensim_last_status();
            sensim_render_lidar_params p;
            sensim_status st = lidar_definition(doc, &p);
            sensim_yaml_free(doc);
            if (!st)
                *out = p;
            return st;
        }
    char list[128] = "";
    for (int i = 0; lidar_presets[i].name; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", lidar_presets[i].name);
    return sensim_error(SENSIM_ENOTFOUND, "lidar preset '%s' unknown (expected one of %s)", name, list);
}

static sensim_status load_lidar(const sensim_ynode *n, const char *dir, sensim_render_lidar_params *p, double *rate)
{
    const char *preset = NULL, *def = NULL;
    SENSIM_TRY(sensim_ynode_get_string(n, "preset", 0, &preset));
    SENSIM_TRY(sensim_ynode_get_string(n, "definition", 0, &def));
    if (preset && def)
        return sensim_ynode_error(n, SENSIM_EINVAL, "lidar: give 'preset' or 'definition', not both");
    *p = sensim_render_lidar_default_params();
    if (preset && sensim_render_lidar_preset(preset, p))
        return at_node(n);
    if (def) {
        char path[4096];
        relative_to(dir, def, path, sizeof path);
        sensim_yaml *doc = sensim_yaml_load_file(path);
        sensim_status st = doc ? lidar_definition(doc, p) : sensim_last_status();
        sensim_yaml_free(doc);
        if (st)
            return sensim_error_prefix(st, "%s:%d: definition", sensim_ynode_file(n), sensim_ynode_line(n));
    }
    SENSIM_TRY(apply_lidar_keys(n, p));
    *rate = p->rate_hz;
    /* Checked here, built when rendered: the tables of a large lidar
     * (channels x columns directions) wait until the output is planned. */
    if (sensim_render_lidar_params_check(p))
        return at_node(n);
    return SENSIM_OK;
}

static sensim_status load_camera(const sensim_ynode *n, sensim_render_camera_params *p, double *rate)
{
    *p = sensim_render_camera_default_params();
    SENSIM_TRY(get_int_range(n, "width", 0, 1, 65536, &p->width));
    SENSIM_TRY(get_int_range(n, "height", 0, 1, 65536, &p->height));
    SENSIM_TRY(sensim_ynode_get_quantity(n, "hfov", SENSIM_DIM_ANGLE, 0, &p->hfov));
    const sensim_ynode *ln = sensim_ynode_get(n, "lens");
    if (ln && sensim_ynode_kind_of(ln) == SENSIM_YNODE_MAPPING) {
        /* A calibrated lens (or pinhole / fov with its hfov), as the rig's
         * lens: mapping reads it (models/lens.c). */
        sensim_lens l = p->optics;
        l.hfov = p->hfov;
        SENSIM_TRY(sensim_lens_from_yaml(ln, &l));
        static const sensim_render_lens kinds[] = {SENSIM_RENDER_LENS_PINHOLE, SENSIM_RENDER_LENS_FOV,
                                                   SENSIM_RENDER_LENS_RADTAN, SENSIM_RENDER_LENS_KB};
        p->lens = kinds[l.model];
        if ((l.model == SENSIM_LENS_RADTAN || l.model == SENSIM_LENS_KB) && sensim_ynode_get(n, "hfov"))
            return sensim_ynode_error(sensim_ynode_get(n, "hfov"), SENSIM_EINVAL,
                                      "key 'hfov': a %s lens's field of view follows from its fx, fy, cx, cy and "
                                      "distortion; remove hfov",
                                      sensim_ynode_scalar(sensim_ynode_get(ln, "model")));
        p->hfov = l.hfov;
        p->optics = l;
    } else {
        static const char *const lenses[] = {"pinhole", "fov", NULL};
        int lens = (int)p->lens;
        SENSIM_TRY(enum_key(n, "lens", lenses, &lens));
        p->lens = (sensim_render_lens)lens;
    }
    SENSIM_TRY(get_int_range(n, "samples", 0, 1, 4096, &p->samples));
    SENSIM_TRY(sensim_ynode_get_quantity(n, "exposure", SENSIM_DIM_TIME, 0, &p->exposure));
    SENSIM_TRY(sensim_ynode_get_bool(n, "shadows", 0, &p->shadows));
    static const char *const depths[] = {"none", "z", "range", NULL};
    int depth = (int)p->depth;
    SENSIM_TRY(enum_key(n, "depth", depths, &depth));
    p->depth = (sensim_render_depth)depth;
    SENSIM_TRY(sensim_ynode_get_bool(n, "segmentation", 0, &p->segmentation));
    *rate = 10;
    SENSIM_TRY(sensim_ynode_get_quantity_range(n, "rate_hz", SENSIM_DIM_FREQUENCY, 0, 1e-6, 1e6, rate));
    sensim_render_camera *c = sensim_render_camera_create(p);
    if (!c)
        return at_node(n);
    sensim_render_camera_destroy(c);
    return SENSIM_OK;
}

sensim_status sensim_render_sensor_load(const char *path, const char *name, sensim_render_sensor *out)
{
    static const char *const lidar_keys[] = {
        "name",       "type",      "mount",   "preset",    "rate_hz",         "channels",  "vfov",
        "columns",    "hfov",      "azimuth0", "direction", "min_range",      "max_range", "divergence",
        "beam",       "returns",   "echo_separation", "threshold", "falloff", "reference_range", "waist",
        "receiver_radius", "receiver_offset", "wavelength", "seed", "definition", "firing_cycle", "table",
        "scan",       "rosette_fov", "rosette_hz", NULL};
    static const char *const cam_keys[] = {"name",    "type", "mount",   "width",        "height",
                                           "hfov",    "lens", "samples", "exposure",     "shadows",
                                           "rate_hz", "seed", "depth",   "segmentation", NULL};
    sensim_yaml *doc = sensim_yaml_load_file(path);
    if (!doc)
        return sensim_last_status();
    const sensim_ynode *root = sensim_yaml_root(doc), *seq = root ? sensim_ynode_get(root, "sensors") : NULL;
    sensim_status st = SENSIM_OK;
    memset(out, 0, sizeof *out);
    uint64_t seed = 0;
    if (root && sensim_ynode_kind_of(root) == SENSIM_YNODE_MAPPING)
        st = sensim_ynode_get_uint64(root, "seed", 0, &seed);
    if (!st && (!seq || sensim_ynode_kind_of(seq) != SENSIM_YNODE_SEQUENCE))
        st = sensim_error(SENSIM_ENOTFOUND, "%s: no 'sensors:' list", path);
    const sensim_ynode *n = NULL;
    for (size_t i = 0; !st && i < sensim_ynode_size(seq); i++) {
        const sensim_ynode *it = sensim_ynode_item(seq, i);
        const char *nm = NULL;
        if ((st = sensim_ynode_get_string(it, "name", 1, &nm)))
            break;
        if (strcmp(nm, name) == 0)
            n = it;
    }
    if (!st && !n)
        st = sensim_error(SENSIM_ENOTFOUND, "%s: no sensor named '%s' under 'sensors:'", path, name);
    const char *type = NULL;
    if (!st)
        st = sensim_ynode_get_string(n, "type", 1, &type);
    if (!st) {
        snprintf(out->name, sizeof out->name, "%s", name);
        out->mount = sensim_pose_identity();
        const sensim_ynode *m = sensim_ynode_get(n, "mount");
        static const char *const mk[] = {"position", "orientation", "yaw", NULL};
        if (m && !(st = sensim_ynode_check_keys(m, "mount", mk)))
            st = read_pose(m, &out->mount);
        if (!st)
            st = sensim_ynode_get_uint64(n, "seed", 0, &seed);
        out->seed = seed;
    }
    if (!st && strcmp(type, "lidar") == 0) {
        out->type = SENSIM_SENSOR_LIDAR;
        char dir[4096];
        dir_of(path, dir, sizeof dir);
        if (!(st = sensim_ynode_check_keys(n, "lidar sensor", lidar_keys)))
            st = load_lidar(n, dir, &out->lidar, &out->rate_hz);
        out->lidar.seed = seed;
        out->lidar.sensor = sensim_rng_sensor_id(name);
    } else if (!st && strcmp(type, "camera") == 0) {
        out->type = SENSIM_SENSOR_CAMERA;
        if (!(st = sensim_ynode_check_keys(n, "camera sensor", cam_keys)))
            st = load_camera(n, &out->camera, &out->rate_hz);
        out->camera.seed = seed;
        out->camera.sensor = sensim_rng_sensor_id(name);
    } else if (!st) {
        st = sensim_ynode_error(sensim_ynode_get(n, "type"), SENSIM_EINVAL,
                                "sensor '%s': type '%s' cannot be rendered (expected lidar or camera)", name, type);
    }
    sensim_yaml_free(doc);
    return st;
}
