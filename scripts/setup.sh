#!/usr/bin/env bash
# Installs what cairn needs to build and test on Debian 12: apt packages and,
# when a package.json is present, the pinned npm test oracles and clients.
# Idempotent; skips apt when every package is already installed.
# --no-npm: only the apt packages (enough to build and run cairn itself).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libfmt-dev libcli11-dev libspdlog-dev nlohmann-json3-dev libxxhash-dev
  libpcre2-dev libutf8proc-dev librapidcheck-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev libopenblas0
  clang-14 libclang-rt-14-dev curl python3
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm: any installed version will do (Debian's, or another vendor's build).
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

with_npm=1
[ "${1:-}" = "--no-npm" ] && with_npm=0

if [ "$with_npm" = 1 ] && [ -f package.json ]; then
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
    echo "setup: installing npm packages (pinned in package-lock.json)"
    npm ci --no-audit --no-fund --loglevel=error
  fi
fi

# llama.cpp's test vocabularies and chat templates, from the pinned npm package.
if [ "$with_npm" = 1 ] && [ -d node_modules/node-llama-cpp ]; then
  tools/llama_cpp_bundle.sh >/dev/null
fi
