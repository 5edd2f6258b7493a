"""Stage 4, review: the case table (cases, and case_index: the same table built while
the runs are read), a case's sources and word diffs (case_source, worddiff), and the two
ways big runs use a second core (halves: `diff` a half per process; judge_apart: the
verdicts in a child process).

May import every earlier core stage: the root, `instrument`, `read` and `judge`.
"""
