#!/usr/bin/env python3
"""Cleans the raw extracts of make_corpus.sh into documents, removes exact
duplicates (after folding case and spaces), and holds out about 2% of each
source's documents (chosen by a hash of the text, so the split is stable) as
validation text.

    clean_corpus.py --raw RAW_DIR --out OUT_DIR
Writes OUT_DIR/train.txt, OUT_DIR/valid.txt (documents separated by a line
holding only <|endoftext|>) and OUT_DIR/sources.json.
"""
import argparse
import hashlib
import json
import os
import random
import re

import gcide

SEP = "\n<|endoftext|>\n"
VALID_PERCENT = 2


def unwrap(par):
    """Joins a hard-wrapped paragraph into one line."""
    return re.sub(r"\s*\n\s*", " ", par.strip())


def paragraphs(text):
    return [p for p in re.split(r"\n\s*\n", text.replace("\r", "")) if p.strip()]


def group(pars, target_chars, joiner="\n\n"):
    """Packs consecutive paragraphs into documents of about target_chars."""
    docs, cur, n = [], [], 0
    for p in pars:
        cur.append(p)
        n += len(p)
        if n >= target_chars:
            docs.append(joiner.join(cur))
            cur, n = [], 0
    if cur:
        docs.append(joiner.join(cur))
    return docs


def war_and_peace(text):
    pars = [unwrap(p) for p in paragraphs(text)]
    pars = [p for p in pars if not re.fullmatch(r"(CHAPTER|BOOK|EPILOGUE|FIRST|SECOND)[ A-Z:]*", p)]
    return group(pars, 3000)


def shakespeare(text):
    return group([p.strip() for p in paragraphs(text)], 2000)


def kjv(text):
    """One document per chapter, a verse a line without its reference."""
    chapters = {}
    for line in text.split("\n"):
        m = re.match(r"(\w+?)(\d+):(\d+) (.*)", line.strip())
        if m:
            chapters.setdefault((m.group(1), m.group(2)), []).append(m.group(4).strip())
    return ["\n".join(v) for v in chapters.values()]


def fortunes(text):
    out = []
    for f in re.split(r"\n%\n", text):
        f = f.strip("\n")
        if not f.strip() or len(f) > 2000 or re.search(r"[|_/\\]{4,}|\t\t\t", f):
            continue
        lines = [ln.rstrip() for ln in f.split("\n")]
        out.append("\n".join(ln.lstrip() if not ln.lstrip().startswith("--") else "    " + ln.strip()
                             for ln in lines))
    return out


def dictionary(text, seed):
    """Definitions as sentences, 40 to a document, a random half of the entries (the
    rest would let the dictionary's style dominate)."""
    defs = gcide.definitions(text)
    random.Random(seed).shuffle(defs)
    lines = [f"{w.capitalize()} ({pos}): {d}" for w, pos, d in defs[: len(defs) // 2]]
    return ["\n".join(lines[i:i + 40]) for i in range(0, len(lines), 40)]


def rst_prose(text):
    """Prose paragraphs of reStructuredText files (separated by form feeds): inline
    markup reduced to its text; directives, code, tables, lists and headings dropped.
    One document per file."""
    docs = []
    for page in text.split("\f"):
        keep = []
        for p in paragraphs(page):
            if p[:1].isspace() or p.lstrip().startswith((".. ", "* ", "- ", "#", "|", "+", "=", ">>>")):
                continue
            p = unwrap(p)
            p = re.sub(r":[\w:-]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`", r"\1", p)   # :role:`text <target>`
            p = re.sub(r"`([^`<]*?)(?:\s*<[^>]*>)?`_+", r"\1", p)            # `link <url>`_
            p = p.replace("``", "").replace("**", "").replace("::", ":")
            letters = sum(ch.isalpha() or ch == " " for ch in p)
            if len(p) >= 80 and p.endswith((".", ":")) and letters >= 0.85 * len(p):
                keep.append(p)
        if keep:
            docs.append("\n\n".join(keep))
    return docs


def key(doc):
    return hashlib.sha256(re.sub(r"\s+", " ", doc.lower()).strip().encode()).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    read = lambda name: open(os.path.join(args.raw, name), encoding="utf-8", errors="replace").read()
    sources = {
        "war-and-peace": war_and_peace(read("war-and-peace.txt")),
        "tinyshakespeare": shakespeare(read("tinyshakespeare.txt")),
        "kjv": kjv(read("kjv.txt")),
        "fortunes": fortunes(read("fortunes.txt")),
        "gcide": dictionary(read("gcide.txt"), seed=7),
        "python-doc": rst_prose(read("python-doc.txt")),
        "linux-doc": rst_prose(read("linux-doc.txt")),
    }
    seen, train, valid, stats = set(), [], [], {}
    for name, docs in sources.items():
        st = stats[name] = {"train_docs": 0, "valid_docs": 0, "train_bytes": 0, "valid_bytes": 0,
                            "duplicates": 0}
        for d in docs:
            d = d.strip()
            k = key(d)
            if k in seen:
                st["duplicates"] += 1
                continue
            seen.add(k)
            split = "valid" if int(k[:8], 16) % 100 < VALID_PERCENT else "train"
            (valid if split == "valid" else train).append(d)
            st[split + "_docs"] += 1
            st[split + "_bytes"] += len(d.encode())
    random.Random(11).shuffle(train)
    with open(os.path.join(args.out, "train.txt"), "w") as f:
        f.write(SEP.join(train))
    with open(os.path.join(args.out, "valid.txt"), "w") as f:
        f.write(SEP.join(valid))
    with open(os.path.join(args.out, "sources.json"), "w") as f:
        json.dump(stats, f, indent=1)
    print(json.dumps(stats, indent=1))


if __name__ == "__main__":
    main()
