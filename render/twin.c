/* The CPU twin (issue 18): the shared traversal headers of render/gpu/
 * compiled as C11 (with -ffp-contract=off, like the kernels' -fmad=false),
 * called in place of rtcIntersect16 by the lidar and camera loops. A
 * packet of 16 rays goes through the tree together (sg_packet.h: the same
 * hits as sg_trace ray by ray, faster on the coherent rays of a beam);
 * a packet with one valid ray through sg_trace. Shadow rays take the
 * any-hit walks (sg_occluded, sg_occluded_packet_mask). */
#include "gpu/sg_packet.h"
#include "twin.h"

/* The valid lanes of RTCRay16 r into rays; returns their mask. */
static uint32_t gather16(const int *valid, const struct RTCRay16 *r, sg_ray *rays)
{
    uint32_t mask = 0;
    for (int j = 0; j < 16; j++)
        if (valid[j]) {
            mask |= 1u << j;
            sensim_twin_lane_ray(r, j, &rays[j]);
        }
    return mask;
}

/* hits of the lanes in mask for rays. */
static void trace16(const sensim_twin *t, const sg_ray *rays, sg_hit *hits, uint32_t mask)
{
    if (mask && !(mask & (mask - 1))) {
        int j = 0;
        while (!(mask >> j & 1u))
            j++;
        sg_trace(&t->view, rays, hits, (size_t)j);
    } else if (mask) {
        sg_trace_packet_mask(&t->view, rays, hits, 0, 16, mask);
    }
}

void sensim_twin_intersect16(const sensim_twin *t, const int *valid, struct RTCRayHit16 *rh)
{
    sg_ray rays[16];
    sg_hit hits[16];
    const uint32_t mask = gather16(valid, &rh->ray, rays);
    trace16(t, rays, hits, mask);
    for (int j = 0; j < 16; j++)
        if (mask >> j & 1u)
            sensim_twin_lane_hit(rh, j, &hits[j]);
}

void sensim_twin_occluded16(const sensim_twin *t, const int *valid, struct RTCRay16 *r)
{
    /* Any hit: a ray stops at the first triangle found, the packet when
     * every ray has one (sg_occluded, sg_occluded_packet_mask). */
    sg_ray rays[16];
    const uint32_t mask = gather16(valid, r, rays);
    uint32_t hit = 0;
    if (mask && !(mask & (mask - 1))) {
        int j = 0;
        while (!(mask >> j & 1u))
            j++;
        hit = sg_occluded(&t->view, rays, (size_t)j) ? mask : 0;
    } else if (mask)
        hit = sg_occluded_packet_mask(&t->view, rays, 0, 16, mask);
    for (int j = 0; j < 16; j++)
        if (hit >> j & 1u)
            r->tfar[j] = -INFINITY;
}

void sensim_twin_trace(const sensim_twin *t, const sg_ray *rays, sg_hit *hits, size_t n)
{
    /* Packets of 16 consecutive rays (neighbours in a scan or an image). */
#pragma omp parallel for schedule(dynamic, 16)
    for (size_t i = 0; i < n; i += 16)
        sg_trace_packet(&t->view, rays, hits, i, n - i < 16 ? (int)(n - i) : 16);
}
