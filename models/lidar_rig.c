/* The `lidar` sensor type: noise and dropouts applied to recorded scans in
 * /sensors/<name>/ (DESIGN.md: points f32[M,4], scan_offset u64[S+1], per
 * point range, azimuth, elevation f32[M] and any other [M] datasets, per
 * scan t f64[S]).
 *
 * YAML (type-specific keys; numbers SI or with a unit string):
 *   noise:   { range_sigma_base, range_sigma_slope, range_bias, azimuth_sigma,
 *              elevation_sigma, intensity_sigma, range_resolution }
 *   dropout: { dropoff_general_rate, dropoff_intensity_limit,
 *              dropoff_zero_intensity, min_intensity, min_range, max_range }
 * Dropped points are removed from every per-point dataset and scan_offset is
 * rewritten; the noise of point i is drawn at its row i of the input, so the
 * output does not depend on threads or block size. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/lidar.h"
#include "sensim/rig.h"

#include "model_yaml.h"
#include "../lib/base_internal.h"

#define BLOCK (1u << 18)

static const char *const lidar_keys[] = {"noise", "dropout", NULL};

/* clang-format off */
#define LF(key, dim, lo, hi, flags) {#key, offsetof(sensim_lidar_params, key), &SENSIM_DIM_##dim, lo, hi, flags}
/* clang-format on */
/* noise: the fitted terms (range_sigma_base, range_sigma_slope) are always
 * written, so that a fit that found none says so. */
static const my_field noise_fields[] = {LF(range_sigma_base, LENGTH, 0, INFINITY, MY_ALWAYS),
                                        LF(range_sigma_slope, NONE, 0, INFINITY, MY_ALWAYS),
                                        LF(range_bias, LENGTH, 0, 0, MY_FREE),
                                        LF(azimuth_sigma, ANGLE, 0, INFINITY, 0),
                                        LF(elevation_sigma, ANGLE, 0, INFINITY, 0),
                                        LF(intensity_sigma, NONE, 0, INFINITY, 0),
                                        LF(range_resolution, LENGTH, 0, INFINITY, 0),
                                        {0}};
static const my_field drop_fields[] = {LF(dropoff_general_rate, NONE, 0, 1, 0),
                                       LF(dropoff_intensity_limit, NONE, 0, INFINITY, 0),
                                       LF(dropoff_zero_intensity, NONE, 0, 1, 0),
                                       LF(min_intensity, NONE, 0, 0, MY_PLAIN),
                                       LF(min_range, LENGTH, 0, INFINITY, 0),
                                       LF(max_range, LENGTH, 0, INFINITY, 0),
                                       {0}};
#undef LF

sensim_status sensim_lidar_params_from_yaml(const sensim_ynode *map, sensim_lidar_params *p)
{
    const sensim_ynode *noise = sensim_ynode_get(map, "noise"), *drop = sensim_ynode_get(map, "dropout");
    sensim_status st = SENSIM_OK;
    if (noise && ((st = my_check_fields(noise, "lidar noise", NULL, noise_fields)) ||
                  (st = my_get_fields(noise, noise_fields, p))))
        return st;
    if (drop && ((st = my_check_fields(drop, "lidar dropout", NULL, drop_fields)) ||
                 (st = my_get_fields(drop, drop_fields, p))))
        return st;
    return SENSIM_OK;
}

static sensim_status lidar_create(sensim_sensor *s)
{
    sensim_lidar_params *p = malloc(sizeof *p);
    if (!(s->model = p))
        return sensim_error(SENSIM_ENOMEM, "sensor '%s': out of memory", s->name);
    *p = sensim_lidar_default_params();
    const sensim_ynode *noise = sensim_ynode_get(s->node, "noise"), *drop = sensim_ynode_get(s->node, "dropout");
    sensim_status st = sensim_lidar_params_from_yaml(s->node, p);
    if (st)
        return st;
    sensim_lidar *probe = sensim_lidar_create(p, 0, s->id);
    if (!probe)
        return sensim_ynode_error(drop ? drop : noise ? noise : s->node, SENSIM_EINVAL, "%s", sensim_last_error());
    sensim_lidar_destroy(probe);
    return SENSIM_OK;
}

void sensim_lidar_write_yaml(sensim_ywriter *w, const sensim_sensor *s, const sensim_lidar_params *p)
{
    const sensim_lidar_params d = sensim_lidar_default_params();
    sensim_sensor_write_yaml(w, s, "lidar");
    my_block_begin(w, "noise");
    my_put_fields(w, noise_fields, p, &d);
    sensim_ywriter_map_end(w);
    if (my_fields_set(drop_fields, p, &d)) {
        my_block_begin(w, "dropout");
        my_put_fields(w, drop_fields, p, &d);
        sensim_ywriter_map_end(w);
    }
    sensim_ywriter_map_end(w);
}

/* One per-point dataset other than points/range/azimuth/elevation, copied
 * with the kept rows. */
typedef struct extra {
    char path[512];
    sensim_dtype type;
    size_t width; /* elements per row */
    int ntail;
    size_t tail[SENSIM_LOG_MAX_RANK];
    unsigned char *buf;
    sensim_log_dset *out;
} extra;

static sensim_status lidar_noise_clean(const sensim_sensor *s, const sensim_inject_opts *o, const sensim_log *in,
                                       sensim_log *out)
{
    const char *file = sensim_log_path(in);
    char g[SENSIM_NAME_MAX + 16], pp[SENSIM_NAME_MAX + 32], so[SENSIM_NAME_MAX + 32];
    snprintf(g, sizeof g, "/sensors/%s", s->name);
    snprintf(pp, sizeof pp, "%s/points", g);
    snprintf(so, sizeof so, "%s/scan_offset", g);
    size_t four = 4, M, S1;
    sensim_status st;
    if ((st = sensim_log_check_shape(in, pp, 1, &four, &M)) || (st = sensim_log_check_shape(in, so, 0, NULL, &S1)))
        return st;
    if (S1 < 2 || M == 0)
        return sensim_error(SENSIM_EDATA, "%s: %s: empty scans (%zu points, %zu scan offsets); nothing to noise", file,
                            g, M, S1);
    size_t S = S1 - 1;
    sensim_lidar *l = sensim_lidar_create(s->model, o->seed, s->id);
    if (!l)
        return sensim_last_status();
    uint64_t *off = malloc(S1 * sizeof *off), *noff = calloc(S1, sizeof *noff);
    float *pts = malloc(BLOCK * 16), *po = malloc(BLOCK * 16), *pol[3] = {NULL, NULL, NULL}, *pin[3] = {NULL, NULL, NULL};
    uint8_t *keep = malloc(BLOCK);
    extra *ex = NULL;
    size_t nex = 0;
    char **names = NULL;
    size_t nn = 0;
    sensim_log_dset *dpts = NULL, *dpol[3] = {NULL, NULL, NULL};
    static const char *const polar[3] = {"range", "azimuth", "elevation"};
    int have_polar = 1, npolar = 0;
    if (!off || !noff || !pts || !po || !keep) {
        st = sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory", file, g);
        goto done;
    }
    if ((st = sensim_log_read(in, so, SENSIM_U64, 0, S1, off)))
        goto done;
    if (off[0] != 0 || off[S] != M) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: must start at 0 and end at %zu (the rows of points), found %llu..%llu",
                          file, so, M, (unsigned long long)off[0], (unsigned long long)off[S]);
        goto done;
    }
    for (size_t k = 0; k < S; k++)
        if (off[k + 1] < off[k]) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s: decreasing at index %zu", file, so, k + 1);
            goto done;
        }
    for (int c = 0; c < 3; c++) {
        char p[SENSIM_NAME_MAX + 32];
        snprintf(p, sizeof p, "%s/%s", g, polar[c]);
        if (!sensim_log_exists(in, p)) {
            have_polar = 0;
            continue;
        }
        npolar++;
        size_t rows;
        if ((st = sensim_log_check_shape(in, p, 0, NULL, &rows)))
            goto done;
        if (rows != M) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows but points has %zu", file, p, rows, M);
            goto done;
        }
        if (!(pin[c] = malloc(BLOCK * 4)) || !(pol[c] = malloc(BLOCK * 4))) {
            st = sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory", file, g);
            goto done;
        }
    }
    if (!have_polar && npolar) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: range, azimuth and elevation must be given together (%d of 3 found)",
                          file, g, npolar);
        goto done;
    }
    /* Other datasets: per-point ones are compacted, the rest (t) copied. */
    if ((st = sensim_log_list(in, g, &names, &nn)))
        goto done;
    ex = calloc(nn ? nn : 1, sizeof *ex);
    if (!ex) {
        st = sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory", file, g);
        goto done;
    }
    for (size_t i = 0; i < nn; i++) {
        const char *nm = names[i];
        if (!strcmp(nm, "points") || !strcmp(nm, "scan_offset") || !strcmp(nm, "range") || !strcmp(nm, "azimuth") ||
            !strcmp(nm, "elevation"))
            continue;
        int per_scan = !strcmp(nm, "t") || !strcmp(nm, "t_sample") || !strcmp(nm, "t_sensor");
        char p[512];
        snprintf(p, sizeof p, "%s/%s", g, nm);
        int rank;
        size_t dims[SENSIM_LOG_MAX_RANK];
        sensim_dtype dt;
        /* Every dataset's length against the points' and the scans' before
         * anything is copied: one row per point (noised along), one per
         * scan (copied), or refused. The times go through the validator. */
        if (per_scan ? (st = sensim_log_check_time(in, p, &dims[0])) : (st = sensim_log_shape(in, p, &rank, dims)))
            goto done;
        if (per_scan ? dims[0] != S : rank >= 1 && dims[0] != M && dims[0] != S) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows, but %s has %zu (one per point) and %s %zu (one "
                                              "per scan)",
                              file, p, dims[0], pp, M, so, S1);
            goto done;
        }
        if (!per_scan && rank >= 1 && dims[0] == M && sensim_log_dtype(in, p, &dt) == SENSIM_OK) {
            extra *e = &ex[nex++];
            snprintf(e->path, sizeof e->path, "%s", p);
            e->type = dt;
            e->ntail = rank - 1;
            e->width = 1;
            for (int d = 1; d < rank; d++) {
                e->tail[d - 1] = dims[d];
                e->width *= dims[d];
            }
            char *units = NULL;
            if (sensim_log_has_attr(in, p, "units"))
                sensim_log_get_attr_string(in, p, "units", &units);
            e->out = sensim_log_dset_create(out, p, dt, e->ntail, e->tail, units ? units : "", 0);
            free(units);
            e->buf = malloc((size_t)BLOCK * e->width * sensim_dtype_size(dt));
            if (!e->out || !e->buf) {
                st = e->out ? sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory", file, p) : sensim_last_status();
                goto done;
            }
        } else {
            sensim_error_clear();
            if ((st = sensim_log_copy(out, in, p)))
                goto done;
        }
    }
    if (!(dpts = sensim_log_dset_create(out, pp, SENSIM_F32, 1, &four, "m", 0))) {
        st = sensim_last_status();
        goto done;
    }
    for (int c = 0; c < 3 && have_polar; c++) {
        char p[SENSIM_NAME_MAX + 32];
        snprintf(p, sizeof p, "%s/%s", g, polar[c]);
        if (!(dpol[c] = sensim_log_dset_create(out, p, SENSIM_F32, 0, NULL, c ? "rad" : "m", 0))) {
            st = sensim_last_status();
            goto done;
        }
    }
    size_t scan = 0, total = 0;
    for (size_t r0 = 0; r0 < M; r0 += BLOCK) {
        size_t n = M - r0 < BLOCK ? M - r0 : BLOCK;
        if ((st = sensim_log_read(in, pp, SENSIM_F32, r0, n, pts)))
            goto done;
        for (int c = 0; c < 3 && have_polar; c++) {
            char p[SENSIM_NAME_MAX + 32];
            snprintf(p, sizeof p, "%s/%s", g, polar[c]);
            if ((st = sensim_log_read(in, p, SENSIM_F32, r0, n, pin[c])))
                goto done;
        }
        for (size_t e = 0; e < nex; e++)
            if ((st = sensim_log_read_raw(in, ex[e].path, ex[e].type, r0, n, ex[e].buf)))
                goto done;
        sensim_lidar_block b = {n,      r0,     pts,    have_polar ? pin[0] : NULL, pin[1], pin[2], po,
                                pol[0], pol[1], pol[2], keep};
        if (!have_polar)
            b.range_out = b.azimuth_out = b.elevation_out = NULL;
        if ((st = sensim_lidar_apply(l, &b, NULL)))
            goto done;
        /* Compact in place and count kept points per scan. */
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            size_t gidx = r0 + i;
            while (scan < S && off[scan + 1] <= gidx)
                scan++;
            if (!keep[i])
                continue;
            noff[scan + 1]++;
            memmove(po + 4 * k, po + 4 * i, 16);
            for (int c = 0; c < 3 && have_polar; c++)
                pol[c][k] = pol[c][i];
            for (size_t e = 0; e < nex; e++) {
                size_t w = ex[e].width * sensim_dtype_size(ex[e].type);
                memmove(ex[e].buf + k * w, ex[e].buf + i * w, w);
            }
            k++;
        }
        total += k;
        if (k && (st = sensim_log_dset_append(dpts, po, k)))
            goto done;
        for (int c = 0; c < 3 && have_polar; c++)
            if (k && (st = sensim_log_dset_append(dpol[c], pol[c], k)))
                goto done;
        for (size_t e = 0; e < nex; e++)
            if (k && (st = sensim_log_dset_append(ex[e].out, ex[e].buf, k)))
                goto done;
    }
    for (size_t k = 0; k < S; k++)
        noff[k + 1] += noff[k];
    (void)total;
    st = sensim_log_write(out, so, SENSIM_U64, S1, 0, NULL, noff, "");
done:
    sensim_log_dset_close(dpts);
    for (int c = 0; c < 3; c++) {
        sensim_log_dset_close(dpol[c]);
        free(pin[c]);
        free(pol[c]);
    }
    for (size_t e = 0; e < nex; e++) {
        sensim_log_dset_close(ex[e].out);
        free(ex[e].buf);
    }
    sensim_log_free_names(names, nn);
    SENSIM_FREE_ALL(ex, off, noff, pts, po, keep);
    sensim_lidar_destroy(l);
    return st;
}

const sensim_sensor_type sensim_lidar_type = {
    "lidar", lidar_keys, lidar_create, free, my_render_only, lidar_noise_clean, 0.0,
};

const sensim_lidar_params *sensim_lidar_sensor_params(const struct sensim_sensor *s)
{
    return s && s->type == &sensim_lidar_type ? s->model : NULL;
}
