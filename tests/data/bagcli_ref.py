#!/usr/bin/python3
"""Recordings for tests/test_bagcli.c, written and read without sensim's
code: Debian's python3-rosbag and genpy message classes, NumPy noise.

  static BAG SECONDS RATE SEED
      A static IMU on /imu (sensor_msgs/Imu, frame imu_link): gyro and
      accelerometer noise with known white noise N, bias instability B and
      rate random walk K per instrument (the values below), header stamps
      t0 + k / RATE in whole ns, receive times 1.5 ms later.
  mixed BAG
      A short recording with every type sensim imports: /imu (out of stamp
      order by one swap and one duplicate stamp), /gps (NavSatFix), /mag,
      /odom, /tf (two transform pairs), /points (PointCloud2), /cam (mono8
      Image), /bgr (bgr8, padded rows), /depth (big-endian mono16) and
      /chatter (std_msgs/String), bz2-compressed chunks.
  gnss BAG SECONDS SEED
      A receiver standing still, 1 Hz NavSatFix on /gps: white Gaussian ENU
      errors (SIGMA_ENU metres) around LLA0, converted with the WGS84 radii
      of curvature.
  badmsg BAG
      Five Imu messages on /imu; the third (message 2) cut short by 8 bytes,
      written raw, so its last field runs past the end.
  diff A.bag B.bag TOPIC
      Compares an Imu topic of two bags message by message and prints one
      JSON line: counts, type, md5sum and definition of B, whether header
      stamps, frames, orientations and covariances are equal, and the mean
      and standard deviation of B - A per gyro and accelerometer axis.
  dump BAG OUT.json
      Every message of every topic: topic, type, md5sum, connection
      header, header stamp (ns), frame_id and values, as rosbag reads them.
"""
import json
import struct
import sys

import numpy as np

# Gyro (rad/s/sqrt(Hz), rad/s, rad/s^2/sqrt(Hz)) and accelerometer (m/s^2/
# sqrt(Hz), m/s^2, m/s^3/sqrt(Hz)) noise: white N, bias instability B (the
# IEEE flat Allan floor sqrt(2 ln2 / pi) B) and rate random walk K.
TRUTH = {'gyro': (1.0e-4, 1.0e-4, 2.5e-5), 'accel': (2.0e-4, 2.0e-4, 5.0e-5)}
T0_NS = 1700000000 * 10**9 + 250000000


def flicker_terms(B, dt, T):
    """First-order Gauss-Markov terms (tau, sigma) whose summed Allan variance
    is the flat floor 2 ln2/pi B^2 between 30 dt and T/4 (non-negative least
    squares on the closed-form GM Allan variance, log-spaced taus)."""
    from scipy.optimize import nnls
    taus = np.logspace(np.log10(3 * dt), np.log10(3 * T), 13)
    grid = np.logspace(np.log10(30 * dt), np.log10(T / 4), 60)

    def gm_avar(tc, tau):
        x = tau / tc
        return (1 / x**2) * (2 * x - 3 + 4 * np.exp(-x) - np.exp(-2 * x))

    A = np.array([[gm_avar(tc, t) for tc in taus] for t in grid])
    floor = 2 * np.log(2) / np.pi * B * B
    var, _ = nnls(A / floor, np.ones(len(grid)))
    return taus, np.sqrt(var)


def noise(n, dt, N, B, K, rng):
    from scipy.signal import lfilter
    x = N / np.sqrt(dt) * rng.standard_normal(n)
    x += np.cumsum(K * np.sqrt(dt) * rng.standard_normal(n))
    for tc, s in zip(*flicker_terms(B, dt, n * dt)):
        a = np.exp(-dt / tc)
        w = s * np.sqrt(1 - a * a) * rng.standard_normal(n)
        w[0] = s * rng.standard_normal()
        x += lfilter([1.0], [1.0, -a], w)
    return x


def static(path, seconds, rate, seed):
    import genpy
    import rosbag
    from sensor_msgs.msg import Imu
    n = int(round(seconds * rate))
    dt = 1.0 / rate
    rng = np.random.default_rng(seed)
    gyro = np.stack([noise(n, dt, *TRUTH['gyro'], rng) + b for b in (0.01, -0.02, 0.005)], 1)
    acc = np.stack([noise(n, dt, *TRUTH['accel'], rng) + b for b in (0.03, -0.01, 9.80665)], 1)
    step = int(round(1e9 / rate))
    with rosbag.Bag(path, 'w') as bag:
        m = Imu()
        m.header.frame_id = 'imu_link'
        m.orientation.w = 1.0
        m.orientation_covariance[0] = -1
        for k in range(n):
            ns = T0_NS + k * step
            m.header.seq = k
            m.header.stamp = genpy.Time(ns // 10**9, ns % 10**9)
            m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z = gyro[k]
            m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z = acc[k]
            r = ns + 1500000
            bag.write('/imu', m, genpy.Time(r // 10**9, r % 10**9))


def mixed(path):
    import genpy
    import rosbag
    from geometry_msgs.msg import TransformStamped
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Image, Imu, MagneticField, NavSatFix, PointCloud2, PointField
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage

    def stamp(ns):
        return genpy.Time(ns // 10**9, ns % 10**9)

    with rosbag.Bag(path, 'w', compression='bz2') as bag:
        # IMU at 100 Hz, 50 messages; message 10 arrives before 9 (swapped
        # stamps) and message 20 repeats the stamp of 19.
        stamps = [T0_NS + k * 10**7 for k in range(50)]
        stamps[9], stamps[10] = stamps[10], stamps[9]
        stamps[20] = stamps[19]
        for k, ns in enumerate(stamps):
            m = Imu()
            m.header.seq = k
            m.header.stamp = stamp(ns)
            m.header.frame_id = 'imu_link'
            m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w = 0.0, 0.0, np.sin(0.1), np.cos(0.1)
            m.angular_velocity.x = 0.001 * k
            m.angular_velocity.y = 0.002
            m.angular_velocity.z = -0.003
            m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z = 0.1, 0.2, 9.8 + 0.001 * k
            m.angular_velocity_covariance = [1e-6 if i % 4 == 0 else 0 for i in range(9)]
            bag.write('/imu', m, stamp(T0_NS + k * 10**7 + 2 * 10**6))
        for k in range(10):
            ns = T0_NS + k * 10**8
            g = NavSatFix()
            g.header.stamp = stamp(ns)
            g.header.frame_id = 'gps'
            g.status.status = 0 if k else -1
            g.status.service = 1
            g.latitude, g.longitude, g.altitude = 43.0 + 1e-6 * k, -89.0 - 1e-6 * k, 260.0 + 0.1 * k
            g.position_covariance = [0.25 * (k + 1) if i % 4 == 0 else 0 for i in range(9)]
            g.position_covariance_type = 2
            bag.write('/gps', g, stamp(ns + 10**6))
            mf = MagneticField()
            mf.header.stamp = stamp(ns)
            mf.header.frame_id = 'mag'
            mf.magnetic_field.x, mf.magnetic_field.y, mf.magnetic_field.z = 2e-5, 1e-6 * k, -4e-5
            bag.write('/mag', mf, stamp(ns + 10**6))
            o = Odometry()
            o.header.stamp = stamp(ns)
            o.header.frame_id = 'map'
            o.child_frame_id = 'base_link'
            # A circle of radius 2 m at 0.5 rad/s, heading along the track.
            th = 0.5 * k * 0.1
            o.pose.pose.position.x, o.pose.pose.position.y = 2 * np.cos(th), 2 * np.sin(th)
            yaw = th + np.pi / 2
            o.pose.pose.orientation.z, o.pose.pose.orientation.w = np.sin(yaw / 2), np.cos(yaw / 2)
            bag.write('/odom', o, stamp(ns + 10**6))
            tf = TFMessage()
            for parent, child, x in (('world', 'body', 1.0 * k), ('body', 'imu', 0.5)):
                t = TransformStamped()
                t.header.stamp = stamp(ns)
                t.header.frame_id = parent
                t.child_frame_id = child
                t.transform.translation.x = x
                t.transform.rotation.w = 1.0
                tf.transforms.append(t)
            bag.write('/tf', tf, stamp(ns + 10**6))
            pc = PointCloud2()
            pc.header.stamp = stamp(ns)
            pc.header.frame_id = 'velodyne'
            pc.height, pc.width = 1, 4
            pc.fields = [PointField('ring', 0, PointField.UINT16, 1), PointField('x', 4, PointField.FLOAT32, 1),
                         PointField('y', 8, PointField.FLOAT32, 1), PointField('z', 12, PointField.FLOAT32, 1),
                         PointField('intensity', 16, PointField.FLOAT32, 1),
                         PointField('time', 20, PointField.FLOAT32, 1)]
            pc.point_step, pc.row_step = 24, 96
            data = b''
            for j in range(4):
                x = float('nan') if (k == 3 and j == 2) else 1.0 + j
                data += struct.pack('<H2xfffff', j, x, 0.5 * j, -0.25 * k, 10.0 * j, 1e-4 * j)
            pc.data = data
            pc.is_dense = k != 3
            bag.write('/points', pc, stamp(ns + 10**6))
            im = Image()
            im.header.stamp = stamp(ns)
            im.header.frame_id = 'cam'
            im.height, im.width, im.encoding, im.step = 2, 3, 'mono8', 4
            im.data = bytes([k, 1, 2, 99, 3, 4, 5, 99])
            bag.write('/cam', im, stamp(ns + 10**6))
            bag.write('/chatter', String(data='hello %d' % k), stamp(ns + 10**6))
            # 2x2 bgr8 with a 2-byte row padding; 2x2 big-endian mono16.
            im = Image()
            im.header.stamp = stamp(ns)
            im.header.frame_id = 'cam'
            im.height, im.width, im.encoding, im.step = 2, 2, 'bgr8', 8
            im.data = bytes([10 + k, 20, 30, 40, 50, 60, 0, 0, 70, 80, 90, 100, 110, 120, 0, 0])
            bag.write('/bgr', im, stamp(ns + 10**6))
            im = Image()
            im.header.stamp = stamp(ns)
            im.header.frame_id = 'depth'
            im.height, im.width, im.encoding, im.step, im.is_bigendian = 2, 2, 'mono16', 4, 1
            im.data = struct.pack('>4H', 1000 + k, 2000, 3000, 65535)
            bag.write('/depth', im, stamp(ns + 10**6))


SIGMA_ENU = (1.2, 0.8, 2.0)
LLA0 = (43.0731, -89.4012, 260.0)


def gnss(path, seconds, seed):
    import genpy
    import rosbag
    from sensor_msgs.msg import NavSatFix
    rng = np.random.default_rng(seed)
    a, e2 = 6378137.0, 6.69437999014e-3
    phi = np.radians(LLA0[0])
    w = np.sqrt(1 - e2 * np.sin(phi)**2)
    rm, rn = a * (1 - e2) / w**3, a / w
    with rosbag.Bag(path, 'w') as bag:
        for k in range(int(seconds)):
            e, n, u = rng.standard_normal(3) * SIGMA_ENU
            m = NavSatFix()
            m.header.seq = k
            m.header.stamp = genpy.Time(1700000000 + k, 0)
            m.header.frame_id = 'gps'
            m.latitude = LLA0[0] + np.degrees(n / (rm + LLA0[2]))
            m.longitude = LLA0[1] + np.degrees(e / ((rn + LLA0[2]) * np.cos(phi)))
            m.altitude = LLA0[2] + u
            bag.write('/gps', m, m.header.stamp)


def badmsg(path):
    import io
    import genpy
    import rosbag
    from sensor_msgs.msg import Imu
    with rosbag.Bag(path, 'w') as bag:
        for k in range(5):
            m = Imu()
            m.header.seq = k
            m.header.stamp = genpy.Time(1700000000, k * 10**7)
            m.header.frame_id = 'imu_link'
            b = io.BytesIO()
            m.serialize(b)
            data = b.getvalue()[:-8] if k == 2 else b.getvalue()
            bag.write('/imu', (Imu._type, data, Imu._md5sum, Imu), m.header.stamp, raw=True)


def diff(a, b, topic):
    import rosbag

    def read(path):
        with rosbag.Bag(path) as bag:
            c = [c for c in bag._connections.values() if c.topic == topic][0]
            ok = c.header['message_definition'].decode() == rosbag.bag._get_message_type(c)._full_text
            msgs = [m for _, m, _ in bag.read_messages(topics=[topic])]
        return c, ok, msgs

    ca, _, ma = read(a)
    cb, okb, mb = read(b)
    n = min(len(ma), len(mb))
    w = np.array([[m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z] for m in mb[:n]]) - \
        np.array([[m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z] for m in ma[:n]])
    f = np.array([[m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z] for m in mb[:n]]) - \
        np.array([[m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z] for m in ma[:n]])
    res = {'count_a': len(ma), 'count_b': len(mb), 'type_b': cb.datatype, 'md5sum_b': cb.md5sum,
           'definition_b': okb,
           'stamps_equal': all(x.header.stamp == y.header.stamp for x, y in zip(ma, mb)),
           'frames_equal': all(x.header.frame_id == y.header.frame_id for x, y in zip(ma, mb)),
           'orientation_equal': all(x.orientation == y.orientation and
                                    list(x.orientation_covariance) == list(y.orientation_covariance) for x, y in
                                    zip(ma, mb)),
           'covariance_equal': all(list(x.angular_velocity_covariance) == list(y.angular_velocity_covariance) and
                                   list(x.linear_acceleration_covariance) == list(y.linear_acceleration_covariance)
                                   for x, y in zip(ma, mb)),
           'dw_mean': list(w.mean(0)), 'dw_std': list(w.std(0)), 'da_mean': list(f.mean(0)), 'da_std': list(f.std(0))}
    print(json.dumps(res))


def dump(path, out):
    import rosbag
    res = {}
    with rosbag.Bag(path) as bag:
        info = bag.get_type_and_topic_info()
        for topic, ti in info.topics.items():
            res[topic] = {'type': ti.msg_type, 'count': ti.message_count, 'msgs': []}
        for c in bag._connections.values():
            res[c.topic]['md5sum'] = c.md5sum
            res[c.topic]['definition_ok'] = c.header['message_definition'].decode() == \
                rosbag.bag._get_message_type(c)._full_text
        for topic, m, t in bag.read_messages():
            e = {'recv_ns': t.to_nsec()}
            if hasattr(m, 'header'):
                e['stamp_ns'] = m.header.stamp.to_nsec()
                e['frame_id'] = m.header.frame_id
            if m._type == 'sensor_msgs/Imu':
                e['w'] = [m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z]
                e['a'] = [m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z]
                e['q'] = [m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w]
                e['wcov'] = list(m.angular_velocity_covariance)
            elif m._type == 'sensor_msgs/NavSatFix':
                e['lla'] = [m.latitude, m.longitude, m.altitude]
                e['status'] = m.status.status
                e['cov'] = list(m.position_covariance)
                e['cov_type'] = m.position_covariance_type
            elif m._type == 'sensor_msgs/PointCloud2':
                e['width'] = m.width
                e['fields'] = [f.name for f in m.fields]
                pts = []
                for j in range(m.width):
                    off = {f.name: f.offset for f in m.fields}
                    pts.append([struct.unpack_from('<f', m.data, j * m.point_step + off[c])[0]
                                for c in ('x', 'y', 'z', 'intensity')])
                e['points'] = pts
            elif m._type == 'sensor_msgs/Image':
                e['encoding'] = m.encoding
                e['size'] = [m.height, m.width, m.step, m.is_bigendian]
                e['data'] = list(bytearray(m.data))
            elif m._type == 'nav_msgs/Odometry':
                p = m.pose.pose.position
                e['p'] = [p.x, p.y, p.z]
                e['child'] = m.child_frame_id
            res[topic]['msgs'].append(e)
    with open(out, 'w') as f:
        json.dump(res, f)


def imumag(path, n):
    """Checks an exported IMU + magnetometer bag (test_bagcli.c's
    import_imu_and_magnetometer): n messages on each of /imu/data and
    /imu/mag, the same header stamps T0 + 10 ms i, their own frames, the
    values the test wrote."""
    import rosbag
    t0 = 1700000000 * 10**9
    got = {'/imu/data': [], '/imu/mag': []}
    with rosbag.Bag(path) as bag:
        types = {t: ti.msg_type for t, ti in bag.get_type_and_topic_info().topics.items()}
        assert types == {'/imu/data': 'sensor_msgs/Imu', '/imu/mag': 'sensor_msgs/MagneticField'}, types
        for topic, m, t in bag.read_messages():
            got[topic].append(m)
    for topic, frame in (('/imu/data', 'imu_link'), ('/imu/mag', 'mag_link')):
        msgs = got[topic]
        assert len(msgs) == n, (topic, len(msgs))
        for i, m in enumerate(msgs):
            assert m.header.stamp.to_nsec() == t0 + 10**7 * i, (topic, i, m.header.stamp.to_nsec())
            assert m.header.frame_id == frame, (topic, i, m.header.frame_id)
            if topic == '/imu/data':
                assert m.angular_velocity.x == i and m.linear_acceleration.z == 9.81, (i, m)
            else:
                f = m.magnetic_field
                assert (f.x, f.y, f.z) == (2e-5, i * 1e-9, 0.0), (i, f)
                assert m.magnetic_field_covariance[0] == 1e-12, (i, m.magnetic_field_covariance)


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'static':
        static(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
    elif cmd == 'mixed':
        mixed(sys.argv[2])
    elif cmd == 'gnss':
        gnss(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))
    elif cmd == 'badmsg':
        badmsg(sys.argv[2])
    elif cmd == 'diff':
        diff(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == 'dump':
        dump(sys.argv[2], sys.argv[3])
    elif cmd == 'imumag':
        imumag(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit('unknown command ' + cmd)
