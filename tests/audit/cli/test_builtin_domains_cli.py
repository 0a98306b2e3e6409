"""`dpaudit audit NAME --d0 --d1` with a record outside the built-in's domain: exit 2, one sentence naming the record."""

import pytest
from dpaudit.audit.cli import main


@pytest.mark.parametrize(("name", "d0", "d1", "words"), [
    ("laplace", "[[0,0]]", "[[0,0],[1,1]]", "record 0 of d0 is [0, 0]"),
    ("laplace", "[0.0]", "[0.0, NaN]", "record 1 of d1 is NaN; records are numbers in [0, 1]"),
    ("laplace", "[0.0]", "[0.0, Infinity]", "record 1 of d1 is inf"),
    ("geometric", "[0.0]", "[0.0, 1.0]", "a float; records are integers in [0, 1]"),
    ("geometric", "[0]", "[0, 2]", "record 1 of d1 is 2"),
    ("randomized_response", "[0]", "[0.5]", "record 0 of d1 is 0.5"),
])
def test_a_record_outside_the_domain_exits_2_in_one_sentence(capsys, name, d0, d1, words):
    code = main(["audit", name, "--d0", d0, "--d1", d1, "--trials", "1000", "--seed", "0", "--quiet"])
    _, err = capsys.readouterr()
    assert code == 2 and words in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
