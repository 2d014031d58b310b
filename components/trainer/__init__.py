"""The Estimator-based Trainer component and the Estimator library it uses."""
