//! Privacy accountants: zCDP, RDP (incl. subsampled RDP), the tight Gaussian PLD bound, the
//! Fourier accountant, and Algorithm 2 (maximum number of iterations).
pub mod fourier;
