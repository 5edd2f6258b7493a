class Record:
    """Fields given to __new__ only; no __init__ of its own (pyrsistent's PClass)."""

    def __new__(cls, **fields):
        self = super().__new__(cls)
        for k, v in fields.items():
            object.__setattr__(self, k, v)
        return self
