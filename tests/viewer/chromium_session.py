"""The viewer's browser tests drive headless Chromium through robodyn.viewer.browser (kept importable here by its
old name)."""

from robodyn.viewer.browser import Chromium, available

__all__ = ["Chromium", "available"]
