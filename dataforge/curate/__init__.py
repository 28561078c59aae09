"""Curation: subsets, merges and splits of datasets with their provenance kept
(:mod:`.where`: the ``--where`` grammar; :mod:`.plan`: a curated dataset as a job the runner
writes, resumes and checks, its parents recorded as inputs, and its rebuild for reproduce)."""
