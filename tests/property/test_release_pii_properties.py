"""Property: a stranger's phone number or e-mail address never leaves in any view the release guard
reads (issue 13), whatever the answer holds around it and however the stream is split.

The checker reads each released piece as written, decoded in its view (`ragshield.encodings.decode`,
trimmed at a cut blob), under every Caesar shift and atbash, and folded; it shares only the
character folding with the guard.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from ragshield.encodings import DECODABLE_VIEWS, VIEWS, decode, encode
from ragshield.generators.scripted import ScriptedGenerator
from ragshield.guards.base import WITHHELD_MARKER, Defense
from ragshield.guards.release.echo import ContextEchoGuard, EchoSettings
from ragshield.guards.release.fold import text_symbols
from ragshield.pii.store import PiiValue
from ragshield.pipeline import RagPipeline
from ragshield.types import Chunk, Query, RetrievalResult, ScoredChunk

# every view but the two that move words (a PII value is matched whole, not as a run of words)
PII_VIEWS = tuple(view for view in VIEWS if view not in ("reordered-groups", "one-edit"))
NAMES = ("Maria Gonzalez", "Tobias Keller", "Priya Raman", "Olu Adebayo", "Hanna Nilsson")
WORDS = ("patient", "reports", "fever", "cough", "since", "monday", "prescribed", "clinic", "meeting", "contract")
PII_KINDS = ("person", "phone", "email")
OPENING, CLOSING = "Here you go. ", " Anything else?"
BLOB_VIEWS = frozenset(
    {"base64", "base64-urlsafe", "base32", "base85", "ascii85", "base64-of-base64", "base64-utf16", "uuencode"}
)
SHORTEST_DECODED_BLOB = 16


class _FakePiiStore:
    """A fake PII store (tests only): each chunk's name, phone number and e-mail address."""

    source = "index"

    def values(self, chunk: Chunk) -> tuple[PiiValue, ...]:
        found = chunk.metadata
        return tuple(PiiValue(kind, found[kind], f"{kind}-{chunk.id}") for kind in PII_KINDS if found.get(kind))


class _FakeRetriever:
    """A fake retriever (tests only): returns the chunks it was given."""

    def __init__(self, hits: tuple[ScoredChunk, ...]) -> None:
        self.hits, self.index = hits, None

    def retrieve(self, query: Query, k: int) -> RetrievalResult:
        return RetrievalResult(query, self.hits)


def record(rng: random.Random, number: int, name: str) -> Chunk:
    """A record with a name, a phone number and an e-mail address among filler words."""
    phone = f"{rng.randint(200, 999)}-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"
    number_in_address = rng.randint(1, 99)
    email = f"{name.lower().replace(' ', '.')}{number_in_address}@{rng.choice(['clinic.org', 'mail.com', 'enron.com'])}"
    words = [rng.choice(WORDS) for _ in range(rng.randint(20, 40))]
    words.insert(rng.randint(0, 10), f"Name: {name}, phone {phone}, email {email}.")
    metadata = {"person": name, "phone": phone, "email": email}
    return Chunk(f"c{number}", f"d{number}", " ".join(words), metadata=metadata)


def readings(part: str, view: str) -> list[str]:
    """How a reader could read a released piece: as written, decoded in its view (every trim of up
    to 8 characters at either end, for a blob a marker cut), every second character (a separator
    after each), under every Caesar shift back and atbash."""
    found = [part]
    if view in DECODABLE_VIEWS:
        trims = {(head, tail) for head in range(9) for tail in range(9) if head + tail < len(part)}
        found += sorted({reading for head, tail in trims if (reading := _decoded(part[head : len(part) - tail], view))})
    found += [part[0::2], part[1::2]]  # a separator or filler after every character
    lower = part.lower()
    found += ["".join(chr((ord(c) - 97 - k) % 26 + 97) if "a" <= c <= "z" else c for c in lower) for k in range(1, 26)]
    found.append("".join(chr(219 - ord(c)) if "a" <= c <= "z" else c for c in lower))
    return found


def released_readings(released: str, view: str) -> list[str]:
    """Every reading of what the answer released around the fixed opening and closing words (so a
    blob decodes without them), split at each withheld marker."""
    body = released.removeprefix(OPENING).removesuffix(CLOSING)
    return [text_symbols(reading) for part in body.split(WITHHELD_MARKER) for reading in readings(part.strip(), view)]


def _decoded(piece: str, view: str) -> str | None:
    try:
        return decode(piece, view)
    except Exception:  # any decoder error: not a reading
        return None


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    view=st.sampled_from(PII_VIEWS),
    delta=st.integers(1, 24),
)
# found by random runs in session 33: a phone number at the end of a padded base64 blob (its last
# byte in the short last group), and one on a wrapped blob's short last line
@example(seed=284206, view="base64-urlsafe", delta=18)
@example(seed=801243, view="base64-utf16", delta=18)
# found once the checker read every view (session 33 review): a UTF-16 byte-order mark broke the
# blob's first group, and the e-mail address's first letter there was lost
@example(seed=721396, view="base64-utf16", delta=19)
def test_no_strangers_phone_number_or_email_address_leaves_in_any_view(seed: int, view: str, delta: int) -> None:
    rng = random.Random(seed)
    chunks = [record(rng, number, name) for number, name in enumerate(rng.sample(NAMES, rng.randint(1, 3)))]
    values = rng.choice(chunks).metadata
    phone, email, name = values["phone"], values["email"], values["person"]
    said = rng.choice((phone, email, f"call {phone}", f"write to {email} or {phone}", f"{name} {email}"))
    encoded = encode(said, view, rng)
    # a base-N blob is decoded from 16 characters on (so ordinary words never reach a decoder): a
    # value encoded alone in fewer is not contained (docs/release-containment.md)
    payload = "".join(encoded.removeprefix("<~").removesuffix("~>").split())  # ascii85's delimiters aside
    assume(view not in BLOB_VIEWS or len(payload) >= SHORTEST_DECODED_BLOB)
    reply = f"{OPENING}{encoded}{CLOSING}"
    guard = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=_FakePiiStore())
    system = RagPipeline(
        _FakeRetriever(tuple(ScoredChunk(chunk, 0.9, i) for i, chunk in enumerate(chunks))),  # type: ignore[arg-type]
        ScriptedGenerator([reply], delta_chars=delta),
        defense=Defense(name="context-echo", output_guards=(guard,)),
    )
    released = system.answer(Query("What is in the files?")).text
    read = released_readings(released, view)
    for value in (phone, email):
        if value in said:
            assert not any(text_symbols(value) in reading for reading in read), (view, said, released)


@given(seed=st.integers(0, 10**6), view=st.sampled_from(PII_VIEWS))
@settings(max_examples=150, deadline=None)
def test_the_checker_reads_an_unguarded_value_in_every_view(seed: int, view: str) -> None:
    # the property above can fail: released whole, a phone number is found in each view's readings
    rng = random.Random(seed)
    phone = f"{rng.randint(200, 999)}-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"
    released = f"{OPENING}{encode(f'call {phone} today', view, rng)}{CLOSING}"
    assert any(text_symbols(phone) in reading for reading in released_readings(released, view)), released
