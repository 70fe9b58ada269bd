#!/usr/bin/env bash
# The unseen-rig benchmark in SHARDS parallel shards, no judge; returns shards.tgz for --merge.
cd "$(dirname "$0")/../.." && source tools/device/_setup.sh
N=${SHARDS:-8}; mkdir -p /tmp/b
for k in $(seq 0 $((N - 1))); do
  OMP_NUM_THREADS=2 timeout $(( START + ${LIMIT:-540} - $(date +%s) )) python3 tests/bench/bench_unseen.py --per-kind 12 \
    --per-artist 8 --shard $k/$N --no-judge --device cuda --artists ${ARTISTS:-bench_out/artists} --out /tmp/b/s$k.json \
    ${BENCH_ARGS:-} > /tmp/b_$k.log 2>&1 &
done
wait
grep -h " → " /tmp/b_*.log | sort -n | tee "$OUT/cases.log" | tail -70
grep -h -A3 Traceback /tmp/b_*.log | head -20
(cd /tmp/b && tar czf "$OUT/shards.tgz" s*.json s*.clips.npz)
ls -la "$OUT"; echo "total $(( $(date +%s) - START ))s"
