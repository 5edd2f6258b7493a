from collections.abc import Sequence


class Vec:
    def __init__(self, *items):
        self._items = items

    def __len__(self):
        return len(self._items)

    def __getitem__(self, i):
        return self._items[i]


Sequence.register(Vec)
