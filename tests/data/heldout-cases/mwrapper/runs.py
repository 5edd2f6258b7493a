def split_by(pred, text):
    return [c for c in text if pred(c)]
