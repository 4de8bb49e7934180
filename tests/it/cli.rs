//! The command line under bad input: every subcommand and flag fed odd values
//! (NaN, ±∞, negative, huge, non-numeric, empty), missing files and bad CSVs. Bad input exits
//! with status 2 and one `error: …` line on stderr naming the flag; valid input exits 0 with
//! one JSON object on stdout; nothing exits 101 or prints a backtrace. Runs the built binary
//! (a few hundred short processes, four at a time; `sample` only with tiny iteration counts,
//! `reproduce` only with invalid values; `tests/it/experiments/shard.rs` runs it).

use crate::common::{odd_csvs, temp_dir, temp_file};

/// Runs the built `dp-mcmc` with `args`: (exit status, stdout, stderr).
fn dp_mcmc(args: &[String]) -> (i32, String, String) {
    crate::common::run_cli(args)
}

/// What a command line must do.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Exit 0 with one JSON object on stdout.
    Json,
    /// Exit 2 with one `error:` line on stderr that contains this text (the flag).
    Fails(&'static str),
    /// Either of the above (inputs at the edge of the domain, e.g. δ = 1e-300).
    Either,
    /// Exit 0 with text on stdout (`--help`).
    Help,
}

fn split(cmd: &str) -> Vec<String> {
    cmd.split_whitespace().map(str::to_string).collect()
}

/// Runs every case (a few processes at a time) and reports all violations at once.
fn check_cli(cases: Vec<(Vec<String>, Expect)>) {
    let problems = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((args, expect)) = cases.get(i) else {
                        break;
                    };
                    let (code, out, err) = dp_mcmc(args);
                    let line = format!("dp-mcmc {}", args.join(" "));
                    let json_ok = code == 0
                        && err.trim().is_empty()
                        && serde_json::from_str::<serde_json::Value>(out.trim())
                            .is_ok_and(|v| v.is_object());
                    let err_ok = |flag: &str| {
                        code == 2
                            && out.is_empty()
                            && err.lines().count() == 1
                            && err.starts_with("error: ")
                            && err.contains(flag)
                            && !err.contains("panicked")
                            && !err.contains("internal error")
                            && !err.contains("backtrace")
                    };
                    let ok = match expect {
                        Expect::Json => json_ok,
                        Expect::Fails(flag) => err_ok(flag),
                        Expect::Either => json_ok || err_ok(""),
                        Expect::Help => code == 0 && !out.trim().is_empty(),
                    };
                    if !ok {
                        problems.lock().unwrap().push(format!(
                            "{line}\n  expected {expect:?}, got status {code}\n  stdout: {}\n  stderr: {}",
                            out.trim(),
                            err.trim()
                        ));
                    }
                }
            });
        }
    });
    let problems = problems.into_inner().unwrap();
    eprintln!(
        "cli: {} command lines, {} problems",
        cases.len(),
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Odd values of a numeric flag, as typed on a command line.
const ODD_TEXT: [&str; 10] = [
    "NaN",
    "inf",
    "-inf",
    "-1",
    "0",
    "1e-320",
    "1e308",
    "abc",
    "",
    "18446744073709551616",
];

#[test]
fn cli_bad_values_exit_2_naming_the_flag() {
    use Expect::{Either, Fails, Json};
    let dir = temp_dir("cli");
    let csv = odd_csvs(&dir);
    let mut cases: Vec<(Vec<String>, Expect)> = Vec::new();
    fn add(cases: &mut Vec<(Vec<String>, Expect)>, cmd: &str, e: Expect) {
        cases.push((split(cmd), e));
    }

    // Global.
    add(&mut cases, "", Fails("subcommand"));
    add(&mut cases, "frobnicate", Fails("frobnicate"));
    add(&mut cases, "--help", Expect::Help);
    add(&mut cases, "sample --help", Expect::Help);
    add(&mut cases, "iterations --nope 1", Fails("--nope"));

    // iterations
    let it = "iterations --algorithm dp-penalty --tau 0.1 --n 1000";
    add(&mut cases, &format!("{it} --epsilon 1"), Json);
    add(
        &mut cases,
        &format!("{it} --epsilon 1 --accountant zcdp --delta 1e-6"),
        Json,
    );
    add(
        &mut cases,
        &format!("{it} --epsilon 1e308"),
        Fails("--epsilon"),
    );
    add(&mut cases, it, Fails("--epsilon"));
    add(
        &mut cases,
        &format!("{it} --epsilon 1 --accountant rdp"),
        Fails("--accountant"),
    );
    add(
        &mut cases,
        &format!("{it} --epsilon 1 --accountant bogus"),
        Fails("--accountant"),
    );
    add(
        &mut cases,
        "iterations --algorithm bogus --epsilon 1 --n 10",
        Fails("--algorithm"),
    );
    add(
        &mut cases,
        "iterations --algorithm dp-penalty --epsilon 1 --n 1000",
        Fails("--tau"),
    );
    for v in ODD_TEXT {
        let either = |good: bool| if good { Either } else { Fails("--epsilon") };
        let e = either(v == "1e-320" || v == "1e308");
        let cmd = |flag: &str| {
            let mut a = split(it);
            a.retain(|x| !(flag == "--tau" && (x == "--tau" || x == "0.1")));
            a.retain(|x| !(flag == "--n" && (x == "--n" || x == "1000")));
            if flag != "--epsilon" {
                a.extend(split("--epsilon 1"));
            }
            a.push(flag.to_string());
            a.push(v.to_string());
            a
        };
        cases.push((cmd("--epsilon"), if v == "1e-320" { Either } else { e }));
        cases.push((
            cmd("--delta"),
            if v == "1e-320" {
                Either
            } else {
                Fails("--delta")
            },
        ));
        // A huge τ allows more than 10^15 iterations: refused, naming epsilon and tau.
        cases.push((
            cmd("--tau"),
            if v == "1e-320" { Either } else { Fails("tau") },
        ));
        cases.push((cmd("--n"), Fails("--n")));
    }
    let hmc = "iterations --algorithm dp-hmc --epsilon 1 --n 1000 --tau-l 0.1 --tau-g 0.4";
    add(&mut cases, &format!("{hmc} --leapfrog-steps 10"), Json);
    add(
        &mut cases,
        &format!("{hmc} --leapfrog-steps 10 --gradient reuse --accountant zcdp"),
        Json,
    );
    add(&mut cases, hmc, Fails("--leapfrog-steps"));
    add(
        &mut cases,
        &format!("{hmc} --leapfrog-steps 0"),
        Fails("--leapfrog-steps"),
    );
    add(
        &mut cases,
        &format!("{hmc} --leapfrog-steps 4294967296"),
        Fails("--leapfrog-steps"),
    );
    add(
        &mut cases,
        &format!("{hmc} --leapfrog-steps 10 --gradient bogus"),
        Fails("--gradient"),
    );
    add(
        &mut cases,
        &format!("{hmc} --leapfrog-steps 10 --tau-g NaN"),
        Fails("--tau-g"),
    );
    add(
        &mut cases,
        &format!("{hmc} --leapfrog-steps 10 --tau-l -1"),
        Fails("--tau-l"),
    );
    let mb = "iterations --algorithm minibatch-penalty --epsilon 1 --n 1000 --tau 0.7";
    add(
        &mut cases,
        &format!("{mb} --batch-size 100 --accountant rdp"),
        Json,
    );
    add(
        &mut cases,
        &format!("{mb} --batch-size 100 --accountant rdp --thesis-compatible"),
        Json,
    );
    add(&mut cases, mb, Fails("--batch-size"));
    add(
        &mut cases,
        &format!("{mb} --batch-size 0"),
        Fails("--batch-size"),
    );
    add(
        &mut cases,
        &format!("{mb} --batch-size 1001"),
        Fails("--batch-size"),
    );
    add(
        &mut cases,
        &format!("{mb} --batch-size 100 --accountant zcdp"),
        Fails("--accountant"),
    );
    add(
        &mut cases,
        &format!("{mb} --batch-size 100 --accountant rdp --epsilon 1e308"),
        Fails("--epsilon"),
    );
    let bk = "iterations --algorithm dp-barker --epsilon 1 --n 1000";
    add(&mut cases, &format!("{bk} --batch-size 100"), Json);
    add(
        &mut cases,
        &format!("{bk} --batch-size 5"),
        Fails("--batch-size"),
    );
    add(
        &mut cases,
        &format!("{bk} --batch-size 100 --epsilon 1e308"),
        Fails("--epsilon"),
    );
    add(
        &mut cases,
        &format!("{bk} --batch-size 100 --n 18446744073709551615"),
        Either,
    );
    add(
        &mut cases,
        &format!("{bk} --batch-size 100 --accountant pld"),
        Json,
    );
    add(
        &mut cases,
        &format!("{bk} --batch-size 100 --accountant rdp-exact"),
        Json,
    );
    add(
        &mut cases,
        &format!("{bk} --batch-size 5 --accountant rdp-exact"),
        Fails("--batch-size"),
    );
    add(
        &mut cases,
        &format!("{mb} --batch-size 100 --accountant rdp-exact"),
        Fails("--accountant"),
    );
    add(
        &mut cases,
        "epsilon --accountant rdp-exact --noise-multiplier 1 --steps 10 --delta 1e-5",
        Fails("--accountant"),
    );

    // delta / epsilon
    let d = "delta --accountant pld --noise-multiplier 1 --steps 10 --epsilon 1";
    add(&mut cases, d, Json);
    add(
        &mut cases,
        "epsilon --accountant rdp --noise-multiplier 1 --steps 10 --delta 1e-5",
        Json,
    );
    add(
        &mut cases,
        "epsilon --accountant zcdp --noise-multiplier 1 --steps 10 --delta 1e-5",
        Json,
    );
    add(
        &mut cases,
        "epsilon --accountant rdp --noise-multiplier 2 --steps 100 --delta 1e-5 \
         --sampling without-replacement --q 0.01 --orders dp-accounting",
        Json,
    );
    add(
        &mut cases,
        "delta --accountant fourier --noise-multiplier 2 --steps 100 --epsilon 1 \
         --sampling poisson --q 0.01 --nx 10000",
        Json,
    );
    for v in ODD_TEXT {
        let edge = matches!(v, "1e-320" | "1e308" | "18446744073709551616");
        let with = |base: &str, flag: &str| {
            let mut a: Vec<String> = Vec::new();
            let parts = split(base);
            let mut k = 0;
            while k < parts.len() {
                if parts[k] == flag {
                    k += 2;
                    continue;
                }
                a.push(parts[k].clone());
                k += 1;
            }
            a.push(flag.to_string());
            a.push(v.to_string());
            a
        };
        let fail_or_edge = |flag: &'static str| if edge { Either } else { Fails(flag) };
        cases.push((
            with(d, "--noise-multiplier"),
            fail_or_edge("--noise-multiplier"),
        ));
        cases.push((with(d, "--steps"), Fails("--steps")));
        cases.push((
            with(d, "--epsilon"),
            if edge || v == "0" || v == "inf" {
                Either
            } else {
                Fails("--epsilon")
            },
        ));
        let e = "epsilon --accountant pld --noise-multiplier 1 --steps 10 --delta 1e-5";
        cases.push((
            with(e, "--delta"),
            if v == "1e-320" {
                Either
            } else {
                Fails("--delta")
            },
        ));
        let poi = "delta --accountant rdp --noise-multiplier 1 --steps 10 --epsilon 1 \
                   --sampling poisson --q 0.1";
        cases.push((
            with(poi, "--q"),
            if v == "1e-320" { Either } else { Fails("--q") },
        ));
        let fa = "delta --accountant fourier --noise-multiplier 1 --steps 10 --epsilon 1 \
                  --sampling poisson --q 0.1 --nx 2000";
        cases.push((with(fa, "--nx"), Fails("--nx")));
        cases.push((with(fa, "--window"), fail_or_edge("--window")));
    }
    add(
        &mut cases,
        "delta --accountant fourier --noise-multiplier 1 --steps 1 --epsilon 1",
        Fails("--accountant"),
    );
    add(&mut cases, &format!("{d} --q 0.1"), Fails("--q"));
    add(
        &mut cases,
        "delta --accountant rdp --noise-multiplier 1 --steps 1 --epsilon 1 --sampling poisson",
        Fails("--q"),
    );
    add(
        &mut cases,
        "delta --accountant rdp --noise-multiplier 1 --steps 1 --epsilon 1 --sampling poisson \
         --q 0.1 --relation substitute",
        Fails("--relation"),
    );
    add(
        &mut cases,
        "delta --accountant zcdp --noise-multiplier 1 --steps 1 --epsilon 1 --sampling poisson \
         --q 0.1",
        Fails("--accountant"),
    );
    add(
        &mut cases,
        "delta --accountant fourier --noise-multiplier 1 --steps 1 --epsilon 1 --sampling poisson \
         --q 0.1 --nx 3",
        Fails("--nx"),
    );
    add(
        &mut cases,
        "delta --accountant fourier --noise-multiplier 1 --steps 1 --epsilon 1 --sampling poisson \
         --q 1",
        Fails("--q"),
    );

    // diagnose / mmd: missing files, bad CSVs.
    let path = |name: &str| {
        csv.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, p)| p.display().to_string())
            .unwrap()
    };
    add(
        &mut cases,
        &format!("diagnose --draws {}", path("draws-ok")),
        Json,
    );
    for (name, _) in &csv {
        if *name != "draws-ok" {
            let e = match *name {
                "draws-huge" | "draws-neg" | "draws-dup" => Either,
                _ => Fails("--draws"),
            };
            cases.push((split(&format!("diagnose --draws {}", path(name))), e));
        }
    }
    add(&mut cases, "diagnose", Fails("--draws"));
    let xy = temp_file(&dir, "xy.csv", b"a,b\n0.1,0.2\n0.3,0.1\n-0.2,0.5\n");
    let x1 = temp_file(&dir, "x1.csv", b"a\n0.1\n0.3\n");
    let xy = xy.display();
    add(&mut cases, &format!("mmd --x {xy} --y {xy}"), Json);
    add(
        &mut cases,
        &format!("mmd --x {xy} --y {xy} --bandwidth 0.5 --seed 3"),
        Json,
    );
    add(
        &mut cases,
        &format!("mmd --x {xy} --y {}", x1.display()),
        Fails("--y"),
    );
    for v in ODD_TEXT {
        let e = if matches!(v, "1e-320" | "1e308" | "18446744073709551616") {
            Either
        } else {
            Fails("--bandwidth")
        };
        cases.push((
            vec![
                "mmd".into(),
                "--x".into(),
                xy.to_string(),
                "--y".into(),
                xy.to_string(),
                "--bandwidth".into(),
                v.into(),
            ],
            e,
        ));
    }
    for (name, _) in &csv {
        let e = match *name {
            "one-row" | "draws-ok" | "draws-neg" | "draws-dup" | "unicode-header"
            | "dup-header" | "draws-huge" | "draws-text-chain" => Either,
            _ => Fails("--x"),
        };
        cases.push((split(&format!("mmd --x {} --y {xy}", path(name))), e));
    }

    // sample: invalid values, and tiny valid runs.
    let s = "sample --experiment easy-2d --algorithm";
    add(
        &mut cases,
        &format!("{s} rwmh --iterations 4 --chains 2"),
        Json,
    );
    add(
        &mut cases,
        &format!("{s} rwmh --iterations 9 --chains 2 --thin 4"),
        Json,
    );
    add(
        &mut cases,
        &format!("{s} dp-penalty --iterations 3 --chains 1"),
        Json,
    );
    add(
        &mut cases,
        &format!("{s} dp-barker --iterations 3 --chains 1 --batch-size 500"),
        Json,
    );
    add(
        &mut cases,
        &format!("{s} dp-barker --iterations 3 --chains 1 --batch-size 500 --accountant rdp-exact"),
        Json,
    );
    add(
        &mut cases,
        &format!("{s} dp-barker --iterations 3 --chains 1 --batch-size 500 --accountant pld"),
        Json,
    );
    add(
        &mut cases,
        &format!("{s} dp-barker --iterations 3 --chains 1 --batch-size 500 --accountant zcdp"),
        Fails("--accountant"),
    );
    add(
        &mut cases,
        &format!("{s} dp-penalty --epsilon 4 --chains 0"),
        Fails("--chains"),
    );
    // --auto derives the tuning itself: tuning flags, non-DP algorithms, a missing ε are errors
    for (flags, flag) in [
        ("dp-penalty --epsilon 1 --auto --tau 0.1", "--tau"),
        (
            "dp-penalty --epsilon 1 --auto --iterations 5",
            "--iterations",
        ),
        ("rwmh --epsilon 1 --auto", "--algorithm"),
        ("dp-penalty --auto", "--epsilon"),
        ("dp-penalty --epsilon -1 --auto", "--epsilon"),
        ("dp-penalty --epsilon 1 --auto --chains 0", "--chains"),
    ] {
        add(&mut cases, &format!("{s} {flags}"), Fails(flag));
    }
    add(
        &mut cases,
        &format!("{s} dp-hmc --epsilon 4 --chains 0"),
        Fails("--chains"),
    );
    add(
        &mut cases,
        &format!("{s} minibatch-penalty --epsilon 4 --chains 0"),
        Fails("--chains"),
    );
    add(
        &mut cases,
        &format!("{s} dp-barker --epsilon 4 --chains 0"),
        Fails("--chains"),
    );
    add(
        &mut cases,
        &format!("{s} rwmh --iterations 4 --chains 0"),
        Fails("--chains"),
    );
    add(
        &mut cases,
        &format!("{s} dp-penalty --epsilon 4 --chains 18446744073709551615"),
        Fails("--chains"),
    );
    add(
        &mut cases,
        &format!("{s} rwmh --iterations 18446744073709551615"),
        Fails("--iterations"),
    );
    add(
        &mut cases,
        &format!("{s} dp-penalty --iterations 18446744073709551615"),
        Fails("--iterations"),
    );
    add(
        &mut cases,
        &format!("{s} rwmh --iterations 1000000000"),
        Fails("--thin"),
    );
    add(
        &mut cases,
        &format!("{s} rwmh --iterations 4 --thin 0"),
        Fails("--thin"),
    );
    add(&mut cases, &format!("{s} dp-penalty"), Fails("--epsilon"));
    add(
        &mut cases,
        &format!("{s} dp-penalty --epsilon 1e308"),
        Fails("--epsilon"),
    );
    add(
        &mut cases,
        &format!("{s} dp-penalty --epsilon 4 --delta 0"),
        Fails("--delta"),
    );
    add(
        &mut cases,
        &format!("{s} bogus --iterations 3"),
        Fails("--algorithm"),
    );
    add(
        &mut cases,
        "sample --experiment bogus --algorithm rwmh --iterations 3",
        Fails("--experiment"),
    );
    add(
        &mut cases,
        &format!("{s} circle --iterations 3"),
        Fails("--algorithm"),
    );
    add(
        &mut cases,
        &format!("{s} rwmh --iterations 3 --threads 0"),
        Fails("--threads"),
    );
    add(
        &mut cases,
        &format!("{s} rwmh --iterations 3 --out draws.parquet"),
        Fails("--out"),
    );
    add(
        &mut cases,
        &format!("{s} dp-penalty --iterations 3 --accountant bogus"),
        Fails("--accountant"),
    );
    add(
        &mut cases,
        &format!("{s} dp-hmc --iterations 3 --gradient bogus"),
        Fails("--gradient"),
    );
    add(
        &mut cases,
        &format!("{s} minibatch-penalty --iterations 3 --batch-size 0"),
        Fails("--batch-size"),
    );
    add(
        &mut cases,
        &format!("{s} dp-barker --epsilon 4 --batch-size 10"),
        Fails("--batch-size"),
    );
    for v in ODD_TEXT {
        for (flag, alg) in [
            ("--epsilon", "dp-penalty --chains 1"),
            ("--delta", "dp-penalty --epsilon 1e-300 --chains 1"),
            ("--tau", "dp-penalty --iterations 2 --chains 1"),
            ("--clip-bound", "dp-penalty --iterations 2 --chains 1"),
            ("--proposal-sd", "rwmh --iterations 2 --chains 1"),
            ("--chains", "rwmh --iterations 2"),
            ("--iterations", "rwmh --chains 1"),
            ("--thin", "rwmh --iterations 2 --chains 1"),
        ] {
            // Valid values at the edge: tiny or huge scales (short runs), zero iterations,
            // tiny budgets (refused as too small, with the budget in the message).
            let huge = matches!(v, "1e308" | "18446744073709551616");
            let valid_edge = match flag {
                "--tau" | "--clip-bound" | "--proposal-sd" => v == "1e-320" || huge,
                "--iterations" => v == "0",
                "--epsilon" | "--delta" => v == "1e-320",
                _ => false,
            };
            let e = if valid_edge { Either } else { Fails(flag) };
            let mut args = split(&format!("{s} {alg}"));
            args.push(flag.to_string());
            args.push(v.to_string());
            cases.push((args, e));
        }
    }

    // reproduce: invalid values only (a valid run is minutes of work).
    add(&mut cases, "reproduce bogus", Fails("bogus"));
    for v in ["NaN", "-1", "inf", "1e300", "abc"] {
        cases.push((
            split(&format!("reproduce all --max-time {v}")),
            Fails("--max-time"),
        ));
    }
    add(&mut cases, "reproduce all --threads 0", Fails("--threads"));
    add(&mut cases, "reproduce all --seed -1", Fails("--seed"));
    for v in ["0/2", "3/2", "1/0", "x", "1/2/3", "-1/2", "1.5/2"] {
        cases.push((
            split(&format!("reproduce all --shard {v}")),
            Fails("--shard"),
        ));
    }
    add(
        &mut cases,
        "reproduce accounting --shard 1/2",
        Fails("--shard"),
    );
    add(&mut cases, "reproduce merge", Fails("SHARD_DIRS"));
    add(&mut cases, "reproduce all /tmp", Fails("SHARD_DIRS"));
    add(
        &mut cases,
        "reproduce merge --shard 1/2 /tmp",
        Fails("--shard"),
    );
    add(
        &mut cases,
        "reproduce merge --out /tmp /nonexistent/shard",
        Fails("shard.json"),
    );

    check_cli(cases);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `sample --auto`: the same keys as `sample`, plus `ledger` (the parts with their ε shares,
/// which add up to `epsilon`) and `auto` (every derived setting).
#[test]
fn sample_auto_prints_the_ledger() {
    let (code, stdout, stderr) = dp_mcmc(&split(
        "sample --experiment easy-2d --algorithm dp-penalty --epsilon 2 --chains 1 --seed 3 --auto",
    ));
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    for key in [
        "iterations",
        "acceptance",
        "mmd",
        "epsilon",
        "delta",
        "ledger",
        "auto",
    ] {
        assert!(v.get(key).is_some(), "no `{key}` in {v}");
    }
    let parts = v["ledger"].as_array().unwrap();
    let names: Vec<&str> = parts.iter().map(|p| p["part"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["initialisation", "clip bound", "warm-up", "sampling"]
    );
    let share: f64 = parts
        .iter()
        .map(|p| p["epsilon_share"].as_f64().unwrap())
        .sum();
    assert!((share - 2.0).abs() < 1e-9, "{share}");
    assert!(parts.iter().all(|p| p["releases"].as_u64().unwrap() > 0));
    assert!(v["start"].as_str().unwrap().starts_with("auto"));
}

/// `sample --auto` with the field's samplers (DP-SGLD, DP-SGNHT, DP-Fast MH): the same JSON keys as the
/// DP penalty's, a ledger whose shares add up to the ε reported, within the budget (a capped run
/// spends less), and one draw per iteration for every chain.
#[test]
fn sample_auto_runs_the_stochastic_gradient_samplers() {
    let run = |alg: &str| -> serde_json::Value {
        let (code, stdout, stderr) = dp_mcmc(&split(&format!(
            "sample --experiment easy-2d --algorithm {alg} --epsilon 4 --chains 4 --seed 3 --auto"
        )));
        assert_eq!(code, 0, "{alg}: {stderr}");
        serde_json::from_str(stdout.trim()).unwrap()
    };
    let keys = |v: &serde_json::Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    let reference = keys(&run("dp-penalty"));
    for alg in ["dp-sgld", "dp-sgnht", "dp-fast-mh"] {
        let v = run(alg);
        assert_eq!(keys(&v), reference, "{alg}: JSON keys");
        let eps = v["epsilon"].as_f64().unwrap();
        assert!(eps > 0.0 && eps <= 4.0, "{alg}: ε = {eps}");
        let parts = v["ledger"].as_array().unwrap();
        let share: f64 = parts
            .iter()
            .map(|p| p["epsilon_share"].as_f64().unwrap())
            .sum();
        assert!(
            (share - eps).abs() < 1e-9,
            "{alg}: shares {share} vs ε {eps}"
        );
        let iterations = v["iterations"].as_array().unwrap();
        assert_eq!(iterations.len(), 4, "{alg}");
        assert!(iterations.iter().all(|k| k.as_u64().unwrap() > 0), "{alg}");
        assert_eq!(v["algorithm"], alg);
    }
}

/// The help texts that list samplers are generated from the registry: `sample --help` names
/// every key, `fit --help` and `sample --help` every sampler an `auto` run can derive, and the
/// `--auto` refusal of a hand-tuned variant lists the same keys.
#[test]
fn help_texts_list_the_registry() {
    use dp_mcmc::samplers::SamplerKind;
    let help = |cmd: &str| {
        let (status, out, _) = dp_mcmc(&split(cmd));
        assert_eq!(status, 0, "{cmd}");
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let (sample, fit) = (help("sample --help"), help("fit --help"));
    assert!(sample.contains(&SamplerKind::keys(SamplerKind::all())));
    let auto = SamplerKind::keys(SamplerKind::auto_capable());
    assert!(
        auto.contains("dp-penalty") && !auto.contains("rwmh"),
        "{auto}"
    );
    assert!(sample.contains(&auto) && fit.contains(&auto), "{fit}");
    let (status, _, err) = dp_mcmc(&split(
        "sample --experiment easy-2d --algorithm dp-penalty-gwmh --auto --epsilon 4",
    ));
    assert_eq!(status, 2);
    assert!(err.contains(&auto), "{err}");
}

/// The numbers the README prints for deterministic commands are what the CLI prints: every
/// `$B iterations|delta|epsilon …` line of a README code block followed by a `# {…}` comment
/// is run, and each `"key":value` in the comment must be in its JSON with that value.
#[test]
fn readme_numbers_are_what_the_cli_prints() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    let mut checked = 0;
    for pair in lines.windows(2) {
        let (cmd, comment) = (pair[0].trim(), pair[1].trim());
        let Some(args) = cmd.strip_prefix("$B ") else {
            continue;
        };
        let Some(json) = comment.strip_prefix("# {") else {
            continue;
        };
        if !["iterations ", "delta ", "epsilon "]
            .iter()
            .any(|c| args.starts_with(c))
        {
            continue;
        }
        let (status, out, err) = dp_mcmc(&split(args));
        assert_eq!(status, 0, "{args}: {err}");
        let got: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
        for fragment in json
            .split(',')
            .filter(|f| f.contains(':') && !f.contains("..."))
        {
            let (key, value) = fragment.split_once(':').unwrap();
            let key = key.trim().trim_matches('"');
            let want: serde_json::Value = serde_json::from_str(value.trim().trim_end_matches('}'))
                .unwrap_or_else(|_| panic!("README value {value} for {key} is not JSON"));
            assert_eq!(
                got[key], want,
                "README says {key} = {want} for `{args}`; the CLI prints {}",
                got[key]
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 2,
        "the README's CLI examples lost their printed numbers"
    );
}

/// A run that spends less than its ε says so: DP-SGLD's `auto` run is capped at 4 000
/// iterations, which on easy-2d spend ε ≈ 2.65 of 4; the JSON keeps the ε spent beside the
/// budget asked and a note naming the cap (both keys in every `sample` output).
#[test]
fn a_run_below_its_budget_says_why() {
    let (status, out, err) = dp_mcmc(&split(
        "sample --experiment easy-2d --algorithm dp-sgld --auto --epsilon 4 --chains 1 --seed 1",
    ));
    assert_eq!(status, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let spent = v["epsilon"].as_f64().unwrap();
    assert!(spent < 4.0, "{v}");
    assert_eq!(v["epsilon_budget"], 4.0);
    assert!(
        v["note"].as_str().unwrap().contains("max_iterations"),
        "{v}"
    );
    // a run that spends its budget has the same keys, its note null
    let (_, out, _) = dp_mcmc(&split(
        "sample --experiment easy-2d --algorithm dp-penalty --auto --epsilon 4 --chains 1 --seed 1",
    ));
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(v["note"].is_null() && v["epsilon_budget"] == 4.0, "{v}");
}

/// `dp-mcmc samplers` lists every sampler `--algorithm` takes (the command the `iterations`
/// help points to): one object per registry entry, keys that `sample --algorithm` accepts.
#[test]
fn samplers_lists_the_registry() {
    let (code, stdout, stderr) = dp_mcmc(&split("samplers"));
    assert_eq!(code, 0, "{stderr}");
    let list: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), dp_mcmc::samplers::REGISTRY.len());
    for entry in list {
        let key = entry["key"].as_str().unwrap();
        assert!(
            key.parse::<dp_mcmc::samplers::SamplerKind>().is_ok(),
            "{key}"
        );
        let private = entry["private"].as_bool().unwrap();
        let parameters = entry["privacy_parameters"].as_array().unwrap();
        assert_eq!(private, !parameters.is_empty(), "{entry}");
    }
    let (_, help, _) = dp_mcmc(&split("iterations --help"));
    assert!(help.contains("dp-mcmc samplers"), "{help}");
}

/// A `sample --out` that cannot be written is refused before any sampling, naming the flag.
#[test]
fn sample_refuses_an_out_it_cannot_write() {
    let dir = temp_dir("sample-out");
    for (out, why) in [
        (dir.join("missing").join("d.csv"), "folder does not exist"),
        (dir.clone(), "is a folder"),
    ] {
        let line = format!(
            "sample --experiment easy-2d --algorithm rwmh --iterations 10 --chains 1 --out {}",
            out.display()
        );
        let (code, _, stderr) = dp_mcmc(&split(&line));
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("--out") && stderr.contains(why), "{stderr}");
    }
}
