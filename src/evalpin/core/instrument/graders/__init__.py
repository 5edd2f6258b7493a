"""Graders: everything that decides a grade. Their source is the grader version."""
