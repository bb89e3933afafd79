"""The typed settings records (app_ui/core/records.py): every record, found by walking app_ui, built from the
session's values and checked by the settings' codecs; what each puts in a link is registered and reads back.

A record added by a later feature (the secrets, a noise choice) is found and checked here with no edit.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import FrozenInstanceError, dataclass, fields

import pytest

import app_ui
from app_ui.calibrate.settings import CalibrateSettings
from app_ui.core import state
from app_ui.core.records import PARAMETER, RECORD, SettingsRecord, setting
from app_ui.core.state import B_AXIS, EPS_PUFFER, FITTED, KIND, PLAN_RELEASES, TRANSITIONS, UNCERTAINTY_PARAMETERS
from app_ui.plan.ledger import DEFAULT_LEDGER, LEDGER
from app_ui.plan.settings import PlanSettings
from app_ui.prior.settings import PriorChoice
from puffer_core.priors.codecs import Number, Parameter
from puffer_core.priors.kinds import LENGTH, MATRIX, PRIOR_KINDS
from tests.app.conftest import open_page


def _records() -> list[type[SettingsRecord]]:
    """Every SettingsRecord of the app: each app_ui module imported, then the subclasses walked."""
    for module in pkgutil.walk_packages(app_ui.__path__, "app_ui."):
        importlib.import_module(module.name)
    found, todo = [], list(SettingsRecord.__subclasses__())
    while todo:
        record = todo.pop()
        found.append(record)
        todo += record.__subclasses__()
    return sorted(found, key=lambda r: r.__qualname__)


RECORDS = _records()


def test_the_walk_finds_every_page_s_record() -> None:
    names = {record.__name__ for record in RECORDS}
    expected = {"PriorChoice", "UncertaintyChoice", "CurvesSettings", "CalibrateSettings", "PlanSettings"}
    assert expected | {"StreamSettings", "AttackSettings", "AnalystSettings"} <= names


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__name__)
def test_every_record_builds_from_the_defaults_and_is_frozen(record: type[SettingsRecord]) -> None:
    built = record.from_values({})
    for item in fields(built):  # type: ignore[arg-type]
        value = getattr(built, item.name)
        if PARAMETER in item.metadata:
            parameter = item.metadata[PARAMETER]
            assert value == state.conform(parameter, parameter.default), item.name
        elif RECORD in item.metadata:
            assert isinstance(value, item.metadata[RECORD])
    hash(built)  # a record is a cache key: hashable, and frozen
    with pytest.raises(FrozenInstanceError):
        setattr(built, fields(built)[0].name, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__name__)
def test_every_linked_setting_of_every_record_is_registered_and_reads_back(
    record: type[SettingsRecord], registered: None
) -> None:
    built = record.from_values({})
    for parameter in built.link():
        assert state.SETTINGS.get(parameter.key) is parameter, f"{parameter.key} is not registered"
        assert state.IN_LINKS[parameter.url] is parameter
        if parameter.default is not None and parameter.codec is not None:
            text = parameter.codec.encode(parameter.default)
            assert parameter.codec.encode(parameter.codec.parse(text)) == text
    own = [p for p in record.parameters() if p.url is not None]
    shown = [p for p in built.link() if p in own]  # a record may leave some out (the default ledger, Θ without a fit)
    assert shown == [p for p in own if p in shown]  # its own settings in the order of its fields


@pytest.fixture(scope="module")
def registered() -> None:
    """The groups streamlit_app.py registers (the app run once: AppTest runs it in this process)."""
    open_page()


def test_a_typo_is_an_attribute_error_not_a_key_error() -> None:
    settings = CalibrateSettings.from_values({})
    with pytest.raises(AttributeError):
        settings.eps_pufer  # type: ignore[attr-defined]  # noqa: B018


def test_values_of_the_wrong_kind_are_refused_naming_the_setting() -> None:
    with pytest.raises(ValueError, match="the setting 'eps_puffer' must be a number; got '1'"):
        CalibrateSettings.from_values({EPS_PUFFER.key: "1"})
    with pytest.raises(ValueError, match="the setting 'plan_releases' must be a whole number; got 2.5"):
        PlanSettings.from_values({PLAN_RELEASES.key: 2.5})
    with pytest.raises(ValueError, match="the setting 'b_axis' must be one of zoom, log, all; got 'zoomed'"):
        CalibrateSettings.from_values({B_AXIS.key: "zoomed"})
    with pytest.raises(ValueError, match="the setting 'prior_kind' must be one of"):
        PriorChoice.from_values({KIND.key: "markov"})
    plan = PlanSettings.from_values({PLAN_RELEASES.key: 12.0, EPS_PUFFER.key: 2})  # a whole float, an int ε
    assert plan.plan_releases == 12 and isinstance(plan.plan_releases, int)
    assert CalibrateSettings.from_values({EPS_PUFFER.key: 2}).eps_puffer == 2.0


def test_a_field_that_is_neither_a_setting_nor_a_record_is_refused() -> None:
    @dataclass(frozen=True)
    class Broken(SettingsRecord):
        eps: float = setting(EPS_PUFFER)
        other: int = 0

    with pytest.raises(TypeError, match="Broken.other is neither a setting"):
        Broken.from_values({})


@pytest.mark.parametrize("kind", list(PRIOR_KINDS))
def test_the_prior_holds_its_kind_s_parameters_in_order(kind: str) -> None:
    prior = PriorChoice.from_values({KIND.key: kind})
    record = PRIOR_KINDS[kind]
    assert [key for key, _ in prior.params] == [p.key for p in record.parameters]
    assert [key for key, _ in prior.options] == [p.key for p in record.options]
    assert prior.record is record and not prior.problems()
    assert prior.link()[:1] == (KIND,) and not any(p in prior.link() for p in UNCERTAINTY_PARAMETERS)
    assert prior.length == (record.defaults.get(LENGTH.key))


def test_a_fitted_chain_s_uncertainty_travels_only_while_it_is_the_fit() -> None:
    matrix = MATRIX.defaults[TRANSITIONS.key]
    fitted = state.FittedOrigin("f", (("user", "u"),), "My data", matrix, ("0", "1", "2"), 1e-5)
    prior = PriorChoice.from_values({KIND.key: "matrix", FITTED.key: fitted})
    assert prior.as_fitted and prior.link()[-len(UNCERTAINTY_PARAMETERS) :] == UNCERTAINTY_PARAMETERS
    assert "fitted to My data" in prior.description
    edited = ((0.5, 0.5, 0.0), *matrix[1:])
    prior = PriorChoice.from_values({KIND.key: "matrix", FITTED.key: fitted, TRANSITIONS.key: edited})
    assert not prior.as_fitted and not any(p in prior.link() for p in UNCERTAINTY_PARAMETERS)
    assert "fitted to" not in prior.description


def test_the_plan_s_link_leaves_the_default_ledger_out() -> None:
    assert LEDGER not in PlanSettings.from_values({}).link()
    changed = PlanSettings.from_values({LEDGER.key: DEFAULT_LEDGER[:3]})
    assert changed.link()[-1] is LEDGER and changed.ledger == DEFAULT_LEDGER[:3]


def test_put_and_get_check_the_value_by_its_codec() -> None:
    whole = Parameter("records_test_whole", 3, codec=Number(1, 10, whole=True))
    assert state.conform(whole, 4.0) == 4 and isinstance(state.conform(whole, 4.0), int)
    with pytest.raises(ValueError, match="the setting 'records_test_whole' must be a whole number"):
        state.conform(whole, 4.5)
    with pytest.raises(ValueError, match="must be a number"):
        state.conform(whole, True)
    assert state.conform(Parameter("free", None), None) is None
