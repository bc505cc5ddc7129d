/* Internal: the RADTAN and KB lenses of models/lens.c, called by the lens
 * functions of models/camera.c (not installed). */
#ifndef SENSIM_LENS_IMPL_H
#define SENSIM_LENS_IMPL_H

#include "sensim/camera.h"

/* sensim_lens_check's part for RADTAN and KB (sizes already checked). */
sensim_status lens_intr_check(const sensim_lens *l);
/* Pixel (sensim coordinates) -> unit direction; Newton steps or -1. */
int lens_intr_undistort(const sensim_lens *l, double u, double v, double dir[3]);
/* Direction -> pixel by the forward formulas; 0 outside the domain. */
int lens_intr_dir_to_pixel(const sensim_lens *l, const double dir[3], double *u, double *v);

#endif
