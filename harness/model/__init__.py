"""The data every stage shares, as plain frozen dataclasses: the target catalogue, compile environments, ids of shapes
and configs, and the records a run produces. It imports only :mod:`harness.support`."""
