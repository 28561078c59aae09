"""Try one RoboMME task episode, pass 1 only (plan + physics, no cameras).

    python scripts/robomme_try.py TASK DIFFICULTY SEED [NOISE_PROB]

Prints the goal and layout, then OK with the steps and subgoal spans, or FAIL with the reason.
"""

import sys
import time

import numpy as np

from dataforge.manip.executor import Executor, Noise
from dataforge.pipelines.robomme.sim import make_env

task, difficulty, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
noise = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
env = make_env(task, difficulty, render=False)
start = time.time()
env.reset(seed=seed)
base = env.unwrapped
print("goal:", base.goal(), "layout:", base.layout)
ex = Executor(env, noise=Noise(noise, 0.05), rng=np.random.default_rng(seed))
try:
    rec = ex.run(base.plan())
    spans = [(s["simple"], s["start"], s["end"]) for s in rec.subgoals]
    print("OK steps", len(rec), "time", round(time.time() - start, 2), spans)
except Exception as exc:
    print("FAIL", type(exc).__name__, exc, "steps", len(ex.rec), round(time.time() - start, 2))
