"""tensorsoc.spec: the neutral layer.

Definitions that the product (``tensorsoc.sw``, ``tensorsoc.cores``,
``tensorsoc.soc``) and its checker (``tensorsoc.verification``) share, as
specifications: numbers and rules, each written once.  Each side implements
its own arithmetic from them, so that a mistake in one implementation is
caught by the other.  This package imports nothing from the rest of the
project (tests/test_layers.py checks it).
"""
