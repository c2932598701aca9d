"""``python -m gym_goldens``: the ``gym-goldens`` command."""

from __future__ import annotations

from gym_goldens.cli import main

raise SystemExit(main())
