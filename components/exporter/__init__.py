"""Serving export: raw-example receivers and the signatures the pipeline ships."""
