"""US postal addresses found by regular expressions (no model).

spaCy's small English pipeline tags the city of an address (GPE) but rarely the street
line: "0008 Sheila Light" comes out as an ORG, "22482 Wong Hill" as a DATE plus a PERSON.
A street line has a fixed shape, so a pattern finds it reliably: a building number, one
to four capitalised words, a street suffix from USPS Publication 28 (appendix C1, the
list Faker's addresses use too) or its common abbreviation, an optional unit ("Suite 851",
"Apt. 3"), and optionally ", City, ST 12345". Military addresses (PSC/Unit/ship with
APO/FPO/DPO) and PO boxes are matched too, and so is a "City, ST 12345" line on its own.
Words must be capitalised, so prose such as "I walk 2 miles in the park" is not an address.

One more fixed shape is a name that introduces itself: "my name is Brett Kerr", "Name: Brett
Kerr". The small NER model misses about one in twenty of those in the synthetic records; the
capitalised words after the phrase (up to three, a title such as "Dr." skipped) are a name.
"""

from __future__ import annotations

import re

__all__ = ["ADDRESS_RECOGNIZER", "NAME_INTRO_RECOGNIZER", "find_addresses", "find_introduced_names"]

ADDRESS_RECOGNIZER = "regex:us-address"
NAME_INTRO_RECOGNIZER = "regex:name-intro"

# USPS Publication 28, appendix C1 (primary street suffix names), plus common abbreviations
_SUFFIXES = """
Alley Avenue Bayou Beach Bend Bluff Bluffs Bottom Boulevard Branch Bridge Brook Brooks Burg Burgs Bypass Camp
Canyon Cape Causeway Center Centers Circle Circles Cliff Cliffs Club Common Commons Corner Corners Course Court
Courts Cove Coves Creek Crescent Crest Crossing Crossroad Crossroads Curve Dale Dam Divide Drive Drives Estate
Estates Expressway Extension Extensions Fall Falls Ferry Field Fields Flat Flats Ford Fords Forest Forge Forges
Fork Forks Fort Freeway Garden Gardens Gateway Glen Glens Green Greens Grove Groves Harbor Harbors Haven Heights
Highway Hill Hills Hollow Inlet Island Islands Isle Junction Junctions Key Keys Knoll Knolls Lake Lakes Land
Landing Lane Light Lights Loaf Lock Locks Lodge Loop Mall Manor Manors Meadow Meadows Mews Mill Mills Mission
Motorway Mount Mountain Mountains Neck Orchard Oval Overpass Park Parks Parkway Parkways Pass Passage Path Pike
Pine Pines Place Plain Plains Plaza Point Points Port Ports Prairie Radial Ramp Ranch Rapid Rapids Rest Ridge
Ridges River Road Roads Route Row Rue Run Shoal Shoals Shore Shores Skyway Spring Springs Spur Spurs Square
Squares Station Stravenue Stream Street Streets Summit Terrace Throughway Trace Track Trafficway Trail Trailer
Tunnel Turnpike Underpass Union Unions Valley Valleys Via Viaduct View Views Village Villages Ville Vista Walk
Walks Wall Way Ways Well Wells
Aly Ave Av Blvd Br Brg Byp Cir Ct Cv Crk Cres Dr Expy Ext Fwy Gdns Hts Hwy Jct Ln Mnr Pkwy Pl Plz Pt Rd Rte Sq
St Ste Ter Trl Tpke Vw Xing
"""
_STATES = """
AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR
PA RI SC SD TN TX UT VT VA WA WV WI WY AS FM GU MH MP PW PR VI AA AE AP
"""


def _alternation(words: str) -> str:
    return "|".join(sorted(set(words.split()), key=lambda word: (-len(word), word)))


# a name word is at most 41 characters: unbounded, a match was tried from every capital of a long
# token ("A'A'A'...") to its end, 1.2 s for 8,000 characters (quadratic in text a client sends)
_REST = "{0,40}"
_WORD = rf"(?:[A-Z][A-Za-z'-]{_REST}|\d{{1,3}}(?:st|nd|rd|th))"
_CITY_STATE = rf"[A-Z][A-Za-z.'-]{_REST}(?:[ \t]+[A-Z][A-Za-z.'-]{_REST}){{0,3}},?[ \t]+(?:{_alternation(_STATES)})\b"
_ZIP = r"\d{5}(?:-\d{4})?\b"
_STREET = (
    rf"\b\d{{1,6}}[A-Z]?(?:[ \t]+{_WORD}){{1,4}}[ \t]+(?:{_alternation(_SUFFIXES)})\b\.?"
    # a unit needs a number, so a city spelt "Steveberg" is not read as "Ste veberg"
    r"(?:,?[ \t]+(?:(?:Apt|Apartment|Suite|Ste|Unit|Floor|Fl|Room|Rm)\b\.?|\#)[ \t]*[A-Za-z]?\d[A-Za-z0-9-]*)?"
    rf"(?:,?\s+{_CITY_STATE}(?:[ \t]+{_ZIP})?)?"
)
_MILITARY = (
    r"\b(?:PSC[ \t]+\d{4},?[ \t]+Box[ \t]+\d{4}|Unit[ \t]+\d{4},?[ \t]+Box[ \t]+\d{4}|(?:USNS|USS|USNV|USCGC)"
    r"[ \t]+[A-Z][a-z]+),?\s+(?:APO|FPO|DPO)[ \t]+A[AEP][ \t]+\d{5}\b"
)
_PO_BOX = rf"\bP\.?[ \t]?O\.?[ \t]+Box[ \t]+\d{{1,6}}(?:,?\s+{_CITY_STATE}(?:[ \t]+{_ZIP})?)?"
_CITY_LINE = rf"\b{_CITY_STATE}[ \t]+{_ZIP}"
_ADDRESS = re.compile("|".join(f"(?:{part})" for part in (_MILITARY, _STREET, _PO_BOX, _CITY_LINE)))


def find_addresses(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of the postal addresses in `text`, in order, non-overlapping."""
    spans: list[tuple[int, int]] = []
    for match in _ADDRESS.finditer(text):
        start, end = match.span()
        while end > start and text[end - 1] in " \t,.":
            end -= 1
        spans.append((start, end))
    return spans


_INTRO = re.compile(
    r"\b(?:[Mm]y name is|[Mm]y name's|[Nn]ame:)[ \t]+(?:(?:Dr|Mr|Mrs|Ms|Miss|Prof)\.?[ \t]+)?"
    r"([A-Z][a-z'-]+(?:[ \t]+[A-Z][a-z'-]+){0,2})"
)


def find_introduced_names(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the names that follow "my name is" or "Name:" in `text`."""
    return [match.span(1) for match in _INTRO.finditer(text)]
