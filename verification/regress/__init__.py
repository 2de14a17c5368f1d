"""`tsoc regress`: the UVM regression (plan, parallel runs, reports)."""
