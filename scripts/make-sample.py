#!/usr/bin/env python3
# Generates the built-in demo images assets/sample.png (RGB scene) and assets/sample-mask.png (subject mask).
"""Deterministic generator for gpuimg's sample image and its subject mask.

The scene is a synthetic "photo": a sky gradient with soft clouds, two
layers of distant hills, a textured meadow, and a stylised dog standing in
the middle of the frame.  The dog is built from ellipses and capsules, so
its outline is curvy; `inside_subject(x, y)` is the single source of truth
for both the shaded dog in sample.png and the hard 0/255 mask in
sample-mask.png.

Only the standard library is used.  All randomness comes from one
random.Random with a fixed seed, using only .random(), whose output is
stable across Python versions, so the output is byte-for-byte reproducible.

Usage: python3 scripts/make-sample.py [OUTDIR]   (default: <repo>/assets)
"""

import math
import os
import random
import struct
import sys
import zlib

WIDTH = 1024
HEIGHT = 768
SEED = 20240611

# Sky/ground layout (y grows downwards).
MEADOW_TOP = 468          # approximate y where the near meadow starts


# ----------------------------------------------------------------------------
# Small numeric helpers
# ----------------------------------------------------------------------------

def clamp01(v):
    return 0.0 if v < 0.0 else 1.0 if v > 1.0 else v


def smoothstep(e0, e1, v):
    t = clamp01((v - e0) / (e1 - e0))
    return t * t * (3.0 - 2.0 * t)


def lerp(a, b, t):
    return a + (b - a) * t


def mix(c0, c1, t):
    """Linear blend of two RGB float triples."""
    return (lerp(c0[0], c1[0], t), lerp(c0[1], c1[1], t), lerp(c0[2], c1[2], t))


def scale(c, k):
    return (c[0] * k, c[1] * k, c[2] * k)


def normalize(v):
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    return (v[0] / n, v[1] / n, v[2] / n)


# Direction towards the light: from the upper left, in front of the subject.
LIGHT = normalize((-0.45, -0.60, 0.66))


# ----------------------------------------------------------------------------
# Value noise (whole-image fields, computed row by row for speed)
# ----------------------------------------------------------------------------

def noise_layer(rng, cell_x, cell_y):
    """One octave of smooth value noise in [0, 1] as a list of rows.

    A random lattice with cells of cell_x by cell_y pixels is interpolated
    with a smoothstep weight; anisotropic cells give streaky textures.
    """
    grid_w = WIDTH // cell_x + 2
    grid_h = HEIGHT // cell_y + 2
    grid = [[rng.random() for _ in range(grid_w)] for _ in range(grid_h)]

    col_index = [x // cell_x for x in range(WIDTH)]
    col_t = [smoothstep(0.0, 1.0, (x % cell_x) / cell_x) for x in range(WIDTH)]
    # Interpolate every lattice row horizontally once ...
    lattice_rows = [
        [g[i] + (g[i + 1] - g[i]) * t for i, t in zip(col_index, col_t)]
        for g in grid
    ]
    # ... then each image row is a blend of two of those.
    rows = []
    for y in range(HEIGHT):
        j = y // cell_y
        t = smoothstep(0.0, 1.0, (y % cell_y) / cell_y)
        a, b = lattice_rows[j], lattice_rows[j + 1]
        rows.append([p + (q - p) * t for p, q in zip(a, b)])
    return rows


def fbm(rng, cell_x, cell_y, octaves):
    """Fractal sum of noise octaves (cells halve each octave), in [0, 1]."""
    total = None
    amp, amp_sum = 1.0, 0.0
    for _ in range(octaves):
        layer = noise_layer(rng, max(1, cell_x), max(1, cell_y))
        if total is None:
            total = [[v * amp for v in row] for row in layer]
        else:
            total = [[s + v * amp for s, v in zip(srow, lrow)]
                     for srow, lrow in zip(total, layer)]
        amp_sum += amp
        amp *= 0.5
        cell_x //= 2
        cell_y //= 2
    inv = 1.0 / amp_sum
    return [[v * inv for v in row] for row in total]


# ----------------------------------------------------------------------------
# The subject: a stylised dog, facing right
# ----------------------------------------------------------------------------

class Ellipse:
    def __init__(self, name, cx, cy, rx, ry, angle_deg=0.0):
        self.name = name
        self.cx, self.cy, self.rx, self.ry = cx, cy, rx, ry
        a = math.radians(angle_deg)
        self.cos, self.sin = math.cos(a), math.sin(a)
        r = max(rx, ry)
        self.bbox = (cx - r, cy - r, cx + r, cy + r)

    def local(self, x, y):
        """Point in the ellipse's unit frame: inside when u*u + v*v <= 1."""
        dx, dy = x - self.cx, y - self.cy
        u = (dx * self.cos + dy * self.sin) / self.rx
        v = (-dx * self.sin + dy * self.cos) / self.ry
        return u, v

    def contains(self, x, y):
        b = self.bbox
        if x < b[0] or x > b[2] or y < b[1] or y > b[3]:
            return False
        u, v = self.local(x, y)
        return u * u + v * v <= 1.0

    def normal(self, x, y):
        u, v = self.local(x, y)
        # rotate the in-plane part back to image axes
        nx = u * self.cos - v * self.sin
        ny = u * self.sin + v * self.cos
        nz = math.sqrt(max(0.0, 1.0 - u * u - v * v))
        return (nx, ny, nz)


class Capsule:
    """All points within radius r of the segment (ax, ay)-(bx, by)."""

    def __init__(self, name, ax, ay, bx, by, r):
        self.name = name
        self.ax, self.ay, self.bx, self.by, self.r = ax, ay, bx, by, r
        self.dx, self.dy = bx - ax, by - ay
        self.len2 = self.dx * self.dx + self.dy * self.dy
        self.bbox = (min(ax, bx) - r, min(ay, by) - r,
                     max(ax, bx) + r, max(ay, by) + r)

    def along(self, x, y):
        """Parameter (0 at a, 1 at b) of the closest point on the segment."""
        t = ((x - self.ax) * self.dx + (y - self.ay) * self.dy) / self.len2
        return clamp01(t)

    def offset(self, x, y):
        t = self.along(x, y)
        return (x - (self.ax + t * self.dx)) / self.r, (y - (self.ay + t * self.dy)) / self.r

    def contains(self, x, y):
        b = self.bbox
        if x < b[0] or x > b[2] or y < b[1] or y > b[3]:
            return False
        u, v = self.offset(x, y)
        return u * u + v * v <= 1.0

    def normal(self, x, y):
        u, v = self.offset(x, y)
        return (u, v, math.sqrt(max(0.0, 1.0 - u * u - v * v)))


class Tube:
    """A bent, tapering tube: a polyline with a radius at every vertex.

    A point is inside when it is within the (linearly interpolated) radius
    of some segment; the segment it is relatively closest to shades it, so
    the joints between segments do not show.
    """

    def __init__(self, name, points, radii):
        self.name = name
        self.segments = []
        for (a, b, ra, rb) in zip(points, points[1:], radii, radii[1:]):
            dx, dy = b[0] - a[0], b[1] - a[1]
            self.segments.append((a[0], a[1], dx, dy, dx * dx + dy * dy, ra, rb))
        r = max(radii)
        self.bbox = (min(p[0] for p in points) - r, min(p[1] for p in points) - r,
                     max(p[0] for p in points) + r, max(p[1] for p in points) + r)

    def closest(self, x, y):
        """(normalised distance, u, v) to the relatively nearest segment."""
        best = None
        for ax, ay, dx, dy, len2, ra, rb in self.segments:
            t = clamp01(((x - ax) * dx + (y - ay) * dy) / len2)
            r = ra + (rb - ra) * t
            u = (x - (ax + t * dx)) / r
            v = (y - (ay + t * dy)) / r
            d = u * u + v * v
            if best is None or d < best[0]:
                best = (d, u, v)
        return best

    def contains(self, x, y):
        b = self.bbox
        if x < b[0] or x > b[2] or y < b[1] or y > b[3]:
            return False
        return self.closest(x, y)[0] <= 1.0

    def normal(self, x, y):
        _, u, v = self.closest(x, y)
        return (u, v, math.sqrt(max(0.0, 1.0 - u * u - v * v)))


def make_tail():
    """The tail: a tube along a quadratic Bezier curve, thinning to the tip."""
    p0, p1, p2 = (300.0, 405.0), (190.0, 400.0), (175.0, 265.0)
    steps = 12
    points, radii = [], []
    for i in range(steps + 1):
        t = i / steps
        x = (1 - t) ** 2 * p0[0] + 2 * (1 - t) * t * p1[0] + t * t * p2[0]
        y = (1 - t) ** 2 * p0[1] + 2 * (1 - t) * t * p1[1] + t * t * p2[1]
        points.append((x, y))
        radii.append(22.0 - 11.0 * t)
    return Tube("tail", points, radii)


# Front-to-back order: the first part that contains a pixel shades it.
PARTS = [
    Ellipse("nose", 868, 322, 17, 13),
    Ellipse("eye", 785, 272, 10, 11),
    Ellipse("ear", 700, 300, 34, 74, angle_deg=18),
    Ellipse("snout", 818, 330, 60, 40, angle_deg=8),
    Ellipse("head", 745, 285, 88, 82),
    Capsule("neck", 640, 420, 725, 320, 66),
    Ellipse("paw", 660, 700, 40, 19),
    Capsule("leg", 648, 500, 658, 690, 31),
    Ellipse("paw", 318, 700, 42, 19),
    Capsule("leg", 338, 560, 322, 690, 33),
    Ellipse("thigh", 355, 470, 92, 102, angle_deg=-10),
    Ellipse("body", 485, 455, 228, 108, angle_deg=-3),
    make_tail(),
    Ellipse("far-paw", 590, 696, 36, 17),
    Capsule("far-leg", 585, 500, 588, 688, 27),
    Ellipse("far-paw", 395, 696, 38, 17),
    Capsule("far-leg", 400, 540, 392, 688, 29),
    Ellipse("far-ear", 780, 235, 22, 40, angle_deg=-25),
]

SUBJECT_BBOX = (
    int(min(p.bbox[0] for p in PARTS)) - 1,
    int(min(p.bbox[1] for p in PARTS)) - 1,
    int(max(p.bbox[2] for p in PARTS)) + 2,
    int(max(p.bbox[3] for p in PARTS)) + 2,
)


def subject_part(x, y):
    """The front-most part covering pixel (x, y), or None."""
    if x < SUBJECT_BBOX[0] or x > SUBJECT_BBOX[2] or y < SUBJECT_BBOX[1] or y > SUBJECT_BBOX[3]:
        return None
    px, py = x + 0.5, y + 0.5   # sample at the pixel centre
    for part in PARTS:
        if part.contains(px, py):
            return part
    return None


def inside_subject(x, y):
    """True when pixel (x, y) belongs to the dog (this defines the mask)."""
    return subject_part(x, y) is not None


# ----------------------------------------------------------------------------
# Background: sky, hills, meadow
# ----------------------------------------------------------------------------

def far_hill_top(x):
    return 352 + 34 * math.sin(x * 0.0061 + 1.3) + 15 * math.sin(x * 0.0187 + 0.4)


def near_hill_top(x):
    return 414 + 24 * math.sin(x * 0.0093 + 2.1) + 9 * math.sin(x * 0.0261 + 0.7)


def meadow_top(x):
    return MEADOW_TOP + 7 * math.sin(x * 0.0042 + 0.3)


def sky_colour(x, y, cloud):
    t = y / 470.0
    base = mix((52, 104, 186), (186, 212, 236), clamp01(t) ** 1.3)
    # Clouds: thresholded fbm, thinner towards the horizon.
    density = smoothstep(0.50, 0.72, cloud) * (1.0 - smoothstep(250, 420, y))
    if density <= 0.0:
        return base
    # lighter tops, slightly grey undersides
    cloud_col = mix((250, 250, 252), (198, 204, 216), smoothstep(0.60, 0.80, cloud) * 0.6)
    return mix(base, cloud_col, density)


def hill_colour(x, y, medium, far):
    if far:
        top = far_hill_top(x)
        depth = clamp01((y - top) / 80.0)
        c = mix((128, 150, 168), (104, 132, 136), depth)
        k = 0.92 + 0.16 * medium
    else:
        top = near_hill_top(x)
        depth = clamp01((y - top) / 60.0)
        c = mix((92, 128, 86), (70, 112, 62), depth)
        k = 0.82 + 0.36 * medium
    return scale(c, k)


def ground_colour(x, y, fine, medium, patches, blades):
    # perspective: far grass is paler/hazier, near grass richer and darker
    t = clamp01((y - MEADOW_TOP) / (HEIGHT - MEADOW_TOP))
    base = mix((142, 162, 88), (62, 108, 40), t ** 0.8)
    dry = mix(base, (170, 160, 82), 0.55 * smoothstep(0.45, 0.75, patches))
    # fine streaky blades get stronger towards the viewer
    clump_strength = 0.15 + 0.35 * t
    blade_strength = 0.10 + 0.30 * t
    k = (1.0 + clump_strength * (fine - 0.5) * 2.0 + blade_strength * (blades - 0.5) * 2.0
         + 0.20 * (medium - 0.5))
    return scale(dry, k)


def shadow_factor(x, y):
    """Soft contact shadow of the dog on the grass (1 = no shadow)."""
    dx = (x - 510) / 300.0
    dy = (y - 702) / 26.0
    d = dx * dx + dy * dy
    if d >= 1.0:
        return 1.0
    return 1.0 - 0.45 * (1.0 - d) ** 1.5


def background(x, y, fields):
    cloud, fine, medium, patches, blades = fields
    if y < far_hill_top(x):
        return sky_colour(x, y, cloud)
    if y < near_hill_top(x):
        return hill_colour(x, y, medium, far=True)
    if y < meadow_top(x):
        return hill_colour(x, y, medium, far=False)
    return scale(ground_colour(x, y, fine, medium, patches, blades), shadow_factor(x, y))


# ----------------------------------------------------------------------------
# Subject shading
# ----------------------------------------------------------------------------

FUR = (196, 132, 64)
FUR_DARK = (128, 78, 38)
CHEST = (232, 200, 150)
COLLAR = (180, 30, 36)


def subject_colour(part, x, y, fur_noise):
    px, py = x + 0.5, y + 0.5
    name = part.name
    n = part.normal(px, py)
    lambert = max(0.0, n[0] * LIGHT[0] + n[1] * LIGHT[1] + n[2] * LIGHT[2])
    light = 0.38 + 0.80 * lambert
    fur = 0.84 + 0.32 * fur_noise

    if name == "nose":
        c = (34, 26, 24)
        spec = smoothstep(0.55, 0.85, lambert) * 120
        return (c[0] * light + spec, c[1] * light + spec, c[2] * light + spec)
    if name == "eye":
        c = scale((40, 24, 16), light)
        u, v = part.local(px, py)
        if (u + 0.35) ** 2 + (v + 0.35) ** 2 < 0.09:      # catch-light
            return (235, 235, 230)
        return c
    if name in ("ear", "far-ear"):
        base = FUR_DARK
    elif name == "snout":
        base = mix(FUR, CHEST, 0.45)
    elif name == "neck":
        t = part.along(px, py)
        if 0.42 < t < 0.56:
            return scale(COLLAR, light * (0.9 + 0.2 * fur_noise))
        base = FUR
    elif name == "body":
        # lighter chest/belly towards the front and bottom
        u, v = part.local(px, py)
        base = mix(FUR, CHEST, 0.7 * smoothstep(0.1, 0.9, u * 0.6 + v * 0.7))
    elif name == "tail":
        base = mix(FUR, FUR_DARK, 0.25)
    elif name in ("paw", "far-paw"):
        base = mix(FUR, CHEST, 0.5)
    else:
        base = FUR

    c = scale(base, light * fur)
    if name.startswith("far-"):
        c = scale(c, 0.72)          # the far-side limbs are in the body's shadow
    return c


# ----------------------------------------------------------------------------
# Rendering
# ----------------------------------------------------------------------------

def to_byte(v):
    v = int(v + 0.5)
    return 0 if v < 0 else 255 if v > 255 else v


def render():
    rng = random.Random(SEED)
    cloud = fbm(rng, 256, 96, 5)
    fine = fbm(rng, 4, 16, 3)           # clumps of grass / fur strands (streaky)
    blades = noise_layer(rng, 1, 6)     # crisp one-pixel-wide grass blades
    medium = fbm(rng, 32, 16, 3)
    patches = fbm(rng, 160, 60, 3)

    rgb_rows = []
    mask_rows = []
    for y in range(HEIGHT):
        row = bytearray(WIDTH * 3)
        mrow = bytearray(WIDTH)
        c_row, f_row, m_row, p_row, b_row = cloud[y], fine[y], medium[y], patches[y], blades[y]
        for x in range(WIDTH):
            part = subject_part(x, y)
            if part is not None:
                col = subject_colour(part, x, y, 0.75 * f_row[x] + 0.25 * b_row[x])
                mrow[x] = 255
            else:
                col = background(x, y, (c_row[x], f_row[x], m_row[x], p_row[x], b_row[x]))
            # mild luminance grain everywhere (triangular distribution, +-3)
            g = (rng.random() + rng.random() - 1.0) * 3.0
            i = x * 3
            row[i] = to_byte(col[0] + g)
            row[i + 1] = to_byte(col[1] + g)
            row[i + 2] = to_byte(col[2] + g)
        rgb_rows.append(bytes(row))
        mask_rows.append(bytes(mrow))
    return rgb_rows, mask_rows


# ----------------------------------------------------------------------------
# PNG writer
# ----------------------------------------------------------------------------

def png_chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def filter_row(row, prev, bpp):
    """Pick the cheapest of filters 0 (None), 1 (Sub) and 2 (Up) for a row.

    "Cheapest" is the usual heuristic: smallest sum of the filtered bytes
    read as signed values.
    """
    sub = bytes((row[i] - (row[i - bpp] if i >= bpp else 0)) & 0xFF for i in range(len(row)))
    up = bytes((a - b) & 0xFF for a, b in zip(row, prev))

    def cost(data):
        return sum(v if v < 128 else 256 - v for v in data)

    candidates = [(cost(row), 0, row), (cost(sub), 1, sub), (cost(up), 2, up)]
    best = min(candidates, key=lambda c: (c[0], c[1]))
    return bytes([best[1]]) + best[2]


def png_bytes(rows, width, height, colour_type, bpp):
    raw = bytearray()
    prev = bytes(width * bpp)
    for row in rows:
        raw += filter_row(row, prev, bpp)
        prev = row
    ihdr = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n"
            + png_chunk(b"IHDR", ihdr)
            + png_chunk(b"IDAT", zlib.compress(bytes(raw), 9))
            + png_chunk(b"IEND", b""))


def main(argv):
    if len(argv) > 2:
        sys.stderr.write("usage: make-sample.py [OUTDIR]\n")
        return 2
    if len(argv) == 2:
        outdir = argv[1]
    else:
        outdir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assets")
    os.makedirs(outdir, exist_ok=True)

    rgb_rows, mask_rows = render()
    covered = sum(r.count(255) for r in mask_rows)

    outputs = [
        ("sample.png", png_bytes(rgb_rows, WIDTH, HEIGHT, 2, 3)),
        ("sample-mask.png", png_bytes(mask_rows, WIDTH, HEIGHT, 0, 1)),
    ]
    for name, data in outputs:
        path = os.path.join(outdir, name)
        with open(path, "wb") as f:
            f.write(data)
        print("wrote %s (%d bytes)" % (path, len(data)))
    print("subject coverage: %.2f%% of %dx%d" % (100.0 * covered / (WIDTH * HEIGHT), WIDTH, HEIGHT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
