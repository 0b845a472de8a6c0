#!/usr/bin/env bash
# Installs a braid build tree into a temporary prefix, builds the outside project tests/embed
# against it with find_package(braid), and runs the app. Registered with ctest by tests/tools.
#
#   run_embed_test.sh BUILD_DIR EMBED_SOURCE_DIR CXX_COMPILER [SANITIZER]
set -euo pipefail

readonly build_dir=$1 embed_dir=$2 cxx=$3 sanitizer=${4:-}
work=$(mktemp -d)
rank0=""  # a background rank of train_processes, killed if the script stops first
trap '[[ -n $rank0 ]] && kill "$rank0" 2>/dev/null; rm -rf "$work"' EXIT

step() {
  local name=$1
  shift
  if ! "$@" >"$work/$name.log" 2>&1; then
    cat "$work/$name.log" >&2
    echo "run_embed_test.sh: $name failed: $*" >&2
    exit 1
  fi
}

flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$work/prefix")
if [[ -n $sanitizer ]]; then
  flags+=(-DCMAKE_CXX_FLAGS="-fsanitize=$sanitizer" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$sanitizer")
fi

step install cmake --install "$build_dir" --prefix "$work/prefix"
step configure cmake -S "$embed_dir" -B "$work/build" "${flags[@]}"
step build cmake --build "$work/build"
echo "installed into $work/prefix; built $work/build/app against it"
"$work/build/app" "$embed_dir/init.pbtxt" "$embed_dir/net.pbtxt"

# A zoo folder made by the installed braid_import from a PyTorch export, served from 8 threads.
step import "$work/prefix/bin/braid_import" "$embed_dir/../data/onnx/small_cnn/model.onnx" \
  --out "$work/small_cnn"
"$work/build/serve_model" "$work/small_cnn"

# Training through braid::Trainer on Fashion-MNIST: the application's own nets on one device, then
# a model builder's ResNet-20 data parallel on two.
"$work/build/train_model"
"$work/build/train_data_parallel" cpu:0 cpu:1
# LMDBs written by the installed braid_make_db (8000 images of Fashion-MNIST's t10k set to train on,
# the first 2000 of its training set to test on: small DBs, made in seconds), and an application
# training from them.
fmnist=/usr/share/datasets/fashion-mnist
step make_db "$work/prefix/bin/braid_make_db" --images "$fmnist/t10k-images-idx3-ubyte.gz" \
  --labels "$fmnist/t10k-labels-idx1-ubyte.gz" --limit 8000 --out "$work/train_lmdb"
step make_test_db "$work/prefix/bin/braid_make_db" --images "$fmnist/train-images-idx3-ubyte.gz" \
  --labels "$fmnist/train-labels-idx1-ubyte.gz" --limit 2000 --out "$work/test_lmdb"
"$work/build/train_lmdb" "$work/train_lmdb" "$work/test_lmdb"
# The application's own data (a braid::DataSource), data parallel on two devices.
"$work/build/train_source"
# A job of two processes, each connecting through <braid/process_group.h>.
"$work/build/train_processes" 0 2 "file://$work/rendezvous" &
rank0=$!
"$work/build/train_processes" 1 2 "file://$work/rendezvous"
wait "$rank0"
rank0=""

# An ONNX export imported, written as a model folder, served; its answer saved as .npy and compared
# with PyTorch's.
fixture="$embed_dir/../data/onnx/small_cnn"
"$work/build/model_io" "$fixture/model.onnx" "$fixture/input.npy" "$work/model_io_folder" \
  "$work/model_io_output.npy" "$fixture/output.npy"
# The same model served from and into memory of the simulated GPU (<braid/device_memory.h>).
"$work/build/device_tensors" "$fixture/model.onnx" "$fixture/input.npy" sim:0
# An op of the application's own, trained with Adam, exported and served.
"$work/build/custom_op" "$work/custom_op_model"

# README.md shows these programs whole: each block marked <!-- tests/embed/NAME --> must be NAME.
readme="$embed_dir/../../README.md"
for program in $(grep -o '<!-- tests/embed/[a-z_]*\.cc -->' "$readme" | sed 's/<!-- tests\/embed\/\(.*\) -->/\1/'); do
  awk -v marker="<!-- tests/embed/$program -->" '
    $0 == marker { found = 1; next }
    found && /^```cpp$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }' "$readme" >"$work/readme_$program"
  if ! diff -u "$embed_dir/$program" "$work/readme_$program" >&2; then
    echo "run_embed_test.sh: README.md's copy of tests/embed/$program differs (diff above)" >&2
    exit 1
  fi
  echo "README.md shows tests/embed/$program as it is"
done
