//! MCMC diagnostics on plain slices: MMD, mean/covariance error, R-hat, ESS, MCSE.
