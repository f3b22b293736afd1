"""hgr.Executor, the C executor under both session classes, on every test-bed
platform: copies in and out, bindings, fences, params, graphs as JSON."""
import numpy as np
import pytest

import hgr
from conftest import tiny_reference


@pytest.fixture
def loaded(tiny_model):
    graph, params, report = hgr.load_onnx(tiny_model[0])
    assert report["onnx_nodes"] == 4 and report["graph_nodes"] >= 1
    return graph, params


def _executor(loaded, device, **kwargs):
    graph, params = loaded
    # An unplaced ONNX graph has no device_index column: its one device key is -1.
    return hgr.Executor(graph, params=params, devices={-1: device}, **kwargs)


def test_set_input_run_and_get_output_copy_values(loaded, device, tiny_model):
    _, w, b = tiny_model
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    with _executor(loaded, device) as ex:
        assert ex.devices == {-1: device}
        assert ex.input_info("x")["shape"] == [2, 4] and ex.input_index("x") == 0
        assert ex.output_info(1)["dtype"] == "float32"
        ex.set_input("x", x)
        x[...] = 0  # set_input copied: the run does not see this
        ex.run()
        ex.wait()
        want = tiny_reference(np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32), w, b)
        np.testing.assert_allclose(ex.get_output(0), want[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(ex.get_output(1), want[1])


def test_fences_read_their_own_runs_outputs(loaded, device):
    with _executor(loaded, device) as ex:
        fences = []
        for k in range(3):
            ex.set_input(0, np.full((2, 4), k, np.float32))
            fences.append(ex.run_async())
        assert [f.run for f in fences] == [1, 2, 3]
        for k, fence in enumerate(fences):
            fence.wait()
            assert fence.done()
            np.testing.assert_array_equal(fence.get_output(1), np.full((2, 4), -k, np.float32))
            with fence.output_buffer(1) as buffer:
                assert buffer.bytes == 32
        fences[0].release()
        with pytest.raises(hgr.FailedPreconditionError, match="released"):
            fences[0].wait()


def test_bound_inputs_and_outputs_follow_the_callers_memory(loaded, device):
    with _executor(loaded, device) as ex:
        x = hgr.empty("float32", [2, 4], 4096)
        z = hgr.empty("float32", [2, 4], 4096)
        assert ex.bind_input("x", x) in ("host_zero_copy", "host_copy")
        assert ex.bind_output(1, z) == ex.binding_kind("output", 1)
        for k in range(2):
            x[...] = k + 1
            ex.run()
            ex.wait()
            np.testing.assert_array_equal(z, -x)
        ex.unbind("output", 1)
        assert ex.binding_kind("output", 1) == "none"


def test_load_params_names_the_unused_ones(loaded, device):
    graph, params = loaded
    with hgr.Executor(graph, devices={-1: device}) as ex:
        assert ex.load_params(params) == []
        assert sorted(params.names()) == ["b", "w"] and len(params) == 2


def test_a_graph_goes_to_json_and_back(loaded):
    graph, _ = loaded
    again = hgr.Graph.from_json(graph.to_json())
    assert again.inputs() == graph.inputs() and again.outputs() == graph.outputs()
    assert again.node_count == graph.node_count
    with pytest.raises(hgr.InvalidArgumentError):
        hgr.Graph.from_json("{\"nodes\": 3}")


def test_an_unknown_binding_spec_is_not_found(loaded):
    graph, params = loaded
    with pytest.raises(hgr.NotFoundError):
        hgr.Executor(graph, params=params, devices={-1: "nosuch:0"})
