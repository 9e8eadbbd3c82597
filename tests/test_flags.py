"""simcore.answer.flags: which cells are marked and why, read the same from a fresh matrix and from its CSV."""

from __future__ import annotations

import numpy as np
import pandas as pd

from simcore.answer import flags


def test_marks_read_from_booleans_and_from_csv_text(tmp_path):
    long = pd.DataFrame({"source": ["a", "b", "c", "d"], "target": "t", "measure": "ppl", "value": [1.0, 2, 3, 4],
                         "reliable": [True, False, True, None], "used_whole": [False, False, True, None],
                         "flag": ["", "PPL is unreliable below 100,000 tokens", "", None]})
    path = tmp_path / "m.csv"
    long.to_csv(path, index=False)
    for table in (long, pd.read_csv(path)):
        assert flags.unreliable(table).tolist() == [False, True, False, False]
        assert flags.marked(table).tolist() == [False, True, True, False]
        reasons = flags.why(table).tolist()
        assert reasons[0] == "" and reasons[1] == "PPL is unreliable below 100,000 tokens"
        assert "used whole" in reasons[2]
    assert not flags.marked(long[["source", "target", "measure", "value"]]).any()  # Table 3 has no flags


def test_out_of_scale_only_where_the_column_has_an_unmarked_value():
    values = np.array([[1.0, 5.0], [2.0, 6.0]])
    marks = np.array([[True, True], [False, True]])
    assert flags.out_of_scale(values, marks).tolist() == [[True, False], [False, False]]
