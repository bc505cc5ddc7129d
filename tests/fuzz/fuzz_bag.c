/* Recordings (sensim_bag_open, sensim_bag_next): ROS 1 bags, MCAP and
 * rosbag2 sqlite3 files, told apart by their content; every message of a
 * topic whose type sensim knows is decoded as well (sensim/rosmsg.h). */
#include "fuzz.h"
#include "sensim/bag.h"
#include "sensim/rosmsg.h"

static int count_tf(const sensim_msg_transform_stamped *tf, void *ctx)
{
    (void)tf;
    ++*(size_t *)ctx;
    return 0;
}

static void decode(const sensim_bag_topic *t, const sensim_bag_msg *m)
{
    union {
        sensim_msg_imu imu;
        sensim_msg_navsatfix fix;
        sensim_msg_magnetic_field mag;
        sensim_msg_odometry odo;
        sensim_msg_pose_stamped pose;
        sensim_msg_transform_stamped tf;
        sensim_msg_pointcloud2 pc;
        sensim_msg_image img;
    } u;
    size_t n = 0;
    switch (sensim_msg_kind_of(t->type)) {
    case SENSIM_MSG_IMU: sensim_msg_decode_imu(t->encoding, m->data, m->size, &u.imu); break;
    case SENSIM_MSG_NAVSATFIX: sensim_msg_decode_navsatfix(t->encoding, m->data, m->size, &u.fix); break;
    case SENSIM_MSG_MAGNETIC_FIELD: sensim_msg_decode_magnetic_field(t->encoding, m->data, m->size, &u.mag); break;
    case SENSIM_MSG_ODOMETRY: sensim_msg_decode_odometry(t->encoding, m->data, m->size, &u.odo); break;
    case SENSIM_MSG_POSE_STAMPED: sensim_msg_decode_pose_stamped(t->encoding, m->data, m->size, &u.pose); break;
    case SENSIM_MSG_TRANSFORM_STAMPED:
        sensim_msg_decode_transform_stamped(t->encoding, m->data, m->size, &u.tf);
        break;
    case SENSIM_MSG_TF: sensim_msg_decode_tf(t->encoding, m->data, m->size, count_tf, &n); break;
    case SENSIM_MSG_POINTCLOUD2:
        if (sensim_msg_decode_pointcloud2(t->encoding, m->data, m->size, &u.pc) == SENSIM_OK) {
            size_t f;
            volatile double sum = 0; /* every point of the field must be inside the data */
            if (sensim_msg_pointcloud2_field(&u.pc, "x", &f) == SENSIM_OK)
                for (size_t i = 0; i < (size_t)u.pc.width * u.pc.height && i < 100000; i++)
                    sum += sensim_msg_pointcloud2_get(&u.pc, f, i);
        }
        break;
    case SENSIM_MSG_IMAGE:
        if (sensim_msg_decode_image(t->encoding, m->data, m->size, &u.img) == SENSIM_OK && u.img.data_size) {
            volatile uint8_t last = u.img.data[u.img.data_size - 1];
            (void)last;
        }
        break;
    default: break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sensim_bag *bag = sensim_bag_open(fuzz_write("bag", data, size));
    if (!bag)
        return 0;
    sensim_bag_msg m;
    volatile size_t bytes = 0;
    for (int i = 0; i < 100000 && sensim_bag_next(bag, &m) == 1; i++) {
        const sensim_bag_topic *t = sensim_bag_topic_at(bag, m.topic);
        if (m.size)
            bytes += m.data[m.size - 1]; /* the payload must lie inside what was read */
        decode(t, &m);
    }
    /* Selecting one topic rewinds and reads again through the selection. */
    if (sensim_bag_ntopics(bag) > 0) {
        size_t one = 0;
        if (sensim_bag_select(bag, &one, 1) == SENSIM_OK)
            for (int i = 0; i < 1000 && sensim_bag_next(bag, &m) == 1; i++)
                bytes += m.size;
    }
    sensim_bag_close(bag);
    return 0;
}
