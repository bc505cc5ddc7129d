/* sensim/pointcloud.h - point cloud import and export: PLY (ascii,
 * binary_little_endian) and PCD (ascii, binary) with x, y, z and an optional
 * intensity, as the f32[M,4] rows of the lidar log layout (DESIGN.md).
 *
 * Reading accepts any numeric property/field types (converted to float),
 * extra properties (ignored), and in PLY further elements after `vertex`
 * (ignored). The intensity is the property `intensity`, `scalar_intensity` or
 * `I` (CARLA). Missing intensity reads as 0 and *has_intensity = 0.
 *
 * Ownership: read returns a malloc'd array (free()); write borrows it and
 * writes to a temporary name renamed on success. Thread safety: no shared
 * state. */
#ifndef SENSIM_POINTCLOUD_H
#define SENSIM_POINTCLOUD_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sensim_cloud_format {
    SENSIM_CLOUD_PLY_ASCII,
    SENSIM_CLOUD_PLY_BINARY, /* binary_little_endian */
    SENSIM_CLOUD_PCD_ASCII,
    SENSIM_CLOUD_PCD_BINARY
} sensim_cloud_format;

/* Parses "ply", "ply-ascii", "ply-binary", "pcd", "pcd-ascii", "pcd-binary"
 * ("ply" and "pcd" mean binary). SENSIM_EINVAL for others. */
sensim_status sensim_cloud_format_parse(const char *name, sensim_cloud_format *fmt);

/* Reads a PLY or PCD file (told apart by its first line). *xyzi: n*4 floats.
 * Errors name the file and the header line or point index. */
sensim_status sensim_cloud_read(const char *path, float **xyzi, size_t *n, int *has_intensity,
                                sensim_cloud_format *fmt);

/* Writes n points (x, y, z, intensity). */
sensim_status sensim_cloud_write(const char *path, sensim_cloud_format fmt, const float *xyzi, size_t n);

/* Per-point lidar fields written after x, y, z, intensity (each borrowed
 * for the call, n values; NULL leaves the field out), in the names and
 * types PCL's point types for Velodyne and Ouster drivers use: ring
 * (channel, u16), time (s since the scan's start, f32), return_index (u8)
 * and reflectivity (calibrated, 0..255, u8). PLY properties ushort, float,
 * uchar; PCD SIZE/TYPE 2 U, 4 F, 1 U. Read back by Open3D and PCL. */
typedef struct sensim_cloud_fields {
    const uint16_t *ring;
    const float *time;
    const uint8_t *return_index;
    const uint8_t *reflectivity;
} sensim_cloud_fields;

/* sensim_cloud_write with the lidar fields (fields may be NULL). */
sensim_status sensim_cloud_write_fields(const char *path, sensim_cloud_format fmt, const float *xyzi,
                                        const sensim_cloud_fields *fields, size_t n);

#ifdef __cplusplus
}
#endif
#endif
