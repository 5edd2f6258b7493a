"""The review TUI (`evalpin review`): Textual screens and widgets over the headless core.

Nothing outside this package imports it, so commands other than `review` never load
Textual. `app.make_app` builds the app for the command line, the tests and the scripts.
"""
