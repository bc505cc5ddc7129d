/* The `camera` sensor type: noise (and optionally the FOV lens) applied to
 * recorded frames /sensors/<name>/image, u8|u16|f32 [N,H,W] or [N,H,W,C].
 *
 * YAML (type-specific keys; numbers SI or with a unit string):
 *   noise: { model: none | intensity | emva,
 *            variance_slope, variance_intercept,              # intensity
 *            photons_full_scale, quantum_efficiency, exposure_time,
 *            dark_current, read_noise, gain, black_level, full_well,
 *            adc_bits, prnu, dsnu, hot_pixel_fraction,
 *            hot_pixel_dark_current, row_offset_sigma,
 *            column_offset_sigma, poisson_exact_below }      # emva
 *   lens:  { model: pinhole | fov, hfov }   # frames are taken as pinhole
 *                                           # of the same hfov and remapped
 *   lens:  { model: radtan | kannala_brandt, fx, fy, cx, cy, k1.., p1, p2 }
 *          # frames are taken as the undistorted pinhole images of the same
 *          # fx, fy, cx, cy and remapped through the distortion (models/lens.c)
 * Frame k of the log is noise frame k, so the output is the same for a seed
 * whatever the thread count. Other datasets of the group are copied. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/camera.h"
#include "sensim/rig.h"

#include "model_yaml.h"
#include "../lib/base_internal.h"

typedef struct camera_model {
    sensim_camera_params p; /* width/height/channels filled from the log */
    sensim_lens lens;       /* not PINHOLE: pinhole frames remapped through it */
} camera_model;

static const char *const camera_keys[] = {"noise", "lens", NULL};
/* noise: model, as SENSIM_CAMERA_NOISE_* counts */
static const char *const noise_models[] = {"none", "intensity", "emva"};
/* clang-format off */
#define CF(key, dim, lo, hi, flags) {#key, offsetof(sensim_camera_params, key), &SENSIM_DIM_##dim, lo, hi, flags}
/* clang-format on */
/* noise, after its model: */
static const my_field noise_fields[] = {CF(variance_slope, NONE, 0, INFINITY, 0),
                                        CF(variance_intercept, NONE, 0, INFINITY, 0),
                                        CF(photons_full_scale, NONE, 0, INFINITY, 0),
                                        CF(quantum_efficiency, NONE, 1e-12, 1, 0),
                                        CF(exposure_time, TIME, 0, INFINITY, 0),
                                        CF(dark_current, FREQUENCY, 0, INFINITY, 0),
                                        CF(read_noise, NONE, 0, INFINITY, 0),
                                        CF(gain, NONE, 1e-12, INFINITY, 0),
                                        CF(black_level, NONE, 0, INFINITY, 0),
                                        CF(full_well, NONE, 1e-12, INFINITY, 0),
                                        CF(adc_bits, NONE, 1, 16, MY_INT),
                                        CF(prnu, NONE, 0, INFINITY, 0),
                                        CF(dsnu, NONE, 0, INFINITY, 0),
                                        CF(hot_pixel_fraction, NONE, 0, 1, 0),
                                        CF(hot_pixel_dark_current, FREQUENCY, 0, INFINITY, 0),
                                        CF(row_offset_sigma, NONE, 0, INFINITY, 0),
                                        CF(column_offset_sigma, NONE, 0, INFINITY, 0),
                                        CF(poisson_exact_below, NONE, 0, INFINITY, 0),
                                        {0}};
#undef CF

sensim_status sensim_camera_params_from_yaml(const sensim_ynode *map, sensim_camera_params *p, sensim_lens *lens)
{
    sensim_status st = SENSIM_OK;
    const sensim_ynode *noise = sensim_ynode_get(map, "noise");
    if (noise) {
        if ((st = my_check_fields(noise, "camera noise", "model", noise_fields)))
            return st;
        int model = SENSIM_CAMERA_NOISE_INTENSITY;
        if ((st = my_get_name(noise, "model", 0, "camera noise model", "", noise_models, 3, &model)))
            return st;
        p->model = (sensim_camera_noise)model;
        if ((st = my_get_fields(noise, noise_fields, p)))
            return st;
    }
    const sensim_ynode *ln = sensim_ynode_get(map, "lens");
    if (ln) {
        sensim_lens l;
        memset(&l, 0, sizeof l);
        l.hfov = 0.0;
        if ((st = sensim_lens_from_yaml(ln, &l)))
            return st;
        /* The FOV model needs tan(w) < pi/2 on the horizontal axis already;
         * the corners (and a radtan or kannala_brandt lens across the
         * image) are checked when the frame size is known. */
        sensim_lens axis = {.model = SENSIM_LENS_FOV, .width = 1u << 20, .height = 1, .hfov = l.hfov};
        if (l.model == SENSIM_LENS_FOV && sensim_lens_check(&axis) != SENSIM_OK)
            return sensim_ynode_error(sensim_ynode_get(ln, "hfov"), SENSIM_EINVAL, "key 'hfov': %s",
                                      sensim_last_error());
        if (lens) {
            size_t w = lens->width, h = lens->height;
            *lens = l;
            lens->width = w;
            lens->height = h;
        }
    }
    return SENSIM_OK;
}

static sensim_status camera_create(sensim_sensor *s)
{
    camera_model *m = calloc(1, sizeof *m);
    if (!(s->model = m))
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    m->p = sensim_camera_default_params();
    m->lens.model = SENSIM_LENS_PINHOLE;
    sensim_status st = sensim_camera_params_from_yaml(s->node, &m->p, &m->lens);
    if (st)
        return st;
    /* Validate the rest now (sizes come with the data). */
    const sensim_ynode *noise = sensim_ynode_get(s->node, "noise");
    m->p.width = m->p.height = 1;
    sensim_camera *probe = sensim_camera_create(&m->p, 0, s->id);
    if (!probe)
        return sensim_ynode_error(noise ? noise : s->node, SENSIM_EINVAL, "%s", sensim_last_error());
    sensim_camera_destroy(probe);
    return SENSIM_OK;
}

void sensim_camera_write_yaml(sensim_ywriter *w, const sensim_sensor *s, const sensim_camera_params *p,
                              const sensim_lens *lens)
{
    const sensim_camera_params d = sensim_camera_default_params();
    sensim_sensor_write_yaml(w, s, "camera");
    sensim_ywriter_key(w, "noise");
    my_model_begin(w, noise_models[p->model]);
    my_put_fields(w, noise_fields, p, &d);
    sensim_ywriter_map_end(w);
    if (lens) {
        sensim_ywriter_key(w, "lens");
        sensim_lens_write_yaml(w, lens);
    }
    sensim_ywriter_map_end(w);
}

static sensim_pixel_type pixel_type(sensim_dtype t) { return t == SENSIM_U8 ? SENSIM_PIXEL_U8 : t == SENSIM_U16 ? SENSIM_PIXEL_U16 : SENSIM_PIXEL_F32; }

/* The recorded frames' layout: img u8, u16 or f32 [N,H,W] or [N,H,W,C], with
 * C 1 (gray) or 3 (RGB) and frames not empty; its rank, dims (dims[3] = C,
 * also at rank 3) and type. */
static sensim_status frames_layout(const sensim_log *in, const char *img, int *rank, size_t dims[SENSIM_LOG_MAX_RANK],
                                   sensim_dtype *dt)
{
    const char *file = sensim_log_path(in);
    if (!sensim_log_exists(in, img))
        return sensim_error(SENSIM_ENOTFOUND, "%s: dataset %s not found (camera frames expected)", file, img);
    sensim_status st;
    if ((st = sensim_log_shape(in, img, rank, dims)) || (st = sensim_log_dtype(in, img, dt)))
        return st;
    if (*rank != 3 && *rank != 4)
        return sensim_error(SENSIM_EFORMAT, "%s: %s: rank %d; expected [N,H,W] or [N,H,W,C]", file, img, *rank);
    if (*rank == 3)
        dims[3] = 1;
    if (dims[3] != 1 && dims[3] != 3)
        return sensim_error(SENSIM_EFORMAT, "%s: %s: %zu channels; expected 1 (gray) or 3 (RGB)", file, img, dims[3]);
    if (dims[1] == 0 || dims[2] == 0)
        return sensim_error(SENSIM_EFORMAT, "%s: %s: empty frames (%zux%zu)", file, img, dims[1], dims[2]);
    if (*dt != SENSIM_U8 && *dt != SENSIM_U16 && *dt != SENSIM_F32)
        return sensim_error(SENSIM_EUNSUPPORTED,
                            "%s: %s: element type (bit depth) not supported; expected u8, u16 or f32", file, img);
    return SENSIM_OK;
}

static sensim_status camera_noise_clean(const sensim_sensor *s, const sensim_inject_opts *o, const sensim_log *in,
                                        sensim_log *out)
{
    const camera_model *cm = s->model;
    const char *file = sensim_log_path(in);
    char g[SENSIM_NAME_MAX + 16], img[SENSIM_NAME_MAX + 32];
    snprintf(g, sizeof g, "/sensors/%s", s->name);
    snprintf(img, sizeof img, "%s/image", g);
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK];
    sensim_dtype dt;
    sensim_status st = frames_layout(in, img, &rank, dims, &dt);
    if (st)
        return st;
    const size_t N = dims[0], H = dims[1], W = dims[2], C = dims[3];
    sensim_camera_params p = cm->p;
    p.width = W;
    p.height = H;
    p.channels = C;
    sensim_camera *cam = sensim_camera_create(&p, o->seed, s->id);
    if (!cam)
        return sensim_error_prefix(sensim_last_status(), "%s: %s", file, img);
    sensim_remap *rm = NULL;
    if (cm->lens.model != SENSIM_LENS_PINHOLE) {
        if (!(rm = sensim_lens_remap_from_pinhole(&cm->lens, W, H))) {
            sensim_camera_destroy(cam);
            return sensim_error_prefix(sensim_last_status(), "%s: %s", file, img);
        }
    }
    size_t esz = sensim_dtype_size(dt), frame = H * W * C;
    void *buf = malloc(frame * esz), *tmp = malloc(frame * esz);
    char *units = NULL;
    sensim_log_dset *d = NULL;
    char **names = NULL;
    size_t nn = 0;
    if (!buf || !tmp) {
        st = sensim_error(SENSIM_ENOMEM, "%s: %s: cannot allocate a %zux%zux%zu frame", file, img, H, W, C);
        goto done;
    }
    /* Everything else in the group passes through, once its length agrees
     * with the frames' (times through the validator). */
    if ((st = sensim_log_list(in, g, &names, &nn)))
        goto done;
    for (size_t i = 0; i < nn && !st; i++)
        if (strcmp(names[i], "image")) {
            char p2[512];
            snprintf(p2, sizeof p2, "%s/%s", g, names[i]);
            int r2;
            size_t d2[SENSIM_LOG_MAX_RANK];
            const int is_t = !strcmp(names[i], "t") || !strcmp(names[i], "t_sample") || !strcmp(names[i], "t_sensor");
            if (is_t ? (st = sensim_log_check_time(in, p2, &d2[0])) : (st = sensim_log_shape(in, p2, &r2, d2)))
                break;
            if ((is_t || r2 >= 1) && d2[0] != N) {
                st = sensim_error(SENSIM_EFORMAT, "%s: %s has %zu frames but %s has %zu rows", file, img, N, p2, d2[0]);
                break;
            }
        }
    for (size_t i = 0; i < nn && !st; i++)
        if (strcmp(names[i], "image")) {
            char p2[512];
            snprintf(p2, sizeof p2, "%s/%s", g, names[i]);
            st = sensim_log_copy(out, in, p2);
        }
    if (st)
        goto done;
    if (sensim_log_has_attr(in, img, "units") && (st = sensim_log_get_attr_string(in, img, "units", &units)))
        goto done;
    if (!(d = sensim_log_dset_create(out, img, dt, rank - 1, dims + 1, units ? units : "1", 0))) {
        st = sensim_last_status();
        goto done;
    }
    for (size_t k = 0; k < N; k++) {
        if ((st = sensim_log_read(in, img, dt, k, 1, buf)))
            goto done;
        if (dt == SENSIM_F32) /* a NaN or infinite pixel is no photon count */
            for (size_t i = 0; i < frame; i++)
                if (!isfinite(((const float *)buf)[i])) {
                    st = sensim_error(SENSIM_EDATA, "%s: %s: frame %zu, row %zu, column %zu%s is %s", file, img, k,
                                      i / C / W, i / C % W, C > 1 ? (i % C == 0 ? " (R)" : i % C == 1 ? " (G)" : " (B)") : "",
                                      isnan(((const float *)buf)[i]) ? "NaN" : "infinite");
                    goto done;
                }
        if (rm) {
            if ((st = sensim_remap_apply(rm, pixel_type(dt), C, 0.0, buf, tmp)))
                goto done;
            memcpy(buf, tmp, frame * esz);
        }
        if ((st = sensim_camera_apply(cam, k, pixel_type(dt), buf, buf)) ||
            (st = sensim_log_dset_append(d, buf, 1)))
            goto done;
    }
done:
    sensim_log_dset_close(d);
    sensim_log_free_names(names, nn);
    SENSIM_FREE_ALL(units, buf, tmp);
    sensim_remap_destroy(rm);
    sensim_camera_destroy(cam);
    return st;
}

const sensim_sensor_type sensim_camera_type = {
    "camera", camera_keys, camera_create, free, my_render_only, camera_noise_clean, 0.0,
};

const sensim_camera_params *sensim_camera_sensor_params(const struct sensim_sensor *s, int *fov_lens)
{
    if (!s || s->type != &sensim_camera_type || !s->model)
        return NULL;
    const camera_model *m = s->model;
    if (fov_lens)
        *fov_lens = m->lens.model != SENSIM_LENS_PINHOLE;
    return &m->p;
}
