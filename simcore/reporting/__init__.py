"""What is written from a matrix and its answer: rankings exported and the HTML report.

- :mod:`.export`: rankings as CSV, JSON, Markdown or HTML;
- :mod:`.report_checks`: the report's arguments, checked before anything is rendered;
- :mod:`.report`: the self-contained HTML report.
"""
