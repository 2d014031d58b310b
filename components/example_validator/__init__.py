"""ExampleValidator: statistics against the schema, TFDV's `Anomalies` per split, and the gate.

Nothing is imported here, so readers of the checks and layout need no TensorFlow.
"""
