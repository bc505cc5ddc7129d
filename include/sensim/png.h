/* sensim/png.h - PNG image import and export (libpng) for image sequences:
 * 8- and 16-bit grayscale and RGB. 16-bit samples are big-endian in the file
 * and native uint16_t in memory.
 *
 * Ownership: sensim_png_read returns a malloc'd pixel buffer the caller frees
 * with free(); sensim_png_write borrows its buffer for the call and writes
 * to a temporary name beside the target, renamed on success.
 *
 * Thread safety: the functions hold no shared state; different files may be
 * read or written from different threads at once. */
#ifndef SENSIM_PNG_H
#define SENSIM_PNG_H

#include <stddef.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sensim_image_info {
    size_t width, height;
    int channels;  /* 1 (gray) or 3 (RGB) */
    int bit_depth; /* 8 or 16 */
} sensim_image_info;

/* The largest image sensim_png_read decodes, in pixels (2^28: 256 Mpx,
 * 1.5 GiB as RGB of 16 bits). */
#define SENSIM_PNG_MAX_PIXELS ((size_t)1 << 28)

/* Reads a PNG. Gray and RGB of 8 or 16 bits are returned as stored (gray
 * images of 1, 2 or 4 bits are expanded to 8, palette images to RGB 8);
 * images with alpha are refused (SENSIM_EUNSUPPORTED, naming the file) unless
 * strip_alpha is nonzero. Before allocating, the declared size is checked
 * against SENSIM_PNG_MAX_PIXELS and against what the file can hold (zlib
 * expands at most 1032:1), so a small file declaring a huge image is refused
 * (SENSIM_EFORMAT) instead of being decoded. *pixels: H*W*C samples, uint8_t or uint16_t. */
sensim_status sensim_png_read(const char *path, int strip_alpha, sensim_image_info *info, void **pixels);

/* Writes pixels (H*W*C samples of info->bit_depth bits) as a PNG. */
sensim_status sensim_png_write(const char *path, const sensim_image_info *info, const void *pixels);

#ifdef __cplusplus
}
#endif
#endif
