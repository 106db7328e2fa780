#!/usr/bin/env bash
# The test command (README, "The two commands"): on a Debian machine with nothing but the Rust
# toolchain, installs what the tests need when it is missing, runs every test of the workspace
# without stopping at the first failing test binary, and ends with one line a person or a CI
# reads: `N passed, N failed, N skipped`.
#
#   tools/test.sh                     # everything
#   tools/test.sh -p arbor-cli        # arguments go to `cargo test` (-p: those packages only)
#   tools/test.sh --deps-only         # only install what is missing (.ci/run's first step)
#   ARBOR_REQUIRE_ALL=1 tools/test.sh # a test that would skip fails instead (CI, as root)
#
# What the tests need beyond cargo: C and C++ compilers (the bundled SQLite, libFuzzer), tmux
# (the browser's end-to-end test), chromium and chromedriver (the HTML export opened in a
# browser), openssl (the TLS sync test's certificates), strace (the check that a vouching
# watcher spares `arbor stats` every file's stat), PostgreSQL's initdb and pg_ctl
# (arbor-testkit's throwaway servers) and exFAT's mkfs.exfat and mount.exfat-fuse (a file system
# without hard links, arbor-testkit's no_links), and for the MCP server's real clients node, npm and
# python3-venv: then tools/mcp-clients.sh installs the pinned clients (MCP Inspector CLI, the
# conformance suite, the Python SDK; Node.js 22 when the system's is older) into
# target/mcp-clients when missing, and $ARBOR_MCP_CLIENTS names that directory to the tests. As root (or with password-less sudo) the missing Debian
# packages are installed with apt-get; otherwise they are named, and the tests that need them
# fail (they never pass without running).
#
# A test that cannot do its job here (the tests of files another user cannot read need root)
# passes but says `SKIPPED: TEST: REASON` (arbor_testkit::skip): each one is listed before the
# last line and counted as skipped, not passed; so are `#[ignore]`d tests (benchmarks run by
# hand). Exit status: cargo's (0 only when every test binary built and passed).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

deps_only=0
if [[ ${1:-} == --deps-only ]]; then
	deps_only=1
	shift
fi

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have cc || need+=(gcc)
have c++ || need+=(g++)
have tmux || need+=(tmux)
have chromium || need+=(chromium)
have chromedriver || need+=(chromium-driver)
have openssl || need+=(openssl)
have strace || need+=(strace)
have mkfs.exfat || need+=(exfatprogs)
have mount.exfat-fuse || need+=(exfat-fuse)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
have node || need+=(nodejs)
have npm || need+=(npm)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
if ((${#need[@]})); then
	sudo=()
	if [[ $EUID -ne 0 ]] && have sudo && sudo -n true 2>/dev/null; then
		sudo=(sudo -n)
	fi
	if have apt-get && { [[ $EUID -eq 0 ]] || ((${#sudo[@]})); }; then
		echo "tools/test.sh: installing ${need[*]} (apt-get)" >&2
		if ! "${sudo[@]}" apt-get update -qq ||
			! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; then
			echo "tools/test.sh: apt-get could not install ${need[*]}" >&2
			exit 1
		fi
	else
		echo "tools/test.sh: missing ${need[*]} and not root (no apt-get as root, no password-less sudo):" \
			"the tests that need them will FAIL; install them with: sudo apt-get install ${need[*]}" >&2
		((deps_only)) && exit 1
	fi
fi
# The real MCP clients (pinned, in a cache that is not committed; nothing when they are there).
export ARBOR_MCP_CLIENTS=${ARBOR_MCP_CLIENTS:-$PWD/target/mcp-clients}
if ! tools/mcp-clients.sh >/dev/null; then
	echo "tools/mcp-clients.sh could not install the MCP clients: the tests that drive arbor mcp" \
		"with them will FAIL" >&2
	((deps_only)) && exit 1
fi
((deps_only)) && exit 0

work=$(mktemp -d "${TMPDIR:-/tmp}/arbor-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
export ARBOR_SKIP_LOG="$work/skipped"
: >"$ARBOR_SKIP_LOG"

# The library crates' cargo features (arbor-core `typed`, arbor-db `postgres`; arbor-store and
# arbor-index have none) must not rot: each builds without its default features (a `cargo
# check`, seconds), and arbor-db's own tests of that build run (a PostgreSQL URL is refused
# naming the feature). Only for the whole workspace, not when the arguments name packages.
features_rc=0
if (($# == 0)); then
	# --lib: arbor-core's dev-dependencies (arbor-testkit) turn `typed` back on.
	cargo check -p arbor-core --no-default-features --lib --quiet || features_rc=1
	cargo check -p arbor-db --no-default-features --all-targets --quiet || features_rc=1
	cargo test -p arbor-db --no-default-features --lib --quiet || features_rc=1
fi

# Every package, unless the arguments name some.
scope=(--workspace)
for a in "$@"; do
	[[ $a == -p || $a == -p* || $a == --package* ]] && scope=()
done
cargo test "${scope[@]}" --no-fail-fast "$@" 2>&1 | tee "$work/log"
rc=${PIPESTATUS[0]}

read -r passed failed ignored < <(
	sed -n 's/^test result: [A-Za-z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored;.*/\1 \2 \3/p' "$work/log" |
		awk '{p += $1; f += $2; i += $3} END {print p + 0, f + 0, i + 0}'
)
skips=$(grep -c '^SKIPPED: ' "$ARBOR_SKIP_LOG")
echo
if ((skips)); then
	echo "skipped (passed without doing their job here):"
	sed 's/^/  /' "$ARBOR_SKIP_LOG"
fi
if ((ignored)); then
	echo "ignored: $ignored (#[ignore]: run by hand, see each test's comment)"
fi
if ((rc != 0 && failed == 0)); then
	# A test binary that did not build, or died without a result line.
	echo "cargo test exited with status $rc without a failing test: a build error or a crashed test binary (above)"
	failed=1
fi
if ((features_rc != 0)); then
	echo "a library crate without its default features did not build or its tests failed (above)"
	failed=$((failed + 1))
	((rc == 0)) && rc=1
fi
echo "$((passed - skips)) passed, $failed failed, $((skips + ignored)) skipped"
exit "$rc"
