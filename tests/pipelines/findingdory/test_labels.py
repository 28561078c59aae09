"""Labels follow upstream's tracking during the day (findingdory_task.py:626-646): on a hand-made
day of 10 frames, a mug placed at frames 6-7 is a label from frame 6 on, a never-placed cup is
none, and the distractor, the receptacle and the room count from frame 0."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from dataforge.pipelines.findingdory.goal_frames import (
    ALL,
    Entity,
    counts_from,
    labels,
    valid_frames,
)
from dataforge.pipelines.findingdory.log import LoggedObject

P = (0.0, 0.0, 0.0)


def test_moved_objects_count_from_their_place_routine() -> None:
    log = SimpleNamespace(
        objects=[
            LoggedObject("mug", "Mug", True, "table", "counter", pick=(2, 3), place=(6, 7)),
            LoggedObject("cup", "Cup", True, "table", "sink", pick=(8, 9), place=None),
            LoggedObject("mug2", "Mug", False, "shelf"),
        ]
    )
    ents = [
        Entity("mug", "object", P),
        Entity("cup", "object", P),
        Entity("mug2", "object", P),
        Entity("counter", "receptacle", P),
        Entity("kitchen", "room", P),
    ]
    since = counts_from(ents, log)
    assert since == [6, None, 0, 0, 0]
    bits = np.full((5, 10), ALL, dtype=np.uint8)  # every check passes at every frame
    bits[0, 8] = 0  # the mug out of view at frame 8
    tracked = labels(bits, since)
    assert bits.min() == 0 and int(bits[1].min()) == ALL  # the input is left as it was
    index = {e.id: k for k, e in enumerate(ents)}
    assert valid_frames(tracked, index, ["mug"]) == [6, 7, 9]
    assert valid_frames(tracked, index, ["cup"]) == []
    assert valid_frames(tracked, index, ["mug2"]) == list(range(10))
    assert valid_frames(tracked, index, ["counter"]) == list(range(10))
    assert valid_frames(tracked, index, ["mug", "cup"]) == [6, 7, 9]
