"""The one version source (hatch reads it for the wheel; the CLI, the environment digest
and `evalpin init` import it). A leaf: it imports nothing, so anything may import it."""

__version__ = "0.3.0"
