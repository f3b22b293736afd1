"""hgr.graph_executor: TVM's GraphModule calls on the examples' graphs
(examples/README.md), on every test-bed platform, against their expected outputs."""
import os

import numpy as np
import pytest

import hgr
from conftest import require_device

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _example(name):
    return os.path.join(EXAMPLES, name)


def _text(name):
    with open(_example(name)) as f:
        return f.read()


def _bytes(name):
    with open(_example(name), "rb") as f:
        return f.read()


@pytest.fixture(scope="module")
def cnn():
    return _text("cnn.json"), _bytes("cnn.params"), np.load(_example("cnn_x.npy")), np.load(
        _example("cnn_expected_0.npy"))


def test_cnn_runs_as_tvm_runs_it_on_each_platform(cnn, device):
    graph_json, params, x, expected = cnn
    with hgr.graph_executor.create(graph_json, params, device) as module:
        assert module.executor.devices == {1: device, 4: device}
        module.set_input("x", x)
        module.run()
        assert module.get_num_outputs() == 1
        np.testing.assert_allclose(module.get_output(0), expected, rtol=1e-5, atol=1e-5)


def test_cnn_across_two_platforms_with_the_tvm_call_sequence(cnn):
    require_device("pocl:0")
    require_device("rusticl:0")
    graph_json, params, x, expected = cnn
    # A list binds the graph's keys in ascending order: 1 (TVM's CPU), then 4.
    module = hgr.graph_executor.create(graph_json, None, ["pocl:0", "rusticl:0"])
    assert module.executor.devices == {1: "pocl:0", 4: "rusticl:0"}
    module["load_params"](params)
    module["set_input"]("x", x)
    module["run"]()
    out = np.empty_like(expected)
    assert module["get_output"](0, out) is out
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    module.close()
    with pytest.raises(hgr.FailedPreconditionError):
        module.run()


def test_large_runs_over_keys_1_4_5_on_three_platforms():
    for spec in ("pocl:0", "rusticl:0", "oclgrind:0"):
        require_device(spec)
    module = hgr.graph_executor.create(_text("large.json"), hgr.load_param_dict(_bytes("large.params")),
                                       {1: "pocl:0", 4: "rusticl:0", 5: "oclgrind:0"})
    assert module.executor.devices == {1: "pocl:0", 4: "rusticl:0", 5: "oclgrind:0"}
    module.run(x_small=np.load(_example("large_x_small.npy")), x_big=np.load(_example("large_x_big.npy")))
    assert module.get_num_outputs() == 2
    np.testing.assert_allclose(module.get_output(0), np.load(_example("large_expected_0.npy")), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(module.get_output(1), np.load(_example("large_expected_1.npy")), rtol=1e-5, atol=1e-5)
    module.close()


def test_inputs_by_name_index_and_keyword_and_read_back(cnn):
    require_device("pocl:0")
    graph_json, params, x, expected = cnn
    with hgr.graph_executor.create(graph_json, params, {1: "pocl:0", 4: "pocl:1"}) as module:
        index = module.get_input_index("x")
        assert index == 0
        assert module.get_num_inputs() == 7  # x and the six params, as TVM counts them
        shapes, dtypes = module.get_input_info()
        assert shapes["x"] == [1, 3, 32, 32] and dtypes["x"] == "float32"
        assert shapes["fc_weight"] == [10, 1024]
        module.set_input(index, x)
        np.testing.assert_array_equal(module.get_input("x"), x)
        np.testing.assert_array_equal(module.get_input("fc_bias"), hgr.load_param_dict(params)["fc_bias"])
        out = np.empty_like(x)
        assert module.get_input(0, out) is out
        np.testing.assert_array_equal(out, x)
        # TVM converts values to the input's dtype: a float64 array is taken.
        module.set_input(x=x.astype(np.float64))
        module.run()
        np.testing.assert_allclose(module.get_output(0), expected, rtol=1e-5, atol=1e-5)
        # A buffer is taken as it is; an object with only numpy() (an older TVM
        # NDArray) through that.
        module.run(x=memoryview(x))
        np.testing.assert_allclose(module.get_output(0), expected, rtol=1e-5, atol=1e-5)

        class NDArray:
            def numpy(self):
                return x

        module.run(x=NDArray())
        np.testing.assert_allclose(module.get_output(0), expected, rtol=1e-5, atol=1e-5)
        # A non-contiguous view is taken as its values.
        wide = np.zeros((1, 3, 32, 64), np.float32)
        wide[..., ::2] = x
        module.run(x=wide[..., ::2])
        np.testing.assert_allclose(module.get_output(0), expected, rtol=1e-5, atol=1e-5)


def test_a_graph_from_hgr_place_runs_where_it_was_placed_without_devices(cnn):
    require_device("pocl:0")
    require_device("pocl:1")
    graph_json, params, x, expected = cnn
    placed_json, placed_params = hgr.place(graph_json, params, devices=["pocl:0", "pocl:1"],
                                           rules="op:dense=pocl:1")
    with hgr.graph_executor.create(placed_json, placed_params) as module:
        assert sorted(module.executor.devices.values()) == ["pocl:0", "pocl:1"]
        module.run(x=x)
        np.testing.assert_allclose(module.get_output(0), expected, rtol=1e-5, atol=1e-5)


def test_errors_name_what_is_wrong(cnn):
    require_device("pocl:0")
    graph_json, params, x, _ = cnn
    with pytest.raises(hgr.InvalidArgumentError, match="device keys are 1, 4"):
        hgr.graph_executor.create(graph_json, params, ["pocl:0", "pocl:1", "pocl:0"])
    with pytest.raises(hgr.NotFoundError):
        hgr.graph_executor.create(graph_json, params, "nosuchplatform:0")
    with pytest.raises(hgr.InvalidArgumentError):
        hgr.graph_executor.create('{"nodes": 3}', params, "pocl:0")
    with pytest.raises(hgr.InvalidArgumentError, match="fc_weight"):
        hgr.graph_executor.create(graph_json, {"fc_weight": np.zeros((10, 5), np.float32)}, "pocl:0")
    with hgr.graph_executor.create(graph_json, params, "pocl:0") as module:
        with pytest.raises(hgr.InvalidArgumentError, match=r"input 'x' has shape \(1, 3, 32, 32\)"):
            module.set_input("x", np.zeros((1, 3, 32, 31), np.float32))
        with pytest.raises(hgr.NotFoundError, match="nosuch"):
            module.set_input(nosuch=x)
        with pytest.raises(hgr.NotFoundError):
            module.get_input_index("nosuch")
        with pytest.raises(hgr.OutOfRangeError):
            module.get_output(1)
        with pytest.raises(hgr.InvalidArgumentError, match="out is float32"):
            module.get_output(0, np.empty((1, 9), np.float32))
        with pytest.raises(hgr.NotFoundError, match="set_input"):
            module["no_such_function"]
        with pytest.raises(hgr.DataLossError):
            module.load_params(params[:-3])
