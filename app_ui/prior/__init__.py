"""The prior in use: its kind and controls, the matrix editor and presets, the fit's smoothing, its cached
curve and its uncertainty."""
