# Sourced by the device scripts: install .whl into /tmp/site and compile nvdiffrast's plugin once.
START=$(date +%s)
OUT=$(realpath -m "${OUT:-./device_out}")
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:. PYTHONUNBUFFERED=1
python3 -c "
from tools.teacher.family_data import family_items, render_family
render_family(family_items('train', 37, 0)[:1], 8, 8, device='cuda', backend='nvdiffrast')
print('nvdiffrast ready')" 2>&1 | grep -v Warn | tail -1
echo "set up in $(( $(date +%s) - START ))s"
