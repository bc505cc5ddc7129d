/* A photon-transfer stack simulated with the camera model: the frames
 * sensim fit camera (calib/ptc.c) fits, made from known parameters. Frame
 * synthesis belongs with the model, not with the calibration. */
#include "sensim/camera.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

sensim_status sensim_ptc_simulate(const sensim_camera_params *p, uint64_t seed, uint32_t sensor, size_t levels,
                                  const double *exposure, const double *intensity, uint16_t *light,
                                  uint16_t *dark)
{
    if (!p || !exposure || !intensity || !light || !dark)
        return sensim_error(SENSIM_EINVAL, "ptc simulate: NULL argument");
    if (p->model != SENSIM_CAMERA_NOISE_EMVA)
        return sensim_error(SENSIM_EINVAL, "ptc simulate: the camera model must be emva");
    const size_t n = p->width * p->height * p->channels;
    uint16_t *in = malloc(n * sizeof *in), *zero = calloc(n, sizeof *zero);
    sensim_status st = SENSIM_OK;
    if (!in || !zero)
        st = sensim_error(SENSIM_ENOMEM, "ptc simulate: out of memory (%zu pixels)", n);
    for (size_t k = 0; k < levels && st == SENSIM_OK; k++) {
        if (!(intensity[k] >= 0 && intensity[k] <= 1)) {
            st = sensim_error(SENSIM_EINVAL, "ptc simulate: level %zu: intensity %g is not in [0, 1]", k,
                              intensity[k]);
            break;
        }
        sensim_camera_params q = *p;
        q.exposure_time = exposure[k];
        sensim_camera *c = sensim_camera_create(&q, seed, sensor);
        if (!c) {
            st = sensim_error_prefix(sensim_last_status(), "ptc simulate: level %zu", k);
            break;
        }
        uint16_t v = (uint16_t)lround(65535.0 * intensity[k]);
        for (size_t i = 0; i < n; i++)
            in[i] = v;
        uint64_t f = 4 * (uint64_t)k;
        st = sensim_camera_apply(c, f, SENSIM_PIXEL_U16, in, light + 2 * k * n);
        if (st == SENSIM_OK)
            st = sensim_camera_apply(c, f + 1, SENSIM_PIXEL_U16, in, light + (2 * k + 1) * n);
        if (st == SENSIM_OK)
            st = sensim_camera_apply(c, f + 2, SENSIM_PIXEL_U16, zero, dark + 2 * k * n);
        if (st == SENSIM_OK)
            st = sensim_camera_apply(c, f + 3, SENSIM_PIXEL_U16, zero, dark + (2 * k + 1) * n);
        sensim_camera_destroy(c);
    }
    free(in);
    free(zero);
    return st;
}
