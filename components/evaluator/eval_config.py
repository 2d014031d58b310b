"""The `EvalConfig` for TFMA, from explicit settings rather than globals.

The model is scored through its `predict` signature (`logistic` is the
positive-class probability) and the label comes out of the model's own
`transform_features` signature, so TFMA sees exactly what training saw.
"""

import tensorflow_model_analysis as tfma
from tensorflow_model_analysis.proto import config_pb2


def build_eval_config(
    label_key,
    slice_features,
    min_auc,
    max_auc_decrease,
    prediction_key="logistic",
    signature_name="predict",
):
    """Example count, AUC, accuracy and calibration, overall and per slice; blessing
    needs an overall AUC >= `min_auc`, at most `max_auc_decrease` below the latest
    blessed model's."""
    auc_threshold = tfma.MetricThreshold(
        value_threshold=tfma.GenericValueThreshold(lower_bound={"value": min_auc}),
        change_threshold=tfma.GenericChangeThreshold(
            direction=tfma.MetricDirection.HIGHER_IS_BETTER, absolute={"value": -max_auc_decrease}
        ),
    )
    return tfma.EvalConfig(
        model_specs=[
            tfma.ModelSpec(
                signature_name=signature_name,
                label_key=label_key,
                prediction_key=prediction_key,
                preprocessing_function_names=["transform_features"],
            )
        ],
        slicing_specs=[tfma.SlicingSpec()]
        + [tfma.SlicingSpec(feature_keys=[feature]) for feature in slice_features],
        metrics_specs=[
            tfma.MetricsSpec(
                metrics=[
                    tfma.MetricConfig(class_name="ExampleCount"),
                    # Gate on the overall slice only: small hour slices can hold one class.
                    tfma.MetricConfig(
                        class_name="AUC",
                        per_slice_thresholds=[
                            config_pb2.PerSliceMetricThreshold(
                                slicing_specs=[tfma.SlicingSpec()], threshold=auc_threshold
                            )
                        ],
                    ),
                    tfma.MetricConfig(class_name="BinaryAccuracy"),
                    tfma.MetricConfig(class_name="Calibration"),
                    tfma.MetricConfig(class_name="MeanLabel"),
                    tfma.MetricConfig(class_name="MeanPrediction"),
                ]
            )
        ],
    )
