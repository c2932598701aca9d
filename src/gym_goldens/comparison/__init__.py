"""Comparing a recording with its golden, within tolerance.

Above :mod:`gym_goldens.format`, which reads the files; the reports of
:mod:`gym_goldens.present` describe what it finds.
"""
