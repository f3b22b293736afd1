"""hgr.GraphBuilder: a graph built op by op from Python, over the C builder
(hgr/builder.h), without TVM or ONNX::

    b = hgr.GraphBuilder()
    x = b.add_input("x", [4, 64], "float32")
    w = b.add_constant("w", weights)                   # a NumPy array: becomes a param
    y = b.add_op("dense", x, w)
    y = b.add_op("relu", y, name="act")
    z = b.add_op("softmax", y, axis=1)                 # attrs as keyword arguments
    b.mark_output(z)
    graph, params = b.finish()                         # an hgr Graph and a dict of arrays

Each add checks the node at once with the op's own shape inference, so a bad op,
attr, dtype or shape raises hgr.InvalidArgumentError naming the node, the op and
what is at fault, and the builder stays usable. The graph is unplaced: it runs on
one device as it is (hgr.graph_executor.create(graph, params, "pocl:0")), or is
placed on several with hgr.place.
"""
from __future__ import annotations

import json

from typing import Any, Dict, List, Sequence, Tuple, Union

import numpy as np

from . import _hgr

__all__ = ["GraphBuilder", "Value"]


class Value:
    """Output ``index`` of node ``node`` of the graph being built, with its
    ``name`` (the node's), ``dtype`` (hgr's string, 'float32') and ``shape``."""

    __slots__ = ("node", "index", "name", "dtype", "shape")

    def __init__(self, node: int, index: int, name: str, dtype: str, shape: List[int]) -> None:
        self.node = node
        self.index = index
        self.name = name
        self.dtype = dtype
        self.shape = shape

    def __iter__(self):
        """(node, index), so that a Value unpacks like the C API's hgr_value_t."""
        return iter((self.node, self.index))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> int:
        return (self.node, self.index)[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Value) and (self.node, self.index) == (other.node, other.index)

    def __hash__(self) -> int:
        return hash((self.node, self.index))

    def __repr__(self) -> str:
        return f"Value({self.name!r}:{self.index}, {self.dtype}{self.shape})"


def _dtype_text(dtype: Any) -> str:
    """hgr's dtype string for 'float32', numpy.float32 or numpy.dtype('float32')."""
    if isinstance(dtype, str):
        return dtype
    try:
        return np.dtype(dtype).name
    except TypeError:
        raise _hgr.InvalidArgumentError(f"dtype {dtype!r} is neither an hgr dtype string nor a NumPy dtype") from None


def _nested(value: Any) -> Any:
    """A list of lists (pad's pad_width) as the string TVM's graph JSON holds,
    "[[0, 0], [1, 1]]"; any other value as it is."""
    if isinstance(value, (list, tuple)) and any(isinstance(item, (list, tuple)) for item in value):
        return json.dumps([list(item) if isinstance(item, (list, tuple)) else item for item in value])
    return value


class GraphBuilder:
    """Builds an hgr graph node by node (see the module's docstring). Values are
    Value objects (a (node, index) pair is accepted too). Thread-compatible: one
    thread at a time."""

    def __init__(self) -> None:
        self._builder = _hgr.Builder()

    def _value(self, pair: Sequence[int]) -> Value:
        node, index = pair
        info = self._builder.value_info((node, index))
        return Value(node, index, info["name"], info["dtype"], info["shape"])

    def add_input(self, name: str, shape: Sequence[int], dtype: Any = "float32") -> Value:
        """A graph input called name of shape and dtype (hgr's string or a NumPy
        dtype). hgr.InvalidArgumentError for a taken name, naming the node that has
        it, or a dtype hgr cannot hold."""
        return self._value(self._builder.add_input(name, list(shape), _dtype_text(dtype)))

    def add_constant(self, name: str, value: Any) -> Value:
        """A constant input called name holding value (a NumPy array, or anything
        numpy.asarray takes; copied): finish() returns it among the params."""
        array = value if isinstance(value, np.ndarray) else np.asarray(value)
        if not array.flags.c_contiguous:
            array = array.copy(order="C")
        return self._value(self._builder.add_constant(name, array))

    def add_op(self, op: str, *inputs: Any, name: Union[str, None] = None, outputs: int = 1,
               **attrs: Any) -> Union[Value, Tuple[Value, ...]]:
        """A node running op (docs/ops.md) on inputs (earlier Values), with attrs
        as keyword arguments: int, float, str, a list of ints or floats, or a
        list of such lists (``strides=[1, 1]``, ``activation="relu"``,
        ``pad_width=[[0, 0], [1, 1]]``). name: the node's name (None:
        '<op>_<node id>'); outputs: its number of outputs (0: the op's minimum).
        Returns the Value, or a tuple of Values for a node with several outputs.
        hgr.InvalidArgumentError naming the node, the op and the input or attr at
        fault (an unknown op lists the known ones); the node is then not added."""
        if outputs < 0:
            raise _hgr.InvalidArgumentError(f"node '{name or op}' (op {op}): outputs={outputs} is negative")
        made = self._builder.add_op(op, [tuple(value) for value in inputs], name=name, outputs=outputs,
                                    attrs={key: _nested(value) for key, value in attrs.items()})
        values = tuple(self._value(pair) for pair in made)
        return values[0] if len(values) == 1 else values

    def value_info(self, value: Any) -> Dict[str, Any]:
        """{name, dtype, shape, bytes} of a value."""
        return self._builder.value_info(tuple(value))

    def mark_output(self, *values: Any) -> None:
        """Makes each value the graph's next output, in order."""
        for value in values:
            self._builder.mark_output(tuple(value))

    def finish(self) -> Tuple[_hgr.Graph, Dict[str, np.ndarray]]:
        """(graph, params): the hgr Graph (graph.to_json() is TVM graph JSON) and
        the constants as a dict name -> NumPy array. hgr.InvalidArgumentError when
        no output is marked; hgr.FailedPreconditionError when called twice."""
        graph, params = self._builder.finish()
        return graph, _hgr.params_to_dict(params)
