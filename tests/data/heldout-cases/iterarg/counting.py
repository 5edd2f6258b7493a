def count(seq):
    if hasattr(seq, "__len__"):
        return len(seq)
    return sum(1 for _ in seq)
