"""Transformers: hgr.InferenceSession against ONNX Runtime (issue 37, section 5).

    python bench/transformer.py WORK_DIR DEVICE [CALLS]   -> Markdown on stdout
    python bench/transformer.py feeds WORK_DIR            -> the models, and the encoder's
                                                             1 x 128 feed as WORK_DIR/*.npy
    python bench/transformer.py profile PROFILE PEAK      -> the encoder's GEMMs and attention
                                                             at 1 x 128 from `hgr run --profile`
                                                             (PROFILE) against the FMA peak
                                                             (PEAK GFLOP/s), as Markdown

Three models from python/tests/transformer_models.py (the builders the tests check
against ONNX Runtime), seeded random weights, written into WORK_DIR (kept there for
`hgr run --profile`):
- **encoder**: the BERT-like encoder as torch.onnx writes it at opset 14 (LayerNorm
  and Erf-GELU written out), 6 layers, 384 wide, 12 heads, FFN 1536, vocabulary
  30522, called with int64 input_ids, attention_mask and token_type_ids at batch 1 x
  16, 128 and 512 tokens and batch 8 x 128 (rows padded to different lengths, as a
  tokenizer pads a batch).
- **vit**: the ViT-like encoder as ViT-S/16: 12 layers, 384 wide, 6 heads, patch 16,
  224 x 224 images (the position embeddings' cubic Resize to the 14 x 14 grid they
  were learned for), 1000 classes, batch 1.
- **encoder_ort**: a BERT in the form ONNX Runtime's transformer optimizer fuses
  (bert_for_optimizer: 6 layers, 384 wide, 12 heads, FFN 384, weights of standard
  deviation 0.05), through that optimizer (ort_optimize): EmbedLayerNormalization,
  Attention, SkipLayerNormalization and BiasGelu of domain com.microsoft, the file
  users of ONNX Runtime's optimized exports bring; batch 1 x 128 and 1 x 512 tokens.
Per shape: each session's median call of CALLS (default 20) after 3 warm-up calls,
hgr's, ONNX Runtime's and OpenVINO's (bench/peers.py: CPU, threads = cores) taking
turns in two phases each, in the same process, each phase after 0.2 s of untimed
calls (peers.phased_medians says why). The outputs are compared with ONNX Runtime's
(largest difference) so a fast wrong answer shows.
"""
import os
import sys

import numpy as np
import onnx

from peers import compare_cases, print_table  # bench/peers.py, beside this file
from recurrent import bench_args  # bench/recurrent.py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))
import transformer_models as tm  # noqa: E402  (python/tests/transformer_models.py)

VOCAB = 30522
ENCODER = dict(opset=14, layers=6, width=384, heads=12, ffn=1536, vocab=VOCAB, max_positions=512)
VIT = dict(layers=12, width=384, heads=6, patch=16, grid=14, classes=1000)
TEXT_SHAPES = [(1, 16), (1, 128), (1, 512), (8, 128)]
ENCODER_ORT = dict(layers=6, hidden=384, heads=12, vocab=VOCAB, max_positions=512, scale=0.05)
OPTIMIZED_SHAPES = [(1, 128), (1, 512)]
PROFILE_TOKENS = 128  # the encoder's batch 1 feed for `hgr run --profile`


def models(work):
    """(name, path) of the three models, written once."""
    paths = []
    for name, build, kwargs in [("encoder", tm.bert, ENCODER), ("vit", tm.vit, VIT)]:
        path = os.path.join(work, f"{name}.onnx")
        if not os.path.exists(path):
            onnx.save(build(**kwargs), path)
        paths.append((name, path))
    path = os.path.join(work, "encoder_ort.onnx")
    if not os.path.exists(path):
        source = os.path.join(work, "encoder_ort_source.onnx")
        onnx.save(tm.bert_for_optimizer(**ENCODER_ORT), source)
        tm.ort_optimize(source, path, num_heads=ENCODER_ORT["heads"], hidden_size=ENCODER_ORT["hidden"])
    return paths + [("encoder_ort", path)]


def cases(work):
    """(title, path, feed) of every timed shape."""
    (_, encoder), (_, vit), (_, optimized) = models(work)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    text = [(f"encoder 6 x 384, batch {b} x {n} tokens", encoder, tm.text_feed(names, b, n, vocab=VOCAB))
            for b, n in TEXT_SHAPES]
    fused = [(f"encoder by ONNX Runtime's optimizer, batch {b} x {n} tokens", optimized,
              tm.text_feed(names, b, n, vocab=VOCAB)) for b, n in OPTIMIZED_SHAPES]
    return text + [("ViT-S/16, batch 1 x 224 x 224", vit, tm.image_feed(1, 224, 224))] + fused


def main():
    work, device, calls, options = bench_args(20)
    print_table(compare_cases(cases(work), device, calls, options), device, "model, shape")


def write_feeds(work):
    """The models, and the encoder's batch 1 x 128 feed as NAME.npy, for `hgr run`."""
    os.makedirs(work, exist_ok=True)
    models(work)
    for name, value in tm.text_feed(["token_type_ids"], 1, PROFILE_TOKENS, vocab=VOCAB).items():
        np.save(os.path.join(work, f"{name}.npy"), value)


def profile_table(profile_path, peak):
    """The encoder's GEMMs and attention at batch 1 x 128 from `hgr run --profile`'s
    "by op" table (profile_path), against the FMA peak (GFLOP/s, hgr_bench_peak's):
    each one's share of the device time, its FLOP (from ENCODER's sizes: per layer the
    q, k, v and output projections and the two FFN GEMMs, and the pooler's one row;
    attention's Q.K^T and P.V over every head) and its GFLOP/s."""
    seq, width, ffn, layers = PROFILE_TOKENS, ENCODER["width"], ENCODER["ffn"], ENCODER["layers"]
    flop = {"matmul": layers * (4 * 2 * seq * width * width + 2 * 2 * seq * width * ffn) + 2 * width * width,
            "attention": layers * 2 * 2 * seq * seq * width}
    ops, span = {}, None
    with open(profile_path) as f:
        lines = f.read().splitlines()
    for line in lines:
        if "device span" in line:
            span = float(line.split("device span")[1].split()[0])
    start = lines.index("by op:") + 2  # past the header
    for line in lines[start:]:
        fields = line.split()
        if len(fields) != 5 or not fields[4].endswith("%"):
            break
        ops[fields[0]] = (int(fields[1]), float(fields[2]), fields[4])
    print(f"| op at batch 1 x {PROFILE_TOKENS} | nodes | device ms | share of device time | GFLOP | GFLOP/s | "
          f"of the FMA peak ({peak:.0f} GFLOP/s) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for op in ("matmul", "attention"):
        nodes, ms, share = ops[op]
        rate = flop[op] / ms / 1e6
        print(f"| {op} | {nodes} | {ms:.2f} | {share} | {flop[op] / 1e9:.3f} | {rate:.0f} | {rate / peak:.0%} |")
    print()
    print(f"The call's device span: {span:.2f} ms.")


if __name__ == "__main__":
    if sys.argv[1] == "feeds":
        write_feeds(sys.argv[2])
    elif sys.argv[1] == "profile":
        profile_table(sys.argv[2], float(sys.argv[3]))
    else:
        main()
