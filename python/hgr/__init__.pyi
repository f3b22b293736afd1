"""Type stubs of the hgr package."""
from ._hgr import (
    __version__ as __version__,
    CancelledError as CancelledError,
    DataLossError as DataLossError,
    DeviceBuffer as DeviceBuffer,
    DeviceFailureError as DeviceFailureError,
    Error as Error,
    Executor as Executor,
    FailedPreconditionError as FailedPreconditionError,
    Fence as Fence,
    Graph as Graph,
    InternalError as InternalError,
    InvalidArgumentError as InvalidArgumentError,
    NotFoundError as NotFoundError,
    OutOfRangeError as OutOfRangeError,
    Params as Params,
    ResourceExhaustedError as ResourceExhaustedError,
    UnavailableError as UnavailableError,
    UnimplementedError as UnimplementedError,
    devices as devices,
    empty as empty,
    find_device as find_device,
    load_onnx as load_onnx,
    numpy_dtype as numpy_dtype,
    skipped_platforms as skipped_platforms,
)
from .session import (
    Future as Future,
    InferenceSession as InferenceSession,
    NodeArg as NodeArg,
    provider_devices as provider_devices,
)
from .io_binding import IOBinding as IOBinding, OrtValue as OrtValue
from . import graph_executor as graph_executor
from .builder import GraphBuilder as GraphBuilder, Value as Value
from .params import load_param_dict as load_param_dict, save_param_dict as save_param_dict
from .placement import Placement as Placement, place as place

__all__: list[str]
