"""MkDocs hooks: the parts of the docs that the code is the truth for, made at build time.

- `screenshots/` (at the repository's root, where `scripts/screenshots.py` writes them)
  is added to the site as it is, so pages show `../screenshots/review.svg` without a
  second copy of any picture in git;
- a page marker is replaced by what the code says:
  `<!-- generated: reason-codes -->`: the reason registry's table
  (`evalpin.core.reasons.markdown_table()`), `<!-- generated: keys -->`: every binding of
  the TUI, grouped as the `?` help screen groups them (`evalpin.tui.screens.help`),
  `<!-- generated: run-records -->`: every field of a run file's records, from the
  msgspec structs in `evalpin.core.records`, and `<!-- include: CHANGELOG.md -->`: the
  changelog at the repository's root.

The CLI reference is the `mkdocs-click` directive and the Python API the `mkdocstrings`
one; neither needs a hook.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
PICTURES = (".svg", ".png")


def on_files(files: Files, config) -> Files:
    """Add every picture of `screenshots/` to the site under `screenshots/`."""
    for picture in sorted((ROOT / "screenshots").iterdir()):
        if picture.suffix in PICTURES and picture.is_file():
            files.append(
                File(
                    f"screenshots/{picture.name}",
                    src_dir=str(ROOT),
                    dest_dir=config["site_dir"],
                    use_directory_urls=config["use_directory_urls"],
                )
            )
    return files


def reason_codes() -> str:
    import re

    from evalpin.core.reasons import markdown_table

    # Dunder names in a meaning (`__import__`) would read as Markdown emphasis.
    return re.sub(r"(?<![`\w])(__\w+__)", r"`\1`", markdown_table())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def keys() -> str:
    """One table per place a key works, in the help screen's order."""
    from evalpin.tui.app import EvalpinApp
    from evalpin.tui.screens.help import key_label, sections

    out: list[str] = []
    for section, bindings in sections(EvalpinApp.BINDINGS):
        out += [f"### {section}", "", "| key | does |", "|---|---|"]
        for binding in bindings:
            label = " ".join(f"`{part}`" for part in key_label(binding.key).split(" "))
            out.append(f"| {label} | {_cell(binding.tooltip or binding.description)} |")
        out.append("")
    return "\n".join(out)


def _type(tp) -> str:
    """A field's type as JSON names it: `string | null`, `list[string]`, `object[string, any]`."""
    import types
    import typing

    names = {str: "string", int: "int", float: "number", bool: "bool", type(None): "null"}
    if tp in names:
        return names[tp]
    if tp is typing.Any:
        return "any"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type(a) for a in args if getattr(a, "__name__", "") != "UnsetType")
    if origin is list:
        return f"list[{_type(args[0])}]"
    if origin is dict:
        return f"object[{_type(args[0])}, {_type(args[1])}]"
    return getattr(tp, "__name__", str(tp))


def _field_notes(struct) -> dict[str, str]:
    """The comments beside each field in the struct's source: its `# ...` lines above
    the field, or the one at the end of its line."""
    import inspect
    import re

    notes: dict[str, str] = {}
    above: list[str] = []
    for line in inspect.getsource(struct).splitlines()[1:]:
        stripped = line.strip()
        if stripped.startswith("#"):
            above.append(stripped.lstrip("# "))
            continue
        field = re.match(r"(\w+)\s*:", stripped)
        if field:
            inline = stripped.split("  # ", 1)[1] if "  # " in stripped else ""
            notes[field.group(1)] = " ".join([*above, inline]).strip()
        above = []
    return notes


def run_records() -> str:
    """One table per record of a run file, from the msgspec structs that are the format."""
    import inspect

    import msgspec

    from evalpin.core import records

    kinds = [
        ("Header", records.RunHeader),
        ("`fixtures` in the header", records.FixturesInfo),
        ("`seal` in the header", records.Seal),
        ("Case line", records.CaseRecord),
        ("Summary trailer", records.Summary),
        ("`tools` entries", records.ToolCall),
        ("`turns` entries", records.Turn),
        ("`calls` in a turn", records.TurnCall),
        ("`usage`", records.Usage),
    ]
    out = [f"Schema: `{records.SCHEMA}`.", ""]
    for title, struct in kinds:
        config = struct.__struct_config__
        out += [f"### {title}", "", inspect.getdoc(struct) or "", ""]
        if config.tag_field:
            out += [f'`"{config.tag_field}": "{config.tag}"` marks it.', ""]
        out += ["| field | type | default | notes |", "|---|---|---|---|"]
        notes = _field_notes(struct)
        for field in msgspec.structs.fields(struct):
            if field.required:
                default = "required"
            elif field.default is msgspec.UNSET:
                default = "absent"
            else:
                value = (
                    field.default
                    if field.default is not msgspec.NODEFAULT
                    else field.default_factory()
                )
                default = f"`{msgspec.json.encode(value).decode()}`"
            kind, note = _cell(_type(field.type)), _cell(notes.get(field.name, ""))
            out.append(f"| `{field.encode_name}` | {kind} | {default} | {note} |")
        out.append("")
    return "\n".join(out)


def changelog() -> str:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    # The page has its own title; the file's first heading is dropped.
    first, _, rest = text.partition("\n")
    return rest if first.startswith("# ") else text


MARKERS = {
    "<!-- generated: reason-codes -->": reason_codes,
    "<!-- generated: keys -->": keys,
    "<!-- generated: run-records -->": run_records,
    "<!-- include: CHANGELOG.md -->": changelog,
}


def on_page_content(html: str, page, config, files) -> str:
    """mkdocs-click writes click 8.3's "no default" sentinel as a default; an option
    without one shows a blank cell instead."""
    return html.replace("<td><code>Sentinel.UNSET</code></td>", "<td></td>")


def on_page_markdown(markdown: str, page, config, files) -> str:
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown
