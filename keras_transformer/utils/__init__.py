"""Helpers every layer of the package may use: file names of runs and presets
(`run_files`), checked file I/O (`file_io`), argument checks (`validation`)."""
