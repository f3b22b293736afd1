"""hgr.place from Python: rules and policies in `hgr run --place` syntax, the
placed graph JSON and params, the summary and report, and runs of the result."""
import json
import os

import numpy as np
import pytest

import hgr
from conftest import require_device
from test_builder import X, Y, dense_relu_add, reference

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _devices_of(placement, op=None):
    """Node name -> the spec of the device the report puts it on (nodes of op only,
    when given)."""
    return {node["name"]: node["device"] for node in placement.report["nodes"] if op is None or node["op"] == op}


def test_a_rule_puts_an_op_on_its_device_and_copies_go_between():
    require_device("pocl:0")
    require_device("pocl:1")
    _, (graph, params) = dense_relu_add()
    placement = hgr.place(graph, params, devices=["pocl:0", "pocl:1"], rules=["op:relu=pocl:1"])
    graph_json, placed_params = placement
    assert graph_json == placement.graph_json == placement.graph.to_json()
    assert set(placed_params) == {"w", "b"}
    where = _devices_of(placement)
    assert where["fc"] == "pocl:0" and where["sum"] == "pocl:0"
    assert set(_devices_of(placement, "relu").values()) == {"pocl:1"}
    assert set(_devices_of(placement, "__copy").values()) == {"pocl:0", "pocl:1"}  # there and back
    assert "rule 1 (op:relu=pocl:1)" in placement.summary
    tvm = json.loads(graph_json)
    assert "__copy" in {node["attrs"]["func_name"] for node in tvm["nodes"] if node["op"] == "tvm_op"}
    assert tvm["metadata"]["hgr"]["device_bindings"] == {"1": "pocl:0", "2": "pocl:1"}
    with hgr.graph_executor.create(graph_json, placed_params) as module:
        module.run(x=X, skip=Y)
        want = reference(X, Y)
        np.testing.assert_allclose(module.get_output(0), want[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(module.get_output(1), want[1], rtol=1e-5, atol=1e-6)


def test_auto_places_by_cost_and_runs_across_platforms():
    require_device("pocl:0")
    require_device("rusticl:0")
    _, (graph, params) = dense_relu_add()
    placement = hgr.place(graph, params, devices="pocl:0,rusticl:0", rules="auto")
    assert placement.report["policy"] == "auto"
    assert placement.report["predicted_ms"] > 0
    assert set(_devices_of(placement).values()) <= {"pocl:0", "rusticl:0"}
    with hgr.graph_executor.create(*placement) as module:
        module.run(x=X, skip=Y)
        np.testing.assert_allclose(module.get_output(0), reference(X, Y)[0], rtol=1e-5, atol=1e-5)


def test_a_tvm_graph_is_placed_anew_and_only_its_inputs_params_are_kept():
    require_device("pocl:0")
    require_device("rusticl:0")
    with open(os.path.join(EXAMPLES, "cnn.json")) as f:
        graph_json = f.read()
    with open(os.path.join(EXAMPLES, "cnn.params"), "rb") as f:
        params = hgr.load_param_dict(f.read())
    params["unused"] = np.zeros(3, np.float32)
    placement = hgr.place(graph_json, params, devices=["pocl:0", "rusticl:0"],
                          rules=["op:conv2d=rusticl:0", "node:f?=rusticl:0"])
    assert "unused" not in placement.params and "fc_weight" in placement.params
    where = _devices_of(placement)
    assert set(_devices_of(placement, "conv2d").values()) == {"rusticl:0"}
    assert where["fc"] == "rusticl:0" and where["pool1"] == "pocl:0"
    with hgr.graph_executor.create(*placement) as module:
        module.run(x=np.load(os.path.join(EXAMPLES, "cnn_x.npy")))
        np.testing.assert_allclose(module.get_output(0), np.load(os.path.join(EXAMPLES, "cnn_expected_0.npy")),
                                   rtol=1e-5, atol=1e-5)


def test_without_devices_one_default_device_is_used():
    _, (graph, params) = dense_relu_add()
    placement = hgr.place(graph, params)
    assert len(placement.report["devices"]) == 1
    assert placement.summary.startswith("placement (policy first)")


def test_all_devices_come_real_ones_first_and_the_simulator_last():
    require_device("pocl:0")
    _, (graph, params) = dense_relu_add()
    # first policy: everything on the first listed device, which is not Oclgrind's
    placement = hgr.place(graph, params, devices="all")
    assert [device["device"] for device in placement.report["devices"]] == ["pocl:0"]
    assert placement.report["nodes"][0]["device"] == "pocl:0"


def test_bad_rules_and_devices_are_refused_naming_them():
    require_device("pocl:0")
    _, (graph, params) = dense_relu_add()
    with pytest.raises(hgr.InvalidArgumentError, match="sideways"):
        hgr.place(graph, params, devices=["pocl:0"], rules="sideways")
    with pytest.raises(hgr.Error, match="nosuchplatform"):
        hgr.place(graph, params, devices=["pocl:0", "nosuchplatform:0"])
    with pytest.raises(hgr.InvalidArgumentError, match="item 0"):
        hgr.place(graph, params, devices=[4])
    with pytest.raises(hgr.InvalidArgumentError):
        hgr.place(42)
