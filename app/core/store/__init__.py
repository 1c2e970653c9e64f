"""SQLite storage: schema, migrations and typed repositories (sqlite-utils underneath)."""
