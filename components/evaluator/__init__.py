"""Evaluator: the task's metrics overall and per slice, a batch at a time, in TFMA's format."""
