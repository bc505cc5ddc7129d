/* A VEPD test in the authors' CSV layout, read and scored. */
#include "fuzz.h"
#include "sensim/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sensim_vepd_series s;
    if (sensim_vepd_read_csv(fuzz_write("test.csv", data, size), &s) == SENSIM_OK) {
        sensim_vepd_test t;
        if (s.n_est < 100000 && s.n_gt < 100000)
            sensim_vepd_score(&s, &t);
        sensim_vepd_series_free(&s);
    }
    return 0;
}
