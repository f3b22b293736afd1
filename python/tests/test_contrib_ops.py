"""ONNX Runtime's contrib ops (domain com.microsoft) that its transformer optimizer
writes, through hgr's ONNX importer against ONNX Runtime on random data at several
shapes: Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd, SkipLayerNormalization and
SkipSimplifiedLayerNormalization; and the refusal, by name and domain, of the ops
of that domain hgr does not read."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import hgr

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


@pytest.mark.parametrize("op,domain", [("Attention", MS), ("EmbedLayerNormalization", MS),
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
def test_models_from_onnx_runtime_optimizer_match_onnx_runtime(tmp_path, monkeypatch, device, tanh_gelu, fused):
    """A feed-forward block through `onnxruntime.transformers.optimizer` (model type
    bert), which writes com.microsoft ops, then hgr against ONNX Runtime at several
    batch sizes and sequence lengths."""
    import sys

    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    # The optimizer's symbolic shape inference needs sympy, which the test venv may
    # lack: without it, shape inference off; cast removal (there is no Cast here)
    # calls it unconditionally, so it is skipped.
    for module in list(sys.modules.values()):
        if hasattr(module, "FusionUtils"):
            monkeypatch.setattr(module.FusionUtils, "remove_useless_cast_nodes", lambda self: None)
    source, optimized = str(tmp_path / "block.onnx"), str(tmp_path / "block_optimized.onnx")
    _feed_forward_block(source, 32, tanh_gelu)
    options = FusionOptions("bert")
    options.enable_shape_inference = False
    optimizer.optimize_model(source, model_type="bert", num_heads=0, hidden_size=0, opt_level=0, use_gpu=False,
                             optimization_options=options).save_model_to_file(optimized)
    written = {(n.domain, n.op_type) for n in onnx.load(optimized).graph.node}
    assert (MS, fused) in written and (MS, "SkipLayerNormalization") in written, written
    session = hgr.InferenceSession(optimized, providers=[device])
    reference = ort.InferenceSession(optimized, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(37)
    for batch, seq in [(1, 4), (2, 7), (3, 16)]:
        x = rng.standard_normal((batch, seq, 32)).astype(np.float32)
        (got,), (want,) = session.run(None, {"x": x}), reference.run(None, {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
