"""Shared test settings, and the app server the end-to-end and deployment tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support.servers import free_port, start_streamlit, stop, wait_for_health

# CI machines are small and may be busy: property tests must not fail on timing alone.
settings.register_profile(
    "default-no-deadline", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("default-no-deadline")

# The library's unit tests (`python -m pytest -m unit`): the files directly in tests/ except those that start
# another program (a notebook kernel, the command line in a subprocess) or test the app's configuration, and
# except the tests that start a Spark session; tests/app (AppTest), tests/e2e and tests/deploy are never unit.
NOT_UNIT_FILES = {"test_notebook.py", "test_cli.py", "test_streamlit_config.py"}
NOT_UNIT_FIXTURES = {"spark"}
UNIT_FOLDER = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With exactly `-m unit`, what holds no unit test is not even imported (AppTest, browsers, notebooks)."""
    if config.getoption("markexpr") != "unit" or collection_path.parent != UNIT_FOLDER:
        return None
    return collection_path.name in NOT_UNIT_FILES | {"app", "e2e", "deploy"} or None


# Under xdist a session fixture is built once per worker: the tests that use the app server (or a browser) are
# sent to one worker together (`--dist loadgroup` in pyproject.toml), so the run starts one server and one browser.
SERVER_FIXTURES = {"app_url", "browser"}


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the group into the test's id
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group("app_server"))
        path = Path(str(item.fspath))
        if (
            path.parent == UNIT_FOLDER
            and path.name not in NOT_UNIT_FILES
            and not NOT_UNIT_FIXTURES & set(getattr(item, "fixturenames", ()))
        ):
            item.add_marker(pytest.mark.unit)


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
