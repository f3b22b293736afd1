#!/bin/sh
# check_staged_cli.sh HGR PYTHON TMP_DIR: `hgr run` of ONNX models that decide at run
# time (docs/onnx.md, "Decisions at run time"), which it runs in stages through the
# model object. PYTHON (with onnx, onnxruntime and numpy) writes the models, their
# inputs and ONNX Runtime's outputs: an If whose condition the data computes, with
# branches of other output shapes (each branch once); a NonMaxSuppression whose
# selected boxes a Gather then reads (some selected, and none). Each runs on pocl:0
# with --repeat 3 and must match ONNX Runtime and report its decisions; options that
# take one executor are refused with exit 1 naming the option; `hgr check` points to
# `hgr run`; a missing --input is named; an op hgr lacks is still refused as before.
# Exits 77 when pocl or the Python modules are absent, 1 with the reason when
# anything else differs.
hgr="$1"
python="$2"
dir="$3/staged-cli-$$"
failed=0
fail() { echo "check_staged_cli.sh: FAILED: $1"; failed=1; }
if ! "$python" -c "import numpy, onnx, onnxruntime" 2>/dev/null; then
  echo "check_staged_cli.sh: skipped: $python lacks numpy, onnx or onnxruntime (scripts/setup.sh makes the venv)"
  exit 77
fi
rm -rf "$dir"
mkdir -p "$dir" || exit 1

"$python" - "$dir" <<'EOF' || exit 1
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

out = sys.argv[1]


def save(name, nodes, inputs, outputs, initializers):
    graph = h.make_graph(nodes, name, inputs, outputs, initializer=initializers)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    path = os.path.join(out, name + ".onnx")
    onnx.save(model, path)
    return path


def case(path, name, feeds):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for key, value in feeds.items():
        np.save(os.path.join(out, f"{name}_{key}.npy"), value)
    for k, value in enumerate(session.run(None, feeds)):
        np.save(os.path.join(out, f"{name}_expected_{k}.npy"), value)


scalar = lambda name, value: h.make_tensor(name, T.FLOAT, [], [value])
rng = np.random.default_rng(45)

# z = If(mean(x0) > 0) { 2 relu(x0) } else { concat(relu(x0), relu(x0)) } + 1: [2, 64] or [2, 128]
then_g = h.make_graph([h.make_node("Mul", ["x", "two"], ["t"])], "then", [],
                      [h.make_tensor_value_info("t", T.FLOAT, None)])
else_g = h.make_graph([h.make_node("Concat", ["x", "x"], ["e"], axis=1)], "else", [],
                      [h.make_tensor_value_info("e", T.FLOAT, None)])
model = save("data_if", [h.make_node("Relu", ["x0"], ["x"]),
                           h.make_node("ReduceMean", ["x0"], ["m"], keepdims=0),
                           h.make_node("Greater", ["m", "zero"], ["c"]),
                           h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
                           h.make_node("Add", ["y", "one"], ["z"])],
               [h.make_tensor_value_info("x0", T.FLOAT, [2, 64])], [h.make_tensor_value_info("z", T.FLOAT, None)],
               [scalar("zero", 0.0), scalar("one", 1.0), scalar("two", 2.0)])
case(model, "if_then", {"x0": (rng.standard_normal((2, 64)) + 1).astype(np.float32)})
case(model, "if_else", {"x0": (rng.standard_normal((2, 64)) - 1).astype(np.float32)})

# selected = NonMaxSuppression(boxes, Sigmoid(logits)); rows = the selected boxes
model = save("nms", [h.make_node("Sigmoid", ["logits"], ["scores"]),
                       h.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score_min"],
                                   ["selected"]),
                       h.make_node("Gather", ["selected", "two_i"], ["box_index"], axis=1),
                       h.make_node("Squeeze", ["boxes", "axis_0"], ["boxes_2d"]),
                       h.make_node("Gather", ["boxes_2d", "box_index"], ["rows"], axis=0)],
               [h.make_tensor_value_info("boxes", T.FLOAT, [1, 200, 4]),
                h.make_tensor_value_info("logits", T.FLOAT, [1, 3, 200])],
               [h.make_tensor_value_info("selected", T.INT64, None), h.make_tensor_value_info("rows", T.FLOAT, None)],
               [h.make_tensor("max_out", T.INT64, [1], [20]), h.make_tensor("iou", T.FLOAT, [1], [0.5]),
                h.make_tensor("score_min", T.FLOAT, [1], [0.3]), h.make_tensor("two_i", T.INT64, [], [2]),
                h.make_tensor("axis_0", T.INT64, [1], [0])])
xy = rng.random((1, 200, 2), dtype=np.float32) * 100
boxes = np.concatenate([xy, xy + rng.random((1, 200, 2), dtype=np.float32) * 30 + 1], -1).astype(np.float32)
case(model, "nms_some", {"boxes": boxes, "logits": rng.standard_normal((1, 3, 200)).astype(np.float32)})
case(model, "nms_none", {"boxes": boxes, "logits": (rng.standard_normal((1, 3, 200)) - 20).astype(np.float32)})

# an op of another domain: refused as one graph and in stages alike
save("other_domain", [h.make_node("Frobnicate", ["a"], ["b"], domain="com.example")],
     [h.make_tensor_value_info("a", T.FLOAT, [4])], [h.make_tensor_value_info("b", T.FLOAT, [4])], [])
EOF

# run NAME EXPECTED_EXIT ARGS...: hgr run's output in $output, its exit code checked
run() {
  name="$1" want="$2"
  shift 2
  output="$("$hgr" run "$@" 2>&1)"
  code=$?
  printf '%s\n' "$output"
  if printf '%s' "$output" | grep -q -e "no device matches" -e "no OpenCL device found"; then
    echo "check_staged_cli.sh: skipped: pocl is absent"
    rm -rf "$dir"
    exit 77
  fi
  [ "$code" -eq "$want" ] || fail "$name: hgr run exited $code, not $want"
}
has() { printf '%s' "$output" | grep -q -e "$2" || fail "$1: the output does not say '$2'"; }

for branch in then else; do
  run "if_$branch" 0 "$dir/data_if.onnx" --devices pocl:0 --repeat 3 --input x0="$dir/if_${branch}_x0.npy" \
    --expect 0="$dir/if_${branch}_expected_0.npy" --output-dir "$dir/out_if_$branch"
  has "if_$branch" "data_if.onnx runs in stages through the model object"
  has "if_$branch" "3 runs: min"
  has "if_$branch" "in stages: 3 decisions read on the host, 3 stages run after them over 3 runs"
  has "if_$branch" "matches $dir/if_${branch}_expected_0.npy"
  [ -f "$dir/out_if_$branch/output_0.npy" ] || fail "if_$branch: --output-dir got no output_0.npy"
done
has if_else "output 0 'z' float32 \[2, 128\]"

for selection in some none; do
  run "nms_$selection" 0 "$dir/nms.onnx" --devices pocl:0 --repeat 3 --input boxes="$dir/nms_${selection}_boxes.npy" \
    --input logits="$dir/nms_${selection}_logits.npy" --expect 0="$dir/nms_${selection}_expected_0.npy" \
    --expect 1="$dir/nms_${selection}_expected_1.npy"
  has "nms_$selection" "NonMaxSuppression"
  has "nms_$selection" "in stages: 3 decisions read on the host"
  has "nms_$selection" "matches $dir/nms_${selection}_expected_0.npy"
  has "nms_$selection" "matches $dir/nms_${selection}_expected_1.npy"
done
has nms_none "output 0 'selected' int64 \[0, 3\]"

nms_inputs="--input boxes=$dir/nms_some_boxes.npy --input logits=$dir/nms_some_logits.npy"
for option in "--profile" "--profile-json $dir/p.json" "--trace $dir/t.json" "--dump $dir/dump" "--pipeline 2" \
              "--queues 2" "--place-report $dir/r.json"; do
  # shellcheck disable=SC2086 # the option and its value, the inputs: words
  run "refused $option" 1 "$dir/nms.onnx" --devices pocl:0 $nms_inputs $option
  has "refused $option" "INVALID_ARGUMENT: ${option%% *} needs one executor (.*), but .*nms.onnx decides at run time and runs in stages, each its own executor"
done

run missing_input 1 "$dir/nms.onnx" --devices pocl:0 --input boxes="$dir/nms_some_boxes.npy"
has missing_input "input 1 'logits' of .*nms.onnx is not given with --input"
run misnamed_input 1 "$dir/nms.onnx" --devices pocl:0 $nms_inputs --input bogus="$dir/nms_some_boxes.npy"
has misnamed_input "--input bogus: "

run other_domain 1 "$dir/other_domain.onnx" --devices pocl:0 --input a="$dir/if_then_x0.npy"
has other_domain "UNIMPLEMENTED: .*Frobnicate"
printf '%s' "$output" | grep -q "runs in stages" && fail "other_domain: an op hgr lacks was taken for a decision"

output="$("$hgr" check "$dir/nms.onnx" --devices pocl:0 2>&1)"
code=$?
printf '%s\n' "$output"
[ "$code" -eq 1 ] || fail "hgr check exited $code, not 1"
has check "FAILED_PRECONDITION: .*nms.onnx: hgr check validates one graph; \`hgr run\` runs this model in stages"

rm -rf "$dir"
exit $failed
