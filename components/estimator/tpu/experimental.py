"""`tf.compat.v1.estimator.tpu.experimental`: `EmbeddingConfigSpec` (see embedding.py)."""

from components.estimator.tpu.embedding import EmbeddingConfigSpec

__all__ = ["EmbeddingConfigSpec"]
