"""hgr.InferenceSession as a drop-in for onnxruntime.InferenceSession (issue 34,
section 3): the calling code of real libraries, copied as a pattern (not the
libraries), run against hgr and ONNX Runtime side by side on the same model, at
the many shapes those libraries feed one session:

- a face detector's image pyramid (MTCNN's P-Net stage): one image resized to
  several scales, [1, 3, H, W] at each;
- a sentence encoder called as sentence-transformers-like code calls ONNX Runtime:
  sentences sorted by length, batches of several sizes padded to their longest,
  input_ids and attention_mask int64 (as Python lists in some calls), mean pooling;
- a PaddleOCR-style text recognizer exported with dim_value -1: crops batched by
  aspect ratio, padded to the batch's widest, [N, 3, 48, W];
- runs of several shapes in flight at once (run_async), more than the session keeps;
- get_inputs()/get_outputs() beside ONNX Runtime's for each symbolic model;
- the errors, in ONNX Runtime's words where it has them.

Where hgr deliberately differs from ONNX Runtime, the tests say so: a dim declared
0 is unknown to hgr (reported None, any extent runs) while ONNX Runtime reports 0
and refuses every other extent; two inputs whose dims share a name but differ are
refused up front by hgr naming both, where ONNX Runtime fails inside the first node
that meets them. Every test skips when onnxruntime is not installed."""
import math
import os

import numpy as np
import pytest

import hgr
from conftest import require_device

SYMBOLIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "symbolic")
TOLERANCE = dict(rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def ort():
    return pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install onnxruntime)")


@pytest.fixture(scope="module")
def pocl():
    require_device("pocl:0")
    return "pocl:0"


def _sessions(ort, model, device, **kwargs):
    """The same model (a path or bytes) in hgr on device and in ONNX Runtime's CPU provider."""
    return (hgr.InferenceSession(model, providers=[device], **kwargs),
            ort.InferenceSession(model, providers=["CPUExecutionProvider"]))


def _model(nodes, inputs, outputs, initializers, opset=13):
    from onnx import helper

    graph = helper.make_graph(nodes, "drop_in", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model.SerializeToString()


def _weights(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---- (a) a face detector's image pyramid ----

@pytest.fixture(scope="module")
def pnet(onnx_module):
    """A detector shaped like MTCNN's P-Net: fully convolutional on [1, 3, "H", "W"],
    Conv 3x3 + PRelu, MaxPool 2x2 (ceil_mode, as Caffe pools), two more Conv + PRelu,
    then a face-probability head (Conv 1x1, Softmax over channels) and a box head."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(341)
    arrays = {
        "c1": _weights(rng, (10, 3, 3, 3), 0.3), "c1b": _weights(rng, (10,), 0.1),
        "a1": _weights(rng, (10, 1, 1), 0.1),
        "c2": _weights(rng, (16, 10, 3, 3), 0.15), "c2b": _weights(rng, (16,), 0.1),
        "a2": _weights(rng, (16, 1, 1), 0.1),
        "c3": _weights(rng, (32, 16, 3, 3), 0.1), "c3b": _weights(rng, (32,), 0.1),
        "a3": _weights(rng, (32, 1, 1), 0.1),
        "cls": _weights(rng, (2, 32, 1, 1), 0.3), "clsb": _weights(rng, (2,), 0.1),
        "box": _weights(rng, (4, 32, 1, 1), 0.3), "boxb": _weights(rng, (4,), 0.1),
    }
    nodes = [
        helper.make_node("Conv", ["image", "c1", "c1b"], ["h1"]),
        helper.make_node("PRelu", ["h1", "a1"], ["h2"]),
        helper.make_node("MaxPool", ["h2"], ["h3"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        helper.make_node("Conv", ["h3", "c2", "c2b"], ["h4"]),
        helper.make_node("PRelu", ["h4", "a2"], ["h5"]),
        helper.make_node("Conv", ["h5", "c3", "c3b"], ["h6"]),
        helper.make_node("PRelu", ["h6", "a3"], ["h7"]),
        helper.make_node("Conv", ["h7", "cls", "clsb"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["prob"], axis=1),
        helper.make_node("Conv", ["h7", "box", "boxb"], ["regression"]),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, "H", "W"])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 2, "h", "w"]),
         helper.make_tensor_value_info("regression", TensorProto.FLOAT, [1, 4, "h", "w"])],
        [numpy_helper.from_array(array, name) for name, array in arrays.items()])


def _pyramid_scales(height, width, min_face=20, factor=0.709, cell=12):
    """MTCNN's scales: from cell / min_face down by factor while the image's short
    side stays at least one P-Net cell."""
    scales, scale = [], cell / min_face
    while min(height, width) * scale >= cell:
        scales.append(scale)
        scale *= factor
    return scales


def _resize_nearest(image, height, width):
    rows = (np.arange(height) * image.shape[0] / height).astype(int)
    cols = (np.arange(width) * image.shape[1] / width).astype(int)
    return image[rows][:, cols]


def _detect(session, image, threshold=0.6):
    """The P-Net stage of a detector: each scale's resized, normalized NCHW image
    through one session; returns each scale's outputs and the candidate boxes."""
    outputs, boxes = [], []
    for scale in _pyramid_scales(*image.shape[:2]):
        height, width = (int(math.ceil(side * scale)) for side in image.shape[:2])
        scaled = (_resize_nearest(image, height, width).astype(np.float32) - 127.5) * 0.0078125
        prob, regression = session.run(None, {"image": scaled.transpose(2, 0, 1)[np.newaxis]})
        outputs.append((prob, regression))
        ys, xs = np.nonzero(prob[0, 1] > threshold)
        boxes.extend((x * 2 / scale, y * 2 / scale, (x * 2 + 12) / scale, (y * 2 + 12) / scale) for y, x in zip(ys, xs))
    return outputs, boxes


def test_a_detectors_image_pyramid_runs_at_every_scale_in_one_session(ort, pnet, device):
    frames = [np.random.default_rng(seed).integers(0, 256, (60, 80, 3), dtype=np.uint8) for seed in (1, 2)]
    scales = _pyramid_scales(60, 80)
    assert len(scales) == 4  # 36x48, 26x35, 19x25 and 13x17: odd sizes too
    sess, reference = _sessions(ort, pnet, device)
    with sess:
        for frame in frames:  # a second frame meets every scale again
            got, _ = _detect(sess, frame)
            want, _ = _detect(reference, frame)
            assert len(got) == len(want) == len(scales)
            for (prob, regression), (want_prob, want_regression) in zip(got, want):
                assert prob.shape == want_prob.shape and regression.shape == want_regression.shape
                np.testing.assert_allclose(prob, want_prob, **TOLERANCE)
                np.testing.assert_allclose(regression, want_regression, **TOLERANCE)
        report = sess.load_report
        # One specialization per scale, made at its first frame and reused at the second.
        assert (report["created"], report["hits"], report["evicted"]) == (4, 4, 0)
        assert report["kept"] == 4


# ---- (b) a sentence encoder at many lengths and batch sizes ----

VOCABULARY, WIDTH, CLS, SEP, PAD = 64, 16, 1, 2, 0


@pytest.fixture(scope="module")
def text_encoder(onnx_module):
    """A one-head self-attention encoder as transformers exports it: input_ids and
    attention_mask int64 [batch_size, sequence_length]; embeddings by Gather; the
    mask as an additive bias (1 - mask) * -10000 over the keys; Softmax on the last
    axis; last_hidden_state [batch_size, sequence_length, 16]."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(342)
    arrays = {
        "embeddings": _weights(rng, (VOCABULARY, WIDTH), 1.0),
        "wq": _weights(rng, (WIDTH, WIDTH), 0.25), "wk": _weights(rng, (WIDTH, WIDTH), 0.25),
        "wv": _weights(rng, (WIDTH, WIDTH), 0.25), "wo": _weights(rng, (WIDTH, WIDTH), 0.25),
        "scale": np.array(1 / math.sqrt(WIDTH), np.float32), "one": np.array(1, np.float32),
        "masked": np.array(-10000, np.float32), "axes": np.array([1], np.int64),
    }
    nodes = [
        helper.make_node("Gather", ["embeddings", "input_ids"], ["hidden"]),
        helper.make_node("MatMul", ["hidden", "wq"], ["q"]),
        helper.make_node("MatMul", ["hidden", "wk"], ["k"]),
        helper.make_node("MatMul", ["hidden", "wv"], ["v"]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["qk"]),
        helper.make_node("Mul", ["qk", "scale"], ["scores"]),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["one", "mask"], ["inverted"]),
        helper.make_node("Mul", ["inverted", "masked"], ["bias"]),
        helper.make_node("Unsqueeze", ["bias", "axes"], ["key_bias"]),
        helper.make_node("Add", ["scores", "key_bias"], ["biased"]),
        helper.make_node("Softmax", ["biased"], ["attention"], axis=-1),
        helper.make_node("MatMul", ["attention", "v"], ["context"]),
        helper.make_node("MatMul", ["context", "wo"], ["projected"]),
        helper.make_node("Add", ["projected", "hidden"], ["last_hidden_state"]),
    ]
    dims = ["batch_size", "sequence_length"]
    return _model(
        nodes,
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, dims),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, dims)],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [WIDTH])],
        [numpy_helper.from_array(array, name) for name, array in arrays.items()])


SENTENCES = [
    "hello",
    "a short one",
    "the quick brown fox jumps over the lazy dog",
    "models are loaded once and run at every shape",
    "two words",
    "an image pyramid calls the detector at several sizes of the same picture",
    "lists of ints are converted",
    "one more sentence of middling length here",
    "x",
    "text of any length in batches of any size padded to the longest in the batch",
]


def _tokenize(sentences):
    """A tokenizer's output with padding=True: ids (CLS, words, SEP, PAD to the
    batch's longest) and the mask, as Python lists of ints, as tokenizers return them
    without return_tensors."""
    rows = [[CLS] + [sum((i + 1) * ord(c) for i, c in enumerate(word)) % (VOCABULARY - 3) + 3
                     for word in sentence.split()] + [SEP] for sentence in sentences]
    longest = max(len(row) for row in rows)
    return ([row + [PAD] * (longest - len(row)) for row in rows],
            [[1] * len(row) + [0] * (longest - len(row)) for row in rows])


def _encode(session, sentences, batch_size, as_lists):
    """sentence-transformers' encode over an ONNX session: longest sentences first,
    batches of batch_size, mean pooling under the mask, L2 normalization, the input
    order restored. as_lists: feed the tokenizer's lists as they are (ONNX Runtime
    converts them to the inputs' int64), else as int64 arrays. Returns the
    embeddings and each batch's token embeddings."""
    order = np.argsort([-len(sentence.split()) for sentence in sentences], kind="stable")
    embeddings, token_embeddings = [None] * len(sentences), []
    for start in range(0, len(sentences), batch_size):
        batch = [int(i) for i in order[start:start + batch_size]]
        ids, mask = _tokenize([sentences[i] for i in batch])
        if as_lists:
            feed = {"input_ids": ids, "attention_mask": mask}
        else:
            feed = {"input_ids": np.array(ids, dtype=np.int64), "attention_mask": np.array(mask, dtype=np.int64)}
        (tokens,) = session.run(None, feed)
        token_embeddings.append(tokens)
        weights = np.array(mask, np.float32)[:, :, np.newaxis]
        pooled = (tokens * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        for i, row in zip(batch, pooled):
            embeddings[i] = row
    return np.stack(embeddings), token_embeddings


def test_a_sentence_encoder_runs_at_every_length_and_batch_size_in_one_session(ort, text_encoder, device):
    sess, reference = _sessions(ort, text_encoder, device)
    with sess:
        shapes = set()
        for batch_size, as_lists in ((1, True), (3, False), (4, True), (16, False)):
            got, got_tokens = _encode(sess, SENTENCES, batch_size, as_lists)
            want, want_tokens = _encode(reference, SENTENCES, batch_size, as_lists)
            for tokens, want_batch in zip(got_tokens, want_tokens):
                assert tokens.dtype == np.float32 and tokens.shape == want_batch.shape
                np.testing.assert_allclose(tokens, want_batch, **TOLERANCE)
                shapes.add(tokens.shape[:2])
            np.testing.assert_allclose(got, want, **TOLERANCE)
        report = sess.load_report
        assert report["created"] == len(shapes) >= 12  # one per (batch, length) met; the rest reused
        assert report["created"] + report["hits"] == 10 + 4 + 3 + 1


def test_python_lists_and_scalars_are_converted_as_onnx_runtime_converts_them(ort, text_encoder, pocl):
    sess, reference = _sessions(ort, text_encoder, pocl)
    with sess:
        for feed in ({"input_ids": [[1, 7, 9, 2]], "attention_mask": [[1, 1, 1, 1]]},
                     {"input_ids": [[1, 7, 9, 2]], "attention_mask": [[1.0, 1.0, True, 1]]},  # floats and bools
                     {"input_ids": [[1, 5, 2, 0]], "attention_mask": np.array([[1, 1, 1, 0]])}):  # with an array
            np.testing.assert_allclose(sess.run(None, feed)[0], reference.run(None, feed)[0], **TOLERANCE)
        # hgr takes tuples as lists; ONNX Runtime refuses them ("Input must be a list of dictionaries or a single
        # numpy array").
        np.testing.assert_allclose(sess.run(None, {"input_ids": ((1, 5, 2, 0),), "attention_mask": ((1, 1, 1, 0),)})[0],
                                   reference.run(None, feed)[0], **TOLERANCE)
    y = [[1.5, -2.0, 3.0]]
    relu, relu_reference = _sessions(ort, _relu(["n", 3]), pocl)
    with relu:
        np.testing.assert_array_equal(relu.run(None, {"x": y})[0], relu_reference.run(None, {"x": y})[0])
    # Python scalars for a 0-d input: hgr converts them as it converts lists; ONNX Runtime refuses them ("Unable
    # to handle object of type <class 'float'>") and wants a 0-d array.
    with hgr.InferenceSession(_relu([]), providers=[pocl]) as scalar:
        for value in (2.5, -3, True):
            (y,) = scalar.run(None, {"x": value})
            assert y.dtype == np.float32 and y.shape == ()
            assert y == max(float(value), 0.0)


def _relu(dims, elem=None):
    from onnx import TensorProto, helper

    elem = TensorProto.FLOAT if elem is None else elem
    return _model([helper.make_node("Relu", ["x"], ["y"])], [helper.make_tensor_value_info("x", elem, dims)],
                  [helper.make_tensor_value_info("y", elem, dims)], [])


# ---- (c) a PaddlePaddle export: dim_value -1 ----

CLASSES = 11


@pytest.fixture(scope="module")
def recognizer(onnx_module):
    """A CRNN-like text recognizer as PaddleOCR's exports declare it: x [-1, 3, 48, -1]
    (dim_value -1, not dim_param); Conv + Relu + MaxPool twice, the mean over the
    height, Transpose to [N, T, C], a classifier and Softmax over the characters."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(343)
    arrays = {
        "c1": _weights(rng, (8, 3, 3, 3), 0.3), "c1b": _weights(rng, (8,), 0.1),
        "c2": _weights(rng, (16, 8, 3, 3), 0.2), "c2b": _weights(rng, (16,), 0.1),
        "fc": _weights(rng, (16, CLASSES), 0.5), "fcb": _weights(rng, (CLASSES,), 0.1),
    }
    nodes = [
        helper.make_node("Conv", ["x", "c1", "c1b"], ["h1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["h1"], ["h2"]),
        helper.make_node("MaxPool", ["h2"], ["h3"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["h3", "c2", "c2b"], ["h4"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["h4"], ["h5"]),
        helper.make_node("MaxPool", ["h5"], ["h6"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("ReduceMean", ["h6"], ["h7"], axes=[2], keepdims=0),
        helper.make_node("Transpose", ["h7"], ["h8"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["h8", "fc"], ["h9"]),
        helper.make_node("Add", ["h9", "fcb"], ["h10"]),
        helper.make_node("Softmax", ["h10"], ["softmax_0.tmp_0"], axis=2),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3, 48, -1])],
        [helper.make_tensor_value_info("softmax_0.tmp_0", TensorProto.FLOAT, [-1, -1, CLASSES])],
        [numpy_helper.from_array(array, name) for name, array in arrays.items()])


def _recognize(session, crops, batch_size=3, height=48):
    """PaddleOCR's TextRecognizer: crops sorted by aspect ratio, batches of
    batch_size, each crop resized to the height and its own width, normalized to
    [-1, 1] and padded with zeros to the batch's widest ratio; CTC's greedy decoding
    (argmax, repeats and blanks dropped). Returns each batch's probabilities and the
    texts in the crops' order."""
    order = np.argsort([crop.shape[1] / crop.shape[0] for crop in crops], kind="stable")
    probabilities, texts = [], [None] * len(crops)
    for start in range(0, len(crops), batch_size):
        batch = [int(i) for i in order[start:start + batch_size]]
        width = int(height * max(crops[i].shape[1] / crops[i].shape[0] for i in batch))
        images = np.zeros((len(batch), 3, height, width), np.float32)
        for row, i in enumerate(batch):
            crop_width = min(width, int(math.ceil(height * crops[i].shape[1] / crops[i].shape[0])))
            resized = _resize_nearest(crops[i], height, crop_width).astype(np.float32) / 255
            images[row, :, :, :crop_width] = ((resized - 0.5) / 0.5).transpose(2, 0, 1)
        (probs,) = session.run(None, {session.get_inputs()[0].name: images})
        probabilities.append(probs)
        for i, best in zip(batch, probs.argmax(axis=2)):
            texts[i] = [int(c) for j, c in enumerate(best) if c != 0 and (j == 0 or c != best[j - 1])]
    return probabilities, texts


def test_a_paddle_export_with_dim_value_minus_one_runs_at_any_batch_and_width(ort, recognizer, device):
    rng = np.random.default_rng(7)
    crops = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in
             ((24, 40), (30, 45), (20, 50), (25, 25), (22, 60), (16, 40), (28, 70))]
    sess, reference = _sessions(ort, recognizer, device)
    with sess:
        assert sess.get_inputs()[0].shape == reference.get_inputs()[0].shape == [None, 3, 48, None]
        assert sess.get_outputs()[0].shape == reference.get_outputs()[0].shape == [None, None, CLASSES]
        got, _ = _recognize(sess, crops)
        want, _ = _recognize(reference, crops)
        assert [p.shape for p in got] == [p.shape for p in want]
        assert len({p.shape for p in got}) == 3  # batches of 3, 3 and 1 at three widths
        for probs, want_probs in zip(got, want):
            np.testing.assert_allclose(probs, want_probs, **TOLERANCE)


# ---- (d) runs of several shapes in flight ----

def test_runs_of_several_shapes_in_flight_at_once_match_onnx_runtime(ort, device):
    """A server's pattern: requests of whatever shapes arrive are started as they
    come and collected later. The session keeps 2 specializations, fewer than the
    runs in flight: eviction never frees one that a pending run uses."""
    rng = np.random.default_rng(344)
    shapes = [(1, 5), (2, 3), (3, 7), (1, 1), (2, 3), (4, 2)]
    feeds = [{"x": rng.standard_normal((batch, seq, 8)).astype(np.float32),
              "mask": (rng.random((batch, seq)) > 0.3).astype(np.float32)} for batch, seq in shapes]
    sess, reference = _sessions(ort, os.path.join(SYMBOLIC, "encoder.onnx"), device, max_specializations=2)
    with sess:
        futures = [sess.run_async(None, feed) for feed in feeds]
        report = sess.load_report  # all 5 shapes held by runs in flight: none evicted
        assert (report["created"], report["hits"], report["kept"], report["evicted"]) == (5, 1, 5, 0)
        results = [future.result() for future in futures]
        assert all(future.done() for future in futures)
        for (y,), feed, (batch, seq) in zip(results, feeds, shapes):
            assert y.shape == (batch, seq, 4)
            np.testing.assert_allclose(y, reference.run(None, feed)[0], **TOLERANCE)
        # Once the futures are gone, the next new shape brings the session back to its bound.
        del futures
        feed = {"x": np.ones((5, 5, 8), np.float32), "mask": np.ones((5, 5), np.float32)}
        np.testing.assert_allclose(sess.run(None, feed)[0], reference.run(None, feed)[0], **TOLERANCE)
        report = sess.load_report
        assert (report["created"], report["kept"], report["evicted"]) == (6, 2, 4)
        for (y,), feed in zip(results, feeds):  # outputs handed out keep their values
            np.testing.assert_allclose(y, reference.run(None, feed)[0], **TOLERANCE)


# ---- (e) introspection beside ONNX Runtime's ----

@pytest.mark.parametrize("name", ["dims", "reshape_input", "encoder", "cnn", "pnet", "text_encoder", "recognizer"])
def test_inputs_and_outputs_read_as_onnx_runtimes_for_each_symbolic_model(ort, name, pocl, request):
    """tests/data/symbolic's models and the ones built above."""
    path = os.path.join(SYMBOLIC, f"{name}.onnx")
    sess, reference = _sessions(ort, path if os.path.exists(path) else request.getfixturevalue(name), pocl)
    with sess:
        for ours, theirs in ((sess.get_inputs(), reference.get_inputs()),
                             (sess.get_outputs(), reference.get_outputs())):
            assert [a.name for a in ours] == [a.name for a in theirs]
            assert [a.type for a in ours] == [a.type for a in theirs]
            # A dim declared 0 ('c' and 'yc' of dims.onnx): ONNX Runtime reports 0, hgr None (unknown).
            assert [a.shape for a in ours] == [[None if d == 0 else d for d in a.shape] for a in theirs]


def test_a_dim_declared_zero_is_unknown_to_hgr_where_onnx_runtime_takes_only_zero(ort, pocl):
    sess, reference = _sessions(ort, os.path.join(SYMBOLIC, "dims.onnx"), pocl)
    feed = {"a": np.ones((2, 3), np.float32), "b": np.ones((2, 3), np.float32),
            "c": np.full((2, 3), 4, np.float32), "d": np.arange(5, dtype=np.float32)}
    with sess:
        assert (sess.get_inputs()[2].shape, reference.get_inputs()[2].shape) == ([None, 3], [0, 3])
        with pytest.raises(Exception, match=r"Got invalid dimensions for input: c for the following indices\n"
                                            r" index: 0 Got: 2 Expected: 0"):
            reference.run(None, feed)
        ya, yb, yc, yd = sess.run(None, feed)
        np.testing.assert_array_equal(yc, np.full((2, 3), 5, np.float32))
        np.testing.assert_array_equal(yd, -np.arange(5, dtype=np.float32))


# ---- (f) the errors, in ONNX Runtime's words ----

def _both_refuse(sess, reference, feed, pattern):
    """hgr refuses feed with hgr.InvalidArgumentError and ONNX Runtime with its own
    error, both matching pattern."""
    with pytest.raises(hgr.InvalidArgumentError, match=pattern):
        sess.run(None, feed)
    with pytest.raises(Exception, match=pattern):
        reference.run(None, feed)


def test_an_array_of_another_dtype_is_refused_with_onnx_runtimes_words(ort, text_encoder, recognizer, pocl):
    ids = np.array([[1, 7, 2]])
    sess, reference = _sessions(ort, text_encoder, pocl)
    with sess:  # int32 ids (a tokenizer's return_tensors="np" on some platforms) for int64 inputs
        _both_refuse(sess, reference, {"input_ids": ids.astype(np.int32), "attention_mask": np.ones_like(ids)},
                     r"Unexpected input data type\. Actual: \(tensor\(int32\)\) , expected: \(tensor\(int64\)\)")
    sess, reference = _sessions(ort, recognizer, pocl)
    with sess:  # float64 images, the default of numpy arithmetic, for a float input
        _both_refuse(sess, reference, {"x": np.zeros((1, 3, 48, 20))},
                     r"Unexpected input data type\. Actual: \(tensor\(double\)\) , expected: \(tensor\(float\)\)")


def test_int64_values_past_int32_are_refused_naming_the_input(ort, text_encoder, pocl):
    """hgr computes int64 as int32 (docs/onnx.md, "Dtypes"): an id past int32 (a hash,
    a sentinel) is refused naming the input and the element, not saturated. ONNX
    Runtime refuses it too, as an index out of the embedding's range."""
    sess, reference = _sessions(ort, text_encoder, pocl)
    ids = np.array([[1, 7, 2**31, 2]], np.int64)
    with sess:
        with pytest.raises(hgr.InvalidArgumentError,
                           match=r"input 'input_ids': element 2 is 2147483648, outside int32: hgr computes int64"):
            sess.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})
        with pytest.raises(Exception, match="out of data bounds, idx=2147483648"):
            reference.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})


def test_a_wrong_rank_or_fixed_dim_is_refused_with_onnx_runtimes_words(ort, recognizer, pocl):
    sess, reference = _sessions(ort, recognizer, pocl)
    with sess:
        _both_refuse(sess, reference, {"x": np.zeros((3, 48, 20), np.float32)},  # one crop without its batch dim
                     r"Invalid rank for input: x Got: 3 Expected: 4 Please fix either the inputs/outputs or the "
                     r"model\.")
        _both_refuse(sess, reference, {"x": np.zeros((2, 3, 32, 20), np.float32)},  # height 32 for a 48-high model
                     r"Got invalid dimensions for input: x for the following indices\n index: 2 Got: 32 Expected: 48\n"
                     r" Please fix either the inputs/outputs or the model\.")


def test_a_named_dim_that_disagrees_across_inputs_is_refused_naming_both(ort, pocl):
    """hgr checks dims that share a name before running: the message names both
    inputs, the dim and both extents. ONNX Runtime does not check them; it fails in
    the first node that meets both (here encoder.onnx's Mul, a broadcast error)."""
    feed = {"x": np.zeros((2, 3, 8), np.float32), "mask": np.ones((2, 4), np.float32)}
    sess, reference = _sessions(ort, os.path.join(SYMBOLIC, "encoder.onnx"), pocl)
    with sess:
        with pytest.raises(hgr.InvalidArgumentError,
                           match=r"input 'mask': dimension 1 \('seq'\) is 4, but input 'x' dimension 1, of the same "
                                 r"name, is 3"):
            sess.run(None, feed)
        with pytest.raises(Exception, match="broadcast"):
            reference.run(None, feed)
        # The session stays usable after a refused feed.
        feed["mask"] = np.ones((2, 3), np.float32)
        np.testing.assert_allclose(sess.run(None, feed)[0], reference.run(None, feed)[0], **TOLERANCE)
