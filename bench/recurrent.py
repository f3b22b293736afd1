"""Recurrent models and NMS: hgr.InferenceSession against ONNX Runtime (issue 36, section 4).

    python bench/recurrent.py WORK_DIR DEVICE [CALLS]   -> Markdown on stdout

Three models built here the way exporters write them, with seeded random weights:
- **streaming**: a voice-activity-like model called per chunk of 512 samples: a Conv
  front end (1 -> 64 channels, kernel 16, stride 8, Relu: 63 frames), two LSTM layers
  of 64 whose states (h and c of each) are inputs and outputs, the last frame's
  score (Gemm, Sigmoid). Its library's loop feeds each call's states to the next.
  Timed per chunk over CALLS chunks (default 1000; the whole loop, ended by reading
  the last outputs, over its chunks; each loop three times in turn with ONNX
  Runtime's, its median round) two ways: the states through host memory (run()
  with NumPy states, as the ONNX Runtime loop does), and, when the session has
  io_binding(), the states chained on the device (bind_ortvalue_input of the
  previous call's outputs). The last call's outputs, states included, are compared.
- **crnn**: a CRNN text recognizer on a 1 x 1 x 64 x 256 image: three Conv + Relu +
  MaxPool blocks (32, 64, 128 channels), the columns as 64 time steps of 1024
  features, a bidirectional LSTM of 256, a Gemm to 37 classes, Softmax. Timed per call.
- **detector NMS**: the end of a YOLO-style detector on its head's output [1, 84,
  8400] (boxes as centre and size, then 80 class scores): the boxes and the scores
  sliced out, NonMaxSuppression (at most 100 per class, IoU 0.45, score 0.25;
  center_point_box 1). hgr runs it in two stages: the slices and the selection, then,
  the count read on the host, the selected rows. And the same NonMaxSuppression
  alone, its boxes and scores given. The head's output is seeded: 40
  objects, each a cluster of boxes scoring one class high, over low noise.
The crnn's and the detector's figures are the median of the calls after 10 warm-up calls; ONNX Runtime's CPU
provider with intra-op threads = cores, in the same process. Outputs are compared
(largest difference) so a fast wrong answer shows.
"""
import os
import statistics
import sys
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from peers import largest_difference  # bench/peers.py, beside this file
from shapes import _i64, _save  # bench/shapes.py

RNG = np.random.default_rng(36)
HIDDEN = 64


def _param(name, *shape, scale=0.1):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def _lstm_params(prefix, inputs, hidden, directions=1):
    return [_param(f"{prefix}_w", directions, 4 * hidden, inputs), _param(f"{prefix}_r", directions, 4 * hidden, hidden),
            _param(f"{prefix}_b", directions, 8 * hidden)]


def streaming(work):
    """x [1, 512], h1 c1 h2 c2 [1, 1, 64] -> score [1, 1], the four states."""
    path = os.path.join(work, "streaming.onnx")
    if os.path.exists(path):
        return path
    state = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 1, HIDDEN])
    nodes = [
        helper.make_node("Reshape", ["x", "shape_1_1_512"], ["x3"]),
        helper.make_node("Conv", ["x3", "conv_w", "conv_b"], ["c"], kernel_shape=[16], strides=[8]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Transpose", ["r"], ["frames"], perm=[2, 0, 1]),  # [T, 1, 64]
        helper.make_node("LSTM", ["frames", "l1_w", "l1_r", "l1_b", "", "h1", "c1"], ["y1", "h1_out", "c1_out"],
                         hidden_size=HIDDEN),
        helper.make_node("Squeeze", ["y1", "axis_1"], ["y1s"]),  # [T, 1, 64]
        helper.make_node("LSTM", ["y1s", "l2_w", "l2_r", "l2_b", "", "h2", "c2"], ["y2", "h2_out", "c2_out"],
                         hidden_size=HIDDEN),
        helper.make_node("Reshape", ["h2_out", "shape_1_64"], ["last"]),
        helper.make_node("Gemm", ["last", "fc_w", "fc_b"], ["logit"], transB=1),
        helper.make_node("Sigmoid", ["logit"], ["score"]),
    ]
    inits = [_i64("shape_1_1_512", [1, 1, 512]), _param("conv_w", HIDDEN, 1, 16, scale=0.3),
             _param("conv_b", HIDDEN), *_lstm_params("l1", HIDDEN, HIDDEN), *_lstm_params("l2", HIDDEN, HIDDEN),
             _i64("axis_1", [1]), _i64("shape_1_64", [1, HIDDEN]), _param("fc_w", 1, HIDDEN), _param("fc_b", 1)]
    graph = helper.make_graph(
        nodes, "streaming",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 512]), state("h1"), state("c1"), state("h2"),
         state("c2")],
        [helper.make_tensor_value_info("score", TensorProto.FLOAT, [1, 1]), state("h1_out"), state("c1_out"),
         state("h2_out"), state("c2_out")],
        inits)
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)


def crnn(work):
    """image [1, 1, 64, 256] -> probabilities [64, 37]."""
    path = os.path.join(work, "crnn.onnx")
    if os.path.exists(path):
        return path
    nodes, inits, x, channels = [], [], "image", 1
    for i, (out, pool) in enumerate([(32, [2, 2]), (64, [2, 2]), (128, [2, 1])]):
        inits += [_param(f"k{i}", out, channels, 3, 3, scale=0.2), _param(f"kb{i}", out)]
        nodes += [helper.make_node("Conv", [x, f"k{i}", f"kb{i}"], [f"conv{i}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"conv{i}"], [f"relu{i}"]),
                  helper.make_node("MaxPool", [f"relu{i}"], [f"pool{i}"], kernel_shape=pool, strides=pool)]
        x, channels = f"pool{i}", out
    # [1, 128, 8, 64] -> [64, 1, 1024]: each column a time step
    nodes += [helper.make_node("Transpose", [x], ["cols"], perm=[3, 0, 1, 2]),
              helper.make_node("Reshape", ["cols", "shape_seq"], ["seq"]),
              helper.make_node("LSTM", ["seq", "bl_w", "bl_r", "bl_b"], ["y"], hidden_size=256,
                               direction="bidirectional"),
              helper.make_node("Transpose", ["y"], ["yt"], perm=[0, 2, 1, 3]),  # [64, 1, 2, 256]
              helper.make_node("Reshape", ["yt", "shape_feat"], ["feat"]),
              helper.make_node("Gemm", ["feat", "cls_w", "cls_b"], ["logits"], transB=1),
              helper.make_node("Softmax", ["logits"], ["probs"], axis=1)]
    inits += [_i64("shape_seq", [64, 1, 1024]), *_lstm_params("bl", 1024, 256, directions=2),
              _i64("shape_feat", [64, 512]), _param("cls_w", 37, 512), _param("cls_b", 37)]
    graph = helper.make_graph(nodes, "crnn", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 64, 256])],
                              [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [64, 37])], inits)
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)


def detector(work):
    """pred [1, 84, 8400] -> selected [n, 3] (batch, class, box)."""
    path = os.path.join(work, "detector.onnx")
    if os.path.exists(path):
        return path
    nodes = [helper.make_node("Slice", ["pred", "start_0", "start_4", "axis_1"], ["xywh"]),
             helper.make_node("Transpose", ["xywh"], ["boxes"], perm=[0, 2, 1]),  # [1, 8400, 4]
             helper.make_node("Slice", ["pred", "start_4", "end_84", "axis_1"], ["scores"]),  # [1, 80, 8400]
             helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score_min"], ["selected"],
                              center_point_box=1)]
    inits = [_i64("start_0", [0]), _i64("start_4", [4]), _i64("end_84", [84]), _i64("axis_1", [1]),
             _i64("max_out", [100]), numpy_helper.from_array(np.array([0.45], np.float32), "iou"),
             numpy_helper.from_array(np.array([0.25], np.float32), "score_min")]
    graph = helper.make_graph(nodes, "detector", [helper.make_tensor_value_info("pred", TensorProto.FLOAT, [1, 84, 8400])],
                              [helper.make_tensor_value_info("selected", TensorProto.INT64, ["selected", 3])], inits)
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def nms_alone(work):
    """boxes [1, 8400, 4], scores [1, 80, 8400] -> selected [n, 3]: the detector's
    NonMaxSuppression without the slices before it."""
    path = os.path.join(work, "nms.onnx")
    if os.path.exists(path):
        return path
    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score_min"], ["selected"],
                              center_point_box=1)]
    inits = [_i64("max_out", [100]), numpy_helper.from_array(np.array([0.45], np.float32), "iou"),
             numpy_helper.from_array(np.array([0.25], np.float32), "score_min")]
    graph = helper.make_graph(nodes, "nms", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 8400, 4]),
                                             helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 80, 8400])],
                              [helper.make_tensor_value_info("selected", TensorProto.INT64, ["selected", 3])], inits)
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def detector_output():
    """A head's output: 40 objects of 1-4 classes, each a cluster of ~50 boxes, over noise."""
    pred = np.zeros((84, 8400), np.float32)
    pred[:2] = RNG.random((2, 8400)) * 640
    pred[2:4] = RNG.random((2, 8400)) * 60 + 10
    pred[4:] = RNG.random((80, 8400)) * 0.2
    for _ in range(40):
        members = RNG.choice(8400, 50, replace=False)
        centre, size = RNG.random(2) * 600, RNG.random(2) * 100 + 20
        pred[:2, members] = centre[:, None] + RNG.standard_normal((2, 50)) * 4
        pred[2:4, members] = size[:, None] + RNG.standard_normal((2, 50)) * 4
        for cls in RNG.choice(80, RNG.integers(1, 5), replace=False):
            pred[4 + cls, members] = 0.3 + RNG.random(50) * 0.7
    return pred[None]


def _median_ms(times):
    return statistics.median(times) * 1e3


def time_calls(sessions, feeds, calls):
    """Per session (name -> session): the median call's ms after 10 warm-up calls, and
    the last outputs."""
    results = {}
    for name, s in sessions.items():
        times = []
        for i in range(10 + max(calls // 20, 20)):
            start = time.perf_counter()
            outputs = s.run(None, feeds)
            if i >= 10:
                times.append(time.perf_counter() - start)
        results[name] = (_median_ms(times), outputs[0])
    return results


def time_streaming(session, chunks, states, use_binding=False):
    """Seconds per chunk over the chunks after 10 warm-up chunks (the whole loop,
    ended by reading the last outputs, divided by its chunks: a run that returns
    before it completes is paid for when its outputs are read), and the last
    outputs (score and states), the states through host memory or (use_binding)
    chained on the device."""
    names = ["h1", "c1", "h2", "c2"]
    binding = session.io_binding() if use_binding else None
    if binding is not None:
        for name, value in zip(names, states):
            binding.bind_cpu_input(name, value)
    outputs = None
    for i, chunk in enumerate(chunks):
        if i == 10:
            start = time.perf_counter()
        if binding is None:
            outputs = session.run(None, {"x": chunk, **dict(zip(names, states))})
            states = outputs[1:]
            continue
        binding.bind_cpu_input("x", chunk)
        for name in ["score", "h1_out", "c1_out", "h2_out", "c2_out"]:
            binding.bind_output(name)
        session.run_with_iobinding(binding)
        outputs = binding.get_outputs()
        for name, value in zip(names, outputs[1:]):
            binding.bind_ortvalue_input(name, value)
    if binding is not None:
        outputs = [value.numpy() for value in outputs]
    seconds = (time.perf_counter() - start) / (len(chunks) - 10)
    return seconds, outputs


STREAMING_ROUNDS = 3


def _median_round(results):
    """The round (seconds, outputs) of median seconds."""
    return sorted(results, key=lambda r: r[0])[len(results) // 2]


def bench_args(default_calls):
    """WORK_DIR (made), DEVICE and CALLS from the command line, and ONNX Runtime's
    session options for the CPU provider with intra-op threads = cores."""
    import onnxruntime as ort
    work, device = sys.argv[1], sys.argv[2]
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else default_calls
    os.makedirs(work, exist_ok=True)
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    return work, device, calls, options


def main():
    import hgr
    import onnxruntime as ort
    work, device, calls, options = bench_args(1000)
    rows = []

    path = streaming(work)
    chunks = [RNG.standard_normal((1, 512)).astype(np.float32) for _ in range(calls + 10)]
    zeros = [np.zeros((1, 1, HIDDEN), np.float32) for _ in range(4)]
    theirs = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    session = hgr.InferenceSession(path, providers=[device])
    # the loops in turn, STREAMING_ROUNDS times: each one's median round (other load
    # on the machine moves a single loop by 20 %)
    loops = {"ort": lambda: time_streaming(theirs, chunks, zeros),
             "host": lambda: time_streaming(session, chunks, zeros)}
    if hasattr(session, "io_binding"):
        loops["binding"] = lambda: time_streaming(session, chunks, zeros, use_binding=True)
    rounds = {name: [] for name in loops}
    for _ in range(STREAMING_ROUNDS):
        for name, loop in loops.items():
            rounds[name].append(loop())
    (ort_seconds, ort_outputs), (hgr_seconds, hgr_outputs) = _median_round(rounds["ort"]), _median_round(rounds["host"])
    rows.append((f"streaming, per 512-sample chunk over {calls}, states through host memory", hgr_seconds * 1e3,
                 ort_seconds * 1e3, largest_difference(hgr_outputs, ort_outputs)))
    if "binding" in rounds:
        bound_seconds, bound_outputs = _median_round(rounds["binding"])
        rows.append((f"streaming, per chunk over {calls}, states chained on the device (io_binding)",
                     bound_seconds * 1e3, ort_seconds * 1e3, largest_difference(bound_outputs, ort_outputs)))

    pred = detector_output()
    for title, path, feeds in [
            ("crnn (CNN + bidirectional LSTM of 256), 1 x 1 x 64 x 256", crnn(work),
             {"image": RNG.standard_normal((1, 1, 64, 256)).astype(np.float32)}),
            ("detector NMS over 8400 boxes of 80 classes (two stages in hgr)", detector(work), {"pred": pred}),
            ("the same NMS alone (boxes and scores given)", nms_alone(work),
             {"boxes": np.ascontiguousarray(pred[:, :4].transpose(0, 2, 1)),
              "scores": np.ascontiguousarray(pred[:, 4:])})]:
        results = time_calls({"hgr": hgr.InferenceSession(path, providers=[device]),
                              "ort": ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])},
                             feeds, calls)
        (hgr_ms, hgr_out), (ort_ms, ort_out) = results["hgr"], results["ort"]
        difference = (float(np.max(np.abs(hgr_out - ort_out))) if hgr_out.shape == ort_out.shape
                      else float("inf"))
        rows.append((f"{title}{f', {len(ort_out)} selected' if 'NMS' in title else ''}", hgr_ms, ort_ms,
                     difference))

    print(f"| model | hgr ({device}) ms | ONNX Runtime {ort.__version__} ms | hgr / ONNX Runtime | largest difference |")
    print("|---|---:|---:|---:|---:|")
    for name, h, o, diff in rows:
        print(f"| {name} | {h:.3f} | {o:.3f} | **{h / o:.2f}** | {diff:.1e} |")


if __name__ == "__main__":
    main()
