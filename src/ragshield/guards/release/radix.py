"""Streaming decoders for the base-N and binary encodings an answer can hide a copy in.

Each `RadixView` watches the raw answer for blobs of its alphabet (base64, base32, base85, ascii85,
uuencode, hex, binary), decodes them at every group alignment at once (a blob glued to the text
before it starts at any offset), keeps only decoded bytes that are printable text (a UTF-16 zero
byte is dropped by folding), and feeds the folded symbols to one `Track` per alignment. Decoding
starts once a blob is `min_run` characters long, so ordinary words never reach a decoder; garbage
groups (decoding ordinary text) break the runs instead of matching. A decoder may feed another
(`inner`): base64 of base64.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ragshield.guards.release.fold import fold_text_at
from ragshield.guards.release.tracks import Track

_PRINTABLE = frozenset(range(0x20, 0x7F)) | {0x00, 0x09, 0x0A, 0x0D}


@dataclass(frozen=True)
class RadixSpec:
    """One encoding: its alphabet and in-blob separators (regex class bodies), characters per group,
    the group decoder and the blob length at which decoding starts."""

    name: str
    alphabet: str
    skip: str
    group: int
    decode: Callable[[str], bytes]
    normalise: Callable[[str], str] = str
    min_run: int = 16
    line_prefix: bool = False  # each line starts with a length character (uuencode)
    # the decoder of a blob's last, shorter group (its padding, if any, not in the alphabet), or None
    tail: Callable[[str], bytes] | None = None


def _uu(group: str) -> bytes:
    bits = 0
    for char in group:
        bits = (bits << 6) | ((ord(char) - 32) & 63)
    return bits.to_bytes(3, "big")


def _bits(group: str) -> bytes:
    return int(group, 2).to_bytes(1, "big")


_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def _without_bom(data: bytes) -> bytes:
    """`data` without a leading UTF-8 or UTF-16 byte-order mark: encoded UTF-16 often opens with one,
    and read as a byte that is no text it broke the first group, and the first character of a
    value there (an e-mail address's first letter) was lost."""
    for bom in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :]
    return data


def _padded(decode: Callable[[str], bytes], group: int) -> Callable[[str], bytes]:
    """`decode` of a short last group, padded with `=` to a whole group."""
    return lambda rest: decode(rest + "=" * (group - len(rest)))


SPECS: tuple[RadixSpec, ...] = (
    RadixSpec(
        "base64",
        r"A-Za-z0-9+/\-_",
        r"\n\r",
        4,
        binascii.a2b_base64,
        lambda s: s.replace("-", "+").replace("_", "/"),
        tail=_padded(binascii.a2b_base64, 4),
    ),
    RadixSpec("base32", r"A-Za-z2-7", r"\n\r", 8, base64.b32decode, str.upper, tail=_padded(base64.b32decode, 8)),
    # both decode a short last group themselves (no padding characters)
    RadixSpec("base85", r"0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~", r"\n\r", 5, base64.b85decode, tail=base64.b85decode),
    RadixSpec("ascii85", r"!-u", r"\n\r", 5, base64.a85decode, tail=base64.a85decode),
    RadixSpec("uuencode", r" -`", r"\n\r", 4, _uu, line_prefix=True),
    RadixSpec("hex", r"0-9A-Fa-f", r"\s,;:.%=&#\\xXuU+'\"\-", 2, bytes.fromhex, min_run=8),
    RadixSpec("binary", r"01", r"\s,;:.|_\-", 8, _bits, min_run=16),
)
_HEX_PREFIX = re.compile(r"0[xX](?=[0-9A-Fa-f])")


@dataclass
class RadixView:
    """One encoding's decoder over the raw answer (see the module docstring).

    Args:
        spec: the encoding.
        tracks: one `Track` per group alignment (`spec.group` of them).
        inners: per alignment, a view fed that alignment's decoded text (base64 of base64), or empty.
    """

    spec: RadixSpec
    tracks: Sequence[Track]
    inners: Sequence[RadixView] = ()
    _run: list[str] = field(default_factory=list)
    _owners: list[int] = field(default_factory=list)
    _next: list[int] = field(default_factory=list)  # per alignment: start of its next undecoded group
    _open: bool = False  # the last run touched the end of the last delta (it may continue)
    _line_start: bool = False
    _held: str = ""  # hex: a trailing `0` / `0x` held until the next piece
    _held_owners: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        body, skip = f"[{self.spec.alphabet}]", f"[{self.spec.skip}]"
        # separators may lead and trail a piece, so a blob cut between deltas at a separator continues.
        # A match starts only where a run of separators starts, and separators are never given back
        # (the two classes are disjoint): tried from every separator of a long run, 8,000 of them in
        # an answer cost 1-3 s of release checking (quadratic; a client chooses the answer it checks)
        self._pattern = re.compile(f"(?<!{skip}){skip}*+{body}(?:{skip}*+{body})*+{skip}*+")
        self._only_skip = re.compile(f"{skip}+")
        self._skip = re.compile(skip)
        self._next = list(range(self.spec.group))

    def feed(self, text: str, owners: Sequence[int]) -> None:
        """Consume raw text; `owners[i]` is the answer offset of `text[i]`."""
        if not text:
            return
        if self._open and self._only_skip.fullmatch(text):
            self._line_start = self._line_start or "\n" in text
            return
        if self.spec.name == "hex":
            text, owners = self._hex_prefixes(text, owners)
            if not text:
                return
        continuing, matched = self._open, False
        for match in self._pattern.finditer(text):
            if not (continuing and match.start() == 0):
                self._close_run()
            self._extend(match.group(), owners, match.start())
            continuing, matched = match.end() == len(text), True
        continuing = continuing and matched
        if not continuing:
            self._close_run()
        self._open = continuing

    def _hex_prefixes(self, text: str, owners: Sequence[int]) -> tuple[str, Sequence[int]]:
        """Drop `0x` prefixes; a trailing `0` or `0x` waits for the next piece to say which it is."""
        if self._held:
            text, owners = self._held + text, [*self._held_owners, *owners]
            self._held, self._held_owners = "", []
        hold = 2 if text.endswith(("0x", "0X")) else 1 if text.endswith("0") else 0
        if hold:
            self._held, self._held_owners = text[-hold:], list(owners[len(owners) - hold :])
            text, owners = text[:-hold], owners[: len(owners) - hold]
        if "0x" in text or "0X" in text:
            text, owners = _drop(text, owners, _HEX_PREFIX)
        return text, owners

    def flush(self) -> None:
        if self._held:
            held, owners = self._held, self._held_owners
            self._held, self._held_owners = "", []
            self.feed(held + " ", [*owners, owners[-1]])
        self._close_run()
        for inner in self.inners:
            inner.flush()

    def interrupt(self) -> None:
        """Text that cannot belong to a blob came between two fed pieces: close the open blob."""
        self._close_run()
        for inner in self.inners:
            inner.interrupt()

    def _extend(self, piece: str, owners: Sequence[int], offset: int) -> None:
        kept = []
        for index, char in enumerate(piece):
            if self._skip.match(char):
                self._line_start = char == "\n"
            elif self._line_start and self.spec.line_prefix:
                self._line_start = False  # a line's length character carries no data
            else:
                kept.append((char, owners[offset + index]))
        self._run.extend(self.spec.normalise(char) for char, _ in kept)
        self._owners.extend(owner for _, owner in kept)
        if len(self._run) >= self.spec.min_run:
            self._decode()

    def _decode(self) -> None:
        group, run = self.spec.group, self._run
        for phase, track in enumerate(self.tracks):
            start = self._next[phase]
            decoded: list[str] = []
            decoded_owners: list[int] = []
            while start + group <= len(run):
                owner = self._owners[start]
                try:
                    data = self.spec.decode("".join(run[start : start + group]))
                except (ValueError, binascii.Error):
                    data = b"\xff"
                if start < group:  # a blob's first group may open with a byte-order mark
                    data = _without_bom(data)
                if not data or any(byte not in _PRINTABLE for byte in data):
                    self._emit(phase, track, decoded, decoded_owners)
                    decoded, decoded_owners = [], []
                    track.reset()
                    if self.inners:
                        self.inners[phase].interrupt()
                else:
                    text = data.decode("latin-1")
                    decoded.append(text)
                    decoded_owners.extend([owner] * len(text))
                start += group
            self._next[phase] = start
            self._emit(phase, track, decoded, decoded_owners)

    def peek_tail(self) -> None:
        """Read the blob as if it ended here, on forks of the tracks (their runs reach the sink; the
        tracks go on as they were). The word that comes next may be the blob's last line (`MQA`)
        or ordinary text on the next line (`Thanks`), whose letters would fill the short group."""
        if self.spec.tail is not None and len(self._run) >= self.spec.min_run:
            self._decode_tail([track.fork() for track in self.tracks], inners=False)

    def _decode_tail(self, tracks: Sequence[Track], *, inners: bool = True) -> None:
        """The blob ended: decode each alignment's last, shorter group (`=` padding is not in the
        alphabet, so a padded blob ends there). Without it, a value in a blob's last one or two
        bytes (a phone number's last digit) never reached the tracks whole."""
        if self.spec.tail is None:
            return
        for phase, track in enumerate(tracks):
            start = self._next[phase]
            rest = self._run[start:]
            if not 0 < len(rest) < self.spec.group:
                continue
            try:
                data = self.spec.tail("".join(rest))
            except (ValueError, binascii.Error):
                continue
            if data and all(byte in _PRINTABLE for byte in data):
                text = data.decode("latin-1")
                # owned so that a span ends with the blob: a track ends a symbol's span a whole
                # group after its owner, which from the short group's start reached past the blob
                # into the next word
                owner = self._owners[-1] + 1 - self.spec.group
                if inners:
                    self._emit(phase, track, [text], [owner] * len(text))
                else:
                    track.feed(*fold_text_at(text, [owner] * len(text)))

    def _emit(self, phase: int, track: Track, decoded: list[str], owners: list[int]) -> None:
        if not decoded:
            return
        text = "".join(decoded)
        track.feed(*fold_text_at(text, owners))
        if self.inners:
            self.inners[phase].feed(text, owners)

    def _close_run(self) -> None:
        if self._run:
            if len(self._run) >= self.spec.min_run:  # decoding started: the tracks hold state
                self._decode_tail(self.tracks)
                for track in self.tracks:
                    track.reset()
            self._run, self._owners = [], []
            self._next = list(range(self.spec.group))
        self._open = False
        self._line_start = self.spec.line_prefix  # a blob's first character may be a line length


def _drop(text: str, owners: Sequence[int], pattern: re.Pattern[str]) -> tuple[str, list[int]]:
    """`text` without `pattern`'s matches, with the owners of the characters kept."""
    kept_text: list[str] = []
    kept_owners: list[int] = []
    cursor = 0
    for match in pattern.finditer(text):
        kept_text.append(text[cursor : match.start()])
        kept_owners.extend(owners[cursor : match.start()])
        cursor = match.end()
    kept_text.append(text[cursor:])
    kept_owners.extend(owners[cursor:])
    return "".join(kept_text), kept_owners
