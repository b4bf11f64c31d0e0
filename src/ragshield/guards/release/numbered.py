"""`UnnumberedView`: the answer with line numbers removed, folded, for one track.

A copy written one character per numbered line (`1. J`, `2) o`, `10 - 4`) interleaves the line
numbers with the copy's own characters. Its letters still match on the Caesar track (digits are not
letters there), but a value made of digits (a phone number) had no view that read it: the line
numbers are digits too. This view drops a number at the start of each line with the layout after it
(`.`, `)`, `:` or ` -`, then spaces), so the lines' characters run together as written. It follows
only text that has such a line, and holds the last line until its number and layout are complete.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragshield.guards.release.fold import fold_text
from ragshield.guards.release.views import HoldingView

# a line number and its layout, at the start of a line (the view tracks where lines start)
_NUMBER = re.compile(r"[ \t]*\d{1,6}(?:[.):]|[ \t]+-)[ \t]*")
_NUMBERED_LINE = re.compile(r"(?:^|\n)[ \t]*\d{1,6}(?:[.):]|[ \t]+-)")
_LONGEST_PREFIX = 16  # characters after the last line break that may still be an unfinished number


@dataclass
class UnnumberedView(HoldingView):
    """The answer without line numbers (see the module docstring), folded, for one track."""

    _line_start: bool = True  # the next text starts a line (the answer's start, or after a newline)
    _active: bool = False  # a numbered line was seen: from there on this view follows the answer

    def _cut(self, text: str) -> int:
        # hold a short last line: its number and layout may still be unfinished
        last = text.rfind("\n")
        return last + 1 if last != -1 and len(text) - last - 1 < _LONGEST_PREFIX else len(text)

    def _feed(self, text: str, start: int) -> None:
        if not text:
            return
        line_start = self._line_start
        self._line_start = text.endswith("\n")
        if not self._active:
            # a match at the very start counts only where a line starts there
            lines = _NUMBERED_LINE.finditer(text)
            if next((found for found in lines if found.start() or line_start or text[0] == "\n"), None) is None:
                self.track.reset()
                return
            self._active = True
        cursor = 0
        for line in re.finditer(r"[^\n]*\n?", text):
            if not line.group():
                break
            at = line.start()
            if at > 0 or line_start:
                number = _NUMBER.match(text, at, line.end())
                if number is not None:
                    self.track.feed(*fold_text(text[cursor : number.start()], start + cursor))
                    cursor = number.end()
        self.track.feed(*fold_text(text[cursor:], start + cursor))
