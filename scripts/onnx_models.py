#!/usr/bin/env python3
"""The ONNX model-zoo architectures for hgr's model tests, benchmark and demo.

The nine architectures ship in the `onnx` wheel (onnx/backend/test/data/light/) with
their weights as ConstantOfShape fills (every channel the same) and an expected
output made from the input arange(n).reshape(shape) / n.

  onnx_models.py prepare OUT_DIR [NAME...]
      Needs onnx, onnxruntime and numpy (BUILD/onnx-venv, made by scripts/setup.sh).
      For each model (the NAMEs given, else all nine) writes OUT_DIR/NAME/:
        model.onnx       a link to the wheel's model
        input.npy        the arange input, expected.npy its expected output
        random.onnx      the model with every ConstantOfShape weight replaced by a
                         seeded random initializer of the same shape and the final
                         Softmax removed (its output is the logits)
        random_input.npy a seeded random input, random_expected.npy ONNX Runtime's
                         logits for it (CPU provider)
        info.txt         the input name, tolerance and versions; written last, so a
                         model with info.txt is complete: a second prepare skips it
      A missing interpreter is reported by `prepare-or-skip`, below.

  onnx_models.py prepare-or-skip PYTHON OUT_DIR [NAME...]
      Runs `prepare` under PYTHON (the venv's interpreter); exits 77 (skipped) naming
      what is missing when PYTHON does not exist or lacks the packages.

  onnx_models.py run OUT_DIR NAME zoo|random HGR [hgr run options...]
      Runs `HGR run` on the prepared model with its input and --expect (the zoo
      model at ONNX's tolerance, the random one against ONNX Runtime at rtol 1e-3,
      atol 1e-4) plus the given options, shows its output and returns its exit code;
      exits 77 (skipped) when OUT_DIR/NAME is not prepared. Standard library only.

  onnx_models.py time-ort OUT_DIR NAME RUNS [WARMUP]
      Times ONNX Runtime (CPU provider, intra-op threads = cores) on the prepared zoo
      model and input: WARMUP untimed runs (default 1), then RUNS runs; prints
      "median MS".

  onnx_models.py names
      Prints the model names, one a line.
"""
import hashlib
import os
import subprocess
import sys

# name, input name, rtol (ONNX's data.json: densenet121 needs 2e-3).
MODELS = [
    ("bvlc_alexnet", "data_0", 1e-3),
    ("densenet121", "data_0", 2e-3),
    ("inception_v1", "data_0", 1e-3),
    ("inception_v2", "data_0", 1e-3),
    ("resnet50", "gpu_0/data_0", 1e-3),
    ("shufflenet", "gpu_0/data_0", 1e-3),
    ("squeezenet", "data_0", 1e-3),
    ("vgg19", "data_0", 1e-3),
    ("zfnet512", "gpu_0/data_0", 1e-3),
]
ZOO_ATOL = 1e-7
RANDOM_RTOL = 1e-3
RANDOM_ATOL = 1e-4
SEED = 15
# Bumped whenever what `prepare` writes changes, so that old folders are redone.
FORMAT = "2"


def light_dir():
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def consumers(graph):
    uses = {}
    for node in graph.node:
        for position, name in enumerate(node.input):
            uses.setdefault(name, []).append((node, position))
    return uses


def weight_role(name, uses, depth=0):
    """What a ConstantOfShape output feeds: (op, input position), through Unsqueeze."""
    for node, position in uses.get(name, []):
        if node.op_type in ("Unsqueeze", "Reshape", "Identity") and position == 0 and depth < 4:
            return weight_role(node.output[0], uses, depth + 1)
        return node, position
    return None, None


def feeds_sum(node, uses):
    """Whether node's output is a summand of a residual Sum or Add of activations."""
    for user, _ in uses.get(node.output[0], []):
        if user.op_type in ("Sum", "Add"):
            return True
    return False


def random_weight(rng, shape, node, position, uses):
    """A value that keeps activations O(1): He-style weights, BatchNorm variances
    positive and scales near 1, small biases and shifts. A BatchNorm that ends a
    residual branch scales it down (0.1 to 0.3), or the Sums would double the
    variance block after block (resnet50's logits reach 1e4 otherwise)."""
    import numpy as np
    op = node.op_type if node is not None else None
    if op == "Conv" and position == 1:
        fan_in = int(np.prod(shape[1:]))
        return rng.normal(0.0, np.sqrt(2.0 / fan_in), shape)
    if op == "Gemm" and position == 1:
        trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
        fan_in = shape[1] if trans_b else shape[0]
        return rng.normal(0.0, np.sqrt(1.0 / fan_in), shape)
    if op == "BatchNormalization":
        if position == 1 and feeds_sum(node, uses):
            return rng.uniform(0.1, 0.3, shape)
        if position in (1, 4):  # scale, variance: positive, near 1
            return rng.uniform(0.5, 1.5, shape)
        return rng.normal(0.0, 0.1, shape)  # bias, mean
    if op == "Mul":  # the scale of a BatchNorm written as Mul + Add
        return rng.uniform(0.5, 1.5, shape)
    return rng.normal(0.0, 0.1, shape)


def randomize(model, seed):
    """The model with random weights for its ConstantOfShape fills, no final Softmax."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    graph = model.graph
    rng = np.random.default_rng(seed)
    initializers = {t.name: t for t in graph.initializer}
    uses = consumers(graph)
    kept = []
    added = []
    for node in graph.node:
        if node.op_type != "ConstantOfShape":
            kept.append(node)
            continue
        shape = [int(d) for d in numpy_helper.to_array(initializers[node.input[0]])]
        user, position = weight_role(node.output[0], uses)
        value = random_weight(rng, shape, user, position, uses).astype(np.float32)
        added.append(numpy_helper.from_array(value, node.output[0]))
    # The final Softmax goes: the graph's output becomes its input (the logits).
    outputs = {o.name for o in graph.output}
    last = kept[-1]
    if last.op_type == "Softmax" and last.output[0] in outputs:
        kept.pop()
        logits = last.input[0]
        for o in graph.output:
            if o.name == last.output[0]:
                o.name = logits
    del graph.node[:]
    graph.node.extend(kept)
    graph.initializer.extend(added)
    # Older IR versions list initializers among the inputs: the new ones too.
    inputs = {i.name for i in graph.input}
    if any(t.name in inputs for t in graph.initializer if t not in added):
        for t in added:
            if t.name not in inputs:
                graph.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    # Unused shape initializers would be harmless, but drop them to keep the file small.
    used = {name for node in graph.node for name in node.input} | {o.name for o in graph.output}
    keep_init = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep_init)
    keep_inputs = [i for i in graph.input if i.name in used]
    del graph.input[:]
    graph.input.extend(keep_inputs)
    onnx.checker.check_model(model)
    return model


def run_onnxruntime(path, input_name, x):
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    options.log_severity_level = 3  # not the warnings about the models' unused initializers
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return session.run(None, {input_name: x})[0]


def normalize_logits(model, factor):
    """Scales the weight and bias initializers of the Gemm or Conv that makes the
    graph's output (through a Reshape/Flatten or Global pool) by factor."""
    import numpy as np
    from onnx import numpy_helper
    graph = model.graph
    producers = {o: n for n in graph.node for o in n.output}
    initializers = {t.name: t for t in graph.initializer}
    node = producers.get(graph.output[0].name)
    while node is not None and node.op_type in ("Reshape", "Flatten", "GlobalAveragePool", "AveragePool", "Relu"):
        if node.op_type == "Relu":
            break  # positive homogeneous: scaling below it is still exact
        node = producers.get(node.input[0])
    if node is None or node.op_type not in ("Gemm", "Conv", "Relu"):
        return False
    if node.op_type == "Relu":
        node = producers.get(node.input[0])
        if node is None or node.op_type not in ("Gemm", "Conv"):
            return False
    names = []
    for name in node.input[1:3]:
        # inception_v1 reshapes its classifier's weights first
        while name not in initializers and name in producers and producers[name].op_type == "Reshape":
            name = producers[name].input[0]
        if name not in initializers:
            return False
        names.append(name)
    for name in names:
        tensor = initializers[name]
        scaled = (numpy_helper.to_array(tensor) * np.float32(factor)).astype(np.float32)
        tensor.CopyFrom(numpy_helper.from_array(scaled, name))
    return True


def write_npy(path, array):
    import numpy as np
    tmp = path + ".tmp.npy"
    np.save(tmp, array)
    os.replace(tmp, path)


def versions():
    import numpy
    import onnx
    import onnxruntime
    return f"onnx {onnx.__version__}, onnxruntime {onnxruntime.__version__}, numpy {numpy.__version__}"


def prepare_one(out_dir, name, input_name, rtol, stamp):
    import numpy as np
    import onnx
    import onnxruntime
    from onnx import numpy_helper
    folder = os.path.join(out_dir, name)
    info_path = os.path.join(folder, "info.txt")
    if os.path.exists(info_path):
        with open(info_path) as f:
            if f"stamp {stamp}\n" in f.read():
                return False
        os.remove(info_path)
    os.makedirs(folder, exist_ok=True)
    source = os.path.join(light_dir(), f"light_{name}.onnx")
    link = os.path.join(folder, "model.onnx")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(source, link)
    model = onnx.load(source)
    graph_input = next(i for i in model.graph.input if i.name == input_name)
    shape = tuple(d.dim_value for d in graph_input.type.tensor_type.shape.dim)
    n = int(np.prod(shape))
    write_npy(os.path.join(folder, "input.npy"), (np.arange(n).reshape(shape) / n).astype(np.float32))
    expected = onnx.TensorProto()
    with open(os.path.join(light_dir(), f"light_{name}_output_0.pb"), "rb") as f:
        expected.ParseFromString(f.read())
    write_npy(os.path.join(folder, "expected.npy"), numpy_helper.to_array(expected))

    seed = SEED + MODELS.index((name, input_name, rtol))
    random_model = randomize(model, seed)
    random_path = os.path.join(folder, "random.onnx")
    onnx.save(random_model, random_path + ".tmp")
    os.replace(random_path + ".tmp", random_path)
    rng = np.random.default_rng(seed + 1000)
    x = rng.random(shape, dtype=np.float32)
    write_npy(os.path.join(folder, "random_input.npy"), x)
    logits = run_onnxruntime(random_path, input_name, x)
    # Logits of standard deviation 1, so that atol 1e-4 means what it says: the last
    # layer's weights and bias scaled by 1 / std (exact: the layer is linear).
    if normalize_logits(random_model, 1.0 / float(np.std(logits))):
        onnx.save(random_model, random_path + ".tmp")
        os.replace(random_path + ".tmp", random_path)
        logits = run_onnxruntime(random_path, input_name, x)
    if not np.all(np.isfinite(logits)):
        raise SystemExit(f"onnx_models.py: {name}: ONNX Runtime's logits are not finite")
    write_npy(os.path.join(folder, "random_expected.npy"), logits)
    with open(info_path + ".tmp", "w") as f:
        f.write(f"input {input_name}\nrtol {rtol}\nshape {','.join(map(str, shape))}\n"
                f"logits std {float(np.std(logits)):.4g}, max |logit| {float(np.max(np.abs(logits))):.4g}\n"
                f"{versions()}\nstamp {stamp}\n")
    os.replace(info_path + ".tmp", info_path)
    return True


def prepare(out_dir, names=()):
    unknown = [n for n in names if n not in [m[0] for m in MODELS]]
    if unknown:
        print(f"onnx_models.py: unknown model(s) {', '.join(unknown)}; the models: "
              f"{', '.join(m[0] for m in MODELS)}", file=sys.stderr)
        return 2
    with open(os.path.abspath(__file__), "rb") as f:
        script = hashlib.sha256(f.read()).hexdigest()[:16]
    stamp = f"{FORMAT} {script} {versions()}"
    os.makedirs(out_dir, exist_ok=True)
    for name, input_name, rtol in MODELS:
        if names and name not in names:
            continue
        made = prepare_one(out_dir, name, input_name, rtol, stamp)
        print(f"onnx_models.py: {name}: {'prepared' if made else 'already prepared'} in {out_dir}/{name}")
    return 0


def prepare_or_skip(python, out_dir, names=()):
    if not os.path.exists(python):
        print(f"onnx_models.py: skipped: no Python at {python} (the venv with onnx, onnxruntime "
              "and numpy: scripts/setup.sh makes it)")
        return 77
    check = subprocess.run([python, "-c", "import onnx, onnxruntime, numpy"], capture_output=True, text=True)
    if check.returncode != 0:
        print(f"onnx_models.py: skipped: {python} cannot import onnx, onnxruntime and numpy: "
              f"{check.stderr.strip().splitlines()[-1] if check.stderr.strip() else 'no message'}")
        return 77
    return subprocess.run([python, os.path.abspath(__file__), "prepare", out_dir, *names]).returncode


def run(out_dir, name, variant, hgr, options):
    entry = next((m for m in MODELS if m[0] == name), None)
    if entry is None:
        print(f"onnx_models.py: unknown model '{name}'", file=sys.stderr)
        return 2
    _, input_name, rtol = entry
    folder = os.path.join(out_dir, name)
    if not os.path.exists(os.path.join(folder, "info.txt")):
        print(f"onnx_models.py: skipped: {folder} is not prepared (the onnx_models_prepare test "
              "prepares it; it needs the venv that scripts/setup.sh makes)")
        return 77
    if variant == "zoo":
        files = ("model.onnx", "input.npy", "expected.npy")
        tolerance = ["--rtol", str(rtol), "--atol", str(ZOO_ATOL)]
    elif variant == "random":
        files = ("random.onnx", "random_input.npy", "random_expected.npy")
        tolerance = ["--rtol", str(RANDOM_RTOL), "--atol", str(RANDOM_ATOL)]
    else:
        print(f"onnx_models.py: variant '{variant}' is neither zoo nor random", file=sys.stderr)
        return 2
    model, x, expected = (os.path.join(folder, f) for f in files)
    # HGR_MODEL_LAUNCHER, e.g. "mpirun -np 2": hgr runs under it (docs/distributed.md)
    launcher = os.environ.get("HGR_MODEL_LAUNCHER", "").split()
    command = [*launcher, hgr, "run", model, "--input", f"{input_name}={x}", "--expect", f"0={expected}",
               *tolerance, *options]
    print("+ " + " ".join(command), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(result.stdout, end="")
    if result.returncode != 0 and "no device matches" in result.stdout:
        print("onnx_models.py: skipped: a device this test binds is absent")
        return 77
    if result.returncode == 0 and f"matches {expected}" not in result.stdout:
        print(f"onnx_models.py: FAILED: {name} ({variant}): hgr exited with 0 but did not say "
              f"that output 0 matches {expected}")
        return 1
    print(f"onnx_models.py: {name} ({variant}): hgr exited with {result.returncode}")
    return result.returncode


def time_ort(out_dir, name, runs, warmup=1):
    import time
    import numpy as np
    import onnxruntime
    input_name = next(m[1] for m in MODELS if m[0] == name)
    folder = os.path.join(out_dir, name)
    x = np.load(os.path.join(folder, "input.npy"))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    options.log_severity_level = 3  # not the warnings about the models' unused initializers
    session = onnxruntime.InferenceSession(os.path.join(folder, "model.onnx"), options,
                                           providers=["CPUExecutionProvider"])
    for _ in range(warmup):
        session.run(None, {input_name: x})
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(None, {input_name: x})
        times.append((time.perf_counter() - start) * 1e3)
    print(f"median {sorted(times)[len(times) // 2]:.3f}")
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "prepare":
        return prepare(argv[2], argv[3:])
    if len(argv) >= 4 and argv[1] == "prepare-or-skip":
        return prepare_or_skip(argv[2], argv[3], argv[4:])
    if len(argv) >= 6 and argv[1] == "run":
        return run(argv[2], argv[3], argv[4], argv[5], argv[6:])
    if len(argv) in (5, 6) and argv[1] == "time-ort":
        return time_ort(argv[2], argv[3], int(argv[4]), int(argv[5]) if len(argv) == 6 else 1)
    if len(argv) == 2 and argv[1] == "names":
        print("\n".join(m[0] for m in MODELS))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
