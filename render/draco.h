/* KHR_draco_mesh_compression: a Draco-compressed glTF primitive decoded by
 * Debian's libdraco (C++) behind a C interface (render/draco.cc), so that
 * the rest of the library stays C11. Internal to the render module. */
#ifndef SENSIM_RENDER_DRACO_H
#define SENSIM_RENDER_DRACO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(hidden)

/* Decodes the Draco mesh in data[0..len) (borrowed for the call). For each
 * of the nids attribute unique ids in ids (glTF's extension maps a
 * semantic to one), attr[k] receives npoints x ncomp[k] floats (malloc'd,
 * the caller frees; dequantized as Draco's decoder does); *tri receives
 * ntri x 3 point indices (malloc'd). Returns 0, or -1 with a message in
 * err (nothing allocated then). Never throws, prints or exits. */
int sensim_draco_decode(const unsigned char *data, size_t len, const int *ids, int nids, float **attr, int *ncomp,
                        size_t *npoints, uint32_t **tri, size_t *ntri, char *err, size_t errlen);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
