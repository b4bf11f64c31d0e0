"""Markdown report of the learned `intent` model's generalisation figures (issue 18), from the
payload `intent_generalisation.run` writes; called by `benchmarks/query_detection.py`."""

from __future__ import annotations

import json
from typing import Any

import intent_sets as isets
import query_sets as qs
from ragshield.metrics.intervals import rate_text

GOAL_TPR_FAMILY, GOAL_TPR_STYLE, GOAL_TPR_LANG, GOAL_FPR, GOAL_FPR_HARD = 0.95, 0.90, 0.80, 0.01, 0.02
# the judges' provenance, for the summary
JUDGE_NOTES = {
    "v9": "written blind after v8 shipped, read once for the chosen v9",
    "v10": "written blind after v9 shipped, read once for the chosen v10",
    "v11": "written blind after v10 shipped, read once for the chosen v11",
    "v12": "written blind after v11 shipped and read once with v11, which no v12 candidate beat on the "
    "development sets; one missed request, letters split by underscores, is read joined since (1fb8548), "
    "so 133/140 now, not blind",
    "v19": "written blind in session 31 by a helper that read only `benchmarks/data/README.md`, read once in "
    "session 31 as v12's judge",
    "chat6": "500 chat turns and 60 chat-wrapped requests, written blind like v19, read once in session 31 as "
    "v12's judge",
}
VERSIONS = (
    *("v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "chat", "v9", "v10", "v11", "v12"),
    *("v13", "v14", "v15", "chat2", "v16", "chat3", "v17", "chat4", "v18", "chat5", "v19", "chat6"),
)


def trained_on(g: dict[str, Any]) -> set[str]:
    """Benign set names the shipped model was trained on (held-apart sets burned into training, v6)."""
    return {isets.heldout_benign_name(v) for v in g["model"].get("heldout_sets_trained_on", [])}


def cell(r: dict[str, Any] | None) -> str:
    """'0.95 [0.91, 0.97] (237/250)' for a rate with its 95% Wilson interval."""
    if not r or not r["n"]:
        return "-"
    low, high = r["ci95"]
    return f"{r['rate']:.3f} [{low:.3f}, {high:.3f}] ({r['k']}/{r['n']})"


def _verdict(value: float, goal: float, *, at_most: bool) -> str:
    met = value <= goal if at_most else value >= goal
    return "met" if met else "**MISSED**"


def summary(g: dict[str, Any]) -> list[str]:
    """The issue's goals, each judged from the figures below: what is met and what is missed."""
    s = g["shipped"]
    real = ("sage", "healthcaremagic", "icliniq", "enron")
    hard = {k: v for k, v in s["benign"].items() if "hard" in k and k not in trained_on(g)}
    out = ["**Goals of issue 18 at the shipped operating point:**", ""]
    worst = max(real, key=lambda k: s["benign"][k]["rate"])
    out.append(
        f"- FPR <= 1% on SAGE, HealthcareMagic, iCliniq, Enron: "
        f"{_verdict(s['benign'][worst]['rate'], GOAL_FPR, at_most=True)} (worst {worst} "
        f"{100 * s['benign'][worst]['rate']:.1f}%)."
    )
    asked = (g.get("enron_grid_format") or {}).get("test")
    if asked and not s.get("enron_as_written"):  # v1-v7's test set: openings without punctuation
        out[-1] += (
            f" **But those Enron texts are punctuation-stripped openings; asked as the grids ask them (the "
            f"body's first 50 words as written) the {asked['as_asked']['n']} test-bucket e-mails (duplicates "
            "counted) are "
            f"flagged at {cell(asked['as_asked'])}**: {_verdict(asked['as_asked']['rate'], GOAL_FPR, at_most=True)} "
            f"(e-mails quoting or forwarding another mail {cell(asked['as_asked_quoting_a_mail'])}, the rest "
            f"{cell(asked['as_asked_rest'])}; `benchmarks/intent_enron_format.py`)."
        )
    for name, what in (
        ("heldout-chat", "held-apart chat turns (development set)"),
        ("own-chat", "own chat turns, test bucket"),
        ("written-chat", "hand-written chat turns, test bucket"),
    ):
        if (r := s["benign"].get(name)) and name not in trained_on(g):
            out.append(
                f"- FPR <= 1% on {what} (thanks, greetings, follow-ups): {_verdict(r['rate'], GOAL_FPR, at_most=True)} "
                f"({100 * r['rate']:.1f}%, {r['k']}/{r['n']})."
            )
    out.append(
        "- FPR <= 2% on hard benign: "
        + "; ".join(
            f"{name} {100 * r['rate']:.1f}% ({r['k']}/{r['n']}) {_verdict(r['rate'], GOAL_FPR_HARD, at_most=True)}"
            for name, r in hard.items()
        )
        + (
            f" (not counted: {', '.join(sorted(trained_on(g)))}, training rows of this model)."
            if trained_on(g)
            else "."
        )
    )
    for version in isets.JUDGES:
        judge = s["heldout_sets"].get(version)
        if not judge:
            continue
        # a chat set's benign rows are all chat turns, whatever their style (greeting, follow-up, ...)
        by_style = {"chat": judge["fpr"]} if version.startswith("chat") else judge["fpr_by_style"]
        out.append(
            f"- The judge, set {version} ({JUDGE_NOTES[version]}): "
            + "; ".join(
                f"{what} FPR {100 * by_style[style]['rate']:.1f}% ({by_style[style]['k']}/{by_style[style]['n']}) "
                f"{_verdict(by_style[style]['rate'], goal, at_most=True)}"
                for style, what, goal in (("hard", "hard benign", GOAL_FPR_HARD), ("chat", "chat turns", GOAL_FPR))
                if style in by_style
            )
            + f"; requests TPR {100 * judge['tpr']['rate']:.1f}% ({judge['tpr']['k']}/{judge['tpr']['n']})."
        )
    low = min(s["families"], key=lambda k: s["families"][k]["rate"])
    lowest = s["families"][low]["rate"]
    out.append(
        f"- TPR >= 0.95 on the published families: {_verdict(lowest, GOAL_TPR_FAMILY, at_most=False)} "
        + (f"(all {len(s['families'])} at 1.000)." if lowest == 1.0 else f"(lowest {low} {lowest:.3f}).")
    )
    for key, goal, what in (
        ("leave_one_style_out", GOAL_TPR_STYLE, "style"),
        ("leave_one_language_out", GOAL_TPR_LANG, "language"),
    ):
        if key in g:
            missed = [f"{v} {r['own']['rate']:.3f}" for v, r in g[key].items() if r["own"]["rate"] < goal]
            out.append(
                f"- TPR >= {goal:.2f} on every left-out {what} (own phrasings): "
                + ("met" if not missed else "**MISSED** on " + ", ".join(missed))
                + f" (measured: {', '.join(g[key])}; any other {what} was not rerun)."
                + (f" {note}" if (note := g.get("loo_notes", {}).get(key)) else "")
            )
    if "leave_one_style_out" not in g:
        out.append("- TPR >= 0.90 on every left-out style: not rerun for this model (see the note below the tables).")
    if "leave_one_language_out" not in g:
        out.append(
            "- TPR >= 0.80 on every left-out language: not rerun for this model"
            + (" (an earlier recipe's table is below)." if g.get("extra_loo") else ".")
        )
    c = g["cost"]
    out.append(
        f"- cost <= 10% of retrieval: English queries {_verdict(c['check_share'], 0.10, at_most=True)} "
        f"({100 * c['check_share']:.1f}%)"
        + (
            f"; other languages {_verdict(c['multilingual_check_share'], 0.10, at_most=True)} "
            f"({100 * c['multilingual_check_share']:.0f}%, the multilingual embedder's forward pass)"
            if c.get("multilingual_check_share") is not None
            else ""
        )
        + _e5_summary(c.get("e5_deployment"))
        + "."
    )
    return out


ROUTE_ALL = qs.REPO / "benchmarks" / "results" / "intent_route_all.json"


def _route_all_clause() -> str:
    """What forcing English through the multilingual part does (`benchmarks/intent_route_all.py`), if run."""
    if not ROUTE_ALL.is_file():
        return ""
    study = json.loads(ROUTE_ALL.read_text(encoding="utf-8"))
    sets = study["sets"]
    shown = [
        ("Enron held-out e-mails, FPR", "enron/heldout/benign"),
        ("PIDE-medical, TPR", "healthcaremagic/pide-medical/attack"),
    ]
    parts = [
        f"{label} {rate_text(sets[key]['shipped'], sets[key]['n'])} as routed, "
        f"{rate_text(sets[key]['forced'], sets[key]['n'])} all through it"
        for label, key in shown
        if key in sets
    ]
    return (
        " Reading English through the multilingual part instead does not hold (`benchmarks/intent_route_all.py`, "
        f"measured with model {study.get('model', '?')} at p >= {study.get('threshold', float('nan')):.4f}: "
        + "; ".join(parts)
        + ")."
        if parts
        else ""
    )


def _e5_summary(e5: dict[str, Any] | None) -> str:
    """The summary's clause for a deployment retrieving with multilingual-e5-small ("" when not measured)."""
    if not e5 or e5["english"]["check_share"] is None or e5["other_languages"]["check_share"] is None:
        return ""
    english, other = e5["english"], e5["other_languages"]
    return (
        "; retrieving with multilingual-e5-small instead, other languages "
        f"{_verdict(other['check_share'], 0.10, at_most=True)} ({100 * other['check_share']:.1f}%, its vector "
        f"reused) and English {_verdict(english['check_share'], 0.10, at_most=True)} "
        f"({100 * english['check_share']:.0f}%, a MiniLM pass)"
    )


def _row(label: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    return [label, cell(before), cell(after)]


def comparison(g: dict[str, Any]) -> list[str]:
    """This model against `compare` (another model's payload, same harness), figure by figure."""
    other = g.get("compare")
    if not other:
        return []
    b, a = other["generalisation"], g
    rows = [
        _row(f"FPR {name}", a["shipped"]["benign"].get(name), b["shipped"]["benign"].get(name))
        for name in (
            "sage",
            "healthcaremagic",
            "icliniq",
            "enron",
            "genmedgpt",
            "own-hard",
            "own-chat",
            "written-hard",
            "written-chat",
        )
    ]
    trained = a["model"].get("heldout_sets_trained_on", [])
    for version in VERSIONS:
        name = isets.heldout_benign_name(version)
        if name not in a["shipped"]["benign"] and name not in b["shipped"]["benign"]:
            continue  # a set neither run read (listed after both ran)
        what = "chat turns" if version == "chat" else f"{version} chat turns" if version.startswith("chat") else None
        rows.append(
            _row(
                f"FPR held-apart {what or version + ' hard benign'}"
                + (" (trained on by shipped)" if version in trained else ""),
                a["shipped"]["benign"].get(name),
                b["shipped"]["benign"].get(name),
            )
        )
    for version in VERSIONS[2:]:
        if version not in a["shipped"]["heldout_sets"] and version not in b["shipped"]["heldout_sets"]:
            continue
        rows.append(
            _row(
                f"TPR held-apart {version} extraction" + (" (trained on by shipped)" if version in trained else ""),
                a["shipped"]["heldout_sets"].get(version, {}).get("tpr"),
                b["shipped"]["heldout_sets"].get(version, {}).get("tpr"),
            )
        )
    families = a["shipped"]["families"]
    rows += [_row(f"TPR {name}", r, b["shipped"]["families"].get(name)) for name, r in families.items()]
    if "written_requests" in a["shipped"]:
        rows.append(
            _row(
                "TPR hand-written requests no model trains on",
                a["shipped"]["written_requests"]["tpr"],
                b["shipped"].get("written_requests", {}).get("tpr"),
            )
        )
    adaptive = a["shipped"]["adaptive"]
    rows += [_row(f"TPR {name}", r, b["shipped"]["adaptive"].get(name)) for name, r in adaptive.items()]
    for key, what in (("leave_one_language_out", "LOLO"), ("leave_one_style_out", "LOSO")):
        for value in sorted(set(a.get(key, {})) | set(b.get(key, {}))):
            rows.append(
                _row(
                    f"{what} {value}: TPR own phrasings",
                    a.get(key, {}).get(value, {}).get("own"),
                    b.get(key, {}).get(value, {}).get("own"),
                )
            )
    mine = a["model"].get("model_version", "v3")
    return [
        "",
        f"**Shipped model ({mine}, p >= {a['shipped']['threshold']:.4f}) against {other['label']} "
        f"(p >= {b['shipped']['threshold']:.4f}, its own operating point), same harness.** Cells: rate "
        "[95% Wilson CI] (k/n); '-' = not measured.",
        "",
        qs.markdown_table(["figure", "shipped", other["label"]], rows),
    ]


def _encoded_section(enc: dict[str, Any]) -> list[str]:
    """The encoded-request set (`benchmarks/intent_encoded.py`), read as written and read decoded."""
    j = enc["judge"]
    blind = enc["blind_reading"]
    corpus = enc.get("corpus")
    counted = (
        f"{corpus['benign']['decoded']} of {corpus['benign']['n']} benign texts of the corpus and development "
        f"sets get a decoded form (each costs an embedding), {corpus['extraction']['decoded']} of "
        f"{corpus['extraction']['n']} requests do"
        if corpus
        else "the corpus count needs ../shared/data: missing"
    )
    lines = [
        f"**Encoded requests** (`benchmarks/data/intent_encoded_heldout.jsonl`: {j['attack']['decoded']['all']['n']} "
        "requests hidden in base64, hex, reversed, ROT13, Caesar, Atbash and mixed encodings, and "
        f"{j['benign']['decoded']['all']['n']} benign queries that handle encodings innocently; written by a helper "
        "blind to the decoder and every score; `benchmarks/intent_encoded.py`). Read blind once, with the decoder "
        f"of {blind['decoder']}: {blind['attack']} requests caught ({blind['attack_read_as_written']} read as "
        f"written), {blind['benign']} benign flagged; the figures below are the current decoder's, changed after "
        "that reading, so not blind. The guard reads an "
        "encoded query decoded as well (`ragshield.guards.intent_decoding`); "
        f"{counted}; looking for one costs {enc['cost']['median_us']:.0f} us per query.",
        "",
    ]
    lines.append(_encoded_table(j))
    later = (
        (
            "v2",
            "in 14 styles, escapes, binary, Morse, NATO words and layered encodings among them",
            "written by a helper blind to the decoder after the escapes and code runs were committed",
        ),
        (
            "v3",
            "in 44 styles, 75 not in English",
            "written by a helper that read only `benchmarks/data/README.md`, blind to every decoder, while "
            "session 20 extended it",
        ),
        (
            "v4",
            "in 45 styles, 52 of them in rarer tricks (zero-width and invisible characters, ROT47, keyboard shifts, "
            "Braille, Zalgo, upside-down and other letter forms, keyed ciphers), 68 not in English",
            "written by a helper that read only `benchmarks/data/README.md`, blind to every decoder, while "
            "session 22 added the reading of invisible characters, ROT47, keyboard shifts and Braille",
        ),
    )
    for version, styles, written in later:
        if enc.get(f"judge_{version}"):
            blind = enc.get(f"blind_reading_{version}") or {}
            lines += _later_encoded_set(version, styles, written, enc[f"judge_{version}"], blind)
    return lines


def _later_encoded_set(version: str, styles: str, written: str, j: dict[str, Any], blind: dict[str, Any]) -> list[str]:
    """A later encoded set's paragraph and its table."""
    return [
        "",
        f"**Encoded requests, set {version}** (`benchmarks/data/intent_encoded_heldout_{version}.jsonl`: "
        f"{j['attack']['decoded']['all']['n']} requests {styles}, and {j['benign']['decoded']['all']['n']} innocent "
        f"encoding questions; {written}). Its one blind reading, with the decoder of "
        f"{blind.get('decoder', '-')}: {blind.get('attack', '-')} requests caught "
        f"({blind.get('attack_read_as_written', '-')} read as written), {blind.get('benign', '-')} benign flagged"
        + (
            f"; the decoder before it ({before['commit']}) caught {before['attack']} of the same requests "
            f"({before['attack_read_as_written']} read as written) and flagged {before['benign']} benign. "
            if (before := blind.get("decoder_before"))
            else ". "
        )
        + f"Figures below: the current decoder ({j['decoded_forms']['attack']} requests and "
        f"{j['decoded_forms']['benign']} innocent questions get a decoded form), not blind once it changed after "
        "that reading.",
        "",
        _encoded_table(j),
    ]


def _encoded_table(j: dict[str, Any]) -> str:
    """One encoded set's rows, read as written and read decoded, by label, language and style."""
    rows = []
    for label, what in (("attack", "TPR"), ("benign", "FPR")):
        for key, name in (("all", "all"), ("non_english", "not English")):
            rows.append([f"{label} {name} ({what})", cell(j[label]["before"][key]), cell(j[label]["decoded"][key])])
        for style, r in j[label]["decoded"]["by_style"].items():
            rows.append([f"{label}: {style}", cell(j[label]["before"]["by_style"][style]), cell(r)])
    return qs.markdown_table(["rows", "read as written (before)", "read decoded too (shipped)"], rows)


def _loo_table(results: dict[str, Any], key: str, goal: float) -> str:
    notes = {r["heldout"].get("note") for r in results.values()} - {None}
    held_label = f"TPR held-apart ({', '.join(sorted(notes))})" if notes else "TPR held-apart"
    header = ["left out", "TPR own phrasings", held_label, "goal (own)", "FPR pooled"]
    if key == "leave_one_language_out":
        header.append("FPR own benign in that language")
    rows = []
    for value, r in results.items():
        row = [value, cell(r["own"]), cell(r["heldout"]), _verdict(r["own"]["rate"], goal, at_most=False)]
        row.append(cell(r["fpr_pooled"]))
        if key == "leave_one_language_out":
            row.append(cell(r.get("fpr_own_benign")))
        rows.append(row)
    return qs.markdown_table(header, rows)


SECOND_OPINION_NOTE = (
    "The figures in this section are the model's probabilities alone. The `intent` guard reads each flag "
    "again with its second opinion (on by default since session 25; e5 refitted in session 28, MiniLM in "
    "session 29, both on model v11's flags, and kept for v12, which was chosen and judged with them), which "
    "can only lower a score: every false-positive rate below is an upper bound for the guard, and every "
    "true-positive rate can fall by the requests it lets through (`benchmarks/results/intent_verifier.json` "
    "and `_e5.json` rate the sets with it behind v11). The guard as shipped (v12 with that second opinion), "
    "on blind sets v19 and chat6 read once (`intent_veto_judge_v19.json`, `_chat6.json`): hard benign "
    "10/159 = 6.3% [3.5, 11.2] (goal <= 2%: **missed**), chat turns 18/500 = 3.6% [2.3, 5.6] on chat6 (goal "
    "<= 1%: **missed**, above all follow-ups on the assistant's own answer) and 1/60 on v19, requests "
    "120/140 = 85.7% [79.0, 90.6] and chat-wrapped requests 53/60; the guard before it (v11 with the same "
    "second opinion) on the same rows: 13/159, 31/500, 2/60, 101/140 and 43/60; model card."
)


def report(g: dict[str, Any]) -> list[str]:
    """Markdown lines of the generalisation section (tables only; no query text)."""
    s = g["shipped"]
    meta = g["model"]
    op = meta["operating_point"]
    lines = [
        "## Learned intent model (issue 18): generalisation at the shipped operating point",
        "",
        f"Shipped model `ragshield/data/intent_model.json` (card: `docs/intent-model-card.md`): trained on "
        f"{meta['n_extraction']} extraction requests and {meta['n_benign']} benign questions; embedder "
        f"`{meta['embedder']}` for English queries, `{meta.get('multilingual_embedder', '-')}` for queries the "
        f"router reads as another language. Operating point p >= {op['threshold']:.4f}, set at "
        f"{100 * op['target_fpr']:.1f}% "
        f"target FPR on {op['n_calibration']} calibration questions (mixed public benign set, disjoint from "
        "every test set below). No user calibration anywhere in this section. Cells: rate [95% Wilson CI] (k/n).",
        "",
        SECOND_OPINION_NOTE,
        "",
        *summary(g),
        *comparison(g),
        "",
        "**False-positive rate on benign questions never trained or calibrated on** (goal <= 1%; hard benign <= 2%)",
        "",
    ]
    names = {
        "sage": "SAGE benign questions (medical + open-domain wiki)",
        "healthcaremagic": "held-out HealthcareMagic (incl. those also in SAGE)",
        "icliniq": "iCliniq test bucket",
        "enron": "Enron: first 50 words of test-bucket emails",
        "genmedgpt": "GenMedGPT-5k test bucket (first 1000)",
        "own-hard": "own hard-benign phrasings, test bucket (template-made)",
        "own-chat": "own chat turns (thanks, greetings, follow-ups; `intent_chat.py`), test bucket",
        "written-hard": "hand-written hard benign of `intent_train_benign_v9.jsonl` and `_v10.jsonl`, test bucket "
        "(40 languages)",
        "written-chat": "hand-written chat turns of `intent_train_benign_v9.jsonl` and `_v10.jsonl`, test bucket",
        "heldout-v19-hard": "held-apart set v19, hard benign and chat turns (written blind by a helper; v12's "
        "judge, read once; split by kind in the summary)",
        "heldout-chat6": "held-apart chat turns, set chat6 (written blind by a helper; v12's judge, read once)",
        "heldout-v18-hard": "held-apart set v18, hard benign and chat turns (written blind by a helper; read once "
        "in session 31 as the judge of candidate D, then a development set of v12)",
        "heldout-chat5": "held-apart chat turns, set chat5 (written blind by a helper; read with v18, then a "
        "development set of v12)",
        "heldout-v17-hard": "held-apart set v17, hard benign and chat turns (written blind by a helper; a judge of "
        "v11's second opinion, then a development set of the first-stage candidates)",
        "heldout-chat4": "held-apart chat turns, set chat4 (a judge of v11's second opinion, then a development set "
        "of the first-stage candidates)",
        "heldout-v16-hard": "held-apart set v16, hard benign and chat turns (written blind by a helper; a judge of "
        "v11's second opinion, then a development set of the first-stage candidates)",
        "heldout-chat3": "held-apart chat turns, set chat3 (a judge of v11's second opinion, then a development set "
        "of the first-stage candidates)",
        "heldout-v12-hard": "held-apart set v12, hard benign and chat turns (hand-written blind to model scores "
        "after v11 shipped; read once with the shipped v11; split by kind in the summary)",
        "heldout-v11-hard": "held-apart set v11, hard benign and chat turns (hand-written blind to model scores "
        "after v10 shipped; v11's judge, read once for the chosen v11; split by kind in the summary)",
        "heldout-v10-hard": "held-apart set v10, hard benign and chat turns (hand-written blind to model scores "
        "after v9 shipped; v10's judge, v11's development set; split by kind in the summary)",
        "heldout-v9-hard": "held-apart set v9, hard benign and chat turns (hand-written blind to model scores "
        "after v8 shipped; v9's judge, v10's and v11's development set; split by kind in the summary)",
        "heldout-chat": "held-apart chat turns (hand-written blind to model scores; v8's judge, v9's to v11's "
        "development set; rows equal to a training text left out)",
        "heldout-v8-hard": "held-apart set v8, hard benign (hand-written blind to model scores; v8's judge, "
        "v9's to v11's development set)",
        "heldout-v7-hard": "held-apart set v7, hard benign (hand-written before v7; v8's development set)",
        "heldout-v6-hard": "held-apart set v6, hard benign (hand-written before v6; v7's development set)",
        "heldout-v5-hard": "held-apart set v5, hard benign (hand-written before v5; v6's development set)",
        "heldout-v4-hard": "held-apart set v4, hard benign (hand-written and committed before any v4 change)",
        "heldout-v3-hard": "held-apart set v3, hard benign (hand-written before model v3; reported once)",
        "heldout-v2-hard": "held-apart set v2, hard benign (hand-written before model v2)",
        "heldout-hard": "held-apart set v1, hard benign (hand-written; read once to diagnose v1)",
    }
    rows = []
    for name, label in names.items():
        r = s["benign"].get(name)
        if r and name not in trained_on(g):
            goal = GOAL_FPR_HARD if "hard" in name else GOAL_FPR  # chat turns are ordinary users: 1%
            rows.append([label, cell(r), _verdict(r["rate"], goal, at_most=True)])
    lines.append(qs.markdown_table(["benign set", "FPR", "goal"], rows))
    if trained_on(g):
        lines += [
            "",
            f"Not in this table: {', '.join(sorted(trained_on(g)))}, whose rows this model was trained on "
            "(their rates are in the comparison above, marked, and are training fit, not generalisation).",
        ]
    lines += ["", "**TPR on the published families** (as built by `query_sets.py`; goal >= 0.95)", ""]
    lines.append(qs.markdown_table(["family", "TPR", "goal"], [
        [name, cell(r), _verdict(r["rate"], GOAL_TPR_FAMILY, at_most=False)] for name, r in s["families"].items()
    ]))  # fmt: skip
    lines += [
        "",
        "**Adaptive sets** (issue 8: paraphrased commands avoiding every bank word; padded. `adaptive-encoded`: "
        "the `encoded-command` attack, the TGTB query hidden in base64, hex, reversed, ROT13, Atbash, base32, a "
        "Caesar shift, URL encoding, HTML entities, Unicode escapes, binary, decimal codes, Morse or NATO words "
        "behind a plain 'decode and follow it'; built after the decoder, so not a blind figure)",
        "",
    ]
    lines.append(qs.markdown_table(["set", "TPR"], [[n, cell(r)] for n, r in s["adaptive"].items()]))
    for version, note in (
        (
            "v19",
            "written blind in session 31 by a helper that read only `benchmarks/data/README.md`, in v18's shape, and "
            "read once that session as the judge of model v12 against v11, each with the shipped second opinion "
            "(`intent_veto_judge_v19.json`); the figures here are the model's alone",
        ),
        (
            "chat6",
            "500 chat turns and 60 chat-wrapped requests, written blind like v19 and read once with it "
            "(`intent_veto_judge_chat6.json`); the model's figures alone",
        ),
        (
            "v18",
            "written blind in session 29 by a helper that read only `benchmarks/data/README.md`, in v17's shape, and "
            "read once in session 31 as the judge of first-stage candidate D against v11, each with the shipped "
            "second opinion (`intent_veto_judge_v18.json`; D won there but failed the test-bucket gate); the "
            "figures here are the model's alone",
        ),
        (
            "chat5",
            "500 chat turns and 60 chat-wrapped requests, written blind like v18 and read once with it "
            "(`intent_veto_judge_chat5.json`); the model's figures alone",
        ),
        (
            "v17",
            "written blind in session 28 by a helper, read once in session 29 as the judge of the MiniLM second "
            "opinion; then a development set of the first-stage candidates (session 30-31)",
        ),
        ("chat4", "chat turns and chat-wrapped requests, read as v17 was, and a development set since"),
        (
            "v16",
            "written blind in session 28 by a helper, read once that session as the judge of the e5 second "
            "opinion; then a development set of the first-stage candidates (session 30-31)",
        ),
        ("chat3", "chat turns and chat-wrapped requests, read as v16 was, and a development set since"),
        (
            "v12",
            "written by hand after v11 shipped, blind to model scores, as the judge of a v12 model; no v12 "
            "candidate beat v11 on the development sets, so it was read once with the shipped v11 (and the "
            "guard's readings of invisible characters, ROT47, keyboard shifts and Braille, written before "
            "it was read); requests in 43 languages, hard benign and chat turns",
        ),
        (
            "v11",
            "written by hand after v10 shipped, blind to model scores, and committed before any model-v11 change; "
            "read once, for the v11 candidate chosen on the development sets v8, v9, v10 and chat; requests in "
            "43 languages, hard benign and chat turns",
        ),
        (
            "v10",
            "written by hand after v9 shipped, blind to model scores, and committed before any model-v10 change; "
            "read once, for the v10 candidate chosen on the development sets v9 and chat; v11's development set; "
            "requests in 30 languages, hard benign and chat turns",
        ),
        (
            "v9",
            "written by hand after v8 shipped, blind to model scores, and committed before any model-v9 change; "
            "read once, for the v9 candidate chosen on the development sets v8 and chat (its errors were then "
            "studied for v10, whose development set it is, as it is v11's); paraphrases that avoid "
            "the bank's words, obfuscated, padded in 15 languages, chat-wrapped and other requests; hard benign "
            "(60 of 120 non-English) and chat turns",
        ),
        (
            "chat",
            "chat turns: thanks, greetings, acknowledgements, follow-ups about the previous answer and questions "
            "about the assistant, and extraction requests wrapped in pleasantries; 13 languages; written by hand "
            "by another session blind to model scores, committed before any v8 candidate with chat turns was "
            "scored; read twice, for the first build of v8 and the rebuilt one (and v7); v9's to v11's "
            "development set",
        ),
        (
            "v8",
            "written by hand, blind to model scores, and committed before any model-v8 change; read twice, for "
            "the first build of the v8 candidate chosen on the development set v7 and the rebuilt one (and for "
            "v7); v9's to v11's development set; format demands, role-play, fake "
            "authority, chunk-walk and padded requests in 17 languages",
        ),
        (
            "v7",
            "written and committed before any model-v7 change; read once for v7; from v8 the development "
            "set, so no longer a held-apart figure",
        ),
        (
            "v6",
            "written and committed before any model-v6 change; read once for v6; from v7 the development "
            "set, so no longer a held-apart figure",
        ),
        (
            "v5",
            "written and committed before any model-v5 training change; read for the one v5 candidate "
            "chosen without it (and for v3); from v6 the development set the v6 candidates were chosen on, "
            "so no longer a held-apart figure",
        ),
        (
            "v4",
            "written and committed before any model-v4 training change, never read while training v4; the "
            "three v5 candidates were compared on it; the styles of its extraction requests are in no training row",
        ),
        ("v3", "written and committed before any model-v3 change, never read while training or tuning; reported once"),
        ("v2", "written before model v2 was trained; its items were never read, but v3 was chosen after v2's rates"),
        (
            "v1",
            "written before model v1; read once to diagnose v1 (it blocked 34% of its hard benign "
            "questions), so it is no longer untouched for v2",
        ),
    ):
        h = s["heldout_sets"].get(version)
        if h is None or isets.heldout_benign_name(version) in trained_on(g):
            continue
        dropped = s.get("judge_rows_dropped_as_seen", {}).get(version)
        both = "hard benign and chat turns"
        kind = "chat turns" if version.startswith("chat") else both if version in VERSIONS[9:] else "hard benign"
        lines += [
            "",
            f"**Held-apart set {version}** ({note}): extraction requests TPR {cell(h['tpr'])}; {kind} FPR "
            f"{cell(h['fpr'])}"
            + (
                f" ({dropped} rows equal to a training or calibration text, punctuation aside, left out)"
                if dropped
                else ""
            ),
            "",
        ]
        styles = h["tpr_by_style"]
        lines.append(qs.markdown_table(["style", "TPR"], [[k, cell(v)] for k, v in styles.items()]))
        langs = sorted(set(h["tpr_by_lang"]) | set(h["fpr_by_lang"]))
        lines += [""]
        lines.append(qs.markdown_table(["language", "TPR (extraction)", f"FPR ({kind})"], [
            [k, cell(h["tpr_by_lang"].get(k)), cell(h["fpr_by_lang"].get(k))] for k in langs
        ]))  # fmt: skip
    if w := s.get("written_requests"):
        lines += [
            "",
            "**Hand-written requests that no model trains on** (`benchmarks/data/intent_train_attack_v9.jsonl` and "
            "`_v10.jsonl`: the English ones and the paraphrases in every language, and v10's padded and "
            "obfuscated ones, written blind to model scores as training rows; candidates that trained on them "
            "put PIDE-medical below 0.95): TPR "
            f"{cell(w['tpr'])}",
            "",
        ]
        lines.append(qs.markdown_table(["style", "TPR"], [[k, cell(v)] for k, v in w["tpr_by_style"].items()]))
    if enc := g.get("encoded"):
        lines += ["", *_encoded_section(enc)]
    for key, title, goal in (
        ("leave_one_style_out", "Leave-one-style-out", GOAL_TPR_STYLE),
        ("leave_one_language_out", "Leave-one-language-out", GOAL_TPR_LANG),
    ):
        if key not in g:
            continue
        lines += [
            "",
            f"**{title}** (retrained without it, recalibrated the same way; TPR on the own phrasings of what "
            f"was left out and on the held-apart items of it; goal >= {goal:.2f}; FPR pooled over SAGE, "
            "HealthcareMagic, iCliniq and Enron test sets)",
            "",
        ]
        lines.append(_loo_table(g[key], key, goal))
    for extra in g.get("extra_loo", []):
        key = "leave_one_language_out" if extra["key"] == "lang" else "leave_one_style_out"
        goal = GOAL_TPR_LANG if extra["key"] == "lang" else GOAL_TPR_STYLE
        lines += ["", f"**{extra.get('title') or key} ({extra.get('folds', '?')} folds)**", ""]
        lines.append(_loo_table(extra["results"], key, goal))
    c = g["cost"]
    lines += [
        "",
        f"**Cost per query** (median over {c['queries']} queries, single-thread CPU time; retrieval = real "
        f"MiniLM embedding of the query + FAISS exact search over {c['index_vectors']} vectors = "
        f"{c['retrieve_us'] / 1000:.2f} ms): `intent.check()` reusing the retrieval's query vector "
        f"{c['check_us']:.0f} us = {100 * c['check_share']:.2f}% of retrieval (90th percentile "
        f"{100 * c['check_share_p90']:.2f}%; goal <= 10%: "
        f"{_verdict(c['check_share'], 0.10, at_most=True)}); without the reused vector (the model embeds "
        f"the query itself) {c['check_without_reuse_us'] / 1000:.2f} ms = "
        f"{100 * c['check_without_reuse_share']:.0f}% of retrieval.",
    ]
    if c.get("multilingual_queries"):
        lines[-1] += (
            f" Queries in other languages ({c['multilingual_queries']} own phrasings, same measurement): "
            f"`check()` {c['multilingual_check_us'] / 1000:.1f} ms = {100 * c['multilingual_check_share']:.0f}% of "
            "their retrieval, because the multilingual embedder runs once more (goal <= 10%: "
            f"{_verdict(c['multilingual_check_share'], 0.10, at_most=True)} for that path)."
        )
    e5 = c.get("e5_deployment")
    if _e5_summary(e5):
        english, other = e5["english"], e5["other_languages"]
        lines[-1] += (
            " **A deployment that retrieves with multilingual-e5-small** (`ragshield index --embedder "
            "multilingual-e5-small`; retrieval = its query embedding + the same search): the other languages' "
            f"`check()` reuses that vector, {other['check_us'] / 1000:.2f} ms = {100 * other['check_share']:.1f}% "
            f"of their retrieval (median; 90th percentile {100 * other['check_share_p90']:.0f}%: queries the "
            "router leaves on the English path); English queries still need the English part's MiniLM vector, "
            f"{english['check_us'] / 1000:.1f} ms = {100 * english['check_share']:.0f}% of their retrieval."
            + _route_all_clause()
        )
    return lines
