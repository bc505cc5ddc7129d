#!/usr/bin/python3
"""Writes io/rosmsg_defs.h: the md5sum and full ROS 1 definition text (as
rosbag stores it in a connection's message_definition) of each message type
sensim reads, taken from Debian's genpy-generated python3-*-msgs packages,
and the ROS 2 (ros2msg) text derived from it.

A full definition is the message's own text, then each message it uses as
SEP + "MSG: type" + its text. Every message's text is written once, as a
macro of string literals (ROSMSG_<type>), and the definitions are
concatenated from them by the compiler: the same bytes as one literal each.
Where the ROS 2 text of a message differs (a Header or time field), its
unchanged runs of lines are macros too (ROSMSG_<type>_<k>), shared by the
ROS 1 and the ROS 2 forms (ROSMSG2_<type>). A run of lines that two
messages' texts share is one macro too (ROSMSG_shared_<k>).

Usage: /usr/bin/python3 scripts/rosmsg_defs.py > io/rosmsg_defs.h"""
import difflib

from geometry_msgs.msg import PoseStamped, TransformStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Image, Imu, MagneticField, NavSatFix, PointCloud2
from tf2_msgs.msg import TFMessage

# In the order of sensim_msg_kind (after SENSIM_MSG_UNKNOWN).
KINDS = [Imu, NavSatFix, MagneticField, PointCloud2, Image, Odometry, PoseStamped, TransformStamped,
         TFMessage]


SEP = '=' * 80 + '\n'
HEADER = 'std_msgs/Header'
ROS2_HEADER = 'builtin_interfaces/Time stamp\nstring frame_id\n'
ROS2_TIME = 'int32 sec\nuint32 nanosec\n'


def ros2_line(line):
    """A line of a ROS 1 message text in ROS 2 (ros2msg, as rosbag2's MCAP
    schemas hold it): Header spelled std_msgs/Header, time and duration as
    builtin_interfaces types. Returns (line, uses_time)."""
    words = line.split()
    if words and not line.lstrip().startswith('#'):
        if words[0] == 'Header':
            return line.replace('Header', HEADER, 1), False
        if words[0] in ('time', 'duration'):
            return line.replace(words[0], 'builtin_interfaces/' + words[0].capitalize(), 1), True
    return line, False


def parse(full):
    """[(type or None for the message's own text, text, trailing newlines)]:
    the sections of a ROS 1 full definition, each text without its "MSG:"
    line and without the newlines that end it (genpy ends the same text
    with none, one or two)."""
    out = []
    for i, sec in enumerate(full.split(SEP)):
        typ = None
        if i > 0:
            first, sec = sec.split('\n', 1)
            assert first.startswith('MSG: ')
            typ = first[len('MSG: '):]
        body = sec.rstrip('\n')
        out.append((typ, body, len(sec) - len(body)))
    return out


def ros2_sections(sections):
    """The same sections in ROS 2: std_msgs/Header with a builtin_interfaces/Time
    stamp and no seq, and builtin_interfaces/Time appended where used."""
    out, uses_time = [], False
    for typ, body, nl in sections:
        if typ == HEADER:
            out.append((typ, ROS2_HEADER.rstrip('\n'), 1))
            uses_time = True
            continue
        lines = []
        for line in body.splitlines(keepends=True):
            line, t = ros2_line(line)
            uses_time |= t
            lines.append(line)
        out.append((typ, ''.join(lines), nl))
    if uses_time:
        out[-1] = out[-1][:2] + (max(out[-1][2], 1),)
        out.append(('builtin_interfaces/Time', ROS2_TIME.rstrip('\n'), 1))
    return out


def c_string(text, indent='    ', cont=''):
    out = []
    for line in text.splitlines(keepends=True):
        s = line.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n')
        out.append('%s"%s"%s' % (indent, s, cont))
    return '\n'.join(out) if out else indent + '""' + cont


macros = {}  # macro name -> C text (string literals and macro names)
texts = {}   # (type, ROS 2?) -> the text the macro holds


def define(name, c_text):
    assert macros.get(name, c_text) == c_text, 'two texts for ' + name
    macros[name] = c_text
    return name


def text_macros(typ, ros1, ros2):
    """The macros of a message's ROS 1 and ROS 2 texts: one when they are the
    same, else the unchanged runs of lines as ROSMSG_<type>_<k> and both forms
    made of them."""
    base = typ.replace('/', '_')
    for key, text in (((typ, False), ros1), ((typ, True), ros2)):
        assert texts.setdefault(key, text) == text, 'two texts of ' + typ
    if ros1 == ros2:
        m = define('ROSMSG_' + base, c_string(ros1))
        return m, m
    if typ == HEADER:
        return define('ROSMSG_' + base, c_string(ros1)), define('ROSMSG2_' + base, c_string(ros2))
    l1, l2 = ros1.splitlines(keepends=True), ros2.splitlines(keepends=True)
    assert len(l1) == len(l2)
    parts1, parts2, run = [], [], []

    def flush():
        if run:
            name = define('ROSMSG_%s_%d' % (base, len(parts1) + 1), c_string(''.join(run)))
            parts1.append('    ' + name)
            parts2.append('    ' + name)
            run.clear()

    for a, b in zip(l1, l2):
        if a == b:
            run.append(a)
        else:
            flush()
            parts1.append(c_string(a))
            parts2.append(c_string(b))
    flush()
    return define('ROSMSG_' + base, '\n'.join(parts1)), define('ROSMSG2_' + base, '\n'.join(parts2))


def definition(typ, full):
    """The C text of both definitions of one kind."""
    s1 = parse(full)
    s2 = ros2_sections(s1)
    out = []
    for sections in (s1, s2):
        words = []
        for i, (t, body, nl) in enumerate(sections):
            name = t or typ
            r1 = next((b for tt, b, _ in s1 if (tt or typ) == name), None)
            r2 = next((b for tt, b, _ in s2 if (tt or typ) == name), None)
            m1, m2 = text_macros(name, r2 if r1 is None else r1, r2)
            if i > 0:
                words.append('ROSMSG_SEP "MSG: %s\\n"' % name)
            words.append(m2 if sections is s2 else m1)
            if nl:
                words.append('"%s"' % ('\\n' * nl))
        out.append('    ' + ' '.join(words))
    return out


def share_runs(min_lines=4):
    """Runs of at least min_lines lines that two message texts hold alike
    (the 6x6 covariance comment of PoseWithCovariance and
    TwistWithCovariance) become one macro ROSMSG_shared_<k> that both name,
    defined before its first user."""
    k = 0
    while True:
        names = list(macros)
        best = None
        for i, a in enumerate(names):
            la = macros[a].split('\n')
            for b in names[i + 1:]:
                lb = macros[b].split('\n')
                m = difflib.SequenceMatcher(None, la, lb, autojunk=False).find_longest_match(
                    0, len(la), 0, len(lb))
                run = la[m.a:m.a + m.size]
                if m.size >= min_lines and all(line.lstrip().startswith('"') for line in run) and \
                        (best is None or m.size > best[0]):
                    best = (m.size, a, b, run)
        if best is None:
            return
        k += 1
        _, a, b, run = best
        name = 'ROSMSG_shared_%d' % k
        for user in (a, b):
            lines = macros[user].split('\n')
            for i in range(len(lines) - len(run) + 1):
                if lines[i:i + len(run)] == run:
                    lines[i:i + len(run)] = ['    ' + name]
                    break
            macros[user] = '\n'.join(lines)
        shared = {name: '\n'.join(run)}
        pos = names.index(a)
        items = list(macros.items())
        macros.clear()
        macros.update(items[:pos])
        macros.update(shared)
        macros.update(items[pos:])


rows = []
for c in KINDS:
    pkg, name = c._type.split('/')
    rows.append('    {"%s", "%s/msg/%s", "%s",' % (c._type, pkg, name, c._md5sum))
    d1, d2 = definition(c._type, c._full_text)
    rows.append(d1 + ',')
    rows.append(d2 + '},')

share_runs()

print('/* Generated by scripts/rosmsg_defs.py from Debian\'s python3-sensor-msgs,')
print(' * -geometry-msgs, -nav-msgs and -tf2-msgs; do not edit. md5sum and full')
print(' * ROS 1 definition text of each sensim_msg_kind, in enum order, and the ROS 2')
print(' * (ros2msg) text derived from it, made of one macro per message text. */')
print('#define ROSMSG_SEP "%s"' % SEP.replace('\n', '\\n'))
for name, c_text in macros.items():
    print('#define %s \\' % name)
    print(' \\\n'.join(c_text.split('\n')))
print('static const struct rosmsg_def {')
print('    const char *ros1, *ros2, *md5sum, *definition, *definition2;')
print('} rosmsg_defs[] = {')
print('    {"", "", "", "", ""},')
print('\n'.join(rows))
print('};')
