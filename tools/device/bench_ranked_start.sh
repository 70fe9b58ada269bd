#!/usr/bin/env bash
# Start "pose" with and without the prompt-ranked start (DistillConfig.ranked_start) on the unseen-rig
# benchmark, side by side: tools/device/bench_unseen.sh with three RUNS, SHARDS shards each, no judge:
#   pose      --config start='pose'                                  (the held pose, 200 SDS steps)
#   ranked    --config start='pose' --config ranked_start=True       (the ranked start, 200 SDS steps)
#   ranked1   the same with --config steps=1                         (the ranked start almost as chosen)
# Returns $OUT/<run>.tgz (with its printed lines, lines.log) for `python tests/bench/bench_unseen.py --merge s*.json` here.
# Defaults: the 24 cases of 4 per family kind and 4 per artist rig; EXTRA (e.g. "--config steps=100")
# is passed to every run; RUNS_ONLY="pose;ranked" drops the others.
cd "$(dirname "$0")/../.." || exit 1
export PER_KIND=${PER_KIND:-4} PER_ARTIST=${PER_ARTIST:-4} SHARDS=${SHARDS:-6} THREADS=${THREADS:-1}
POSE="--config start='pose' ${EXTRA:-}"
ALL="pose:$POSE;ranked:$POSE --config ranked_start=True;ranked1:$POSE --config ranked_start=True --config steps=1"
RUNS=""
IFS=';' read -ra SPECS <<< "$ALL"
for spec in "${SPECS[@]}"; do
  case ";${RUNS_ONLY:-pose;ranked;ranked1};" in *";${spec%%:*};"*) RUNS="${RUNS:+$RUNS;}$spec" ;; esac
done
export RUNS
exec bash tools/device/bench_unseen.sh
