#!/usr/bin/env bash
# The dp-mcmc Jupyter kernel: a kernelspec named `dp-mcmc` ("Rust (dp-mcmc)") on the evcxr
# kernel, with every setting it needs in its kernel.json (nothing to source, no server-wide
# TMPDIR), the crate and its prelude loaded when a kernel starts, and JupyterLab in one venv.
#
#   bash scripts/kernel.sh install      # install what is missing (idempotent), then prebuild
#   bash scripts/kernel.sh status       # what is installed, and where
#   bash scripts/kernel.sh uninstall    # remove what install added
#   bash scripts/kernel.sh venv         # print the venv's path (its bin/jupyter runs JupyterLab)
#
# Everything goes under PREFIX (default ${XDG_DATA_HOME:-$HOME/.local/share}/dp-mcmc-kernel, or
# DP_MCMC_KERNEL_PREFIX):
#   PREFIX/venv        JupyterLab and nbclient (pinned); `PREFIX/venv/bin/jupyter lab notebooks/`
#   PREFIX/cargo       evcxr_jupyter (pinned, 6-17 min to build on 2 cores), unless `cargo install`
#                      already installed that version
#   PREFIX/evcxr       the kernel's evcxr configuration (EVCXR_CONFIG_DIR): init.evcxr with the
#                      compile cache, opt-level 0, the crate as a dependency (this checkout's path)
#                      and its prelude
#   PREFIX/launch      what kernel.json runs: it sets EVCXR_CONFIG_DIR and the kernel's TMPDIR
#                      (/tmp/dp-mcmc-kernel-UID-N, N a checksum of PREFIX, made at each start with a .cargo/config.toml from
#                      scripts/kernel_cargo_config.py that lets evcxr's cache keep the compiled
#                      crate between kernels), gives the kernel a build folder of its own that an
#                      earlier kernel left built (TMPDIR/kernel-K, the first one no running kernel
#                      holds: a lock), then runs evcxr_jupyter. (A TMPDIR under the home folder
#                      made every kernel die at start, "dlopen failed", with evcxr 0.22.)
# and the kernelspec itself in Jupyter's user data folder (`jupyter kernelspec list` shows it).
# The first kernel compiles the crate (a few minutes cold); install runs one kernel to prebuild it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

EVCXR_VERSION=0.22.0
JUPYTERLAB_VERSION=4.6.6
NBCLIENT_VERSION=0.11.0
MIN_RUSTC=1.95   # evcxr 0.22's rust-version
KERNEL_NAME=dp-mcmc
DISPLAY_NAME="Rust (dp-mcmc)"
prefix="${DP_MCMC_KERNEL_PREFIX:-${XDG_DATA_HOME:-$HOME/.local/share}/dp-mcmc-kernel}"
venv="$prefix/venv"
stamp="$prefix/installed"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

die() { echo "kernel.sh: $*" >&2; exit 1; }

# The toolchain: rustc new enough for evcxr; rust-src for completions (a warning only).
check_toolchain() {
  command -v cargo >/dev/null || die "cargo not found: install Rust (https://rustup.rs), $MIN_RUSTC or newer"
  local have
  have="$(rustc --version | awk '{print $2}')"
  if [ "$(printf '%s\n%s\n' "$MIN_RUSTC" "$have" | sort -V | head -n 1)" != "$MIN_RUSTC" ]; then
    die "rustc $have is older than $MIN_RUSTC, which evcxr $EVCXR_VERSION needs: rustup update stable"
  fi
  if [ ! -d "$(rustc --print sysroot)/lib/rustlib/src/rust/library" ]; then
    echo "note: the rust-src component is missing; the kernel runs without it, but code completion" >&2
    echo "      needs it: rustup component add rust-src" >&2
  fi
  command -v python3 >/dev/null || die "python3 not found: JupyterLab needs Python 3.9 or newer"
}

# evcxr_jupyter at the pinned version (it has no --version: cargo's install records tell): the one
# install put into PREFIX/cargo, or one installed with `cargo install` before.
evcxr_binary() {
  local own="$prefix/cargo/bin/evcxr_jupyter"
  if [ -x "$own" ] && grep -q "^\"evcxr_jupyter $EVCXR_VERSION " "$prefix/cargo/.crates.toml" 2>/dev/null; then
    echo "$own"
    return 0
  fi
  local cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin/evcxr_jupyter"
  if [ -x "$cargo_bin" ] && cargo install --list 2>/dev/null | grep -q "^evcxr_jupyter v$EVCXR_VERSION:"; then
    echo "$cargo_bin"
    return 0
  fi
  return 1
}

# What install writes, as one text: compared with the stamp to tell whether anything changed.
wanted() {
  printf 'evcxr_jupyter %s\njupyterlab %s\nnbclient %s\ncrate %s\nsettings %s\n' \
    "$EVCXR_VERSION" "$JUPYTERLAB_VERSION" "$NBCLIENT_VERSION" "$root" \
    "$(cat "$root/scripts/kernel.sh" "$root/scripts/kernel_cargo_config.py" "$root/Cargo.toml" | sha256sum | cut -c1-16)"
}

kernel_json() {
  python3 - "$prefix" "$DISPLAY_NAME" <<'EOF'
import json, sys
prefix, name = sys.argv[1:]
print(json.dumps({
    "argv": [f"{prefix}/launch", "{connection_file}"],
    "display_name": name,
    "language": "rust",
    "interrupt_mode": "message",
}, indent=1))
EOF
}

# The kernels' TMPDIR and build folders: in /tmp, one per install (PREFIX), so two checkouts'
# kernels do not rebuild each other's crate.
build_root() { echo "/tmp/dp-mcmc-kernel-$(id -u)-$(printf %s "$prefix" | cksum | cut -d' ' -f1)"; }

launcher() {  # EVCXR_BINARY
  cat <<EOF
#!/bin/sh
# The dp-mcmc kernel (written by scripts/kernel.sh install): evcxr_jupyter with its settings.
set -e
tmp="$(build_root)"
mkdir -p "\$tmp/.cargo"
cp "$prefix/cargo-config.toml" "\$tmp/.cargo/config.toml.\$\$"
mv -f "\$tmp/.cargo/config.toml.\$\$" "\$tmp/.cargo/config.toml"
export EVCXR_CONFIG_DIR="$prefix/evcxr" TMPDIR="\$tmp"
unset CARGO_TARGET_DIR
# A build folder of its own that an earlier kernel left built: the first free one of
# \$tmp/kernel-0, kernel-1, ..., held by a lock on fd 9 for as long as this kernel (and what it
# starts) runs, so two kernels never share one and a new kernel finds its dependencies compiled.
if command -v flock > /dev/null; then
  slot=0
  while :; do
    exec 9> "\$tmp/kernel-\$slot.lock"
    if flock -n 9; then break; fi
    exec 9>&-
    slot=\$((slot + 1))
  done
  mkdir -p "\$tmp/kernel-\$slot"
  export EVCXR_TMPDIR="\$tmp/kernel-\$slot"
fi
exec "$1" --control_file "\$1"
EOF
}

install() {
  check_toolchain
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(wanted)" ] && evcxr_binary >/dev/null \
      && [ -x "$venv/bin/jupyter" ] && "$venv/bin/jupyter" kernelspec list 2>/dev/null | grep -q "^ *$KERNEL_NAME "; then
    echo "the $KERNEL_NAME kernel is installed and current ($prefix): nothing to do"
    echo "start JupyterLab with: $venv/bin/jupyter lab $root/notebooks"
    return 0
  fi
  mkdir -p "$prefix"
  local evcxr
  if ! evcxr="$(evcxr_binary)"; then
    echo "== installing evcxr_jupyter $EVCXR_VERSION into $prefix/cargo (one-off, 6-17 min on 2 cores)"
    # its own target folder: a CARGO_TARGET_DIR meant for the crate must not be used
    env -u CARGO_TARGET_DIR cargo install evcxr_jupyter --locked --version "$EVCXR_VERSION" \
      --root "$prefix/cargo"
    evcxr="$(evcxr_binary)" || die "evcxr_jupyter $EVCXR_VERSION did not install"
  fi
  if ! "$venv/bin/python" -c "import jupyterlab, nbclient" 2>/dev/null \
      || [ "$("$venv/bin/pip" freeze 2>/dev/null | grep -ci -e "^jupyterlab==$JUPYTERLAB_VERSION\$" -e "^nbclient==$NBCLIENT_VERSION\$")" != 2 ]; then
    echo "== installing JupyterLab $JUPYTERLAB_VERSION and nbclient $NBCLIENT_VERSION into $venv"
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check \
      "jupyterlab==$JUPYTERLAB_VERSION" "nbclient==$NBCLIENT_VERSION"
  fi
  # the kernel's evcxr configuration and TMPDIR
  mkdir -p "$prefix/evcxr"
  cat > "$prefix/evcxr/init.evcxr" <<EOF
:cache 4000
:opt 0
:dep dp-mcmc = { path = "$root", default-features = false, features = ["plot"] }
EOF
  echo "use dp_mcmc::prelude::*;" > "$prefix/evcxr/prelude.rs"
  python3 "$root/scripts/kernel_cargo_config.py" "$root/Cargo.toml" > "$prefix/cargo-config.toml"
  launcher "$evcxr" > "$prefix/launch"
  chmod +x "$prefix/launch"
  # the kernelspec
  local spec="$prefix/kernelspec/$KERNEL_NAME"
  mkdir -p "$spec"
  kernel_json > "$spec/kernel.json"
  "$venv/bin/jupyter" kernelspec install --user --name "$KERNEL_NAME" "$spec" >/dev/null
  echo "== registered the $KERNEL_NAME kernelspec (\"$DISPLAY_NAME\")"
  # prebuild: one kernel compiles the crate into evcxr's cache
  echo "== prebuilding the crate in a first kernel (a few minutes cold)"
  local nb="$prefix/prebuild.ipynb"
  python3 - "$nb" "$KERNEL_NAME" <<'EOF'
import json, sys
path, name = sys.argv[1:]
cell = {"cell_type": "code", "execution_count": None, "id": "prebuild", "metadata": {},
        "outputs": [], "source": ["dp_mcmc::accounting::gaussian_budget(1.0, 1e-5).unwrap()"]}
json.dump({"cells": [cell], "metadata": {"kernelspec": {"name": name, "display_name": name,
           "language": "rust"}}, "nbformat": 4, "nbformat_minor": 5}, open(path, "w"))
EOF
  local start=$SECONDS
  "$venv/bin/jupyter" execute --timeout=1800 --startup_timeout=1800 "$nb" >/dev/null \
    || die "the prebuild kernel failed: run \`$venv/bin/jupyter execute $nb\` to see why"
  echo "== prebuilt in $(( SECONDS - start )) s"
  wanted > "$stamp"
  echo "done. Start JupyterLab with: $venv/bin/jupyter lab $root/notebooks"
}

status() {
  echo "prefix: $prefix"
  if evcxr="$(evcxr_binary)"; then echo "evcxr_jupyter $EVCXR_VERSION: $evcxr"; else echo "evcxr_jupyter $EVCXR_VERSION: not installed"; fi
  if [ -x "$venv/bin/jupyter" ]; then
    "$venv/bin/jupyter" kernelspec list 2>/dev/null | grep "^ *$KERNEL_NAME " || echo "kernelspec $KERNEL_NAME: not registered"
  else
    echo "venv: not installed"
  fi
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(wanted)" ]; then echo "state: installed and current"; else echo "state: not installed (or out of date): bash scripts/kernel.sh install"; fi
}

uninstall() {
  if [ -x "$venv/bin/jupyter" ]; then
    "$venv/bin/jupyter" kernelspec remove -f "$KERNEL_NAME" >/dev/null 2>&1 || true
  fi
  if [ -d "$prefix" ]; then
    rm -rf "$prefix"
    echo "removed $prefix and the $KERNEL_NAME kernelspec"
  else
    echo "nothing to remove ($prefix does not exist)"
  fi
  local builds
  builds="$(build_root)"
  if [ -d "$builds" ]; then
    rm -rf "$builds"
    echo "removed the kernels' build folders ($builds)"
  fi
  echo "(evcxr's compile cache in ${XDG_CACHE_HOME:-$HOME/.cache}/evcxr is shared with other evcxr kernels and kept)"
}

case "${1:-}" in
  install) install ;;
  status) status ;;
  uninstall) uninstall ;;
  venv) echo "$venv" ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
