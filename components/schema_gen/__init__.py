"""SchemaGen: infers a Schema from the training statistics when the pipeline has no schema file."""

from components.schema_gen.component import SchemaGen

__all__ = ["SchemaGen"]
