/* sensim/rng.h - counter-based random streams (Philox4x32-10, Random123).
 *
 * A stream is keyed by (seed, sensor, stream) and indexed by sample: the value
 * drawn for index k depends only on the key and k, never on how many draws
 * came before, on chunking or on the thread count. This is what makes every
 * sensim output bit-identical for a seed whatever the parallelism.
 *
 * Counter layout: key = seed (64 bits); counter words c0,c1 = index (or
 * index/4 for the four-lane fast path), c2 = stream, c3 = sensor (low 24
 * bits) | attempt byte (high 8 bits). Attempt 0 serves the plain draws;
 * 1..63 the normal sampler's rejections; 64..127 Poisson; 128..255 gamma.
 * Use one stream per random quantity (one per effect and axis).
 *
 * A sensim_rng is a small value; copy it freely. All functions are pure and
 * thread-safe. */
#ifndef SENSIM_RNG_H
#define SENSIM_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sensim_rng {
    uint32_t key[2];
    uint32_t stream;
    uint32_t sensor; /* low 24 bits used */
} sensim_rng;

sensim_rng sensim_rng_make(uint64_t seed, uint32_t sensor, uint32_t stream);

/* A 24-bit sensor id from a sensor name (FNV-1a folded), so that a sensor's
 * noise does not change when others are added to or removed from a rig. */
uint32_t sensim_rng_sensor_id(const char *name);

/* Four raw 32-bit words for block b = index / 4 (counter c0,c1 = b). */
void sensim_rng_block(const sensim_rng *r, uint64_t block, uint32_t out[4]);
uint32_t sensim_rng_u32(const sensim_rng *r, uint64_t index);
/* Uniform on the open interval (0, 1), resolution 2^-32. */
double sensim_rng_uniform(const sensim_rng *r, uint64_t index);
/* Standard normal by a 128-layer ziggurat (Marsaglia & Tsang 2000) on 32-bit
 * lanes: 7 bits choose the layer, 1 the sign, 24 the abscissa; rejections draw
 * from the index's own attempt counters, so the result is still a pure
 * function of (key, index). */
double sensim_rng_normal(const sensim_rng *r, uint64_t index);
/* out[i] = sensim_rng_normal(r, first + i) for i < n, computed block-wise. */
void sensim_rng_normal_fill(const sensim_rng *r, uint64_t first, size_t n, double *out);
/* out[s][i] = sensim_rng_normal(r[s], first[s] + i) for s < count, i < n:
 * several streams in one call, so that the rare slow-path lanes of all of
 * them are finished together (faster than count separate fills). */
void sensim_rng_normal_fill_many(int count, const sensim_rng *const r[], const uint64_t first[], size_t n,
                                 double *const out[]);
/* The kernels behind sensim_rng_normal_fill: portable C (SCALAR), AVX2, and
 * a fused Philox + ziggurat AVX-512 pass; AUTO picks the best this CPU has.
 * All give bit-identical values; this entry exists so that tests and
 * benchmarks can run each one. Fails with SENSIM_EUNSUPPORTED (nothing
 * written) where the CPU or build lacks the one asked for. */
typedef enum sensim_rng_impl {
    SENSIM_RNG_IMPL_AUTO = 0,
    SENSIM_RNG_IMPL_SCALAR = 1,
    SENSIM_RNG_IMPL_AVX2 = 2,
    SENSIM_RNG_IMPL_AVX512 = 3
} sensim_rng_impl;
int sensim_rng_impl_available(sensim_rng_impl impl);
sensim_status sensim_rng_normal_fill_impl(const sensim_rng *r, uint64_t first, size_t n, double *out,
                                          sensim_rng_impl impl);
void sensim_rng_uniform_fill(const sensim_rng *r, uint64_t first, size_t n, double *out);
/* Gamma(shape, 1) by Marsaglia & Tsang (2000); shape > 0 (shape < 1 by the
 * U^(1/shape) boost). Returns NAN for shape <= 0 or NaN. */
double sensim_rng_gamma(const sensim_rng *r, uint64_t index, double shape);
/* Poisson(mean): inversion for mean < 10, PTRS (Hormann 1993) above.
 * mean <= 0 gives 0. */
uint32_t sensim_rng_poisson(const sensim_rng *r, uint64_t index, double mean);

/* Standard normal by inversion of one 32-bit word (lib/rng_icdf.c), for bulk
 * noise where speed matters more than the last bits (the camera's temporal
 * noise). The word at index i is sensim_rng_u32(r, i); its top bit is the
 * sign, the other 31 bits m the tail probability p = (m + 1/2) 2^-32, and
 * |z| = Phi^-1(1 - p) by Giles' single-precision erfinv with a log of its
 * own. Single precision: |z - Phi^-1| below 2e-6 (1 + |z|); |z| <= 6.34 (a
 * 32-bit word's limit: tails beyond have probability 2^-32). Not the same
 * values as sensim_rng_normal. Bit-identical on every path (vector or
 * scalar, any instruction set): a pure function of (key, index). */
float sensim_rng_normal_icdf_u32(uint32_t word);
float sensim_rng_normal_icdf(const sensim_rng *r, uint64_t index);
/* out[i] = sensim_rng_normal_icdf(r, first + i) for i < n, sixteen lanes at
 * a time; never allocates. */
void sensim_rng_normal_icdf_fill(const sensim_rng *r, uint64_t first, size_t n, float *out);

/* Exact Poisson(mean) draws for bulk use (lib/rng_poisson.c; the camera's
 * shot noise below poisson_exact_below): inversion by sequential search in
 * double for mean < 10, Hormann's PTRS (1993) from 10 up; exact in
 * distribution up to double rounding. Attempt j of index i reads the
 * Philox block of counter (i, stream, sensor | (64 + j) << 24), so a draw
 * is a pure function of (key, index, mean). Not the same values as
 * sensim_rng_poisson. mean <= 0 or NaN gives 0; mean >= 2^32 - 1 (and
 * draws that would exceed it) give UINT32_MAX. Never allocates. */
uint32_t sensim_rng_poisson_exact(const sensim_rng *r, uint64_t index, double mean);
/* out[i] = sensim_rng_poisson_exact(r, first + i, mean[i]) for i < n: Philox
 * and PTRS's squeeze for many indices at once in vector loops, the rest
 * scalar; the same bits on every kernel. The _impl form runs one kernel
 * (SENSIM_EUNSUPPORTED, nothing written, where this CPU or build lacks
 * it) so that tests and benchmarks can compare them. */
void sensim_rng_poisson_exact_fill(const sensim_rng *r, uint64_t first, size_t n, const float *mean,
                                   uint32_t *out);
sensim_status sensim_rng_poisson_exact_fill_impl(const sensim_rng *r, uint64_t first, size_t n, const float *mean,
                                                 uint32_t *out, sensim_rng_impl impl);

#ifdef __cplusplus
}
#endif
#endif
