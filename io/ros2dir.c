/* rosbag2 directories: metadata.yaml plus the split files it lists, read as
 * one stream behind sensim/bag.h.
 *
 * metadata.yaml (rosbag2_bagfile_information) gives storage_identifier and
 * relative_file_paths; every split must exist (a missing one is an error
 * naming it and its place in the list). Each split is opened with the
 * backend its magic bytes name (io/db3.c, io/mcap.c), its topics merged by
 * name (the same type in every split), counts summed and spans joined.
 * rosbag2 starts a new split when the previous one is full, so splits follow
 * each other in time and are read one after the other; message indexes run
 * on across splits. Files compressed by rosbag2 (compression_mode "file" or
 * "message") are refused with a message saying so. */
#include "bag_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sensim/yaml.h"
#include "../lib/base_internal.h"

typedef struct dir_impl {
    sensim_bag **splits;
    size_t nsplits, cur;
    size_t **map;        /* per split: its topic index -> the directory's */
    uint64_t *base;      /* per split: messages in the splits before it */
    unsigned char *skip; /* per split: no selected topic in it */
} dir_impl;

static dir_impl *IMPL(sensim_bag *bag) { return (dir_impl *)bag->impl; }

static char *join(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *p = malloc(na + nb + 2);
    if (p) {
        memcpy(p, a, na);
        p[na] = '/';
        memcpy(p + na + 1, b, nb + 1);
    }
    return p;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* A split is an MCAP or sqlite3 file, told from its content as any
 * recording is (sensim_bag_open); a directory or a ROS 1 bag is refused. */
static sensim_bag *open_split(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        sensim_error(errno == ENOENT ? SENSIM_ENOTFOUND : SENSIM_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        sensim_error(SENSIM_EFORMAT, "%s: not a regular file", path);
        return NULL;
    }
    sensim_bag *b = sensim_bag_open(path);
    if (b && sensim_bag_get_format(b) == SENSIM_BAG_ROS1) {
        sensim_bag_close(b);
        sensim_error(SENSIM_EFORMAT, "%s: a ROS 1 bag cannot be a rosbag2 split (MCAP or sqlite3 only)", path);
        return NULL;
    }
    return b;
}

static sensim_status dir_rewind(sensim_bag *bag)
{
    dir_impl *d = IMPL(bag);
    int all = 1;
    for (size_t i = 0; i < bag->ntopics; i++)
        all &= bag->selected[i];
    size_t *sel = NULL;
    sensim_status st = SENSIM_OK;
    for (size_t s = 0; s < d->nsplits && st == SENSIM_OK; s++) {
        sensim_bag *b = d->splits[s];
        size_t n = 0;
        if (!all) {
            size_t *q = realloc(sel, (b->ntopics ? b->ntopics : 1) * sizeof *q);
            if (!q) {
                st = sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
                break;
            }
            sel = q;
            for (size_t t = 0; t < b->ntopics; t++)
                if (bag->selected[d->map[s][t]])
                    sel[n++] = t;
        }
        d->skip[s] = !all && n == 0;
        if (!d->skip[s])
            st = sensim_bag_select(b, sel, n);
    }
    free(sel);
    d->cur = 0;
    return st;
}

static int dir_next(sensim_bag *bag, sensim_bag_msg *msg)
{
    dir_impl *d = IMPL(bag);
    while (d->cur < d->nsplits) {
        if (!d->skip[d->cur]) {
            int r = sensim_bag_next(d->splits[d->cur], msg);
            if (r < 0)
                return -1;
            if (r > 0) {
                msg->topic = d->map[d->cur][msg->topic];
                msg->index += d->base[d->cur];
                return 1;
            }
        }
        d->cur++;
    }
    return 0;
}

static void dir_close(sensim_bag *bag)
{
    dir_impl *d = IMPL(bag);
    for (size_t s = 0; s < d->nsplits; s++) {
        sensim_bag_close(d->splits[s]);
        free(d->map[s]);
    }
    SENSIM_FREE_ALL(d->splits, d->map, d->base, d->skip);
}

/* Adds split s's topics to the directory's. */
static sensim_status merge_topics(sensim_bag *bag, size_t s)
{
    dir_impl *d = IMPL(bag);
    sensim_bag *b = d->splits[s];
    d->map[s] = malloc((b->ntopics ? b->ntopics : 1) * sizeof *d->map[s]);
    if (!d->map[s])
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
    uint64_t total = 0;
    for (size_t t = 0; t < b->ntopics; t++) {
        const sensim_bag_topic *bt = &b->topics[t];
        size_t i = sensim_bag_topic_index_(bag, bt->name);
        if (i == (size_t)-1) {
            sensim_status st =
                sensim_bag_add_topic_(bag, bt->name, bt->type, bt->md5sum, bt->definition, bt->encoding, &i);
            if (st != SENSIM_OK)
                return st;
        } else if (strcmp(bag->topics[i].type, bt->type) != 0 || bag->topics[i].encoding != bt->encoding) {
            return sensim_error(SENSIM_EFORMAT, "%s: topic '%s' is '%s' in one split and '%s' in %s", bag->path, bt->name,
                                bag->topics[i].type, bt->type, b->path);
        }
        sensim_bag_topic *dt = &bag->topics[i];
        dt->count += bt->count;
        if (bt->count) {
            if (bt->t_first_ns < dt->t_first_ns)
                dt->t_first_ns = bt->t_first_ns;
            if (bt->t_last_ns > dt->t_last_ns)
                dt->t_last_ns = bt->t_last_ns;
        }
        d->map[s][t] = i;
        total += bt->count;
    }
    d->base[s + 1] = d->base[s] + total;
    return SENSIM_OK;
}

static int dir_open(sensim_bag *bag)
{
    const char *dir = bag->path;
    sensim_yaml *doc = NULL;
    char *meta = NULL, *fp = NULL;
    int rc = -1;
    dir_impl *d = bag->impl;
    if (!(meta = join(dir, "metadata.yaml"))) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", dir);
        goto done;
    }
    if (!(doc = sensim_yaml_load_file(meta)))
        goto done;
    const sensim_ynode *info = sensim_ynode_get(sensim_yaml_root(doc), "rosbag2_bagfile_information");
    if (!info || sensim_ynode_kind_of(info) != SENSIM_YNODE_MAPPING) {
        sensim_error(SENSIM_EFORMAT, "%s: no mapping 'rosbag2_bagfile_information': not rosbag2 metadata", meta);
        goto done;
    }
    const char *storage = "", *cmode = "", *cfmt = "";
    if (sensim_ynode_get_string(info, "storage_identifier", 1, &storage) != SENSIM_OK ||
        sensim_ynode_get_string(info, "compression_mode", 0, &cmode) != SENSIM_OK ||
        sensim_ynode_get_string(info, "compression_format", 0, &cfmt) != SENSIM_OK)
        goto done;
    if (strcmp(storage, "sqlite3") != 0 && strcmp(storage, "mcap") != 0) {
        sensim_ynode_error(sensim_ynode_get(info, "storage_identifier"), SENSIM_EUNSUPPORTED,
                           "storage_identifier '%s' (sensim reads sqlite3 and mcap)", storage);
        goto done;
    }
    if (*cmode && strcmp(cmode, "none") != 0 && strcmp(cmode, "NONE") != 0) {
        sensim_ynode_error(sensim_ynode_get(info, "compression_mode"), SENSIM_EUNSUPPORTED,
                           "rosbag2 compression (mode '%s', format '%s') is not read; decompress the bag first "
                           "(ros2 bag convert)",
                           cmode, cfmt);
        goto done;
    }
    const sensim_ynode *files = sensim_ynode_get(info, "relative_file_paths");
    if (!files || sensim_ynode_kind_of(files) != SENSIM_YNODE_SEQUENCE || sensim_ynode_size(files) == 0) {
        sensim_error(SENSIM_EFORMAT, "%s:%d: 'relative_file_paths' must be a non-empty list of files", meta,
                     files ? sensim_ynode_line(files) : sensim_ynode_line(info));
        goto done;
    }
    size_t n = sensim_ynode_size(files);
    d->splits = calloc(n, sizeof *d->splits);
    d->map = calloc(n, sizeof *d->map);
    d->base = calloc(n + 1, sizeof *d->base);
    d->skip = calloc(n, 1);
    if (!d->splits || !d->map || !d->base || !d->skip) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", dir);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const sensim_ynode *it = sensim_ynode_item(files, i);
        const char *rel = sensim_ynode_scalar(it);
        if (!rel || !*rel) {
            sensim_ynode_error(it, SENSIM_EFORMAT, "relative_file_paths[%zu]: not a file name", i);
            goto done;
        }
        free(fp);
        if (!(fp = join(dir, rel))) {
            sensim_error(SENSIM_ENOMEM, "%s: out of memory", dir);
            goto done;
        }
        if (!is_file(fp) && strchr(rel, '/')) {
            /* Early releases wrote paths relative to the bag's parent
             * ("bag/bag_0.db3"). */
            char *alt = join(dir, "..");
            char *alt2 = alt ? join(alt, rel) : NULL;
            free(alt);
            if (alt2 && is_file(alt2)) {
                free(fp);
                fp = alt2;
            } else
                free(alt2);
        }
        if (!is_file(fp)) {
            sensim_error(SENSIM_ENOTFOUND, "%s:%d: relative_file_paths[%zu]: split file '%s' does not exist (%s)", meta,
                         sensim_ynode_line(it), i, rel, fp);
            goto done;
        }
        if (!(d->splits[i] = open_split(fp)))
            goto done;
        d->nsplits = i + 1;
        if (merge_topics(bag, i) != SENSIM_OK)
            goto done;
    }
    bag->format = d->splits[0]->format;
    rc = 0;
done:
    free(fp);
    free(meta);
    sensim_yaml_free(doc);
    return rc;
}

static const sensim_bag_ops DIR_OPS = {dir_open, dir_next, dir_rewind, dir_close};

sensim_bag *sensim_bag_open_ros2dir(const char *dir)
{
    return sensim_bag_open_with_(dir, SENSIM_BAG_DB3, &DIR_OPS, sizeof(dir_impl));
}
