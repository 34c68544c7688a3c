# Entry points. `make plan` and `make test` do all setup on a fresh machine.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export PATH := $(abspath $(VENV))/bin:$(PATH)
export ANSIBLE_CONFIG := $(abspath ansible.cfg)

.PHONY: setup plan tors test unit units-installed lint sanity molecule lab lab-down slurm-lab slurm-lab-down bench bench-scale dist release-notes clean

$(STAMP): requirements-dev.txt requirements-yang.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements-dev.txt
	PY=$(abspath $(PY)) bash tests/yang-deps.sh
	@mkdir -p build/.collections/ansible_collections/ainet
	@ln -sfn $(abspath .) build/.collections/ansible_collections/ainet/fabric
	touch $(STAMP)

setup: $(STAMP)
	@mkdir -p build/.collections/ansible_collections/ainet
	@ln -sfn $(abspath .) build/.collections/ansible_collections/ainet/fabric

plan: setup
	ansible-playbook -i inventories/lab playbooks/plan.yml

tors: setup
	ansible-playbook -i inventories/lab playbooks/tors.yml

test:  # run-all.sh runs the setup as its own timed stage
	bash tests/run-all.sh

unit: setup
	$(PY) -m pytest -q tests/unit

# ansible-test units on the built and installed tarball (not in `make test`: about 6 minutes on 2 cores)
units-installed: setup
	bash tests/units-installed.sh

lint: setup
	ansible-lint --profile production

sanity: setup
	bash tests/sanity/run.sh

molecule: setup
	bash tests/molecule.sh

LAB_KIND ?= containers
lab: setup
	bash tests/system-deps.sh
	bash tests/lab/lab.sh up --kind $(LAB_KIND)

lab-down:
	bash tests/lab/lab.sh down

SLURM_NODES ?= n1,n2
slurm-lab:
	bash tests/system-deps.sh
	python3 tests/lab/slurm_lab.py up --nodes $(SLURM_NODES)

slurm-lab-down:
	python3 tests/lab/slurm_lab.py down

bench: setup
	$(PY) tests/perf/bench_plan.py
	bash tests/perf/bench_playbook.sh
	$(PY) tests/perf/bench_k8s.py --repeat 3
	@if [ "$$(id -u)" -eq 0 ]; then $(PY) tests/perf/bench_reconverge.py; \
	else echo "bench_reconverge: skipped (needs root for the network-namespace lab; run: sudo make bench)"; fi

# The controller jobs end to end at fleet sizes (docs/performance.md): per job its wall time, a no-op play's over the
# same generated inventory, their ratio, the growth per doubling and the peak memory, as a markdown table
# (written to build/bench-scale.md too). One pass of the three sizes takes about 5 minutes on a quiet 2-core machine (REPEAT=1).
NODES ?= 1024 4096 16384
# Each no-op and job pair run REPEAT times, each one's least time kept (the no-op alone moves by 15 to 25% from run to
# run on a quiet machine).
REPEAT ?= 3
bench-scale: setup
	@mkdir -p build
	cd tests/perf && $(abspath $(PY)) bench_jobs.py --nodes $(NODES) --repeat $(REPEAT) --markdown $(abspath build/bench-scale.md)

# At release time only, once every branch's fragments are merged: changelogs/fragments/*.yml become the
# section of galaxy.yml's version in changelogs/changelog.yaml and CHANGELOG.rst (antsibull-changelog,
# requirements-dev.txt). The fragments stay (keep_fragments) but are no longer in the tarball.
release-notes:
	@mkdir -p build/.collections/ansible_collections/ainet
	@ln -sfn $(abspath .) build/.collections/ansible_collections/ainet/fabric
	cd build/.collections/ansible_collections/ainet/fabric && antsibull-changelog lint && antsibull-changelog release
	@grep -q "^v$$(sed -n 's/^version: *//p' galaxy.yml)$$" CHANGELOG.rst

dist: setup
	@mkdir -p build/dist
	ansible-galaxy collection build --force --output-path build/dist .

clean:
	rm -rf build .venv tests/output
