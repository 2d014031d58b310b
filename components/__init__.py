"""TFX components of the kit: one package per component."""
