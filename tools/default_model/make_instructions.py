#!/usr/bin/env python3
"""Makes the default model's small synthetic instruction set: templated questions
and answers (greetings, arithmetic, GCIDE definitions, short stories, letter and
word tasks, counting, opposites, comparisons, who-are-you), written as ChatML
conversations, plus some of the stories as plain text.

    make_instructions.py --gcide GCIDE_TXT --out OUT_DIR [--n 30000] [--seed 5]
Writes OUT_DIR/instruct_train.txt and OUT_DIR/instruct_valid.txt (documents
separated by a line holding only <|endoftext|>).
"""
import argparse
import os
import random

import gcide
import stories

SEP = "\n<|endoftext|>\n"
SYSTEM = "You are a helpful assistant."
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve"]
OPPOSITES = [("hot", "cold"), ("big", "small"), ("up", "down"), ("day", "night"),
             ("happy", "sad"), ("fast", "slow"), ("old", "new"), ("light", "dark"),
             ("open", "closed"), ("early", "late"), ("full", "empty"), ("hard", "soft"),
             ("high", "low"), ("good", "bad"), ("rich", "poor"), ("strong", "weak"),
             ("wet", "dry"), ("loud", "quiet"), ("long", "short"), ("first", "last"),
             ("in", "out"), ("near", "far"), ("young", "old"), ("black", "white"),
             ("left", "right"), ("summer", "winter"), ("love", "hate"), ("win", "lose"),
             ("true", "false"), ("begin", "end"), ("thick", "thin"), ("clean", "dirty")]
GREETINGS = [("Hello!", "Hello! How can I help you today?"),
             ("Hi", "Hi! What would you like to talk about?"),
             ("Hi there.", "Hello there! How can I help?"),
             ("Good morning!", "Good morning! I hope you have a fine day."),
             ("Good evening.", "Good evening! What can I do for you?"),
             ("How are you?", "I am well, thank you. How can I help you?"),
             ("Thank you!", "You are welcome!"),
             ("Thanks for your help.", "You are welcome. I am glad I could help."),
             ("Goodbye.", "Goodbye! Have a nice day."),
             ("Bye!", "Goodbye, and take care!")]
WHO = [("Who are you?", "I am a small language model that comes with cairn. I learned from old "
        "books, a dictionary and fortune cookies, so I know only a little."),
       ("What is your name?", "I am the default model of cairn, a small model trained for a few "
        "minutes."),
       ("What can you do?", "I can tell short stories, say what a word means, do simple sums "
        "and play with letters and words. I make many mistakes, because I am very small.")]


def arithmetic(rng):
    a, b = rng.randint(0, 20), rng.randint(0, 20)
    op = rng.choice(["plus", "minus", "times"])
    if op == "minus" and b > a:
        a, b = b, a
    r = a + b if op == "plus" else a - b if op == "minus" else a * b
    q = rng.choice([f"What is {a} {op} {b}?", f"How much is {a} {op} {b}?",
                    f"Calculate {a} {op} {b}.", f"What is {a} {'+-*'[['plus','minus','times'].index(op)]} {b}?"])
    return q, rng.choice([f"{a} {op} {b} is {r}.", f"The answer is {r}."])


def definition(rng, defs):
    w, pos, d = rng.choice(defs)
    q = rng.choice([f"What does the word \"{w}\" mean?", f"Define {w}.", f"What is the meaning of {w}?",
                    f"What does {w} mean?"])
    return q, f"\"{w.capitalize()}\" is {'an' if pos[0] in 'aeiou' else 'a'} {pos}. It means: {d}"


def story_task(rng):
    about = rng.choice(stories.CHARACTERS)
    q = rng.choice([f"Tell me a story about a {about}.", f"Write a short story about a {about}.",
                    f"Can you tell me a story about a {about}?", "Tell me a story."])
    return q, stories.story(rng, None if q == "Tell me a story." else about)


def word_task(rng, words):
    w = rng.choice(words)
    kind = rng.randrange(5)
    if kind == 0:
        return rng.choice([f"Write \"{w}\" in capital letters.", f"Spell {w} in capital letters."]), w.upper()
    if kind == 1:
        return f"How many letters are in the word \"{w}\"?", f"The word \"{w}\" has {len(w)} letters."
    if kind == 2:
        return f"What is the first letter of \"{w}\"?", f"The first letter of \"{w}\" is \"{w[0]}\"."
    if kind == 3:
        return f"Spell the word \"{w}\".", "-".join(w.upper())
    return f"Reverse the word \"{w}\".", f"\"{w}\" reversed is \"{w[::-1]}\"."


def misc_task(rng):
    kind = rng.randrange(4)
    if kind == 0:
        a = rng.randint(1, 10)
        b = a + rng.randint(2, 8)
        return f"Count from {a} to {b}.", ", ".join(str(i) for i in range(a, b + 1)) + "."
    if kind == 1:
        a, b = rng.sample(range(0, 100), 2)
        return f"Which is larger, {a} or {b}?", f"{max(a, b)} is larger than {min(a, b)}."
    if kind == 2:
        x, y = rng.choice(OPPOSITES)
        x, y = (x, y) if rng.random() < 0.5 else (y, x)
        return f"What is the opposite of \"{x}\"?", f"The opposite of \"{x}\" is \"{y}\"."
    n = rng.randint(0, 12)
    return f"Write the number {n} in words.", f"{n} is written \"{NUMBER_WORDS[n]}\"."


def turn(rng, defs, words):
    r = rng.random()
    if r < 0.10:
        return rng.choice(GREETINGS)
    if r < 0.13:
        return rng.choice(WHO)
    if r < 0.30:
        return arithmetic(rng)
    if r < 0.50:
        return definition(rng, defs)
    if r < 0.68:
        return story_task(rng)
    if r < 0.85:
        return word_task(rng, words)
    return misc_task(rng)


def conversation(rng, defs, words):
    parts = []
    if rng.random() < 0.3:
        parts.append(f"<|im_start|>system\n{SYSTEM}<|im_end|>")
    for _ in range(1 if rng.random() < 0.75 else rng.randint(2, 3)):
        q, a = turn(rng, defs, words)
        parts.append(f"<|im_start|>user\n{q}<|im_end|>")
        parts.append(f"<|im_start|>assistant\n{a}<|im_end|>")
    return "\n".join(parts) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gcide", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    defs = gcide.definitions(open(args.gcide, encoding="utf-8", errors="replace").read())
    words = sorted({w for w, _, _ in defs if len(w) <= 9})
    rng = random.Random(args.seed)
    docs = [conversation(rng, defs, words) for _ in range(args.n)]
    docs += [stories.story(rng) for _ in range(args.n // 10)]
    rng.shuffle(docs)
    n_valid = len(docs) // 50
    for name, part in (("instruct_valid.txt", docs[:n_valid]), ("instruct_train.txt", docs[n_valid:])):
        with open(os.path.join(args.out, name), "w") as f:
            f.write(SEP.join(d.strip() for d in part))
    print(f"{len(docs)} documents ({n_valid} held out), {len(defs)} definitions, {len(words)} words")


if __name__ == "__main__":
    main()
