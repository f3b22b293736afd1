"""Real models that PyPI packages ship inside their wheels (pinned by version and
sha256 in scripts/setup.sh, which downloads them into HGR_REAL_MODELS), called the
way their own libraries call ONNX Runtime, against ONNX Runtime.

Silero VAD 5.1.2 (`silero-vad` wheel, silero_vad/data/silero_vad.onnx): 25 Ifs (on
the sample rate input `sr`, which hgr specializes on by value, and on shapes), 4
LSTMs, a streaming state [2, 1, 128] fed back each chunk. silero_vad's OnnxWrapper
prepends the last 64 samples (32 at 8 kHz) of the previous chunk to each 512-sample
(256) chunk and calls run(None, {'input', 'state', 'sr'}).

RapidOCR 1.4.4 (`rapidocr_onnxruntime` wheel, models/ch_PP-OCRv4_rec_infer.onnx):
PaddleOCR's PP-OCRv4 text recognizer, a PP-LCNetV3 backbone and an SVTR neck (two
transformer blocks: LayerNorm written out, multi-head attention through Reshape,
Transpose, MatMul, Softmax; opset 12, exported by paddle2onnx) ending in a CTC
Softmax. rapidocr's TextRecognizer sorts the lines by aspect ratio, pads each batch of
up to 6 to height 48 and the width of its widest (at least 320), scaled to [-1, 1],
and calls run(output_names, {'x': batch}). Not on Oclgrind: its simulation of the
backbone's convolutions at 48 x 320 takes minutes.

g2p-id 0.4.2 (`g2p_id_py` wheel, g2p_id/models/bert/bert_mlm.onnx): a 2-layer BERT
masked-language model over characters (width 128, 8 heads, ReLU feed-forward; opset
14, exported by tf2onnx: each layer norm written out with GlobalAveragePool moments,
multi-head attention through Einsum, Reshape, Transpose, MatMul, Softmax, Gemm).
g2p_id's BERT.predict spells a word as character tokens with each 'e' masked, pads
them to 32 and calls run(None, {'input_1': [tokens]}), then takes the argmax at the
masked places.

ddddocr 1.5.6 (`ddddocr` wheel, ddddocr/common_old.onnx): a captcha reader its
authors quantized with ONNX Runtime's dynamic quantizer: 21 ConvInteger layers, each
behind a DynamicQuantizeLinear, a bidirectional com.microsoft.DynamicQuantizeLSTM
and a MatMulInteger over 8210 characters, at any image width. ddddocr's
classification scales the image to height 64 in grey, to [-1, 1], and calls
run(None, {'input1': [1, 1, 64, width]}), then reads the argmax at each step,
dropping repeats and blanks. hgr computes the LSTM in float32 on weights
dequantized at load where ONNX Runtime also rounds the input and the hidden state
to uint8 at each step, and its float32 rounding differs from ONNX Runtime's by an
ulp here and there: each of the 21 dynamic quantizations may move a value one step,
so the logits differ by 0.5-1.7 % (relative L2) while every step reads the same
character. Not on Oclgrind: two minutes per image.

openWakeWord 0.4.0 (`openwakeword` wheel, openwakeword/resources/models): tiny models
run by the thousand (issue 39's per-run floor; bench/tiny_models.py times them). Its
AudioFeatures computes a melspectrogram of int16 PCM as float32 (Conv STFT, MatMul
to 32 mel bins, log: melspectrogram.onnx, [batch, samples] -> [batch, 1, frames, 32]),
transforms it as spec / 10 + 2, cuts windows of 76 frames every 8 and calls the
speech-embedding CNN on the batch of windows (embedding_model.onnx: 20 Convs with
LeakyRelu, Max and MaxPool; [windows, 76, 32, 1] -> [windows, 1, 1, 96]); its Model
calls each wake-word head on the last 16 embeddings ([1, 16, 96]; timer 34, weather
22): three Gemms with ReLU and a Sigmoid (alexa, weather; timer a Softmax over 7
classes), layer norms written out and an If on a computed condition (hey_jarvis) or
two LSTMs (hey_mycroft)."""
import os
import zipfile

import numpy as np
import pytest

import hgr
from conftest import require_device

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REAL_MODELS = os.environ.get("HGR_REAL_MODELS", os.path.join(ROOT, "build", "real-models"))
SILERO_WHEEL = "silero_vad-5.1.2-py3-none-any.whl"
RAPIDOCR_WHEEL = "rapidocr_onnxruntime-1.4.4-py3-none-any.whl"
G2P_ID_WHEEL = "g2p_id_py-0.4.2-py3-none-any.whl"
DDDDOCR_WHEEL = "ddddocr-1.5.6-py3-none-any.whl"
OPENWAKEWORD_WHEEL = "openwakeword-0.4.0-py3-none-any.whl"


def _from_wheel(tmp_path_factory, wheel, member):
    """The model file member of the pinned wheel, extracted; skipped when the wheel is missing."""
    wheel = os.path.join(REAL_MODELS, wheel)
    if not os.path.exists(wheel):
        pytest.skip(f"{wheel} is missing: scripts/setup.sh test downloads it (no network?)")
    path = tmp_path_factory.mktemp("real") / os.path.basename(member)
    with zipfile.ZipFile(wheel) as z:
        path.write_bytes(z.read(member))
    return str(path)


@pytest.fixture(scope="module")
def silero_vad(tmp_path_factory):
    return _from_wheel(tmp_path_factory, SILERO_WHEEL, "silero_vad/data/silero_vad.onnx")


@pytest.fixture(scope="module")
def ppocr_rec(tmp_path_factory):
    return _from_wheel(tmp_path_factory, RAPIDOCR_WHEEL, "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx")


def _audio(rate, seconds=2.0):
    """Noise, then a tone from 0.75 s on."""
    rng = np.random.default_rng(0)
    n = int(rate * seconds)
    t = np.arange(n) / rate
    tone = np.sin(2 * np.pi * 440 * t) * (t > 0.75)
    return (tone + 0.05 * rng.standard_normal(n)).astype(np.float32)


def _stream(session, audio, rate, chunks, io_binding=False):
    """silero_vad's OnnxWrapper loop: probabilities per chunk, and the last state."""
    window, context_size = (512, 64) if rate == 16000 else (256, 32)
    context = np.zeros((1, context_size), np.float32)
    state = np.zeros((2, 1, 128), np.float32)
    sr = np.array(rate, np.int64)
    probabilities = []
    binding = session.io_binding() if io_binding else None
    for i in range(chunks):
        x = np.concatenate([context, audio[None, i * window:(i + 1) * window]], axis=1)
        context = x[:, -context_size:]
        if binding is None:
            out, state = session.run(None, {"input": x, "state": state, "sr": sr})
        else:  # the state stays on the device: run k's output is run k+1's input
            binding.bind_cpu_input("input", x)
            binding.bind_cpu_input("sr", sr)
            if i == 0:
                binding.bind_cpu_input("state", state)
            binding.bind_output("output")
            binding.bind_output("stateN")
            session.run_with_iobinding(binding)
            produced = binding.get_outputs()
            out = produced[0].numpy()
            binding.bind_ortvalue_input("state", produced[1])
            state = None
        probabilities.append(float(out.ravel()[0]))
    if binding is not None:
        state = binding.copy_outputs_to_cpu()[1]
    return np.array(probabilities), state


@pytest.mark.parametrize("rate", [16000, 8000])
def test_silero_vad_streams_as_onnx_runtime_does(silero_vad, device, rate):
    ort = pytest.importorskip("onnxruntime")
    chunks = 8 if device.startswith("oclgrind") else 60
    audio = _audio(rate)
    ours = hgr.InferenceSession(silero_vad, providers=[device])
    theirs = ort.InferenceSession(silero_vad, providers=["CPUExecutionProvider"])
    got, got_state = _stream(ours, audio, rate, chunks)
    want, want_state = _stream(theirs, audio, rate, chunks)
    np.testing.assert_allclose(got, want, atol=1e-4)
    np.testing.assert_allclose(got_state, want_state, atol=1e-4)
    # sr decides the branches: one specialization per rate, each run a cache hit after
    report = ours._live().report()
    assert report["created"] == 1 and report["decisions"] == 0


def test_silero_vad_state_chained_on_the_device(silero_vad):
    ort = pytest.importorskip("onnxruntime")
    audio = _audio(16000)
    ours = hgr.InferenceSession(silero_vad, providers=["pocl:0"])
    theirs = ort.InferenceSession(silero_vad, providers=["CPUExecutionProvider"])
    got, got_state = _stream(ours, audio, 16000, 40, io_binding=True)
    want, want_state = _stream(theirs, audio, 16000, 40)
    np.testing.assert_allclose(got, want, atol=1e-4)
    np.testing.assert_allclose(got_state, want_state, atol=1e-4)


def _text_lines(count, seed):
    """count grey line images [48, w, 3] uint8 of different aspect ratios: dark strokes
    (random bars) on a light background, as a detector crops them."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(count):
        width = int(rng.integers(60, 420))
        image = np.full((48, width), 230, np.uint8)
        for x in range(4, width - 8, int(rng.integers(9, 15))):
            top, height = int(rng.integers(8, 16)), int(rng.integers(16, 30))
            image[top:top + height, x:x + int(rng.integers(2, 6))] = rng.integers(0, 60)
        lines.append(np.repeat(image[:, :, None], 3, axis=2))
    return lines


def _rec_batches(lines, batch_size=6, height=48, min_width=320):
    """rapidocr's TextRecognizer: lines sorted by aspect ratio, batches of 6 padded to
    the widest (at least 320), each line resized to height 48 (nearest, in place of
    cv2.resize) and scaled to [-1, 1]."""
    order = np.argsort([line.shape[1] / line.shape[0] for line in lines])
    for begin in range(0, len(lines), batch_size):
        batch = [lines[i] for i in order[begin:begin + batch_size]]
        ratio = max(min_width / height, *(line.shape[1] / line.shape[0] for line in batch))
        width = int(height * ratio)
        norm = np.zeros((len(batch), 3, height, width), np.float32)
        for row, line in enumerate(batch):
            resized_w = min(width, int(np.ceil(height * line.shape[1] / line.shape[0])))
            ys = np.arange(height) * line.shape[0] // height
            xs = np.arange(resized_w) * line.shape[1] // resized_w
            resized = line[ys][:, xs].astype(np.float32).transpose(2, 0, 1) / 255
            norm[row, :, :, :resized_w] = (resized - 0.5) / 0.5
        yield norm


# lines per call: 8 (a batch of 6 and one of 2, of different widths), then 1 wide line;
# rusticl on llvmpipe runs this model some 100 times slower than PoCL (seconds per
# line on the 2-core test machine): one line there
LINES = {"pocl:0": [8, 1], "rusticl:0": [1]}


@pytest.mark.parametrize("device", list(LINES))
def test_ppocr_recognizer_reads_batches_as_onnx_runtime_does(ppocr_rec, device):
    ort = pytest.importorskip("onnxruntime")
    require_device(device)
    ours = hgr.InferenceSession(ppocr_rec, providers=[device])
    theirs = ort.InferenceSession(ppocr_rec, providers=["CPUExecutionProvider"])
    names = [o.name for o in theirs.get_outputs()]
    for batch in [b for count in LINES[device] for b in _rec_batches(_text_lines(count, seed=count))]:
        feed = {theirs.get_inputs()[0].name: batch}
        (got,), (want,) = ours.run(names, feed), theirs.run(names, feed)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, atol=1e-4)
        # CTC's greedy decoding reads the same characters (where the top two are not within the tolerance)
        top2 = np.sort(want, axis=-1)[..., -2:]
        clear = top2[..., 1] - top2[..., 0] > 1e-3
        np.testing.assert_array_equal(got.argmax(-1)[clear], want.argmax(-1)[clear])


@pytest.fixture(scope="module")
def g2p_bert(tmp_path_factory):
    """(model path, token2id, config) of g2p_id's BERT."""
    import json

    path = _from_wheel(tmp_path_factory, G2P_ID_WHEEL, "g2p_id/models/bert/bert_mlm.onnx")
    with zipfile.ZipFile(os.path.join(REAL_MODELS, G2P_ID_WHEEL)) as z:
        token2id = json.loads(z.read("g2p_id/models/bert/token2id.json"))
        config = json.loads(z.read("g2p_id/models/bert/config.json"))
    return path, token2id, config


def _g2p_tokens(word, token2id, config):
    """g2p_id's BERT.predict up to its run: characters, each 'e' masked, padded."""
    text = " ".join(c if c != "e" else "[mask]" for c in word.replace("x", "ks"))
    tokens = [token2id[c] for c in text.split()]
    return tokens + [token2id[config["pad_token"]]] * (config["max_seq_length"] - len(tokens))


# Indonesian words with an 'e' to predict (the library's use); the simulator gets two
G2P_WORDS = ["kecewa", "beras", "peta", "rekening", "kemeja", "sekolah", "enak", "pelebaran"]


@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0", "oclgrind:0"])
def test_g2p_bert_predicts_masked_letters_as_onnx_runtime_does(g2p_bert, device):
    ort = pytest.importorskip("onnxruntime")
    require_device(device)
    path, token2id, config = g2p_bert
    ours = hgr.InferenceSession(path, providers=[device])
    theirs = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    mask = token2id[config["mask_token"]]
    words = G2P_WORDS[:2] if device.startswith("oclgrind") else G2P_WORDS
    for word in words:
        input_ids = np.array([_g2p_tokens(word, token2id, config)], dtype="int64")
        (got,), (want,) = ours.run(None, {"input_1": input_ids}), theirs.run(None, {"input_1": input_ids})
        np.testing.assert_allclose(got, want, atol=1e-5)
        masked = np.where(input_ids == mask)[1]
        assert len(masked) > 0
        np.testing.assert_array_equal(got[0][masked].argmax(1), want[0][masked].argmax(1))
    # a batch of every word at once (the session takes any batch the model allows)
    batch = np.array([_g2p_tokens(word, token2id, config) for word in words], dtype="int64")
    np.testing.assert_allclose(ours.run(None, {"input_1": batch})[0], theirs.run(None, {"input_1": batch})[0],
                               atol=1e-5)


@pytest.fixture(scope="module")
def ddddocr_old(tmp_path_factory):
    """(model path, charset) of ddddocr's old model; the charset is the list its
    __init__.py gives beside common_old.onnx."""
    import ast

    path = _from_wheel(tmp_path_factory, DDDDOCR_WHEEL, "ddddocr/common_old.onnx")
    with zipfile.ZipFile(os.path.join(REAL_MODELS, DDDDOCR_WHEEL)) as z:
        source = z.read("ddddocr/__init__.py").decode("utf-8")
    old_line = source[:source.index("common_old.onnx")].count("\n") + 1
    lists = sorted((node.lineno, node.value) for node in ast.walk(ast.parse(source))
                   if isinstance(node, ast.Assign) and isinstance(node.value, ast.List)
                   and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == "__charset"
                   and node.lineno > old_line)
    return path, ast.literal_eval(lists[0][1])


SEVEN_SEGMENTS = {"0": "abcdef", "1": "bc", "2": "abged", "3": "abgcd", "4": "fgbc", "5": "afgcd", "6": "afgedc",
                  "7": "abc", "8": "abcdefg", "9": "abcdfg"}


def _captcha(text, seed, height=64):
    """A grey image of seven-segment digits with jitter and noise, as ddddocr's
    classification feeds it: [1, 1, 64, width] in [-1, 1]."""
    rng = np.random.default_rng(seed)
    image = np.full((height, 30 * len(text) + 20), 235.0)
    for k, digit in enumerate(text):
        x, y, w, h, t = 12 + 30 * k + rng.integers(-3, 4), 10 + rng.integers(-3, 4), 16, 40, 4
        segments = {"a": (y, x, t, w), "g": (y + h // 2, x, t, w), "d": (y + h, x, t, w), "f": (y, x, h // 2, t),
                    "b": (y, x + w, h // 2, t), "e": (y + h // 2, x, h // 2, t), "c": (y + h // 2, x + w, h // 2 + t, t)}
        for name in SEVEN_SEGMENTS[digit]:
            top, left, rows, columns = segments[name]
            image[top:top + rows, left:left + columns] = 30
    image = np.clip(image + rng.normal(0, 12, image.shape), 0, 255)
    return ((image / 255.0 - 0.5) / 0.5).astype(np.float32)[None, None]


def _ddddocr_text(logits, charset):
    """ddddocr's reading of the logits: the argmax per step, repeats and blanks dropped."""
    text, last = [], 0
    for item in logits.argmax(-1).ravel():
        if item != last and item != 0:
            text.append(charset[item])
        last = item
    return "".join(text)


@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0"])
def test_ddddocr_quantized_reader_reads_as_onnx_runtime_does(ddddocr_old, device):
    ort = pytest.importorskip("onnxruntime")
    require_device(device)
    path, charset = ddddocr_old
    ours = hgr.InferenceSession(path, providers=[device])
    theirs = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for text, seed in [("2024", 1), ("31415", 2), ("868", 3), ("7093", 4)]:  # three widths
        image = _captcha(text, seed)
        (got,), (want,) = ours.run(None, {"input1": image}), theirs.run(None, {"input1": image})
        assert got.shape == want.shape
        error = np.linalg.norm(got - want) / np.linalg.norm(want)
        assert error < 3e-2, f"{text}: relative L2 {error:.4f}"
        np.testing.assert_array_equal(got.argmax(-1), want.argmax(-1))
        assert _ddddocr_text(got, charset) == _ddddocr_text(want, charset)


OWW_MODELS = "openwakeword/resources/models/"
# openWakeWord's heads: the embeddings each takes
OWW_HEADS = {"alexa_v0.1": 16, "hey_jarvis_v0.1": 16, "hey_mycroft_v0.1": 16, "timer_v0.1": 34, "weather_v0.1": 22}


@pytest.fixture(scope="module")
def openwakeword(tmp_path_factory):
    """name -> path of openWakeWord's melspectrogram, embedding model and heads."""
    names = ["melspectrogram", "embedding_model", *OWW_HEADS]
    return {name: _from_wheel(tmp_path_factory, OPENWAKEWORD_WHEEL, OWW_MODELS + name + ".onnx") for name in names}


def oww_audio(samples, seed=0):
    """int16 PCM as openWakeWord feeds it to the melspectrogram: [1, samples] float32
    of integer values (noise, and a chirp from the first third on)."""
    rng = np.random.default_rng(seed)
    t = np.arange(samples) / 16000
    chirp = np.sin(2 * np.pi * (300 + 900 * t) * t) * (t > t[-1] / 3)
    pcm = np.clip((0.3 * chirp + 0.02 * rng.standard_normal(samples)) * 32767, -32768, 32767).astype(np.int16)
    return pcm.astype(np.float32)[None]


def oww_window(seed=0):
    """One melspectrogram window for the embedding model: [1, 76, 32, 1], transformed."""
    return (np.random.default_rng(seed).standard_normal((1, 76, 32, 1)) + 2).astype(np.float32)


def oww_features(count, seed=0):
    """The last count embeddings, as a head takes them: [1, count, 96]."""
    return np.random.default_rng(seed).standard_normal((1, count, 96)).astype(np.float32)


def _oww_embeddings(melspec, embedding, audio):
    """openWakeWord's AudioFeatures._get_embeddings: [windows, 96]."""
    spec = np.squeeze(melspec.run(None, {"input": audio})[0]) / 10 + 2
    windows = [spec[i:i + 76] for i in range(0, spec.shape[0], 8) if spec[i:i + 76].shape[0] == 76]
    batch = np.expand_dims(np.array(windows), axis=-1).astype(np.float32)
    return embedding.run(None, {"input_1": batch})[0].squeeze()


@pytest.mark.parametrize("device", ["pocl:0", "rusticl:0", "oclgrind:0"])
def test_openwakeword_pipeline_as_onnx_runtime_does(openwakeword, device):
    """A clip's melspectrogram, embeddings over its windows and every head's score,
    each stage fed with hgr's own previous stage, against ONNX Runtime's chain; then
    the streaming calls (1,760 samples: 1,280 new and 480 of context)."""
    ort = pytest.importorskip("onnxruntime")
    require_device(device)

    def sessions(name):
        return (hgr.InferenceSession(openwakeword[name], providers=[device]),
                ort.InferenceSession(openwakeword[name], providers=["CPUExecutionProvider"]))
    melspec, embedding = sessions("melspectrogram"), sessions("embedding_model")
    audio = oww_audio(16000 if device.startswith("oclgrind") else 32000)
    got = _oww_embeddings(melspec[0], embedding[0], audio)
    want = _oww_embeddings(melspec[1], embedding[1], audio)
    assert got.shape == want.shape and got.shape[0] >= 3
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    for name, count in OWW_HEADS.items():
        ours, theirs = sessions(name)
        features = np.zeros((1, count, 96), np.float32)
        taken = min(count, got.shape[0])
        features[0, -taken:] = got[-taken:]
        wanted = np.zeros_like(features)
        wanted[0, -taken:] = want[-taken:]
        np.testing.assert_allclose(ours.run(None, {ours.get_inputs()[0].name: features})[0],
                                   theirs.run(None, {theirs.get_inputs()[0].name: wanted})[0], atol=1e-4,
                                   err_msg=name)
    chunk = oww_audio(1760, seed=1)
    np.testing.assert_allclose(melspec[0].run(None, {"input": chunk})[0], melspec[1].run(None, {"input": chunk})[0],
                               rtol=1e-4, atol=1e-4)
