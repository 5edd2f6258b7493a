"""Formats and judgement, headless: nothing here imports Textual, Rich or the openai SDK.

The package is laid out by stage, each stage importing only from the stages before it
(and nothing from `evalpin.run`, `evalpin.tui` or `evalpin.cli`; `tests/project/test_imports.py`
holds the order):

0. this root, the shared vocabulary: errors, files, records, reasons, columns,
   shared_pins, sanitize, tiers. Imports nothing of evalpin outside itself.
1. `instrument/`: what pins a result and decides a grade (fixtures, pins, seal,
   conversation, graders/).
2. `read/`: run files and other tools' logs into rows and pins (rundata, runfile,
   formats/, discovery, notes).
3. `judge/`: comparisons, statistics, the publish verdict, history, the report.
4. `review/`: the case table and what the review screens and big diffs build on it.
"""
