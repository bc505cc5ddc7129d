/* One CSV column by index and by name (sensim allan --input FILE.csv). */
#include "fuzz.h"
#include "sensim/csv.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = fuzz_write("col.csv", data, size);
    double *v = NULL;
    size_t n;
    if (sensim_csv_read_column(p, size % 4, &v, &n) == SENSIM_OK)
        free(v);
    v = NULL;
    if (sensim_csv_read_column_named(p, "wx", &v, &n) == SENSIM_OK)
        free(v);
    return 0;
}
