/* sg_scan.h - a lidar scan on the device: each thread makes one ray with
 * the shared ray generation (sg_raygen.h), traces it (sg_bvh.h) and
 * records its hit; the hits are then compacted, beam by beam, so that the
 * host downloads the hit sub-rays only (a miss has nothing to shade) and a
 * count per beam. The bodies of the kernels of sg_kernels.cu, shared with
 * the CPU stand-in driver of the tests (tests/fakecuda), so that both run
 * the same code.
 *
 * Compaction without atomics, so that the output order is the scan's
 * (beam, sub-ray) whatever the scheduling: (1) a thread per group of
 * SG_SCAN_GROUP beams counts the hits of each of its beams and their sum;
 * (2) a thread per block of SG_SCAN_BLOCK groups turns its groups' sums
 * into offsets within the block (an exclusive prefix sum) and the block's
 * total; (3) one thread turns the blocks' totals into offsets (the scan's
 * total after them): so no thread runs through more than SG_SCAN_BLOCK
 * entries but the last, which runs through one per 8192 beams; (4) a
 * thread per group copies its hits to its block's offset plus its own. */
#ifndef SENSIM_SG_SCAN_H
#define SENSIM_SG_SCAN_H

#include "sg_bvh.h"
#include "sg_raygen.h"

#define SG_SCAN_GROUP 32  /* beams per counting / copying thread */
#define SG_SCAN_BLOCK 256 /* groups per block of the prefix sums */

/* A traced sub-ray as the host shades it: the hit's distance and
 * unnormalized geometric normal (object space for an instance, as Embree),
 * the direction as traced, geomID, instID, and the sub-ray index. */
typedef struct sg_lhit {
    float t;
    float ng[3];
    float dir[3];
    uint32_t geom, inst, sub;
} sg_lhit; /* 40 bytes */

/* Thread i: ray first + i of the scan into rec[i] (geom SG_INVALID: a miss). */
SENSIM_HD static inline void sg_scan_trace(const sg_scene *s, const sg_lidar *L, uint64_t first, uint64_t i,
                                           sg_lhit *rec)
{
    sg_ray r;
    sg_hit h;
    sg_lidar_ray(L, first + i, &r);
    sg_trace(s, &r, &h, 0);
    sg_lhit *o = &rec[i];
    o->t = h.t;
    for (int c = 0; c < 3; c++) {
        o->ng[c] = h.ng[c];
        o->dir[c] = r.dir[c];
    }
    o->geom = h.geom;
    o->inst = h.inst;
    o->sub = (uint32_t)((first + i) % L->nrays);
}

/* Thread g: hit counts of beams [g G, g G + G) of nbeam (nrays records
 * each) into count, their sum into sum[g]. */
SENSIM_HD static inline void sg_scan_count(const sg_lhit *rec, uint32_t nrays, uint64_t nbeam, uint64_t g,
                                           uint16_t *count, uint32_t *sum)
{
    uint32_t total = 0;
    for (uint64_t b = g * SG_SCAN_GROUP; b < nbeam && b < (g + 1) * SG_SCAN_GROUP; b++) {
        uint32_t n = 0;
        for (uint32_t j = 0; j < nrays; j++)
            n += rec[b * nrays + j].geom != SG_INVALID;
        count[b] = (uint16_t)n;
        total += n;
    }
    sum[g] = total;
}

/* Thread k: sum[k B .. k B + B) of ngroup to exclusive prefix sums within
 * the block, the block's total into block[k]. */
SENSIM_HD static inline void sg_scan_block(uint32_t *sum, uint64_t ngroup, uint64_t k, uint32_t *block)
{
    uint32_t acc = 0;
    for (uint64_t g = k * SG_SCAN_BLOCK; g < ngroup && g < (k + 1) * SG_SCAN_BLOCK; g++) {
        const uint32_t n = sum[g];
        sum[g] = acc;
        acc += n;
    }
    block[k] = acc;
}

/* One thread: block[0 .. nblock) to exclusive prefix sums, the total into
 * block[nblock]. */
SENSIM_HD static inline void sg_scan_offsets(uint32_t *block, uint64_t nblock)
{
    uint32_t acc = 0;
    for (uint64_t k = 0; k < nblock; k++) {
        const uint32_t n = block[k];
        block[k] = acc;
        acc += n;
    }
    block[nblock] = acc;
}

/* Thread g: the hits of its beams, in order, to out from offset
 * block[g / B] + sum[g]. */
SENSIM_HD static inline void sg_scan_compact(const sg_lhit *rec, uint32_t nrays, uint64_t nbeam, uint64_t g,
                                             const uint32_t *sum, const uint32_t *block, sg_lhit *out)
{
    uint64_t o = (uint64_t)block[g / SG_SCAN_BLOCK] + sum[g];
    for (uint64_t b = g * SG_SCAN_GROUP; b < nbeam && b < (g + 1) * SG_SCAN_GROUP; b++)
        for (uint32_t j = 0; j < nrays; j++)
            if (rec[b * nrays + j].geom != SG_INVALID)
                out[o++] = rec[b * nrays + j];
}

#endif
