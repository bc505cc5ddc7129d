/* YAML tree: loading with lines, anchors, typed getters, and error messages
 * that name the file and the right line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/yaml.h"
#include "testutil.h"

#define PI 3.14159265358979323846

static const char rig_text[] = "seed: 7\n"
                               "sensors:\n"
                               "  - name: imu\n"
                               "    type: imu\n"
                               "    rate_hz: 400\n"
                               "    gyro:  { noise_density: 1.0e-3, bias_instability: 2.0e-5, random_walk: 1.0e-5 }\n"
                               "    accel: { noise_density: 2.0e-3, random_walk: 3.0e-3 }\n";

/* Writes text to a file in a fresh temporary directory; *dir to remove. */
static char *write_tmp(const char *name, const char *text, char **dir)
{
    *dir = tu_mkdtemp();
    ck_assert_ptr_nonnull(*dir);
    char *p = tu_path(*dir, name);
    ck_assert_int_eq(tu_write_file(p, text), 0);
    return p;
}

/* The last error contains "<file>:<line>:" and `what`. */
static void assert_err_at(const char *file, int line, const char *what)
{
    char loc[512];
    snprintf(loc, sizeof loc, "%s:%d:", file, line);
    const char *m = sensim_last_error();
    ck_assert_msg(strstr(m, loc) != NULL, "message '%s' lacks '%s'", m, loc);
    ck_assert_msg(strstr(m, what) != NULL, "message '%s' lacks '%s'", m, what);
}

static sensim_yaml *load(const char *text)
{
    sensim_yaml *d = sensim_yaml_load_string(text, strlen(text), "t.yaml");
    ck_assert_msg(d != NULL, "%s", sensim_last_error());
    return d;
}

START_TEST(rig_fixture)
{
    char *dir, *path = write_tmp("rig.yaml", rig_text, &dir);
    sensim_yaml *doc = sensim_yaml_load_file(path);
    ck_assert_msg(doc != NULL, "%s", sensim_last_error());
    ck_assert_str_eq(sensim_yaml_text(doc), rig_text);
    ck_assert_str_eq(sensim_yaml_name(doc), path);

    const sensim_ynode *root = sensim_yaml_root(doc);
    ck_assert_int_eq(sensim_ynode_kind_of(root), SENSIM_YNODE_MAPPING);
    ck_assert_uint_eq(sensim_ynode_size(root), 2);
    ck_assert_str_eq(sensim_ynode_key_at(root, 0), "seed");
    ck_assert_str_eq(sensim_ynode_key_at(root, 1), "sensors");
    ck_assert_ptr_null(sensim_ynode_key_at(root, 2));
    static const char *const top[] = {"seed", "sensors", NULL};
    ck_assert_int_eq(sensim_ynode_check_keys(root, "rig", top), SENSIM_OK);
    uint64_t seed = 0;
    ck_assert_int_eq(sensim_ynode_get_uint64(root, "seed", 1, &seed), SENSIM_OK);
    ck_assert_uint_eq(seed, 7);
    ck_assert_int_eq(sensim_ynode_line(sensim_ynode_get(root, "seed")), 1);

    const sensim_ynode *sensors = sensim_ynode_get(root, "sensors");
    ck_assert_int_eq(sensim_ynode_kind_of(sensors), SENSIM_YNODE_SEQUENCE);
    ck_assert_uint_eq(sensim_ynode_size(sensors), 1);
    ck_assert_ptr_null(sensim_ynode_item(sensors, 1));
    const sensim_ynode *imu = sensim_ynode_item(sensors, 0);
    ck_assert_int_eq(sensim_ynode_line(imu), 3);
    ck_assert_str_eq(sensim_ynode_file(imu), path);
    static const char *const keys[] = {"name", "type", "rate_hz", "gyro", "accel", NULL};
    ck_assert_int_eq(sensim_ynode_check_keys(imu, "sensor", keys), SENSIM_OK);
    const char *name = NULL;
    ck_assert_int_eq(sensim_ynode_get_string(imu, "name", 1, &name), SENSIM_OK);
    ck_assert_str_eq(name, "imu");
    double rate = 0;
    ck_assert_int_eq(sensim_ynode_get_quantity_range(imu, "rate_hz", SENSIM_DIM_FREQUENCY, 1, 0, INFINITY, &rate),
                     SENSIM_OK);
    ck_assert(rate == 400.0);
    ck_assert_int_eq(sensim_ynode_line(sensim_ynode_get(imu, "rate_hz")), 5);

    const sensim_ynode *gyro = sensim_ynode_get(imu, "gyro"), *accel = sensim_ynode_get(imu, "accel");
    ck_assert_int_eq(sensim_ynode_line(gyro), 6);
    ck_assert_int_eq(sensim_ynode_line(accel), 7);
    double nd = 0, bi = 0, rw = 0, and_ = 0, arw = 0;
    ck_assert_int_eq(sensim_ynode_get_quantity(gyro, "noise_density", SENSIM_DIM_ANGULAR_RATE_DENSITY, 1, &nd),
                     SENSIM_OK);
    ck_assert_int_eq(sensim_ynode_get_quantity(gyro, "bias_instability", SENSIM_DIM_ANGULAR_RATE, 1, &bi),
                     SENSIM_OK);
    ck_assert_int_eq(sensim_ynode_get_quantity(gyro, "random_walk", SENSIM_DIM_ANGULAR_RATE_RW, 1, &rw), SENSIM_OK);
    ck_assert_int_eq(sensim_ynode_get_quantity(accel, "noise_density", SENSIM_DIM_ACCEL_DENSITY, 1, &and_),
                     SENSIM_OK);
    ck_assert_int_eq(sensim_ynode_get_quantity(accel, "random_walk", SENSIM_DIM_ACCEL_RW, 1, &arw), SENSIM_OK);
    ck_assert(nd == 1.0e-3 && bi == 2.0e-5 && rw == 1.0e-5 && and_ == 2.0e-3 && arw == 3.0e-3);

    /* Optional and absent: left as preset. Required and absent: the mapping's line. */
    double preset = 42.0;
    ck_assert_int_eq(sensim_ynode_get_quantity(accel, "bias_instability", SENSIM_DIM_ACCEL, 0, &preset), SENSIM_OK);
    ck_assert(preset == 42.0);
    ck_assert_int_eq(sensim_ynode_get_quantity(accel, "bias_instability", SENSIM_DIM_ACCEL, 1, &preset),
                     SENSIM_ENOTFOUND);
    assert_err_at(path, 7, "missing key 'bias_instability'");
    ck_assert(preset == 42.0);

    /* Unknown key: the key's own line, and the list of allowed keys. */
    static const char *const few[] = {"name", "type", "rate_hz", "gyro", NULL};
    ck_assert_int_eq(sensim_ynode_check_keys(imu, "sensor", few), SENSIM_EINVAL);
    assert_err_at(path, 7, "unknown key 'accel' in sensor (expected one of: name, type, rate_hz, gyro)");

    /* Wrong types. */
    double d = 0;
    ck_assert_int_eq(sensim_ynode_get_double(imu, "name", 1, &d), SENSIM_EINVAL);
    assert_err_at(path, 3, "key 'name': 'imu': expected a number");
    ck_assert_int_eq(sensim_ynode_get_double(imu, "gyro", 1, &d), SENSIM_EINVAL);
    assert_err_at(path, 6, "key 'gyro': expected a number, got a mapping");
    ck_assert_int_eq(sensim_ynode_get_string(root, "sensors", 1, &name), SENSIM_EINVAL);
    assert_err_at(path, 3, "key 'sensors': expected a string, got a sequence");
    ck_assert_int_eq(sensim_ynode_get_double(sensors, "x", 1, &d), SENSIM_EINVAL);
    assert_err_at(path, 3, "expected a mapping holding key 'x', got a sequence");
    ck_assert_int_eq(sensim_ynode_check_keys(sensors, "sensors", keys), SENSIM_EINVAL);
    assert_err_at(path, 3, "sensors: expected a mapping, got a sequence");
    /* Plain numbers are SI and match any dimension. */
    ck_assert_int_eq(sensim_ynode_get_quantity(gyro, "noise_density", SENSIM_DIM_ACCEL, 1, &d), SENSIM_OK);
    ck_assert_int_eq(sensim_ynode_get_quantity(imu, "rate_hz", SENSIM_DIM_TIME, 1, &d), SENSIM_OK);

    sensim_yaml_free(doc);
    sensim_yaml_free(NULL);
    free(path);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(scalar_getters)
{
    sensim_yaml *doc = load("a: 1.5\n"
                            "b: -3\n"
                            "c: 18446744073709551615\n"
                            "d: 99999999999999999999\n"
                            "e: yes\n"
                            "f: False\n"
                            "g: maybe\n"
                            "h: \"0.66 deg/sqrt(h)\"\n"
                            "i: 36 ug\n"
                            "j: -0.5\n"
                            "k: 5 m\n"
                            "l:\n"
                            "m: .nan\n"
                            "n: 'quoted'\n"
                            "o: 0.5 %\n");
    const sensim_ynode *r = sensim_yaml_root(doc);
    double x = 0;
    long long ll = 0;
    uint64_t u = 0;
    int b = -1;
    const char *s = NULL;

    ck_assert_int_eq(sensim_ynode_get_double(r, "a", 1, &x), SENSIM_OK);
    ck_assert(x == 1.5);
    ck_assert_int_eq(sensim_ynode_get_int(r, "b", 1, &ll), SENSIM_OK);
    ck_assert_int_eq(ll, -3);
    ck_assert_int_eq(sensim_ynode_get_int(r, "a", 1, &ll), SENSIM_EINVAL);
    assert_err_at("t.yaml", 1, "key 'a': expected an integer, got '1.5'");
    ck_assert_int_eq(sensim_ynode_get_int(r, "d", 1, &ll), SENSIM_EINVAL);
    assert_err_at("t.yaml", 4, "key 'd': integer out of range");
    ck_assert_int_eq(sensim_ynode_get_uint64(r, "c", 1, &u), SENSIM_OK);
    ck_assert(u == UINT64_MAX);
    ck_assert_int_eq(sensim_ynode_get_uint64(r, "b", 1, &u), SENSIM_EINVAL);
    assert_err_at("t.yaml", 2, "key 'b': expected an unsigned integer, got '-3'");
    ck_assert_int_eq(sensim_ynode_get_uint64(r, "d", 1, &u), SENSIM_EINVAL);
    assert_err_at("t.yaml", 4, "integer out of range");

    ck_assert_int_eq(sensim_ynode_get_bool(r, "e", 1, &b), SENSIM_OK);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(sensim_ynode_get_bool(r, "f", 1, &b), SENSIM_OK);
    ck_assert_int_eq(b, 0);
    ck_assert_int_eq(sensim_ynode_get_bool(r, "g", 1, &b), SENSIM_EINVAL);
    assert_err_at("t.yaml", 7, "key 'g': expected true, false, yes or no, got 'maybe'");
    ck_assert_int_eq(b, 0);

    /* Quantities with units, quoted or not. */
    ck_assert_int_eq(sensim_ynode_get_quantity(r, "h", SENSIM_DIM_ANGULAR_RATE_DENSITY, 1, &x), SENSIM_OK);
    ck_assert_within(x, 0.66 * PI / 180 / 60, 1e-15);
    ck_assert_int_eq(sensim_ynode_get_quantity(r, "i", SENSIM_DIM_ACCEL, 1, &x), SENSIM_OK);
    ck_assert_within(x, 36e-6 * 9.80665, 1e-18);
    ck_assert_int_eq(sensim_ynode_get_quantity(r, "i", SENSIM_DIM_ANGULAR_RATE, 1, &x), SENSIM_EINVAL);
    assert_err_at("t.yaml", 9, "key 'i': '36 ug' is m/s^2");
    ck_assert_int_eq(sensim_ynode_get_quantity(r, "o", SENSIM_DIM_NONE, 1, &x), SENSIM_OK);
    ck_assert(x == 0.005);

    /* Range: negative where the range forbids it. */
    x = 7;
    ck_assert_int_eq(sensim_ynode_get_quantity_range(r, "j", SENSIM_DIM_NONE, 1, 0, INFINITY, &x), SENSIM_EINVAL);
    assert_err_at("t.yaml", 10, "key 'j': must be >= 0 (got -0.5)");
    ck_assert(x == 7);
    ck_assert_int_eq(sensim_ynode_get_quantity_range(r, "a", SENSIM_DIM_NONE, 1, 0, 1, &x), SENSIM_EINVAL);
    assert_err_at("t.yaml", 1, "key 'a': must be in [0, 1] (got 1.5)");
    ck_assert_int_eq(sensim_ynode_get_quantity_range(r, "a", SENSIM_DIM_NONE, 1, -INFINITY, 1, &x), SENSIM_EINVAL);
    assert_err_at("t.yaml", 1, "must be <= 1 (got 1.5)");

    /* get_double wants a plain number. */
    ck_assert_int_eq(sensim_ynode_get_double(r, "k", 1, &x), SENSIM_EINVAL);
    assert_err_at("t.yaml", 11, "key 'k': expected a plain number, got '5 m'");
    ck_assert_int_eq(sensim_ynode_get_double(r, "l", 1, &x), SENSIM_EINVAL);
    assert_err_at("t.yaml", 12, "key 'l': expected a number, got nothing (null)");
    ck_assert_int_eq(sensim_ynode_get_double(r, "m", 1, &x), SENSIM_EINVAL);
    assert_err_at("t.yaml", 13, "not a finite number");
    ck_assert_int_eq(sensim_ynode_get_string(r, "l", 1, &s), SENSIM_EINVAL);
    assert_err_at("t.yaml", 12, "key 'l': expected a string");
    ck_assert_int_eq(sensim_ynode_get_string(r, "n", 1, &s), SENSIM_OK);
    ck_assert_str_eq(s, "quoted");
    sensim_yaml_free(doc);

    /* A NULL mapping: optional keys keep their preset, required ones fail. */
    x = 3;
    ck_assert_int_eq(sensim_ynode_get_double(NULL, "z", 0, &x), SENSIM_OK);
    ck_assert(x == 3);
    ck_assert_int_eq(sensim_ynode_get_double(NULL, "z", 1, &x), SENSIM_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "missing key 'z'"));
}
END_TEST

START_TEST(vectors_and_matrices)
{
    sensim_yaml *doc = load("p: [0.1, 0, \"5 cm\"]\n"
                            "m9: [1, 2, 3, 4, 5, 6, 7, 8, 9]\n"
                            "rows:\n"
                            "  - [1, 2, 3]\n"
                            "  - [4, 5, 6]\n"
                            "  - [7, 8, 9]\n"
                            "short: [1, 2]\n"
                            "badrow: [[1, 2, 3], [4, 5], [7, 8, 9]]\n"
                            "items:\n"
                            "  - 1\n"
                            "  - 2 furlongs\n"
                            "  - 3\n"
                            "scalar: 4\n");
    const sensim_ynode *r = sensim_yaml_root(doc);
    double v[9];
    ck_assert_int_eq(sensim_ynode_get_vector(r, "p", SENSIM_DIM_LENGTH, 1, 3, v), SENSIM_OK);
    ck_assert(v[0] == 0.1 && v[1] == 0 && v[2] == 0.05);
    ck_assert_int_eq(sensim_ynode_get_vector(r, "m9", SENSIM_DIM_NONE, 1, 9, v), SENSIM_OK);
    for (int i = 0; i < 9; i++)
        ck_assert(v[i] == i + 1);
    memset(v, 0, sizeof v);
    ck_assert_int_eq(sensim_ynode_get_vector(r, "rows", SENSIM_DIM_NONE, 1, 9, v), SENSIM_OK);
    for (int i = 0; i < 9; i++)
        ck_assert(v[i] == i + 1); /* row-major */

    v[0] = -1;
    ck_assert_int_eq(sensim_ynode_get_vector(r, "short", SENSIM_DIM_NONE, 1, 3, v), SENSIM_EINVAL);
    assert_err_at("t.yaml", 7, "key 'short': expected 3 numbers, got 2");
    ck_assert(v[0] == -1); /* untouched on failure */
    ck_assert_int_eq(sensim_ynode_get_vector(r, "rows", SENSIM_DIM_NONE, 1, 3, v), SENSIM_EINVAL);
    assert_err_at("t.yaml", 4, "key 'rows'[0]: expected a number, got a sequence");
    ck_assert_int_eq(sensim_ynode_get_vector(r, "badrow", SENSIM_DIM_NONE, 1, 9, v), SENSIM_EINVAL);
    assert_err_at("t.yaml", 8, "key 'badrow' row 2: expected a row of 3 numbers");
    ck_assert_int_eq(sensim_ynode_get_vector(r, "items", SENSIM_DIM_NONE, 1, 3, v), SENSIM_EFORMAT);
    assert_err_at("t.yaml", 11, "key 'items'[1]: '2 furlongs': unknown unit 'furlongs'");
    ck_assert_int_eq(sensim_ynode_get_vector(r, "scalar", SENSIM_DIM_NONE, 1, 3, v), SENSIM_EINVAL);
    assert_err_at("t.yaml", 13, "key 'scalar': expected a sequence of 3 numbers, got a scalar");
    ck_assert_int_eq(sensim_ynode_get_vector(r, "absent", SENSIM_DIM_NONE, 1, 3, v), SENSIM_ENOTFOUND);
    assert_err_at("t.yaml", 1, "missing key 'absent'");

    /* as_quantity on a node. */
    const sensim_ynode *items = sensim_ynode_get(r, "items");
    double x;
    ck_assert_int_eq(sensim_ynode_as_quantity(sensim_ynode_item(items, 2), "third", SENSIM_DIM_NONE, &x), SENSIM_OK);
    ck_assert(x == 3);
    ck_assert_int_eq(sensim_ynode_as_quantity(items, "items", SENSIM_DIM_NONE, &x), SENSIM_EINVAL);
    assert_err_at("t.yaml", 10, "items: expected a number, got a sequence");
    sensim_yaml_free(doc);
}
END_TEST

START_TEST(anchors_aliases_merge)
{
    sensim_yaml *doc = load("defaults: &d\n"
                            "  noise_density: 1.0e-3\n"
                            "  random_walk: 2.0e-5\n"
                            "rate: &r 400\n"
                            "gyro: *d\n"
                            "hz: *r\n");
    const sensim_ynode *r = sensim_yaml_root(doc), *g = sensim_ynode_get(r, "gyro");
    ck_assert_ptr_eq(g, sensim_ynode_get(r, "defaults"));
    double x = 0;
    ck_assert_int_eq(sensim_ynode_get_double(g, "random_walk", 1, &x), SENSIM_OK);
    ck_assert(x == 2.0e-5);
    ck_assert_int_eq(sensim_ynode_get_double(r, "hz", 1, &x), SENSIM_OK);
    ck_assert(x == 400);
    /* An alias is the anchored node, so it reports the anchor's line. */
    ck_assert_int_eq(sensim_ynode_line(g), 1);
    ck_assert_int_eq(sensim_ynode_line(sensim_ynode_get(r, "hz")), 4);
    sensim_yaml_free(doc);

    const char *merge = "base: &b { noise_density: 1 }\n"
                        "gyro:\n"
                        "  <<: *b\n"
                        "  random_walk: 2\n";
    ck_assert_ptr_null(sensim_yaml_load_string(merge, strlen(merge), "m.yaml"));
    ck_assert_int_eq(sensim_last_status(), SENSIM_EUNSUPPORTED);
    assert_err_at("m.yaml", 3, "merge keys ('<<') are not supported");

    const char *undef = "a: &x 1\nb: *y\n";
    ck_assert_ptr_null(sensim_yaml_load_string(undef, strlen(undef), "u.yaml"));
    assert_err_at("u.yaml", 2, "undefined alias '*y'");
    /* A node cannot refer to itself: its anchor is not yet defined inside it. */
    const char *self = "a: &s [1, *s]\n";
    ck_assert_ptr_null(sensim_yaml_load_string(self, strlen(self), "s.yaml"));
    assert_err_at("s.yaml", 1, "undefined alias '*s'");
    const char *complex = "? [1, 2]\n: 3\n";
    ck_assert_ptr_null(sensim_yaml_load_string(complex, strlen(complex), "c.yaml"));
    assert_err_at("c.yaml", 1, "mapping keys must be scalars");
}
END_TEST

START_TEST(documents)
{
    /* Empty input: a null root at line 1, which is not a mapping. */
    sensim_yaml *doc = load("");
    const sensim_ynode *r = sensim_yaml_root(doc);
    ck_assert_int_eq(sensim_ynode_kind_of(r), SENSIM_YNODE_SCALAR);
    ck_assert_str_eq(sensim_ynode_scalar(r), "");
    static const char *const none[] = {NULL};
    ck_assert_int_eq(sensim_ynode_check_keys(r, "rig", none), SENSIM_EINVAL);
    assert_err_at("t.yaml", 1, "rig: expected a mapping, got nothing (null)");
    sensim_yaml_free(doc);

    /* Only the first document is loaded. */
    doc = load("a: 1\n---\nb: 2\n");
    r = sensim_yaml_root(doc);
    ck_assert_uint_eq(sensim_ynode_size(r), 1);
    ck_assert_ptr_nonnull(sensim_ynode_get(r, "a"));
    ck_assert_ptr_null(sensim_ynode_get(r, "b"));
    ck_assert_ptr_null(sensim_ynode_scalar(r));
    sensim_yaml_free(doc);

    /* Keys are found by exact text; check_keys with an empty list says so. */
    doc = load("x: 1\n");
    ck_assert_int_eq(sensim_ynode_check_keys(sensim_yaml_root(doc), "empty", none), SENSIM_EINVAL);
    assert_err_at("t.yaml", 1, "unknown key 'x' in empty (expected one of: no keys)");
    sensim_yaml_free(doc);
}
END_TEST

/* Loads a malformed file and checks "<path>:<line>:<col>" and the problem. */
static void bad_file(const char *text, int line, int col, const char *problem)
{
    char *dir, *path = write_tmp("bad.yaml", text, &dir);
    ck_assert_ptr_null(sensim_yaml_load_file(path));
    char loc[600];
    if (col)
        snprintf(loc, sizeof loc, "%s:%d:%d: ", path, line, col);
    else
        snprintf(loc, sizeof loc, "%s:%d: ", path, line);
    const char *m = sensim_last_error();
    ck_assert_msg(strstr(m, loc) == m, "message '%s' does not start with '%s'", m, loc);
    ck_assert_msg(strstr(m, problem) != NULL, "message '%s' lacks '%s'", m, problem);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

START_TEST(malformed)
{
    /* Unclosed bracket: found where the next line breaks the flow sequence. */
    bad_file("seed: 7\nlever: [0.1, 0.2\nrate_hz: 400\n", 3, 8, "did not find expected ',' or ']'");
    bad_file("seed: 7\nlever: [0.1, 0.2\nrate_hz: 400\n", 3, 8, "flow sequence started at line 2");
    /* Bad indentation. */
    bad_file("sensor:\n  name: imu\n rate_hz: 400\n", 3, 2, "did not find expected key");
    bad_file("seed: 7\n  rate_hz: 400\n", 2, 10, "mapping values are not allowed");
    /* Unclosed quote, tab indentation. */
    bad_file("name: \"imu\nrate: 1\n", 3, 1, "found unexpected end of stream");
    bad_file("a:\n\tb: 1\n", 2, 1, "found character that cannot start any token");
    /* Duplicate key: its second line, and where the first was. */
    bad_file("seed: 7\nsensors: []\nseed: 8\n", 3, 0, "duplicate key 'seed' (first at line 1)");
    bad_file("imu:\n  gyro: {a: 1, b: 2,\n         a: 3}\n", 3, 0, "duplicate key 'a' (first at line 2)");
    /* Invalid UTF-8. */
    char *dir, *path = write_tmp("bin.yaml", "a: \xff\xfe\n", &dir);
    ck_assert_ptr_null(sensim_yaml_load_file(path));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), path));
    ck_assert_int_eq(sensim_last_status(), SENSIM_EFORMAT);
    free(path);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(missing_file)
{
    ck_assert_ptr_null(sensim_yaml_load_file("/nonexistent/dir/rig.yaml"));
    ck_assert_int_eq(sensim_last_status(), SENSIM_ENOTFOUND);
    ck_assert_str_eq(sensim_last_error(), "/nonexistent/dir/rig.yaml: cannot open: No such file or directory");
    /* Only regular files: a device (or a FIFO) would block or never end. */
    ck_assert_ptr_null(sensim_yaml_load_file("/dev/zero"));
    ck_assert_int_eq(sensim_last_status(), SENSIM_EFORMAT);
    ck_assert_str_eq(sensim_last_error(), "/dev/zero: is a character device, not a regular file");
    ck_assert_ptr_null(sensim_yaml_load_file(NULL));
    ck_assert_ptr_null(sensim_yaml_load_string(NULL, 0, "x"));
}
END_TEST

START_TEST(large_document)
{
    /* More keys and items than the initial capacities, to exercise growth. */
    size_t cap = 1 << 16, at = 0;
    char *t = malloc(cap);
    for (int i = 0; i < 500; i++)
        at += (size_t)snprintf(t + at, cap - at, "k%d: [%d, %d]\n", i, i, i + 1);
    sensim_yaml *doc = load(t);
    const sensim_ynode *r = sensim_yaml_root(doc);
    ck_assert_uint_eq(sensim_ynode_size(r), 500);
    ck_assert_str_eq(sensim_ynode_key_at(r, 499), "k499");
    ck_assert_int_eq(sensim_ynode_line(sensim_ynode_value_at(r, 499)), 500);
    double v[2];
    ck_assert_int_eq(sensim_ynode_get_vector(r, "k321", SENSIM_DIM_NONE, 1, 2, v), SENSIM_OK);
    ck_assert(v[0] == 321 && v[1] == 322);
    sensim_yaml_free(doc);
    free(t);
}
END_TEST

Suite *suite_yaml(void)
{
    Suite *s = suite_create("yaml");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, rig_fixture);
    tcase_add_test(tc, scalar_getters);
    tcase_add_test(tc, vectors_and_matrices);
    tcase_add_test(tc, anchors_aliases_merge);
    tcase_add_test(tc, documents);
    tcase_add_test(tc, malformed);
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, large_document);
    suite_add_tcase(s, tc);
    return s;
}
