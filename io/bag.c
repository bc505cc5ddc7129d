/* Recordings as one stream of messages: the format dispatcher and the
 * public functions of sensim/bag.h, on top of the backends' vtables
 * (io/bag_internal.h). */
#include "bag_internal.h"

#include "sensim/rosmsg.h"
#include "../lib/base_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* A new reader or writer: a copy of the `size` bytes at init (its fixed
 * fields), with a copy of path in the char * at byte path_at and a zeroed
 * impl block of impl_size bytes in the void * at byte impl_at (none when
 * impl_size is 0); NULL with the error set and nothing kept when out of
 * memory. NEW_PARTS(type, file, impl_size, fields...) spells it for
 * sensim_bag and sensim_bag_writer, the fixed fields as designated
 * initializers (the others zero). */
static void *new_parts(const void *init, size_t size, size_t path_at, size_t impl_at, const char *path,
                       size_t impl_size)
{
    char *o = malloc(size);
    char *p = strdup(path ? path : "");
    void *impl = impl_size ? calloc(1, impl_size) : NULL;
    if (o && p && (impl || !impl_size)) {
        memcpy(o, init, size);
        memcpy(o + path_at, &p, sizeof p);
        memcpy(o + impl_at, &impl, sizeof impl);
        return o;
    }
    free(o);
    free(p);
    free(impl);
    sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
    return NULL;
}
#define NEW_PARTS(type, file, impl_size, ...) \
    ((type *)new_parts(&(type){__VA_ARGS__}, sizeof(type), offsetof(type, path), offsetof(type, impl), (file), \
                       (impl_size)))

sensim_bag *sensim_bag_open_with_(const char *path, sensim_bag_format format, const sensim_bag_ops *ops,
                                  size_t impl_size)
{
    sensim_bag *bag = NEW_PARTS(sensim_bag, path, impl_size, .ops = ops, .format = format);
    if (bag && ops->open(bag) != 0) {
        sensim_bag_close(bag);
        return NULL;
    }
    return bag;
}

sensim_status sensim_bag_add_topic_(sensim_bag *bag, const char *name, const char *type, const char *md5sum,
                                    const char *definition, sensim_msg_encoding encoding, size_t *index)
{
    /* topics and selected share cap_topics, which counts for both once
     * both have grown. */
    size_t cap = bag->cap_topics, cap_sel = bag->cap_topics;
    sensim_status st;
    if ((st = BAG_RESERVE(bag->topics, cap, bag->ntopics + 1, 8, bag->path)) ||
        (st = BAG_RESERVE(bag->selected, cap_sel, bag->ntopics + 1, 8, bag->path)))
        return st;
    bag->cap_topics = cap;
    sensim_bag_topic *t = &bag->topics[bag->ntopics];
    memset(t, 0, sizeof *t);
    char *n = strdup(name ? name : ""), *ty = strdup(type ? type : ""), *m = strdup(md5sum ? md5sum : ""),
         *d = strdup(definition ? definition : "");
    if (!n || !ty || !m || !d) {
        free(n), free(ty), free(m), free(d);
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
    }
    t->name = n;
    t->type = ty;
    t->md5sum = m;
    t->definition = d;
    t->encoding = encoding;
    t->count = 0;
    t->t_first_ns = INT64_MAX;
    t->t_last_ns = INT64_MIN;
    bag->selected[bag->ntopics] = 1;
    if (index)
        *index = bag->ntopics;
    bag->ntopics++;
    return SENSIM_OK;
}

size_t sensim_bag_topic_index_(const sensim_bag *bag, const char *name)
{
    for (size_t i = 0; i < bag->ntopics; i++)
        if (strcmp(bag->topics[i].name, name) == 0)
            return i;
    return (size_t)-1;
}

int sensim_bag_open_file_(const char *path, uint64_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0) {
        *size = (uint64_t)st.st_size;
        return fd;
    }
    sensim_error(SENSIM_EIO, "%s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

/* ---- format detection ---- */

enum bag_kind { KIND_ROS1, KIND_MCAP, KIND_DB3, KIND_ROS2DIR };

/* The rosbag2 backends (io/db3.c, io/mcap.c, io/ros2dir.c). */
static sensim_bag *open_ros2(enum bag_kind kind, const char *path)
{
    switch (kind) {
    case KIND_MCAP:
        return sensim_bag_open_mcap(path);
    case KIND_DB3:
        return sensim_bag_open_db3(path);
    default:
        return sensim_bag_open_ros2dir(path);
    }
}

sensim_bag *sensim_bag_open(const char *path)
{
    if (!path || !*path) {
        sensim_error(SENSIM_EINVAL, "bag: empty file name");
        return NULL;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        sensim_error(errno == ENOENT ? SENSIM_ENOTFOUND : SENSIM_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        size_t n = strlen(path);
        char *meta = malloc(n + sizeof "/metadata.yaml");
        if (!meta) {
            sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
            return NULL;
        }
        memcpy(meta, path, n);
        strcpy(meta + n, "/metadata.yaml");
        int has_meta = stat(meta, &st) == 0 && S_ISREG(st.st_mode);
        free(meta);
        if (!has_meta) {
            sensim_error(SENSIM_EFORMAT, "%s: a directory without metadata.yaml (not a rosbag2 directory)", path);
            return NULL;
        }
        return open_ros2(KIND_ROS2DIR, path);
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        sensim_error(SENSIM_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    unsigned char magic[16];
    size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    if (got >= 13 && memcmp(magic, "#ROSBAG V2.0\n", 13) == 0)
        return sensim_bag_open_ros1(path);
    if (got >= 8 && memcmp(magic, "\x89MCAP0\r\n", 8) == 0)
        return open_ros2(KIND_MCAP, path);
    if (got >= 16 && memcmp(magic, "SQLite format 3", 16) == 0)
        return open_ros2(KIND_DB3, path);
    if (got >= 9 && memcmp(magic, "#ROSBAG V", 9) == 0) {
        size_t e = 9;
        while (e < got && magic[e] != '\n')
            e++;
        sensim_error(SENSIM_EUNSUPPORTED, "%s: ROS bag version '%.*s' (only format 2.0 is read)", path,
                     (int)(e - 9), (const char *)magic + 9);
        return NULL;
    }
    sensim_error(SENSIM_EFORMAT,
                 "%s: not a recording (no ROS 1 bag, MCAP or SQLite magic at byte 0; expected "
                 "\"#ROSBAG V2.0\", \"\\x89MCAP0\" or \"SQLite format 3\")",
                 path);
    return NULL;
}

void sensim_bag_close(sensim_bag *bag)
{
    if (!bag)
        return;
    bag->ops->close(bag);
    for (size_t i = 0; i < bag->ntopics; i++) {
        sensim_bag_topic *t = &bag->topics[i];
        SENSIM_FREE_ALL((char *)t->name, (char *)t->type, (char *)t->md5sum, (char *)t->definition);
    }
    SENSIM_FREE_ALL(bag->impl, bag->topics, bag->selected, bag->path, bag);
}

sensim_bag_format sensim_bag_get_format(const sensim_bag *bag) { return bag->format; }
const char *sensim_bag_path(const sensim_bag *bag) { return bag->path; }
size_t sensim_bag_ntopics(const sensim_bag *bag) { return bag->ntopics; }

const sensim_bag_topic *sensim_bag_topic_at(const sensim_bag *bag, size_t i)
{
    return i < bag->ntopics ? &bag->topics[i] : NULL;
}

sensim_status sensim_bag_find_topic(const sensim_bag *bag, const char *name, size_t *index)
{
    size_t i = name ? sensim_bag_topic_index_(bag, name) : (size_t)-1;
    if (i != (size_t)-1) {
        if (index)
            *index = i;
        return SENSIM_OK;
    }
    /* The message lists what there is: "no topic '/imu' (topics: /imu0
     * (sensor_msgs/Imu), /gps (sensor_msgs/NavSatFix))". A recording with
     * many topics lists those of the types sensim reads and counts the
     * rest, so that the message stays whole (status.h keeps 1023 bytes). */
    enum { FEW = 12, ROOM = 640 };
    char list[ROOM + 64];
    size_t p = 0, shown = 0, cut = 0, others = 0;
    int all = bag->ntopics <= FEW;
    list[0] = '\0';
    for (size_t k = 0; k < bag->ntopics; k++) {
        const sensim_bag_topic *t = &bag->topics[k];
        if (!all && sensim_msg_kind_of(t->type) == SENSIM_MSG_UNKNOWN) {
            others++;
            continue;
        }
        size_t need = strlen(t->name) + strlen(t->type) + 5;
        if (p + need >= ROOM) {
            cut++;
            continue;
        }
        p += (size_t)snprintf(list + p, sizeof list - p, "%s%s (%s)", shown ? ", " : "", t->name, t->type);
        shown++;
    }
    if (cut)
        p += (size_t)snprintf(list + p, sizeof list - p, "%s%zu more", shown ? ", and " : "", cut);
    if (all)
        return sensim_error(SENSIM_ENOTFOUND, "%s: no topic '%s' (topics: %s)", bag->path, name ? name : "",
                            bag->ntopics ? list : "none");
    return sensim_error(SENSIM_ENOTFOUND,
                        "%s: no topic '%s' (%zu topics; of the types sensim reads: %s; and %zu of types sensim "
                        "does not read)",
                        bag->path, name ? name : "", bag->ntopics, shown + cut ? list : "none", others);
}

sensim_status sensim_bag_select(sensim_bag *bag, const size_t *topics, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (topics[k] >= bag->ntopics)
            return sensim_error(SENSIM_EINVAL, "%s: topic index %zu out of range (%zu topics)", bag->path,
                                topics[k], bag->ntopics);
    memset(bag->selected, n ? 0 : 1, bag->ntopics);
    for (size_t k = 0; k < n; k++)
        bag->selected[topics[k]] = 1;
    return bag->ops->rewind(bag);
}

int sensim_bag_next(sensim_bag *bag, sensim_bag_msg *msg)
{
    return bag->ops->next(bag, msg);
}

/* ---- writing ---- */

sensim_bag_writer *sensim_bag_writer_create_with_(const char *path, sensim_bag_format format,
                                                  sensim_bag_compression compression,
                                                  const sensim_bag_writer_ops *ops, size_t impl_size)
{
    sensim_bag_writer *w =
        NEW_PARTS(sensim_bag_writer, path, impl_size, .ops = ops, .format = format, .compression = compression);
    if (w && ops->create(w) != 0) {
        sensim_bag_writer_close(w);
        return NULL;
    }
    return w;
}

char *sensim_bag_ros2_type_(const char *type)
{
    const char *s = strchr(type, '/');
    size_t n = strlen(type);
    if (!s || strchr(s + 1, '/'))
        return strdup(type);
    size_t a = (size_t)(s - type);
    char *t = malloc(n + 5);
    if (t) {
        memcpy(t, type, a);
        memcpy(t + a, "/msg/", 5);
        memcpy(t + a + 5, s + 1, n - a);
    }
    return t;
}

static sensim_bag_writer *open_writer_ros2(const char *path, sensim_bag_format format,
                                           sensim_bag_compression compression)
{
    return format == SENSIM_BAG_MCAP ? sensim_bag_writer_create_mcap(path, compression)
                                     : sensim_bag_writer_create_db3(path, compression);
}

sensim_bag_writer *sensim_bag_writer_create(const char *path, sensim_bag_format format,
                                            sensim_bag_compression compression)
{
    if (!path || !*path) {
        sensim_error(SENSIM_EINVAL, "bag writer: empty file name");
        return NULL;
    }
    static const char *const cname[] = {"none", "bz2", "lz4", "zstd"};
    if ((unsigned)compression > SENSIM_BAG_COMPRESS_ZSTD) {
        sensim_error(SENSIM_EINVAL, "%s: unknown compression %d", path, (int)compression);
        return NULL;
    }
    switch (format) {
    case SENSIM_BAG_ROS1:
        if (compression == SENSIM_BAG_COMPRESS_ZSTD) {
            sensim_error(SENSIM_EUNSUPPORTED, "%s: ROS 1 bags have no %s compression (none, bz2 or lz4)", path,
                         cname[compression]);
            return NULL;
        }
        return sensim_bag_writer_create_ros1(path, compression);
    case SENSIM_BAG_MCAP:
        if (compression == SENSIM_BAG_COMPRESS_BZ2) {
            sensim_error(SENSIM_EUNSUPPORTED, "%s: MCAP has no %s compression (none, lz4 or zstd)", path,
                         cname[compression]);
            return NULL;
        }
        return open_writer_ros2(path, format, compression);
    case SENSIM_BAG_DB3:
        if (compression != SENSIM_BAG_COMPRESS_NONE) {
            sensim_error(SENSIM_EUNSUPPORTED, "%s: rosbag2 sqlite3 storage is written uncompressed (asked: %s)",
                         path, cname[compression]);
            return NULL;
        }
        return open_writer_ros2(path, format, compression);
    }
    sensim_error(SENSIM_EINVAL, "%s: unknown bag format %d", path, (int)format);
    return NULL;
}

sensim_status sensim_bag_writer_add_topic_md5(sensim_bag_writer *w, const char *name, const char *type,
                                              const char *md5sum, const char *definition, size_t *topic)
{
    if (w->failed || w->committed)
        return sensim_error(SENSIM_EINVAL, "%s: writer already %s", w->path,
                            w->committed ? "committed" : "failed");
    if (!name || !*name || !type || !*type)
        return sensim_error(SENSIM_EINVAL, "%s: a topic needs a name and a type", w->path);
    sensim_status st = w->ops->add_topic(w, name, type, md5sum ? md5sum : "", definition ? definition : "", topic);
    if (st != SENSIM_OK)
        w->failed = 1;
    return st;
}

sensim_status sensim_bag_writer_add_topic(sensim_bag_writer *w, const char *name, const char *type,
                                          const char *definition, size_t *topic)
{
    if (!definition || !*definition) {
        sensim_msg_kind k = sensim_msg_kind_of(type);
        if (k == SENSIM_MSG_UNKNOWN)
            return sensim_error(SENSIM_EUNSUPPORTED,
                                "%s: topic '%s': no definition given for type '%s', which sensim does not know",
                                w->path, name ? name : "", type ? type : "");
        /* Known types are written in the spelling of the format. */
        if (w->format == SENSIM_BAG_ROS1)
            return sensim_bag_writer_add_topic_md5(w, name, sensim_msg_ros1_type(k), sensim_msg_md5sum(k),
                                                   sensim_msg_definition(k), topic);
        return sensim_bag_writer_add_topic_md5(w, name, sensim_msg_ros2_type(k), "", sensim_msg_ros2_definition(k),
                                               topic);
    }
    /* With a definition but no md5sum: ROS 1 writes rosbag's wildcard "*". */
    return sensim_bag_writer_add_topic_md5(w, name, type, "", definition, topic);
}

sensim_status sensim_bag_writer_write(sensim_bag_writer *w, size_t topic, int64_t recv_ns, const uint8_t *data,
                                      size_t size)
{
    if (w->failed || w->committed)
        return sensim_error(SENSIM_EINVAL, "%s: writer already %s", w->path,
                            w->committed ? "committed" : "failed");
    if (!data && size)
        return sensim_error(SENSIM_EINVAL, "%s: message without data", w->path);
    sensim_status st = w->ops->write(w, topic, recv_ns, data, size);
    if (st != SENSIM_OK)
        w->failed = 1;
    return st;
}

sensim_status sensim_bag_writer_commit(sensim_bag_writer *w)
{
    if (w->failed || w->committed)
        return sensim_error(SENSIM_EINVAL, "%s: writer already %s", w->path,
                            w->committed ? "committed" : "failed");
    sensim_status st = w->ops->commit(w);
    if (st == SENSIM_OK)
        w->committed = 1;
    else
        w->failed = 1;
    return st;
}

void sensim_bag_writer_close(sensim_bag_writer *w)
{
    if (!w)
        return;
    w->ops->close(w);
    SENSIM_FREE_ALL(w->impl, w->path, w);
}
