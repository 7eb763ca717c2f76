"""The parser's limits (README "Safety"): each a clear ``limit`` error (exit 1), never a crash.

Read at parse time as ``limits.NAME`` by the modules that enforce them (the token stream in
:mod:`.parser`, array literals in :mod:`.builder`, several arrays in :mod:`.calls`), so a test
may lower one with ``monkeypatch.setattr(limits, NAME, ...)``.
"""

#: the most characters of text one parse reads (the command line reads at most 16 MiB too)
MAX_SOURCE_CHARS = 16 * 1024 * 1024
#: the deepest nesting of brackets: ( ) of groups and calls, [ ] of arrays and indexing
MAX_NESTING = 200_000
#: the most statements in one program
MAX_STATEMENTS = 200_000
#: the most numbers, names, strings and operators in one program (brackets, commas and
#: separators are not counted): x+x+... with 1,000,000 terms, which parses, evaluates and
#: differentiates in about 10 s; a longer one is refused as it is read, before anything
#: is evaluated (a 10 MB sum of constants took 220 s and 5 GB)
MAX_TOKENS = 2_000_000
#: the deepest array literal: NumPy arrays have at most 64 dimensions, and a Jacobian of a
#: 32-dimensional output with respect to a 32-dimensional input needs all 64
MAX_ARRAY_DEPTH = 32
#: the most numbers (or elements) one array literal holds
MAX_ARRAY_ELEMENTS = 1_000_000

#: NumPy's most dimensions: an axis outside -64..63 fits no array
MAX_DIMS = 64
#: an index, a slice bound or a reshape dimension is a C integer (int64) in NumPy
INT64 = (-(2**63), 2**63 - 1)
