"""Tiny real models (under a millisecond in ONNX Runtime), run by the thousand by
their users: openWakeWord 0.4.0's models as its wheel ships them (its streaming
melspectrogram of 1,760 samples, its speech-embedding CNN on one 76-frame window,
and wake-word heads on 16 or 34 embeddings: three Gemms; layer norms and an If; two
LSTMs), and Silero VAD 5.1.2 on a 512-sample chunk with its state, each fed as its own
library feeds ONNX Runtime (issue 39, section 2). Per model:

  - hgr.InferenceSession on PoCL's pthread device and on its basic device (which runs
    each command in the thread that waits for it: no hand-off to driver threads), ONNX
    Runtime and OpenVINO (bench/peers.py: CPU, threads = cores; OpenVINO at f32 and at
    its default precision), taking turns in phases (peers.phased_medians): median call
    in microseconds;
  - what the Python session adds on the basic device: session.run's median less that
    of the same executor's run() + wait() with the call's bindings kept;
  - `hgr run --repeat` (the C API, the input set once, no output read back) on each
    device: the median run.

  python bench/tiny_models.py WORK PTHREAD_SPEC BASIC_SPEC CALLS HGR   (markdown on stdout)
A missing wheel is a row that says so."""
import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python", "tests"))
import test_real_models as real  # noqa: E402  (the pinned wheels and the libraries' feeds)
from real_models import silero_case, wheel_member  # noqa: E402
from peers import ms_cell, peer_sessions, peer_titles, phased_medians, print_refusals  # noqa: E402

MODELS = "openwakeword/resources/models/"


def cases(work):
    """(title, path or None, feed) of every timed model."""
    def oww(name):
        return wheel_member(work, real.OPENWAKEWORD_WHEEL, MODELS + name + ".onnx")
    rows = []
    features = real.oww_features(16)
    rows.append(("openWakeWord melspectrogram, 1,760 samples", oww("melspectrogram"),
                 {"input": real.oww_audio(1760)}))
    rows.append(("openWakeWord speech embedding, one 76 x 32 window", oww("embedding_model"),
                 {"input_1": real.oww_window()}))
    rows.append(("openWakeWord alexa head (3 Gemms)", oww("alexa_v0.1"), {"onnx::Flatten_0": features}))
    rows.append(("openWakeWord timer head (3 Gemms, softmax; 34 embeddings)", oww("timer_v0.1"),
                 {"onnx::Flatten_0": real.oww_features(34)}))
    rows.append(("openWakeWord hey jarvis head (layer norms, an If)", oww("hey_jarvis_v0.1"), {"x.1": features}))
    rows.append(("openWakeWord hey mycroft head (2 LSTMs)", oww("hey_mycroft_v0.1"), {"input_1": features}))
    rows.append(("Silero VAD 5.1.2, a 512-sample chunk", *silero_case(work)))
    return rows


def _median_us(function, calls):
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e6


def python_adds_us(session, feed, calls):
    """session.run's median less its executor's run() + wait() with the bindings kept
    (microseconds); None for a model that runs in stages (no one executor)."""
    session.run(None, feed)
    ex = session._last
    if ex is None or session._staged:
        return None

    def bound():
        ex.run()
        ex.wait()
    for _ in range(100):
        session.run(None, feed)
        bound()
    return _median_us(lambda: session.run(None, feed), calls) - _median_us(bound, calls)


def cli_median_us(hgr, path, feed, device, work, runs):
    """`hgr run --repeat runs` on device with feed as .npy inputs: the median run (us),
    or the last line of its error output."""
    args = [hgr, "run", path, "--devices", device, "--repeat", str(runs)]
    for i, (name, value) in enumerate(feed.items()):
        npy = os.path.join(work, f"input_{i}.npy")
        np.save(npy, value)
        args += ["--input", f"{name}={npy}"]
    done = subprocess.run(args, capture_output=True, text=True)
    found = re.search(r"median ([0-9.]+) ms", done.stdout)
    if done.returncode or not found:
        return (done.stderr.strip().splitlines() or ["failed"])[-1]
    return float(found.group(1)) * 1e3


def main():
    import hgr
    work, pthread, basic, calls, cli = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    os.makedirs(work, exist_ok=True)
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    titles = peer_titles()
    print(f"| model | {titles[0]} us | {titles[1]} us | {titles[2]} us | hgr session, {pthread} (pthread) us | "
          f"ratio | hgr session, {basic} (basic) us | ratio | Python adds, {basic} (us) | `hgr run`, {pthread} us | "
          f"`hgr run`, {basic} us | `hgr run` {basic} ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    refusals = []
    for title, path, feed in cases(work):
        if path is None:
            print(f"| {title} | wheel missing (scripts/setup.sh test downloads it) |" + " |" * 11)
            continue
        on_pthread = hgr.InferenceSession(path, providers=[pthread])
        on_basic = hgr.InferenceSession(path, providers=[basic])
        peers = peer_sessions(path, options)
        ms, _ = phased_medians([on_pthread, on_basic] + peers, feed, calls)
        refusals.append((title, None, peers, None))
        threaded_us, basic_us, ort_us = (1e3 * m for m in ms[:3])
        openvino = [ms_cell(1e3 * m, 1) if m is not None else ms_cell(p) for m, p in zip(ms[3:], peers[1:])]
        adds = python_adds_us(on_basic, feed, calls)
        runs = [cli_median_us(cli, path, feed, device, work, calls) for device in (pthread, basic)]
        cells = [f"{r:.1f}" if isinstance(r, float) else r for r in runs]
        cli_ratio = f"**{runs[1] / ort_us:.2f}**" if isinstance(runs[1], float) else ""
        print(f"| {title} | {ort_us:.1f} | {openvino[0]} | {openvino[1]} | {threaded_us:.1f} | "
              f"{threaded_us / ort_us:.2f} | {basic_us:.1f} | **{basic_us / ort_us:.2f}** | "
              f"{'-' if adds is None else f'{adds:.1f}'} | {cells[0]} | {cells[1]} | {cli_ratio} |")
        print(f"{title}: ORT {ort_us:.1f} us, OpenVINO {openvino}, hgr {threaded_us:.1f} / {basic_us:.1f} us",
              file=sys.stderr, flush=True)
        for session in (on_pthread, on_basic):
            session.close()
    print_refusals(refusals)


if __name__ == "__main__":
    main()
