//! Helpers shared by the command-line and robustness tests: the built binary, odd CSV files in
//! a temp folder.

/// Runs the built `dp-mcmc` with `args` (with `CI` set, so no progress bar): (exit status,
/// stdout, stderr).
#[cfg(feature = "cli")]
pub fn run_cli<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dp-mcmc"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .env("CI", "1")
        .output()
        .expect("run dp-mcmc");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes `text` to a fresh file in a per-test temp folder.
pub fn temp_file(dir: &std::path::Path, name: &str, text: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A fresh temp folder for one test binary (`tag` and the process id in its name).
pub fn temp_dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dp-mcmc-robustness-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// CSV files a user might hand the loaders.
pub fn odd_csvs(dir: &std::path::Path) -> Vec<(&'static str, std::path::PathBuf)> {
    let files: Vec<(&str, &[u8])> = vec![
        ("empty", b""),
        ("header-only", b"x,y\n"),
        ("one-row", b"x,y\n1.0,2.0\n"),
        ("ragged", b"x,y\n1.0,2.0\n3.0\n4.0,5.0,6.0\n"),
        ("non-numeric", b"x,y\n1.0,abc\n2.0,def\n"),
        ("nan-text", b"x,y\nNaN,1\ninf,2\n"),
        ("missing", b"x,y\n1.0,\n,2.0\n"),
        ("binary", &[0xff, 0xfe, 0x00, 0x01, b',', b'\n', 0x80, 0x81]),
        (
            "draws-ok",
            b"chain,draw,mu\n0,1,0.1\n0,2,0.2\n1,1,0.3\n1,2,0.5\n",
        ),
        ("draws-dup", b"chain,draw,mu\n0,1,0.1\n0,1,0.2\n"),
        ("draws-text-chain", b"chain,draw,mu\na,1,0.1\nb,1,0.2\n"),
        ("draws-neg", b"chain,draw,mu\n-1,-5,0.1\n0,1,0.2\n"),
        (
            "draws-huge",
            b"chain,draw,mu\n99999999999,1,1e308\n0,1,-1e308\n",
        ),
        ("unicode-header", "θ,φ\n1,2\n".as_bytes()),
        ("dup-header", b"x,x\n1,2\n"),
    ];
    let mut out: Vec<(&str, std::path::PathBuf)> = files
        .into_iter()
        .map(|(n, t)| (n, temp_file(dir, &format!("{n}.csv"), t)))
        .collect();
    out.push(("no-such-file", dir.join("no-such-file.csv")));
    out.push(("a-directory", dir.to_path_buf()));
    out
}

/// Cheap comparison-grid tasks: easy-2d at ε = 1 (56 DP-penalty iterations, 3 minibatch, 106
/// Barker), `chains` chains of DP penalty, GWMH, minibatch penalty and DP Barker.
pub fn cheap_comparison(chains: usize) -> Vec<dp_mcmc::experiments::Task> {
    use dp_mcmc::experiments::{ComparisonSpec, SamplerKind};
    ComparisonSpec {
        experiments: vec![dp_mcmc::models::Experiment::EasyBanana2d],
        epsilons: vec![1.0],
        circle_epsilons: vec![],
        chains,
        algorithms: Some(vec![
            SamplerKind::DpPenalty,
            SamplerKind::DpPenaltyGwmh,
            SamplerKind::MinibatchPenalty,
            SamplerKind::DpBarker,
        ]),
    }
    .tasks()
}
