"""The file format: names, encoding, headers, and reading and writing recording files.

The lowest layer: the recorders write through it, the comparison and the
reports read through it. See ``docs/format.md`` for the format itself.
"""
