"""What every page shares: settings and the link, number boxes, charts, tables, reports, exported scripts,
the session's memo, docs/ in the app, warming the server, long work."""
