"""Accuracy first and attacker risk: views shared by Calibrate, Plan, Simulate and How tight is my bound?."""
