/* Textures for camera shading: PNG (libpng's simplified API, any colour
 * type and bit depth) and JPEG (libjpeg-turbo) decoded from memory to
 * linear RGB (base colour textures are sRGB-encoded, glTF 2.0 sec.
 * 3.9.2; metallic-roughness textures are linear data), sampled bilinearly with glTF's wrap modes (sec. 5.26). The data
 * are untrusted: the declared size is checked before anything is
 * allocated, and decoder errors come back as messages, never printed. */
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>

#include "sensim/status.h"
#include "surface.h"
#include "../lib/base_internal.h"

static float srgb_to_linear(unsigned v)
{
    double c = v / 255.0;
    return (float)(c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4));
}

/* 8-bit samples with `stride` bytes a pixel into floats: sRGB colour made
 * linear, or data (v / 255). */
static int to_linear(const unsigned char *px, size_t n, size_t stride, int srgb, const char *what, sensim_texture *t)
{
    float lut[256];
    for (unsigned i = 0; i < 256; i++)
        lut[i] = srgb ? srgb_to_linear(i) : (float)(i / 255.0);
    if (!(t->rgb = malloc(n * 3 * sizeof *t->rgb))) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory for a %zux%zu texture", what, t->width, t->height);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
            t->rgb[3 * i + c] = lut[px[i * stride + c]];
    return 0;
}

static int size_ok(size_t w, size_t h, size_t len, const char *what, const char *kind)
{
    if (w == 0 || h == 0 || w > SENSIM_TEXTURE_MAX_PIXELS / h) {
        sensim_error(SENSIM_EFORMAT, "%s: %s of %zux%zu pixels: more than the %zu a texture may have", what, kind, w, h,
                     SENSIM_TEXTURE_MAX_PIXELS);
        return 0;
    }
    /* Neither zlib (1032:1) nor JPEG (a 64-pixel block needs a few bits)
     * expands a small file into a huge image. */
    if (w * h > (len + 1024) * 1032) {
        sensim_error(SENSIM_EFORMAT, "%s: %s declares %zux%zu pixels but has only %zu bytes", what, kind, w, h, len);
        return 0;
    }
    return 1;
}

static int decode_png(const unsigned char *data, size_t len, int srgb, const char *what, sensim_texture *t)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&img, data, len)) {
        sensim_error(SENSIM_EFORMAT, "%s: PNG: %s", what, img.message);
        return -1;
    }
    t->width = img.width;
    t->height = img.height;
    if (!size_ok(t->width, t->height, len, what, "PNG")) {
        png_image_free(&img);
        return -1;
    }
    /* Colour: 8-bit sRGB (libpng encodes a 16-bit file, linear to it, so).
     * Data: the file's own values, 16-bit ones read as such (libpng's
     * linear format leaves a 16-bit file's samples as they are). Alpha is
     * kept apart, not composited. */
    const int wide = !srgb && (img.format & PNG_FORMAT_FLAG_LINEAR);
    img.format = wide ? PNG_FORMAT_LINEAR_RGB_ALPHA : PNG_FORMAT_RGBA;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(img));
    if (!px) {
        png_image_free(&img);
        sensim_error(SENSIM_ENOMEM, "%s: out of memory for a %zux%zu PNG", what, t->width, t->height);
        return -1;
    }
    if (!png_image_finish_read(&img, NULL, px, 0, NULL)) {
        sensim_error(SENSIM_EFORMAT, "%s: PNG: %s", what, img.message);
        free(px);
        return -1;
    }
    int rc = 0;
    if (!wide)
        rc = to_linear(px, t->width * t->height, 4, srgb, what, t);
    else if (!(t->rgb = malloc(t->width * t->height * 3 * sizeof *t->rgb))) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory for a %zux%zu texture", what, t->width, t->height);
        rc = -1;
    } else {
        const png_uint_16 *w = (const png_uint_16 *)px;
        for (size_t i = 0; i < t->width * t->height; i++)
            for (int c = 0; c < 3; c++)
                t->rgb[3 * i + c] = (float)(w[4 * i + c] / 65535.0);
    }
    free(px);
    return rc;
}

struct jerr {
    struct jpeg_error_mgr mgr;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
};

static void jerr_exit(j_common_ptr c)
{
    struct jerr *e = (struct jerr *)c->err;
    (*c->err->format_message)(c, e->msg);
    longjmp(e->jb, 1);
}

static void jerr_quiet(j_common_ptr c) { (void)c; }

static int decode_jpeg(const unsigned char *data, size_t len, int srgb, const char *what, sensim_texture *t)
{
    struct jpeg_decompress_struct ci;
    struct jerr e;
    unsigned char *volatile px = NULL;
    memset(&ci, 0, sizeof ci);
    ci.err = jpeg_std_error(&e.mgr);
    e.mgr.error_exit = jerr_exit;
    e.mgr.output_message = jerr_quiet; /* the library never prints */
    if (setjmp(e.jb)) {
        sensim_error(SENSIM_EFORMAT, "%s: JPEG: %s", what, e.msg);
        jpeg_destroy_decompress(&ci);
        free(px);
        return -1;
    }
    jpeg_create_decompress(&ci);
    jpeg_mem_src(&ci, data, (unsigned long)len);
    jpeg_read_header(&ci, TRUE);
    t->width = ci.image_width;
    t->height = ci.image_height;
    if (!size_ok(t->width, t->height, len, what, "JPEG")) {
        jpeg_destroy_decompress(&ci);
        return -1;
    }
    ci.out_color_space = JCS_RGB; /* grayscale and YCbCr alike */
    jpeg_start_decompress(&ci);
    if (ci.output_components != 3) {
        snprintf(e.msg, sizeof e.msg, "%d output components (expected RGB)", ci.output_components);
        longjmp(e.jb, 1);
    }
    if (!(px = malloc(t->width * t->height * 3))) {
        snprintf(e.msg, sizeof e.msg, "out of memory for %zux%zu pixels", t->width, t->height);
        longjmp(e.jb, 1);
    }
    while (ci.output_scanline < ci.output_height) {
        JSAMPROW row = px + (size_t)ci.output_scanline * t->width * 3;
        jpeg_read_scanlines(&ci, &row, 1);
    }
    jpeg_finish_decompress(&ci);
    jpeg_destroy_decompress(&ci);
    int rc = to_linear(px, t->width * t->height, 3, srgb, what, t);
    free(px);
    return rc;
}

int sensim_texture_decode(const unsigned char *data, size_t len, int srgb, const char *what, sensim_texture *t)
{
    memset(t, 0, sizeof *t);
    t->wrap_s = t->wrap_t = TEX_REPEAT;
    static const unsigned char png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (len >= 8 && !memcmp(data, png_magic, 8))
        return decode_png(data, len, srgb, what, t);
    if (len >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF)
        return decode_jpeg(data, len, srgb, what, t);
    sensim_error(SENSIM_EUNSUPPORTED, "%s: not a PNG or JPEG image (the two formats glTF 2.0 allows)", what);
    return -1;
}

void sensim_texture_free(sensim_texture *t)
{
    if (t) {
        free(t->rgb);
        t->rgb = NULL;
    }
}

/* Coordinate u brought into [0, 1] by the wrap mode. */
static double wrap_coord(double u, int mode)
{
    if (!isfinite(u))
        return 0;
    if (mode == TEX_CLAMP)
        return u < 0 ? 0 : u > 1 ? 1 : u;
    if (mode == TEX_MIRROR) {
        u -= 2 * floor(0.5 * u);
        return u > 1 ? 2 - u : u;
    }
    return u - floor(u);
}

/* Pixel index i (may be -1 or n) by the wrap mode. */
static size_t wrap_index(long long i, size_t n, int mode)
{
    long long N = (long long)n;
    if (mode == TEX_REPEAT)
        return (size_t)(((i % N) + N) % N);
    if (mode == TEX_MIRROR) {
        long long k = ((i % (2 * N)) + 2 * N) % (2 * N);
        return (size_t)(k < N ? k : 2 * N - 1 - k);
    }
    return (size_t)(i < 0 ? 0 : i >= N ? N - 1 : i);
}

void sensim_texture_sample(const sensim_texture *t, double u, double v, double rgb[3])
{
    const size_t W = t->width, H = t->height;
    double x = wrap_coord(u, t->wrap_s) * (double)W, y = wrap_coord(v, t->wrap_t) * (double)H;
    if (t->nearest) {
        size_t i = wrap_index((long long)floor(x), W, t->wrap_s), j = wrap_index((long long)floor(y), H, t->wrap_t);
        for (int c = 0; c < 3; c++)
            rgb[c] = t->rgb[3 * (j * W + i) + c];
        return;
    }
    x -= 0.5;
    y -= 0.5;
    double fx = floor(x), fy = floor(y), ax = x - fx, ay = y - fy;
    size_t i0 = wrap_index((long long)fx, W, t->wrap_s), i1 = wrap_index((long long)fx + 1, W, t->wrap_s);
    size_t j0 = wrap_index((long long)fy, H, t->wrap_t), j1 = wrap_index((long long)fy + 1, H, t->wrap_t);
    for (int c = 0; c < 3; c++) {
        double a = t->rgb[3 * (j0 * W + i0) + c], b = t->rgb[3 * (j0 * W + i1) + c];
        double d = t->rgb[3 * (j1 * W + i0) + c], e = t->rgb[3 * (j1 * W + i1) + c];
        rgb[c] = (1 - ay) * ((1 - ax) * a + ax * b) + ay * ((1 - ax) * d + ax * e);
    }
}

void scene_surface_free(scene_surface *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ntex; i++)
        sensim_texture_free(&s->tex[i]);
    SENSIM_FREE_ALL(s->tex, s->mat, s->uv, s->tri_mat, s);
}
