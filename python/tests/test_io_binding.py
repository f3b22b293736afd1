"""ONNX Runtime's IOBinding over hgr's device values (issue 36, section 3).

An ORT user's streaming loop (a chunk from the host, the state fed back from the
previous run's outputs) is one script body, run once after ``import onnxruntime
as rt`` and once after ``import hgr as rt``; the outputs must agree chunk by
chunk, and hgr's executor must show that the state never went through host
memory between runs (io_traffic). Then ONNX Runtime's own IOBinding and OrtValue
are the yardstick for the names and parameters hgr offers."""
import inspect
import textwrap

import numpy as np
import pytest

import hgr
from conftest import require_device

IN, HIDDEN = 16, 32

# The ORT user's script: only the import differs between the two runs. The outputs
# are bound again each chunk: ONNX Runtime keeps writing the values of outputs bound
# once into the same buffers, so the state output would overwrite the state input
# while the run reads it (and y.numpy() shares that memory, hence the copy). hgr
# gives every run's outputs their own values either way (test below).
STREAMING_LOOP = textwrap.dedent(
    """
    sess = rt.InferenceSession(model_bytes, providers=providers)
    binding = sess.io_binding()
    state = rt.OrtValue.ortvalue_from_numpy(np.zeros((1, HIDDEN), np.float32))
    ys = []
    for chunk in chunks:
        binding.bind_cpu_input("x", chunk)
        binding.bind_ortvalue_input("state", state)
        binding.bind_output("y")
        binding.bind_output("state_out")
        sess.run_with_iobinding(binding)
        y, state = binding.get_outputs()
        ys.append(y.numpy().copy())
    last_state = state.numpy()
    """
)


@pytest.fixture(scope="module")
def streaming_model(onnx_module):
    """state_out = tanh(x @ W + state @ U), y = sigmoid(state_out); x [1, 16], state [1, 32]."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(36)
    w = rng.uniform(-0.3, 0.3, (IN, HIDDEN)).astype(np.float32)
    u = rng.uniform(-0.25, 0.25, (HIDDEN, HIDDEN)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["xw"]),
            helper.make_node("MatMul", ["state", "U"], ["su"]),
            helper.make_node("Add", ["xw", "su"], ["sum"]),
            helper.make_node("Tanh", ["sum"], ["state_out"]),
            helper.make_node("Sigmoid", ["state_out"], ["y"]),
        ],
        "streaming",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, IN]),
            helper.make_tensor_value_info("state", TensorProto.FLOAT, [1, HIDDEN]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, HIDDEN]),
            helper.make_tensor_value_info("state_out", TensorProto.FLOAT, [1, HIDDEN]),
        ],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(u, "U")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def chunks_of(count):
    rng = np.random.default_rng(7)
    return [rng.uniform(-2, 2, (1, IN)).astype(np.float32) for _ in range(count)]


def run_loop(rt, model_bytes, chunks, providers):
    scope = {"rt": rt, "np": np, "HIDDEN": HIDDEN, "model_bytes": model_bytes, "chunks": chunks,
             "providers": providers}
    exec(STREAMING_LOOP, scope)
    return scope


@pytest.fixture(scope="module")
def onnxruntime():
    return pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")


def chunk_count(device):
    return 20 if device.startswith("oclgrind") else 200


def test_the_ort_streaming_loop_runs_on_hgr_and_keeps_the_state_on_the_device(streaming_model, onnxruntime, device):
    chunks = chunks_of(chunk_count(device))
    ort = run_loop(onnxruntime, streaming_model, chunks, ["CPUExecutionProvider"])
    ours = run_loop(hgr, streaming_model, chunks, [device])
    for k, (got, want) in enumerate(zip(ours["ys"], ort["ys"])):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"chunk {k}")
    np.testing.assert_allclose(ours["last_state"], ort["last_state"], rtol=1e-5, atol=1e-5)
    # The state went from run to run on the device: once from the host (the zeros),
    # once to it (the final numpy()); every other run took it from a device buffer.
    sess = ours["sess"]
    ex = sess.executor
    runs = len(chunks)
    state_in = ex.io_traffic("input", "state")
    state_out = ex.io_traffic("output", 1)
    assert state_in["host_copies"] == 1, state_in
    assert state_in["device_buffers"] == runs - 1, state_in
    assert state_in["device_waits"] == runs - 1, state_in
    assert state_out["host_copies"] == 1, state_out
    assert state_out["device_buffers"] == runs - 1, state_out
    assert ex.io_traffic("input", "x")["host_copies"] == runs
    assert ex.binding_kind("input", "state") == "buffer"
    y, state = ours["binding"].get_outputs()
    assert state.device_name() == device
    assert ours["state"].shape() == [1, HIDDEN] and ours["state"].data_type() == "tensor(float)"
    assert state.element_type() == 1
    sess.close()


def test_outputs_bound_once_still_give_each_run_its_own_values(streaming_model, onnxruntime, device):
    """Where ONNX Runtime (1.32, CPU) writes every run into the outputs bound once, so
    that a state fed back is overwritten while it is read, hgr's runs never write an
    earlier run's output again: binding once outside the loop is right too."""
    chunks = chunks_of(min(chunk_count(device), 30))
    ort = run_loop(onnxruntime, streaming_model, chunks, ["CPUExecutionProvider"])
    rebinding = '    binding.bind_output("y")\n    binding.bind_output("state_out")\n'
    assert STREAMING_LOOP.count(rebinding) == 1
    loop = STREAMING_LOOP.replace(rebinding, "").replace("ys = []\n", "ys = []\n" + rebinding.replace("    ", ""))
    scope = {"rt": hgr, "np": np, "HIDDEN": HIDDEN, "model_bytes": streaming_model, "chunks": chunks,
             "providers": [device]}
    exec(loop, scope)
    for k, (got, want) in enumerate(zip(scope["ys"], ort["ys"])):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"chunk {k}")
    scope["sess"].close()


def test_the_state_crosses_platforms_between_two_sessions(streaming_model, onnxruntime):
    """Chunks alternate between a session on pocl:0 and one on rusticl:0: the state
    goes from one context to the other (staged through the host, ordered by a bridge)."""
    require_device("pocl:0")
    require_device("rusticl:0")
    chunks = chunks_of(60)
    ort = run_loop(onnxruntime, streaming_model, chunks, ["CPUExecutionProvider"])
    sessions = [hgr.InferenceSession(streaming_model, providers=[spec]) for spec in ("pocl:0", "rusticl:0")]
    bindings = [s.io_binding() for s in sessions]
    state = hgr.OrtValue.ortvalue_from_numpy(np.zeros((1, HIDDEN), np.float32))
    for k, chunk in enumerate(chunks):
        sess, binding = sessions[k % 2], bindings[k % 2]
        binding.bind_cpu_input("x", chunk)
        binding.bind_ortvalue_input("state", state)
        binding.bind_output("y")
        binding.bind_output("state_out")
        sess.run_with_iobinding(binding)
        y, state = binding.get_outputs()
        np.testing.assert_allclose(y.numpy(), ort["ys"][k], rtol=1e-5, atol=1e-5, err_msg=f"chunk {k}")
    np.testing.assert_allclose(state.numpy(), ort["last_state"], rtol=1e-5, atol=1e-5)
    assert sessions[1].executor.binding_kind("input", "state") == "staged_copy"
    assert sessions[1].executor.io_traffic("input", "state")["device_waits"] == len(chunks) // 2
    for sess in sessions:
        sess.close()


def test_host_values_raw_pointers_and_host_outputs(streaming_model, onnxruntime):
    require_device("pocl:0")
    chunks = chunks_of(3)
    zeros = np.zeros((1, HIDDEN), np.float32)
    ort = run_loop(onnxruntime, streaming_model, chunks, ["CPUExecutionProvider"])
    with hgr.InferenceSession(streaming_model, providers=["pocl:0"]) as sess:
        binding = sess.io_binding()
        # An input by raw host pointer (ONNX Runtime's bind_input), an output into a host OrtValue.
        x = chunks[0].copy()
        binding.bind_input("x", "cpu", 0, np.float32, list(x.shape), x.ctypes.data)
        binding.bind_ortvalue_input("state", hgr.OrtValue.ortvalue_from_shape_and_type([1, HIDDEN], 1))
        y_host = hgr.OrtValue.ortvalue_from_numpy(np.full((1, HIDDEN), -1, np.float32))
        binding.bind_ortvalue_output("y", y_host)
        binding.bind_output("state_out")
        sess.run_with_iobinding(binding)
        # The host output holds the values once run_with_iobinding returns.
        np.testing.assert_allclose(y_host.numpy(), ort["ys"][0], rtol=1e-5, atol=1e-5)
        y, state = binding.get_outputs()
        assert y.device_name() == "cpu" and state.device_name() == "pocl:0"
        got_y, got_state = binding.copy_outputs_to_cpu()
        np.testing.assert_allclose(got_y, ort["ys"][0], rtol=1e-5, atol=1e-5)
        # A host input is copied when the run starts: the array may change right after.
        x[...] = 1e6
        binding.bind_cpu_input("x", chunks[1])
        binding.bind_ortvalue_input("state", state)
        sess.run_with_iobinding(binding)
        binding.synchronize_outputs()
        np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], ort["ys"][1], rtol=1e-5, atol=1e-5)
        # run() on the same session afterwards: its own bindings replace the device ones.
        (y_run,) = sess.run(["y"], {"x": chunks[0], "state": zeros})
        np.testing.assert_allclose(y_run, ort["ys"][0], rtol=1e-5, atol=1e-5)


def test_what_io_binding_refuses(streaming_model):
    require_device("pocl:0")
    with hgr.InferenceSession(streaming_model, providers=["pocl:0"]) as sess:
        binding = sess.io_binding()
        with pytest.raises(hgr.NotFoundError, match="Invalid input name: nope"):
            binding.bind_cpu_input("nope", np.zeros(1, np.float32))
        with pytest.raises(hgr.NotFoundError, match="output 'nope'"):
            binding.bind_output("nope")
        with pytest.raises(hgr.UnimplementedError, match="host memory only"):
            binding.bind_input("x", "cuda", 0, np.float32, [1, IN], 0)
        binding.bind_cpu_input("x", np.zeros((1, IN), np.float32))
        with pytest.raises(hgr.InvalidArgumentError, match="lacks input.*state"):
            sess.run_with_iobinding(binding)
        binding.bind_cpu_input("state", np.zeros((1, HIDDEN), np.float64))
        with pytest.raises(hgr.InvalidArgumentError, match="Unexpected input data type"):
            sess.run_with_iobinding(binding)
        # A device value of the wrong shape is refused in ONNX Runtime's words.
        binding.bind_cpu_input("state", np.zeros((1, HIDDEN), np.float32))
        binding.bind_output("y")
        sess.run_with_iobinding(binding)
        (y,) = binding.get_outputs()
        binding.bind_ortvalue_input("x", y)
        with pytest.raises(hgr.InvalidArgumentError, match="Got invalid dimensions for input: x"):
            sess.run_with_iobinding(binding)
        with pytest.raises(hgr.UnimplementedError, match="read-only"):
            y.update_inplace(np.zeros((1, HIDDEN), np.float32))
        binding.clear_binding_inputs()
        binding.clear_binding_outputs()
        assert binding.get_outputs() == [y]


def parameters(function):
    return [name for name in inspect.signature(function).parameters if name != "self"]


@pytest.mark.parametrize(
    "cls, names",
    [
        ("IOBinding", ["bind_cpu_input", "bind_input", "bind_ortvalue_input", "bind_ortvalue_output", "bind_output",
                       "clear_binding_inputs", "clear_binding_outputs", "copy_outputs_to_cpu", "get_outputs",
                       "get_outputs_as_ortvaluevector", "synchronize_inputs", "synchronize_outputs"]),
        ("OrtValue", ["data_ptr", "data_type", "device_name", "element_type", "has_value", "is_sparse_tensor",
                      "is_tensor", "is_tensor_sequence", "numpy", "ortvalue_from_numpy",
                      "ortvalue_from_shape_and_type", "shape", "tensor_size_in_bytes", "update_inplace"]),
        ("InferenceSession", ["io_binding", "run_with_iobinding"]),
    ],
)
def test_the_names_and_parameters_are_onnxruntimes(onnxruntime, cls, names):
    ours, theirs = getattr(hgr, cls), getattr(onnxruntime, cls)
    for name in names:
        assert hasattr(theirs, name), f"onnxruntime.{cls}.{name} is gone: update this list"
        assert hasattr(ours, name), f"hgr.{cls} lacks {name}"
        want, got = parameters(getattr(theirs, name)), parameters(getattr(ours, name))
        assert got[: len(want)] == want, f"{cls}.{name}: onnxruntime takes {want}, hgr {got}"
