#!/usr/bin/env bash
# Continue (or start, INIT=) training the image teacher on the family for TRAIN_UNTIL seconds.
cd "$(dirname "$0")/../.." && source tools/device/_setup.sh
INIT=${INIT-akd_blender/assets/teacher_image}
STOP=$(( START + ${TRAIN_UNTIL:-530} ))
timeout $(( START + ${LIMIT:-570} - $(date +%s) )) python3 -m tools.teacher train-family --out /tmp/tf \
  --phrases akd_blender/assets/teacher_image/phrases.npz --seconds 100000 --stop-at $STOP --clips ${CLIPS:-12288} \
  --heldout-clips 148 --batch 256 --lr ${LR:-3e-4} --seed ${SEED:-1} --size 32 --fill 0.8 --ground plain \
  --workers ${WORKERS:-15} ${INIT:+--init $INIT} 2>&1 | grep -v Warn | tee "$OUT/train.log"
cp /tmp/tf/teacher*.safetensors /tmp/tf/teacher.json /tmp/tf/phrases.npz "$OUT/" 2>/dev/null
python3 -c "
import torch; d = torch.load('/tmp/tf/heldout_drawings.pt'); torch.save({k: v[:, ::2] if v.ndim == 5 else v for k, v in d.items()}, '$OUT/drawings.pt')" 2>/dev/null
ls -la "$OUT"; echo "total $(( $(date +%s) - START ))s"
