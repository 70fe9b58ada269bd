#!/usr/bin/env bash
# The unseen-rig benchmark in SHARDS parallel shards, no judge; returns $RUN.tgz for --merge.
# RUNS="name:ARGS;name2:ARGS2" runs several configurations side by side (SHARDS shards each, or N for
# a run named name@N; at most 8, one $OUT/<name>.tgz each, holding the shards' JSON, clips and printed lines).
# SCRIPT=tests/bench/bench_robustness.py runs the appearance-drift bench the same way (same arguments).
cd "$(dirname "$0")/../.." && source tools/device/_setup.sh
N=${SHARDS:-8}
RUNS=${RUNS:-"shards:${BENCH_ARGS:-}"}
IFS=';' read -ra SPECS <<< "$RUNS"
for spec in "${SPECS[@]}"; do
  run=${spec%%:*}; args=${spec#*:}; shards=$N
  [[ $run == *@* ]] && shards=${run#*@} && run=${run%@*}
  mkdir -p /tmp/b_$run
  for k in $(seq 0 $((shards - 1))); do
    OMP_NUM_THREADS=${THREADS:-2} timeout $(( START + ${LIMIT:-540} - $(date +%s) )) python3 ${SCRIPT:-tests/bench/bench_unseen.py} \
      --per-kind ${PER_KIND:-12} --per-artist ${PER_ARTIST:-8} --shard $k/$shards --no-judge --device cuda \
      --artists ${ARTISTS:-bench_out/artists} --out /tmp/b_$run/s$k.json $args > /tmp/b_$run/$k.log 2>&1 &
  done
done
wait
for spec in "${SPECS[@]}"; do
  run=${spec%%:*}; run=${run%@*}
  echo "== $run"; grep -h " → " /tmp/b_$run/*.log | sort -n | tee /tmp/b_$run/lines.log | tail -70
  grep -h -A3 Traceback /tmp/b_$run/*.log | head -20
  (cd /tmp/b_$run && tar czf "$OUT/$run.tgz" s*.json s*.clips.npz lines.log)  # one file per run: a call returns at most 8
done
ls -la "$OUT"; echo "total $(( $(date +%s) - START ))s"
