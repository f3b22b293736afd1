"""A YOLOv8-style detector as torch.onnx exports Ultralytics' YOLOv8 (opset 17, batch
norms folded into the convolutions' biases, as its exporter's fuse step does): every
convolution followed by SiLU written out (Sigmoid, then Mul of the convolution's
output by it), C2f blocks (a 1x1 convolution, Split into two halves, bottlenecks of
two 3x3 convolutions with a residual Add on the second half, Concat of all, a 1x1
convolution), SPPF (three 5 x 5 stride-1 MaxPools in a row, Concat), nearest 2x
Resize in the neck, and the detect head: per scale two branches of 3x3, 3x3 and 1x1
convolutions (64 box channels, `classes` class channels), concatenated per scale,
reshaped to [1, C, cells] and concatenated over the scales, the classes through a
Sigmoid: output [1, 64 + classes, cells] (the box distribution left for the host,
as the exporter leaves the decoding to Ultralytics' post-processing when asked).
Widths and depths are YOLOv8n's (16, 32, 64, 128, 256; 1, 2, 2, 1 bottlenecks)
unless `scale` shrinks them. Seeded random weights, He-scaled so that activations
neither vanish nor explode over 60 layers.

Used by python/tests/test_detector.py against ONNX Runtime and by
bench/real_models.py."""
import numpy as np


def yolo_like(height=320, width=320, classes=80, scale=1.0, seed=0, opset=17, dynamic=False):
    """The detector as an onnx.ModelProto (input "images" [1, 3, height, width], output
    "output0" [1, 64 + classes, cells]); height and width multiples of 32. dynamic:
    the image's height and width and the cells symbolic, as Ultralytics' export with
    dynamic=True writes them (any multiple of 32 then runs)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    counter = [0]

    def name(prefix):
        counter[0] += 1
        return f"/model/{prefix}_{counter[0]}"

    def const(value, prefix):
        n = name(prefix)
        inits.append(numpy_helper.from_array(np.asarray(value), n))
        return n

    def conv(x, cin, cout, k=1, s=1, act=True):
        n = name("conv")
        w = (rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        nodes.append(helper.make_node("Conv", [x, const(w, "w"), const(b, "b")], [n + "/out"], kernel_shape=[k, k],
                                      strides=[s, s], pads=[k // 2] * 4, name=n))
        if not act:
            return n + "/out"
        nodes.append(helper.make_node("Sigmoid", [n + "/out"], [n + "/sig"], name=n + "/Sigmoid"))
        nodes.append(helper.make_node("Mul", [n + "/out", n + "/sig"], [n + "/silu"], name=n + "/Mul"))
        return n + "/silu"

    def c2f(x, cin, cout, blocks, shortcut=True):
        hidden = cout // 2
        y = conv(x, cin, 2 * hidden)
        n = name("split")
        parts = [n + "/a", n + "/b"]
        nodes.append(helper.make_node("Split", [y, const(np.array([hidden, hidden], np.int64), "split")], parts,
                                      axis=1, name=n))
        outs = list(parts)
        last = parts[1]
        for _ in range(blocks):
            z = conv(conv(last, hidden, hidden, 3), hidden, hidden, 3)
            if shortcut:
                a = name("add")
                nodes.append(helper.make_node("Add", [last, z], [a], name=a))
                z = a
            outs.append(z)
            last = z
        cat = name("concat")
        nodes.append(helper.make_node("Concat", outs, [cat], axis=1, name=cat))
        return conv(cat, (2 + blocks) * hidden, cout)

    def sppf(x, cin, cout):
        hidden = cin // 2
        y = conv(x, cin, hidden)
        pools = [y]
        for _ in range(3):
            p = name("pool")
            nodes.append(helper.make_node("MaxPool", [pools[-1]], [p], kernel_shape=[5, 5], strides=[1, 1],
                                          pads=[2, 2, 2, 2], name=p))
            pools.append(p)
        cat = name("concat")
        nodes.append(helper.make_node("Concat", pools, [cat], axis=1, name=cat))
        return conv(cat, 4 * hidden, cout)

    def upsample(x):
        r = name("resize")
        scales = const(np.array([1, 1, 2, 2], np.float32), "scales")
        nodes.append(helper.make_node("Resize", [x, "", scales], [r], mode="nearest",
                                      coordinate_transformation_mode="asymmetric", nearest_mode="floor", name=r))
        return r

    def concat(values):
        c = name("concat")
        nodes.append(helper.make_node("Concat", values, [c], axis=1, name=c))
        return c

    w = [max(8, int(round(c * scale))) for c in (16, 32, 64, 128, 256)]
    d = [max(1, int(round(n * scale))) for n in (1, 2, 2, 1)]
    x = conv("images", 3, w[0], 3, 2)
    x = conv(x, w[0], w[1], 3, 2)
    x = c2f(x, w[1], w[1], d[0])
    x = conv(x, w[1], w[2], 3, 2)
    p3 = c2f(x, w[2], w[2], d[1])
    x = conv(p3, w[2], w[3], 3, 2)
    p4 = c2f(x, w[3], w[3], d[2])
    x = conv(p4, w[3], w[4], 3, 2)
    x = c2f(x, w[4], w[4], d[3])
    p5 = sppf(x, w[4], w[4])
    # neck: top-down, then bottom-up
    n4 = c2f(concat([upsample(p5), p4]), w[4] + w[3], w[3], d[0], shortcut=False)
    n3 = c2f(concat([upsample(n4), p3]), w[3] + w[2], w[2], d[0], shortcut=False)
    n4 = c2f(concat([conv(n3, w[2], w[2], 3, 2), n4]), w[2] + w[3], w[3], d[0], shortcut=False)
    n5 = c2f(concat([conv(n4, w[3], w[3], 3, 2), p5]), w[3] + w[4], w[4], d[0], shortcut=False)
    # head
    box_hidden, cls_hidden = max(16, w[2] // 4, 64), max(w[2], min(classes, 100))
    flat = []
    for level, cin in ((n3, w[2]), (n4, w[3]), (n5, w[4])):
        box = conv(conv(conv(level, cin, box_hidden, 3), box_hidden, box_hidden, 3), box_hidden, 64, act=False)
        cls = conv(conv(conv(level, cin, cls_hidden, 3), cls_hidden, cls_hidden, 3), cls_hidden, classes, act=False)
        r = name("reshape")
        nodes.append(helper.make_node("Reshape", [concat([box, cls]), const(np.array([1, 64 + classes, -1], np.int64),
                                                                                "shape")], [r], name=r))
        flat.append(r)
    cells = name("concat")
    nodes.append(helper.make_node("Concat", flat, [cells], axis=2, name=cells))
    sp = name("split")
    nodes.append(helper.make_node("Split", [cells, const(np.array([64, classes], np.int64), "split")],
                                  [sp + "/box", sp + "/cls"], axis=1, name=sp))
    nodes.append(helper.make_node("Sigmoid", [sp + "/cls"], [sp + "/scores"], name=sp + "/Sigmoid"))
    nodes.append(helper.make_node("Concat", [sp + "/box", sp + "/scores"], ["output0"], axis=1, name="/model/out"))
    count = (height // 8) * (width // 8) + (height // 16) * (width // 16) + (height // 32) * (width // 32)
    image_dims = [1, 3, "height", "width"] if dynamic else [1, 3, height, width]
    graph = helper.make_graph(
        nodes, "yolo_like", [helper.make_tensor_value_info("images", TensorProto.FLOAT, image_dims)],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 64 + classes, "anchors" if dynamic else count])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def image(height=320, width=320, seed=1):
    """An input as Ultralytics' letterbox makes it: RGB in [0, 1], [1, 3, height, width]."""
    return np.random.default_rng(seed).random((1, 3, height, width), dtype=np.float32)
