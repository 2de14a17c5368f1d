"""The one error class of the MCORE preprocessor: file:line:column, the text, what was expected."""

from tensorsoc.spec.errors import UserError


class MCoreError(UserError):
    """A user error located in an MCORE source: printed without a traceback."""

    def __init__(self, message, file="<input>", line=1, col=1, text="", expected="", source_line=None):
        self.file, self.line, self.col = file, line, col
        self.message, self.text, self.expected = message, text, expected
        parts = [f"{file}:{line}:{col}: {message}"]
        if text:
            parts[0] += f": '{text}'"
        if expected:
            parts[0] += f"; expected {expected}"
        if source_line is not None:
            parts.append("    " + source_line.rstrip("\n"))
            parts.append("    " + " " * (col - 1) + "^" * max(1, len(text)))
        super().__init__("\n".join(parts))
