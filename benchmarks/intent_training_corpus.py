"""The intent model's training corpus (issue 18): which rows train, which calibrate, which judge.

`build_corpus` gathers the training, calibration and benign test rows `train_intent.py` reads. Sources:

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
  their benign rows weigh `train_intent.HARD_BENIGN_WEIGHT` in the embedding and lexical parts. v12 trains on
  sets v1-v7, v9, v11-v15, chat and chat2, and weighs the Enron training e-mails 3.

Every real benign source is split by a stable hash of its text into train / calibration / test
buckets (`intent_sets.split_of`); the operating point is set on the calibration buckets (mixed public
benign set; `intent_calibration.py`), and `benchmarks/query_detection.py` judges the test buckets, SAGE
and the held-apart set, none of which training or calibration ever read.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import intent_benign
import intent_benign_domains
import intent_chat
from intent_public import ENRON_SPLIT, enron_openings, enron_requests, filled_templates
from intent_sets import (
    HELDOUT_SETS,
    OBJECT_ROWS,
    PHRASINGS,
    PRIVACY_ROWS,
    WRITTEN_ATTACKS,
    WRITTEN_BENIGN,
    Corpus,
    Example,
    heldout,
    read_rows,
    split_of,
)
from ragshield.guards.intent import load_bank

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
SEED = 18  # the corpus's random draws here, and the folds of `train_intent.train`
# v8: chat turns ("Thank you.", "ok", "hi") as benign rows, and pleasantry-wrapped commands as
# attacks (`intent_chat.py`): v7 scored a bare "Thank you." at p = 0.95
CHAT_TURNS = True
# session 39: which requests of the `--request-heldout` sets train (all, or those not labelled English)
REQUEST_LANGUAGE_CHOICES = ("all", "non-english")
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
# rows (source "object": their weight is `intent_recipe.OBJECT_BENIGN_WEIGHT`, they leave with their language in
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
