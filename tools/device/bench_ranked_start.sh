#!/usr/bin/env bash
# Start "pose" with and without the prompt-ranked start (DistillConfig.ranked_start) on the unseen-rig
# benchmark, side by side: tools/device/bench_unseen.sh with two RUNS ("pose", "ranked"), SHARDS
# shards each, no judge; returns $OUT/pose.tgz and $OUT/ranked.tgz (and their logs) for --merge here.
# Defaults: the 24 cases of 4 per family kind and 4 per artist rig; EXTRA (e.g. "--config steps=100")
# is passed to both runs.
cd "$(dirname "$0")/../.." || exit 1
export PER_KIND=${PER_KIND:-4} PER_ARTIST=${PER_ARTIST:-4} SHARDS=${SHARDS:-8} THREADS=${THREADS:-1}
export RUNS="pose:--config start='pose' ${EXTRA:-};ranked:--config start='pose' --config ranked_start=True ${EXTRA:-}"
exec bash tools/device/bench_unseen.sh
