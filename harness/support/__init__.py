"""Stage-free helpers every stage may use, importing nothing else of the harness: files read and written safely,
YAML with the position of every value and the problems found in it, the installed Triton and the few places its API
differs between releases, and the harness's own cache folder."""
