"""Stage 1, the instrument: the fixture set and its hashes (fixtures, seal), what pins a
result (pins: dataset hash, grader version, env digest, digests), a tool conversation's
record (conversation) and the graders (graders/, whose source is the grader version).

May import the core root only (errors, files, records, reasons, ...).
"""
