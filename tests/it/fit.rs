//! `dp-mcmc fit` end to end: a generated logistic data set (CSV and parquet) in,
//! `draws.parquet` (ArviZ layout: `chain`, `draw`, one f64 column per parameter),
//! `summary.csv` and `ledger.json` out; bad data exit 2 with one `error:` line naming the
//! column and the row. Runs the built binary.

use std::path::{Path, PathBuf};

use dp_mcmc::polars::prelude::*;
use serde_json::Value;

/// Rows of the generated data set.
const N: usize = 2000;

/// A fresh folder for this test binary.
fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dp-mcmc-fit-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `N` rows `y, x1, x2` of a logistic regression (intercept 0.5, slopes 1 and −0.5), the
/// covariates in [−1, 1], from a fixed linear congruential generator; `edit(row, fields)`
/// may change a row's three fields (as text) before it is written.
fn logistic_csv(dir: &Path, name: &str, edit: impl Fn(usize, &mut [String; 3])) -> PathBuf {
    let mut state = 12345u64;
    let mut unif = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::from("y,x1,x2\n");
    for j in 0..N {
        let (x1, x2) = (2.0 * unif() - 1.0, 2.0 * unif() - 1.0);
        let p = 1.0 / (1.0 + (-(0.5 + x1 - 0.5 * x2)).exp());
        let y = u8::from(unif() < p);
        let mut f = [y.to_string(), format!("{x1:.4}"), format!("{x2:.4}")];
        edit(j, &mut f);
        text.push_str(&f.join(","));
        text.push('\n');
    }
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs the built `dp-mcmc fit` with `args`: (exit status, stdout, stderr).
fn fit(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["fit"];
    all.extend_from_slice(args);
    crate::common::run_cli(&all)
}

/// The common flags of a small, fast fit writing to `out`: the noise-aware method (the
/// default) with both covariates' bounds declared.
fn flags<'a>(data: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "--data",
        data,
        "--model",
        "logistic",
        "--response",
        "y",
        "--features",
        "x1,x2",
        "--bounds",
        "x1=-1:1,x2=-1:1",
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--chains",
        "2",
        "--seed",
        "3",
        "--out",
        out,
    ]
}

/// Checks the four outputs of a successful (converged) fit against its JSON.
fn check_outputs(json: &Value, out: &Path) {
    for key in [
        "method",
        "converged",
        "max_rhat",
        "min_ess_bulk",
        "epsilon",
        "delta",
        "ledger",
        "files",
        "prior",
        "draws_per_chain",
    ] {
        assert!(json.get(key).is_some(), "no `{key}` in {json}");
    }
    assert_eq!(json["converged"], true);
    assert!(json["max_rhat"].as_f64().unwrap() <= 1.01);
    assert!(json["epsilon"].as_f64().unwrap() <= 1.0);
    assert!(json["delta"].as_f64().unwrap() <= 1e-6);
    let draws = out.join("draws.parquet");
    assert_eq!(
        json["files"]["draws"].as_str().unwrap(),
        draws.to_str().unwrap()
    );
    let df = ParquetReader::new(std::fs::File::open(&draws).unwrap())
        .finish()
        .unwrap();
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(names, ["chain", "draw", "intercept", "x1", "x2"]);
    assert_eq!(df.column("chain").unwrap().dtype(), &DataType::Int64);
    assert_eq!(df.column("draw").unwrap().dtype(), &DataType::Int64);
    for p in ["intercept", "x1", "x2"] {
        assert_eq!(df.column(p).unwrap().dtype(), &DataType::Float64);
    }
    // chains × draws, `draw` counting from 0 within each chain
    let kept = json["draws_per_chain"].as_u64().unwrap() as usize;
    assert!(kept > 0);
    assert_eq!(df.height(), 2 * kept);
    let draw = df.column("draw").unwrap().i64().unwrap();
    let chain = df.column("chain").unwrap().i64().unwrap();
    assert_eq!((chain.get(0), draw.get(0)), (Some(0), Some(0)));
    assert_eq!(draw.max(), Some(kept as i64 - 1));
    assert_eq!(chain.max(), Some(1));
    let summary = dp_mcmc::frame::read_csv(out.join("summary.csv")).unwrap();
    assert_eq!(summary.height(), 3);
    let params: Vec<String> = summary
        .column("parameter")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .map(|v| v.unwrap_or_default().to_string())
        .collect();
    assert_eq!(params, ["intercept", "x1", "x2"]);
    let header: Vec<String> = summary
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        header,
        [
            "parameter",
            "mean",
            "sd",
            "q5",
            "q50",
            "q95",
            "mcse_mean",
            "mcse_sd",
            "ess_bulk",
            "ess_tail",
            "r_hat",
            "rng"
        ]
    );
    // fit.json holds what was printed (and the files' paths)
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("fit.json")).unwrap()).unwrap();
    assert_eq!(&record, json);
    let ledger: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ledger.json")).unwrap()).unwrap();
    assert_eq!(ledger["epsilon"], json["epsilon"]);
    // The JSON lists the parts (each with its ε share); the file holds the whole ledger.
    assert_eq!(ledger["ledger"]["parts"], json["ledger"]);
    let parts = json["ledger"].as_array().unwrap();
    let shares: f64 = parts
        .iter()
        .map(|p| p["epsilon_share"].as_f64().unwrap())
        .sum();
    assert!(
        (shares - json["epsilon"].as_f64().unwrap()).abs() < 1e-9,
        "{shares}"
    );
}

#[test]
fn fit_writes_draws_summary_and_ledger_from_csv_and_parquet() {
    let dir = temp_dir("ok");
    let csv = logistic_csv(&dir, "data.csv", |_, _| {});
    let out = dir.join("out-csv");
    let (code, stdout, stderr) = fit(&flags(csv.to_str().unwrap(), out.to_str().unwrap()));
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    check_outputs(&json, &out);
    let delta_warned = |json: &Value| {
        json["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("below 1/n"))
    };
    assert!(!delta_warned(&json), "δ = 1e-6 at n = {N}: {json}");
    // a short summary for a person on stderr: the method, converged, a row per parameter
    assert!(
        stderr.contains("converged") && stderr.contains("x2") && stderr.contains("R-hat"),
        "{stderr}"
    );

    // `diagnose` reads the draws `fit` wrote and agrees with its summary
    let draws = out.join("draws.parquet");
    let (code, stdout, stderr) =
        crate::common::run_cli(&["diagnose", "--draws", draws.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let diag: Value = serde_json::from_str(stdout.trim()).unwrap();
    let summary = dp_mcmc::frame::read_csv(out.join("summary.csv")).unwrap();
    let r_hat = summary
        .column("r_hat")
        .unwrap()
        .f64()
        .unwrap()
        .get(1)
        .unwrap();
    assert!(
        (diag["x1"]["rhat"].as_f64().unwrap() - r_hat).abs() < 1e-12,
        "{diag}"
    );

    // The same data as parquet.
    let mut df = dp_mcmc::frame::read_csv(&csv).unwrap();
    let pq = dir.join("data.parquet");
    ParquetWriter::new(std::fs::File::create(&pq).unwrap())
        .finish(&mut df)
        .unwrap();
    let out = dir.join("out-parquet");
    let (code, stdout, stderr) = fit(&flags(pq.to_str().unwrap(), out.to_str().unwrap()));
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    check_outputs(&json, &out);

    // a δ of at least 1/n is accepted (it is the user's choice) but warned about, in the
    // record and on stderr
    let out = dir.join("out-large-delta");
    let mut args = flags(pq.to_str().unwrap(), out.to_str().unwrap());
    let at = args.iter().position(|a| *a == "--delta").unwrap();
    args[at + 1] = "0.001";
    let (code, stdout, stderr) = fit(&args);
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert!(delta_warned(&json), "δ = 0.001 ≥ 1/{N}: {json}");
    assert!(stderr.contains("--delta 0.001"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// DP-MCMC runs only when asked for, and its answer is checked like every other: on this
/// table its chains do not converge, so the fit exits 3 with `"converged": false`, writes only
/// the record and the ledger (the budget was spent), and the error says to use the
/// noise-aware method. `--method auto` never takes DP-MCMC for a model `fit` knows: without a
/// covariate's bounds it stops with the noise-aware method's bounds message.
#[test]
fn an_unconverged_answer_is_never_a_result() {
    let dir = temp_dir("unconverged");
    let csv = logistic_csv(&dir, "data.csv", |_, _| {});
    let out = dir.join("o");
    let mut args = flags(csv.to_str().unwrap(), out.to_str().unwrap());
    args.extend(["--method", "dp-mcmc"]);
    let (code, stdout, stderr) = fit(&args);
    assert_eq!(code, 3, "{stderr}");
    let json: Value = serde_json::from_str(stdout.trim()).expect("the record");
    assert_eq!(json["converged"], false);
    assert_eq!(json["method"], "dp-mcmc");
    assert!(json["max_rhat"].as_f64().unwrap() > 1.01, "{json}");
    assert!(
        json["warning"].as_str().unwrap().contains("noise-aware"),
        "{json}"
    );
    let line = stderr.lines().last().unwrap();
    assert!(
        line.starts_with("error: ") && line.contains("not converge"),
        "{stderr}"
    );
    assert!(out.join("fit.json").is_file() && out.join("ledger.json").is_file());
    assert!(!out.join("draws.parquet").exists() && !out.join("summary.csv").exists());
    // the ledger still counts every release of the run
    let parts = json["ledger"].as_array().unwrap();
    let names: Vec<&str> = parts.iter().map(|p| p["part"].as_str().unwrap()).collect();
    assert!(
        names.contains(&"sampling") && names.contains(&"initialisation"),
        "{names:?}"
    );
    // auto with x2's bounds missing: the noise-aware method's message, never DP-MCMC
    let o2 = dir.join("o2");
    let mut args = flags(csv.to_str().unwrap(), o2.to_str().unwrap());
    let i = args.iter().position(|a| *a == "x1=-1:1,x2=-1:1").unwrap();
    args[i] = "x1=-1:1";
    let (code, stdout, stderr) = fit(&args);
    assert_eq!(code, 2, "{stdout}");
    assert!(
        stderr.contains("--bounds") && stderr.contains("x2"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_data_exits_2_naming_the_column_and_row() {
    let dir = temp_dir("bad");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    let nan = logistic_csv(&dir, "nan.csv", |j, f| {
        if j == 7 {
            f[1] = "NaN".into();
        }
    });
    let text = logistic_csv(&dir, "text.csv", |j, f| {
        if j == 3 {
            f[2] = "abc".into();
        }
    });
    let nonbinary = logistic_csv(&dir, "nonbinary.csv", |j, f| {
        if j == 5 {
            f[0] = "2".into();
        }
    });
    let outside = logistic_csv(&dir, "outside.csv", |j, f| {
        if j == 9 {
            f[1] = "1.5".into();
        }
    });
    let good = logistic_csv(&dir, "good.csv", |_, _| {});
    let p = |p: &PathBuf| p.to_str().unwrap().to_string();
    let cases: Vec<(Vec<String>, Vec<&str>)> = vec![
        (vec![p(&nan)], vec!["`x1`", "row 7"]),
        (vec![p(&text)], vec!["`x2`", "row 3"]),
        (
            vec![p(&good), "--features".into(), "x1,nope".into()],
            vec!["`nope`", "x1, x2"],
        ),
        (vec![p(&nonbinary)], vec!["`y`", "row 5"]),
        (vec![p(&outside)], vec!["`x1`", "row 9", "--clamp"]),
        (
            vec![p(&good), "--model".into(), "probit".into()],
            vec!["--model"],
        ),
        (
            vec![p(&good), "--bounds".into(), "x1=1:-1".into()],
            vec!["--bounds"],
        ),
        (
            vec![p(&good), "--epsilon".into(), "-1".into()],
            vec!["--epsilon"],
        ),
        (
            vec![p(&good), "--delta".into(), "1".into()],
            vec!["--delta"],
        ),
        (
            vec![p(&good), "--algorithm".into(), "nuts".into()],
            vec!["--algorithm"],
        ),
        (
            vec![p(&good), "--method".into(), "bayes".into()],
            vec!["--method"],
        ),
        (vec!["no/such.csv".into()], vec!["no/such.csv"]),
        (vec![p(&good).replace(".csv", ".xlsx")], vec!["--data"]),
    ];
    for (extra, want) in cases {
        // The first extra is the data file; later flag pairs replace or extend the defaults.
        let mut args = flags(&extra[0], out);
        for pair in extra[1..].chunks(2) {
            match args.iter().position(|a| *a == pair[0]) {
                Some(i) => args[i + 1] = &pair[1],
                None => args.extend([pair[0].as_str(), pair[1].as_str()]),
            }
        }
        let (code, stdout, stderr) = fit(&args);
        let line = stderr.trim();
        assert_eq!(code, 2, "{args:?}: {stdout} {stderr}");
        assert!(
            stdout.is_empty() && line.lines().count() == 1,
            "{args:?}: {stderr}"
        );
        assert!(line.starts_with("error: "), "{line}");
        for w in want {
            assert!(line.contains(w), "{args:?}: `{w}` not in {line}");
        }
    }
    // With --clamp the out-of-bounds value is clamped and the fit runs, without saying how
    // many values were clamped (the record says only that --clamp was declared).
    let mut args = flags(outside.to_str().unwrap(), out);
    args.push("--clamp");
    let (code, stdout, stderr) = fit(&args);
    assert_eq!(code, 0, "{stderr}");
    let mut json: Value = serde_json::from_str(&stdout).unwrap();
    let declared = json.as_object_mut().unwrap().remove("declared").unwrap();
    assert_eq!(declared["clamp"], Value::Bool(true));
    assert!(
        !json.to_string().contains("clamp") && !stderr.contains("clamp"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--method noise-aware` (the default `auto` with every covariate bounded): the same three
/// files, a converged posterior (the sampler runs until R-hat ≤ 1.01), the method in the JSON,
/// every release in the ledger; without `--seed` the noise is from OS entropy (two runs
/// differ), with it the output says it is not a DP release.
#[test]
fn noise_aware_fit_converges_and_is_secure_by_default() {
    let dir = temp_dir("noise-aware");
    let data = logistic_csv(&dir, "d.csv", |_, _| {});
    let d = data.to_str().unwrap();
    let run = |out: &str, seed: Option<&str>| {
        let mut args = vec![
            "--data",
            d,
            "--model",
            "logistic",
            "--response",
            "y",
            "--features",
            "x1,x2",
            "--bounds",
            "x1=-1:1,x2=-1:1",
            "--epsilon",
            "2",
            "--delta",
            "1e-6",
            "--out",
            out,
        ];
        if let Some(s) = seed {
            args.extend(["--seed", s]);
        }
        let (code, stdout, stderr) = fit(&args);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<Value>(&stdout).unwrap()
    };
    let out1 = dir.join("o1");
    let out2 = dir.join("o2");
    let a = run(out1.to_str().unwrap(), None);
    run(out2.to_str().unwrap(), None);
    assert_eq!(a["method"], "noise-aware");
    assert_eq!(a["rng"], "secure");
    assert!(a["seed"].is_null());
    assert!(a["max_rhat"].as_f64().unwrap() <= 1.01, "{a}");
    assert!(a["min_ess_bulk"].as_f64().unwrap() >= 400.0, "{a}");
    assert!(a["epsilon"].as_f64().unwrap() <= 2.0);
    // two releases a round, at least the four rounds of the schedule the plan starts from
    let parts = a["ledger"].as_array().unwrap().len();
    assert!(parts >= 8 && parts % 2 == 0, "{parts}");
    let summary = |o: &Path| std::fs::read_to_string(o.join("summary.csv")).unwrap();
    let (sa, sb) = (summary(&out1), summary(&out2));
    assert!(sa.starts_with(
        "parameter,mean,sd,q5,q50,q95,mcse_mean,mcse_sd,ess_bulk,ess_tail,r_hat,rng\n"
    ));
    assert_ne!(sa, sb, "two unseeded runs gave the same answer");
    assert!(out1.join("ledger.json").is_file() && out1.join("draws.parquet").is_file());
    let c = run(dir.join("o3").to_str().unwrap(), Some("4"));
    assert_eq!(c["rng"], "seeded");
    assert!(
        c["not_covered"]["rng"]
            .as_str()
            .unwrap()
            .contains("NOT a DP release")
    );
    // the method needs bounds: asked for without them, exit 2 naming the flag
    let (code, _, stderr) = fit(&[
        "--data",
        d,
        "--model",
        "logistic",
        "--response",
        "y",
        "--features",
        "x1,x2",
        "--epsilon",
        "2",
        "--delta",
        "1e-6",
        "--out",
        dir.join("o4").to_str().unwrap(),
        "--method",
        "noise-aware",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--bounds") && stderr.contains("x1"),
        "{stderr}"
    );
    // covariates are named, never guessed
    let (code, _, stderr) = fit(&[
        "--data",
        d,
        "--model",
        "logistic",
        "--response",
        "y",
        "--epsilon",
        "2",
        "--delta",
        "1e-6",
        "--out",
        dir.join("o5").to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--features"), "{stderr}");
    // linear and gaussian-mean with a bounded response: auto takes the noise-aware method,
    // the sufficient statistics, XᵀX in two stages (a Gaussian mean's XᵀX = n is public)
    for (model, features, bounds, parts) in [
        ("linear", Some("x2"), "x1=-1:1,x2=-1:1", 4),
        ("gaussian-mean", None, "x1=-1:1", 2),
    ] {
        let out = dir.join(format!("o-{model}"));
        let mut args = vec![
            "--data",
            d,
            "--model",
            model,
            "--response",
            "x1",
            "--bounds",
            bounds,
            "--epsilon",
            "2",
            "--delta",
            "1e-6",
            "--seed",
            "3",
            "--out",
            out.to_str().unwrap(),
        ];
        if let Some(f) = features {
            args.extend(["--features", f]);
        }
        let (code, stdout, stderr) = fit(&args);
        assert_eq!(code, 0, "{model}: {stderr}");
        let v: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(v["method"], "noise-aware", "{model}");
        assert!(v["max_rhat"].as_f64().unwrap() <= 1.01, "{model}: {v}");
        let ledger = v["ledger"].as_array().unwrap();
        assert_eq!(ledger.len(), parts, "{model}");
        assert!(
            ledger.iter().all(|p| p["part"]
                .as_str()
                .unwrap()
                .starts_with("sufficient statistics")),
            "{v}"
        );
    }
}

/// `--one-hot` declares indicators of one categorical variable: a fit with it runs the
/// noise-aware method, and a row with two of them set is an exit-2 error naming the row.
#[test]
fn one_hot_groups_are_declared_and_checked() {
    let dir = temp_dir("one-hot");
    let mut text = String::from("y,a,b\n");
    for j in 0..3000 {
        let (a, b) = match j % 3 {
            0 => (1, 0),
            1 => (0, 1),
            _ => (0, 0),
        };
        text.push_str(&format!("{},{a},{b}\n", u8::from(j % 5 < 2 + a)));
    }
    let good = dir.join("good.csv");
    std::fs::write(&good, &text).unwrap();
    let out = dir.join("o");
    let args = |data: &Path| {
        vec![
            "--data".to_string(),
            data.display().to_string(),
            "--model".into(),
            "logistic".into(),
            "--response".into(),
            "y".into(),
            "--features".into(),
            "a,b".into(),
            "--bounds".into(),
            "a=0:1,b=0:1".into(),
            "--one-hot".into(),
            "a,b".into(),
            "--epsilon".into(),
            "4".into(),
            "--delta".into(),
            "1e-6".into(),
            "--seed".into(),
            "1".into(),
            "--out".into(),
            out.display().to_string(),
            "--overwrite".into(),
        ]
    };
    let run = |data: &Path| {
        let a = args(data);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        fit(&refs)
    };
    let (code, stdout, stderr) = run(&good);
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["method"], "noise-aware");
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, text.replacen("\n1,1,0\n", "\n1,1,1\n", 1)).unwrap();
    let (code, _, stderr) = run(&bad);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("one-hot") && stderr.contains("row"),
        "{stderr}"
    );
}

/// `--binary` declares indicators (0 or the declared upper bound): a linear fit with it runs,
/// and a value between is an exit-2 error naming the column and the row; a one-hot member is
/// held to the same.
#[test]
fn binary_columns_are_declared_and_checked() {
    let dir = temp_dir("binary");
    let mut text = String::from("y,s,t,u\n");
    for j in 0..600 {
        let s = u8::from(j % 4 == 0);
        let (t, u) = [(1, 0), (0, 1), (0, 0)][j % 3];
        let y = 3.0 + f64::from(s) - 0.5 * f64::from(t) + 0.01 * (j % 50) as f64;
        text.push_str(&format!("{y},{s},{t},{u}\n"));
    }
    let good = dir.join("good.csv");
    std::fs::write(&good, &text).unwrap();
    let out = dir.join("o");
    let run = |data: &Path| {
        let data = data.display().to_string();
        let out = out.display().to_string();
        fit(&[
            "--data",
            &data,
            "--model",
            "linear",
            "--response",
            "y",
            "--bounds",
            "y=0:10,s=0:1,t=0:1,u=0:1",
            "--binary",
            "s",
            "--one-hot",
            "t,u",
            "--epsilon",
            "8",
            "--delta",
            "1e-6",
            "--seed",
            "1",
            "--out",
            &out,
            "--overwrite",
        ])
    };
    let (code, stdout, stderr) = run(&good);
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["method"], "noise-aware");
    // the declarations are in the record (stdout and fit.json): the covariates from the
    // bounds, in their order, the bounds as given, the indicators and the group
    let declared = &json["declared"];
    assert_eq!(declared["response"], "y");
    assert_eq!(declared["features"], serde_json::json!(["s", "t", "u"]));
    assert_eq!(
        declared["bounds"][0],
        serde_json::json!({"column": "y", "lo": 0.0, "hi": 10.0})
    );
    assert_eq!(declared["binary"], serde_json::json!(["s"]));
    assert_eq!(declared["one_hot"], serde_json::json!([["t", "u"]]));
    assert_eq!(
        (&declared["clamp"], &declared["prior_sd"]),
        (&Value::Bool(false), &Value::Null)
    );
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("fit.json")).unwrap()).unwrap();
    assert_eq!(&record["declared"], declared);
    for (what, from, to) in [
        ("binary", ",1,1,0\n", ",0.5,1,0\n"),
        ("one-hot", ",0,0,1\n", ",0,0,0.5\n"),
    ] {
        let bad = dir.join(format!("bad-{what}.csv"));
        std::fs::write(&bad, text.replacen(from, to, 1)).unwrap();
        let (code, _, stderr) = run(&bad);
        assert_eq!(code, 2, "{what}: {stderr}");
        assert!(
            stderr.contains(what) && stderr.contains("row") && stderr.contains("0.5"),
            "{what}: {stderr}"
        );
    }
}

/// `--scale` maps each covariate onto [0, 1] by its declared bounds: without declared bounds
/// on every covariate it is an error naming `--bounds` and the covariate; with them the fit
/// runs and writes the usual outputs.
#[test]
fn scale_needs_declared_bounds_on_every_covariate() {
    let dir = temp_dir("scale");
    let data = logistic_csv(&dir, "d.csv", |_, _| {});
    let out = dir.join("out");
    let (d, o) = (data.to_str().unwrap(), out.to_str().unwrap());
    let mut args = flags(d, o);
    let i = args.iter().position(|a| *a == "x1=-1:1,x2=-1:1").unwrap();
    args[i] = "x1=-1:1";
    args.push("--scale");
    let (code, _, stderr) = fit(&args);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--bounds") && stderr.contains("x2"),
        "{stderr}"
    );
    let mut args = flags(d, o);
    args.push("--scale");
    let (code, stdout, stderr) = fit(&args);
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    check_outputs(&json, &out);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The provenance of a fit is in every file it writes (a folder is what gets published): a
/// seeded run's `ledger.json`, `fit.json`, `summary.csv` and `draws.parquet` all say `seeded`
/// and that it is not a DP release; a folder that holds a fit is not overwritten silently.
#[test]
fn every_output_file_says_whether_the_run_is_a_dp_release() {
    let dir = temp_dir("provenance");
    let data = logistic_csv(&dir, "d.csv", |_, _| {});
    let out = dir.join("o");
    let args = |overwrite: bool, seed: Option<&'static str>| {
        let mut a: Vec<String> = [
            "--data",
            data.to_str().unwrap(),
            "--model",
            "logistic",
            "--response",
            "y",
            "--bounds",
            "x1=-1:1,x2=-1:1",
            "--epsilon",
            "2",
            "--delta",
            "1e-6",
            "--out",
            out.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec();
        if let Some(s) = seed {
            a.extend(["--seed".to_string(), s.to_string()]);
        }
        if overwrite {
            a.push("--overwrite".into());
        }
        a
    };
    let run = |a: Vec<String>| {
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        fit(&refs)
    };
    // --features defaults to the columns --bounds names besides the response
    let (code, stdout, stderr) = run(args(false, Some("5")));
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        json["parameters"],
        serde_json::json!(["intercept", "x1", "x2"])
    );
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    for file in ["ledger.json", "fit.json"] {
        let v: Value = serde_json::from_str(&read(file)).unwrap();
        assert_eq!(v["rng"], "seeded", "{file}");
        assert_eq!(v["seed"], 5, "{file}");
        assert!(
            v["not_covered"]["rng"]
                .as_str()
                .unwrap()
                .contains("NOT a DP release"),
            "{file}"
        );
    }
    let summary = read("summary.csv");
    assert!(
        summary.lines().skip(1).all(|l| l.ends_with(",seeded")),
        "{summary}"
    );
    let mut reader = ParquetReader::new(std::fs::File::open(out.join("draws.parquet")).unwrap());
    let meta = reader.get_metadata().unwrap();
    let kv: Vec<(String, String)> = meta
        .key_value_metadata()
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|k| (k.key, k.value.unwrap_or_default()))
        .collect();
    assert!(
        kv.contains(&("dp_mcmc.rng".into(), "seeded".into())),
        "{kv:?}"
    );
    assert!(
        kv.iter()
            .any(|(k, v)| k == "dp_mcmc.not_covered" && v.contains("NOT a DP release"))
    );
    // the same folder again: refused, naming the flag that allows it; then replaced
    let (code, _, stderr) = run(args(false, None));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--out") && stderr.contains("--overwrite"),
        "{stderr}"
    );
    let (code, _, stderr) = run(args(true, None));
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&read("ledger.json")).unwrap();
    assert_eq!(v["rng"], "secure");
    assert!(v["seed"].is_null() && v["not_covered"].get("rng").is_none());
    assert!(
        read("summary.csv")
            .lines()
            .skip(1)
            .all(|l| l.ends_with(",secure"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Public inputs are checked before any data are read, with messages that say what to
/// change: a fractional Poisson cap (which would clamp a count to a non-count), bounds
/// outside the supported range (a width that underflows or overflows), and a header that
/// names a column twice.
#[test]
fn public_inputs_are_checked_before_the_data() {
    let dir = temp_dir("public");
    let out = dir.join("o");
    let base = |data: &str, model: &str, bounds: &str| {
        let mut a: Vec<String> = [
            "--data",
            data,
            "--model",
            model,
            "--response",
            "y",
            "--bounds",
            bounds,
            "--clamp",
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
            "--out",
        ]
        .map(String::from)
        .to_vec();
        a.push(out.display().to_string());
        a
    };
    let run = |a: Vec<String>| {
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        fit(&refs)
    };
    // a missing data file: these errors come from the flags alone
    for (model, bounds, want) in [
        ("poisson", "y=0:5.5,x=0:1", "whole number"),
        ("logistic", "x=0:1e-300", "`x`"),
        ("logistic", "x=-1e308:1e308", "`x`"),
    ] {
        let (code, stdout, stderr) = run(base("no/such.csv", model, bounds));
        assert_eq!(code, 2, "{bounds}: {stdout}");
        assert!(
            stderr.contains("--bounds") && stderr.contains(want),
            "{bounds}: {stderr}"
        );
    }
    let dup = dir.join("dup.csv");
    std::fs::write(&dup, "y,x,x\n1,0.5,0.2\n0,0.1,0.9\n").unwrap();
    let (code, _, stderr) = run(base(dup.to_str().unwrap(), "logistic", "x=0:1"));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("`x`") && stderr.contains("more than once"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The default prior of a logistic fit is the Cauchy of scale 2.5 in the declared bounds'
/// coordinates (`prior.df` 1); `--prior-normal` gives N(0, 2.5²) there (no `df`) and is
/// declared; with `--prior-sd` as well it is refused (exit 2) naming both flags.
#[test]
fn prior_family_is_reported_and_chosen() {
    let dir = temp_dir("prior-family");
    let csv = logistic_csv(&dir, "data.csv", |_, _| {});
    let data = csv.display().to_string();
    let out = dir.join("o").display().to_string();
    let run = |extra: &[&str]| {
        let mut args = flags(&data, &out);
        args.extend_from_slice(&["--overwrite"]);
        args.extend_from_slice(extra);
        fit(&args)
    };
    let (code, stdout, stderr) = run(&[]);
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["prior"]["scale"], "autoscaled");
    assert_eq!(json["prior"]["df"], 1.0);
    assert!(
        json["prior"]["description"]
            .as_str()
            .unwrap()
            .starts_with("Cauchy(0, 2.5)")
    );
    assert_eq!(json["declared"]["prior_normal"], false);
    let (code, stdout, stderr) = run(&["--prior-normal"]);
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["prior"]["scale"], "autoscaled-normal");
    assert!(json["prior"].get("df").is_none());
    assert_eq!(json["prior"]["sd"], 2.5);
    assert_eq!(json["declared"]["prior_normal"], true);
    let (code, _, stderr) = run(&["--prior-normal", "--prior-sd", "3"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--prior-sd") && stderr.contains("--prior-normal"),
        "{stderr}"
    );
    // DP-MCMC's prior is set in the model's units only
    let (code, _, stderr) = run(&["--prior-normal", "--method", "dp-mcmc"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("give --prior-sd"), "{stderr}");
}
