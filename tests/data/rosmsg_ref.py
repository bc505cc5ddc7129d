#!/usr/bin/python3
"""Reference payloads for tests/test_rosmsg.c, made without sensim's code.

  ros1 DIR     genpy (Debian's python3-*-msgs) serializes one message of each
               type sensim reads, every float64 field in order filled with
               v(i) = (i+1)*0.1 + 1e-3*i*i (the C test computes the same
               doubles), into DIR/<type>.ros1, and writes its type, md5sum
               and full definition text to DIR/<type>.def.
  rosbag2 DIR  the CDR payloads of the shared rosbag2 recordings, taken from
               the .db3 with sqlite3 and from the .mcap with a struct walk of
               its records, into DIR/{db3,mcap}_<topic basename>_<k>.cdr.
  cdr_be DIR   big-endian CDR (encapsulation 00 00) Imu and NavSatFix built
               field by field with struct, into DIR/<type>.cdrbe.
"""
import io
import os
import sqlite3
import struct
import sys


class Counter:
    def __init__(self):
        self.i = 0

    def __call__(self):
        i = self.i
        self.i += 1
        return (i + 1) * 0.1 + 1e-3 * i * i

    def many(self, n):
        return [self() for _ in range(n)]


STAMP = (1700000000, 123456789)


def header(h, frame, seq=42):
    h.seq = seq
    h.stamp.secs, h.stamp.nsecs = STAMP
    h.frame_id = frame


def ros1(out):
    from geometry_msgs.msg import PoseStamped, TransformStamped
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Image, Imu, MagneticField, NavSatFix, PointCloud2, PointField
    from tf2_msgs.msg import TFMessage

    def save(name, m):
        b = io.BytesIO()
        m.serialize(b)
        with open(os.path.join(out, name + '.ros1'), 'wb') as f:
            f.write(b.getvalue())
        # What rosbag stores in a connection header: md5sum and full text.
        with open(os.path.join(out, name + '.def'), 'w') as f:
            f.write(m._type + '\n' + m._md5sum + '\n' + m._full_text)

    v = Counter()
    m = Imu()
    header(m.header, 'imu_link')
    o = m.orientation
    o.x, o.y, o.z, o.w = v.many(4)
    m.orientation_covariance = v.many(9)
    a = m.angular_velocity
    a.x, a.y, a.z = v.many(3)
    m.angular_velocity_covariance = v.many(9)
    a = m.linear_acceleration
    a.x, a.y, a.z = v.many(3)
    m.linear_acceleration_covariance = v.many(9)
    save('imu', m)

    v = Counter()
    m = NavSatFix()
    header(m.header, 'gps')
    m.status.status = -1
    m.status.service = 0x0102
    m.latitude, m.longitude, m.altitude = v.many(3)
    m.position_covariance = v.many(9)
    m.position_covariance_type = 3
    save('navsatfix', m)

    v = Counter()
    m = MagneticField()
    header(m.header, 'mag')
    f = m.magnetic_field
    f.x, f.y, f.z = v.many(3)
    m.magnetic_field_covariance = v.many(9)
    save('magnetic_field', m)

    v = Counter()
    m = Odometry()
    header(m.header, 'odom')
    m.child_frame_id = 'base_link'
    p = m.pose.pose
    p.position.x, p.position.y, p.position.z = v.many(3)
    p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = v.many(4)
    m.pose.covariance = v.many(36)
    t = m.twist.twist
    t.linear.x, t.linear.y, t.linear.z = v.many(3)
    t.angular.x, t.angular.y, t.angular.z = v.many(3)
    m.twist.covariance = v.many(36)
    save('odometry', m)

    v = Counter()
    m = PoseStamped()
    header(m.header, 'map')
    p = m.pose
    p.position.x, p.position.y, p.position.z = v.many(3)
    p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = v.many(4)
    save('pose_stamped', m)

    def transform(m, v, frame, child, seq):
        header(m.header, frame, seq)
        m.child_frame_id = child
        t = m.transform
        t.translation.x, t.translation.y, t.translation.z = v.many(3)
        t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w = v.many(4)
        return m

    v = Counter()
    save('transform_stamped', transform(TransformStamped(), v, 'world', 'body', 42))
    v = Counter()
    m = TFMessage()
    m.transforms = [transform(TransformStamped(), v, 'world', 'body', 1),
                    transform(TransformStamped(), v, 'body', 'imu', 2),
                    transform(TransformStamped(), v, 'body', 'camera', 3)]
    save('tf', m)

    # Clouds: 2 rows of 5 points, fields out of order, mixed datatypes, a
    # padded row; point j: x = j/2, y = -j, z = j/4 + 1 (float32),
    # intensity = 1000 + j (uint16), ring = j % 16 (uint8), time = j * 1e-5
    # (float64), little- and big-endian.
    for name, order in (('pointcloud2', '<'), ('pointcloud2_be', '>')):
        m = PointCloud2()
        header(m.header, 'velodyne')
        m.height, m.width = 2, 5
        layout = [('time', 16, PointField.FLOAT64, 'd'), ('x', 0, PointField.FLOAT32, 'f'),
                  ('intensity', 12, PointField.UINT16, 'H'), ('y', 4, PointField.FLOAT32, 'f'),
                  ('ring', 14, PointField.UINT8, 'B'), ('z', 8, PointField.FLOAT32, 'f')]
        m.fields = [PointField(name=n, offset=off, datatype=dt, count=1) for n, off, dt, _ in layout]
        m.is_bigendian = order == '>'
        m.point_step = 24
        m.row_step = 24 * 5 + 8
        data = bytearray()
        for row in range(2):
            for col in range(5):
                j = row * 5 + col
                pt = bytearray(24)
                vals = {'x': j / 2, 'y': -j, 'z': j / 4 + 1, 'intensity': 1000 + j, 'ring': j % 16,
                        'time': j * 1e-5}
                for n, off, _, fmt in layout:
                    struct.pack_into(order + fmt, pt, off, vals[n])
                data += pt
            data += b'\xee' * 8
        m.data = bytes(data)
        m.is_dense = True
        save(name, m)

    m = Image()
    header(m.header, 'cam0')
    m.height, m.width = 3, 4
    m.encoding = 'mono16'
    m.is_bigendian = 0
    m.step = 8
    m.data = bytes(range(24))
    save('image', m)


def rosbag2(out, datadir):
    topics = {'/test/sensor_msgs/imu', '/test/sensor_msgs/nav_sat_fix', '/test/sensor_msgs/magnetic_field',
              '/test/sensor_msgs/point_cloud2', '/test/sensor_msgs/image', '/test/nav_msgs/odometry',
              '/test/geometry_msgs/pose_stamped', '/test/geometry_msgs/transform_stamped',
              '/test/tf2_msgs/tf_message'}

    def save(prefix, topic, k, data):
        with open(os.path.join(out, '%s_%s_%d.cdr' % (prefix, topic.rsplit('/', 1)[1], k)), 'wb') as f:
            f.write(data)

    db = os.path.join(datadir, 'test_bag_sqlite3', 'test_bag_sqlite3.db3')
    con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
    seen = {}
    for name, data in con.execute('SELECT topics.name, messages.data FROM messages JOIN topics '
                                  'ON messages.topic_id = topics.id ORDER BY messages.timestamp'):
        if name in topics:
            seen[name] = seen.get(name, 0) + 1
            save('db3', name, seen[name] - 1, data)
    con.close()

    # MCAP (mcap.dev/spec): magic, then records of opcode u8 + length u64;
    # Channel (0x04) maps ids to topics, Message (0x05) carries the payload,
    # Chunk (0x06) holds more records (this file's chunks are uncompressed).
    with open(os.path.join(datadir, 'test_bag_mcap', 'test_bag_mcap.mcap'), 'rb') as f:
        b = f.read()
    assert b[:8] == b'\x89MCAP0\r\n'
    channels, seen = {}, {}

    def walk(buf, pos, end):
        while pos + 9 <= end:
            op, ln = struct.unpack_from('<BQ', buf, pos)
            body = pos + 9
            if op == 0x04:
                cid, = struct.unpack_from('<H', buf, body)
                sid, tlen = struct.unpack_from('<HI', buf, body + 2)
                channels[cid] = buf[body + 8:body + 8 + tlen].decode()
            elif op == 0x05:
                cid, = struct.unpack_from('<H', buf, body)
                name = channels[cid]
                if name in topics:
                    seen[name] = seen.get(name, 0) + 1
                    save('mcap', name, seen[name] - 1, buf[body + 22:body + ln])
            elif op == 0x06:
                _, _, _, _, clen = struct.unpack_from('<QQQII', buf, body)
                comp = buf[body + 32:body + 32 + clen].decode()
                assert comp == '', comp
                rlen, = struct.unpack_from('<Q', buf, body + 32 + clen)
                start = body + 32 + clen + 8
                walk(buf, start, start + rlen)
            elif op == 0x0F:
                return
            pos = body + ln

    walk(b, 8, len(b))


def cdr_be(out):
    """Big-endian CDR: alignment counts from the byte after the 4-byte header."""

    class W:
        def __init__(self):
            self.b = bytearray(b'\x00\x00\x00\x00')

        def put(self, fmt, *vals):
            size = struct.calcsize('>' + fmt[-1])
            while (len(self.b) - 4) % size:
                self.b.append(0)
            self.b += struct.pack('>' + fmt, *vals)

        def string(self, s):
            self.put('I', len(s) + 1)
            self.b += s.encode() + b'\x00'

    v = Counter()
    w = W()
    w.put('i', 1700000000)
    w.put('I', 123456789)
    w.string('imu_be')
    w.put('4d', *v.many(4))
    w.put('9d', *v.many(9))
    w.put('3d', *v.many(3))
    w.put('9d', *v.many(9))
    w.put('3d', *v.many(3))
    w.put('9d', *v.many(9))
    with open(os.path.join(out, 'imu.cdrbe'), 'wb') as f:
        f.write(w.b)

    v = Counter()
    w = W()
    w.put('i', 1700000000)
    w.put('I', 123456789)
    w.string('gps_be')
    w.put('b', -1)
    w.put('H', 0x0102)
    w.put('3d', *v.many(3))
    w.put('9d', *v.many(9))
    w.put('B', 3)
    with open(os.path.join(out, 'navsatfix.cdrbe'), 'wb') as f:
        f.write(w.b)


if __name__ == '__main__':
    what, out = sys.argv[1], sys.argv[2]
    if what == 'ros1':
        ros1(out)
    elif what == 'rosbag2':
        rosbag2(out, sys.argv[3])
    elif what == 'cdr_be':
        cdr_be(out)
    else:
        sys.exit('unknown command ' + what)
