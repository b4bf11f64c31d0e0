"""The unnatural-output detector's scanner: per-character costs into a CUSUM, one batch at a time.

`scan` walks a batch of streamed text with the detector's whole state in locals (the hot path) and
returns the new state and the spans the CUSUM confirmed or extended (see `unnatural.py` for the
method and the streaming contract, `unnatural_costs.py` for the costs).

A word of ASCII letters (`[A-Z]?[a-z]+`) that starts after a space or punctuation, outside a
confirmed run, and cannot lift ``S`` to the threshold by itself (ordinary prose) takes one step
(a vowel-poor word such as "drink" too, while the running vowel share is high enough that the
sparse-vowel rule cannot reach it: `WordCosts.share_floor`): its cached costs (`word_costs`) and
the state the letter-by-letter path would leave, to the bit; only its CUSUM and the running vowel
share are stepped per letter, on floats alone. Everything else goes character by character.
"""

from __future__ import annotations

import re
from typing import Any

from ragshield.guards.release.unnatural_costs import (
    ALTERNATION,
    APOSTROPHES,
    CAMEL_REFUND,
    CAPS_LETTER,
    CAPS_TO_LOWER,
    CASE_SWITCH,
    CASELESS,
    CLUSTER,
    CLUSTER_FREE,
    CONSONANT,
    DIGIT,
    DIGIT_AFTER_COMMA,
    DIGIT_AFTER_SPACE,
    DIGIT_LONG,
    DIGIT_SHORT,
    DOUBLING,
    ESCAPE,
    HAS_DIGIT,
    HAS_LETTER,
    HAS_PUNCT,
    INFO,
    LETTER_DIGIT,
    LONG_RUN,
    LONG_RUN_FREE,
    LOW,
    MARK,
    NATO,
    NATO_FIRST,
    NATO_MAX,
    NATO_NEXT,
    NEWLINE,
    ONE_LETTER_LINE,
    ONE_LETTER_WORD,
    PUNCT,
    PUNCT_GLUED,
    PUNCT_REPEAT,
    PUNCT_WORD,
    REPEAT_GAP,
    REPEATED_WORD,
    SHORT_CAPS,
    SPACE,
    SPARSE_VOWELS,
    STACKED_MARK,
    SYMBOL,
    UP,
    VOWEL,
    VOWEL_FLOOR,
    VOWEL_RATE,
    WORD_COSTS,
    WORD_LETTER,
    char_info,
    word_costs,
)
from ragshield.guards.release.unnatural_cusum import word_excursion

_ASCII_WORD = re.compile(r"([A-Z]?[a-z]+ ?)")  # split() puts these words at odd indices
_MARGIN = 1e-9  # float slack when bounding how far a word can lift the CUSUM
State = tuple[Any, ...]  # the scanner's locals between batches (INITIAL_STATE's layout)
Found = tuple[int, int, float]  # a span: start, end (raw offsets), score (see `UnnaturalSpan`)


# the scanner's state at the start of an answer, in the order `scan` unpacks it
INITIAL_STATE = (
    0.0, 0.0, 0, 0, 0, False,  # CUSUM: S, peak, excursion start, peak end, reported end, confirmed
    0, "", "", SPACE,  # characters scanned, previous two (lower-cased) characters, previous class
    0, 0, "", LOW, 0, 0, False, "",  # word: letters, start, char before, last letter class, lower and
    # capital streaks, switched case, its first letters lower-cased
    0, 0, 0, 0.4, 0, 0,  # consonants in a row, marks, alnum run, vowel share, word vowels, consonants
    0, "", False,  # digits in the number, characters since the last number, number has separators
    "", -1, 0, 0, 0, False, 0, 0,  # previous word and its end, line letters, token start, previous
    # word start, NATO chain, token content bits, previous token's bits
)  # fmt: skip


def scan(
    state: State,
    text: str,
    *,
    threshold: float,
    drop: float,
    min_run: int,
    window: int,
    word_steps: bool = True,
) -> tuple[State, list[Found]]:
    """Cost every character of `text`, run the CUSUM and collect the spans it confirms or extends.

    Args:
        state: the scanner's state after the text before (`INITIAL_STATE` at the answer's start).
        text: the next characters of the answer.
        threshold: the cumulative cost a run must reach to be reported (score units).
        drop: an excursion ends once its cost falls this far below its peak.
        min_run: the shortest run reported, in characters.
        window: a span is reported only as far back as this many characters before the end of
            `text` (what the caller still holds back).
        word_steps: score plain words in one step (False: every character alone; same result).

    Returns:
        The new state, and the spans found (raw offsets from the answer's start).

    One flat loop over locals: this is the hot path.
    """
    (
        s, peak, start, peak_end, flagged_end, confirmed,
        pos, prev_low, prev2_low, prev_cls,
        run_len, run_start, run_before, letter_cls, low_streak, caps_streak, switched, word,
        cluster, marks, alnum, vowels, word_vowels, word_consonants,
        digits, gap, num_compound,
        last_word, last_word_end, line_letters, token_start, prev_word_start, nato_chain, tok, prev_tok,
    ) = state  # fmt: skip
    out: list[Found] = []
    rep_start = rep_end = -1  # the span being reported, extended in place while contiguous
    rep_score = 0.0
    info_of, word_of = INFO.get, WORD_COSTS.get
    # inside a confirmed run (a blob) no word takes one step: go character by character at once
    parts = _ASCII_WORD.split(text) if word_steps and not confirmed else (text,)
    ceiling = threshold - _MARGIN  # a word step must keep S below this
    calm = False  # the state is what a word and its space left (so the next word may follow at once)
    for index, part in enumerate(parts):
        if index & 1:  # a word of ASCII letters, maybe with the space after it
            entry = word_of(part) or word_costs(part)  # a cached entry is a non-empty tuple
            if (
                vowels >= entry[12]
                and s + entry[2] < ceiling
                and (calm or (not confirmed and run_len == 0 and alnum == 0 and prev_cls != DIGIT and prev_low != "\\"))
            ):
                # the word in one step: the state the letter-by-letter path would leave
                (
                    costs, positive, _, flags, word, lower, low_streak, cluster, word_vowels, word_consonants,
                    key, plain_end, _,
                ) = entry  # fmt: skip
                for is_vowel in flags:  # the running share, in the same float steps
                    if is_vowel:
                        vowels += (1.0 - vowels) * VOWEL_RATE
                    else:
                        vowels -= vowels * VOWEL_RATE
                if positive:
                    s, peak, start, peak_end, flagged_end = word_excursion(
                        costs, s, peak, start, peak_end, flagged_end, pos, token_start, drop
                    )
                elif s > 0.0:  # no cost above 0: S only falls, until it resets
                    for cost in costs:
                        t = s + cost
                        if t <= 0.0 or t < peak - drop:
                            s = peak = 0.0
                            break
                        s = t
                size = len(lower)
                run_start, run_before = pos, prev_low
                line_letters += size
                if size < len(part) and plain_end and key != last_word:  # the space, when the end costs nothing
                    if 0.0 < s < peak - drop:
                        s = peak = 0.0
                    last_word, last_word_end, prev_word_start = key, pos + size, pos
                    prev2_low, prev_low = lower[-1], " "
                    pos += size + 1
                    token_start = pos
                    prev_tok, tok = tok | HAS_LETTER, 0
                    if not calm:  # what every such word leaves alike
                        prev_cls, switched, run_len, letter_cls, caps_streak, alnum, marks, gap = (
                            SPACE, False, 0, LOW, 0, 0, 0, ""
                        )  # fmt: skip
                        nato_chain, calm = False, True
                    continue
                switched, run_len, letter_cls, caps_streak, alnum, marks, gap = False, size, LOW, 0, size, 0, ""
                tok |= HAS_LETTER
                prev2_low = lower[-2] if size > 1 else prev_low
                prev_low, prev_cls = lower[-1], LOW
                pos += size
                rest = part[size:]  # the space after the word goes character by character
            else:
                rest = part
        elif part:
            rest = part
        else:
            continue  # nothing between two words
        calm = False
        for ch in rest:
            cls, vowel, low, cost = info_of(ch) or char_info(ch)
            hint = -1  # where an excursion starting here begins (-1: the current token)
            if cls <= CASELESS:  # a letter
                if run_len == 0:
                    run_start, run_before, switched, word = pos, prev_low, False, low
                    low_streak, caps_streak = (1, 0) if cls == LOW else (0, 1)
                    cluster = word_vowels = word_consonants = 0
                    if low and prev_cls == DIGIT:
                        cost += LETTER_DIGIT
                    elif low and prev_low == "\\":
                        cost += ESCAPE
                elif cls == CASELESS or letter_cls == CASELESS:
                    cost += WORD_LETTER if cls == letter_cls else 0.0
                elif cls == LOW:
                    if letter_cls == LOW:
                        cost += WORD_LETTER
                        low_streak += 1
                        if low_streak == 3 and switched:
                            cost += CAMEL_REFUND
                    else:
                        cost += CAPS_TO_LOWER if caps_streak >= 2 else WORD_LETTER
                        low_streak = 1
                    caps_streak = 0
                else:  # a capital
                    if letter_cls == UP:
                        cost += CAPS_LETTER
                    else:
                        cost += CASE_SWITCH
                        switched = True
                    caps_streak += 1
                    low_streak = 0
                if low:
                    alnum += 1
                    if alnum > LONG_RUN_FREE:
                        cost += LONG_RUN
                    if run_len:
                        if low == prev2_low and low != prev_low:
                            cost += ALTERNATION
                        elif low == prev_low and prev_low != prev2_low:
                            cost += DOUBLING
                        if run_len < NATO_MAX:
                            word += low
                else:
                    alnum = 0
                if vowel == CONSONANT:
                    cluster += 1
                    if cluster > CLUSTER_FREE:
                        cost += CLUSTER
                    vowels -= vowels * VOWEL_RATE
                    word_consonants += 1
                elif vowel == VOWEL:
                    cluster = 0
                    vowels += (1.0 - vowels) * VOWEL_RATE
                    word_vowels += 1
                else:
                    cluster = 0
                # the running share lags, so the word itself must be vowel-poor too ("hope" after a blob)
                if (
                    vowel
                    and vowels < VOWEL_FLOOR
                    and word_consonants >= 3
                    and word_vowels * 3 < word_consonants
                    and (cls == LOW or run_len > SHORT_CAPS)
                ):
                    cost += SPARSE_VOWELS
                run_len += 1
                letter_cls = cls
                marks = 0
                line_letters += 1
                gap = ""
                tok |= HAS_LETTER
            else:
                if cls == MARK:
                    marks += 1
                    if marks > 2:
                        cost += STACKED_MARK
                else:
                    if cls != DIGIT:
                        alnum = 0
                    if run_len:  # the word ends here
                        if (
                            run_len == 1
                            and word
                            and ch not in APOSTROPHES
                            and run_before not in APOSTROPHES
                            and not (run_before == " " and prev_tok == HAS_DIGIT and tok == HAS_LETTER)
                        ):  # "h e l l o", not "it's" nor a unit after a number ("8 h")
                            cost += ONE_LETTER_WORD
                        if run_len <= NATO_MAX and word in NATO:
                            if nato_chain:
                                cost += NATO_NEXT
                                hint = prev_word_start
                            else:
                                cost += NATO_FIRST
                            nato_chain = True
                        elif run_len > 1:
                            nato_chain = False
                        if run_len > 1 and word:
                            key = f"{word}/{run_len}"
                            if key == last_word and run_start - last_word_end <= REPEAT_GAP:
                                cost += REPEATED_WORD - WORD_LETTER * (run_len - 1)  # "<span>H</span><span>"
                            last_word, last_word_end = key, run_start + run_len
                        prev_word_start = run_start
                        run_len = 0
                if cls == DIGIT:
                    if digits == 0:
                        if len(gap) == 1 and gap in ".,:/-":
                            num_compound = True  # "1,234.5", "3.1", "2024-03-15", "12:30"
                        else:
                            prev_simple = not num_compound
                            num_compound = False
                            if prev_cls in (LOW, UP):
                                cost += LETTER_DIGIT
                            elif gap == " " and prev_simple:
                                cost += DIGIT_AFTER_SPACE
                            elif (gap == ", " or gap == "; ") and prev_simple:
                                cost += DIGIT_AFTER_COMMA
                            elif prev_low == "\\":
                                cost += ESCAPE
                    digits += 1
                    cost += DIGIT_SHORT if digits <= 4 else DIGIT_LONG
                    alnum += 1
                    if alnum > LONG_RUN_FREE:
                        cost += LONG_RUN
                    gap = ""
                    tok |= HAS_DIGIT
                elif cls != MARK:
                    if digits:
                        digits = 0
                        gap = ch
                    elif gap:
                        gap = gap + ch if len(gap) < 3 else "~~~"
                    if cls in (PUNCT, SYMBOL):
                        if ch == prev_low:
                            cost = PUNCT_REPEAT
                        elif prev_cls in (PUNCT, SYMBOL):
                            cost += PUNCT_GLUED
                        elif prev_cls == SPACE and prev_tok == HAS_PUNCT:
                            cost += PUNCT_WORD
                        tok |= HAS_PUNCT
                    elif cls in (NEWLINE, SPACE):
                        if cls == NEWLINE:
                            if line_letters == 1:
                                cost += ONE_LETTER_LINE
                            line_letters = 0
                        if tok:
                            prev_tok, tok = tok, 0
                    else:
                        tok |= HAS_PUNCT
            # -- CUSUM over the costs; spans start at a token and end where S peaked -------------
            if cost > 0.0 or s > 0.0:
                t = s + cost
                end = -1
                if t <= 0.0:
                    s = peak = 0.0
                    confirmed = False
                else:
                    if s <= 0.0:  # a new excursion starts at this character's token
                        start = hint if hint >= 0 else min(token_start, pos)
                        peak = 0.0
                        flagged_end = 0
                        confirmed = False
                    s = t
                    if s > peak:
                        peak, peak_end = s, pos + 1
                        if not confirmed and s >= threshold and pos + 1 - start >= min_run:
                            confirmed = True
                        if confirmed:
                            end = pos + 1
                    elif s < peak - drop:
                        s = peak = 0.0
                        confirmed = False
                    elif confirmed and cls != SPACE and cls != NEWLINE and token_start < peak_end:
                        end = pos + 1  # the rest of the peak's word
                if end > 0:
                    first = max(start, flagged_end, pos + 1 - window)
                    if first < end:
                        if rep_end < first:  # not contiguous with the pending report: emit that one
                            if rep_end > rep_start:
                                out.append((rep_start, rep_end, rep_score))
                            rep_start = first
                        rep_end, rep_score, flagged_end = end, peak, end
            # token boundaries: whitespace, and every caseless-script letter (Chinese has no spaces)
            if cls in (SPACE, NEWLINE, CASELESS):
                token_start = pos + 1
            prev2_low, prev_low, prev_cls = prev_low, (low or ch), cls
            pos += 1
    state = (
        s, peak, start, peak_end, flagged_end, confirmed,
        pos, prev_low, prev2_low, prev_cls,
        run_len, run_start, run_before, letter_cls, low_streak, caps_streak, switched, word,
        cluster, marks, alnum, vowels, word_vowels, word_consonants,
        digits, gap, num_compound,
        last_word, last_word_end, line_letters, token_start, prev_word_start, nato_chain, tok, prev_tok,
    )  # fmt: skip
    if rep_end > rep_start:
        out.append((rep_start, rep_end, rep_score))
    return state, out
