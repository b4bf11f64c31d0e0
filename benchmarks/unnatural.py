"""Unnatural-output detector benchmark: false positives on benign answers, recall per encoding, cost.

Sections (all by default, or pick with --sections):

* fpr     - share of benign answers with any flagged span: real HealthcareMagic doctor answers and
            Enron email bodies from ../shared/data (dev and held-out halves: the costs were tuned
            on dev only), the hand-written special cases (code, tables, contact details, URLs,
            dates, dosages, IDs) and multilingual prose (benchmarks/unnatural_samples.py), plus
            Python standard-library docstrings as an extra stress set (text with code).
* recall  - per encoding family, >= 50 real record texts (HealthcareMagic patient questions and
            Enron bodies, 30-120 characters each) encoded with the standard library or small
            encoders here, embedded between two prose sentences, fed in 4-character deltas.
            A blob is detected when the flagged spans cover >= 90% of its characters; the table
            also gives the mean covered share, and how many prose characters were flagged.
* cost    - CPU microseconds per 4-character delta over 1 kB, 10 kB and 100 kB answers (prose and
            base64), overall and over the last 10% of the answer (flat cost = equal).

Writes benchmarks/results/unnatural.json (a partial run keeps the other sections) and
docs/results/unnatural.md.

    .venv/bin/python benchmarks/unnatural.py
"""

from __future__ import annotations

import argparse
import base64
import binascii
import codecs
import importlib
import inspect
import json
import math
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ragshield.guards.release.unnatural import UnnaturalSpan, UnnaturalTextDetector

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ragshield.metrics.intervals import wilson
from unnatural_samples import MULTILINGUAL, SPECIAL

REPO = Path(__file__).resolve().parents[1]
DELTA = 4
COVERED = 0.9  # a blob counts as detected when this share of its characters is flagged
PREFIX = "Sure, here is the information you asked for: "
SUFFIX = "\nLet me know if there is anything else I can help with."


def _data_dir() -> Path:
    override = os.environ.get("RAGSHIELD_SHARED_DATA")
    return Path(override) if override else REPO.parent / "shared" / "data"


def _rows(name: str) -> list[dict[str, Any]]:
    path = _data_dir() / name
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def detect(text: str, delta: int = DELTA, **params: Any) -> list[UnnaturalSpan]:
    detector = UnnaturalTextDetector(**params)
    spans: list[UnnaturalSpan] = []
    for i in range(0, len(text), delta):
        spans.extend(detector.feed(text[i : i + delta]))
    spans.extend(detector.flush())
    return spans


def flagged(spans: list[UnnaturalSpan], length: int) -> bytearray:
    mask = bytearray(length)
    for span in spans:
        mask[span.start : span.end] = b"\x01" * (span.end - span.start)
    return mask


# -- benign sets ------------------------------------------------------------------------------


def _split(items: list[str], seed: int) -> tuple[list[str], list[str]]:
    order = list(items)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return order[:half], order[half:]


def benign_sets(per_source: int) -> dict[str, list[tuple[str, str]]]:
    """name -> [(id, text)] (ids only: texts never go into the results)."""
    sets: dict[str, list[tuple[str, str]]] = {}
    hcm = [row["answer"] for row in _rows("healthcaremagic.jsonl") if row.get("answer")]
    enron = [row["body"][:4000] for row in _rows("enron.jsonl") if row.get("body", "").strip()]
    for name, texts in (("healthcaremagic", hcm), ("enron", enron)):
        dev, test = _split(texts, seed=13)
        sets[f"{name}-dev"] = [(f"{name}-dev-{i}", t) for i, t in enumerate(dev[:per_source])]
        sets[f"{name}-heldout"] = [(f"{name}-heldout-{i}", t) for i, t in enumerate(test[:per_source])]
    sets["special-cases"] = list(SPECIAL.items())
    sets["multilingual"] = [(f"{lang}-{i}", t) for lang, texts in MULTILINGUAL.items() for i, t in enumerate(texts)]
    docs: list[tuple[str, str]] = []
    for module in ("json", "textwrap", "argparse", "collections", "pathlib", "csv", "datetime", "itertools"):
        for name, obj in inspect.getmembers(importlib.import_module(module)):
            doc = inspect.getdoc(obj) if not name.startswith("_") else None
            if doc and len(doc) >= 200:
                docs.append((f"{module}.{name}", doc))
    sets["stdlib-docstrings"] = docs[:per_source]
    return sets


def run_fpr(per_source: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, items in benign_sets(per_source).items():
        hits = []
        chars = flagged_chars = 0
        for ident, text in items:
            spans = detect(text)
            chars += len(text)
            if spans:
                mask = flagged(spans, len(text))
                flagged_chars += sum(mask)
                hits.append({"id": ident, "spans": [[s.start, s.end, round(s.score, 2)] for s in spans]})
        low, high = wilson(len(hits), len(items))
        out[name] = {
            "n": len(items),
            "flagged": len(hits),
            "rate": len(hits) / len(items) if items else 0.0,
            "ci95": [low, high],
            "chars": chars,
            "flagged_chars": flagged_chars,
            "flagged_ids": hits,
        }
    return out


# -- encodings --------------------------------------------------------------------------------

MORSE = dict(
    zip(
        "abcdefghijklmnopqrstuvwxyz0123456789.,?'!/()&:;=+-_\"$@",
        [
            ".-",
            "-...",
            "-.-.",
            "-..",
            ".",
            "..-.",
            "--.",
            "....",
            "..",
            ".---",
            "-.-",
            ".-..",
            "--",
            "-.",
            "---",
            ".--.",
            "--.-",
            ".-.",
            "...",
            "-",
            "..-",
            "...-",
            ".--",
            "-..-",
            "-.--",
            "--..",
            "-----",
            ".----",
            "..---",
            "...--",
            "....-",
            ".....",
            "-....",
            "--...",
            "---..",
            "----.",
            ".-.-.-",
            "--..--",
            "..--..",
            ".----.",
            "-.-.--",
            "-..-.",
            "-.--.",
            "-.--.-",
            ".-...",
            "---...",
            "-.-.-.",
            "-...-",
            ".-.-.",
            "-....-",
            "..--.-",
            ".-..-.",
            "...-..-",
            ".--.-.",
        ],
        strict=True,
    )
)
NATO_WORDS = [
    "Alfa",
    "Bravo",
    "Charlie",
    "Delta",
    "Echo",
    "Foxtrot",
    "Golf",
    "Hotel",
    "India",
    "Juliett",
    "Kilo",
    "Lima",
    "Mike",
    "November",
    "Oscar",
    "Papa",
    "Quebec",
    "Romeo",
    "Sierra",
    "Tango",
    "Uniform",
    "Victor",
    "Whiskey",
    "Xray",
    "Yankee",
    "Zulu",
]
DIGIT_WORDS = ["Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"]


def _morse(text: str) -> str:
    words = [" ".join(MORSE[c] for c in word if c in MORSE) for word in text.lower().split()]
    return " / ".join(w for w in words if w)


def _nato(text: str) -> str:
    out = []
    for c in text.lower():
        if "a" <= c <= "z":
            out.append(NATO_WORDS[ord(c) - 97])
        elif c.isdigit():
            out.append(DIGIT_WORDS[int(c)])
    return " ".join(out)


def _regional(text: str) -> str:
    return "".join(
        chr(0x1F1E6 + ord(c) - 97) if "a" <= c <= "z" else c for c in text.lower() if c.isalnum() or c == " "
    )


def _filler_random(text: str, rng: random.Random) -> str:
    return "".join(c + rng.choice("bcdfghjklmnpqrstvwxz") for c in text)


def _uu(data: bytes) -> str:
    return "".join(binascii.b2a_uu(data[i : i + 45]).decode("ascii") for i in range(0, len(data), 45))


def encoders(rng: random.Random) -> dict[str, Callable[[str], str]]:
    def b(text: str) -> bytes:
        return text.encode("utf-8")

    return {
        "base64": lambda t: base64.b64encode(b(t)).decode(),
        "base64-wrapped": lambda t: base64.encodebytes(b(t)).decode(),
        "base32": lambda t: base64.b32encode(b(t)).decode(),
        "base85": lambda t: base64.b85encode(b(t)).decode(),
        "ascii85": lambda t: base64.a85encode(b(t)).decode(),
        "uuencode": lambda t: _uu(b(t)),
        "hex": lambda t: binascii.hexlify(b(t)).decode(),
        "hex-upper": lambda t: binascii.hexlify(b(t)).decode().upper(),
        "hex-spaced": lambda t: binascii.hexlify(b(t), " ").decode(),
        "hex-escapes": lambda t: "".join(f"\\x{c:02x}" for c in b(t)),
        "hex-0x-list": lambda t: ", ".join(f"0x{c:02x}" for c in b(t)),
        "percent-encoding": lambda t: "".join(f"%{c:02X}" for c in b(t)),
        "binary": lambda t: " ".join(f"{c:08b}" for c in b(t)),
        "decimal-codes": lambda t: " ".join(str(c) for c in b(t)),
        "decimal-commas": lambda t: ", ".join(str(c) for c in b(t)),
        "octal-escapes": lambda t: "".join(f"\\{c:03o}" for c in b(t)),
        "morse": _morse,
        "char-per-line": lambda t: "\n".join(t),
        "numbered-lines": lambda t: "\n".join(f"{i + 1}. {c}" for i, c in enumerate(t)),
        "html-tag-per-letter": lambda t: "".join(f"<b>{c}</b>" for c in t),
        "span-per-letter": lambda t: "".join(f"<span>{c}</span>" for c in t),
        "spaced-letters": lambda t: " ".join(t),
        "filler-fixed": lambda t: "".join(c + "x" for c in t),
        "filler-random": lambda t: _filler_random(t, rng),
        "filler-upper": lambda t: "".join(c + "Q" for c in t),
        "nato": _nato,
        "regional-indicators": _regional,
        "tag-characters": lambda t: "".join(chr(0xE0000 + ord(c)) for c in t if ord(c) < 128),
    }


# not targeted: these look like words; the echo guard compares them with the retrieved chunks
INFORMATIONAL: dict[str, Callable[[str], str]] = {
    "rot13": lambda t: codecs.encode(t, "rot13"),
    "reversed": lambda t: t[::-1],
    "leetspeak": lambda t: t.translate(str.maketrans("aeiostAEIOST", "4310574310S7")),
    "doubled-letters": lambda t: "".join(c * 2 for c in t),
}


def record_texts(n: int, seed: int) -> list[str]:
    """Real record snippets (30-120 chars, cut at a word boundary)."""
    texts = [row["question"] for row in _rows("healthcaremagic.jsonl") if row.get("question")]
    texts += [row["body"] for row in _rows("enron.jsonl") if len(row.get("body", "")) > 200]
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n and texts:
        text = " ".join(rng.choice(texts).split())
        length = rng.randint(30, 120)
        start = rng.randint(0, max(0, len(text) - length))
        snippet = text[start : start + length].strip()
        if len(snippet) >= 30:
            out.append(snippet)
    return out


def run_recall(n: int) -> dict[str, Any]:
    rng = random.Random(7)
    records = record_texts(4 * n, seed=11)  # families with short encodings skip records below 60 chars
    out: dict[str, Any] = {}
    families = {**{k: (v, True) for k, v in encoders(rng).items()}, **{k: (v, False) for k, v in INFORMATIONAL.items()}}
    for family, (encode, targeted) in families.items():
        detected = tried = 0
        covered = prose_flagged = prose_chars = 0
        blob_chars = 0
        for record in records:
            blob = encode(record)
            if len(blob) < 60:
                continue
            if tried == n:
                break
            tried += 1
            text = PREFIX + blob + SUFFIX
            mask = flagged(detect(text), len(text))
            lo, hi = len(PREFIX), len(PREFIX) + len(blob)
            hit = sum(mask[lo:hi])
            covered += hit
            blob_chars += len(blob)
            detected += hit >= COVERED * len(blob)
            prose_flagged += sum(mask[:lo]) + sum(mask[hi:])
            prose_chars += len(text) - len(blob)
        low, high = wilson(detected, tried)
        out[family] = {
            "targeted": targeted,
            "n": tried,
            "detected": detected,
            "recall": detected / tried if tried else 0.0,
            "ci95": [low, high],
            "mean_covered_share": covered / blob_chars if blob_chars else 0.0,
            "prose_chars_flagged_share": prose_flagged / prose_chars if prose_chars else 0.0,
        }
    return out


# -- cost -------------------------------------------------------------------------------------


def _prose(size: int) -> str:
    texts = [row["answer"] for row in _rows("healthcaremagic.jsonl") if row.get("answer")]
    texts = texts or [t for group in MULTILINGUAL.values() for t in group]
    parts: list[str] = []
    total = 0
    for text in _cycle(texts):
        parts.append(text)
        total += len(text) + 1
        if total >= size:
            break
    return "\n".join(parts)[:size]


def _cycle(items: list[str]) -> Iterator[str]:
    while True:
        yield from items


def _time_per_delta(text: str, repeats: int) -> tuple[float, float]:
    deltas = [text[i : i + DELTA] for i in range(0, len(text), DELTA)]
    tail_from = int(len(deltas) * 0.9)
    best_all = best_tail = math.inf
    for _ in range(repeats):
        detector = UnnaturalTextDetector()
        feed = detector.feed
        clock = time.process_time  # CPU time: the machine is shared, wall time counts other jobs
        t0 = clock()
        for d in deltas[:tail_from]:
            feed(d)
        t1 = clock()
        for d in deltas[tail_from:]:
            feed(d)
        t2 = clock()
        detector.flush()
        best_all = min(best_all, (t2 - t0) / len(deltas) * 1e6)
        best_tail = min(best_tail, (t2 - t1) / (len(deltas) - tail_from) * 1e6)
    return best_all, best_tail


def run_cost(repeats: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for size in (1_000, 10_000, 100_000):
        prose = _prose(size)
        blob = base64.b64encode(prose.encode("utf-8")).decode()[:size]
        for kind, text in (("prose", prose), ("base64", blob)):
            per_delta, tail = _time_per_delta(text, repeats if size < 100_000 else max(1, repeats // 2))
            out[f"{kind}-{size}"] = {"chars": len(text), "us_per_delta": per_delta, "us_per_delta_last_10pct": tail}
    return out


# -- report -----------------------------------------------------------------------------------


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def render(results: dict[str, Any]) -> str:
    params = results["params"]
    lines = [
        "# Unnatural-output detector (`ragshield.guards.release.unnatural`)",
        "",
        "Generated by `benchmarks/unnatural.py`; every rate with n and a Wilson 95% CI. "
        f"Defaults: min_run_chars={params['min_run_chars']}, threshold={params['threshold']}, "
        f"holdback_chars={params['holdback_chars']}; answers fed in {DELTA}-character deltas.",
        "",
    ]
    if "fpr" in results:
        lines += [
            "## False positives on benign answers",
            "",
            "An answer counts as flagged when any span is reported. The costs were tuned on the `dev` halves, "
            "the special cases and the multilingual prose; the `heldout` halves were not looked at while tuning.",
            "",
            "| set | n | flagged | rate | 95% CI | flagged chars / chars |",
            "|---|---|---|---|---|---|",
        ]
        for name, row in results["fpr"].items():
            low, high = row["ci95"]
            lines.append(
                f"| {name} | {row['n']} | {row['flagged']} | {_pct(row['rate'])} | {_pct(low)}-{_pct(high)} "
                f"| {row['flagged_chars']} / {row['chars']} |"
            )
        lines.append("")
    if "recall" in results:
        lines += [
            "## Recall per encoding family",
            "",
            f"Real record snippets (30-120 characters) encoded, kept when the encoding is >= 60 characters, "
            f"embedded between two prose sentences. Detected = >= {int(COVERED * 100)}% of the blob's characters "
            "flagged. `covered` is the mean share of blob characters flagged; `prose flagged` the share of the "
            "surrounding prose characters flagged (span overshoot).",
            "",
            "| family | targeted | n | detected | recall | 95% CI | covered | prose flagged |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, row in results["recall"].items():
            low, high = row["ci95"]
            lines.append(
                f"| {name} | {'yes' if row['targeted'] else 'no'} | {row['n']} | {row['detected']} | "
                f"{_pct(row['recall'])} | {_pct(low)}-{_pct(high)} | {_pct(row['mean_covered_share'])} | "
                f"{_pct(row['prose_chars_flagged_share'])} |"
            )
        lines.append("")
    if "cost" in results:
        lines += [
            "## Cost per delta",
            "",
            f"CPython {sys.version.split()[0]}, CPU time (`time.process_time`), best of repeated runs, "
            f"{DELTA}-character deltas fed to the detector alone, load average {results.get('load_average', '?')} "
            f"on {os.cpu_count()} cores while measured (shared machine); `last 10%` is the mean over the last "
            "tenth of the answer (equal to the overall mean when the cost is flat). Plain prose words are scored "
            "in one step (`unnatural_scan.py`); base64 goes character by character. Tables before December 2026 "
            "used wall-clock time and are not comparable; the before/after comparison, measured in one run, is in "
            "[release.md](release.md#cost) (`echo+unnatural` minus `echo` is the detector's share).",
            "",
            "| answer | chars | us / delta | us / delta, last 10% |",
            "|---|---|---|---|",
        ]
        for name, row in results["cost"].items():
            lines.append(
                f"| {name} | {row['chars']} | {row['us_per_delta']:.2f} | {row['us_per_delta_last_10pct']:.2f} |"
            )
        lines.append("")
    lines += NOTES
    return "\n".join(lines)


NOTES = [
    "## Reading",
    "",
    "- How it works: every character gets a cost from its Unicode class, its neighbours and the shape of its "
    "word or number (prose letters earn a negative cost; case switches inside words, letters glued to digits, "
    "one-letter words and lines, vowel-poor words, long alphanumeric runs, numbers separated by bare spaces, "
    "escapes, punctuation-only words, symbols, format characters, repeated words and NATO chains cost). A CUSUM "
    "of the costs reports a run once it reaches the threshold over at least min_run_chars characters. No list "
    "of encodings is involved except the 26 NATO words.",
    "- False positives on real answers: none on HealthcareMagic doctor answers or the multilingual prose. The "
    "Enron bodies that are flagged are mostly text that is itself unnatural: quoted-printable residue "
    "(`=09=09`, `=3D=3D`), Exchange addresses (`IMCEANOTES-+22...+40ENRON`), mail headers with hex "
    "(`FILETIME=[F8E60810:01C15E64]`), spaced-out banner letters (`T H E  P O W E R`), long feed paths with "
    "digit runs, attachment lists (`<<2250-G_Form79-845.doc>>`), lists of bare ID numbers, and ALL CAPS "
    "acronym lists with phone numbers. As a release guard, withholding those is mostly harmless, but they count "
    "here as false positives.",
    "- Special cases flagged: a 5-row table of bare numbers with one-letter units (`| 0 h | 2 h |`) and an "
    "answer quoting a UUID and a SHA-1 hash in one sentence (hex, 102 characters with the words between). "
    "The brief's must-pass cases (code, the markdown table with a header, contact details, URL, dates, dosage "
    "list, numbered sentences, order #A12-99812) pass, and unit tests pin them.",
    "- Misses: letters interleaved with *random* filler letters are caught only half the time (the vowel share "
    "and consonant-cluster costs are the only signal; a fixed filler letter or a capital filler is caught "
    "always). Not targeted and mostly not caught: rot13, reversed text (they look like words; the echo guard "
    "compares them with the retrieved chunks). Leetspeak and doubled letters are caught although not targeted.",
    "- Span edges: a span starts at the first character of the blob's token and ends where the cost peaked; "
    "it can take a separator and a following one-letter word (`I`) with it (`prose flagged` column).",
    "",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sections", nargs="+", default=["fpr", "recall", "cost"], choices=["fpr", "recall", "cost"])
    parser.add_argument("--per-source", type=int, default=200, help="benign answers per real-data half")
    parser.add_argument("--records", type=int, default=60, help="record snippets per encoding family")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "unnatural.json")
    parser.add_argument("--doc", type=Path, default=REPO / "docs" / "results" / "unnatural.md")
    args = parser.parse_args(argv)
    if not _data_dir().exists():
        print(f"real data not found at {_data_dir()} (set RAGSHIELD_SHARED_DATA); real-data rows are empty")
    detector = UnnaturalTextDetector()
    results: dict[str, Any] = {
        "params": {
            "min_run_chars": detector.min_run_chars,
            "threshold": detector.threshold,
            "holdback_chars": detector.holdback_chars,
            "delta_chars": DELTA,
        }
    }
    if "fpr" in args.sections:
        results["fpr"] = run_fpr(args.per_source)
    if "recall" in args.sections:
        results["recall"] = run_recall(args.records)
    if "cost" in args.sections:
        results["load_average"] = round(os.getloadavg()[0], 1)
        results["cost"] = run_cost(args.repeats)
    # a partial run keeps the other sections' results (and the report shows them all)
    earlier = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
    results = {**earlier, **results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    report = render(results)
    print(report)
    args.doc.parent.mkdir(parents=True, exist_ok=True)
    args.doc.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
