#!/usr/bin/env bash
# braid's GPU acceptance run (tools/gpu/acceptance.py says what it does):
#
#   tools/gpu/acceptance.sh --out DIR                # on a machine with a CUDA GPU
#   tools/gpu/acceptance.sh --out DIR --device sim   # anywhere, on braid's simulated GPU (CI)
#
# Needs python3 (the standard library only; PyTorch only for the throughput step's comparison).
exec python3 "$(dirname "${BASH_SOURCE[0]}")/acceptance.py" "$@"
