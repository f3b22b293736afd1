"""Real models with real weights, as PyPI packages ship them inside their wheels (the
wheels scripts/setup.sh pins by version and sha256 into build/real-models, or
HGR_REAL_MODELS), each fed as its own library feeds ONNX Runtime (the feeds of
python/tests/test_real_models.py): hgr.InferenceSession against ONNX Runtime and OpenVINO
on the CPU (bench/peers.py) in one process, taking turns in phases (peers.compare_cases),
the outputs compared with ONNX Runtime's (issue 39, section 1).

  PP-OCRv4's text detector (rapidocr_onnxruntime 1.4.4, ch_PP-OCRv4_det_infer.onnx: a
      DB head with two 2 x 2 stride-2 ConvTransposes) on a page at 640 x 640 and 480 x
      320 (multiples of 32, as rapidocr resizes), and its recognizer on a batch of 6
      text lines at 48 x 320;
  Silero VAD 5.1.2: one 512-sample chunk at 16 kHz with its state;
  g2p-id 0.4.2's BERT: one word of 32 tokens;
  ddddocr 1.5.6's quantized captcha reader: one 4-digit image at height 64;
  a YOLOv8n-style detector as torch.onnx exports it (python/tests/detector_models.py:
      Conv + SiLU written out, C2f, SPPF, the detect head; seeded random weights),
      one letterboxed image at 320 x 320;
  the nine ONNX model-zoo architectures of the `onnx` wheel with seeded random weights
      (scripts/onnx_models.py prepare: random.onnx, random_input.npy; prepared into
      MODELS_DIR, default build/tests/onnx-models, where the model tests prepare them),
      batch 1 at 224 x 224 (not the wheels' constant-fill weights, which no user runs).

  python bench/real_models.py WORK DEVICE CALLS [MODELS_DIR]   (a markdown table on stdout)
A wheel that is missing is a row that says so."""
import contextlib
import os
import sys
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import detector_models  # noqa: E402  (python/tests/detector_models.py)
import onnx_models  # noqa: E402  (scripts/onnx_models.py)
import test_real_models as real  # noqa: E402  (its feeds: the libraries' own calls)
from recurrent import bench_args  # noqa: E402
from peers import compare_cases, print_table  # noqa: E402


def wheel_member(work, wheel, member):
    """The model file member of the pinned wheel, extracted into work; None when the wheel is missing."""
    wheel = os.path.join(real.REAL_MODELS, wheel)
    if not os.path.exists(wheel):
        return None
    path = os.path.join(work, os.path.basename(member))
    with zipfile.ZipFile(wheel) as z:
        with open(path, "wb") as f:
            f.write(z.read(member))
    return path


def _page(height, width):
    """A page for the detector as rapidocr normalizes it: [1, 3, height, width], text-like bars on white."""
    rng = np.random.default_rng(1)
    image = np.full((height, width), 235.0)
    for row in range(16, height - 32, 40):
        for x in range(16, width - 16, int(rng.integers(9, 15))):
            if rng.random() < 0.8:
                image[row:row + int(rng.integers(12, 24)), x:x + int(rng.integers(2, 6))] = rng.integers(0, 60)
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    rgb = (image[None] / 255.0 - mean[:, None, None]) / std[:, None, None]
    return rgb.astype(np.float32)[None]


def silero_case(work):
    """Silero VAD's model (None when the wheel is missing) and one call's feed as its
    OnnxWrapper builds it: a 512-sample chunk at 16 kHz after the last 64 samples of the
    one before (zeros at the start), the state, the sample rate."""
    chunk = np.concatenate([np.zeros((1, 64), np.float32), real._audio(16000)[None, :512]], axis=1)
    feed = {"input": chunk, "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}
    return wheel_member(work, real.SILERO_WHEEL, "silero_vad/data/silero_vad.onnx"), feed


def cases(work):
    """(title, path or None, feed) of every timed call."""
    det = wheel_member(work, real.RAPIDOCR_WHEEL, "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx")
    rec = wheel_member(work, real.RAPIDOCR_WHEEL, "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx")
    silero, silero_feed = silero_case(work)
    g2p = wheel_member(work, real.G2P_ID_WHEEL, "g2p_id/models/bert/bert_mlm.onnx")
    dddd = wheel_member(work, real.DDDDOCR_WHEEL, "ddddocr/common_old.onnx")
    rows = [("PP-OCRv4 detector, a page at 640 x 640", det, {"x": _page(640, 640)}),
            ("PP-OCRv4 detector, a page at 480 x 320", det, {"x": _page(480, 320)}),
            ("PP-OCRv4 recognizer, 6 lines at 48 x 320", rec,
             {"x": next(real._rec_batches(real._text_lines(6, seed=6)))})]
    rows.append(("Silero VAD, a 512-sample chunk at 16 kHz", silero, silero_feed))
    if g2p:
        import json
        with zipfile.ZipFile(os.path.join(real.REAL_MODELS, real.G2P_ID_WHEEL)) as z:
            token2id = json.loads(z.read("g2p_id/models/bert/token2id.json"))
            config = json.loads(z.read("g2p_id/models/bert/config.json"))
        tokens = np.array([real._g2p_tokens("kecewa", token2id, config)], dtype="int64")
    rows.append(("g2p-id BERT, one word of 32 tokens", g2p, {"input_1": tokens} if g2p else None))
    rows.append(("ddddocr quantized reader, 4 digits at 64 x 140", dddd, {"input1": real._captcha("2024", seed=0)}))
    yolo = os.path.join(work, "yolo_like.onnx")
    with open(yolo, "wb") as f:
        f.write(detector_models.yolo_like(320, 320).SerializeToString())
    rows.append(("YOLOv8n-style detector (built here, seeded random weights), 320 x 320", yolo,
                 {"images": detector_models.image(320, 320)}))
    return rows


def zoo_cases(models_dir):
    """(title, path, feed) of the model zoo's architectures with seeded random weights,
    prepared into models_dir first where they are not (a minute or two, once)."""
    with contextlib.redirect_stdout(sys.stderr):
        onnx_models.prepare(models_dir)
    rows = []
    for name, input_name, _ in onnx_models.MODELS:
        folder = os.path.join(models_dir, name)
        rows.append((f"{name} (model zoo, seeded random weights), 1 x 3 x 224 x 224",
                     os.path.join(folder, "random.onnx"),
                     {input_name: np.load(os.path.join(folder, "random_input.npy"))}))
    return rows


def main():
    work, device, calls, options = bench_args(10)
    models_dir = sys.argv[4] if len(sys.argv) > 4 else os.path.join(ROOT, "build", "tests", "onnx-models")
    timed = cases(work) + zoo_cases(models_dir)
    print_table(compare_cases(timed, device, calls, options), device, "model, input", digits=3)


if __name__ == "__main__":
    main()
