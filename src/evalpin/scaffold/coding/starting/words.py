def word_count(text: str) -> dict[str, int]:
    counts = {}
    for word in text.split(" "):
        counts[word] = counts.get(word, 0) + 1
    return counts
