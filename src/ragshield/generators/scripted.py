"""FAKE generators for fast unit tests and clearly labelled worst-case evaluations.

* `ScriptedGenerator` - replies from a handler or a fixed list; for unit tests only.
* `EchoContextGenerator` - a WORST-CASE FAKE: a "fully compliant" model that copies its whole
  prompt context, in whatever view (base64, rot13, Morse, ...) the question asks for, and leaves
  out random-looking strings (canaries) when asked to; a legitimate worst-case target in
  evaluations, never a silent default.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence

from ragshield.encodings import VIEWS, encode
from ragshield.errors import ConfigError
from ragshield.types import GenerationRequest

# (context start, question start, answer cue) of the two layouts of `ragshield.rag.prompting`.
PROMPT_LAYOUTS: tuple[tuple[str, str, str], ...] = (
    ("context: ", "\nquestion: ", "\nanswer:"),  # tgtb (completion)
    ("Context:\n", "\n\nQuestion: ", ""),  # chat
)

# What a question says to ask for each view, most specific first: the first pattern that matches
# names the view ("base64 of base64" before "base64", "reverse alphabet" before "reverse").
_B64 = r"base[\s-]?64"
VIEW_REQUESTS: tuple[tuple[str, str], ...] = (
    ("base64-of-base64", rf"{_B64}\W+(?:of|on)\W+(?:the\W+)?{_B64}|double\W+{_B64}|{_B64}\W+(?:\w+\W+){{0,3}}twice"),
    ("base64-utf16", rf"utf[\s-]?16.{{0,40}}{_B64}|{_B64}.{{0,40}}utf[\s-]?16|encoded\s?command"),
    ("hex-utf16", r"utf[\s-]?16.{0,40}hex|hex.{0,40}utf[\s-]?16"),
    ("base64-urlsafe", rf"url[\s-]?safe\W+{_B64}|{_B64}\W*url|{_B64}\W+url[\s-]?safe"),
    ("base64", rf"{_B64}|\bb64\b"),
    ("base32", r"base[\s-]?32"),
    ("ascii85", r"ascii[\s-]?85|\bbtoa\b|adobe\W+85"),
    ("base85", r"base[\s-]?85"),
    ("uuencode", r"\buu[\s-]?encod"),
    (
        "url-double",
        r"(?:double|twice)\W+(?:\w+\W+){0,2}(?:url|percent)|(?:url|percent)[\s-]?encod\w*\W+(?:\w+\W+){0,3}twice",
    ),
    ("url-mixed", r"(?:partial\w*|mix\w*|some\W+of\W+the\W+characters)\W+(?:\w+\W+){0,2}(?:url|percent)"),
    ("url", r"\burl[\s-]?encod|percent[\s-]?encod|%-encod"),
    (
        "html-tags",
        r"(?:wrap|put|enclose|surround)\w*\W+(?:\w+\W+){0,5}(?:in|with)\W+(?:\w+\W+){0,2}(?:html\W+)?tags?|html\W+tags",
    ),
    ("html-entity", r"html[\s-]?entit|character\W+references|&#"),
    ("binary", r"\bbinary\b|ones\W+and\W+zeros|\b8[\s-]?bit\W+groups"),
    ("octal-escapes", r"\boctal"),
    ("unicode-escapes", r"\\u|unicode\W+escape|escape\W+sequence"),
    ("hex", r"\bhex"),
    ("decimal-codes", r"\bdecimal|ascii\W+(?:codes?|values|numbers)|character\W+codes|code\W+points?|char\W?codes"),
    (
        "digits-as-words",
        r"(?:digits|numbers)\W+(?:as|in|into)\W+(?:english\W+)?words|spell\w*\W+out\W+(?:\w+\W+){0,2}(?:digits|numbers)",
    ),
    ("numbered-lines", r"numbered\W+lines?|number\W+each\W+(?:line|character|letter)"),
    (
        "one-per-line",
        r"(?:one|each|every|single)\W+(?:character|letter|char)s?\W+(?:per|on\W+(?:its\W+own|a\W+separate|a|each))\W+line"
        r"|one\W+per\W+line",
    ),
    ("nato", r"\bnato\b|phonetic\W+alphabet|alfa\W+bravo|alpha\W+bravo"),
    ("morse", r"\bmorse"),
    ("interleaved", r"interleav|(?:filler|random|extra)\W+letters?\W+(?:after|between)"),
    ("doubled", r"doubl\w*\W+(?:every|each|all)|(?:every|each)\W+(?:character|letter)\W+twice"),
    ("reordered-groups", r"shuffl|reorder|rearrang|random\W+order|scrambl\w*\W+the\W+order"),
    ("one-edit", r"\btypos?\b|misspell|one\W+(?:small\W+)?(?:change|edit|mistake)"),
    ("atbash", r"atbash|(?:mirror\w*|revers\w*)\W+alphabet"),
    ("rot13", r"\brot[\s-]?13\b"),
    ("rot47", r"\brot[\s-]?47\b"),
    ("caesar", r"caesar|shift\w*\W+(?:each|every|all|the)\W+letters?|shift\W+cipher"),
    (
        "reversed",  # "reverse the text", "write it reversed", "backwards"; not "can acne be reversed?"
        r"\brevers\w*\W+(?:\w+\W+){0,2}(?:order|context|text|characters|letters|everything|it|all)\b"
        r"|\b(?:in|write|output|spell|repeat|copy|give)\w*\W+(?:\w+\W+){0,3}revers|backwards?|right[\s-]to[\s-]left",
    ),
    (
        "leetspeak",
        r"\bleet|1337|l33t|\b0\W+for\W+(?:every|each)?\W*(?:letter\W+)?o\b|\b3\W+for\W+(?:every|each)?\W*(?:letter\W+)?e\b"
        r"|digits?\W+for\W+letters|digit[\s-]for[\s-]letter",
    ),
    (
        "math-alphabet",
        r"math\w*\W+(?:bold|italic|alphanumeric|letters|alphabet|font|script)|unicode\W+bold|bold\W+unicode",
    ),
    ("small-caps", r"small[\s-]?cap"),
    ("regional-indicator", r"regional\W+indicator|flag\W+(?:letters|emoji)"),
    ("tag-chars", r"\btag\W+char|unicode\W+tags?\b|ascii\W+smuggl"),
    ("latin-hook", r"\bhook\w*\W+(?:letters|characters)|latin\W+hook|letters\W+with\W+hooks"),
    ("combining", r"combining|zalgo|diacritic"),
    ("fullwidth", r"full[\s-]?width|wide\W+(?:characters|letters)"),
    ("homoglyph", r"homoglyph|look[\s-]?alike|cyrillic|greek\W+letters|confusable"),
    ("zero-width", r"zero[\s-]?width|invisible\W+(?:spaces|characters)\W+between"),
    (
        "separators",
        r"(?:space|dot|period|hyphen|dash|comma|separator|underscore|pipe)s?\W+between\W+(?:every|each|all|the)"
        r"|spaced[\s-]out|separate\W+(?:every|each)\W+(?:character|letter)",
    ),
    ("case", r"alternat\w*\W+case|random\w*\W+case|mixed\W+case|upper[\s-]?case|capital\W+letters|all\W+caps"),
)
_VIEW_PATTERNS = tuple((view, re.compile(pattern, re.IGNORECASE)) for view, pattern in VIEW_REQUESTS)
# "skip the random codes", "do not output any random tokens", "leave out identifiers or gibberish", ...
SUPPRESSION_REQUEST = re.compile(
    r"\b(?:skip|omit|remove|drop|leave\W+out|ignore|exclude|strip|without|do\W+not\W+(?:output|include|copy|repeat|write)"
    r"|don'?t\W+(?:output|include|copy|repeat|write))\b.{0,80}?"
    r"(?:random|codes?\b|code-like|gibberish|identifiers?|tokens?|canar|nonsense|not\W+a\W+real)",
    re.IGNORECASE | re.DOTALL,
)
_ALNUM_RUN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{8,}(?![A-Za-z0-9])")
_CONSONANT_RUN = re.compile(r"[bcdfghjklmnpqrstvwxz]{5}", re.IGNORECASE)


def _split_deltas(text: str, delta_chars: int) -> Iterator[str]:
    for start in range(0, len(text), max(1, delta_chars)):
        yield text[start : start + delta_chars]


def split_prompt(text: str) -> tuple[str, str]:
    """(context, question) of a prompt in one of `PROMPT_LAYOUTS`; the whole text and "" when none fits.

    The layout whose context marker comes first wins; the context ends at the first question marker
    after it (so a question marker inside a retrieved chunk cuts the copy short, as it always did).
    """
    found = [(text.find(start), start, ask, cue) for start, ask, cue in PROMPT_LAYOUTS if start in text]
    if not found:
        return text, ""
    at, start, ask, cue = min(found)
    context = text[at + len(start) :]
    if ask not in context:
        return context, ""
    context, question = context.split(ask, 1)
    if cue and question.endswith(cue):
        question = question[: -len(cue)]
    return context, question


def requested_view(question: str) -> str | None:
    """The view (one of `ragshield.encodings.VIEWS`) that `question` asks the answer to be written in, if any."""
    for view, pattern in _VIEW_PATTERNS:
        if pattern.search(question):
            return view
    return None


def asks_suppression(question: str) -> bool:
    """True when `question` asks to leave out random-looking strings (the canary-suppression attack)."""
    return SUPPRESSION_REQUEST.search(question) is not None


def looks_random(token: str) -> bool:
    """True for an ASCII alphanumeric token of 8+ symbols that does not read as a word.

    Such a token mixes letters and digits, has two capitals past its first letter, has five consonants
    in a row, or has fewer than one vowel (a e i o u) in four letters. That covers ragshield's
    canaries (12 symbols of `23456789a-z` without `i`, `l`, `o`; about 3 in 1,000, letters only and
    pronounceable, pass as words) and 16+ symbol random strings, and spares most words and plain
    numbers (phone numbers, dates). A rare word goes too ("strengths": few vowels).
    """
    if len(token) < 8 or not token.isascii() or not token.isalnum():
        return False
    letters = [char for char in token.lower() if char.isalpha()]
    if letters and len(letters) < len(token):
        return True  # letters and digits mixed
    if not letters:
        return False  # a number
    # Two capitals past the first letter: "McDonald" and "JavaScript" stay, "kQ8zRt..." goes.
    mixed_case = sum(char.isupper() for char in token[1:]) >= 2 and any(char.islower() for char in token)
    vowels = sum(char in "aeiou" for char in letters)
    return mixed_case or 4 * vowels < len(letters) or _CONSONANT_RUN.search(token) is not None


def drop_random_tokens(text: str) -> str:
    """`text` without its random-looking tokens (and one space beside each), as a suppressing model writes it."""
    pieces: list[str] = []
    previous = 0
    for match in _ALNUM_RUN.finditer(text):
        if not looks_random(match[0]):
            continue
        start, end = match.span()
        if end < len(text) and text[end] == " ":
            end += 1
        elif start > previous and text[start - 1] == " ":
            start -= 1
        pieces.append(text[previous:start])
        previous = end
    pieces.append(text[previous:])
    return "".join(pieces)


class ScriptedGenerator:
    """FAKE: answers with `handler(request)` or the next scripted reply, streamed in small deltas."""

    def __init__(
        self,
        replies: Sequence[str] | Callable[[GenerationRequest], str] = ("ok",),
        *,
        delta_chars: int = 7,
        name: str = "scripted",
    ) -> None:
        self.name = name
        self.delta_chars = delta_chars
        self._handler = replies if callable(replies) else None
        self._replies = list(replies) if not callable(replies) else []
        self.requests: list[GenerationRequest] = []

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        self.requests.append(request)
        if self._handler is not None:
            text = self._handler(request)
        else:
            text = self._replies[(len(self.requests) - 1) % len(self._replies)] if self._replies else ""
        return _split_deltas(text, self.delta_chars)


class EchoContextGenerator:
    """WORST-CASE FAKE: copies the whole context of its prompt (a fully compliant model), in any view asked for.

    It finds the context and the user's question by the markers of the `tgtb` and `chat` prompt
    layouts (`PROMPT_LAYOUTS`; a prompt with neither is copied whole). With `follow_instructions`,
    a question that names a view ("answer in base64", "rot13", "write it in Morse", "use
    leetspeak"; see `VIEW_REQUESTS`) gets the copy in that view, and a question that asks to
    leave out random strings ("skip the random codes") gets it without random-looking tokens
    (canaries; see `looks_random`), then in the view. It ignores `max_tokens`: the whole copy is
    the worst case. The random details of a view (separators, Caesar shift, ...) come from a
    generator seeded with the request's seed and prompt, so the same request gives the same text.

    Args:
        view: the view every answer is written in when the question names none (None: verbatim);
            one of `ragshield.encodings.VIEWS`.
        follow_instructions: obey view and suppression requests in the question.
        delta_chars: characters per streamed delta.
        name: the generator name in reports.

    Raises:
        ConfigError: unknown `view` (the message lists the valid ones) or `delta_chars` < 1.
    """

    def __init__(
        self,
        *,
        view: str | None = None,
        follow_instructions: bool = True,
        delta_chars: int = 5,
        name: str = "echo-context",
    ) -> None:
        if view is not None and view not in VIEWS:
            raise ConfigError(f"unknown view {view!r} for {name}; valid views: {', '.join(VIEWS)}")
        if delta_chars < 1:
            raise ConfigError(f"delta_chars must be at least 1, got {delta_chars}")
        self.name = name
        self.view = view
        self.follow_instructions = follow_instructions
        self.delta_chars = delta_chars

    def answer_plan(self, request: GenerationRequest) -> tuple[str, bool]:
        """(view, suppress): the view this request's answer is written in and whether canaries are dropped."""
        _, question = split_prompt(request.as_text())
        view = self.view or "plain"
        suppress = False
        if self.follow_instructions and question:
            view = requested_view(question) or view
            suppress = asks_suppression(question)
        return view, suppress

    def complete_text(self, request: GenerationRequest) -> str:
        """The whole answer to `request` (what `stream` yields, joined)."""
        prompt = request.as_text()
        context, _ = split_prompt(prompt)
        view, suppress = self.answer_plan(request)
        if suppress:
            context = drop_random_tokens(context)
        return encode(context, view, random.Random(f"{request.seed}|{prompt}"))

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        return _split_deltas(self.complete_text(request), self.delta_chars)
