//! The one list of samplers: a [`SamplerEntry`] per sampler (key, label, constructor), and
//! [`SamplerKind`], a sampler named by its key. The CLI, the experiment grids and `auto` look
//! samplers up here; adding a sampler is its own folder, its `pub mod` line in `samplers/mod.rs`
//! and its entry appended to [`REGISTRY`] there. Help texts and error messages that list
//! samplers are generated from the registry ([`SamplerKind::keys`]).
//!
//! ```
//! use dp_mcmc::samplers::{REGISTRY, SamplerKind};
//! let kind: SamplerKind = "dp-barker".parse().unwrap();
//! assert_eq!(kind.label(), "DP Barker");
//! assert_eq!(kind, SamplerKind::DpBarker);
//! assert_eq!("dppa".parse::<SamplerKind>().unwrap(), SamplerKind::DpPenaltyGwmh); // thesis code's name
//! assert!(REGISTRY.iter().any(|e| e.key == "rwmh" && !e.private));
//! // an unknown key is an error listing the known ones
//! let err = "dp-foo".parse::<SamplerKind>().unwrap_err();
//! assert!(err.to_string().contains("dp-penalty-gwmh"));
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::sampler::{Sampler, SamplerEntry};
use super::{
    REGISTRY, dp_barker, dp_fast_mh, dp_hmc, dp_penalty, dp_sgld, dp_sgnht, hmc, minibatch_penalty,
    rwmh,
};
use crate::error::{Error, Result};

/// A sampler of the [`REGISTRY`], named by its key. The thesis' samplers have constants
/// (`SamplerKind::DpPenalty`, ...): a thin table of the registry.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SamplerKind(&'static str);

#[allow(non_upper_case_globals)]
impl SamplerKind {
    /// Random-walk MH (non-private baseline).
    pub const Rwmh: SamplerKind = SamplerKind(rwmh::ENTRY.key);
    /// HMC (non-private baseline).
    pub const Hmc: SamplerKind = SamplerKind(hmc::ENTRY.key);
    /// DP penalty, full update (thesis code `dpps`).
    pub const DpPenalty: SamplerKind = SamplerKind(dp_penalty::ENTRY.key);
    /// DP penalty with one-component updates (the `dppa` tuning, without the guided walk).
    pub const DpPenaltyOcu: SamplerKind = SamplerKind(dp_penalty::OCU_ENTRY.key);
    /// DP penalty with OCU + guided walk (`dppa`).
    pub const DpPenaltyGwmh: SamplerKind = SamplerKind(dp_penalty::GWMH_ENTRY.key);
    /// DP HMC (`hmc`).
    pub const DpHmc: SamplerKind = SamplerKind(dp_hmc::ENTRY.key);
    /// Minibatch DP penalty, full update (`mdpps`).
    pub const MinibatchPenalty: SamplerKind = SamplerKind(minibatch_penalty::ENTRY.key);
    /// Minibatch DP penalty with OCU + guided walk (`mdppa`).
    pub const MinibatchPenaltyGwmh: SamplerKind = SamplerKind(minibatch_penalty::GWMH_ENTRY.key);
    /// DP Barker (`barker`).
    pub const DpBarker: SamplerKind = SamplerKind(dp_barker::ENTRY.key);
    /// DP-SGLD (the field's; not in the thesis).
    pub const DpSgld: SamplerKind = SamplerKind(dp_sgld::ENTRY.key);
    /// DP-SGNHT (the field's; not in the thesis).
    pub const DpSgnht: SamplerKind = SamplerKind(dp_sgnht::ENTRY.key);
    /// DP-Fast MH (the field's; not in the thesis).
    pub const DpFastMh: SamplerKind = SamplerKind(dp_fast_mh::ENTRY.key);
}

impl SamplerKind {
    /// Every sampler of the registry, in its order.
    pub fn all() -> impl Iterator<Item = SamplerKind> {
        REGISTRY.iter().map(|e| SamplerKind(e.key))
    }

    /// The samplers an `auto` run can derive: the private samplers of the registry, by their
    /// family key (a variant such as `dp-penalty-gwmh` is tuned by hand).
    pub fn auto_capable() -> impl Iterator<Item = SamplerKind> {
        Self::all().filter(|k| k.is_private() && k.build().key() == k.key())
    }

    /// `kinds`' keys joined by `", "`, for help texts and error messages (never a hand-kept
    /// list).
    ///
    /// ```
    /// use dp_mcmc::samplers::SamplerKind;
    /// assert!(SamplerKind::keys(SamplerKind::all()).starts_with("dp-hmc, dp-penalty, "));
    /// assert!(!SamplerKind::keys(SamplerKind::auto_capable()).contains("rwmh"));
    /// ```
    pub fn keys(kinds: impl Iterator<Item = SamplerKind>) -> String {
        kinds.map(SamplerKind::key).collect::<Vec<_>>().join(", ")
    }

    /// Its registry entry.
    pub fn entry(self) -> &'static SamplerEntry {
        REGISTRY
            .iter()
            .find(|e| e.key == self.0)
            .unwrap_or(&REGISTRY[0]) // unreachable: a kind is made from a registry key only
    }

    /// CLI key (`dp-penalty-gwmh`, ...).
    pub fn key(self) -> &'static str {
        self.0
    }

    /// Label used in tables and figures.
    pub fn label(self) -> &'static str {
        self.entry().label
    }

    /// Whether the sampler is differentially private.
    pub fn is_private(self) -> bool {
        self.entry().private
    }

    /// The sampler with its default settings.
    pub fn build(self) -> Box<dyn Sampler> {
        (self.entry().build)()
    }
}

impl fmt::Display for SamplerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Debug for SamplerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SamplerKind({})", self.0)
    }
}

impl FromStr for SamplerKind {
    type Err = Error;

    /// Parses a key or an alias (the thesis code's `dpps`, `dppa`, `mdpps`, `mdppa`, `barker`;
    /// its `hmc` is DP HMC, while here `hmc` is the non-private baseline and DP HMC `dp-hmc`).
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        REGISTRY
            .iter()
            .find(|e| e.aliases.contains(&s))
            .or_else(|| REGISTRY.iter().find(|e| e.key == s))
            .map(|e| SamplerKind(e.key))
            .ok_or_else(|| {
                let keys: Vec<&str> = REGISTRY.iter().map(|e| e.key).collect();
                Error::invalid("algorithm", s, format!("use one of {}", keys.join(", ")))
            })
    }
}

impl Serialize for SamplerKind {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for SamplerKind {
    /// A key, an alias, or the name of the enum variant it replaced (`"DpPenalty"`, as older
    /// JSON reports wrote it).
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse::<SamplerKind>()
            .or_else(|e| SamplerKind::all().find(|k| variant_name(*k) == s).ok_or(e))
            .map_err(serde::de::Error::custom)
    }
}

/// `dp-penalty-gwmh` → `DpPenaltyGwmh`.
fn variant_name(k: SamplerKind) -> String {
    k.key()
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_round_trip() {
        let keys: std::collections::BTreeSet<&str> = REGISTRY.iter().map(|e| e.key).collect();
        assert_eq!(keys.len(), REGISTRY.len());
        for k in SamplerKind::all() {
            assert_eq!(k.key().parse::<SamplerKind>().unwrap(), k);
            assert!(k.key().starts_with(k.build().key()), "{k}: family key");
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(serde_json::from_str::<SamplerKind>(&json).unwrap(), k);
            let old = format!("\"{}\"", variant_name(k));
            assert_eq!(serde_json::from_str::<SamplerKind>(&old).unwrap(), k);
        }
    }
}
