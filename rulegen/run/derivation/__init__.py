"""The parts of ``rulegen derive-tests`` (:mod:`rulegen.run.derive`), one module per job:
:mod:`.shape` reads an expr for a shape rulegen can feed, :mod:`.series` makes the candidate
series and the values on each side of a threshold, :mod:`.cases` writes the tests (the expected
alerts and samples) and the equivalent mutants, :mod:`.writing` inserts them into the spec
text."""
