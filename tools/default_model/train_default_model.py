#!/usr/bin/env python3
"""Trains cairn's default model: a byte-level BPE tokenizer (tokenizers) and a small
Llama-architecture model (llama_model.py, plain PyTorch) on the corpus made by
make_corpus.sh, then saves it in the Hugging Face layout and checks the saved
folder with transformers.

    train_default_model.py --corpus corpus.tar.xz --out OUT [--steps N] [--keep-best]
        [--best-by text|text+instruct] [--instruct-repeat K] [--smoke]

Writes OUT/model/ (the HF folder), OUT/loss.csv (step, tokens, lr, train loss,
validation losses), OUT/summary.json (sizes, timings, perplexities, the
transformers check, the replay check), OUT/samples.txt and OUT/fixture/ (reference
logits from transformers for tests/models). Needs torch, tokenizers, safetensors
and transformers; a CUDA GPU.

Reproducibility: every random choice is seeded (tokenizer training is
deterministic for a given input order; initial weights, dropout and the batch of
each step come from --seed). After training, the first --replay-steps steps are
run again from the saved initial weights and their losses compared with the log.
"""
import argparse
import csv
import json
import math
import os
import random
import tarfile
import time

import torch
import torch.nn.functional as F

import hf_export
from llama_model import LlamaLM, ModelConfig, count_parameters

SEP = "\n<|endoftext|>\n"


def read_corpus(path, max_bytes):
    """{name: [documents]} from the archive; max_bytes > 0 keeps a prefix of each file."""
    out = {}
    with tarfile.open(path) as tar:
        for name in ("train", "valid", "instruct_train", "instruct_valid"):
            text = tar.extractfile(name + ".txt").read().decode("utf-8")
            if max_bytes > 0:
                text = text[:max_bytes]
            out[name] = [d for d in text.split(SEP) if d.strip()]
    return out


def train_tokenizer(docs, vocab_size):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, show_progress=False,
                                  special_tokens=hf_export.SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(docs, trainer=trainer)
    return tok


def encode_stream(tok, docs):
    """All documents as one int64 tensor, each preceded by <|endoftext|> (id 0)."""
    ids = []
    for enc in tok.encode_batch(docs):
        ids.append(0)
        ids.extend(enc.ids)
    return torch.tensor(ids, dtype=torch.int64)


def batch_at(data, step, seed, batch, seq):
    """The batch of step `step`: random windows drawn from a generator seeded by
    (seed, step), so any step's batch can be rebuilt alone."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + step)
    starts = torch.randint(0, data.numel() - seq - 1, (batch,), generator=g).to(data.device)
    idx = starts[:, None] + torch.arange(seq + 1, device=data.device)[None, :]
    w = data[idx]
    return w[:, :-1], w[:, 1:]


def lr_at(step, args):
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    p = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.lr * (args.min_lr_frac + (1 - args.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * p)))


@torch.no_grad()
def evaluate(fwd, data, seq, max_windows, batch=16):
    """Mean next-token loss over consecutive non-overlapping windows of `data`."""
    n = min(max_windows, (data.numel() - 1) // seq) // batch * batch  # one shape: no recompiles
    total, count = 0.0, 0
    for i in range(0, n, batch):
        rows = torch.arange(i, min(n, i + batch), device=data.device)
        idx = rows[:, None] * seq + torch.arange(seq + 1, device=data.device)[None, :]
        w = data[idx]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fwd(w[:, :-1], w[:, 1:], "sum")
        total += loss.item()
        count += w[:, 1:].numel()
    return total / max(1, count)


def make_optimizer(model, args):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    other = [p for n, p in model.named_parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                              {"params": other, "weight_decay": 0.0}],
                             lr=args.lr, betas=(0.9, 0.95), eps=1e-8, fused=True)


def train_steps(model, fwd, opt, data, args, first, last, on_step):
    """Runs steps [first, last); calls on_step(step, loss, lr) after each."""
    model.train()
    for step in range(first, last):
        x, y = batch_at(data, step, args.seed, args.batch, args.seq)
        lr = lr_at(step, args)
        for group in opt.param_groups:
            group["lr"] = lr
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fwd(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if not on_step(step, loss, lr):
            return step + 1
    return last


@torch.no_grad()
def generate(model, tok, prompt_ids, n_new, temperature, seed, stop=(0, 2)):
    g = torch.Generator(device="cuda").manual_seed(seed)
    ids = list(prompt_ids)
    for _ in range(n_new):
        logits = model(torch.tensor([ids[-model.cfg.max_position_embeddings:]], device="cuda"))[0, -1].float()
        if temperature == 0:
            nxt = int(logits.argmax())
        else:
            probs = torch.softmax(logits / temperature, -1)
            nxt = int(torch.multinomial(probs, 1, generator=g))
        if nxt in stop:
            break
        ids.append(nxt)
    return tok.decode(ids[len(prompt_ids):], skip_special_tokens=False)


SAMPLE_PROMPTS = ["Once upon a time", "The king said", "In the beginning",
                  "<|im_start|>user\nTell me a story about a fox.<|im_end|>\n<|im_start|>assistant\n",
                  "<|im_start|>user\nWhat is 7 plus 5?<|im_end|>\n<|im_start|>assistant\n",
                  "<|im_start|>user\nWhat does the word \"river\" mean?<|im_end|>\n<|im_start|>assistant\n",
                  "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n"]


def write_samples(model, tok, path):
    with open(path, "w") as f:
        for p in SAMPLE_PROMPTS:
            ids = tok.encode(p).ids
            for temp, seed in ((0.0, 0), (0.8, 1), (0.8, 2)):
                text = generate(model, tok, ids, 80, temp, seed)
                f.write(f"=== prompt {p!r} temperature {temp} seed {seed}\n{text}\n\n")


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr-frac", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--keep-best", action="store_true",
                    help="ship the weights of the evaluation (every --eval-every steps) with the "
                         "lowest --best-by loss, not those of the last step")
    ap.add_argument("--best-by", choices=("text", "text+instruct"), default="text",
                    help="what --keep-best minimises: the held-out text loss, or its sum with "
                         "the held-out instruction loss")
    ap.add_argument("--instruct-repeat", type=int, default=1,
                    help="each instruction document appears this many times in the training "
                         "stream (the tokenizer still sees it once)")
    ap.add_argument("--replay-steps", type=int, default=20)
    ap.add_argument("--max-train-seconds", type=float, default=470.0,
                    help="stops early (and says so) if the step loop runs longer")
    ap.add_argument("--smoke", action="store_true", help="a 2 MB slice of each file")
    ap.add_argument("--no-compile", action="store_true")
    return ap.parse_args()


def prepare(args, summary):
    t0 = time.time()
    corpus = read_corpus(args.corpus, 2_000_000 if args.smoke else 0)
    tok_docs = corpus["train"] + corpus["instruct_train"]
    tok = train_tokenizer(tok_docs, args.vocab)
    t1 = time.time()
    if args.instruct_repeat < 1:
        raise SystemExit(f"--instruct-repeat must be >= 1, got {args.instruct_repeat}")
    mixed = corpus["train"] + corpus["instruct_train"] * args.instruct_repeat
    random.Random(args.seed).shuffle(mixed)
    data = {"train": encode_stream(tok, mixed), "valid": encode_stream(tok, corpus["valid"]),
            "instruct_valid": encode_stream(tok, corpus["instruct_valid"])}
    summary.update(tokenizer_seconds=t1 - t0, encode_seconds=time.time() - t1,
                   vocab_size=tok.get_vocab_size(),
                   tokens={k: int(v.numel()) for k, v in data.items()},
                   bytes_per_token=sum(len(d.encode()) for d in corpus["valid"]) / max(1, data["valid"].numel()))
    print(json.dumps(summary), flush=True)
    return tok, {k: v.cuda() for k, v in data.items()}


def best_score(ev, best_by):
    """What --keep-best minimises for one evaluation {valid, instruct_valid}."""
    return ev["valid"] + (ev["instruct_valid"] if best_by == "text+instruct" else 0.0)


def run_eval(model, fwd, data, seq, max_windows):
    model.eval()
    out = {k: evaluate(fwd, data[k], seq, max_windows) for k in ("valid", "instruct_valid")}
    model.train()
    return out


def replay(model, fwd, init_state, data, args):
    """Re-runs the first steps from the initial weights; returns their losses."""
    model.load_state_dict(init_state)
    opt = make_optimizer(model, args)
    torch.manual_seed(args.seed + 1)
    losses = []
    train_steps(model, fwd, opt, data["train"], args, 0, args.replay_steps,
                lambda s, loss, lr: losses.append(loss.item()) or True)
    return losses


def write_loss_csv(path, rows, loss_vals, evals, args):
    """One row a step; the validation columns only where they were measured."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "tokens", "lr", "train_loss", "valid_loss", "instruct_valid_loss"])
        for (step, lr), lv in zip(rows, loss_vals):
            e = evals.get(step, {})
            w.writerow([step + 1, (step + 1) * args.batch * args.seq, f"{lr:.6g}", f"{lv:.6f}",
                        f"{e['valid']:.6f}" if e else "", f"{e['instruct_valid']:.6f}" if e else ""])


def export(model, tok, cfg, data, out, summary):
    """The HF folder OUT/model, its check with transformers, the tests' reference
    (OUT/fixture) and the sample outputs."""
    folder = os.path.join(out, "model")
    model.eval()
    hf_export.save_folder(model, tok, folder)
    ref = hf_export.load_reference_copy(LlamaLM, cfg, folder, "cuda")
    hf, summary["transformers_check"] = hf_export.check_with_transformers(
        ref, folder, data["valid"][: 2 * 128].view(2, 128), "cuda")
    print("transformers check", summary["transformers_check"], flush=True)
    prompt = tok.encode("Once upon a time, there was a little fox who lived").ids
    summary["fixture_greedy"] = tok.decode(hf_export.make_fixture(
        hf, prompt, 12, os.path.join(out, "fixture"), "cuda"))
    write_samples(ref, tok, os.path.join(out, "samples.txt"))


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False  # f32 checks against transformers stay exact
    summary = {"args": vars(args), "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}
    t_start = time.time()
    tok, data = prepare(args, summary)
    cfg = ModelConfig(vocab_size=tok.get_vocab_size(), dropout=args.dropout,
                      max_position_embeddings=args.seq)
    torch.manual_seed(args.seed)
    model = LlamaLM(cfg).cuda()
    init_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    summary.update(config=cfg.as_dict(), parameters=count_parameters(model))
    fwd = model.loss if args.no_compile else torch.compile(model.loss)
    opt = make_optimizer(model, args)
    losses, rows, evals = [], [], {}
    best = {"valid": math.inf, "step": None, "state": None}
    t_train = time.time()

    def on_step(step, loss, lr):
        losses.append(loss.detach())
        rows.append((step, lr))
        if step == 0:
            summary["first_step_seconds"] = time.time() - t_train
        elapsed = time.time() - t_train
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            evals[step] = run_eval(model, fwd, data, args.seq, 64)
            score = best_score(evals[step], args.best_by)
            if args.keep_best and score < best["valid"]:
                best.update(valid=score, step=step + 1,
                            state={k: v.detach().clone() for k, v in model.state_dict().items()})
            print(f"step {step + 1}/{args.steps} loss {loss.item():.4f} lr {lr:.2e} "
                  f"val {evals[step]} {elapsed:.1f}s", flush=True)
        elif step % 50 == 0:
            print(f"step {step} loss {loss.item():.4f} lr {lr:.2e} {elapsed:.1f}s", flush=True)
        if elapsed > args.max_train_seconds:
            summary["stopped_early_at_step"] = step + 1
            print(f"stopping early at step {step + 1}: {elapsed:.0f}s", flush=True)
            return False
        return True

    torch.manual_seed(args.seed + 1)  # dropout stream
    n_done = train_steps(model, fwd, opt, data["train"], args, 0, args.steps, on_step)
    torch.cuda.synchronize()
    summary.update(train_seconds=time.time() - t_train, steps_done=n_done,
                   tokens_seen=n_done * args.batch * args.seq)
    if best["state"] is not None:  # --keep-best: the shipped weights are those of best["step"]
        model.load_state_dict(best["state"])
        summary.update(kept_step=best["step"], kept_best_by=args.best_by,
                       kept_score_subset=best["valid"])
        print(f"keeping the weights of step {best['step']} ({args.best_by} held-out loss "
              f"{best['valid']:.4f})",
              flush=True)
    final = run_eval(model, fwd, data, args.seq, 100_000)
    summary["final_eval"] = {k: {"loss": v, "perplexity": math.exp(v)} for k, v in final.items()}
    print("final", summary["final_eval"], flush=True)
    loss_vals = [x.item() for x in losses]
    write_loss_csv(os.path.join(args.out, "loss.csv"), rows, loss_vals, evals, args)

    export(model, tok, cfg, data, args.out, summary)

    again = replay(model, fwd, init_state, data, args)
    diffs = [abs(a - b) for a, b in zip(again, loss_vals)]
    summary["replay"] = {"steps": len(again), "logged": loss_vals[: len(again)], "replayed": again,
                         "max_abs_diff": max(diffs) if diffs else None}
    summary["total_seconds"] = time.time() - t_start
    json.dump(summary, open(os.path.join(args.out, "summary.json"), "w"), indent=1)
    print("replay max |diff|", summary["replay"]["max_abs_diff"], "total", summary["total_seconds"],
          flush=True)
    if not summary["transformers_check"]["ok"]:
        raise SystemExit("transformers' logits differ from the training model's")


if __name__ == "__main__":
    main()
