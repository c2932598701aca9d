"""Shared fixtures of the project's tests."""

from __future__ import annotations
