raise RuntimeError("broken at import")
