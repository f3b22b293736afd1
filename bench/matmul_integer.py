"""The integer GEMM (op matmul_integer, kernels/matmul_integer.cl) against hgr's
float32 GEMM (op matmul, B [K, N]) on one device, through
`hgr run --repeat` on one-node graphs: uint8 x int8 with a zero point and a scale
per column (float32 out, as ONNX Runtime's dynamic quantization computes), at the
shapes of a BERT-like encoder's projections (128 tokens, 384 wide, FFN 1536) and a
square one. The three graphs of a shape take turns, ROUNDS (5) rounds of REPEATS
runs each (`hgr run --repeat`, one process per round and graph); each figure is the
median of a graph's per-round medians (this 2-vCPU machine's load moves a single
process's median by up to 2x). Prints a markdown table: ms of each and the ratios
to the float32 GEMM.

    python bench/matmul_integer.py WORK_DIR DEVICE [REPEATS [ROUNDS]]   (HGR_CLI: the hgr program,
                                                                          default build/tools/hgr)
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

SHAPES = [(128, 384, 384), (128, 1536, 384), (128, 384, 1536), (512, 512, 512)]  # M, N, K


def graph(op, dtypes, shapes, out_dtype, out_shape, **attrs):
    """A TVM graph of one node `op` over inputs in0.. (dtypes, shapes) with attrs."""
    count = len(dtypes)
    nodes = [{"op": "null", "name": f"in{i}", "inputs": []} for i in range(count)]
    nodes.append({"op": "tvm_op", "name": op, "attrs": {"func_name": op, "num_inputs": str(count),
                                                          "num_outputs": "1", "flatten_data": "0",
                                                          **{k: str(v) for k, v in attrs.items()}},
                  "inputs": [[i, 0, 0] for i in range(count)]})
    return {"nodes": nodes, "arg_nodes": list(range(count)), "node_row_ptr": list(range(count + 2)),
            "heads": [[count, 0, 0]],
            "attrs": {"storage_id": ["list_int", list(range(count + 1))],
                      "dltype": ["list_str", list(dtypes) + [out_dtype]],
                      "shape": ["list_shape", [list(s) for s in shapes] + [list(out_shape)]]}}


def command(hgr, work, name, g, arrays, device, repeats):
    """The `hgr run` command line of graph g (written to WORK_DIR) on arrays."""
    path = os.path.join(work, f"{name}.json")
    with open(path, "w") as f:
        json.dump(g, f)
    args = [hgr, "run", path, "--devices", device, "--repeat", str(repeats)]
    for i, a in enumerate(arrays):
        npy = os.path.join(work, f"{name}_in{i}.npy")
        np.save(npy, a)
        args += ["--input", f"in{i}={npy}"]
    return args


def median_ms(args):
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    found = re.search(r"median ([0-9.]+) ms", text)
    if not found:
        sys.exit(f"bench/matmul_integer.py: no median in the output of {' '.join(args)}:\n{text}")
    return float(found.group(1))


def main():
    work, device = sys.argv[1], sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    hgr = os.environ.get("HGR_CLI", "build/tools/hgr")
    rng = np.random.default_rng(5)
    print("| M x N x K | matmul_integer (uint8 x int8) ms | dequantize_matmul (float32 x int8) ms | matmul (float32) "
          "ms | integer / float32 | dequantize_matmul / float32 |")
    print("|---|---:|---:|---:|---:|---:|")
    for m, n, k in SHAPES:
        a = rng.integers(0, 256, (m, k)).astype(np.uint8)
        b = rng.integers(-128, 128, (n, k)).astype(np.int8)
        za, zb = np.array(128, np.uint8), np.zeros(n, np.int8)
        scale = rng.uniform(1e-4, 1e-2, n).astype(np.float32)
        x = rng.standard_normal((m, k)).astype(np.float32)
        weights = np.ascontiguousarray(b.T)  # [K, N], ONNX's layout
        # the ONNX loader's panels of 32 columns, [N / 32, K, 32]
        panels = np.ascontiguousarray(weights.reshape(k, n // 32, 32).transpose(1, 0, 2))
        commands = [
            command(hgr, work, f"integer_{m}x{n}x{k}",
                    graph("matmul_integer", ["uint8", "int8", "uint8", "int8", "float32"],
                          [(m, k), (n, k), (), (n,), (n,)], "float32", (m, n)),
                    [a, b, za, zb, scale], device, repeats),
            command(hgr, work, f"dequantize_{m}x{n}x{k}",
                    graph("dequantize_matmul", ["float32", "int8", "int8", "float32"],
                          [(m, k), panels.shape, (n,), (n,)], "float32", (m, n), units=n),
                    [x, panels, zb, scale], device, repeats),
            command(hgr, work, f"matmul_{m}x{n}x{k}",
                    graph("matmul", ["float32", "float32"], [(m, k), (k, n)], "float32", (m, n)),
                    [x, weights.astype(np.float32)], device, repeats)]
        medians = [[] for _ in commands]
        for _ in range(rounds):
            for i, args in enumerate(commands):
                medians[i].append(median_ms(args))
        integer, dequantized, matmul = (float(np.median(ms)) for ms in medians)
        print(f"| {m} x {n} x {k} | {integer:.3f} | {dequantized:.3f} | {matmul:.3f} | **{integer / matmul:.2f}** | "
              f"**{dequantized / matmul:.2f}** |", flush=True)


if __name__ == "__main__":
    main()
