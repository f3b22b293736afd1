"""Single MatMul models (x [M, K] times a constant [K, N], transformer layers' shapes)
on pocl:0: hgr with the 6 x 16 direct tile forced by a tuning record ("old"), hgr with
the rule's tile ("new"), and ONNX Runtime with 2 threads, called in turn, medians.

  source scripts/testbed_env.sh; testbed_env build
  build/python-venv/bin/python bench/gemm_transformer.py [ROUNDS]

HGR_DEVICE_ID: the device's id in tuning.tsv (`hgr tune` writes it), default this
project's PoCL 3.1 on AVX-512. Uses /tmp/gemm37w/{old,new} as cache directories.
bench/notes.md, "GEMM on transformer shapes (issue 37 §5)", has its numbers."""
import numpy as np, onnx, time, sys, os
from onnx import helper, TensorProto, numpy_helper
import onnxruntime as ort
import hgr
dev = os.environ.get("HGR_DEVICE_ID", "Portable Computing Language|pthread-skylake-avx512-Intel(R) Xeon(R) Processor|OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512|3.1+debian")
os.makedirs("/tmp/gemm37w/old", exist_ok=True); os.makedirs("/tmp/gemm37w/new", exist_ok=True)
shapes = [(16,384,1536),(32,384,384),(128, 384, 384), (128, 384, 1536), (128, 1536, 384), (512, 384, 384), (512,1536,384), (1024, 384, 1536)]
with open("/tmp/gemm37w/old/tuning.tsv", "w") as f:
    f.write("hgr-tune 1\n")
    for (m, k, n) in shapes:
        f.write(f"{dev}\tgemm:1x{m}x{n}x{k}:a0,{k},1:b0,{n},1:w0,0\t1x8_6x16_k1\t1.0\n")
def model(m, k, n):
    w = np.random.default_rng(0).standard_normal((k, n)).astype(np.float32) * 0.05
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], [numpy_helper.from_array(w, "w")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
so = ort.SessionOptions(); so.intra_op_num_threads = 2
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
print("load", open("/proc/loadavg").read().split()[:3])
for (m, k, n) in shapes:
    mb = model(m, k, n)
    os.environ["HGR_CACHE_DIR"] = "/tmp/gemm37w/old"; old = hgr.InferenceSession(mb, providers=["pocl:0"])
    x = np.random.default_rng(1).standard_normal((m, k)).astype(np.float32)
    old.run(None, {"x": x})
    os.environ["HGR_CACHE_DIR"] = "/tmp/gemm37w/new"; new = hgr.InferenceSession(mb, providers=["pocl:0"])
    new.run(None, {"x": x})
    b = ort.InferenceSession(mb, so)
    ref = b.run(None, {"x": x})[0]
    for s in (old, new):
        assert np.allclose(s.run(None, {"x": x})[0], ref, atol=1e-3), "mismatch"
    ts = [[], [], []]
    for i in range(reps):
        for j, s in enumerate((old, new, b)):
            t = time.perf_counter(); s.run(None, {"x": x}); ts[j].append(time.perf_counter() - t)
    fl = 2 * m * k * n
    md = [np.median(t) * 1e3 for t in ts]
    print(f"{m}x{k}x{n}: hgr old {md[0]:.3f} ms ({fl/md[0]/1e6:.0f} GFLOP/s)  new {md[1]:.3f} ({fl/md[1]/1e6:.0f})  ort {md[2]:.3f} ({fl/md[2]/1e6:.0f})  new/old {md[1]/md[0]:.2f} new/ort {md[1]/md[2]:.2f}", flush=True)
print("load", open("/proc/loadavg").read().split()[:3])
