/* sensim sim2real --sweep: VEPD over a grid of noise parameters (issue 19).
 *
 * A sweep file names the GNSS variant the simulated sets start from and a
 * grid: each key SENSOR.KEY[.KEY...] of the IMU rig or of the variant's
 * preset takes each of its values; the grid is every combination, the last
 * key changing fastest. Each point's rigs are the originals with its values
 * put in (the YAML re-emitted, so the rig loader checks them as in any rig
 * file); its simulated set (seeds 1..3N, as sim2real's) is scored by VEPD
 * against the real set of the generator (seeds from --real-seed). The points
 * are independent, so --shard I/N scores a contiguous part of them and the
 * parts stitch (sensim stitch) into the table of the whole grid. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "sweep.h"
#include "sensim/afile.h"
#include "sensim/log.h"
#include "sensim/metrics.h"
#include "sensim/plot.h"
#include "sensim/rig.h"
#include "sensim/stitch.h"
#include "sensim/yaml.h"

#define MAX_KEYS 8
#define MAX_DEPTH 8
#define NSCEN SENSIM_SIM2REAL_NSCEN

typedef struct sweep_key {
    char *text;                /* as written: "gps.position_noise.sigma" */
    char *part[MAX_DEPTH + 1]; /* sensor, then the keys under it */
    int depth;                 /* keys under the sensor */
    double *values;
    size_t n;
    int in_gnss; /* 1: the GNSS preset's sensor; 0: the IMU rig's */
    int line;
} sweep_key;

typedef struct sweep {
    char *path, *text;
    int model; /* sensim_sim2real_models index */
    sweep_key key[MAX_KEYS];
    int nkeys;
    int64_t points;
} sweep;

static void sweep_free(sweep *s)
{
    for (int k = 0; k < s->nkeys; k++) {
        free(s->key[k].text);
        for (int d = 0; d <= s->key[k].depth; d++)
            free(s->key[k].part[d]);
        free(s->key[k].values);
    }
    free(s->text);
    memset(s, 0, sizeof *s);
}

static int split_key(sweep_key *k, const char *text)
{
    const char *p = text;
    k->depth = -1;
    while (*p) {
        size_t len = strcspn(p, ".");
        if (!len || k->depth + 1 > MAX_DEPTH)
            return -1;
        if (!(k->part[++k->depth] = strndup(p, len)))
            return -1;
        p += len;
        if (*p == '.' && !*++p)
            return -1;
    }
    return k->depth >= 1 ? 0 : -1;
}

/* Whether `rig` (a loaded YAML document) has a sensor named name. */
static int rig_has_sensor(const sensim_yaml *rig, const char *name)
{
    const sensim_ynode *s = sensim_ynode_get(sensim_yaml_root(rig), "sensors");
    for (size_t i = 0; s && i < sensim_ynode_size(s); i++) {
        const sensim_ynode *n = sensim_ynode_get(sensim_ynode_item(s, i), "name");
        if (n && sensim_ynode_scalar(n) && !strcmp(sensim_ynode_scalar(n), name))
            return 1;
    }
    return 0;
}

/* Reads the sweep file against the two rigs' documents. */
static sensim_status sweep_load(const char *path, int generator, const sensim_yaml *imu, const sensim_yaml *gnss_of[],
                                sweep *s)
{
    memset(s, 0, sizeof *s);
    s->path = (char *)path;
    s->model = generator;
    sensim_yaml *doc = sensim_yaml_load_file(path);
    if (!doc)
        return sensim_last_status();
    const sensim_ynode *root = sensim_yaml_root(doc);
    static const char *const keys[] = {"model", "sweep", NULL};
    sensim_status st = sensim_ynode_check_keys(root, "a sweep file", keys);
    const char *model = NULL;
    if (!st)
        st = sensim_ynode_get_string(root, "model", 0, &model);
    if (!st && model && (s->model = sensim_sim2real_model_find(model, strlen(model))) < 0)
        st = sensim_ynode_error(sensim_ynode_get(root, "model"), SENSIM_EINVAL,
                                "model '%s' is not one of ch-gauss, ch-rw, airsim, ch-gauss+airsim, ch-rw+airsim",
                                model);
    const sensim_ynode *grid = st ? NULL : sensim_ynode_get(root, "sweep");
    if (!st && (!grid || sensim_ynode_kind_of(grid) != SENSIM_YNODE_MAPPING || !sensim_ynode_size(grid)))
        st = sensim_ynode_error(grid ? grid : root, SENSIM_EINVAL,
                                "'sweep' must map SENSOR.KEY names to lists of values");
    if (!st && sensim_ynode_size(grid) > MAX_KEYS)
        st = sensim_ynode_error(grid, SENSIM_EINVAL, "at most %d keys in 'sweep'", MAX_KEYS);
    s->points = 1;
    for (size_t i = 0; !st && grid && i < sensim_ynode_size(grid); i++) {
        sweep_key *k = &s->key[s->nkeys++];
        const char *name = sensim_ynode_key_at(grid, i);
        const sensim_ynode *v = sensim_ynode_value_at(grid, i);
        k->line = sensim_ynode_line(v);
        if (!(k->text = strdup(name)) || split_key(k, name)) {
            st = sensim_ynode_error(v, SENSIM_EINVAL, "sweep key '%s' is not SENSOR.KEY[.KEY...]", name);
            break;
        }
        int a = rig_has_sensor(imu, k->part[0]), b = rig_has_sensor(gnss_of[s->model], k->part[0]);
        if (a == b) {
            st = sensim_ynode_error(v, SENSIM_EINVAL, "sweep key '%s': sensor '%s' is in %s", name, k->part[0],
                                    a ? "both the IMU rig and the GNSS preset" : "neither the IMU rig nor the GNSS "
                                                                                "preset");
            break;
        }
        k->in_gnss = b;
        size_t n = sensim_ynode_kind_of(v) == SENSIM_YNODE_SEQUENCE ? sensim_ynode_size(v) : 0;
        if (!n) {
            st = sensim_ynode_error(v, SENSIM_EINVAL, "sweep key '%s': need a non-empty list of numbers", name);
            break;
        }
        if (!(k->values = malloc(n * sizeof *k->values))) {
            st = sensim_error(SENSIM_ENOMEM, "out of memory");
            break;
        }
        for (size_t j = 0; !st && j < n; j++) {
            char what[300];
            snprintf(what, sizeof what, "sweep key '%s' value %zu", name, j + 1);
            st = sensim_ynode_as_quantity(sensim_ynode_item(v, j), what, SENSIM_DIM_NONE, &k->values[j]);
        }
        k->n = n;
        for (size_t j = 0; j < i; j++)
            if (!st && !strcmp(s->key[j].text, name))
                st = sensim_ynode_error(v, SENSIM_EINVAL, "sweep key '%s' is given twice", name);
        if (!st && (double)s->points * (double)n > 1e6)
            st = sensim_ynode_error(v, SENSIM_EINVAL, "the grid has more than 1000000 points");
        s->points *= (int64_t)n;
    }
    if (!st && !(s->text = strdup(sensim_yaml_text(doc))))
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
    sensim_yaml_free(doc);
    return st;
}

/* Point p's value of every key: the last key changes fastest. */
static void point_values(const sweep *s, int64_t p, double *v)
{
    for (int k = s->nkeys - 1; k >= 0; k--) {
        v[k] = s->key[k].values[p % (int64_t)s->key[k].n];
        p /= (int64_t)s->key[k].n;
    }
}

/* ---- a rig with values put in: its YAML re-emitted ---- */

typedef struct put {
    const sweep_key *k;
    double value;
    int done;
} put;

static void emit_scalar(sensim_ywriter *w, const char *s)
{
    char *end;
    double x = strtod(s, &end);
    if (*s && !*end && isfinite(x) && !strchr(s, 'x') && !strchr(s, 'X'))
        sensim_ywriter_number(w, x);
    else
        sensim_ywriter_string(w, s);
}

/* Node n at depth d under sensor `sensor` (NULL outside a sensor): the
 * puts whose path runs through it replace or add their key. */
static void emit(sensim_ywriter *w, const sensim_ynode *n, const char *sensor, const char **path, int d, put *puts,
                 int nputs)
{
    if (sensim_ynode_kind_of(n) == SENSIM_YNODE_SCALAR) {
        emit_scalar(w, sensim_ynode_scalar(n));
        return;
    }
    if (sensim_ynode_kind_of(n) == SENSIM_YNODE_SEQUENCE) {
        sensim_ywriter_seq_begin(w, 0);
        for (size_t i = 0; i < sensim_ynode_size(n); i++) {
            const sensim_ynode *it = sensim_ynode_item(n, i), *nm = sensim_ynode_get(it, "name");
            /* an item of the root's sensors: list is a sensor, its keys at depth 0 */
            int is_sensor = !sensor && d == 1 && !strcmp(path[0], "sensors") && nm && sensim_ynode_scalar(nm);
            emit(w, it, is_sensor ? sensim_ynode_scalar(nm) : sensor, path, is_sensor ? 0 : d, puts, nputs);
        }
        sensim_ywriter_seq_end(w);
        return;
    }
    /* the writer's document is a block mapping already: the root's */
    const int root = !sensor && d == 0;
    if (!root)
        sensim_ywriter_map_begin(w, 0);
    for (size_t i = 0; i < sensim_ynode_size(n); i++) {
        const char *key = sensim_ynode_key_at(n, i);
        sensim_ywriter_key(w, key);
        if (d < MAX_DEPTH)
            path[d] = key;
        int hit = -1;
        for (int p = 0; sensor && p < nputs && hit < 0; p++) {
            const sweep_key *k = puts[p].k;
            int match = !strcmp(k->part[0], sensor) && k->depth == d + 1;
            for (int j = 0; match && j <= d; j++)
                match = !strcmp(k->part[j + 1], path[j]);
            if (match)
                hit = p;
        }
        if (hit >= 0) {
            sensim_ywriter_number(w, puts[hit].value);
            puts[hit].done = 1;
        } else if (d < MAX_DEPTH) {
            emit(w, sensim_ynode_value_at(n, i), sensor, path, d + 1, puts, nputs);
        }
    }
    /* keys the map lacks: added where the rest of the path matches */
    for (int p = 0; sensor && p < nputs; p++) {
        const sweep_key *k = puts[p].k;
        int match = !puts[p].done && !strcmp(k->part[0], sensor) && k->depth == d + 1;
        for (int j = 0; match && j < d; j++)
            match = !strcmp(k->part[j + 1], path[j]);
        if (match) {
            sensim_ywriter_key(w, k->part[d + 1]);
            sensim_ywriter_number(w, puts[p].value);
            puts[p].done = 1;
        }
    }
    if (!root)
        sensim_ywriter_map_end(w);
}

/* The rig of document doc with the point's values of the keys of this rig
 * (in_gnss) put in; the error names the key, the sweep and the rig. */
static sensim_rig *rig_with(const sweep *s, const sensim_yaml *doc, int in_gnss, const double *v)
{
    put puts[MAX_KEYS];
    int n = 0;
    for (int k = 0; k < s->nkeys; k++)
        if (s->key[k].in_gnss == in_gnss)
            puts[n++] = (put){&s->key[k], v[k], 0};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sensim_ywriter *w = f ? sensim_ywriter_create(f) : NULL;
    if (!w) {
        if (f)
            fclose(f);
        free(buf);
        sensim_error(SENSIM_ENOMEM, "out of memory");
        return NULL;
    }
    const char *path[MAX_DEPTH];
    emit(w, sensim_yaml_root(doc), NULL, path, 0, puts, n);
    sensim_status st = sensim_ywriter_close(w);
    fclose(f);
    for (int p = 0; !st && p < n; p++)
        if (!puts[p].done)
            st = sensim_error(SENSIM_EINVAL, "%s:%d: sweep key '%s': %s has no mapping to put it in", s->path,
                              puts[p].k->line, puts[p].k->text, sensim_yaml_name(doc));
    sensim_rig *rig = NULL;
    if (!st) {
        char name[1200];
        snprintf(name, sizeof name, "%s (with the sweep's values)", sensim_yaml_name(doc));
        rig = sensim_rig_load_string(buf, name);
    }
    free(buf);
    return rig;
}

/* ---- the run ---- */

static const char *const score_cols[] = {"w1", "w2", "vepd", "vepd_line", "vepd_circle", "vepd_sine"};
#define NSCORES 6

static sensim_status score_point(const sensim_sim2real_opts *o, const sensim_vepd_test *real, sensim_vepd_test *sim,
                                 double out[NSCORES])
{
    const size_t n = o->tests;
    sensim_vepd_result r;
    sensim_status st = sensim_vepd_compare(real, NSCEN * n, sim, NSCEN * n, &r);
    out[0] = r.w1;
    out[1] = r.w2;
    out[2] = r.vepd;
    for (int k = 0; !st && k < NSCEN; k++) {
        st = sensim_vepd_compare(real + k * n, n, sim + k * n, n, &r);
        out[3 + k] = r.vepd;
    }
    return st;
}

typedef struct table {
    uint64_t *point;
    double *keys;   /* [npts][nkeys] */
    double *scores; /* [npts][NSCORES] */
    size_t n;
} table;

static sensim_status write_table(const char *out, const sweep *s, const sensim_sim2real_opts *o, int generator,
                                 const table *t, const sensim_shard *tag, const char *created)
{
    sensim_log *L = sensim_log_create(out, created);
    if (!L)
        return sensim_last_status();
    const char *g = "/sweep";
    char cols[2048] = "point", path[512];
    int64_t tests = (int64_t)o->tests, rs = (int64_t)o->real_seed;
    sensim_status st = sensim_log_group(L, g);
    if (!st)
        st = sensim_log_write(L, "/sweep/point", SENSIM_U64, t->n, 0, NULL, t->point, "");
    double *col = malloc((t->n ? t->n : 1) * sizeof *col);
    if (!col)
        st = st ? st : sensim_error(SENSIM_ENOMEM, "out of memory");
    for (int k = 0; !st && k < s->nkeys + NSCORES; k++) {
        const char *name = k < s->nkeys ? s->key[k].text : score_cols[k - s->nkeys];
        for (size_t i = 0; i < t->n; i++)
            col[i] = k < s->nkeys ? t->keys[i * s->nkeys + k] : t->scores[i * NSCORES + k - s->nkeys];
        snprintf(path, sizeof path, "%s/%s", g, name);
        st = sensim_log_write(L, path, SENSIM_F64, t->n, 0, NULL, col, k < s->nkeys ? "" : k < s->nkeys + 2 ? "m/s" : "");
        strncat(cols, ",", sizeof cols - strlen(cols) - 1);
        strncat(cols, name, sizeof cols - strlen(cols) - 1);
    }
    free(col);
    if (!st && !(st = sensim_log_set_attr_string(L, g, "columns", cols)) &&
        !(st = sensim_log_set_attr_string(L, g, "sweep", s->text)) &&
        !(st = sensim_log_set_attr_string(L, g, "model", sensim_sim2real_models[s->model].id)) &&
        !(st = sensim_log_set_attr_string(L, g, "generator", sensim_sim2real_models[generator].id)) &&
        !(st = sensim_log_set_attr_i64(L, g, "tests_per_scenario", &tests, 1)) &&
        !(st = sensim_log_set_attr_f64(L, g, "duration", &o->duration, 1)))
        st = sensim_log_set_attr_i64(L, g, "real_seed", &rs, 1);
    if (!st && tag) {
        int64_t sh[2] = {tag->index, tag->count}, rg[2] = {tag->first, tag->end};
        if (!(st = sensim_log_set_attr_string(L, "/", "shard_kind", "rows")) &&
            !(st = sensim_log_set_attr_i64(L, "/", "shard", sh, 2)) &&
            !(st = sensim_log_set_attr_i64(L, "/", "shard_range", rg, 2)))
            st = sensim_log_set_attr_i64(L, "/", "shard_total", &tag->total, 1);
    }
    if (!st)
        return sensim_log_commit(L);
    sensim_log_close(L);
    return st;
}

int cli_sweep_run(const sensim_sim2real_opts *base, int generator, const char *sweep_path, const char *shard_arg,
                  const char *out, int quiet, const char *created)
{
    int64_t index = 0, count = 1, first, end;
    if (shard_arg && sensim_shard_parse(shard_arg, &index, &count))
        return cli_usage_error("sim2real", "--shard: %s", sensim_last_error());
    if (cli_check_output("sim2real", out, sweep_path, base->imu_rig, NULL))
        return CLI_FAIL;
    sensim_yaml *imu_doc = sensim_yaml_load_file(base->imu_rig), *gnss_doc[SENSIM_SIM2REAL_NMODELS] = {0};
    sensim_status st = imu_doc ? SENSIM_OK : sensim_last_status();
    for (int m = 0; !st && m < SENSIM_SIM2REAL_NMODELS; m++) {
        char p[1200];
        snprintf(p, sizeof p, "%s/%s.yaml", base->data, sensim_sim2real_models[m].preset);
        if (!(gnss_doc[m] = sensim_yaml_load_file(p)))
            st = sensim_last_status();
    }
    sweep s;
    memset(&s, 0, sizeof s);
    if (!st)
        st = sweep_load(sweep_path, generator, imu_doc, (const sensim_yaml **)gnss_doc, &s);
    const size_t nall = NSCEN * base->tests;
    sensim_vepd_test *real = calloc(2 * nall, sizeof *real), *sim = real ? real + nall : NULL;
    sensim_rig *imu0 = NULL, *gen = NULL;
    table t = {0};
    if (!st && !real)
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
    if (!st) {
        sensim_shard_split(s.points, count, index, &first, &end);
        if (first == end)
            st = sensim_error(SENSIM_EINVAL, "shard %lld of %lld: no grid point left for it (%lld points)",
                              (long long)index, (long long)count, (long long)s.points);
    }
    /* the real set: the generator's preset and the IMU rig as given */
    char gen_path[1200];
    snprintf(gen_path, sizeof gen_path, "%s/%s.yaml", base->data, sensim_sim2real_models[generator].preset);
    if (!st && (!(imu0 = sensim_rig_load(base->imu_rig)) || !(gen = sensim_rig_load(gen_path))))
        st = sensim_last_status();
    cli_progress prog;
    cli_progress_init(&prog, "sim2real", quiet);
    sensim_sim2real_opts o = *base;
    o.progress = NULL;
    if (!st)
        st = sensim_sim2real_score_set(&o, imu0, gen, o.real_seed, real);
    if (!st) {
        t.n = (size_t)(end - first);
        t.point = malloc(t.n * sizeof *t.point);
        t.keys = malloc(t.n * (size_t)s.nkeys * sizeof *t.keys);
        t.scores = malloc(t.n * NSCORES * sizeof *t.scores);
        if (!t.point || !t.keys || !t.scores)
            st = sensim_error(SENSIM_ENOMEM, "out of memory");
    }
    if (!st) {
        printf("%8s", "point");
        for (int k = 0; k < s.nkeys; k++)
            printf(" %14.14s", s.key[k].text);
        printf(" %12s %12s %12s\n", "W1 (m/s)", "W2", "VEPD");
    }
    for (int64_t p = first; !st && p < end; p++) {
        size_t i = (size_t)(p - first);
        double *v = &t.keys[i * (size_t)s.nkeys];
        t.point[i] = (uint64_t)p;
        point_values(&s, p, v);
        sensim_rig *imu = rig_with(&s, imu_doc, 0, v), *gnss = imu ? rig_with(&s, gnss_doc[s.model], 1, v) : NULL;
        if (!gnss)
            st = sensim_last_status();
        cli_progress_update(&prog, "points", (double)i / (double)t.n);
        if (!st && !(st = sensim_sim2real_score_set(&o, imu, gnss, 1, sim)))
            st = score_point(&o, real, sim, &t.scores[i * NSCORES]);
        sensim_rig_free(imu);
        sensim_rig_free(gnss);
        if (!st) {
            printf("%8lld", (long long)p);
            for (int k = 0; k < s.nkeys; k++)
                printf(" %14.6g", v[k]);
            const double *sc = &t.scores[i * NSCORES];
            printf(" %12.6g %12.6g %12.6g\n", sc[0], sc[1], sc[2]);
        }
    }
    cli_progress_done(&prog);
    sensim_shard tag = {"rows", index, count, first, end, s.points, NULL};
    if (!st)
        st = write_table(out, &s, &o, generator, &t, shard_arg ? &tag : NULL, created);
    free(t.point);
    free(t.keys);
    free(t.scores);
    sensim_rig_free(imu0);
    sensim_rig_free(gen);
    free(real);
    sweep_free(&s);
    sensim_yaml_free(imu_doc);
    for (int m = 0; m < SENSIM_SIM2REAL_NMODELS; m++)
        sensim_yaml_free(gnss_doc[m]);
    return st ? cli_fail_lib("sim2real") : CLI_OK;
}

/* ---- reading a table back: CSV and a plot ---- */

typedef struct csv_ctx {
    char **names;
    double **cols;
    size_t ncols, rows;
} csv_ctx;

static sensim_status write_csv(FILE *f, const csv_ctx *c)
{
    for (size_t k = 0; k < c->ncols; k++)
        fprintf(f, "%s%s", k ? "," : "", c->names[k]);
    fputc('\n', f);
    for (size_t i = 0; i < c->rows; i++)
        for (size_t k = 0; k < c->ncols; k++)
            fprintf(f, k + 1 < c->ncols ? "%.17g," : "%.17g\n", c->cols[k][i]);
    return ferror(f) ? sensim_error(SENSIM_EIO, "write error") : SENSIM_OK;
}

/* VEPD against the first key, one line per combination of the others. */
static sensim_status write_plot(const char *path, const csv_ctx *c, size_t nkeys, const char *title)
{
    const double *x = c->cols[1], *y = NULL;
    for (size_t k = 0; k < c->ncols; k++)
        if (!strcmp(c->names[k], "vepd"))
            y = c->cols[k];
    if (!y || nkeys < 1)
        return sensim_error(SENSIM_EFORMAT, "no vepd column or no swept key");
    sensim_plot *p = sensim_plot_create(title, c->names[1], "VEPD");
    double *bx = malloc(2 * (c->rows ? c->rows : 1) * sizeof *bx), *by = bx ? bx + c->rows : NULL;
    char *used = calloc(c->rows ? c->rows : 1, 1);
    sensim_status st = p && bx && used ? SENSIM_OK : sensim_error(SENSIM_ENOMEM, "out of memory");
    int xlog = 1;
    for (size_t i = 0; i < c->rows; i++)
        xlog = xlog && x[i] > 0;
    if (!st)
        sensim_plot_set_log(p, xlog, 0);
    for (size_t i = 0; !st && i < c->rows; i++) {
        if (used[i])
            continue;
        /* the rows whose other keys equal row i's, in order */
        size_t m = 0;
        char label[512] = "";
        for (size_t k = 2; k < 1 + nkeys; k++)
            snprintf(label + strlen(label), sizeof label - strlen(label), "%s%s = %g", k > 2 ? ", " : "",
                     c->names[k], c->cols[k][i]);
        for (size_t j = i; j < c->rows; j++) {
            int same = !used[j];
            for (size_t k = 2; same && k < 1 + nkeys; k++)
                same = c->cols[k][j] == c->cols[k][i];
            if (same) {
                used[j] = 1;
                bx[m] = x[j];
                by[m++] = y[j];
            }
        }
        st = sensim_plot_add(p, label, bx, by, NULL, NULL, m, SENSIM_PLOT_LINE | SENSIM_PLOT_POINTS, 0);
    }
    if (!st)
        st = sensim_plot_write_svg(p, path, 720, 480);
    free(bx);
    free(used);
    sensim_plot_destroy(p);
    return st;
}

int cli_sweep_scores(const char *table, const char *csv, const char *plot)
{
    sensim_log *L = sensim_log_open(table);
    char *cols = NULL;
    csv_ctx c = {0};
    sensim_status st = L ? SENSIM_OK : sensim_last_status();
    if (!st && !sensim_log_exists(L, "/sweep"))
        st = sensim_error(SENSIM_EFORMAT, "%s: no /sweep group (made by sensim sim2real --sweep)", table);
    if (!st)
        st = sensim_log_get_attr_string(L, "/sweep", "columns", &cols);
    for (const char *q = cols; !st && q && *q;) {
        size_t len = strcspn(q, ",");
        char **nn = realloc(c.names, (c.ncols + 1) * sizeof *nn);
        double **cc = nn ? realloc(c.cols, (c.ncols + 1) * sizeof *cc) : NULL;
        if (nn)
            c.names = nn;
        if (!cc) {
            st = sensim_error(SENSIM_ENOMEM, "out of memory");
            break;
        }
        c.cols = cc;
        c.cols[c.ncols] = NULL;
        if (!(c.names[c.ncols++] = strndup(q, len))) {
            st = sensim_error(SENSIM_ENOMEM, "out of memory");
            break;
        }
        q += len + (q[len] == ',');
    }
    for (size_t k = 0; !st && k < c.ncols; k++) {
        char path[600];
        int rank;
        size_t dims[SENSIM_LOG_MAX_RANK];
        snprintf(path, sizeof path, "/sweep/%s", c.names[k]);
        if ((st = sensim_log_shape(L, path, &rank, dims)))
            break;
        if (rank != 1 || (k && dims[0] != c.rows)) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s: not a column of %zu rows", table, path, c.rows);
            break;
        }
        c.rows = dims[0];
        if (!(c.cols[k] = malloc((c.rows ? c.rows : 1) * sizeof **c.cols)))
            st = sensim_error(SENSIM_ENOMEM, "out of memory");
        else
            st = sensim_log_read_f64(L, path, 0, c.rows, c.cols[k]);
    }
    if (!st && c.ncols < 2 + NSCORES)
        st = sensim_error(SENSIM_EFORMAT, "%s: /sweep has %zu columns, expected point, the keys and %d scores", table,
                          c.ncols, NSCORES);
    if (!st && (!csv || !strcmp(csv, "-")))
        st = write_csv(stdout, &c);
    else if (!st) {
        sensim_afile *a = sensim_afile_open(csv);
        st = a ? write_csv(sensim_afile_stream(a), &c) : sensim_last_status();
        if (a && st)
            sensim_afile_abort(a);
        else if (a)
            st = sensim_afile_commit(a);
    }
    if (!st && plot) {
        char title[1024];
        snprintf(title, sizeof title, "VEPD over the sweep of %s", table);
        st = write_plot(plot, &c, c.ncols - 1 - NSCORES, title);
        if (st)
            sensim_error_prefix(st, "%s", plot);
    }
    for (size_t k = 0; k < c.ncols; k++) {
        free(c.names[k]);
        free(c.cols[k]);
    }
    free(c.names);
    free(c.cols);
    free(cols);
    sensim_log_close(L);
    return st ? cli_fail_lib("sim2real") : CLI_OK;
}
