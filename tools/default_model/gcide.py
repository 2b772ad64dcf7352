"""Reads headwords, parts of speech and first definitions from the GCIDE dictionary
text (dict-gcide's gcide.dict.dz, decompressed)."""
import re

POS_NAMES = {"n.": "noun", "v. t.": "verb", "v. i.": "verb", "v.": "verb", "a.": "adjective",
             "adv.": "adverb", "prep.": "preposition", "conj.": "conjunction",
             "interj.": "interjection", "pron.": "pronoun"}
POS_RE = re.compile(r"\\,?\s*(?:\([^)]*\),?\s*)?(n\.|v\. t\.|v\. i\.|v\.|a\.|adv\.|prep\.|conj\.|"
                    r"interj\.|pron\.)")
END_RE = re.compile(r"\[(?:1913 Webster|WordNet|PJC|Century|Webster 1913|RHD)[^\]]*\]")
BAD_RE = re.compile(r"[\[\]\\<>|^*`\"]|--|\bSee\b|\bsyn\b|\bSyn\b|\bpl\.|\bobs\b|\bObs\b")


def entries(text):
    """Yields (header line, body text) for every entry (a line at column 0 holding a
    backslash-quoted pronunciation, with the indented lines after it)."""
    header, body = None, []
    for line in text.split("\n"):
        if line and not line[0].isspace() and "\\" in line:
            if header is not None:
                yield header, " ".join(body)
            header, body = line, []
        elif header is not None:
            body.append(line.strip())
    if header is not None:
        yield header, " ".join(body)


def clean_definition(header, body):
    """The first sense of an entry as a plain sentence, or None when it reads badly."""
    head_rest = header.split("\\", 2)[-1] if header.count("\\") >= 2 else ""
    text = re.sub(r"\[[^\]]*\]", " ", head_rest.split(".", 1)[-1] if "[" in head_rest else "")
    text = (text + " " + body).strip()
    text = END_RE.split(text)[0]
    m = re.search(r"(?:^|\s)1\.\s", text)
    if m:
        text = text[m.end():]
    text = re.sub(r"\s2\.\s.*", "", text)
    text = re.sub(r"\([^)]*\)", "", text)          # (bot.), ({Pyrus malus})
    text = text.replace("{", "").replace("}", "")
    text = re.sub(r"\s+", " ", text).strip(" ;,.")
    if not 20 <= len(text) <= 240 or BAD_RE.search(text) or not text[:1].isalpha():
        return None
    return text[0].upper() + text[1:] + "."


def definitions(text):
    """[(headword, part of speech name, definition)], first sense of each entry,
    plain single words only."""
    out, seen = [], set()
    for header, body in entries(text):
        word = header.split("\\", 1)[0].strip().rstrip(",")
        if not re.fullmatch(r"[A-Za-z][a-z]{2,15}", word) or word.lower() in seen:
            continue
        m = POS_RE.search(header)
        if not m:
            continue
        d = clean_definition(header, body)
        if d is None:
            continue
        seen.add(word.lower())
        out.append((word.lower(), POS_NAMES[m.group(1)], d))
    return out
