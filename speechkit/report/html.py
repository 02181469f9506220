"""report.html and comparison.html: the Markdown rendered (markdown-it-py, CommonMark with tables),
the plots embedded as data URIs so the page opens anywhere without its folder, and a coloured
speaker grid."""
from __future__ import annotations

import base64
import html
from collections.abc import Mapping


def html_page(title: str, markdown_body: str, images: Mapping[str, bytes],
              grid: tuple[list[str], list[str], dict[tuple[str, str], str]] = ([], [], {})) -> str:
    """The page of ``markdown_body`` with its ``images`` (file name -> PNG) embedded and the
    speaker ``grid`` (persons, meetings, cells) coloured by name."""
    from markdown_it import MarkdownIt

    for name, data in images.items():
        markdown_body = markdown_body.replace(f"]({name})",
                                              f"](data:image/png;base64,{base64.b64encode(data).decode()})")
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}img{max-width:100%}</style></head><body>",
             MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown_body)]
    persons, meetings, cells = grid
    if persons:
        palette = ["#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5"]
        colours: dict[str, str] = {}
        parts.append("<h2>Speaker-consistency grid</h2><table><tr><th>person</th>" +
                     "".join(f"<th>{html.escape(m)}</th>" for m in meetings) + "</tr>")
        for p in persons:
            row = []
            for m in meetings:
                name = cells.get((p, m), "")
                colour = colours.setdefault(name, palette[len(colours) % len(palette)]) if name else "#fff"
                row.append(f"<td style='background:{colour}'>{html.escape(name)}</td>")
            parts.append(f"<tr><th>{html.escape(p)}</th>{''.join(row)}</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)
