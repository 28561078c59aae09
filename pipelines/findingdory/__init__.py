"""FindingDory: pick/place rearrangement episodes, oracle experience videos with time-of-day
stamps, the 60 templated memory tasks of the paper's Table 3 and its HL/LL metrics (issue 23).

Not registered as a pipeline yet; so far the episode log (``log.py``) and the task template
engine (``templates.py``), docs/findingdory_upstream.md for upstream's facts.
"""
