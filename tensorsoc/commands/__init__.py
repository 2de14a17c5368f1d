"""The ``tsoc`` sub-commands that join several layers (argument parsing and
reports; the work is done by the libraries in spec/, sw/, cores/, soc/ and
verification/).  Each module defines ``register(groups)``: see tensorsoc/cli.py."""
