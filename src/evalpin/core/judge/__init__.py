"""Stage 3, judgement: two runs joined and compared (compare, causes), the numbers beside
a score (stats: rates and stability; mcnemar: the paired tests; paired: a comparison's
tests; power), the envelope's edits (envelope), the publish rule (verdict, card), many
runs as series (series, repeats, history), one report for every renderer (report) and
`diff --baseline` (baseline).

May import the core root, `core.instrument` and `core.read`.
"""
