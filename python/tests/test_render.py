"""Rendering a scan and a frame into arrays against `sensim render` on the
same scene along a static trajectory (identical bits), and reading logs and
recordings through the library."""
import json
import os

import numpy as np
import pytest

import sensim
from conftest import SRCDIR, read, run


@pytest.fixture(scope="module")
def static_gt(tmp_path_factory):
    d = tmp_path_factory.mktemp("render")
    run("trajectory", "--shape", "static", "--duration", 1, "--rate", 100, "--start", "3,-2,0.5", "-o", d / "gt.h5")
    return d / "gt.h5"


def _pose(gt):
    return read(gt, "/ground_truth/position")[0], read(gt, "/ground_truth/orientation")[0]


@pytest.mark.parametrize("backend", ["embree", "twin"])
def test_lidar_scan_matches_cli(static_gt, tmp_path, backend):
    scene_path = SRCDIR + "/data/scenes/walls.yaml"
    run("render", scene_path, "--trajectory", static_gt, "--sensor", "lidar", "-o", tmp_path / "r.h5",
        "--count", 2, "--backend", backend)
    out = tmp_path / "r.h5"
    so = read(out, "/sensors/lidar/scan_offset")
    ts = read(out, "/sensors/lidar/t_sample")
    scene = sensim.Scene(scene_path)
    lid = sensim.RenderLidar.from_scene(scene_path, "lidar", backend=backend)
    for k in range(2):
        s = lid.scan(scene, _pose(static_gt), t_start=ts[k], scan=k)
        a, b = int(so[k]), int(so[k + 1])
        assert len(s["xyzi"]) == b - a > 1000
        for key, dset in (("xyzi", "points"), ("range", "range"), ("channel", "channel"), ("object", "object"),
                          ("time_offset", "time_offset")):
            assert np.array_equal(s[key], read(out, "/sensors/lidar/" + dset)[a:b]), key
    assert scene.prepare(backend) == (backend, "")
    with pytest.raises(sensim.SensimError, match="unknown backend 'optix'"):
        sensim.RenderLidar.from_scene(scene_path, "lidar", backend="optix")
    with pytest.raises(sensim.SensimError, match="nosuch"):
        sensim.RenderLidar.from_scene(scene_path, "nosuch")
    with pytest.raises(sensim.SensimError, match=r"missing\.yaml"):
        sensim.Scene(str(tmp_path / "missing.yaml"))


def test_cuda_backend_without_a_driver(monkeypatch):
    """No GPU driver here (SENSIM_LIBCUDA names a file that is not there):
    backend="cuda" raises the library's message; "auto" falls back."""
    monkeypatch.setenv("SENSIM_LIBCUDA", "/nonexistent/libcuda.so.1")
    scene_path = SRCDIR + "/data/scenes/walls.yaml"
    scene = sensim.Scene(scene_path)
    lid = sensim.RenderLidar.from_scene(scene_path, "lidar", backend="cuda")
    with pytest.raises(sensim.SensimError, match="libcuda.so.1"):
        lid.scan(scene)
    used, note = scene.prepare("auto")
    assert used == "embree" and "libcuda.so.1" in note
    auto = sensim.RenderLidar.from_scene(scene_path, "lidar", backend="auto").scan(scene)
    ref = sensim.RenderLidar.from_scene(scene_path, "lidar").scan(scene)
    assert np.array_equal(auto["xyzi"], ref["xyzi"])


def test_lidar_scan_with_noise():
    scene_path = SRCDIR + "/data/scenes/walls.yaml"
    scene = sensim.Scene(scene_path)
    lid = sensim.RenderLidar.from_scene(scene_path, "lidar")
    clean = lid.scan(scene)
    rig = sensim.Lidar.from_yaml("""seed: 1
sensors:
  - name: lidar
    type: lidar
    noise: { range_sigma_base: 0.05 }
    dropout: { dropoff_general_rate: 0.2 }
""")
    noisy = lid.scan(scene, noise=rig, seed=3)
    # the same as the array noise on the clean scan, compacted
    ref = rig.apply(clean["xyzi"], clean["range"], clean["azimuth"], clean["elevation"], seed=3)
    assert np.array_equal(noisy["xyzi"], ref.points[ref.keep])
    d = noisy["range"] - clean["range"][ref.keep]
    assert abs(d.std() - 0.05) < 5 * 0.05 / np.sqrt(2 * len(d))


@pytest.mark.parametrize("backend", ["embree", "twin"])
def test_camera_frame_matches_cli(static_gt, tmp_path, backend):
    scene_path = SRCDIR + "/data/scenes/fog.yaml"
    run("render", scene_path, "--trajectory", static_gt, "--sensor", "cam", "-o", tmp_path / "c.h5", "--count", 1,
        "--float", "--backend", backend)
    ts = read(tmp_path / "c.h5", "/sensors/cam/t_sample")
    cam = sensim.RenderCamera.from_scene(scene_path, "cam", backend=backend)
    img = cam.render(sensim.Scene(scene_path), _pose(static_gt), t=ts[0], frame=0)
    assert img.shape == (240, 320, 3) and img.dtype == np.float32
    assert np.array_equal(img, read(tmp_path / "c.h5", "/sensors/cam/image")[0])
    assert sensim.to_srgb8(img).dtype == np.uint8
    with pytest.raises(ValueError, match="out: expected"):
        cam.render(sensim.Scene(scene_path), out=np.empty((240, 320, 3)))


def test_log_reader(static_gt):
    log = sensim.Log(str(static_gt))
    assert "/ground_truth/t" in log and "/nothing" not in log
    assert np.array_equal(log.read("/ground_truth/position"), read(static_gt, "/ground_truth/position"))
    with pytest.raises(sensim.NotFoundError, match="/ground_truth/nothing"):
        log.read("/ground_truth/nothing")


def test_bag_reader(tmp_path):
    """A ROS 1 bag written by Debian's python3-rosbag, read back."""
    rosbag = pytest.importorskip("rosbag")
    from std_msgs.msg import Float64, String
    import rospy
    with rosbag.Bag(str(tmp_path / "b.bag"), "w") as b:
        for i in range(5):
            b.write("/x", Float64(data=i * 0.5), t=rospy.Time(10, i * 1000))
            b.write("/s", String(data="m%d" % i), t=rospy.Time(10, i * 1000 + 500))
    with sensim.Bag(tmp_path / "b.bag") as bag:
        assert bag.format == "ros1"
        assert {t.name: (t.type, t.count) for t in bag.topics} == {"/x": ("std_msgs/Float64", 5),
                                                                  "/s": ("std_msgs/String", 5)}
        msgs = list(bag.messages(["/x"]))
        assert [m.recv_ns for m in msgs] == [10 * 10 ** 9 + i * 1000 for i in range(5)]
        assert [np.frombuffer(m.data, "<f8")[0] for m in msgs] == [i * 0.5 for i in range(5)]
        assert len(list(bag.messages())) == 10
        with pytest.raises(sensim.NotFoundError, match="/nosuch"):
            bag.topic("/nosuch")
    (tmp_path / "junk.bag").write_bytes(b"not a bag at all")
    with pytest.raises(sensim.SensimError, match=r"junk\.bag"):
        sensim.Bag(tmp_path / "junk.bag")


def test_bag_imu_against_cli(tmp_path):
    """sensor_msgs/Imu from a bag (python3-rosbag) as arrays: the values
    written, and the Allan deviation `sensim allan --topic` computes."""
    rosbag = pytest.importorskip("rosbag")
    import rospy
    from sensor_msgs.msg import Imu
    rng = np.random.default_rng(8)
    n = 4000
    w = rng.normal(0, 0.01, (n, 3))
    a = rng.normal(0, 0.1, (n, 3)) + [0, 0, 9.8]
    with rosbag.Bag(str(tmp_path / "imu.bag"), "w") as b:
        for i in range(n):
            m = Imu()
            m.header.stamp = rospy.Time(100, 0) + rospy.Duration(0, i * 5000000)
            m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z = w[i]
            m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z = a[i]
            b.write("/imu", m, t=m.header.stamp + rospy.Duration(0, 1000))
    d = sensim.Bag(tmp_path / "imu.bag").imu("/imu")
    assert np.array_equal(d["angular_velocity"], w) and np.array_equal(d["linear_acceleration"], a)
    assert np.allclose(np.diff(d["t"]), 0.005)
    cli = json.loads(run("allan", "--input", tmp_path / "imu.bag", "--topic", "/imu", "--json").stdout)
    r = sensim.allan(d["angular_velocity"], rate=200)
    for ax, c in enumerate(cli["axes"]):
        assert [p["dev"] for p in c["points"]] == [float("%.10g" % v) for v in r.dev[ax]]


def test_datasheet_and_units():
    q = sensim.quantity("0.66 deg/sqrt(h)", "rad/s/sqrt(Hz)")
    assert q == pytest.approx(0.66 * np.pi / 180 / 60, rel=1e-15)
    v, dim = sensim.quantity("25 ug/sqrt(Hz)")
    assert v == pytest.approx(25e-6 * 9.80665, rel=1e-15)
    assert sensim.from_si(q, "deg/sqrt(h)") == pytest.approx(0.66, rel=1e-15)
    with pytest.raises(sensim.SensimError, match="deg/h"):
        sensim.quantity("14.5 deg/h", "rad/s/sqrt(Hz)")
    d = sensim.datasheet({"arw": "0.66 deg/sqrt(h)", "gyro_bias_instability": "14.5 deg/h", "rate": 200})
    assert d["model"]["gyro"]["noise_density"] == q
    assert d["model"]["gyro"]["bias_instability"] == pytest.approx(
        sensim.quantity("14.5 deg/h", "rad/s") / 0.664, rel=1e-12)
    imu = sensim.Imu.from_yaml(d["rig_yaml"])
    assert imu.rate_hz == 200 and imu.instruments == ("gyro",)
    with pytest.raises(sensim.InvalidError, match="arw"):
        sensim.datasheet({"arw": "3 m"})


def test_datasheet_is_the_library_call_the_cli_makes(tmp_path):
    """sensim.datasheet() is the library's conversion: the same JSON numbers
    as `sensim datasheet --json` bit for bit, the same rig file as -o, and
    no subprocess (it works with no sensim program on PATH)."""
    figs = {"arw": "0.66 deg/sqrt(h)", "gyro_noise_density": "0.0035 °/s/√Hz", "vrw": "0.11 m/s/sqrt(h)",
            "gyro_bias_instability": "14.5 deg/h", "accel_random_walk": "3e-4 m/s^3/sqrt(Hz)", "rate": "400 Hz"}
    name = 'imu: #1 "q"'
    args = ["datasheet", "--json", "--name", name, "--seed", "7", "-o", tmp_path / "rig.yaml"]
    for k, v in figs.items():
        args += ["--" + k.replace("_", "-"), v]
    cli = json.loads(run(*args).stdout)
    env = dict(os.environ)
    os.environ["PATH"] = "/nonexistent"
    os.environ.pop("SENSIM_BIN", None)
    try:
        py = sensim.datasheet(figs, name=name, seed=7)
    finally:
        os.environ.clear()
        os.environ.update(env)
    with open(tmp_path / "rig.yaml") as f:
        assert py.pop("rig_yaml") == f.read()
    assert py == cli
    assert py["warnings"] and "differ" in py["warnings"][0]
    with pytest.raises(sensim.InvalidError, match="--vrw"):
        sensim.datasheet({"vrw": "0.11 deg/h"})
    with pytest.raises(KeyError, match="unknown figure 'arww'"):
        sensim.datasheet({"arww": "1"})
    assert "rig_yaml" not in sensim.datasheet({"arw": "0.66"})
