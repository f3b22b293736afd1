"""ONNX Runtime's contrib ops (domain com.microsoft) that its transformer optimizer
writes, through hgr's ONNX importer against ONNX Runtime on random data at several
shapes: Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd, FusedMatMul, SkipLayerNormalization,
SkipSimplifiedLayerNormalization, EmbedLayerNormalization, Attention,
MultiHeadAttention and RotaryEmbedding (padding masks, causal masks, several batch
sizes and sequence lengths through one session); models written by ONNX Runtime's
transformer optimizer; and the refusal, by name and domain, of the ops of that
domain hgr does not read and of the forms of the ops above that it does not."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import hgr
import transformer_models as tm

MS = "com.microsoft"
SHAPES = [(2, 5, 16), (1, 7, 64), (3, 33)]


def _save(tmp_path, nodes, inputs, outputs, initializers=()):
    graph = h.make_graph(nodes, "contrib", [h.make_tensor_value_info(n, T.FLOAT, list(s)) for n, s in inputs],
                         [h.make_tensor_value_info(n, T.FLOAT, None) for n in outputs], list(initializers))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(MS, 1)])
    model.ir_version = 8
    path = str(tmp_path / "contrib.onnx")
    onnx.save(model, path)
    return path


def _compare(path, feeds, device, rtol=1e-4, atol=1e-5):
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
    got = hgr.InferenceSession(path, providers=[device]).run(None, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def _weight(rng, name, shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op,attrs", [("Gelu", {}), ("QuickGelu", {}), ("QuickGelu", {"alpha": 1.0}),
                                      ("QuickGelu", {"alpha": -0.5}), ("FastGelu", {})])
def test_unary_gelus_match_onnx_runtime(tmp_path, device, shape, op, attrs):
    rng = np.random.default_rng(len(shape) * 7 + shape[-1])
    # A Relu after it: the contrib op's ops fuse with their neighbours in one kernel
    path = _save(tmp_path, [h.make_node(op, ["x"], ["g"], domain=MS, **attrs), h.make_node("Abs", ["g"], ["y"])],
                 [("x", shape)], ["y"])
    _compare(path, {"x": (rng.standard_normal(shape) * 3).astype(np.float32)}, device)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op", ["FastGelu", "BiasGelu"])
@pytest.mark.parametrize("bias_is_input", [False, True])
def test_gelus_with_bias_match_onnx_runtime(tmp_path, device, shape, op, bias_is_input):
    rng = np.random.default_rng(shape[-1])
    hidden = shape[-1]
    b = rng.standard_normal(hidden).astype(np.float32)
    inputs = [("x", shape)] + ([("b", (hidden,))] if bias_is_input else [])
    inits = [] if bias_is_input else [numpy_helper.from_array(b, "b")]
    path = _save(tmp_path, [h.make_node(op, ["x", "b"], ["y"], domain=MS)], inputs, ["y"], inits)
    feeds = {"x": (rng.standard_normal(shape) * 2).astype(np.float32)}
    if bias_is_input:
        feeds["b"] = b
    _compare(path, feeds, device)


@pytest.mark.parametrize("shape", [(2, 5, 16), (1, 9, 40)])
def test_bias_add_matches_numpy(tmp_path, device, shape):
    """BiasAdd: ONNX Runtime has it on CUDA only, so NumPy is the reference."""
    rng = np.random.default_rng(shape[1])
    b = rng.standard_normal(shape[-1]).astype(np.float32)
    path = _save(tmp_path, [h.make_node("BiasAdd", ["x", "b", "skip"], ["y"], domain=MS)],
                 [("x", shape), ("skip", shape)], ["y"], [numpy_helper.from_array(b, "b")])
    x = rng.standard_normal(shape).astype(np.float32)
    skip = rng.standard_normal(shape).astype(np.float32)
    (got,) = hgr.InferenceSession(path, providers=[device]).run(None, {"x": x, "skip": skip})
    np.testing.assert_allclose(got, x + b + skip, rtol=1e-5, atol=1e-6)


# (simplified, optional inputs): SkipSimplifiedLayerNormalization has no beta
@pytest.mark.parametrize("a_shape,b_shape,attrs", [
    ((2, 5, 16), (2, 16, 7), {"alpha": 0.25}), ((2, 16, 5), (16, 7), {"transA": 1}),
    ((3, 5, 16), (3, 7, 16), {"transB": 1, "alpha": 0.125}), ((16, 5), (7, 16), {"transA": 1, "transB": 1}),
    ((2, 3, 4, 8), (2, 3, 6, 8), {"transB": 1, "alpha": 0.5})])
def test_fused_matmul_matches_onnx_runtime(tmp_path, device, a_shape, b_shape, attrs):
    path = _save(tmp_path, [h.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, **attrs)],
                 [("a", a_shape), ("b", b_shape)], ["y"])
    rng = np.random.default_rng(7)
    _compare(path, {"a": rng.standard_normal(a_shape).astype(np.float32),
                    "b": rng.standard_normal(b_shape).astype(np.float32)}, device)


def test_fused_matmul_refuses_batch_transposes_by_name(tmp_path):
    path = _save(tmp_path, [h.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, transBatchA=1)],
                 [("a", (2, 3, 4)), ("b", (3, 4, 5))], ["y"])
    with pytest.raises(hgr.UnimplementedError, match="attr 'transBatchA' = 1; hgr takes 0"):
        hgr.InferenceSession(path, providers=["pocl:0"])


@pytest.mark.parametrize("simplified,optional", [(False, "none"), (False, "beta"), (False, "bias"), (False, "both"),
                                                 (True, "none"), (True, "bias")])
@pytest.mark.parametrize("shape,skip_shape", [((2, 5, 16), (2, 5, 16)), ((1, 7, 64), (1, 7, 64)),
                                              ((3, 4, 48), (1, 4, 48)), ((2, 6, 32), (6, 32)),
                                              ((9, 40), (9, 40))])
@pytest.mark.parametrize("with_sum", [False, True])
def test_skip_layer_norms_match_onnx_runtime(tmp_path, device, simplified, shape, skip_shape, optional, with_sum):
    rng = np.random.default_rng(shape[-1] + len(skip_shape))
    hidden = shape[-1]
    inits = [_weight(rng, "gamma", (hidden,))]
    names = ["x", "skip", "gamma"]
    if not simplified:
        names.append("beta" if optional in ("beta", "both") else "")
        if optional in ("beta", "both"):
            inits.append(_weight(rng, "beta", (hidden,)))
    if optional in ("bias", "both"):
        names.append("bias")
        inits.append(_weight(rng, "bias", (hidden,)))
    while names[-1] == "":
        names.pop()
    outputs = ["y", "", "", "sum"] if with_sum else ["y"]
    op = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
    path = _save(tmp_path, [h.make_node(op, names, outputs, domain=MS, epsilon=1e-5)],
                 [("x", shape), ("skip", skip_shape)], [o for o in outputs if o], inits)
    feeds = {"x": (rng.standard_normal(shape) * 2 + 1).astype(np.float32),
             "skip": rng.standard_normal(skip_shape).astype(np.float32)}
    _compare(path, feeds, device)


def test_skip_layer_norm_default_epsilon_matches_onnx_runtime(tmp_path):
    rng = np.random.default_rng(5)
    path = _save(tmp_path, [h.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta"], ["y"], domain=MS)],
                 [("x", (2, 3, 24)), ("skip", (2, 3, 24))], ["y"],
                 [_weight(rng, "gamma", (24,)), _weight(rng, "beta", (24,))])
    feeds = {k: rng.standard_normal((2, 3, 24)).astype(np.float32) for k in ("x", "skip")}
    _compare(path, feeds, "pocl:0")


def test_skip_layer_norm_refuses_a_used_mean_by_name(tmp_path):
    rng = np.random.default_rng(6)
    path = _save(tmp_path, [h.make_node("SkipLayerNormalization", ["x", "skip", "gamma"], ["y", "mean"], domain=MS)],
                 [("x", (2, 3, 8)), ("skip", (2, 3, 8))], ["y", "mean"], [_weight(rng, "gamma", (8,))])
    with pytest.raises(hgr.UnimplementedError, match=r"output 1 'mean' \(mean\) is used"):
        hgr.InferenceSession(path, providers=["pocl:0"])


@pytest.mark.parametrize("op,domain", [("GroupQueryAttention", MS), ("PackedAttention", MS),
                                       ("Relu", MS), ("Gelu", "ai.onnx.ml"), ("Gelu", "com.example")])
def test_other_ops_of_other_domains_are_refused_with_their_domain(tmp_path, op, domain):
    graph = h.make_graph([h.make_node(op, ["x"], ["y"], domain=domain)], "refused",
                         [h.make_tensor_value_info("x", T.FLOAT, [2, 4])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(domain, 1)])
    model.ir_version = 8
    path = str(tmp_path / "refused.onnx")
    onnx.save(model, path)
    with pytest.raises(hgr.UnimplementedError, match=f"op '{op}' of domain '{domain}' is not supported"):
        hgr.InferenceSession(path, providers=["pocl:0"])


def _feed_forward_block(path, hidden, tanh_gelu):
    """x [batch, seq, hidden] -> MatMul, bias Add, GELU written out (with Erf, or with
    Tanh), MatMul, bias Add, residual Add, LayerNormalization: a transformer's
    feed-forward block as exporters write it, for ONNX Runtime's optimizer to fuse."""
    rng = np.random.default_rng(hidden)
    inits = [numpy_helper.from_array((rng.standard_normal(s) * 0.2).astype(np.float32), n) for n, s in [
        ("w1", (hidden, 4 * hidden)), ("b1", (4 * hidden,)), ("w2", (4 * hidden, hidden)), ("b2", (hidden,)),
        ("gamma", (hidden,)), ("beta", (hidden,))]]
    scalars = {"half": 0.5, "one": 1.0, "sqrt2": np.sqrt(2.0), "k": np.sqrt(2 / np.pi), "c": 0.044715, "three": 3.0}
    inits += [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in scalars.items()]
    nodes = [h.make_node("MatMul", ["x", "w1"], ["m1"]), h.make_node("Add", ["m1", "b1"], ["a"])]
    if tanh_gelu:  # 0.5 a (1 + tanh(sqrt(2 / pi) (a + 0.044715 a^3)))
        nodes += [h.make_node("Pow", ["a", "three"], ["a3"]), h.make_node("Mul", ["a3", "c"], ["ca3"]),
                  h.make_node("Add", ["a", "ca3"], ["inner"]), h.make_node("Mul", ["inner", "k"], ["scaled"]),
                  h.make_node("Tanh", ["scaled"], ["t"]), h.make_node("Add", ["t", "one"], ["t1"]),
                  h.make_node("Mul", ["a", "half"], ["ha"]), h.make_node("Mul", ["ha", "t1"], ["gelu"])]
    else:  # a (1 + erf(a / sqrt 2)) 0.5
        nodes += [h.make_node("Div", ["a", "sqrt2"], ["d"]), h.make_node("Erf", ["d"], ["e"]),
                  h.make_node("Add", ["e", "one"], ["e1"]), h.make_node("Mul", ["a", "e1"], ["ae"]),
                  h.make_node("Mul", ["ae", "half"], ["gelu"])]
    nodes += [h.make_node("MatMul", ["gelu", "w2"], ["m2"]), h.make_node("Add", ["m2", "b2"], ["a2"]),
              h.make_node("Add", ["a2", "x"], ["residual"]),
              h.make_node("LayerNormalization", ["residual", "gamma", "beta"], ["y"], axis=-1, epsilon=1e-5)]
    graph = h.make_graph(nodes, "feed_forward", [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", hidden])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq", hidden])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


@pytest.mark.parametrize("tanh_gelu,fused", [(False, "BiasGelu"), (True, "FastGelu")])
def test_models_from_onnx_runtime_optimizer_match_onnx_runtime(tmp_path, device, tanh_gelu, fused):
    """A feed-forward block through `onnxruntime.transformers.optimizer` (model type
    bert), which writes com.microsoft ops, then hgr against ONNX Runtime at several
    batch sizes and sequence lengths."""
    source, optimized = str(tmp_path / "block.onnx"), str(tmp_path / "block_optimized.onnx")
    _feed_forward_block(source, 32, tanh_gelu)
    written = tm.ort_optimize(source, optimized, num_heads=0, hidden_size=0)
    assert (MS, fused) in written and (MS, "SkipLayerNormalization") in written, written
    session = hgr.InferenceSession(optimized, providers=[device])
    reference = ort.InferenceSession(optimized, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(37)
    for batch, seq in [(1, 4), (2, 7), (3, 16)]:
        x = rng.standard_normal((batch, seq, 32)).astype(np.float32)
        (got,), (want,) = session.run(None, {"x": x}), reference.run(None, {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# ---- attention, embeddings: models with symbolic batch and sequence, one session each --------

# (batch, sequence) run through one session: hgr specializes per shape
RUNS = [(1, 4), (2, 7), (3, 5)]


def _save_dynamic(tmp_path, nodes, inputs, outputs, initializers=(), name="contrib.onnx"):
    """inputs: (name, ONNX type, shape with "batch", "seq", ... symbolic); outputs:
    names of float outputs or (name, ONNX type)."""
    outputs = [(o, T.FLOAT) if isinstance(o, str) else o for o in outputs]
    graph = h.make_graph(nodes, "contrib", [h.make_tensor_value_info(n, t, list(s)) for n, t, s in inputs],
                         [h.make_tensor_value_info(n, t, None) for n, t in outputs], list(initializers))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(MS, 1)])
    model.ir_version = 8
    path = str(tmp_path / name)
    onnx.save(model, path)
    return path


def _compare_runs(path, device, feeds_of, runs=RUNS, rtol=1e-4, atol=1e-4):
    """Runs the model through one hgr and one ORT session at each (batch, seq)."""
    session = hgr.InferenceSession(path, providers=[device])
    reference = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for batch, seq in runs:
        feeds = feeds_of(batch, seq)
        got, want = session.run(None, feeds), reference.run(None, feeds)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape, (batch, seq)
            np.testing.assert_allclose(g, w.astype(g.dtype), rtol=rtol, atol=atol, err_msg=f"batch {batch}, seq {seq}")


def _padding(rng, kind, batch, seq):
    """A key padding mask: "2d" int32 [batch, seq] of 1 and 0 (right padding and a
    hole, the first key always kept), "1d" int32 [batch] lengths, or None."""
    lengths = rng.integers(1, seq + 1, batch).astype(np.int32)
    lengths[0] = seq
    if kind == "1d":
        return lengths
    if kind == "2d":
        mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int32)
        if seq > 2:
            mask[-1, 1] = 0
        return mask
    return None


HIDDEN, HEADS = 16, 2


@pytest.mark.parametrize("mask,attrs,extra", [
    ("none", {}, ""), ("2d", {}, ""), ("1d", {}, ""), ("none", {"unidirectional": 1}, ""),
    ("2d", {"unidirectional": 1}, ""), ("1d", {"unidirectional": 1}, ""),
    ("2d", {"qkv_hidden_sizes": [16, 16, 8], "scale": 0.3, "mask_filter_value": -1000.0}, ""),
    ("2d", {}, "attention_bias"), ("none", {}, "no_bias"), ("1d", {}, "weights_as_input")])
def test_attention_matches_onnx_runtime(tmp_path, device, mask, attrs, extra):
    rng = np.random.default_rng(len(attrs) * 10 + len(mask) + len(extra))
    sizes = attrs.get("qkv_hidden_sizes", [HIDDEN] * 3)
    weights = (rng.standard_normal((HIDDEN, sum(sizes))) * 0.5).astype(np.float32)
    inits = [numpy_helper.from_array(rng.standard_normal(sum(sizes)).astype(np.float32), "bias")]
    inputs = [("x", T.FLOAT, ["batch", "seq", HIDDEN])]
    if extra == "weights_as_input":
        inputs.append(("w", T.FLOAT, [HIDDEN, sum(sizes)]))
    else:
        inits.append(numpy_helper.from_array(weights, "w"))
    names = ["x", "w", "" if extra == "no_bias" else "bias", ""]
    if mask != "none":
        names[3] = "mask"
        inputs.append(("mask", T.INT32, ["batch", "seq"] if mask == "2d" else ["batch"]))
    if extra == "attention_bias":
        names += ["", "attention_bias"]
        inputs.append(("attention_bias", T.FLOAT, [1, HEADS, "seq", "seq"]))
    while names[-1] == "":
        names.pop()
    path = _save_dynamic(tmp_path, [h.make_node("Attention", names, ["y"], domain=MS, num_heads=HEADS, **attrs)],
                         inputs, ["y"], inits)

    def feeds_of(batch, seq):
        feeds = {"x": rng.standard_normal((batch, seq, HIDDEN)).astype(np.float32)}
        if mask != "none":
            feeds["mask"] = _padding(rng, mask, batch, seq)
        if extra == "weights_as_input":
            feeds["w"] = weights
        if extra == "attention_bias":
            feeds["attention_bias"] = rng.standard_normal((1, HEADS, seq, seq)).astype(np.float32)
        return feeds

    _compare_runs(path, device, feeds_of)


@pytest.mark.parametrize("mask,attrs,with_bias,cross", [
    ("none", {}, False, False), ("2d", {}, True, False), ("1d", {}, True, False),
    ("2d", {"unidirectional": 1}, False, False), ("2d", {"scale": 0.2, "mask_filter_value": -500.0}, True, True),
    ("none", {}, True, True)])
def test_multi_head_attention_matches_onnx_runtime(tmp_path, device, mask, attrs, with_bias, cross):
    """Separate query, key and value; cross: the keys' sequence is another length."""
    rng = np.random.default_rng(len(attrs) + 3 * len(mask) + with_bias + 7 * cross)
    kv = "kv_seq" if cross else "seq"
    v_hidden = 8 if cross else HIDDEN
    inputs = [("q", T.FLOAT, ["batch", "seq", HIDDEN]), ("k", T.FLOAT, ["batch", kv, HIDDEN]),
              ("v", T.FLOAT, ["batch", kv, v_hidden])]
    inits = [_weight(rng, "bias", (2 * HIDDEN + v_hidden,))] if with_bias else []
    names = ["q", "k", "v", "bias" if with_bias else "", ""]
    if mask != "none":
        names[4] = "mask"
        inputs.append(("mask", T.INT32, ["batch", kv] if mask == "2d" else ["batch"]))
    while names[-1] == "":
        names.pop()
    path = _save_dynamic(tmp_path, [h.make_node("MultiHeadAttention", names, ["y"], domain=MS, num_heads=HEADS,
                                                **attrs)], inputs, ["y"], inits)

    def feeds_of(batch, seq):
        kv_seq = seq + 2 if cross else seq
        feeds = {"q": rng.standard_normal((batch, seq, HIDDEN)).astype(np.float32),
                 "k": rng.standard_normal((batch, kv_seq, HIDDEN)).astype(np.float32),
                 "v": rng.standard_normal((batch, kv_seq, v_hidden)).astype(np.float32)}
        if mask != "none":
            feeds["mask"] = _padding(rng, mask, batch, kv_seq)
        return feeds

    _compare_runs(path, device, feeds_of)


# Without a mask, mask_index is a constant (zeros); a constant graph output reads
# back uninitialized memory on PoCL today (a Constant node's too, outside the
# contrib ops), so mask_index is a graph output here only with a mask.
@pytest.mark.parametrize("segment,mask,position_ids,mask_index", [
    (True, True, False, True), (False, False, False, False), (True, False, True, False), (False, True, True, True)])
def test_embed_layer_normalization_matches_onnx_runtime(tmp_path, device, segment, mask, position_ids, mask_index):
    """Outputs output, mask_index (per batch, how many mask elements are 1; zeros
    without a mask) and embedding_sum."""
    rng = np.random.default_rng(segment + 2 * mask + 4 * position_ids)
    vocab, positions, types = 30, 16, 2
    inits = [_weight(rng, "word", (vocab, HIDDEN)), _weight(rng, "position", (positions, HIDDEN)),
             _weight(rng, "gamma", (HIDDEN,)), _weight(rng, "beta", (HIDDEN,))]
    inputs = [("ids", T.INT32, ["batch", "seq"])]
    names = ["ids", "", "word", "position", "", "gamma", "beta", "", ""]
    if segment:
        names[1], names[4] = "segment_ids", "segment"
        inits.append(_weight(rng, "segment", (types, HIDDEN)))
        inputs.append(("segment_ids", T.INT32, ["batch", "seq"]))
    if mask:
        names[7] = "mask"
        inputs.append(("mask", T.INT32, ["batch", "seq"]))
    if position_ids:
        names[8] = "position_ids"
        inputs.append(("position_ids", T.INT32, ["batch", "seq"]))
    while names[-1] == "":
        names.pop()
    node = h.make_node("EmbedLayerNormalization", names, ["y", "mask_index", "sum"], domain=MS, epsilon=1e-5)
    outputs = ["y", ("mask_index", T.INT32), "sum"] if mask_index else ["y", "sum"]
    path = _save_dynamic(tmp_path, [node], inputs, outputs, inits)

    def feeds_of(batch, seq):
        feeds = {"ids": rng.integers(0, vocab, (batch, seq)).astype(np.int32)}
        if segment:
            feeds["segment_ids"] = rng.integers(0, types, (batch, seq)).astype(np.int32)
        if mask:
            feeds["mask"] = _padding(rng, "2d", batch, seq)
        if position_ids:
            feeds["position_ids"] = rng.integers(0, positions, (batch, seq)).astype(np.int32)
        return feeds

    _compare_runs(path, device, feeds_of)


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("offset", [False, True])
def test_rotary_embedding_matches_onnx_runtime(tmp_path, device, rank, interleaved, offset):
    """Input [batch, seq, heads * 8] or [batch, heads, seq, 8]; position_ids
    [batch, seq] or [1] (the first position)."""
    rng = np.random.default_rng(rank + 2 * interleaved + 4 * offset)
    size, heads, max_position = 8, 3, 24
    shape = ["batch", "seq", heads * size] if rank == 3 else ["batch", heads, "seq", size]
    inits = [_weight(rng, "cos", (max_position, size // 2)), _weight(rng, "sin", (max_position, size // 2))]
    node = h.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS, interleaved=interleaved,
                       **({"num_heads": heads} if rank == 3 else {}))
    positions = ("pos", T.INT64, [1] if offset else ["batch", "seq"])
    path = _save_dynamic(tmp_path, [node], [("x", T.FLOAT, shape), positions], ["y"], inits)

    def feeds_of(batch, seq):
        x_shape = (batch, seq, heads * size) if rank == 3 else (batch, heads, seq, size)
        pos = np.array([5]) if offset else rng.integers(0, max_position, (batch, seq))
        return {"x": rng.standard_normal(x_shape).astype(np.float32), "pos": pos.astype(np.int64)}

    _compare_runs(path, device, feeds_of)


@pytest.mark.parametrize("op,names,attrs,inputs,message", [
    ("Attention", ["x", "w", "b", "", "past"], {}, [("past", [2, 2, 2, 3, 8])],
     r"input 4 'past' \(past\) is given; hgr computes Attention without a KV cache"),
    ("Attention", ["x", "w", "b"], {"do_rotary": 1}, [], r"attr 'do_rotary' = 1; hgr reads only 0"),
    ("Attention", ["x", "w", "b", "m3"], {}, [("m3", [2, 3, 3])],
     r"input 3 'm3' \(mask_index\) has 3 dimensions; hgr reads \[2\] \(lengths: right padding\)"),
    ("Attention", ["x", "w", "b", "m2b"], {}, [("m2b", [4])],
     r"input 3 'm2b' \(mask_index\) has 1 dimensions and is not \[batch\]"),
    ("MultiHeadAttention", ["x"], {}, [], r"input 1 \(key\) is omitted; hgr reads separate query, key and value"),
    ("MultiHeadAttention", ["x", "k5", "v5"], {}, [("k5", [2, 3, 2, 2, 8]), ("v5", [2, 3, 16])],
     r"input 1 \(key\) is not 3-D"),
    ("MultiHeadAttention", ["x", "x", "x", "", "", "", "pk", "pv"], {}, [("pk", [2, 2, 3, 8]), ("pv", [2, 2, 3, 8])],
     r"input 6 'pk' \(past_key\) is given"),
    ("RotaryEmbedding", ["x", "pos", "cos4", "cos4"], {}, [("pos", [2, 3]), ("cos4", [8, 2])],
     r"the rotary dimension 4 \(twice input 2's last extent\) is not the head size 8"),
])
def test_attention_ops_refuse_what_hgr_does_not_compute_by_name(tmp_path, op, names, attrs, inputs, message):
    rng = np.random.default_rng(9)
    inits = [_weight(rng, "w", (HIDDEN, 3 * HIDDEN)), _weight(rng, "b", (3 * HIDDEN,))]
    types = {"m3": T.INT32, "m2b": T.INT32, "pos": T.INT64}
    path = _save_dynamic(tmp_path, [h.make_node(op, names, ["y"], domain=MS, num_heads=HEADS, **attrs)],
                         [("x", T.FLOAT, [2, 3, HIDDEN])] + [(n, types.get(n, T.FLOAT), s) for n, s in inputs], ["y"],
                         inits)
    with pytest.raises(hgr.UnimplementedError, match=f"com.microsoft.{op}.*{message}"):
        hgr.InferenceSession(path, providers=["pocl:0"])


@pytest.mark.parametrize("layers", [1, 2])
def test_bert_from_onnx_runtime_optimizer_matches_onnx_runtime(tmp_path, device, layers):
    """A small BERT (transformer_models.bert_for_optimizer) through `onnxruntime.transformers.optimizer`, which
    fuses it into EmbedLayerNormalization, Attention (its mask_index the embedding's
    lengths), SkipLayerNormalization and BiasGelu; then hgr against ONNX Runtime on
    the optimized model at several batch sizes and sequence lengths, right-padded."""
    source, optimized = str(tmp_path / "bert.onnx"), str(tmp_path / "bert_optimized.onnx")
    onnx.save(tm.bert_for_optimizer(layers=layers), source)
    written = tm.ort_optimize(source, optimized, num_heads=2, hidden_size=16)
    assert written.count((MS, "Attention")) == layers and (MS, "EmbedLayerNormalization") in written, written
    rng = np.random.default_rng(layers)

    def feeds_of(batch, seq):
        mask = _padding(rng, "1d", batch, seq)
        return {"input_ids": rng.integers(0, 40, (batch, seq)).astype(np.int64),
                "token_type_ids": rng.integers(0, 2, (batch, seq)).astype(np.int64),
                "attention_mask": (np.arange(seq)[None, :] < mask[:, None]).astype(np.int64)}

    _compare_runs(optimized, device, feeds_of, runs=[(1, 4), (2, 7), (3, 16)])
