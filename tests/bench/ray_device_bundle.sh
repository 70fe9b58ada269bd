#!/usr/bin/env bash
# Ray for the GPU device machine (CPython 3.12, offline), small enough to carry (one call carries ≤ 64 MiB):
#
#   bash tests/bench/ray_device_bundle.sh [OUT_DIR]          # here (needs PyPI): OUT_DIR/ray-py312.tar.xz, ≈ 25 MB
#   # on the device, with OUT_DIR carried (e.g. carry ["build/ray-device"]):
#   mkdir -p /tmp/rayenv && tar -xJf build/ray-device/ray-py312.tar.xz -C /tmp/rayenv
#   PYTHONPATH=/tmp/rayenv/site:$PYTHONPATH python3 -m tests.bench.bench_ray --jobs 8 --out $OUT
#
# The ray wheel (≈ 79 MB zipped, 201 MB installed) is unpacked and slimmed to what a local `ray.init()` with
# tasks needs: the Java jars, the dashboard's web client and the libraries (rllib, data, serve, train, tune,
# llm, air) go; the three native binaries (_raylet.so, gcs_server, raylet) are stripped of symbols
# (119 → 84 MB). Ray's own small dependencies that a torch + transformers image may lack (msgpack,
# protobuf, jsonschema and its parts, click) are unpacked beside it; pyyaml, requests, filelock and
# packaging are taken from the device's Python. The project's other dependencies are not in this bundle.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-build/ray-device}
PY=${PY:-.venv/bin/python}
RAY=$(sed -n 's/^\(ray==[0-9.]*\).*/\1/p' requirements-ray.txt)
DEPS="msgpack protobuf jsonschema jsonschema-specifications referencing rpds-py attrs click"
rm -rf "$OUT/wheels" "$OUT/site" && mkdir -p "$OUT/wheels" "$OUT/site"
platforms="--platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64"
# shellcheck disable=SC2086
"$PY" -m pip download --quiet --only-binary=:all: --python-version 3.12 --implementation cp $platforms \
  -d "$OUT/wheels" "$RAY"
for whl in "$OUT"/wheels/*.whl; do
  name=$(basename "$whl" | cut -d- -f1 | tr _ - | tr '[:upper:]' '[:lower:]')
  if [[ $name == ray ]] || [[ " $DEPS " == *" $name "* ]]; then
    "$PY" -m zipfile -e "$whl" "$OUT/site"
  fi
done
rm -rf "$OUT"/site/ray/{jars,rllib,data,serve,train,tune,llm,air} "$OUT/site/ray/dashboard/client"
find "$OUT/site" -name "__pycache__" -type d -prune -exec rm -rf {} +
strip --strip-unneeded "$OUT/site/ray/_raylet.so" "$OUT/site/ray/core/src/ray/gcs/gcs_server" \
  "$OUT/site/ray/core/src/ray/raylet/raylet"
chmod +x "$OUT/site/ray/core/src/ray/gcs/gcs_server" "$OUT/site/ray/core/src/ray/raylet/raylet"
XZ_OPT=${XZ_OPT:--6 -T0} tar -cJf "$OUT/ray-py312.tar.xz" -C "$OUT" site
rm -rf "$OUT/wheels" "$OUT/site"
ls -la "$OUT/ray-py312.tar.xz"
size=$(stat -c %s "$OUT/ray-py312.tar.xz")
if (( size > 60 * 1024 * 1024 )); then
  echo "ray_device_bundle: $OUT/ray-py312.tar.xz is $size bytes, over the 64 MiB carry limit's margin" >&2
  exit 1
fi
