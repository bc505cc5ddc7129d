"""Reading recorded bags (sensim/bag.h): ROS 1 bags, rosbag2 .db3 and
directories, MCAP. Payloads come out serialized (bytes)."""
from collections import namedtuple

import numpy as np

from ._core import check, check_ptr, cstr, ffi, lib, text

Topic = namedtuple("Topic", "name type md5sum definition encoding count t_first_ns t_last_ns")
Message = namedtuple("Message", "topic recv_ns index data")

_FORMATS = {lib.SENSIM_BAG_ROS1: "ros1", lib.SENSIM_BAG_DB3: "db3", lib.SENSIM_BAG_MCAP: "mcap"}


class Bag:
    """``with sensim.Bag("run.bag") as b: for m in b.messages(["/imu"]): ...``"""

    def __init__(self, path):
        self.path = str(path)
        self._p = ffi.gc(check_ptr(lib.sensim_bag_open(cstr(path))), lib.sensim_bag_close)
        self.format = _FORMATS[lib.sensim_bag_get_format(self._p)]
        self.topics = []
        for i in range(lib.sensim_bag_ntopics(self._p)):
            t = lib.sensim_bag_topic_at(self._p, i)
            self.topics.append(Topic(text(t.name), text(t.type), text(t.md5sum), text(t.definition),
                                     "ros1" if t.encoding == lib.SENSIM_ENC_ROS1 else "cdr", int(t.count),
                                     int(t.t_first_ns), int(t.t_last_ns)))

    def close(self):
        if self._p is not None:
            ffi.release(self._p)  # runs sensim_bag_close now
            self._p = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def topic(self, name):
        i = ffi.new("size_t *")
        check(lib.sensim_bag_find_topic(self._p, cstr(name), i))
        return self.topics[i[0]]

    def messages(self, topics=None):
        """Messages in receive-time order (all topics, or those named)."""
        idx = []
        for name in topics or []:
            i = ffi.new("size_t *")
            check(lib.sensim_bag_find_topic(self._p, cstr(name), i))
            idx.append(i[0])
        sel = ffi.new("size_t[]", max(1, len(idx)))
        for k, i in enumerate(idx):
            sel[k] = i
        check(lib.sensim_bag_select(self._p, sel, len(idx)))
        m = ffi.new("sensim_bag_msg *")
        while True:
            r = lib.sensim_bag_next(self._p, m)
            if r == 0:
                return
            if r < 0:
                from ._core import error
                raise error()
            yield Message(self.topics[m.topic].name, int(m.recv_ns), int(m.index), bytes(ffi.buffer(m.data, m.size)))

    def _decode(self, topic, ctype, fn, fields):
        t = self.topic(topic)
        enc = lib.SENSIM_ENC_ROS1 if t.encoding == "ros1" else lib.SENSIM_ENC_CDR
        msg = ffi.new(ctype + " *")
        rows = {k: [] for k in ("stamp_ns", "recv_ns") + tuple(fields)}
        for m in self.messages([topic]):
            st = fn(enc, m.data, len(m.data), msg)
            if st != lib.SENSIM_OK:
                from ._core import error
                e = error(st)
                raise type(e)(e.status, "%s: topic '%s': message %d: %s" % (self.path, topic, m.index, e.message))
            rows["stamp_ns"].append(msg.header.stamp_ns)
            rows["recv_ns"].append(m.recv_ns)
            for k, n in fields.items():
                v = getattr(msg, k)
                rows[k].append(list(v) if n > 1 else v)
        order = np.argsort(np.array(rows["stamp_ns"], dtype=np.int64), kind="stable")
        out = {"t": np.array(rows["stamp_ns"], dtype=np.int64)[order] * 1e-9}
        for k, v in rows.items():
            a = np.array(v, dtype=np.int64 if k.endswith("_ns") else np.float64)
            out[k] = a[order] if len(a) else a.reshape((0,) + ((fields[k],) if fields.get(k, 1) > 1 else ()))
        return out

    def imu(self, topic):
        """A sensor_msgs/Imu topic as arrays, in header-stamp order (as
        `sensim import` and `sensim allan --topic` read it): t (s, the header
        stamp), stamp_ns, recv_ns, angular_velocity [n, 3], linear_acceleration
        [n, 3], orientation [n, 4] (x, y, z, w)."""
        return self._decode(topic, "sensim_msg_imu", lib.sensim_msg_decode_imu,
                            {"angular_velocity": 3, "linear_acceleration": 3, "orientation": 4})

    def navsatfix(self, topic):
        """A sensor_msgs/NavSatFix topic as arrays: t, latitude, longitude,
        altitude, position_covariance [n, 9], status."""
        return self._decode(topic, "sensim_msg_navsatfix", lib.sensim_msg_decode_navsatfix,
                            {"latitude": 1, "longitude": 1, "altitude": 1, "position_covariance": 9, "status": 1})

    def stamps(self, topic):
        """Receive times (ns) of a topic's messages as an int64 array."""
        return np.array([m.recv_ns for m in self.messages([topic])], dtype=np.int64)
