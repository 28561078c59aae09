#!/usr/bin/env bash
# Install Mesa 25's software Vulkan driver (lavapipe) from Debian bookworm-backports into a
# private prefix, without touching the system: ManiSkill (SAPIEN) needs Vulkan even for physics,
# and Debian 12's own lavapipe (Mesa 22) is too old for it. Usage:
#   scripts/install_vulkan.sh PREFIX        (make installs into .venv/share/dataforge/vulkan)
# Writes PREFIX/lvp_icd.json with an absolute library path; dataforge points VK_ICD_FILENAMES at
# it (dataforge/manip/vulkan.py). SAPIEN brings its own Vulkan loader. Needs apt-get and dpkg
# (Debian/Ubuntu) and network access to deb.debian.org; no root needed.
set -euo pipefail
PREFIX=${1:?usage: install_vulkan.sh PREFIX}
SUITE=${DATAFORGE_VULKAN_SUITE:-bookworm-backports}
mkdir -p "$PREFIX"
PREFIX=$(cd "$PREFIX" && pwd)
if [ -f "$PREFIX/lvp_icd.json" ] && [ -f "$PREFIX/.complete" ]; then
    echo "vulkan: lavapipe already in $PREFIX"; exit 0
fi
command -v apt-get >/dev/null && command -v dpkg >/dev/null || {
    echo "vulkan: needs apt-get and dpkg (Debian); otherwise install Mesa >= 25's mesa-vulkan-drivers yourself and set VK_ICD_FILENAMES" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/lists/partial" "$WORK/cache/archives/partial"
echo "deb http://deb.debian.org/debian $SUITE main" > "$WORK/sources.list"
APT=(-o "Dir::Etc::sourcelist=$WORK/sources.list" -o "Dir::Etc::sourceparts=-"
     -o "Dir::State::Lists=$WORK/lists" -o "Dir::Cache=$WORK/cache" -o "Debug::NoLocking=1"
     -o "APT::Sandbox::User=$(id -un)")
apt-get "${APT[@]}" -qq update
(cd "$WORK" && apt-get "${APT[@]}" -qq download mesa-vulkan-drivers)
rm -rf "$PREFIX/root"
dpkg -x "$WORK"/mesa-vulkan-drivers_*.deb "$PREFIX/root"
LIB=$(find "$PREFIX/root" -name libvulkan_lvp.so | head -1)
[ -n "$LIB" ] || { echo "vulkan: libvulkan_lvp.so not found in the package" >&2; exit 1; }
MISSING=$(ldd "$LIB" | awk '/not found/ {print $1}' || true)
if [ -n "$MISSING" ]; then
    echo "vulkan: lavapipe needs system libraries that are missing: $MISSING (apt-get install libllvm15 libdrm2 ...)" >&2
    exit 1
fi
API=$(sed -n 's/.*"api_version": *"\([^"]*\)".*/\1/p' "$(find "$PREFIX/root" -name lvp_icd.json | head -1)")
cat > "$PREFIX/lvp_icd.json" <<JSON
{
    "ICD": {
        "api_version": "${API:-1.3.0}",
        "library_path": "$LIB"
    },
    "file_format_version": "1.0.0"
}
JSON
touch "$PREFIX/.complete"
echo "vulkan: lavapipe $(basename "$WORK"/mesa-vulkan-drivers_*.deb) in $PREFIX"
