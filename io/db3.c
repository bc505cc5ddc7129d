/* rosbag2 sqlite3 storage (.db3): reader and writer behind sensim/bag.h.
 *
 * Reading uses only what every rosbag2 release has (Ardent's schema to
 * today's): topics(id, name, type, serialization_format) and
 * messages(id, topic_id, timestamp, data); the message_definitions table of
 * newer releases supplies the definition text when present. Messages stream
 * from one prepared statement ordered by (timestamp, id), which rosbag2's
 * timestamp_idx serves without sorting; ties keep insertion order. Counts
 * and spans per topic come from one SQL aggregate at open. Payloads of
 * topics that are not selected are never fetched from the row.
 *
 * Writing creates the tables as rosbag2's schema version 3 (Humble) does
 * (schema, topics with offered_qos_profiles, messages, timestamp_idx), all
 * rows in one transaction, in a temporary file renamed over the target on
 * commit (sensim/afile.h). The journal is kept in memory so that nothing
 * but the temporary exists beside the target while writing. */
#include "bag_internal.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/afile.h"

/* ---- reading ---- */

typedef struct db3_tid {
    int64_t id;
    size_t topic;
} db3_tid;

typedef struct db3_impl {
    sqlite3 *db;
    sqlite3_stmt *it;
    db3_tid *ids; /* sorted by id */
    size_t nids;
    uint64_t counter;
    int done;
} db3_impl;

static db3_impl *IMPL(sensim_bag *bag) { return (db3_impl *)bag->impl; }

static sensim_status sql_error(sensim_bag *bag, const char *what)
{
    db3_impl *d = IMPL(bag);
    int code = sqlite3_errcode(d->db);
    sensim_status st = (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) ? SENSIM_EFORMAT : SENSIM_EIO;
    return sensim_error(st, "%s: %s: %s", bag->path, what, sqlite3_errmsg(d->db));
}

static int cmp_tid(const void *a, const void *b)
{
    int64_t x = ((const db3_tid *)a)->id, y = ((const db3_tid *)b)->id;
    return x < y ? -1 : x > y;
}

static size_t topic_of(const db3_impl *d, int64_t id)
{
    db3_tid key = {id, 0};
    size_t i = bag_find(&key, d->ids, d->nids, sizeof *d->ids, cmp_tid);
    return i == (size_t)-1 ? i : d->ids[i].topic;
}

static int has_table(sqlite3 *db, const char *name, int *err)
{
    sqlite3_stmt *s = NULL;
    int found = 0;
    *err = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &s, NULL);
    if (*err == SQLITE_OK) {
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        int r = sqlite3_step(s);
        found = r == SQLITE_ROW;
        *err = (r == SQLITE_ROW || r == SQLITE_DONE) ? SQLITE_OK : r;
    }
    sqlite3_finalize(s);
    return found;
}

static const char *text_col(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? (const char *)t : "";
}

static sensim_status load_topics(sensim_bag *bag)
{
    db3_impl *d = IMPL(bag);
    int have_defs = 0, err;
    for (const char *const *t = (const char *const[]){"topics", "messages", NULL}; *t; t++) {
        int found = has_table(d->db, *t, &err);
        if (err != SQLITE_OK)
            return sql_error(bag, "reading the schema");
        if (!found)
            return sensim_error(SENSIM_EFORMAT, "%s: an SQLite database without a '%s' table: not a rosbag2 recording",
                                bag->path, *t);
    }
    have_defs = has_table(d->db, "message_definitions", &err);
    if (err != SQLITE_OK)
        return sql_error(bag, "reading the schema");
    sqlite3_stmt *s = NULL, *defs = NULL;
    sensim_status st = SENSIM_OK;
    if (sqlite3_prepare_v2(d->db, "SELECT id, name, type, serialization_format FROM topics ORDER BY id", -1, &s,
                           NULL) != SQLITE_OK)
        return sql_error(bag, "table 'topics'");
    if (have_defs && sqlite3_prepare_v2(d->db,
                                        "SELECT encoded_message_definition FROM message_definitions "
                                        "WHERE topic_type=? ORDER BY id LIMIT 1",
                                        -1, &defs, NULL) != SQLITE_OK)
        defs = NULL; /* an older or different layout: definitions are optional */
    int r;
    while ((r = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        const char *name = text_col(s, 1), *type = text_col(s, 2), *fmt = text_col(s, 3);
        sensim_msg_encoding enc;
        if (bag_encoding(fmt, &enc) != 0) {
            st = sensim_error(SENSIM_EUNSUPPORTED,
                              "%s: topic '%s': serialization format '%s' (sensim reads cdr and ros1)", bag->path, name,
                              fmt);
            break;
        }
        size_t ti = sensim_bag_topic_index_(bag, name);
        if (ti != (size_t)-1) {
            if (strcmp(bag->topics[ti].type, type) != 0) {
                st = sensim_error(SENSIM_EFORMAT, "%s: topic '%s' listed twice, as '%s' and '%s'", bag->path, name,
                                  bag->topics[ti].type, type);
                break;
            }
        } else {
            const char *def = "";
            if (defs) {
                sqlite3_reset(defs);
                sqlite3_bind_text(defs, 1, type, -1, SQLITE_TRANSIENT);
                if (sqlite3_step(defs) == SQLITE_ROW)
                    def = text_col(defs, 0);
            }
            st = sensim_bag_add_topic_(bag, name, type, "", def, enc, &ti);
            if (st != SENSIM_OK)
                break;
        }
        db3_tid *ids = realloc(d->ids, (d->nids + 1) * sizeof *ids);
        if (!ids) {
            st = sensim_error(SENSIM_ENOMEM, "%s: out of memory", bag->path);
            break;
        }
        d->ids = ids;
        d->ids[d->nids++] = (db3_tid){id, ti};
    }
    if (st == SENSIM_OK && r != SQLITE_DONE)
        st = sql_error(bag, "table 'topics'");
    sqlite3_finalize(s);
    sqlite3_finalize(defs);
    if (st != SENSIM_OK)
        return st;
    qsort(d->ids, d->nids, sizeof *d->ids, cmp_tid);

    if (sqlite3_prepare_v2(d->db,
                           "SELECT topic_id, COUNT(*), MIN(timestamp), MAX(timestamp) FROM messages GROUP BY topic_id",
                           -1, &s, NULL) != SQLITE_OK)
        return sql_error(bag, "table 'messages'");
    while ((r = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        size_t ti = topic_of(d, id);
        if (ti == (size_t)-1) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %" PRId64 " messages on topic_id %" PRId64 ", which table 'topics' does not list",
                              bag->path, (int64_t)sqlite3_column_int64(s, 1), id);
            break;
        }
        sensim_bag_topic *t = &bag->topics[ti];
        t->count += (uint64_t)sqlite3_column_int64(s, 1);
        int64_t a = sqlite3_column_int64(s, 2), b = sqlite3_column_int64(s, 3);
        if (a < t->t_first_ns)
            t->t_first_ns = a;
        if (b > t->t_last_ns)
            t->t_last_ns = b;
    }
    if (st == SENSIM_OK && r != SQLITE_DONE)
        st = sql_error(bag, "table 'messages'");
    sqlite3_finalize(s);
    return st;
}

static sensim_status db3_rewind(sensim_bag *bag)
{
    db3_impl *d = IMPL(bag);
    d->counter = 0;
    d->done = 0;
    if (sqlite3_reset(d->it) != SQLITE_OK)
        return sql_error(bag, "table 'messages'");
    return SENSIM_OK;
}

static int db3_next(sensim_bag *bag, sensim_bag_msg *msg)
{
    db3_impl *d = IMPL(bag);
    if (d->done)
        return 0;
    int r;
    while ((r = sqlite3_step(d->it)) == SQLITE_ROW) {
        uint64_t index = d->counter++;
        int64_t id = sqlite3_column_int64(d->it, 0);
        size_t ti = topic_of(d, id);
        if (ti == (size_t)-1) {
            sensim_error(SENSIM_EFORMAT, "%s: message %" PRIu64 ": topic_id %" PRId64 " is not in table 'topics'", bag->path,
                         index, id);
            return -1;
        }
        if (!bag->selected[ti])
            continue;
        int type = sqlite3_column_type(d->it, 2);
        if (type != SQLITE_BLOB && type != SQLITE_NULL) {
            sensim_error(SENSIM_EFORMAT, "%s: topic '%s': message %" PRIu64 ": data is not a BLOB", bag->path,
                         bag->topics[ti].name, index);
            return -1;
        }
        const void *p = sqlite3_column_blob(d->it, 2);
        int n = sqlite3_column_bytes(d->it, 2);
        if (!p && n > 0) {
            sensim_error(SENSIM_ENOMEM, "%s: topic '%s': message %" PRIu64 ": out of memory", bag->path,
                         bag->topics[ti].name, index);
            return -1;
        }
        msg->topic = ti;
        msg->recv_ns = sqlite3_column_int64(d->it, 1);
        msg->index = index;
        msg->data = p ? p : (const uint8_t *)"";
        msg->size = (size_t)n;
        return 1;
    }
    d->done = 1;
    if (r != SQLITE_DONE) {
        sensim_error(SENSIM_EFORMAT, "%s: message %" PRIu64 ": %s", bag->path, d->counter, sqlite3_errmsg(d->db));
        return -1;
    }
    return 0;
}

static void db3_close(sensim_bag *bag)
{
    db3_impl *d = IMPL(bag);
    sqlite3_finalize(d->it);
    sqlite3_close(d->db);
    free(d->ids);
}

static int db3_open(sensim_bag *bag)
{
    const char *path = bag->path;
    db3_impl *d = bag->impl;
    if (sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        if (!d->db) {
            sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
            return -1;
        }
        sql_error(bag, "cannot open");
        return -1;
    }
    int err;
    has_table(d->db, "topics", &err);
    if (err == SQLITE_CANTOPEN) {
        /* A WAL database in a read-only directory cannot make its -shm file:
         * a finished recording is then read as immutable. */
        sqlite3_close(d->db);
        d->db = NULL;
        char *uri = sqlite3_mprintf("file:%s?immutable=1", path);
        int rc = uri ? sqlite3_open_v2(uri, &d->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) : SQLITE_NOMEM;
        sqlite3_free(uri);
        if (rc != SQLITE_OK) {
            if (d->db)
                sql_error(bag, "cannot open");
            else
                sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
            return -1;
        }
    }
    sensim_status st = load_topics(bag);
    if (st != SENSIM_OK)
        return -1;
    if (sqlite3_prepare_v2(d->db, "SELECT topic_id, timestamp, data FROM messages ORDER BY timestamp, id", -1, &d->it,
                           NULL) != SQLITE_OK) {
        sql_error(bag, "table 'messages'");
        return -1;
    }
    return 0;
}

static const sensim_bag_ops DB3_OPS = {db3_open, db3_next, db3_rewind, db3_close};

sensim_bag *sensim_bag_open_db3(const char *path)
{
    return sensim_bag_open_with_(path, SENSIM_BAG_DB3, &DB3_OPS, sizeof(db3_impl));
}

/* ---- writing ---- */

typedef struct db3w_impl {
    sensim_afile *af;
    sqlite3 *db;
    sqlite3_stmt *ins_msg, *ins_topic;
    char **names;
    size_t ntopics;
    uint64_t nmsg;
} db3w_impl;

static db3w_impl *WIMPL(sensim_bag_writer *w) { return (db3w_impl *)w->impl; }

static sensim_status wsql_error(sensim_bag_writer *w, const char *what)
{
    return sensim_error(SENSIM_EIO, "%s: %s: %s", w->path, what, sqlite3_errmsg(WIMPL(w)->db));
}

static sensim_status db3w_add_topic(sensim_bag_writer *w, const char *name, const char *type, const char *md5sum,
                                    const char *definition, size_t *topic)
{
    (void)md5sum;
    (void)definition; /* schema version 3 has no message_definitions table */
    db3w_impl *d = WIMPL(w);
    for (size_t i = 0; i < d->ntopics; i++)
        if (strcmp(d->names[i], name) == 0)
            return sensim_error(SENSIM_EINVAL, "%s: topic '%s' declared twice", w->path, name);
    char **nn = realloc(d->names, (d->ntopics + 1) * sizeof *nn);
    if (!nn)
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", w->path);
    d->names = nn;
    char *t2 = sensim_bag_ros2_type_(type), *n2 = malloc(strlen(name) + 1);
    if (!t2 || !n2) {
        free(t2), free(n2);
        return sensim_error(SENSIM_ENOMEM, "%s: out of memory", w->path);
    }
    strcpy(n2, name);
    sqlite3_reset(d->ins_topic);
    sqlite3_bind_int64(d->ins_topic, 1, (sqlite3_int64)d->ntopics + 1);
    sqlite3_bind_text(d->ins_topic, 2, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(d->ins_topic, 3, t2, -1, SQLITE_TRANSIENT);
    free(t2);
    if (sqlite3_step(d->ins_topic) != SQLITE_DONE) {
        free(n2);
        return wsql_error(w, "table 'topics'");
    }
    d->names[d->ntopics++] = n2;
    if (topic)
        *topic = d->ntopics - 1;
    return SENSIM_OK;
}

static sensim_status db3w_write(sensim_bag_writer *w, size_t topic, int64_t recv_ns, const uint8_t *data, size_t size)
{
    db3w_impl *d = WIMPL(w);
    if (topic >= d->ntopics)
        return sensim_error(SENSIM_EINVAL, "%s: message %" PRIu64 ": no topic %zu (%zu declared)", w->path, d->nmsg,
                            topic, d->ntopics);
    if (size > INT32_MAX)
        return sensim_error(SENSIM_EINVAL, "%s: topic '%s': message %" PRIu64 ": %zu bytes, more than SQLite stores",
                            w->path, d->names[topic], d->nmsg, size);
    sqlite3_reset(d->ins_msg);
    sqlite3_bind_int64(d->ins_msg, 1, (sqlite3_int64)topic + 1);
    sqlite3_bind_int64(d->ins_msg, 2, recv_ns);
    sqlite3_bind_blob(d->ins_msg, 3, size ? (const void *)data : "", (int)size, SQLITE_STATIC);
    int r = sqlite3_step(d->ins_msg);
    sqlite3_bind_null(d->ins_msg, 3); /* the caller's buffer is not kept */
    if (r != SQLITE_DONE)
        return wsql_error(w, "table 'messages'");
    d->nmsg++;
    return SENSIM_OK;
}

static sensim_status db3w_commit(sensim_bag_writer *w)
{
    db3w_impl *d = WIMPL(w);
    sqlite3_finalize(d->ins_msg);
    sqlite3_finalize(d->ins_topic);
    d->ins_msg = d->ins_topic = NULL;
    char *err = NULL;
    if (sqlite3_exec(d->db, "COMMIT", NULL, NULL, &err) != SQLITE_OK) {
        sensim_status st = sensim_error(SENSIM_EIO, "%s: commit: %s", w->path, err ? err : "?");
        sqlite3_free(err);
        return st;
    }
    if (sqlite3_close(d->db) != SQLITE_OK)
        return wsql_error(w, "close");
    d->db = NULL;
    sensim_afile *af = d->af;
    d->af = NULL;
    return sensim_afile_commit(af);
}

static void db3w_close(sensim_bag_writer *w)
{
    db3w_impl *d = WIMPL(w);
    sqlite3_finalize(d->ins_msg);
    sqlite3_finalize(d->ins_topic);
    sqlite3_close(d->db);
    sensim_afile_abort(d->af);
    for (size_t i = 0; i < d->ntopics; i++)
        free(d->names[i]);
    free(d->names);
}

static int db3w_create(sensim_bag_writer *w)
{
    const char *path = w->path;
    db3w_impl *d = w->impl;
    if (!(d->af = sensim_afile_open(path)))
        return -1;
    if (sqlite3_open_v2(sensim_afile_tmp_path(d->af), &d->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        if (d->db)
            wsql_error(w, "create");
        else
            sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        return -1;
    }
    static const char SCHEMA[] =
        "PRAGMA journal_mode=MEMORY;"
        "PRAGMA synchronous=OFF;"
        "BEGIN;"
        "CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);"
        "INSERT INTO schema VALUES (3, 'sensim');"
        "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,"
        " serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);"
        "CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL,"
        " timestamp INTEGER NOT NULL, data BLOB NOT NULL);"
        "CREATE INDEX timestamp_idx ON messages (timestamp ASC);";
    char *err = NULL;
    if (sqlite3_exec(d->db, SCHEMA, NULL, NULL, &err) != SQLITE_OK) {
        sensim_error(SENSIM_EIO, "%s: create: %s", path, err ? err : "?");
        sqlite3_free(err);
        return -1;
    }
    if (sqlite3_prepare_v2(d->db,
                           "INSERT INTO topics (id, name, type, serialization_format, offered_qos_profiles) "
                           "VALUES (?, ?, ?, 'cdr', '')",
                           -1, &d->ins_topic, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(d->db, "INSERT INTO messages (topic_id, timestamp, data) VALUES (?, ?, ?)", -1, &d->ins_msg,
                           NULL) != SQLITE_OK) {
        wsql_error(w, "create");
        return -1;
    }
    return 0;
}

static const sensim_bag_writer_ops DB3W_OPS = {db3w_create, db3w_add_topic, db3w_write, db3w_commit, db3w_close};

sensim_bag_writer *sensim_bag_writer_create_db3(const char *path, sensim_bag_compression compression)
{
    return sensim_bag_writer_create_with_(path, SENSIM_BAG_DB3, compression, &DB3W_OPS, sizeof(db3w_impl));
}
