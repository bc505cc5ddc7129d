/* The message codec (sensim/rosmsg.h) on raw payloads: the first byte picks
 * the message type and the encoding (ROS 1 or CDR), the rest is the
 * payload. A payload that decodes is encoded again, and that must decode to
 * the same header. */
#include "fuzz.h"
#include "sensim/rosmsg.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const sensim_msg_encoding enc = data[0] & 1 ? SENSIM_ENC_CDR : SENSIM_ENC_ROS1;
    const int kind = (data[0] >> 1) % 8;
    const uint8_t *p = data + 1;
    const size_t n = size - 1;
    sensim_msg_buf b = {0};
    switch (kind) {
    case 0: {
        sensim_msg_imu m, m2;
        if (sensim_msg_decode_imu(enc, p, n, &m) == SENSIM_OK && sensim_msg_encode_imu(enc, &m, &b) == SENSIM_OK &&
            sensim_msg_decode_imu(enc, b.data, b.len, &m2) == SENSIM_OK &&
            (m2.header.stamp_ns != m.header.stamp_ns || strcmp(m2.header.frame_id, m.header.frame_id)))
            __builtin_trap();
        break;
    }
    case 1: {
        sensim_msg_navsatfix m;
        if (sensim_msg_decode_navsatfix(enc, p, n, &m) == SENSIM_OK)
            sensim_msg_encode_navsatfix(enc, &m, &b);
        break;
    }
    case 2: {
        sensim_msg_magnetic_field m;
        if (sensim_msg_decode_magnetic_field(enc, p, n, &m) == SENSIM_OK)
            sensim_msg_encode_magnetic_field(enc, &m, &b);
        break;
    }
    case 3: {
        sensim_msg_odometry m;
        if (sensim_msg_decode_odometry(enc, p, n, &m) == SENSIM_OK)
            sensim_msg_encode_odometry(enc, &m, &b);
        break;
    }
    case 4: {
        sensim_msg_pose_stamped m;
        if (sensim_msg_decode_pose_stamped(enc, p, n, &m) == SENSIM_OK)
            sensim_msg_encode_pose_stamped(enc, &m, &b);
        break;
    }
    case 5: {
        sensim_msg_transform_stamped m;
        sensim_msg_decode_transform_stamped(enc, p, n, &m);
        break;
    }
    case 6: {
        sensim_msg_pointcloud2 m;
        if (sensim_msg_decode_pointcloud2(enc, p, n, &m) == SENSIM_OK) {
            size_t f;
            volatile double sum = 0;
            for (size_t k = 0; k < m.nfields; k++)
                if (sensim_msg_pointcloud2_field(&m, m.fields[k].name, &f) == SENSIM_OK)
                    for (size_t i = 0; i < (size_t)m.width * m.height && i < 4096; i++)
                        sum += sensim_msg_pointcloud2_get(&m, f, i);
            sensim_msg_encode_pointcloud2(enc, &m, &b);
        }
        break;
    }
    default: {
        sensim_msg_image m;
        if (sensim_msg_decode_image(enc, p, n, &m) == SENSIM_OK)
            sensim_msg_encode_image(enc, &m, &b);
        break;
    }
    }
    sensim_msg_buf_free(&b);
    return 0;
}
