"""``findingdory evaluate`` asks and reads answers as upstream's VLM agent does
(``findingdory-habitat`` 0c8af9a, ``policies/llm/``): the prompt gives neither the number of
frames a task needs nor its order, and says upstream's multi-goal sentence."""

from __future__ import annotations

import re

from dataforge.pipelines.findingdory.evaluate import prompt

# upstream policies/llm/prompts/qwen_prompt.txt:19
UPSTREAM_MULTI_GOAL = (
    "If task requires the agent to go to multiple places, output one frame index per "
    "object/place. (Do not use ellipsis)"
)


def _task(n: int, ordered: bool) -> dict:
    return {"text": "Navigate to the receptacles in the order you placed objects on them.",
            "goals": [[f"rec_{i}"] for i in range(n)], "ordered": ordered}  # fmt: skip


def test_the_prompt_does_not_give_the_number_of_frames_nor_the_order() -> None:
    texts = {prompt(_task(n, o), 96) for n in (1, 2, 5) for o in (False, True)}
    assert len(texts) == 1  # the same words for every task but its goal
    text = texts.pop()
    assert "exactly" not in text and "in the order the task asks" not in text
    assert not re.search(r"\b[25] frame", text)
    assert UPSTREAM_MULTI_GOAL in " ".join(text.split())
    assert "Below are 96 frames" in text
