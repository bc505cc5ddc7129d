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

    def stamps(self, topic):
        """Receive times (ns) of a topic's messages as an int64 array."""
        return np.array([m.recv_ns for m in self.messages([topic])], dtype=np.int64)
