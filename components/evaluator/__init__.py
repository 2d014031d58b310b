"""Evaluator: TFX's stock TFMA Evaluator with a task-aware EvalConfig (eval_config.py)."""
