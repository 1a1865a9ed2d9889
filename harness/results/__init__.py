"""A run on disk: records and results.json read and validated, the run directory claimed by one run at a time, and
nights of results kept in the history database. It imports only :mod:`harness.model` and :mod:`harness.support`."""
