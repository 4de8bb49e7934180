//! Classic DP mechanisms: randomized response, Laplace, exponential, private online learning,
//! and the Hellinger-distance exponential mechanism for Bayesian posteriors.
