"""hgr: a heterogeneous graph runtime on OpenCL, from Python.

``hgr.InferenceSession`` is shaped like ``onnxruntime.InferenceSession``, with
``io_binding()``/``run_with_iobinding`` and ``hgr.OrtValue`` for values that stay
on the device (a streaming model's state);
``hgr.devices()`` lists the OpenCL devices; errors are ``hgr.Error`` subclasses,
one per hgr status code, carrying the status message.
``hgr.graph_executor.create`` is shaped like TVM's graph executor, with
``hgr.save_param_dict``/``load_param_dict`` for TVM params bytes;
``hgr.GraphBuilder`` builds a graph op by op and ``hgr.place`` places it.
"""
from ._hgr import (  # noqa: F401
    __version__,
    CancelledError,
    DataLossError,
    DeviceBuffer,
    DeviceFailureError,
    Error,
    Executor,
    FailedPreconditionError,
    Fence,
    Graph,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    Params,
    ResourceExhaustedError,
    UnavailableError,
    UnimplementedError,
    devices,
    empty,
    find_device,
    numpy_dtype,
    skipped_platforms,
    load_onnx,
)
from .session import Future, InferenceSession, NodeArg, provider_devices  # noqa: F401
from .io_binding import IOBinding, OrtValue  # noqa: F401
from . import graph_executor  # noqa: F401,E402
from .builder import GraphBuilder, Value  # noqa: F401,E402
from .params import load_param_dict, save_param_dict  # noqa: F401,E402
from .placement import Placement, place  # noqa: F401,E402

__all__ = [
    "__version__",
    "Error",
    "CancelledError",
    "InvalidArgumentError",
    "NotFoundError",
    "OutOfRangeError",
    "ResourceExhaustedError",
    "FailedPreconditionError",
    "UnimplementedError",
    "UnavailableError",
    "InternalError",
    "DataLossError",
    "DeviceFailureError",
    "DeviceBuffer",
    "Executor",
    "Fence",
    "Graph",
    "Params",
    "devices",
    "find_device",
    "skipped_platforms",
    "empty",
    "numpy_dtype",
    "load_onnx",
    "InferenceSession",
    "NodeArg",
    "Future",
    "IOBinding",
    "OrtValue",
    "provider_devices",
    "graph_executor",
    "GraphBuilder",
    "Value",
    "save_param_dict",
    "load_param_dict",
    "place",
    "Placement",
]
