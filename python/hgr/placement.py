"""hgr.place: placement at load time from Python (hgr/place.h, docs/placement.md),
what ``hgr place GRAPH --devices ... --place ... -o OUT.json --params-out ...``
does on the command line::

    graph_json, params = hgr.place(graph, params, devices=["pocl:0", "rusticl:0"],
                                   rules=["op:dense=rusticl:0", "auto"])
    module = hgr.graph_executor.create(graph_json, params)   # runs where it was placed

The placed graph is ordinary TVM graph JSON with a device key per device, one
``__copy`` per (value, consuming device), storage planned per device, and each
key's device recorded in its metadata, so it runs without device bindings.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _hgr
from .params import to_params

__all__ = ["Placement", "place"]


class Placement(tuple):
    """(graph_json, params), the placed graph as TVM graph JSON text and the
    params that name its inputs (a dict name -> NumPy array), with the placement
    besides: ``graph`` (the placed hgr Graph), ``summary`` (the text `hgr place`
    prints: per device the nodes per op and why, memory planned, copies, every
    fallback with its reason) and ``report`` (the JSON report as a dict: every
    node with its device, reason and predicted time)."""

    graph: _hgr.Graph
    summary: str
    report: Dict[str, Any]

    def __new__(cls, graph: _hgr.Graph, params: Dict[str, np.ndarray], summary: str, report: str) -> "Placement":
        self = super().__new__(cls, (graph.to_json(), params))
        self.graph = graph
        self.summary = summary
        self.report = json.loads(report)
        return self

    @property
    def graph_json(self) -> str:
        return self[0]

    @property
    def params(self) -> Dict[str, np.ndarray]:
        return self[1]


def _device_list(devices: Union[None, str, Sequence[str]]) -> Optional[List[str]]:
    """Specs in priority order: a list, or a comma-separated str as --devices
    takes; 'all' is every device found, the Oclgrind simulator last."""
    if devices is None:
        return None
    specs = devices.split(",") if isinstance(devices, str) else list(devices)
    if specs == ["all"]:
        found = [device["spec"] for device in _hgr.devices()]
        specs = [spec for spec in found if not spec.startswith("oclgrind")] + [
            spec for spec in found if spec.startswith("oclgrind")
        ]
        if not specs:
            raise _hgr.UnavailableError("devices='all': no OpenCL device found")
    return specs


def place(graph: Any, params: Any = None, devices: Union[None, str, Sequence[str]] = None,
          rules: Union[None, str, Sequence[str]] = None, *, cost_cache: bool = True) -> Placement:
    """Places graph (an hgr Graph, e.g. from GraphBuilder.finish, or TVM graph JSON
    text, whose own device keys and copies are discarded) on devices (specs in
    priority order, a list or 'pocl:0,rusticl:0'; None: one device, a CPU, as TVM
    chooses key 1's) following rules: a str or a list of `hgr run --place` texts,
    'op:NAME=SPEC', 'node:GLOB=SPEC', 'range:A-B=SPEC' (later rules win) and the
    policy for the other nodes, 'first' (the default), 'auto' (cost-based; it
    calibrates on the devices once, kept in the cost cache unless cost_cache is
    False) or 'stages:N'. params (a dict, TVM params bytes, an hgr Params or None)
    come back as a dict holding those that name an input of the placed graph.
    Returns a Placement: (graph_json, params) with .graph, .summary and .report.
    hgr.InvalidArgumentError for a rule that does not parse (quoting it), a spec
    that names no device, or a rule's device that cannot run a node it matches
    (naming both)."""
    if not isinstance(graph, _hgr.Graph):
        if isinstance(graph, (bytes, bytearray)):
            graph = bytes(graph).decode("utf-8")
        if not isinstance(graph, str):
            raise _hgr.InvalidArgumentError(f"graph must be an hgr Graph or TVM graph JSON text, not {type(graph).__name__}")
        graph = _hgr.Graph.from_json(graph)
    rule_list = [rules] if isinstance(rules, str) else (list(rules) if rules is not None else None)
    placed, summary, report = _hgr.place(graph, devices=_device_list(devices), rules=rule_list, cost_cache=cost_cache)
    loaded = to_params(params)
    inputs = {info["name"] for info in placed.inputs()}
    kept = {name: array for name, array in (_hgr.params_to_dict(loaded).items() if loaded is not None else ())
            if name in inputs}
    return Placement(placed, kept, summary, report)
