"""The command line's batch engine: rows in, rows out, in order, in parallel."""
