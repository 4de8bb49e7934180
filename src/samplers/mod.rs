//! MCMC kernels (RWMH, HMC, DP penalty, DP HMC, minibatch DP penalty, DP Barker) and the run driver.
