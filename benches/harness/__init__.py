"""The benchmark harness behind benches/run.py, in the order a run uses it: the
programs and their sizes (``programs``), the runners (``runners``), measuring
(``measure``), the machine's own bandwidth and scaling (``machine``) and the report
(``report``)."""
