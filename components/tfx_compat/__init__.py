"""TFX 1.15's components where TFX's cannot import here (see components/tfx_v1.py)."""
