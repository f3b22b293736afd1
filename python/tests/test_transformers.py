"""Transformer models as their exporters write them (python/tests/transformer_models.py:
BERT-like at opsets 14, 17 and 20, GPT-2-like with either causal mask, ViT-like with
cubic position interpolation), run by hgr.InferenceSession against
onnxruntime.InferenceSession, called as their libraries call ONNX Runtime: one
session per model, run(None, feed) with int64 ids and mask at several batch sizes and
lengths (padding zeros in the mask), images at several sizes. pocl and rusticl run
2-layer models 64 wide; Oclgrind, which simulates every work-item, 1-layer ones 16
wide at two small shapes."""
import numpy as np
import onnxruntime as ort
import pytest

import hgr
import transformer_models as tm
from conftest import require_device

TEXT = {"bert_opset14": lambda **kw: tm.bert(opset=14, **kw), "bert_opset17": lambda **kw: tm.bert(opset=17, **kw),
        "bert_opset20": lambda **kw: tm.bert(opset=20, **kw), "gpt2_slice": lambda **kw: tm.gpt2("slice", **kw),
        "gpt2_trilu": lambda **kw: tm.gpt2("trilu", **kw)}
TINY = {"layers": 1, "width": 16, "heads": 2}
TEXT_SHAPES = [(1, 1), (2, 7), (3, 16), (2, 33)]
IMAGE_SIZES = [(1, 32, 32), (2, 48, 40), (3, 24, 16)]  # patch grids 4x4 (as learned), 6x5, 3x2

_sessions = {}


def _pair(key, build, device):
    """hgr's and ONNX Runtime's session of one model, made once per module and device,
    since a library keeps one session and calls it at every shape."""
    if (key, device) not in _sessions:
        model = build().SerializeToString()
        _sessions[(key, device)] = (hgr.InferenceSession(model, providers=[device]),
                                    ort.InferenceSession(model, providers=["CPUExecutionProvider"]))
    return _sessions[(key, device)]


def _text_feed(pair, batch, length):
    return tm.text_feed([i.name for i in pair[1].get_inputs()], batch, length)


def _compare(pair, feed):
    ours, theirs = pair
    got, want = ours.run(None, feed), theirs.run(None, feed)
    assert [o.name for o in ours.get_outputs()] == [o.name for o in theirs.get_outputs()]
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("batch,length", TEXT_SHAPES)
@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0"])
@pytest.mark.parametrize("name", TEXT)
def test_text_model_matches_onnx_runtime(name, device, batch, length):
    require_device(device)
    pair = _pair(name, TEXT[name], device)
    _compare(pair, _text_feed(pair, batch, length))


@pytest.mark.parametrize("batch,height,width", IMAGE_SIZES)
@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0"])
def test_vit_matches_onnx_runtime_at_other_image_sizes(device, batch, height, width):
    require_device(device)
    _compare(_pair("vit", tm.vit, device), tm.image_feed(batch, height, width))


@pytest.mark.parametrize("name", [*TEXT, "vit"])
def test_tiny_models_on_oclgrind(name):
    require_device("oclgrind:0")
    if name == "vit":
        pair = _pair("vit_tiny", lambda: tm.vit(patch=4, grid=2, **TINY), "oclgrind:0")
        feeds = [tm.image_feed(2, 12, 8), tm.image_feed(1, 8, 8)]
    else:
        pair = _pair(f"{name}_tiny", lambda: TEXT[name](**TINY), "oclgrind:0")
        feeds = [_text_feed(pair, 2, 5), _text_feed(pair, 1, 1)]
    for feed in feeds:
        _compare(pair, feed)


@pytest.mark.parametrize("upper,k", [(0, 0), (1, 0), (0, -1), (1, 2), (0, 7)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_a_constant_triangle_folds_at_load(upper, k, dtype):
    """Trilu of a constant (a causal mask: ConstantOfShape at the sequence's length,
    then Trilu) is computed at load, as ONNX Runtime computes it at run time."""
    from onnx import TensorProto, helper, numpy_helper
    require_device("pocl:0")
    rng = np.random.default_rng(k + 3)
    table = (rng.integers(-3, 4, (2, 5, 6)) if dtype != np.bool_ else rng.integers(0, 2, (2, 5, 6))).astype(dtype)
    elem = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}[dtype]
    nodes = [helper.make_node("Trilu", ["table", "k"], ["tri"], upper=upper),
             helper.make_node("Cast", ["tri"], ["tri_f"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["x", "tri_f"], ["y"])]
    graph = helper.make_graph(nodes, "trilu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 6])],
                              [numpy_helper.from_array(table, "table"), numpy_helper.from_array(np.array(k, np.int64), "k")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString()
    x = rng.standard_normal((2, 5, 6)).astype(np.float32)
    sess = hgr.InferenceSession(model, providers=["pocl:0"])
    got = sess.run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, ort.InferenceSession(model).run(None, {"x": x})[0])
    assert sess.load_report["folded"] >= 1


@pytest.mark.parametrize("name", list(TEXT) + ["vit"])
def test_every_block_fuses(name):
    """Each layer's attention block becomes one attention node and its GELU written
    out one gelu (opset 20 has the Gelu op itself); the opset-14 BERT's layer norms
    written out (two a layer and the embeddings') become layer_norm nodes; every
    linear layer's bias Add (and the GELU after the first FFN layer) joins its
    MatMul's epilogue: BERT's and ViT's 6 a layer and the pooler's or head's, GPT-2's
    4 a layer (its tied logits have no bias); and each of the two residual adds a
    layer joins the layer norm after it as its skip (in GPT-2 and ViT, pre-norm, the
    next residual add reads the sum too, which the layer norm then gives as its
    output 1), and so does the embeddings' add where its operands have one shape
    (GPT-2 "slice": position ids per row; ViT at batch 1: its position embeddings
    are [1, tokens, width]); each layer's q, k and v projections become one matmul of
    three outputs (GPT-2's one projection split by slices gives them as its outputs)
    (hgr/passes.h: the load report's pass counts)."""
    require_device("pocl:0")
    model = (TEXT[name]() if name in TEXT else tm.vit()).SerializeToString()
    sess = hgr.InferenceSession(model, providers=["pocl:0"])
    names = [i.name for i in sess.get_inputs()]
    feed = tm.text_feed(names, 2, 7) if "input_ids" in names else {names[0]: np.zeros((1, 3, 32, 32), np.float32)}
    sess.run(None, feed)
    report = sess.load_report
    assert report["attentions"] == 2  # the builders' 2 layers
    assert report["gelus"] == (0 if name == "bert_opset20" else 2)
    assert report["layer_norms"] == (5 if name == "bert_opset14" else 0)
    assert report["gemm_epilogues"] == (8 if name.startswith("gpt2") else 13)
    assert report["skip_layer_norms"] == (5 if name in ("gpt2_slice", "vit") else 4)
    assert report["sibling_gemms"] == 2
