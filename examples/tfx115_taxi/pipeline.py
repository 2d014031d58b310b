"""The Chicago taxi pipeline as TFX <= 1.15 shipped it, on this kit: CsvExampleGen,
StatisticsGen, SchemaGen, ExampleValidator, Transform, Trainer (an Estimator
`trainer_fn`), a latest-blessed-model Resolver, Evaluator and Pusher.

Changed from TFX 1.15 (docs/tfx115-migration.md): one line added before the `tfx`
import. The Evaluator's ModelSpec reads the serving model with TFMA's own metrics; TFX
1.15's `ModelSpec(signature_name="eval")` config would run unchanged too (the eval model
the Trainer exports from `eval_input_receiver_fn`).

    .venv/bin/python examples/tfx115_taxi/pipeline.py --data DIR --output DIR
"""

# isort: off
import components.tfx_compat.install  # noqa: F401  (added: TFX 1.15's imports on this kit)

# isort: on
import argparse
import os

import tensorflow_model_analysis as tfma
from tfx import v1 as tfx

HERE = os.path.dirname(os.path.abspath(__file__))
BEAM_ARGS = ("--runner=FnApiRunner", "--direct_running_mode=in_memory", "--direct_num_workers=1")


def create_pipeline(
    pipeline_name,
    pipeline_root,
    data_root,
    module_file,
    serving_model_dir,
    metadata_path,
    beam_pipeline_args=BEAM_ARGS,
    trainer_module_file=None,
    train_steps=1000,
    eval_steps=100,
):
    example_gen = tfx.components.CsvExampleGen(input_base=data_root)
    statistics_gen = tfx.components.StatisticsGen(examples=example_gen.outputs["examples"])
    schema_gen = tfx.components.SchemaGen(
        statistics=statistics_gen.outputs["statistics"], infer_feature_shape=False
    )
    example_validator = tfx.components.ExampleValidator(
        statistics=statistics_gen.outputs["statistics"], schema=schema_gen.outputs["schema"]
    )
    transform = tfx.components.Transform(
        examples=example_gen.outputs["examples"],
        schema=schema_gen.outputs["schema"],
        module_file=module_file,
    )
    model_resolver = tfx.dsl.Resolver(
        strategy_class=tfx.dsl.experimental.LatestBlessedModelStrategy,
        model=tfx.dsl.Channel(type=tfx.types.standard_artifacts.Model),
        model_blessing=tfx.dsl.Channel(type=tfx.types.standard_artifacts.ModelBlessing),
    ).with_id("latest_blessed_model_resolver")
    trainer = tfx.components.Trainer(
        module_file=trainer_module_file or module_file,
        examples=transform.outputs["transformed_examples"],
        schema=schema_gen.outputs["schema"],
        transform_graph=transform.outputs["transform_graph"],
        base_model=model_resolver.outputs["model"],
        train_args=tfx.proto.TrainArgs(num_steps=train_steps),
        eval_args=tfx.proto.EvalArgs(num_steps=eval_steps),
    )
    eval_config = _eval_config()
    evaluator = tfx.components.Evaluator(
        examples=example_gen.outputs["examples"],
        model=trainer.outputs["model"],
        baseline_model=model_resolver.outputs["model"],
        eval_config=eval_config,
    )
    pusher = tfx.components.Pusher(
        model=trainer.outputs["model"],
        model_blessing=evaluator.outputs["blessing"],
        push_destination=tfx.proto.PushDestination(
            filesystem=tfx.proto.PushDestination.Filesystem(base_directory=serving_model_dir)
        ),
    )
    return tfx.dsl.Pipeline(
        pipeline_name=pipeline_name,
        pipeline_root=pipeline_root,
        components=[
            example_gen,
            statistics_gen,
            schema_gen,
            example_validator,
            transform,
            model_resolver,
            trainer,
            evaluator,
            pusher,
        ],
        enable_cache=True,
        metadata_connection_config=_metadata_connection_config(metadata_path),
        beam_pipeline_args=list(beam_pipeline_args),
    )


def _eval_config():
    """AUC and accuracy overall and by hour; a model is blessed on overall accuracy."""
    return tfma.EvalConfig(
        # TFX 1.15's [tfma.ModelSpec(signature_name="eval")] works too (the eval model's)
        model_specs=[
            tfma.ModelSpec(
                signature_name="predict",
                label_key="tips_xf",
                preprocessing_function_names=["transform_features"],
            )
        ],
        slicing_specs=[tfma.SlicingSpec(), tfma.SlicingSpec(feature_keys=["trip_start_hour"])],
        metrics_specs=[
            tfma.MetricsSpec(
                metrics=[
                    tfma.MetricConfig(class_name="ExampleCount"),
                    tfma.MetricConfig(class_name="AUC"),
                    tfma.MetricConfig(
                        class_name="BinaryAccuracy",
                        # Blessing looks at the overall slice: an hour's slice is small.
                        per_slice_thresholds=[
                            tfma.PerSliceMetricThreshold(
                                slicing_specs=[tfma.SlicingSpec()], threshold=_blessing_threshold()
                            )
                        ],
                    ),
                ]
            )
        ],
    )


def _blessing_threshold():
    """At least 0.5, and at most 0.05 below the last blessed model."""
    return tfma.MetricThreshold(
        value_threshold=tfma.GenericValueThreshold(lower_bound={"value": 0.5}),
        change_threshold=tfma.GenericChangeThreshold(
            direction=tfma.MetricDirection.HIGHER_IS_BETTER, absolute={"value": -0.05}
        ),
    )


def _metadata_connection_config(metadata_path):
    """SQLite at `metadata_path`; None on Vertex AI, which keeps its own."""
    if not metadata_path:
        return None
    return tfx.orchestration.metadata.sqlite_metadata_connection_config(metadata_path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="a folder of CSV files")
    parser.add_argument("--output", required=True, help="pipeline root, metadata, pushed models")
    parser.add_argument("--run-fn", action="store_true", help="train with taxi_utils_run_fn.py")
    args = parser.parse_args()
    pipeline = create_pipeline(
        pipeline_name="chicago_taxi_tfx115",
        pipeline_root=os.path.join(args.output, "pipeline"),
        data_root=args.data,
        module_file=os.path.join(HERE, "taxi_utils.py"),
        serving_model_dir=os.path.join(args.output, "serving_model"),
        metadata_path=os.path.join(args.output, "metadata.sqlite"),
        trainer_module_file=os.path.join(HERE, "taxi_utils_run_fn.py") if args.run_fn else None,
    )
    tfx.orchestration.LocalDagRunner().run(pipeline)


if __name__ == "__main__":
    main()
