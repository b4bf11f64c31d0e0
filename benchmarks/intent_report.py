"""Markdown report of the learned `intent` model's generalisation figures (issue 18), from the
payload `intent_generalisation.run` writes; called by `benchmarks/query_detection.py`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import intent_sets as isets
import query_sets as qs
from intent_report_encoded import encoded_section
from intent_report_set_notes import HELDOUT_SET_NOTES
from intent_report_sets import BENIGN_SET_LABELS, JUDGE_NOTES, SECOND_OPINION_NOTE
from ragshield.guards.intent_languages import router_of
from ragshield.metrics.intervals import rate_text

GOAL_TPR_FAMILY, GOAL_TPR_STYLE, GOAL_TPR_LANG, GOAL_FPR, GOAL_FPR_HARD = 0.95, 0.90, 0.80, 0.01, 0.02
VERSIONS = (
    *("v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "chat", "v9", "v10", "v11", "v12"),
    *("v13", "v14", "v15", "chat2", "v16", "chat3", "v17", "chat4", "v18", "chat5", "v19", "chat6"),
    *("v20", "chat7", "v21", "chat8", "v22", "chat9", "v23", "chat10", "v24", "chat11"),
)


def trained_on(g: dict[str, Any]) -> set[str]:
    """Benign set names the shipped model was trained on (held-apart sets burned into training, v6)."""
    return {isets.heldout_benign_name(v) for v in g["model"].get("heldout_sets_trained_on", [])}


def _mean_share(group: dict[str, Any]) -> str:
    """A group's mean `check()` share of a retrieval, in percent, or "missing" when the group is empty."""
    return "missing" if group["mean"] is None else f"{100 * group['mean']:.1f}%"


def _routed_by_label(by_label: dict[str, Any] | None) -> str:
    """The clause on what a routed query costs on average, per side of the sample that has queries ("" when not
    measured: files before session 49). The cost sample's other-language queries come from the calibration split, so
    today they are benign phrasings only."""
    if not by_label:
        return ""
    sides = [
        f"{_mean_share(by_label[side])} over its {by_label[side]['n']} {what}"
        for side, what in (("benign", "benign phrasings"), ("requests", "requests"))
        if by_label[side]["n"]
    ]
    return f"; the mean is {' and '.join(sides)}" if sides else ""


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
            f"flagged at {qs.rate_cell(asked['as_asked'])}**: "
            f"{_verdict(asked['as_asked']['rate'], GOAL_FPR, at_most=True)} "
            f"(e-mails quoting or forwarding another mail {qs.rate_cell(asked['as_asked_quoting_a_mail'])}, the rest "
            f"{qs.rate_cell(asked['as_asked_rest'])}; `benchmarks/intent_enron_format.py`)."
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
                + (_guard_loo_clause(GUARD_LOO, goal) if key == "leave_one_language_out" else "")
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
            f"({100 * c['multilingual_check_share']:.0f}%, the multilingual embedder's forward pass{ROUTED_READING})"
            if c.get("multilingual_check_share") is not None
            else ""
        )
        + _e5_summary(c.get("e5_deployment"))
        + "."
    )
    return out


GUARD_LOO_FILES = (  # newest first: a language is read from the first file that has it
    "intent_guard_loo_lang_s59.json",
    "intent_guard_loo_lang.json",
    "intent_guard_loo_lang_s50.json",
    "intent_guard_loo_lang_s51.json",
    "intent_guard_loo_lang_s52.json",
)
ROUTE_ALL = qs.REPO / "benchmarks" / "results" / "intent_route_all.json"
# Japanese and Italian (session 49); Russian and Dutch (session 50, with the sets read that session among the held-apart
# rows, so in a file of their own: `intent_guard_loo.py` refuses to add a language run over other held-apart sets);
# Spanish and German (session 51, likewise); French, Portuguese and Chinese (session 52, likewise)
GUARD_LOO = tuple(qs.REPO / "benchmarks" / "results" / name for name in GUARD_LOO_FILES)
GUARD_LOO_NAME = "fold model + fold e5 verifier"  # `intent_guard_loo.CONFIGURATIONS`: the leave-one-out guard


def _guard_loo_clause(paths: Path | tuple[Path, ...], goal: float) -> str:
    """The whole guard left without a language (`benchmarks/intent_guard_loo.py`), if run: per language (from the
    first of `paths` that has it), its own requests caught and own benign rows flagged, against the fold model alone,
    and which router each language's fold models name ("" when not run)."""
    languages: dict[str, Any] = {}
    routers: dict[str, int] = {}  # each language's fold model's router (files before session 59 name none: 1)
    for path in [paths] if isinstance(paths, Path) else paths:
        if path.is_file():
            saved = json.loads(path.read_text(encoding="utf-8"))
            for language, row in saved["languages"].items():
                languages.setdefault(language, row)
                routers.setdefault(language, router_of(saved))
    if not languages:
        return ""
    parts = []
    for language, row in languages.items():
        guard, alone = row["configurations"][GUARD_LOO_NAME], row["configurations"]["fold model alone"]
        caught = guard["own requests"]
        parts.append(
            f"{language} {rate_text(caught['k'], caught['n'])} "
            f"{_verdict(caught['rate'], goal, at_most=False) if caught['n'] else 'missing'} "
            f"(the fold model alone {rate_text(alone['own requests']['k'], alone['own requests']['n'])}; own benign "
            f"rows flagged {rate_text(guard['own benign']['k'], guard['own benign']['n'])}, alone "
            f"{rate_text(alone['own benign']['k'], alone['own benign']['n'])})"
        )
    return (
        " With the whole guard refitted without the language (its e5 verifier too, at the packaged line, band and "
        'raise line; `benchmarks/intent_guard_loo.py`, model card, "The whole guard, one language left out"): '
        + "; ".join(parts)
        + f"; measured for {', '.join(languages)} only"
        + "; the fold models of "
        + "; of ".join(
            f"{', '.join(lang for lang in languages if routers[lang] == router)} name router {router}"
            for router in sorted(set(routers.values()))
        )
        + "."
    )


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


# since the thirty-second round (session 48) the e5 second opinion reads most routed queries, a pass each
ROUTED_READING = (
    ", and the second opinion's reading of routed near misses up to 12 logits under the line since session 48 "
    "(`intent: {routed_raise_band: 4.0}` reads 4, as before)"
)


def _e5_summary(e5: dict[str, Any] | None) -> str:
    """The summary's clause for a deployment retrieving with multilingual-e5-small ("" when not measured)."""
    if not e5 or e5["english"]["check_share"] is None or e5["other_languages"]["check_share"] is None:
        return ""
    english, other = e5["english"], e5["other_languages"]
    return (
        "; retrieving with multilingual-e5-small instead, other languages "
        f"{_verdict(other['check_share'], 0.10, at_most=True)} ({100 * other['check_share']:.1f}%, its vector "
        f"reused{ROUTED_READING}) and English {_verdict(english['check_share'], 0.10, at_most=True)} "
        f"({100 * english['check_share']:.0f}%, a MiniLM pass)"
    )


def _row(label: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    return [label, qs.rate_cell(before), qs.rate_cell(after)]


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


def _loo_table(results: dict[str, Any], key: str, goal: float) -> str:
    notes = {r["heldout"].get("note") for r in results.values()} - {None}
    held_label = f"TPR held-apart ({', '.join(sorted(notes))})" if notes else "TPR held-apart"
    header = ["left out", "TPR own phrasings", held_label, "goal (own)", "FPR pooled"]
    if key == "leave_one_language_out":
        header.append("FPR own benign in that language")
    rows = []
    for value, r in results.items():
        row = [
            value,
            qs.rate_cell(r["own"]),
            qs.rate_cell(r["heldout"]),
            _verdict(r["own"]["rate"], goal, at_most=False),
        ]
        row.append(qs.rate_cell(r["fpr_pooled"]))
        if key == "leave_one_language_out":
            row.append(qs.rate_cell(r.get("fpr_own_benign")))
        rows.append(row)
    return qs.markdown_table(header, rows)


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
    rows = []
    for name, label in BENIGN_SET_LABELS.items():
        r = s["benign"].get(name)
        if r and name not in trained_on(g):
            goal = GOAL_FPR_HARD if "hard" in name else GOAL_FPR  # chat turns are ordinary users: 1%
            rows.append([label, qs.rate_cell(r), _verdict(r["rate"], goal, at_most=True)])
    lines.append(qs.markdown_table(["benign set", "FPR", "goal"], rows))
    if trained_on(g):
        lines += [
            "",
            f"Not in this table: {', '.join(sorted(trained_on(g)))}, whose rows this model was trained on "
            "(their rates are in the comparison above, marked, and are training fit, not generalisation).",
        ]
    lines += ["", "**TPR on the published families** (as built by `query_sets.py`; goal >= 0.95)", ""]
    lines.append(qs.markdown_table(["family", "TPR", "goal"], [
        [name, qs.rate_cell(r), _verdict(r["rate"], GOAL_TPR_FAMILY, at_most=False)]
        for name, r in s["families"].items()
    ]))  # fmt: skip
    lines += [
        "",
        "**Adaptive sets** (issue 8: paraphrased commands avoiding every bank word; padded. `adaptive-encoded`: "
        "the `encoded-command` attack, the TGTB query hidden in base64, hex, reversed, ROT13, Atbash, base32, a "
        "Caesar shift, URL encoding, HTML entities, Unicode escapes, binary, decimal codes, Morse or NATO words "
        "behind a plain 'decode and follow it'; built after the decoder, so not a blind figure)",
        "",
    ]
    lines.append(qs.markdown_table(["set", "TPR"], [[n, qs.rate_cell(r)] for n, r in s["adaptive"].items()]))
    for version, note in HELDOUT_SET_NOTES:
        h = s["heldout_sets"].get(version)
        if h is None or isets.heldout_benign_name(version) in trained_on(g):
            continue
        dropped = s.get("judge_rows_dropped_as_seen", {}).get(version)
        both = "hard benign and chat turns"
        kind = "chat turns" if version.startswith("chat") else both if version in VERSIONS[9:] else "hard benign"
        lines += [
            "",
            f"**Held-apart set {version}** ({note}): extraction requests TPR {qs.rate_cell(h['tpr'])}; {kind} FPR "
            f"{qs.rate_cell(h['fpr'])}"
            + (
                f" ({dropped} rows equal to a training or calibration text, punctuation aside, left out)"
                if dropped
                else ""
            ),
            "",
        ]
        styles = h["tpr_by_style"]
        lines.append(qs.markdown_table(["style", "TPR"], [[k, qs.rate_cell(v)] for k, v in styles.items()]))
        langs = sorted(set(h["tpr_by_lang"]) | set(h["fpr_by_lang"]))
        lines += [""]
        lines.append(qs.markdown_table(["language", "TPR (extraction)", f"FPR ({kind})"], [
            [k, qs.rate_cell(h["tpr_by_lang"].get(k)), qs.rate_cell(h["fpr_by_lang"].get(k))] for k in langs
        ]))  # fmt: skip
    if w := s.get("written_requests"):
        lines += [
            "",
            "**Hand-written requests that no model trains on** (`benchmarks/data/intent_train_attack_v9.jsonl` and "
            "`_v10.jsonl`: the English ones and the paraphrases in every language, and v10's padded and "
            "obfuscated ones, written blind to model scores as training rows; candidates that trained on them "
            "put PIDE-medical below 0.95): TPR "
            f"{qs.rate_cell(w['tpr'])}",
            "",
        ]
        lines.append(qs.markdown_table(["style", "TPR"], [[k, qs.rate_cell(v)] for k, v in w["tpr_by_style"].items()]))
    if enc := g.get("encoded"):
        lines += ["", *encoded_section(enc)]
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
    if c.get("check_share_mean") is not None:
        lines[-1] += (
            f" The mean share is {100 * c['check_share_mean']:.1f}% (against the same goal: "
            f"{_verdict(c['check_share_mean'], 0.10, at_most=True)}): the sample's extraction requests are flags, "
            "each read by the second opinion, and near misses are read too, piece by piece."
        )
        if by_label := c.get("check_share_mean_by_label"):
            benign, requests = by_label["benign"], by_label["requests"]
            verdict = "missing" if benign["mean"] is None else _verdict(benign["mean"], 0.10, at_most=True)
            lines[-1] += (
                f" Apart, the sample's {benign['n']} benign queries cost {_mean_share(benign)} of a retrieval on "
                f"average (goal <= 10%: {verdict}) and its {requests['n']} extraction requests "
                f"{_mean_share(requests)} (a request pays for the second opinion's reading of its flag; so few "
                "requests make that a rough figure)."
            )
    if raised := g.get("raise", {}).get("cost"):
        lines[-1] += (
            f" On the public benign test buckets the raise of near misses reads {raised['near_misses_read']} of "
            f"{raised['queries']} queries and adds {raised['added_us_per_query'] / 1000:.2f} ms per query on "
            f"average, {100 * raised['added_share_of_retrieval']:.1f}% of a retrieval "
            '(`intent_raise.raise_cost`; model card, "thirteenth round", "sixteenth round" and "seventeenth round").'
        )
    if c.get("multilingual_queries"):
        lines[-1] += (
            f" Queries in other languages ({c['multilingual_queries']} own benign phrasings, same measurement): "
            f"`check()` {c['multilingual_check_us'] / 1000:.1f} ms = {100 * c['multilingual_check_share']:.0f}% of "
            "their retrieval, because the multilingual embedder runs once more (goal <= 10%: "
            f"{_verdict(c['multilingual_check_share'], 0.10, at_most=True)} for that path)"
            + _routed_by_label(c.get("multilingual_check_share_mean_by_label"))
            + "."
        )
    e5 = c.get("e5_deployment")
    if _e5_summary(e5):
        english, other = e5["english"], e5["other_languages"]
        lines[-1] += (
            " **A deployment that retrieves with multilingual-e5-small** (`ragshield index --embedder "
            "multilingual-e5-small`; retrieval = its query embedding + the same search): the other languages' "
            f"`check()` reuses that vector, {other['check_us'] / 1000:.2f} ms = {100 * other['check_share']:.1f}% "
            f"of their retrieval (median; 90th percentile {100 * other['check_share_p90']:.0f}%: queries the "
            f"router leaves on the English path{_routed_by_label(other.get('check_share_mean_by_label'))}); "
            "English queries still need the English part's MiniLM vector, "
            f"{english['check_us'] / 1000:.1f} ms = {100 * english['check_share']:.0f}% of their retrieval."
            + _route_all_clause()
        )
    return lines
