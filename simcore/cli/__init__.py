"""The command line: ``simcore`` (and ``python -m simcore``) and its subcommands.

- :mod:`.main`: the parser and the commands around the matrix (``matrix``, ``recommend``,
  ``report``, ``agree``, ``correlate``, ...); ``simcore`` runs its ``main``;
- :mod:`.arguments`: argument types and the checks every option goes through; :mod:`.progress`: the
  progress bar every command shows;
- one module per feature's command: :mod:`.select_command`, :mod:`.probe_command`,
  :mod:`.lm_probe_command`, :mod:`.decontaminate_command`, each registered by :mod:`.main`.
"""
