"""Models that decide at run time (docs/onnx.md, "Decisions at run time"), against
ONNX Runtime: an If on a condition computed from the data, NonZero, Compress,
Unique, NonMaxSuppression, a TopK whose k the data gives. hgr runs them in stages,
reading each decision on the host; the session does so through the model's run."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import hgr


def _save(tmp_path, name, nodes, inputs, outputs, initializers=(), opset=13):
    graph = h.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8
    path = str(tmp_path / f"{name}.onnx")
    onnx.save(model, path)
    return path


def _same(path, feeds_list, device):
    ours = hgr.InferenceSession(path, providers=[device])
    theirs = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for feeds in feeds_list:
        got = ours.run(None, feeds)
        want = theirs.run(None, feeds)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    return ours


def _scalar(name, value, dtype=T.FLOAT):
    return h.make_tensor(name, dtype, [], [value])


def test_if_on_the_data_takes_branches_of_other_shapes(tmp_path, device):
    then_g = h.make_graph([h.make_node("Mul", ["x", "two"], ["t"])], "then", [],
                          [h.make_tensor_value_info("t", T.FLOAT, None)])
    else_g = h.make_graph([h.make_node("Concat", ["x", "x"], ["e"], axis=1)], "else", [],
                          [h.make_tensor_value_info("e", T.FLOAT, None)])
    nodes = [h.make_node("Relu", ["x0"], ["x"]),
             h.make_node("ReduceMean", ["x0"], ["m"], keepdims=0),
             h.make_node("Greater", ["m", "zero"], ["c"]),
             h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
             h.make_node("Add", ["y", "one"], ["z"])]
    path = _save(tmp_path, "data_if", nodes, [h.make_tensor_value_info("x0", T.FLOAT, ["n", 64])],
                 [h.make_tensor_value_info("z", T.FLOAT, None)],
                 [_scalar("zero", 0.0), _scalar("one", 1.0), _scalar("two", 2.0)])
    rng = np.random.default_rng(1)
    feeds = [{"x0": (rng.standard_normal((n, 64)) + shift).astype(np.float32)}
             for n, shift in [(1, 1), (1, -1), (2, 1), (1, 1), (2, -1)]]
    session = _same(path, feeds, device)
    report = session._live().report()
    assert report["decisions"] == len(feeds) and report["stage_runs"] == len(feeds)
    # the first stage at two shapes, then-stage and else-stage at each: no more
    assert report["created"] == 6
    future = session.run_async(None, feeds[0])  # stages wait on the host: done on return
    assert future.done()
    np.testing.assert_allclose(future.result()[0], session.run(None, feeds[0])[0])


def test_a_while_loop_on_the_data_reads_its_condition_once_per_iteration(tmp_path, device):
    # while sum(s) < 50: s = 1.5 s + 0.1, each s stacked; then y = 2 s
    body = h.make_graph([h.make_node("Mul", ["s_in", "k"], ["m"]), h.make_node("Add", ["m", "b"], ["s_out"]),
                         h.make_node("ReduceSum", ["s_out"], ["total"], keepdims=0),
                         h.make_node("Less", ["total", "limit"], ["cond_out"]),
                         h.make_node("Identity", ["s_out"], ["trace_out"])], "body",
                        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
                         h.make_tensor_value_info("s_in", T.FLOAT, [3])],
                        [h.make_tensor_value_info("cond_out", T.BOOL, []),
                         h.make_tensor_value_info("s_out", T.FLOAT, [3]),
                         h.make_tensor_value_info("trace_out", T.FLOAT, [3])])
    nodes = [h.make_node("Relu", ["x"], ["s0"]),
             h.make_node("Loop", ["", "go", "s0"], ["s_final", "trace"], body=body),
             h.make_node("Mul", ["s_final", "two"], ["y"])]
    path = _save(tmp_path, "while", nodes, [h.make_tensor_value_info("x", T.FLOAT, [3])],
                 [h.make_tensor_value_info("y", T.FLOAT, [3]), h.make_tensor_value_info("trace", T.FLOAT, None)],
                 [h.make_tensor("go", T.BOOL, [], [True]), _scalar("k", 1.5), _scalar("b", 0.1),
                  _scalar("limit", 50.0), _scalar("two", 2.0)])
    xs = [[1, 2, 3], [0.5, 0.5, 0.5], [10, 20, 30], [1, 2, 3], [0, 0, 0.01]]  # 6, 8, 1, 6 and 11 iterations
    session = _same(path, [{"x": np.array(x, np.float32)} for x in xs], device)
    report = session._live().report()
    assert report["decisions"] == 6 + 8 + 1 + 6 + 11  # one per iteration


def test_an_if_on_the_data_inside_a_loop_body_selects_on_the_device(tmp_path, device):
    # 4 iterations of s = If(sum(s) > 0) { 2 s } else { s - 1 }: selected, not staged
    then_g = h.make_graph([h.make_node("Mul", ["s_in", "two"], ["t"])], "then", [],
                          [h.make_tensor_value_info("t", T.FLOAT, [3])])
    else_g = h.make_graph([h.make_node("Sub", ["s_in", "one"], ["e"])], "else", [],
                          [h.make_tensor_value_info("e", T.FLOAT, [3])])
    body = h.make_graph([h.make_node("Identity", ["cond_in"], ["cond_out"]),
                         h.make_node("ReduceSum", ["s_in"], ["total"], keepdims=0),
                         h.make_node("Greater", ["total", "zero"], ["c"]),
                         h.make_node("If", ["c"], ["s_out"], then_branch=then_g, else_branch=else_g)], "body",
                        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
                         h.make_tensor_value_info("s_in", T.FLOAT, [3])],
                        [h.make_tensor_value_info("cond_out", T.BOOL, []),
                         h.make_tensor_value_info("s_out", T.FLOAT, [3])])
    nodes = [h.make_node("Loop", ["four", "go", "x"], ["y"], body=body)]
    path = _save(tmp_path, "if_in_loop", nodes, [h.make_tensor_value_info("x", T.FLOAT, [3])],
                 [h.make_tensor_value_info("y", T.FLOAT, [3])],
                 [h.make_tensor("four", T.INT64, [], [4]), h.make_tensor("go", T.BOOL, [], [True]),
                  _scalar("zero", 0.0), _scalar("one", 1.0), _scalar("two", 2.0)])
    session = _same(path, [{"x": np.array(x, np.float32)} for x in ([1, -2, 2], [0, -2, 1], [3, -1, -1])], device)
    assert session._live().report()["decisions"] == 0


def test_nonzero_and_a_topk_of_k_from_the_data_with_empty_results(tmp_path, device):
    nodes = [h.make_node("Greater", ["x", "half"], ["mask"]),
             h.make_node("NonZero", ["mask"], ["idx"]),
             h.make_node("Transpose", ["idx"], ["pairs"]),
             h.make_node("Cast", ["mask"], ["ones"], to=T.INT64),
             h.make_node("ReduceSum", ["ones"], ["count"], keepdims=0),
             h.make_node("Reshape", ["count", "shape1"], ["k"]),
             h.make_node("Flatten", ["x"], ["flat"], axis=0),
             h.make_node("TopK", ["flat", "k"], ["values", "indices"])]
    path = _save(tmp_path, "nonzero_topk", nodes, [h.make_tensor_value_info("x", T.FLOAT, [3, 5])],
                 [h.make_tensor_value_info(n, t, None) for n, t in
                  [("pairs", T.INT64), ("values", T.FLOAT), ("indices", T.INT64)]],
                 [_scalar("half", 0.5), h.make_tensor("shape1", T.INT64, [1], [1])])
    rng = np.random.default_rng(2)
    feeds = [{"x": rng.random((3, 5), dtype=np.float32)} for _ in range(3)]
    feeds.append({"x": np.zeros((3, 5), np.float32)})  # nothing selected: [0, 2] and [1, 0]
    feeds.append({"x": np.ones((3, 5), np.float32)})
    _same(path, feeds, device)


def test_compress_along_an_axis_and_flattened(tmp_path, device):
    nodes = [h.make_node("ReduceMax", ["x"], ["rowmax"], axes=[1], keepdims=0),
             h.make_node("Greater", ["rowmax", "half"], ["keep"]),
             h.make_node("Compress", ["x", "keep"], ["rows"], axis=0),
             h.make_node("Greater", ["x", "half"], ["cells"]),
             h.make_node("Flatten", ["cells"], ["cells2"], axis=0),
             h.make_node("Squeeze", ["cells2", "zero_axis"], ["flags"]),
             h.make_node("Compress", ["x", "flags"], ["picked"])]
    path = _save(tmp_path, "compress", nodes, [h.make_tensor_value_info("x", T.FLOAT, [6, 4])],
                 [h.make_tensor_value_info("rows", T.FLOAT, None), h.make_tensor_value_info("picked", T.FLOAT, None)],
                 [_scalar("half", 0.8), h.make_tensor("zero_axis", T.INT64, [1], [0])])
    rng = np.random.default_rng(3)
    _same(path, [{"x": rng.random((6, 4), dtype=np.float32)} for _ in range(3)] +
          [{"x": np.zeros((6, 4), np.float32)}], device)


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("sorted_", [0, 1])
def test_unique_of_computed_values(tmp_path, axis, sorted_, device):
    attrs = {"sorted": sorted_}
    if axis is not None:
        attrs["axis"] = axis
    nodes = [h.make_node("Floor", ["x"], ["f"]),
             h.make_node("Unique", ["f"], ["y", "first", "inverse", "counts"], **attrs)]
    path = _save(tmp_path, "unique", nodes, [h.make_tensor_value_info("x", T.FLOAT, [5, 3])],
                 [h.make_tensor_value_info(n, t, None) for n, t in
                  [("y", T.FLOAT), ("first", T.INT64), ("inverse", T.INT64), ("counts", T.INT64)]])
    rng = np.random.default_rng(4)
    _same(path, [{"x": (rng.random((5, 3)) * 3).astype(np.float32)} for _ in range(3)], device)


@pytest.mark.parametrize("axis", [None, 0])
def test_unique_of_a_float16_input(tmp_path, axis, device):
    # float16 is computed widened (onnx_widen.c); the stage after the cut resumes past
    # the Unique, whose input it does not carry: the widening must not read it
    attrs = {} if axis is None else {"axis": axis}
    nodes = [h.make_node("Unique", ["x"], ["y", "first", "inverse", "counts"], **attrs)]
    path = _save(tmp_path, "unique16", nodes, [h.make_tensor_value_info("x", T.FLOAT16, [5, 3])],
                 [h.make_tensor_value_info(n, t, None) for n, t in
                  [("y", T.FLOAT16), ("first", T.INT64), ("inverse", T.INT64), ("counts", T.INT64)]])
    rng = np.random.default_rng(6)
    _same(path, [{"x": np.floor(rng.random((5, 3)) * 3).astype(np.float16)} for _ in range(3)], device)


@pytest.mark.parametrize("center", [0, 1])
def test_non_max_suppression_after_a_score_head(tmp_path, center, device):
    # scores = Sigmoid(logits): thresholds as initializers, the selection from the data
    nodes = [h.make_node("Sigmoid", ["logits"], ["scores"]),
             h.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score_min"], ["selected"],
                         center_point_box=center),
             h.make_node("Shape", ["selected"], ["shape"])]
    path = _save(tmp_path, "nms", nodes,
                 [h.make_tensor_value_info("boxes", T.FLOAT, [2, 200, 4]),
                  h.make_tensor_value_info("logits", T.FLOAT, [2, 3, 200])],
                 [h.make_tensor_value_info("selected", T.INT64, None), h.make_tensor_value_info("shape", T.INT64, None)],
                 [h.make_tensor("max_out", T.INT64, [1], [20]), h.make_tensor("iou", T.FLOAT, [1], [0.5]),
                  h.make_tensor("score_min", T.FLOAT, [1], [0.3])])
    rng = np.random.default_rng(5)

    def feeds(logit_shift):
        xy = rng.random((2, 200, 2), dtype=np.float32) * 100
        wh = rng.random((2, 200, 2), dtype=np.float32) * 30 + 1
        boxes = np.concatenate([xy, wh], -1) if center else np.concatenate([xy, xy + wh], -1)
        return {"boxes": boxes.astype(np.float32),
                "logits": (rng.standard_normal((2, 3, 200)) + logit_shift).astype(np.float32)}

    _same(path, [feeds(0), feeds(0), feeds(-20)], device)  # the last selects nothing


def test_a_model_that_decides_has_no_one_executor_and_runs_with_iobinding(tmp_path, device):
    nodes = [h.make_node("Greater", ["x", "zero"], ["m"]), h.make_node("NonZero", ["m"], ["idx"])]
    path = _save(tmp_path, "refuse", nodes, [h.make_tensor_value_info("x", T.FLOAT, [4])],
                 [h.make_tensor_value_info("idx", T.INT64, None)], [_scalar("zero", 0.0)])
    with open(path, "rb") as f:
        model = hgr._hgr.Model(f.read(), devices=[device])
    with pytest.raises(hgr.FailedPreconditionError, match="decides at run time .*NonZero"):
        model.specialize([np.ones(4, np.float32)])
    assert model.run([np.array([1, 0, 2, 0], np.float32)])[0].tolist() == [[0, 2]]
    session = hgr.InferenceSession(path, providers=[device])
    binding = session.io_binding()
    # IOBinding runs it too, waited for, its values through the host
    binding.bind_cpu_input("x", np.array([0, 3, 0, 1], np.float32))
    binding.bind_output("idx")
    session.run_with_iobinding(binding)
    (idx,) = binding.get_outputs()
    assert idx.device_name() == "cpu" and idx.numpy().tolist() == [[1, 3]]
    binding.bind_ortvalue_input("x", hgr.OrtValue.ortvalue_from_numpy(np.array([5, 0, 0, 0], np.float32)))
    session.run_with_iobinding(binding)
    assert binding.copy_outputs_to_cpu()[0].tolist() == [[0]]
    target = np.zeros((1, 1), np.int64)
    binding.bind_output("idx", "cpu", 0, np.int64, [1, 1], target.ctypes.data)
    session.run_with_iobinding(binding)
    assert target.tolist() == [[0]]
    binding.bind_cpu_input("x", np.array([1, 2, 0, 0], np.float32))  # two indices: the memory does not fit
    with pytest.raises(hgr.InvalidArgumentError, match=r"output 'idx' is int64 \[1, 2\] in this run"):
        session.run_with_iobinding(binding)


def test_a_reshape_to_a_shapes_product_folds_at_load(tmp_path, device):
    """tf2onnx writes attention's head split as a Reshape to [ReduceProd of a Shape's
    slice, ...]: the reduction of the constant shape folds at load (as Shape, Gather
    and Concat do), so the model runs as one executor, no decision read at run time
    (g2p-id's BERT ran 10 stages a call before)."""
    nodes = [h.make_node("Shape", ["x"], ["shape"]),
             h.make_node("Gather", ["shape", "leading"], ["dims"]),
             h.make_node("ReduceProd", ["dims"], ["rows"], keepdims=1),
             h.make_node("Concat", ["rows", "last"], ["target"], axis=0),
             h.make_node("Reshape", ["x", "target"], ["y"])]
    path = _save(tmp_path, "reshape_prod", nodes, [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4, 5])],
                 [h.make_tensor_value_info("y", T.FLOAT, [24, 5])],
                 [h.make_tensor("leading", T.INT64, [3], [0, 1, 2]), h.make_tensor("last", T.INT64, [1], [5])])
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    ours = _same(path, [{"x": x}], device)
    report = ours._live().report()
    assert report["decisions"] == 0 and report["stage_runs"] == 0
    assert ours.load_report["folded"] >= 3


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("dtype,opset", [(T.INT64, 13), (T.INT32, 18)])
@pytest.mark.parametrize("axes,keepdims", [(None, 1), ([1], 0), ([0, 2], 1), ([-1], 0)])
def test_integer_constant_reductions_fold_as_onnx_runtime_computes_them(tmp_path, op, dtype, opset, axes, keepdims):
    """Each integer reduction of a constant, over any axes, kept or not, at the opset
    where axes are an attr and where they are input 1, computed at load, as ONNX
    Runtime computes it at run time (values whose products fit: ONNX leaves overflow
    to the runtime, and ONNX Runtime saturates where hgr wraps)."""
    rng = np.random.default_rng(len(op) + opset)
    table = rng.integers(1, 4, (3, 4, 2)) * rng.choice([-1, 1], (3, 4, 2))
    table = table.astype(np.int64 if dtype == T.INT64 else np.int32)
    inputs, initializers, attrs = ["table"], [onnx.numpy_helper.from_array(table, "table")], {"keepdims": keepdims}
    if axes is not None and (opset >= 18 or op == "ReduceSum"):
        inputs.append("axes")
        initializers.append(h.make_tensor("axes", T.INT64, [len(axes)], axes))
    elif axes is not None:
        attrs["axes"] = axes
    nodes = [h.make_node(op, inputs, ["reduced"], **attrs),
             h.make_node("Cast", ["reduced"], ["reduced_f"], to=T.FLOAT),
             h.make_node("Add", ["x", "reduced_f"], ["y"])]
    shape = list(np.sum(table, axis=None if axes is None else tuple(axes), keepdims=bool(keepdims)).shape)
    path = _save(tmp_path, "reduce", nodes, [h.make_tensor_value_info("x", T.FLOAT, shape)],
                 [h.make_tensor_value_info("y", T.FLOAT, shape)], initializers, opset=opset)
    ours = _same(path, [{"x": np.zeros(shape, np.float32)}], "pocl:0")
    assert ours.load_report["folded"] >= 1
