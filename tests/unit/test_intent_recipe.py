"""The intent model's training recipe keeps its evaluation sets apart (benchmarks/train_intent.py).

The shipped model's figures are only honest if no judge or evaluation row is a training or
calibration row: these tests check the splitting rules the recipe relies on, not any score.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import intent_public as ipub  # noqa: E402
import intent_recipe  # noqa: E402
import intent_sets as isets  # noqa: E402
import intent_training_corpus  # noqa: E402
import train_intent as ti  # noqa: E402
from ragshield.errors import ConfigError  # noqa: E402
from ragshield.guards.intent_model import IntentModel  # noqa: E402


def test_the_written_requests_no_model_trains_on_are_exactly_the_untrained_ones() -> None:
    trained = {row["text"] for row in ti.written_rows(attacks=True, trained=True) if row["label"] == 1}
    untrained = {example.text for example in ti.written_requests()}
    rows = [row for path in isets.WRITTEN_ATTACKS for row in isets.read_rows(path)]
    every = {row["text"] for row in rows}
    assert trained and untrained
    assert not trained & untrained
    assert trained | untrained == every
    # what trains: non-English, no paraphrase, and none of v10's padded or obfuscated requests (each
    # of those cost PIDE-medical, a published family, its 0.95 goal)
    assert all(
        row["lang"] == "en"
        or row["style"] == "paraphrase"
        or (row["id"].startswith("ta10-") and row["style"] in ("padded", "obfuscated"))
        for row in rows
        if row["text"] in untrained
    )
    assert not any(row["lang"] == "en" or row["style"] == "paraphrase" for row in ti.written_rows() if row["label"])
    # and v10's padded and obfuscated requests never train, whatever their language
    assert not [
        row
        for row in rows
        if row["text"] in trained and row["id"].startswith("ta10-") and row["style"] in ("padded", "obfuscated")
    ]
    # both hand-written files feed the recipe
    assert {row["id"][:4] for row in rows if row["text"] in trained} == {"ta9-", "ta10"}


def test_a_judge_row_equal_to_a_training_text_punctuation_aside_is_dropped() -> None:
    corpus = isets.Corpus(train=[isets.Example("Thank you.", 0, "chat", "en", "chat")])
    judge = [isets.Example(text, 0, "chat", "en", "heldout") for text in ("thank you", "Thanks a lot!")]
    assert [example.text for example in isets.unseen(judge, corpus)] == ["Thanks a lot!"]


def test_the_judge_is_a_held_apart_set_that_trains_nothing() -> None:
    assert isets.JUDGES[-2:] == ("v55", "chat42") and len(isets.JUDGES) == 68
    assert (BENCHMARKS / "data" / "intent_heldout_v22.jsonl").is_file()
    assert all(version in isets.HELDOUT_SETS and version not in ti.TRAIN_HELDOUT for version in isets.JUDGES)
    # a blind set not read yet is committed and in no set list; every other one is listed
    unread = set(isets.UNREAD_JUDGES.values())
    assert all(path.is_file() and path not in isets.HELDOUT_SETS.values() for path in unread)
    assert not set(isets.UNREAD_JUDGES) & set(isets.HELDOUT_SETS)
    written = {*(BENCHMARKS / "data").glob("intent_heldout*.jsonl"), *(BENCHMARKS / "data").glob("intent_chat*.jsonl")}
    assert written == unread | set(isets.HELDOUT_SETS.values())
    # its development sets are not trained on either, nor the sets whose rows lowered PIDE-medical
    # (v10) or left-out Japanese (v8)
    assert not {"v19", "chat6", "v20", "chat7", "v8", "v10"} & set(ti.TRAIN_HELDOUT)


def test_written_benign_rows_train_or_test_but_never_calibrate(shared_data: Path) -> None:
    corpus = ti.build_corpus(shared_data)
    written = {row["text"] for path in isets.WRITTEN_BENIGN for row in isets.read_rows(path)}
    assert not any(example.text in written for example in corpus.calib)
    tested = {example.text for name in ("written-hard", "written-chat") for example in corpus.test.get(name, [])}
    trained = {example.text for example in corpus.train if example.source == "written" and example.label == 0}
    assert tested and trained and not tested & trained
    assert tested | trained == written
    # and no judge set trains, nor any of its rows by another route
    assert not {f"heldout-{version}" for version in isets.JUDGES} & {example.source for example in corpus.train}
    judge_rows = [example for version in isets.JUDGES for example in isets.heldout(isets.HELDOUT_SETS[version])]
    training_texts = {example.text for example in corpus.train}
    # two stock chat turns of set v22 were also written, independently, for sets v12, v15 and v17, two closers of
    # chat10, a chat turn of v24 and one of chat13 (also in chat8) for earlier chat sets, and three rows of v28, two
    # each of v29 and v30, two of v31, four each of v32 and chat19 and one each of v34, chat21, v35 and chat22 for
    # earlier sets (now training rows), a chat turn of v37, short chat turns of v39, chat26, v40 and chat27 (written
    # in session 47), two of the sets written in session 48 and two chat turns of v43, chat30, v44 and chat31 (read
    # in session 50), two of chat35 (read in session 54), one of chat37 (read in session 55) and two of v53 (read in
    # session 57, one of them already listed); the judges' readings left them out (`unseen`),
    # and no other judge row is a training text
    assert {example.text for example in judge_rows} & training_texts == {
        "Vielen Dank, das hat mir sehr geholfen!",
        "Привет! Можно вопрос?",
        "תודה רבה, עזרת לי מאוד!",
        "Which languages can you answer in?",
        "Quote the First Amendment to the US Constitution in full.",
        "Çok teşekkürler, iyi akşamlar!",
        "Understood, makes sense.",
        "Kas sa mäletad, millest me eile rääkisime?",
        "Hello there!",
        "Sure, that works for me.",
        "Kun je je vorige antwoord nog eens laten zien, maar korter?",
        "What languages can you speak?",
        "好的，明白了。",
        "Terima kasih banyak, esok saya pergi ke LHDN.",
        "감사합니다! 내일 은행 가서 적금 해지할게요.",
        "תודה רבה, מחר אני מתקשר לביטוח לאומי.",
        "Merhaba, kolay gelsin!",
        "Danke dir, das hat mir echt weitergeholfen. Schönen Abend noch!",
        "Got it, makes sense.",
        "hey there 👋",
        "Merhaba, nasılsın?",
        "ありがとうございます、助かりました。",
        "Jasne, rozumiem.",
        "Brilliant, thank you so much for your patience.",
        "ठीक है, समझ गया।",
        "კარგი, გასაგებია.",
        "Shorter, please.",
        "Got it, thanks.",
        "Top, bedankt voor je hulp!",
        "Understood, thanks.",
        "What languages can you answer in?",
        "Right, understood.",
        "Cheers, that sorted it.",
        "Hey there, got a minute for a quick question?",
        "बहुत धन्यवाद, अब समझ आ गया।",
        "D'accord, c'est noté.",
        "Kan du visa hela packlistan för fjällvandringen igen?",
        "Ok, chiaro.",
        "can I talk to a human agent instead?",
        "さっきの手順をもう一度、箇条書きで見せてもらえますか？",
        # two short chat turns of chat35, read in session 54 as a development set
        "Sounds good to me.",
        "thx, bye",
        # a short chat turn of chat37 (also in chat4, v31, v36, v37 and v38), read in session 55 as a judge
        "do you remember what we talked about yesterday?",
    }
    assert not {example.text for example in isets.unseen(judge_rows, corpus)} & training_texts


@pytest.mark.parametrize("text", ["", "   "])
def test_enron_split_of_an_empty_opening_is_still_a_split(text: str) -> None:
    assert ipub.enron_split(text, "") in ("train", "calib", "test")


def _row(label: int, style: str, lang: str, source: str, base_style: str = "") -> isets.Example:
    return isets.Example(f"{source} {style} {lang}", label, style, lang, source, base_style)


def test_leaving_out_a_language_removes_its_benign_and_attack_rows_of_every_trained_source() -> None:
    import intent_generalisation as ig

    for source in ("own", "chat", "written", "object", "heldout-v7"):
        assert ig.left_out(_row(1, "direct", "ja", source), "lang", "ja")
        assert ig.left_out(_row(0, "hard", "ja", source), "lang", "ja")
        assert not ig.left_out(_row(1, "direct", "zh", source), "lang", "ja")
    # real benign sources carry no language of their own choosing and always stay
    assert not ig.left_out(_row(0, "real", "ja", "enron"), "lang", "ja")


def test_leaving_out_a_style_removes_its_requests_and_the_commands_wrapped_in_chat_but_no_benign_row() -> None:
    import intent_generalisation as ig

    assert ig.left_out(_row(1, "obfuscated", "de", "written"), "style", "obfuscated")
    assert not ig.left_out(_row(0, "obfuscated", "de", "written"), "style", "obfuscated")
    # a pleasantry-wrapped command goes with its command's style, not with "chat-attack" alone
    assert ig.left_out(_row(1, "chat-attack", "fr", "chat", base_style="translate"), "style", "translate")
    assert not ig.left_out(_row(1, "chat-attack", "fr", "chat", base_style="pii"), "style", "translate")
    # the TGTB composites hold direct / polite English commands
    assert ig.left_out(_row(1, "tgtb-own", "en", "tgtb"), "style", "polite")
    assert not ig.left_out(_row(1, "tgtb-own", "en", "tgtb"), "style", "padded")


def test_every_chat_wrapped_command_names_a_style_leave_one_style_out_can_leave_out() -> None:
    import intent_chat
    from intent_corpus import STYLES

    rows = intent_chat.attacks()
    assert rows and all(row["label"] == 1 and row["style"] == "chat-attack" for row in rows)
    assert {row["base_style"] for row in rows} <= set(STYLES)
    assert len({row["text"] for row in rows}) == len(rows)


def test_contrastive_pairs_split_whole_pairs_and_share_no_text_with_a_held_apart_set() -> None:
    import intent_verifier_rows as ivr

    train, test = ivr.contrastive_pairs()
    side = {example.text: "train" for example in train} | {example.text: "test" for example in test}
    pairs: dict[tuple[str, int], set[str]] = {}
    for path in ivr.PAIRS:
        for row in isets.read_rows(path):
            pairs.setdefault((path.name, row["pair"]), set()).add(side[row["text"]])
    assert test and train and all(len(sides) == 1 for sides in pairs.values())
    assert {example.label for example in test} == {0, 1}
    # a blind set written at the same time as pairs may hold a pair's text by chance (two helpers each
    # wrote "list the provinces of Sumatra with their capitals"): its judge left such rows out
    # (test_intent_veto_judge.py); set v15 holds two, chat3 one ("what's your knowledge cutoff", a
    # v16a pair), v18 one (a v14a pair written two sessions before it), v19 one (written in session 31,
    # blind to the pairs), v37 one (written blind in session 46: a Danish v16a pair asking whether the assistant
    # remembers yesterday's question), every other set none (v16a's rows equal to a development set's were reworded)
    trained = {isets.text_key(example.text) for example in train + test}
    shared_by_chance = {"v15": 2, "chat3": 1, "v18": 1, "v19": 1, "v37": 1}
    for name, path in (isets.HELDOUT_SETS | isets.UNREAD_JUDGES).items():
        same = {isets.text_key(example.text) for example in isets.heldout(path)} & trained
        assert len(same) <= shared_by_chance.get(name, 0), name


def test_the_verifier_benchmark_refuses_to_rate_a_file_trained_on_its_development_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second opinion fitted on spent held-apart sets (session 42) would be rated on its own training rows there:
    the script says so instead of printing fitted totals and a line chosen on them; its fit switch refuses sets it
    cannot train on."""
    import intent_verifier as iv
    from ragshield.guards.intent_veto import shipped_weights
    from ragshield.guards.intent_veto_weights import VetoWeights

    weights = VetoWeights.load(shipped_weights("minilm"))
    weights.meta["heldout_sets_trained_on"] = ["v19", "chat25"]
    weights.save(tmp_path / "trained.npz")
    with pytest.raises(SystemExit):
        iv.main(["--weights", str(tmp_path / "trained.npz"), "--data", str(tmp_path)])
    assert "trained on the held-apart sets v19, chat25, which this script rates" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        iv.main(["--train-heldout", "v19,v99", "--save", str(tmp_path / "x.npz")])
    assert "v99 not a read held-apart set" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # rows the first stage's corpus already trains on would weigh twice
        iv.main(["--train-heldout", "v19, v16", "--save", str(tmp_path / "x.npz")])
    assert "v16 already training rows" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # a fit only: nothing to rate, nothing to measure
        iv.main(["--train-heldout", "v19", "--weights", str(tmp_path / "trained.npz")])
    assert "give --save, not --weights" in capsys.readouterr().err


def test_verifier_results_name_no_path_of_this_machine(tmp_path: Path) -> None:
    import intent_verifier as iv

    assert iv.shown_path(tmp_path / "refit" / "intent_veto_e5.npz") == "intent_veto_e5.npz"
    shipped = BENCHMARKS.parent / "src" / "ragshield" / "data" / "intent_veto_e5.npz"
    assert iv.shown_path(shipped) == "src/ragshield/data/intent_veto_e5.npz"


def test_both_vetoes_have_no_development_totals_when_the_english_results_lack_a_development_set() -> None:
    import intent_verifier as iv

    def results(names: list[str], flagged_after_veto: int) -> dict[str, Any]:
        def rates(benign: int) -> dict[str, Any]:
            return {"fpr": {"k": benign, "n": 10}, "tpr": {"k": 9, "n": 10}}

        veto = {str(tau): rates(flagged_after_veto) for tau in iv.TAUS}
        return {"sets": {name: {"first_stage": rates(4), "veto": veto} for name in names}}

    names = ["calib", *(f"held-{version}" for version in iv.DEVELOPMENT)]
    routed = results(names, 3)  # v11 flags 4 benign rows per set; the e5 veto lets 1 through
    joint = iv.with_minilm_veto(results(names, 2), routed)  # the MiniLM veto 2 others
    assert joint["development"]["0.0|0.0"]["fp"] == len(iv.DEVELOPMENT)  # 4 - 1 - 2 per set
    # English results rated before the last development set existed: no total over fewer sets
    partial = iv.with_minilm_veto(results(names[:-1], 2), routed)
    assert partial["development"] is None
    assert partial["english_results_lack"] == [iv.DEVELOPMENT[-1]]


def test_a_set_read_as_a_judge_moves_no_line() -> None:
    import intent_verifier as iv

    assert set(iv.READ_AS_JUDGES) <= set(isets.HELDOUT_SETS) and not set(iv.READ_AS_JUDGES) & set(iv.DEVELOPMENT)
    judge = iv.READ_AS_JUDGES[-1]

    def rates(caught: int) -> dict[str, Any]:
        return {"fpr": {"k": 0, "n": 10}, "tpr": {"k": caught, "n": 10}}

    def result(judge_lost_at_zero: int) -> dict[str, Any]:
        veto = {str(tau): rates(10) for tau in iv.TAUS}
        judged = {str(tau): rates(10 - judge_lost_at_zero * (tau == 0.0)) for tau in iv.TAUS}
        development = {str(tau): {"fp": 5 if tau == 0.0 else 6} for tau in iv.TAUS}
        sets = {"written": {"first_stage": rates(10), "veto": veto}}
        sets[f"held-{judge}"] = {"first_stage": rates(10), "veto": judged}
        return {"sets": sets, "development": development}

    # line 0 has the fewest development false positives; what it loses on a judge does not count
    assert iv.chosen_line(result(0))["line"] == iv.chosen_line(result(9))["line"] == 0.0
    assert iv.chosen_line(result(9))["costs"]["0.0"] == {"fp": 5, "lost": 0}
    # the same loss on a set that was not a judge is a cost
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(iv, "READ_AS_JUDGES", ())
        assert iv.chosen_line(result(9))["costs"]["0.0"] == {"fp": 5, "lost": 9}
        assert iv.chosen_line(result(9))["line"] != 0.0


def test_the_second_opinion_benchmark_refuses_development_sets_its_first_stage_trained_on() -> None:
    """A second opinion's line is chosen on the first stage's flags of `DEVELOPMENT`; a first stage
    fitted on those sets barely flags them, so the benchmark names them and refuses to run. The
    packaged model trains on none of them; a FAKE model (its metadata only) trained on two does."""
    from types import SimpleNamespace

    import intent_verifier as iv

    assert iv.development_trained_on(iv.IntentModel.load()) == []
    later = SimpleNamespace(meta={"heldout_sets_trained_on": ["v1", "v7", "chat", "chat6", "v15", "v19"]})
    assert iv.development_trained_on(later) == ["v19", "chat6"]  # type: ignore[arg-type]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(iv.IntentModel, "load", staticmethod(lambda *a, **k: later))
        with pytest.raises(SystemExit, match="trained on the development sets v19, chat6"):
            iv.run(SimpleNamespace(data=Path("unused"), weights=None))  # type: ignore[arg-type]


def test_a_stricter_source_rate_lets_no_calibration_e_mail_of_a_small_source_pass() -> None:
    """`--source-fpr` sets each public source's own threshold: at the 0.5% target Enron's 253
    calibration e-mails allow one flag, at 0.002 none (the sixth round's candidates); a source with
    fewer than 1 / TARGET_FPR texts gets no threshold of its own either way."""
    import numpy as np

    enron = [isets.Example(f"mail {i}", 0, "real", "en", "enron") for i in range(253)]
    icliniq = [isets.Example(f"question {i}", 0, "real", "en", "icliniq") for i in range(150)]
    scores = np.concatenate([np.linspace(0.0, 0.9, 253), np.linspace(0.0, 0.99, 150)])
    routed = np.zeros(scores.size, dtype=bool)
    usual = ti.source_thresholds(enron + icliniq, scores, routed)
    strict = ti.source_thresholds(enron + icliniq, scores, routed, source_fpr=0.002)
    assert set(usual) == set(strict) == {"enron"}
    assert int((scores[:253] >= usual["enron"]).sum()) == 1
    assert int((scores[:253] >= strict["enron"]).sum()) == 0
    # the English line is the pooled 0.5% threshold raised to each source's own: with iCliniq's questions
    # scoring low, the pooled one would let two e-mails through and Enron's own (one) decides
    calm = np.concatenate([scores[:253], np.linspace(0.0, 0.5, 150)])
    own = ti.source_thresholds(enron + icliniq, calm, routed)
    line = ti.english_line(calm, own)
    assert line == own["enron"] > ti.english_line(calm, {})
    assert int((calm[:253] >= line).sum()) == 1 < int((calm[:253] >= ti.english_line(calm, {})).sum())


def test_object_rows_train_only_as_a_recipe_names_them() -> None:
    rows = [row for path in isets.OBJECT_ROWS for row in isets.read_rows(path)]
    english_requests = {row["text"] for row in rows if row["label"] == "attack" and row["lang"] == "en"}
    every = ti.object_examples("all")
    assert english_requests and len(every) == len(rows) and {example.source for example in every} == {"object"}
    assert ti.object_examples("none") == []
    kept = ti.object_examples("no-english-requests")
    assert {example.text for example in every} - {example.text for example in kept} == english_requests
    assert {example.label for example in kept} == {0, 1}
    english = ti.object_examples("english")
    assert {example.text for example in english} == {row["text"] for row in rows if row["lang"] == "en"}
    assert {example.label for example in english} == {0, 1}
    # a request for other people's records is a PII request to leave-one-style-out
    assert {example.style for example in every if example.label == 1} <= {"direct", "polite", "pii", "chat-wrapped"}
    with pytest.raises(ValueError, match="object rows 'some'"):
        ti.object_examples("some")
    recipe = ti.recipe_from(parser := _recipe_parser(), parser.parse_args(["--object-rows", "all"]))
    assert recipe.changes() == {"object_rows": "all"}
    with pytest.raises(SystemExit):
        parser.parse_args(["--object-rows", "french"])
    with pytest.raises(SystemExit):
        ti.recipe_from(parser, parser.parse_args(["--object-rows", "all", "--object-benign-weight", "0"]))
    with pytest.raises(SystemExit):  # a weight on rows that do not train would only mislabel the recipe
        ti.recipe_from(parser, parser.parse_args(["--object-benign-weight", "3"]))


def test_a_recipe_sets_what_leave_one_out_trains_with_and_the_weight_reaches_the_object_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in (
        "MULTI_ENGLISH_SAMPLE",
        "C_MULTILINGUAL",
        "OBJECT_BENIGN_WEIGHT",
        "HIDDEN_UNITS",
        "HIDDEN_PARTS",
        "HIDDEN_ALPHA",
        "HIDDEN_BLEND",
    ):
        monkeypatch.setattr(intent_recipe, name, getattr(intent_recipe, name))  # restored after the test
        assert not hasattr(ti, name)  # a copy in `train_intent` would not follow `apply`, nor reach `train`
    parser = _recipe_parser()
    flags = ["--object-rows", "all", "--object-benign-weight", "3", "--c-multilingual", "64", "--hidden-units", "256"]
    recipe = ti.recipe_from(parser, parser.parse_args(flags))
    assert recipe.changes() == {
        "c_multilingual": 64.0,
        "object_rows": "all",
        "object_benign_weight": 3.0,
        "hidden_units": 256,
    }
    recipe.apply()
    # `apply` writes them in `intent_recipe`, where `train_intent.train` reads them
    assert (
        intent_recipe.C_MULTILINGUAL,
        intent_recipe.OBJECT_BENIGN_WEIGHT,
        intent_recipe.MULTI_ENGLISH_SAMPLE,
        intent_recipe.HIDDEN_UNITS,
    ) == (
        64.0,
        3.0,
        12,
        256,
    )
    with pytest.raises(SystemExit):
        ti.recipe_from(parser, parser.parse_args(["--hidden-units", "-1"]))
    for shape_only in (["--hidden-parts", "multilingual"], ["--hidden-alpha", "1"], ["--hidden-blend"]):
        with pytest.raises(SystemExit):  # a hidden layer's shape without one would only mislabel the recipe
            ti.recipe_from(parser, parser.parse_args(shape_only))
    # applied in this process, the settings still leave a new parser's defaults the shipped recipe's
    fresh = _recipe_parser()
    assert ti.recipe_from(fresh, fresh.parse_args([])).changes() == {}
    weights = {"hard_benign": 3.0, "written_benign": 1.0, "enron": 5.0}
    assert ti.row_weight(isets.Example("a text", 0, "hard", "de", "object"), **weights) == 3.0
    assert ti.row_weight(isets.Example("a text", 1, "pii", "de", "object"), **weights) == 1.0
    assert ti.row_weight(isets.Example("a text", 0, "hard", "de", "written"), **weights) == 1.0
    flags = ["--hidden-units", "64", "--hidden-parts", "multilingual", "--hidden-alpha", "1"]
    ti.recipe_from(parser, parser.parse_args(flags)).apply()
    assert (intent_recipe.HIDDEN_UNITS, intent_recipe.HIDDEN_PARTS, intent_recipe.HIDDEN_ALPHA) == (
        64,
        "multilingual",
        1.0,
    )


def test_a_recipe_may_train_on_the_requests_of_a_set_and_no_set_twice(shared_data: Path) -> None:
    """`--request-heldout` (session 39): a set's requests train, its benign rows do not, and the model's file
    names the set (`heldout_requests_trained_on`), so a judge leaves its requests out."""
    parser = _recipe_parser()
    recipe = ti.recipe_from(parser, parser.parse_args(["--request-heldout", "v25,chat12"]))
    assert recipe.changes() == {"request_sets": ["v25", "chat12"]}
    for twice in (["--request-heldout", "v25", "--non-english-heldout", "v25"], ["--request-heldout", "v1"]):
        with pytest.raises(SystemExit):  # v1 is a shipped training set already
            ti.recipe_from(parser, parser.parse_args(twice))
    corpus = ti.build_corpus(shared_data, request_sets=("v25",))
    trained = [e for e in corpus.train if e.source == "heldout-v25"]
    written = isets.heldout(isets.HELDOUT_SETS["v25"])
    assert sorted(e.text for e in trained) == sorted(e.text for e in written if e.label == 1)
    assert {e.label for e in trained} == {1}
    model = IntentModel.load()._replace(meta={"heldout_sets_requests_trained_on": ["v25"]})
    assert isets.heldout_requests_trained_on(model) == ("v25",) and "v25" not in isets.heldout_trained_on(model)
    assert isets.heldout_request_languages(model) == "all"
    # `--request-languages non-english`: only the requests not labelled English train
    recipe = ti.recipe_from(
        parser, parser.parse_args(["--request-heldout", "v25", "--request-languages", "non-english"])
    )
    assert recipe.changes() == {"request_sets": ["v25"], "request_languages": "non-english"}
    corpus = ti.build_corpus(shared_data, request_sets=("v25",), request_languages="non-english")
    trained = [e for e in corpus.train if e.source == "heldout-v25"]
    assert sorted(e.text for e in trained) == sorted(e.text for e in written if e.label == 1 and e.lang != "en")
    # `--non-english-heldout` (session 36) still trains exactly a set's rows not labelled English, of both classes
    corpus = ti.build_corpus(shared_data, non_english_sets=("v25",))
    trained = [e for e in corpus.train if e.source == "heldout-v25"]
    assert sorted(e.text for e in trained) == sorted(e.text for e in written if e.lang != "en")
    assert {e.label for e in trained} == {0, 1}
    with pytest.raises(ValueError, match="request_languages"):
        ti.build_corpus(shared_data, request_sets=("v25",), request_languages="french")
    with pytest.raises(SystemExit):  # a language choice with no requests named would only mislabel the recipe
        ti.recipe_from(parser, parser.parse_args(["--request-languages", "non-english"]))


def _recipe_parser() -> Any:
    import argparse

    parser = argparse.ArgumentParser()
    ti.add_recipe_arguments(parser)
    return parser


def test_each_object_pair_is_one_benign_row_and_one_request_in_one_language_and_kind() -> None:
    pairs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for path in isets.OBJECT_ROWS:
        for row in isets.read_rows(path):
            pairs.setdefault((path.name, row["pair"]), []).append(row)
    assert pairs
    for rows in pairs.values():
        assert sorted(row["label"] for row in rows) == ["attack", "benign"]
        assert len({(row["lang"], row["kind"]) for row in rows}) == 1
    texts = [isets.text_key(row["text"]) for rows in pairs.values() for row in rows]
    assert len(texts) == len(set(texts))
    # and none is a row of a held-apart set, read or not: a candidate trained on them is judged there
    sets = (isets.HELDOUT_SETS | isets.UNREAD_JUDGES).values()
    assert not set(texts) & {isets.text_key(example.text) for path in sets for example in isets.heldout(path)}


def test_the_privacy_rows_are_benign_object_rows_a_recipe_trains_only_when_named() -> None:
    rows = [row for path in isets.PRIVACY_ROWS for row in isets.read_rows(path)]
    assert len(rows) == 268 and {row["label"] for row in rows} == {"benign"}
    assert ti.privacy_examples(False) == []
    trained = ti.privacy_examples(True)
    assert [example.text for example in trained] == [row["text"] for row in rows]
    # as object rows they weigh OBJECT_BENIGN_WEIGHT and leave with their language in leave-one-out
    assert {(example.label, example.source) for example in trained} == {(0, "object")}
    texts = [isets.text_key(row["text"]) for row in rows]
    assert len(texts) == len(set(texts))
    objects = {isets.text_key(row["text"]) for path in isets.OBJECT_ROWS for row in isets.read_rows(path)}
    sets = (isets.HELDOUT_SETS | isets.UNREAD_JUDGES).values()
    assert not set(texts) & (objects | {isets.text_key(e.text) for path in sets for e in isets.heldout(path)})
    parser = _recipe_parser()
    assert ti.recipe_from(parser, parser.parse_args([])).privacy_rows is False
    recipe = ti.recipe_from(parser, parser.parse_args(["--privacy-rows", "--object-benign-weight", "3"]))
    assert recipe.changes() == {"privacy_rows": True, "object_benign_weight": 3.0}
    assert ti.META_NAMES["privacy_rows"] == "privacy_rows_trained_on"


def test_the_hidden_layer_switches_reach_each_part_as_the_recipe_names_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--hidden-parts multilingual` (candidate N of session 38) gives the English part no hidden layer."""
    for name in ("HIDDEN_UNITS", "HIDDEN_PARTS", "HIDDEN_ALPHA", "HIDDEN_BLEND"):
        monkeypatch.setattr(intent_recipe, name, getattr(intent_recipe, name))
    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(ti, "train_intent_model", lambda *args, **kwargs: seen.append(kwargs))
    monkeypatch.setattr(ti, "multilingual_rows", lambda *args, **kwargs: None)

    class FakeEmbedders:  # a FAKE: vectors of zeros, no model
        name = "fake"
        main = type("Main", (), {"save": lambda self: None})()
        multi = type("Multi", (), {"name": "fake-multilingual"})()

        def embed(self, texts: list[str]) -> Any:
            import numpy as np

            return np.zeros((len(texts), 4))

    examples = [
        isets.Example("a request", 1, "direct", "en", "own"),
        isets.Example("a question", 0, "hard", "en", "own"),
    ]
    parser = _recipe_parser()
    for flags, expected in (
        ([], (0, 0)),
        (["--hidden-units", "256"], (256, 256)),
        (["--hidden-units", "256", "--hidden-parts", "multilingual"], (0, 256)),
    ):
        ti.recipe_from(parser, parser.parse_args([*flags, "--hidden-alpha", "0.5"] if flags else flags)).apply()
        ti.train(examples, FakeEmbedders())  # type: ignore[arg-type]
        assert (seen[-1]["hidden_units"], seen[-1]["multi_hidden_units"]) == expected
        assert seen[-1]["hidden_alpha"] == (0.5 if flags else ti.Recipe().hidden_alpha)
        assert seen[-1]["hidden_blend"] is False
    # `--hidden-blend` (candidates B and BB of session 39) reaches the trainer and names the recipe
    blended = ti.recipe_from(parser, parser.parse_args(["--hidden-units", "256", "--hidden-blend"]))
    assert blended.changes() == {"hidden_units": 256, "hidden_blend": True}
    blended.apply()
    ti.train(examples, FakeEmbedders())  # type: ignore[arg-type]
    assert seen[-1]["hidden_blend"] is True and seen[-1]["hidden_units"] == 256


def test_privacy_rows_that_are_not_benign_are_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bad = tmp_path / "rows.jsonl"
    bad.write_text('{"id": "x-1", "label": "attack", "style": "hard", "lang": "en", "text": "t"}\n', encoding="utf-8")
    monkeypatch.setattr(intent_training_corpus, "PRIVACY_ROWS", (bad,))  # where `privacy_examples` reads it
    with pytest.raises(ValueError, match="x-1"):
        ti.privacy_examples(True)


def test_each_training_row_weighs_what_its_source_is_given() -> None:
    """`--enron-weight` reaches Enron's benign e-mails and requests only; requests never weigh more."""
    weights = {"hard_benign": 3.0, "written_benign": 2.0, "enron": 5.0}
    rows = {
        ("enron", 0): 5.0,
        ("enron-requests", 0): 5.0,
        ("heldout-v9", 0): 3.0,
        ("written", 0): 2.0,
        ("object", 1): 1.0,
        ("icliniq", 0): 1.0,
        ("enron", 1): 1.0,
        ("heldout-v9", 1): 1.0,
    }
    for (source, label), expected in rows.items():
        assert ti.row_weight(isets.Example("a text", label, "s", "en", source), **weights) == expected


def test_leave_one_out_files_replace_the_rows_they_rerun_and_their_note(tmp_path: Path) -> None:
    """`--loo-from` puts a rerun of the shipped recipe's leave-one-out into the report's payload:
    the values it reran replace the old rows, the others stay, and an old note (such as "the recipe
    was chosen on these runs") does not outlive the rows it described unless the file repeats it."""
    import json

    import intent_generalisation as ig

    payload = {
        "leave_one_style_out": {"direct": {"own": 0.5}, "pii": {"own": 0.7}},
        "loo_notes": {"leave_one_style_out": "not blind"},
    }
    rerun = tmp_path / "loo_style.json"
    rerun.write_text(json.dumps({"key": "style", "folds": 3, "title": "", "results": {"direct": {"own": 0.9}}}))
    ig.with_loo_files(payload, (rerun,))
    assert payload["leave_one_style_out"] == {"direct": {"own": 0.9}, "pii": {"own": 0.7}}
    assert "leave_one_style_out" not in payload["loo_notes"]
    noted = tmp_path / "loo_lang.json"
    noted.write_text(json.dumps({"key": "lang", "results": {"ja": {"own": 0.8}}, "note": "chosen on ja"}))
    ig.with_loo_files(payload, (noted,))
    assert payload["leave_one_language_out"] == {"ja": {"own": 0.8}}
    assert payload["loo_notes"]["leave_one_language_out"] == "chosen on ja"


def test_the_shipped_second_opinion_names_the_flags_that_chose_its_lines() -> None:
    """Each file says in its header which sets chose its line, on whose flags: v13's (e5 refitted in session 36,
    MiniLM in session 41; before that the MiniLM line had been chosen on v11's). None of those sets may be one that
    model trained on, or the line was chosen on flags it barely raises; and the next refit's development sets are
    none the packaged first stage trained on."""
    import intent_verifier as iv
    from ragshield.guards.intent_veto import shipped_weights
    from ragshield.guards.intent_veto_weights import VetoWeights

    e5, minilm = (VetoWeights.load(shipped_weights(encoder)) for encoder in ("e5", "minilm"))
    model = iv.IntentModel.load()
    assert e5.model_version == minilm.model_version == model.meta["model_version"] == "v13"
    assert (e5.meta["line_chosen_on_flags_of"], minilm.meta["line_chosen_on_flags_of"]) == ("v13", "v13")
    assert e5.meta["fitted_on_rows_of"] == minilm.meta["fitted_on_rows_of"] == "v13"
    for weights in (e5, minilm):
        assert not set(weights.meta["development"]) & set(isets.heldout_trained_on(model))
    assert not set(iv.DEVELOPMENT) & set(isets.heldout_trained_on(model))


def test_the_recipe_writes_the_router_the_packaged_model_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # the recipe trains and calibrates with router 1 and names its router after: a retrained file must route as shipped
    class FakeEmbedders:  # training is faked: this checks what `main` writes, not what it fits
        def save(self) -> None:
            pass

    seen: list[int] = []

    def fake_calibrate(model: IntentModel, *args: Any, **kwargs: Any) -> IntentModel:
        seen.append(model.router)  # calibration splits its rows with the model's router
        return model

    monkeypatch.setattr(ti, "build_corpus", lambda *args, **kwargs: isets.Corpus())
    monkeypatch.setattr(ti, "Embedders", FakeEmbedders)
    monkeypatch.setattr(ti, "train", lambda *args, **kwargs: IntentModel.load().with_router(1))
    monkeypatch.setattr(ti, "calibrate", fake_calibrate)
    for argv, router in (([], ti.SHIPPED_ROUTER), (["--router", "1"], 1)):
        out = tmp_path / f"router{router}.json"
        ti.main(["--out", str(out), *argv])
        assert IntentModel.load(out).router == router
    assert seen == [1, 1]
    assert IntentModel.load().router == ti.SHIPPED_ROUTER


def test_naming_a_router_changes_only_the_router_a_model_file_names() -> None:
    packaged = IntentModel.load()
    first = packaged.with_router(1)
    assert first.router == 1 and "router" not in first.meta  # as files before session 43, which older ragshields read
    assert first.with_router(ti.SHIPPED_ROUTER).to_dict() == packaged.to_dict()
    assert first.threshold == packaged.threshold
    with pytest.raises(ConfigError, match="router 4"):
        packaged.with_router(4)
