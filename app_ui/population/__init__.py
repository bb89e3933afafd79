"""Whole-population secrets on Calibrate (docs/math.md "Whole-population secrets"): can a released count tell which
of two population habits, θ₁ (the sidebar's chain) or θ₂ (an alternative the user sets), generated the data?

``views`` builds the case, the numbers (every one from :mod:`puffer_core.mechanisms.population`), the chart and the
table; ``exports`` the script and the report; ``section`` the controls on the page.
"""
