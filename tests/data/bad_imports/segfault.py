import ctypes
ctypes.string_at(0)  # SIGSEGV at import
