"""Use-case models: one `build_estimator(run_config, hparams, warm_start_from)` per dataset."""
