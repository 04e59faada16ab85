"""The transformer, recurrent and small-model set of the onyx / ONNX Runtime
comparison (gen_models.py exports it beside the CNNs).

Written out layer by layer the way Hugging Face's and torchvision's modules
are, so that torch's exporter emits the graphs users bring: BERT (token,
position and segment embeddings, additive padding mask, exact-erf GELU, post
LayerNorm), a GPT-2-style decoder (pre LayerNorm, causal mask, tanh GELU, a
language-model head tied to the embeddings), ViT-B/16 (torchvision's, with
nn.MultiheadAttention), LSTM and GRU sequence classifiers and an MLP.

Each entry: build() -> module, inputs(batch, small, generator) -> list of
(name, tensor, dims) where dims names the free dimensions "batch" and, for
token inputs, "sequence" (exported dynamic, as Hugging Face exports them;
the benchmark fixes it to the example's length).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query, self.key, self.value = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.attention_out = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, ffn)
        self.output = nn.Linear(ffn, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
        context = torch.matmul(scores.softmax(dim=-1), v).permute(0, 2, 1, 3).contiguous()
        context = context.view(x.shape[0], x.shape[1], -1)
        x = self.attention_norm(self.attention_out(context) + x)
        return self.output_norm(self.output(F.gelu(self.intermediate(x))) + x)


class Bert(nn.Module):
    def __init__(self, layers, hidden=768, heads=12, ffn=3072, vocab=30522, positions=512):
        super().__init__()
        self.words = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(positions, hidden)
        self.segments = nn.Embedding(2, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, ffn) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask, token_type_ids):
        seq = input_ids.shape[1]
        position_ids = torch.arange(seq, device=input_ids.device).unsqueeze(0)
        x = self.norm(self.words(input_ids) + self.positions(position_ids) + self.segments(token_type_ids))
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x, torch.tanh(self.pooler(x[:, 0]))


class Gpt2Block(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.norm1, self.norm2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.fc_proj = nn.Linear(4 * hidden, hidden)

    def forward(self, x, causal):
        b, s, h = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = torch.where(causal, scores, torch.tensor(torch.finfo(scores.dtype).min))
        context = torch.matmul(scores.softmax(dim=-1), v).transpose(1, 2).contiguous().view(b, s, h)
        x = x + self.proj(context)
        return x + self.fc_proj(F.gelu(self.fc(self.norm2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    def __init__(self, layers, hidden=768, heads=12, vocab=50257, positions=1024):
        super().__init__()
        self.words = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(positions, hidden)
        self.blocks = nn.ModuleList(Gpt2Block(hidden, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(hidden)
        self.register_buffer("bias", torch.tril(torch.ones(positions, positions, dtype=torch.bool)))

    def forward(self, input_ids):
        seq = input_ids.shape[1]
        positions = torch.arange(seq, device=input_ids.device).unsqueeze(0)
        x = self.words(input_ids) + self.positions(positions)
        causal = self.bias[None, None, :seq, :seq]
        for block in self.blocks:
            x = block(x, causal)
        return torch.matmul(self.norm(x), self.words.weight.t())


class RecurrentClassifier(nn.Module):
    def __init__(self, cell, features=80, hidden=256, layers=2, classes=32):
        super().__init__()
        self.rnn = cell(features, hidden, num_layers=layers, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out).log_softmax(dim=-1)


def mlp():
    return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))


def token_inputs(vocab, with_mask):
    def inputs(batch, small, generator):
        seq = 32 if small else 128
        ids = torch.randint(0, vocab, (batch, seq), generator=generator)
        result = [("input_ids", ids, ["batch", "sequence"])]
        if with_mask:
            mask = torch.ones(batch, seq, dtype=torch.int64)
            mask[0, seq * 3 // 4:] = 0  # one padded sequence: the mask must matter
            result.append(("attention_mask", mask, ["batch", "sequence"]))
            result.append(("token_type_ids", (torch.arange(seq) >= seq // 2).long().expand(batch, seq).contiguous(),
                           ["batch", "sequence"]))
        return result
    return inputs


def float_inputs(*shape_full, small_shape=None):
    def inputs(batch, small, generator):
        shape = small_shape if small and small_shape else shape_full
        return [("input", torch.randn(batch, *shape, generator=generator), ["batch"] + list(shape))]
    return inputs


def vit(small=False):
    import torchvision.models as tv
    if small:
        return tv.VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=2, hidden_dim=128,
                                    mlp_dim=256)
    return tv.vit_b_16()


# name -> (build, inputs, output names, small build)
SEQUENCE_MODELS = {
    "bert_base": (lambda: Bert(12), token_inputs(30522, True), ["last_hidden_state", "pooled"],
                  lambda: Bert(2, hidden=128, heads=2, ffn=512)),
    "bert_4layer": (lambda: Bert(4, hidden=512, heads=8, ffn=2048), token_inputs(30522, True),
                    ["last_hidden_state", "pooled"], lambda: Bert(2, hidden=128, heads=2, ffn=512)),
    "gpt2_6layer": (lambda: Gpt2(6), token_inputs(50257, False), ["logits"], lambda: Gpt2(2, hidden=128, heads=2)),
    "vit_b16": (vit, float_inputs(3, 224, 224, small_shape=(3, 64, 64)), ["output"], lambda: vit(small=True)),
    "lstm": (lambda: RecurrentClassifier(nn.LSTM), float_inputs(100, 80, small_shape=(20, 80)), ["output"], None),
    "gru": (lambda: RecurrentClassifier(nn.GRU), float_inputs(100, 80, small_shape=(20, 80)), ["output"], None),
    "mlp": (mlp, float_inputs(784), ["output"], None),
}
