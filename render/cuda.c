/* The CUDA backend's host side: the device's arithmetic checked against the
 * CPU's before use (render/gpu/sg_probe.h), then scenes uploaded and rays
 * traced by the kernels of render/gpu/sg_kernels.cu through the driver API
 * loaded at run time (cuda_loader.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <embree3/rtcore.h>

#include "cuda_loader.h"
#include "gpu/sg_probe.h"
#include "sensim/render.h"
#include "twin.h"
#include "../lib/base_internal.h"

/* Rays per launch at most: bounds the device buffers (76 bytes a ray with
 * its hit) whatever the batch. */
#define TRACE_CHUNK ((size_t)1 << 24)

#define PROBE_N 512 /* input triples of the probe */

/* The probe's inputs: products and sums that round differently when fused,
 * quotients, roots, values whose scaling passes through subnormals, and
 * signs; reproducible (a fixed 32-bit xorshift). */
static void probe_inputs(float *x)
{
    unsigned s = 2463534242u;
    for (int i = 0; i < 3 * PROBE_N; i++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        /* Mantissa from the generator, exponent within 2^-20..2^20. */
        float m = 1.0f + (float)(s >> 9) * (1.0f / 8388608.0f);
        int e = (int)(s % 41) - 20;
        float v = m;
        for (; e > 0; e--)
            v *= 2.0f;
        for (; e < 0; e++)
            v *= 0.5f;
        x[i] = (s & 0x100) ? -v : v;
    }
}

sensim_status sensim_cuda_check_arithmetic(sensim_cuda *cu)
{
    float *in = malloc(3 * PROBE_N * sizeof *in);
    unsigned *dev = malloc(SG_PROBE_OUT * PROBE_N * sizeof *dev), host[SG_PROBE_OUT];
    sensim_cuda_ptr din = 0, dout = 0;
    sensim_status st = SENSIM_OK;
    if (!in || !dev) {
        st = sensim_error(SENSIM_ENOMEM, "cuda: out of memory");
        goto done;
    }
    probe_inputs(in);
    unsigned long long n = PROBE_N;
    void *params[] = {&din, &dout, &n};
    if ((st = sensim_cuda_alloc(cu, 3 * PROBE_N * sizeof *in, &din)) ||
        (st = sensim_cuda_alloc(cu, SG_PROBE_OUT * PROBE_N * sizeof *dev, &dout)) ||
        (st = sensim_cuda_upload(cu, din, in, 3 * PROBE_N * sizeof *in)) ||
        (st = sensim_cuda_launch(cu, "sg_probe_kernel", PROBE_N, params)) ||
        (st = sensim_cuda_download(cu, dev, dout, SG_PROBE_OUT * PROBE_N * sizeof *dev)))
        goto done;
    for (int i = 0; i < PROBE_N; i++) {
        sg_probe_eval(in + 3 * i, host);
        for (int k = 0; k < SG_PROBE_OUT; k++)
            if (host[k] != dev[SG_PROBE_OUT * i + k]) {
                st = sensim_error(SENSIM_EUNSUPPORTED,
                                  "cuda: %s does not give the CPU's arithmetic (probe %d of input %d: "
                                  "0x%08x on the device, 0x%08x on the CPU); its results would differ from the "
                                  "twin's",
                                  sensim_cuda_device_name(cu), k, i, dev[SG_PROBE_OUT * i + k], host[k]);
                goto done;
            }
    }
done:
    sensim_cuda_free(cu, din);
    sensim_cuda_free(cu, dout);
    free(in);
    free(dev);
    return st;
}

sensim_cuda *sensim_cuda_open(void)
{
    sensim_cuda *cu = sensim_cuda_create();
    if (cu && sensim_cuda_check_arithmetic(cu))
        return sensim_cuda_discard(cu);
    return cu;
}

sensim_status sensim_render_cuda_probe(char *info, size_t len)
{
    sensim_cuda *cu = sensim_cuda_open();
    if (!cu)
        return sensim_last_status();
    if (info && len)
        snprintf(info, len, "%s, %s", sensim_cuda_device_name(cu), sensim_cuda_ptx_target(cu));
    sensim_cuda_destroy(cu);
    return SENSIM_OK;
}

/* The flattened arrays of a scene on the device. */
enum { B_NODE, B_TRI, B_BLAS, B_INST, B_XFM, B_IXFM, NBUF };

sensim_cuda_scene *sensim_cuda_scene_create(sensim_cuda *cu, const sg_scene *host)
{
    sensim_cuda_scene *cs = calloc(1, sizeof *cs);
    if (!cs) {
        sensim_cuda_destroy(cu);
        sensim_error(SENSIM_ENOMEM, "cuda: out of memory");
        return NULL;
    }
    cs->cu = cu;
    cs->chunk = TRACE_CHUNK;
    snprintf(cs->info, sizeof cs->info, "%s, %s", sensim_cuda_device_name(cu), sensim_cuda_ptx_target(cu));
    const void *src[NBUF] = {host->node, host->tri, host->blas, host->inst, host->xfm, host->ixfm};
    const size_t bytes[NBUF] = {host->nnode * sizeof *host->node, host->ntri * sizeof *host->tri,
                                host->nblas * sizeof *host->blas, host->ninst * sizeof *host->inst,
                                12 * sizeof(float) * host->nxfm,  12 * sizeof(float) * host->nxfm};
    for (int b = 0; b < NBUF; b++) {
        if (!bytes[b])
            continue; /* a NULL device pointer, as the host's empty array */
        if (sensim_cuda_alloc(cs->cu, bytes[b], &cs->buf[b]) ||
            sensim_cuda_upload(cs->cu, cs->buf[b], src[b], bytes[b]))
            goto fail;
        cs->bytes += bytes[b];
    }
    /* The same scene with device addresses (kernel arguments are copied by
     * value: the pointers are never dereferenced on the host). */
    cs->dev = *host;
    cs->dev.node = (const sg_node *)(uintptr_t)cs->buf[B_NODE];
    cs->dev.tri = (const sg_tri *)(uintptr_t)cs->buf[B_TRI];
    cs->dev.blas = (const sg_blas *)(uintptr_t)cs->buf[B_BLAS];
    cs->dev.inst = (const sg_inst *)(uintptr_t)cs->buf[B_INST];
    cs->dev.xfm = (const float *)(uintptr_t)cs->buf[B_XFM];
    cs->dev.ixfm = (const float *)(uintptr_t)cs->buf[B_IXFM];
    return cs;
fail:
    SENSIM_CUDA_KEEP_ERROR(sensim_cuda_scene_destroy(cs));
    return NULL;
}

void sensim_cuda_scene_destroy(sensim_cuda_scene *cs)
{
    if (!cs)
        return;
    SENSIM_FREE_ALL(cs->batch.hits, cs->batch.occ, cs->hit, cs->off, cs->count);
    sensim_cuda_destroy(cs->cu); /* frees the device buffers too */
    free(cs);
}

/* rays[0..n) through kernel `kernel` (sg_trace_kernel: closest hits;
 * sg_occluded_kernel: any hit, geom 0 for an occluded ray). */
static sensim_status trace_with(sensim_cuda_scene *cs, const char *kernel, const sg_ray *rays, sg_hit *hits, size_t n)
{
    for (size_t at = 0; at < n; at += cs->chunk) {
        const size_t m = n - at < cs->chunk ? n - at : cs->chunk;
        if (m > cs->cap) {
            sensim_cuda_free(cs->cu, cs->rays);
            sensim_cuda_free(cs->cu, cs->hits);
            cs->rays = cs->hits = 0;
            cs->cap = 0;
            if (sensim_cuda_alloc(cs->cu, m * sizeof *rays, &cs->rays) ||
                sensim_cuda_alloc(cs->cu, m * sizeof *hits, &cs->hits))
                return sensim_last_status();
            cs->cap = m;
        }
        unsigned long long nn = m;
        void *params[] = {&cs->dev, &cs->rays, &cs->hits, &nn};
        sensim_status st;
        if ((st = sensim_cuda_upload(cs->cu, cs->rays, rays + at, m * sizeof *rays)) ||
            (st = sensim_cuda_launch(cs->cu, kernel, m, params)) ||
            (st = sensim_cuda_download(cs->cu, hits + at, cs->hits, m * sizeof *hits)))
            return st;
    }
    return SENSIM_OK;
}

sensim_status sensim_cuda_scene_trace(sensim_cuda_scene *cs, const sg_ray *rays, sg_hit *hits, size_t n)
{
    return trace_with(cs, "sg_trace_kernel", rays, hits, n);
}

void sensim_cuda_batch_end(sensim_cuda_scene *cs) { cs->batch.mode = SENSIM_CUDA_OFF; }

/* The lane's slot in the batch, or -1 (flagged) when out of range. */
static inline long batch_slot(sensim_cuda_batch *b, unsigned id)
{
    if (id >= b->n) {
        b->bad_id = 1;
        return -1;
    }
    return (long)id;
}

void sensim_cuda_intersect16(sensim_cuda_scene *cs, const int *valid, struct RTCRayHit16 *rh)
{
    sensim_cuda_batch *b = &cs->batch;
    if (b->mode != SENSIM_CUDA_REPLAY)
        return;
    for (int j = 0; j < 16; j++) {
        long i;
        if (valid[j] && (i = batch_slot(b, rh->ray.id[j])) >= 0)
            sensim_twin_lane_hit(rh, j, &b->hits[i]);
    }
}

/* Device buffer *buf (*cap bytes) at least `bytes` long. */
static sensim_status dev_buffer(sensim_cuda_scene *cs, sensim_cuda_ptr *buf, size_t *cap, size_t bytes)
{
    if (bytes <= *cap)
        return SENSIM_OK;
    sensim_cuda_free(cs->cu, *buf);
    *buf = 0;
    *cap = 0;
    sensim_status st = sensim_cuda_alloc(cs->cu, bytes, buf);
    if (!st)
        *cap = bytes;
    return st;
}

/* Device buffer k of the scan at least `bytes` long. */
static sensim_status scan_buffer(sensim_cuda_scene *cs, int k, size_t bytes)
{
    return dev_buffer(cs, &cs->scan_buf[k], &cs->scan_cap[k], bytes);
}

/* The lidar's constant tables on the device, uploaded when the lidar is
 * not the last one seen. */
static sensim_status lidar_tables(sensim_cuda_scene *cs, const sg_lidar *L, unsigned long long serial)
{
    sensim_cuda_lidar_tables *t = &cs->lidar;
    if (t->serial == serial && serial)
        return SENSIM_OK;
    for (int k = 0; k < 5; k++) {
        sensim_cuda_free(cs->cu, t->buf[k]);
        t->buf[k] = 0;
    }
    t->serial = 0;
    const void *src[5] = {L->rosette ? NULL : L->dir, L->toff, L->ra, L->rb, L->rn};
    const size_t bytes[5] = {L->rosette ? 0 : (size_t)L->columns * L->channels * 3 * sizeof(float),
                             L->channels * sizeof(double), L->nrays * sizeof(double), L->nrays * sizeof(double),
                             L->nrays * sizeof(double)};
    sensim_status st;
    for (int k = 0; k < 5; k++)
        if (bytes[k] && ((st = sensim_cuda_alloc(cs->cu, bytes[k], &t->buf[k])) ||
                         (st = sensim_cuda_upload(cs->cu, t->buf[k], src[k], bytes[k]))))
            return st;
    t->serial = serial;
    return SENSIM_OK;
}

/* Host arrays for nbeam beams and nhit hits. */
static sensim_status scan_host(sensim_cuda_scene *cs, size_t nbeam, size_t nhit)
{
    if (nbeam > cs->cap_beam) {
        free(cs->off);
        free(cs->count);
        cs->off = malloc(nbeam * sizeof *cs->off);
        cs->count = malloc(nbeam * sizeof *cs->count);
        cs->cap_beam = cs->off && cs->count ? nbeam : 0;
        if (!cs->cap_beam)
            return sensim_error(SENSIM_ENOMEM, "cuda: out of memory for %zu beams", nbeam);
    }
    if (nhit > cs->cap_hit) {
        size_t cap = cs->cap_hit * 2 > nhit ? cs->cap_hit * 2 : nhit;
        sg_lhit *h = realloc(cs->hit, cap * sizeof *h);
        if (!h)
            return sensim_error(SENSIM_ENOMEM, "cuda: out of memory for %zu hits", nhit);
        cs->hit = h;
        cs->cap_hit = cap;
    }
    return SENSIM_OK;
}

enum { S_REC, S_COUNT, S_SUM, S_OUT, S_POSE, S_BLOCK };

sensim_status sensim_cuda_lidar_trace(sensim_cuda_scene *cs, const sg_lidar *L, unsigned long long serial,
                                      size_t npose, sensim_cuda_lidar_hits *out)
{
    const size_t nbeam = (size_t)L->columns * L->channels, nr = L->nrays;
    if (nbeam * nr > UINT32_MAX)
        return sensim_error(SENSIM_EUNSUPPORTED, "cuda: %zu rays in one scan; the CUDA backend takes at most %u",
                            nbeam * nr, UINT32_MAX);
    /* Beams per launch: at most cs->chunk rays (whole groups; one group
     * at least). */
    size_t per = cs->chunk / nr / SG_SCAN_GROUP * SG_SCAN_GROUP;
    per = per ? per : SG_SCAN_GROUP;
    const size_t bmax = nbeam < per ? nbeam : per, gmax = (bmax + SG_SCAN_GROUP - 1) / SG_SCAN_GROUP;
    const size_t kmax = (gmax + SG_SCAN_BLOCK - 1) / SG_SCAN_BLOCK;
    sensim_status st;
    if ((st = lidar_tables(cs, L, serial)) || (st = scan_host(cs, nbeam, 0)) ||
        (st = scan_buffer(cs, S_REC, bmax * nr * sizeof(sg_lhit))) ||
        (st = scan_buffer(cs, S_COUNT, bmax * sizeof(uint16_t))) ||
        (st = scan_buffer(cs, S_SUM, gmax * sizeof(uint32_t))) ||
        (st = scan_buffer(cs, S_BLOCK, (kmax + 1) * sizeof(uint32_t))) ||
        (st = scan_buffer(cs, S_OUT, bmax * nr * sizeof(sg_lhit))) ||
        (st = scan_buffer(cs, S_POSE, npose * sizeof(sg_pose))) ||
        (st = sensim_cuda_upload(cs->cu, cs->scan_buf[S_POSE], L->pose, npose * sizeof(sg_pose))))
        return st;
    /* The scan with device addresses (passed by value). */
    sg_lidar D = *L;
    D.dir = (const float *)(uintptr_t)cs->lidar.buf[0];
    D.toff = (const double *)(uintptr_t)cs->lidar.buf[1];
    D.ra = (const double *)(uintptr_t)cs->lidar.buf[2];
    D.rb = (const double *)(uintptr_t)cs->lidar.buf[3];
    D.rn = (const double *)(uintptr_t)cs->lidar.buf[4];
    D.pose = (const sg_pose *)(uintptr_t)cs->scan_buf[S_POSE];
    size_t nhit = 0;
    for (size_t b0 = 0; b0 < nbeam; b0 += bmax) {
        unsigned long long first = (unsigned long long)(b0 * nr), nb = nbeam - b0 < bmax ? nbeam - b0 : bmax;
        unsigned long long n = nb * nr, ng = (nb + SG_SCAN_GROUP - 1) / SG_SCAN_GROUP, nrays = nr;
        unsigned long long nk = (ng + SG_SCAN_BLOCK - 1) / SG_SCAN_BLOCK;
        void *ptrace[] = {&cs->dev, &D, &first, &n, &cs->scan_buf[S_REC]};
        void *pcount[] = {&cs->scan_buf[S_REC], &nrays, &nb, &ng, &cs->scan_buf[S_COUNT], &cs->scan_buf[S_SUM]};
        void *pblock[] = {&cs->scan_buf[S_SUM], &ng, &nk, &cs->scan_buf[S_BLOCK]};
        void *pscan[] = {&cs->scan_buf[S_BLOCK], &nk};
        void *pcompact[] = {&cs->scan_buf[S_REC], &nrays, &nb, &ng,
                            &cs->scan_buf[S_SUM], &cs->scan_buf[S_BLOCK], &cs->scan_buf[S_OUT]};
        uint32_t total;
        if ((st = sensim_cuda_launch(cs->cu, "sg_scan_trace_kernel", n, ptrace)) ||
            (st = sensim_cuda_launch(cs->cu, "sg_scan_count_kernel", ng, pcount)) ||
            (st = sensim_cuda_launch(cs->cu, "sg_scan_block_kernel", nk, pblock)) ||
            (st = sensim_cuda_launch(cs->cu, "sg_scan_offsets_kernel", 1, pscan)) ||
            (st = sensim_cuda_launch(cs->cu, "sg_scan_compact_kernel", ng, pcompact)) ||
            (st = sensim_cuda_download(cs->cu, &total, cs->scan_buf[S_BLOCK] + nk * sizeof(uint32_t), sizeof total)) ||
            (st = scan_host(cs, nbeam, nhit + total)) ||
            (st = sensim_cuda_download(cs->cu, cs->count + b0, cs->scan_buf[S_COUNT], nb * sizeof(uint16_t))) ||
            (st = sensim_cuda_download(cs->cu, cs->hit + nhit, cs->scan_buf[S_OUT], total * sizeof(sg_lhit))))
            return st;
        nhit += total;
    }
    size_t acc = 0;
    for (size_t b = 0; b < nbeam; b++) {
        cs->off[b] = acc;
        acc += cs->count[b];
    }
    if (acc != nhit)
        return sensim_error(SENSIM_EINTERNAL, "cuda: the scan's beam counts add up to %zu hits, not %zu", acc, nhit);
    out->hit = cs->hit;
    out->off = cs->off;
    out->count = cs->count;
    out->nhit = nhit;
    return SENSIM_OK;
}

enum { C_OCC, C_OBJ, C_KT, C_KQ };

sensim_status sensim_cuda_camera_trace(sensim_cuda_scene *cs, const sg_camera *G, const sg_shade *sh, size_t nkey)
{
    const size_t n = (size_t)G->width * G->height * G->spp;
    sensim_cuda_batch *b = &cs->batch;
    if (n > UINT32_MAX)
        return sensim_error(SENSIM_EUNSUPPORTED, "cuda: %zu rays in one frame; the CUDA backend takes at most %u", n,
                            UINT32_MAX);
    if (n > b->cap || (sh->shadows && !b->occ)) {
        free(b->hits);
        free(b->occ);
        b->hits = malloc(n * sizeof *b->hits);
        b->occ = malloc(n);
        b->cap = b->hits && b->occ ? n : 0;
        if (!b->cap)
            return sensim_error(SENSIM_ENOMEM, "cuda: out of memory for %zu rays", n);
    }
    const size_t chunk = n < cs->chunk ? n : cs->chunk;
    /* The shading tables with device addresses (passed by value). */
    sg_shade D_sh = *sh;
    const void *src[4] = {NULL, sh->obj, sh->kt, sh->kq};
    const size_t bytes[4] = {sh->shadows ? chunk : 0, sh->shadows ? sh->nobj * sizeof *sh->obj : 0,
                             sh->shadows ? nkey * sizeof *sh->kt : 0, sh->shadows ? 4 * nkey * sizeof *sh->kq : 0};
    sensim_status st;
    for (int k = 0; k < 4; k++)
        if (bytes[k] && ((st = dev_buffer(cs, &cs->cam_buf[k], &cs->cam_cap[k], bytes[k])) ||
                         (src[k] && (st = sensim_cuda_upload(cs->cu, cs->cam_buf[k], src[k], bytes[k])))))
            return st;
    D_sh.obj = (const sg_shade_obj *)(uintptr_t)(bytes[C_OBJ] ? cs->cam_buf[C_OBJ] : 0);
    D_sh.kt = (const double *)(uintptr_t)(bytes[C_KT] ? cs->cam_buf[C_KT] : 0);
    D_sh.kq = (const double *)(uintptr_t)(bytes[C_KQ] ? cs->cam_buf[C_KQ] : 0);
    if ((st = scan_buffer(cs, S_POSE, G->nknot * sizeof(sg_pose))) ||
        (st = sensim_cuda_upload(cs->cu, cs->scan_buf[S_POSE], G->knot, G->nknot * sizeof(sg_pose))) ||
        (st = scan_buffer(cs, S_OUT, chunk * sizeof(sg_hit))))
        return st;
    sg_camera D = *G;
    D.knot = (const sg_pose *)(uintptr_t)cs->scan_buf[S_POSE];
    for (size_t at = 0; at < n; at += chunk) {
        unsigned long long first = at, m = n - at < chunk ? n - at : chunk;
        void *params[] = {&cs->dev, &D, &D_sh, &first, &m, &cs->scan_buf[S_OUT], &cs->cam_buf[C_OCC]};
        if ((st = sensim_cuda_launch(cs->cu, "sg_camera_kernel", m, params)) ||
            (st = sensim_cuda_download(cs->cu, b->hits + at, cs->scan_buf[S_OUT], m * sizeof(sg_hit))) ||
            (sh->shadows && (st = sensim_cuda_download(cs->cu, b->occ + at, cs->cam_buf[C_OCC], m))))
            return st;
    }
    b->n = n;
    b->bad_id = 0;
    b->mode = SENSIM_CUDA_REPLAY;
    return SENSIM_OK;
}
