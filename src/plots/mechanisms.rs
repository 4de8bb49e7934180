//! plotly figures for the mechanisms of the intro-to-DP and Hellinger seeds.
