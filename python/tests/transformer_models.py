"""Transformer models built as their exporters write them (issue 37, section 4), with
seeded random weights, for python/tests/test_transformers.py and bench/transformer.py
(which imports this file by path): one place, so that the test checks what the bench
times.

- bert(opset=14): a BERT-like encoder as torch.onnx writes it at opset 14: int64
  input_ids, attention_mask and token_type_ids [batch, sequence]; word, position
  (a constant position_ids buffer sliced to the length through Shape -> Gather ->
  Unsqueeze -> Slice) and token-type embeddings by Gather; LayerNorm written out
  (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add); attention with the
  heads split and merged by Reshape through Shape -> Gather -> Unsqueeze -> Concat
  chains and Transposes (k transposed twice, as `k.transpose(-1, -2)` after the head
  permute exports), scores divided by sqrt(d), the additive mask (1 - mask) * -10000
  (Unsqueeze, Cast, Sub, Mul), Softmax; Erf-GELU written out (Div by 1.4142, Erf, Add
  1, Mul, Mul 0.5); residuals; a tanh pooler over the first token.
  bert(opset=17): the same with LayerNormalization nodes; bert(opset=20): and Gelu.
- gpt2(causal=...): a GPT-2-like decoder (pre-LayerNormalization, opset 17): the
  fused q/k/v projection Split in three, a causal mask either sliced from a constant
  lower triangle [1, 1, 128, 128] by the length (Shape -> Slice, causal="slice", as
  GPT-2's `bias` buffer; position ids from the mask: CumSum - 1, 1 Where the mask is
  0) or made by Trilu (causal="trilu"; position ids by Range over the length),
  applied by Where with float32's finfo.min,
  the padding mask added as (1 - mask) * finfo.min, tanh GELU written out, logits
  through the tied word embedding.
- vit(): a ViT-like image encoder (opset 17): patch Conv (stride = patch), the patches
  flattened by Reshape through a Shape chain and transposed, the cls token Expanded to
  the batch and Concatenated, position embeddings interpolated to the image's patch
  grid by Resize (mode cubic, pytorch_half_pixel, sizes from the image's Shape; empty
  roi and scales constants, as torch.onnx writes `interpolate(size=...)`, as DINOv2 and
  DeiT exports do for other image sizes), pre-LN blocks with LayerNormalization,
  the final LayerNormalization and a head on the cls token.
- bert_for_optimizer(): a BERT as PyTorch's exporter writes it in the form ONNX
  Runtime's transformer optimizer fuses (k permuted once to kᵀ, constant head shapes,
  LayerNormalization), and ort_optimize(), which runs that optimizer: its
  EmbedLayerNormalization, Attention, SkipLayerNormalization and BiasGelu.

Each builder returns the ModelProto; feeds() makes the inputs their libraries pass
(int64 ids and mask, padding zeros at the end of some rows)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT_MIN = float(np.finfo(np.float32).min)


class _Graph:
    """Nodes and initializers of one model, its weights from one seeded generator."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, tag):
        self.count += 1
        return f"{tag}_{self.count}"

    def op(self, op_type, inputs, out=None, **attrs):
        """One node with one output, named after the op (or out); returns the output's name."""
        out = out or self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def ops(self, op_type, inputs, outputs, **attrs):
        outs = [self.name(o) for o in outputs]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=outs[0], **attrs))
        return outs

    def param(self, tag, *shape, scale=0.1, offset=0.0):
        name = self.name(tag)
        value = self.rng.standard_normal(shape) * scale + offset
        self.inits.append(numpy_helper.from_array(value.astype(np.float32), name))
        return name

    def const(self, value, dtype=np.float32, tag="const"):
        name = self.name(tag)
        self.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def model(self, title, inputs, outputs, opset):
        graph = helper.make_graph(self.nodes, title, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8,
                                  producer_name="pytorch")
        onnx.checker.check_model(model)
        return model

    # pieces torch.onnx writes

    def dim(self, x, axis):
        """x.size(axis) as a 1-element int64 tensor: Shape -> Gather -> Unsqueeze."""
        shape = self.op("Shape", [x])
        scalar = self.op("Gather", [shape, self.const(axis, np.int64)], axis=0)
        return self.op("Unsqueeze", [scalar, self.const([0], np.int64)])

    def linear(self, x, inputs, outputs, out=None):
        y = self.op("MatMul", [x, self.param("w", inputs, outputs, scale=inputs ** -0.5)])
        return self.op("Add", [self.param("b", outputs, scale=0.02), y], out)

    def layer_norm(self, x, width, opset, epsilon=1e-12, out=None):
        gamma, beta = self.param("gamma", width, offset=1.0), self.param("beta", width)
        if opset >= 17:
            return self.op("LayerNormalization", [x, gamma, beta], out, axis=-1, epsilon=epsilon)
        mean = self.op("ReduceMean", [x], axes=[-1])
        centred = self.op("Sub", [x, mean])
        variance = self.op("ReduceMean", [self.op("Pow", [centred, self.const(2.0)])], axes=[-1])
        deviation = self.op("Sqrt", [self.op("Add", [variance, self.const(epsilon)])])
        normal = self.op("Div", [centred, deviation])
        return self.op("Add", [self.op("Mul", [normal, gamma]), beta], out)

    def gelu_erf(self, x, opset):
        if opset >= 20:
            return self.op("Gelu", [x])
        erf = self.op("Erf", [self.op("Div", [x, self.const(1.4142135381698608)])])
        return self.op("Mul", [self.op("Mul", [x, self.op("Add", [erf, self.const(1.0)])]), self.const(0.5)])

    def gelu_tanh(self, x):
        cube = self.op("Mul", [self.const(0.044715), self.op("Pow", [x, self.const(3.0)])])
        inner = self.op("Mul", [self.const(0.7978845608028654), self.op("Add", [x, cube])])
        one_plus = self.op("Add", [self.const(1.0), self.op("Tanh", [inner])])
        return self.op("Mul", [self.op("Mul", [self.const(0.5), x]), one_plus])

    def split_heads(self, x, heads, head_size, perm):
        """[batch, seq, heads * head_size] -> Transpose(perm) of [batch, seq, heads, head_size]."""
        shape = self.op("Concat", [self.dim(x, 0), self.dim(x, 1), self.const([heads], np.int64),
                                   self.const([head_size], np.int64)], axis=0)
        return self.op("Transpose", [self.op("Reshape", [x, shape])], perm=perm)

    def merge_heads(self, context, width):
        """[batch, heads, seq, head_size] -> [batch, seq, width]."""
        merged = self.op("Transpose", [context], perm=[0, 2, 1, 3])
        shape = self.op("Concat", [self.dim(merged, 0), self.dim(merged, 1), self.const([width], np.int64)], axis=0)
        return self.op("Reshape", [merged, shape])

    def attention(self, q, k, v, heads, width, mask, causal=None, k_twice=True):
        """Scores of q [b, s, w] against k, scaled by Div, the causal mask by Where and
        the additive mask, Softmax, times v; the heads merged. Returns [b, s, w]."""
        head_size = width // heads
        q = self.split_heads(q, heads, head_size, [0, 2, 1, 3])
        if k_twice:
            k = self.op("Transpose", [self.split_heads(k, heads, head_size, [0, 2, 1, 3])], perm=[0, 1, 3, 2])
        else:
            k = self.split_heads(k, heads, head_size, [0, 2, 3, 1])
        v = self.split_heads(v, heads, head_size, [0, 2, 1, 3])
        scores = self.op("Div", [self.op("MatMul", [q, k]), self.const(float(np.sqrt(head_size)))])
        if causal is not None:
            scores = self.op("Where", [causal, scores, self.const(FLOAT_MIN)])
        if mask is not None:
            scores = self.op("Add", [scores, mask])
        probs = self.op("Softmax", [scores], axis=-1)
        return self.merge_heads(self.op("MatMul", [probs, v]), width)

    def additive_mask(self, attention_mask, fill):
        """[batch, seq] int64 -> [batch, 1, 1, seq] float: (1 - mask) * fill."""
        extended = self.op("Unsqueeze", [attention_mask, self.const([1, 2], np.int64)])
        inverted = self.op("Sub", [self.const(1.0), self.op("Cast", [extended], to=TensorProto.FLOAT)])
        return self.op("Mul", [inverted, self.const(fill)])


def _ids(name):
    return helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])


def bert(opset=14, layers=2, width=64, heads=4, ffn=None, vocab=100, max_positions=64, seed=37):
    """input_ids, attention_mask, token_type_ids [batch, sequence] int64 ->
    last_hidden_state [batch, sequence, width], pooler_output [batch, width]."""
    ffn = ffn or 4 * width
    g = _Graph(seed)
    positions = g.const(np.arange(max_positions, dtype=np.int64)[None], np.int64, "position_ids")
    length = g.dim("input_ids", 1)
    position_ids = g.op("Slice", [positions, g.const([0], np.int64), length, g.const([1], np.int64),
                                  g.const([1], np.int64)])
    words = g.op("Gather", [g.param("word_embeddings", vocab, width, scale=0.5), "input_ids"])
    types = g.op("Gather", [g.param("token_type_embeddings", 2, width, scale=0.5), "token_type_ids"])
    where = g.op("Gather", [g.param("position_embeddings", max_positions, width, scale=0.5), position_ids])
    h = g.layer_norm(g.op("Add", [g.op("Add", [words, types]), where]), width, opset)
    mask = g.additive_mask("attention_mask", -10000.0)
    for layer in range(layers):
        q, k, v = (g.linear(h, width, width) for _ in range(3))
        context = g.attention(q, k, v, heads, width, mask)
        h = g.layer_norm(g.op("Add", [g.linear(context, width, width), h]), width, opset)
        up = g.gelu_erf(g.linear(h, width, ffn), opset)
        last = "last_hidden_state" if layer == layers - 1 else None
        h = g.layer_norm(g.op("Add", [g.linear(up, ffn, width), h]), width, opset, out=last)
    first = g.op("Gather", [h, g.const(0, np.int64)], axis=1)
    g.op("Tanh", [g.linear(first, width, width)], "pooler_output")
    return g.model(f"bert_opset{opset}", [_ids("input_ids"), _ids("attention_mask"), _ids("token_type_ids")],
                   [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", width]),
                    helper.make_tensor_value_info("pooler_output", TensorProto.FLOAT, ["batch", width])], opset)


def gpt2(causal="slice", layers=2, width=64, heads=4, vocab=100, max_positions=128, seed=38):
    """input_ids, attention_mask [batch, sequence] int64 -> logits [batch, sequence, vocab]."""
    opset = 17
    g = _Graph(seed)
    length = g.dim("input_ids", 1)
    if causal == "slice":  # position_ids = mask.cumsum(-1) - 1, then 1 where the mask is 0
        counted = g.op("Sub", [g.op("CumSum", ["attention_mask", g.const(1, np.int64)]), g.const(1, np.int64)])
        padding = g.op("Equal", ["attention_mask", g.const(0, np.int64)])
        position_ids = g.op("Where", [padding, g.const(1, np.int64), counted])
    else:  # torch.arange(0, length).unsqueeze(0)
        end = g.op("Squeeze", [length, g.const([0], np.int64)])
        position_ids = g.op("Unsqueeze", [g.op("Range", [g.const(0, np.int64), end, g.const(1, np.int64)]),
                                          g.const([0], np.int64)])
    wte = g.param("wte", vocab, width, scale=0.5)
    h = g.op("Add", [g.op("Gather", [wte, "input_ids"]),
                     g.op("Gather", [g.param("wpe", max_positions, width, scale=0.2), position_ids])])
    if causal == "slice":
        lower = np.tril(np.ones((max_positions, max_positions), bool))[None, None]
        zero = g.const([0], np.int64)
        rows = g.op("Slice", [g.const(lower, bool, "bias"), zero, length, g.const([2], np.int64)])
        causal_mask = g.op("Slice", [rows, zero, length, g.const([3], np.int64)])
    else:
        square = g.op("ConstantOfShape", [g.op("Concat", [length, length], axis=0)],
                      value=numpy_helper.from_array(np.array([1], np.int64)))
        causal_mask = g.op("Cast", [g.op("Trilu", [square], upper=0)], to=TensorProto.BOOL)
    mask = g.additive_mask("attention_mask", FLOAT_MIN)
    for _ in range(layers):
        x = g.layer_norm(h, width, opset, epsilon=1e-5)
        q, k, v = g.ops("Split", [g.linear(x, width, 3 * width), g.const([width] * 3, np.int64)], ["q", "k", "v"],
                        axis=2)
        context = g.attention(q, k, v, heads, width, mask, causal=causal_mask, k_twice=False)
        h = g.op("Add", [h, g.linear(context, width, width)])
        x = g.layer_norm(h, width, opset, epsilon=1e-5)
        h = g.op("Add", [h, g.linear(g.gelu_tanh(g.linear(x, width, 4 * width)), 4 * width, width)])
    final = g.layer_norm(h, width, opset, epsilon=1e-5)
    g.op("MatMul", [final, g.op("Transpose", [wte], perm=[1, 0])], "logits")
    return g.model(f"gpt2_{causal}", [_ids("input_ids"), _ids("attention_mask")],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", vocab])], opset)


def vit(layers=2, width=64, heads=4, patch=8, grid=4, classes=10, seed=39):
    """pixel_values [batch, 3, height, width] -> logits [batch, classes]; the position
    embeddings are learned for a grid x grid patch grid and interpolated to the image's."""
    opset = 17
    g = _Graph(seed)
    patches = g.op("Conv", ["pixel_values", g.param("patch_w", width, 3, patch, patch, scale=0.05),
                            g.param("patch_b", width, scale=0.02)], kernel_shape=[patch, patch],
                   strides=[patch, patch])
    rows, cols = g.dim(patches, 2), g.dim(patches, 3)
    flat = g.op("Reshape", [patches, g.op("Concat", [g.dim(patches, 0), g.dim(patches, 1),
                                                     g.const([-1], np.int64)], axis=0)])
    tokens = g.op("Transpose", [flat], perm=[0, 2, 1])  # [b, n, width]
    cls = g.op("Expand", [g.param("cls_token", 1, 1, width, scale=0.5),
                          g.op("Concat", [g.dim(tokens, 0), g.const([1, width], np.int64)], axis=0)])
    h = g.op("Concat", [cls, tokens], axis=1)
    # interpolate_pos_encoding: the patch embeddings as an image, Resize'd to the grid
    position = g.rng.standard_normal((1, 1 + grid * grid, width)).astype(np.float32) * 0.3
    class_position = g.const(position[:, :1], tag="class_pos_embed")
    grid_image = g.const(position[0, 1:].reshape(grid, grid, width).transpose(2, 0, 1)[None], tag="patch_pos_embed")
    sizes = g.op("Concat", [g.const([1, width], np.int64), rows, cols], axis=0)
    resized = g.op("Resize", [grid_image, g.const([], tag="roi"), g.const([], tag="scales"), sizes], mode="cubic",
                   coordinate_transformation_mode="pytorch_half_pixel", cubic_coeff_a=-0.75, nearest_mode="floor")
    patch_position = g.op("Reshape", [g.op("Transpose", [resized], perm=[0, 2, 3, 1]),
                                      g.const([1, -1, width], np.int64)])
    h = g.op("Add", [h, g.op("Concat", [class_position, patch_position], axis=1)])
    for _ in range(layers):
        x = g.layer_norm(h, width, opset, epsilon=1e-6)
        q, k, v = (g.linear(x, width, width) for _ in range(3))
        h = g.op("Add", [g.linear(g.attention(q, k, v, heads, width, None), width, width), h])
        x = g.layer_norm(h, width, opset, epsilon=1e-6)
        h = g.op("Add", [g.linear(g.gelu_erf(g.linear(x, width, 4 * width), opset), 4 * width, width), h])
    first = g.op("Gather", [g.layer_norm(h, width, opset, epsilon=1e-6), g.const(0, np.int64)], axis=1)
    g.linear(first, width, classes, "logits")
    return g.model("vit", [helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT,
                                                         ["batch", 3, "height", "width"])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", classes])], opset)


def bert_for_optimizer(hidden=16, heads=2, vocab=40, max_positions=32, layers=1, scale=0.3):
    """A small BERT as PyTorch's exporter writes it, for ONNX Runtime's optimizer to
    fuse: word, position (the exporter's Shape, Gather, Unsqueeze, Slice path) and
    segment embeddings added and layer-normalized; then per layer self-attention
    with the mask as (1 - mask) * -10000, an output projection, a residual
    LayerNormalization, and a feed-forward block with an Erf GELU and a residual
    LayerNormalization. Inputs input_ids, token_type_ids, attention_mask (int64
    [batch, seq]); weights normal with standard deviation `scale` (layer norms' 1).
    Returns the ModelProto; ort_optimize() fuses it."""
    rng = np.random.default_rng(hidden + layers)
    inits, nodes = [], []

    def weight(name, shape, std=scale):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * std).astype(np.float32), name))
        return name

    def const(name, value, dtype=np.int64):
        inits.append(numpy_helper.from_array(np.array(value, dtype), name))
        return name

    def node(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def layer_norm(x, name):
        return node("LayerNormalization", [x, weight(name + "_g", (hidden,), 1.0), weight(name + "_b", (hidden,))],
                    name, axis=-1, epsilon=1e-12)

    const("zero", [0])
    const("one_i", [1])
    const("one", 1, np.int64)
    const("positions", [list(range(max_positions))])
    word = node("Gather", [weight("word_embeddings", (vocab, hidden)), "input_ids"], "word")
    segment = node("Gather", [weight("token_type_embeddings", (2, hidden)), "token_type_ids"], "segment")
    shape = node("Shape", ["input_ids"], "ids_shape")
    seq = node("Gather", [shape, "one"], "seq_len", axis=0)
    seq1 = node("Unsqueeze", [seq, "zero"], "seq_len_1")
    position_ids = node("Slice", ["positions", "zero", seq1, "one_i", "one_i"], "position_ids")
    position = node("Gather", [weight("position_embeddings", (max_positions, hidden)), position_ids], "position")
    x = layer_norm(node("Add", [node("Add", [word, segment], "word_segment"), position], "embedding_sum"), "emb_ln")
    # the mask: (1 - float(mask[:, None, None, :])) * -10000
    mask = node("Unsqueeze", [node("Unsqueeze", ["attention_mask", "one_i"], "mask_1"), const("two", [2])], "mask_2")
    inits.append(numpy_helper.from_array(np.array(1.0, np.float32), "one_f"))
    inits.append(numpy_helper.from_array(np.array(-10000.0, np.float32), "minus"))
    mask_f = node("Cast", [mask], "mask_f", to=TensorProto.FLOAT)
    mask = node("Mul", [node("Sub", ["one_f", mask_f], "mask_inv"), "minus"], "mask_add")
    size = hidden // heads
    const("split_shape", [0, 0, heads, size])
    const("merge_shape", [0, 0, hidden])
    inits.append(numpy_helper.from_array(np.array(np.sqrt(size), np.float32), "sqrt_d"))
    for i in range(layers):
        p = f"l{i}_"

        def project(name, source, p=p):
            return node("Add", [node("MatMul", [source, weight(p + name + "_w", (hidden, hidden))], p + name + "_mm"),
                                weight(p + name + "_bias", (hidden,))], p + name)

        def heads_of(name, perm, p=p):
            return node("Transpose", [node("Reshape", [project(name, x), "split_shape"], p + name + "_r")],
                        p + name + "_t", perm=perm)

        q, k, v = heads_of("q", [0, 2, 1, 3]), heads_of("k", [0, 2, 3, 1]), heads_of("v", [0, 2, 1, 3])
        scores = node("Div", [node("MatMul", [q, k], p + "qk"), "sqrt_d"], p + "scaled")
        probs = node("Softmax", [node("Add", [scores, mask], p + "masked")], p + "probs", axis=-1)
        context = node("Transpose", [node("MatMul", [probs, v], p + "context")], p + "context_t", perm=[0, 2, 1, 3])
        context = node("Reshape", [context, "merge_shape"], p + "context_r")
        attended = node("Add", [project("o", context), x], p + "attention_residual")
        x = layer_norm(attended, p + "attention_ln")
        inner = project("ff1", x)  # hidden -> hidden, then GELU with Erf
        inits.append(numpy_helper.from_array(np.array(np.sqrt(2.0), np.float32), p + "sqrt2"))
        inits.append(numpy_helper.from_array(np.array(0.5, np.float32), p + "half"))
        erf = node("Erf", [node("Div", [inner, p + "sqrt2"], p + "ff_d")], p + "ff_erf")
        gelu = node("Mul", [node("Mul", [inner, node("Add", [erf, "one_f"], p + "ff_e1")], p + "ff_ae"), p + "half"],
                    p + "gelu")
        x = layer_norm(node("Add", [project("ff2", gelu), x], p + "ff_residual"), p + "ff_ln")
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
           for n in ("input_ids", "token_type_ids", "attention_mask")]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", hidden])
    graph = helper.make_graph(nodes, "bert", ids, [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def ort_optimize(source, target, num_heads, hidden_size):
    """The model at path `source` through ONNX Runtime's transformer optimizer
    (`onnxruntime.transformers.optimizer`, model type bert, opt_level 0, CPU), saved at
    `target`; returns the (domain, op_type) of its nodes, in order. The optimizer's
    symbolic shape inference needs sympy, which the test venv may lack: shape inference
    is off, and its cast removal, which calls it unconditionally, is skipped while it
    runs."""
    import sys

    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    classes = {id(m.FusionUtils): m.FusionUtils for m in list(sys.modules.values()) if hasattr(m, "FusionUtils")}
    saved = [(c, c.__dict__["remove_useless_cast_nodes"]) for c in classes.values()
             if "remove_useless_cast_nodes" in c.__dict__]
    options = FusionOptions("bert")
    options.enable_shape_inference = False
    try:
        for c, _ in saved:
            c.remove_useless_cast_nodes = lambda self: None
        optimizer.optimize_model(source, model_type="bert", num_heads=num_heads, hidden_size=hidden_size, opt_level=0,
                                 use_gpu=False, optimization_options=options).save_model_to_file(target)
    finally:
        for c, method in saved:
            c.remove_useless_cast_nodes = method
    return [(n.domain, n.op_type) for n in onnx.load(target).graph.node]


def text_feed(input_names, batch, length, vocab=100, seed=0, padded=True):
    """Ids and mask (int64) as a tokenizer pads a batch: row i of a padded batch has
    its last i * length // (batch + 1) positions masked (zeros), the first row none;
    token_type_ids (where the model has them) 0 for the first half, 1 after."""
    rng = np.random.default_rng(seed * 1000 + batch * 100 + length)
    mask = np.ones((batch, length), np.int64)
    if padded:
        for row in range(1, batch):
            mask[row, length - row * length // (batch + 1):] = 0
    feed = {"input_ids": rng.integers(0, vocab, (batch, length), dtype=np.int64) * mask, "attention_mask": mask}
    if "token_type_ids" in input_names:
        feed["token_type_ids"] = (np.arange(length)[None] >= length // 2).astype(np.int64).repeat(batch, 0)
    return feed


def image_feed(batch, height, width, seed=0):
    rng = np.random.default_rng(seed * 1000 + batch * 100 + height + width)
    return {"pixel_values": rng.standard_normal((batch, 3, height, width)).astype(np.float32)}
