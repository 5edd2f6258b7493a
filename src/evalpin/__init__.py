"""evalpin: pinned evaluation runs for coding and tool-using language models."""

__version__ = "0.1.0"
