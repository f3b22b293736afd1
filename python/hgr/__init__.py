"""hgr: a heterogeneous graph runtime on OpenCL, from Python.

``hgr.InferenceSession`` is shaped like ``onnxruntime.InferenceSession``;
``hgr.devices()`` lists the OpenCL devices; errors are ``hgr.Error`` subclasses,
one per hgr status code, carrying the status message.
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
    find_device,
    skipped_platforms,
)

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
]
