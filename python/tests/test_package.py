"""The package itself: version, errors, devices."""
import os
import re

import pytest

import hgr
from conftest import PLATFORMS, require_device


def test_version_is_the_c_librarys():
    header = os.path.join(os.path.dirname(__file__), "..", "..", "include", "hgr", "hgr.h")
    if not os.path.exists(header):
        pytest.skip("not run from the repository (include/hgr/hgr.h is not beside python/)")
    text = open(header).read()
    parts = [re.search(rf"#define HGR_VERSION_{p} (\d+)", text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    assert hgr.__version__ == ".".join(parts)


def test_every_status_code_has_an_error_class():
    names = ["Cancelled", "InvalidArgument", "NotFound", "OutOfRange", "ResourceExhausted", "FailedPrecondition",
             "Unimplemented", "Unavailable", "Internal", "DataLoss", "DeviceFailure"]
    for code, name in enumerate(names, start=1):
        cls = getattr(hgr, name + "Error")
        assert issubclass(cls, hgr.Error)
        assert cls.__doc__ and str(code) in cls.__doc__
    assert issubclass(hgr.InvalidArgumentError, ValueError)
    assert issubclass(hgr.NotFoundError, LookupError)


def test_an_unknown_device_is_not_found_and_the_message_lists_the_devices():
    with pytest.raises(hgr.NotFoundError) as caught:
        hgr.find_device("nosuchplatform:0")
    assert "nosuchplatform" in str(caught.value)
    assert caught.value.code == 3


@pytest.mark.parametrize("spec", PLATFORMS)
def test_devices_describe_each_test_bed_platform(spec):
    found = require_device(spec)
    listed = {d["spec"]: d for d in hgr.devices()}
    assert listed[spec] == found
    for key in ("platform", "type", "name", "memory_bytes", "opencl_version", "unified_memory"):
        assert key in found
    assert found["memory_bytes"] > 0
    assert re.fullmatch(r"\d+\.\d+", found["opencl_version"])
    assert found["platform"] == spec.split(":")[0]


def test_every_public_name_has_a_docstring():
    for name in hgr.__all__:
        if name.startswith("__"):
            continue
        assert getattr(hgr, name).__doc__, name
    for cls in (hgr.Executor, hgr.InferenceSession, hgr.Fence, hgr.DeviceBuffer, hgr.Graph):
        for member, value in vars(cls).items():
            if not member.startswith("_") and callable(value):
                assert value.__doc__, f"{cls.__name__}.{member}"
