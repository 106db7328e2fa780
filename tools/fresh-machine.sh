#!/usr/bin/env bash
# Runs the README's test command as a newcomer would on a fresh machine: a minimal Debian
# (debootstrap --variant=minbase bookworm: no C compiler, tmux, chromium, openssl or
# PostgreSQL), this repository's committed HEAD cloned into /root/arbor-check (/root is 0700,
# as for a newcomer working as root), and only the host's Rust toolchain (~/.cargo bound in,
# ~/.rustup bound read-only). Runs in a private mount namespace; the root file system is kept
# in DIR for the next run (the clone and its target directory are made anew each time).
#
#   tools/fresh-machine.sh                        # tools/test.sh in DIR=/var/tmp/arbor-fresh
#   DIR=/root/fresh tools/fresh-machine.sh .ci/run
#
# Needs root, unshare, debootstrap (installed with apt-get when missing) and the network (the
# Debian mirror, crates.io). A host behind a TLS-inspecting proxy names its CA bundle in
# $SSL_CERT_FILE: it is copied in for cargo and apt.
set -euo pipefail
[[ $EUID -eq 0 ]] || { echo "tools/fresh-machine.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
repo=$(cd "$(dirname "$0")/.." && pwd)
DIR=${DIR:-/var/tmp/arbor-fresh}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
cmd=${*:-tools/test.sh}
R=$DIR/rootfs
home=${HOME:-/root}
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
if [[ ! -x $R/bin/bash ]]; then
	mkdir -p "$DIR"
	debootstrap --variant=minbase bookworm "$R" "$MIRROR"
fi
cp /etc/resolv.conf "$R/etc/resolv.conf"
cert=()
if [[ -n ${SSL_CERT_FILE:-} && -f $SSL_CERT_FILE ]]; then
	mkdir -p "$R/etc/ssl"
	cp "$SSL_CERT_FILE" "$R/etc/ssl/host-ca.pem"
	cert=(SSL_CERT_FILE=/etc/ssl/host-ca.pem CARGO_HTTP_CAINFO=/etc/ssl/host-ca.pem)
fi
chmod 700 "$R/root"
rm -rf "$R/root/arbor-check"
git clone -q "$repo" "$R/root/arbor-check"
mkdir -p "$R/root/.cargo" "$R/root/.rustup"
echo "fresh-machine: $(git -C "$R/root/arbor-check" log --oneline -1) in $R/root/arbor-check: $cmd" >&2
unshare -m --propagation private bash -c '
	set -e
	R=$1 home=$2 cmd=$3
	shift 3
	mount -t proc proc "$R/proc"
	mount --rbind /sys "$R/sys"
	mount --rbind /dev "$R/dev"
	mount --bind "$home/.cargo" "$R/root/.cargo"
	mount --bind "$home/.rustup" "$R/root/.rustup"
	mount -o remount,bind,ro "$R/root/.rustup"
	exec chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb "$@" \
		PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		bash -c "cd /root/arbor-check && $cmd"
' fresh "$R" "$home" "$cmd" "${cert[@]}"
