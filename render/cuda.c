/* The CUDA backend's host side: the device's arithmetic checked against the
 * CPU's before use (render/gpu/sg_probe.h), then scenes uploaded and rays
 * traced by the kernels of render/gpu/sg_kernels.cu through the driver API
 * loaded at run time (cuda_loader.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_loader.h"
#include "gpu/sg_probe.h"
#include "sensim/render.h"

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

sensim_status sensim_render_cuda_probe(char *info, size_t len)
{
    sensim_cuda *cu = sensim_cuda_create();
    if (!cu)
        return sensim_last_status();
    sensim_status st = sensim_cuda_check_arithmetic(cu);
    if (!st && info && len)
        snprintf(info, len, "%s, %s", sensim_cuda_device_name(cu), sensim_cuda_ptx_target(cu));
    sensim_cuda_destroy(cu);
    return st;
}
