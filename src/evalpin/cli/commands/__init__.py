"""One module per command: options, a call into the core, a renderer."""
