"""ExampleGen: schema-checked CSV to split, gzipped tf.Example TFRecords."""

__all__ = ["ExampleGen"]


def __getattr__(name):
    # Lazy: `components.example_gen.missing` is read by the configuration, which should not
    # import TensorFlow (the component does).
    if name == "ExampleGen":
        from components.example_gen.component import ExampleGen

        return ExampleGen
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
