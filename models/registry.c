/* The registry of rig sensor types and the rig loader: reads the YAML,
 * checks the keys every sensor carries (name, type, rate_hz, mount,
 * timing) and hands the rest of each mapping to its type's create. The
 * types live in models/, each declared in its model's header, so the table
 * lives here too: lib/ (the rig's timing and the inject driver) sees a type
 * only through its sensim_sensor_type. */
#include "sensim/rig.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/camera.h"
#include "sensim/gnss.h"
#include "sensim/imu.h"
#include "sensim/lidar.h"
#include "sensim/odometer.h"
#include "sensim/rng.h"

#include "model_yaml.h"
#include "../lib/base_internal.h"

/* The registered sensor types. */
static const sensim_sensor_type *const types[] = {
    &sensim_imu_type,
    &sensim_gnss_type,
    &sensim_odometer_type,
    &sensim_encoder_type,
    &sensim_camera_type,
    &sensim_lidar_type,
    NULL,
};

const sensim_sensor_type *sensim_sensor_type_find(const char *type)
{
    for (size_t i = 0; types[i]; i++)
        if (!strcmp(types[i]->type, type))
            return types[i];
    return NULL;
}

static void type_list(char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; types[i] && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? ", " : "", types[i]->type);
}

static const char *const common_keys[] = {"name", "type", "rate_hz", "mount", "timing", NULL};
/* clang-format off */
#define TF(key, dim, lo, hi) {#key, offsetof(sensim_timing, key), &SENSIM_DIM_##dim, lo, hi, 0}
/* clang-format on */
static const my_field timing_fields[] = {TF(lag, TIME, 0, INFINITY),
                                         TF(clock_offset, TIME, -INFINITY, INFINITY),
                                         TF(clock_drift, NONE, -0.1, 0.1),
                                         TF(jitter, TIME, 0, INFINITY),
                                         TF(collection_window, TIME, 0, INFINITY),
                                         TF(start_delay, TIME, 0, INFINITY),
                                         {0}};
#undef TF
static const char *const mount_keys[] = {"position", "orientation", "rpy", NULL};

static sensim_status parse_mount(sensim_sensor *s)
{
    s->mount_position = sensim_vec3_make(0, 0, 0);
    s->mount_orientation = sensim_quat_identity();
    const sensim_ynode *m = sensim_ynode_get(s->node, "mount");
    if (!m)
        return SENSIM_OK;
    sensim_status st = sensim_ynode_check_keys(m, "mount", mount_keys);
    if (st)
        return st;
    double p[3] = {0, 0, 0}, q[4] = {1, 0, 0, 0}, rpy[3] = {0, 0, 0};
    if ((st = sensim_ynode_get_vector(m, "position", SENSIM_DIM_LENGTH, 0, 3, p)))
        return st;
    s->mount_position = sensim_vec3_load(p);
    int has_q = sensim_ynode_get(m, "orientation") != NULL, has_rpy = sensim_ynode_get(m, "rpy") != NULL;
    if (has_q && has_rpy)
        return sensim_ynode_error(m, SENSIM_EINVAL, "mount: give either orientation or rpy, not both");
    if (has_q) {
        if ((st = sensim_ynode_get_vector(m, "orientation", SENSIM_DIM_NONE, 1, 4, q)))
            return st;
        double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (!(fabs(n - 1.0) < 1e-6))
            return sensim_ynode_error(sensim_ynode_get(m, "orientation"), SENSIM_EINVAL,
                                      "key 'mount.orientation': quaternion (w,x,y,z) must have unit norm (has %g)",
                                      n);
        s->mount_orientation = sensim_quat_make(q[0], q[1], q[2], q[3]);
    } else if (has_rpy) {
        /* Roll, pitch, yaw (Z-Y-X), radians, or with a unit ("90 deg"). */
        if ((st = sensim_ynode_get_vector(m, "rpy", SENSIM_DIM_ANGLE, 1, 3, rpy)))
            return st;
        s->mount_orientation = sensim_quat_from_euler(rpy[0], rpy[1], rpy[2]);
    }
    return SENSIM_OK;
}

static sensim_status parse_timing(sensim_sensor *s)
{
    memset(&s->timing, 0, sizeof s->timing);
    const sensim_ynode *t = sensim_ynode_get(s->node, "timing");
    if (!t)
        return SENSIM_OK;
    sensim_status st = my_check_fields(t, "timing", NULL, timing_fields);
    if (!st)
        st = my_get_fields(t, timing_fields, &s->timing);
    return st;
}

/* A name is an HDF5 group under /sensors and a key of random streams: 1 to
 * SENSIM_NAME_MAX - 1 printable ASCII characters without '/', no leading or
 * trailing space, not "." or "..". YAML-special characters (':', '#',
 * quotes) are fine: sensim's YAML writers quote them. */
static int valid_name(const char *n)
{
    size_t len = strlen(n);
    if (!len || len >= SENSIM_NAME_MAX || n[0] == ' ' || n[len - 1] == ' ' || !strcmp(n, ".") || !strcmp(n, ".."))
        return 0;
    for (const char *p = n; *p; p++)
        if (*p < 0x20 || *p > 0x7e || *p == '/')
            return 0;
    return 1;
}

/* earth: true | false | { gravity: normal | standard, rotation: true | false }
 * (a mapping's keys default to normal and true). */
static sensim_status parse_earth(sensim_rig *rig, const sensim_ynode *root)
{
    const sensim_ynode *e = sensim_ynode_get(root, "earth");
    if (!e)
        return SENSIM_OK;
    if (sensim_ynode_kind_of(e) != SENSIM_YNODE_MAPPING) {
        int on = 0;
        sensim_status st = sensim_ynode_get_bool(root, "earth", 1, &on);
        if (st)
            return st;
        rig->earth_gravity = rig->earth_rotation = on;
        return SENSIM_OK;
    }
    static const char *const keys[] = {"gravity", "rotation", NULL};
    sensim_status st = sensim_ynode_check_keys(e, "earth", keys);
    if (st)
        return st;
    const char *g = "normal";
    if ((st = sensim_ynode_get_string(e, "gravity", 0, &g)))
        return st;
    if (strcmp(g, "normal") && strcmp(g, "standard"))
        return sensim_ynode_error(sensim_ynode_get(e, "gravity"), SENSIM_EINVAL,
                                  "key 'gravity': unknown '%s' (expected normal: WGS84 normal gravity at the "
                                  "vehicle, or standard: g0 = 9.80665)",
                                  g);
    rig->earth_gravity = !strcmp(g, "normal");
    rig->earth_rotation = 1;
    return sensim_ynode_get_bool(e, "rotation", 0, &rig->earth_rotation);
}

static sensim_status parse_sensor(sensim_sensor *s, const sensim_ynode *node)
{
    s->node = node;
    if (sensim_ynode_kind_of(node) != SENSIM_YNODE_MAPPING)
        return sensim_ynode_error(node, SENSIM_EINVAL, "a sensor must be a mapping with name and type");
    const char *name = NULL, *type = NULL;
    sensim_status st = sensim_ynode_get_string(node, "name", 1, &name);
    if (!st)
        st = sensim_ynode_get_string(node, "type", 1, &type);
    if (st)
        return st;
    if (!valid_name(name))
        return sensim_ynode_error(sensim_ynode_get(node, "name"), SENSIM_EINVAL,
                                  "key 'name': '%s' must be 1-%d printable ASCII characters without '/', no "
                                  "leading or trailing space, not '.' or '..'",
                                  name, SENSIM_NAME_MAX - 1);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->id = sensim_rng_sensor_id(name);
    s->type = sensim_sensor_type_find(type);
    if (!s->type) {
        char list[256];
        type_list(list, sizeof list);
        return sensim_ynode_error(sensim_ynode_get(node, "type"), SENSIM_EINVAL,
                                  "key 'type': unknown sensor type '%s' (known: %s)", type, list);
    }
    /* Allowed keys: the common ones and the type's. */
    const char *allowed[64];
    size_t na = 0;
    for (size_t i = 0; common_keys[i]; i++)
        allowed[na++] = common_keys[i];
    for (size_t i = 0; s->type->keys && s->type->keys[i] && na < 63; i++)
        allowed[na++] = s->type->keys[i];
    allowed[na] = NULL;
    char what[SENSIM_NAME_MAX + 16];
    snprintf(what, sizeof what, "sensor '%s'", s->name);
    if ((st = sensim_ynode_check_keys(node, what, allowed)))
        return st;
    s->rate_hz = 0;
    if ((st = sensim_ynode_get_quantity_range(node, "rate_hz", SENSIM_DIM_FREQUENCY, 0, 0, 1e9, &s->rate_hz)))
        return st;
    if (sensim_ynode_get(node, "rate_hz") && !(s->rate_hz > 0))
        return sensim_ynode_error(sensim_ynode_get(node, "rate_hz"), SENSIM_EINVAL, "key 'rate_hz': must be > 0");
    if ((st = parse_mount(s)) || (st = parse_timing(s)))
        return st;
    return s->type->create(s);
}

static sensim_rig *rig_from_doc(sensim_yaml *doc)
{
    sensim_rig *rig = sensim_new_(sizeof *rig, NULL);
    if (!rig) {
        sensim_yaml_free(doc);
        return NULL;
    }
    rig->doc = doc;
    const sensim_ynode *root = sensim_yaml_root(doc);
    static const char *const root_keys[] = {"seed", "sensors", "description", "earth", NULL};
    if (!root) {
        sensim_error(SENSIM_EFORMAT, "%s: empty document", sensim_yaml_name(doc));
        goto fail;
    }
    if (sensim_ynode_check_keys(root, "the rig", root_keys))
        goto fail;
    rig->seed = 0;
    if (sensim_ynode_get_uint64(root, "seed", 0, &rig->seed))
        goto fail;
    if (parse_earth(rig, root))
        goto fail;
    const sensim_ynode *list = sensim_ynode_get(root, "sensors");
    if (!list) {
        sensim_ynode_error(root, SENSIM_EINVAL, "missing key 'sensors'");
        goto fail;
    }
    if (sensim_ynode_kind_of(list) != SENSIM_YNODE_SEQUENCE || sensim_ynode_size(list) == 0) {
        sensim_ynode_error(list, SENSIM_EINVAL, "key 'sensors': expected a non-empty list of sensors");
        goto fail;
    }
    size_t n = sensim_ynode_size(list);
    rig->sensors = calloc(n, sizeof *rig->sensors);
    if (!rig->sensors) {
        sensim_error(SENSIM_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        sensim_sensor *s = &rig->sensors[i];
        rig->nsensors = i + 1;
        s->earth_gravity = rig->earth_gravity;
        s->earth_rotation = rig->earth_rotation;
        if (parse_sensor(s, sensim_ynode_item(list, i)))
            goto fail;
        for (size_t j = 0; j < i; j++) {
            if (!strcmp(rig->sensors[j].name, s->name)) {
                sensim_ynode_error(sensim_ynode_get(s->node, "name"), SENSIM_EINVAL,
                                   "key 'name': sensor '%s' is defined twice", s->name);
                goto fail;
            }
            if (rig->sensors[j].id == s->id) {
                sensim_ynode_error(sensim_ynode_get(s->node, "name"), SENSIM_EINVAL,
                                   "key 'name': '%s' and '%s' share a random-stream id; rename one", s->name,
                                   rig->sensors[j].name);
                goto fail;
            }
        }
    }
    return rig;
fail:
    sensim_rig_free(rig);
    return NULL;
}

sensim_rig *sensim_rig_load(const char *path)
{
    sensim_yaml *doc = sensim_yaml_load_file(path);
    return doc ? rig_from_doc(doc) : NULL;
}

sensim_rig *sensim_rig_load_string(const char *text, const char *name)
{
    sensim_yaml *doc = sensim_yaml_load_string(text, strlen(text), name);
    return doc ? rig_from_doc(doc) : NULL;
}

/* ---- writing ---- */

void sensim_sensor_init(sensim_sensor *s, const char *name, double rate_hz)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name ? name : "");
    s->rate_hz = rate_hz;
    s->mount_position = sensim_vec3_make(0, 0, 0);
    s->mount_orientation = sensim_quat_identity();
}

void sensim_rig_write_yaml_begin(sensim_ywriter *w, uint64_t seed, const char *description)
{
    sensim_ywriter_key(w, "seed");
    sensim_ywriter_uint(w, seed);
    if (description) {
        sensim_ywriter_key(w, "description");
        sensim_ywriter_string(w, description);
    }
    sensim_ywriter_key(w, "sensors");
    sensim_ywriter_seq_begin(w, 0);
}

static void put_number(sensim_ywriter *w, const char *key, double x)
{
    if (x == 0.0)
        return;
    sensim_ywriter_key(w, key);
    sensim_ywriter_number(w, x);
}

void sensim_sensor_write_yaml(sensim_ywriter *w, const sensim_sensor *s, const char *type)
{
    sensim_ywriter_map_begin(w, 0);
    sensim_ywriter_key(w, "name");
    sensim_ywriter_string(w, s->name);
    sensim_ywriter_key(w, "type");
    sensim_ywriter_string(w, type);
    put_number(w, "rate_hz", s->rate_hz);
    const sensim_vec3 p = s->mount_position;
    const sensim_quat q = s->mount_orientation;
    const int has_p = p.x != 0 || p.y != 0 || p.z != 0, has_q = q.w != 1 || q.x != 0 || q.y != 0 || q.z != 0;
    if (has_p || has_q) {
        my_block_begin(w, "mount");
        if (has_p) {
            sensim_ywriter_key(w, "position");
            sensim_ywriter_numbers(w, (const double[]){p.x, p.y, p.z}, 3);
        }
        if (has_q) {
            sensim_ywriter_key(w, "orientation");
            sensim_ywriter_numbers(w, (const double[]){q.w, q.x, q.y, q.z}, 4);
        }
        sensim_ywriter_map_end(w);
    }
    const sensim_timing none = {0};
    if (my_fields_set(timing_fields, &s->timing, &none)) {
        my_block_begin(w, "timing");
        my_put_fields(w, timing_fields, &s->timing, &none);
        sensim_ywriter_map_end(w);
    }
}
