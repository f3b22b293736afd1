"""Real models that PyPI packages ship inside their wheels (pinned by version and
sha256 in scripts/setup.sh, which downloads them into HGR_REAL_MODELS), called the
way their own libraries call ONNX Runtime, against ONNX Runtime.

Silero VAD 5.1.2 (`silero-vad` wheel, silero_vad/data/silero_vad.onnx): 25 Ifs (on
the sample rate input `sr`, which hgr specializes on by value, and on shapes), 4
LSTMs, a streaming state [2, 1, 128] fed back each chunk. silero_vad's OnnxWrapper
prepends the last 64 samples (32 at 8 kHz) of the previous chunk to each 512-sample
(256) chunk and calls run(None, {'input', 'state', 'sr'})."""
import os
import zipfile

import numpy as np
import pytest

import hgr

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REAL_MODELS = os.environ.get("HGR_REAL_MODELS", os.path.join(ROOT, "build", "real-models"))
SILERO_WHEEL = "silero_vad-5.1.2-py3-none-any.whl"


@pytest.fixture(scope="module")
def silero_vad(tmp_path_factory):
    wheel = os.path.join(REAL_MODELS, SILERO_WHEEL)
    if not os.path.exists(wheel):
        pytest.skip(f"{wheel} is missing: scripts/setup.sh test downloads it (no network?)")
    path = tmp_path_factory.mktemp("silero") / "silero_vad.onnx"
    with zipfile.ZipFile(wheel) as z:
        path.write_bytes(z.read("silero_vad/data/silero_vad.onnx"))
    return str(path)


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
