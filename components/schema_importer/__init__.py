"""SchemaImporter: brings a hand-written Schema text proto into the pipeline."""

from components.schema_importer.component import SchemaImporter

__all__ = ["SchemaImporter"]
