#!/usr/bin/env bash
# The checks that need a CUDA device, as run on a lent GPU (docs/results.md, sections
# "Test suite on CUDA" and "Scaling on CUDA"), in two stages that each fit a
# 10-minute command:
#
#   bash benchmarks/cuda_checks.sh suite   # the test suite (pytest-xdist, 12 processes)
#                                          # beside scaling.py --device cuda, 1e3-1e6 edges
#   bash benchmarks/cuda_checks.sh large   # scaling.py --device cuda at 1e7 edges
#   bash benchmarks/cuda_checks.sh table2  # citation.py --device cuda, the paper's whole
#                                          # Table 2 grid (resumes a run log found in
#                                          # $OUT/cit; raw files from $TGSAN_SHARED_DATA,
#                                          # default ../shared/data)
#
# Logs, tables and plots go to $OUT (default benchmarks/out/cuda). Packages missing on
# the machine can be given as wheels in .whl/ (e.g. GUDHI, TopoNetX and trimesh, for a
# machine without network access): they are installed into /tmp/site first.
set -u
cd "$(dirname "$0")/.."
case "${1:-}" in
    suite|large|table2) ;;
    *) echo "usage: bash benchmarks/cuda_checks.sh suite|large|table2" >&2; exit 2;;
esac
OUT=${OUT:-benchmarks/out/cuda}
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site:$PWD
fi
export PYTHONUNBUFFERED=1
{ nvidia-smi -L; git log -1 --format=%h 2>/dev/null
  python3 -c "import torch, torch_geometric, gudhi; print(torch.__version__,
torch_geometric.__version__, gudhi.__version__, torch.cuda.get_device_name())"
} > "$OUT/device.txt" 2>&1
case "${1:-}" in
    suite)
        (OMP_NUM_THREADS=1 timeout 500 python3 -m pytest -q -n 12 --dist loadfile \
            -p no:cacheprovider tests > "$OUT/tests.log" 2>&1
         echo "rc=$?" >> "$OUT/tests.log") &
        timeout 540 python3 benchmarks/scaling.py --device cuda --threads 1 \
            --sizes 1000 10000 100000 1000000 --plot "$OUT/scaling.png" \
            --results "$OUT/scaling.md" > "$OUT/scaling.log" 2>&1
        echo "rc=$?" >> "$OUT/scaling.log"
        wait
        tail -3 "$OUT/tests.log"; tail -20 "$OUT/scaling.log";;
    large)
        timeout 580 python3 benchmarks/scaling.py --device cuda --threads 1 \
            --sizes 10000000 --orders locality --plot "$OUT/scaling_large.png" \
            --results "$OUT/scaling_large.md" > "$OUT/scaling_large.log" 2>&1
        echo "rc=$?" >> "$OUT/scaling_large.log"
        tail -20 "$OUT/scaling_large.log";;
    table2)
        resume=(); [ -f "$OUT/cit/citation.json" ] && resume=(--resume)
        timeout 580 python3 benchmarks/citation.py --device cuda --no-progress \
            --data-root "${TGSAN_SHARED_DATA:-../shared/data}" --output "$OUT/cit" \
            --results "$OUT/cit/results.md" "${resume[@]}" > "$OUT/table2.log" 2>&1
        echo "rc=$?" >> "$OUT/table2.log"
        tail -20 "$OUT/table2.log";;
esac
