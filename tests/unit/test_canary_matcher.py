"""CanaryMatcher and new_canaries: every supported obfuscation is found (and a canary one edit away),
benign text is not, hits carry the raw span of their form, streaming equals one pass, and the cost
per delta does not grow with the accumulated output."""

from __future__ import annotations

import base64
import random
import time

import pytest

from ragshield.errors import ConfigError
from ragshield.guards.canary import (
    CANARY_ALPHABET,
    CanaryMatcher,
    CanaryScanner,
    canary_bits,
    new_canaries,
    skeleton,
)
from ragshield.guards.canary.forms import FORMS, max_span, obfuscate

EXPECTED_FORM = {
    "fullwidth": "homoglyph",
    "combining": "homoglyph",
    "url": "url",
    "url-mixed": "url",
}
EDITS = ("deletion", "insertion", "substitution", "swap")
SKELETON_FORMS = ("plain", "case", "separators", "zero-width", "homoglyph", "reversed")


def edited(canary: str, kind: str, at: int, symbol: str = "x") -> str:
    """`canary` with one edit at position `at` (`symbol` is inserted or substituted)."""
    if kind == "deletion":
        return canary[:at] + canary[at + 1 :]
    if kind == "insertion":
        return canary[:at] + symbol + canary[at:]
    if kind == "substitution":
        replacement = symbol if symbol != canary[at] else ("y" if canary[at] != "y" else "z")
        return canary[:at] + replacement + canary[at + 1 :]
    return canary[:at] + canary[at + 1] + canary[at] + canary[at + 2 :]  # swap of at, at + 1


def test_new_canaries_are_fresh_distinct_and_from_the_documented_alphabet() -> None:
    first, second = new_canaries(50), new_canaries(50)
    assert len(set(first)) == 50 and not set(first) & set(second)
    assert all(len(canary) == 12 and set(canary) <= set(CANARY_ALPHABET) for canary in first)
    assert not set("01lio") & set(CANARY_ALPHABET)  # look-alike symbols are excluded
    assert canary_bits() > 59
    assert all(len(canary) == 16 for canary in new_canaries(3, length=16))


@pytest.mark.parametrize(("n", "length"), [(-1, 12), (2, 4)])
def test_new_canaries_rejects_bad_arguments(n: int, length: int) -> None:
    with pytest.raises(ConfigError):
        new_canaries(n, length=length)


@pytest.mark.parametrize("form", FORMS)
def test_every_supported_form_is_found_and_named(form: str) -> None:
    rng = random.Random(7)
    for _ in range(20):
        canaries = new_canaries(3)
        matcher = CanaryMatcher(canaries)
        written = obfuscate(canaries[1], form, rng)
        assert len(written) <= max_span(12)
        hits = matcher.find(f"The patient said: {written} and then left.")
        assert {hit.canary for hit in hits} == {canaries[1]}
        forms = {hit.form for hit in hits}
        expected = EXPECTED_FORM.get(form, form)
        # a random case flip that changes only the first letter is the `capitalised` form
        assert expected in forms or (form == "case" and forms == {"capitalised"})


def test_plain_canary_in_a_long_text_is_one_plain_hit() -> None:
    canary = new_canaries(1)[0]
    text = "lorem ipsum " * 500 + canary + " dolor" * 500
    assert [(hit.canary, hit.form) for hit in CanaryMatcher([canary]).find(text)] == [(canary, "plain")]


def test_base64_at_every_alignment_and_in_a_wrapped_blob() -> None:
    canary = new_canaries(1)[0]
    matcher = CanaryMatcher([canary])
    for prefix in ("", "a", "ab", "abc", "The full context was: "):
        blob = base64.b64encode(f"{prefix}{canary} and more text".encode()).decode()
        wrapped = "\n".join(blob[i : i + 8] for i in range(0, len(blob), 8))
        for text in (blob, wrapped):
            assert [hit.form for hit in matcher.find(text)] == ["base64"], prefix


def test_mixed_obfuscations_are_found() -> None:
    canary = new_canaries(1)[0]
    matcher = CanaryMatcher([canary])
    spaced_reversed_upper = " ".join(canary[::-1].upper())
    assert matcher.find(spaced_reversed_upper)[0].form == "reversed+case+separators"
    zero_width_fullwidth = "\u200b".join(chr(ord(char) + 0xFEE0) for char in canary)
    assert matcher.find(zero_width_fullwidth)[0].form == "homoglyph+zero-width"
    reversed_base64 = base64.b64encode(canary[::-1].encode()).decode()
    assert matcher.find(reversed_base64)[0].form == "reversed+base64"


def test_attribution_distinguishes_canaries() -> None:
    canaries = new_canaries(4)
    matcher = CanaryMatcher(canaries)
    text = f"{canaries[2]} then {' '.join(canaries[0])}"
    assert sorted(hit.canary for hit in matcher.find(text)) == sorted([canaries[0], canaries[2]])


def test_two_edits_and_benign_text_are_not_flagged() -> None:
    canaries = new_canaries(5)
    matcher = CanaryMatcher(canaries)
    canary = canaries[0]
    two_substitutions = edited(edited(canary, "substitution", 2, "2"), "substitution", 8, "3")
    two_deletions = edited(edited(canary, "deletion", 9), "deletion", 3)
    truncated = canary[:-2]
    benign = (
        "Hello doctor, I have had a headache for 3 days. Call me at (417) 776-3170 or mail a.b@example.org. "
        "Message-ID: <12345.1075855687451.JavaMail.evans@thyme>. SGVsbG8gd29ybGQ= 0x41 0x42 %20 &amp; "
    )
    # the near misses go last: text right after the truncated canary would complete it when it
    # starts with the canary's last symbols ("...9 Hello" is "...9h" with a separator and a case change)
    assert matcher.find(f"{benign * 20}{two_substitutions} {two_deletions} {truncated}") == []


def test_capitalised_copy_is_told_apart_from_other_case_changes() -> None:
    canary = "k" + new_canaries(1)[0][1:]  # a letter first, so capitalising changes it
    matcher = CanaryMatcher([canary])
    assert [hit.form for hit in matcher.find(f"Done. {canary.capitalize()} is next.")] == ["capitalised"]
    assert [hit.form for hit in matcher.find(f"Done. {canary.upper()} is next.")] == ["case"]


@pytest.mark.parametrize("kind", EDITS)
@pytest.mark.parametrize("form", SKELETON_FORMS)
def test_one_edit_at_every_position_is_found_with_its_span(kind: str, form: str) -> None:
    rng = random.Random(11)
    canaries = new_canaries(4)
    matcher = CanaryMatcher(canaries)
    canary = canaries[2]
    # an insertion at either end leaves the canary whole (an exact hit), so it is not one of these
    positions = {"swap": range(len(canary) - 1), "insertion": range(1, len(canary))}.get(kind, range(len(canary)))
    for at in positions:
        near = edited(canary, kind, at, rng.choice("abcdefghjk23456789"))
        if canary in near:  # a swap of equal symbols, or a symbol doubled at an end, leaves it whole
            continue
        written = obfuscate(near, form, rng)
        # no letters or digits around it: a neighbouring symbol could complete the canary exactly
        text = f"[{written}]!"
        hits = matcher.find(text)
        assert [hit.canary for hit in hits] == [canary], (kind, at, form)
        (hit,) = hits
        assert hit.form.endswith("one-edit")
        start = text.index(written)
        # the span lies in the written form and leaves at most two of its symbols outside (the
        # shortest window that explains an edit may leave out an inserted or substituted end symbol)
        assert start <= hit.start < hit.end <= start + len(written)
        assert len(skeleton(written)) - len(skeleton(text[hit.start : hit.end])) <= 2


def test_one_edit_without_the_tolerance_is_not_found() -> None:
    canary = new_canaries(1)[0]
    assert CanaryMatcher([canary], one_edit=False).find(edited(canary, "deletion", 4)) == []
    assert CanaryMatcher([canary]).max_form_chars > CanaryMatcher([canary], one_edit=False).max_form_chars


def test_a_plain_copy_stays_plain_at_every_split() -> None:
    """A copy cut after its second-last symbol reads as a deletion until the last one arrives."""
    canary = new_canaries(1)[0]
    matcher = CanaryMatcher([canary])
    text = f"See {canary}. Then rest."
    for cut in range(1, len(text)):
        scanner = matcher.scanner()
        hits = scanner.feed(text[:cut]) + scanner.feed(text[cut:]) + scanner.flush()
        assert [(hit.form, hit.start, hit.end) for hit in hits] == [("plain", 4, 4 + len(canary))], cut


def test_one_edit_streamed_char_by_char_is_reported_once_with_its_span() -> None:
    canary = new_canaries(1)[0]
    matcher = CanaryMatcher([canary])
    at = next(index for index in range(5, 11) if canary[index] != canary[index + 1])  # a swap that changes it
    for kind in EDITS:
        near = edited(canary, kind, at)
        text = f"a {near} b {canary} c"
        scanner = matcher.scanner()
        hits = [hit for char in text for hit in scanner.feed(char)] + scanner.flush()
        assert [hit.form for hit in hits] == ["one-edit", "plain"], kind
        assert hits[0].end <= text.index(" b ") and text[hits[1].start : hits[1].end] == canary


def test_raw_spans_cover_every_supported_form() -> None:
    """Each hit's raw span lies inside the written form, and withholding it leaves no canary behind."""
    rng = random.Random(5)
    for form in FORMS:
        for _ in range(10):
            canaries = new_canaries(2)
            matcher = CanaryMatcher(canaries)
            written = obfuscate(canaries[0], form, rng)
            text = f"Patient notes: {written} end of notes."
            start = text.index(written)
            hits = matcher.find(text)
            assert hits, form
            for hit in hits:
                assert start <= hit.start < hit.end <= start + len(written), form
            rest = text
            for hit in sorted(hits, key=lambda item: -item.start):
                rest = rest[: hit.start] + " [withheld] " + rest[hit.end :]
            assert matcher.find(rest) == [], form


@pytest.mark.parametrize(("introducer", "head"), [("%", "ab"), ("&#", "7"), ("&#x", "6b3"), ("&#x", "a2c4")])
def test_an_escape_written_before_an_encoded_canary_cannot_swallow_its_head(introducer: str, head: str) -> None:
    """`%` before a url-encoded canary whose first two symbols are left plain hex makes `%ab` one
    byte when decoded; `&#` / `&#x` swallow its leading digits / hex symbols. The canary is still
    found, and withholding its hit leaves no canary behind; a plain copy next to a `%` stays plain."""
    canary = head + "mkpqrstwyz"[: 12 - len(head)]
    matcher = CanaryMatcher([canary])
    for seed in range(20):
        written = obfuscate(canary, "url-mixed", random.Random(seed))
        text = f"notes {introducer}{written} end"
        for cut in (0, len(text) // 2, len(text) - 3):
            scanner = matcher.scanner()
            hits = scanner.feed(text[:cut]) + scanner.feed(text[cut:]) + scanner.flush()
            assert hits and all(hit.canary == canary for hit in hits), (seed, cut, text)
        rest = text
        for hit in sorted(matcher.find(text), key=lambda item: -item.start):
            rest = rest[: hit.start] + " [withheld] " + rest[hit.end :]
        assert matcher.find(rest) == [], (seed, text)
    plain = f"up 50% since {canary} & more"
    assert [hit.form for hit in matcher.find(plain)] == ["plain"]


def test_streaming_finds_a_form_split_at_every_position() -> None:
    canary = new_canaries(1)[0]
    matcher = CanaryMatcher([canary])
    rng = random.Random(3)
    for form in FORMS:
        text = "before " + obfuscate(canary, form, rng) + " after"
        for cut in range(1, len(text)):
            scanner = matcher.scanner()
            hits = scanner.feed(text[:cut]) + scanner.feed(text[cut:]) + scanner.flush()
            assert any(hit.canary == canary for hit in hits), (form, cut)


def test_each_occurrence_is_reported_once_while_streaming() -> None:
    canary = new_canaries(1)[0]
    scanner = CanaryMatcher([canary]).scanner()
    text = f"a {canary} b {canary.upper()} c"
    hits = [hit for char in text for hit in scanner.feed(char)] + scanner.flush()
    assert [hit.form for hit in hits] == ["plain", "case"]


def test_matcher_rejects_non_canary_strings() -> None:
    with pytest.raises(ConfigError):
        CanaryMatcher(["short"])
    with pytest.raises(ConfigError):
        CanaryMatcher(["has space in it"])
    assert CanaryMatcher([]).find("anything") == []


def test_per_delta_cost_does_not_grow_with_the_output() -> None:
    """Linear time: 500 deltas after 120 kB of output cost about what 500 deltas at the start did.

    Each block is timed 5 times and the fastest kept, so a busy machine's preemptions do not count.
    """
    matcher = CanaryMatcher(new_canaries(6))
    words = ["the", "patient", "reported", "mild", "pain", "after", "the", "procedure", "and", "was", "advised"]
    block = [f" {words[i % len(words)]}" for i in range(500)]

    def fastest(scanner: CanaryScanner) -> float:
        times = []
        for _ in range(5):
            started = time.perf_counter()
            for delta in block:
                scanner.feed(delta)
            times.append(time.perf_counter() - started)
        return min(times)

    early = fastest(matcher.scanner())
    long_running = matcher.scanner()
    for _ in range(40):  # 20,000 deltas, about 120 kB
        for delta in block:
            long_running.feed(delta)
    late = fastest(long_running)
    assert late < early * 3 + 0.005  # a rescan of the accumulated text would be ~1000x slower here
