"""Headless Chromium for the tests: find it, load a page, dump its DOM, take
a screenshot, and read the screenshot's pixels (a minimal PNG decoder, so
the tests need no imaging library)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT_S = 180


def find_chromium() -> str | None:
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(chromium: str, args: list[str]) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="nkilint-chromium-") as profile:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}",
               "--enable-logging=stderr", "--v=0", *args]
        env = dict(os.environ, HOME=profile)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)


def dump_dom(chromium: str, page: Path) -> tuple[str, list[str]]:
    """(the DOM after loading, the console messages Chromium logged)."""
    proc = _run(chromium, ["--dump-dom", page.resolve().as_uri()])
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    return proc.stdout, console


def screenshot(chromium: str, page: Path, png: Path, width: int = 1280, height: int = 2400) -> None:
    proc = _run(chromium, [f"--window-size={width},{height}", f"--screenshot={png}", page.resolve().as_uri()])
    if not png.exists():
        raise RuntimeError(f"chromium wrote no screenshot: {proc.stderr[-2000:]}")


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) of an 8-bit, non-interlaced PNG."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            if depth != 8 or interlace != 0 or color not in (2, 6):
                raise ValueError(f"unsupported PNG (depth {depth}, colour type {color}, interlace {interlace})")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    i = 0
    for _ in range(height):
        kind = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = prev[x]
            corner = prev[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                line[x] = (line[x] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, [bytes(r) for r in rows] if channels == 3 else [_rgb(r) for r in rows]


def _rgb(rgba: bytes) -> bytes:
    return b"".join(rgba[i:i + 3] for i in range(0, len(rgba), 4))


def count_color(rows: list[bytes], rgb: tuple[int, int, int], tolerance: int = 6) -> int:
    """Pixels within ``tolerance`` of a colour (anti-aliasing blurs edges)."""
    r0, g0, b0 = rgb
    n = 0
    for row in rows:
        for i in range(0, len(row), 3):
            if abs(row[i] - r0) <= tolerance and abs(row[i + 1] - g0) <= tolerance and abs(row[i + 2] - b0) <= tolerance:
                n += 1
    return n


def hex_rgb(color: str) -> tuple[int, int, int]:
    color = color.lstrip("#")
    return int(color[0:2], 16), int(color[2:4], 16), int(color[4:6], 16)
