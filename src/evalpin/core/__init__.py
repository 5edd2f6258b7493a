"""Formats and judgement. Nothing here imports Textual, Rich or the openai SDK."""
