"""Writes a trained LlamaLM in the Hugging Face layout and checks it with
transformers: config.json, model.safetensors (bf16), tokenizer.json,
tokenizer_config.json (ChatML chat template), generation_config.json."""
import json
import os

import torch

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]  # ids 0, 1, 2
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def hf_config(cfg):
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "vocab_size": cfg.vocab_size, "hidden_size": cfg.hidden_size,
        "intermediate_size": cfg.intermediate_size, "num_hidden_layers": cfg.num_hidden_layers,
        "num_attention_heads": cfg.num_attention_heads,
        "num_key_value_heads": cfg.num_key_value_heads, "head_dim": cfg.head_dim,
        "max_position_embeddings": cfg.max_position_embeddings, "rms_norm_eps": cfg.rms_norm_eps,
        "rope_theta": cfg.rope_theta, "hidden_act": "silu",
        "rope_parameters": {"rope_type": "default", "rope_theta": cfg.rope_theta},
        "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False,
        "tie_word_embeddings": True, "initializer_range": 0.02, "use_cache": True,
        "bos_token_id": 0, "eos_token_id": [0, 2], "pad_token_id": 0, "torch_dtype": "bfloat16",
    }


def tokenizer_config(max_len):
    decoder = {str(i): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                        "single_word": False, "special": True} for i, t in enumerate(SPECIALS)}
    return {"added_tokens_decoder": decoder, "bos_token": "<|endoftext|>",
            "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "unk_token": None,
            "add_bos_token": False, "add_eos_token": False, "clean_up_tokenization_spaces": False,
            "model_max_length": max_len, "tokenizer_class": "PreTrainedTokenizerFast",
            "chat_template": CHAT_TEMPLATE}


def bf16_state(model):
    """The weights as saved: bf16, contiguous, tied output left out."""
    return {k: v.detach().to(torch.bfloat16).contiguous().cpu()
            for k, v in model.state_dict().items()}


def save_folder(model, tok, folder):
    from safetensors.torch import save_file
    os.makedirs(folder, exist_ok=True)
    cfg = model.cfg
    save_file(bf16_state(model), os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    tok.save(os.path.join(folder, "tokenizer.json"))
    dump = lambda name, obj: json.dump(obj, open(os.path.join(folder, name), "w"), indent=2)
    dump("config.json", hf_config(cfg))
    dump("tokenizer_config.json", tokenizer_config(cfg.max_position_embeddings))
    dump("special_tokens_map.json", {"bos_token": "<|endoftext|>", "eos_token": "<|im_end|>",
                                     "pad_token": "<|endoftext|>"})
    dump("generation_config.json", {"bos_token_id": 0, "eos_token_id": [0, 2], "pad_token_id": 0,
                                    "do_sample": True, "temperature": 0.8, "top_p": 0.95})


def load_reference_copy(model_cls, cfg, folder, device):
    """A fresh f32 LlamaLM holding the saved (bf16-rounded) weights."""
    from safetensors.torch import load_file
    ref = model_cls(cfg).to(device)
    ref.load_state_dict({k: v.float() for k, v in load_file(os.path.join(folder, "model.safetensors")).items()})
    return ref.eval()


@torch.no_grad()
def check_with_transformers(ref, folder, ids, device):
    """Loads the folder with LlamaForCausalLM (f32, eager attention) and compares its
    logits with `ref` on `ids` [batch, seq]; raises if they differ beyond f32 noise."""
    from transformers import AutoTokenizer, LlamaForCausalLM
    hf = LlamaForCausalLM.from_pretrained(folder, dtype=torch.float32,
                                          attn_implementation="eager").to(device).eval()
    a = hf(ids).logits.float()
    b = ref(ids).float()
    diff = (a - b).abs().max().item()
    scale = b.abs().max().item()
    tok = AutoTokenizer.from_pretrained(folder)
    chat = tok.apply_chat_template([{"role": "user", "content": "Hi"}], tokenize=False,
                                   add_generation_prompt=True)
    report = {"max_abs_diff": diff, "max_abs_logit": scale, "relative": diff / scale,
              "chat_template_render": chat, "hf_tokens_for_hello": tok("Hello world")["input_ids"]}
    assert diff <= 1e-4 * scale + 1e-5, f"transformers logits differ: {report}"
    return hf, report


@torch.no_grad()
def make_fixture(hf, prompt_ids, n_steps, out_dir, device):
    """tests' reference files: prompt_logits [n_prompt, vocab] and step_logits
    [n_steps, vocab] (f32, from transformers), greedy step_ids."""
    from safetensors.torch import save_file
    os.makedirs(out_dir, exist_ok=True)
    ids = torch.tensor([prompt_ids], device=device)
    prompt_logits = hf(ids).logits[0].float()
    steps, step_logits, cur = [], [], ids
    for _ in range(n_steps):
        row = hf(cur).logits[0, -1].float()
        step_logits.append(row)
        nxt = int(row.argmax())
        steps.append(nxt)
        cur = torch.cat([cur, torch.tensor([[nxt]], device=device)], dim=1)
    save_file({"prompt_logits": prompt_logits.cpu().contiguous(),
               "step_logits": torch.stack(step_logits).cpu().contiguous()},
              os.path.join(out_dir, "reference.safetensors"))
    json.dump({"family": "llama", "weights": "bf16", "note": "the default model, transformers f32",
               "prompt_ids": prompt_ids, "step_ids": steps, "n_steps": n_steps},
              open(os.path.join(out_dir, "reference.json"), "w"), indent=1)
    return steps
