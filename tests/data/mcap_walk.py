#!/usr/bin/python3
"""An MCAP reader written from the specification (foxglove/mcap,
docs/specification/README.md) with nothing but struct, zlib and Debian's
python3-zstandard / python3-lz4, so that the tests of sensim's MCAP writer
check it against a decoder that shares no code with it.

Usage: mcap_walk.py FILE
Walks every record of the data section (decompressing chunks and checking
their CRC), then the summary: footer, summary CRC, summary offsets, chunk
indexes (offset, length, sizes, message index offsets), message indexes
against the chunk contents, statistics against the counts found.  Prints one
line per message, sorted by (log_time, file order):
    <topic>\t<log_time>\t<hex payload>
and, last, "statistics=<yes|no> schemas=<n> channels=<n> chunks=<n> compression=<c,...>
profile=<p> encoding=<e,...> schema_encoding=<e,...>".  Any inconsistency
raises, exiting non-zero."""
import struct
import sys
import zlib

MAGIC = b"\x89MCAP0\r\n"


def fail(msg):
    raise SystemExit("mcap_walk: " + msg)


class Buf:
    def __init__(self, b, pos=0):
        self.b, self.p = b, pos

    def take(self, n):
        if self.p + n > len(self.b):
            fail("field runs past its record")
        v = self.b[self.p:self.p + n]
        self.p += n
        return v

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def string(self):
        return self.take(self.u32()).decode("utf-8")

    def smap(self):
        end = self.p + self.u32()
        out = {}
        while self.p < end:
            k = self.string()
            out[k] = self.string()
        return out


def records(b, start, end):
    p = start
    while p < end:
        if p + 9 > end:
            fail("record header at %d runs past its section" % p)
        op, n = b[p], struct.unpack_from("<Q", b, p + 1)[0]
        if p + 9 + n > end:
            fail("record at %d (op 0x%02x) runs past its section" % (p, op))
        yield p, op, b[p + 9:p + 9 + n]
        p += 9 + n


def decompress(comp, data, size):
    if comp == "":
        out = data
    elif comp == "zstd":
        import zstandard
        out = zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
    elif comp == "lz4":
        import lz4.frame
        out = lz4.frame.decompress(data)
    else:
        fail("unknown compression %r" % comp)
    if len(out) != size:
        fail("uncompressed size %d, chunk says %d" % (len(out), size))
    return out


def main(path):
    b = open(path, "rb").read()
    if b[:8] != MAGIC or b[-8:] != MAGIC:
        fail("magic")
    fpos = len(b) - 8 - 29
    if b[fpos] != 0x02 or struct.unpack_from("<Q", b, fpos + 1)[0] != 20:
        fail("footer")
    sstart, sostart, scrc = struct.unpack_from("<QQI", b, fpos + 9)
    schemas, channels, msgs, chunks = {}, {}, [], {}
    profile = None
    data_end = None
    order = 0
    nmeta = 0
    for pos, op, c in records(b, 8, fpos):
        if sstart and pos >= sstart:
            break
        r = Buf(c)
        if op == 0x01:
            profile = r.string()
            r.string()
        elif op == 0x03:
            sid = r.u16()
            schemas[sid] = (r.string(), r.string(), r.take(r.u32()))
        elif op == 0x04:
            cid, sid = r.u16(), r.u16()
            channels[cid] = (sid, r.string(), r.string(), r.smap())
        elif op == 0x05:
            fail("message outside a chunk at %d" % pos)
        elif op == 0x06:
            t0, t1, usize, ucrc = r.u64(), r.u64(), r.u64(), r.u32()
            comp = r.string()
            raw = r.take(r.u64())
            data = decompress(comp, raw, usize)
            if ucrc and zlib.crc32(data) != ucrc:
                fail("chunk at %d: CRC" % pos)
            inside = {}
            for ipos, iop, ic in records(data, 0, len(data)):
                ir = Buf(ic)
                if iop == 0x03:
                    sid = ir.u16()
                    schemas[sid] = (ir.string(), ir.string(), ir.take(ir.u32()))
                elif iop == 0x04:
                    cid, sid = ir.u16(), ir.u16()
                    channels[cid] = (sid, ir.string(), ir.string(), ir.smap())
                elif iop == 0x05:
                    cid, _seq, lt, _pt = ir.u16(), ir.u32(), ir.u64(), ir.u64()
                    if cid not in channels:
                        fail("message on unknown channel %d" % cid)
                    if not t0 <= lt <= t1:
                        fail("message time outside its chunk's range")
                    msgs.append((lt, order, cid, ic[22:]))
                    order += 1
                    inside.setdefault(cid, []).append((lt, ipos))
                else:
                    fail("record 0x%02x inside a chunk" % iop)
            chunks[pos] = dict(t0=t0, t1=t1, usize=usize, csize=len(raw), comp=comp,
                               length=9 + len(c), inside=inside, mi={}, mi_end=pos + 9 + len(c))
            last_chunk = pos
        elif op == 0x07:
            cid = r.u16()
            n = r.u32()
            ent = [struct.unpack_from("<QQ", c, 6 + 16 * i) for i in range(n // 16)]
            ch = chunks[last_chunk]
            if ent != ch["inside"].get(cid):
                fail("message index of channel %d after chunk %d disagrees" % (cid, last_chunk))
            ch["mi"][cid] = pos
            ch["mi_end"] = pos + 9 + len(c)
        elif op == 0x0C:
            nmeta += 1
        elif op == 0x0F:
            data_end = pos
            dcrc = r.u32()
            if dcrc and zlib.crc32(b[:pos]) != dcrc:
                fail("data section CRC")
        else:
            fail("unexpected record 0x%02x at %d" % (op, pos))
    if data_end is None:
        fail("no Data End record")
    if not sstart:
        fail("no summary")
    if scrc and zlib.crc32(b[sstart:fpos + 9 + 16]) != scrc:
        fail("summary CRC")
    groups = {}
    stats = None
    cidx = []
    send = sostart if sostart else fpos
    for pos, op, c in records(b, sstart, send):
        r = Buf(c)
        groups.setdefault(op, [pos, 0])[1] += 9 + len(c)
        if op == 0x03:
            sid = r.u16()
            if schemas.get(sid) != (r.string(), r.string(), r.take(r.u32())):
                fail("summary schema %d differs" % sid)
        elif op == 0x04:
            cid, sid = r.u16(), r.u16()
            if channels.get(cid) != (sid, r.string(), r.string(), r.smap()):
                fail("summary channel %d differs" % cid)
        elif op == 0x08:
            t0, t1, off, ln = r.u64(), r.u64(), r.u64(), r.u64()
            n = r.u32()
            mio = {struct.unpack_from("<H", c, 36 + 10 * i)[0]:
                   struct.unpack_from("<Q", c, 38 + 10 * i)[0] for i in range(n // 10)}
            r.take(n)
            milen = r.u64()
            comp = r.string()
            csize, usize = r.u64(), r.u64()
            ch = chunks.get(off)
            if ch is None or ch["length"] != ln or ch["t0"] != t0 or ch["t1"] != t1 or \
               ch["comp"] != comp or ch["csize"] != csize or ch["usize"] != usize or \
               mio != ch["mi"] or milen != ch["mi_end"] - off - ln:
                fail("chunk index for %d disagrees with the chunk" % off)
            cidx.append(off)
        elif op == 0x0D:
            pass
        elif op == 0x0B:
            stats = (r.u64(), r.u16(), r.u32(), r.u32(), r.u32(), r.u32(), r.u64(), r.u64())
            n = r.u32()
            counts = {struct.unpack_from("<H", c, 46 + 10 * i)[0]:
                      struct.unpack_from("<Q", c, 48 + 10 * i)[0] for i in range(n // 10)}
        else:
            fail("unexpected summary record 0x%02x" % op)
    if sorted(cidx) != sorted(chunks):
        fail("chunk indexes do not cover every chunk")
    times = [m[0] for m in msgs]
    want = (len(msgs), len(schemas), len(channels), 0, nmeta, len(chunks),
            min(times) if msgs else 0, max(times) if msgs else 0)
    if stats is not None and stats != want:
        fail("statistics %r, file has %r" % (stats, want))
    per = {}
    for m in msgs:
        per[m[2]] = per.get(m[2], 0) + 1
    if stats is not None and counts != per:
        fail("channel_message_counts %r, file has %r" % (counts, per))
    if sostart:
        seen = {}
        for pos, op, c in records(b, sostart, fpos):
            if op != 0x0E:
                fail("summary offset section holds 0x%02x" % op)
            g, gs, gl = struct.unpack_from("<BQQ", c)
            seen[g] = [gs, gl]
        if seen != groups:
            fail("summary offsets %r, groups %r" % (seen, groups))
    for lt, _o, cid, d in sorted(msgs, key=lambda m: (m[0], m[1])):
        print("%s\t%d\t%s" % (channels[cid][1], lt, d.hex()))
    print("statistics=%s schemas=%d channels=%d chunks=%d compression=%s profile=%s encoding=%s schema_encoding=%s" % (
        "yes" if stats is not None else "no", len(schemas), len(channels), len(chunks),
        ",".join(sorted({c["comp"] or "none" for c in chunks.values()})), profile,
        ",".join(sorted({ch[2] for ch in channels.values()})),
        ",".join(sorted({s[1] for s in schemas.values()}))))


if __name__ == "__main__":
    main(sys.argv[1])
