/* Recordings (ROS 1 bags, rosbag2 .db3/.mcap files and directories) on the
 * command line: telling them from logs, streaming a topic's messages in
 * stamp order, importing topics into a log, listing them, and writing log
 * groups back as messages (import, info, allan, fit and export share these). */
#ifndef SENSIM_CLI_BAGCLI_H
#define SENSIM_CLI_BAGCLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "cli_series.h"
#include "sensim/bag.h"
#include "sensim/rosmsg.h"

/* 1 if path is a recording sensim_bag_open() reads: a file starting with
 * the ROS 1 bag, MCAP or SQLite magic, or a directory with metadata.yaml. */
int cli_is_bag(const char *path);

/* ---- one topic's messages in stamp order ----
 *
 * Messages arrive in receive order; with header stamps they may be out of
 * order. A bounded window (REORDER_MAX messages or 64 MiB) sorts them; a
 * message older than one already handed out (beyond the window) is an error
 * naming topic and message index. Exact duplicate stamps are dropped and
 * counted; gaps are intervals over 1.5 times the median interval. */
typedef struct cli_bag_stats {
    uint64_t messages;   /* handed out */
    uint64_t reordered;  /* arrived with a stamp older than an earlier message's */
    uint64_t duplicates; /* dropped: same stamp as the message before */
    uint64_t gaps;       /* intervals > 1.5 x median */
    uint64_t skipped;    /* TF messages without the selected pair */
    double median_dt;    /* s (0 with fewer than 2 messages) */
    int64_t first_ns, last_ns;
    char frame_id[256];  /* of the first message */
    uint64_t frame_changes;
} cli_bag_stats;

typedef struct cli_bag_stream cli_bag_stream;

/* Called for each message in stamp order; the payload is borrowed for the
 * call. Nonzero status stops the stream (message kept). */
typedef sensim_status (*cli_bag_emit)(void *ctx, size_t sel, int64_t stamp_ns, uint64_t index, const uint8_t *data,
                                      size_t size);

/* Streams every selected topic (sel = 0..nsel-1 in the order given) through
 * its own window. tf_parent/tf_child pick transforms from TFMessage topics
 * (required for those). time_receive: stamp = receive time instead of the
 * header stamp. Opened bags are closed by cli_bag_stream_free. */
cli_bag_stream *cli_bag_stream_open(const char *path, const char *const *topics, size_t nsel, int time_receive,
                                    const char *tf_parent, const char *tf_child);
sensim_bag *cli_bag_stream_bag(cli_bag_stream *s);
const sensim_bag_topic *cli_bag_stream_topic(const cli_bag_stream *s, size_t sel);
sensim_msg_kind cli_bag_stream_kind(const cli_bag_stream *s, size_t sel);
/* The earliest stamp the stream will use as a time origin: the first
 * message's stamp (after cli_bag_stream_run started; valid inside emit). */
int64_t cli_bag_stream_first_ns(const cli_bag_stream *s);
sensim_status cli_bag_stream_run(cli_bag_stream *s, cli_bag_emit emit, void *ctx);
const cli_bag_stats *cli_bag_stream_stats(const cli_bag_stream *s, size_t sel);
void cli_bag_stream_free(cli_bag_stream *s);

/* Decodes a TFMessage and copies the transform parent -> child; 1 if found,
 * 0 if not, -1 on a decode error (message set). */
int cli_bag_find_tf(sensim_msg_encoding enc, const uint8_t *data, size_t size, const char *parent, const char *child,
                    sensim_msg_transform_stamped *out);

/* ---- the verbs ---- */

/* 1 when import's arguments name a recording (--topic, or an argument that
 * cli_is_bag() recognises), when export's ask for --format bag|mcap|db3. */
int cli_import_wants_bag(int argc, char **argv);
int cli_export_wants_bag(int argc, char **argv);

/* sensim import BAG --topic T[:NAME] ... (called by cmd_import when its
 * input is a recording; argv as cmd_import got it). */
int cli_import_bag(int argc, char **argv);
/* The same with its per-topic report to `report`; NULL: no report and no
 * error printed (the message stays in sensim_last_error()). */
int cli_import_bag_run(int argc, char **argv, FILE *report);
/* sensim info BAG [--json] */
int cli_info_bag(const char *path, int json);
/* sensim export LOG -g /sensors/NAME --format bag|mcap -o OUT (called by
 * cmd_export for those formats). */
int cli_export_bag(int argc, char **argv);

/* Imports one topic into a temporary log (for fit gnss): *tmp is its path
 * (malloc'd; remove it and free), *sensor the group name (malloc'd). */
sensim_status cli_bag_temp_log(const char *path, const char *topic, int time_receive, char **tmp, char **sensor);

/* The sample rate of a series of n messages read from topic of path: rate
 * when given (> 0; it must match the median spacing of the stamps within
 * 1 %), else 1 / the median spacing; fewer than 3 messages or no usable
 * stamps are errors. Gaps and dropped duplicates are reported on stderr. */
sensim_status cli_bag_series_rate(const char *path, const char *topic, const cli_bag_stats *bst, size_t n,
                                  double rate, double *out);

/* The --help and options of the recording forms of import and export,
 * printed after those of the text forms (cmd_import_spec.next). */
extern const cli_spec cli_import_bag_spec, cli_export_bag_spec;

#endif
