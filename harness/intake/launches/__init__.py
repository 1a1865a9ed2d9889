"""The capture of a library's launches: an ``op:`` run under a target's virtual device, every Triton launch it makes
recorded (not run), grouped as the harness builds them, in a child per target."""
