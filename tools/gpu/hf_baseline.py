"""Baseline for `cairn bench --device cuda`: transformers decode speed on the same shape.

Builds a random-weight Llama-3.1-8B-shaped model in bf16 on the GPU (nothing is
downloaded), generates with a static KV cache, which makes transformers compile the
decode step (torch.compile, CUDA graphs) itself, and prints one line per batch size: `hf_baseline shape=... batch=B decode_tok_s=X`.
Decode tokens/s = generated tokens / (time of a generate call − time of its
prefill), medians of three timed calls after warm-ups.
"""
import argparse
import statistics
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

LLAMA_8B = dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                max_position_embeddings=8192, rope_theta=500000.0, rms_norm_eps=1e-5,
                tie_word_embeddings=False)


def timed(fn):
    torch.cuda.synchronize()
    t = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t


def run(model, batch, prompt, new_tokens):
    ids = torch.randint(0, LLAMA_8B["vocab_size"], (batch, prompt), device="cuda")
    kw = dict(do_sample=False, cache_implementation="static", eos_token_id=None,
              pad_token_id=0)
    gen = lambda n: model.generate(ids, max_new_tokens=n, min_new_tokens=n, **kw)
    for _ in range(2):
        gen(new_tokens)  # warm-up: compiles the decode step and captures graphs
    prefill = statistics.median(timed(lambda: gen(1)) for _ in range(3))
    total = statistics.median(timed(lambda: gen(new_tokens)) for _ in range(3))
    return batch * (new_tokens - 1) / max(total - prefill, 1e-9)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", default="1")
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=128)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = LlamaForCausalLM(LlamaConfig(**LLAMA_8B)).eval()
    print(f"hf_baseline compile_config={model.generation_config.compile_config}", flush=True)
    with torch.inference_mode():
        for b in [int(x) for x in a.batches.split(",")]:
            tps = run(model, b, a.prompt, a.new_tokens)
            print(f"hf_baseline shape=llama-3.1-8b batch={b} decode_tok_s={tps:.1f}", flush=True)


if __name__ == "__main__":
    main()
