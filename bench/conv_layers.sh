#!/bin/sh
# GFLOP/s of hgr's conv2d on every distinct conv layer of the model-zoo resnet50,
# vgg19 and shufflenet (grouped 1x1 and depthwise 3x3; ONNX light models), one single-Conv ONNX model per layer, timed with
# `hgr run --repeat R` (median), for one or more hgr binaries side by side (old and
# new builds interleaved layer by layer, as the machine may be loaded).
#
#   bench/conv_layers.sh [-r repeats] [-d device] [-f filter] HGR [HGR2 ...]
#
# Needs a python with onnx and numpy (PYTHON, default /tmp/venv15/bin/python) and the
# light models (LIGHT, default: onnx's backend test data). Models and inputs go to
# WORK (default /tmp/hgr_conv_layers). A filter keeps the layers whose line matches
# the grep pattern (e.g. '1x1').
set -eu
PYTHON=${PYTHON:-/tmp/venv15/bin/python}
WORK=${WORK:-/tmp/hgr_conv_layers}
repeats=5 device=pocl:0 filter=.
while getopts r:d:f: o; do
  case $o in r) repeats=$OPTARG ;; d) device=$OPTARG ;; f) filter=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-r repeats] [-d device] [-f filter] HGR [HGR2 ...]" >&2; exit 2; }
mkdir -p "$WORK"
"$PYTHON" - "$WORK" <<'PY'
import os, sys, onnx, numpy as np
from onnx import helper as h, TensorProto as T, numpy_helper as nh, shape_inference
work = sys.argv[1]
light = os.environ.get('LIGHT', os.path.join(os.path.dirname(onnx.__file__), 'backend/test/data/light'))
layers = {}
for model in ('resnet50', 'vgg19', 'shufflenet'):
    g = shape_inference.infer_shapes(onnx.load(f'{light}/light_{model}.onnx')).graph
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in list(g.value_info) + list(g.input)}
    shapes.update({t.name: list(t.dims) for t in g.initializer})
    for n in g.node:
        if n.op_type != 'Conv': continue
        a = {x.name: h.get_attribute_value(x) for x in n.attribute}
        x, w = shapes[n.input[0]], shapes[n.input[1]]
        s, p, g = a.get('strides', [1, 1]), a.get('pads', [0, 0, 0, 0]), a.get('group', 1)
        key = f'{model[:3]}_c{x[1]}_{x[2]}x{x[3]}_k{w[0]}_{w[2]}x{w[3]}_s{s[0]}_p{p[0]}' + (f'_g{g}' if g > 1 else '')
        layers.setdefault(key, [x, w, s, p, 0, g])[4] += 1
rng = np.random.default_rng(0)
with open(f'{work}/layers.txt', 'w') as out:
    for key, (x, w, s, p, count, g) in layers.items():
        oh = (x[2] + p[0] + p[2] - w[2]) // s[0] + 1
        ow = (x[3] + p[1] + p[3] - w[3]) // s[1] + 1
        flops = 2 * w[0] * w[1] * w[2] * w[3] * oh * ow
        out.write(f'{key} {count} {flops}\n')
        if os.path.exists(f'{work}/{key}.onnx'): continue
        wt = nh.from_array((rng.standard_normal(w) * 0.05).astype(np.float32), 'w')
        bt = nh.from_array(rng.standard_normal(w[0]).astype(np.float32), 'b')
        node = h.make_node('Conv', ['x', 'w', 'b'], ['c'], strides=s, pads=p, group=g)
        relu = h.make_node('Relu', ['c'], ['y'])
        graph = h.make_graph([node, relu], key, [h.make_tensor_value_info('x', T.FLOAT, x)],
                             [h.make_tensor_value_info('y', T.FLOAT, None)], [wt, bt])
        m = h.make_model(graph, opset_imports=[h.make_opsetid('', 13)]); m.ir_version = 8
        onnx.save(m, f'{work}/{key}.onnx')
        np.save(f'{work}/{key}.npy', rng.standard_normal(x).astype(np.float32))
PY
printf '%-36s %5s' layer count
for hgr in "$@"; do printf ' %10s %7s' "ms(#$#)" GFLOP/s; done
echo
grep -e "$filter" "$WORK/layers.txt" | while read -r key count flops; do
  printf '%-36s %5s' "$key" "$count"
  for hgr in "$@"; do
    ms=$("$hgr" run "$WORK/$key.onnx" --input "x=$WORK/$key.npy" --devices "$device" --repeat "$repeats" 2>&1 |
      sed -n 's/.*runs: min [0-9.]* ms, median \([0-9.]*\) ms.*/\1/p')
    printf ' %10s %7s' "${ms:-fail}" "$(awk -v f="$flops" -v t="${ms:-0}" 'BEGIN { if (t > 0) printf "%.1f", f / t / 1e6; else print "-" }')"
  done
  echo
done
