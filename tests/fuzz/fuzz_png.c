/* PNG import (sensim_png_read), with and without alpha stripping. */
#include "fuzz.h"
#include "sensim/png.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sensim_image_info info;
    void *px = NULL;
    if (sensim_png_read(fuzz_write("img.png", data, size), (int)(size & 1), &info, &px) == SENSIM_OK) {
        const unsigned char *b = px;
        size_t bytes = info.width * info.height * (size_t)info.channels * (size_t)(info.bit_depth / 8);
        volatile unsigned sum = 0;
        for (size_t i = 0; i < bytes; i += 61)
            sum += b[i];
        sum += b[bytes - 1];
        free(px);
    }
    return 0;
}
