#!/usr/bin/env bash
# Installs the audio decoder the speech tests check against (Debian's sox with MP3 support),
# where this machine lets us: as root with apt-get. Never fails the test run by itself.
if command -v sox >/dev/null 2>&1 && sox -h 2>/dev/null | grep -q 'mp3'; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing sox (audio decoder for the speech tests)..." >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sox libsox-fmt-mp3) >/dev/null 2>&1 \
    || echo "could not install sox: the decoder checks will be skipped" >&2
else
  echo "sox not found and not root: the decoder checks of the speech tests will be skipped" >&2
fi
exit 0
