"""Stage 2, reading: a run file or another tool's log into one `RunFile` (rundata: the
rows and pins; runfile: evalpin's reader and writer; formats/: one reader per format
behind one sniffing table), which runs to open (discovery), and review notes (notes).

May import the core root and `core.instrument`.
"""
