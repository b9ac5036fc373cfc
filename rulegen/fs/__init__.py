"""The file-system floor: the one place rulegen reads input files and writes files.

* :mod:`.read`: every input file (specs, values, chart templates, files given to ``import``,
  the baseline, ``.rulegen.yaml``, committed generated files) is read through
  :func:`.read.read_bytes`/:func:`.read.read_text`: special files (FIFO, device, socket)
  refused without being opened for long, the size checked before reading, at most the limit
  read; YAML from any of them is parsed through :mod:`.yamlbound`, which bounds alias
  expansion.
* :mod:`.write`: every file written goes through one atomic writer (exclusive temporary file
  beside the target, fsync, rename), refusing targets that lead outside the project.
* :mod:`.containment`: whether a path as written, and on the disk, stays inside the project.

This package imports only the standard library, :mod:`rulegen.findings` and YAML libraries;
every other module may use it.
"""
