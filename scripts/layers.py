#!/usr/bin/env python3
"""The runtime's layers, and whether its calls go one way.

Reads runtime/<layer>/*.c, finds which file defines each hgr_ and hgr__ function, and
prints for every file the other files it calls and the headers it includes. A call
must go to a lower layer, or within a layer to a file listed earlier in ORDER (for
the layers whose files are ordered); any other call, and any cycle, is reported and
makes the exit status 1. docs/architecture.md explains the layers.

  scripts/layers.py [REPO]            check, print violations only
  scripts/layers.py --print [REPO]    also print the call and include graphs
"""
import fnmatch
import os
import re
import sys

LAYERS = ["base", "device", "graph", "ops", "build", "passes", "exec", "place", "onnx", "model"]
# Within a layer, lowest first. A file of an ordered layer calls only files before it.
ORDER = {
    "base": ["alloc.c", "text.c", "status.c", "shape.c", "tensor.c", "file.c", "store.c", "params.c", "npy.c"],
    "device": ["device.c", "instance.c"],
    "graph": ["graph.c", "graph_edit.c", "graph_json.c", "graph_write.c"],
    "ops": ["op_context.c", "out_layout.c", "tuning.c", "ops_*.c", "ops_builtin.c", "kernel_library.c", "op_registry.c"],
    "passes": ["rewrite.c", "fuse_patterns.c", "fuse_attention.c", "conv_epilogue.c", "fuse_gemm_epilogue.c", "pack_gemm_weights.c", "fuse_out_layout.c", "fuse_sibling_gemms.c", "fuse_skip_norm.c", "fuse_elementwise.c", "passes.c"],
    "exec": ["queue.c", "bridge.c", "order.c", "device_keys.c", "storage.c", "program_pool.c", "program_cache.c", "tune_store.c", "remote.c", "transfer.c",
             "plan.c", "launch.c", "wait.c", "warm.c", "readback.c", "fence.c", "host_io.c", "profile.c",
             "executor.c", "profile_report.c", "tune.c"],
    "place": ["unplace.c", "capability.c", "assign.c", "copies.c", "memory_plan.c", "verify.c", "cost_model.c",
              "schedule.c", "rank_measure.c", "place.c", "place_report.c"],
    "onnx": ["onnx_wire.c", "onnx_tensor.c", "onnx_node.c", "onnx_fold_map.c", "onnx_scope.c", "onnx_stage.c", "onnx_import_*.c", "onnx_ops.c",
             # the quantized ops import the float ops on dequantized values through the op table
             "onnx_import_qlinear.c", "onnx_widen.c",
             "onnx_options.c", "onnx_model.c", "onnx_load.c",
             # If, Loop and Scan import their subgraphs through the loader, which reaches them by the op table only
             "onnx_import_control.c"],
    "model": ["model.c", "model_run.c", "bundle.c"],
}
DEFINITION = re.compile(r"^(?:[A-Za-z_][\w \t\*]*?)\b(hgr_\w+)\s*\([^;{]*\)\s*\{", re.M)
CALL = re.compile(r"\b(hgr_\w+)\s*\(")
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def position(layer, name):
    """Index of name in ORDER[layer] (an exact name first, then a pattern), or None."""
    order = ORDER.get(layer, [])
    if name in order:
        return order.index(name)
    for index, pattern in enumerate(order):
        if fnmatch.fnmatch(name, pattern):
            return index
    return None


def rank(path):
    layer = os.path.basename(os.path.dirname(path))
    return LAYERS.index(layer), position(layer, os.path.basename(path))


def main(argv):
    show = "--print" in argv
    args = [a for a in argv if a != "--print"]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    runtime = os.path.join(root, "runtime")
    files = []
    for layer in LAYERS:
        folder = os.path.join(runtime, layer)
        if not os.path.isdir(folder):
            continue
        files += sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith((".c", ".h")))
    sources = {f: strip_comments(open(f, encoding="utf-8").read()) for f in files}
    defined = {}
    for f, text in sources.items():
        if f.endswith(".c"):
            for match in DEFINITION.finditer(text):
                defined.setdefault(match.group(1), f)
    problems = []
    calls = {}
    for f, text in sources.items():
        if not f.endswith(".c"):
            continue
        layer = os.path.basename(os.path.dirname(f))
        if ORDER.get(layer) and position(layer, os.path.basename(f)) is None:
            problems.append(f"{layer}/{os.path.basename(f)} is not in scripts/layers.py's ORDER for {layer}")
        targets = {}
        for match in CALL.finditer(text):
            target = defined.get(match.group(1))
            if target and target != f:
                targets.setdefault(target, match.group(1))
        calls[f] = targets
        for target, function in targets.items():
            (a_layer, a_within), (b_layer, b_within) = rank(f), rank(target)
            upward = b_layer > a_layer or (
                b_layer == a_layer and a_within is not None and b_within is not None and b_within > a_within)
            if upward:
                problems.append(f"{os.path.relpath(f, runtime)} calls {function} of the higher "
                                f"{os.path.relpath(target, runtime)}")
    # Cycles among files of an unordered layer.
    def reaches(start, goal, seen):
        for nxt in calls.get(start, {}):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                if reaches(nxt, goal, seen):
                    return True
        return False
    for f in calls:
        for target in calls[f]:
            if f < target and reaches(target, f, set()):
                problems.append(f"{os.path.relpath(f, runtime)} and {os.path.relpath(target, runtime)} call each "
                                "other")
    if show:
        print("calls (file -> the files whose functions it calls):")
        for f in files:
            if f in calls:
                names = sorted(os.path.relpath(t, runtime) for t in calls[f])
                print(f"  {os.path.relpath(f, runtime)} -> {' '.join(names) or '-'}")
        print("includes (file -> the project headers it includes):")
        for f in files:
            print(f"  {os.path.relpath(f, runtime)} -> {' '.join(INCLUDE.findall(sources[f])) or '-'}")
    for problem in problems:
        print(f"layers: {problem}")
    print(f"layers: {len(calls)} files, {sum(len(t) for t in calls.values())} file-to-file call edges, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
