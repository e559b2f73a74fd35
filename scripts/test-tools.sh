#!/usr/bin/env bash
# Installs what the tests drive besides node: tmux (a real pseudo-terminal that sends keys),
# bash, zsh and fish (completions run in each), sox with MP3 support (decodes the speech), and a real
# Secret Service for the keychain tests: dbus-run-session (dbus-daemon) and gnome-keyring-daemon.
# As root with apt-get; never fails the test run by itself: a test whose tool is missing is
# skipped with a note that says so.
need=()
command -v tmux >/dev/null 2>&1 || need+=(tmux)
command -v zsh >/dev/null 2>&1 || need+=(zsh)
command -v fish >/dev/null 2>&1 || need+=(fish)
command -v script >/dev/null 2>&1 || need+=(bsdutils)
command -v dbus-run-session >/dev/null 2>&1 || need+=(dbus-daemon)
command -v gnome-keyring-daemon >/dev/null 2>&1 || need+=(gnome-keyring)
if ! (command -v sox >/dev/null 2>&1 && sox -h 2>/dev/null | grep -qi 'mp3'); then need+=(sox libsox-fmt-mp3); fi
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing test tools: ${need[*]}" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null 2>&1 \
    || echo "could not install ${need[*]}: the tests that need them will be skipped" >&2
else
  echo "missing ${need[*]} and not root: the tests that need them will be skipped" >&2
fi
exit 0
