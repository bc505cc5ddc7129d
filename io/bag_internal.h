/* io/bag_internal.h - what the container backends share (not installed).
 *
 * sensim_bag_open() (io/bag.c) tells the format from the content and calls
 * one backend's open function; every backend builds the same struct
 * sensim_bag (through sensim_bag_open_with_): the common part below (path,
 * format, topics, selection) plus a vtable and a private `impl` pointer.
 * bag.c implements every public function of sensim/bag.h on top of the
 * vtable, so a backend writes only open, next, rewind and close (and the
 * writer's five operations).
 *
 * Backends:
 *   io/ros1bag.c  ROS 1 bag format 2.0             (reader and writer)
 *   io/db3.c      rosbag2 sqlite3 storage          (reader and writer)
 *   io/mcap.c     MCAP                             (reader and writer)
 *   rosbag2 directories (metadata.yaml + splits)   (reader; with db3/mcap)
 *
 * Ownership: everything hanging off a sensim_bag (path, topic strings,
 * selection) is owned by it and freed by sensim_bag_close(): what `impl`
 * holds by ops->close, then `impl` itself and the common fields by bag.c.
 * Same for the writer.
 * Thread safety: as sensim/bag.h (one thread per bag). */
#ifndef SENSIM_IO_BAG_INTERNAL_H
#define SENSIM_IO_BAG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/bag.h"
#include "../lib/base_internal.h"

/* Room for `need` elements of `size` bytes in the array at *arrp (arrp is
 * the address of its pointer; capacity *cap, doubled from `first`; see
 * sensim_reserve_ in lib/base_internal.h): SENSIM_OK, or SENSIM_ENOMEM
 * naming `path` with the array and *cap kept.
 * BAG_RESERVE(arr, cap, need, first, path) spells it for a typed array. */
static inline sensim_status bag_reserve(void *arrp, size_t *cap, size_t need, size_t size, size_t first,
                                        const char *path)
{
    if (sensim_reserve_(arrp, cap, need, size, first))
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
    return SENSIM_OK;
}
#define BAG_RESERVE(arr, cap, need, first, path) bag_reserve(&(arr), &(cap), (need), sizeof *(arr), (first), (path))

/* The index of the first of the n elements (`size` bytes each, sorted by
 * cmp) at base that cmp finds equal to *key, or (size_t)-1: a lower-bound
 * search, so the first of several equal ones. */
static inline size_t bag_find(const void *key, const void *base, size_t n, size_t size,
                              int (*cmp)(const void *, const void *))
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp((const char *)base + mid * size, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && cmp((const char *)base + lo * size, key) == 0 ? lo : (size_t)-1;
}

/* The encoding named by a rosbag2 topic's serialization_format or an MCAP
 * channel's message_encoding: 0 with *enc set for "cdr" and "ros1", -1
 * for any other (no error set). */
static inline int bag_encoding(const char *name, sensim_msg_encoding *enc)
{
    if (strcmp(name, "cdr") == 0)
        *enc = SENSIM_ENC_CDR;
    else if (strcmp(name, "ros1") == 0)
        *enc = SENSIM_ENC_ROS1;
    else
        return -1;
    return 0;
}

/* Where a chunk cursor of the ROS 1 or MCAP reader stands, in the order
 * messages are delivered when chunks overlap in time: the receive time of
 * its current message, then the byte position of its chunk in the file,
 * then the message's offset in the chunk. */
typedef struct bag_key {
    uint64_t t, chunk, off;
} bag_key;

/* The key of cursor c of reader r (the backend's impl). */
typedef bag_key (*bag_key_fn)(const void *r, size_t c);

static inline int bag_key_less(bag_key a, bag_key b)
{
    if (a.t != b.t)
        return a.t < b.t;
    if (a.chunk != b.chunk)
        return a.chunk < b.chunk;
    return a.off < b.off;
}

/* The readers merge their open chunks through a binary min-heap of cursor
 * numbers h[0..n) ordered by key(r, .). bag_heap_down restores it after
 * h[i] moved later (its cursor advanced, or the last one took its place);
 * bag_heap_push adds cursor c (h has room for it) and counts it in *n. */
static inline void bag_heap_swap(size_t *h, size_t i, size_t j)
{
    size_t t = h[i];
    h[i] = h[j];
    h[j] = t;
}

static inline void bag_heap_down(size_t *h, size_t n, size_t i, bag_key_fn key, const void *r)
{
    for (;;) {
        size_t l = 2 * i + 1, b = i;
        if (l < n && bag_key_less(key(r, h[l]), key(r, h[b])))
            b = l;
        if (l + 1 < n && bag_key_less(key(r, h[l + 1]), key(r, h[b])))
            b = l + 1;
        if (b == i)
            return;
        bag_heap_swap(h, i, b);
        i = b;
    }
}

static inline void bag_heap_push(size_t *h, size_t *n, size_t c, bag_key_fn key, const void *r)
{
    size_t i = (*n)++;
    h[i] = c;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!bag_key_less(key(r, h[i]), key(r, h[p])))
            return;
        bag_heap_swap(h, i, p);
        i = p;
    }
}

/* The fields a reader and a writer share, first in both: the backend's
 * operations, the format, the path as given (the recording read or the
 * target written; named in every message) and the backend's state. bag.c
 * fills path and impl of either (NEW_PARTS) and frees them once ops->close
 * has freed what impl holds. */
#define BAG_HEAD(ops_type) \
    const ops_type *ops; \
    sensim_bag_format format; \
    char *path; \
    void *impl

/* ---- reading ---- */

typedef struct sensim_bag_ops {
    /* Reads the recording at bag->path far enough to add its topics (with
     * counts and spans) and to deliver messages: 0, or -1 with the error
     * set (bag.c then closes the bag). */
    int (*open)(sensim_bag *bag);
    /* Next message among the selected topics (bag->selected), exactly as
     * sensim_bag_next(): 1 with *msg filled, 0 at the end, -1 with the error
     * set. The backend fills every field of *msg, including `index` (the
     * message's 0-based position among ALL messages of the file in read
     * order, counting those skipped by the selection, so that an error names
     * the same message whatever was selected). msg->data stays valid until
     * the next call on the bag. */
    int (*next)(sensim_bag *bag, sensim_bag_msg *msg);
    /* Back to the first message; called by sensim_bag_select() after it
     * has updated bag->selected. */
    sensim_status (*rewind)(sensim_bag *bag);
    /* Frees what the backend allocated (what bag->impl holds); not impl
     * itself nor the common fields (bag.c frees those). Called once, also
     * on a bag whose open failed half way, so it must accept a partly
     * built impl. */
    void (*close)(sensim_bag *bag);
} sensim_bag_ops;

struct sensim_bag {
    BAG_HEAD(sensim_bag_ops);
    sensim_bag_topic *topics; /* ntopics entries; strings owned (sensim_bag_add_topic_ copies) */
    size_t ntopics, cap_topics;
    unsigned char *selected; /* ntopics flags, 1 = delivered by next(); all 1 after open */
};

/* A new bag with no topics and bag->impl a zeroed block of impl_size bytes
 * for the backend (none when 0), opened by ops->open, which fills impl and
 * adds the topics; NULL with the error set when out of memory or when open
 * fails (the bag closed). */
sensim_bag *sensim_bag_open_with_(const char *path, sensim_bag_format format, const sensim_bag_ops *ops,
                                  size_t impl_size);
/* Appends a topic: copies the strings (NULL is taken as ""), sets count 0
 * and t_first_ns = INT64_MAX, t_last_ns = INT64_MIN (the backend updates
 * bag->topics[*index] as it learns them), marks it selected. *index may be
 * NULL. */
sensim_status sensim_bag_add_topic_(sensim_bag *bag, const char *name, const char *type, const char *md5sum,
                                    const char *definition, sensim_msg_encoding encoding, size_t *index);
/* The index of a topic by exact name, or (size_t)-1. No error set. */
size_t sensim_bag_topic_index_(const sensim_bag *bag, const char *name);

/* The file at path opened for reading (close-on-exec), its size in *size:
 * the descriptor, or -1 with the error set (naming path). */
int sensim_bag_open_file_(const char *path, uint64_t *size);

/* Backend open functions, called by sensim_bag_open() once the magic told
 * the format. Each returns NULL with the error (naming path) set. They
 * open the bag with sensim_bag_open_with_, which releases it on failure
 * with sensim_bag_close() (which calls ops->close on the partial impl). */
sensim_bag *sensim_bag_open_ros1(const char *path);    /* io/ros1bag.c */
sensim_bag *sensim_bag_open_db3(const char *path);     /* io/db3.c */
sensim_bag *sensim_bag_open_mcap(const char *path);    /* io/mcap.c */
sensim_bag *sensim_bag_open_ros2dir(const char *dir);  /* rosbag2 directory: metadata.yaml + splits */

/* ROS 1 reader: the most bytes of decompressed chunk data held at once
 * when chunks overlap in time (default 256 MiB); data evicted is read
 * again when needed. Tests lower it to exercise that path. No-op on other
 * formats. */
void sensim_bag_ros1_cache_limit(sensim_bag *bag, size_t bytes);

/* CRC-32 as zlib's crc32_z(crc, data, n) (MCAP's checksums), with
 * PCLMULQDQ where the CPU has it (io/crc32.c). Start from 0. */
uint32_t sensim_crc32_(uint32_t crc, const void *data, size_t n);

/* ---- writing ---- */

typedef struct sensim_bag_writer_ops {
    /* Opens the temporary beside w->path (sensim/afile.h) and writes what
     * precedes the messages: 0, or -1 with the error set (bag.c then closes
     * the writer). */
    int (*create)(sensim_bag_writer *w);
    /* Declares a topic with everything resolved: `md5sum` and `definition`
     * are final (bag.c's sensim_bag_writer_add_topic fills them in for
     * known types; md5sum is "" for DB3/MCAP with a ros2 type). *topic is
     * the next handle (0, 1, ...). */
    sensim_status (*add_topic)(sensim_bag_writer *w, const char *name, const char *type, const char *md5sum,
                               const char *definition, size_t *topic);
    sensim_status (*write)(sensim_bag_writer *w, size_t topic, int64_t recv_ns, const uint8_t *data,
                           size_t size);
    /* Writes the index/summary/metadata and renames the temporary over
     * the target (sensim/afile.h). Called at most once. */
    sensim_status (*commit)(sensim_bag_writer *w);
    /* Frees what w->impl holds (bag.c frees impl itself); removes the
     * temporary unless committed. */
    void (*close)(sensim_bag_writer *w);
} sensim_bag_writer_ops;

struct sensim_bag_writer {
    BAG_HEAD(sensim_bag_writer_ops);
    sensim_bag_compression compression;
    int committed; /* commit succeeded */
    int failed;    /* an operation failed: later calls are refused */
};

/* A new writer, w->impl a zeroed block of impl_size bytes as for
 * sensim_bag_open_with_, made ready by ops->create; NULL with the error set
 * (the writer closed). */
sensim_bag_writer *sensim_bag_writer_create_with_(const char *path, sensim_bag_format format,
                                                  sensim_bag_compression compression,
                                                  const sensim_bag_writer_ops *ops, size_t impl_size);

/* Declares a topic with an explicit md5sum and definition (no lookup of
 * known types): what sensim_bag_writer_add_topic() calls once it has
 * resolved them, and what tests and benches use for types the codec does
 * not know. For ROS 1, md5sum "" is written as "*" (rosbag's wildcard). */
sensim_status sensim_bag_writer_add_topic_md5(sensim_bag_writer *w, const char *name, const char *type,
                                              const char *md5sum, const char *definition, size_t *topic);

/* "sensor_msgs/Imu" (ROS 1 style) -> "sensor_msgs/msg/Imu", as rosbag2
 * names types; a name with no '/' or with two is copied as it is. NULL
 * when out of memory (no error set); free() it. */
char *sensim_bag_ros2_type_(const char *type);

/* ROS 1 writer: closes a chunk once it holds `bytes` of uncompressed
 * records (default 768 KiB, as rosbag). Tests use small chunks. */
sensim_status sensim_bag_writer_ros1_chunk_size(sensim_bag_writer *w, size_t bytes);

/* Backend create functions, called by sensim_bag_writer_create(); the
 * compression was already checked against the format there. */
sensim_bag_writer *sensim_bag_writer_create_ros1(const char *path, sensim_bag_compression compression);
sensim_bag_writer *sensim_bag_writer_create_db3(const char *path, sensim_bag_compression compression);
sensim_bag_writer *sensim_bag_writer_create_mcap(const char *path, sensim_bag_compression compression);

#endif
