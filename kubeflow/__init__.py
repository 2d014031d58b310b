"""Kubeflow / Vertex AI Pipelines: the pipeline image and a local runner for compiled specs."""
