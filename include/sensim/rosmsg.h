/* sensim/rosmsg.h - the ROS messages sensim reads and writes, decoded from and
 * encoded to ROS 1 serialization and ROS 2 CDR (little- and big-endian).
 *
 * One description of each message, one cursor that knows the two
 * encodings (CDR aligns primitives to their size relative to the end of the
 * 4-byte encapsulation header and writes strings with their NUL; ROS 1 is
 * packed and writes strings without it; headers differ: ROS 1 has a `seq`,
 * ROS 2 stamps are int32 sec + uint32 nanosec).
 *
 * Types are checked before decoding: sensim_msg_kind_of() maps a type name
 * in either spelling ("sensor_msgs/Imu", "sensor_msgs/msg/Imu") to a kind,
 * and for ROS 1 the md5sum is compared with the known one. Every length read
 * from a payload is checked against the bytes left; errors say which field
 * ("Imu.header.frame_id: string of 4000000000 bytes past the end of a
 * 312-byte message").
 *
 * Decoded strings and arrays point into the payload (borrowed: valid while
 * the payload is); frame ids are copied. Quaternions keep ROS's (x, y, z, w)
 * order here; converting to sensim's (w, x, y, z) is the caller's job.
 *
 * Thread safety: no shared state. */
#ifndef SENSIM_ROSMSG_H
#define SENSIM_ROSMSG_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/bag.h"
#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sensim_msg_kind {
    SENSIM_MSG_UNKNOWN = 0,
    SENSIM_MSG_IMU,               /* sensor_msgs/Imu */
    SENSIM_MSG_NAVSATFIX,         /* sensor_msgs/NavSatFix */
    SENSIM_MSG_MAGNETIC_FIELD,    /* sensor_msgs/MagneticField */
    SENSIM_MSG_POINTCLOUD2,       /* sensor_msgs/PointCloud2 */
    SENSIM_MSG_IMAGE,             /* sensor_msgs/Image */
    SENSIM_MSG_ODOMETRY,          /* nav_msgs/Odometry */
    SENSIM_MSG_POSE_STAMPED,      /* geometry_msgs/PoseStamped */
    SENSIM_MSG_TRANSFORM_STAMPED, /* geometry_msgs/TransformStamped */
    SENSIM_MSG_TF                 /* tf2_msgs/TFMessage (a list of TransformStamped) */
} sensim_msg_kind;

/* Kind of a type name in ROS 1 or ROS 2 spelling; SENSIM_MSG_UNKNOWN if none. */
sensim_msg_kind sensim_msg_kind_of(const char *type);
/* Canonical ROS 1 and ROS 2 names, md5sum and full ROS 1 definition text
 * (with its dependencies, as rosbag stores it) of a kind. */
const char *sensim_msg_ros1_type(sensim_msg_kind kind);
const char *sensim_msg_ros2_type(sensim_msg_kind kind);
const char *sensim_msg_md5sum(sensim_msg_kind kind);
const char *sensim_msg_definition(sensim_msg_kind kind);
/* The ROS 2 (ros2msg) definition, as rosbag2 stores it in MCAP schemas:
 * std_msgs/Header with a builtin_interfaces/Time stamp and no seq. */
const char *sensim_msg_ros2_definition(sensim_msg_kind kind);
/* Checks a topic's type (and md5sum for ROS 1) against `want`; the message
 * names the topic, its type and the types sensim reads. */
sensim_status sensim_msg_check_topic(const sensim_bag_topic *topic, sensim_msg_kind want);

typedef struct sensim_msg_header {
    uint32_t seq;           /* ROS 1 only (0 in ROS 2) */
    int64_t stamp_ns;       /* header stamp, ns since the epoch */
    char frame_id[256];
} sensim_msg_header;

typedef struct sensim_msg_imu {
    sensim_msg_header header;
    double orientation[4]; /* x, y, z, w */
    double orientation_covariance[9];
    double angular_velocity[3];
    double angular_velocity_covariance[9];
    double linear_acceleration[3];
    double linear_acceleration_covariance[9];
} sensim_msg_imu;

typedef struct sensim_msg_navsatfix {
    sensim_msg_header header;
    int8_t status;          /* -1 no fix, 0 fix, 1 SBAS, 2 GBAS */
    uint16_t service;
    double latitude, longitude, altitude;
    double position_covariance[9];
    uint8_t position_covariance_type;
} sensim_msg_navsatfix;

typedef struct sensim_msg_magnetic_field {
    sensim_msg_header header;
    double magnetic_field[3]; /* T */
    double magnetic_field_covariance[9];
} sensim_msg_magnetic_field;

typedef struct sensim_msg_pose {
    double position[3];
    double orientation[4]; /* x, y, z, w */
} sensim_msg_pose;

typedef struct sensim_msg_odometry {
    sensim_msg_header header;
    char child_frame_id[256];
    sensim_msg_pose pose;
    double pose_covariance[36];
    double twist_linear[3];
    double twist_angular[3];
    double twist_covariance[36];
} sensim_msg_odometry;

typedef struct sensim_msg_pose_stamped {
    sensim_msg_header header;
    sensim_msg_pose pose;
} sensim_msg_pose_stamped;

typedef struct sensim_msg_transform_stamped {
    sensim_msg_header header;
    char child_frame_id[256];
    double translation[3];
    double rotation[4]; /* x, y, z, w */
} sensim_msg_transform_stamped;

/* PointField datatypes as sensor_msgs defines them. */
enum { SENSIM_PF_INT8 = 1, SENSIM_PF_UINT8, SENSIM_PF_INT16, SENSIM_PF_UINT16, SENSIM_PF_INT32,
       SENSIM_PF_UINT32, SENSIM_PF_FLOAT32, SENSIM_PF_FLOAT64 };

typedef struct sensim_msg_point_field {
    char name[64];
    uint32_t offset;
    uint8_t datatype;
    uint32_t count;
} sensim_msg_point_field;

typedef struct sensim_msg_pointcloud2 {
    sensim_msg_header header;
    uint32_t height, width;
    size_t nfields;
    sensim_msg_point_field fields[32];
    uint8_t is_bigendian;
    uint32_t point_step, row_step;
    const uint8_t *data; /* borrowed, row_step * height bytes (checked) */
    size_t data_size;
    uint8_t is_dense;
} sensim_msg_pointcloud2;

typedef struct sensim_msg_image {
    sensim_msg_header header;
    uint32_t height, width;
    char encoding[32]; /* "mono8", "mono16", "rgb8", "bgr8", ... */
    uint8_t is_bigendian;
    uint32_t step;
    const uint8_t *data; /* borrowed, step * height bytes (checked) */
    size_t data_size;
} sensim_msg_image;

/* Decoders: `enc` is the topic's encoding; *out is filled (and unspecified
 * on failure). ROS 1 payloads must end where the message does; CDR payloads
 * may carry up to 7 bytes of trailing padding. Plain CDR only (encapsulation
 * 00 00 or 00 01); XCDR2 and parameter lists are refused as unsupported. */
/* The std_msgs/Header every stamped message above starts with (not
 * TFMessage, whose headers are per transform); reads only the header. */
sensim_status sensim_msg_decode_header(sensim_msg_encoding enc, const uint8_t *buf, size_t n,
                                       sensim_msg_header *out);
sensim_status sensim_msg_decode_imu(sensim_msg_encoding enc, const uint8_t *buf, size_t n, sensim_msg_imu *out);
sensim_status sensim_msg_decode_navsatfix(sensim_msg_encoding enc, const uint8_t *buf, size_t n,
                                          sensim_msg_navsatfix *out);
sensim_status sensim_msg_decode_magnetic_field(sensim_msg_encoding enc, const uint8_t *buf, size_t n,
                                               sensim_msg_magnetic_field *out);
sensim_status sensim_msg_decode_odometry(sensim_msg_encoding enc, const uint8_t *buf, size_t n,
                                         sensim_msg_odometry *out);
sensim_status sensim_msg_decode_pose_stamped(sensim_msg_encoding enc, const uint8_t *buf, size_t n,
                                             sensim_msg_pose_stamped *out);
sensim_status sensim_msg_decode_transform_stamped(sensim_msg_encoding enc, const uint8_t *buf, size_t n,
                                                  sensim_msg_transform_stamped *out);
/* tf2_msgs/TFMessage: calls `each` for every transform in order; a nonzero
 * return from `each` stops with SENSIM_OK. */
sensim_status sensim_msg_decode_tf(sensim_msg_encoding enc, const uint8_t *buf, size_t n,
                                   int (*each)(const sensim_msg_transform_stamped *tf, void *ctx), void *ctx);
sensim_status sensim_msg_decode_pointcloud2(sensim_msg_encoding enc, const uint8_t *buf, size_t n,
                                            sensim_msg_pointcloud2 *out);
sensim_status sensim_msg_decode_image(sensim_msg_encoding enc, const uint8_t *buf, size_t n, sensim_msg_image *out);

/* Index of the field called `name` in *field; SENSIM_ENOTFOUND (message
 * listing the fields there are) when the cloud has none. _get reads element
 * 0 of that field of point i (row-major, i < height * width) as double, any
 * datatype, either byte order; the decoder checked every field lies inside
 * point_step and the points inside data. */
sensim_status sensim_msg_pointcloud2_field(const sensim_msg_pointcloud2 *pc, const char *name, size_t *field);
double sensim_msg_pointcloud2_get(const sensim_msg_pointcloud2 *pc, size_t field, size_t point);

/* Encoders append the serialized message to a growing buffer (data, len,
 * cap; realloc'd; start from {0}). SENSIM_ENC_CDR writes CDR with its
 * encapsulation header, little-endian unless cdr_big_endian is set. A
 * failing encoder leaves len as it was. Values that the encoding cannot hold
 * (a stamp before 1970 in ROS 1, a frame id longer than 255 bytes, cloud or
 * image data shorter than its step says) are refused naming the field. */
typedef struct sensim_msg_buf {
    uint8_t *data;
    size_t len, cap;
    int cdr_big_endian; /* write CDR big-endian (encapsulation 00 00) */
} sensim_msg_buf;
void sensim_msg_buf_free(sensim_msg_buf *b);

sensim_status sensim_msg_encode_imu(sensim_msg_encoding enc, const sensim_msg_imu *m, sensim_msg_buf *out);
sensim_status sensim_msg_encode_navsatfix(sensim_msg_encoding enc, const sensim_msg_navsatfix *m,
                                          sensim_msg_buf *out);
sensim_status sensim_msg_encode_magnetic_field(sensim_msg_encoding enc, const sensim_msg_magnetic_field *m,
                                               sensim_msg_buf *out);
sensim_status sensim_msg_encode_odometry(sensim_msg_encoding enc, const sensim_msg_odometry *m,
                                         sensim_msg_buf *out);
sensim_status sensim_msg_encode_pose_stamped(sensim_msg_encoding enc, const sensim_msg_pose_stamped *m,
                                             sensim_msg_buf *out);
sensim_status sensim_msg_encode_transform_stamped(sensim_msg_encoding enc, const sensim_msg_transform_stamped *m,
                                                  sensim_msg_buf *out);
/* tf2_msgs/TFMessage holding the n transforms tf[0..n-1]. */
sensim_status sensim_msg_encode_tf(sensim_msg_encoding enc, const sensim_msg_transform_stamped *tf, size_t n,
                                   sensim_msg_buf *out);
sensim_status sensim_msg_encode_pointcloud2(sensim_msg_encoding enc, const sensim_msg_pointcloud2 *m,
                                            sensim_msg_buf *out);
sensim_status sensim_msg_encode_image(sensim_msg_encoding enc, const sensim_msg_image *m, sensim_msg_buf *out);

#ifdef __cplusplus
}
#endif
#endif
