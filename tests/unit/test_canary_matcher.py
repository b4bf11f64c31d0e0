"""CanaryMatcher and new_canaries: every supported obfuscation is found, benign text is not, streaming
equals one pass, and the cost per delta does not grow with the accumulated output."""

from __future__ import annotations

import base64
import random
import time

import pytest

from ragshield.errors import ConfigError
from ragshield.guards.canary import CANARY_ALPHABET, CanaryMatcher, CanaryScanner, canary_bits, new_canaries
from ragshield.guards.canary.forms import FORMS, max_span, obfuscate

EXPECTED_FORM = {
    "fullwidth": "homoglyph",
    "combining": "homoglyph",
    "url": "url",
    "url-mixed": "url",
}


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
        assert EXPECTED_FORM.get(form, form) in forms


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


def test_near_misses_and_benign_text_are_not_flagged() -> None:
    canaries = new_canaries(5)
    matcher = CanaryMatcher(canaries)
    canary = canaries[0]
    swapped = canary[:5] + ("2" if canary[5] != "2" else "3") + canary[6:]
    truncated = canary[:-1]
    benign = (
        "Hello doctor, I have had a headache for 3 days. Call me at (417) 776-3170 or mail a.b@example.org. "
        "Message-ID: <12345.1075855687451.JavaMail.evans@thyme>. SGVsbG8gd29ybGQ= 0x41 0x42 %20 &amp; "
    )
    # the near misses go last: text right after the truncated canary would complete it when it
    # starts with the canary's last symbol ("...9 Hello" is "...9h" with a separator and a case change)
    assert matcher.find(f"{benign * 20}{swapped} {truncated}") == []


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
