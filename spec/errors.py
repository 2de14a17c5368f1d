"""The error every layer raises for a mistake the user can act on.

``tsoc`` prints a :class:`UserError` as one ``tsoc: error: ...`` line, without a
traceback; the message names the file, line or field, what was expected and,
where there is one, the fix.  It lives here, in the layer every other imports,
so that a library (the compiler, the SoC generator) can raise it without
importing the command line above it.
"""


class UserError(Exception):
    """An error the user can act on: printed without a traceback."""
