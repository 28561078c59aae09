"""FindingDory: pick/place rearrangement episodes, oracle experience videos with time-of-day
stamps, the 60 templated memory tasks of the paper's Table 3 and its HL/LL metrics (issue 23).

Not registered as a pipeline yet; so far the episode log (``log.py``), the task template engine
(``templates.py``) and the metrics over given goal checks (``metrics.py``);
docs/findingdory_upstream.md holds upstream's facts.
"""
