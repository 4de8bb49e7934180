//! The neighbouring relation and sampling scheme a Fourier accountant composes under.

/// Neighbouring relation + sampling scheme of the Fourier accountant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FourierRelation {
    /// Add/remove neighbours, Poisson subsampling (FA `get_delta_R`; remove direction only).
    AddRemovePoisson,
    /// Substitute neighbours, subsampling without replacement (FA `get_delta_S`; the thesis'
    /// minibatch DP penalty).
    SubstituteWithoutReplacement,
}
