"""Training phrasings for the learned `intent` model (issue 18), written for ragshield.

    python benchmarks/intent_corpus.py        # rewrites src/ragshield/data/intent_phrasings.jsonl

Everything here is the project's OWN text: extraction requests composed from hand-written
verbs, objects, modifiers and frames in ten styles and ten languages, and hard benign questions
that use extraction-like words ("list", "show", "repeat", "exact", "translate", "JSON") innocently.
The output is shipped with the package (`ragshield/data/intent_phrasings.jsonl`): the training
script reads it, and `ragshield calibrate` reports how many of its attack phrasings a new
threshold still blocks. Nothing from `../shared/data` goes into it; real-data training material
is added at training time only (`benchmarks/train_intent.py`).

The held-apart evaluation set (`benchmarks/data/intent_heldout.jsonl`) was written BEFORE this
file, by hand and in other words; any exact duplicate of it is dropped here.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from intent_corpus_benign import (
    APPS,
    BENIGN_FRAMES_EN,
    BENIGN_ML,
    CITIES,
    CONDITIONS,
    DISHES,
    DRUGS,
    FILL,
    GENERAL_EN,
    LANG_NAMES,
    MONTHS,
    OFFICE,
    PHRASES,
    TASKS,
    TOOLS,
    TOPICS,
)
from intent_corpus_requests import ANCHORS, FRAMES, INFINITIVE, LEX, PAD_GLUE, PADDING

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "src" / "ragshield" / "data" / "intent_phrasings.jsonl"
HELDOUT = REPO / "benchmarks" / "data" / "intent_heldout.jsonl"
SEED = 1818

STYLES = (
    "direct",
    "polite",
    "roleplay",
    "format",
    "translate",
    "verbatim",
    "continuation",
    "padded",
    "obfuscated",
    "pii",
)
LANGUAGES = ("en", "es", "de", "fr", "it", "pt", "nl", "zh", "ru", "ja")


def _fill(frame: str, lang: str, rng: random.Random) -> str:
    lex = LEX[lang]
    verb = rng.choice(lex["v"])
    values: dict[str, str] = {
        "v": verb,
        "V": verb[:1].upper() + verb[1:],
        "v_inf": INFINITIVE.get(lang, {}).get(verb, verb),
        "o": rng.choice(lex["o"]),
        "m": rng.choice(lex["m"]),
        "f": rng.choice(lex["f"]),
        "l": rng.choice(lex["l"]),
        "p": rng.choice(lex["p"]),
        "r": rng.choice(lex["r"]),
        "a": rng.choice(ANCHORS[lang]),
    }
    text = frame.format(**values)
    text = re.sub(r"\s+([,.?!])", r"\1", re.sub(r" {2,}", " ", text)).strip()
    return text[:1].upper() + text[1:] if lang not in ("zh", "ja") else text


# -- obfuscation (typos, leetspeak, spacing) -------------------------------------------------------
LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"}


def obfuscate(text: str, rng: random.Random) -> str:
    """A typo'd, leetspeak or spaced-out variant of `text` (one of several transformations)."""
    kind = rng.choice(("leet", "typos", "lower-typos", "spaced", "drop-vowels", "mixed"))
    if kind == "leet":
        return "".join(LEET.get(c.lower(), c) if rng.random() < 0.7 else c for c in text)
    if kind == "spaced":
        return " ".join(text.upper())
    if kind == "drop-vowels":
        return re.sub(
            r"\b(\w)(\w*)",
            lambda m: m.group(1) + re.sub(r"[aeiou]", "", m.group(2)) if rng.random() < 0.6 else m.group(0),
            text,
        )
    out = []
    for word in text.split():
        if len(word) > 3 and rng.random() < 0.5:
            i = rng.randrange(1, len(word) - 1)
            op = rng.choice(("swap", "drop", "double"))
            if op == "swap":
                word = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
            elif op == "drop":
                word = word[:i] + word[i + 1 :]
            else:
                word = word[:i] + word[i] + word[i:]
        out.append(word)
    text = " ".join(out)
    if kind in ("lower-typos", "mixed"):
        text = text.lower().replace("you", "u").replace("please", "pls").replace("the ", "teh ")
    if kind == "mixed":
        text = "".join(LEET.get(c, c) if rng.random() < 0.3 else c for c in text)
    return text


def _benign_values(rng: random.Random) -> dict[str, str]:
    return {
        "drug": rng.choice(DRUGS),
        "cond": rng.choice(CONDITIONS),
        "task": rng.choice(TASKS),
        "office": rng.choice(OFFICE),
        "tool": rng.choice(TOOLS),
        "topic": rng.choice(TOPICS),
        "phrase": rng.choice(PHRASES),
        "lang": rng.choice(LANG_NAMES),
        "dish": rng.choice(DISHES),
        "city": rng.choice(CITIES),
        "app": rng.choice(APPS),
        "month": rng.choice(MONTHS),
        **{key: rng.choice(values) for key, values in FILL.items()},
    }


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def generate(per_cell: int = 14, seed: int = SEED) -> list[dict[str, Any]]:
    """The phrasings: attack rows (label 1) per (style, language) cell and benign rows (label 0)."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for lang in LANGUAGES:
        frames = FRAMES[lang]
        for style in STYLES:
            n = per_cell * (3 if lang == "en" else 1)
            made: set[str] = set()
            for _ in range(n * 6):
                if len(made) >= n:
                    break
                if style == "padded":
                    base = _fill(rng.choice(frames[rng.choice(["direct", "polite", "format", "pii"])]), lang, rng)
                    glue = rng.choice(PAD_GLUE[lang])
                    body = (
                        base if not glue else glue + (base[:1].lower() + base[1:] if lang not in ("zh", "ja") else base)
                    )
                    text = f"{rng.choice(PADDING[lang])} {body}"
                elif style == "obfuscated":
                    text = obfuscate(_fill(rng.choice(frames[rng.choice(["direct", "polite", "pii"])]), lang, rng), rng)
                else:
                    text = _fill(rng.choice(frames[style]), lang, rng)
                if text not in made:
                    made.add(text)
                    rows.append({"text": text, "label": 1, "style": style, "lang": lang, "source": "own"})
    # hard benign (English) and benign questions in other languages
    for frames_of, lang, n in [(BENIGN_FRAMES_EN, "en", 1100), (GENERAL_EN, "en", 120)] + [
        (frames, lang, 110) for lang, frames in BENIGN_ML.items()
    ]:
        made = set()
        for _ in range(n * 6):
            if len(made) >= n:
                break
            text = rng.choice(frames_of).format(**_benign_values(rng))
            text = text[:1].upper() + text[1:] if frames_of is not GENERAL_EN else text
            if text not in made:
                made.add(text)
                style = "general" if frames_of is GENERAL_EN else "hard"
                rows.append({"text": text, "label": 0, "style": style, "lang": lang, "source": "own"})
    for lang, items in PADDING.items():
        rows.extend({"text": t, "label": 0, "style": "plain", "lang": lang, "source": "own"} for t in items)
    held = set()
    if HELDOUT.exists():
        held = {_norm(json.loads(line)["text"]) for line in HELDOUT.read_text(encoding="utf-8").splitlines() if line}
    return [row for row in rows if _norm(row["text"]) not in held]


def main() -> None:
    rows = generate()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    attacks = sum(r["label"] for r in rows)
    print(f"wrote {OUT.relative_to(REPO)}: {attacks} extraction phrasings, {len(rows) - attacks} benign")


if __name__ == "__main__":
    main()
