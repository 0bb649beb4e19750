#!/usr/bin/env bash
# apt_install PACKAGE...: installs Debian packages, as root or through sudo. The one place this project's
# scripts call apt-get. Two of them started at once on a fresh machine (the demo and the tests in two terminals)
# wait for each other instead of one failing on apt's lock: they take a lock of their own first, and apt waits up
# to five minutes for any other apt or dpkg.
apt_install() {
  local sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  (
    flock -w 900 9 || { echo "apt: another Switchyard script has been installing packages for 15 minutes" >&2; exit 1; }
    $sudo_cmd apt-get -o DPkg::Lock::Timeout=300 update -qq \
      && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$@" >/dev/null
  ) 9>"${TMPDIR:-/tmp}/switchyard-apt.lock"
}
