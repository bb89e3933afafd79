"""Shared test settings, and the app server the end-to-end and deployment tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.servers import free_port, start_streamlit, stop, wait_for_health

# CI machines are small and may be busy: property tests must not fail on timing alone.
settings.register_profile(
    "default-no-deadline", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("default-no-deadline")


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One plain `streamlit run app.py` for the whole run: every session (browser tab) in the same process."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    with open(log_path, "wb") as log:
        process = start_streamlit(port, log)
        base_url = f"http://127.0.0.1:{port}"
        try:
            wait_for_health(base_url, process)
        except RuntimeError as exc:
            stop(process)
            pytest.fail(f"{exc}\n{log_path.read_text(errors='replace')[-3000:]}")
        try:
            yield base_url
        finally:
            stop(process)
