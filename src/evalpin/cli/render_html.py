"""`diff --html`: one self-contained HTML file to share a comparison.

Pins, then the refusal banner or the clustered call, a table of the moved cases and each
case's detail (reasons, digests, test tails) folded in <details>. No JavaScript at all,
the stylesheet inline, and a Content-Security-Policy that allows only that stylesheet
(by hash): an injected tag that slipped through could neither run nor fetch anything.
Every untrusted string goes through `escape.h` / `escape.h_block`.
"""

from __future__ import annotations

import base64
import hashlib

from evalpin.cli.escape import h, h_block
from evalpin.core.judge.passk import side_by_side
from evalpin.core.judge.report import REFUSE_LINE, DiffReport, Movement, shown_part
from evalpin.core.read.notes import MARK, sorted_notes

# A browser stays responsive well past this; the JSON output has every case.
MAX_CASES = 5000

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #1b1f24; }
h1 { font-size: 1.3rem; } h2 { font-size: 1.1rem; margin-top: 1.6rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: left;
  vertical-align: top; font-family: ui-monospace, monospace; font-size: 13px; }
th { background: #f6f8fa; }
tr.differs td { background: #ffebe9; }
.banner { border: 2px solid #cf222e; background: #ffebe9; padding: .75rem 1rem; }
.banner strong { color: #cf222e; }
.call { border: 1px solid #d0d7de; padding: .75rem 1rem; background: #f6f8fa; }
.regressed { color: #cf222e; font-weight: bold; } .fixed { color: #1a7f37; }
.drift { color: #9a6700; } .recovered { color: #8250df; }
.errored { color: #8250df; font-weight: bold; }
.disputed { color: #bf3989; font-weight: bold; }
pre { background: #f6f8fa; padding: .5rem; overflow-x: auto; white-space: pre-wrap; }
details { margin: .25rem 0; } summary { cursor: pointer; }
"""


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
    return (
        "default-src 'none'; "
        f"style-src 'sha256-{digest}'; "
        "img-src 'none'; script-src 'none'; base-uri 'none'; form-action 'none'"
    )


def _opt(value: str | None) -> str:
    return "<em>missing</em>" if value is None else h(value)


def _reasons(reasons: list[str] | None) -> str:
    if reasons is None:
        return "<em>reasons missing</em>"
    return ", ".join(h(r) for r in reasons) or "-"


def _seed(seed: int | None) -> str:
    return "-" if seed is None else str(seed)


def _pins(report: DiffReport) -> list[str]:
    out = ["<h2>Pins</h2>", "<table><tr><th>pin</th><th>left</th><th>right</th></tr>"]
    for key, lv, rv, differs in report.pin_rows():
        cls = ' class="differs"' if differs else ""
        out.append(f"<tr{cls}><td>{key}</td><td>{_opt(lv)}</td><td>{_opt(rv)}</td></tr>")
    out.append("</table>")
    return out


def _banner(report: DiffReport) -> list[str]:
    out = ['<div class="banner" id="refusal">', f"<p><strong>{h(REFUSE_LINE)}</strong></p>"]
    items = []
    choice = report.baseline
    if choice is not None and choice.refused:
        first, moved = choice.said(h, lambda kinds: f"<strong>{h(', '.join(kinds))}</strong>")
        items += [first, *moved]
    for c in report.prompt_changes:
        items.append(
            f"prompt changed: {h(c.key)}: {h(shown_part(c.before))} (left) vs"
            f" {h(shown_part(c.after))} (right)"
        )
    for m in report.mismatches:
        pairs = "; ".join(
            f"{h(lv)} (left) vs {h(rv)} (right)" + ("" if m.whole_run else f", {n}")
            for lv, rv, n in m.pairs[:5]
        )
        more = f"; and {len(m.pairs) - 5} more" if len(m.pairs) > 5 else ""
        first = (
            f"; first: {h(m.example[0])} ({report.repeat_label} {_seed(m.example[1])})"
            if m.example is not None
            else ""
        )
        items.append(f"{h(m.key)} differs {h(m.extent)}: {pairs}{more}{first}")
    out += ["<ul>", *(f"<li>{i}</li>" for i in items), "</ul>"]
    if report.left is not None:
        out.append(f"<p>{h(report.refusal_said())}</p>")
    out.append("</div>")
    return out


def _call(report: DiffReport) -> list[str]:
    counts = ", ".join(f"{n} {kind}" for kind, n in report.counts.items())
    out = [
        '<div class="call" id="call">',
        f"<p>compared {report.compared} (case, {report.repeat_label}) pairs:"
        f" <strong>{counts}</strong>; "
        f"{len(report.only_left)} only left, {len(report.only_right)} only right</p>",
        f"<p><strong>{h(report.headline())}</strong></p>",
    ]
    if report.stats is not None:
        c = report.stats.clustered
        head, _, call = c.headline().rpartition(": ")
        out.append(f"<p>{h(head)}: <strong>{h(call)}</strong></p>")
        out += [
            f"<p>{h(d)}</p>" for d in (c.difference_text(), c.needed_text(report.repeat_label)) if d
        ]
        out += [f"<p>{h(line)}</p>" for line in side_by_side(report.stats.pass_at_k)]
    out.append("</div>")
    return out


def _detail(m: Movement) -> str:
    parts = ["<p>"]
    for name, status, passed, reasons, words in (
        ("left", m.left_status, m.left_pass, m.left_reasons, m.left_error),
        ("right", m.right_status, m.right_pass, m.right_reasons, m.right_error),
    ):
        shown = status or ("pass" if passed else "fail")
        said = f" ({h(words[:300])})" if words else ""  # an error's or the witness's words
        parts.append(f"{name} {shown}: {_reasons(reasons)}{said}<br>")
    parts.append(f"completion digest {_opt(m.left_digest)} &rarr; {_opt(m.right_digest)}</p>")
    for name, tail in (("left", m.left_tail), ("right", m.right_tail)):
        if tail:
            parts.append(f"<p>{name} test output (tail):</p><pre>{h_block(tail)}</pre>")
    return "".join(parts)


def _causes(report: DiffReport) -> list[str]:
    """What moved, by cause: each reason, tool or test that came or went, with its cases."""
    if not report.causes:
        return []
    out = [
        f"<h2>What moved, by cause ({len(report.causes)})</h2>",
        f"<table><tr><th>cause</th><th>cases</th><th>{report.repeat_label}s</th>"
        "<th>which</th></tr>",
    ]
    for c in report.causes[:MAX_CASES]:
        which = ", ".join(h(case) for case in c.cases[:20])
        more = f" and {len(c.cases) - 20} more" if len(c.cases) > 20 else ""
        out.append(
            f"<tr><td>{h(c.label)}</td><td>{len(c.cases)}</td><td>{c.pairs}</td>"
            f"<td>{which}{more}</td></tr>"
        )
    return out + _table_end(len(report.causes))


def _cases(report: DiffReport) -> list[str]:
    moves = report.ranked()
    out = [
        f"<h2>Moved cases ({len(moves)})</h2>",
        f"<table><tr><th>kind</th><th>case</th><th>{report.repeat_label}</th>"
        "<th>left</th><th>right</th>"
        "<th>detail</th></tr>",
    ]
    for m in moves[:MAX_CASES]:
        out.append(
            f'<tr><td class="{m.kind}">{m.kind}</td><td>{h(m.case_id)}</td>'
            f"<td>{_seed(m.seed)}</td><td>{m.left_status or 'fail'}</td>"
            f"<td>{m.right_status or 'fail'}</td>"
            f"<td><details><summary>reasons and output</summary>{_detail(m)}</details></td></tr>"
        )
    return out + _table_end(len(moves))


def _table_end(rows: int) -> list[str]:
    """The end of a table of `rows` rows shown up to `MAX_CASES`, and how many it left out."""
    more = [f"<p>... and {rows - MAX_CASES} more (see --json)</p>"] if rows > MAX_CASES else []
    return ["</table>", *more]


def _review_notes(report: DiffReport) -> list[str]:
    """The reviewers' notes on the cases listed (`notes.jsonl`), one row each."""
    notes = sorted_notes(report.review_notes)
    if not notes:
        return []
    out = [
        f'<h2 id="review-notes">Review notes ({len(notes)})</h2>',
        "<table><tr><th>case</th><th>note</th><th>by</th></tr>",
    ]
    for case_id, note in notes[:MAX_CASES]:
        out.append(
            f"<tr><td>{MARK} {h(case_id)}</td><td>{h(note.summary())}</td>"
            f"<td>{h(note.byline()) or '-'}</td></tr>"
        )
    return out + _table_end(len(notes))


def _delta(report: DiffReport) -> list[str]:
    rows = report.backend_delta or []
    out = [
        f"<h2>Backend delta ({len(rows)} common cases; not regressions or fixes)</h2>",
        "<details><summary>every common case, left beside right</summary>",
        f"<table><tr><th>case</th><th>{report.repeat_label}</th><th>left</th><th>right</th>"
        "<th>left model</th><th>right model</th></tr>",
    ]
    for row in rows[:MAX_CASES]:
        out.append(
            f"<tr><td>{h(row['case_id'])}</td><td>{_seed(row['seed'])}</td>"
            f"<td>{'pass' if row['left_pass'] else 'fail'}: {_reasons(row['left_reasons'])}</td>"
            f"<td>{'pass' if row['right_pass'] else 'fail'}: "
            f"{_reasons(row['right_reasons'])}</td>"
            f"<td>{_opt(row['left_model'])}</td><td>{_opt(row['right_model'])}</td></tr>"
        )
    out += ["</table>", "</details>"]
    return out


def render_html(report: DiffReport) -> str:
    """The whole HTML document."""
    body = ["<h1>evalpin diff</h1>", "<ul>"]
    for name, side in (("left", report.left), ("right", report.right)):
        if side is None:
            body.append(f"<li><strong>{name}</strong>: no comparable run</li>")
        else:
            body.append(f"<li><strong>{name}</strong>: {h(side.path)} ({h(side.label)})</li>")
    body.append("</ul>")
    body += [f"<p>note: {h(note)}</p>" for note in report.notes]
    if report.refused:
        body += _banner(report) + _pins(report) + _delta(report)
    else:
        body += _call(report) + _pins(report) + _causes(report) + _cases(report)
    body += _review_notes(report)
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_csp()}">',
        '<meta name="referrer" content="no-referrer">',
        "<title>evalpin diff</title>",
        f"<style>{STYLE}</style>",
        "</head><body>",
    ]
    return "\n".join([*head, *body, "</body></html>", ""])
