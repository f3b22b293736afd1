"""A new input shape compiles no work-group function (issue 35): PoCL compiles each
kernel's work-group function per local size at its first launch (0.2-0.4 s each),
so hgr's launches take their local sizes from the device and the kernel, never from
a tensor's shape. Counted from PoCL's own debug output ("Built a specialized WG
function: .../<kernel>/<local size>..."), in a process of its own with an empty
PoCL kernel cache: a kernel that runs again at another shape must not be built
again. (A shape may still launch a kernel the earlier ones did not use, such as a
GEMM tile where a batch of 1 took the GEMV: that kernel's first build is allowed.)"""
import os
import re
import subprocess
import sys
import tempfile

import pytest

from conftest import require_device

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SYMBOLIC = os.path.join(ROOT, "tests", "data", "symbolic")

# One session per model, its shapes in turn; a marker on stderr before each call.
SCRIPT = r"""
import sys, numpy as np, hgr
model, shapes = sys.argv[1], eval(sys.argv[2])
sess = hgr.InferenceSession(model, providers=["pocl:0"])
rng = np.random.default_rng(0)
for feeds in shapes:
    sys.stderr.write(f"@@shape {feeds}\n"); sys.stderr.flush()
    sess.run(None, {name: rng.standard_normal(shape).astype(np.float32) for name, shape in feeds.items()})
sys.stderr.write("@@end\n"); sys.stderr.flush()
"""

BUILT = re.compile(r"Built a specialized WG function: .*/([A-Za-z0-9_]+)/([0-9]+-[0-9]+-[0-9]+)")


def work_group_builds(model: str, shapes: list) -> list:
    """[(shape, [(kernel, local size), ...]), ...]: the work-group functions PoCL
    built during each call."""
    require_device("pocl:0")
    with tempfile.TemporaryDirectory() as caches:
        env = dict(os.environ, POCL_DEBUG="general", POCL_CACHE_DIR=os.path.join(caches, "pocl"),
                   HGR_CACHE_DIR=os.path.join(caches, "hgr"), XDG_CACHE_HOME=os.path.join(caches, "xdg"))
        done = subprocess.run([sys.executable, "-c", SCRIPT, model, repr(shapes)], env=env, capture_output=True,
                              text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    calls, current = [], None
    for line in done.stderr.splitlines():
        if line.startswith("@@"):
            if current is not None:
                calls.append(current)
            current = None if line == "@@end" else (line[len("@@shape "):], [])
            continue
        found = BUILT.search(line)
        if found and current is not None:
            current[1].append((found.group(1), found.group(2)))
    return calls


def rebuilt(calls: list) -> list:
    """The (shape, kernel, local size) of every build of a kernel built before."""
    seen, again = set(), []
    for shape, builds in calls:
        for kernel, local in builds:
            if kernel in seen:
                again.append((shape, kernel, local))
        seen.update(kernel for kernel, _ in builds)
    return again


def test_the_cnn_at_new_image_sizes_builds_no_kernel_again():
    shapes = [{"x": s} for s in [(1, 3, 8, 8), (1, 3, 16, 16), (1, 3, 24, 20), (1, 3, 64, 64), (2, 3, 12, 12),
                                 (4, 3, 16, 16), (3, 3, 40, 9)]]
    calls = work_group_builds(os.path.join(SYMBOLIC, "cnn.onnx"), shapes)
    assert len(calls) == len(shapes)
    assert calls[0][1], "the first call built no work-group function: is POCL_DEBUG's output still parsed?"
    assert rebuilt(calls) == []


def test_the_encoder_at_new_lengths_builds_no_kernel_again():
    shapes = [{"x": (b, s, 8), "mask": (b, s)} for b, s in [(1, 5), (2, 9), (3, 1), (1, 64), (4, 7), (1, 200)]]
    calls = work_group_builds(os.path.join(SYMBOLIC, "encoder.onnx"), shapes)
    assert len(calls) == len(shapes)
    assert calls[0][1]
    assert rebuilt(calls) == []
