//! `iterations`, `delta`, `epsilon` subcommands: the accountants of `dp_mcmc::accounting` as JSON.
//!
//! Sensitivity convention of `--noise-multiplier` (σ = noise std ÷ l2 sensitivity, one meaning
//! for every accountant): add-remove / Poisson: ÷ the per-record l2 bound. substitute /
//! without-replacement: ÷ the statistic's *substitute* sensitivity c (thesis Thm 8; RDP uses it
//! as is). The Fourier accountant's pair (1−q)N(0,σ²)+qN(±1,σ²) is evaluated with FA's
//! `sigma` (std ÷ per-record bound) = σ, i.e. with c as the per-record bound: conservative by
//! design, exactly the thesis' call σ = √τ (THESIS-NOTES §7). A statistic that is a sum of
//! per-record terms bounded by C has c = 2C. (Reading σ as std ÷ C for RDP would be optimistic
//! by 2×.)

use clap::{Args, ValueEnum};
use dp_mcmc::Error;
use dp_mcmc::accounting::fourier::{FourierAccountant, FourierRelation, SubsampledGaussian};
use dp_mcmc::accounting::{
    AccountantKind, Rdp, RdpConversion, WorBound, dp_accounting_orders,
    poisson_subsampled_gaussian_rdp, wor_subsampled_gaussian_rdp,
};
use dp_mcmc::samplers::{Budget, Gradient, SamplerKind};
use serde_json::{Value, json};

/// Accountant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AccountantArg {
    /// zCDP with the thesis' Theorem 1 conversion.
    Zcdp,
    /// Certified privacy loss distribution: an interval [lower, upper] that contains the true
    /// value (connect-the-dots + FFT; --sampling none, poisson or without-replacement); the
    /// JSON's delta/epsilon is the upper bound, delta_lower/epsilon_lower the lower one.
    /// Iterations: the tight Gaussian PLD (dp-penalty, dp-hmc), the certified upper bound
    /// (minibatch-penalty).
    Pld,
    /// Rényi DP, integer orders 2..=256 (iterations: the thesis' α grids).
    Rdp,
    /// DP Barker only (`iterations`): Rényi DP with the exact per-step divergence of the
    /// Barker test instead of Theorem 7's bound.
    RdpExact,
    /// Fourier accountant (the thesis' tool; nx = 1e6, L = 20 unless --nx/--window): a value
    /// without an error bound (--accountant pld gives a certified interval).
    Fourier,
}

/// DP HMC gradient schedule.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum GradientArg {
    /// Fresh noisy gradient each iteration: k(L+1) releases (default).
    Fresh,
    /// March-2021 gradient re-use: kL+1 releases.
    Reuse,
}

/// Sampling scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SamplingArg {
    /// No subsampling.
    None,
    /// Poisson sampling with rate --q (add/remove relation).
    Poisson,
    /// Batch of q·n rows without replacement (substitute relation).
    WithoutReplacement,
}

/// Neighbouring relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RelationArg {
    /// Add or remove one record.
    AddRemove,
    /// Substitute one record.
    Substitute,
}

/// RDP → (ε, δ) conversion.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ConversionArg {
    /// Thesis Theorem 1 (default).
    Classic,
    /// Canonne–Kamath–Steinke / dp_accounting's conversion (not the thesis).
    Improved,
}

/// Arguments of `dp-mcmc iterations`.
#[derive(Args)]
pub struct IterationsArgs {
    /// The DP sampler, by its registry key: dp-penalty (Thm 5 zCDP / Thm 6 PLD), dp-hmc (Thm 11
    /// / Thm 12), minibatch-penalty (Fourier accountant / Thm 8 RDP / certified PLD), dp-barker
    /// (Thm 7 RDP, rdp-exact or pld), or any other DP sampler of the registry (`dp-mcmc
    /// samplers` lists them); its privacy parameters are required flags.
    #[arg(long)]
    algorithm: String,
    /// Accountant [default: pld for dp-penalty/dp-hmc, fourier for minibatch-penalty, rdp for
    /// dp-barker (Theorem 7; rdp-exact: the exact per-step divergence; pld: the certified PLD
    /// of the feasible family)].
    #[arg(long, value_enum)]
    accountant: Option<AccountantArg>,
    /// Target ε (> 0).
    #[arg(long, allow_hyphen_values = true)]
    epsilon: f64,
    /// Target δ in (0, 1) [default: 0.1/n, as in the thesis].
    #[arg(long, allow_hyphen_values = true)]
    delta: Option<f64>,
    /// Number of data rows.
    #[arg(long, allow_hyphen_values = true)]
    n: u64,
    /// Noise parameter τ (dp-penalty, minibatch-penalty).
    #[arg(long, allow_hyphen_values = true)]
    tau: Option<f64>,
    /// Log-likelihood-ratio noise τ_l (dp-hmc).
    #[arg(long, allow_hyphen_values = true)]
    tau_l: Option<f64>,
    /// Gradient noise τ_g (dp-hmc).
    #[arg(long, allow_hyphen_values = true)]
    tau_g: Option<f64>,
    /// Leapfrog steps L (dp-hmc).
    #[arg(long, allow_hyphen_values = true)]
    leapfrog_steps: Option<u32>,
    /// DP HMC gradient schedule.
    #[arg(long, value_enum, default_value = "fresh")]
    gradient: GradientArg,
    /// Batch size (minibatch-penalty, dp-barker).
    #[arg(long, allow_hyphen_values = true)]
    batch_size: Option<u64>,
    /// Reproduce the thesis code (minibatch RDP sum to j = α−1: optimistic).
    #[arg(long)]
    thesis_compatible: bool,
    /// Any other setting of the sampler by its field name, `NAME=VALUE` (repeatable; VALUE is
    /// JSON, or a plain string): e.g. `--set noise_multiplier=1.1` for a sampler whose privacy
    /// parameter has no flag of its own. A required parameter may be given this way too.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

/// The mechanism shared by `delta` and `epsilon`.
#[derive(Args)]
pub struct MechanismArgs {
    /// Accountant.
    #[arg(long, value_enum)]
    accountant: AccountantArg,
    /// σ = noise std ÷ l2 sensitivity. add-remove/poisson: ÷ the per-record bound.
    /// substitute/without-replacement: ÷ the statistic's substitute sensitivity c (RDP, thesis
    /// Thm 8); fourier/pld use it as the Fourier accountant's sigma (std ÷ per-record bound),
    /// i.e. with c as the per-record bound: conservative, the thesis' call σ = √τ. For a sum
    /// of per-record terms bounded by C, c = 2C.
    #[arg(long, allow_hyphen_values = true)]
    noise_multiplier: f64,
    /// Number of compositions.
    #[arg(long, allow_hyphen_values = true)]
    steps: u64,
    /// Sampling scheme.
    #[arg(long, value_enum, default_value = "none")]
    sampling: SamplingArg,
    /// Sampling rate (poisson, without-replacement).
    #[arg(long, allow_hyphen_values = true)]
    q: Option<f64>,
    /// Neighbouring relation [default: add-remove for poisson, substitute for
    /// without-replacement].
    #[arg(long, value_enum)]
    relation: Option<RelationArg>,
    /// RDP conversion (rdp only).
    #[arg(long, value_enum, default_value = "classic")]
    conversion: ConversionArg,
    /// RDP orders (rdp only; without-replacement uses the integer ones among them).
    #[arg(long, value_enum, default_value = "integer")]
    orders: OrdersArg,
    /// rdp + without-replacement: the thesis code's sum to j = α−1 (optimistic).
    #[arg(long)]
    thesis_compatible: bool,
    /// Fourier grid size (the thesis' 1e6). Where this grid cannot answer (the loss leaves the
    /// window, the power overflows) up to three finer grids are tried (nx doubled, at most 2^22 points); the JSON's `nx`
    /// and `window` say which grid answered. The Fourier accountant has no error bound: for a
    /// certified interval use `--accountant pld`.
    #[arg(long, default_value_t = 1_000_000, allow_hyphen_values = true)]
    nx: usize,
    /// Fourier window L (the thesis' 20); widened automatically for an ε outside it.
    #[arg(long, default_value_t = 20.0, allow_hyphen_values = true)]
    window: f64,
    /// pld: relative width wanted, upper − lower ≤ T·upper (the lattice is refined until it
    /// holds or the work budget, an FFT of 2^22 points, is spent; then the wider certified
    /// interval is printed).
    #[arg(long, default_value_t = 2e-3, allow_hyphen_values = true)]
    tolerance: f64,
}

/// RDP orders.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OrdersArg {
    /// Integers 2..=256 (thesis; default).
    Integer,
    /// dp_accounting 0.6's default orders (1.1..10.9 by 0.1, 11..63, 128, 256, 512, 1024).
    DpAccounting,
}

/// Arguments of `dp-mcmc delta`.
#[derive(Args)]
pub struct DeltaArgs {
    #[command(flatten)]
    mech: MechanismArgs,
    /// ε at which δ is reported (≥ 0).
    #[arg(long, allow_hyphen_values = true)]
    epsilon: f64,
}

/// Arguments of `dp-mcmc epsilon`.
#[derive(Args)]
pub struct EpsilonArgs {
    #[command(flatten)]
    mech: MechanismArgs,
    /// δ at which ε is reported, in (0, 1).
    #[arg(long, allow_hyphen_values = true)]
    delta: f64,
}

/// Library parameter name → CLI flag.
fn flag(name: &'static str) -> &'static str {
    match name {
        "tau" => "--tau",
        "tau_l" => "--tau-l",
        "tau_g" => "--tau-g",
        "leapfrog_steps" => "--leapfrog-steps",
        "batch_size" | "batch" => "--batch-size",
        "n" => "--n",
        "epsilon" => "--epsilon",
        "delta" | "target_delta" => "--delta",
        "noise_multiplier" | "sigma" => "--noise-multiplier",
        "q" => "--q",
        "steps" => "--steps",
        "accountant" => "--accountant",
        "algorithm" => "--algorithm",
        "nx" => "--nx",
        "window" | "l" => "--window",
        other => other,
    }
}

fn cli_error(e: Error) -> Error {
    super::name_the_flag(e, flag)
}

fn missing(flag: &'static str, why: &str) -> Error {
    Error::invalid(flag, "missing", why.to_string())
}

fn need<T>(x: Option<T>, flag: &'static str, why: &str) -> dp_mcmc::Result<T> {
    x.ok_or_else(|| missing(flag, why))
}

fn method_of(a: AccountantArg) -> AccountantKind {
    match a {
        AccountantArg::Zcdp => AccountantKind::Zcdp,
        AccountantArg::Pld => AccountantKind::Pld,
        AccountantArg::Rdp => AccountantKind::Rdp,
        AccountantArg::RdpExact => AccountantKind::RdpExact,
        AccountantArg::Fourier => AccountantKind::Fourier,
    }
}

fn accountant_name(a: AccountantArg) -> &'static str {
    method_of(a).key()
}

/// `dp-mcmc iterations`.
pub fn iterations(a: IterationsArgs) -> dp_mcmc::Result<Value> {
    iterations_inner(a).map_err(cli_error)
}

fn iterations_inner(a: IterationsArgs) -> dp_mcmc::Result<Value> {
    let kind: SamplerKind = a.algorithm.parse()?;
    if !kind.is_private() {
        let private: Vec<&str> = SamplerKind::all()
            .filter(|k| k.is_private())
            .map(SamplerKind::key)
            .collect();
        return Err(Error::invalid(
            "algorithm",
            kind,
            format!(
                "is not differentially private: iterations counts a DP sampler's; use one of {}",
                private.join(", ")
            ),
        ));
    }
    if a.n == 0 {
        return Err(Error::invalid("n", 0, "must be at least 1"));
    }
    let n = usize::try_from(a.n).map_err(|_| Error::invalid("n", a.n, "is too large"))?;
    let mut s = kind.build();
    if let Some(acc) = a.accountant {
        s.set_accountant(Some(method_of(acc)))?;
    }
    let settings = s.settings();
    let has = |name: &str| settings.get(name).is_some();
    let mut given = Vec::new();
    for kv in &a.set {
        let (name, value) = kv.split_once('=').ok_or_else(|| {
            Error::invalid("set", kv, "write --set NAME=VALUE (e.g. --set tau=0.1)")
        })?;
        let value = serde_json::from_str(value).unwrap_or_else(|_| json!(value));
        s.set_setting(name.trim(), value)?;
        given.push(name.trim().to_string());
    }
    // The privacy parameters the count depends on are required flags.
    for (name, _) in s.privacy_parameters() {
        if !has(name) || given.iter().any(|g| g == name) {
            continue; // derived from the settings (DP HMC's gradient releases), or set above
        }
        let value = match name {
            "tau" => a.tau.map(|x| finite(name, x)).transpose()?,
            "tau_l" => a.tau_l.map(|x| finite(name, x)).transpose()?,
            "tau_g" => a.tau_g.map(|x| finite(name, x)).transpose()?,
            "leapfrog_steps" => a.leapfrog_steps.map(|l| json!(l)),
            "batch_size" => a.batch_size.map(|b| json!(b)),
            _ => None,
        };
        let value = need(value, flag(name), &format!("{kind} needs {}", flag(name)))?;
        s.set_setting(name, value)?;
    }
    if has("gradient") {
        let g = match a.gradient {
            GradientArg::Fresh => Gradient::Fresh,
            GradientArg::Reuse => Gradient::Reuse,
        };
        s.set_setting("gradient", json!(g))?;
    }
    if has("thesis_compatible") {
        s.set_setting("thesis_compatible", json!(a.thesis_compatible))?;
    }
    if has("max_iterations") && !given.iter().any(|g| g == "max_iterations") {
        // Algorithm 2's own count (a run's cap is not the budget's answer)
        s.set_setting("max_iterations", Value::Null)?;
    }
    let run = s.run_settings_mut();
    run.chains = 1;
    run.budget = Budget::Privacy {
        epsilon: a.epsilon,
        delta: a.delta.unwrap_or(0.1 / a.n as f64),
    };
    let budget = s
        .budget(n)?
        .ok_or_else(|| Error::invalid("algorithm", kind, "has no privacy budget"))?;
    let mut out = json!({
        "iterations": budget.iterations,
        "algorithm": budget.algorithm,
        "accountant": budget.method.key(),
        // the tight Gaussian PLD is "ADP"; the subsampled samplers' pld is the certified upper bound
        "method": budget.spent.accountant,
        "epsilon": budget.epsilon,
        "delta": budget.delta,
        "n": a.n,
        "thesis_compatible": budget.thesis_compatible,
    });
    let obj = out
        .as_object_mut()
        .expect("json! of an object literal is an object");
    obj.insert(
        format!("achieved_{}", budget.achieved_quantity),
        json!(budget.achieved),
    );
    if let Some(o) = budget.optimal_order {
        obj.insert("optimal_order".into(), json!(o));
    }
    for (k, v) in &budget.params {
        obj.entry(k.clone()).or_insert(json!(v));
    }
    Ok(out)
}

/// A noise scale as a JSON setting (a non-finite one is an error naming it: JSON has no NaN).
fn finite(name: &'static str, x: f64) -> dp_mcmc::Result<Value> {
    if x.is_finite() {
        Ok(json!(x))
    } else {
        Err(Error::invalid(name, x, "must be a positive finite number"))
    }
}

/// Validated mechanism: (relation name, sampling rate).
fn resolve(m: &MechanismArgs) -> dp_mcmc::Result<(RelationArg, Option<f64>)> {
    let rel = match (m.sampling, m.relation) {
        (SamplingArg::None, r) => r.unwrap_or(RelationArg::AddRemove),
        (SamplingArg::Poisson, None | Some(RelationArg::AddRemove)) => RelationArg::AddRemove,
        (SamplingArg::Poisson, Some(RelationArg::Substitute)) => {
            return Err(Error::invalid(
                "--relation",
                "substitute",
                "--sampling poisson is accounted under --relation add-remove; for substitute use --sampling without-replacement",
            ));
        }
        (SamplingArg::WithoutReplacement, None | Some(RelationArg::Substitute)) => {
            RelationArg::Substitute
        }
        (SamplingArg::WithoutReplacement, Some(RelationArg::AddRemove)) => {
            return Err(Error::invalid(
                "--relation",
                "add-remove",
                "--sampling without-replacement is accounted under --relation substitute; for add-remove use --sampling poisson",
            ));
        }
    };
    let q = match m.sampling {
        SamplingArg::None => {
            if m.q.is_some() {
                return Err(Error::invalid(
                    "--q",
                    m.q.unwrap_or(f64::NAN),
                    "--q needs --sampling poisson or without-replacement",
                ));
            }
            None
        }
        _ => Some(dp_mcmc::error::check::rate(
            "q",
            need(
                m.q,
                "--q",
                "subsampling needs --q Q (sampling rate in (0, 1])",
            )?,
        )?),
    };
    dp_mcmc::error::check::positive("noise_multiplier", m.noise_multiplier)?;
    if m.steps == 0 {
        return Err(Error::invalid("--steps", 0, "must be at least 1"));
    }
    match (m.accountant, m.sampling) {
        (AccountantArg::RdpExact, _) => {
            return Err(Error::invalid(
                "--accountant",
                "rdp-exact",
                "rdp-exact is DP Barker's exact accountant (dp-mcmc iterations --algorithm dp-barker); for a Gaussian mechanism use --accountant rdp",
            ));
        }
        (AccountantArg::Zcdp, SamplingArg::None) => {}
        (AccountantArg::Zcdp, _) => {
            return Err(Error::invalid(
                "--accountant",
                "zcdp",
                "zcdp has no subsampling amplification: use --accountant rdp, pld or fourier, or --sampling none",
            ));
        }
        (AccountantArg::Fourier, SamplingArg::None) => {
            return Err(Error::invalid(
                "--accountant",
                "fourier",
                "the Fourier accountant needs --sampling poisson or without-replacement; use --accountant pld for --sampling none",
            ));
        }
        _ => {}
    }
    Ok((rel, q))
}

fn relation_name(r: RelationArg) -> &'static str {
    match r {
        RelationArg::AddRemove => "add-remove",
        RelationArg::Substitute => "substitute",
    }
}

fn sampling_name(s: SamplingArg) -> &'static str {
    match s {
        SamplingArg::None => "none",
        SamplingArg::Poisson => "poisson",
        SamplingArg::WithoutReplacement => "without-replacement",
    }
}

enum Query {
    Delta(f64),
    Epsilon(f64),
}

fn rdp_accountant(m: &MechanismArgs, q: Option<f64>) -> dp_mcmc::Result<Rdp> {
    let conv = match m.conversion {
        ConversionArg::Classic => RdpConversion::Classic,
        ConversionArg::Improved => RdpConversion::Improved,
    };
    let s = m.noise_multiplier;
    let mut acc = match m.orders {
        OrdersArg::Integer => Rdp::new(),
        OrdersArg::DpAccounting => Rdp::with_orders(dp_accounting_orders())?,
    }
    .conversion(conv);
    match (m.sampling, q) {
        (SamplingArg::Poisson, Some(q)) => {
            acc.compose_curve(|a| poisson_subsampled_gaussian_rdp(q, s, a), m.steps)?;
        }
        (SamplingArg::WithoutReplacement, Some(q)) => {
            let bound = if m.thesis_compatible {
                WorBound::ThesisCode
            } else {
                WorBound::Theorem9
            };
            acc.compose_curve(
                |a| {
                    if a.fract() == 0.0 && a >= 2.0 {
                        wor_subsampled_gaussian_rdp(q, s, a as u32, bound)
                    } else {
                        Ok(f64::INFINITY) // Theorem 9 holds at integer orders only
                    }
                },
                m.steps,
            )?;
        }
        _ => {
            acc.compose_curve(|a| Ok(a / (2.0 * s * s)), m.steps)?;
        }
    }
    Ok(acc)
}

fn answer(m: &MechanismArgs, query: Query) -> dp_mcmc::Result<Value> {
    let (rel, q) = resolve(m)?;
    let s = m.noise_multiplier;
    let k = m.steps as f64;
    let mut order = None;
    let mut grid = None;
    let mut lower = None;
    let mut path = None;
    let value = match (m.accountant, q) {
        (AccountantArg::Zcdp, _) => {
            let rho = k / (2.0 * s * s);
            let mut z = dp_mcmc::accounting::Zcdp::new();
            use dp_mcmc::accounting::Accountant;
            z.compose(&dp_mcmc::accounting::PrivacyEvent::Zcdp { rho })?;
            match query {
                Query::Delta(e) => z.delta(e)?,
                Query::Epsilon(d) => z.epsilon(d)?,
            }
        }
        (AccountantArg::Pld, q) => {
            let (iv, closed) = certified(m, q, &query)?;
            lower = Some(iv.lower);
            path = Some(if closed {
                "closed-form"
            } else {
                "certified-pld"
            });
            iv.upper
        }
        (AccountantArg::Rdp, q) => {
            let acc = rdp_accountant(m, q)?;
            let (v, a) = match query {
                Query::Delta(e) => acc.delta_and_order(e)?,
                Query::Epsilon(d) => acc.epsilon_and_order(d)?,
            };
            order = Some(a);
            v
        }
        (AccountantArg::Fourier, Some(q)) => {
            let relation = match rel {
                RelationArg::AddRemove => FourierRelation::AddRemovePoisson,
                RelationArg::Substitute => FourierRelation::SubstituteWithoutReplacement,
            };
            let fa = FourierAccountant::new(relation).nx(m.nx).window(m.window);
            let parts = [SubsampledGaussian::new(s, q, m.steps)?];
            let answer = match query {
                Query::Delta(e) => fa.delta_adaptive(e, &parts)?,
                Query::Epsilon(d) => fa.epsilon_adaptive(d, &parts)?,
            };
            grid = Some((answer.nx, answer.window));
            answer.value
        }
        (AccountantArg::Fourier, None) | (AccountantArg::RdpExact, _) => {
            unreachable!("rejected by resolve()")
        }
    };
    let mut out = json!({
        "accountant": accountant_name(m.accountant),
        "noise_multiplier": s,
        "steps": m.steps,
        "sampling": sampling_name(m.sampling),
        "relation": relation_name(rel),
    });
    let obj = out
        .as_object_mut()
        .expect("json! of an object literal is an object");
    if let Some(q) = q {
        obj.insert("q".into(), json!(q));
    }
    if let Some((nx, window)) = grid {
        // the Fourier grid that answered (the requested one unless it could not)
        obj.insert("nx".into(), json!(nx));
        obj.insert("window".into(), json!(window));
    }
    if let Some(a) = order {
        obj.insert("optimal_order".into(), json!(a));
        obj.insert(
            "conversion".into(),
            json!(match m.conversion {
                ConversionArg::Classic => "classic",
                ConversionArg::Improved => "improved",
            }),
        );
    }
    match query {
        Query::Delta(e) => {
            obj.insert("epsilon".into(), json!(e));
            obj.insert("delta".into(), json!(value));
        }
        Query::Epsilon(d) => {
            obj.insert("delta".into(), json!(d));
            obj.insert("epsilon".into(), json!(value));
        }
    }
    if let Some(l) = lower {
        let key = match query {
            Query::Delta(_) => "delta_lower",
            Query::Epsilon(_) => "epsilon_lower",
        };
        obj.insert(key.into(), json!(l));
        obj.insert("tolerance".into(), json!(m.tolerance));
        // false where the work budget stopped the refinement first (the wider interval is
        // still certified)
        obj.insert(
            "within_tolerance".into(),
            json!(value.is_finite() && value - l <= m.tolerance * value),
        );
    }
    if let Some(p) = path {
        // which path answered: the Gaussian closed form (every event Gaussian) or the engine
        obj.insert("path".into(), json!(p));
    }
    Ok(out)
}

/// The certified interval of `--accountant pld`, and whether the Gaussian closed form gave it.
/// A without-replacement rate q is charged as `b/n` with `n = 2^40`, `b = ⌈q·n⌉` (at most 1e-12
/// above q: pessimistic).
fn certified(
    m: &MechanismArgs,
    q: Option<f64>,
    query: &Query,
) -> dp_mcmc::Result<(dp_mcmc::accounting::Interval, bool)> {
    use dp_mcmc::accounting::{Accountant, CertifiedPld, PrivacyEvent};
    if !(m.tolerance.is_finite() && m.tolerance > 0.0 && m.tolerance < 1.0) {
        return Err(Error::invalid(
            "--tolerance",
            m.tolerance,
            "must be in (0, 1), e.g. 0.01 for an interval 1 % wide",
        ));
    }
    let g = PrivacyEvent::gaussian(m.noise_multiplier);
    let one = match (m.sampling, q) {
        (SamplingArg::Poisson, Some(q)) => g.poisson(q),
        (SamplingArg::WithoutReplacement, Some(q)) => {
            let n = 1u64 << 40;
            g.without_replacement(n, ((q * n as f64).ceil() as u64).clamp(1, n))
        }
        _ => g,
    };
    let mut acc = CertifiedPld::new().tolerance(m.tolerance);
    acc.compose(&one.repeat(m.steps))?;
    let iv = match *query {
        Query::Delta(e) => acc.delta_interval(e)?,
        Query::Epsilon(d) => acc.epsilon_interval(d)?,
    };
    Ok((iv, acc.closed_form()))
}

/// `dp-mcmc delta`.
pub fn delta(a: DeltaArgs) -> dp_mcmc::Result<Value> {
    answer(&a.mech, Query::Delta(a.epsilon)).map_err(cli_error)
}

/// `dp-mcmc epsilon`.
pub fn epsilon(a: EpsilonArgs) -> dp_mcmc::Result<Value> {
    answer(&a.mech, Query::Epsilon(a.delta)).map_err(cli_error)
}
