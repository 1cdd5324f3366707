#!/usr/bin/env bash
# The Debian packages svc needs beside npm's: sandbox isolation for `svc dev` (docs/sandboxes.md)
# and, with --test, what the test suite drives (kubectl, Chromium, sshd). Installs what is
# missing when run as root (`make install`, `.ci/run`); otherwise prints the apt-get line.
set -euo pipefail

missing=()
need() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ] || missing+=("$2"); }

need git git
# sandbox isolation: bubblewrap, network namespaces and veth pairs (iproute2), a firewall inside
# each sandbox's namespace (nftables), nsenter and setpriv (util-linux); the local cluster's
# https certificate (openssl)
need bwrap bubblewrap
need ip iproute2
need nft nftables
need nsenter util-linux
need setpriv util-linux
need openssl openssl
if [ "${1:-}" = "--test" ]; then
  need kubectl kubernetes-client
  # the dashboard's browser tests drive Debian's Chromium through playwright-core
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  # the SSH repository journey runs a real sshd on a loopback port (test/helpers/sshd.ts)
  need sshd openssh-server
  need ssh-keygen openssh-client
fi

[ ${#missing[@]} -eq 0 ] && exit 0
packages=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "svc needs these Debian packages: apt-get install ${packages}(as root; svc dev says what it cannot do without them)" >&2
  exit 0
fi
apt-get update -qq
# shellcheck disable=SC2086 # one word per package
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages
