"""The encoded-request sections of the intent report (issue 18): each encoded set read as written
and read decoded, from `benchmarks/intent_encoded.py`'s results."""

from __future__ import annotations

from typing import Any

import query_sets as qs


def encoded_section(enc: dict[str, Any]) -> list[str]:
    """The encoded-request set (`benchmarks/intent_encoded.py`), read as written and read decoded."""
    j = enc["judge"]
    blind = enc["blind_reading"]
    corpus = enc.get("corpus")
    counted = (
        f"{corpus['benign']['decoded']} of {corpus['benign']['n']} benign texts of the corpus and development "
        f"sets get a decoded form (each costs an embedding), {corpus['extraction']['decoded']} of "
        f"{corpus['extraction']['n']} requests do"
        if corpus
        else "the corpus count needs ../shared/data: missing"
    )
    lines = [
        f"**Encoded requests** (`benchmarks/data/intent_encoded_heldout.jsonl`: {j['attack']['decoded']['all']['n']} "
        "requests hidden in base64, hex, reversed, ROT13, Caesar, Atbash and mixed encodings, and "
        f"{j['benign']['decoded']['all']['n']} benign queries that handle encodings innocently; written by a helper "
        "blind to the decoder and every score; `benchmarks/intent_encoded.py`). Read blind once, with the decoder "
        f"of {blind['decoder']}: {blind['attack']} requests caught ({blind['attack_read_as_written']} read as "
        f"written), {blind['benign']} benign flagged; the figures below are the current decoder's, changed after "
        "that reading, so not blind. The guard reads an "
        "encoded query decoded as well (`ragshield.guards.intent_decoding`); "
        f"{counted}; looking for one costs {enc['cost']['median_us']:.0f} us per query.",
        "",
    ]
    lines.append(_encoded_table(j))
    later = (
        (
            "v2",
            "in 14 styles, escapes, binary, Morse, NATO words and layered encodings among them",
            "written by a helper blind to the decoder after the escapes and code runs were committed",
        ),
        (
            "v3",
            "in 44 styles, 75 not in English",
            "written by a helper that read only `benchmarks/data/README.md`, blind to every decoder, while "
            "session 20 extended it",
        ),
        (
            "v4",
            "in 45 styles, 52 of them in rarer tricks (zero-width and invisible characters, ROT47, keyboard shifts, "
            "Braille, Zalgo, upside-down and other letter forms, keyed ciphers), 68 not in English",
            "written by a helper that read only `benchmarks/data/README.md`, blind to every decoder, while "
            "session 22 added the reading of invisible characters, ROT47, keyboard shifts and Braille",
        ),
    )
    for version, styles, written in later:
        if enc.get(f"judge_{version}"):
            blind = enc.get(f"blind_reading_{version}") or {}
            lines += _later_encoded_set(version, styles, written, enc[f"judge_{version}"], blind)
    return lines


def _later_encoded_set(version: str, styles: str, written: str, j: dict[str, Any], blind: dict[str, Any]) -> list[str]:
    """A later encoded set's paragraph and its table."""
    return [
        "",
        f"**Encoded requests, set {version}** (`benchmarks/data/intent_encoded_heldout_{version}.jsonl`: "
        f"{j['attack']['decoded']['all']['n']} requests {styles}, and {j['benign']['decoded']['all']['n']} innocent "
        f"encoding questions; {written}). Its one blind reading, with the decoder of "
        f"{blind.get('decoder', '-')}: {blind.get('attack', '-')} requests caught "
        f"({blind.get('attack_read_as_written', '-')} read as written), {blind.get('benign', '-')} benign flagged"
        + (
            f"; the decoder before it ({before['commit']}) caught {before['attack']} of the same requests "
            f"({before['attack_read_as_written']} read as written) and flagged {before['benign']} benign. "
            if (before := blind.get("decoder_before"))
            else ". "
        )
        + f"Figures below: the current decoder ({j['decoded_forms']['attack']} requests and "
        f"{j['decoded_forms']['benign']} innocent questions get a decoded form), not blind once it changed after "
        "that reading.",
        "",
        _encoded_table(j),
    ]


def _encoded_table(j: dict[str, Any]) -> str:
    """One encoded set's rows, read as written and read decoded, by label, language and style."""
    rows = []
    for label, what in (("attack", "TPR"), ("benign", "FPR")):
        for key, name in (("all", "all"), ("non_english", "not English")):
            rows.append(
                [
                    f"{label} {name} ({what})",
                    qs.rate_cell(j[label]["before"][key]),
                    qs.rate_cell(j[label]["decoded"][key]),
                ]
            )
        for style, r in j[label]["decoded"]["by_style"].items():
            rows.append([f"{label}: {style}", qs.rate_cell(j[label]["before"]["by_style"][style]), qs.rate_cell(r)])
    return qs.markdown_table(["rows", "read as written (before)", "read decoded too (shipped)"], rows)
