__all__ = ["first"]


def first(seq):
    return next(iter(seq))
