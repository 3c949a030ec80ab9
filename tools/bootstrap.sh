#!/usr/bin/env bash
# Set up everything this project needs on a fresh Debian 12 machine, then run it.
#
#   tools/bootstrap.sh demo [ARGS]   install, then run the main job: catsctl demo
#   tools/bootstrap.sh test [ARGS]   install, then run the whole test suite (lint, types, pytest)
#
# It installs the Debian packages that are missing when run as root (otherwise it prints the
# exact apt-get command and stops), creates a virtual environment (.venv, or $CATS_VENV) and
# installs the package with its test extras into it. Safe to run again: it only adds what is
# missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${CATS_VENV:-$root/.venv}
python=${PYTHON:-python3}

usage() {
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
}
[ $# -ge 1 ] || usage
command=$1
shift

# --- Debian packages -----------------------------------------------------------------------
# Each package is checked by what it provides, so a machine that has the tool another way
# (a different Python build, say) is not made to install it twice.
missing=()
command -v "$python" >/dev/null 2>&1 || missing+=(python3)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
[ -f /usr/include/libyang/libyang.h ] || missing+=(libyang2-dev)
command -v yanglint >/dev/null 2>&1 || missing+=(libyang2-tools)
command -v git >/dev/null 2>&1 || missing+=(git)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)  # the TLS tests make certificates
command -v yangcli >/dev/null 2>&1 || missing+=(yangcli)  # yuma123's NETCONF client, for tests
# The console's browser tests: Debian's headless browser and its WebDriver (selenium).
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)  # verifies deploy/systemd units
# The C-PS cluster (catsctl serve --cluster, docs/cluster.md) keeps its configuration in etcd;
# its tests start a 3-member etcd on loopback.
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
if command -v "$python" >/dev/null 2>&1; then
  "$python" -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
  inc=$("$python" -c 'import sysconfig; print(sysconfig.get_path("include"))')
  [ -f "$inc/Python.h" ] || missing+=(python3-dev)
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "bootstrap: installing Debian packages: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "bootstrap: missing Debian packages; run as root:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# --- Python environment --------------------------------------------------------------------
if [ ! -x "$venv/bin/python" ]; then
  echo "bootstrap: creating virtual environment $venv" >&2
  "$python" -m venv "$venv"
fi
cd "$root"
if [ "$command" = test ]; then
  # The Ansible playbook of docs/automation runs in the suite: ansible-core (the "ansible"
  # extra, about 20 s) and the ansible.netcommon and ansible.utils collections, taken from the
  # "ansible" wheel on PyPI (about 10 s, 2 MB kept; see tools/ansible_collections.py).
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -e "$root[test,ansible]"
  "$venv/bin/python" -m tools.ansible_collections
else
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -e "$root[test]"
fi

# Bytecode for the project's own modules, made once: the demo and the suite start hundreds of
# Python processes, and each would otherwise compile some 300 modules anew (about 1.7 s of CPU
# apiece) where the environment forbids writing bytecode (PYTHONDONTWRITEBYTECODE).
"$venv/bin/python" -m compileall -q -j 0 controller agents tools >/dev/null

case "$command" in
  demo)
    exec "$venv/bin/catsctl" demo "$@"
    ;;
  test)
    export PATH="$venv/bin:$PATH"
    echo "== ruff check" && ruff check .
    echo "== ruff format --check" && ruff format --check .
    echo "== mypy --strict" && mypy
    echo "== lint-imports (layer contracts)" && lint-imports --no-cache
    echo "== pytest (${CATS_TEST_WORKERS:-2} workers)"
    # pytest-xdist: one worker per core; a file's tests stay on one worker (tests/conftest.py)
    exec python -m pytest -n "${CATS_TEST_WORKERS:-2}" "$@"
    ;;
  *)
    usage
    ;;
esac
