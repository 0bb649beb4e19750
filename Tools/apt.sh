#!/usr/bin/env bash
# apt_install PACKAGE...: installs Debian packages, as root or through sudo. The one place this project's
# scripts call apt-get. Two of them started at once on a fresh machine (the demo and the tests in two terminals,
# from one clone or two) wait for each other instead of one failing on apt's lock: each holds a lock on the
# apt-get program itself (readable by every user, the same file for every clone) while it installs, and apt waits
# up to five minutes for any other apt or dpkg.
apt_install() {
  local sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  local apt_get
  apt_get=$(command -v apt-get) || { echo "apt: apt-get is not installed; install ${*} by hand" >&2; return 1; }
  (
    if command -v flock >/dev/null 2>&1; then
      flock -w 900 9 || { echo "apt: another Switchyard script has been installing packages for 15 minutes" >&2; exit 1; }
    fi
    # `env` inside sudo: sudo's env_reset would drop a DEBIAN_FRONTEND set before it, and a package asking a
    # question (tzdata) would then wait on a terminal nobody reads.
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive "$apt_get" -o DPkg::Lock::Timeout=300 update -qq \
      && $sudo_cmd env DEBIAN_FRONTEND=noninteractive "$apt_get" -o DPkg::Lock::Timeout=300 install -y -qq "$@" >/dev/null
  ) 9<"$apt_get"
}
