"""hgr.GraphBuilder: graphs built op by op from Python, run through the graph
module and the Executor on every test-bed platform, against NumPy; attrs as
keyword arguments; errors naming the node, the op and what is at fault."""
import json

import numpy as np
import pytest

import hgr

RNG = np.random.default_rng(17)
W = RNG.standard_normal((8, 16)).astype(np.float32)
B = RNG.standard_normal(8).astype(np.float32)
X = RNG.standard_normal((4, 16)).astype(np.float32)
Y = RNG.standard_normal((4, 8)).astype(np.float32)


def dense_relu_add():
    """y = relu(x W^T + b) + skip, and its softmax: two outputs."""
    builder = hgr.GraphBuilder()
    x = builder.add_input("x", [4, 16], "float32")
    skip = builder.add_input("skip", (4, 8), np.float32)
    w = builder.add_constant("w", W)
    b = builder.add_constant("b", B)
    fc = builder.add_op("dense", x, w, b, name="fc", units=8)
    act = builder.add_op("relu", fc)
    total = builder.add_op("add", act, skip, name="sum")
    soft = builder.add_op("softmax", total, axis=1)
    builder.mark_output(total, soft)
    return builder, builder.finish()


def reference(x, skip):
    total = np.maximum(x @ W.T + B, 0) + skip
    e = np.exp(total - total.max(axis=1, keepdims=True))
    return total, e / e.sum(axis=1, keepdims=True)


def test_values_carry_their_node_name_dtype_and_shape():
    builder = hgr.GraphBuilder()
    x = builder.add_input("x", [4, 16])
    w = builder.add_constant("w", W)
    fc = builder.add_op("dense", x, w, name="fc")
    assert (x.node, x.index, x.name, x.dtype, x.shape) == (0, 0, "x", "float32", [4, 16])
    assert (fc.name, fc.dtype, fc.shape) == ("fc", "float32", [4, 8])
    assert tuple(fc) == (fc.node, 0)
    assert builder.value_info(fc) == {"name": "fc", "dtype": "float32", "shape": [4, 8], "bytes": 128}
    unnamed = builder.add_op("relu", fc)
    assert unnamed.name == f"relu_{unnamed.node}"


def test_a_built_graph_runs_through_the_graph_module_on_each_platform(device):
    _, (graph, params) = dense_relu_add()
    assert list(params) == ["w", "b"]
    np.testing.assert_array_equal(params["w"], W)
    with hgr.graph_executor.create(graph, params, device) as module:
        module.run(x=X, skip=Y)
        want = reference(X, Y)
        np.testing.assert_allclose(module.get_output(0), want[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(module.get_output(1), want[1], rtol=1e-5, atol=1e-6)


def test_a_built_and_placed_graph_runs_through_an_executor(device):
    _, (graph, params) = dense_relu_add()
    placed_json, placed_params = hgr.place(graph, params, devices=[device])
    executor = hgr.Executor(hgr.Graph.from_json(placed_json), params=hgr._hgr.params_from_dict(placed_params))
    try:
        assert executor.devices == {1: device}
        executor.set_input("x", X)
        executor.set_input("skip", Y)
        executor.run()
        want = reference(X, Y)
        np.testing.assert_allclose(executor.get_output(0), want[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(executor.get_output(1), want[1], rtol=1e-5, atol=1e-6)
    finally:
        executor.close()


def test_attrs_of_every_kind_reach_the_graph_as_tvm_strings():
    builder = hgr.GraphBuilder()
    x = builder.add_input("x", [1, 2, 6, 6])
    w = builder.add_constant("w", np.ones((4, 2, 3, 3), np.float32))
    conv = builder.add_op("conv2d", x, w, name="conv", strides=[1, 1], padding=(1, 1), channels=4,
                          activation="leaky_relu", alpha=0.5)
    clip = builder.add_op("clip", conv, name="clip", a_min=-1.0, a_max=6)
    pad = builder.add_op("pad", clip, name="pad", pad_width=[[0, 0], [0, 0], (1, 1), [1, 1]], pad_value=0.25)
    assert conv.shape == [1, 4, 6, 6]
    assert pad.shape == [1, 4, 8, 8]
    builder.mark_output(pad)
    graph, _ = builder.finish()
    nodes = {node["name"]: node for node in json.loads(graph.to_json())["nodes"]}
    assert nodes["conv"]["attrs"]["strides"] == "[1, 1]"
    assert nodes["conv"]["attrs"]["channels"] == "4"
    assert nodes["conv"]["attrs"]["activation"] == "leaky_relu"
    assert nodes["conv"]["attrs"]["alpha"] == "0.5"
    assert nodes["clip"]["attrs"]["a_max"] == "6"
    assert nodes["pad"]["attrs"]["pad_width"] == "[[0, 0], [0, 0], [1, 1], [1, 1]]"
    assert nodes["pad"]["attrs"]["pad_value"] == "0.25"


def test_errors_name_the_node_the_op_and_what_is_at_fault():
    builder = hgr.GraphBuilder()
    x = builder.add_input("x", [4, 16])
    y = builder.add_input("y", [4, 9])
    with pytest.raises(hgr.InvalidArgumentError, match="unknown func_name 'no_such_op'; known: add"):
        builder.add_op("no_such_op", x)
    with pytest.raises(hgr.InvalidArgumentError, match="unknown attr 'bogus'"):
        builder.add_op("softmax", x, bogus=1)
    with pytest.raises(hgr.InvalidArgumentError, match="attr 'axis'"):
        builder.add_op("softmax", x, axis="rows")
    with pytest.raises(hgr.InvalidArgumentError, match="attr 'axis': a dict"):
        builder.add_op("softmax", x, name="s", axis={})
    with pytest.raises(hgr.InvalidArgumentError, match="'mismatch'"):
        builder.add_op("add", x, y, name="mismatch")  # [4, 16] + [4, 9] does not broadcast
    with pytest.raises(hgr.InvalidArgumentError, match="'x'"):
        builder.add_input("x", [2])
    with pytest.raises(hgr.InvalidArgumentError, match="not a builder value"):
        builder.add_op("relu", "x")
    with pytest.raises(hgr.InvalidArgumentError):
        builder.add_input("z", [2], "complex64")
    with pytest.raises(hgr.InvalidArgumentError, match="output"):
        builder.finish()  # no output marked: the builder stays usable
    # the refused nodes were not added: the next op gets the next node id
    relu = builder.add_op("relu", x)
    assert relu.node == 2
    builder.mark_output(relu)
    graph, params = builder.finish()
    assert graph.node_count == 3 and params == {}
    with pytest.raises(hgr.FailedPreconditionError):
        builder.finish()


def test_a_wrong_input_shape_at_run_time_is_refused_naming_the_input():
    _, (graph, params) = dense_relu_add()
    with hgr.graph_executor.create(graph, params) as module:
        with pytest.raises(hgr.InvalidArgumentError, match=r"input 'x' has shape \(4, 16\)"):
            module.set_input("x", np.zeros((4, 15), np.float32))
