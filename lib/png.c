/* PNG import and export through libpng's setjmp-based API. See sensim/png.h. */
#include "sensim/png.h"

#include "sensim/afile.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* libpng reports through callbacks: keep its message for ours instead of
 * letting it print. */
typedef struct png_ctx {
    char msg[256];
} png_ctx;

static void on_error(png_structp png, png_const_charp msg)
{
    png_ctx *c = png_get_error_ptr(png);
    snprintf(c->msg, sizeof c->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* One libpng read (writing 0) or write of f: creates libpng's structs,
 * sets the jump libpng's errors return to, attaches f, runs body and
 * destroys the structs. The jump needs a frame that lives while libpng
 * runs, hence body as a callback; what body allocates it keeps in *arg for
 * the caller to free, since a jump leaves body's own frame. */
static sensim_status png_session(FILE *f, const char *path, int writing,
                                 sensim_status (*body)(png_structp png, png_infop pi, void *arg), void *arg)
{
    png_ctx ctx = {{0}};
    png_structp png = writing ? png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx, on_error, on_warning)
                              : png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, on_error, on_warning);
    png_infop pi = png ? png_create_info_struct(png) : NULL;
    sensim_status st;
    if (!png || !pi)
        st = sensim_error(SENSIM_ENOMEM, "%s: cannot create a PNG %s", path, writing ? "writer" : "reader");
    else if (setjmp(png_jmpbuf(png)))
        st = writing ? sensim_error(SENSIM_EIO, "%s: PNG write failed: %s", path, ctx.msg)
                     : sensim_error(SENSIM_EFORMAT, "%s: corrupt PNG: %s", path, ctx.msg);
    else {
        png_init_io(png, f);
        st = body(png, pi, arg);
    }
    if (writing)
        png_destroy_write_struct(png ? &png : NULL, pi ? &pi : NULL);
    else
        png_destroy_read_struct(png ? &png : NULL, pi ? &pi : NULL, NULL);
    return st;
}

typedef struct {
    const char *path;
    int strip_alpha;
    off_t fsize; /* the file's size, bounding the image it can hold */
    sensim_image_info *info;
    void **pixels;
    /* volatile: set in read_body, freed by the caller after a jump. */
    unsigned char *volatile buf;
    png_bytep *volatile rows;
} png_reading;

static sensim_status read_body(png_structp png, png_infop pi, void *arg)
{
    png_reading *r = arg;
    const char *path = r->path;
    png_set_sig_bytes(png, 8);
    png_read_info(png, pi);
    /* Decompression bombs: the image data is a zlib stream within the file,
     * and deflate expands at most 1032:1 (RFC 1951's longest match, 258
     * bytes, in under two bits), so the filtered rows (one filter byte each)
     * cannot exceed 1032 times the file size. Interlacing adds at most one
     * filter byte per pass row: allowed for by the 7 rows below. */
    {
        size_t fw = png_get_image_width(png, pi), fh = png_get_image_height(png, pi);
        size_t frow = png_get_rowbytes(png, pi);
        if (fw == 0 || fh == 0 || fw > SENSIM_PNG_MAX_PIXELS / fh)
            return sensim_error(SENSIM_EFORMAT, "%s: PNG declares %zux%zu pixels (at most %zu pixels are read)", path,
                                fw, fh, SENSIM_PNG_MAX_PIXELS);
        double raw = ((double)frow + 1.0) * ((double)fh + 7.0);
        if (raw > 1032.0 * (double)r->fsize + 4096.0)
            return sensim_error(SENSIM_EFORMAT,
                                "%s: PNG declares %zux%zu pixels (%.0f bytes of image data) but the file has only "
                                "%ld bytes: truncated or a decompression bomb",
                                path, fw, fh, raw, (long)r->fsize);
    }
    int ct = png_get_color_type(png, pi), bd = png_get_bit_depth(png, pi);
    if (ct == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (ct == PNG_COLOR_TYPE_GRAY && bd < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, pi, PNG_INFO_tRNS) && !r->strip_alpha)
        return sensim_error(SENSIM_EUNSUPPORTED, "%s: PNG has transparency; gray or RGB expected", path);
    if (ct & PNG_COLOR_MASK_ALPHA) {
        if (!r->strip_alpha)
            return sensim_error(SENSIM_EUNSUPPORTED, "%s: PNG has an alpha channel; gray or RGB expected", path);
        png_set_strip_alpha(png);
    }
    if (bd == 16)
        png_set_swap(png); /* file is big-endian; memory native (little-endian hosts) */
    png_read_update_info(png, pi);
    size_t W = png_get_image_width(png, pi), H = png_get_image_height(png, pi);
    int C = png_get_channels(png, pi), B = png_get_bit_depth(png, pi);
    if ((C != 1 && C != 3) || (B != 8 && B != 16))
        return sensim_error(SENSIM_EUNSUPPORTED, "%s: %d channels of %d bits; gray or RGB of 8 or 16 bits expected",
                            path, C, B);
    size_t rowbytes = png_get_rowbytes(png, pi);
    if (rowbytes != W * (size_t)C * (size_t)(B / 8))
        return sensim_error(SENSIM_EFORMAT, "%s: unexpected row size %zu", path, rowbytes);
    r->buf = malloc(rowbytes * H);
    r->rows = malloc(H * sizeof *r->rows);
    if (!r->buf || !r->rows)
        return sensim_error(SENSIM_ENOMEM, "%s: cannot allocate a %zux%zu image", path, W, H);
    for (size_t y = 0; y < H; y++)
        r->rows[y] = r->buf + y * rowbytes;
    png_read_image(png, r->rows);
    png_read_end(png, NULL);
    r->info->width = W;
    r->info->height = H;
    r->info->channels = C;
    r->info->bit_depth = B;
    *r->pixels = r->buf;
    r->buf = NULL;
    return SENSIM_OK;
}

sensim_status sensim_png_read(const char *path, int strip_alpha, sensim_image_info *info, void **pixels)
{
    *pixels = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sensim_error(SENSIM_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    off_t fsize = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) ? sb.st_size : (off_t)1 << 40;
    unsigned char sig[8];
    if (fread(sig, 1, 8, f) != 8 || png_sig_cmp(sig, 0, 8)) {
        fclose(f);
        return sensim_error(SENSIM_EFORMAT, "%s: not a PNG file", path);
    }
    png_reading r = {path, strip_alpha, fsize, info, pixels, NULL, NULL};
    sensim_status st = png_session(f, path, 0, read_body, &r);
    free(r.rows);
    free(r.buf);
    fclose(f);
    return st;
}

typedef struct {
    const char *path;
    const sensim_image_info *info;
    const void *pixels;
    png_bytep *volatile rows; /* volatile: set in write_body, freed by the caller after a jump */
} png_writing;

static sensim_status write_body(png_structp png, png_infop pi, void *arg)
{
    png_writing *w = arg;
    const sensim_image_info *info = w->info;
    png_set_IHDR(png, pi, (png_uint_32)info->width, (png_uint_32)info->height, info->bit_depth,
                 info->channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, pi);
    if (info->bit_depth == 16)
        png_set_swap(png);
    size_t rowbytes = info->width * (size_t)info->channels * (size_t)(info->bit_depth / 8);
    if (!(w->rows = malloc(info->height * sizeof *w->rows)))
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", w->path);
    for (size_t y = 0; y < info->height; y++)
        w->rows[y] = (png_bytep)w->pixels + y * rowbytes;
    png_write_image(png, w->rows);
    png_write_end(png, NULL);
    return SENSIM_OK;
}

sensim_status sensim_png_write(const char *path, const sensim_image_info *info, const void *pixels)
{
    if (!info || !pixels)
        return sensim_error(SENSIM_EINVAL, "%s: NULL image", path);
    if (info->width == 0 || info->height == 0 || info->width > 0x7fffffff || info->height > 0x7fffffff)
        return sensim_error(SENSIM_EINVAL, "%s: bad image size %zux%zu", path, info->width, info->height);
    if (info->channels != 1 && info->channels != 3)
        return sensim_error(SENSIM_EINVAL, "%s: %d channels: PNG export takes 1 (gray) or 3 (RGB)", path,
                            info->channels);
    if (info->bit_depth != 8 && info->bit_depth != 16)
        return sensim_error(SENSIM_EINVAL, "%s: bit depth %d: PNG export takes 8 or 16", path, info->bit_depth);
    sensim_afile *af = sensim_afile_open(path);
    if (!af)
        return sensim_last_status();
    png_writing w = {path, info, pixels, NULL};
    sensim_status st = png_session(sensim_afile_stream(af), path, 1, write_body, &w);
    free(w.rows);
    if (st != SENSIM_OK) {
        sensim_afile_abort(af);
        return st;
    }
    return sensim_afile_commit(af);
}
