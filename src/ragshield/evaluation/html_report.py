"""`report.html`: the whole evaluation report as ONE self-contained HTML file to share.

The same sections as `report.md` (`ragshield.evaluation.tables.sections`), the warnings at
the top, and the plots embedded as base64 PNG data URIs: no script, no stylesheet link, no
external image, so it opens offline and can be mailed or attached to a ticket. Every piece of
text is passed through `html.escape` before any markup is added (attack and defense names,
failure messages and model names come from configs, data and models).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

from ragshield.evaluation.results import ResultTable
from ragshield.evaluation.tables import Section, TextTable, sections
from ragshield.evaluation.units import MISSING

_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 110em; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; vertical-align: top; }
th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
th { background: #f2f2f2; }
td.missing { background: #fff3cd; color: #8a6d3b; font-style: italic; }
section.warnings { border: 2px solid #d9534f; background: #fdf0ef; padding: 0.2em 1em; }
img { max-width: 100%; border: 1px solid #eee; }
code { background: #f6f6f6; padding: 0 0.2em; }
"""


def inline(text: str) -> str:
    """`text` escaped for HTML, then its `code` and **bold** spans marked up (safe: the markup
    is added after escaping, and escaping leaves no backtick or asterisk special)."""
    escaped = html.escape(text, quote=True)
    return _BOLD.sub(r"<strong>\1</strong>", _CODE.sub(r"<code>\1</code>", escaped))


def _table(grid: TextTable) -> str:
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in grid.header)
    rows = []
    for row in grid.rows:
        cells = "".join(
            f'<td class="missing">{html.escape(cell)}</td>' if cell == MISSING else f"<td>{html.escape(cell)}</td>"
            for cell in row
        )
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _section(section: Section, level: int) -> str:
    css = ' class="warnings"' if section.title == "Warnings" else ""
    parts = [f"<section{css}><h{level}>{inline(section.title)}</h{level}>"]
    parts += [f"<p>{inline(text)}</p>" for text in section.paragraphs]
    if section.table is not None:
        parts.append(_table(section.table))
    if section.bullets:
        parts.append("<ul>" + "".join(f"<li>{inline(item)}</li>" for item in section.bullets) + "</ul>")
    parts += [f"<p>{inline(text)}</p>" for text in section.after]
    return "".join(parts) + "</section>"


def render_html(table: ResultTable, images: Mapping[str, str]) -> str:
    """The report as one HTML document; `images` maps a plot's file name to its PNG as base64."""
    parts = sections(table)
    title = html.escape(parts[0].title.replace("`", ""))  # <title> holds text only
    body = [_section(parts[0], 1), *(_section(section, 2) for section in parts[1:])]
    plots = [
        f'<figure><img alt="{html.escape(name)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{html.escape(name)}</figcaption></figure>"
        for name, data in images.items()
        if re.fullmatch(r"[A-Za-z0-9+/=]*", data)  # base64 only: nothing else reaches the attribute
    ]
    body.append("<section><h2>Plots</h2>" + ("".join(plots) or "<p>No plots.</p>") + "</section>")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>{_STYLE}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
