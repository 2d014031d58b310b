"""ExampleGen: schema-checked CSV to split, gzipped tf.Example TFRecords."""

from components.example_gen.component import ExampleGen

__all__ = ["ExampleGen"]
