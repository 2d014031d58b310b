"""Pipeline configuration, wiring and runners."""

import os

# `tf.keras` is Keras 2 (tf_keras) in every pipeline process, whichever of TFX,
# TFMA, tensorflow-transform or the Estimator is imported first: TFT forces it
# when imported, and Estimator-era model code written against `tf.keras`
# expects it (see components/estimator/legacy_keras.py).
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
