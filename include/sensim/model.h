/* sensim/model.h - the declarations the noise models share, written once
 * (libsensim(3), "Noise models", states the contract). For a model X whose
 * object is sensim_X and parameters sensim_X_params,
 * SENSIM_MODEL_DECLARE(sensim_X) declares:
 *
 *   sensim_X_params sensim_X_default_params(void);
 *       every effect off, to be filled in (the model's header lists the values);
 *   sensim_X *sensim_X_create(const sensim_X_params *p, uint64_t seed, uint32_t sensor_id);
 *       validates, copies the parameters and precomputes; NULL with a message
 *       naming the parameter. The seed enters here: every draw comes from the
 *       streams of (seed, sensor_id);
 *   void sensim_X_destroy(sensim_X *m);
 *       frees the model; NULL is a no-op;
 *   const sensim_X_params *sensim_X_params_of(const sensim_X *m);
 *       the parameters the model was created with (borrowed);
 *   void sensim_X_print(const sensim_X *m, FILE *f);
 *       describes the model on f.
 *
 * Used by sensim/gnss.h, sensim/odometer.h (encoder and odometer),
 * sensim/camera.h and sensim/lidar.h; the IMU triax (sensim/imu.h) declares
 * its own, as its create also takes the instrument and the rate. Each
 * model's _reset and _apply differ and are declared in its header. */
#ifndef SENSIM_MODEL_H
#define SENSIM_MODEL_H

#include <stdint.h>
#include <stdio.h>

#define SENSIM_MODEL_DECLARE(X) \
    X##_params X##_default_params(void); \
    X *X##_create(const X##_params *p, uint64_t seed, uint32_t sensor_id); \
    void X##_destroy(X *m); \
    const X##_params *X##_params_of(const X *m); \
    void X##_print(const X *m, FILE *f)

#endif
