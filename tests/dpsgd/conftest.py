import pytest

pytest.importorskip("torch")
