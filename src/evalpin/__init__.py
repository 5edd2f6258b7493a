"""evalpin: pinned evaluation runs for coding and tool-using language models.

`evalpin.read_run`, `evalpin.compare`, `evalpin.verdict` and the types they return are
the Python API (`evalpin.api`, stable within a minor version). They are loaded on first
use, so `import evalpin` stays cheap and loads no Textual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalpin._version import __version__

if TYPE_CHECKING:
    from evalpin.api import (
        REFUSE_LINE,
        CaseRecord,
        CaseRow,
        Comparison,
        DiffReport,
        InputError,
        Movement,
        Run,
        Verdict,
        compare,
        read_run,
        verdict,
    )

__all__ = [
    "REFUSE_LINE",
    "CaseRecord",
    "CaseRow",
    "Comparison",
    "DiffReport",
    "InputError",
    "Movement",
    "Run",
    "Verdict",
    "__version__",
    "compare",
    "read_run",
    "verdict",
]
# What `evalpin.NAME` finds in evalpin.api, loaded on first use.
_API = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    if name in _API:
        from evalpin import api  # on first use: `import evalpin` stays cheap

        return getattr(api, name)
    raise AttributeError(f"module 'evalpin' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
