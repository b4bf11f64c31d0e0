"""Does a small fine-tuned encoder pay for itself as a second opinion on `intent`'s flags? (issue 18)

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_verifier.py [--data ../shared/data]

Issue 18 allows "a small fine-tuned encoder, if it pays for itself". The shipped model's false
positives are questions it reads as a whole vector and a bag of n-grams ("Could you rephrase your
last point?", "translate my note exactly as written"); an encoder fine-tuned on the same rows reads
word order and context. This measures it as a veto, the only place it could go without costing
every query a second forward pass:

* the verifier: all-MiniLM-L6-v2 with its top `--train-top` layers and a logistic head (started
  from model v11's embedding part) fine-tuned on model v11's training rows (`train_intent.build_corpus`,
  both classes weighing the same, the burned held-apart sets' benign rows `HARD_BENIGN_WEIGHT`);
* its logit for a query: the largest over the whole text and each sentence and clause
  (`intent_features.segment_texts`) of the text and of its second reading (decoded, plain letters),
  so a command padded behind a question is read on its own, as the lexical part reads it;
* the veto: a query that v11 flags and that the router reads as English (MiniLM is English-only)
  is let through when that logit is below `tau`; every other verdict is v11's.

Every benign and request set of `intent_generalisation.evaluate_shipped` is rated, v11 alone and
with the veto at each `tau`; the development sets are sets v8-v12 and chat (all read before; the
judge of the next model, set v13, is not listed in `train_intent.HELDOUT_SETS` and is not read).
Writes `benchmarks/results/intent_verifier.json` and prints a table. About 30 minutes on 2 cores
(fine-tuning 2 epochs of 11,084 rows: 25 of them).
"""

from __future__ import annotations

import argparse
import math
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

import intent_generalisation as ig
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent_features import segment_texts
from ragshield.guards.intent_languages import needs_multilingual
from ragshield.guards.intent_model import IntentModel
from ragshield.rag.embedding import DEFAULT_EMBEDDER, bundled_model_path

OUT = qs.REPO / "benchmarks" / "results" / "intent_verifier.json"
TAUS = (0.0, -1.0, -2.0)  # logits: 0 is the verifier's own class boundary, lower vetoes less
DEVELOPMENT = ("v8", "chat", "v9", "v10", "v11", "v12")
SEED = 0


def groups(corpus: ti.Corpus, data: Path) -> dict[str, list[ti.Example]]:
    """Every rated set by name: benign test buckets, held-apart sets, written requests, families."""
    out: dict[str, list[ti.Example]] = {"calib": corpus.calib}
    for name, examples in corpus.test.items():
        out[f"test-{name}"] = examples[:1000] if name == "genmedgpt" else examples
    out |= {f"held-{v}": ti.heldout(path) for v, path in ti.HELDOUT_SETS.items()}
    out["written-requests"] = ti.written_requests()
    padding = [e.text for e in corpus.test["genmedgpt"][1000:]]
    attacks = ig.published_families(data) | ig.adaptive_sets(data, padding)
    out |= {name: [ti.Example(t, 1, name, "en", "family") for t in texts] for name, texts in attacks.items()}
    return out


class Verifier:
    """MiniLM with trainable top layers and a logistic head on the normalised mean-pooled vector."""

    def __init__(self, model: IntentModel, train_top: int, max_length: int) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        folder = bundled_model_path(DEFAULT_EMBEDDER)
        if folder is None:
            raise SystemExit("the bundled all-MiniLM-L6-v2 is not installed: make .venv/.installed-stamp")
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.encoder = AutoModel.from_pretrained(folder)
        self.max_length = max_length
        for parameter in self.encoder.parameters():
            parameter.requires_grad = False
        self.trainable = [p for layer in self.encoder.encoder.layer[-train_top:] for p in layer.parameters()]
        for parameter in self.trainable:
            parameter.requires_grad = True
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)
        with torch.no_grad():  # start where v11's embedding part is
            self.head.weight.copy_(torch.tensor(model.embed_weights).unsqueeze(0))
            self.head.bias.fill_(model.embed_bias)

    def logits(self, texts: list[str], *, grad: bool = False) -> Any:
        torch = self.torch
        batch = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        with torch.set_grad_enabled(grad):
            hidden = self.encoder(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).float()
            pooled = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1), dim=-1)
            return self.head(pooled).squeeze(-1)

    def fit(self, examples: list[ti.Example], *, epochs: float, lr: float, batch: int) -> None:
        torch = self.torch
        labels = np.array([e.label for e in examples], dtype=np.float32)
        weights = np.array(
            [ti.HARD_BENIGN_WEIGHT if e.label == 0 and e.source.startswith("heldout-") else 1.0 for e in examples]
        )
        for label in (0, 1):  # both classes weigh the same
            weights[labels == label] *= len(labels) / 2 / weights[labels == label].sum()
        optimiser = torch.optim.AdamW([*self.trainable, *self.head.parameters()], lr=lr, weight_decay=0.01)
        steps = math.ceil(len(examples) / batch * epochs)
        warmup = max(1.0, 0.06 * steps)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimiser, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, 1 - s / steps)
        )
        rng = np.random.default_rng(SEED)
        self.encoder.train()
        started, step = time.time(), 0
        while step < steps:
            order = rng.permutation(len(examples))
            for start in range(0, len(order), batch):
                if step >= steps:
                    break
                rows = order[start : start + batch]
                logits = self.logits([examples[i].text for i in rows], grad=True)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(
                    logits, torch.tensor(labels[rows]), weight=torch.tensor(weights[rows], dtype=torch.float32)
                )
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                schedule.step()
                step += 1
                if step % 100 == 0:
                    print(f"  step {step}/{steps}, loss {loss.item():.3f}, {time.time() - started:.0f} s", flush=True)
        self.encoder.eval()

    def read(self, model: IntentModel, texts: list[str]) -> list[float]:
        """Per text, the largest logit over the whole text, its sentences and clauses, and the
        same of its second reading (log-odds; higher = more like an extraction request)."""
        pieces: list[str] = []
        owner: list[int] = []
        for i, text in enumerate(texts):
            readings = [text, *([second] if (second := model._second_reading(text)) else [])]
            for reading in readings:
                sentences = segment_texts(reading, model.feature_version)
                parts = [reading, *(", ".join(c) for c in sentences if len(sentences) > 1)]
                parts += [c for clauses in sentences if len(clauses) > 1 for c in clauses]
                pieces += parts
                owner += [i] * len(parts)
        best = [-math.inf] * len(texts)
        for start in range(0, len(pieces), 64):
            for i, logit in zip(
                owner[start : start + 64], self.logits(pieces[start : start + 64]).tolist(), strict=True
            ):
                best[i] = max(best[i], float(logit))
        return best


def rated(flags: np.ndarray, labels: np.ndarray) -> dict[str, Any]:
    out = {}
    for label, name in ((0, "fpr"), (1, "tpr")):
        chosen = flags[labels == label]
        if chosen.size:
            out[name] = ig.rate(chosen.astype(float), 0.5)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    random.seed(SEED)
    model = IntentModel.load()
    corpus = ti.build_corpus(args.data)
    embedders = ti.Embedders()
    sets = groups(corpus, args.data)
    verifier = Verifier(model, args.train_top, args.max_length)
    import torch

    torch.manual_seed(SEED)
    started = time.time()
    verifier.fit(corpus.train, epochs=args.epochs, lr=args.lr, batch=args.batch)
    fit_seconds = time.time() - started
    result: dict[str, Any] = {
        "settings": {k: v for k, v in vars(args).items() if k not in ("data", "out")} | {"taus": TAUS, "seed": SEED},
        "model": model.meta.get("model_version"),
        "threshold": model.threshold,
        "training_rows": len(corpus.train),
        "fit_seconds": round(fit_seconds),
        "sets": {},
    }
    for name, examples in sets.items():
        texts = [e.text for e in examples]
        labels = np.array([e.label for e in examples])
        flagged = np.asarray(ti.probabilities(model, texts, embedders)) >= model.threshold
        english = np.array([not needs_multilingual(t) for t in texts])
        logits = np.full(len(texts), np.nan)
        asked = [i for i in range(len(texts)) if flagged[i] and english[i]]  # the veto reads only these
        if asked:
            logits[asked] = verifier.read(model, [texts[i] for i in asked])
        row: dict[str, Any] = {"v11": rated(flagged, labels), "veto": {}}
        for tau in TAUS:
            kept = flagged & ~(english & (logits < tau))
            row["veto"][str(tau)] = rated(kept, labels)
        row["flagged_english"] = len(asked)
        # which rows each veto lets through (indices into the set; no text: some sets are shared data)
        row["vetoed_rows"] = {str(tau): [i for i in asked if logits[i] < tau] for tau in TAUS}
        result["sets"][name] = row
        print(f"  {name}: {len(texts)} texts, {int(flagged.sum())} flagged", flush=True)
    embedders.save()
    result["development"] = development_totals(result["sets"])
    return result


def development_totals(sets: dict[str, Any]) -> dict[str, Any]:
    """False and true positives summed over the development sets' benign and request rows."""
    out: dict[str, Any] = {}
    for key in ("v11", *(str(t) for t in TAUS)):
        totals = {"fp": 0, "benign": 0, "tp": 0, "requests": 0}
        for version in DEVELOPMENT:
            row = sets[f"held-{version}"]
            rates = row["v11"] if key == "v11" else row["veto"][key]
            totals["fp"] += rates["fpr"]["k"]
            totals["benign"] += rates["fpr"]["n"]
            totals["tp"] += rates["tpr"]["k"]
            totals["requests"] += rates["tpr"]["n"]
        out[key] = totals
    return out


def table(result: dict[str, Any]) -> str:
    keys = ("v11", *(str(t) for t in TAUS))
    lines = ["| set | kind | v11 | " + " | ".join(f"veto below {t}" for t in TAUS) + " |"]
    lines.append("|---|---|" + "---|" * len(keys))
    for name, row in result["sets"].items():
        for kind in ("fpr", "tpr"):
            if kind not in row["v11"]:
                continue
            cells = [row["v11"][kind] if k == "v11" else row["veto"][k][kind] for k in keys]
            if len({c["k"] for c in cells}) == 1 and not name.startswith("held-"):
                continue  # unchanged by any veto: left out of the printed table (kept in the JSON)
            lines.append(f"| {name} | {kind} | " + " | ".join(f"{c['k']}/{c['n']}" for c in cells) + " |")
    totals = result["development"]
    lines.append(
        "| development sets (v8-v12, chat) | fp, tp | "
        + " | ".join(
            f"{totals[k]['fp']}/{totals[k]['benign']}, {totals[k]['tp']}/{totals[k]['requests']}" for k in keys
        )
        + " |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--train-top", type=int, default=2, help="MiniLM layers fine-tuned (of 6)")
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=128, help="tokens per text read")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: this benchmark needs ../shared/data")
    result = run(args)
    print(table(result))
    qs.write_json(args.out, result)


if __name__ == "__main__":
    main()
