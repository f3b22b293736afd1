"""hgr.InferenceSession on every test-bed platform: introspection, runs, async
runs, DLPack and buffer inputs, profiling, output buffers, lifetime."""
import json
import os

import numpy as np
import pytest

import hgr
from conftest import OnlyDlpack, require_device, tiny_reference


def _session(tiny_model, device, **kwargs):
    model, _, _ = tiny_model
    return hgr.InferenceSession(model, providers=[device], **kwargs)


def test_inputs_and_outputs_read_as_onnx_runtime_writes_them(tiny_model, device):
    with _session(tiny_model, device) as sess:
        (x,) = sess.get_inputs()
        assert (x.name, x.shape, x.type) == ("x", [2, 4], "tensor(float)")
        assert [(o.name, o.shape, o.type) for o in sess.get_outputs()] == [
            ("y", [2, 3], "tensor(float)"), ("z", [2, 4], "tensor(float)")]
        assert sess.get_providers() == [device]


def test_run_gives_the_reference_outputs(tiny_model, device):
    _, w, b = tiny_model
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    with _session(tiny_model, device) as sess:
        y, z = sess.run(None, {"x": x})
        want = tiny_reference(x, w, b)
        np.testing.assert_allclose(y, want[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(z, want[1])
        (z_only,) = sess.run(["z"], {"x": x})
        np.testing.assert_array_equal(z_only, want[1])
        # Arrays handed out earlier keep their values when later runs go on.
        sess.run(None, {"x": x + 1})
        np.testing.assert_array_equal(z, want[1])


def test_run_feed_binds_runs_and_checks_its_arguments(tiny_model):
    """Executor.run_feed, the session's call path in one call into C: fresh outputs
    each call (small ones copied out of a staging array, bind_feed's aligned as asked);
    a fed tuple that does not match the feeds, or names an input the executor lacks,
    is refused before anything is bound."""
    _, w, b = tiny_model
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    require_device("pocl:0")
    with _session(tiny_model, "pocl:0") as sess:
        sess.run(None, {"x": x})
        ex, fed = sess.executor, sess._fed[sess.executor]
        first = ex.run_feed([x], fed, 256)
        second = ex.run_feed([x + 1], fed, 256)
        assert not any(np.shares_memory(a, b) for a in first for b in second)
        np.testing.assert_array_equal(first[1], -x)
        np.testing.assert_array_equal(second[1], -(x + 1))
        np.testing.assert_allclose(first[0], tiny_reference(x, w, b)[0], rtol=1e-5, atol=1e-6)
        bound = ex.bind_feed([x], fed, 256)
        assert all(array.ctypes.data % 256 == 0 for array in bound)
        ex.run()
        ex.wait()
        np.testing.assert_array_equal(bound[1], -x)
        with pytest.raises(ValueError, match="fed has 2 entries for 1 feeds"):
            ex.run_feed([x], fed + (0,), 64)
        with pytest.raises(IndexError, match="out of range"):
            ex.run_feed([x], (ex.input_count,), 64)
        with pytest.raises(hgr.InvalidArgumentError, match="input"):
            ex.run_feed([x.astype(np.float64)], fed, 64)


def test_a_model_loads_from_a_path(tiny_model, tmp_path):
    model, w, b = tiny_model
    path = tmp_path / "tiny.onnx"
    path.write_bytes(model)
    x = np.ones((2, 4), np.float32)
    with hgr.InferenceSession(str(path)) as by_str, hgr.InferenceSession(path) as by_pathlike:
        for sess in (by_str, by_pathlike):
            np.testing.assert_allclose(sess.run(None, {"x": x})[0], tiny_reference(x, w, b)[0], rtol=1e-5)


def test_a_model_from_a_fifo_is_read_once(tiny_model, tmp_path):
    """The session reads a path once and shares the bytes between the loader and its
    own readers of names and dims: a FIFO, which has no second reading, loads."""
    import threading

    model, w, b = tiny_model
    path = tmp_path / "tiny.fifo"
    os.mkfifo(path)
    writer = threading.Thread(target=path.write_bytes, args=(model,))
    writer.start()
    try:
        with hgr.InferenceSession(str(path)) as sess:
            x = np.ones((2, 4), np.float32)
            np.testing.assert_allclose(sess.run(None, {"x": x})[0], tiny_reference(x, w, b)[0], rtol=1e-5)
            assert [o.name for o in sess.get_outputs()] == ["y", "z"]
    finally:
        if writer.is_alive():  # a failed open: let the writer finish
            with open(path, "rb") as f:
                f.read()
        writer.join()


def test_an_unknown_keyword_argument_is_warned_about_not_ignored_silently(tiny_model):
    model = tiny_model[0]
    with pytest.warns(RuntimeWarning, match="ignores the keyword argument 'device' \\(devices are given as providers"):
        hgr.InferenceSession(model, device="pocl:0")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hgr.InferenceSession(model, disabled_optimizers=["x"])  # ONNX Runtime's: accepted quietly


def test_a_missing_or_special_model_path_is_an_hgr_error(tmp_path):
    with pytest.raises(hgr.NotFoundError, match="missing.onnx"):
        hgr.InferenceSession(str(tmp_path / "missing.onnx"))
    with pytest.raises(hgr.InvalidArgumentError, match="is a directory"):
        hgr.InferenceSession(str(tmp_path))


def test_inputs_come_from_dlpack_and_buffer_objects(tiny_model, device):
    _, w, b = tiny_model
    x = np.arange(8, dtype=np.float32).reshape(2, 4) / 8
    want = tiny_reference(x, w, b)[0]
    with _session(tiny_model, device) as sess:
        for feed in (OnlyDlpack(x), memoryview(x), x.tobytes() and memoryview(bytearray(x.tobytes())).cast("f", (2, 4)),
                     x.T.copy().T):  # the last one is Fortran-ordered: copied to C order
            np.testing.assert_allclose(sess.run(["y"], {"x": feed})[0], want, rtol=1e-5, atol=1e-6)


def test_outputs_take_numpy_and_dlpack(tiny_model, device):
    x = np.ones((2, 4), np.float32)
    with _session(tiny_model, device) as sess:
        z = sess.run(["z"], {"x": x})[0]
        assert isinstance(z, np.ndarray) and z.flags.c_contiguous and z.flags.writeable
        np.testing.assert_array_equal(np.from_dlpack(z), -x)


def test_several_async_runs_in_flight_each_give_their_own_outputs(tiny_model, device):
    _, w, b = tiny_model
    xs = [np.full((2, 4), k, np.float32) for k in range(6)]
    with _session(tiny_model, device) as sess:
        futures = [sess.run_async(None, {"x": x}) for x in xs]
        assert all(isinstance(f.done(), bool) for f in futures)
        for x, future in reversed(list(zip(xs, futures))):
            y, z = future.result()
            np.testing.assert_allclose(y, tiny_reference(x, w, b)[0], rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(z, -x)
            assert future.done()


def test_profile_lists_the_nodes_and_the_trace_is_chrome_json(tiny_model, device, tmp_path):
    x = np.ones((2, 4), np.float32)
    with _session(tiny_model, device, sess_options={"enable_profiling": True}) as sess:
        sess.run(None, {"x": x})
        rows = sess.profile()
        assert rows and {"name", "op", "device", "device_ns"} <= set(rows[0])
        assert {row["device"] for row in rows} == {device}
        path = sess.write_trace(tmp_path / "trace.json")
        trace = json.load(open(path))
        assert trace["traceEvents"]
        assert "device" in sess.profile_summary()


def test_sess_options_objects_turn_profiling_on_like_onnx_runtimes(tiny_model):
    class SessionOptions:  # onnxruntime.SessionOptions' attribute
        enable_profiling = True

    with _session(tiny_model, "pocl:0" if _has("pocl:0") else "cpu:0", sess_options=SessionOptions()) as sess:
        sess.run(None, {"x": np.ones((2, 4), np.float32)})
        assert sess.profile()


def test_profile_without_profiling_is_a_failed_precondition(tiny_model, device):
    with _session(tiny_model, device) as sess:
        sess.run(None, {"x": np.ones((2, 4), np.float32)})
        with pytest.raises(hgr.FailedPreconditionError):
            sess.profile()


def test_output_buffer_exposes_the_opencl_buffer(tiny_model, device):
    with _session(tiny_model, device) as sess:
        sess.run(None, {"x": np.ones((2, 4), np.float32)})
        with sess.output_buffer("y") as buffer:
            assert buffer.bytes == 2 * 3 * 4
            assert buffer.mem and buffer.context and buffer.device and buffer.ready
            assert buffer.spec == device
            buffer.wait()


def test_a_closed_session_refuses_runs(tiny_model, device):
    sess = _session(tiny_model, device)
    sess.close()
    sess.close()
    with pytest.raises(hgr.FailedPreconditionError, match="closed"):
        sess.run(None, {"x": np.ones((2, 4), np.float32)})


def test_place_rules_put_nodes_where_they_say(tiny_model):
    for spec in ("pocl:0", "pocl:1"):
        _require(spec)
    model, w, b = tiny_model
    x = np.ones((2, 4), np.float32)
    with hgr.InferenceSession(model, providers=["pocl:0", "pocl:1"], place="op:negative=pocl:1",
                              sess_options={"enable_profiling": True}) as sess:
        y, z = sess.run(None, {"x": x})
        np.testing.assert_array_equal(z, -x)
        devices = {row["op"]: row["device"] for row in sess.profile()}
        assert "pocl:1" in devices.values(), devices


def _has(spec):
    try:
        hgr.find_device(spec)
        return True
    except hgr.NotFoundError:
        return False


def _require(spec):
    if not _has(spec):
        pytest.skip(f"no device {spec}")
