"""Evaluator: TFX's stock TFMA Evaluator with an EvalConfig built from pipeline config."""

from components.evaluator.eval_config import build_eval_config

__all__ = ["build_eval_config"]
