"""The services in two parts: the store on the start path, the tools part built afterwards (or on
first use), with the same result as building both at once."""

from __future__ import annotations

import asyncio
import threading

from app.core.services import build_services, build_store_services
from app.core.store.db import open_database


def test_store_part_builds_no_tools_and_first_use_builds_them(db, fresh_data_dir, project):
    services = build_store_services(db, fresh_data_dir, project)
    assert services.tools_built is False
    profile = services.profiles.ensure_default()  # the window needs it before the tools
    assert services.registry.get("read_file") is not None  # first use builds the tools part
    assert services.tools_built is True
    assert services.permissions.project_root == project
    assert services.build_tools() is services.build_tools()  # built once
    assert services.profiles.ensure_default().id == profile.id


def test_lazy_first_start_gives_the_profile_the_same_tools_as_an_eager_one(fresh_data_dir,
                                                                            tmp_path):
    eager_db = open_database(tmp_path / "eager.sqlite3")
    lazy_db = open_database(tmp_path / "lazy.sqlite3")
    try:
        eager = build_services(eager_db, fresh_data_dir)
        lazy = build_store_services(lazy_db, fresh_data_dir)
        lazy_id = lazy.profiles.ensure_default().id
        assert lazy.profiles.tool_settings(lazy_id) == {}  # given with the tools part
        lazy.build_tools()
        eager_id = eager.profiles.ensure_default().id
        assert lazy.profiles.tool_settings(lazy_id) == eager.profiles.tool_settings(eager_id)
        assert lazy.profiles.tool_settings(lazy_id)  # the specs' defaults, not nothing
        rules = ("SELECT tool_name, decision, input_pattern FROM tool_permission_rules"
                 " ORDER BY 1, 2, 3")
        assert lazy_db.conn.execute(rules).fetchall() == eager_db.conn.execute(rules).fetchall()
    finally:
        eager_db.close()
        lazy_db.close()


def test_an_existing_profile_keeps_its_tool_settings(db, fresh_data_dir):
    from app.core.store.profiles import ToolSetting

    first = build_services(db, fresh_data_dir)
    profile_id = first.profiles.ensure_default().id
    first.profiles.set_tool(profile_id, ToolSetting("read_file", False, {}))
    again = build_store_services(db, fresh_data_dir)
    again.build_tools()
    assert again.profiles.tool_settings(profile_id)["read_file"].enabled is False


def test_project_opened_before_the_tools_are_built_is_theirs(db, fresh_data_dir, project,
                                                              tmp_path):
    other = (tmp_path / "other").resolve()
    other.mkdir()
    services = build_store_services(db, fresh_data_dir, project)
    services.set_project_root(other)  # the window opened a folder while the tools loaded
    assert services.permissions.project_root == other
    assert services.custom_tools is not None and services.custom_tools.project_root == other
    services.set_project_root(None)
    assert services.permissions.project_root is None


def test_two_threads_asking_at_once_get_one_build(db, fresh_data_dir, monkeypatch):
    services = build_store_services(db, fresh_data_dir)
    builds: list[int] = []
    entered, release = threading.Event(), threading.Event()
    original = services._build_tools

    def slow_build():
        builds.append(1)
        entered.set()
        release.wait(10)
        return original()

    monkeypatch.setattr(services, "_build_tools", slow_build)
    results: list[object] = []
    first = threading.Thread(target=lambda: results.append(services.build_tools()))
    first.start()
    assert entered.wait(10)
    second = threading.Thread(target=lambda: results.append(services.build_tools()))
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert builds == [1] and len(results) == 2 and results[0] is results[1]


def test_quit_before_the_tools_were_built_builds_nothing(db, fresh_data_dir):
    services = build_store_services(db, fresh_data_dir)
    asyncio.run(services.aclose())
    assert services.tools_built is False


def test_sandbox_setting_reaches_the_permission_service(db, fresh_data_dir):
    services = build_store_services(db, fresh_data_dir)
    services.set_sandbox_required(True)
    assert services.sandbox.required is True
    assert services.permissions.sandbox.required is True
