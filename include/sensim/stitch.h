/* sensim/stitch.h - shards of one job, and the file that presents them as one.
 *
 * A heavy job (a render of thousands of frames, hundreds of noise
 * realisations) runs as N independent processes, each writing a complete,
 * self-describing log: a shard. Counter-based random streams make a shard's
 * values independent of how the work was split, so the union of the shards
 * equals the single run bit for bit. sensim_stitch() writes a small file of
 * HDF5 virtual datasets (VDS, HDF5 >= 1.10) that maps every shard's datasets,
 * so h5py, MATLAB and sensim read the set as one log.
 *
 * A shard says what it is in attributes of its root group, written by
 * sensim_shard_tag():
 *   shard_kind   "rows": the shard holds rows [first, end) of every dataset
 *                along its first axis (frames, scans, samples);
 *                "seeds": the shard is one realisation, seed `first`, of a
 *                range of seeds (first = seed, end = seed + 1)
 *   shard        i64[2] {index, count}: index in 0..count-1
 *   shard_range  i64[2] {first, end}: the half-open range it covers
 *   shard_total  i64: the end of the whole range
 *   shard_shared string (optional): comma-separated groups every shard holds
 *                whole (a ground truth copied through), mapped from the first
 *
 * Thread safety: HDF5 is not thread-safe; call from one thread at a time. */
#ifndef SENSIM_STITCH_H
#define SENSIM_STITCH_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sensim_shard {
    const char *kind;   /* "rows" or "seeds" */
    int64_t index;      /* 0..count-1 */
    int64_t count;      /* shards in the job */
    int64_t first, end; /* half-open range covered */
    int64_t total;      /* end of the whole range */
    const char *shared; /* groups held whole by every shard, comma-separated; NULL: none */
} sensim_shard;

/* Splits [0, total) into count contiguous parts and gives part `index`
 * (sizes differ by at most one, larger parts first). */
void sensim_shard_split(int64_t total, int64_t count, int64_t index, int64_t *first, int64_t *end);

/* Parses "I/N" (0 <= I < N, N <= 1000000) into index and count. SENSIM_EINVAL
 * with a message quoting text when it is not. */
sensim_status sensim_shard_parse(const char *text, int64_t *index, int64_t *count);

/* Writes the shard attributes into the root of an existing, closed HDF5 file
 * (a finished log not yet renamed into place). The error names the file. */
sensim_status sensim_shard_tag(const char *path, const sensim_shard *shard);

/* Writes out_path (to a temporary name, then renamed): a log of virtual
 * datasets over the shards, whose source paths are relative to out_path's
 * directory so the set can be moved together. Before writing anything it
 * checks that the shards belong together: the same kind, count and total;
 * every index present once (a missing one is named by its index, a repeated
 * one names both files); ranges contiguous and non-overlapping; the same
 * groups and datasets with the same types and trailing dimensions; the same
 * attributes on the root and every group (the rig's model, type, rate,
 * mount; the seed for "rows"; not the root's created_by, the command that
 * names each part). The first shard that differs is named. "rows" may start
 * past 0 (a render of frames A..B in parts).
 *
 * "rows": each dataset is the concatenation of the shards' along axis 0,
 * except lidar scan_offset (cumulative: recomputed and written as a real
 * dataset) and the shared groups (mapped from the first shard).
 * "seeds": the shared groups (default /ground_truth) from the first shard,
 * everything else of the shard with seed S under /seeds/S/.
 * Attributes are carried over (the shard_* ones dropped; the root gets
 * stitched_shards = count) and each group's t is attached as the dimension
 * scale of the datasets beside it, as in every log. */
sensim_status sensim_stitch(const char *out_path, const char *const *shards, size_t n, const char *created_by);

#ifdef __cplusplus
}
#endif
#endif
