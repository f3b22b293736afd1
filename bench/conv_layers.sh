#!/bin/sh
# GFLOP/s of hgr's conv2d on every distinct conv layer of the model-zoo resnet50,
# vgg19 and shufflenet (grouped 1x1 and depthwise 3x3; ONNX light models), one single-Conv ONNX model per layer, timed with
# `hgr run --repeat R` (median), for one or more hgr binaries side by side (old and
# new builds interleaved layer by layer, as the machine may be loaded).
#
#   bench/conv_layers.sh [-r repeats] [-d device] [-f filter] [-c] HGR [HGR2 ...]
#
# -c: CPU time instead of wall time, for CPU drivers (PoCL pthread) on a loaded
# machine, where wall time measures the other load: each layer's "ms" is the CPU
# time of one run over the compute units (the process's CPU time over `hgr run
# --repeat R+2` less that over `--repeat 2`, after a warm-up process that fills the
# drivers' caches, divided by R and by UNITS, default the
# device's compute units), and the peak is hgr_bench_peak's FLOP per CPU-second
# times the units, so GFLOP/s and the share of peak are what a quiet machine with
# all its cores would show, if the driver's threads never waited.
#
# Needs a python with onnx and numpy (PYTHON, default build/onnx-venv/bin/python, the
# venv scripts/setup.sh makes) and the
# light models (LIGHT, default: onnx's backend test data). Models and inputs go to
# WORK (default /tmp/hgr_conv_layers). A filter keeps the layers whose line matches
# the grep pattern (e.g. '1x1').
#
# Each GFLOP/s is followed by its share of the device's float32 FMA peak: PEAK
# (GFLOP/s) when set, else the median that hgr_bench_peak (bench/bench_peak.c;
# PEAK_BENCH, default the one built next to an HGR, ../bench/) measures
# just before the table. The last lines total each model's layers (every layer
# counted as often as the model has it): sum of FLOPs over sum of median times, and
# that as a share of the peak.
set -eu
PYTHON=${PYTHON:-build/onnx-venv/bin/python}
WORK=${WORK:-${TMPDIR:-/tmp}/hgr_conv_layers}
repeats=5 device=pocl:0 filter=. cpu=0
while getopts r:d:f:c o; do
  case $o in r) repeats=$OPTARG ;; d) device=$OPTARG ;; f) filter=$OPTARG ;; c) cpu=1 ;; *) exit 2 ;; esac
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
if [ -z "${PEAK:-}" ]; then
  if [ -z "${PEAK_BENCH:-}" ]; then
    for hgr in "$@"; do [ -x "$(dirname "$hgr")/../bench/hgr_bench_peak" ] && PEAK_BENCH=$(dirname "$hgr")/../bench/hgr_bench_peak; done
  fi
  [ -n "${PEAK_BENCH:-}" ] || { echo "$0: no hgr_bench_peak next to the HGR binaries; set PEAK_BENCH or PEAK" >&2; exit 1; }
  if [ "$cpu" = 1 ]; then
    line=$("$PEAK_BENCH" -d "$device")
    PEAK=$(echo "$line" | sed -n 's/.* per CPU-second x [0-9]* compute units = \([0-9.]*\);.*/\1/p')
    UNITS=${UNITS:-$(echo "$line" | sed -n 's/.* per CPU-second x \([0-9]*\) compute units.*/\1/p')}
  else
    PEAK=$("$PEAK_BENCH" -d "$device" | sed -n 's/^peak [^ ]* \([0-9.]*\) GFLOP.*/\1/p')
  fi
  [ -n "$PEAK" ] || { echo "$0: $PEAK_BENCH printed no peak" >&2; exit 1; }
fi
echo "peak $device: $PEAK GFLOP/s"
printf '%-36s %5s' layer count
i=0
for hgr in "$@"; do i=$((i + 1)); printf ' %9s %7s %5s' "ms(#$i)" GFLOP/s peak; done
echo
grep -e "$filter" "$WORK/layers.txt" | while read -r key count flops; do
  printf '%-36s %5s' "$key" "$count"
  j=0
  for hgr in "$@"; do
    j=$((j + 1))
    if [ "$cpu" = 1 ]; then
      ms=$("$PYTHON" - "$hgr" "$WORK/$key" "$device" "$repeats" "${UNITS:-2}" <<'PY'
import resource, subprocess, sys
hgr, base, device, repeats, units = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
def cpu(r):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([hgr, 'run', base + '.onnx', '--input', 'x=' + base + '.npy', '--devices', device,
                           '--repeat', str(r)], capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode: sys.exit(0)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
cpu(1)  # a first process fills the drivers' kernel caches (PoCL compiles at first use)
print('%.3f' % max(0.001, (cpu(repeats + 2) - cpu(2)) * 1e3 / repeats / units))
PY
)
    else
      ms=$("$hgr" run "$WORK/$key.onnx" --input "x=$WORK/$key.npy" --devices "$device" --repeat "$repeats" 2>&1 |
        sed -n 's/.*runs: min [0-9.]* ms, median \([0-9.]*\) ms.*/\1/p')
    fi
    printf ' %9s %s' "${ms:-fail}" "$(awk -v f="$flops" -v t="${ms:-0}" -v p="$PEAK" \
      'BEGIN { if (t > 0) printf "%7.1f %4.0f%%", f / t / 1e6, 100 * f / t / 1e6 / p; else printf "%7s %5s", "-", "-" }')"
    echo "$key $count $flops ${ms:-0}" >>"$WORK/times.$$.$j"
  done
  echo
done
# totals per model and binary from times.$$.<binary>: "key count flops ms" lines
for model in res vgg shu; do
  printf '%-36s %5s' "total ${model}* (sum FLOP / sum ms)" ""
  j=0
  for hgr in "$@"; do
    j=$((j + 1))
    awk -v m="$model" -v p="$PEAK" 'index($1, m "_") == 1 { f += $2 * $3; t += $2 * $4; if ($4 == 0) bad = 1 }
      END { if (t > 0 && !bad) printf " %9.2f %7.1f %4.0f%%", t, f / t / 1e6, 100 * f / t / 1e6 / p;
            else printf " %9s %7s %5s", "-", "-", "-" }' "$WORK/times.$$.$j"
  done
  echo
done
rm -f "$WORK"/times.$$.*
