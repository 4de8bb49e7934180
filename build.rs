//! Build script. It does nothing in ordinary builds. When `DP_MCMC_SOURCE_CFG` is set (by the
//! cargo configuration `scripts/kernel.sh` installs for the `dp-mcmc` kernel) it passes a hash
//! of the crate's sources to rustc as `--cfg dp_mcmc_source="…"`: evcxr's compile cache keys a
//! crate by its rustc command line, so with the hash on it the kernel reuses a compiled dp-mcmc
//! exactly as long as the sources are unchanged (docs/NOTEBOOKS.md, "The kernel's build settings").
//! The sources: everything under `src/`, the files directly in `data/` (the library includes
//! one of them), `Cargo.toml` and this file.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rustc-check-cfg=cfg(dp_mcmc_source, values(any()))");
    println!("cargo::rerun-if-env-changed=DP_MCMC_SOURCE_CFG");
    if std::env::var_os("DP_MCMC_SOURCE_CFG").is_none() {
        return;
    }
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut files = vec![root.join("Cargo.toml"), root.join("build.rs")];
    collect(&root.join("src"), &mut files);
    if let Ok(entries) = std::fs::read_dir(root.join("data")) {
        files.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_file()));
    }
    files.sort();
    // FNV-1a (64 bit) over every file's path relative to the crate and its bytes.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap_or(file);
        feed(relative.to_string_lossy().as_bytes());
        feed(&[0]);
        feed(&std::fs::read(file).unwrap_or_default());
        feed(&[0]);
    }
    for watched in ["src", "data", "Cargo.toml"] {
        println!("cargo::rerun-if-changed={watched}");
    }
    println!("cargo::rustc-cfg=dp_mcmc_source=\"{hash:016x}\"");
}

/// Every file under `dir`, recursively.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}
