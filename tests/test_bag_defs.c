/* Known message types declared with no definition get the text and md5sum
 * other software expects: the ROS 1 md5sum and definition genpy computes,
 * and for MCAP the ros2msg schema rosbag2 writes (compared, comments and
 * blank lines aside, with the schema of the same type in the real recording
 * ../shared/data/rosbag2/test_bag_mcap, written by other software). */
#include <stdlib.h>
#include <string.h>

#include "sensim/bag.h"
#include "sensim/rosmsg.h"
#include "testutil.h"

/* The definition without comments, blank lines and trailing blanks. */
static char *strip(const char *def)
{
    char *out = malloc(strlen(def) + 2), *o = out;
    const char *p = def;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        size_t k = 0;
        while (k < n && p[k] != '#')
            k++;
        while (k > 0 && (p[k - 1] == ' ' || p[k - 1] == '\t' || p[k - 1] == '\r'))
            k--;
        if (k > 0) {
            memcpy(o, p, k);
            o += k;
            *o++ = '\n';
        }
        p += e ? n + 1 : n;
    }
    *o = '\0';
    return out;
}

static const sensim_bag_topic *topic_named(sensim_bag *bag, const char *name)
{
    size_t i;
    ck_assert_msg(sensim_bag_find_topic(bag, name, &i) == SENSIM_OK, "%s", sensim_last_error());
    return sensim_bag_topic_at(bag, i);
}

static void write_one(const char *path, sensim_bag_format fmt, const char *type)
{
    sensim_bag_writer *w = sensim_bag_writer_create(path, fmt, SENSIM_BAG_COMPRESS_NONE);
    ck_assert_msg(w != NULL, "%s", sensim_last_error());
    size_t t;
    ck_assert_msg(sensim_bag_writer_add_topic(w, "/imu", type, "", &t) == SENSIM_OK, "%s", sensim_last_error());
    sensim_msg_imu m;
    memset(&m, 0, sizeof m);
    m.orientation[3] = 1;
    strcpy(m.header.frame_id, "imu_link");
    sensim_msg_buf b = {0};
    ck_assert(sensim_msg_encode_imu(fmt == SENSIM_BAG_ROS1 ? SENSIM_ENC_ROS1 : SENSIM_ENC_CDR, &m, &b) ==
              SENSIM_OK);
    ck_assert(sensim_bag_writer_write(w, t, 1000, b.data, b.len) == SENSIM_OK);
    sensim_msg_buf_free(&b);
    ck_assert_msg(sensim_bag_writer_commit(w) == SENSIM_OK, "%s", sensim_last_error());
    sensim_bag_writer_close(w);
}

START_TEST(mcap_schema_matches_rosbag2)
{
    char *dir = tu_mkdtemp();
    char *path = tu_path(dir, "x.mcap");
    write_one(path, SENSIM_BAG_MCAP, "sensor_msgs/Imu"); /* ROS 1 spelling: written in ROS 2's */
    sensim_bag *ours = sensim_bag_open(path);
    ck_assert_msg(ours != NULL, "%s", sensim_last_error());
    char *ref_path = tu_src("../shared/data/rosbag2/test_bag_mcap/test_bag_mcap.mcap");
    sensim_bag *ref = sensim_bag_open(ref_path);
    ck_assert_msg(ref != NULL, "%s", sensim_last_error());
    const sensim_bag_topic *a = topic_named(ours, "/imu");
    const sensim_bag_topic *b = topic_named(ref, "/test/sensor_msgs/imu");
    ck_assert_str_eq(a->type, "sensor_msgs/msg/Imu");
    ck_assert_str_eq(a->type, b->type);
    char *sa = strip(a->definition), *sb = strip(b->definition);
    ck_assert_msg(strlen(sb) > 100, "reference schema too short: %s", sb);
    /* Same sections, possibly in another order: compare as sets of
     * sections split at the separator lines. */
    const char *sep = "================================================================================\n";
    size_t na = 0, nb = 0;
    for (const char *p = sa; (p = strstr(p, sep)); p += strlen(sep))
        na++;
    for (const char *p = sb; (p = strstr(p, sep)); p += strlen(sep))
        nb++;
    ck_assert_uint_eq(na, nb);
    for (char *s = strtok(sb, "="); s; s = strtok(NULL, "=")) {
        if (strspn(s, "\n") == strlen(s))
            continue;
        ck_assert_msg(strstr(sa, s) != NULL, "section of the reference schema missing from ours:\n%s\nours:\n%s", s,
                      sa);
    }
    free(sa);
    free(sb);
    sensim_bag_close(ours);
    sensim_bag_close(ref);
    free(ref_path);
    free(path);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(ros1_md5_and_spelling)
{
    char *dir = tu_mkdtemp();
    char *path = tu_path(dir, "x.bag");
    write_one(path, SENSIM_BAG_ROS1, "sensor_msgs/msg/Imu");
    sensim_bag *bag = sensim_bag_open(path);
    ck_assert_msg(bag != NULL, "%s", sensim_last_error());
    const sensim_bag_topic *t = topic_named(bag, "/imu");
    ck_assert_str_eq(t->type, "sensor_msgs/Imu");
    ck_assert_str_eq(t->md5sum, "6a62c6daae103f4ff57a132d6f95cec2"); /* genpy's Imu._md5sum */
    ck_assert(strstr(t->definition, "MSG: std_msgs/Header") != NULL);
    sensim_bag_close(bag);
    /* An unknown type without a definition is refused, naming it. */
    sensim_bag_writer *w = sensim_bag_writer_create(path, SENSIM_BAG_ROS1, SENSIM_BAG_COMPRESS_NONE);
    size_t k;
    ck_assert(sensim_bag_writer_add_topic(w, "/x", "my_msgs/Thing", "", &k) == SENSIM_EUNSUPPORTED);
    ck_assert(strstr(sensim_last_error(), "my_msgs/Thing") != NULL);
    sensim_bag_writer_close(w);
    free(path);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_bag_defs(void)
{
    Suite *s = suite_create("bag_defs");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, mcap_schema_matches_rosbag2);
    tcase_add_test(tc, ros1_md5_and_spelling);
    suite_add_tcase(s, tc);
    return s;
}
