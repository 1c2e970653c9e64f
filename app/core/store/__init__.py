"""SQLite storage: schema, migrations and typed repositories (plain ``sqlite3``; sqlite-utils'
API on demand, see ``app.core.store.db.Database``)."""
