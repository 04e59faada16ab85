"""Fused variants of the sequence set's BERT and GPT-2-style decoder, in the
com.microsoft operator forms ONNX Runtime's transformer optimizer writes
(EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu,
FastGelu), built with onnx.helper from the torch module's own weights.

gen_models.py builds the torch module exactly as for the unfused model (same
seed, same weights, same inputs), so torch's output stays the reference: the
fused graph must compute what the module computes, operator for operator.

FUSED_MODELS: name -> (unfused base in SEQUENCE_MODELS, build(module) ->
onnx.ModelProto).
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
MS_DOMAIN = "com.microsoft"


class GraphBuilder:
    """Collects nodes and initializers; names every intermediate uniquely."""

    def __init__(self):
        self.nodes, self.initializers, self.count = [], [], 0

    def constant(self, name, array):
        # from_array writes C order whatever the strides (np.ascontiguousarray would make a scalar 1-D).
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, name, tensor):
        """A float32 initializer from a torch parameter (or any array)."""
        array = tensor.detach().numpy() if hasattr(tensor, "detach") else tensor
        return self.constant(name, np.asarray(array, dtype=np.float32))

    def node(self, op, inputs, outputs=1, domain="", name=None, **attrs):
        self.count += 1
        name = name or f"{op}_{self.count}"
        if isinstance(outputs, int):
            outputs = [f"{name}_out{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outputs, name=name, domain=domain, **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def model(self, graph_name, inputs, outputs):
        graph = helper.make_graph(self.nodes, graph_name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                        helper.make_opsetid(MS_DOMAIN, 1)],
                                  producer_name="bench/compare_ort/fused_models.py")
        onnx.checker.check_model(model)
        return model


def linear_t(linear):
    """nn.Linear's weight as MatMul's right operand ([in, out])."""
    return linear.weight.detach().numpy().T


def token_input(name):
    return helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])


def bert_fused(model):
    """Bert (sequence_models.py) as ONNX Runtime's BERT fusion leaves it:
    EmbedLayerNormalization (embeddings + LayerNorm, mask -> per-row count
    of ones: the padding mask is right-side), per layer Attention with the
    merged Q/K/V projection and that mask index, SkipLayerNormalization for
    both residual LayerNorms (the output projection's bias as its bias),
    BiasGelu (exact erf) for the FFN; the pooler is tanh over token 0."""
    g = GraphBuilder()
    hidden = model.words.weight.shape[1]
    ids, mask, segments = (g.node("Cast", [n], to=TensorProto.INT32, name=f"{n}_int32")
                           for n in ("input_ids", "attention_mask", "token_type_ids"))
    x, mask_index = g.node("EmbedLayerNormalization",
                           [ids, segments, g.weight("word_embedding", model.words.weight),
                            g.weight("position_embedding", model.positions.weight),
                            g.weight("segment_embedding", model.segments.weight),
                            g.weight("embedding_gamma", model.norm.weight),
                            g.weight("embedding_beta", model.norm.bias), mask],
                           outputs=2, domain=MS_DOMAIN, name="embedding", epsilon=model.norm.eps)
    for i, layer in enumerate(model.layers):
        p = f"layer{i}"
        qkv_w = np.concatenate([linear_t(layer.query), linear_t(layer.key), linear_t(layer.value)], axis=1)
        qkv_b = np.concatenate([layer.query.bias.detach().numpy(), layer.key.bias.detach().numpy(),
                                layer.value.bias.detach().numpy()])
        context = g.node("Attention", [x, g.weight(f"{p}.qkv_weight", qkv_w), g.weight(f"{p}.qkv_bias", qkv_b),
                                       mask_index],
                         domain=MS_DOMAIN, name=f"{p}.attention", num_heads=layer.heads)
        projected = g.node("MatMul", [context, g.weight(f"{p}.attention_out_weight", linear_t(layer.attention_out))],
                           name=f"{p}.attention_out")
        x = g.node("SkipLayerNormalization",
                   [projected, x, g.weight(f"{p}.attention_norm_gamma", layer.attention_norm.weight),
                    g.weight(f"{p}.attention_norm_beta", layer.attention_norm.bias),
                    g.weight(f"{p}.attention_out_bias", layer.attention_out.bias)],
                   domain=MS_DOMAIN, name=f"{p}.attention_norm", epsilon=layer.attention_norm.eps)
        h = g.node("MatMul", [x, g.weight(f"{p}.intermediate_weight", linear_t(layer.intermediate))],
                   name=f"{p}.intermediate")
        h = g.node("BiasGelu", [h, g.weight(f"{p}.intermediate_bias", layer.intermediate.bias)],
                   domain=MS_DOMAIN, name=f"{p}.gelu")
        h = g.node("MatMul", [h, g.weight(f"{p}.output_weight", linear_t(layer.output))], name=f"{p}.output")
        last = i == len(model.layers) - 1
        x = g.node("SkipLayerNormalization",
                   [h, x, g.weight(f"{p}.output_norm_gamma", layer.output_norm.weight),
                    g.weight(f"{p}.output_norm_beta", layer.output_norm.bias),
                    g.weight(f"{p}.output_bias", layer.output.bias)],
                   outputs=["last_hidden_state"] if last else 1,
                   domain=MS_DOMAIN, name=f"{p}.output_norm", epsilon=layer.output_norm.eps)
    first = g.node("Gather", [x, g.constant("token0", np.array(0, dtype=np.int64))], name="pooler.token0", axis=1)
    pooled = g.node("MatMul", [first, g.weight("pooler_weight", linear_t(model.pooler))], name="pooler.matmul")
    pooled = g.node("Add", [pooled, g.weight("pooler_bias", model.pooler.bias)], name="pooler.add")
    g.node("Tanh", [pooled], outputs=["pooled"], name="pooler.tanh")
    return g.model("bert_fused",
                   [token_input(n) for n in ("input_ids", "attention_mask", "token_type_ids")],
                   [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                                  ["batch", "sequence", hidden]),
                    helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])])


def gpt2_fused(model):
    """Gpt2 (sequence_models.py) as ONNX Runtime's GPT-2 fusion leaves it:
    word + position embeddings (the position table sliced to the dynamic
    sequence length), per block LayerNormalization -> Attention
    (unidirectional: the causal mask) -> projection + residual ->
    LayerNormalization -> FastGelu (tanh GELU with the fc bias) ->
    projection + residual; the final LayerNorm and the LM head tied to the
    word embeddings (stored transposed, as torch's exporter stores it)."""
    g = GraphBuilder()
    vocab, hidden = model.words.weight.shape
    words = g.node("Gather", [g.weight("word_embedding", model.words.weight), "input_ids"], name="words", axis=0)
    seq = g.node("Shape", ["input_ids"], name="sequence_length", start=1, end=2)
    positions = g.node("Slice", [g.weight("position_embedding", model.positions.weight),
                                 g.constant("zero", np.array([0], dtype=np.int64)), seq,
                                 g.constant("axis0", np.array([0], dtype=np.int64))], name="positions")
    x = g.node("Add", [words, positions], name="embedding")

    def layer_norm(x, norm, name):
        return g.node("LayerNormalization",
                      [x, g.weight(f"{name}.gamma", norm.weight), g.weight(f"{name}.beta", norm.bias)],
                      name=name, axis=-1, epsilon=norm.eps)

    for i, block in enumerate(model.blocks):
        p = f"block{i}"
        h = layer_norm(x, block.norm1, f"{p}.norm1")
        h = g.node("Attention", [h, g.weight(f"{p}.qkv_weight", linear_t(block.qkv)),
                                 g.weight(f"{p}.qkv_bias", block.qkv.bias)],
                   domain=MS_DOMAIN, name=f"{p}.attention", num_heads=block.heads, unidirectional=1)
        h = g.node("MatMul", [h, g.weight(f"{p}.proj_weight", linear_t(block.proj))], name=f"{p}.proj")
        h = g.node("Add", [h, g.weight(f"{p}.proj_bias", block.proj.bias)], name=f"{p}.proj_bias_add")
        x = g.node("Add", [x, h], name=f"{p}.attention_residual")
        h = layer_norm(x, block.norm2, f"{p}.norm2")
        h = g.node("MatMul", [h, g.weight(f"{p}.fc_weight", linear_t(block.fc))], name=f"{p}.fc")
        h = g.node("FastGelu", [h, g.weight(f"{p}.fc_bias", block.fc.bias)], domain=MS_DOMAIN, name=f"{p}.gelu")
        h = g.node("MatMul", [h, g.weight(f"{p}.fc_proj_weight", linear_t(block.fc_proj))], name=f"{p}.fc_proj")
        h = g.node("Add", [h, g.weight(f"{p}.fc_proj_bias", block.fc_proj.bias)], name=f"{p}.fc_proj_bias_add")
        x = g.node("Add", [x, h], name=f"{p}.ffn_residual")
    x = layer_norm(x, model.norm, "norm")
    g.node("MatMul", [x, g.weight("lm_head_weight", model.words.weight.detach().numpy().T)], outputs=["logits"],
           name="lm_head")
    return g.model("gpt2_fused", [token_input("input_ids")],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", vocab])])


FUSED_MODELS = {
    "bert_base_fused": ("bert_base", bert_fused),
    "gpt2_6layer_fused": ("gpt2_6layer", gpt2_fused),
}
