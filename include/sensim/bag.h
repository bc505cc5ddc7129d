/* sensim/bag.h - recordings read and written as one stream of messages:
 * ROS 1 bags (format 2.0), rosbag2 sqlite3 (.db3) and MCAP (.mcap) files, and
 * rosbag2 directories (metadata.yaml plus split files, read in order).
 *
 * Reading is streaming: sensim_bag_open() reads only what lists the topics
 * (ROS 1 connection and chunk-info records, the MCAP summary or a sequential
 * scan of channel records when it has none, the sqlite3 `topics` table), and
 * sensim_bag_next() hands out one serialized message at a time, so memory
 * does not grow with the recording. Messages come in receive-time order
 * (ROS 1 bags whose chunks are out of time order are merged by their index
 * records; ties keep file order). The payload is serialized: decode it with
 * sensim/rosmsg.h, whose encoding argument is the topic's `encoding`.
 *
 * Writing: sensim_bag_writer_create() writes to a temporary name beside the
 * target and sensim_bag_writer_commit() renames it over the target (as every
 * sensim output); closing an uncommitted writer removes the temporary.
 *
 * Errors name the file and, where one is involved, the topic and the message
 * index within the file ("run.bag: chunk at byte 4711: bz2 data corrupt",
 * "run.bag: topic '/imu': message 12: ...").
 *
 * Thread safety: a bag is used from one thread at a time; bags are
 * independent. Dependencies (Debian): libbz2, liblz4 (frame API), libzstd,
 * libsqlite3. */
#ifndef SENSIM_BAG_H
#define SENSIM_BAG_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sensim_bag_format {
    SENSIM_BAG_ROS1, /* "#ROSBAG V2.0" */
    SENSIM_BAG_DB3,  /* rosbag2 sqlite3 storage */
    SENSIM_BAG_MCAP  /* MCAP, ros2 profile (CDR) or ros1 profile */
} sensim_bag_format;

/* How a topic's payloads are serialized (sensim/rosmsg.h decodes both). */
typedef enum sensim_msg_encoding {
    SENSIM_ENC_ROS1, /* ROS 1 serialization: little-endian, packed, strings without NUL */
    SENSIM_ENC_CDR   /* ROS 2 CDR with its 4-byte encapsulation header (LE or BE inside) */
} sensim_msg_encoding;

typedef struct sensim_bag sensim_bag;

/* One topic (ROS 1: one topic may have several connections; they are merged
 * under one topic when type and md5sum agree, else refused). Strings are
 * owned by the bag. */
typedef struct sensim_bag_topic {
    const char *name;       /* "/imu0" */
    const char *type;       /* as the bag says: "sensor_msgs/Imu" or "sensor_msgs/msg/Imu" */
    const char *md5sum;     /* ROS 1 md5sum of the definition; "" where the format has none */
    const char *definition; /* message definition text; "" when the file does not carry one */
    sensim_msg_encoding encoding;
    uint64_t count;         /* messages on this topic (from index, summary or a scan) */
    int64_t t_first_ns;     /* first and last receive stamps, ns since the epoch */
    int64_t t_last_ns;
} sensim_bag_topic;

/* One message, valid until the next call on the same bag. */
typedef struct sensim_bag_msg {
    size_t topic;          /* index into the bag's topics */
    int64_t recv_ns;       /* receive (record) time, ns since the epoch */
    uint64_t index;        /* 0-based index of this message among all messages of the file, in read order */
    const uint8_t *data;   /* serialized payload */
    size_t size;
} sensim_bag_msg;

/* Opens a recording; the format is told from the content (magic bytes), not
 * the name. `path` may be a rosbag2 directory (metadata.yaml and its
 * relative_file_paths, every one of which must exist). */
sensim_bag *sensim_bag_open(const char *path);
void sensim_bag_close(sensim_bag *bag);
sensim_bag_format sensim_bag_get_format(const sensim_bag *bag);
const char *sensim_bag_path(const sensim_bag *bag);

size_t sensim_bag_ntopics(const sensim_bag *bag);
const sensim_bag_topic *sensim_bag_topic_at(const sensim_bag *bag, size_t i);
/* Finds a topic by name; SENSIM_ENOTFOUND lists every topic and its type
 * (with more than 12 topics: those of the types sensim/rosmsg.h reads, and
 * a count of the others). */
sensim_status sensim_bag_find_topic(const sensim_bag *bag, const char *name, size_t *index);

/* Restricts sensim_bag_next() to these topics (n = 0: all); rewinds. */
sensim_status sensim_bag_select(sensim_bag *bag, const size_t *topics, size_t n);
/* Next message: 1 and *msg filled, 0 at the end, -1 on error (message set). */
int sensim_bag_next(sensim_bag *bag, sensim_bag_msg *msg);

/* ---- writing ---- */

typedef struct sensim_bag_writer sensim_bag_writer;

typedef enum sensim_bag_compression {
    SENSIM_BAG_COMPRESS_NONE,
    SENSIM_BAG_COMPRESS_BZ2,  /* ROS 1 only */
    SENSIM_BAG_COMPRESS_LZ4,  /* ROS 1 (lz4 frame) and MCAP */
    SENSIM_BAG_COMPRESS_ZSTD  /* MCAP only */
} sensim_bag_compression;

/* SENSIM_BAG_ROS1 writes ROS 1 serialization; DB3 and MCAP write ROS 2 CDR
 * (little-endian). */
sensim_bag_writer *sensim_bag_writer_create(const char *path, sensim_bag_format format,
                                            sensim_bag_compression compression);
/* Declares a topic; *topic is its handle for writing. `definition` may be ""
 * for the message types sensim/rosmsg.h knows (their text and md5sum are
 * filled in). */
sensim_status sensim_bag_writer_add_topic(sensim_bag_writer *w, const char *name, const char *type,
                                          const char *definition, size_t *topic);
/* Writes one serialized message (encoding as the format dictates). */
sensim_status sensim_bag_writer_write(sensim_bag_writer *w, size_t topic, int64_t recv_ns, const uint8_t *data,
                                      size_t size);
/* Finishes (index, summary, metadata) and renames over the target. */
sensim_status sensim_bag_writer_commit(sensim_bag_writer *w);
/* Frees; removes the temporary when not committed. NULL is a no-op. */
void sensim_bag_writer_close(sensim_bag_writer *w);

#ifdef __cplusplus
}
#endif
#endif
