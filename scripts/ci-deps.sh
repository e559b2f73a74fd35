#!/usr/bin/env bash
# What CI needs besides node and the tools of scripts/test-tools.sh: a real Secret Service for
# test/e2e/keychain.test.ts, that is dbus-run-session (Debian's dbus-daemon, or dbus on older
# releases) and gnome-keyring-daemon (gnome-keyring). Installed as root with apt-get when missing.
# Run by .ci/run before the tests; it fails when it cannot install them, as that test then would.
set -uo pipefail
need=()
command -v dbus-run-session >/dev/null 2>&1 || need+=(dbus-daemon)
command -v gnome-keyring-daemon >/dev/null 2>&1 || need+=(gnome-keyring)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ci-deps: missing ${need[*]}, and this is not root with apt-get: install them by hand" >&2
  exit 1
fi
echo "ci-deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || { echo "ci-deps: apt-get update failed" >&2; exit 1; }
if ! apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; then
  # Before Debian 12, dbus-run-session came in the package dbus.
  need=("${need[@]/dbus-daemon/dbus}")
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null || { echo "ci-deps: could not install ${need[*]}" >&2; exit 1; }
fi
command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null || { echo "ci-deps: dbus-run-session or gnome-keyring-daemon still missing" >&2; exit 1; }
