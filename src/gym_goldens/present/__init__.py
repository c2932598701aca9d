"""What a user reads and sees: failure reports, summaries, plots, HTML pages.

Above :mod:`gym_goldens.comparison`, whose results it describes.
"""
