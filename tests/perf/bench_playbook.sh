#!/usr/bin/env bash
# Time playbooks/plan.yml over a generated inventory of N GPU nodes (default 1024) against a
# no-op playbook over the same inventory. Prints both wall times and the ratio.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
N=${1:-1024}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export PATH=$ROOT/.venv/bin:$PATH ANSIBLE_CONFIG=$ROOT/ansible.cfg
mkdir -p "$TMP/inv/group_vars"
cp "$ROOT/inventories/lab/group_vars/gpu_nodes.yml" "$TMP/inv/group_vars/gpu_nodes.yml"
sed -e 's/rails: 4/rails: 8/' -e 's/rail_prefix: 24/rail_prefix: 19/' -e 's/node_prefix: 27/node_prefix: 29/' \
    -e '/^  tors:/,/^  qos:/{/^  qos:/!d}' "$ROOT/inventories/lab/group_vars/all/fabric.yml" > "$TMP/inv/group_vars/all.yml"
sed -i 's/  - ens7f1np1/  - ens7f1np1\n  - ens8f0np0\n  - ens8f1np1\n  - ens9f0np0\n  - ens9f1np1/' "$TMP/inv/group_vars/gpu_nodes.yml"
{
    echo "all:"; echo "  children:"; echo "    gpu_nodes:"; echo "      hosts:"
    for i in $(seq 1 "$N"); do printf '        gpu%05d: {fabric_node_id: %d}\n' "$i" "$i"; done
} > "$TMP/inv/hosts.yml"
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
