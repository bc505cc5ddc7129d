/* Point clouds (sensim_cloud_read): PLY and PCD, ascii and binary. */
#include "fuzz.h"
#include "sensim/pointcloud.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    float *xyzi = NULL;
    size_t n;
    int hi;
    sensim_cloud_format fmt;
    if (sensim_cloud_read(fuzz_write("cloud", data, size), &xyzi, &n, &hi, &fmt) == SENSIM_OK) {
        volatile float sum = 0; /* touch every value: the sizes must be right */
        for (size_t i = 0; i < 4 * n; i++)
            sum += xyzi[i];
        free(xyzi);
    }
    return 0;
}
