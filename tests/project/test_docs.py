"""The docs site: `mkdocs build --strict` succeeds, offline, and the generated pages say
what the code says (the CLI from the click group, reason codes from the registry, keys
from the Textual bindings, run file fields from the record structs).

One build per module, into a temporary folder.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import click
import msgspec
import pytest

from evalpin.cli import cli
from evalpin.core import reasons, records
from evalpin.tui.app import EvalpinApp
from evalpin.tui.screens.help import key_label, sections

pytestmark = pytest.mark.slow  # builds the whole docs site (tests/lanes.py)

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"
# What a page may load: a tag and the attribute that makes the browser fetch it.
LOADS = {
    "script": "src",
    "link": "href",
    "img": "src",
    "iframe": "src",
    "source": "src",
    "video": "src",
    "audio": "src",
    "embed": "src",
    "object": "data",
}
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.I)


@dataclass(frozen=True)
class Site:
    root: Path
    log: str

    def page(self, path: str) -> str:
        """The text of a built page's article, tags stripped, entities decoded."""
        source = (self.root / path / "index.html").read_text(encoding="utf-8")
        article = re.search(r"<article\b.*?</article>", source, re.S)
        assert article is not None, path
        text = re.sub(r"<[^>]+>", " ", article.group(0))
        return re.sub(r"\s+", " ", html.unescape(text))

    def flat(self, path: str) -> str:
        """The same without any white space (inline tags split words into pieces)."""
        return re.sub(r"\s", "", self.page(path))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(REPO / "mkdocs.yml"),
            "--site-dir",
            str(out),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log
    return Site(out, log)


def test_build_is_strict_and_clean(site: Site) -> None:
    assert "WARNING" not in site.log, site.log
    assert (site.root / "index.html").is_file()
    assert (site.root / "tutorial" / "index.html").is_file()
    assert (site.root / "api" / "index.html").is_file()


def _commands() -> list[tuple[str, click.Command]]:
    return sorted((name, c) for name, c in cli.commands.items() if not c.hidden)


def test_cli_page_lists_every_command_and_option(site: Site) -> None:
    text = site.page("reference/cli")
    ctx = click.Context(cli, info_name="evalpin")
    listed = cli.list_commands(ctx)
    assert listed, "the click group has no commands"
    for name, command in _commands():
        assert name in listed
        assert f"evalpin {name}" in text, name
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                for opt in param.opts + param.secondary_opts:
                    assert opt in text, f"evalpin {name} {opt}"
    assert "Sentinel.UNSET" not in text


def test_reason_page_lists_every_registered_code(site: Site) -> None:
    text = site.page("reference/reasons")
    flat = site.flat("reference/reasons")
    for code in reasons.REGISTRY.values():
        assert code.form in text, code.form
        # every word of the meaning (`__import__` kept as code, not read as emphasis)
        assert re.sub(r"\s", "", code.meaning) in flat, code.form


def test_keys_page_lists_every_binding(site: Site) -> None:
    text = site.page("reference/keys")
    for section, bindings in sections(EvalpinApp.BINDINGS):
        assert section in text, section
        for binding in bindings:
            assert " ".join(key_label(binding.key).split()) in text, binding
            assert (binding.tooltip or binding.description) in text, binding


def test_run_files_page_lists_every_record_field(site: Site) -> None:
    text = site.page("reference/run-files")
    assert records.SCHEMA in text
    for struct in (records.RunHeader, records.CaseRecord, records.Summary):
        for field in msgspec.structs.fields(struct):
            assert field.encode_name in text, (struct.__name__, field.encode_name)


def test_changelog_page_is_the_changelog(site: Site) -> None:
    text = site.page("changelog")
    versions = re.findall(
        r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", _read(REPO / "CHANGELOG.md"), re.M
    )
    assert versions[:1] == ["0.3.0"] and "0.1.0" in versions
    for version in versions:
        assert f"[{version}]" in text


class _Loads(HTMLParser):
    """Every URL a page makes the browser fetch, and inline CSS."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.files: list[str] = []  # what must exist: pictures, scripts, stylesheets, icons
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        attr = LOADS.get(tag)
        if attr and values.get(attr):
            self.urls.append(values[attr] or "")
            rel = set((values.get("rel") or "").split())
            if tag != "link" or rel & {"stylesheet", "icon", "preload", "modulepreload"}:
                self.files.append(values[attr] or "")
        if values.get("srcset"):
            self.urls += [part.split()[0] for part in (values["srcset"] or "").split(",")]
        if values.get("style"):
            self.styles.append(values["style"] or "")
        self._in_style = tag == "style"

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)


def _css_fetches(css: str) -> list[str]:
    found = re.findall(r"url\(\s*['\"]?([^'\")]+)", css)
    found += re.findall(r"@import\s+['\"]([^'\"]+)", css)
    return [u for u in found if not u.startswith("data:")]


def _pages(site: Site) -> list[Path]:
    pages = sorted(site.root.rglob("*.html"))
    assert len(pages) > 10
    return pages


def test_nothing_is_loaded_from_another_host(site: Site) -> None:
    external = []
    for page in _pages(site):
        parser = _Loads()
        parser.feed(page.read_text(encoding="utf-8"))
        fetched = parser.urls + [u for s in parser.styles for u in _css_fetches(s)]
        external += [(page, u) for u in fetched if EXTERNAL.match(u)]
        assert "fonts.googleapis" not in page.read_text(encoding="utf-8"), page
    for sheet in site.root.rglob("*.css"):
        external += [
            (sheet, u) for u in _css_fetches(sheet.read_text(encoding="utf-8")) if EXTERNAL.match(u)
        ]
    assert not external, external


def test_every_picture_shown_exists(site: Site) -> None:
    shown = 0
    for page in _pages(site):
        parser = _Loads()
        parser.feed(page.read_text(encoding="utf-8"))
        for url in parser.files:
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or not parts.path:
                continue
            path = unquote(parts.path)
            # 404.html is served from any depth: its links are absolute, from the root
            base = site.root if path.startswith("/") else page.parent
            target = (base / path.lstrip("/")).resolve()
            assert target.is_file(), (page, url)
            shown += url.endswith((".svg", ".png"))
    assert shown >= len(list((REPO / "screenshots").glob("*.svg")))
    # the sources too: README's and every page's pictures name files that exist
    for source in [README, *DOCS.rglob("*.md")]:
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", _read(source)):
            base = REPO if source == README else source.parent
            path = (base / target).resolve()
            if not path.exists() and "screenshots/" in target:
                # docs pages show the repository's screenshots/ (added by docs/hooks.py)
                path = REPO / "screenshots" / target.rsplit("screenshots/", 1)[1]
            assert path.is_file(), (source, target)


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_readme_is_a_short_front_door() -> None:
    text = _read(README)
    assert len(text.splitlines()) < 150
    assert "pip install -e '.[docs]' && mkdocs serve" in text
    assert re.search(r"!\[[^\]]*\]\(screenshots/[^)]+\)", text)
    # its first two commands are the getting-started page's, byte for byte
    fences = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert len(fences) >= 2
    started = _read(DOCS / "getting-started.md")
    for command in fences[:2]:
        assert f"```sh\n{command}```" in started
    # every relative link of the README names a file in the repository
    for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", text):
        if not EXTERNAL.match(target) and ":" not in target:
            assert (REPO / target).exists(), target


def test_shell_completion_names_the_console_script() -> None:
    import tomllib

    scripts = tomllib.loads(_read(REPO / "pyproject.toml"))["project"]["scripts"]
    page = _read(DOCS / "how-to" / "shell-completion.md")
    for name in scripts:
        var = f"_{name.upper().replace('-', '_')}_COMPLETE"
        for shell in ("bash", "zsh", "fish"):
            assert f"{var}={shell}_source {name}" in page
