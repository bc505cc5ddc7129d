/* PNG import/export: exact round trips for 8/16-bit gray and RGB, bad files
 * and bad images with messages, target untouched on failure. */
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/png.h"
#include "testutil.h"

START_TEST(png_round_trips)
{
    char *dir = tu_mkdtemp();
    char *path = tu_path(dir, "img.png");
    const size_t W = 37, H = 23;
    for (int c = 1; c <= 3; c += 2)
        for (int bd = 8; bd <= 16; bd += 8) {
            size_t n = W * H * c, bytes = n * (bd / 8);
            unsigned char *buf = malloc(bytes);
            for (size_t i = 0; i < n; i++) {
                if (bd == 8)
                    buf[i] = (unsigned char)(i * 31 + 7);
                else
                    ((uint16_t *)buf)[i] = (uint16_t)(i * 2654435761u >> 7); /* uses both bytes */
            }
            sensim_image_info info = {W, H, c, bd}, got;
            ck_assert_int_eq(sensim_png_write(path, &info, buf), SENSIM_OK);
            void *back;
            ck_assert_int_eq(sensim_png_read(path, 0, &got, &back), SENSIM_OK);
            ck_assert_uint_eq(got.width, W);
            ck_assert_uint_eq(got.height, H);
            ck_assert_int_eq(got.channels, c);
            ck_assert_int_eq(got.bit_depth, bd);
            ck_assert(memcmp(buf, back, bytes) == 0);
            free(back);
            free(buf);
        }
    /* 16-bit samples are big-endian in the file (PNG spec): the first
     * sample 0x1234 starts the first row's data as 12 34 after the filter
     * byte. Read it back through libpng's raw row API. */
    uint16_t px[2] = {0x1234, 0xABCD};
    sensim_image_info info = {2, 1, 1, 16};
    ck_assert_int_eq(sensim_png_write(path, &info, px), SENSIM_OK);
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    ck_assert(png_image_begin_read_from_file(&img, path));
    img.format = PNG_FORMAT_LINEAR_Y;
    uint16_t lin[2];
    ck_assert(png_image_finish_read(&img, NULL, lin, 0, NULL));
    /* The simplified API converts to linear light; only order is checked. */
    ck_assert_uint_lt(lin[0], lin[1]);
    tu_rmtree(dir);
    free(dir);
    free(path);
}
END_TEST

START_TEST(png_bad_files)
{
    char *dir = tu_mkdtemp();
    char *path = tu_path(dir, "bad.png"), *good = tu_path(dir, "good.png");
    tu_write_file(path, "this is not a png");
    sensim_image_info info;
    void *px = (void *)1;
    ck_assert_int_eq(sensim_png_read(path, 0, &info, &px), SENSIM_EFORMAT);
    ck_assert_ptr_null(px);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "bad.png"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "not a PNG"));
    char *missing = tu_path(dir, "missing.png");
    ck_assert_int_eq(sensim_png_read(missing, 0, &info, &px), SENSIM_EIO);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "missing.png"));
    /* Truncated PNG: a valid file cut in half. */
    uint8_t img[64 * 64];
    for (int i = 0; i < 64 * 64; i++)
        img[i] = (uint8_t)(i * 13);
    sensim_image_info gi = {64, 64, 1, 8};
    ck_assert_int_eq(sensim_png_write(good, &gi, img), SENSIM_OK);
    size_t len;
    char *data = tu_read_file(good, &len);
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, len / 2, f);
    fclose(f);
    ck_assert_int_eq(sensim_png_read(path, 0, &info, &px), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "bad.png"));
    /* Alpha refused unless stripped. */
    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    pi.width = 2;
    pi.height = 2;
    pi.format = PNG_FORMAT_RGBA;
    uint8_t rgba[16] = {1, 2, 3, 255, 4, 5, 6, 128, 7, 8, 9, 0, 10, 11, 12, 255};
    ck_assert(png_image_write_to_file(&pi, path, 0, rgba, 0, NULL));
    ck_assert_int_eq(sensim_png_read(path, 0, &info, &px), SENSIM_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "alpha"));
    ck_assert_int_eq(sensim_png_read(path, 1, &info, &px), SENSIM_OK);
    ck_assert_int_eq(info.channels, 3);
    ck_assert_uint_eq(((uint8_t *)px)[3], 4);
    free(px);
    /* Bad image descriptions: error, and the existing target is untouched. */
    sensim_image_info b2 = {64, 64, 2, 8};
    ck_assert_int_eq(sensim_png_write(good, &b2, img), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "channels"));
    sensim_image_info b12 = {64, 64, 1, 12};
    ck_assert_int_eq(sensim_png_write(good, &b12, img), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "bit depth"));
    size_t len2;
    char *data2 = tu_read_file(good, &len2);
    ck_assert_uint_eq(len, len2);
    ck_assert(memcmp(data, data2, len) == 0);
    free(data);
    free(data2);
    tu_rmtree(dir);
    free(dir);
    free(path);
    free(good);
    free(missing);
}
END_TEST

/* One PNG chunk: length, type, data, CRC-32 of type and data. */
static void put_chunk(FILE *f, const char *type, const uint8_t *data, uint32_t len)
{
    uint8_t buf[64];
    for (int i = 0; i < 4; i++)
        buf[i] = (uint8_t)(len >> (24 - 8 * i));
    memcpy(buf + 4, type, 4);
    memcpy(buf + 8, data, len);
    uint32_t crc = 0xffffffffu;
    for (uint32_t i = 4; i < 8 + len; i++) {
        crc ^= buf[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    crc ^= 0xffffffffu;
    for (int i = 0; i < 4; i++)
        buf[8 + len + i] = (uint8_t)(crc >> (24 - 8 * i));
    fwrite(buf, 1, 12 + len, f);
}

/* A 57-byte PNG declaring W x H of 8-bit gray, with an empty zlib stream. */
static void write_png_header(const char *path, uint32_t W, uint32_t H)
{
    uint8_t ihdr[13] = {0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        ihdr[i] = (uint8_t)(W >> (24 - 8 * i));
        ihdr[4 + i] = (uint8_t)(H >> (24 - 8 * i));
    }
    const uint8_t idat[8] = {0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01};
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite("\x89PNG\r\n\x1a\n", 1, 8, f);
    put_chunk(f, "IHDR", ihdr, 13);
    put_chunk(f, "IDAT", idat, 8);
    put_chunk(f, "IEND", idat, 0);
    fclose(f);
}

/* A 274-byte PNG declaring 100000 x 100000 pixels (10 GB of gray): refused
 * from its header, before anything is allocated or decoded. An all-black
 * frame, compressed as far as deflate goes, still reads. */
START_TEST(png_bomb_refused)
{
    char *bomb = tu_src("tests/data/png-bomb.png");
    sensim_image_info info;
    void *px = (void *)1;
    ck_assert_int_eq(sensim_png_read(bomb, 0, &info, &px), SENSIM_EFORMAT);
    ck_assert_ptr_null(px);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "png-bomb.png"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "100000x100000"));
    free(bomb);
    char *dir = tu_mkdtemp();
    char *path = tu_path(dir, "black.png");
    const size_t W = 3000, H = 2000;
    uint8_t *black = calloc(W * H, 1);
    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    pi.width = (png_uint_32)W;
    pi.height = (png_uint_32)H;
    pi.format = PNG_FORMAT_GRAY;
    ck_assert(png_image_write_to_file(&pi, path, 0, black, 0, NULL));
    ck_assert_int_eq(sensim_png_read(path, 0, &info, &px), SENSIM_OK);
    ck_assert_uint_eq(info.width, W);
    ck_assert_uint_eq(info.height, H);
    free(px);
    free(black);
    /* Under the pixel limit (the bomb above is over it) but more than the
     * file can hold. */
    write_png_header(path, 16000, 16000);
    ck_assert_int_eq(sensim_png_read(path, 0, &info, &px), SENSIM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "16000x16000"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "decompression bomb"));
    tu_rmtree(dir);
    free(dir);
    free(path);
}
END_TEST

Suite *suite_png(void)
{
    Suite *s = suite_create("png");
    TCase *tc = tcase_create("png");
    tcase_add_test(tc, png_round_trips);
    tcase_add_test(tc, png_bad_files);
    tcase_add_test(tc, png_bomb_refused);
    suite_add_tcase(s, tc);
    return s;
}
