"""`degenerate`: hand-made loops are flagged, normal answers are not."""

from __future__ import annotations

import pytest

from ragshield.metrics.utility import degenerate, degenerate_share

NORMAL = [
    "",
    "Rest, drink plenty of water and take paracetamol if the headache persists for more than two days.",
    (
        "Hi, thanks for your query. A rash on the forearm that itches is often contact dermatitis. "
        "Wash the area with mild soap, avoid the cream you started last week and apply a thin layer of "
        "hydrocortisone 1% twice a day for five days. If it spreads, blisters or you get a fever, see a "
        "doctor in person. Hope this helps, take care."
    ),
    (
        "Tight chest on climbing stairs can come from the heart or the lungs. Please get an ECG and a "
        "lipid profile, and a chest X-ray if you also cough. Avoid heavy exertion until you are seen. "
        "If the pain comes at rest, spreads to the arm or jaw, or you sweat, call emergency services."
    ),
    # one phrase used twice, as people do, is no loop
    "If the pain gets worse, see a doctor. If the pain gets worse at night, take ibuprofen with food.",
    "1. Rest. 2. Ice the knee. 3. Compress it. 4. Elevate it. 5. See a physiotherapist if it swells again.",
]

LOOPS = [
    "The answer to this question is: The answer to this question is: The answer to this question is:",
    "output: Hi Dr. Johnson, I have a rash on my arm. output: Hi Dr. Johnson, I have a rash on my arm. "
    "output: Hi Dr. Johnson, I have",
    "no no no no no no",  # one word six times: the 4-gram 'no no no no' occurs three times
    # a long span repeated only twice, cut by the token limit in its second copy
    (
        "Hi, I have a rash on my forearm for three days and it itches at night, what cream should I use "
        "for it please. Hi, I have a rash on my forearm for three days and it itches at night, what"
    ),
    # loops survive case, punctuation and spacing changes
    "Take rest. TAKE REST! take  rest... Take, rest; take rest take rest",
]


@pytest.mark.parametrize("text", NORMAL)
def test_normal_answers_are_not_degenerate(text: str) -> None:
    assert not degenerate(text)


@pytest.mark.parametrize("text", LOOPS)
def test_loops_are_degenerate(text: str) -> None:
    assert degenerate(text)


def test_two_occurrences_of_a_short_phrase_are_not_yet_a_loop() -> None:
    assert not degenerate("see a doctor soon and then see a doctor soon")  # 4-gram twice, 10 words
    assert degenerate("see a doctor soon, see a doctor soon, see a doctor soon")


def test_half_repeat_needs_half_of_the_second_half() -> None:
    opening = "please describe when the rash started and what you applied to it"  # 12 words
    middle = " ".join(f"word{n}" for n in range(40))
    # the opening repeated once at the end of a long answer: 12 of the 32-word second half
    assert not degenerate(f"{opening} {middle} {opening}")
    assert degenerate(f"{opening} {middle} {opening} {middle[:200]}")


def test_share_counts_the_flagged_answers() -> None:
    share = degenerate_share([LOOPS[0], NORMAL[1], NORMAL[2], LOOPS[2]])
    assert share == {"n": 4, "degenerate": 2, "share": 0.5}
    empty = degenerate_share([])
    assert empty["n"] == 0 and empty["share"] != empty["share"]  # nan
