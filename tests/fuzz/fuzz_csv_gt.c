/* Ground-truth CSV (sensim import): the full 17-column layout and the
 * position-only track, read block by block. */
#include "fuzz.h"
#include "sensim/csv.h"
#include "sensim/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sensim_csv_gt_reader *r = sensim_csv_gt_reader_open(fuzz_write("gt.csv", data, size));
    if (!r)
        return 0;
    sensim_gt_block b;
    double lla[3];
    sensim_csv_gt_reader_origin(r, lla);
    if (sensim_gt_block_init(&b, 64) == SENSIM_OK) {
        while (sensim_csv_gt_reader_read(r, &b) == SENSIM_OK && b.n > 0)
            ;
        sensim_gt_block_free(&b);
    }
    sensim_csv_gt_reader_close(r);
    return 0;
}
