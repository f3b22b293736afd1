"""hgr.InferenceSession: onnxruntime.InferenceSession's shape over hgr's Executor.

Trying hgr where ONNX Runtime runs is a one-line change::

    sess = onnxruntime.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    sess = hgr.InferenceSession("model.onnx", providers=["pocl:0", "CPUExecutionProvider"])

Inputs are used where they lie (bound to the executor: zero copy where the
device shares host memory and the data is aligned); outputs are fresh NumPy
arrays that each run writes directly on such devices (bound outputs).
"""
from __future__ import annotations

import json
import os
import stat
import tempfile
import threading
import time
import weakref
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import _hgr

# ORT's provider names that hgr maps to a device spec; any other "...ExecutionProvider"
# is refused with hgr.InvalidArgumentError.
_PROVIDER_SPECS = {"CPUExecutionProvider": "cpu:0"}

# ONNX Runtime's type strings, by hgr dtype.
_ORT_TYPES = {
    "float32": "tensor(float)",
    "float64": "tensor(double)",
    "float16": "tensor(float16)",
    "bfloat16": "tensor(bfloat16)",
    "int8": "tensor(int8)",
    "int16": "tensor(int16)",
    "int32": "tensor(int32)",
    "int64": "tensor(int64)",
    "uint8": "tensor(uint8)",
    "uint16": "tensor(uint16)",
    "uint32": "tensor(uint32)",
    "uint64": "tensor(uint64)",
    "bool": "tensor(bool)",
}


class NodeArg:
    """An input or output of a session, as onnxruntime.NodeArg: ``name``,
    ``shape`` (a list of ints) and ``type`` ('tensor(float)'), plus hgr's
    ``dtype`` ('float32')."""

    __slots__ = ("name", "shape", "type", "dtype")

    def __init__(self, name: str, shape: List[int], type: str, dtype: str) -> None:
        self.name = name
        self.shape = shape
        self.type = type
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


def provider_devices(providers: Optional[Sequence[Any]]) -> Optional[List[str]]:
    """Device specs for a providers list in priority order: hgr device specs
    ('pocl:0', 'gpu:0', 'cpu:0') pass through, ORT's 'CPUExecutionProvider' (or a
    (name, options) pair of it) becomes 'cpu:0'. An unknown ORT provider is
    hgr.InvalidArgumentError; a spec that names no device, hgr.NotFoundError."""
    if providers is None:
        return None
    if isinstance(providers, str):
        providers = [providers]
    specs: List[str] = []
    for provider in providers:
        if isinstance(provider, (tuple, list)):
            provider = provider[0]
        if not isinstance(provider, str):
            raise _hgr.InvalidArgumentError(f"providers: {provider!r} is not a provider name or a device spec")
        if provider in _PROVIDER_SPECS:
            spec = _PROVIDER_SPECS[provider]
        elif provider.endswith("ExecutionProvider"):
            raise _hgr.InvalidArgumentError(
                f"providers: unknown provider '{provider}': hgr takes device specs ('pocl:0', 'gpu:0', 'cpu:0', "
                f"see hgr.devices()) and {', '.join(sorted(_PROVIDER_SPECS))}"
            )
        else:
            spec = provider
        _hgr.find_device(spec)  # hgr.NotFoundError listing the devices when none matches
        if spec not in specs:
            specs.append(spec)
    return specs


def _fed_shape(value: Any) -> Optional[tuple]:
    """The shape of a value fed as an input, or None when it cannot be told without
    converting it (bind_input then checks its size)."""
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple):
        return shape
    try:
        return memoryview(value).shape
    except TypeError:
        pass
    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value).shape
        except (TypeError, ValueError, RuntimeError, BufferError, AttributeError):
            return None
    return None


# The most bytes a model file may have: protobuf's limit, as in the C loader.
MAX_MODEL_BYTES = 2**31 - 1


def read_model_file(path: str) -> bytes:
    """The bytes of the model file at path, read once: a regular file up to its size
    as fstat gives it, anything else (a pipe, a FIFO, a device) until more than
    MAX_MODEL_BYTES arrived. Errors are hgr's: NotFoundError, InvalidArgumentError
    for a directory, ResourceExhaustedError past the cap, UnavailableError else."""
    try:
        with open(path, "rb", buffering=0) as f:
            info = os.fstat(f.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size > MAX_MODEL_BYTES:
                raise _hgr.ResourceExhaustedError(
                    f"'{path}' is {info.st_size} bytes, more than {MAX_MODEL_BYTES} bytes, protobuf's limit for a model"
                )
            chunks, length = [], 0
            while length <= MAX_MODEL_BYTES:
                chunk = f.read(min(1 << 24, MAX_MODEL_BYTES + 1 - length))
                if not chunk:
                    break
                chunks.append(chunk)
                length += len(chunk)
    except FileNotFoundError as error:
        raise _hgr.NotFoundError(f"cannot open '{path}': {error.strerror}") from None
    except IsADirectoryError:
        raise _hgr.InvalidArgumentError(
            f"'{path}' is a directory, not a model file (nor a bundle: it has no {BUNDLE_MANIFEST})") from None
    except OSError as error:
        raise _hgr.UnavailableError(f"cannot read '{path}': {error.strerror}") from None
    if length > MAX_MODEL_BYTES:
        raise _hgr.ResourceExhaustedError(f"'{path}' holds more than {MAX_MODEL_BYTES} bytes, protobuf's limit for a model")
    return b"".join(chunks)


# A bundle (hgr/model.h, `hgr compile --bundle`) is a directory holding this file.
BUNDLE_MANIFEST = "manifest.json"


def is_bundle(path: str) -> bool:
    """Whether path is a bundle: a directory with a manifest.json (as `hgr run` tells)."""
    return os.path.isdir(path) and os.path.exists(os.path.join(path, BUNDLE_MANIFEST))


def _bundle_manifest(directory: str) -> Optional[Dict[str, Any]]:
    """The bundle's manifest as a dict, or None when it cannot be read or parsed
    (hgr_model_create_bundle then says why, in the C library's words)."""
    try:
        with open(os.path.join(directory, BUNDLE_MANIFEST), "rb") as f:
            manifest = json.loads(f.read(16 << 20))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def bundle_devices(directory: str) -> Optional[List[str]]:
    """The specs of this machine's devices that a bundle's programs were built for,
    in the manifest's order, each once: for each program, the first device whose
    platform, name, version and driver version equal the program's, as
    hgr_model_create_bundle matches them. None when the manifest cannot be read or
    a program's device is missing here (hgr_model_create_bundle refuses the bundle
    then, with its reason)."""
    manifest = _bundle_manifest(directory)
    programs = manifest.get("programs") if manifest is not None else None
    if not isinstance(programs, list):
        return None
    devices = _hgr.devices()
    specs: List[str] = []
    for program in programs:
        if not isinstance(program, dict):
            return None
        want = tuple(program.get(k) for k in ("platform", "device", "device_version", "driver_version"))
        found = [d["spec"] for d in devices
                 if (d["platform_name"], d["name"], d["version"], d["driver_version"]) == want]
        if not found:
            return None
        if found[0] not in specs:
            specs.append(found[0])
    return specs


def _bundle_session_devices(directory: str, requested: Optional[List[str]]) -> Optional[List[str]]:
    """The devices a session over a bundle places its model on: the bundle's
    (bundle_devices), in the order of requested (the providers' specs) when it
    names the same devices; InvalidArgumentError naming both when it names others,
    since the bundle's programs serve only the devices they were built for."""
    made_for = bundle_devices(directory)
    if not made_for:  # unreadable, for a device this machine lacks, or no programs: the C library decides
        return requested
    if requested is None:
        return made_for
    indices = {spec: _hgr.find_device(spec)["index"] for spec in set(made_for) | set(requested)}
    if {indices[s] for s in requested} != {indices[s] for s in made_for}:
        raise _hgr.InvalidArgumentError(
            f"providers: the bundle {directory} was made for {', '.join(made_for)}, but the providers name "
            f"{', '.join(requested)}: a bundle runs on the devices it was made for (leave providers out, or write a "
            f"bundle for these devices with InferenceSession.write_bundle or `hgr compile --bundle`)")
    return requested


def check_input_shape(name: str, shape: Sequence[int], declared: Optional[Sequence[Any]]) -> None:
    """Refuses a fed input whose rank differs from the model's, or whose extent
    differs at a dim the model fixes, with ONNX Runtime's messages (as
    hgr.InvalidArgumentError). declared: the model's dims (ints, names, None for
    unknown), or None when it declares no shape."""
    if declared is None:
        return
    # runs once per input and call: the messages are made only on a mismatch
    if len(shape) != len(declared):
        raise _hgr.InvalidArgumentError(
            f"Invalid rank for input: {name} Got: {len(shape)} Expected: {len(declared)} "
            "Please fix either the inputs/outputs or the model." + _both_dims(name, shape, declared)
        )
    if all(got == want or not isinstance(want, int) for got, want in zip(shape, declared)):
        return
    wrong = [
        f" index: {i} Got: {got} Expected: {want}"
        for i, (got, want) in enumerate(zip(shape, declared))
        if isinstance(want, int) and got != want
    ]
    raise _hgr.InvalidArgumentError(
        f"Got invalid dimensions for input: {name} for the following indices\n"
        + "\n".join(wrong)
        + "\n Please fix either the inputs/outputs or the model." + _both_dims(name, shape, declared)
    )


def _both_dims(name: str, shape: Sequence[int], declared: Sequence[Any]) -> str:
    return f"\n input '{name}': the model's dims are {tuple(declared)}, the array's {tuple(shape)}"


def as_input(name: str, value: Any, dtype: str) -> Any:
    """value as the input's data: a NumPy array of another dtype is refused with ONNX
    Runtime's message; Python lists and scalars (and NumPy scalars) are converted to
    the input's dtype, as ONNX Runtime converts them; other buffers and __dlpack__
    objects are used as they are (their dtype is checked when bound)."""
    if isinstance(value, np.ndarray):
        if value.dtype != np.dtype(dtype):
            raise _hgr.InvalidArgumentError(
                f"Unexpected input data type. Actual: ({_ORT_TYPES.get(str(value.dtype), str(value.dtype))}) , "
                f"expected: ({_ORT_TYPES.get(dtype, dtype)})\n input '{name}' is {dtype}; the array is {value.dtype}"
            )
        return value if value.flags.c_contiguous else np.ascontiguousarray(value)
    if isinstance(value, (list, tuple, int, float, bool, np.generic)):
        try:
            return np.asarray(value, dtype=dtype)
        except (ValueError, TypeError, OverflowError) as error:
            raise _hgr.InvalidArgumentError(f"input '{name}': cannot convert the value to {dtype}: {error}") from None
    return _as_buffer(value)


def _check_int32_range(name: str, value: Any) -> None:
    """hgr computes int64 values as int32 (docs/onnx.md, "Dtypes"): an int64 array
    with a value past int32 is refused, naming the element, as hgr_model_run refuses
    it (a buffer or __dlpack__ object is not read here)."""
    if isinstance(value, np.ndarray) and value.dtype == np.int64 and value.size:
        if value.size <= 16:  # the scalars and short vectors of most calls, without numpy's passes
            items = value.ravel().tolist()
            if -2**31 <= min(items) and max(items) <= 2**31 - 1:
                return
        bad = np.flatnonzero((value < -2**31) | (value > 2**31 - 1))
        if bad.size:
            raise _hgr.InvalidArgumentError(
                f"input '{name}': element {bad[0]} is {value.reshape(-1)[bad[0]]}, outside int32: hgr computes int64 "
                f'values as int32 (docs/onnx.md, "Dtypes")')


def _profiling_requested(sess_options: Any) -> bool:
    if sess_options is None:
        return False
    if isinstance(sess_options, dict):
        return bool(sess_options.get("enable_profiling", False))
    return bool(getattr(sess_options, "enable_profiling", False))


def _alignment() -> int:
    """The largest base-address alignment of the devices (bytes): outputs aligned
    to it can be the device's own memory on every device that shares host memory."""
    return max([d["base_address_align_bytes"] for d in _hgr.devices()] + [64])


def _as_buffer(value: Any) -> Any:
    """What bind_input takes: buffers and __dlpack__ objects as they are, a
    non-contiguous array as a contiguous copy, anything else through numpy."""
    if isinstance(value, np.ndarray):
        return value if value.flags.c_contiguous else np.ascontiguousarray(value)
    if hasattr(value, "__dlpack__"):
        return value
    try:
        memoryview(value)
        return value
    except TypeError:
        return np.asarray(value)


class Future:
    """A run in flight (InferenceSession.run_async): result() waits and returns the
    outputs, done() tells without waiting."""

    def __init__(self, fence: _hgr.Fence, outputs: List[np.ndarray], executor: _hgr.Executor) -> None:
        self._fence = fence
        self._outputs = outputs
        self._executor = executor  # keeps the specialization the run uses

    def done(self) -> bool:
        return self._fence is None or self._fence.done()

    def result(self) -> List[np.ndarray]:
        if self._fence is not None:
            self._fence.wait()
        return self._outputs

    @property
    def fence(self) -> _hgr.Fence:
        return self._fence


# Keyword arguments of onnxruntime.InferenceSession that hgr accepts and has no use for.
_ORT_ONLY_KWARGS = {"disabled_optimizers", "read_config_from_model", "enable_fallback"}


def _warn_ignored(kwargs: Dict[str, Any]) -> None:
    """A keyword argument neither hgr nor ONNX Runtime takes (a typo such as
    device='gpu:0') would otherwise leave the session on its default device unsaid."""
    unknown = sorted(set(kwargs) - _ORT_ONLY_KWARGS)
    if unknown:
        import warnings
        warnings.warn(f"hgr.InferenceSession ignores the keyword argument{'s' if len(unknown) > 1 else ''} "
                      f"{', '.join(repr(k) for k in unknown)} (devices are given as providers=['pocl:0', ...])",
                      RuntimeWarning, stacklevel=3)


class InferenceSession:
    """An ONNX model loaded by hgr and run on OpenCL devices, used like
    onnxruntime.InferenceSession: loaded once, it runs at any input shape the model
    allows (symbolic dims, dims of -1 or 0, inputs without a shape), at a different
    shape on each call if need be.

    model: a path, the model's bytes, or a bundle directory (below). sess_options: an object with
    ``enable_profiling`` (onnxruntime.SessionOptions) or a dict; with it on,
    ``profile()`` and ``write_trace(path)`` describe the last run. providers:
    device specs in priority order (``["gpu:0", "cpu:0"]``; ORT's
    'CPUExecutionProvider' means 'cpu:0'): nodes go to the first listed device
    that can run them. place: placement rules and policy, a str or a list of
    them (`hgr run --place` syntax: 'auto', 'stages:2', 'op:conv2d=pocl:1').
    input_shapes: name -> shape, to specialize for those shapes at creation
    (optional: every new shape is specialized at its first run).
    max_specializations: how many shapes the session keeps ready, and max_device_bytes
    the device memory their activations may take together (0: hgr's defaults, 64 and
    2 GiB; the least recently used shape goes first).

    Each new combination of input shapes (and of the values of inputs that decide
    shapes, such as a Reshape's shape) costs a specialization at its first run:
    hgr imports, places and plans the model for it, with no reparse and sharing
    the weights already on the device; later runs at those shapes reuse it.

    A bundle (a directory with manifest.json, made by write_bundle or `hgr compile
    --bundle`) holds the model and the programs built for it on some devices: its
    session runs on those devices (providers may be left out; providers naming
    other devices are InvalidArgumentError) and compiles no program from source at
    the bundle's shapes. A bundle of another hgr version, for a device this
    machine lacks, or with a damaged file is refused with the C library's message
    (FailedPreconditionError, InvalidArgumentError, DataLossError).

    The positional order is ONNX Runtime's (model, sess_options, providers); a
    list given as the second argument is taken as providers. Errors are
    hgr.Error subclasses naming what failed (a bad model: InvalidArgumentError;
    an op hgr lacks: UnimplementedError; an unknown device: NotFoundError).
    close() (or a with block, or garbage collection) frees the device memory.
    Thread safety: run() and run_async() may be called from several threads;
    they take turns on the session (other sessions run meanwhile: the GIL is
    released while hgr runs).
    """

    def __init__(
        self,
        model: Any,
        sess_options: Any = None,
        providers: Optional[Sequence[Any]] = None,
        provider_options: Any = None,
        *,
        place: Any = None,
        input_shapes: Optional[Dict[str, Sequence[int]]] = None,
        max_specializations: int = 0,
        max_device_bytes: int = 0,
        **kwargs: Any,
    ) -> None:
        if isinstance(sess_options, (list, tuple)) and providers is None:
            sess_options, providers = None, sess_options
        _warn_ignored(kwargs)
        self._model: Optional[_hgr.Model] = None
        self._last: Optional[_hgr.Executor] = None
        # Executors by specialization: one Executor object per specialization, so that
        # what one run bound is never unbound under another.
        self._executors: "weakref.WeakValueDictionary[int, _hgr.Executor]" = weakref.WeakValueDictionary()
        # Per executor, the model inputs it takes: for each model input, the index of the
        # executor's input that takes it, or -1 (inputs that decide shapes are constants
        # of the specialization).
        self._fed: "weakref.WeakKeyDictionary[_hgr.Executor, tuple]" = weakref.WeakKeyDictionary()
        # run() binds, runs and waits as one step: threads sharing a session take turns.
        self._run_lock = threading.Lock()
        # A model that decides at run time runs through the model's stages (_run_staged):
        # why no one executor runs it, from hgr_model_specialize; "" until known.
        self._staged = ""
        self._profile_prefix = str(getattr(sess_options, "profile_file_prefix", "") or "") if sess_options else ""
        if isinstance(sess_options, dict):
            self._profile_prefix = str(sess_options.get("profile_file_prefix", "") or "")
        devices = provider_devices(providers)
        if isinstance(model, os.PathLike):
            model = os.fspath(model)
        options = dict(place=place, profiling=_profiling_requested(sess_options),
                       max_specializations=max_specializations, max_device_bytes=max_device_bytes)
        # What write_bundle copies as the bundle's model: a regular file's path, else the model's bytes.
        self._source: Any = None
        if isinstance(model, str) and is_bundle(model):
            # The devices are the bundle's; its errors name the bundle already.
            devices = _bundle_session_devices(model, devices)
            self._model = _hgr.Model.open_bundle(model, devices=devices, **options)
            manifest = _bundle_manifest(model) or {}
            self._source = os.path.join(model, str(manifest.get("model", "model.onnx")))
        else:
            # A path is read once, here (a FIFO has no second reading); external data is
            # found beside the file.
            base_directory = None
            path = None
            if isinstance(model, str):
                path, model = model, read_model_file(model)
                base_directory = os.path.dirname(os.path.abspath(path))
            elif not isinstance(model, (bytes, bytearray, memoryview)):
                raise _hgr.InvalidArgumentError(
                    f"model must be a path or the model's bytes, not {type(model).__name__}")
            try:
                self._model = _hgr.Model(model, devices=devices, base_directory=base_directory, **options)
            except _hgr.Error as error:
                if path is None:
                    raise
                raise type(error)(f"{path}: {error}") from None
            if path is not None and os.path.isfile(path):
                self._source = path
            else:
                self._source = model if isinstance(model, bytes) else bytes(model)
        self._inputs = [self._node_arg(info) for info in self._model.inputs()]
        self._outputs = [self._node_arg(info) for info in self._model.outputs()]
        self._declared = {info["name"]: info["shape"] for info in self._model.inputs()}
        # Per input, the last fed shape check_input_shape passed: the next call at that
        # shape skips the check.
        self._shape_passed: Dict[str, tuple] = {}
        self._dtypes = {arg.name: arg.dtype for arg in self._inputs}
        self._output_index = {arg.name: i for i, arg in enumerate(self._outputs)}
        self._alignment = _alignment()
        # Without providers, graphs run on the instance's first device.
        self._providers = list(dict.fromkeys(devices)) if devices else [_hgr.devices()[0]["spec"]]
        # A model whose input shapes are all known (declared, or given) is specialized
        # now, as ONNX Runtime prepares a session at creation: a model hgr cannot run
        # is refused here, and the first run pays nothing more.
        self._prespecialize(input_shapes or {})

    @staticmethod
    def _node_arg(info: Dict[str, Any]) -> NodeArg:
        shape = [] if info["shape"] is None else list(info["shape"])
        return NodeArg(info["name"], shape, _ORT_TYPES.get(info["dtype"], info["dtype"]), info["dtype"])

    def _prespecialize(self, input_shapes: Dict[str, Sequence[int]]) -> None:
        unknown = [name for name in input_shapes if name not in self._dtypes]
        if unknown:
            raise _hgr.InvalidArgumentError(
                f"input_shapes names {', '.join(unknown)}; the model's inputs are "
                f"{', '.join(arg.name for arg in self._inputs)}")
        feeds = {}
        for arg in self._inputs:
            shape = input_shapes.get(arg.name)
            if shape is None:
                declared = self._declared[arg.name]
                if declared is None or not all(isinstance(d, int) for d in declared):
                    return  # not every shape is known: the first run specializes
                shape = declared
            feeds[arg.name] = np.zeros(tuple(shape), dtype=arg.dtype)
        with self._run_lock:
            self._last = self._specialize(self._checked(feeds))  # None where each run decides

    def _live(self) -> _hgr.Model:
        if self._model is None:
            raise _hgr.FailedPreconditionError("the session was closed")
        return self._model

    # ---- ONNX Runtime's introspection ----
    def get_inputs(self) -> List[NodeArg]:
        """The model's inputs (initializers excluded), in order; symbolic dims by
        name, unknown ones as None, as ONNX Runtime reports them."""
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        """The model's outputs, in order."""
        return list(self._outputs)

    def get_providers(self) -> List[str]:
        """The device specs the session runs on."""
        return list(self._providers)

    @property
    def load_report(self) -> Dict[str, Any]:
        """What hgr did: the last new specialization's ONNX load counts (nodes folded,
        fused, ...) and host times, and the specializations kept, made and reused."""
        return self._live().report()

    @property
    def executor(self) -> _hgr.Executor:
        """The hgr Executor of the last run (binding kinds, output buffers);
        FailedPreconditionError before the first run."""
        self._live()
        if self._last is None or self._last.closed:
            raise _hgr.FailedPreconditionError("the session has not run yet: its executor is made for the shapes of "
                                               "the first run")
        return self._last

    # ---- runs ----
    def _checked(self, input_feed: Dict[str, Any]) -> List[Any]:
        """The feed as one array per input, in the model's order, checked with ONNX
        Runtime's messages."""
        if not isinstance(input_feed, dict):
            raise _hgr.InvalidArgumentError("input_feed must be a dict of input name -> array")
        for name in input_feed:
            if name not in self._dtypes:
                raise _hgr.NotFoundError(
                    f"Invalid input name: {name}; the model's inputs are {', '.join(a.name for a in self._inputs)}")
        missing = [arg.name for arg in self._inputs if arg.name not in input_feed]
        if missing:
            raise _hgr.InvalidArgumentError(f"input_feed lacks input(s) {', '.join(missing)}")
        feeds = []
        for arg in self._inputs:
            value = as_input(arg.name, input_feed[arg.name], arg.dtype)
            _check_int32_range(arg.name, value)
            shape = _fed_shape(value)
            if shape is not None and shape != self._shape_passed.get(arg.name):
                check_input_shape(arg.name, shape, self._declared[arg.name])
                self._shape_passed[arg.name] = shape
            feeds.append(value)
        return feeds

    def _specialize(self, feeds: List[Any]) -> Optional[_hgr.Executor]:
        """The executor of feeds' specialization; None for a model that decides at run
        time, which no one executor runs (then every run goes through _run_staged)."""
        try:
            ex = self._live().specialize(feeds)
        except _hgr.FailedPreconditionError as error:
            if "decides at run time" not in str(error):
                raise
            self._staged = str(error)
            return None
        kept = self._executors.get(ex.specialization_id)
        if kept is not None and not kept.closed:
            ex.close()  # it bound nothing: the one kept is the same executor
            return kept
        self._executors[ex.specialization_id] = ex
        taken = {ex.input_info(i)["name"]: i for i in range(ex.input_count)}
        self._fed[ex] = tuple(taken.get(arg.name, -1) for arg in self._inputs)
        return ex

    def _wanted(self, output_names: Optional[Sequence[str]]) -> List[int]:
        if output_names is None:
            return list(range(len(self._outputs)))
        wanted = []
        for name in output_names:
            if name not in self._output_index:
                raise _hgr.NotFoundError(
                    f"output '{name}': the model's outputs are {', '.join(a.name for a in self._outputs)}"
                )
            wanted.append(self._output_index[name])
        return wanted

    def _run_staged(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any]) -> List[np.ndarray]:
        """A model that decides at run time (an If on a computed condition, NonZero,
        NonMaxSuppression ...) runs in stages, each run reading its decisions on the
        host: through the model's run rather than one executor."""
        wanted = self._wanted(output_names)
        outputs = self._live().run(self._checked(input_feed))
        return [outputs[i] for i in wanted]

    def _fed_names(self, ex: _hgr.Executor) -> set:
        """The names of the model inputs ex takes."""
        return {arg.name for arg, index in zip(self._inputs, self._fed[ex]) if index >= 0}

    def _start(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any], run: bool):
        """The executor of the feed's specialization with the feed bound and a new
        array for every output (an array handed out earlier is never written again),
        run and waited for when run is true: (executor, wanted outputs), or (None,
        None) for a model that decides at run time. The bindings (and the run) are one
        call into C (Executor.bind_feed; run_feed, which reads outputs under 64 KiB
        into arrays the executor keeps bound and hands out copies)."""
        wanted = self._wanted(output_names)
        feeds = self._checked(input_feed)
        ex = self._specialize(feeds)
        if ex is None:
            return None, None
        outputs = (ex.run_feed if run else ex.bind_feed)(feeds, self._fed[ex], self._alignment)
        self._last = ex
        return ex, [outputs[i] for i in wanted]

    def run(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any], run_options: Any = None) -> List[np.ndarray]:
        """Runs the model: output_names (None: all) as a list of NumPy arrays,
        input_feed a dict of input name -> value: a NumPy array of the input's dtype,
        a Python list or scalar (converted to the input's dtype), or any C-contiguous
        buffer or __dlpack__ object of its dtype; any shape the model allows. The GIL
        is released while hgr runs."""
        with self._run_lock:
            ex, outputs = (None, None) if self._staged else self._start(output_names, input_feed, True)
            if ex is None:
                return self._run_staged(output_names, input_feed)
        return outputs

    def run_async(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any], run_options: Any = None) -> Future:
        """Starts a run and returns a Future (result(), done()) without waiting;
        several may be in flight, at different shapes too. The inputs must not change
        until it is done."""
        with self._run_lock:
            ex, outputs = (None, None) if self._staged else self._start(output_names, input_feed, False)
            if ex is not None:
                return Future(ex.run_async(), outputs, ex)
        # stages wait on the host between them: the run is done when it returns
        return Future(None, self.run(output_names, input_feed), None)

    def output_buffer(self, index: Any):
        """The latest run's output index (or name) as an OpenCL buffer
        (hgr.DeviceBuffer: mem, context, device, bytes, ready; to_pyopencl())."""
        if isinstance(index, str):
            if index not in self._output_index:
                raise _hgr.NotFoundError(
                    f"output '{index}': the model's outputs are {', '.join(a.name for a in self._outputs)}")
            index = self._output_index[index]
        return self.executor.output_buffer(index)

    # ---- ONNX Runtime's IOBinding: values that stay on the device ----
    def io_binding(self) -> "IOBinding":
        """An IOBinding for run_with_iobinding (onnxruntime.IOBinding's calls): inputs
        from host arrays or OrtValues, outputs kept on their device as OrtValues until
        read, so a state output bound as the next run's input never leaves the device."""
        from .io_binding import IOBinding

        self._live()
        return IOBinding(self)

    def _input_arg(self, name: str) -> NodeArg:
        for arg in self._inputs:
            if arg.name == name:
                return arg
        raise _hgr.NotFoundError(
            f"Invalid input name: {name}; the model's inputs are {', '.join(a.name for a in self._inputs)}")

    def _output_index_of(self, name: str) -> int:
        if name not in self._output_index:
            raise _hgr.NotFoundError(
                f"output '{name}': the model's outputs are {', '.join(a.name for a in self._outputs)}")
        return self._output_index[name]

    def run_with_iobinding(self, iobinding: Any, run_options: Any = None) -> None:
        """Runs the model on iobinding's inputs (onnxruntime's call). It returns once the
        run is started: the outputs (iobinding.get_outputs()) are OrtValues that stay on
        their device and wait for the run only when read, and an OrtValue of an earlier
        run bound as an input (bind_ortvalue_input) is waited for on the device, not on
        the host. Host inputs are copied when the run starts, so their arrays may change
        right after; outputs bound to host memory (bind_ortvalue_output, bind_output
        with buffer_ptr) hold the values when this returns, which waits for the run. A
        model that decides at run time (an If on the data, NonZero, ...) runs in stages
        that read their decisions on the host: its run is waited for here, and its
        values pass through host memory (the outputs are host OrtValues)."""
        from .io_binding import IOBinding, OrtValue

        if not isinstance(iobinding, IOBinding) or iobinding._session is not self:
            raise _hgr.InvalidArgumentError("run_with_iobinding takes an IOBinding of this session (io_binding())")
        missing = [arg.name for arg in self._inputs if arg.name not in iobinding._inputs]
        if missing:
            raise _hgr.InvalidArgumentError(f"the IOBinding lacks input(s) {', '.join(missing)}")
        with self._run_lock:
            values: List[Any] = []  # per model input: a host array, or an OrtValue on a device
            for arg in self._inputs:
                value = iobinding._inputs[arg.name]
                if isinstance(value, OrtValue) and value.on_device:
                    if value._dtype != arg.dtype:
                        raise _hgr.InvalidArgumentError(
                            f"Unexpected input data type. Actual: ({value.data_type()}) , expected: "
                            f"({_ORT_TYPES.get(arg.dtype, arg.dtype)})\n input '{arg.name}' is {arg.dtype}; the "
                            f"OrtValue is {value._dtype}")
                    check_input_shape(arg.name, value.shape(), self._declared[arg.name])
                    values.append(value)
                    continue
                array = as_input(arg.name, value.numpy() if isinstance(value, OrtValue) else value, arg.dtype)
                shape = _fed_shape(array)
                if shape is not None:
                    check_input_shape(arg.name, shape, self._declared[arg.name])
                values.append(array)
            # Device values give their shapes only; their values are read from the host only
            # where the model needs them to specialize (an input that decides shapes).
            feeds = [np.empty(tuple(v.shape()), dtype=v._dtype) if isinstance(v, OrtValue) else v for v in values]
            ex = self._specialize(feeds)
            if ex is not None and any(isinstance(v, OrtValue) and arg.name not in self._fed_names(ex)
                                      for arg, v in zip(self._inputs, values)):
                feeds = [v.numpy() if isinstance(v, OrtValue) else v for v in values]
                ex = self._specialize(feeds)
            if ex is None:
                self._run_staged_with_iobinding(iobinding, values)
                return
            fed = self._fed_names(ex)
            for arg, value in zip(self._inputs, values):
                if arg.name not in fed:  # a constant of the specialization
                    continue
                if isinstance(value, OrtValue):
                    ex.bind_device_buffer(arg.name, value.device_buffer())
                else:
                    if ex.binding_kind("input", arg.name) != "none":
                        ex.unbind("input", arg.name)
                    ex.set_input(arg.name, value)
            targets = {self._output_index[name]: target for name, target in iobinding._outputs}
            for i in range(ex.output_count):
                target = targets.get(i)
                if target is not None:
                    ex.bind_output(i, target)
                elif ex.binding_kind("output", i) != "none":
                    ex.unbind("output", i)  # an array run() handed out is never written again
            fence = ex.run_async()
            self._last = ex
            results = []
            for name, target in iobinding._outputs:
                if target is not None:
                    results.append(OrtValue(target))
                    continue
                info = ex.output_info(self._output_index[name])
                results.append(OrtValue(fence=fence, index=self._output_index[name],
                                        dtype=_hgr.numpy_dtype(info["dtype"]), shape=info["shape"], session=self))
            iobinding._results = results
            iobinding._fence = fence
            if any(target is not None for target in targets.values()):
                fence.wait()

    def _run_staged_with_iobinding(self, iobinding: Any, values: List[Any]) -> None:
        """run_with_iobinding of a model that decides at run time: its stages read their
        decisions on the host, so the run is waited for here, device values are read to
        the host first and the outputs are host values (the model's run takes host
        data: no state stays on the device across such runs)."""
        from .io_binding import OrtValue

        outputs = self._live().run([v.numpy() if isinstance(v, OrtValue) else v for v in values])
        results = []
        for name, target in iobinding._outputs:
            value = outputs[self._output_index[name]]
            if target is not None:
                if target.shape != value.shape or target.dtype != value.dtype:
                    raise _hgr.InvalidArgumentError(
                        f"output '{name}' is {value.dtype} {list(value.shape)} in this run; the memory bound to it "
                        f"holds {target.dtype} {list(target.shape)}")
                target[...] = value
                value = target
            results.append(OrtValue(value))
        iobinding._results = results
        iobinding._fence = None

    # ---- bundles ----
    def write_bundle(self, directory: Any) -> str:
        """Writes the session as a bundle into directory (made if missing; files of
        the same names replaced) and returns its path: the model file (copied from
        the session's path, or the bytes it was made from; external data is not
        copied) and, as binaries for their devices, the programs the session's
        specializations built so far (hgr_model_write_bundle; what ``hgr compile
        --bundle`` writes). Specialize first at the shapes the bundle is for
        (input_shapes=, or a run); before that, FailedPreconditionError.
        InferenceSession(directory) loads it, in another process or on another
        machine with the same devices, drivers and hgr, compiling nothing."""
        model = self._live()
        directory = os.fspath(directory)
        with self._run_lock:
            if isinstance(self._source, str):
                model.write_bundle(self._source, directory)
                return directory
            handle, path = tempfile.mkstemp(prefix="hgr-bundle-model-", suffix=".onnx")
            try:
                with os.fdopen(handle, "wb") as f:
                    f.write(self._source)
                model.write_bundle(path, directory)
            finally:
                os.unlink(path)
        return directory

    # ---- profiling ----
    def profile(self) -> List[Dict[str, Any]]:
        """The last run, one dict per node in run order (node_id, name, op,
        device, commands, device_ns, host_enqueue_ns, start_ns, end_ns: times in
        ns, start and end from the run's first command), from hgr's profile JSON;
        pandas.DataFrame(session.profile()) makes it a table. Needs sess_options
        with enable_profiling, else hgr.FailedPreconditionError."""
        return json.loads(self.executor.profile_json())["nodes"]

    def profile_summary(self) -> str:
        """The last run's profile as text tables (per device, op and node)."""
        return self.executor.profile_summary()

    def write_trace(self, path: Any) -> str:
        """Writes the last run as a Chrome trace-event JSON file (open it in
        Perfetto, ui.perfetto.dev) and returns the path."""
        text = self.executor.trace_json()
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
        return os.fspath(path)

    def end_profiling(self) -> str:
        """ONNX Runtime's name for writing the trace: to
        '<profile_file_prefix or hgr_profile>_<time>.json'; returns the path."""
        prefix = self._profile_prefix or "hgr_profile"
        return self.write_trace(f"{prefix}_{time.strftime('%Y-%m-%d_%H-%M-%S')}.json")

    # ---- lifetime ----
    def close(self) -> None:
        """Waits for runs in flight and frees the session's device memory."""
        for ex in list(self._executors.values()):
            ex.close()
        self._last = None
        if self._model is not None:
            self._model.close()
            self._model = None

    def __enter__(self) -> "InferenceSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
