"""Shared test settings."""

from hypothesis import HealthCheck, settings

# CI machines are small and may be busy: property tests must not fail on timing alone.
settings.register_profile(
    "default-no-deadline", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("default-no-deadline")
