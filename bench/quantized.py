"""Quantized models per call (issue 38, section 5): hgr and ONNX Runtime each on a
float32 model and on its int8 quantization by ONNX Runtime's own tool, in one
process.

- squeezenet and resnet50: the ONNX model-zoo architectures of the `onnx` wheel with
  seeded random weights (scripts/onnx_models.py randomize), converted to opset 13,
  batch 1 at 224 x 224, quantized by quantize_static in the QDQ format, int8 weights per channel, uint8
  activations calibrated on 4 random images;
- a BERT-like encoder (6 layers, 384 wide, 12 heads, FFN 1536, opset 14; bench/
  transformer.py's) at batch 1 x 128, quantized by quantize_dynamic (int8 weights).

For each: the median call of hgr and of ONNX Runtime on the float model and on the
quantized one (they take turns in phases, bench/peers.py's
phased_medians), the largest difference between the two runtimes' outputs on the
quantized model, and the device memory of hgr's storages for each model (weights and
activations, `hgr check --json`'s planned bytes at that shape).

    python bench/quantized.py WORK_DIR DEVICE [CALLS]   (bench/quantized.sh runs it)
"""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.version_converter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python", "tests"))
import onnx_models  # noqa: E402  (scripts/onnx_models.py)
import transformer_models as tm  # noqa: E402
from peers import largest_difference, phased_medians  # noqa: E402
from recurrent import bench_args  # noqa: E402
from transformer import ENCODER, VOCAB  # noqa: E402

CNNS = ["squeezenet", "resnet50"]


class _Images:
    """quantize_static's calibration data: count random images of the input."""

    def __init__(self, name, shape, count=4):
        rng = np.random.default_rng(11)
        self.feeds = iter([{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(count)])

    def get_next(self):
        return next(self.feeds, None)


def models(work):
    """(title, float path, quantized path, feed, shape args of `hgr check`) per model."""
    from onnxruntime import quantization
    made = []
    for name in CNNS:
        model = onnx_models.randomize(onnx.load(os.path.join(onnx_models.light_dir(), f"light_{name}.onnx")), 5)
        model = onnx.version_converter.convert_version(model, 13)  # per-channel DequantizeLinear needs 13
        source, target = os.path.join(work, f"{name}.onnx"), os.path.join(work, f"{name}_qdq.onnx")
        onnx.save(model, source)
        initializers = {t.name for t in model.graph.initializer}
        value = next(i for i in model.graph.input if i.name not in initializers)
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        quantization.quantize_static(source, target, _Images(value.name, shape), quant_format=quantization.QuantFormat.QDQ,
                                     per_channel=True, weight_type=quantization.QuantType.QInt8,
                                     activation_type=quantization.QuantType.QUInt8)
        x = np.random.default_rng(12).standard_normal(shape).astype(np.float32)
        made.append((f"{name} 1 x 3 x 224 x 224, QDQ", source, target, {value.name: x},
                     ["--input-shape", f"{value.name}={','.join(map(str, shape))}"]))
    source, target = os.path.join(work, "encoder.onnx"), os.path.join(work, "encoder_dynamic.onnx")
    onnx.save(tm.bert(**ENCODER), source)
    quantization.quantize_dynamic(source, target, weight_type=quantization.QuantType.QInt8)
    feed = tm.text_feed(["token_type_ids"], 1, 128, vocab=VOCAB)
    made.append(("encoder 1 x 128, dynamic", source, target, feed,
                 [arg for name in feed for arg in ("--input-shape", f"{name}=1,128")]))
    return made


def device_bytes(hgr_cli, path, device, shape_args):
    """The planned bytes of hgr's storages on device for path at the shapes given."""
    text = subprocess.run([hgr_cli, "check", path, "--devices", device, "--json", *shape_args], check=True,
                          capture_output=True, text=True).stdout
    return sum(d["planned_bytes"] for d in json.loads(text)["devices"])


def main():
    import hgr
    import onnxruntime as ort
    work, device, calls, options = bench_args(20)
    hgr_cli = os.environ.get("HGR_CLI", "build/tools/hgr")
    rows = []
    for title, source, target, feed, shape_args in models(work):
        times, outputs = {}, {}
        for kind, path in (("float32", source), ("int8", target)):
            ours = hgr.InferenceSession(path, providers=[device])
            theirs = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            (hgr_ms, ort_ms), outputs[kind] = phased_medians([ours, theirs], feed, calls)
            times[kind] = (hgr_ms, ort_ms)
            print(f"{title} {kind}: hgr {hgr_ms:.2f} ms, ORT {ort_ms:.2f} ms", file=sys.stderr, flush=True)
        memory = [device_bytes(hgr_cli, p, device, shape_args) / 2**20 for p in (source, target)]
        rows.append((title, times, largest_difference(*outputs["int8"]), memory))
    print(f"| model | hgr float32 ms | hgr int8 ms | ONNX Runtime {ort.__version__} float32 ms | ONNX Runtime int8 "
          "ms | hgr int8 / ONNX Runtime int8 | hgr int8 / hgr float32 | largest difference (int8) | hgr device "
          "memory float32 / int8 (MiB) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for title, t, diff, memory in rows:
        print(f"| {title} | {t['float32'][0]:.2f} | {t['int8'][0]:.2f} | {t['float32'][1]:.2f} | {t['int8'][1]:.2f} | "
              f"**{t['int8'][0] / t['int8'][1]:.2f}** | **{t['int8'][0] / t['float32'][0]:.2f}** | {diff:.1e} | "
              f"{memory[0]:.1f} / {memory[1]:.1f} |")


if __name__ == "__main__":
    main()
