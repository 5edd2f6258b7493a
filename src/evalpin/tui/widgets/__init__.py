"""Small widgets of the review screen; each posts messages nested in its own class."""
