"""The pytest plugin's parts: settings, session state, the check workflow, goldens on disk.

Wired into pytest by :mod:`gym_goldens.pytest_plugin`; the only layer that
knows pytest, besides the helpers of :mod:`gym_goldens.audit`.
"""
