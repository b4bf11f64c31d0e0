"""Look-alike characters folded to the Latin letters they imitate (for `CanaryMatcher`).

Case is kept: the table is applied before casefolding (upper-case Greek Eta is H, lower-case eta is
n) and again after it. NFKD already folds fullwidth, mathematical, circled and other compatibility
forms, so only look-alikes from other scripts and phonetic blocks are listed here (Cyrillic, Greek,
Cherokee, small capitals).
"""

from __future__ import annotations

# fmt: off
CONFUSABLES: dict[str, str] = {
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X",
    "У": "Y", "Ѕ": "S", "І": "I", "Ј": "J", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Ү": "Y", "Ӏ": "I", "а": "a", "в": "b",
    "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "х": "x", "у": "y", "ѕ": "s",
    "і": "i", "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ь": "b", "Ƅ": "b", "ƅ": "b", "г": "r",
    "п": "n", "ү": "y", "ɡ": "g", "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n",
    "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ϲ": "c", "ϳ": "j",
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɩ": "i", "ʏ": "y", "ᴀ": "a", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ᴋ": "k", "ᴍ": "m",
    "ɴ": "n", "ᴏ": "o", "ᴘ": "p", "ʀ": "r", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v", "ᴡ": "w", "ᴢ": "z", "Ꭺ": "A", "Ᏼ": "B",
    "Ꮯ": "C", "Ꭼ": "E", "Ꮋ": "H", "Ꭻ": "J", "Ꮶ": "K", "Ꮇ": "M", "Ꮲ": "P", "Ꭲ": "T",
}
# fmt: on

# invisible characters that count as letters (so dropping non-alphanumerics would keep them)
INVISIBLE_LETTERS = ("\u115f", "\u1160", "\u3164", "\uffa0")
