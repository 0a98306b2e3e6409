"""Fixtures shared by the test folders."""

import pytest


@pytest.fixture
def one_torch_thread():
    """Train on one torch thread, as the audit's workers do, and restore the count after.

    Hundreds of small per-run steps stall when torch's threads contend for
    cores that other tests (or other processes) hold.
    """
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
