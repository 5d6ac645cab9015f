#!/usr/bin/env python3
"""png_height.py PNG — prints "WIDTH HEIGHT CONTENT" for a screenshot: CONTENT is
the number of rows down to the last one that is not all the colour of the
bottom-right pixel (the page's background), i.e. the rendered page's height
when the window was taller than the page. Standard library only (zlib):
8-bit RGB/RGBA, non-interlaced, as Chromium writes them."""
import struct
import sys
import zlib


def rows(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("%s: not a PNG" % path)
    pos, idat = 8, []
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise SystemExit("%s: only 8-bit RGB/RGBA, not interlaced" % path)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    prev = bytearray(stride)
    out = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)]
        if f == 0 or (f == 2 and line.count(0) == stride):
            cur = bytearray(line) if f == 0 else bytearray(prev)
        elif f == 2:
            cur = bytearray((a + b) & 255 for a, b in zip(line, prev))
        else:
            cur = bytearray(line)
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b = prev[i]
                if f == 1:
                    cur[i] = (cur[i] + a) & 255
                elif f == 3:
                    cur[i] = (cur[i] + ((a + b) >> 1)) & 255
                else:
                    c = prev[i - bpp] if i >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                    cur[i] = (cur[i] + pr) & 255
        out.append(bytes(cur))
        prev = cur
    return w, h, bpp, out


def main():
    w, h, bpp, rs = rows(sys.argv[1])
    bg = rs[-1][-bpp:]
    blank = bg * w
    content = 0
    for y, r in enumerate(rs):
        if r != blank:
            content = y + 1
    print(w, h, content)


if __name__ == "__main__":
    main()
