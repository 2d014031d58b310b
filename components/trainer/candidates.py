"""Several models fitted on one train split, the best kept by its validation loss.

With estimator_fn "auto" the Trainer fits a small fixed set of candidates (the auto model's
`CANDIDATES`), each in a folder of its own under the ModelRun, each stopped early on the part
of the train split held out for validation; the one with the lowest validation loss wins
(log loss for classifiers, squared error for regressors: the proper scores, which reward
ranking and calibrated probabilities at once). Of the losers' folders only their TensorBoard
event files are kept (their curves, for the run report and `tensorboard --logdir`); their
scores, costs and stop reasons stay in the run record, with the reason the winner won.
"""

import dataclasses
import math
import os

from components import progress
from components.trainer import stopping

CANDIDATES_DIR = "candidates"


@dataclasses.dataclass(frozen=True)
class ModelToFit:
    """A model to fit: `build(run_config, warm_start_from)` returns its Estimator."""

    name: str
    build: object


@dataclasses.dataclass(frozen=True)
class Feeding:
    """How a model wants its training input: `batch_size` (None: the whole train part in
    every batch), `steps` (its own end, None: none), `round_steps` (steps between two
    validations, None: an epoch) and `one_device` (it trains on one device, without the
    Trainer's strategy: boosted trees)."""

    batch_size: int | None
    steps: int | None = None
    round_steps: int | None = None
    one_device: bool = False


TREES_PER_ROUND = 10  # boosted trees: trees grown between two validations
# Steps a boosted-trees model may spend before its first layer: the quantile sketch's batches
# and center_bias's Newton steps (it stops itself when done, so this only bounds).
_TREES_SETUP_LAYERS = 50


def feeding(model, train_rows, batch_size):
    """The `Feeding` of Estimator `model` with `batch_size` as the Trainer's batch: as given,
    except boosted trees, which read the train part once per layer (tf.estimator's
    contract): whole in every batch with `train_in_memory`, else in `n_batches_per_layer`
    batches; they end after their last tree."""
    from components.estimator import BoostedTreesEstimator

    if not isinstance(model, BoostedTreesEstimator):
        return Feeding(batch_size)
    params = model.tree_params
    batches = params.n_batches_per_layer
    layers = params.n_trees * params.max_depth + _TREES_SETUP_LAYERS
    return Feeding(
        None if params.train_in_memory else -(-train_rows // batches),
        steps=layers * batches,
        round_steps=TREES_PER_ROUND * params.max_depth * batches,
        one_device=True,
    )


@dataclasses.dataclass(frozen=True)
class Fitted:
    """A model after training: its Estimator, its `TrainingLength`, its `Outcome` and the
    strategy it trained under (the Trainer's, or "default" for a one-device model)."""

    name: str
    estimator: object
    length: object
    outcome: object
    strategy: str
    others: tuple = ()  # the other candidates' `Fitted`, when several were fitted


# The metrics each candidate line shows next to the validation loss: the classifiers';
# a regressor's loss is the squared error, shown as its root too.
_SHOWN = ("auc", "accuracy")


def fit_and_choose(models, model_run_uri, fit):
    """Fits each of `models` with `fit(model, model_dir)` -> (estimator, length, outcome,
    strategy name), and returns the `Fitted` one with the lowest validation loss (a single
    model: that one, trained in `model_run_uri` itself)."""
    if len(models) == 1:
        return Fitted(models[0].name, *fit(models[0], model_run_uri))
    fitted = []
    for number, model in enumerate(models, 1):
        progress.report(f"candidate {number} of {len(models)}: {model.name}")
        model_dir = os.path.join(model_run_uri, CANDIDATES_DIR, model.name)
        fitted.append(Fitted(model.name, *fit(model, model_dir)))
        outcome = fitted[-1].outcome
        progress.report(
            f"{model.name}: validation loss {stopping.validation_loss(outcome.validation):.4g} "
            f"in {outcome.seconds:.1f}s ({outcome.reason})"
        )
    best = min(fitted, key=lambda f: stopping.validation_loss(f.outcome.validation))
    for loser in fitted:
        if loser is not best:
            keep_only_event_files(loser.estimator.model_dir)
    return dataclasses.replace(best, others=tuple(f for f in fitted if f is not best))


EVENTS_PREFIX = "events.out.tfevents"


def keep_only_event_files(folder):
    """Removes from `folder` all but its TensorBoard event files (checkpoints and exports are
    the bulk; the curves are small and are what a reader compares candidates by)."""
    for parent, _, names in os.walk(folder, topdown=False):
        for name in names:
            if not name.startswith(EVENTS_PREFIX):
                os.remove(os.path.join(parent, name))
        if parent != folder and not os.listdir(parent):
            os.rmdir(parent)


def _shown(validation):
    shown = {k: float(validation[k]) for k in _SHOWN if k in validation}
    if validation and not shown:
        shown["rmse"] = math.sqrt(stopping.validation_loss(validation))
    return shown


def _line(fitted, chosen):
    validation = fitted.outcome.validation or {}
    return {
        "name": fitted.name,
        "chosen": chosen,
        "validation_loss": stopping.validation_loss(validation) if validation else None,
        "validation_metrics": _shown(validation),
        "seconds": round(fitted.outcome.seconds, 2),
        "steps": fitted.outcome.steps_run,
        "best_step": fitted.outcome.step,
        "stop_reason": fitted.outcome.reason,
        "strategy": fitted.strategy,
    }


def record(chosen):
    """The model choice as plain data for the run record: every candidate (the chosen one
    first) with its validation scores, cost and stop reason, and why the winner won."""
    lines = [_line(chosen, True)] + [_line(f, False) for f in chosen.others]
    if not chosen.others:
        reason = "the only model"
    else:
        runner_up = min(chosen.others, key=lambda f: stopping.validation_loss(f.outcome.validation))
        reason = (
            f"lowest validation loss of {len(lines)} candidates: "
            f"{lines[0]['validation_loss']:.4g} against {runner_up.name}'s "
            f"{stopping.validation_loss(runner_up.outcome.validation):.4g}"
        )
    return {"reason": reason, "candidates": lines}
