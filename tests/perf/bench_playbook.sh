#!/usr/bin/env bash
# Time playbooks/plan.yml over a generated inventory of N GPU nodes (default 1024) against a
# no-op playbook over the same inventory. Prints both wall times and the ratio.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
N=${1:-1024}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export PATH=$ROOT/.venv/bin:$PATH ANSIBLE_CONFIG=$ROOT/ansible.cfg
# the fleet of tests/perf/fleet.py: an addressing plan that fits N nodes x 8 rails, one ToR per rail and 64 nodes
(cd "$ROOT/tests/perf" && "$ROOT/.venv/bin/python" -c 'import sys, fleet; fleet.write_inventory(sys.argv[1], int(sys.argv[2]))' \
    "$TMP/inv" "$N")
cat > "$TMP/noop.yml" <<'YAML'
- name: No-op over the same inventory
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Nothing
      ansible.builtin.debug:
        msg: "{{ groups['gpu_nodes'] | length }} nodes"
YAML
t0=$(date +%s.%N)
ansible-playbook -i "$TMP/inv" "$TMP/noop.yml" >/dev/null
t1=$(date +%s.%N)
ansible-playbook -i "$TMP/inv" "$ROOT/playbooks/plan.yml" -e "rail_plan_output_dir=$TMP/out" > "$TMP/plan.log"
t2=$(date +%s.%N)
grep -o '"msg": ".*"' "$TMP/plan.log" | tail -1
python3 - "$t0" "$t1" "$t2" "$N" <<'PY'
import sys
t0, t1, t2, n = map(float, sys.argv[1:])
noop, plan = t1 - t0, t2 - t1
print("nodes=%d noop_s=%.2f plan_s=%.2f ratio=%.2f" % (n, noop, plan, plan / noop))
PY
