#!/bin/sh
# check_fuse_patterns_cli.sh HGR PYTHON TMP_DIR: the graph passes' patterns through
# the CLI. PYTHON (with onnx, onnxruntime and numpy) writes a BERT-like block at
# opset 14 as torch.onnx and tf2onnx write it: a layer norm written out (Pow, Div),
# a linear layer, GELU written out (Div by sqrt 2, Erf), a linear layer, the
# residual add, a layer norm written out as tf2onnx does (Mul, Reciprocal) and a
# tanh GELU; its input and ONNX Runtime's output. `hgr check` must print the fused
# patterns' counts (the linear layers' bias adds and GELU in their GEMMs' epilogues), the same at two shapes (every shape fuses the same nodes);
# `hgr run --verbose` on pocl:0 must list each fused node with the nodes it
# replaced and match ONNX Runtime. Exits 77 when pocl or the Python modules are
# absent, 1 with the reason when anything else differs.
hgr="$1"
python="$2"
dir="$3/fuse-patterns-cli-$$"
failed=0
fail() { echo "check_fuse_patterns_cli.sh: FAILED: $1"; failed=1; }
if ! "$python" -c "import numpy, onnx, onnxruntime" 2>/dev/null; then
  echo "check_fuse_patterns_cli.sh: skipped: $python lacks numpy, onnx or onnxruntime (scripts/setup.sh makes the venv)"
  exit 77
fi
rm -rf "$dir"
mkdir -p "$dir" || exit 1

"$python" - "$dir" <<'PY' || exit 1
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper as h, TensorProto as T, numpy_helper as nh
out = sys.argv[1]
H = 16
rng = np.random.default_rng(7)
inits = []
def const(name, value):
    inits.append(nh.from_array(np.asarray(value, dtype=np.float32), name)); return name
nodes = []
def node(op, ins, out, name, **attrs):
    nodes.append(h.make_node(op, ins, [out], name=name, **attrs)); return out
def layer_norm(x, p, tf_style):
    m = node("ReduceMean", [x], p + "_mean", p + "/ReduceMean", axes=[-1])
    d = node("Sub", [x, m], p + "_d", p + "/Sub")
    if tf_style: sq = node("Mul", [d, d], p + "_sq", p + "/Mul_sq")
    else: sq = node("Pow", [d, const(p + "_two", 2.0)], p + "_sq", p + "/Pow")
    v = node("ReduceMean", [sq], p + "_var", p + "/ReduceMean_1", axes=[-1])
    ve = node("Add", [v, const(p + "_eps", 1e-5)], p + "_ve", p + "/Add")
    sd = node("Sqrt", [ve], p + "_sd", p + "/Sqrt")
    if tf_style:
        r = node("Reciprocal", [sd], p + "_r", p + "/Reciprocal")
        n = node("Mul", [d, r], p + "_n", p + "/Mul_n")
    else: n = node("Div", [d, sd], p + "_n", p + "/Div")
    g = node("Mul", [n, const(p + "_gamma", rng.uniform(0.5, 1.5, H))], p + "_g", p + "/Mul")
    return node("Add", [g, const(p + "_beta", rng.uniform(-1, 1, H))], p + "_y", p + "/Add_1")
y1 = layer_norm("x", "ln1", False)
hh = node("MatMul", [y1, const("w1", rng.normal(0, 0.5, (H, 4 * H)))], "h0", "fc1/MatMul")
hh = node("Add", [hh, const("b1", rng.normal(0, 0.1, 4 * H))], "h", "fc1/Add")
q = node("Div", ["h", const("sqrt2", 1.4142135)], "gq", "gelu/Div")
e = node("Erf", [q], "ge", "gelu/Erf")
a = node("Add", [e, const("one", 1.0)], "ga", "gelu/Add")
m = node("Mul", ["h", a], "gm", "gelu/Mul")
g = node("Mul", [m, const("half", 0.5)], "g", "gelu/Mul_1")
o = node("MatMul", [g, const("w2", rng.normal(0, 0.5, (4 * H, H)))], "o0", "fc2/MatMul")
o = node("Add", [o, const("b2", rng.normal(0, 0.1, H))], "o1", "fc2/Add")
r = node("Add", [o, y1], "res", "residual")
y2 = layer_norm(r, "ln2", True)
# tanh GELU on the output
c = node("Pow", [y2, const("three", 3.0)], "t3", "tgelu/Pow")
c = node("Mul", [c, const("k", 0.044715)], "t4", "tgelu/Mul")
c = node("Add", [y2, c], "t5", "tgelu/Add")
c = node("Mul", [c, const("s2pi", 0.7978845608)], "t6", "tgelu/Mul_1")
c = node("Tanh", [c], "t7", "tgelu/Tanh")
c = node("Add", [c, const("one_t", 1.0)], "t8", "tgelu/Add_1")
c = node("Mul", [y2, const("half_t", 0.5)], "t9", "tgelu/Mul_2")
c = node("Mul", ["t9", "t8"], "y", "tgelu/Mul_3")
graph = h.make_graph(nodes, "bert_block", [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", H])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq", H])], initializer=inits)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 14)]); model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, out + "/bert_block.onnx")
x = rng.normal(0, 2, (2, 5, H)).astype(np.float32)
np.save(out + "/bert_block_x.npy", x)
np.save(out + "/bert_block_expected.npy", ort.InferenceSession(out + "/bert_block.onnx", providers=["CPUExecutionProvider"]).run(None, {"x": x})[0])
PY

# hgr_run NAME EXPECTED_EXIT COMMAND ARGS...: the output in $output, its exit code checked
hgr_run() {
  name="$1" want="$2"
  shift 2
  output="$("$hgr" "$@" 2>&1)"
  code=$?
  printf '%s\n' "$output"
  if printf '%s' "$output" | grep -q -e "no device matches" -e "no OpenCL device found"; then
    echo "check_fuse_patterns_cli.sh: skipped: pocl:0 is absent"
    rm -rf "$dir"
    exit 77
  fi
  [ "$code" -eq "$want" ] || fail "$name: hgr exited $code, not $want"
}
has() { printf '%s' "$output" | grep -q -e "$2" || fail "$1: the output does not say '$2'"; }

# the linear layers take their bias adds and the GELU (GEMM epilogues), the one of 64
# columns reads its weights in panels; the second layer norm takes the residual add
# before it as its skip input, so no elementwise group remains
counts="fused patterns: 2 layer norms (19 nodes), 2 GELUs (14 nodes), 0 attentions (0 nodes), 0 conv epilogues (0 nodes), 2 GEMM epilogues (3 nodes), 1 packed GEMM weights (1 nodes), 0 output layouts (0 nodes), 0 sibling GEMMs (0 nodes), 1 skip layer norms (1 nodes), 0 elementwise groups (0 nodes)"
for shape in 2,5,16 1,3,16; do
  hgr_run "check $shape" 0 check "$dir/bert_block.onnx" --input-shape x=$shape --devices pocl:0
  has "check $shape" "$counts"
  has "check $shape" "valid"
done

hgr_run run 0 run "$dir/bert_block.onnx" --devices pocl:0 --input x="$dir/bert_block_x.npy" \
  --expect 0="$dir/bert_block_expected.npy" --rtol 1e-4 --atol 1e-5 --verbose
has run "$counts"
has run "fused: layer_norm 'ln1_y' <- 9 nodes: 'ln1_mean', 'ln1_d', 'ln1_sq', 'ln1_var', 'ln1_ve', 'ln1_sd', 'ln1_n', 'ln1_g', 'ln1_y'"
has run "fused: layer_norm 'ln2_y' <- 10 nodes: .*'ln2_r', 'ln2_n'"
has run "fused: gelu 'g' <- 5 nodes: 'gq', 'ge', 'ga', 'gm', 'g'"
has run "fused: gelu_tanh 'y' <- 9 nodes"
# the matmuls keep their own names (the MatMul's reshape after them takes the chain's)
has run "fused: matmul '[^']*' <- 3 nodes: '[^']*', 'h', 'g'"
has run "fused: matmul '[^']*' <- 2 nodes: '[^']*', 'o1'"
has run "fused: matmul '[^']*' reads '[^']*' in panels of 32 columns ('[^']*\\.panels')"
has run "fused: layer_norm '[^']*' <- 2 nodes: '[^']*', '[^']*'"
has run "matches $dir/bert_block_expected.npy"

rm -rf "$dir"
exit $failed
