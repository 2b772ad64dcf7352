#!/usr/bin/env python3
"""Makes the model-family parity fixtures under tests/fixtures/models/.

For each family: a tiny random-weight model whose config exercises the family's
quirks, saved with save_pretrained in f32 and bf16, and reference logits
computed in float32 with eager attention for a fixed prompt (longer than every
sliding window) at every prompt position, plus 16 greedy steps.

Needs torch and transformers (run where they are installed):
    python3 tools/make_fixtures.py --out DIR [--families llama,gemma2]
Writes WORK/<family>/{f32,bf16}/ (WORK defaults to DIR/work) and
DIR/fixtures.tar.gz holding them all, with DIR/make_fixtures.log.

Files per variant:
  config.json, generation_config.json, *.safetensors   the model (save_pretrained)
  reference.safetensors  prompt_logits [n_prompt, vocab] f32, step_logits [16, vocab] f32
  reference.json         prompt_ids, step_ids, tolerances' inputs and debugging notes
step_logits[s] are the logits after feeding prompt + step_ids[:s]; step_ids[s] is
their argmax (so step_logits[0] equals the last row of prompt_logits).
"""
import argparse
import json
import math
import os
import sys
import tarfile
import traceback

VOCAB = 256
N_PROMPT = 72
N_STEPS = 16
SEED = 1234


def base(**kw):
    d = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
             rms_norm_eps=1e-5, bos_token_id=1, eos_token_id=2, pad_token_id=0,
             initializer_range=0.02)
    d.update(kw)
    return d


# Each family: (config class name, config kwargs in the rope_parameters form,
# the same rope settings in the legacy form, a note on what it exercises).
def family_specs():
    return {
        "llama": ("LlamaConfig",
                  base(tie_word_embeddings=False,
                       rope_parameters=dict(rope_type="llama3", rope_theta=10000.0, factor=8.0,
                                            low_freq_factor=1.0, high_freq_factor=4.0,
                                            original_max_position_embeddings=32)),
                  "llama3 rope scaling (all three bands), GQA 4:2, untied, sharded save"),
        "mistral": ("MistralConfig",
                    base(num_hidden_layers=3, tie_word_embeddings=True, sliding_window=16,
                         head_dim=16, rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
                    "sliding window 16 on every layer, tied embeddings"),
        "qwen2": ("Qwen2Config",
                  base(num_key_value_heads=1, tie_word_embeddings=True, use_sliding_window=True,
                       sliding_window=24, max_window_layers=2,
                       rope_parameters=dict(rope_type="yarn", rope_theta=10000.0, factor=4.0,
                                            original_max_position_embeddings=32)),
                  "qkv bias, yarn rope, MQA, sliding window 24 on layers >= 2, tied"),
        "qwen3": ("Qwen3Config",
                  base(head_dim=32, num_key_value_heads=2, tie_word_embeddings=False,
                       rope_parameters=dict(rope_type="linear", rope_theta=10000.0, factor=2.0)),
                  "q/k RMSNorm per head, head_dim 32 != hidden/heads, linear rope, untied"),
        "gemma2": ("Gemma2Config",
                   base(head_dim=16, query_pre_attn_scalar=24, attn_logit_softcapping=5.0,
                        final_logit_softcapping=3.0, sliding_window=16,
                        hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
                        rope_parameters=dict(rope_type="default", rope_theta=10000.0)),
                   "softcaps, sandwich norms, alternating sliding 16, query_pre_attn_scalar 24"),
        "gemma3_text": ("Gemma3TextConfig",
                        base(num_hidden_layers=6, intermediate_size=96, head_dim=16,
                             query_pre_attn_scalar=24, sliding_window=16,
                             layer_types=["sliding_attention"] * 5 + ["full_attention"],
                             hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
                             final_logit_softcapping=None, attn_logit_softcapping=None,
                             rope_parameters={
                                 "full_attention": dict(rope_type="linear", rope_theta=10000.0,
                                                        factor=2.0),
                                 "sliding_attention": dict(rope_type="default", rope_theta=100.0)}),
                        "5:1 sliding/global, q/k norm, local base 100 vs global 10000 linear x2"),
        "phi3": ("Phi3Config",
                 base(tie_word_embeddings=False, original_max_position_embeddings=32,
                      rope_parameters=dict(rope_type="longrope", rope_theta=10000.0,
                                           partial_rotary_factor=0.5,
                                           original_max_position_embeddings=32,
                                           short_factor=[1.0, 1.25, 1.5, 2.0],
                                           long_factor=[1.0, 2.0, 4.0, 8.0])),
                 "fused qkv and gate_up, longrope (long factors: prompt > 32), partial rotary 0.5"),
    }


def legacy_rope(kw):
    """The same settings as rope_theta + rope_scaling (+ rope_local_base_freq)."""
    kw = dict(kw)
    rp = kw.pop("rope_parameters")
    if "full_attention" in rp:
        full, local = rp["full_attention"], rp["sliding_attention"]
        kw["rope_theta"] = full["rope_theta"]
        kw["rope_local_base_freq"] = local["rope_theta"]
        rp = full
    else:
        kw["rope_theta"] = rp["rope_theta"]
    if "partial_rotary_factor" in rp:
        kw["partial_rotary_factor"] = rp["partial_rotary_factor"]
    scaling = {k: v for k, v in rp.items() if k not in ("rope_theta", "partial_rotary_factor")}
    if scaling.get("rope_type") != "default":
        kw["rope_scaling"] = scaling
    return kw


def make_config(transformers, cls_name, kw, log):
    cls = getattr(transformers, cls_name)
    try:
        return cls(**kw)
    except Exception as e:  # an older or newer keyword set: retry in the legacy form
        log(f"  {cls_name}(rope_parameters=...) failed ({e!r}); retrying legacy rope keys")
        return cls(**legacy_rope(kw))


def randomize(torch, model, family, seed):
    """Weights large enough that logits spread and greedy argmax has margins.
    Norm weights are random too (so the Gemma `1 + w` fold is exercised)."""
    g = torch.Generator().manual_seed(seed)
    gemma = family.startswith("gemma")
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                centre = 0.0 if gemma else 1.0
                p.copy_(centre + 0.2 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif "embed" in name or "lm_head" in name:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:
                fan_in = p.shape[-1]
                p.copy_(torch.randn(p.shape, generator=g) * (1.0 / math.sqrt(fan_in)))


def load_f32(transformers, torch, folder):
    auto = transformers.AutoModelForCausalLM
    try:
        m = auto.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager")
    except TypeError:
        m = auto.from_pretrained(folder, torch_dtype=torch.float32, attn_implementation="eager")
    m.eval()
    return m


def rope_notes(model):
    """inv_freq and attention scaling of every rotary module (debugging aid)."""
    notes = {}
    for name, mod in model.named_modules():
        for attr in dir(mod):
            if attr.endswith("inv_freq") and not attr.startswith("_"):
                t = getattr(mod, attr, None)
                if hasattr(t, "tolist"):
                    notes[f"{name}.{attr}"] = [float(x) for x in t.flatten().tolist()]
        if hasattr(mod, "attention_scaling"):
            s = getattr(mod, "attention_scaling")
            notes[f"{name}.attention_scaling"] = s if isinstance(s, (int, float)) else str(s)
    return notes


def reference(torch, model, prompt):
    with torch.no_grad():
        ids = torch.tensor([prompt], dtype=torch.long)
        out = model(ids, output_hidden_states=True, use_cache=False)
        prompt_logits = out.logits[0].float().clone()
        hidden = [h[0].float().clone() for h in out.hidden_states]
        seq = list(prompt)
        step_ids, step_logits = [], []
        for _ in range(N_STEPS):
            lg = model(torch.tensor([seq], dtype=torch.long), use_cache=False).logits[0, -1].float()
            nxt = int(torch.argmax(lg).item())
            step_logits.append(lg.clone())
            step_ids.append(nxt)
            seq.append(nxt)
        margins = []
        for lg in step_logits:
            t = torch.topk(lg, 2).values
            margins.append(float(t[0] - t[1]))
    return prompt_logits, torch.stack(step_logits), step_ids, hidden, margins


def write_variant(mods, family, cfg_kw_note, model, dtype_name, folder, prompt, log):
    torch, transformers, st = mods
    os.makedirs(folder, exist_ok=True)
    if dtype_name == "bf16":
        model = model.to(torch.bfloat16)
    shard = "200KB" if (family == "llama" and dtype_name == "f32") else "50MB"
    model.save_pretrained(folder, max_shard_size=shard)
    ref_model = load_f32(transformers, torch, folder)
    pl, sl, sids, hidden, margins = reference(torch, ref_model, prompt)
    tensors = {"prompt_logits": pl.contiguous(), "step_logits": sl.contiguous()}
    st.save_file(tensors, os.path.join(folder, "reference.safetensors"))
    if dtype_name == "f32":
        hs = {f"hidden_{i}": h.contiguous() for i, h in enumerate(hidden)}
        st.save_file(hs, os.path.join(folder, "hidden_states.safetensors"))
    meta = {
        "family": family, "weights": dtype_name, "note": cfg_kw_note,
        "prompt_ids": prompt, "step_ids": sids, "n_steps": N_STEPS,
        "max_abs_prompt_logit": float(pl.abs().max()),
        "max_abs_step_logit": float(sl.abs().max()),
        "step_top2_margins": margins,
        "compute": "float32, attn_implementation=eager, use_cache=False",
        "torch": torch.__version__, "transformers": transformers.__version__,
        "rope": rope_notes(ref_model),
        "layer_types": getattr(ref_model.config, "layer_types", None),
    }
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(meta, f, indent=1)
    log(f"  {dtype_name}: max|logit| {meta['max_abs_prompt_logit']:.3f}, steps {sids}, "
        f"min margin {min(margins):.4f}")
    return pl


def make_family(mods, family, spec, out, log):
    torch, transformers, _ = mods
    cls_name, kw, note = spec
    cfg = make_config(transformers, cls_name, kw, log)
    try:
        cfg._attn_implementation = "eager"
    except Exception:
        pass
    torch.manual_seed(SEED)
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager")
    model = model.float().eval()
    randomize(torch, model, family, SEED)
    # Gemma checkpoints ship an eos list in generation_config; exercise that path.
    if family == "gemma2" and getattr(model, "generation_config", None) is not None:
        model.generation_config.eos_token_id = [2, 3]
    g = torch.Generator().manual_seed(SEED + 1)
    prompt = [1] + torch.randint(3, VOCAB, (N_PROMPT - 1,), generator=g).tolist()
    n_params = sum(p.numel() for p in model.parameters())
    log(f"{family}: {cls_name}, {n_params} parameters; {note}")
    log("  config: " + json.dumps(cfg.to_dict(), default=str)[:1500])
    with torch.no_grad():
        direct = model(torch.tensor([prompt]), use_cache=False).logits[0].float()
    pl = write_variant(mods, family, note, model, "f32", os.path.join(out, family, "f32"),
                       prompt, log)
    log(f"  f32 reload vs in-memory max |d| {float((pl - direct).abs().max()):.3g}")
    write_variant(mods, family, note, model, "bf16", os.path.join(out, family, "bf16"), prompt, log)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--families", default="")
    ap.add_argument("--work", default="", help="folder for the per-family files (default OUT/work)")
    ap.add_argument("--check", action="store_true", help="print the configs and exit (no torch)")
    args = ap.parse_args()
    specs = family_specs()
    chosen = [f for f in args.families.split(",") if f] or list(specs)
    if args.check:
        for f in chosen:
            print(f, specs[f][0], json.dumps(specs[f][1]), json.dumps(legacy_rope(specs[f][1])))
        return 0
    os.makedirs(args.out, exist_ok=True)
    log_path = os.path.join(args.out, "make_fixtures.log")
    logf = open(log_path, "w")

    def log(msg):
        print(msg, flush=True)
        logf.write(msg + "\n")
        logf.flush()

    import torch
    import transformers
    import safetensors.torch as st
    torch.set_num_threads(min(8, os.cpu_count() or 1))
    log(f"torch {torch.__version__}, transformers {transformers.__version__}")
    failed = []
    work = args.work or os.path.join(args.out, "work")
    for f in chosen:
        try:
            make_family((torch, transformers, st), f, specs[f], work, log)
        except Exception:
            failed.append(f)
            log(f"{f}: FAILED\n" + traceback.format_exc())
    with tarfile.open(os.path.join(args.out, "fixtures.tar.gz"), "w:gz") as tar:
        for f in chosen:
            if os.path.isdir(os.path.join(work, f)):
                tar.add(os.path.join(work, f), arcname=f)
        tar.add(log_path, arcname="make_fixtures.log")
    log(f"done; failed: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
