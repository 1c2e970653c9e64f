"""The table of app settings (app.core.settings_fields) and the store's typed reads."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from app.core import settings_fields
from app.core.fields import FieldKind, InvalidConfigValue
from app.core.settings_fields import (
    CHECKPOINT_MAX_FILE,
    CHECKPOINT_RETENTION_DAYS,
    CHECKPOINTS_ENABLED,
    LAST_CONVERSATIONS,
    MB,
    PRICES,
    REVIEWERS,
    SANDBOX_REQUIRED,
    SENSITIVE_PATHS,
    SETTINGS,
    WINDOW_GEOMETRY,
    SettingField,
)
from app.core.store.settings import SettingsRepository

# Values of every JSON type; for each field some are of the wrong kind.
GARBAGE: tuple[Any, ...] = ("junk", "", 3.5, -7, 0, True, None, [1, None], {"a": 1}, [])


def _jsonable(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value


def test_every_setting_is_in_the_table_once():
    declared = [v for v in vars(settings_fields).values() if isinstance(v, SettingField)]
    assert {id(f) for f in declared} == {id(f) for f in SETTINGS}
    keys = [f.key for f in SETTINGS]
    assert len(keys) == len(set(keys)), "a key is declared twice"
    assert all(f.key and f.label for f in SETTINGS)


@pytest.mark.parametrize("field", SETTINGS, ids=lambda f: f.key)
def test_every_default_is_valid_for_its_kind(field):
    assert field.kind is not FieldKind.SECRET  # secrets live in the keyring, never here
    assert field.value_of(field.default) == field.default
    if field.default is not None:  # None: "never saved" (sandbox.required follows the machine)
        assert field.parse(field.default) == field.default


@pytest.mark.parametrize("field", SETTINGS, ids=lambda f: f.key)
def test_every_setting_round_trips_through_the_store(db, field):
    settings = SettingsRepository(db)
    assert settings.read(field) == field.default  # never stored
    settings.write(field, _jsonable(field.default))  # no key looks like a secret
    assert settings.read(field) == field.default


@pytest.mark.parametrize("field", SETTINGS, ids=lambda f: f.key)
def test_garbage_reads_as_the_default_and_never_crashes(db, field):
    settings = SettingsRepository(db)
    for garbage in GARBAGE:
        settings.set(field.key, garbage)
        value = settings.read(field)
        assert value == field.default or field.parse(garbage) == value, (garbage, value)
        if field.parse(garbage) is None:
            assert value == field.default, garbage


def test_reads_are_typed_and_wrong_kinds_fall_back(db):
    settings = SettingsRepository(db)
    assert settings.read(SANDBOX_REQUIRED) is None  # unset: the machine decides
    settings.set(SANDBOX_REQUIRED.key, "yes")
    assert settings.read(SANDBOX_REQUIRED) is None
    settings.write(SANDBOX_REQUIRED, False)
    assert settings.read(SANDBOX_REQUIRED) is False

    settings.set(CHECKPOINTS_ENABLED.key, 0)  # not a bool: the default, not "off"
    assert settings.read(CHECKPOINTS_ENABLED) is True
    settings.set(CHECKPOINT_MAX_FILE.key, 0)  # below the minimum
    assert settings.read(CHECKPOINT_MAX_FILE) == 10 * MB
    settings.set(CHECKPOINT_MAX_FILE.key, 10**12)  # above the maximum: capped
    assert settings.read(CHECKPOINT_MAX_FILE) == 4096 * MB
    settings.set(CHECKPOINT_RETENTION_DAYS.key, 0)  # 0 is a value: no limit
    assert settings.read(CHECKPOINT_RETENTION_DAYS) == 0

    settings.set(SENSITIVE_PATHS.key, [" *.secret ", 5, "", "~/keys"])  # entry by entry
    assert settings.read(SENSITIVE_PATHS) == ("*.secret", "~/keys")
    settings.set(REVIEWERS.key, [{"name": "a"}, "b", None])
    assert settings.read(REVIEWERS) == ({"name": "a"},)
    settings.set(PRICES.key, ["claude", 1, 2])
    assert settings.read(PRICES) == {}
    settings.set(WINDOW_GEOMETRY.key, 12)
    assert settings.read(WINDOW_GEOMETRY) == ""


def test_the_shared_default_of_an_object_cannot_be_changed_by_a_reader(db):
    value = SettingsRepository(db).read(LAST_CONVERSATIONS)
    with pytest.raises(TypeError):
        value["/p"] = 1  # type: ignore[index]
    assert LAST_CONVERSATIONS.default == {}


def test_the_last_conversation_survives_a_damaged_map(db):
    settings = SettingsRepository(db)
    settings.set(LAST_CONVERSATIONS.key, ["not", "a", "map"])
    assert settings.last_conversation("/p") is None
    settings.set_last_conversation("/p", 4)
    assert settings.last_conversation("/p") == 4
    assert json.loads(json.dumps(settings.get(LAST_CONVERSATIONS.key))) == {"/p": 4}


def test_input_is_checked_by_the_field():
    assert CHECKPOINT_MAX_FILE.check_input(3 * MB) == 3 * MB
    with pytest.raises(InvalidConfigValue, match="Size cap per file"):
        CHECKPOINT_MAX_FILE.check_input(0)
    assert SENSITIVE_PATHS.check_input(["a ", "", "  "]) == ("a",)
