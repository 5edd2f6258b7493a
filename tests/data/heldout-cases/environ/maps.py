def valmap(f, d):
    return {k: f(v) for k, v in d.items()}
