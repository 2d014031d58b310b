"""Pusher: copies a blessed model to the serving directory, atomically."""

from components.pusher.component import Pusher

__all__ = ["Pusher"]
