# Source this (`source scripts/kernel-env.sh`) before starting Jupyter for the notebooks;
# scripts/notebooks.sh sources it too. It exports
#   EVCXR_CONFIG_DIR  notebooks/.evcxr (init.evcxr: evcxr's compile cache, `:cache 4000`);
#   TMPDIR            a folder whose .cargo/config.toml (scripts/kernel_cargo_config.py) the
#                     kernel's builds read: dp-mcmc is compiled once per source version and then
#                     served from evcxr's cache, at the crate's dev optimisation levels.
# The folder is DP_MCMC_KERNEL_DIR if set, else /tmp/dp-mcmc-evcxr-<uid>.
_dp_mcmc_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export EVCXR_CONFIG_DIR="$_dp_mcmc_root/notebooks/.evcxr"
export DP_MCMC_KERNEL_DIR="${DP_MCMC_KERNEL_DIR:-/tmp/dp-mcmc-evcxr-$(id -u)}"
mkdir -p "$DP_MCMC_KERNEL_DIR/.cargo"
python3 "$_dp_mcmc_root/scripts/kernel_cargo_config.py" "$_dp_mcmc_root/Cargo.toml" \
  > "$DP_MCMC_KERNEL_DIR/.cargo/config.toml"
export TMPDIR="$DP_MCMC_KERNEL_DIR"
unset _dp_mcmc_root
