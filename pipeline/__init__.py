"""Pipeline configuration, wiring and runners."""
