#!/bin/sh
# tools/install-deps.sh's privilege logic, with --dry-run (prints the apt-get commands instead of
# running them) and a PATH of stubs: as root with no sudo installed (a container) it runs
# apt-get directly; as another user through sudo; as another user without sudo it refuses
# with a message saying to run it as root.
#
# And the README's quick start runs the script itself, not through sudo.
#
#   tests/cli/install_deps_test.sh path/to/tools/install-deps.sh path/to/README.md
set -u
script=$(realpath "${1:?usage: install_deps_test.sh INSTALL_DEPS_SH README}")
readme=${2:?usage: install_deps_test.sh INSTALL_DEPS_SH README}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $1"; sed 's/^/    | /' "$work/out"; failed=1; }

# A bin directory holding only an `id` that says the user is UID $1, and a `sudo` when $2 is 1.
stubs() {
  dir="$work/bin-$1-$2"
  mkdir -p "$dir"
  printf '#!/bin/sh\n[ "${1:-}" = -u ] && echo %s\n' "$1" >"$dir/id"
  chmod +x "$dir/id"
  if [ "$2" = 1 ]; then
    printf '#!/bin/sh\necho "sudo was run: $*"\n' >"$dir/sudo"
    chmod +x "$dir/sudo"
  fi
  echo "$dir"
}

run() {  # uid has_sudo
  PATH=$(stubs "$1" "$2") /bin/sh "$script" --dry-run >"$work/out" 2>&1
}

# Root, no sudo on PATH: the apt-get commands themselves, without sudo.
run 0 0
status=$?
if [ $status -ne 0 ]; then fail "as root without sudo: exit status $status"
elif ! grep -q '^env DEBIAN_FRONTEND=noninteractive apt-get update' "$work/out" \
  || ! grep -q '^env DEBIAN_FRONTEND=noninteractive apt-get install .*libprotobuf-dev' "$work/out"; then
  fail "as root without sudo: expected the apt-get commands without sudo"
elif grep -q sudo "$work/out"; then fail "as root without sudo: mentions sudo"
fi

# Another user with sudo: the same commands through sudo (printed, not run).
run 1000 1
status=$?
if [ $status -ne 0 ]; then fail "as a user with sudo: exit status $status"
elif [ "$(grep -c '^sudo env DEBIAN_FRONTEND=noninteractive apt-get ' "$work/out")" -ne 2 ]; then
  fail "as a user with sudo: expected both apt-get commands through sudo"
elif grep -q 'sudo was run' "$work/out"; then fail "as a user with sudo: --dry-run ran sudo"
fi

# Another user without sudo: refused, saying to run it as root.
run 1000 0
status=$?
if [ $status -ne 1 ]; then fail "as a user without sudo: exit status $status, expected 1"
elif ! grep -q 'run .* as root' "$work/out"; then fail "as a user without sudo: no advice to run it as root"
fi

# An unknown argument is a usage error, not an install.
PATH=$(stubs 0 0) /bin/sh "$script" --yes >"$work/out" 2>&1
status=$?
if [ $status -ne 2 ]; then fail "unknown argument: exit status $status, expected 2"; fi

# The quick start's command works for root without sudo and for users with it.
if ! grep -q '^tools/install-deps.sh && cmake ' "$readme"; then
  echo "FAIL: README.md's quick start does not begin with 'tools/install-deps.sh && cmake'"
  failed=1
fi

[ $failed -eq 0 ] && echo "install-deps.sh: privilege logic ok"
exit $failed
