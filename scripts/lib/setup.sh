# Shared by scripts/start and scripts/check: install the Debian packages the
# build and the tests need (only the missing ones), then configure and build.
# Sourced, not run.

ALIGNSCOPE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ALIGNSCOPE_BUILD="${ALIGNSCOPE_BUILD:-$ALIGNSCOPE_ROOT/build}"

# Build and runtime dependencies (Debian 12 names).
ALIGNSCOPE_BUILD_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev qt6-svg-dev libqcustomplot-dev
  libsqlite3-dev libssl-dev zlib1g-dev libisal-dev libparasail-dev nlohmann-json3-dev libcli11-dev libopenmpi-dev
  help2man librsvg2-bin file  # scripts/package: manual pages, PNG icons; CPack's shlibdeps step runs `file`
)
# Independent oracles and real data used by the tests.
ALIGNSCOPE_TEST_PACKAGES=(emboss emboss-test emboss-data parasail mmseqs2-examples bowtie2-examples hmmer hmmer-examples
                          xvfb xauth clang libclang-rt-14-dev openmpi-bin microbiomeutil-data
                          lintian desktop-file-utils appstream  # these three: scripts/package-check
                          clang-format)  # scripts/format --check

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else echo "alignscope: need root or sudo to install: $*" >&2; return 1
  fi
}

install_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "alignscope: installing ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

configure_and_build() {
  local extra=()
  command -v ccache >/dev/null 2>&1 && extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  cmake -S "$ALIGNSCOPE_ROOT" -B "$ALIGNSCOPE_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${extra[@]}" "$@"
  cmake --build "$ALIGNSCOPE_BUILD" --parallel "$(nproc)"
}
