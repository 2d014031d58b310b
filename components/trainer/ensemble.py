"""What the model choice computes from held-out predictions, in numpy: losses, the trivial
model's score, a greedy weighted ensemble and a temperature for the probabilities.

The same arithmetic runs in the exported graph (components/exporter/serving.py
`export_combined_model`, given `CLIP`): the members' probabilities (or predictions) averaged with the
weights, then, for a classifier, log-probabilities divided by the temperature, a softmax,
and every probability clipped to [`CLIP`, 1 - `CLIP`] in float32 (1 - 1e-7 rounds to
0.99999988 there), so no served probability is exactly 0 or 1.

No TensorFlow import.
"""

import numpy as np

CLIP = 1e-7
# Greedy ensemble selection (Caruana et al. 2004, as AutoGluon does): this many picks, with
# replacement; a member's weight is its share of the picks.
ENSEMBLE_PICKS = 25
# The ensemble is chosen only when its held-out loss is below the best single model's by
# more than this share of it (less is noise on a few hundred rows).
ENSEMBLE_MARGIN = 1e-3
# Temperatures tried (log-spaced), then refined around the best by golden-section search.
_TEMPERATURES = np.exp(np.linspace(np.log(0.05), np.log(20.0), 61))


def clipped(probabilities):
    """`probabilities` clipped as the exported graph clips them (module doc)."""
    low = np.float32(CLIP)
    return np.clip(np.asarray(probabilities, np.float32), low, np.float32(1) - low)


def loss(predictions, labels, classifier):
    """Mean log loss of class-probability rows (`labels` class indices), or mean squared
    error of predictions: the proper scores the choice compares."""
    if classifier:
        p = np.asarray(predictions, np.float64)[np.arange(len(labels)), labels]
        return float(-np.mean(np.log(np.clip(p, 1e-15, 1.0))))
    return float(np.mean((np.asarray(predictions, np.float64).reshape(-1) - labels) ** 2))


def trivial(labels, classifier, classes):
    """(what the trivial model predicts, its loss): the class shares (so its log loss is the
    labels' entropy; its accuracy the majority's share) or the mean (its squared error the
    variance)."""
    if classifier:
        shares = np.bincount(labels, minlength=classes) / len(labels)
        predictions = np.tile(shares, (len(labels), 1))
        return shares, loss(predictions, labels, True)
    mean = float(np.mean(labels))
    return mean, loss(np.full(len(labels), mean), labels, False)


def combine(predictions, weights):
    """The weighted average of the members' predictions ({name: array}, {name: weight})."""
    return sum(
        weight * np.asarray(predictions[name], np.float64) for name, weight in weights.items()
    )


def select(predictions, labels, classifier, picks=ENSEMBLE_PICKS):
    """{name: weight} by greedy selection with replacement on held-out `predictions`
    ({name: array}): each pick adds the member that lowers the average's loss most; the
    first pick is the best single model, so the result is never worse than it here."""
    names = sorted(predictions)
    counts = dict.fromkeys(names, 0)
    total = None
    for pick in range(1, picks + 1):
        scored = []
        for name in names:
            member = np.asarray(predictions[name], np.float64)
            candidate = member if total is None else total + member
            scored.append((loss(candidate / pick, labels, classifier), name, candidate))
        _, best, total = min(scored, key=lambda s: (s[0], s[1]))
        counts[best] += 1
    return {name: count / picks for name, count in counts.items() if count}


def calibrated(probabilities, temperature):
    """Probabilities after temperature scaling and the clip (module doc)."""
    logits = np.log(np.clip(np.asarray(probabilities, np.float64), 1e-30, 1.0)) / temperature
    logits -= logits.max(axis=1, keepdims=True)
    scaled = np.exp(logits)
    return clipped(scaled / scaled.sum(axis=1, keepdims=True))


def fit_temperature(probabilities, labels, lowest=None):
    """The temperature that minimizes the held-out log loss of `calibrated` (1.0 among
    those tried, so the result is never worse than leaving them as they are here), at least
    `lowest` when given (the loss is convex in 1 / temperature, so the best one allowed is
    then the larger of the two)."""
    if lowest is not None:
        return max(float(lowest), fit_temperature(probabilities, labels))

    def cost(t):
        return loss(calibrated(probabilities, t), labels, True)

    tried = [(cost(t), t) for t in [*_TEMPERATURES, 1.0]]
    best_cost, best = min(tried)
    index = int(np.argmin(np.abs(_TEMPERATURES - best)))
    low = _TEMPERATURES[max(index - 1, 0)]
    high = _TEMPERATURES[min(index + 1, len(_TEMPERATURES) - 1)]
    ratio = (np.sqrt(5) - 1) / 2
    for _ in range(30):  # golden-section search in [low, high]
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if cost(a) < cost(b):
            high = b
        else:
            low = a
    middle = (low + high) / 2
    return float(middle) if cost(middle) < best_cost else float(best)


def scores(predictions, labels, classifier):
    """What a reader compares besides the loss: accuracy (and AUC for two classes), or the
    root mean squared error."""
    predictions = np.asarray(predictions, np.float64)
    if not classifier:
        return {"rmse": float(np.sqrt(loss(predictions, labels, False)))}
    out = {"accuracy": float(np.mean(predictions.argmax(axis=1) == labels))}
    if predictions.shape[1] == 2:
        out["auc"] = auc(predictions[:, 1], labels == 1)
    return out


def auc(score, positive):
    """The area under the ROC curve (ties count a half), by ranks; nan with one class."""
    positive = np.asarray(positive, bool)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if not n_pos or not n_neg:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    ranks = np.empty(len(score))
    sorted_scores = np.asarray(score)[order]
    _, first, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    ranks[order] = np.repeat(first + (counts + 1) / 2.0, counts)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
