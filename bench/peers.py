"""The runtimes the benches time hgr beside (issue 39, section 1), each called as an ONNX
Runtime session is called (run(None, feed) -> a list of arrays), and the phased timing
that gives each of them the same machine.

- ONNX Runtime: the CPU provider, intra-op threads = cores (the session options the
  caller passes).
- OpenVINO (the `openvino` wheel, which bench/python_bench.sh installs at its pinned
  version; without it the benches say so and leave its columns empty): the CPU plugin,
  INFERENCE_NUM_THREADS = cores, once with INFERENCE_PRECISION_HINT f32 and once at its
  own default precision, which is bfloat16 on CPUs with AVX-512 BF16 or AMX and f32
  elsewhere; the column's title says which this machine got. A model OpenVINO cannot
  read or compile (a com.microsoft op, say) is a cell that says "refused".
"""
import os
import statistics
import sys
import time

import numpy as np

ROUNDS = 2  # phases of each runtime's timed calls
SETTLE = 0.2  # seconds of untimed calls that begin each phase
WARM_UP = 3


class OpenVinoSession:
    """An OpenVINO compiled model on the CPU plugin, called as an ONNX Runtime session:
    run(None, feed) returns the outputs, copies the caller keeps, in the model's order."""

    def __init__(self, path, precision=None):
        import openvino as ov
        config = {"INFERENCE_NUM_THREADS": os.cpu_count() or 1}
        if precision:
            config["INFERENCE_PRECISION_HINT"] = precision
        self._compiled = ov.Core().compile_model(path, "CPU", config)
        self._request = self._compiled.create_infer_request()
        self._outputs = list(self._compiled.outputs)

    def run(self, _names, feed):
        result = self._request.infer(feed)
        return [np.array(result[output]) for output in self._outputs]


def openvino_version():
    """OpenVINO's version ("2026.4.1"), or None when the wheel is not installed."""
    try:
        from importlib.metadata import PackageNotFoundError, version
        return version("openvino")
    except PackageNotFoundError:
        return None


def peer_titles():
    """The titles of the peers' columns, ONNX Runtime's first: what peer_sessions gives."""
    import onnxruntime as ort
    titles = [f"ONNX Runtime {ort.__version__}"]
    ov = openvino_version()
    if ov is None:
        return titles + ["OpenVINO (not installed)"] * 2
    import openvino as ov_module
    default = ov_module.Core().get_property("CPU", "INFERENCE_PRECISION_HINT").to_string()
    return titles + [f"OpenVINO {ov} f32", f"OpenVINO {ov} default ({default})"]


def peer_sessions(path, options):
    """ONNX Runtime's session of the model at path, then OpenVINO's at f32 and at its default
    precision: a peer that is not installed is None, one that refuses the model the last
    line of its error, which says what failed (a str)."""
    import onnxruntime as ort
    sessions = [ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])]
    for precision in ("f32", None):
        if openvino_version() is None:
            sessions.append(None)
            continue
        try:
            sessions.append(OpenVinoSession(path, precision))
        except Exception as error:  # noqa: BLE001  (OpenVINO's errors have no common base)
            reason = (str(error).strip().splitlines() or [type(error).__name__])[-1].lstrip("- ")
            print(f"OpenVINO refuses {os.path.basename(path)}: {reason}", file=sys.stderr, flush=True)
            sessions.append(reason)
    return sessions


def phased_medians(sessions, feed, calls):
    """The median call (ms) of each session over calls of each after WARM_UP of each, and
    each one's last outputs; a session that is None or a str (peer_sessions) gives None
    for both. The sessions take turns in ROUNDS phases of calls / ROUNDS timed calls, so
    that all meet the same load (the test machine is shared), and each phase first calls
    its session untimed for SETTLE seconds: ONNX Runtime's intra-op threads go on
    spinning after its calls return, and in the 40 ms after a block of its calls hgr's
    encoder at 1 x 16 took 6-8 ms a call against 3.5-3.8 alone (in blocks of 5 calls, the
    median was 7.2 ms against 3.5-3.7 alone; bench/notes.md, "Alternating runtimes in
    blocks of 5")."""
    live = [s if s is not None and not isinstance(s, str) else None for s in sessions]
    for _ in range(WARM_UP):
        for session in filter(None, live):
            session.run(None, feed)
    times = [[] for _ in live]
    last = [None] * len(live)
    for round_ in range(ROUNDS):
        for index, session in enumerate(live):
            if session is None:
                continue
            timed = times[index]
            settle_end = time.perf_counter() + SETTLE
            outputs = session.run(None, feed)
            while time.perf_counter() < settle_end:
                outputs = session.run(None, feed)
            for _ in range(calls * (round_ + 1) // ROUNDS - len(timed)):
                start = time.perf_counter()
                outputs = session.run(None, feed)
                timed.append(time.perf_counter() - start)
            last[index] = outputs
    return [statistics.median(t) * 1e3 if t else None for t in times], last


def largest_difference(a, b):
    """The largest absolute difference between two lists of outputs."""
    return max(float(np.max(np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64)))) for x, y in zip(a, b))


def compare_cases(timed, device, calls, options):
    """(title, hgr ms, [each peer's ms, peer_titles' order], largest difference from ONNX
    Runtime) of each (title, path, feed) of timed, by phased_medians over one session of
    each runtime per model (over its shapes, as a library keeps one); a path of None gives
    a row of Nones; a peer that is missing or refuses the model, a None or its reason
    (a str) in place of its ms."""
    import hgr
    sessions, rows = {}, []
    for title, path, feed in timed:
        if path is None:
            rows.append((title, None, None, None))
            continue
        if path not in sessions:
            sessions[path] = [hgr.InferenceSession(path, providers=[device])] + peer_sessions(path, options)
        runtimes = sessions[path]
        ms, outputs = phased_medians(runtimes, feed, calls)
        peers = [m if m is not None else runtimes[i + 1] for i, m in enumerate(ms[1:])]
        rows.append((title, ms[0], peers, largest_difference(outputs[0], outputs[1])))
        print(f"{title}: hgr {ms[0]:.3f} ms, peers {peers}", file=sys.stderr, flush=True)
    return rows


def ms_cell(value, digits=2):
    """A peer's cell: its ms, or why there is none."""
    if value is None:
        return "not installed"
    if isinstance(value, str):
        return "refused"
    return f"{value:.{digits}f}"


def ratio_cell(ours, theirs, bold=False):
    """hgr's ms over a peer's, or empty where the peer has no figure."""
    if ours is None or theirs is None or isinstance(theirs, str):
        return ""
    text = f"{ours / theirs:.2f}"
    return f"**{text}**" if bold else text


def print_table(rows, device, first_column, digits=2):
    """compare_cases' rows as a Markdown table: hgr's ms, each peer's, hgr over each peer's
    (ONNX Runtime's in bold), and the largest difference from ONNX Runtime's outputs."""
    titles = peer_titles()
    print(f"| {first_column} | hgr ({device}) ms | " + " | ".join(f"{t} ms" for t in titles) + " | " +
          " | ".join(f"hgr / {t}" for t in titles) + " | largest difference |")
    print("|---|" + "---:|" * (1 + 2 * len(titles) + 1))
    for title, ours, peers, diff in rows:
        if ours is None:
            print(f"| {title} | wheel missing (scripts/setup.sh test downloads it) |" + " |" * (2 * len(titles) + 1))
            continue
        print(f"| {title} | {ours:.{digits}f} | " + " | ".join(ms_cell(p, digits) for p in peers) + " | " +
              " | ".join(ratio_cell(ours, p, bold=(i == 0)) for i, p in enumerate(peers)) + f" | {diff:.1e} |")
    print_refusals(rows)


def print_refusals(rows):
    """Under a table, what OpenVINO said when it refused a model (compare_cases' rows)."""
    refusals = {title: next((p for p in peers if isinstance(p, str)), None) for title, _, peers, _ in rows if peers}
    refusals = {title: reason for title, reason in refusals.items() if reason}
    if refusals:
        print()
        for title, reason in refusals.items():
            print(f"OpenVINO refused {title}: \"{reason}\".")
