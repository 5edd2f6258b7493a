def first_line(handle):
    return handle.readline().strip()
