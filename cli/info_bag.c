/* sensim info BAG: a recording's topics, types, counts, rates and time span,
 * from what sensim_bag_open reads (index, summary or metadata), without
 * reading the messages. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bagcli.h"
#include "cli.h"

static const char *format_name(sensim_bag_format f)
{
    return f == SENSIM_BAG_ROS1 ? "ROS 1 bag" : f == SENSIM_BAG_DB3 ? "rosbag2 sqlite3" : "MCAP";
}

int cli_info_bag(const char *path, int json)
{
    sensim_bag *bag = sensim_bag_open(path);
    if (!bag)
        return cli_fail_lib("info");
    size_t n = sensim_bag_ntopics(bag);
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const sensim_bag_topic *t = sensim_bag_topic_at(bag, i);
        total += t->count;
        if (t->count) {
            t0 = t->t_first_ns < t0 ? t->t_first_ns : t0;
            t1 = t->t_last_ns > t1 ? t->t_last_ns : t1;
        }
    }
    double span = total ? (double)(t1 - t0) / 1e9 : 0;
    if (json) {
        printf("{\"file\": ");
        cli_json_str(stdout, path);
        printf(", \"format\": ");
        cli_json_str(stdout, format_name(sensim_bag_get_format(bag)));
        printf(", \"messages\": %" PRIu64 ", \"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64
               ", \"duration_s\": %.9g, \"topics\": [",
               total, total ? t0 : 0, total ? t1 : 0, span);
    } else {
        printf("%s: %s, %zu topics, %" PRIu64 " messages", path, format_name(sensim_bag_get_format(bag)), n, total);
        if (total)
            printf(", %" PRId64 ".%09" PRId64 " s to %" PRId64 ".%09" PRId64 " s (%.6g s)", t0 / 1000000000,
                   t0 % 1000000000, t1 / 1000000000, t1 % 1000000000, span);
        printf("\n");
    }
    for (size_t i = 0; i < n; i++) {
        const sensim_bag_topic *t = sensim_bag_topic_at(bag, i);
        double dur = (double)(t->t_last_ns - t->t_first_ns) / 1e9;
        double rate = t->count > 1 && dur > 0 ? (double)(t->count - 1) / dur : 0;
        sensim_msg_kind k = sensim_msg_kind_of(t->type);
        if (json) {
            printf("%s{\"name\": ", i ? ", " : "");
            cli_json_str(stdout, t->name);
            printf(", \"type\": ");
            cli_json_str(stdout, t->type);
            printf(", \"encoding\": \"%s\", \"count\": %" PRIu64 ", \"rate_hz\": %.9g, \"start_ns\": %" PRId64
                   ", \"end_ns\": %" PRId64 ", \"supported\": %s}",
                   t->encoding == SENSIM_ENC_ROS1 ? "ros1" : "cdr", t->count, rate, t->t_first_ns, t->t_last_ns,
                   k != SENSIM_MSG_UNKNOWN ? "true" : "false");
        } else {
            printf("  %-32s %-36s %10" PRIu64 " msgs", t->name, t->type, t->count);
            if (rate > 0)
                printf("  %10.6g Hz", rate);
            else
                printf("  %13s", "");
            if (t->count)
                printf("  %.3f..%.3f s", (t->t_first_ns - t0) / 1e9, (t->t_last_ns - t0) / 1e9);
            if (k == SENSIM_MSG_UNKNOWN)
                printf("  (not read by sensim)");
            printf("\n");
        }
    }
    if (json)
        printf("]}\n");
    sensim_bag_close(bag);
    return fflush(stdout) ? cli_fail("info", "cannot write the output") : CLI_OK;
}
