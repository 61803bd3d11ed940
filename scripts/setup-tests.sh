#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian/Ubuntu machine with Python >= 3.11:
# Chromium + its driver + CJK fonts (for the real-browser tests), HAProxy (for the local cluster
# behind a sticky proxy, deploy/run-local-cluster) and a venv in .venv with
# requirements-dev.txt. Safe to run again. Used by the README's test command and so by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_packages=(chromium chromium-driver fonts-noto-cjk haproxy)
if command -v apt-get >/dev/null 2>&1; then
    missing=()
    for pkg in "${apt_packages[@]}"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if ((${#missing[@]})); then
        sudo_cmd=()
        [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
        "${sudo_cmd[@]}" apt-get update -qq
        DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
    fi
else
    echo "setup-tests: no apt-get here; browser tests will skip unless /usr/bin/chromium exists" >&2
fi

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
