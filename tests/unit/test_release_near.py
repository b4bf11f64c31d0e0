"""The near-copy track (`guards.release.near`): what it reports as an edited copy, and what not.

The track is fed folded symbols directly, with a recording sink, so each case pins one rule: where
a chain starts and ends, and which chance matches never count.
"""

from __future__ import annotations

import random

from ragshield.guards.release.near import NearTrack, near_table
from ragshield.guards.release.tracks import Source


class _Runs:
    """Records the source span of every run the track reports."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []

    def run(self, source: Source, first: int, last: int, start_raw: int, end_raw: int) -> None:
        self.spans.append((first, last))


def _reported(chunk: str, answer: str, *, piece: int = 4) -> list[tuple[int, int]]:
    """Feed `answer` (folded symbols) in `piece`-symbol deltas against one chunk; the spans reported."""
    table = near_table()
    table.add(Source.build("c0", "chunk", chunk, range(len(chunk)), range(len(chunk)), [False] * len(chunk)))
    runs = _Runs()
    track = NearTrack(table, runs)
    for start in range(0, len(answer), piece):
        track.feed(answer[start : start + piece], range(start, min(start + piece, len(answer))))
    return runs.spans


def _substituted(text: str, positions: list[int]) -> str:
    letters = list(text)
    for at in positions:
        letters[at] = "#"  # a symbol no chunk holds
    return "".join(letters)


def test_an_edited_copy_is_followed_from_its_first_densely_edited_symbols() -> None:
    rng = random.Random(3)
    chunk = "".join(rng.choice("abcdefghjkmnopqrstuvwxyz") for _ in range(70))
    # an edit every sixth symbol over the first 18 (clean stretches of five), then every twelfth
    answer = _substituted(chunk, [5, 11, 17, 29, 41, 53])
    spans = _reported(chunk, answer)
    assert spans, "an edited copy of 70 symbols was not reported"
    assert min(first for first, _ in spans) == 0  # the densely edited start is counted too
    assert max(last for _, last in spans) == len(chunk) - 1


def _edited_in_cycles(chunk: str, cycle: tuple[int, ...]) -> str:
    """`chunk` with one symbol substituted after each clean stretch, their lengths taken in turn."""
    positions, at, turn = [], 0, 0
    while True:
        at += cycle[turn % len(cycle)]
        if at >= len(chunk):
            return _substituted(chunk, positions)
        positions.append(at)
        at, turn = at + 1, turn + 1


def test_a_copy_whose_edits_leave_only_five_symbol_stretches_is_followed() -> None:
    rng = random.Random(5)
    chunk = "".join(rng.choice("abcdefghjkmnopqrstuvwxyz") for _ in range(90))
    spans = _reported(chunk, _edited_in_cycles(chunk, (5, 3)))  # no exact match of six anywhere
    assert spans and max(last - first + 1 for first, last in spans) >= 60


def test_a_copy_with_edits_clustered_between_six_symbol_stretches_is_followed() -> None:
    rng = random.Random(6)
    chunk = "".join(rng.choice("abcdefghjkmnopqrstuvwxyz") for _ in range(90))
    # stretches of 3, 3 and 7: the seeds cover less than half of what the chain spans
    spans = _reported(chunk, _edited_in_cycles(chunk, (3, 3, 7)))
    assert spans and max(last - first + 1 for first, last in spans) >= 60


def test_two_clean_stretches_with_dense_edits_between_them_are_followed() -> None:
    rng = random.Random(7)
    chunk = "".join(rng.choice("abcdefghjkmnopqrstuvwxyz") for _ in range(120))
    # stretches of ten with dense edits between, six edits every fifth symbol cutting each chain:
    # two matches per chain, little coverage (found by a review: the code before counted them)
    spans = _reported(chunk, _edited_in_cycles(chunk, (10, 4, 4, 4, 4, 10, 4, 4, 4, 4, 4, 4)))
    assert spans and max(last - first + 1 for first, last in spans) >= 30


def test_a_repeated_word_after_a_dropped_symbol_does_not_cut_the_copy_in_two() -> None:
    chunk = "amoxiciiiinnamepriyaramanphoneggagesegasgasgasbudgetpeniciiiinscanprescribed"
    answer = "amoxiciiiinnamepsiyaramanhponeggagesegagasgasbudgeteniciiiinsscanpreschibed"
    spans = _reported(chunk, answer)
    # one chain from the first symbol to the last seed ("presc": "ibed" after the last edit is too short)
    whole = [span for span in spans if span[0] == 0 and span[1] >= chunk.index("scan")]
    assert whole, f"the copy was reported in pieces: {spans}"


def test_two_common_words_as_far_apart_in_the_answer_as_in_the_chunk_are_not_a_copy() -> None:
    # "doctor" and "there is" (13 symbols) stand 29-31 symbols apart: seeds on near diagonals, nothing between
    chunk = "pleasetaikwithadoctorihadactscanwhichshowsthatthereisafiuidcoiiection"
    answer = "youcanaskyourdoctorfinditappropriateforyouthereisnothingeiseto"
    assert _reported(chunk, answer) == []


def test_a_shared_phrase_with_a_chance_five_symbol_match_nearby_is_not_a_copy() -> None:
    # "more context" (11 symbols) is shared and "ethat" matches by chance four symbols before it,
    # on the same diagonal: one exact match of six or more, so not a copy
    chunk = "wesawethatthetestgmorecontextforthedoctor"
    answer = "responsethatprovidesmorecontextandciarifies"
    assert _reported(chunk, answer) == []


def test_a_long_exact_match_is_reported_like_an_exact_run() -> None:
    chunk = "thepatientreceivedamoxiciiiinfortwoweeksandrecovered"
    answer = "yesreceivedamoxiciiiinfortwoweeksthen"
    spans = _reported(chunk, answer)
    assert spans and max(last - first + 1 for first, last in spans) >= len("receivedamoxiciiiinfortwoweeks")
