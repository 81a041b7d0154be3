#!/usr/bin/env bash
# The checks that need a CUDA device, as run on a lent GPU (docs/results.md, sections
# "Test suite on CUDA", "Scaling on CUDA" and "Table 2: citation imputation on CUDA"),
# in two stages that each fit a 10-minute command (about 7.5 and 3 minutes on an H200):
#
#   bash benchmarks/cuda_checks.sh table2  # the test suite (pytest-xdist, 6 processes)
#                                          # beside citation.py --device cuda, the paper's
#                                          # whole Table 2 grid in 8 worker processes, at
#                                          # the learning rate chosen on validation
#                                          # (resumes a run log found in $OUT/cit)
#   bash benchmarks/cuda_checks.sh scaling # scaling.py --device cuda at 1e3-1e6 edges
#                                          # beside 1e7 edges (locality order)
#
# Logs, tables and plots go to $OUT (default benchmarks/out/cuda). The raw files of the
# real datasets come from $TGSAN_SHARED_DATA (default ../shared/data). Packages missing
# on the machine can be given as wheels in .whl/ (e.g. GUDHI, TopoNetX and trimesh, for
# a machine without network access): they are installed into /tmp/site first.
set -u
cd "$(dirname "$0")/.."
case "${1:-}" in
    table2|scaling) ;;
    *) echo "usage: bash benchmarks/cuda_checks.sh table2|scaling" >&2; exit 2;;
esac
OUT=${OUT:-benchmarks/out/cuda}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}  # the package, from this checkout
if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site:$PYTHONPATH
fi
export PYTHONUNBUFFERED=1
{ nvidia-smi -L; git log -1 --format=%h 2>/dev/null
  python3 -c "import torch, torch_geometric, gudhi; print(torch.__version__,
torch_geometric.__version__, gudhi.__version__, torch.cuda.get_device_name())"
} > "$OUT/device.txt" 2>&1
export TGSAN_SHARED_DATA=${TGSAN_SHARED_DATA:-$PWD/../shared/data}
case "${1:-}" in
    table2)
        (OMP_NUM_THREADS=1 timeout 530 python3 -m pytest -q -n 6 --dist loadfile \
            -p no:cacheprovider -rs tests > "$OUT/tests.log" 2>&1
         echo "rc=$?" >> "$OUT/tests.log") &
        resume=(); [ -f "$OUT/cit/citation.json" ] && resume=(--resume)
        timeout 545 python3 benchmarks/citation.py --device cuda --lr 0.001 --workers 8 \
            --no-progress --data-root "$TGSAN_SHARED_DATA" --output "$OUT/cit" \
            --results "$OUT/cit/results.md" "${resume[@]}" > "$OUT/table2.log" 2>&1
        echo "rc=$?" >> "$OUT/table2.log"
        wait
        tail -3 "$OUT/tests.log"; tail -20 "$OUT/table2.log";;
    scaling)
        (timeout 570 python3 benchmarks/scaling.py --device cuda --threads 1 \
            --sizes 10000000 --orders locality --plot "$OUT/scaling_large.png" \
            --results "$OUT/scaling_large.md" > "$OUT/scaling_large.log" 2>&1
         echo "rc=$?" >> "$OUT/scaling_large.log") &
        timeout 560 python3 benchmarks/scaling.py --device cuda --threads 1 \
            --sizes 1000 10000 100000 1000000 --plot "$OUT/scaling.png" \
            --results "$OUT/scaling.md" > "$OUT/scaling.log" 2>&1
        echo "rc=$?" >> "$OUT/scaling.log"
        wait
        tail -20 "$OUT/scaling.log"; tail -10 "$OUT/scaling_large.log";;
esac
