"""Recording envs: the wrappers that turn resets and steps into recording files.

Above :mod:`gym_goldens.format`: the recorders encode and write through it.
"""
