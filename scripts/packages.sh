# Sourced by scripts/setup.sh and scripts/cross.sh: which Debian packages are
# missing, and installing them.

# missing_packages PKG...: prints (one per line) each PKG that is not installed. A
# plain name counts as installed for the host's architecture or as an
# architecture-independent package; NAME:ARCH for that architecture. (A plain
# dpkg-query status is one line per installed architecture once scripts/cross.sh has
# added foreign ones, so it is read per architecture.)
missing_packages() {
  local native p name want lines
  native="$(dpkg --print-architecture)"
  for p in "$@"; do
    name="${p%%:*}"
    want="${p#*:}"
    [[ "$want" == "$p" ]] && want="$native"
    lines="$(dpkg-query -W -f='${Architecture} ${Status}\n' "$name" 2>/dev/null || true)"
    if ! grep -qxE "($want|all) install ok installed" <<<"$lines"; then
      echo "$p"
    fi
  done
}

# apt_install WHO PKG...: installs the packages (as root). An index that fails to
# download (a foreign architecture's, a mirror mid-sync) is no reason to stop: apt
# says which, and the install fails if it mattered.
apt_install() {
  local who="$1"
  shift
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || echo "$who: warning: apt-get update reported errors; trying the install" >&2
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
