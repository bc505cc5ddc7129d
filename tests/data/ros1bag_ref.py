#!/usr/bin/python3
"""ROS 1 bags written and read by Debian's python3-rosbag, for test_bag_ros1.c.

  ros1bag_ref.py write BAG COMPRESSION CHUNK_THRESHOLD ORDER EXPECT
      Writes BAG with rosbag (COMPRESSION none|bz2|lz4; ORDER 'ordered' or
      'shuffled': stamps written out of order within and across chunks;
      'conflict': also a Float64 connection on the String topic) and
      EXPECT, the reference a reader must reproduce:
        T name type md5sum count t_first_ns t_last_ns definition_hex
        M topic recv_ns payload_hex        (receive-time order, ties in write order)
  ros1bag_ref.py read BAG EXPECT
      Reads BAG (written by sensim) with rosbag, deserializing every message
      with the bag's own definitions, and compares with EXPECT (same format;
      M lines in any order within equal stamps). Exit 0 when equal.
"""
import io
import random
import struct
import sys

import rosbag
import genpy
from sensor_msgs.msg import Imu
from std_msgs.msg import String, Float64


def ns(t):
    return t.secs * 1000000000 + t.nsecs


def write(path, compression, threshold, order, expect):
    rng = random.Random(20261126)
    t0 = 1700000000 * 1000000000 + 123456789
    msgs = []  # (topic, recv_ns, msg, connection_header or None)
    for i in range(1500):
        t = t0 + i * 5000000  # 200 Hz
        m = Imu()
        m.header.seq = i
        m.header.stamp = genpy.Time(nsecs=t - 1000)
        m.header.frame_id = "imu_link"
        m.orientation.w = 1.0
        m.angular_velocity.x = rng.gauss(0, 0.01)
        m.angular_velocity.y = rng.gauss(0, 0.01)
        m.angular_velocity.z = rng.gauss(0, 0.01)
        m.linear_acceleration.z = 9.81 + rng.gauss(0, 0.05)
        m.orientation_covariance[0] = -1.0
        msgs.append(("/imu", t, m, None))
        if i % 10 == 0:
            # Two connections on one topic (as `rosbag record` makes for two
            # publishers): rosbag.Bag.write keeps one connection a topic, so
            # the second is written as /statuX and renamed in the file below.
            who = "/status" if i % 20 == 0 else "/statuX"
            s = String(data="status %d from %s" % (i, who))
            msgs.append((who, t, s, None))  # same stamp as an Imu: a tie
        if i % 7 == 3:
            msgs.append(("/temp", t + 1234567, Float64(data=20.0 + 0.001 * i), None))
    if order == "conflict":
        # A second publisher on /status with another type: readers must refuse.
        msgs.append(("/statuY", t0, Float64(data=1.0), None))
    if order == "shuffled":
        blocks = [msgs[k:k + 60] for k in range(0, len(msgs), 60)]
        rng.shuffle(blocks)
        for b in blocks:
            for _ in range(6):
                a, c = rng.randrange(len(b)), rng.randrange(len(b))
                b[a], b[c] = b[c], b[a]
        msgs = [m for b in blocks for m in b]
    bag = rosbag.Bag(path, "w", compression=compression, chunk_threshold=threshold)
    out = []
    for k, (topic, t, m, _) in enumerate(msgs):
        stamp = genpy.Time(nsecs=t)
        bag.write(topic, m, stamp)
        buf = io.BytesIO()
        m.serialize(buf)
        out.append((t, k, "/status" if topic.startswith("/statu") else topic, buf.getvalue()))
    bag.close()
    # The rename, in the index section's connection records only (what
    # readers use; the copies inside chunks may be compressed).
    with open(path, "rb") as f:
        data = f.read()
    p = data.index(b"index_pos=") + 10
    index_pos = struct.unpack("<Q", data[p:p + 8])[0]
    index = data[index_pos:]
    for alias in (b"/statuX", b"/statuY"):
        index = index.replace(b"topic=" + alias, b"topic=/status")
    with open(path, "wb") as f:
        f.write(data[:index_pos] + index)
    out.sort(key=lambda x: (x[0], x[1]))
    if order == "conflict":
        return
    conns = rosbag.Bag(path)._connections.values()
    assert sum(c.topic == "/status" for c in conns) == 2, "expected two connections on /status"
    types = {"/imu": Imu, "/status": String, "/temp": Float64}
    with open(expect, "w") as f:
        for name in ("/imu", "/status", "/temp"):
            ts = [x[0] for x in out if x[2] == name]
            ty = types[name]
            f.write("T %s %s %s %d %d %d %s\n" % (name, ty._type, ty._md5sum, len(ts), min(ts), max(ts),
                                                 ty._full_text.encode().hex()))
        for t, _, topic, data in out:
            f.write("M %s %d %s\n" % (topic, t, data.hex()))


def read(path, expect):
    want_t, want_m = {}, []
    with open(expect) as f:
        for line in f:
            p = line.split()
            if p[0] == "T":
                want_t[p[1]] = (p[2], p[3], int(p[4]))
            else:
                want_m.append((int(p[2]), p[1], p[3]))
    bag = rosbag.Bag(path)
    info = bag.get_type_and_topic_info()
    got_t = {k: (v.msg_type, info.msg_types[v.msg_type], v.message_count) for k, v in info.topics.items()}
    if got_t != want_t:
        print("topics differ:", got_t, want_t)
        return 1
    got_m = []
    for topic, msg, t in bag.read_messages():
        buf = io.BytesIO()
        msg.serialize(buf)  # deserialized with the bag's definition, serialized again
        got_m.append((ns(t), topic, buf.getvalue().hex()))
    stamps = [m[0] for m in got_m]
    if stamps != sorted(stamps):
        print("rosbag does not read the messages in time order")
        return 1
    if sorted(got_m) != sorted(want_m):
        print("messages differ: %d read, %d expected" % (len(got_m), len(want_m)))
        for a, b in zip(sorted(got_m), sorted(want_m)):
            if a != b:
                print("first difference:", a, b)
                break
        return 1
    bag.close()
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6])
    else:
        sys.exit(read(sys.argv[2], sys.argv[3]))
