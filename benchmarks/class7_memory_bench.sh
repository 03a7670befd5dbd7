#!/bin/bash
# Issue 20, class 7's open cases, side by side in one run: each case through the real CLI
# with OLD_PYTHON then NEW_PYTHON (virtualenv interpreters with creditflow installed from
# the checkouts to compare), under a 4 GB address-space limit and a 150 s limit; seconds,
# peak RSS (GNU time) and exit code.
#
#     benchmarks/class7_memory_bench.sh OLD_PYTHON NEW_PYTHON [FOLDER]
set -u
old=$1 new=$2 folder=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
cd "$folder"
"$new" - "$here" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from nonlinear_cases_bench import actors, chain, random_graph
for n in (1_000, 10_000):
    open(f"r{n}.json", "w").write(json.dumps(random_graph(n)))
    open(f"c{n}.json", "w").write(json.dumps(chain(n)))
hops = [{"id": "a", "reads": 1}, {"id": "b"}]
open("h6.json", "w").write(json.dumps(actors("h", hops, [("a", "b"), ("b", "a")], max_hops=10**6)))
PY
uptime
for case in "h6:accounts check h6.json" "r1000:check r1000.json" "r10000:check r10000.json" \
    "c1000:check c1000.json" "c10000:check c10000.json"; do
  name=${case%%:*}
  for python in "$old" "$new"; do
    /usr/bin/time -f "$name $python: %e s, %M KB peak RSS, exit %x" \
      prlimit --as=4096000000 timeout 150 "$python" -m creditflow.conformance.cli \
      ${case#*:} --max-states 1000 >/dev/null 2>err.txt
    tail -1 err.txt
    if grep -q MemoryError err.txt; then echo "  MemoryError"; fi
  done
done
uptime
