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
 * Frame k of the log is noise frame k, so the output is the same for a seed
 * whatever the thread count. Other datasets of the group are copied. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/camera.h"
#include "sensim/rig.h"

typedef struct camera_model {
    sensim_camera_params p; /* width/height/channels filled from the log */
    int remap;              /* 1: pinhole frames -> FOV lens */
    double hfov;
} camera_model;

static const char *const camera_keys[] = {"noise", "lens", NULL};
static const char *const noise_keys[] = {
    "model", "variance_slope", "variance_intercept", "photons_full_scale", "quantum_efficiency", "exposure_time",
    "dark_current", "read_noise", "gain", "black_level", "full_well", "adc_bits", "prnu", "dsnu",
    "hot_pixel_fraction", "hot_pixel_dark_current", "row_offset_sigma", "column_offset_sigma", "poisson_exact_below",
    NULL};
static const char *const lens_keys[] = {"model", "hfov", NULL};

static void camera_destroy(void *m) { free(m); }

static sensim_status get_nonneg(const sensim_ynode *map, const char *key, sensim_dim dim, double *v)
{
    return sensim_ynode_get_quantity_range(map, key, dim, 0, 0, INFINITY, v);
}

static sensim_status camera_create(sensim_sensor *s)
{
    camera_model *m = calloc(1, sizeof *m);
    if (!m)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    m->p = sensim_camera_default_params();
    sensim_status st = SENSIM_OK;
    const sensim_ynode *noise = sensim_ynode_get(s->node, "noise");
    if (noise) {
        if ((st = sensim_ynode_check_keys(noise, "camera noise", noise_keys)))
            goto fail;
        const char *model = "intensity";
        if ((st = sensim_ynode_get_string(noise, "model", 0, &model)))
            goto fail;
        if (!strcmp(model, "none"))
            m->p.model = SENSIM_CAMERA_NOISE_NONE;
        else if (!strcmp(model, "intensity"))
            m->p.model = SENSIM_CAMERA_NOISE_INTENSITY;
        else if (!strcmp(model, "emva"))
            m->p.model = SENSIM_CAMERA_NOISE_EMVA;
        else {
            st = sensim_ynode_error(sensim_ynode_get(noise, "model"), SENSIM_EINVAL,
                                    "key 'model': unknown camera noise model '%s' (expected none, intensity, emva)",
                                    model);
            goto fail;
        }
        const sensim_dim N = SENSIM_DIM_NONE, T = SENSIM_DIM_TIME, F = SENSIM_DIM_FREQUENCY;
        long long bits = m->p.adc_bits;
        if ((st = get_nonneg(noise, "variance_slope", N, &m->p.variance_slope)) ||
            (st = get_nonneg(noise, "variance_intercept", N, &m->p.variance_intercept)) ||
            (st = get_nonneg(noise, "photons_full_scale", N, &m->p.photons_full_scale)) ||
            (st = sensim_ynode_get_quantity_range(noise, "quantum_efficiency", N, 0, 1e-12, 1,
                                                  &m->p.quantum_efficiency)) ||
            (st = get_nonneg(noise, "exposure_time", T, &m->p.exposure_time)) ||
            (st = get_nonneg(noise, "dark_current", F, &m->p.dark_current)) ||
            (st = get_nonneg(noise, "read_noise", N, &m->p.read_noise)) ||
            (st = sensim_ynode_get_quantity_range(noise, "gain", N, 0, 1e-12, INFINITY, &m->p.gain)) ||
            (st = get_nonneg(noise, "black_level", N, &m->p.black_level)) ||
            (st = sensim_ynode_get_quantity_range(noise, "full_well", N, 0, 1e-12, INFINITY, &m->p.full_well)) ||
            (st = sensim_ynode_get_int(noise, "adc_bits", 0, &bits)) ||
            (st = get_nonneg(noise, "prnu", N, &m->p.prnu)) || (st = get_nonneg(noise, "dsnu", N, &m->p.dsnu)) ||
            (st = sensim_ynode_get_quantity_range(noise, "hot_pixel_fraction", N, 0, 0, 1,
                                                  &m->p.hot_pixel_fraction)) ||
            (st = get_nonneg(noise, "hot_pixel_dark_current", F, &m->p.hot_pixel_dark_current)) ||
            (st = get_nonneg(noise, "row_offset_sigma", N, &m->p.row_offset_sigma)) ||
            (st = get_nonneg(noise, "column_offset_sigma", N, &m->p.column_offset_sigma)) ||
            (st = sensim_ynode_get_quantity_range(noise, "poisson_exact_below", N, 0, 0, INFINITY,
                                                  &m->p.poisson_exact_below)))
            goto fail;
        if (bits < 1 || bits > 16) {
            st = sensim_ynode_error(sensim_ynode_get(noise, "adc_bits"), SENSIM_EINVAL,
                                    "key 'adc_bits': %lld must be in 1..16", bits);
            goto fail;
        }
        m->p.adc_bits = (int)bits;
    }
    const sensim_ynode *lens = sensim_ynode_get(s->node, "lens");
    if (lens) {
        if ((st = sensim_ynode_check_keys(lens, "camera lens", lens_keys)))
            goto fail;
        const char *model = "pinhole";
        if ((st = sensim_ynode_get_string(lens, "model", 0, &model)))
            goto fail;
        if (strcmp(model, "pinhole") && strcmp(model, "fov")) {
            st = sensim_ynode_error(sensim_ynode_get(lens, "model"), SENSIM_EINVAL,
                                    "key 'model': unknown lens '%s' (expected pinhole, fov)", model);
            goto fail;
        }
        m->remap = !strcmp(model, "fov");
        if ((st = sensim_ynode_get_quantity_range(lens, "hfov", SENSIM_DIM_ANGLE, m->remap, 1e-9, M_PI - 1e-9,
                                                  &m->hfov)))
            goto fail;
        /* The FOV model needs tan(w) < pi/2 on the horizontal axis already;
         * the corners are checked when the frame size is known. */
        sensim_lens axis = {SENSIM_LENS_FOV, 1u << 20, 1, m->hfov};
        if (m->remap && sensim_lens_check(&axis) != SENSIM_OK) {
            st = sensim_ynode_error(sensim_ynode_get(lens, "hfov"), SENSIM_EINVAL, "key 'hfov': %s",
                                    sensim_last_error());
            goto fail;
        }
    }
    /* Validate the rest now (sizes come with the data). */
    m->p.width = m->p.height = 1;
    sensim_camera *probe = sensim_camera_create(&m->p, 0, s->id);
    if (!probe) {
        st = sensim_ynode_error(noise ? noise : s->node, SENSIM_EINVAL, "%s", sensim_last_error());
        goto fail;
    }
    sensim_camera_destroy(probe);
    s->model = m;
    return SENSIM_OK;
fail:
    free(m);
    return st;
}

static sensim_status camera_simulate(const sensim_sensor *s, const sensim_inject_opts *o, const sensim_log *in,
                                     sensim_log *out)
{
    (void)o;
    (void)out;
    return sensim_error(SENSIM_EUNSUPPORTED,
                        "%s: no /sensors/%s/image to add noise to; camera frames are made by `sensim render`",
                        sensim_log_path(in), s->name);
}

static sensim_pixel_type pixel_type(sensim_dtype t) { return t == SENSIM_U8 ? SENSIM_PIXEL_U8 : t == SENSIM_U16 ? SENSIM_PIXEL_U16 : SENSIM_PIXEL_F32; }

static sensim_status camera_noise_clean(const sensim_sensor *s, const sensim_inject_opts *o, const sensim_log *in,
                                        sensim_log *out)
{
    const camera_model *cm = s->model;
    const char *file = sensim_log_path(in);
    char g[SENSIM_NAME_MAX + 16], img[SENSIM_NAME_MAX + 32];
    snprintf(g, sizeof g, "/sensors/%s", s->name);
    snprintf(img, sizeof img, "%s/image", g);
    if (!sensim_log_exists(in, img))
        return sensim_error(SENSIM_ENOTFOUND, "%s: dataset %s not found (camera frames expected)", file, img);
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK];
    sensim_dtype dt;
    sensim_status st;
    if ((st = sensim_log_shape(in, img, &rank, dims)) || (st = sensim_log_dtype(in, img, &dt)))
        return st;
    if (rank != 3 && rank != 4)
        return sensim_error(SENSIM_EFORMAT, "%s: %s: rank %d; expected [N,H,W] or [N,H,W,C]", file, img, rank);
    size_t N = dims[0], H = dims[1], W = dims[2], C = rank == 4 ? dims[3] : 1;
    if (C != 1 && C != 3)
        return sensim_error(SENSIM_EFORMAT, "%s: %s: %zu channels; expected 1 (gray) or 3 (RGB)", file, img, C);
    if (H == 0 || W == 0)
        return sensim_error(SENSIM_EFORMAT, "%s: %s: empty frames (%zux%zu)", file, img, H, W);
    if (dt != SENSIM_U8 && dt != SENSIM_U16 && dt != SENSIM_F32)
        return sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: element type (bit depth) not supported; expected u8, u16 or f32",
                            file, img);
    sensim_camera_params p = cm->p;
    p.width = W;
    p.height = H;
    p.channels = C;
    sensim_camera *cam = sensim_camera_create(&p, o->seed, s->id);
    if (!cam)
        return sensim_error_prefix(sensim_last_status(), "%s: %s", file, img);
    sensim_remap *rm = NULL;
    if (cm->remap) {
        sensim_lens src = {SENSIM_LENS_PINHOLE, W, H, cm->hfov}, dst = {SENSIM_LENS_FOV, W, H, cm->hfov};
        if (!(rm = sensim_remap_create(&src, &dst))) {
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
    free(units);
    free(buf);
    free(tmp);
    sensim_remap_destroy(rm);
    sensim_camera_destroy(cam);
    return st;
}

const sensim_sensor_type sensim_camera_type = {
    "camera", camera_keys, camera_create, camera_destroy, camera_simulate, camera_noise_clean,
};

const sensim_camera_params *sensim_camera_sensor_params(const struct sensim_sensor *s, int *fov_lens)
{
    if (!s || s->type != &sensim_camera_type || !s->model)
        return NULL;
    const camera_model *m = s->model;
    if (fov_lens)
        *fov_lens = m->remap;
    return &m->p;
}
