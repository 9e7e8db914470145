# tiff_files.py: TIFF files written and read by the tests (cli_tiff.py, hostile.py): a small
# writer of uncompressed TIFFs of any layout, and a reader of a file's first directory.

import struct

# TIFF tags and types the tests write and read.
WIDTH, LENGTH, BITS, COMPRESSION, PHOTOMETRIC, STRIP_OFFSETS = 256, 257, 258, 259, 262, 273
ORIENTATION, SPP, ROWS_PER_STRIP, STRIP_BYTES, COLORMAP = 274, 277, 278, 279, 320
EXTRA, ICC = 338, 34675
SHORT, LONG, UNDEFINED = 3, 4, 7


def tiff_file(w, h, bits, photometric, spp, data, entries=(), order="<", rows=None, more=b"",
              ifd_first=False):
    """An uncompressed TIFF written here: IFD0 after the strips (or, ifd_first, right after the
    header: a file cut short then loses pixels, not its directory), strips of rows rows (one
    strip by default), entries added as (tag, type, count, value: a number, a pair of SHORTs or
    bytes); more: the bytes of a second directory (a second page) at the end when given."""
    rows = h if rows is None else rows
    row_bytes = (w * spp * bits + 7) // 8
    nstrips = (h + rows - 1) // rows
    strips = [data[k * rows * row_bytes:(k + 1) * rows * row_bytes] for k in range(nstrips)]
    ents = [(WIDTH, LONG, 1, w), (LENGTH, LONG, 1, h), (COMPRESSION, SHORT, 1, 1),
            (PHOTOMETRIC, SHORT, 1, photometric), (SPP, SHORT, 1, spp),
            (ROWS_PER_STRIP, LONG, 1, rows),
            (BITS, SHORT, spp, bits if spp == 1 else (bits, bits) if spp == 2 else
             struct.pack(order + "%dH" % spp, *[bits] * spp)),
            (STRIP_OFFSETS, LONG, nstrips, None), (STRIP_BYTES, LONG, nstrips, None)]
    ents = sorted(ents + list(entries), key=lambda e: e[0])
    ifd_size = 2 + 12 * len(ents) + 4

    def pad(b):
        return b + (b"\0" if len(b) & 1 else b"")

    # The values stored outside their entries, then the strips, each at an even offset.
    outside = [v for _, _, _, v in ents if isinstance(v, bytes) and len(v) > 4]
    extra_size = sum(len(pad(v)) for v in outside)
    strip_list_size = len(pad(b"\0" * 4 * nstrips)) * 2 if nstrips > 1 else 0
    first = 8 + (ifd_size if ifd_first else 0)
    offsets, at = [], first + extra_size + strip_list_size
    for strip in strips:
        offsets.append(at)
        at += len(pad(strip))
    lists = {STRIP_OFFSETS: offsets, STRIP_BYTES: [len(x) for x in strips]}
    fields, blob = [], b""
    for tag, kind, count, value in ents:
        if value is None:  # the strip lists
            value = lists[tag][0] if nstrips == 1 else struct.pack(order + "%dI" % nstrips,
                                                                   *lists[tag])
        if isinstance(value, bytes) and len(value) > 4:
            field = struct.pack(order + "I", first + len(blob))
            blob += pad(value)
        elif isinstance(value, bytes):
            field = value.ljust(4, b"\0")
        elif isinstance(value, tuple):
            field = struct.pack(order + "HH", *value)
        elif kind == SHORT:
            field = struct.pack(order + "HH", value, 0)
        else:
            field = struct.pack(order + "I", value)
        fields.append(struct.pack(order + "HHI", tag, kind, count) + field)
    body = blob + b"".join(pad(x) for x in strips)
    ifd_at = 8 if ifd_first else 8 + len(body)
    nxt = 8 + len(body) + ifd_size if more else 0
    ifd = struct.pack(order + "H", len(fields)) + b"".join(fields) + struct.pack(order + "I", nxt)
    head = (b"II*\0" if order == "<" else b"MM\0*") + struct.pack(order + "I", ifd_at)
    return head + (ifd + body if ifd_first else body + ifd) + more


def ifd0(data):
    """{tag: (type, count, value field bytes)} of a little- or big-endian TIFF's IFD0."""
    e = "<" if data[:2] == b"II" else ">"
    at = struct.unpack(e + "I", data[4:8])[0]
    n = struct.unpack(e + "H", data[at:at + 2])[0]
    out = {}
    for i in range(n):
        tag, kind, count = struct.unpack(e + "HHI", data[at + 2 + 12 * i:at + 10 + 12 * i])
        out[tag] = (kind, count, data[at + 10 + 12 * i:at + 14 + 12 * i])
    return out


def with_entry(data, tag, count, value):
    """A little-endian TIFF with IFD0's entry tag given another count and value field."""
    at = struct.unpack("<I", data[4:8])[0]
    n = struct.unpack("<H", data[at:at + 2])[0]
    for i in range(n):
        e = at + 2 + 12 * i
        if struct.unpack("<H", data[e:e + 2])[0] == tag:
            return data[:e + 4] + struct.pack("<II", count, value) + data[e + 12:]
    raise AssertionError("no tag %d" % tag)


