"""Balancing SpaMEM question sets against answers found without looking (issue 37): per task
x horizon x level of a sequence, after the records without evidence are skipped, a question is
kept only while no prompt-only guess (the empty set, a count of 0 or 1, a lifespan from the
window or the named step) averages above its limit. :class:`Balancer` is a part of
:class:`.questions.Builder`; :func:`guesses` scores TL's guesses."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.pipelines.spamem import metrics

if TYPE_CHECKING:
    from dataforge.pipelines.spamem.questions import Draft, Settings

CONTROL_SHARE = 0.2
"""SED/CSR ask about a receptacle that gained (Add) or lost (Rem) nothing (an empty control,
which keeps "nothing" a possible answer) only while the empty answer scores at most this on
average over the questions of a task x horizon x level of the sequence, counted after the
records without evidence are skipped (:meth:`Balancer.balanced`)."""
GUESS_LIMIT = 0.4
"""TL asks about an object only while each prompt-only guess of a lifespan (:func:`guesses`:
the whole window, the query step, the step the prompt names, from it to the query step) scores
at most this tIoU on average over TL's questions of a horizon x level of the sequence
(:meth:`Balancer.balanced`): short windows make most lifespans easy to guess."""
COUNT_LIMITS = {"count below 2": 0.7, "count 0": 0.5, "count 1": 0.5}
"""IC asks about a category whose count is 0 or 1 only while counts below 2 stay at most 70 %
of a sequence's IC questions (issue 37: counts of 2 or more in at least 30 %) and neither 0 nor
1 is more than half of them (the most common count scores at most 0.5): most clusters hold one
object of each category, so their counts are nearly all 0 and 1 (:meth:`Balancer.balanced`)."""
SAMPLED = {
    "SED": "an empty control",
    "CSR": "an empty control",
    "IC": "a count of 0 or 1",
}
"""Why :meth:`Balancer.balanced` did not ask a question, per task (TL: a lifespan guessed)."""


class Balancer:
    """The balancing of a question builder (its ``settings``, ``rng`` and ``skipped``)."""

    settings: Settings
    rng: np.random.Generator
    skipped: Counter[str]

    def balanced(
        self, kept: list[tuple[Draft, int, list[dict[str, Any]]]]
    ) -> Iterator[dict[str, Any]]:
        """``kept``'s records, in order, without those whose draft would lift a prompt-only
        guess (:attr:`Draft.guesses`) above its limit: per task x horizon x level, drafts are
        taken in order of their best guess's score (ties in a drawn order) and each is kept
        while every guess's mean over the kept ones stays at most its :meth:`limit`
        (SED/CSR's empty set, IC's counts, TL's lifespans). Counted after the records without
        evidence are skipped, so that skipping those cannot leave mostly easy ones; the dropped
        are counted in :attr:`skipped`."""
        groups: dict[tuple[str, str, int], list[int]] = {}
        for i, (d, level, _) in enumerate(kept):
            groups.setdefault((d.task, d.horizon, level), []).append(i)
        dropped: set[int] = set()
        for (task, horizon, level), idx in groups.items():
            if not any(kept[i][0].guesses for i in idx):
                continue
            order = [idx[int(j)] for j in self.rng.permutation(len(idx))]
            order.sort(key=lambda i: max(kept[i][0].guesses.values(), default=0.0))
            total: Counter[str] = Counter()
            n = 0
            for i in order:
                g = kept[i][0].guesses
                if all((total[k] + v) / (n + 1) <= self.limit(k) + 1e-9 for k, v in g.items()):
                    total.update(g)
                    n += 1
                    continue
                dropped.add(i)
                what = SAMPLED.get(task[:3], "a lifespan a prompt-only guess finds")
                top = max(g, key=lambda k: g[k] - self.limit(k))
                why = (
                    f"{task} {horizon} L{level}: {what}, past the no-look limit {self.limit(top):g}"
                )
                self.skipped[why] += len(kept[i][2])
        for i, (_, _, recs) in enumerate(kept):
            if i not in dropped:
                yield from recs

    def limit(self, guess: str) -> float:
        """The most ``guess`` (a :attr:`Draft.guesses` key) may average: :data:`CONTROL_SHARE`
        for the empty set, :data:`COUNT_LIMITS` for counts, :data:`GUESS_LIMIT` for a TL
        lifespan guess (``Settings.guess_limit`` 1 lifts the last two)."""
        if guess == "empty set":
            return self.settings.control_share
        if self.settings.guess_limit >= 1:
            return 1.0
        return COUNT_LIMITS.get(guess, self.settings.guess_limit)


def guesses(
    lifespan: Mapping[str, int], first: int, last: int, q: int, at: int
) -> dict[str, float]:
    """What each prompt-only guess of a TL lifespan scores (tIoU, Eq. 5): the whole window
    ``first..last``, the query step ``q``, the step ``at`` the prompt names the object at,
    and from ``at`` to ``q``."""
    named = {"first": min(at, q), "last": max(at, q)}
    return {
        "whole window": metrics.tiou({"first": first, "last": last}, lifespan),
        "query step": metrics.tiou({"first": q, "last": q}, lifespan),
        "named step": metrics.tiou({"first": at, "last": at}, lifespan),
        "named to query step": metrics.tiou(named, lifespan),
    }
