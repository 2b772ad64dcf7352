"""A Llama-architecture decoder in plain PyTorch, laid out so that its state_dict
names are those of transformers' LlamaForCausalLM (tied embeddings, so no
lm_head.weight): RMSNorm, rotary embeddings in the half-split layout, grouped-query
attention, SwiGLU feed-forward."""
import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelConfig:
    vocab_size: int = 8192
    hidden_size: int = 384
    intermediate_size: int = 768
    num_hidden_layers: int = 8
    num_attention_heads: int = 6
    num_key_value_heads: int = 2
    max_position_embeddings: int = 1024
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-5
    dropout: float = 0.0

    @property
    def head_dim(self):
        return self.hidden_size // self.num_attention_heads

    def as_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):  # computed in f32 and cast back, as HF's LlamaRMSNorm
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def rope_tables(cfg, n_positions, device):
    """cos, sin: [n_positions, head_dim], the frequencies repeated for both halves."""
    hd = cfg.head_dim
    inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd))
    freqs = torch.outer(torch.arange(n_positions, device=device, dtype=torch.float32), inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, hd = cfg.hidden_size, cfg.head_dim
        self.n_heads, self.n_kv, self.hd = cfg.num_attention_heads, cfg.num_key_value_heads, hd
        self.q_proj = nn.Linear(d, self.n_heads * hd, bias=False)
        self.k_proj = nn.Linear(d, self.n_kv * hd, bias=False)
        self.v_proj = nn.Linear(d, self.n_kv * hd, bias=False)
        self.o_proj = nn.Linear(self.n_heads * hd, d, bias=False)

    def forward(self, x, cos, sin):  # x: [batch, seq, hidden]
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.n_heads, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.n_kv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.n_kv, self.hd).transpose(1, 2)
        cos, sin = cos[:t].to(q.dtype), sin[:t].to(q.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # Query head h reads key/value head h // (n_heads / n_kv), as HF's repeat_kv.
        rep = self.n_heads // self.n_kv
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, -1))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, f = cfg.hidden_size, cfg.intermediate_size
        self.gate_proj = nn.Linear(d, f, bias=False)
        self.up_proj = nn.Linear(d, f, bias=False)
        self.down_proj = nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, cos, sin):
        x = x + self.drop(self.self_attn(self.input_layernorm(x), cos, sin))
        return x + self.drop(self.mlp(self.post_attention_layernorm(x)))


class Backbone(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class LlamaLM(nn.Module):
    """state_dict keys: model.embed_tokens.weight, model.layers.N...., model.norm.weight."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.model = Backbone(cfg)
        cos, sin = rope_tables(cfg, cfg.max_position_embeddings, None)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        self.reset_parameters()

    def reset_parameters(self):
        std = 0.02
        for name, p in self.named_parameters():
            if name.endswith("norm.weight") or "layernorm" in name:
                nn.init.ones_(p)
            elif name.endswith(("o_proj.weight", "down_proj.weight")):
                nn.init.normal_(p, std=std / math.sqrt(2 * self.cfg.num_hidden_layers))
            else:
                nn.init.normal_(p, std=std)

    def forward(self, ids):
        """ids [batch, seq] -> logits [batch, seq, vocab]."""
        x = self.model.embed_tokens(ids)
        for layer in self.model.layers:
            x = layer(x, self.rope_cos, self.rope_sin)
        x = self.model.norm(x)
        return F.linear(x, self.model.embed_tokens.weight)  # tied output projection

    def loss(self, ids, targets, reduction="mean"):
        """Next-token cross entropy (f32) of ids [batch, seq] against targets [batch, seq]."""
        logits = self(ids)
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.reshape(-1),
                               reduction=reduction)


def count_parameters(model):
    return sum(p.numel() for p in model.parameters())
