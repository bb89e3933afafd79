"""Calibrate: ε_puffer → ε_DP and back, its report and script."""
