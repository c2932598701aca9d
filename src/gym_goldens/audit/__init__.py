"""Checks of envs themselves: do the same seeded rollouts give the same trajectories?

Above :mod:`gym_goldens.record`, :mod:`gym_goldens.comparison` and
:mod:`gym_goldens.present`: it records rollouts, compares them and reports.
"""
