"""Several models fitted on one train split, compared on held-out predictions; the best one,
or a weighted ensemble of them, served.

With estimator_fn "auto" the Trainer fits a small fixed set of candidates (the auto model's
`CANDIDATES`), each in a folder of its own under the ModelRun, each stopped early on held-out
rows and scored by its loss there (log loss for classifiers, squared error for regressors:
the proper scores, which reward ranking and calibrated probabilities at once):

- on a train split of at least `cross_validation_below_rows` rows (components/trainer/
  length.py), on the tenth of it held out (the best checkpoint of each is what it serves);
- below it, by k-fold cross-validation over the whole split (folds by the same hash as the
  held-out tenth): each candidate is fitted k times, stopped early on each fold, and scored
  on the predictions of all its folds (mean and spread recorded); the models served are
  then fitted again on the whole split for as many epochs as their folds' best steps.

On those held-out predictions greedy ensemble selection (components/trainer/ensemble.py)
weighs the candidates; the ensemble is served when it beats the best single model, and a
classifier's probabilities get a temperature fitted there too, a regressor's predictions a
bound: the train labels' range, from the statistics (a tree's leaves stay in it by
construction; a linear model or a network extrapolates past it on a row unlike the train
rows). Both are exported in the graph (components/exporter/serving.py). Of the other folders only their TensorBoard event files
are kept (their curves, for the run report and `tensorboard --logdir`); every candidate's
scores, costs and stop reasons stay in the run record, with the rows the choice rested on,
the trivial model's scores and the reason the winner won.
"""

import dataclasses
import math
import os
import shutil

import numpy as np

from components import progress
from components.trainer import ensemble, stopping

CANDIDATES_DIR = "candidates"
INITIAL_DIR = "initial_checkpoint"  # a candidate's step-0 checkpoint, while its folds fit


@dataclasses.dataclass(frozen=True)
class ModelToFit:
    """A model to fit: `build(run_config, warm_start_from)` returns its Estimator."""

    name: str
    build: object


@dataclasses.dataclass(frozen=True)
class Feeding:
    """How a model wants its training input: `batch_size` (None: the whole train part in
    every batch), `steps` (its own end, None: none), `round_steps` (steps between two
    validations, None: an epoch), `one_device` (it trains on one device, without the
    Trainer's strategy: boosted trees) and `fold_patience` (rounds without a better
    validation loss before a cross-validation fold's fit stops; None: `stopping.PATIENCE`)."""

    batch_size: int | None
    steps: int | None = None
    round_steps: int | None = None
    one_device: bool = False
    fold_patience: int | None = None


TREES_PER_ROUND = 10  # boosted trees: trees grown between two validations
# A fold's boosted trees stop after one round (10 trees) without a better validation loss,
# HistGradientBoosting's n_iter_no_change: a fold only gives its best round and predictions,
# and each round of a many-class, many-column model costs seconds.
TREES_FOLD_PATIENCE = 1
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
        fold_patience=TREES_FOLD_PATIENCE,
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


@dataclasses.dataclass(frozen=True)
class Choice:
    """What the Trainer serves: `members` (the `Fitted` models, heaviest first) averaged with
    `weights` ({name: weight}, one model: {name: 1.0}); a classifier's probabilities then
    scaled by `temperature` (None: not calibrated); a regressor's predictions bounded to
    `bounds` ((min, max) of the train labels; None: not bounded); `record` is the run
    record's account."""

    members: tuple
    weights: dict
    temperature: float | None
    record: dict
    bounds: tuple | None = None

    @property
    def combined(self):
        """Whether the export must average, calibrate or bound (else one model exports as it
        is)."""
        return len(self.members) > 1 or self.temperature is not None or self.bounds is not None


@dataclasses.dataclass
class _Trial:
    """One candidate on held-out data: per fold (one, without folds) its loss, best step,
    seconds, steps run and predictions; the fit kept (without folds) to serve."""

    name: str
    losses: list = dataclasses.field(default_factory=list)
    best_steps: list = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    steps: int = 0
    predictions: list = dataclasses.field(default_factory=list)
    fitted: Fitted | None = None
    stop_reason: str = ""
    # (Estimator, its step-0 checkpoint) of the first fold's fit: the later folds and the
    # refit fit it afresh without tracing its functions again (`Estimator.restart`)
    restart: tuple | None = None

    def add(self, fitted, predictions, loss):
        outcome = fitted.outcome
        self.losses.append(loss)
        self.best_steps.append(outcome.step)
        self.seconds += outcome.seconds
        self.steps += outcome.steps_run
        self.predictions.append(predictions)
        self.fitted, self.stop_reason = fitted, outcome.reason


def fit_and_choose(models, model_run_uri, training, folds=0, label_range=None):
    """The `Choice` among `models`, fitted by `training` (the executor's `_Training`: `fit`,
    `predict`, `labels`, `classifier`, `rows`): compared on the held-out part, or with
    `folds` by cross-validation and the members then refit on the whole split (module doc);
    one model is trained in `model_run_uri` itself. A regressor's `label_range` ((min, max)
    of the train labels) bounds the chosen model's predictions, held out and served."""
    if len(models) == 1:
        fitted = Fitted(models[0].name, *training.fit(models[0], model_run_uri))
        line = _line(fitted.name, True, fitted.outcome, fitted.strategy)
        return Choice(
            (fitted,), {fitted.name: 1.0}, None, {"reason": "the only model", "candidates": [line]}
        )
    parts = list(range(folds)) if folds else [None]
    labels = [training.labels(part) for part in parts]
    trials = []
    for number, model in enumerate(models, 1):
        progress.report(f"candidate {number} of {len(models)}: {model.name}")
        trials.append(_try(model, model_run_uri, training, parts, labels))
    all_labels = np.concatenate(labels)
    held_out = {t.name: np.concatenate(t.predictions) for t in trials}
    if label_range is not None:  # scored as served: bounded to the train labels' range
        held_out = {name: np.clip(p, *label_range) for name, p in held_out.items()}
    weights, temperature, account = _weigh(
        trials, held_out, all_labels, training.classifier, refit=bool(folds)
    )
    by_name = {t.name: t for t in trials}
    members = []
    for name in sorted(weights, key=lambda n: (-weights[n], n)):
        model = next(m for m in models if m.name == name)
        members.append(
            by_name[name].fitted
            if not folds
            else _refit(model, model_run_uri, training, by_name[name])
        )
    for trial in trials:
        if trial.name not in weights and trial.fitted is not None and not folds:
            keep_only_event_files(trial.fitted.estimator.model_dir)
        if trial.restart is not None:
            shutil.rmtree(os.path.dirname(trial.restart[1]), ignore_errors=True)
    record = _record(trials, held_out, weights, account, all_labels, folds, training.classifier)
    if label_range is not None:
        record["label_range"] = [float(bound) for bound in label_range]
    return Choice(tuple(members), weights, temperature, record, label_range)


def _try(model, model_run_uri, training, parts, labels):
    """The `_Trial` of `model`: fitted on each fold's rest (or the fit part), stopped early
    on the fold (the held-out part), its predictions there kept."""
    trial = _Trial(model.name)
    candidate_dir = os.path.join(model_run_uri, CANDIDATES_DIR, model.name)
    for part, part_labels in zip(parts, labels, strict=True):
        model_dir = candidate_dir
        keep_initial = None
        if part is not None:
            model_dir = os.path.join(model_dir, f"fold-{part}")
            keep_initial = os.path.join(candidate_dir, INITIAL_DIR) if not trial.restart else None
        fitted = Fitted(
            model.name,
            *training.fit(
                model, model_dir, fold=part, restart=trial.restart, keep_initial=keep_initial
            ),
        )
        if keep_initial and fitted.outcome.initial:
            trial.restart = (fitted.estimator, fitted.outcome.initial)
        predictions = training.predict(fitted.estimator, fitted.outcome.checkpoint, part)
        loss = ensemble.loss(predictions, part_labels, training.classifier)
        trial.add(fitted, predictions, loss)
        if part is not None:
            keep_only_event_files(model_dir)
    progress.report(
        f"{model.name}: held-out loss {np.mean(trial.losses):.4g}"
        + (f" ± {np.std(trial.losses):.2g} over {len(parts)} folds" if len(parts) > 1 else "")
        + f" in {trial.seconds:.1f}s ({trial.stop_reason})"
    )
    return trial


def _weigh(trials, held_out, labels, classifier, refit=False):
    """({name: weight}, temperature or None, what the record says of them): the best single
    model, or the greedy ensemble when it beats it by `ENSEMBLE_MARGIN`; then, for a
    classifier, the temperature fitted on the same held-out predictions. When the models
    served are `refit` on the whole split (cross-validation), not the ones that made those
    predictions, the temperature only softens (at least 1): a refit trains on a fifth more
    rows for the folds' mean best step, so its probabilities are at least as sharp as its
    folds', and sharpening them by the folds' temperature overshot (on digits the holdout's
    log loss went from 0.069 to 0.074 with the folds' 0.86)."""
    single = {name: ensemble.loss(p, labels, classifier) for name, p in held_out.items()}
    best = min(single, key=lambda n: (single[n], n))
    weights = ensemble.select(held_out, labels, classifier)
    combined_loss = ensemble.loss(ensemble.combine(held_out, weights), labels, classifier)
    account = {
        "single_losses": single,
        "best_single": best,
        "ensemble_weights": weights,
        "ensemble_loss": combined_loss,
    }
    if len(weights) < 2 or combined_loss >= single[best] * (1 - ensemble.ENSEMBLE_MARGIN):
        weights = {best: 1.0}
    probabilities = ensemble.combine(held_out, weights)  # or predictions, of a regressor
    account["served_loss"] = ensemble.loss(probabilities, labels, classifier)
    if not classifier:
        return weights, None, account
    temperature = ensemble.fit_temperature(probabilities, labels, 1.0 if refit else None)
    account["temperature"] = temperature
    if refit:  # what the folds alone would have had, for the record
        account["folds_temperature"] = ensemble.fit_temperature(probabilities, labels)
    account["uncalibrated_loss"] = account["served_loss"]
    account["served_loss"] = ensemble.loss(
        ensemble.calibrated(probabilities, temperature), labels, True
    )
    return weights, temperature, account


def _refit(model, model_run_uri, training, trial):
    """`model` trained on the whole train split for the steps its folds stopped best at, on
    average (the executor scales them to the whole split's rows)."""
    steps = max(1, round(float(np.mean(trial.best_steps))))
    progress.report(
        f"refitting {model.name} on all the train rows ({steps:,} steps from the folds)"
    )
    model_dir = os.path.join(model_run_uri, CANDIDATES_DIR, model.name)
    fitted = Fitted(model.name, *training.fit(model, model_dir, steps=steps, restart=trial.restart))
    trial.seconds += fitted.outcome.seconds
    trial.steps += fitted.outcome.steps_run
    trial.stop_reason = (
        f"{len(trial.losses)}-fold best steps {', '.join(f'{s:,}' for s in trial.best_steps)}; "
        f"refit on the whole split: {fitted.outcome.reason}"
    )
    return fitted


# The metrics each candidate line shows next to the validation loss: the classifiers';
# a regressor's loss is the squared error, shown as its root too.
_SHOWN = ("auc", "accuracy")
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


def _line(name, chosen, outcome, strategy, validation_loss=None, metrics=None):
    validation = outcome.validation or {}
    if validation_loss is None and validation:
        validation_loss = stopping.validation_loss(validation)
    if metrics is None:
        metrics = {k: float(validation[k]) for k in _SHOWN if k in validation}
        if validation and not metrics:
            metrics["rmse"] = math.sqrt(stopping.validation_loss(validation))
    return {
        "name": name,
        "chosen": chosen,
        "validation_loss": validation_loss,
        "validation_metrics": metrics,
        "seconds": round(outcome.seconds, 2),
        "steps": outcome.steps_run,
        "best_step": outcome.step,
        "stop_reason": outcome.reason,
        "strategy": strategy,
    }


def _trial_line(trial, predictions, weights, labels, classifier):
    fitted = trial.fitted
    line = _line(
        trial.name,
        weights == {trial.name: 1.0},
        fitted.outcome,
        fitted.strategy,
        float(np.mean(trial.losses)),
        ensemble.scores(predictions, labels, classifier),
    )
    line.update(
        seconds=round(trial.seconds, 2),
        steps=trial.steps,
        best_step=round(float(np.mean(trial.best_steps))),
        stop_reason=trial.stop_reason,
        fold_losses=[round(x, 6) for x in trial.losses],
        loss_spread=float(np.std(trial.losses)) if len(trial.losses) > 1 else None,
        weight=weights.get(trial.name, 0.0),
    )
    return line


def _record(trials, held_out, weights, account, labels, folds, classifier):
    """The model choice as plain data for the run record: every candidate (the served one
    first) with its held-out scores (mean and spread over the folds), cost and stop reason;
    the rows the choice rested on and the trivial model's scores beside them; the ensemble's
    weights, the temperature, and why the winner won."""
    lines = sorted(
        (_trial_line(t, held_out[t.name], weights, labels, classifier) for t in trials),
        key=lambda line: (not line["chosen"], line["validation_loss"]),
    )
    served = next(iter(weights)) if len(weights) == 1 else "ensemble"
    if served == "ensemble":
        lines.insert(0, _ensemble_line(trials, weights, held_out, labels, classifier))
    classes = held_out[trials[0].name].shape[1] if classifier else None
    trivial_predictions, trivial_loss = ensemble.trivial(labels, classifier, classes)
    trivial_rows = (
        np.tile(trivial_predictions, (len(labels), 1))
        if classifier
        else (np.full(len(labels), trivial_predictions))
    )
    where = (
        f"{folds}-fold cross-validation over {len(labels):,} train rows"
        if folds
        else (f"{len(labels):,} held-out rows")
    )
    return {
        "reason": _reason(lines, account, where),
        "candidates": lines,
        "rows": len(labels),
        "folds": folds,
        "trivial": {
            "model": "the class shares" if classifier else "the mean",
            "validation_loss": trivial_loss,
            "validation_metrics": ensemble.scores(trivial_rows, labels, classifier),
        },
        "ensemble": {
            "weights": account["ensemble_weights"],
            "validation_loss": account["ensemble_loss"],
            "chosen": served == "ensemble",
        },
        "temperature": account.get("temperature"),
        "folds_temperature": account.get("folds_temperature"),
        "uncalibrated_loss": account.get("uncalibrated_loss"),
        "served_loss": account["served_loss"],
        "best_single": account["best_single"],
        "single_losses": account["single_losses"],
        "served": served,
    }


def _ensemble_line(trials, weights, held_out, labels, classifier):
    combined = ensemble.combine(held_out, weights)
    return {
        "name": "ensemble",
        "chosen": True,
        "validation_loss": ensemble.loss(combined, labels, classifier),
        "validation_metrics": ensemble.scores(combined, labels, classifier),
        "seconds": round(sum(t.seconds for t in trials if t.name in weights), 2),
        "steps": sum(t.steps for t in trials if t.name in weights),
        "best_step": None,
        "stop_reason": "weights " + ", ".join(f"{n} {w:.2f}" for n, w in weights.items()),
        "strategy": "",
        "weights": dict(weights),
    }


def _reason(lines, account, where):
    best = account["best_single"]
    if lines[0]["name"] == "ensemble":
        return (
            f"the ensemble's validation loss {lines[0]['validation_loss']:.4g} beat the best "
            f"single model's ({best}, {account['single_losses'][best]:.4g}), on {where}"
        )
    runner_up = lines[1]
    return (
        f"lowest validation loss of {len(lines)} candidates on {where}: "
        f"{lines[0]['validation_loss']:.4g} against {runner_up['name']}'s "
        f"{runner_up['validation_loss']:.4g}"
    )
