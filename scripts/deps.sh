#!/usr/bin/env bash
# Install the Debian packages schedbed needs, only those missing. Idempotent and quiet when
# everything is there. Uses sudo when not root.
set -euo pipefail
pkgs=(gcc g++ make pkg-config liburcu-dev libhwloc-dev libcriterion-dev gnuplot-nox python3-matplotlib
      python3-numpy clang spin valgrind libtbb-dev slurm-wlm)
missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
